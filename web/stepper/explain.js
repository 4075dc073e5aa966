// explain.js — the arithmetic behind one cell, with the actual numbers, and which rows/columns
// of the other panels (and input grids) feed it. Every total shown is the C++ value from the
// trace; only the individual displayed terms (a product, an e^(x − max)) are worked out here
// for the explanation.
import { formatNumber as f, term } from '../common/format.js';
import { sumLine, dotLines, col, lineBuilder, cellOf } from '../common/explain-lines.js';
import { explainVariant } from './variants.js';

/**
 * trace: the core's trace; sel: { panel, row, col, head }; t: i18n.
 * Returns { title, lines: [{ text, kind: 'formula'|'terms'|'result'|'note' }], feeds: [...] }.
 */
export function explain(trace, sel, t) {
  const c = cellOf(trace, sel, t);
  const { panel, i, j, I, J, h: hIdx, H, hd, dv, base, hs } = c;
  const L = lineBuilder();
  const { lines, F, T, R, N } = L;
  const feeds = [];
  let title = explainVariant(trace, c, t, L, feeds) ?? '';
  if (title) return { title, lines, feeds }; // a variant's panel, or a plain one a variant changes

  const proj = (name, W, x0) => {
    const hk = name === 'Q' ? hIdx : (trace.kv_heads?.kv_head[hIdx] ?? hIdx); // grouped-query: K and V are the group's
    const c = (name === 'V' ? hk * dv : hk * hd) + j;
    const v = { Q: H.q, K: H.k, V: H.v }[name][i][j];
    title = `${name}[${I},${J}]${hs}`;
    if (trace.mode === 'x') {
      const xr = trace.inputs.x[x0 + i];
      const w = col(trace.inputs[W], c);
      const bn = `b_${name.toLowerCase()}`;
      const b = trace.inputs[bn]?.[c];
      const plus = b === undefined ? '' : ` + ${bn}[${c + 1}]`;
      F(`${name}[${I},${J}] = x[${x0 + I},:] · ${W}[:,${c + 1}]${plus}`);
      if (x0) N(t('ex.qbase', { base, row: x0 + I }));
      const [p, s] = dotLines(xr, w);
      const bt = b === undefined ? '' : ` + ${term(b)}`;
      T(`= ${p}${bt}`);
      T(`= ${s}${bt}`);
      R(v);
      feeds.push({ editor: 'x', row: x0 + i }, { editor: W, col: c });
      if (b !== undefined) feeds.push({ editor: bn, col: c });
    } else {
      F(`${name}[${I},${J}] = ${name}⟨${t('ex.typed')}⟩[${I},${c + 1}]`);
      R(v);
      feeds.push({ editor: name, row: i, col: c });
    }
  };

  switch (panel) {
    case 'q': proj('Q', 'W_q', base); break;
    case 'k': proj('K', 'W_k', 0); break;
    case 'v': proj('V', 'W_v', 0); break;
    case 'scores': {
      title = `S[${I},${J}]${hs}`;
      F(`S[${I},${J}] = q${I} · k${J} = Σ_d q[${I},d]·k[${J},d]`);
      const [p, s] = dotLines(H.q[i], H.k[j]);
      T(`= ${p}`);
      T(`= ${s}`);
      R(H.scores[i][j]);
      feeds.push({ panel: 'q', row: i }, { panel: 'k', row: j });
      break;
    }
    case 'scaled': {
      title = `S′[${I},${J}]${hs}`;
      if (trace.options.scale) {
        F(`S′[${I},${J}] = S[${I},${J}] / √d_k = S[${I},${J}] / √${hd}`);
        T(`= ${term(H.scores[i][j])} × ${f(trace.scale_factor)}`);
      } else {
        F(`S′[${I},${J}] = S[${I},${J}]`);
        N(t('ex.noscale'));
      }
      R(H.scaled[i][j]);
      feeds.push({ panel: 'scores', row: i, col: j });
      break;
    }
    case 'masked': {
      title = `M[${I},${J}]${hs}`;
      const masked = trace.mask[i][j] === -Infinity;
      const strict = trace.options.mask === 'strict';
      const op = strict ? '>' : '≥';
      F(`M[${I},${J}] = S′[${I},${J}] + mask[${I},${J}]`);
      if (!trace.options.causal) N(t('ex.nocausal'));
      else if (masked) {
        T(`j = ${J} ${op} i + base = ${I} + ${base} = ${I + base}`);
        N(t(strict ? 'ex.maskedStrict' : 'ex.maskedInclusive', { i: I, j: J, base }));
      } else {
        T(`j = ${J} ${strict ? '≤' : '<'} i + base = ${I} + ${base} = ${I + base}`);
        N(t('ex.visible', { i: I, j: J }));
        T(`= ${term(H.scaled[i][j])} + 0`);
      }
      R(H.masked[i][j]);
      feeds.push({ panel: 'scaled', row: i, col: j });
      break;
    }
    case 'weights': {
      title = `A[${I},${J}]${hs}`;
      const x = H.masked[i];
      const empty = trace.empty_rows.some((r) => r.head === hIdx && r.row === i);
      const over = trace.overflow_rows.some((r) => r.head === hIdx && r.row === i);
      const naive = trace.options.softmax === 'naive';
      feeds.push({ panel: 'masked', row: i });
      if (empty) {
        F(`A[${I},${J}] = e^(M[${I},${J}] − max) / Σ_k e^(M[${I},k] − max)`);
        N(t('ex.emptyRow', { i: I }));
        R(H.weights[i][j]);
        break;
      }
      const finite = x.filter((v) => v !== -Infinity);
      const mx = naive ? 0 : Math.max(...finite);
      const ex = x.map((v) => (v === -Infinity ? 0 : Math.exp(v - mx)));
      const esum = ex.reduce((a, b) => a + b, 0);
      const e = (v) => (v === -Infinity ? 'e^(−∞)' : naive ? `e^${term(v)}` : `e^(${term(v)} − ${term(mx)})`);
      if (naive) {
        F(`A[${I},${J}] = e^M[${I},${J}] / Σ_k e^M[${I},k]   ⟨(${t('ex.naive')})⟩`);
      } else {
        F(`A[${I},${J}] = e^(M[${I},${J}] − max) / Σ_k e^(M[${I},k] − max)`);
        T(`max = ${f(mx)}`);
      }
      T(`= ${e(x[j])} / (${sumLine(x.map(e))})`);
      T(`= ${f(ex[j])} / (${sumLine(ex.map((v) => f(v)))})`);
      T(`= ${f(ex[j])} / ${f(esum)}`);
      if (over) N(t('ex.overflow'));
      R(H.weights[i][j]);
      N(t('ex.rowsum', { i: I, s: f(H.weight_row_sums[i]) }));
      break;
    }
    case 'context': {
      title = `O[${I},${J}]${hs}`;
      F(`O[${I},${J}] = Σ_k A[${I},k] · V[k,${J}]`);
      const [p, s] = dotLines(H.weights[i], col(H.v, j));
      T(`= ${p}`);
      T(`= ${s}`);
      R(H.context[i][j]);
      N(t('ex.context', { i: I }));
      feeds.push({ panel: 'weights', row: i }, { panel: 'v', col: j });
      break;
    }
    case 'concat': {
      const hh = Math.floor(j / dv);
      const jj = j % dv;
      title = `C[${I},${J}]`;
      F(`C[${I},${J}] = O⟨${t('ex.ofHead', { h: hh + 1 })}⟩[${I},${jj + 1}]`);
      N(t('ex.concat', { c: J, h: hh + 1, d: dv, j: jj + 1 }));
      R(trace.concat[i][j]);
      if (hh === hIdx) feeds.push({ panel: 'context', row: i, col: jj });
      break;
    }
    case 'out': {
      title = `Y[${I},${J}]`;
      const b = trace.inputs.b_o?.[j];
      F(`Y[${I},${J}] = Σ_c C[${I},c] · W_o[c,${J}]${b === undefined ? '' : ` + b_o[${J}]`}`);
      const [p, s] = dotLines(trace.concat[i], col(trace.inputs.W_o, j));
      const bt = b === undefined ? '' : ` + ${term(b)}`;
      T(`= ${p}${bt}`);
      T(`= ${s}${bt}`);
      R(trace.out[i][j]);
      feeds.push({ panel: 'concat', row: i }, { editor: 'W_o', col: j });
      if (b !== undefined) feeds.push({ editor: 'b_o', col: j });
      break;
    }
    default: break;
  }
  return { title, lines, feeds };
}
