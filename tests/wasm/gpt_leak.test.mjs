// gpt_leak.test.mjs — 1,000 create/train/free cycles through web/gpt.js, a third of them failing
// (bad specs, bad text, bad checkpoint bytes, calls on a freed run), leave the wasm heap as they
// found it: every error is caught inside C++ and comes back as JSON, Embind's string and
// typed-array conversions free what they allocate, and run.free() gives back a run's memory.
// heap_bytes_in_use() is malloc's count of live bytes; the linear memory (which never shrinks)
// must not grow past what the warm-up needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadGptApi, memoryBytes } from './load.mjs';
import { GptError } from '../../web/attention.js';

const gpt = await loadGptApi();
const M = gpt.module;

const SPEC = { n_layer: 1, n_embd: 8, n_head: 2, block_size: 8, batch_size: 2, eval_batches: 1, steps: 10 };
const TEXT = 'the quick brown fox jumps over the lazy dog; 敏捷的狐狸';

let canSave = true;
try {
  const r = gpt.create(SPEC);
  try {
    r.save();
  } finally {
    r.free();
  }
} catch (e) {
  canSave = false;
}

// One cycle: a good run used every way, then failures. Returns the number of GptErrors seen.
function cycle(i) {
  let failures = 0;
  const fail = (fn) => {
    try {
      fn();
    } catch (e) {
      if (!(e instanceof GptError)) throw e;
      failures++;
      return;
    }
    throw new Error('expected a GptError');
  };
  const spec = i % 3 === 0 ? { ...SPEC, text: TEXT, seed: i } : { ...SPEC, task: ['copy', 'sums', 'induction'][i % 3], n_chars: 256, seed: i, mask: i % 2 ? 'inclusive' : 'strict' };
  const run = gpt.create(spec);
  run.train(2);
  run.evaluate();
  run.info();
  const prompt = i % 3 === 0 ? 'the fox' : run.info().vocab.slice(2, 5).join('');
  run.sample({ prompt, max_new_tokens: 4, seed: i });
  run.generateStart({ prompt, greedy: true });
  run.generateNext();
  run.runPrompt(prompt);
  run.headSpec(0, 1);
  if (canSave) {
    const bytes = run.save();
    const loaded = i % 3 === 0 ? gpt.load(bytes, TEXT) : gpt.load(bytes);
    loaded.train(1);
    loaded.free();
    fail(() => gpt.load(bytes.slice(0, bytes.length - 7)));
  }
  fail(() => gpt.load(new Uint8Array([8, 0, 0, 0, 0, 0, 0, 0, 123, 125])));
  fail(() => run.sample({ prompt: 'XYZ' }));
  fail(() => run.headSpec(3, 0));
  fail(() => run.train(0));
  run.free();
  fail(() => run.info());
  fail(() => gpt.create({ ...SPEC, n_head: 3 }));
  fail(() => gpt.create({ ...SPEC, colour: 'red' }));
  fail(() => gpt.create({ n_layer: 1, n_embd: 8, n_head: 2, block_size: 8, text: Uint8Array.from([0x61, 0xff, 0x62]) }));
  fail(() => gpt.create({ n_layer: 1, n_embd: 8, n_head: 2, block_size: 64, text: 'too short' }));
  fail(() => gpt.create('{"lr":1,"lr":2}'));
  return failures;
}

test('1,000 create/train/free cycles, failing calls included, leave heap_bytes_in_use and the memory size unchanged', () => {
  for (let i = 0; i < 30; i++) cycle(i); // warm-up: one-time allocations, the heap's high-water mark
  const heap0 = M.heap_bytes_in_use();
  const mem0 = memoryBytes(M);
  let failures = 0;
  for (let i = 30; i < 1030; i++) failures += cycle(i);
  assert.ok(failures >= 1000 * 9, `expected many failing calls, got ${failures}`);
  assert.equal(M.heap_bytes_in_use(), heap0, 'heap bytes in use changed');
  assert.equal(memoryBytes(M), mem0, 'wasm memory grew');
});

test('free() is per run: freeing one gives its memory back and leaves the other working', () => {
  const heap0 = M.heap_bytes_in_use();
  const a = gpt.create(SPEC);
  const b = gpt.create(SPEC);
  const one = M.heap_bytes_in_use() - heap0;
  a.free();
  assert.ok(M.heap_bytes_in_use() < heap0 + one, 'freeing one run gives its memory back');
  b.train(1);
  b.free();
  assert.equal(M.heap_bytes_in_use(), heap0);
});
