// variants.js — the modern variants' panels in the stepper: grouped-query heads (kv_heads), RoPE
// (rope_angles, q_rot, k_rot), ALiBi's bias (bias), the sliding window's mask (mask), and the
// backward's ∂L/∂q_rot, ∂L/∂k_rot: their matrices (read from the core's trace, never computed
// here), shapes, notes, formulas, and the arithmetic of one cell for the explain box. FlashAttention's
// tiles and latent attention have theirs in variants-tiles.js, merged in here.
//
// Limits: the only numbers worked out here are displayed terms (cos and sin of the core's angle, a
// product); every total shown is the core's. The kv_heads panel is 1 where query head h reads
// key/value head g (the core's kv_head list), 0 elsewhere.
import { formatNumber as f, term } from '../common/format.js';
import { math, m, mi, mn, mo, mtext, row, sub, sup, frac } from '../common/math.js';
import { col, dotLines } from '../common/explain-lines.js';
import { tileSpecs, tileNote, tileFormula, explainTiles, tileGradSpecs, tileGradNote, explainTilesGrad } from './variants-tiles.js';
export { tileGradNote };

const rope = (tr) => tr.rope ?? null;

/** The partner of dimension d in its RoPE pair: {pair, other, first} or null (d not rotated). */
export function ropePair(tr, d) {
  const r = rope(tr);
  if (!r || d >= r.dims) return null;
  if (r.pairing === 'interleaved') return { pair: d >> 1, other: d ^ 1, first: d % 2 === 0 };
  const half = r.dims / 2;
  return d < half ? { pair: d, other: d + half, first: true } : { pair: d - half, other: d - half, first: false };
}

/** The forward panels of the variants in use: {panel: [matrix, shape, opts]} of head h. */
export function variantSpecs(ctx, tr, h) {
  const t = ctx.t;
  const H = tr.heads[h];
  const out = tileSpecs(ctx, tr, h);
  const TT = `T × T_total = ${tr.T} × ${tr.T_total}`;
  if (tr.kv_heads) {
    const g = tr.kv_heads;
    const m = tr.heads.map((_, k) => Array.from({ length: g.n_kv_head }, (__, c) => (g.kv_head[k] === c ? 1 : 0)));
    out.kv_heads = [m, `n_head × n_kv_head = ${tr.n_head} × ${g.n_kv_head}`, {
      range: [0, 1],
      rowLabels: m.map((_, k) => t('var.qhead', { h: k + 1 })),
      colLabels: m[0].map((_, c) => t('var.kvhead', { g: c + 1 })),
    }];
  }
  const r = rope(tr);
  if (r) {
    out.rope_angles = [r.k_angles, `T_total × d_rot/2 = ${tr.T_total} × ${r.dims / 2}`, {
      rowLabels: r.k_positions.map((p) => `p=${p}`),
      colLabels: r.theta.map((_, i) => `θ${i}`),
    }];
    out.q_rot = [H.q_rot, `T × d_k = ${tr.T} × ${tr.head_dim}`, { rowLabels: r.q_positions.map((p) => `p=${p}`) }];
    out.k_rot = [H.k_rot, `T_total × d_k = ${tr.T_total} × ${tr.head_dim}`, { rowLabels: r.k_positions.map((p) => `p=${p}`) }];
  }
  if (H.bias) out.bias = [H.bias, TT, {}];
  if (tr.options.window) out.mask = [tr.mask, TT, {}];
  return out;
}

/** The backward's variant panels: {panel: [matrix, shape]} of head h (RoPE's rotated q and k). */
export function variantGradSpecs(bw, h) {
  const G = bw.grads.heads[h];
  const tr = bw.trace;
  const tiles = tileGradSpecs(bw, h);
  if (!G.q_rot) return tiles;
  return {
    ...tiles,
    d_q_rot: [G.q_rot, `T × d_k = ${tr.T} × ${tr.head_dim}`],
    d_k_rot: [G.k_rot, `T_total × d_k = ${tr.T_total} × ${tr.head_dim}`],
  };
}

