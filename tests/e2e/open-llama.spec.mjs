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
// truncated shard, refused naming the file while the model that was open stays; 中文.
// Waits are on states (#app's data-open, the sections' status lines), never on time.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, expect, BOOT_MS } from './fixtures.mjs';

const app = (page) => page.locator('#app');
const FOLDER = 'TinyLlama-test';
let dir;
let want;

test.beforeAll(({}, testInfo) => {
  dir = testInfo.outputPath('fixture');
  mkdirSync(dir, { recursive: true });
  const out = execFileSync('/usr/bin/python3', ['tests/open_llama_fixture.py', dir], { encoding: 'utf8' });
  want = JSON.parse(readFileSync(out.trim(), 'utf8'));
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
  await expect(page.getByRole('region', { name: '5 · Attention maps' }).getByRole('status')).toContainText('TinyLlama-test');
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
