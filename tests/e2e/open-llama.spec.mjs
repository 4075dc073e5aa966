// open-llama.spec.mjs — the training page's "Open a model" with the models people download today,
// in Chromium under the page's strict CSP, as a learner uses it: a Hugging Face folder of the Llama
// family (three safetensors shards with their index, config.json, tokenizer.json) chosen by the
// folder picker, and one GGUF file (Qwen2-shaped: q/k/v biases, an untied lm_head) by the file
// picker. The files and the expected numbers come from tests/open_llama_fixture.py, run here with
// /usr/bin/python3: the next-token logits are our own PyTorch model's (float64, from transformers'
// definition), never the core's. Checked: the opened model's description and its notes (grouped-query
// attention; the GGUF's token ids); the next-token bars' logits against PyTorch's to the 3 decimals
// shown; the model view's columns grouped by key/value head; generation with the KV cache and its
// size; the walk and "Take it apart" refusing what they do not show yet by name; a shard the index lists but not given, and a
// truncated shard, refused naming the file while the model that was open stays; 中文. The memory: a
// BF16 folder and a Q8_0 GGUF keep their weights as stored (their logits PyTorch's on the stored
// values), the wasm memory after opening (the worker's gpt.openMemory().size, on #tr-open-msg's
// data-memory-bytes) within 1.2× the files plus a fixed overhead, and a model too big refused in
// figures (the files' bytes as its weights) before anything is allocated.
// Waits are on states (#app's data-open, the sections' status lines), never on time.
import { closeSync, copyFileSync, ftruncateSync, mkdirSync, openSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, expect, BOOT_MS } from './fixtures.mjs';
import { LLAMA_FOLDER as FOLDER, writeLlamaFixture } from './llama-fixture.mjs';

const app = (page) => page.locator('#app');
let dir;
let want;

test.beforeAll(({}, testInfo) => {
  ({ dir, want } = writeLlamaFixture(testInfo));
});

async function boot(page, hash = '') {
  await page.goto(`/train/${hash}`);
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
}

const folderFiles = () => readdirSync(join(dir, FOLDER)).map((n) => join(dir, FOLDER, n));

/** Gives the files to the picker `input` and waits for the answer ('opened' or 'refused'). */
async function pick(page, input, paths, expected = 'opened') {
  await page.locator(input).setInputFiles(paths);
  await expect(app(page)).toHaveAttribute('data-open', expected, { timeout: BOOT_MS });
}

/** Asks the next-token section about `prompt`; returns the bars' logits as the page shows them. */
async function nextLogits(page, prompt, n) {
  const next = page.locator('#tr-next');
  const box = next.getByRole('textbox').first();
  await box.fill(prompt);
  await box.press('Enter');
  await expect(next.getByRole('status').filter({ hasText: `after the ${n} tokens` })).toBeVisible();
  const table = page.getByRole('table', { name: 'The most likely next tokens' });
  return table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Number(tr.children[2].textContent)));
}

function closeTo(got, ref) {
  expect(got.length).toBeGreaterThan(3);
  expect(got.length).toBeLessThanOrEqual(ref.length);
  got.forEach((v, i) => expect(Math.abs(v - ref[i]), `bar ${i + 1}: ${v} vs PyTorch's ${ref[i]}`).toBeLessThanOrEqual(0.0005 + 1e-4));
}

