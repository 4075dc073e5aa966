// finetune.spec.mjs — fine-tuning an opened model on the training page, as a learner does: a small
// nanoGPT ckpt.pt + meta.pkl written by the tests' own code (tests/lib/foreign-files.mjs) is opened;
// the "Fine-tune it on your text" panel (loaded on that first opening, not at start) shows its
// defaults and the memory they need against what there is; a setting past block_size is refused
// beside its field, and a batch too large for the page is refused in figures before anything is
// tried; a text is pasted, a few steps run (the chart and the panel's figures follow), Stop pauses;
// afterwards the next-token bars and greedy generation are those of the same fine-tune done by the
// core in Node (gpt.js finetune, same seed), and Download gives a checkpoint that loads with the
// text at the step reached. 中文; the keyboard; no horizontal overflow at 375, 1366 and 1920 px
// (screenshots in the test's output folder). Waits are on states (#app's data-finetune,
// data-train), never on time.
import { readFileSync } from 'node:fs';
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';
import { nanoGptCkpt, metaPkl, hfGpt2Files } from '../lib/foreign-files.mjs';
import { loadGptApi } from '../wasm/load.mjs';
import { openFiles } from './train-helpers.mjs';

const app = (page) => page.locator('#app');
const CHARS = [...'\n !,:;ERMOTabdehilmnorstuw'].sort();
const SMALL = { n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, vocab_size: CHARS.length };
const TEXT = 'ROMEO: To be, or not to be; that is the time!\nMERO: a time to ride, tame the wind;\n'.repeat(12);
const SET = { 'ckpt.pt': nanoGptCkpt(SMALL, 5), 'meta.pkl': metaPkl(CHARS) };

/** The training page with `set` opened by its picker. */
async function opened(page, testInfo, set = SET) {
  await page.goto('/train/');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await openFiles(page, testInfo, set);
  await expect(app(page)).toHaveAttribute('data-open', 'opened', { timeout: BOOT_MS });
}

const panel = (page) => page.getByRole('region', { name: 'Fine-tune it on your text' });

test('fine-tune an opened ckpt.pt: memory first, refusals by name, a few steps, Stop, then maps, generation and download use the new weights', async ({ page }, testInfo) => {
  const fetched = [];
  page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
  await page.goto('/train/');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  expect(fetched.filter((p) => p.endsWith('/finetune-panel.js'))).toEqual([]); // not at start
  await opened(page, testInfo);
  expect(fetched.filter((p) => p.endsWith('/finetune-panel.js'))).toHaveLength(1);
  const ft = panel(page);
  await expect(ft).toBeVisible();
  // the defaults: the core's (context min(block_size, 128) = 16 here, batch 4, 100 steps, lr 1e-4)
  await expect(ft.getByLabel('Steps')).toHaveValue('100');
  await expect(ft.getByLabel('Context (tokens)')).toHaveValue('16');
  await expect(ft.getByLabel('Batch size')).toHaveValue('4');
  await expect(ft.getByLabel('Learning rate')).toHaveValue('0.0001');
  const memory = page.locator('#tr-ft-memory');
  await expect(memory).toContainText(/batch 4 × context 16 needs [\d.]+ MiB of the [\d.]+ GiB there is for it\. It fits\./);
  const start = ft.getByRole('button', { name: 'Fine-tune', exact: true });
  await expect(start).toBeDisabled(); // no text yet
  // a context past block_size: refused beside its field
  await ft.getByLabel('Context (tokens)').fill('17');
  await expect(page.locator('#tr-ft-context-err')).toHaveText('A whole number from 1 to 16.');
  await expect(ft.getByLabel('Context (tokens)')).toHaveAttribute('aria-invalid', 'true');
  await ft.getByLabel('Context (tokens)').fill('16');
  // a text too short for the context: the core's refusal, and the model stays as it was
  await ft.getByLabel('Text to fine-tune on').fill('ROMEO: To be');
  await expect(memory).toContainText('It fits.');
  await start.click();
  await expect(app(page)).toHaveAttribute('data-finetune', 'refused');
  await expect(page.locator('#tr-ft-msg')).toContainText('Fine-tuning was refused, and the model is as it was.');
  await expect(page.locator('#tr-ft-msg')).toContainText('needs at least 2 × (16 + 1) = 34');
  await expect(page.locator('#tr-status')).toHaveAttribute('data-status', 'opened');
  // the text, typed through the keyboard's paste path, and a few steps at a higher rate
  await ft.getByLabel('Text to fine-tune on').fill(TEXT);
  await expect(page.locator('#tr-ft-text-hint')).toHaveText(`${[...TEXT].length} characters.`);
  await ft.getByLabel('Steps').fill('40');
  await ft.getByLabel('Learning rate').fill('0.003');
  await expect(memory).toContainText('It fits.');
  await start.focus();
  await page.keyboard.press('Enter');
  await expect(app(page)).toHaveAttribute('data-finetune', /training|done/, { timeout: RUN_MS });
  await expect(app(page)).toHaveAttribute('data-finetune', 'done', { timeout: RUN_MS });
  await expect(page.locator('#tr-ft-status')).toContainText(/^Fine-tuned for 40 steps: loss \d\.\d{4}, validation \d\.\d{4} → \d\.\d{4}\./);
  const [v0, v1] = (await page.locator('#tr-ft-status').textContent()).match(/validation (\d\.\d{4}) → (\d\.\d{4})/).slice(1).map(Number);
  expect(v1).toBeLessThan(v0); // the loss fell
  await expect(page.locator('#tr-chart canvas')).toBeVisible(); // the loss on the training section's chart

  // the same fine-tune by the core in Node: the same next-token logits and greedy text
  const gpt = await loadGptApi();
  const node = await gpt.openModel(Object.entries(SET).map(([name, data]) => ({ name, data })));
  node.finetune({ steps: 40, context: 16, batch_size: 4, lr: 0.003, text_name: 'your text' }, TEXT);
  node.train(40);
  const prompt = 'ROMEO: To';
  const gen = node.sample({ prompt, max_new_tokens: 20, greedy: true }).new_text;
  // the next-token bars of the page's model at step 40: the core's logits, to the 3 decimals shown
  const next = page.getByRole('region', { name: '7 · The next token' });
  await expect(next.getByRole('status').filter({ hasText: 'The model at step 40' })).toBeVisible();
  const nextPrompt = (await next.getByRole('textbox').first().inputValue()).replace(/↵/g, '\n');
  const table = page.getByRole('table', { name: 'The most likely next tokens' });
  const got = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => ({ token: tr.children[0].textContent, logit: Number(tr.children[2].textContent) })));
  const want = node.nextToken({ prompt: nextPrompt, temperature: 1, top_k: 5, show: got.length }).top;
  expect(got.length).toBeGreaterThan(3);
  for (let i = 0; i < got.length; i++) {
    expect(got[i].token, `bar ${i}`).toBe(want[i].text.replace(/\n/g, '↵').replace(/ /g, '␣'));
    expect(Math.abs(got[i].logit - want[i].logit), `bar ${i}`).toBeLessThanOrEqual(0.0005 + 1e-6);
  }
  // Download: a checkpoint of the fine-tuned run, which the core loads with the text at step 40
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#tr-download').click()]);
  const bytes = readFileSync(await download.path());
  const back = gpt.load(bytes, TEXT);
  expect(back.info().step).toBe(40);
  expect(back.info().base).toBe('nanoGPT ckpt.pt, iter 5000');
  expect(back.sample({ prompt, max_new_tokens: 20, greedy: true }).new_text).toBe(gen);
  back.free();
  node.free();

  // widths: no horizontal overflow; screenshots to look at
  for (const width of [375, 1366, 1920]) {
    await page.setViewportSize({ width, height: 900 });
    await ft.scrollIntoViewIfNeeded();
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await page.screenshot({ path: testInfo.outputPath(`finetune-${width}.png`), fullPage: false });
  }
});