/** The note under a variant's panel ('' when none). */
export function variantNote(ctx, p, tr, h) {
  const { t } = ctx;
  const r = rope(tr);
  const tiles = tileNote(ctx, p, tr, h);
  if (tiles !== undefined) return tiles;
  switch (p) {
    case 'kv_heads': {
      const g = tr.kv_heads;
      return t('var.note.kv', { g: g.group_size, n: g.n_kv_head, heads: tr.n_head, cache: g.cache_floats, mha: g.cache_floats_mha,
        x: f(g.cache_floats_mha / g.cache_floats) });
    }
    case 'rope_angles': return t('var.note.angles', { base: r.base, dims: r.dims, theta: r.theta.map((v, i) => `θ${i} = ${f(v)}`).join(', ') });
    case 'q_rot': return t(`var.note.${r.pairing}`, { dims: r.dims, d: tr.head_dim }) + (tr.base ? ` ${t('var.note.qbase', { base: tr.base })}` : '');
    case 'k_rot': return t(`var.note.${r.pairing}`, { dims: r.dims, d: tr.head_dim });
    case 'bias': return t('var.note.bias', { h: h + 1, m: f(tr.alibi.slopes[h]), all: tr.alibi.slopes.map((v) => f(v)).join(', ') });
    case 'mask': return t(tr.options.sinks ? 'var.note.maskSinks' : 'var.note.mask', { w: tr.options.window, s: tr.options.sinks, base: tr.base });
    case 'masked': return tr.alibi ? t('var.note.masked') : null;
    case 'scores': return r ? t('var.note.scores') : null;
    default: return null;
  }
}

const ij = () => row(mi('i'), mo(','), mi('j'));
/** One relation per line (a phone's panel is narrow): a table of rows, aligned left. */
function lines(...rows) {
  const t = m('mtable', ...rows.map((r) => (r.tagName === 'mtr' ? r : m('mtr', m('mtd', r)))));
  t.setAttribute('columnalign', 'left');
  return t;
}

/** The formula of a variant's panel, or of a plain panel a variant changes; null: the plain one. */
export function variantFormula(p, fx) {
  const tiles = tileFormula(p, fx);
  if (tiles) return tiles;
  const pos = (q) => (q ? row(mo('('), mi('base'), mo('+'), mi('i'), mo(')')) : mi('j'));
  const rot = (q) => {
    const v = q ? 'q' : 'k';
    const phi = row(pos(q), mo('·'), sub(mi('θ'), mi('p')));
    return math(`${v}'_a = ${v}_a cos φ − ${v}_b sin φ, ${v}'_b = ${v}_a sin φ + ${v}_b cos φ, φ = ${q ? '(base + i)' : 'j'} θ_p`, lines(
      row(sub(mi(`${v}′`), mi('a')), mo('='), sub(mi(v), mi('a')), mi('cos'), mi('φ'), mo('−'), sub(mi(v), mi('b')), mi('sin'), mi('φ')),
      row(sub(mi(`${v}′`), mi('b')), mo('='), sub(mi(v), mi('a')), mi('sin'), mi('φ'), mo('+'), sub(mi(v), mi('b')), mi('cos'), mi('φ')),
      row(mi('φ'), mo('='), phi)));
  };
  const top = fx.maskKind === 'inclusive' ? '<' : '≤';
  const when = (a, ...cond) => m('mtr', m('mtd', a), m('mtd', mtext('\u2002if\u2002'), ...cond));
  switch (p) {
    case 'kv_heads': return math('query head h reads key/value head ceil(h / g), g = n_head / n_kv_head', lines(
      row(mi('kv'), mo('('), mi('h'), mo(')'), mo('='), mo('⌈'), frac(mi('h'), mi('g')), mo('⌉')),
      row(mi('g'), mo('='), frac(sub(mi('n'), mi('head')), sub(mi('n'), mi('kv_head'))))));
    case 'rope_angles': return math('angle(p, i) = p times theta_i, theta_i = base^(-2i / d_rot)', lines(
      row(mi('φ'), mo('('), mi('p'), mo(','), mi('i'), mo(')'), mo('='), mi('p'), mo('·'), sub(mi('θ'), mi('i'))),
      row(sub(mi('θ'), mi('i')), mo('='), sup(mi('base'), row(mo('−'), frac(row(mn('2'), mi('i')), sub(mi('d'), mi('rot'))))))));
    case 'q_rot': return rot(true);
    case 'k_rot': return rot(false);
    case 'bias': return math('B_ij = -m_h (base + i - j)', sub(mi('B'), ij()), mo('='), mo('−'), sub(mi('m'), mi('h')),
      row(mo('('), mi('base'), mo('+'), mi('i'), mo('−'), mi('j'), mo(')')));
    case 'mask': return math(`mask_ij = 0 if i + base - w < j ${top} i + base${fx.sinks ? ', or if j ≤ s (a sink)' : ''}; minus infinity otherwise`,
      sub(mi('mask'), ij()), mo('='), row(mo('{'), lines(
        when(mn('0'), mi('i'), mo('+'), mi('base'), mo('−'), mi('w'), mo('<'), mi('j'), mo(top), mi('i'), mo('+'), mi('base')),
        ...(fx.sinks ? [when(mn('0'), mi('j'), mo('≤'), mi('s'))] : []),
        m('mtr', m('mtd', mo('−∞')), m('mtd', mtext('\u2002otherwise'))))));
    case 'masked': return fx.alibi || fx.window
      ? math(`M = S' ${fx.alibi ? '+ B ' : ''}+ mask`, mi('M'), mo('='), mi('S′'), ...(fx.alibi ? [mo('+'), mi('B')] : []), mo('+'), mi('mask'))
      : null;
    case 'scores': return fx.rope ? math("S = Q' K' transposed (the rotated q and k)", mi('S'), mo('='), mi('Q′'), sup(mi('K′'), mi('T'))) : null;
    case 'd_q_rot': return math("dL/dq' = dL/dS times k'", mi('∂L/∂q′'), mo('='), mi('∂L/∂S'), mo('·'), mi('k′'));
    case 'd_k_rot': return math("dL/dk' = dL/dS transposed times q'", mi('∂L/∂k′'), mo('='), sup(mi('∂L/∂S'), mi('T')), mo('·'), mi('q′'));
    case 'd_q': case 'd_k': return fx.rope
      ? math(`dL/d${p.slice(2)} = R(phi) transposed times dL/d${p.slice(2)}' (the rotation back)`, mi(`∂L/∂${p.slice(2)}`), mo('='), sup(row(mi('R'), mo('('), mi('φ'), mo(')')), mi('T')), mo('·'), mi(`∂L/∂${p.slice(2)}′`))
      : null;
    default: return null;
  }
}

