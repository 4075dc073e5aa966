// gpt_open_files.test.mjs — opening a Llama-family model of several files in the wasm module (gpt.js
// openModel → gpt-open.js openFiles → the session's open_files / open_files_piece / open_files_plan,
// then open_view / open_feed / open_finish): a sharded Hugging Face folder and a GGUF file written by
// tests/open_llama_fixture.py (run with /usr/bin/python3; skipped without it) give the next-token
// logits of our own PyTorch model (float64), within 1e-4, whatever the size of the slices the files
// are read in; progress counts the weights' bytes; what
// is missing (a shard the index lists, config.json) is refused by name before any weight is read;
// damaged files (a truncated shard, a truncated GGUF) are refused naming the file, the tensor and
// the byte; a GGUF given with other weights is refused; a model too large is refused with both
// figures (field "memory").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGptApi } from './load.mjs';

const PY = '/usr/bin/python3';
const FOLDER = 'TinyLlama-test';

function fixture() {
  const dir = mkdtempSync(join(tmpdir(), 'open-files-'));
  const out = execFileSync(PY, [new URL('../open_llama_fixture.py', import.meta.url).pathname, dir], { encoding: 'utf8' });
  return { dir, want: JSON.parse(readFileSync(out.trim(), 'utf8')) };
}

const folder = (dir) => readdirSync(join(dir, FOLDER)).map((name) => ({ name, data: readFileSync(join(dir, FOLDER, name)) }));
const gguf = (dir) => ({ name: 'tiny-qwen2.gguf', data: readFileSync(join(dir, 'tiny-qwen2.gguf')) });

function closeTo(run, { prompt, top }) {
  const got = run.nextToken({ prompt, show: top.length }).top.map((x) => x.logit);
  assert.equal(got.length, top.length);
  got.forEach((v, i) => assert.ok(Math.abs(v - top[i]) <= 1e-4, `logit ${i + 1}: ${v} vs PyTorch's ${top[i]}`));
}

async function refused(gpt, files, message, field) {
  await assert.rejects(gpt.openModel(files), (e) => {
    assert.match(e.message, message);
    if (field) assert.equal(e.field, field);
    return true;
  });
}

const skip = !existsSync(PY) && 'no /usr/bin/python3 with torch';

test('a sharded folder and a GGUF file give PyTorch’s next-token logits; progress counts the weights', { skip }, async () => {
  const { dir, want } = fixture();
  const gpt = await loadGptApi();
  const progress = [];
  const run = await gpt.openModel(folder(dir), { name: FOLDER, onProgress: (p) => progress.push(p) });
  try {
    assert.deepEqual({ ...run.opened, notes: undefined, weight_bytes: undefined },
      { name: FOLDER, format: 'hf-folder', model_type: 'llama', notes: undefined, weight_bytes: undefined, weight_types: ['F32'] });
    assert.ok(run.opened.weight_bytes > 0);
    assert.deepEqual(run.opened.notes, []);
    const info = run.info();
    assert.equal(info.tokenizer, 'hf-bpe');
    assert.equal(info.config.n_kv_head, 2);
    assert.deepEqual(run.encode(want.folder.prompt).ids, want.folder.ids);
    closeTo(run, want.folder);
    const last = progress.at(-1);
    assert.equal(last.loaded, last.total);
    assert.deepEqual([...new Set(progress.map((p) => p.name))], ['model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors']);
  } finally {
    run.free();
  }
  const g = await gpt.openModel([gguf(dir)]);
  try {
    assert.equal(g.opened.format, 'gguf');
    assert.equal(g.info().tokenizer, 'token_ids');
    assert.equal(g.opened.notes[0].code, 'gguf_no_tokenizer');
    closeTo(g, want.gguf);
  } finally {
    g.free();
  }
});

test('slices of any size give the same model: each file read in one stream, its tensors fed across the slices', { skip }, async () => {
  const { dir, want } = fixture();
  const gpt = await loadGptApi();
  // slices that split tensors and hold several (and the GGUF's padding between them): the same
  // logits as PyTorch's, progress rising to the weights' bytes
  for (const chunkBytes of [999, 4099]) {
    const progress = [];
    const run = await gpt.openModel(folder(dir), { name: FOLDER, chunkBytes, onProgress: (p) => progress.push(p) });
    try {
      closeTo(run, want.folder);
      assert.ok(progress.every((p, i) => i === 0 || p.loaded >= progress[i - 1].loaded), 'progress rises');
      assert.equal(progress.at(-1).loaded, progress.at(-1).total);
    } finally {
      run.free();
    }
    const g = await gpt.openModel([gguf(dir)], { chunkBytes });
    try {
      closeTo(g, want.gguf);
    } finally {
      g.free();
    }
    // Q8_0 rows (68 bytes) leave padding between the tensors, which is read and skipped
    const q = await gpt.openModel([{ name: 'tiny-qwen2-q8_0.gguf', data: readFileSync(join(dir, 'tiny-qwen2-q8_0.gguf')) }], { chunkBytes });
    try {
      closeTo(q, want.q8_0);
    } finally {
      q.free();
    }
  }
});

test('what is missing or damaged is refused by name before the model changes', { skip }, async () => {
  const { dir } = fixture();
  const gpt = await loadGptApi();
  const files = folder(dir);
  await refused(gpt, files.filter((f) => f.name !== 'model-00002-of-00003.safetensors'),
    /^model-00002-of-00003\.safetensors is listed in model\.safetensors\.index\.json but was not given/, 'model-00002-of-00003.safetensors');
  await refused(gpt, files.filter((f) => f.name !== 'config.json'), /^no config\.json among the files/, 'config.json');
  await refused(gpt, files.filter((f) => f.name !== 'model.safetensors.index.json'), /^no model\.safetensors\.index\.json among the files/);
  const cut = files.map((f) => (f.name === 'model-00002-of-00003.safetensors' ? { name: f.name, data: f.data.subarray(0, f.data.length - 100) } : f));
  await refused(gpt, cut, /^model-00002-of-00003\.safetensors: tensor "model\.norm\.weight": .* but the file ends at byte \d+ \(truncated\)/, 'model.norm.weight');
  const g = gguf(dir);
  await refused(gpt, [{ name: g.name, data: g.data.subarray(0, g.data.length - 1000) }], /^tiny-qwen2\.gguf: tensor 'output\.weight' .* past the end of the file/, 'output.weight');
  await refused(gpt, [g, files.find((f) => f.name === 'model-00001-of-00003.safetensors')], /^a GGUF file is a whole model: open tiny-qwen2\.gguf alone/, 'tiny-qwen2.gguf');
  // a config.json far too large for the page: refused in figures before anything is read
  const big = JSON.parse(files.find((f) => f.name === 'config.json').data.toString());
  Object.assign(big, { hidden_size: 4096, intermediate_size: 14336, num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: 8 });
  const huge = files.map((f) => (f.name === 'config.json' ? { name: f.name, data: Buffer.from(JSON.stringify(big)) } : f));
  await refused(gpt, huge, /needs about .* GiB .* it will not fit, so it was not read/, 'memory');
});