test('a sharded Llama folder by the folder picker: next-token logits are PyTorch’s; heads grouped by KV head; generation', async ({ page }) => {
  await boot(page);
  await expect(page.getByText('Choose a folder…')).toBeVisible();
  await pick(page, '#tr-open-folder', join(dir, FOLDER));
  const msg = page.locator('#tr-open-msg');
  await expect(msg).toContainText(`Opened ${FOLDER} (Hugging Face folder): 2 layers × 4 heads, n_embd 64`);
  await expect(msg).toContainText('vocabulary 300');
  await expect(msg).toContainText('4 query heads share 2 key/value heads, 2 query heads to each');
  closeTo(await nextLogits(page, want.folder.prompt, want.folder.ids.length), want.folder.top);
  // the model view: each head's column says the key/value head it shares
  await page.getByRole('button', { name: 'Show attention maps' }).click();
  await expect(page.locator('#tr-maps-status')).toContainText('TinyLlama-test'); // the maps' own status line (the model view and its export bar have theirs)
  await expect(page.getByText('Head 1 · KV 1', { exact: true })).toBeVisible();
  await expect(page.getByText('Head 4 · KV 2', { exact: true })).toBeVisible();
  await expect(page.getByText(/the 4 heads share 2 key\/value heads, 2 heads to each/)).toBeVisible();
  // greedy generation through the KV cache runs on it
  const gen = page.locator('#tr-gen');
  await gen.locator('#tr-f-gen_greedy').check();
  await gen.getByRole('button', { name: 'Run the prompt' }).click();
  await expect(gen.getByText(/of \d+ new tokens/)).toBeVisible();
  await gen.getByRole('button', { name: 'Next token' }).click();
  await expect(gen.getByText(/^1 of \d+ new tokens/)).toBeVisible();
  // the cache holds the key/value heads only
  await expect(gen.locator('#tr-kv')).toContainText('2 key/value heads for 4 query heads');
});

test('one GGUF file: token ids, next-token logits are PyTorch’s, the walk and the lens open on it; 中文', async ({ page }) => {
  await boot(page);
  await pick(page, '#tr-open-file', join(dir, 'tiny-qwen2.gguf'));
  const msg = page.locator('#tr-open-msg');
  await expect(msg).toContainText('Opened tiny-qwen2.gguf (GGUF file): 2 layers × 4 heads, n_embd 64');
  await expect(msg).toContainText('tokenizer.ggml.model is missing');
  closeTo(await nextLogits(page, want.gguf.prompt, want.gguf.ids.length), want.gguf.top);
  // the walk and "Take it apart" follow Qwen2's biases and untied lm_head (their numbers are
  // checked against PyTorch in walk_torch and interp_torch); here, that the page opens them on
  // the opened model (the walk follows a position of the maps' prompt: the maps first)
  await page.getByRole('button', { name: 'Show attention maps' }).click();
  await expect(page.getByText('Head 4 · KV 2', { exact: true })).toBeVisible();
  const walk = page.locator('#tr-walk');
  await walk.getByRole('button', { name: 'Walk this position' }).click();
  await expect(walk.getByRole('slider', { name: 'x', exact: true })).toBeVisible();
  await page.getByRole('button', { name: 'Show the lens' }).click();
  await expect(page.locator('#tr-interp-lens')).toBeVisible();
  await page.locator('#tr-lang-zh').click();
  await expect(msg).toContainText('GGUF 文件');
  await expect(msg).toContainText('未读取这个 GGUF 文件的分词器');
});

test('a shard the index lists but not given, and a truncated shard: refused by name, the model stays', async ({ page }, testInfo) => {
  await boot(page);
  await pick(page, '#tr-open-file', join(dir, 'tiny-qwen2.gguf'));
  const msg = page.locator('#tr-open-msg');
  await pick(page, '#tr-open-file', folderFiles().filter((p) => !p.endsWith('model-00002-of-00003.safetensors')), 'refused');
  await expect(msg).toContainText('model-00002-of-00003.safetensors is listed in model.safetensors.index.json but was not given');
  await expect(msg).toContainText('The model you had is unchanged.');
  // a shard cut short: the file, the tensor and the byte
  const cut = testInfo.outputPath('cut');
  mkdirSync(cut, { recursive: true });
  for (const p of folderFiles()) copyFileSync(p, join(cut, p.split('/').pop()));
  const shard = join(cut, 'model-00002-of-00003.safetensors');
  const bytes = readFileSync(shard);
  writeFileSync(shard, bytes.subarray(0, bytes.length - 100));
  await pick(page, '#tr-open-file', readdirSync(cut).map((n) => join(cut, n)), 'refused');
  await expect(msg).toContainText(`model-00002-of-00003.safetensors: tensor "model.norm.weight"`);
  await expect(msg).toContainText(`but the file ends at byte ${bytes.length - 100} (truncated)`);
  // the GGUF opened first is still the page's model
  closeTo(await nextLogits(page, want.gguf.prompt, want.gguf.ids.length), want.gguf.top);
});

