// stepper_variants.test.mjs — the stepper's modern variants (RoPE, ALiBi, grouped-query heads, the
// sliding window with sinks) in Node: the examples run in the core, the numbers their panels show
// against an independent float64 reference written here (rotation, angles, bias, mask, the kv
// heads), the explanations' displayed terms against the core's totals, the ready-made exercises'
// answers, the spec the page sends, and the strings in both languages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { presetPatch } from '../../web/common/presets.js';
import { VARIANTS_OFF, variantSpec, validateState, defaultState } from '../../web/common/state.js';
import { EXERCISES, withReadyExercise } from '../../web/common/exercise.js';
import { explain } from '../../web/stepper/explain.js';
import { explainGrad } from '../../web/stepper/explain-grad.js';
import { ropePair } from '../../web/stepper/variants.js';
import { en, zh } from '../../web/stepper/i18n-variants.js';
import { loadApi } from './load.mjs';

const api = await loadApi();
const t = (k, p) => `${k}${p ? JSON.stringify(p) : ''}`;

/** The core's spec of a preset, as the page builds it (stepper.js:buildSpec). */
function specOf(id, extra = {}) {
  const p = presetPatch(id, api);
  const spec = { ...p.options, ...variantSpec({ ...p.variants, ...extra }, p.options.n_head) };
  for (const k of p.mode === 'x' ? ['x', 'W_q', 'W_k', 'W_v'] : ['Q', 'K', 'V']) spec[k] = p.matrices[k];
  return spec;
}

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

/** float64 RoPE of one row at position pos: pairs (2i, 2i+1) or (i, i + d/2) over the first dims. */
function rotate(row, pos, pairing, base, dims) {
  const out = row.slice();
  for (let i = 0; i < dims / 2; i++) {
    const phi = pos * base ** (-2 * i / dims);
    const [a, b] = pairing === 'interleaved' ? [2 * i, 2 * i + 1] : [i, i + dims / 2];
    out[a] = row[a] * Math.cos(phi) - row[b] * Math.sin(phi);
    out[b] = row[a] * Math.sin(phi) + row[b] * Math.cos(phi);
  }
  return out;
}

test('the page sends each variant only when it is on, and old states read as all off', () => {
  assert.deepEqual(variantSpec(VARIANTS_OFF), {});
  assert.deepEqual(variantSpec({ ...VARIANTS_OFF, rope: 'halves', rope_dims: 2, window: 3, sinks: 1, n_kv_head: 2, alibi: true }),
    { rope: 'halves', rope_base: 10000, rope_dims: 2, alibi: true, n_kv_head: 2, window: 3, sinks: 1 });
  assert.deepEqual(variantSpec({ ...VARIANTS_OFF, sinks: 2 }), {}, 'sinks without a window stay out (the core refuses them)');
  assert.deepEqual(variantSpec({ ...VARIANTS_OFF, flash_block_q: 4, flash_block_k: 2, mla: true }), { flash_block_q: 4, flash_block_k: 2 },
    'the tiles send their sizes; latent attention is its weights, not a key');
  const old = defaultState();
  delete old.variants;
  assert.deepEqual(validateState(old).variants, VARIANTS_OFF, 'a state from before the variants has them off');
  const junk = validateState({ ...old, variants: { rope: 'spiral', rope_base: -1, n_kv_head: 99, window: -2, alibi: 'yes' } });
  assert.deepEqual(junk.variants, VARIANTS_OFF);
  const kept = { rope: 'halves', rope_base: 500, rope_dims: 2, alibi: true, n_kv_head: 2, window: 3, sinks: 1, flash_block_q: 2, flash_block_k: 3, mla: true, alibi_slope: 0.25 };
  assert.deepEqual(validateState({ ...old, variants: kept }).variants, kept);
  // a GPT head's own ALiBi slope (opened from the training page) goes to the core as its one slope
  assert.deepEqual(variantSpec({ ...VARIANTS_OFF, alibi: true, alibi_slope: 0.25 }), { alibi: true, alibi_slopes: [0.25] });
  assert.deepEqual(variantSpec({ ...VARIANTS_OFF, alibi_slope: 0.25 }), {}, 'a slope without ALiBi stays out');
  // it is one head's slope: with more heads the slopes follow n_head (the core's own 2^(−8h/n_head))
  assert.deepEqual(variantSpec({ ...VARIANTS_OFF, alibi: true, alibi_slope: 0.25 }, 2), { alibi: true });
  assert.deepEqual(variantSpec({ ...VARIANTS_OFF, alibi: true, alibi_slope: 0.25 }, 1), { alibi: true, alibi_slopes: [0.25] });
  assert.equal(validateState({ ...old, variants: { ...kept, alibi_slope: 3 } }).variants.alibi_slope, 0, 'a slope out of (0, 1] reads as none');
  assert.deepEqual(Object.keys(defaultState().options), ['n_head', 'causal', 'mask', 'base', 'scale', 'softmax'], 'options stay a spec the core takes');
});

