// variants-tiles.js — two of the modern variants' panels in the stepper: FlashAttention's tiles
// (flash_m, flash_alpha, flash_l: each query row's running maximum m, rescale α and running sum ℓ
// after each key block; flash_context = o / ℓ beside the plain path's context) and multi-head latent
// attention (latent = x·W_dkv, q_latent = q_C·W_ukᵀ, scores_absorbed = q_latent·cᵀ + q′_R·k′_Rᵀ, and
// q, k, v as MLA builds them). Their matrices, notes, formulas and the arithmetic of one cell.
//
// Limits: every number is the core's trace (src/core/attention/flash.h, mla.h), regrouped here
// into matrices (a tile step's rows land in the column of its key block), never computed; the only
// values worked out are displayed terms. A skipped tile (every score masked) repeats m and ℓ.
import { formatNumber as f, term } from '../common/format.js';
import { math, mi, mo, row, sub, sup, frac } from '../common/math.js';
import { col, dotLines } from '../common/explain-lines.js';

const NEG = -Infinity;

/** The tile step of head h, query row i, key block kb (and the row inside the step), or null. */
export function tileStep(fl, h, i, kb) {
  const qb = Math.floor(i / fl.block_q);
  const k = fl.steps.findIndex((s) => s.head === h && s.q_block === qb && s.k_block === kb);
  return k < 0 ? null : { s: fl.steps[k], k, r: i - fl.steps[k].r0 };
}

/** m, α and ℓ of head h as T × n_k_blocks matrices: column b is the state after key block b. */
export function tileMatrices(fl, h, T) {
  const make = (fill) => Array.from({ length: T }, () => Array(fl.n_k_blocks).fill(fill));
  const out = { m: make(NEG), alpha: make(1), l: make(0) };
  for (const s of fl.steps) {
    if (s.head !== h) continue;
    for (let r = 0; r < s.rows; r++) {
      out.m[s.r0 + r][s.k_block] = s.m[r];
      out.alpha[s.r0 + r][s.k_block] = s.alpha[r];
      out.l[s.r0 + r][s.k_block] = s.l[r];
    }
  }
  return out;
}

/** The rescales of head h: {row, block, alpha} where a new maximum multiplied the old ℓ and o by α < 1. */
export function rescales(fl, h) {
  const out = [];
  for (const s of fl.steps) {
    if (s.head !== h || s.skipped || s.k_block === 0) continue;
    s.alpha.forEach((a, r) => { if (a > 0 && a < 1) out.push({ row: s.r0 + r, block: s.k_block, alpha: a }); });
  }
  return out;
}

/** The forward panels of the tiles and of latent attention: {panel: [matrix, shape, opts]} of head h. */
export function tileSpecs(ctx, tr, h) {
  const out = {};
  const fl = tr.flash;
  if (fl) {
    const mats = tileMatrices(fl, h, tr.T);
    const colLabels = Array.from({ length: fl.n_k_blocks }, (_, b) => ctx.t('var.flash.block', { b: b + 1 }));
    const shape = `T × n_k_blocks = ${tr.T} × ${fl.n_k_blocks}`;
    out.flash_m = [mats.m, shape, { colLabels }];
    out.flash_alpha = [mats.alpha, shape, { colLabels, range: [0, 1] }];
    out.flash_l = [mats.l, shape, { colLabels }];
    out.flash_context = [fl.heads[h].context, `T × d_v = ${tr.T} × ${tr.d_v}`, {}];
  }
  const ml = tr.mla;
  if (ml) {
    out.latent = [ml.c, `T_total × d_c = ${tr.T_total} × ${ml.d_c}`, {}];
    out.q_latent = [ml.heads[h].q_latent, `T × d_c = ${tr.T} × ${ml.d_c}`, {}];
    out.scores_absorbed = [ml.heads[h].scores_absorbed, `T × T_total = ${tr.T} × ${tr.T_total}`, {}];
  }
  return out;
}

const e2 = (v) => (v === 0 ? '0' : v.toExponential(2));

