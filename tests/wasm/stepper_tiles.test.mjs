// stepper_tiles.test.mjs — FlashAttention's tiles and multi-head latent attention in the stepper,
// in Node: the two examples are the golden cases (tests/golden/attention_cases.json, written by
// ref_flash_mla.py in float64 NumPy), the matrices the page's panels show (variants-tiles.js,
// regrouped from the core's trace) against those float64 values, the explanations' displayed terms
// against the core's totals, and the backward the page asks for against the float64 gradients.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { presetPatch } from '../../web/common/presets.js';
import { variantSpec, MLA_KEYS, defaultState } from '../../web/common/state.js';
import { withReadyExercise, EXERCISES, checkAnswer, isSlip } from '../../web/common/exercise.js';
import { en } from '../../web/stepper/i18n-variants.js';
import { explain } from '../../web/stepper/explain.js';
import { explainGrad } from '../../web/stepper/explain-grad.js';
import { tileSpecs, tileGradSpecs as tileGradSpecsOf, rescales } from '../../web/stepper/variants-tiles.js';
import { loadApi, loadGolden } from './load.mjs';

const api = await loadApi();
const golden = await loadGolden();
const grads = JSON.parse(await readFile(new URL('../golden/attention_grad_cases.json', import.meta.url), 'utf8'));
const gcase = (name) => golden.cases.find((c) => c.name === name);
const t = (k, p) => `${k}${p ? JSON.stringify(p) : ''}`;
const NEG = -Infinity;
const num = (v) => (v === '-inf' ? NEG : v);

/** The core's spec of a preset, as the page builds it (stepper.js:buildSpec, context.js:activeInputs). */
function specOf(id) {
  const p = presetPatch(id, api);
  const spec = { ...p.options, ...variantSpec(p.variants, p.options.n_head) };
  const names = p.variants.mla ? ['x', 'W_q', ...MLA_KEYS] : ['x', 'W_q', 'W_k', 'W_v'];
  for (const k of [...names, 'W_o']) spec[k] = p.matrices[k];
  return spec;
}
const parse = (text) => text.split('\n').map((r) => r.trim().split(/\s+/).map(Number));

function close(a, b, what, tol = 2e-5) {
  a = num(a); b = num(b);
  if (b === NEG || a === NEG) return assert.equal(a, b, what);
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
}
const closeM = (A, B, what, tol) => {
  assert.equal(A.length, B.length, `${what}: rows`);
  A.forEach((r, i) => r.forEach((v, j) => close(v, B[i][j], `${what}[${i + 1},${j + 1}]`, tol)));
};

test('the two examples are the golden cases, as the page sends them', () => {
  for (const [id, name] of [['flash-tiles', 'flash_16_tokens_causal'], ['mla-latent', 'mla_latent_rope_halves']]) {
    const spec = specOf(id);
    const g = gcase(name).spec;
    for (const [k, v] of Object.entries(g)) {
      if (Array.isArray(v)) assert.deepEqual(parse(spec[k]), v, `${id}: ${k}`);
      else assert.equal(spec[k], v, `${id}: ${k}`);
    }
    assert.deepEqual(Object.keys(spec).filter((k) => /^[WxQKV]/.test(k)).sort(), Object.keys(g).filter((k) => /^[WxQKV]/.test(k)).sort(), `${id}: the matrices sent`);
  }
});