/** Whether query i (0-based) sees key j, and the lines that say why (window, sinks, causal). */
export function windowLines(tr, i, j, t, { N }) {
  const I = i + 1;
  const J = j + 1;
  const { window: w, sinks: s, mask } = tr.options;
  const last = I + tr.base - (mask === 'inclusive' ? 1 : 0);
  const first = I + tr.base - w + 1;
  N(t(s ? 'var.ex.seesSinks' : 'var.ex.sees', { i: I, first: Math.max(1, first), last, s }));
  const seen = tr.mask[i][j] !== -Infinity;
  if (J > last) N(t('var.ex.future', { j: J, last }));
  else if (J >= first) N(t('var.ex.inWindow', { j: J, first: Math.max(1, first), last }));
  else if (J <= s) N(t('var.ex.sink', { j: J, s }));
  else N(t('var.ex.outside', { j: J, first }));
  return seen;
}

/**
 * The arithmetic of one cell of a variant's panel (forward), or null for another panel. c: the
 * cell (cellOf), L: the line builder; feeds: the list to add the cells it reads to.
 */
export function explainVariant(tr, c, t, L, feeds) {
  const { panel, i, j, I, J, h, H, hs } = c;
  const { F, T, R, N } = L;
  const r = rope(tr);
  const tiles = explainTiles(tr, c, t, L, feeds);
  if (tiles) return tiles;
  switch (panel) {
    case 'kv_heads': {
      const g = tr.kv_heads;
      F(`kv(${I}) = ⌈${I} / g⌉, g = n_head / n_kv_head = ${tr.n_head} / ${g.n_kv_head} = ${g.group_size}`);
      T(`kv(${I}) = ⌈${I} / ${g.group_size}⌉ = ${g.kv_head[i] + 1}`);
      N(t(g.kv_head[i] === j ? 'var.ex.reads' : 'var.ex.readsNot', { h: I, g: J, r: g.kv_head[i] + 1 }));
      R(g.kv_head[i] === j ? 1 : 0);
      return `kv[${I},${J}]`;
    }
    case 'rope_angles': {
      const p = r.k_positions[i];
      F(`φ(${p}, ${j}) = ${p} · θ_${j},  θ_${j} = ${r.base}^(−2·${j} / ${r.dims})`);
      T(`θ_${j} = ${f(r.theta[j])}`);
      T(`= ${p} × ${term(r.theta[j])}`);
      R(r.k_angles[i][j]);
      N(t('var.ex.angle', { p }));
      return `φ(${p}, ${j})`;
    }
    case 'q_rot': case 'k_rot': {
      const q = panel === 'q_rot';
      const v = q ? 'q' : 'k';
      const src = q ? H.q[i] : H.k[i];
      const name = `${v}′[${I},${J}]${hs}`;
      feeds.push({ panel: q ? 'q' : 'k', row: i });
      const pr = ropePair(tr, j);
      if (!pr) {
        F(`${v}′[${I},${J}] = ${v}[${I},${J}]`);
        N(t('var.ex.unrotated', { d: J, dims: r.dims }));
        R((q ? H.q_rot : H.k_rot)[i][j]);
        return name;
      }
      const pos = q ? r.q_positions[i] : r.k_positions[i];
      const phi = (q ? r.q_angles : r.k_angles)[i][pr.pair];
      feeds.push({ panel: 'rope_angles', row: pos, col: pr.pair });
      const [a, b] = pr.first ? [J, pr.other + 1] : [pr.other + 1, J];
      N(t('var.ex.pair', { a, b, p: pr.pair, pos }));
      T(`φ = ${pos} · θ_${pr.pair} = ${f(phi)}`);
      const cs = Math.cos(phi);
      const sn = Math.sin(phi);
      if (pr.first) {
        F(`${v}′[${I},${a}] = ${v}[${I},${a}]·cos φ − ${v}[${I},${b}]·sin φ`);
        T(`= ${term(src[j])} × ${term(cs)} − ${term(src[pr.other])} × ${term(sn)}`);
      } else {
        F(`${v}′[${I},${b}] = ${v}[${I},${a}]·sin φ + ${v}[${I},${b}]·cos φ`);
        T(`= ${term(src[pr.other])} × ${term(sn)} + ${term(src[j])} × ${term(cs)}`);
      }
      R((q ? H.q_rot : H.k_rot)[i][j]);
      return name;
    }
    case 'bias': {
      const m = tr.alibi.slopes[h];
      F(`B[${I},${J}] = −m${h + 1} · (base + i − j)`);
      T(`= −${f(m)} × (${tr.base} + ${I} − ${J})`);
      T(`= −${f(m)} × ${tr.base + I - J}`);
      R(H.bias[i][j]);
      N(t('var.ex.bias', { d: tr.base + I - J }));
      return `B[${I},${J}]${hs}`;
    }
    case 'mask': {
      F(`mask[${I},${J}]`);
      windowLines(tr, i, j, t, L);
      R(tr.mask[i][j]);
      return `mask[${I},${J}]`;
    }
    case 'masked': {
      if (!tr.alibi && !tr.options.window) return null;
      F(`M[${I},${J}] = S′[${I},${J}]${tr.alibi ? ` + B[${I},${J}]` : ''} + mask[${I},${J}]`);
      feeds.push({ panel: 'scaled', row: i, col: j });
      if (tr.alibi) feeds.push({ panel: 'bias', row: i, col: j });
      if (tr.options.window) { windowLines(tr, i, j, t, L); feeds.push({ panel: 'mask', row: i, col: j }); }
      T(`= ${term(H.scaled[i][j])}${tr.alibi ? ` + ${term(H.bias[i][j])}` : ''} + ${term(tr.mask[i][j])}`);
      R(H.masked[i][j]);
      return `M[${I},${J}]${hs}`;
    }
    case 'scores': {
      if (!r) return null;
      F(`S[${I},${J}] = q′${I} · k′${J} = Σ_d q′[${I},d]·k′[${J},d]`);
      const [p, s] = dotLines(H.q_rot[i], H.k_rot[j]);
      T(`= ${p}`);
      T(`= ${s}`);
      R(H.scores[i][j]);
      N(t('var.ex.scores'));
      feeds.push({ panel: 'q_rot', row: i }, { panel: 'k_rot', row: j });
      return `S[${I},${J}]${hs}`;
    }
    default: return null;
  }
}