/** The note under a tile or latent panel; undefined for another panel. */
export function tileNote(ctx, p, tr, h) {
  const { t } = ctx;
  const fl = tr.flash;
  const ml = tr.mla;
  switch (p) {
    case 'flash_m': case 'flash_alpha': {
      const rs = rescales(fl, h);
      const list = rs.slice(0, 6).map((x) => t('var.flash.at', { i: x.row + 1, b: x.block + 1, a: f(x.alpha) })).join('; ');
      return t(p === 'flash_m' ? 'var.note.flash_m' : 'var.note.flash_alpha', { bq: fl.block_q, bk: fl.block_k })
        + ' ' + (rs.length ? t('var.note.rescales', { n: rs.length, list: list + (rs.length > 6 ? '; …' : '') }) : t('var.note.noRescale'));
    }
    case 'flash_l': return t('var.note.flash_l');
    case 'flash_context': return t('var.note.flash_context', { d: e2(fl.max_abs_diff.context), b: e2(fl.bound.context),
      d2: e2(fl.max_abs_diff.out), b2: e2(fl.bound.out) });
    case 'latent': return t('var.note.latent', { dc: ml.d_c, dr: ml.d_rope, mla: ml.cache_floats, mha: ml.cache_floats_mha,
      x: f(ml.cache_floats_mha / ml.cache_floats) });
    case 'q_latent': return t('var.note.q_latent', { h: h + 1 });
    case 'scores_absorbed': return t('var.note.absorbed', { s: e2(ml.max_abs_diff.scores), c: e2(ml.max_abs_diff.context) });
    case 'q': case 'k': case 'v': return ml ? t(`var.note.mla_${p}`, { dr: ml.d_rope, dn: ml.d_nope }) : undefined;
    default: return undefined;
  }
}

/** The formula of a tile or latent panel (or q, k, v under latent attention); null: not one of them. */
export function tileFormula(p, fx) {
  const M = (a, b) => sub(mi(a), mi(b));
  switch (p) {
    case 'flash_m': return math('m_new = max(m_old, the largest masked score of the row in the tile)',
      M('m', 'new'), mo('='), mi('max'), mo('('), M('m', 'old'), mo(','), M('max', 'j∈tile'), M('M', 'ij'), mo(')'));
    case 'flash_alpha': return math('alpha = e to the (m_old − m_new)', mi('α'), mo('='), sup(mi('e'), row(M('m', 'old'), mo('−'), M('m', 'new'))));
    case 'flash_l': return math('l_new = alpha l_old + sum over the tile of e to the (M_ij − m_new)',
      M('ℓ', 'new'), mo('='), mi('α'), M('ℓ', 'old'), mo('+'), M('Σ', 'j∈tile'), sup(mi('e'), row(M('M', 'ij'), mo('−'), M('m', 'new'))));
    case 'flash_context': return math('O = o / l, with o_new = alpha o_old + p V_tile', mi('O'), mo('='), frac(mi('o'), mi('ℓ')), mo(','),
      M('o', 'new'), mo('='), mi('α'), M('o', 'old'), mo('+'), mi('p'), M('V', 'tile'));
    case 'flash_D': return math('D = rowsum(dO times O)', mi('D'), mo('='), mi('rowsum'), mo('('), mi('∂L/∂O'), mo('⊙'), mi('O'), mo(')'));
    case 'flash_P': return math('P = e to the (M − L), L = m + log l, recomputed per tile', mi('P'), mo('='), sup(mi('e'), row(mi('M'), mo('−'), mi('L'))), mo(','),
      mi('L'), mo('='), mi('m'), mo('+'), mi('log'), mi('ℓ'));
    case 'd_latent': return math('dL/dc = dL/dk_C W_uk transposed + dL/dV W_uv transposed', mi('∂L/∂c'), mo('='), M('∂L/∂k', 'C'), sup(M('W', 'uk'), mi('T')),
      mo('+'), mi('∂L/∂V'), sup(M('W', 'uv'), mi('T')));
    case 'd_W_dkv': return math('dL/dW_dkv = x transposed dL/dc', M('∂L/∂W', 'dkv'), mo('='), sup(mi('x'), mi('T')), mi('∂L/∂c'));
    case 'd_W_uk': return math('dL/dW_uk = c transposed dL/dk_C', M('∂L/∂W', 'uk'), mo('='), sup(mi('c'), mi('T')), M('∂L/∂k', 'C'));
    case 'd_W_uv': return math('dL/dW_uv = c transposed dL/dV', M('∂L/∂W', 'uv'), mo('='), sup(mi('c'), mi('T')), mi('∂L/∂V'));
    case 'd_W_kr': return math('dL/dW_kr = x transposed dL/dk_R', M('∂L/∂W', 'kr'), mo('='), sup(mi('x'), mi('T')), M('∂L/∂k', 'R'));
    case 'd_W_qr': return math('dL/dW_qr = x transposed dL/dq_R', M('∂L/∂W', 'qr'), mo('='), sup(mi('x'), mi('T')), M('∂L/∂q', 'R'));
    case 'latent': return math('c = x W_dkv', mi('c'), mo('='), mi('x'), M('W', 'dkv'));
    case 'q_latent': return math('q_lat = q_C W_uk transposed (per head)', M('q', 'lat'), mo('='), M('q', 'C'), sup(M('W', 'uk'), mi('T')));
    case 'scores_absorbed': return math("S_abs = q_lat c transposed + q'_R k'_R transposed", M('S', 'abs'), mo('='), M('q', 'lat'), sup(mi('c'), mi('T')),
      mo('+'), M('q′', 'R'), sup(M('k′', 'R'), mi('T')));
    default: break;
  }
  if (!fx.mla) return null;
  switch (p) {
    case 'q': return math('q = [x W_qr | x W_q] (the rotary part first)', mi('q'), mo('='), mo('['), mi('x'), M('W', 'qr'), mo('|'), mi('x'), M('W', 'q'), mo(']'));
    case 'k': return math('k = [x W_kr | c W_uk] (the shared rotary part first)', mi('k'), mo('='), mo('['), mi('x'), M('W', 'kr'), mo('|'), mi('c'), M('W', 'uk'), mo(']'));
    case 'v': return math('v = c W_uv', mi('v'), mo('='), mi('c'), M('W', 'uv'));
    default: return null;
  }
}