test('the tiles\' panels: m, α, ℓ per key block and o / ℓ against float64 NumPy', () => {
  const tr = api.trace(specOf('flash-tiles'));
  const g = gcase('flash_16_tokens_causal').expect.flash;
  for (let h = 0; h < tr.n_head; h++) {
    const shown = tileSpecs({ t }, tr, h);
    // the golden steps regrouped independently: row r0 + r, column k_block
    const want = { m: [], alpha: [], l: [] };
    for (const k of Object.keys(want)) for (let i = 0; i < tr.T; i++) want[k].push(Array(g.n_k_blocks).fill(null));
    for (const s of g.steps.filter((x) => x.head === h)) {
      for (let r = 0; r < s.rows; r++) for (const k of Object.keys(want)) want[k][s.r0 + r][s.k_block] = s[k][r];
    }
    closeM(shown.flash_m[0], want.m, `m, head ${h + 1}`);
    closeM(shown.flash_alpha[0], want.alpha, `α, head ${h + 1}`);
    closeM(shown.flash_l[0], want.l, `ℓ, head ${h + 1}`);
    closeM(shown.flash_context[0], g.heads[h].context, `o / ℓ, head ${h + 1}`);
  }
  // the moment the example's text names: row 6 of head 1, key block 2, α ≈ 0.2586
  const rs = rescales(tr.flash, 0);
  assert.ok(rs.some((x) => x.row === 5 && x.block === 1 && Math.abs(x.alpha - 0.2586364912) < 1e-6), JSON.stringify(rs));
  // the equality the page shows: within the stated bound, and the bound well under a display unit
  assert.ok(tr.flash.max_abs_diff.context <= tr.flash.bound.context && tr.flash.bound.context < 1e-4);
});

test('the tiles\' arithmetic: each explanation\'s terms give the core\'s number', () => {
  const tr = api.trace(specOf('flash-tiles'));
  const { s, r } = { s: tr.flash.steps.find((x) => x.head === 0 && x.q_block === 1 && x.k_block === 1), r: 1 };
  const mOld = tr.flash.steps.find((x) => x.head === 0 && x.q_block === 1 && x.k_block === 0);
  const texts = (panel) => explain(tr, { panel, row: 5, col: 1, head: 0 }, t).lines.map((l) => l.text).join('\n');
  assert.match(texts('flash_m'), /m\[6,2\] = max\(m\[6,1\], max_j M\[6,j\]\)/);
  assert.match(texts('flash_alpha'), /e\^\(1\.3815 − 2\.7338\)/);
  assert.match(texts('flash_alpha'), /var\.ex\.alphaRescale/);
  const lines = texts('flash_l');
  assert.match(lines, /ℓ\[6,2\] = α\[6,2\]·ℓ\[6,1\]/);
  // α·ℓ_old + Σ p, from the numbers shown, is the core's ℓ
  const sum = s.alpha[r] * mOld.l[r] + s.p[r].reduce((a, b) => a + b, 0);
  close(sum, s.l[r], 'ℓ from its terms', 1e-6);
  assert.ok(lines.includes(`= ${Number(s.l[r].toFixed(4))}`) || lines.includes(s.l[r].toFixed(4)), lines);
  assert.match(texts('flash_context'), /O\[6,2\] = o\[6,2\] \/ ℓ\[6\]/);
});