test('RoPE, both pairings and a partial rotation: angles, q′ and k′ and S against float64', () => {
  for (const [pairing, dims] of [['interleaved', 0], ['halves', 0], ['halves', 2], ['interleaved', 2]]) {
    const spec = { ...specOf('rope-distance', { rope: pairing, rope_dims: dims, rope_base: 100 }), base: 1,
      Q: '1 -0.5 0.25 2\n0.5 1 -1 0.75\n-0.25 0.5 1 -1', K: '0.5 1 -0.5 0.25\n1 0 0.5 -1\n-1 0.25 0.75 0.5\n0.2 -0.3 0.4 1' };
    const tr = api.trace(spec);
    const d = dims || 4;
    assert.equal(tr.rope.dims, d);
    const Q = spec.Q.split('\n').map((r) => r.split(' ').map(Number));
    const K = spec.K.split('\n').map((r) => r.split(' ').map(Number));
    tr.rope.k_angles.forEach((r, p) => r.forEach((v, i) => close(v, p * 100 ** (-2 * i / d), 1e-6, `angle ${p},${i}`)));
    const qr = Q.map((r, i) => rotate(r, 1 + i, pairing, 100, d));
    const kr = K.map((r, j) => rotate(r, j, pairing, 100, d));
    qr.forEach((r, i) => r.forEach((v, c) => close(tr.heads[0].q_rot[i][c], v, 1e-5, `${pairing} q′ ${i},${c}`)));
    kr.forEach((r, j) => r.forEach((v, c) => close(tr.heads[0].k_rot[j][c], v, 1e-5, `${pairing} k′ ${j},${c}`)));
    qr.forEach((q, i) => kr.forEach((k, j) => close(tr.heads[0].scores[i][j], q.reduce((s, v, c) => s + v * k[c], 0), 1e-5, `S ${i},${j}`)));
    // the explanation of every q′ cell: its displayed terms give the core's value
    for (let c = 0; c < 4; c++) {
      const ex = explain(tr, { panel: 'q_rot', row: 1, col: c, head: 0 }, t);
      const result = ex.lines.find((l) => l.kind === 'result').text;
      close(Number(result.replace('= ', '').replace('−', '-')), tr.heads[0].q_rot[1][c], 1e-4, `explained q′ ${c}`);
      const pr = ropePair(tr, c);
      if (!pr) { assert.ok(c >= d); continue; }
      const nums = ex.lines.filter((l) => l.kind === 'terms').at(-1).text.match(/−?\d+(\.\d+)?(e[−+]?\d+)?/g).map((s) => Number(s.replace(/−/g, '-')));
      const [x1, c1, x2, c2] = nums; // a × cos − b × sin, or a × sin + b × cos
      const v = pr.first ? x1 * c1 - x2 * c2 : x1 * c1 + x2 * c2;
      close(v, tr.heads[0].q_rot[1][c], 2e-4, `terms of q′ ${c}`);
    }
  }
});