/** The arithmetic of one tile or latent cell (forward), or null for another panel. */
export function explainTiles(tr, c, t, L, feeds) {
  if (tr.flash && c.panel.startsWith('flash_')) return explainTile(tr, c, t, L, feeds);
  if (tr.mla) return explainLatent(tr, c, t, L, feeds);
  return null;
}

function explainTile(tr, c, t, L, feeds) {
  const { panel, i, j, I, J, h, H, hs } = c;
  const { F, T, R, N } = L;
  const fl = tr.flash;
  if (panel === 'flash_context') {
    const last = tileStep(fl, h, i, fl.n_k_blocks - 1);
    const o = last.s.o[last.r][j];
    const l = last.s.l[last.r];
    F(`O[${I},${J}] = o[${I},${J}] / ℓ[${I}]`);
    T(`= ${term(o)} / ${term(l)}`);
    R(fl.heads[h].context[i][j]);
    N(t('var.ex.flashContext', { plain: f(H.context[i][j]), d: e2(Math.abs(fl.heads[h].context[i][j] - H.context[i][j])) }));
    feeds.push({ panel: 'flash_l', row: i, col: fl.n_k_blocks - 1 }, { panel: 'context', row: i, col: j });
    return `O[${I},${J}]${hs}`;
  }
  const st = tileStep(fl, h, i, j);
  const { s, r } = st;
  const prev = j > 0 ? tileStep(fl, h, i, j - 1) : null;
  const mOld = prev ? prev.s.m[prev.r] : NEG;
  const lOld = prev ? prev.s.l[prev.r] : 0;
  const keys = `${s.c0 + 1}…${s.c0 + s.cols}`;
  N(t('var.ex.tile', { i: I, b: J, keys }));
  if (s.skipped) N(t('var.ex.skipped'));
  const tileVals = H.masked[i].slice(s.c0, s.c0 + s.cols);
  feeds.push({ panel: 'masked', row: i });
  if (j > 0) feeds.push({ panel, row: i, col: j - 1 });
  switch (panel) {
    case 'flash_m':
      F(`m[${I},${J}] = max(m[${I},${J - 1}], max_j M[${I},j]) ⟨${t('var.ex.overKeys', { keys })}⟩`);
      T(`= max(${term(mOld)}, ${tileVals.map(term).join(', ')})`);
      R(s.m[r]);
      return `m[${I},${J}]${hs}`;
    case 'flash_alpha':
      F(`α[${I},${J}] = e^(m[${I},${J - 1}] − m[${I},${J}])`);
      T(`= e^(${term(mOld)} − ${term(s.m[r])})`);
      R(s.alpha[r]);
      N(t(s.m[r] === NEG ? 'var.ex.alphaNone' : mOld === NEG ? 'var.ex.alphaFirst' : s.alpha[r] < 1 ? 'var.ex.alphaRescale' : 'var.ex.alphaSame'));
      feeds.push({ panel: 'flash_m', row: i, col: j });
      return `α[${I},${J}]${hs}`;
    case 'flash_l': {
      F(`ℓ[${I},${J}] = α[${I},${J}]·ℓ[${I},${J - 1}] + Σ_j e^(M[${I},j] − m[${I},${J}])`);
      const p = s.skipped ? [] : s.p[r];
      T(`= ${term(s.alpha[r])} × ${term(lOld)}${p.map((v) => ` + ${term(v)}`).join('')}`);
      R(s.l[r]);
      feeds.push({ panel: 'flash_alpha', row: i, col: j }, { panel: 'flash_m', row: i, col: j });
      return `ℓ[${I},${J}]${hs}`;
    }
    default: return null;
  }
}

