// gpt_variants_stepper.test.mjs — "open in the stepper" for the GPT's variants (gpt.h): each head of
// a trained variant model, taken the way the training page links it (maps.js stepperState, through
// the stepper's permalink and its state check, then the stepper's spec: options + variantSpec + the
// Q, K, V grids' text), traced by the stepper's core (attention.js) gives the model's weights for
// that head bit for bit (reference kernels on both sides): the window and its sinks, ALiBi with the
// head's own slope, RoPE's turned q and k, a grouped-query head's shared keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadApi, loadGptApi } from './load.mjs';
import { stepperState, headVariants } from '../../web/train/maps.js';
import { encodeState, decodeState } from '../../web/common/permalink.js';
import { validateState, variantSpec } from '../../web/common/state.js';

const gpt = await loadGptApi();
const attention = await loadApi();

const BASE = { n_layer: 2, n_embd: 16, n_head: 4, block_size: 16, batch_size: 4, eval_batches: 2, task: 'copy', n_chars: 2000, seed: 5, lr: 1e-2, steps: 20 };
const CASES = [
  { pos: 'rope', norm: 'rmsnorm', mlp: 'swiglu', n_kv_head: 2 },
  { pos: 'rope', n_kv_head: 1, window: 3, sink: 2 },
  { pos: 'alibi', window: 4, sink: 1, mask: 'inclusive' },
  { pos: 'alibi', n_kv_head: 2 },
  { pos: 'none', window: 5 },
];

/** The stepper's spec of a state (stepper.js buildSpec in Q, K, V mode, forward). */
const stepperSpec = (s) => ({ ...s.options, ...variantSpec(s.variants, s.options.n_head), Q: s.matrices.Q, K: s.matrices.K, V: s.matrices.V });

test('each head of a variant model opens in the stepper with its variant set and the same weights', () => {
  gpt.setKernels('reference');
  try {
    for (const c of CASES) {
      const run = gpt.create({ ...BASE, ...c });
      try {
        run.train(20);
        const m = run.runPrompt('abcdefg=abcdefg');
        const T = m.T;
        for (let l = 0; l < 2; l++)
          for (let h = 0; h < 4; h++) {
            const spec = run.headSpec(l, h);
            const v = headVariants(spec);
            assert.equal(v.window, c.window ?? 0);
            assert.equal(v.sinks, c.sink ?? 0);
            assert.equal(v.alibi, c.pos === 'alibi');
            if (c.pos === 'alibi') assert.equal(v.alibi_slope, 2 ** (-8 * (h + 1) / 4), `head ${h}'s slope`);
            const state = decodeState(encodeState(stepperState(spec, 'en')), { validate: validateState });
            assert.deepEqual(state.variants, v, 'the stepper keeps the head\'s variants through its link');
            const trace = attention.trace(stepperSpec(state));
            const got = Float32Array.from(trace.heads[0].weights.flat());
            const want = m.weights.subarray((l * 4 + h) * T * T, (l * 4 + h + 1) * T * T);
            assert.deepEqual(got, want, `${JSON.stringify(c)}: layer ${l} head ${h}`);
          }
      } finally {
        run.free();
      }
    }
  } finally {
    gpt.setKernels('fast');
  }
});