test('RoPE example: every diagonal of S holds one number (only the distance counts)', () => {
  const tr = api.trace(specOf('rope-distance'));
  const S = tr.heads[0].scores;
  for (let i = 1; i < S.length; i++) for (let j = 1; j < S.length; j++) close(S[i][j], S[i - 1][j - 1], 1e-5, `S ${i},${j}`);
  assert.ok(Math.abs(S[0][1] - S[1][0]) > 1e-3, 'and the two directions differ');
});

test('ALiBi: the geometric slopes, B = −m·(base + i − j) before the mask, and the far keys fade', () => {
  const tr = api.trace(specOf('alibi-heads'));
  const n = tr.n_head;
  tr.alibi.slopes.forEach((m, h) => close(m, 2 ** (-8 * (h + 1) / n), 1e-7, `slope ${h}`));
  tr.heads.forEach((H, h) => H.bias.forEach((r, i) => r.forEach((v, j) => close(v, -tr.alibi.slopes[h] * (i - j), 1e-6, `B ${h} ${i},${j}`))));
  tr.heads.forEach((H, h) => H.masked.forEach((r, i) => r.forEach((v, j) => {
    if (j > i) assert.equal(v, -Infinity); else close(v, H.scaled[i][j] + H.bias[i][j], 1e-6, `M ${h} ${i},${j}`);
  })));
  const last = tr.heads.map((H) => H.weights[5]);
  for (const w of last) for (let j = 1; j < 6; j++) assert.ok(w[j] > w[j - 1], 'nearer keys weigh more');
  assert.ok(last[0][5] > last[3][5], 'head 1 looks nearer than head 4');
  // float64 softmax of −m·distance
  const m0 = tr.alibi.slopes[0];
  const e = [0, 1, 2, 3, 4, 5].map((j) => Math.exp(-m0 * (5 - j)));
  const z = e.reduce((a, b) => a + b);
  e.forEach((v, j) => close(last[0][j], v / z, 1e-6, `A ${j}`));
  const ex = explain(tr, { panel: 'bias', row: 3, col: 0, head: 0 }, t);
  assert.equal(ex.lines.filter((l) => l.kind === 'terms').at(-1).text, '= −0.2500 × 3');
  assert.equal(ex.lines.find((l) => l.kind === 'result').text, '= −0.7500');
});

test('grouped-query: 8 query heads over 2 kv heads, the cache 4× smaller, and ∂L/∂K sums each group', () => {
  const spec = specOf('gqa-8-2');
  const tr = api.trace(spec);
  assert.deepEqual(tr.kv_heads.kv_head, [0, 0, 0, 0, 1, 1, 1, 1]);
  assert.equal(tr.kv_heads.cache_floats_mha / tr.kv_heads.cache_floats, 4);
  assert.equal(tr.kv_heads.cache_floats, 3 * 2 * (1 + 1));
  const K = spec.K.split('\n').map((r) => r.split(' ').map(Number));
  tr.heads.forEach((H, h) => H.k.forEach((r, j) => assert.equal(r[0], K[j][h < 4 ? 0 : 1])));
  const bw = api.backward({ ...spec, loss: 'sum' });
  for (let j = 0; j < 3; j++) {
    for (const g of [0, 1]) {
      const sum = [0, 1, 2, 3].reduce((s, k) => s + bw.grads.heads[4 * g + k].k[j][0], 0);
      close(bw.grads.K[j][g], sum, 1e-5, `dK ${j},${g}`);
      const ex = explainGrad(bw, { panel: 'd_K', row: j, col: g, head: 0 }, t);
      assert.match(ex.lines.find((l) => l.kind === 'note').text, new RegExp(`heads.*${4 * g + 1}, ${4 * g + 2}, ${4 * g + 3}, ${4 * g + 4}`));
    }
  }
  const ex = explain(tr, { panel: 'kv_heads', row: 5, col: 1, head: 0 }, t);
  assert.equal(ex.lines.at(-1).text, '= 1');
});