function explainLatent(tr, c, t, L, feeds) {
  const { panel, i, j, I, J, h, hs } = c;
  const { F, T, R, N } = L;
  const ml = tr.mla;
  const x = tr.inputs.x;
  const dot = (a, b) => { const [p, s] = dotLines(a, b); T(`= ${p}`); T(`= ${s}`); };
  const xq = tr.base + i; // a query's row of x
  switch (panel) {
    case 'latent':
      F(`c[${I},${J}] = x[${I},:] · W_dkv[:,${J}]`);
      dot(x[i], col(tr.inputs.W_dkv, j));
      R(ml.c[i][j]);
      feeds.push({ editor: 'x', row: i }, { editor: 'W_dkv', col: j });
      return `c[${I},${J}]`;
    case 'q_latent': {
      const qc = ml.q_C[i].slice(h * ml.d_nope, (h + 1) * ml.d_nope);
      F(`q_lat[${I},${J}] = Σ_d q_C[${I},d] · W_uk[${J},d] ⟨${t('var.ex.headCols', { h: h + 1 })}⟩`);
      dot(qc, tr.inputs.W_uk[j].slice(h * ml.d_nope, (h + 1) * ml.d_nope));
      R(ml.heads[h].q_latent[i][j]);
      N(t('var.ex.absorb'));
      feeds.push({ editor: 'W_uk', row: j });
      return `q_lat[${I},${J}]${hs}`;
    }
    case 'scores_absorbed': {
      const Hm = ml.heads[h];
      const rope = Hm.scores_rope ? Hm.scores_rope[i][j] : null;
      F(`S_abs[${I},${J}] = q_lat[${I},:] · c[${J},:]${rope === null ? '' : ` + q′_R[${I},:] · k′_R[${J},:]`}`);
      const [p] = dotLines(Hm.q_latent[i], ml.c[j]);
      T(`= (${p})${rope === null ? '' : ` + ${term(rope)}`}`);
      T(`= ${term(Hm.scores_latent[i][j])}${rope === null ? '' : ` + ${term(rope)}`}`);
      R(Hm.scores_absorbed[i][j]);
      N(t('var.ex.absorbedSame', { s: f(c.H.scores[i][j]), d: e2(Math.abs(Hm.scores_absorbed[i][j] - c.H.scores[i][j])) }));
      feeds.push({ panel: 'q_latent', row: i }, { panel: 'latent', row: j }, { panel: 'scores', row: i, col: j });
      return `S_abs[${I},${J}]${hs}`;
    }
    case 'q': case 'k': {
      const q = panel === 'q';
      const rotary = j < ml.d_rope;
      const jj = rotary ? (q ? h * ml.d_rope + j : j) : h * ml.d_nope + j - ml.d_rope;
      const [W, src, srcName, row0] = rotary ? [q ? 'W_qr' : 'W_kr', x, 'x', q ? xq : i]
        : q ? ['W_q', x, 'x', xq] : ['W_uk', ml.c, 'c', i];
      F(`${panel}[${I},${J}] = ${srcName}[${row0 + 1},:] · ${W}[:,${jj + 1}]`);
      N(t(rotary ? 'var.ex.mlaRotary' : q ? 'var.ex.mlaContentQ' : 'var.ex.mlaContentK', { dr: ml.d_rope }));
      dot(src[row0], col(tr.inputs[W], jj));
      R((q ? c.H.q : c.H.k)[i][j]);
      feeds.push(srcName === 'x' ? { editor: 'x', row: row0 } : { panel: 'latent', row: row0 }, { editor: W, col: jj });
      return `${panel}[${I},${J}]${hs}`;
    }
    case 'v': {
      const jj = h * tr.d_v + j;
      F(`v[${I},${J}] = c[${I},:] · W_uv[:,${jj + 1}]`);
      dot(ml.c[i], col(tr.inputs.W_uv, jj));
      R(c.H.v[i][j]);
      feeds.push({ panel: 'latent', row: i }, { editor: 'W_uv', col: jj });
      return `v[${I},${J}]${hs}`;
    }
    default: return null;
  }
}

