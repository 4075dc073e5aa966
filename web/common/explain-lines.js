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
 * The cell an explanation is about, and what both explanations read first: its 0-based row i and
 * column j, the same from 1 (I, J), its head h (clamped to the trace's heads) and that head's
 * values H, the sizes d_k (hd) and d_v (dv), base, and the head's name for titles (hs, '' for one
 * head). sel: { panel, row, col, head }; t: i18n.
 */
export function cellOf(trace, sel, t) {
  const h = Math.min(sel.head ?? 0, trace.n_head - 1);
  return {
    panel: sel.panel, i: sel.row, j: sel.col, I: sel.row + 1, J: sel.col + 1,
    h, H: trace.heads[h], hd: trace.head_dim, dv: trace.d_v, base: trace.base,
    hs: trace.n_head > 1 ? t('ex.head', { h: h + 1 }) : '',
  };
}

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
