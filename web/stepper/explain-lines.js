// explain-lines.js — the pieces both cell explanations (explain.js forward, explain-grad.js
// backward) are written with: sums of terms cut to a readable length, dot products shown as
// their products and their values, and a builder for the lines of one explanation.
import { formatNumber as f, term } from './format.js';

const MAX_TERMS = 8;

/** terms: strings joined with ' + '; a long sum is cut in the middle. */
export function sumLine(terms) {
  if (terms.length <= MAX_TERMS) return terms.join(' + ');
  return `${terms.slice(0, MAX_TERMS - 2).join(' + ')} + … + ${terms.slice(-2).join(' + ')}`;
}

/** Σ_k a[k]·b[k]: the product line and the values line. */
export function dotLines(a, b) {
  const prods = a.map((v, k) => `${term(v)}·${term(b[k])}`);
  const vals = a.map((v, k) => term(v * b[k]));
  return [sumLine(prods), sumLine(vals)];
}

/** Column j of a matrix. */
export const col = (m, j) => m.map((r) => r[j]);

/**
 * The lines of one explanation: F(formula), T(terms), R(result value), N(note), and dot(a, b),
 * which adds the product line and the values line of Σ_k a[k]·b[k]. Formula, terms and result
 * lines are written in the small notation explain-math.js turns into MathML (A[1,2], Σ_k, e^(…),
 * √d_k, ∂L/∂A, "a / b" for a fraction bar, ⟨prose⟩); notes are prose.
 */
export function lineBuilder() {
  const lines = [];
  const F = (text) => lines.push({ text, kind: 'formula' });
  const T = (text) => lines.push({ text, kind: 'terms' });
  const R = (v) => lines.push({ text: `= ${f(v)}`, kind: 'result' });
  const N = (text) => lines.push({ text, kind: 'note' });
  const dot = (a, b) => { const [p, s] = dotLines(a, b); T(`= ${p}`); T(`= ${s}`); };
  return { lines, F, T, R, N, dot };
}
