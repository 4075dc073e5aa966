// gguf_reference_test.mjs — our GGUF reader (formats/gguf.h, through `gpt inspect --json`) against
// @huggingface/gguf's parser on the files tests/gguf_writer.py writes (every metadata type, nested
// arrays, versions 2 and 3, alignment 32 and 64, every tensor type we run and some we do not): the
// version, every key with its type and value, each tensor's name, shape, ggml type and offset, and
// where the data section starts. Run by ctest (gguf_reference): node gguf_reference_test.mjs GPT
// PYTHON WORK_DIR.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { gguf } from '@huggingface/gguf';

const [gpt, python, work] = process.argv.slice(2);
const writer = fileURLToPath(new URL('./gguf_writer.py', import.meta.url));
const made = spawnSync(python, [writer, work], { encoding: 'utf8' });
assert.equal(made.status, 0, made.stderr);
const files = JSON.parse(made.stdout);
const TYPE_NAMES = ['UINT8', 'INT8', 'UINT16', 'INT16', 'UINT32', 'INT32', 'FLOAT32', 'BOOL', 'STRING', 'ARRAY',
  'UINT64', 'INT64', 'FLOAT64'];

// @huggingface/gguf's value as ours: 64-bit integers are BigInts there, numbers (or text beyond 2⁵³) here.
function plain(v) {
  if (typeof v === 'bigint') return v <= 2n ** 53n && v >= -(2n ** 53n) ? Number(v) : v.toString();
  if (Array.isArray(v)) return v.map(plain);
  return v;
}

let checked = 0;
for (const [name, path] of Object.entries(files)) {
  const ref = await gguf(path, { allowLocalFile: true, typedMetadata: true });
  const run = spawnSync(gpt, ['inspect', '--json', path], { encoding: 'utf8' });
  assert.equal(run.status, 0, `${name}: ${run.stderr}`);
  const ours = JSON.parse(run.stdout);
  assert.equal(ours.version, ref.metadata.version, `${name}: version`);
  assert.equal(BigInt(ours.data_start), ref.tensorDataOffset, `${name}: the data section's start`);
  const refKeys = Object.keys(ref.typedMetadata).filter((k) => !['version', 'tensor_count', 'kv_count'].includes(k));
  assert.deepEqual(ours.metadata.map((m) => m.key), refKeys, `${name}: keys`);
  for (const m of ours.metadata) {
    const r = ref.typedMetadata[m.key];
    assert.equal(m.type, TYPE_NAMES[r.type], `${name}: ${m.key}'s type`);
    if (r.subType !== undefined) assert.equal(m.elem, TYPE_NAMES[r.subType], `${name}: ${m.key}'s element type`);
    if (m.type === 'FLOAT32') assert.equal(Math.fround(m.value), Math.fround(r.value), `${name}: ${m.key}`);
    else if (m.elem === 'FLOAT32') assert.deepEqual(m.value.map(Math.fround), r.value.map(Math.fround), `${name}: ${m.key}`);
    else assert.deepEqual(m.value, plain(r.value), `${name}: ${m.key}`);
    checked++;
  }
  assert.equal(ours.tensors.length, ref.tensorInfos.length, `${name}: tensor count`);
  ours.tensors.forEach((t, i) => {
    const r = ref.tensorInfos[i];
    assert.equal(t.name, r.name);
    assert.deepEqual(t.shape, r.shape.map(Number), `${name}: ${t.name}'s shape`);
    assert.equal(t.type_id, r.dtype, `${name}: ${t.name}'s type`);
    assert.equal(BigInt(t.offset), r.offset, `${name}: ${t.name}'s offset`);
    checked++;
  });
}
assert.ok(checked > 100, `only ${checked} values compared`);
console.log(`gguf_reference: ${checked} keys and tensors agree with @huggingface/gguf over ${Object.keys(files).length} files`);
