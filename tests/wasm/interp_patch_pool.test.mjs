// interp_patch_pool.test.mjs — activation patching split over workers (web/train/interp-patch-pool.js)
// gives, bit for bit, the one call's answer of the core (gpt.js patch): with one, two and three
// "workers" (each its own wasm run loaded from the same checkpoint, answering the page's 'interp'
// op as worker.js does), parts of every size, the progress counting every cell once and ending at
// the sweep's cells (by default one cell at a time: the progress moves by one); the residual map
// alone (upto); the copies that fit counted by what the run holds (patchCopies). And the cells'
// order is the core's: a part of one cell fills that cell alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadGptApi } from './load.mjs';
import { patchSweep, cellAt, patchCopies } from '../../web/train/interp-patch-pool.js';
import { hfGpt2Files } from '../lib/foreign-files.mjs';

const SPEC = { clean: '\nabcd=abc', corrupted: '\nabce=abc', token: 'd', other: 'e' };

/** n worker-like objects ({call(op, args)}), each its own run of the checkpoint's bytes. */
function workersOf(gpt, bytes, n) {
  return Array.from({ length: n }, () => {
    const run = gpt.load(bytes);
    return { calls: 0, call(op, { call, spec }) { assert.equal(op, 'interp'); this.calls++; return Promise.resolve(run.call(call, spec)); } };
  });
}

test('patching split over workers is the one call of the core, bit for bit', async () => {
  const gpt = await loadGptApi();
  const run = gpt.create({ task: 'copy', n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, batch_size: 4, steps: 20, seed: 5 });
  run.train(20);
  const whole = run.patch(SPEC);
  const L = 2, T = whole.resid[0].length, NH = 2;
  assert.equal(whole.cells, (L + 1) * T + L * NH + L);
  const bytes = run.save();
  for (const [n, part] of [[1, undefined], [2, undefined], [3, 5], [2, 7]]) {
    const ws = workersOf(gpt, bytes, n);
    const seen = [];
    const got = await patchSweep(ws, SPEC, { part, onProgress: (done, cells) => seen.push([done, cells]) });
    const what = `${n} workers, parts of ${part ?? 1}`;
    assert.deepEqual(got.resid, whole.resid, what);
    assert.deepEqual(got.heads, whole.heads, what);
    assert.deepEqual(got.mlps, whole.mlps, what);
    assert.equal(got.clean_metric, whole.clean_metric);
    assert.equal(got.corrupted_metric, whole.corrupted_metric);
    assert.deepEqual(seen.at(-1), [whole.cells, whole.cells], what);
    assert.ok(seen.every(([d], i) => i === 0 || d > seen[i - 1][0]), `${what}: the progress grows`);
    if (part === undefined) assert.deepEqual(seen.map(([d]) => d), [...Array(whole.cells + 1).keys()], `${what}: one cell at a time`);
    if (n > 1) assert.ok(ws.every((w) => w.calls > 0), `${what}: every worker takes parts`);
  }
  // the residual map alone: its cells, the others 0
  const R = (L + 1) * T;
  const resid = await patchSweep(workersOf(gpt, bytes, 2), SPEC, { upto: R });
  assert.equal(resid.count, R);
  assert.deepEqual(resid.resid, whole.resid);
  assert.ok([...resid.heads.flat(), ...resid.mlps].every((x) => x === 0), 'upto: no head or MLP cell');
  // a part of one cell fills that cell alone, where cellAt says
  for (const i of [0, T + 3, (L + 1) * T + 1, whole.cells - 1]) {
    const one = run.patch({ ...SPEC, first: i, count: 1 });
    const [key, r, c] = cellAt(i, L, T, NH);
    const value = c === null ? one[key][r] : one[key][r][c];
    assert.equal(value, c === null ? whole[key][r] : whole[key][r][c], `cell ${i}`);
    const nonzero = [...one.resid.flat(), ...one.heads.flat(), ...one.mlps].filter((x) => x !== 0).length;
    assert.ok(nonzero <= 1, `cell ${i}: only its cell is computed`);
  }
});

test('patching copies are counted by what the run holds, not by its checkpoint file', async () => {
  const gpt = await loadGptApi();
  // an opened GPT-2 layout (inference only: no gradients, no AdamW moments)
  const hf = hfGpt2Files({ n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, vocab_size: 300 }, 3);
  const run = await gpt.openModel([{ name: 'model.safetensors', data: hf.model }, { name: 'config.json', data: hf.config }]);
  const mem = run.call('run_memory');
  assert.equal(mem.allocated, mem.parameters, 'an opened model holds its parameters');
  // two copies of what it holds fit the budget: two workers, whatever its file's size
  assert.equal(patchCopies(2, mem, 2 * mem.parameters), 2);
  assert.equal(patchCopies(4, mem, 2 * mem.parameters + 1), 2);
  assert.equal(patchCopies(2, mem, 2 * mem.parameters - 1), 1);
  assert.equal(patchCopies(3, { allocated: 10, parameters: 4 }, 25), 2, 'a training run: its gradients and activations count');
  assert.equal(patchCopies(0, mem), 1);
  // GPT-2 small's parameters (124,439,808 floats): two copies fit the page's 1 GiB
  assert.equal(patchCopies(2, { allocated: 497759232, parameters: 497759232 }), 2);
  run.free();
});
