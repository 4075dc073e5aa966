// non-finite.js — the core's JSON writes ±∞ and NaN as the strings "inf", "-inf" and "nan" (JSON
// has no such numbers); these turn them back into numbers, in place, after a plain JSON.parse.
// Shared by attention.js (the stepper's core) and gpt.js (the GPT's). Only array elements and the
// scalar fields named in `numericFields` are touched, so option values and messages stay strings.
// (A walk after JSON.parse: a reviver function would be called for every number of a trace, which
// costs more than the parse itself.)

/** Matches JSON text that holds one of the strings, so answers without any skip the walk. */
export const NON_FINITE = /"(?:-inf|inf|nan)"/;

/** "-inf" / "inf" / "nan" as a number; anything else as it is. */
export function nonFinite(e) {
  if (e === '-inf') return -Infinity;
  if (e === 'inf') return Infinity;
  if (e === 'nan') return NaN;
  return e;
}

/**
 * @param {any} v a parsed answer (changed in place)
 * @param {Set<string>} numericFields object keys whose string values are numbers
 */
export function reviveNonFinite(v, numericFields) {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const e = v[i];
      if (typeof e === 'string') v[i] = nonFinite(e);
      else if (e !== null && typeof e === 'object') reviveNonFinite(e, numericFields);
    }
  } else {
    for (const k in v) {
      const e = v[k];
      if (e !== null && typeof e === 'object') reviveNonFinite(e, numericFields);
      else if (typeof e === 'string' && numericFields.has(k)) v[k] = nonFinite(e);
    }
  }
  return v;
}
