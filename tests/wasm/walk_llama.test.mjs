// walk_llama.test.mjs — the block walk's steps (web/train/walk-steps.js) for the Llama family's
// options, on a Qwen3-shaped run made in the wasm module (heads of 12 in n_embd 32, the q/k norm,
// an untied lm_head, RoPE, RMSNorm, SwiGLU, 2 key/value heads): the q/k norm is a step of its own
// between ln_1 and the rotation, each normed number is the core's q/k input times its head's rstd
// times γ (within the answer's 7 printed digits) and its line ends on the core's value, the rotation
// reads the normed values, and the attention step's heads are 12 wide. The numbers themselves
// are checked against PyTorch in tests/walk_torch_test.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadGptApi } from './load.mjs';
import { walkSteps } from '../../web/train/walk-steps.js';
import { formatNumber } from '../../web/common/format.js';

const t = (k, p) => `${k}${p ? JSON.stringify(p) : ''}`;
// the answer's numbers are written to 7 significant digits: a product of three agrees to a few of
// those (a wrong head's rstd or a missing γ is off by far more)
const near = (a, b) => Math.abs(a - b) <= 3e-6 * Math.abs(b) + 1e-7;

test('a Qwen3-shaped model walks through its q/k norm, each number the core’s', async () => {
  const gpt = await loadGptApi();
  const run = gpt.create({
    task: 'copy', n_layer: 2, n_head: 4, n_embd: 32, block_size: 16, batch_size: 4, steps: 5, seed: 2,
    pos: 'rope', norm: 'rmsnorm', mlp: 'swiglu', n_kv_head: 2, bias: false, head_size: 12, qk_norm: true, tie_embeddings: false,
  });
  run.train(5);
  await gpt.loadFull?.();
  const tr = run.blockTrace({ prompt: 'abca=a' });
  const row = async (spec) => run.weightRow(spec);
  const steps = walkSteps(t, tr, row, null);
  const ids = steps.map((s) => s.id);
  assert.deepEqual(ids.slice(1, 5), ['l0-ln_1', 'l0-qknorm', 'l0-rope', 'l0-attn']);
  const hs = 12, A = 4 * hs, KC = 2 * hs;
  for (const l of [0, 1]) {
    const Ly = tr.layers[l];
    assert.equal(Ly.q_lin.length, A);
    assert.equal(Ly.k_lin.length, KC);
    assert.equal(Ly.atty.length, A);
    const step = steps.find((s) => s.id === `l${l}-qknorm`);
    const [qLin, qN, kLin, kN] = step.vectors;
    assert.deepEqual([qLin.values, qN.values, kLin.values, kN.values], [Ly.q_lin, Ly.q_raw, Ly.k_lin, Ly.k_raw]);
    for (const i of [0, 13, A - 1]) {
      const h = Math.floor(i / hs);
      const want = Math.fround(Math.fround(Ly.q_lin[i] * Ly.q_rstd[h]) * Ly.q_norm_w[i % hs]);
      assert.ok(near(want, Ly.q_raw[i]), `layer ${l}: q₀[${i}] = qₗ·rstd·γ (${want} vs ${Ly.q_raw[i]})`);
      const lines = qN.explain(i);
      assert.equal(lines.at(-2).text, `= ${formatNumber(Ly.q_raw[i])}`);
      assert.ok(lines[1].text.endsWith(`·${formatNumber(Ly.q_rstd[h])}·${formatNumber(Ly.q_norm_w[i % hs])}`), `head ${h}'s rstd and γ: ${lines[1].text}`);
      const lin = await qLin.explain(i); // c_attn's row of weights · ln_1
      assert.equal(lin.find((x) => x.kind === 'result').text, `= ${formatNumber(Ly.q_lin[i])}`);
    }
    for (const i of [0, KC - 1]) {
      const want = Math.fround(Math.fround(Ly.k_lin[i] * Ly.k_rstd[Math.floor(i / hs)]) * Ly.k_norm_w[i % hs]);
      assert.ok(near(want, Ly.k_raw[i]), `layer ${l}: k₀[${i}] (${want} vs ${Ly.k_raw[i]})`);
    }
    // the rotation turns the normed values, and explains q₀ through the norm
    const rope = steps.find((s) => s.id === `l${l}-rope`);
    assert.deepEqual(rope.vectors[1].values, Ly.q_raw);
    const q0 = await rope.vectors[1].explain(5);
    assert.match(q0[0].text, /qₗ\[6\]·rstd_1·γ\[6\]/);
  }
  // the untied lm_head: the head step's logits are the trace's (lm_head's rows, not wte's)
  const w = run.weightRow({ weight: 'lm_head', row: tr.top[0].id });
  let z = 0;
  for (let i = 0; i < 32; i++) z = Math.fround(z + Math.fround(tr.ln_f.out[i] * w.w[i]));
  assert.ok(Math.abs(z - tr.top[0].logit) < 1e-4, `the top logit ${tr.top[0].logit} is ln_f · lm_head's row (${z})`);
});
