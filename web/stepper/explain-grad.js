// explain-grad.js — the arithmetic behind one cell of a gradient panel (the backward mode), with
// the actual numbers, and which cells of the other panels (forward values, gradients) and input
// grids feed it. Every total shown is the C++ value from api.backward's grads; only the displayed
// terms (a product, a partial sum Σ_k G_ik·A_ik) are worked out here for the explanation.
import { formatNumber as f, term } from '../common/format.js';
import { sumLine, dotLines, col, lineBuilder, cellOf } from '../common/explain-lines.js';
import { explainVariantGrad } from './variants.js';

/**
 * bw: {trace, loss, grads} from api.backward; sel: { panel, row, col, head }; t: i18n;
 * ctx: { upstream: 'sum'|'mse'|'d_out', target: number[][] | null }.
 * Returns { title, lines: [{ text, kind }], feeds: [{ panel | editor, row?, col? }] }.
 */
export function explainGrad(bw, sel, t, ctx = {}) {
  const { trace: tr, grads: g } = bw;
  const c = cellOf(tr, sel, t);
  const { panel, i, j, I, J, h, H, hd, dv, base, hs } = c;
  const G = g.heads[h];
  const L = lineBuilder();
  const { lines, F, T, R, N, dot } = L;
  const feeds = [];
  let title = explainVariantGrad(bw, c, t, L, feeds) ?? '';
  if (title) return { title, lines, feeds }; // RoPE's rotation, forward and back
  // A gradient through a product Aᵀ·B: Σ over the rows of column I of a times column J of b, the
  // total, and those two columns as the feeds (fa, fb: their panel or editor).
  const columns = (formula, a, fa, b, fb, total) => {
    F(formula);
    dot(col(a, i), col(b, j));
    R(total);
    feeds.push({ ...fa, col: i }, { ...fb, col: j });
  };

  switch (panel) {
    case 'd_out': {
      title = `∂L/∂Y[${I},${J}]`;
      if (ctx.upstream === 'sum') {
        F(`∂L/∂Y[${I},${J}] = ∂(Σ Y)/∂Y[${I},${J}] = 1`);
        N(t('bx.sum'));
      } else if (ctx.upstream === 'mse') {
        const n = tr.out.length * tr.d_out;
        const o = tr.out[i][j];
        const tv = ctx.target?.[i]?.[j];
        F(`∂L/∂Y[${I},${J}] = 2·(Y[${I},${J}] − target[${I},${J}]) / N,  N = ${tr.out.length}·${tr.d_out} = ${n}`);
        if (tv !== undefined) T(`= 2·(${term(o)} − ${term(tv)}) / ${n}`);
        N(t('bx.mse', { loss: f(bw.loss) }));
        feeds.push({ panel: 'out', row: i, col: j }, { editor: 'target', row: i, col: j });
      } else {
        F(`∂L/∂Y[${I},${J}] = dOut[${I},${J}]`);
        N(t('bx.dout'));
        feeds.push({ editor: 'd_out', row: i, col: j });
      }
      R(g.out[i][j]);
      break;
    }
    case 'd_W_o': {
      title = `∂L/∂W_o[${I},${J}]`;
      columns(`∂L/∂W_o[${I},${J}] = Σ_t C[t,${I}] · ∂L/∂Y[t,${J}]`, tr.concat, { panel: 'concat' }, g.out, { panel: 'd_out' },
        g.W_o[i][j]);
      break;
    }
    case 'd_concat': {
      title = `∂L/∂C[${I},${J}]`;
      if (tr.inputs.W_o) {
        F(`∂L/∂C[${I},${J}] = Σ_c ∂L/∂Y[${I},c] · W_o[${J},c]`);
        dot(g.out[i], tr.inputs.W_o[j]);
        feeds.push({ panel: 'd_out', row: i }, { editor: 'W_o', row: j });
      } else {
        F(`∂L/∂C[${I},${J}] = ∂L/∂Y[${I},${J}]`);
        N(t('bx.noWo'));
        feeds.push({ panel: 'd_out', row: i, col: j });
      }
      R(g.concat[i][j]);
      break;
    }
    case 'd_context': {
      title = `∂L/∂O[${I},${J}]${hs}`;
      const c = h * dv + j;
      F(`∂L/∂O[${I},${J}] = ∂L/∂C[${I},${c + 1}]`);
      if (tr.n_head > 1) N(t('bx.context', { h: h + 1, c: c + 1 }));
      R(G.context[i][j]);
      feeds.push({ panel: 'd_concat', row: i, col: c });
      break;
    }
    case 'd_weights': {
      title = `∂L/∂A[${I},${J}]${hs}`;
      F(`∂L/∂A[${I},${J}] = Σ_c ∂L/∂O[${I},c] · V[${J},c]`);
      dot(G.context[i], H.v[j]);
      R(G.weights[i][j]);
      feeds.push({ panel: 'd_context', row: i }, { panel: 'v', row: j });
      break;
    }
    case 'd_v': {
      title = `∂L/∂V[${I},${J}]${hs}`;
      columns(`∂L/∂V[${I},${J}] = Σ_i A[i,${I}] · ∂L/∂O[i,${J}]`, H.weights, { panel: 'weights' }, G.context,
        { panel: 'd_context' }, G.v[i][j]);
      break;
    }
    case 'd_scaled': {
      title = `∂L/∂S′[${I},${J}]${hs}`;
      const a = H.weights[i];
      const gg = G.weights[i];
      F(`dS′[${I},${J}] = A[${I},${J}] · (G[${I},${J}] − Σ_k G[${I},k]·A[${I},k]),  G = ∂L/∂A`);
      const masked = tr.mask[i][j] === -Infinity;
      const empty = tr.empty_rows.some((r) => r.head === h && r.row === i);
      const s = gg.reduce((acc, v, k) => acc + v * a[k], 0);
      T(`Σ_k G[${I},k]·A[${I},k] = ${sumLine(gg.map((v, k) => `${term(v)}·${term(a[k])}`))} = ${f(s)}`);
      T(`= ${term(a[j])} · (${term(gg[j])} − ${term(s)})`);
      if (empty) N(t('bx.emptyRow', { i: I }));
      else if (masked) N(t('bx.masked', { i: I, j: J }));
      R(G.scaled[i][j]);
      N(t('bx.softmax'));
      feeds.push({ panel: 'weights', row: i }, { panel: 'd_weights', row: i });
      break;
    }
    case 'd_scores': {
      title = `∂L/∂S[${I},${J}]${hs}`;
      if (tr.options.scale) {
        F(`∂L/∂S[${I},${J}] = ∂L/∂S′[${I},${J}] · 1/√d_k = ∂L/∂S′[${I},${J}] / √${hd}`);
        T(`= ${term(G.scaled[i][j])} × ${f(tr.scale_factor)}`);
      } else {
        F(`∂L/∂S[${I},${J}] = ∂L/∂S′[${I},${J}]`);
        N(t('ex.noscale'));
      }
      if (tr.mask[i][j] === -Infinity) N(t('bx.masked', { i: I, j: J }));
      R(G.scores[i][j]);
      feeds.push({ panel: 'd_scaled', row: i, col: j });
      break;
    }
    case 'd_q': {
      title = `∂L/∂q[${I},${J}]${hs}`;
      F(`∂L/∂q[${I},${J}] = Σ_j ∂L/∂S[${I},j] · k[j,${J}]`);
      dot(G.scores[i], col(H.k, j));
      R(G.q[i][j]);
      feeds.push({ panel: 'd_scores', row: i }, { panel: 'k', col: j });
      break;
    }
    case 'd_k': {
      title = `∂L/∂k[${I},${J}]${hs}`;
      columns(`∂L/∂k[${I},${J}] = Σ_i ∂L/∂S[i,${I}] · q[i,${J}]`, G.scores, { panel: 'd_scores' }, H.q, { panel: 'q' },
        G.k[i][j]);
      break;
    }
    case 'd_Q': case 'd_K': case 'd_V': {
      const n = panel.slice(2);
      const w = n === 'V' ? dv : hd;
      const hh = Math.floor(j / w);
      const jj = j % w;
      const lo = n.toLowerCase();
      title = `∂L/∂${n}[${I},${J}]`;
      F(`∂L/∂${n}[${I},${J}] = ∂L/∂${lo}⟨${t('ex.ofHead', { h: hh + 1 })}⟩[${I},${jj + 1}]`);
      if (tr.n_head > 1) N(t('bx.split', { n, c: J, h: hh + 1, j: jj + 1 }));
      R(g[n][i][j]);
      if (hh === h) feeds.push({ panel: `d_${lo}`, row: i, col: jj });
      break;
    }
    case 'd_W_q': case 'd_W_k': case 'd_W_v': {
      const n = panel.slice(2);
      const big = n.slice(-1).toUpperCase();
      const x0 = n === 'W_q' ? base : 0;
      const xs = tr.inputs.x.slice(x0);
      title = `∂L/∂${n}[${I},${J}]`;
      F(`∂L/∂${n}[${I},${J}] = Σ_t x[${x0 ? `${x0}+t` : 't'},${I}] · ∂L/∂${big}[t,${J}]`);
      if (x0) N(t('bx.qbase', { base }));
      dot(col(xs, i), col(g[big], j));
      R(g[n][i][j]);
      feeds.push({ editor: 'x', col: i }, { panel: `d_${big}`, col: j });
      break;
    }
    case 'd_b_q': case 'd_b_k': case 'd_b_v': case 'd_b_o': {
      // a bias is added to every row: its gradient is the column sum of the gradient it feeds
      const n = panel.slice(2);
      const of = { b_q: 'Q', b_k: 'K', b_v: 'V', b_o: 'Y' }[n];
      const gm = { b_q: g.Q, b_k: g.K, b_v: g.V, b_o: g.out }[n];
      title = `∂L/∂${n}[${J}]`;
      F(`∂L/∂${n}[${J}] = Σ_t ∂L/∂${of}[t,${J}]`);
      T(`= ${sumLine(col(gm, j).map((v) => term(v)))}`);
      R(g[n][j]);
      N(t('bx.bias', { n, of }));
      feeds.push({ panel: { b_q: 'd_Q', b_k: 'd_K', b_v: 'd_V', b_o: 'd_out' }[n], col: j });
      break;
    }
    case 'd_x': {
      title = `∂L/∂x[${I},${J}]`;
      const { W_q: Wq, W_k: Wk, W_v: Wv } = tr.inputs;
      const hasQ = i >= base;
      F(`∂L/∂x[${I},${J}] = Σ_c ∂L/∂K[${I},c]·W_k[${J},c] + Σ_c ∂L/∂V[${I},c]·W_v[${J},c]${hasQ ? ` + Σ_c ∂L/∂Q[${I - base},c]·W_q[${J},c]` : ''}`);
      const part = (d, w) => d.reduce((acc, v, k) => acc + v * w[k], 0);
      const pk = part(g.K[i], Wk[j]);
      const pv = part(g.V[i], Wv[j]);
      T(`K: ${dotLines(g.K[i], Wk[j])[0]} = ${f(pk)}`);
      T(`V: ${dotLines(g.V[i], Wv[j])[0]} = ${f(pv)}`);
      if (hasQ) {
        const pq = part(g.Q[i - base], Wq[j]);
        T(`Q: ${dotLines(g.Q[i - base], Wq[j])[0]} = ${f(pq)}`);
        T(`= ${term(pk)} + ${term(pv)} + ${term(pq)}`);
      } else {
        T(`= ${term(pk)} + ${term(pv)}`);
        N(t('bx.xcached', { i: I, base }));
      }
      R(g.x[i][j]);
      feeds.push({ panel: 'd_K', row: i }, { panel: 'd_V', row: i }, { editor: 'W_k', row: j }, { editor: 'W_v', row: j });
      if (hasQ) feeds.push({ panel: 'd_Q', row: i - base }, { editor: 'W_q', row: j });
      break;
    }
    default: break;
  }
  return { title, lines, feeds };
}