test('a batch too large is refused in figures before trying; Stop pauses; 中文', async ({ page }, testInfo) => {
  await opened(page, testInfo);
  const ft = panel(page);
  await ft.getByLabel('Text to fine-tune on').fill(TEXT);
  await ft.getByLabel('Batch size').fill('1024');
  await ft.getByLabel('Context (tokens)').fill('16');
  // 1,024 × 16 tokens of a tiny model fit; a GPT-2-sized vocabulary would not: check the figures are the core's
  await expect(page.locator('#tr-ft-memory')).toContainText(/batch 1024 × context 16 needs [\d.]+ (MiB|GiB) of the/);
  await ft.getByLabel('Batch size').fill('2');
  await ft.getByLabel('Steps').fill('100000');
  await ft.getByLabel('Learning rate').fill('0.001');
  await expect(page.locator('#tr-ft-memory')).toContainText('It fits.');
  await ft.getByRole('button', { name: 'Fine-tune', exact: true }).click();
  await expect(app(page)).toHaveAttribute('data-finetune', 'training', { timeout: RUN_MS });
  await expect(page.locator('#tr-ft-status')).toContainText(/^Fine-tuning: step \d/);
  await ft.getByRole('button', { name: 'Stop' }).click();
  await expect(app(page)).toHaveAttribute('data-finetune', 'stopped');
  await expect(page.locator('#tr-ft-status')).toContainText(/^Stopped at step [\d,]+ of 100,000/);
  await expect(page.locator('#tr-status')).toHaveAttribute('data-status', 'paused');
  // 中文
  await page.locator('#tr-lang-zh').click();
  const zh = page.getByRole('region', { name: '用你的文本微调它' });
  await expect(zh).toBeVisible();
  await expect(zh.getByLabel('批大小')).toHaveValue('2');
  await expect(page.locator('#tr-ft-status')).toContainText(/^停在第 [\d,]+ \/ 100,000 步/);
  await page.setViewportSize({ width: 375, height: 900 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await zh.scrollIntoViewIfNeeded();
  await page.screenshot({ path: testInfo.outputPath('finetune-zh-375.png') });
});

test('a model too large to fine-tune in the page: the memory refusal in figures, Fine-tune stays off', async ({ page }, testInfo) => {
  // GPT-2's vocabulary and context on a narrow model: batch 16 × 1,024 tokens' logits alone are 3.3 GB
  const hf = hfGpt2Files({ n_layer: 1, n_head: 2, n_embd: 16, block_size: 1024, vocab_size: 50257 }, 3);
  await opened(page, testInfo, { 'model.safetensors': hf.model, 'config.json': hf.config });
  const ft = panel(page);
  await expect(page.locator('#tr-ft-text-hint')).toContainText('came without its tokenizer');
  await ft.getByLabel('Context (tokens)').fill('1024');
  await ft.getByLabel('Batch size').fill('16');
  const memory = page.locator('#tr-ft-memory');
  await expect(memory).toContainText(/batch 16 × context 1024 needs [\d.]+ GiB, but there is [\d.]+ GiB: it will not fit/);
  await expect(memory.locator('.tr-core-msg')).toContainText(/lower context to \d+ or less/);
  await expect(ft.getByRole('button', { name: 'Fine-tune', exact: true })).toBeDisabled();
  await memory.scrollIntoViewIfNeeded();
  await page.screenshot({ path: testInfo.outputPath('finetune-refused.png') });
});
