// leak.test.mjs — 10,000 calls through web/attention.js, half of them failing, leave the wasm
// heap as they found it: every error is caught inside C++ and comes back as JSON, and Embind's
// string conversions free what they allocate. heap_bytes_in_use() is the core's count of bytes
// malloc'd now; the linear memory must not grow either.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadApi, memoryBytes } from './load.mjs';
import { AttentionError } from '../../web/attention.js';

const api = await loadApi();
const M = api.module;

const I2 = [[1, 0], [0, 1]];
const x4 = [[1, 0, 0.5], [0, 1, -0.5], [1, 1, 0], [0.25, -1, 2]];
const calls = [
  () => api.trace({ x: I2, W_q: I2, W_k: I2, W_v: I2, W_o: I2 }),
  () => api.trace({ x: x4, seed: 5, causal: true, mask: 'inclusive' }),
  () => api.trace({ Q: I2, K: [[1000, 999], [999, 1000]], V: I2, scale: false, softmax: 'naive' }),
  () => api.trace({ Q: [[1, 0, 0, 0]], K: [[1, 0, 0]], V: [[1]] }), // bad shapes
  () => api.trace({ Q: I2, K: '1 0; 0 zz', V: I2 }), // bad matrix text
  () => api.trace({ Q: [[1, NaN]], K: I2, V: I2 }), // non-finite
  () => api.trace('{"Q": [[1'), // not JSON
  () => api.parseMatrix('1 2; 3 4'),
  () => api.parseMatrix('1 2; 3'), // ragged
  () => api.softmax([[1000, 999], [-Infinity, -Infinity]], { softmax: 'naive' }),
  () => api.randomMatrix(4, 4, { seed: 9 }),
  () => api.causalMask(4, { base: 1, mask: 'sideways' }), // bad option
  () => api.backward({ x: x4, seed: 2, causal: true, d_out: [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]] }),
  () => api.backward({ Q: I2, K: I2, V: I2, loss: 'mse' }), // no target
  () => api.gradcheck({ Q: I2, K: I2, V: I2, check: [{ name: 'K', row: 1, col: 0 }] }),
];

function runAll(n) {
  let failures = 0;
  for (let i = 0; i < n; i++) {
    try {
      calls[i % calls.length]();
    } catch (e) {
      if (!(e instanceof AttentionError)) throw e;
      failures++;
    }
  }
  return failures;
}

test('10,000 mixed calls leave heap_bytes_in_use and the memory size unchanged', () => {
  runAll(calls.length * 10); // warm-up: lets one-time allocations happen
  const heap0 = M.heap_bytes_in_use();
  const mem0 = memoryBytes(M);
  assert.equal(typeof heap0, 'number');
  const failures = runAll(10_000);
  assert.ok(failures > 3000, `expected many failing calls, got ${failures}`);
  assert.equal(M.heap_bytes_in_use(), heap0, 'heap bytes in use changed');
  assert.equal(memoryBytes(M), mem0, 'wasm memory grew');
});

test('heap_bytes_in_use sees a 1000-byte allocation (the probe works)', { skip: typeof M._malloc !== 'function' && 'module exports no _malloc' }, () => {
  const before = M.heap_bytes_in_use();
  const p = M._malloc(1000);
  try {
    assert.ok(M.heap_bytes_in_use() >= before + 1000, 'allocation not seen');
  } finally {
    M._free(p);
  }
  assert.equal(M.heap_bytes_in_use(), before);
});