// What the wasm memory holds beside the weights after opening, at most: the full module's own
// memory as it starts (16 MiB), the runtime's and the tokenizer's allocations, one token's
// activations, the headers read, and the memory's growth in steps. A model expanded to float32
// (+2× a BF16 file) or its weights copied (+1×) passes the bound by 26 MB or more.
const OVERHEAD = 24 << 20;
const memoryOf = async (page) => Number(await page.locator('#tr-open-msg').getAttribute('data-memory-bytes'));

test('a BF16 folder: its weights stay BF16, the wasm memory ≤ 1.2× the files, logits PyTorch’s; 中文', async ({ page }) => {
  await boot(page);
  await pick(page, '#tr-open-folder', join(dir, 'SmolBF16-test'));
  const msg = page.locator('#tr-open-msg');
  await expect(msg).toContainText('Opened SmolBF16-test (Hugging Face folder): 4 layers × 8 heads, n_embd 512');
  await expect(msg).toContainText('Its matrices stay as the files store them (BF16)');
  const memory = await memoryOf(page);
  const weights = Number(await msg.getAttribute('data-weight-bytes'));
  // the weights: the file's tensors once, and the norms again in float32 (4 × 512 × 9 values)
  expect(weights, 'the weights as stored').toBeLessThanOrEqual(want.bf16.weights_file + 4 * 512 * 9 + 4096);
  expect(memory, `wasm memory ${memory} for ${want.bf16.bytes} bytes of files`).toBeLessThanOrEqual(1.2 * want.bf16.bytes + OVERHEAD);
  closeTo(await nextLogits(page, want.bf16.prompt, want.bf16.ids.length), want.bf16.top);
  await page.locator('#tr-lang-zh').click();
  await expect(msg).toContainText('它的矩阵保持文件中的存储格式（BF16）');
});

test('a Q8_0 GGUF: its matrices stay Q8_0, logits PyTorch’s on the dequantized weights', async ({ page }) => {
  await boot(page);
  await pick(page, '#tr-open-file', join(dir, 'tiny-qwen2-q8_0.gguf'));
  const msg = page.locator('#tr-open-msg');
  await expect(msg).toContainText('Opened tiny-qwen2-q8_0.gguf (GGUF file): 2 layers × 4 heads, n_embd 64');
  await expect(msg).toContainText('Its matrices stay as the files store them (Q8_0)');
  const weights = Number(await msg.getAttribute('data-weight-bytes'));
  // the file's tensors once (Q8_0: 34 bytes a block of 32), and its 576 norm and bias values again in float32
  expect(weights, 'the weights as stored').toBeLessThanOrEqual(want.q8_0.bytes + 4 * 576);
  closeTo(await nextLogits(page, want.q8_0.prompt, want.q8_0.ids.length), want.q8_0.top);
});

test('a model too big: refused in figures before anything is allocated; then a BF16 folder fits as before', async ({ page }, testInfo) => {
  // a Llama 3.2 1B-shaped folder whose one shard is 3.5 GB (a sparse file: nothing is read)
  const big = testInfo.outputPath('Big-1B');
  mkdirSync(big, { recursive: true });
  writeFileSync(join(big, 'config.json'), JSON.stringify({
    model_type: 'llama', hidden_size: 2048, intermediate_size: 8192, num_hidden_layers: 16, num_attention_heads: 32,
    num_key_value_heads: 8, vocab_size: 128256, max_position_embeddings: 8192, rms_norm_eps: 1e-5, rope_theta: 500000,
    tie_word_embeddings: true, hidden_act: 'silu' }));
  const size = 3.5e9;
  const fd = openSync(join(big, 'model.safetensors'), 'w');
  ftruncateSync(fd, size);
  closeSync(fd);
  await boot(page);
  await pick(page, '#tr-open-folder', big, 'refused');
  const msg = page.locator('#tr-open-msg');
  // the weights counted as the file holds them (not as float32: twice that)
  await expect(msg).toContainText(`the weights' ${(size / 2 ** 30).toFixed(2)} GiB as the files hold them`);
  await expect(msg).toContainText('it will not fit, so it was not read');
  // nothing was allocated for it: the next opening's memory is within the bound of a fresh page
  await pick(page, '#tr-open-folder', join(dir, 'SmolBF16-test'));
  expect(await memoryOf(page)).toBeLessThanOrEqual(1.2 * want.bf16.bytes + OVERHEAD);
});
