// gpt_open_read.test.mjs — how gpt-open.js reads a model file's weights: slices() gives the same
// bytes through a BYOB reader (one buffer used again, the browsers' way) as through a slice per
// read (Node's), whatever the slice size, and names the byte where a file that shrank ended; an
// opening leaves its phases on the user-timing timeline (the benchmark's figures), with one
// read, copy and convert per slice, and the same logits whatever the slice size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slices } from '../../web/gpt-open.js';
import { loadGptApi } from './load.mjs';
import { hfGpt2Files } from '../lib/foreign-files.mjs';

const bytesOf = (n, seed) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 7 + (i >> 8)) & 255);

async function readAll(blob, at, n, size, byob) {
  const parts = [];
  const buffers = new Set();
  for await (const v of slices(blob, at, n, size, 'model.safetensors', byob)) {
    parts.push(v.slice()); // a copy: the view is good until the next slice only
    buffers.add(v.buffer.byteLength);
    assert.ok(v.length <= size);
  }
  return { bytes: new Uint8Array(parts.flatMap((p) => [...p])), count: parts.length, buffers };
}

test('slices(): the same bytes through a BYOB reader as through one slice per read', async () => {
  const data = bytesOf(100_003, 1);
  const blob = new Blob([data]);
  for (const [at, n, size] of [[0, 100_003, 4096], [17, 99_000, 1000], [5, 10, 64], [1000, 65_536, 65_536]]) {
    const byob = await readAll(blob, at, n, size, true);
    const sliced = await readAll(blob, at, n, size, false);
    assert.deepEqual(byob.bytes, data.subarray(at, at + n), `BYOB [${at}, +${n}) by ${size}`);
    assert.deepEqual(sliced.bytes, data.subarray(at, at + n), `slices [${at}, +${n}) by ${size}`);
    assert.equal(byob.count, Math.ceil(n / size));
    assert.equal(sliced.count, byob.count);
    assert.deepEqual([...byob.buffers], [Math.min(size, n)], 'one buffer of one slice, used again');
  }
});

test('slices(): a file shorter than its header said is named with the byte where it ended', async () => {
  const blob = new Blob([bytesOf(5000, 2)]);
  for (const byob of [true, false]) {
    await assert.rejects(readAll(blob, 1000, 6000, 1024, byob),
      (e) => e.name === 'GptError' && e.field === 'model.safetensors' && /model\.safetensors changed while it was read \(byte 5000\)/.test(e.message),
      `byob ${byob}`);
  }
});

test('an opening leaves its phases on the timeline: one read, copy and convert per slice, the same logits', async () => {
  const gpt = await loadGptApi();
  const cfg = { n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, vocab_size: 30 };
  const hf = hfGpt2Files(cfg, 3);
  const files = [{ name: 'model.safetensors', data: hf.model }, { name: 'config.json', data: hf.config }];
  const logits = (run) => run.nextToken({ prompt: '[1][2][3]', show: 30 }).top.map((x) => [x.id, x.logit]);
  const whole = await gpt.openModel(files);
  const reference = logits(whole);
  whole.free();
  performance.clearMeasures();
  let total = 0;
  const run = await gpt.openModel(files, { chunkBytes: 1001, onProgress: (p) => { total = p.total; } });
  try {
    assert.deepEqual(logits(run), reference);
    const m = new Map(performance.getEntriesByType('measure').filter((e) => e.name.startsWith('openModel '))
      .map((e) => [e.name.slice(10), e]));
    assert.deepEqual([...m.keys()].sort(), ['convert', 'copy', 'finish', 'head', 'plan', 'read', 'tokenizer']);
    const slicesRead = Math.ceil(total / 1001); // one range: a safetensors file's weights lie together
    for (const phase of ['read', 'copy', 'convert']) assert.equal(m.get(phase).detail.count, slicesRead, phase);
    assert.equal(m.get('plan').detail.file, 'model.safetensors');
    for (const e of m.values()) assert.ok(e.duration >= 0 && Number.isFinite(e.duration));
  } finally {
    run.free();
    performance.clearMeasures();
  }
});