// ───────────── the backward pass: FlashAttention-2's D and recomputed P; latent attention's leaves ─────────────

/** The backward's tile and latent panels: {panel: [matrix, shape]} of head h (only those in use). */
export function tileGradSpecs(bw, h) {
  const tr = bw.trace;
  const g = bw.grads;
  const out = {};
  if (g.flash) {
    out.flash_D = [g.flash.heads[h].D.map((v) => [v]), `T × 1 = ${tr.T} × 1`];
    out.flash_P = [g.flash.heads[h].P, `T × T_total = ${tr.T} × ${tr.T_total}`];
  }
  const ml = tr.mla;
  if (ml) {
    const dm = tr.d_model;
    out.d_latent = [g.c, `T_total × d_c = ${tr.T_total} × ${ml.d_c}`];
    out.d_W_q = [g.W_q, `d_model × n_head·d_nope = ${dm} × ${tr.n_head * ml.d_nope}`];
    out.d_W_dkv = [g.W_dkv, `d_model × d_c = ${dm} × ${ml.d_c}`];
    out.d_W_uk = [g.W_uk, `d_c × n_head·d_nope = ${ml.d_c} × ${tr.n_head * ml.d_nope}`];
    out.d_W_uv = [g.W_uv, `d_c × n_head·d_v = ${ml.d_c} × ${tr.n_head * tr.d_v}`];
    if (g.W_kr) {
      out.d_W_kr = [g.W_kr, `d_model × d_rope = ${dm} × ${ml.d_rope}`];
      out.d_W_qr = [g.W_qr, `d_model × n_head·d_rope = ${dm} × ${tr.n_head * ml.d_rope}`];
    }
  }
  return out;
}

/** The note under a backward tile or latent panel; undefined for another panel. */
export function tileGradNote(ctx, p, bw) {
  const { t } = ctx;
  const fl = bw.trace.flash;
  switch (p) {
    case 'flash_D': return t('var.note.flash_D');
    case 'flash_P': {
      let d = 0;
      bw.grads.flash.heads.forEach((H, h) => H.P.forEach((r, i) => r.forEach((v, j) => { d = Math.max(d, Math.abs(v - bw.trace.heads[h].weights[i][j])); })));
      return t('var.note.flash_P', { n: fl.n_q_blocks * fl.n_k_blocks * bw.trace.n_head, d: e2(d) });
    }
    case 'd_latent': return t('var.note.d_latent');
    case 'd_x': return bw.trace.mla ? t('var.note.mla_dx') : undefined;
    default: return undefined;
  }
}

/** Head h's columns of a per-head matrix's row (width w each, from offset off inside the head). */
const headCols = (rowv, h, width, off, n) => rowv.slice(h * width + off, h * width + off + n);

/**
 * ∂L/∂k and ∂L/∂q (of the rotated k′, q′ with RoPE) tile by tile, as FlashAttention-2 accumulates
 * them (the trace's steps: dK kept per key block over the query blocks, dQ per query block over
 * the key blocks): one term per tile, the step's value less the one before. Null for another panel.
 */