/** The arithmetic of a gradient cell a variant changes (∂L/∂q′, ∂L/∂k′, ∂L/∂q, ∂L/∂k with RoPE), or null. */
export function explainVariantGrad(bw, c, t, L, feeds) {
  const tr = bw.trace;
  const r = rope(tr);
  const { panel, i, j, I, J, h, H, hs } = c;
  const tiles = explainTilesGrad(bw, c, t, L, feeds);
  if (tiles) return tiles;
  if (tr.kv_heads && (panel === 'd_K' || panel === 'd_V')) return explainGroupGrad(bw, c, t, L, feeds);
  if (!r) return null;
  const G = bw.grads.heads[h];
  const { F, T, R, N } = L;
  switch (panel) {
    case 'd_q_rot': case 'd_k_rot': {
      const q = panel === 'd_q_rot';
      if (q) {
        F(`∂L/∂q′[${I},${J}] = Σ_j ∂L/∂S[${I},j] · k′[j,${J}]`);
        const [p, s] = dotLines(G.scores[i], col(H.k_rot, j));
        T(`= ${p}`); T(`= ${s}`);
        feeds.push({ panel: 'd_scores', row: i }, { panel: 'k_rot', col: j });
      } else {
        F(`∂L/∂k′[${I},${J}] = Σ_i ∂L/∂S[i,${I}] · q′[i,${J}]`);
        const [p, s] = dotLines(col(G.scores, i), col(H.q_rot, j));
        T(`= ${p}`); T(`= ${s}`);
        feeds.push({ panel: 'd_scores', col: i }, { panel: 'q_rot', col: j });
      }
      R((q ? G.q_rot : G.k_rot)[i][j]);
      return `∂L/∂${q ? 'q' : 'k'}′[${I},${J}]${hs}`;
    }
    case 'd_q': case 'd_k': {
      const q = panel === 'd_q';
      const v = q ? 'q' : 'k';
      const g = q ? G.q_rot : G.k_rot;
      feeds.push({ panel: `d_${v}_rot`, row: i });
      const pr = ropePair(tr, j);
      if (!pr) {
        F(`∂L/∂${v}[${I},${J}] = ∂L/∂${v}′[${I},${J}]`);
        N(t('var.ex.unrotated', { d: J, dims: r.dims }));
      } else {
        const phi = (q ? r.q_angles : r.k_angles)[i][pr.pair];
        const [cs, sn] = [Math.cos(phi), Math.sin(phi)];
        const o = pr.other + 1;
        N(t('var.ex.rotBack'));
        T(`φ = ${f(phi)}`);
        if (pr.first) {
          F(`∂L/∂${v}[${I},${J}] = ∂L/∂${v}′[${I},${J}]·cos φ + ∂L/∂${v}′[${I},${o}]·sin φ`);
          T(`= ${term(g[i][j])} × ${term(cs)} + ${term(g[i][pr.other])} × ${term(sn)}`);
        } else {
          F(`∂L/∂${v}[${I},${J}] = −∂L/∂${v}′[${I},${o}]·sin φ + ∂L/∂${v}′[${I},${J}]·cos φ`);
          T(`= −${term(g[i][pr.other])} × ${term(sn)} + ${term(g[i][j])} × ${term(cs)}`);
        }
      }
      R((q ? G.q : G.k)[i][j]);
      return `∂L/∂${v}[${I},${J}]${hs}`;
    }
    default: return null;
  }
}

