// gpt_train_arrays.test.mjs — GptRun.train (web/gpt.js) hands back the core's own numbers, each
// under its own name: every field of its answer is compared with the JSON that the core's session
// (M.GptSession, src/api/gpt_session.cpp) writes for the same spec and the same steps, key by key
// and element by element (the JSON's shortest decimals read back as float32; "nan"/"inf" as those
// numbers). A mapping that filled one array from another (grad_norms from the learning rates, the
// losses from the norms, …) or dropped a field would fail here, where shapes and finiteness alone
// pass. The two runs are in the same module and tier, so the same seed gives the same bits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadGptApi } from './load.mjs';

const gpt = await loadGptApi();
const M = gpt.module;

// A small model with a warm-up and a cosine schedule over few steps, so the learning rates, the
// norms and the losses are all different numbers from one another and from step to step.
const SPEC = { n_layer: 1, n_embd: 16, n_head: 2, block_size: 8, batch_size: 4, n_chars: 2000, seed: 7, lr: 3e-3, steps: 30, warmup_steps: 4, min_lr: 1e-4 };
// A run that diverges: losses gets one more entry (not finite) than lrs and grad_norms.
const DIVERGING = { ...SPEC, softmax: 'naive', lr: 10, grad_clip: 0, warmup_steps: 0 };

/** The core's element as a number: float32 of its decimal, or the number a "nan"/"inf"/"-inf" stands for. */
function coreNumber(e) {
  if (e === 'nan') return NaN;
  if (e === 'inf') return Infinity;
  if (e === '-inf') return -Infinity;
  assert.equal(typeof e, 'number', `the core wrote ${JSON.stringify(e)}`);
  return Math.fround(e);
}

/** The parsed answers of the core's session to create(spec) then train(n) for each n of `calls`. */
function coreAnswers(spec, calls) {
  const session = new M.GptSession();
  try {
    const created = JSON.parse(session.create(JSON.stringify(spec)));
    assert.equal(created.ok, true, created.error);
    return calls.map((n) => {
      const r = JSON.parse(session.train(n));
      assert.equal(r.ok, true, r.error);
      delete r.ok;
      return r;
    });
  } finally {
    session.delete();
  }
}

/** GptRun.train's answers for the same calls. */
function runAnswers(spec, calls) {
  const run = gpt.create(spec);
  try {
    return calls.map((n) => run.train(n));
  } finally {
    run.free();
  }
}

/** Every field of `got` (GptRun.train) against the core's answer `want`, by name. */
function assertSameFields(got, want, label) {
  assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), `${label}: the same fields as the core's answer`);
  for (const [key, value] of Object.entries(want)) {
    if (!Array.isArray(value)) {
      assert.equal(got[key], value, `${label}: ${key}`);
      continue;
    }
    assert.ok(got[key] instanceof Float32Array, `${label}: ${key} is a Float32Array`);
    assert.equal(got[key].length, value.length, `${label}: ${key}.length`);
    for (let i = 0; i < value.length; i++) {
      const w = coreNumber(value[i]);
      assert.ok(Object.is(got[key][i], w), `${label}: ${key}[${i}] is ${got[key][i]}, the core's is ${w}`);
    }
  }
}

/** The arrays of one answer that have the same length are not equal to one another (so a swap shows). */
function assertArraysDiffer(answer, label) {
  const arrays = Object.entries(answer).filter(([, v]) => Array.isArray(v));
  for (let a = 0; a < arrays.length; a++) {
    for (let b = a + 1; b < arrays.length; b++) {
      const [ka, va] = arrays[a];
      const [kb, vb] = arrays[b];
      if (va.length !== vb.length) continue;
      assert.ok(va.some((x, i) => !Object.is(coreNumber(x), coreNumber(vb[i]))), `${label}: ${ka} and ${kb} hold the same numbers: the test could not tell them apart`);
    }
  }
}

test('train(n): every field is the core\'s, by name and element by element, over two calls', () => {
  const calls = [6, 5];
  const want = coreAnswers(SPEC, calls);
  const got = runAnswers(SPEC, calls);
  want.forEach((w, c) => {
    const label = `call ${c + 1} (train(${calls[c]}))`;
    assert.equal(w.losses.length, calls[c]);
    assertArraysDiffer(w, label);
    assertSameFields(got[c], w, label);
  });
});

test('train(n) of a diverging run: the extra non-finite loss and the shorter lrs and grad_norms are the core\'s', () => {
  const want = coreAnswers(DIVERGING, [200]);
  const got = runAnswers(DIVERGING, [200]);
  const w = want[0];
  assert.equal(w.diverged, true, 'the spec diverges');
  assert.equal(w.losses.length, w.lrs.length + 1);
  assert.ok(!Number.isFinite(coreNumber(w.losses.at(-1))), 'the last loss is not finite');
  assertSameFields(got[0], w, 'diverging');
});