function tileQKGrad(bw, c, t, L, feeds) {
  const tr = bw.trace;
  const fl = tr.flash;
  const p = tr.rope ? '′' : '';
  const isK = c.panel === (tr.rope ? 'd_k_rot' : 'd_k');
  if (!isK && c.panel !== (tr.rope ? 'd_q_rot' : 'd_q')) return null;
  const { i, j, I, J, h, hs } = c;
  const blk = Math.floor(i / (isK ? fl.block_k : fl.block_q));
  const steps = bw.grads.flash.steps.filter((s) => s.head === h && (isK ? s.k_block === blk : s.q_block === blk));
  if (!steps.length) return null;
  const r = i - (isK ? steps[0].c0 : steps[0].r0);
  let before = 0;
  const adds = steps.map((s) => { const m = isK ? s.dk : s.dq; const v = m[r][j] - before; before = m[r][j]; return v; });
  const { F, T, R, N } = L;
  F(isK ? `∂L/∂k${p}[${I},${J}] = Σ_b (∂L/∂S_bᵀ · q${p}_b)[${I},${J}] ⟨${t('var.ex.overQueryBlocks', { n: steps.length, k: blk + 1 })}⟩`
    : `∂L/∂q${p}[${I},${J}] = Σ_b (∂L/∂S_b · k${p}_b)[${I},${J}] ⟨${t('var.ex.overKeyBlocks', { n: steps.length, k: blk + 1 })}⟩`);
  T(`= ${adds.map(term).join(' + ')}`);
  const G = bw.grads.heads[h];
  R((isK ? (tr.rope ? G.k_rot : G.k) : (tr.rope ? G.q_rot : G.q))[i][j]);
  N(t(isK ? 'var.ex.tilesBackK' : 'var.ex.tilesBackQ'));
  feeds.push(isK ? { panel: 'd_scores', col: i } : { panel: 'd_scores', row: i });
  return `∂L/∂${isK ? 'k' : 'q'}${p}[${I},${J}]${hs}`;
}