/** ∂L/∂K or ∂L/∂V with grouped-query heads: the sum of the group's per-head gradients. */
function explainGroupGrad(bw, c, t, L, feeds) {
  const { panel, i, j, I, J, h } = c;
  const tr = bw.trace;
  const n = panel.slice(2);
  const lo = n.toLowerCase();
  const w = n === 'V' ? tr.d_v : tr.head_dim;
  const g = Math.floor(j / w);
  const jj = j % w;
  const heads = tr.kv_heads.kv_head.map((kv, k) => (kv === g ? k : -1)).filter((k) => k >= 0);
  const vals = heads.map((k) => bw.grads.heads[k][lo][i][jj]);
  L.F(`∂L/∂${n}[${I},${J}] = Σ_h ∂L/∂${lo}⟨${t('var.ex.groupHeads', { g: g + 1 })}⟩[${I},${jj + 1}]`);
  L.N(t('var.ex.group', { n, g: g + 1, heads: heads.map((k) => k + 1).join(', ') }));
  L.T(`= ${vals.map((v) => term(v)).join(' + ')}`);
  L.R(bw.grads[n][i][j]);
  if (heads.includes(h)) feeds.push({ panel: `d_${lo}`, row: i, col: jj });
  return `∂L/∂${n}[${I},${J}]`;
}