test('the sliding window with a sink: each query sees its w latest keys and the sink, nothing later', () => {
  const spec = specOf('window-sink');
  const tr = api.trace(spec);
  const { window: w, sinks: s } = tr.options;
  tr.mask.forEach((r, i) => r.forEach((v, j) => {
    const p = tr.base + i;
    const seen = j <= p && (j > p - w || j < s);
    assert.equal(v, seen ? 0 : -Infinity, `mask ${i},${j}`);
  }));
  for (const base of [0, 2]) {
    const t2 = api.trace({ ...spec, base, Q: spec.Q.split('\n').slice(base).join('\n') });
    for (let j = 0; j < 12; j++) {
      const ex = explain(t2, { panel: 'mask', row: 9 - base, col: j, head: 0 }, t);
      const note = ex.lines.filter((l) => l.kind === 'note').at(-1).text;
      const want = j > 9 ? 'future' : j > 9 - w ? 'inWindow' : j < s ? 'sink' : 'outside';
      assert.ok(note.startsWith(`var.ex.${want}`), `${base} ${j}: ${note}`);
    }
  }
});

test('backward with RoPE: ∂L/∂q is ∂L/∂q′ turned back, as the explanation shows', () => {
  const spec = { ...specOf('rope-distance', { rope: 'halves', rope_base: 10 }), Q: '1 -0.5 0.25 2\n0.5 1 -1 0.75\n-0.25 0.5 1 -1\n0 1 0 1' };
  const bw = api.backward({ ...spec, loss: 'sum', V: '1 2 0 -1\n0 1 1 0\n-1 0 0.5 1\n0.5 0 0 2' });
  const G = bw.grads.heads[0];
  const r = bw.trace.rope;
  G.q_rot.forEach((row, i) => {
    // float64: the transposed rotation of row i's ∂L/∂q′ by −φ
    const back = rotate(row, -r.q_positions[i], 'halves', 10, 4);
    back.forEach((v, c) => close(G.q[i][c], v, 1e-5, `dq ${i},${c}`));
    for (let c = 0; c < 4; c++) {
      const ex = explainGrad(bw, { panel: 'd_q', row: i, col: c, head: 0 }, t);
      const line = ex.lines.filter((l) => l.kind === 'terms').at(-1).text;
      const sign = line.startsWith('= −') ? -1 : 1; // −a·sin φ + b·cos φ
      const nums = line.slice(sign < 0 ? 3 : 2).replace(/−/g, '-').match(/-?\d+(\.\d+)?(e[-+]?\d+)?/g).map(Number);
      const v = sign * nums[0] * nums[1] + nums[2] * nums[3];
      close(v, G.q[i][c], 2e-4, `terms of dq ${i},${c}`);
    }
  });
});

test('the ready-made exercises of the variants ask what their texts answer', () => {
  const answer = {
    'rope-rotate': [['q_rot', 1, 0, Math.cos(1)]],
    'alibi-bias': [['bias', 3, 0, -0.75]],
    'window-keys': [['mask', 7, null, [0, -Infinity, -Infinity, -Infinity, 0, 0, 0, 0, -Infinity, -Infinity, -Infinity, -Infinity]]],
  };
  for (const [id, checks] of Object.entries(answer)) {
    const st = withReadyExercise(defaultState(), id, api);
    assert.equal(st.preset, EXERCISES[id].preset);
    const tr = api.trace(specOf(st.preset));
    for (const [panel, i, j, want] of checks) {
      const m = panel === 'mask' ? tr.mask : tr.heads[0][panel];
      if (j === null) assert.deepEqual(m[i], want); else close(m[i][j], want, 1e-6, `${id}`);
    }
  }
});

test('every variant string is in both languages', () => {
  assert.deepEqual(Object.keys(zh).sort(), Object.keys(en).sort());
  for (const k of Object.keys(en)) assert.notEqual(zh[k], '', k);
});
