// open-threads.spec.mjs — "Open a model" on the cross-origin isolated training page
// (/isolated/train/: the threaded core gpt_core_mt): a checkpoint this project saved and a Hugging
// Face GPT-2 model.safetensors + config.json open, and the next-token bars are the core's for the
// same file opened in Node (the plain module), to the 3 decimals shown. Limits: the page runs an
// opened model's forward on one thread (worker.js gives threads to training only), so 1 against 2
// threads is not compared here; a refusal is waited for too, so a failure shows its message.
import { writeFileSync } from 'node:fs';
import { test, expect, BOOT_MS } from './fixtures.mjs';
import { hfGpt2Files } from '../lib/foreign-files.mjs';
import { loadGptApi } from '../wasm/load.mjs';

const app = (page) => page.locator('#app');
const shown = (text) => text.replace(/\n/g, '↵').replace(/ /g, '␣');

async function checkOpened(page, testInfo, set) {
  await page.goto('/isolated/train/');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  const paths = Object.entries(set).map(([name, bytes]) => {
    const path = testInfo.outputPath(name);
    writeFileSync(path, bytes);
    return path;
  });
  await page.locator('#tr-open-file').setInputFiles(paths);
  await expect(app(page)).toHaveAttribute('data-open', /^(opened|refused)$/, { timeout: BOOT_MS });
  await expect(page.locator('#tr-open-msg')).not.toContainText('unknown error');
  await expect(app(page)).toHaveAttribute('data-open', 'opened');
  const gpt = await loadGptApi();
  const node = await gpt.openModel(Object.entries(set).map(([name, data]) => ({ name, data })));
  const next = page.getByRole('region', { name: '7 · The next token' });
  const nextPrompt = (await next.getByRole('textbox').first().inputValue()).replace(/↵/g, '\n');
  const table = page.getByRole('table', { name: 'The most likely next tokens' });
  await expect(table.locator('tbody tr').first()).toBeVisible();
  const got = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => ({ token: tr.children[0].textContent, logit: Number(tr.children[2].textContent) })));
  const want = node.nextToken({ prompt: nextPrompt, temperature: 1, top_k: 5, show: got.length }).top;
  expect(got.length).toBeGreaterThan(3);
  for (let i = 0; i < got.length; i++) {
    expect(got[i].token, `bar ${i}`).toBe(shown(want[i].text));
    expect(Math.abs(got[i].logit - want[i].logit), `bar ${i}`).toBeLessThanOrEqual(0.0005 + 1e-6);
  }
  node.free?.();
}

test('threads page: a checkpoint this project saved opens, and its next-token bars are the core’s', async ({ page }, testInfo) => {
  const gpt = await loadGptApi();
  const run = gpt.create({ task: 'sort', n_layer: 1, n_embd: 32, n_head: 2, block_size: 16, batch_size: 4 });
  await checkOpened(page, testInfo, { 'mine.safetensors': run.save() });
});

test('threads page: a Hugging Face GPT-2 model.safetensors opens, and its next-token bars are the core’s', async ({ page }, testInfo) => {
  const { model, config } = hfGpt2Files({ n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, vocab_size: 27 });
  await checkOpened(page, testInfo, { 'model.safetensors': model, 'config.json': config });
});