test('latent attention\'s panels: c, the absorbed query and scores against float64 NumPy, and their agreement', () => {
  const tr = api.trace(specOf('mla-latent'));
  const g = gcase('mla_latent_rope_halves').expect;
  assert.equal(tr.mode, 'mla');
  for (let h = 0; h < tr.n_head; h++) {
    const shown = tileSpecs({ t }, tr, h);
    closeM(shown.latent[0], g.mla.c, 'c');
    closeM(shown.q_latent[0], g.mla.heads[h].q_latent, `q_lat, head ${h + 1}`);
    closeM(shown.scores_absorbed[0], g.mla.heads[h].scores_absorbed, `S_abs, head ${h + 1}`);
    closeM(shown.scores_absorbed[0], g.heads[h].scores, `S_abs = S, head ${h + 1}`);
  }
  assert.ok(tr.mla.max_abs_diff.scores < 1e-5, `agreement ${tr.mla.max_abs_diff.scores}`);
  // q, k, v as MLA builds them, explained from the right weights
  const q = explain(tr, { panel: 'q', row: 0, col: 2, head: 1 }, t).lines.map((l) => l.text).join('\n');
  assert.match(q, /q\[1,3\] = x\[2,:\] · W_q\[:,3\]/, 'head 2’s content column 1 is W_q’s column 3, x’s row base + 1');
  const qr = explain(tr, { panel: 'q', row: 0, col: 0, head: 1 }, t).lines.map((l) => l.text).join('\n');
  assert.match(qr, /q\[1,1\] = x\[2,:\] · W_qr\[:,3\]/, 'each head has its own rotary query columns');
  const k = explain(tr, { panel: 'k', row: 2, col: 0, head: 1 }, t).lines.map((l) => l.text).join('\n');
  assert.match(k, /k\[3,1\] = x\[3,:\] · W_kr\[:,1\]/, 'the rotary key part is shared: W_kr for every head');
  const v = explain(tr, { panel: 'v', row: 1, col: 1, head: 1 }, t).lines.map((l) => l.text).join('\n');
  assert.match(v, /v\[2,2\] = c\[2,:\] · W_uv\[:,4\]/);
  const sa = explain(tr, { panel: 'scores_absorbed', row: 2, col: 1, head: 0 }, t);
  const H = tr.mla.heads[0];
  close(H.scores_latent[2][1] + H.scores_rope[2][1], H.scores_absorbed[2][1], 'S_abs from its two terms', 1e-6);
  assert.match(sa.title, /S_abs\[3,2\]/);
});

// ───────────── backward mode: every variant's gradients as the page asks for them ─────────────

/** A golden gradient case's spec as the page sends it: its options through variantSpec, d_out typed. */
function pageSpec(c) {
  const s = { ...c.spec };
  const toText = (m) => m.map((r) => r.join(' ')).join('\n');
  for (const [k, v] of Object.entries(s)) if (Array.isArray(v) && Array.isArray(v[0])) s[k] = toText(v);
  return s;
}

/** Every number of `got` (nested arrays and objects) against `want`'s, within tol relative to max(1, |want|). */
function deepClose(got, want, what, tol) {
  if (Array.isArray(want)) {
    assert.ok(Array.isArray(got) && got.length === want.length, `${what}: length`);
    want.forEach((w, k) => deepClose(got[k], w, `${what}[${k}]`, tol));
  } else if (want !== null && typeof want === 'object') {
    for (const k of Object.keys(want)) deepClose(got?.[k], want[k], `${what}.${k}`, tol);
  } else if (typeof want === 'number' || want === '-inf') close(got, want, what, tol);
}

test('backward of every variant: the gradients the page shows are the float64 NumPy golden ones', () => {
  const names = ['rope_halves_partial', 'rope_interleaved_kv_cache', 'alibi_geometric_4head_causal', 'gqa_4q_2kv_x_mode',
    'window2_sinks1_gqa_rope', 'flash_16_tokens_causal', 'flash_uneven_window_alibi_mqa_rope', 'mla_latent_rope_halves'];
  for (const name of names) {
    const c = grads.cases.find((x) => x.name === name);
    assert.ok(c, name);
    const bw = api.backward(pageSpec(c));
    close(bw.loss, c.expect.loss, `${name}: loss`, 10 * c.tolerance);
    deepClose(bw.grads, c.expect.grads, `${name}: grads`, 10 * c.tolerance);
  }
});

