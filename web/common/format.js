// format.js — how numbers are shown: 4 decimals, −∞ / ∞ / NaN spelled out, true minus signs.

export function formatNumber(v, digits = 4) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '∞';
  if (Object.is(v, -0)) v = 0;
  if (Number.isInteger(v) && Math.abs(v) < 1e6) return String(v).replace('-', '−');
  const a = Math.abs(v);
  const s = a >= 1e5 || a < 10 ** -digits ? v.toExponential(2) : v.toFixed(digits);
  if (/^-0\.0+$/.test(s)) return s.slice(1);
  return s.replace('-', '−');
}

/** A number in a formula term: negative numbers in parentheses. */
export function term(v) {
  const s = formatNumber(v);
  return v < 0 || Object.is(v, -0) ? `(${s})` : s;
}

/** Text for a matrix cell we write into the state (random fill, paste): short, exact enough. */
export function cellText(v) {
  if (Object.is(v, -0)) return '0';
  return String(v);
}