/** The arithmetic of a backward tile or latent cell, or null for another panel. */
export function explainTilesGrad(bw, c, t, L, feeds) {
  const tr = bw.trace;
  const g = bw.grads;
  const { panel, i, j, I, J, h, hs } = c;
  const { F, T, R, N } = L;
  const dot = (a, b) => { const [p, s] = dotLines(a, b); T(`= ${p}`); T(`= ${s}`); };
  if (g.flash && panel === 'flash_D') {
    const O = tr.flash.heads[h].context[i];
    const dO = g.heads[h].context[i];
    F(`D[${I}] = Σ_d ∂L/∂O[${I},d] · O[${I},d]`);
    dot(dO, O);
    R(g.flash.heads[h].D[i]);
    feeds.push({ panel: 'd_context', row: i }, { panel: 'flash_context', row: i });
    return `D[${I}]${hs}`;
  }
  if (g.flash && panel === 'flash_P') {
    const fh = tr.flash.heads[h];
    const M = tr.heads[h].masked[i][j];
    F(`P[${I},${J}] = e^(M[${I},${J}] − L[${I}]),  L[${I}] = m[${I}] + log ℓ[${I}]`);
    T(`L[${I}] = ${term(fh.m[i])} + log ${term(fh.l[i])} = ${f(fh.lse[i])}`);
    T(`= e^(${term(M)} − ${term(fh.lse[i])})`);
    R(g.flash.heads[h].P[i][j]);
    N(t('var.ex.recompute', { a: f(tr.heads[h].weights[i][j]) }));
    feeds.push({ panel: 'masked', row: i, col: j }, { panel: 'weights', row: i, col: j });
    return `P[${I},${J}]${hs}`;
  }
  if (g.flash && panel === 'd_v') {
    // FlashAttention-2: the key block's ∂L/∂V grows one query block (one tile) at a time
    const kb = Math.floor(i / tr.flash.block_k);
    const steps = g.flash.steps.filter((s) => s.head === h && s.k_block === kb);
    const r = i - steps[0].c0;
    let before = 0;
    const adds = steps.map((s) => { const v = s.dv[r][j] - before; before = s.dv[r][j]; return v; });
    F(`∂L/∂v[${I},${J}] = Σ_b (P_bᵀ · ∂L/∂O_b)[${I},${J}] ⟨${t('var.ex.overQueryBlocks', { n: steps.length, k: kb + 1 })}⟩`);
    T(`= ${adds.map(term).join(' + ')}`);
    R(g.heads[h].v[i][j]);
    N(t('var.ex.tilesBack'));
    feeds.push({ panel: 'flash_P', col: i });
    return `∂L/∂v[${I},${J}]${hs}`;
  }
  const tile = g.flash && tileQKGrad(bw, c, t, L, feeds);
  if (tile) return tile;
  const ml = tr.mla;
  if (!ml) return null;
  const x = tr.inputs.x;
  const hd = tr.head_dim;
  const nh = tr.n_head;
  // ∂L/∂k_C, ∂L/∂q_C of head k: its columns of ∂L/∂K, ∂L/∂Q past the rotary part
  const dKC = (r, k) => headCols(g.K[r], k, hd, ml.d_rope, ml.d_nope);
  const dQC = (r, k) => headCols(g.Q[r], k, hd, ml.d_rope, ml.d_nope);
  const rowsOf = (m, from) => m.slice(from);
  switch (panel) {
    case 'd_latent': {
      const a = Array.from({ length: nh }, (_, k) => dKC(i, k)).flat();
      const b = tr.inputs.W_uk[j];
      F(`∂L/∂c[${I},${J}] = Σ ∂L/∂k_C[${I},:] · W_uk[${J},:] + Σ ∂L/∂V[${I},:] · W_uv[${J},:]`);
      const [p1] = dotLines(a, b);
      const [p2] = dotLines(g.V[i], tr.inputs.W_uv[j]);
      T(`= (${p1}) + (${p2})`);
      R(g.c[i][j]);
      N(t('var.ex.dLatent'));
      feeds.push({ panel: 'd_K', row: i }, { panel: 'd_V', row: i }, { editor: 'W_uk', row: j }, { editor: 'W_uv', row: j });
      return `∂L/∂c[${I},${J}]`;
    }
    case 'd_W_dkv': case 'd_W_kr': case 'd_W_uv': case 'd_W_uk': case 'd_W_q': case 'd_W_qr': {
      // ∂L/∂W[a, b] = Σ_t (the input's column a)[t] · (∂L/∂ of W's product, column b)[t]
      const W = panel.slice(2);
      const k = Math.floor(j / ml.d_nope);
      const [src, srcName, grad, gName] = {
        W_dkv: [x, 'x', g.c.map((r) => r[j]), `∂L/∂c[:,${J}]`],
        W_kr: [x, 'x', g.k_R.map((r) => r[j]), `∂L/∂k_R[:,${J}]`],
        W_uv: [ml.c, 'c', g.V.map((r) => r[j]), `∂L/∂V[:,${J}]`],
        W_uk: [ml.c, 'c', g.K.map((r) => r[k * hd + ml.d_rope + (j % ml.d_nope)]), `∂L/∂K[:,${k * hd + ml.d_rope + (j % ml.d_nope) + 1}]`],
        W_q: [rowsOf(x, tr.base), 'x', g.Q.map((r) => r[k * hd + ml.d_rope + (j % ml.d_nope)]), `∂L/∂Q[:,${k * hd + ml.d_rope + (j % ml.d_nope) + 1}]`],
        W_qr: [rowsOf(x, tr.base), 'x', g.q_R.map((r) => r[j]), `∂L/∂q_R[:,${J}]`],
      }[W];
      F(`∂L/∂${W}[${I},${J}] = Σ_t ${srcName}[t,${I}] · ${gName}`);
      if (src !== ml.c && (W === 'W_q' || W === 'W_qr') && tr.base) N(t('bn.wqbase', { base: tr.base }));
      dot(src.map((r) => r[i]), grad);
      R(g[W][i][j]);
      feeds.push(srcName === 'c' ? { panel: 'latent', col: i } : { editor: 'x', col: i });
      return `∂L/∂${W}[${I},${J}]`;
    }
    case 'd_x': {
      // x feeds four products: the latent, the shared rotary key, and (from base on) the two query parts
      const parts = [['∂L/∂c · W_dkvᵀ', dotLines(g.c[i], tr.inputs.W_dkv[j])]];
      if (g.k_R) parts.push(['∂L/∂k_R · W_krᵀ', dotLines(g.k_R[i], tr.inputs.W_kr[j])]);
      if (i >= tr.base) {
        const q = i - tr.base;
        parts.push(['∂L/∂q_C · W_qᵀ', dotLines(Array.from({ length: nh }, (_, k) => dQC(q, k)).flat(), tr.inputs.W_q[j])]);
        if (g.q_R) parts.push(['∂L/∂q_R · W_qrᵀ', dotLines(g.q_R[q], tr.inputs.W_qr[j])]);
      }
      F(`∂L/∂x[${I},${J}] = ${parts.map(([n]) => n).join(' + ')}`);
      T(`= ${parts.map(([, [p]]) => `(${p})`).join(' + ')}`);
      R(g.x[i][j]);
      feeds.push({ panel: 'd_latent', row: i });
      return `∂L/∂x[${I},${J}]`;
    }
    default: return null;
  }
}
