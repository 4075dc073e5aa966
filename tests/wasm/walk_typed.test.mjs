// walk_typed.test.mjs — the block walk and "Take it apart" on an opened model whose matrices stay
// typed (a BF16 Hugging Face folder, a Q8_0 GGUF file, written by tests/open_llama_fixture.py with
// /usr/bin/python3; skipped without it), in the wasm module: the walk's next-token logits are our
// own PyTorch model's on the stored weights (float64, within 1e-4); a weight row the walk shows is
// the file's BF16 values, read here from the safetensors bytes; and the walk, weight_row, the lens,
// attribution, patching and attribution patching leave the model as it was opened: the bytes its
// buffers hold (run_memory's "allocated": the typed matrices, the norms) stay what they were, and
// for the BF16 folder malloc's live bytes (heap_bytes_in_use) and the wasm memory grow by far less
// than a float32 copy of the matrices would take (twice the file); the BF16 folder's next-token
// logits in the fast tier too. Their numbers against the model converted
// to float32 first, bit for bit: tests/test_typed_interp.cpp and test_gpt_open_files.cpp.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGptApi } from './load.mjs';

const PY = '/usr/bin/python3';
const skip = !existsSync(PY) && 'no /usr/bin/python3 with torch';

function fixture() {
  const dir = mkdtempSync(join(tmpdir(), 'walk-typed-'));
  const out = execFileSync(PY, [new URL('../open_llama_fixture.py', import.meta.url).pathname, dir], { encoding: 'utf8' });
  return { dir, want: JSON.parse(readFileSync(out.trim(), 'utf8')) };
}

// Row r of a BF16 tensor of a safetensors file, as float32 values.
function bf16Row(bytes, name, r) {
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  const t = header[name];
  assert.equal(t.dtype, 'BF16');
  const cols = t.shape[1];
  const at = 8 + n + t.data_offsets[0] + 2 * cols * r;
  const f = new Float32Array(cols);
  const u = new Uint32Array(f.buffer);
  for (let i = 0; i < cols; ++i) u[i] = bytes.readUInt16LE(at + 2 * i) << 16;
  return [...f];
}

// Each call of the walk and of "Take it apart" on the run; after each, what the module holds.
function walkAndTakeApart(gpt, run, prompt, corrupted) {
  const F = gpt.openingModule;
  const heap0 = F.heap_bytes_in_use(), size0 = gpt.openMemory().size, held0 = run.runMemory().allocated;
  const trace = run.blockTrace({ prompt });
  const row = run.weightRow({ weight: 'c_attn', layer: 1, row: 3 });
  const calls = [
    () => run.weightRow({ weight: 'lm_head', row: 7 }),
    () => run.lens({ prompt }),
    () => run.attribute({ prompt, token: trace.top[0].id }),
    () => run.patch({ clean: prompt, corrupted, token: trace.top[0].id }),
    () => run.attributionPatch({ clean: prompt, corrupted, token: trace.top[0].id }),
  ];
  for (const c of calls) assert.ok(c());
  return { trace, row, heap: F.heap_bytes_in_use() - heap0, grown: gpt.openMemory().size - size0, held: [held0, run.runMemory().allocated] };
}

test('a BF16 folder and a Q8_0 GGUF: the walk and Take it apart keep the matrices as stored', { skip }, async () => {
  const { dir, want } = fixture();
  const gpt = await loadGptApi();
  const folder = join(dir, 'SmolBF16-test');
  const files = readdirSync(folder).map((name) => ({ name, data: readFileSync(join(folder, name)) }));
  const run = await gpt.openModel(files, { name: 'SmolBF16-test' });
  try {
    assert.deepEqual(run.opened.weight_types, ['BF16']);
    const weights = run.opened.weight_bytes;
    // corrupted: the prompt with its second character changed (the same length in bytes)
    const prompt = want.bf16.prompt, corrupted = prompt[0] + (prompt[1] === 'x' ? 'y' : 'x') + prompt.slice(2);
    const r = walkAndTakeApart(gpt, run, prompt, corrupted);
    console.log(`BF16 weights ${weights} bytes; after the walk and Take it apart: heap +${r.heap}, wasm memory +${r.grown}, the model's buffers ${r.held[0]} → ${r.held[1]}`);
    assert.equal(r.held[1], r.held[0], 'the model\'s buffers');
    // a float32 copy of the matrices would add twice the file's weights
    assert.ok(r.heap < weights / 4, `the heap grew by ${r.heap} bytes for ${weights} bytes of weights`);
    assert.ok(r.grown < weights / 4, `the wasm memory grew by ${r.grown} bytes for ${weights} bytes of weights`);
    // the walk's logits (the last position's) are PyTorch's on the stored weights
    want.bf16.top.slice(0, 5).forEach((z, i) =>
      assert.ok(Math.abs(r.trace.top[i].logit - z) <= 1e-4, `logit ${i + 1}: ${r.trace.top[i].logit} vs PyTorch's ${z}`));
    // the fast tier's next-token logits (SIMD128: BF16 rows read in place, quant_fast_impl.h) are
    // PyTorch's too, within the fast tier's 1e-4
    gpt.setKernels('fast');
    try {
      const fast = run.nextToken({ prompt, show: 5 });
      want.bf16.top.slice(0, 5).forEach((z, i) =>
        assert.ok(Math.abs(fast.top[i].logit - z) <= 1e-4, `fast tier, logit ${i + 1}: ${fast.top[i].logit} vs PyTorch's ${z}`));
    } finally {
      gpt.setKernels('reference');
    }
    // the row shown is the file's: c_attn's row 3 is q_proj's
    const st = readFileSync(join(folder, 'model.safetensors'));
    assert.deepEqual(r.row.w.map(Math.fround), bf16Row(st, 'model.layers.1.self_attn.q_proj.weight', 3));
  } finally {
    run.free();
  }
  const q = await gpt.openModel([{ name: 'tiny-qwen2-q8_0.gguf', data: readFileSync(join(dir, 'tiny-qwen2-q8_0.gguf')) }]);
  try {
    assert.deepEqual(q.opened.weight_types, ['Q8_0']);
    const weights = q.opened.weight_bytes;
    const prompt = want.q8_0.prompt, corrupted = prompt.replace('[17]', '[18]');
    const r = walkAndTakeApart(gpt, q, prompt, corrupted);
    console.log(`Q8_0 weights ${weights} bytes; after the walk and Take it apart: heap +${r.heap}, the model's buffers ${r.held[0]} → ${r.held[1]}`);
    assert.equal(r.held[1], r.held[0], 'the model\'s buffers');
    want.q8_0.top.slice(0, 5).forEach((z, i) =>
      assert.ok(Math.abs(r.trace.top[i].logit - z) <= 1e-4, `logit ${i + 1}: ${r.trace.top[i].logit} vs PyTorch's ${z}`));
  } finally {
    q.free();
  }
});
