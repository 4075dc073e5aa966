// non-finite.js — reading the cores' JSON answers, shared by attention.js (the stepper's core) and
// gpt.js (the GPT's): readAnswer parses one, throws the caller's error for {"ok":false,…}, and turns
// the strings "inf", "-inf" and "nan" back into numbers (the core's JSON writes ±∞ and NaN so: JSON
// has no such numbers), in place, after a plain JSON.parse. Only array elements and the scalar
// fields named in `numericFields` are touched, so option values and messages stay strings.
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

/**
 * Parses a JSON answer of a core: {"ok":true,…} comes back with its non-finite strings revived;
 * {"ok":false,…} (or an answer without "ok") throws failure(r), the caller's error for it.
 * @param {string} text the core's answer
 * @param {{core: string, numericFields: Set<string>, failure: (r: any) => Error}} o
 *   core: the core's name for the message when the text is not JSON
 */
export function readAnswer(text, { core, numericFields, failure }) {
  let r;
  try {
    r = JSON.parse(text);
  } catch (e) {
    throw new Error(`${core} returned text that is not JSON: ${String(text).slice(0, 200)}`);
  }
  if (!r || r.ok !== true) throw failure(r);
  if (NON_FINITE.test(text)) reviveNonFinite(r, numericFields);
  return r;
}