test('FlashAttention-2\'s backward panels: D = rowsum(dO ⊙ O) and the recomputed P, in float64 here', () => {
  const c = grads.cases.find((x) => x.name === 'flash_16_tokens_causal');
  const bw = api.backward(pageSpec(c));
  const fwd = gcase('flash_16_tokens_causal').expect;
  for (let h = 0; h < bw.trace.n_head; h++) {
    const dO = c.expect.grads.heads[h].context;
    const O = fwd.flash.heads[h].context;
    const D = dO.map((r, i) => r.reduce((a, v, d) => a + v * O[i][d], 0));
    const shown = tileSpecs({ t }, bw.trace, h); // forward panels still shown in backward mode
    assert.ok(shown.flash_m);
    const { flash_D, flash_P } = tileGradSpecsOf(bw, h);
    closeM(flash_D[0], D.map((v) => [v]), `D, head ${h + 1}`, 1e-4);
    closeM(flash_P[0], fwd.heads[h].weights, `P = A, head ${h + 1}`, 1e-5);
  }
  // ∂L/∂v tile by tile: the per-tile terms the page shows (from the golden-checked steps) sum to it
  for (const [row, col, h] of [[5, 1, 0], [0, 0, 1], [13, 1, 1]]) {
    const ex = explainGrad(bw, { panel: 'd_v', row, col, head: h }, t);
    assert.match(ex.lines[0].text, /Σ_b \(P_bᵀ · ∂L\/∂O_b\)/);
    const terms = ex.lines.find((l) => l.kind === 'terms').text.slice(2).split(' + ').map((v) => Number(v.replace(/[()]/g, '').replace('−', '-').replace('e−', 'e-')));
    assert.equal(terms.length, 4, 'one term per query block');
    close(terms.reduce((a, b) => a + b, 0), c.expect.grads.heads[h].v[row][col], `∂L/∂v[${row + 1},${col + 1}] from its tiles`, 2e-4);
  }
  // ∂L/∂k per key block over the query blocks, ∂L/∂q per query block over the key blocks: the
  // per-tile terms the page shows sum to the golden gradient (finite differences of float64)
  for (const [panel, row, col, h] of [['d_k', 5, 1, 0], ['d_k', 12, 0, 1], ['d_q', 9, 1, 0], ['d_q', 15, 0, 1]]) {
    const ex = explainGrad(bw, { panel, row, col, head: h }, t);
    assert.match(ex.lines[0].text, panel === 'd_k' ? /Σ_b \(∂L\/∂S_bᵀ · q_b\)/ : /Σ_b \(∂L\/∂S_b · k_b\)/);
    const terms = ex.lines.find((l) => l.kind === 'terms').text.slice(2).split(' + ').map((v) => Number(v.replace(/[()]/g, '').replace('−', '-').replace('e−', 'e-')));
    assert.equal(terms.length, 4, `${panel}: one term per tile of its block`);
    const want = c.expect.grads.heads[h][panel.slice(2)][row][col];
    close(terms.reduce((a, b) => a + b, 0), want, `${panel}[${row + 1},${col + 1}] of head ${h + 1} from its tiles`, 2e-4);
  }
  const lines = explainGrad(bw, { panel: 'flash_P', row: 5, col: 4, head: 0 }, t).lines.map((l) => l.text).join('\n');
  assert.match(lines, /P\[6,5\] = e\^\(M\[6,5\] − L\[6\]\)/);
  assert.match(lines, /var\.ex\.recompute/);
});

test('latent attention\'s backward: ∂L/∂c against the golden ∂L/∂W_dkv, and ∂L/∂x from its four terms', () => {
  const c = grads.cases.find((x) => x.name === 'mla_latent_rope_halves');
  const bw = api.backward(pageSpec(c));
  const { d_latent, d_W_dkv, d_W_uk } = tileGradSpecsOf(bw, 0);
  // ∂L/∂W_dkv = xᵀ·∂L/∂c, in float64 here from the page's ∂L/∂c: it must give the golden gradient
  // (finite differences of the float64 forward). x is 4 × 4 with det 1.09375, so this pins ∂L/∂c
  // down whole: no other ∂L/∂c gives the same xᵀ·∂L/∂c.
  const x = c.spec.x;
  const fromC = x[0].map((_, a) => d_latent[0][0].map((__, b) => x.reduce((s, row, tt) => s + row[a] * d_latent[0][tt][b], 0)));
  closeM(fromC, c.expect.grads.W_dkv, 'xᵀ·∂L/∂c = ∂L/∂W_dkv', 1e-4);
  closeM(d_W_dkv[0], c.expect.grads.W_dkv, '∂L/∂W_dkv', 1e-4);
  closeM(d_W_uk[0], c.expect.grads.W_uk, '∂L/∂W_uk', 1e-4);
  for (const [panel, row, col] of [['d_x', 2, 1], ['d_x', 0, 3], ['d_latent', 1, 2], ['d_W_uk', 1, 3], ['d_W_q', 2, 2], ['d_W_qr', 0, 1], ['d_W_kr', 3, 0]]) {
    const ex = explainGrad(bw, { panel, row, col, head: 0 }, t);
    const terms = ex.lines.find((l) => l.kind === 'terms' && l.text.includes('·')).text;
    // the displayed products, summed here, give the core's number (to the 4 decimals they show)
    const sum = [...terms.matchAll(/(\(?−?[\d.]+\)?)\s*·\s*(\(?−?[\d.]+\)?)/g)]
      .reduce((s, m) => s + Number(m[1].replace(/[()]/g, '').replace('−', '-')) * Number(m[2].replace(/[()]/g, '').replace('−', '-')), 0);
    const want = bw.grads[{ d_latent: 'c' }[panel] ?? panel.slice(2)][row][col];
    assert.ok(Math.abs(sum - want) <= 2e-3, `${panel}[${row + 1},${col + 1}]: terms ${terms} sum to ${sum}, the core says ${want}`);
  }
});

test('the exercises of the tiles and latent attention: their texts\' answers are the page\'s, in float64 here', () => {
  const want = {
    // float64 from the golden masked scores of row 6, head 1 (keys 1–4, then 5–8)
    'flash-running': (() => {
      const M = gcase('flash_16_tokens_causal').expect.heads[0].masked[5].map(num);
      const m1 = Math.max(...M.slice(0, 4));
      const l1 = M.slice(0, 4).reduce((a, v) => a + Math.exp(v - m1), 0);
      const m2 = Math.max(m1, ...M.slice(4, 8));
      const l2 = Math.exp(m1 - m2) * l1 + M.slice(4, 8).reduce((a, v) => a + (v === NEG ? 0 : Math.exp(v - m2)), 0);
      return { flash_m: [m1, m2, m2, m2], flash_l: [l1, l2, l2, l2] };
    })(),
    // q_C of query 1, head 1 (columns 1–2 of W_q on x's row base + 1 = 2) times head 1's rows of W_uk
    'mla-absorb': (() => {
      const sp = gcase('mla_latent_rope_halves').spec;
      const qc = [0, 1].map((d) => sp.x[1].reduce((a, v, r) => a + v * sp.W_q[r][d], 0));
      return { q_latent: sp.W_uk.map((r) => qc[0] * r[0] + qc[1] * r[1]) };
    })(),
  };
  for (const [id, panels] of Object.entries(want)) {
    const st = withReadyExercise(defaultState(), id, api);
    assert.equal(st.preset, EXERCISES[id].preset);
    const tr = api.trace(specOf(st.preset));
    const shown = tileSpecs({ t }, tr, 0);
    for (const a of st.exercise.ask) {
      const vals = a.cells.map(([r, c]) => shown[a.panel][0][r][c]);
      vals.forEach((v, k) => {
        close(v, panels[a.panel][k], `${id}: ${a.panel} cell ${k + 1}`, 1e-5);
        assert.equal(checkAnswer(v.toFixed(4), v, st.exercise.tol), 'right', `${id}: ${v.toFixed(4)} is right`);
      });
    }
  }
  assert.equal(isSlip('flash-running', '2.9271'), true);
  assert.equal(checkAnswer('2.9271', want['flash-running'].flash_l[1]), 'wrong', 'forgetting the rescale is wrong');
  // the texts state the numbers the learner should find
  assert.match(en['exercise.flash-running.why'], /ℓ = 0\.2586 × 1\.6782 \+ 0\.2489 \+ 1 = 1\.6829/);
  assert.match(en['exercise.mla-absorb.why'], /\(0\.75, 0\.6875, 0\.375\)/);
});
