// walk.spec.mjs — the training page's "whole block, step by step" (section-walk.js, walk-view.js)
// driven as a learner drives it: a model uploaded (the page's own, built and trained a few steps
// by the wasm API in Node) or opened (a Hugging Face GPT-2 layout with gelu_new and n_embd 64; a
// nanoGPT ckpt.pt without biases), the maps shown, a position picked, the steps walked by the
// step list and Next, numbers picked by click, pointer and keyboard. The numbers the page shows
// are the core's: each checked explanation's result is the wasm API's blockTrace value for the
// same prompt and position (computed in Node). Every block step saves as SVG (parses, has its
// title, no text past its right edge) and PNG (IHDR size = the size the page states). English and 中文; no horizontal overflow
// at 375, 1366 and 1920 px (the strict CSP is csp.spec.mjs's, which loads this page).
import { readFile } from 'node:fs/promises';
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';
import { loadGptApi } from '../wasm/load.mjs';
import { hfGpt2Files, nanoGptCkpt, metaPkl } from '../lib/foreign-files.mjs';
import { openFiles, savedModel, uploaded } from './train-helpers.mjs';

let ownPath;
const f4 = (v) => { if (v === 0) return '0'; const s = Math.abs(v) >= 1e5 || (Math.abs(v) < 1e-4 && v !== 0) ? v.toExponential(2) : v.toFixed(4); return s.replace('-', '−'); };
const mark = (s) => s.replace(/[ \n\t]/g, (c) => (c === ' ' ? '␣' : c === '\n' ? '↵' : '⇥'));

// In order, in one worker: the beforeAll below builds its file once (the suite is otherwise fully parallel).
test.describe.configure({ mode: 'default' });

test.beforeAll(async ({}, testInfo) => {
  ownPath = await savedModel(testInfo, 'own.safetensors', { task: 'copy', n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, batch_size: 2, seed: 3 }, 20);
});

const section = (page) => page.getByRole('region', { name: /The whole block, step by step|整个模块，一步一步/ });
/** The explanation's result line: its last line of the form "= value". */
const result = (ls) => ls.filter((l) => l.startsWith('= ')).at(-1);
/** The explanation's lines, as text (each line's data-text). */
const lines = (page) => section(page).locator('.tr-walk-explain [data-text]').evaluateAll((ds) => ds.map((d) => d.dataset.text));

async function boot(page, hash = '') {
  await page.goto(`/train/${hash}`);
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
}

/** The maps of the prompt, then the walk of `position` (by the Position list). */
async function walkTo(page, position, prompt) {
  if (prompt != null) await page.locator('#tr-f-prompt').fill(prompt);
  await page.locator('#tr-maps').click();
  await expect(page.locator('#tr-walk-status')).toContainText(/^Pick a position|^选一个/, { timeout: RUN_MS });
  const s = section(page);
  await s.getByLabel(/^Position$|^位置$/).selectOption(String(position));
  await expect(page.locator('#tr-walk-status')).toContainText(new RegExp(`^(Position ${position} |位置 ${position}（)`), { timeout: RUN_MS });
}

/** Saves the current step as SVG and PNG: the SVG parses with the step's title, the PNG has the stated size. */
async function saveStep(page, title) {
  const s = section(page);
  const group = s.getByRole('group', { name: 'Save this step' });
  const [svgD] = await Promise.all([page.waitForEvent('download'), group.getByRole('button', { name: 'SVG' }).click()]);
  expect(svgD.suggestedFilename()).toMatch(/^walk-.+\.svg$/);
  const svg = await readFile(await svgD.path(), 'utf8');
  const parsed = await page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    // laid out in the page: every text inside the picture's width (none cut at its right edge)
    const svgEl = document.importNode(doc.documentElement, true);
    document.body.append(svgEl);
    const W = Number(svgEl.getAttribute('width'));
    const cut = [...svgEl.querySelectorAll('text')].filter((t) => { const b = t.getBBox(); return b.x + b.width > W + 0.5; }).map((t) => t.textContent);
    svgEl.remove();
    return { error: doc.getElementsByTagName('parsererror').length, root: doc.documentElement.localName, text: doc.documentElement.textContent, w: doc.documentElement.getAttribute('width'), cut };
  }, svg);
  expect(parsed.error).toBe(0);
  expect(parsed.cut).toEqual([]);
  expect(parsed.root).toBe('svg');
  expect(parsed.text).toContain(title);
  const [pngD] = await Promise.all([page.waitForEvent('download'), group.getByRole('button', { name: 'PNG' }).click()]);
  const bytes = await readFile(await pngD.path());
  expect(bytes.subarray(12, 16).toString('latin1')).toBe('IHDR');
  const [w, h] = [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
  expect(w).toBe(2 * Number(parsed.w));
  await expect(s.getByText(`Saved ${pngD.suggestedFilename()} (${w} × ${h} px).`)).toBeVisible();
}

test('the page’s own model: every step walked with the core’s numbers, a head into the stepper, each step saved', async ({ page, context }) => {
  // the walk's code is in the second core (gpt_core_full), fetched on the first walk, not at start
  const full = [];
  page.on('request', (r) => { if (/\/gen\/gpt_core_full\.wasm$/.test(r.url())) full.push(r.url()); });
  await uploaded(page, ownPath);
  await expect(page.locator('#tr-walk-status')).toContainText('Show the attention maps of a prompt first');
  expect(full).toEqual([]);
  await walkTo(page, 2, 'abc=a');
  expect(full).toHaveLength(1);
  const s = section(page);
  const gpt = await loadGptApi();
  const node = gpt.load(await readFile(ownPath));
  const ref = node.blockTrace({ prompt: 'abc=a', position: 2 });
  node.free();

  // 1 + 5 steps per layer + the head + the sampled token
  const step = s.getByLabel(/^Step$/);
  await expect(step.locator('option')).toHaveCount(1 + 2 * 5 + 2);
  await expect(s.getByRole('heading', { name: 'Embedding: wte[token] + wpe[position]' })).toBeVisible();
  const x = s.getByRole('group', { name: 'x', exact: true });
  await expect(x.getByRole('button')).toHaveCount(16);
  await x.getByRole('button', { name: /^x\[3\] = / }).click();
  let ls = await lines(page);
  expect(ls[0]).toBe('x[3] = wte[t,3] + wpe[p,3]');
  expect(result(ls)).toBe(`= ${f4(ref.encoded[2])}`);
  await saveStep(page, 'Embedding: wte[token] + wpe[position]');

  // Next: ln_1, with its mean, variance and rstd, each number's arithmetic
  await s.getByRole('button', { name: 'Next step →' }).click();
  await expect(s.getByRole('heading', { name: 'Layer 1 · ln_1 (LayerNorm)' })).toBeVisible();
  await s.getByRole('group', { name: 'ln_1', exact: true }).getByRole('button', { name: /^ln_1\[5\] = / }).click();
  ls = await lines(page);
  expect(ls[0]).toBe('ln_1[5] = x̂[5]·γ[5] + β[5]');
  expect(result(ls)).toBe(`= ${f4(ref.layers[0].ln_1.out[4])}`);
  await s.getByRole('group', { name: 'x̂', exact: true }).getByRole('button', { name: /^x̂\[1\] = / }).click();
  ls = await lines(page);
  expect(ls).toContain(`= ${f4(ref.layers[0].ln_1.mean)}`);
  expect(ls).toContain(`= ${f4(ref.layers[0].ln_1.var)}`);
  await saveStep(page, 'Layer 1 · ln_1 (LayerNorm)');

  // attention: a head's weights over the visible keys, their arithmetic, the head into the stepper
  await step.selectOption({ label: '3. Layer 1 · attention' });
  await expect(s.getByRole('heading', { name: 'Layer 1 · attention' })).toBeVisible();
  const weights = s.getByRole('group', { name: 'a (head 2)' }).getByRole('button');
  await expect(weights).toHaveCount(3); // position 2 sees keys 1 … 3
  await weights.nth(1).click();
  ls = await lines(page);
  expect(ls[0]).toBe('s[2] = q·k[2] / √d');
  expect(ls).toContain(`= ${f4(ref.layers[0].heads[1].weights[1])}`);
  // q's number: Σ over c_attn's row, from the worker (async)
  await s.getByRole('group', { name: 'q', exact: true }).getByRole('button', { name: /^q\[1\] = / }).click();
  await expect(s.locator('.tr-walk-explain')).toContainText('16 products');
  ls = await lines(page);
  expect(ls[0]).toBe('q[1] = Σ_j ln_1[j]·W[1,j] + b[1]');
  expect(result(ls)).toBe(`= ${f4(ref.layers[0].q[0])}`);
  // the head opens in the stepper on this position's query row: the keyboard is on its first weight
  const link = s.getByRole('link', { name: 'Open head 2 in the Attention Stepper' });
  const [stepper] = await Promise.all([context.waitForEvent('page'), link.click()]);
  await stepper.waitForLoadState();
  expect(stepper.url()).toContain('/index.html#');
  const A = stepper.getByRole('grid', { name: 'softmax (A)' });
  const focused = A.locator('[role=gridcell]:focus');
  await expect(focused).toHaveText(f4(ref.layers[0].heads[1].weights[0]));
  expect(await focused.evaluate((td) => [td.dataset.r, td.dataset.c])).toEqual(['2', '0']);
  await expect(stepper.getByRole('heading', { name: /A\[3,1\]/ })).toBeVisible();
  await stepper.keyboard.press('ArrowRight');
  await expect(A.locator('[role=gridcell]:focus')).toHaveText(f4(ref.layers[0].heads[1].weights[1]));
  await expect(stepper.getByRole('heading', { name: /A\[3,2\]/ })).toBeVisible();
  await stepper.close();
  await saveStep(page, 'Layer 1 · attention');

  // the MLP: GELU's formula (exact, erf) and the residual
  await step.selectOption({ label: '5. Layer 1 · ln_2 (LayerNorm)' });
  await s.getByRole('button', { name: 'Next step →' }).click();
  await expect(s.getByRole('heading', { name: 'Layer 1 · MLP (c_fc, GELU, c_proj) and the residual' })).toBeVisible();
  // c_fc's 4 · 16 = 64 numbers: a heat strip, read by the keyboard
  const g = s.getByRole('slider', { name: 'g', exact: true });
  await g.focus();
  await g.press('Home');
  for (let k = 0; k < 6; k++) await g.press('ArrowRight');
  await expect(g).toHaveAttribute('aria-valuenow', '7');
  ls = await lines(page);
  expect(ls[0]).toBe('g[7] = 0.5·h·(1 + erf(h / √2))');
  expect(ls).toContain(`= ${f4(ref.layers[0].act[6])}`);
  await s.getByRole('group', { name: 'x′', exact: true }).getByRole('button', { name: /^x′\[2\] = / }).click();
  ls = await lines(page);
  expect(result(ls)).toBe(`= ${f4(ref.layers[0].residual3[1])}`);
  await saveStep(page, 'Layer 1 · MLP (c_fc, GELU, c_proj) and the residual');

  // ln_f, the logits (their terms from the tied wte) and the softmax
  await step.selectOption({ index: 11 });
  await expect(s.getByRole('heading', { name: 'ln_f, the logits and the softmax' })).toBeVisible();
  const z = s.getByRole('group', { name: 'z', exact: true }).getByRole('button');
  await expect(z).toHaveCount(10);
  await z.first().click();
  await expect(s.locator('.tr-walk-explain')).toContainText('tied');
  ls = await lines(page);
  expect(result(ls)).toBe(`= ${f4(ref.top[0].logit)}`);
  await s.getByRole('group', { name: 'p', exact: true }).getByRole('button').first().click();
  ls = await lines(page);
  expect(result(ls)).toBe(`= ${f4(ref.top[0].p)}`);
  await saveStep(page, 'ln_f, the logits and the softmax');

  // the last step: the sampled token, drawn with generation's settings (the defaults: T 1, seed 1)
  await s.getByRole('button', { name: 'Next step →' }).click();
  await expect(s.getByRole('heading', { name: 'The sampled token' })).toBeVisible();
  await expect(s.getByRole('button', { name: 'Next step →' })).toBeDisabled();
  await saveStep(page, 'The sampled token');

  // another position walks again, from the same step
  await s.getByLabel('Position', { exact: true }).selectOption('0');
  await expect(page.locator('#tr-walk-status')).toContainText('Position 0 ');
  await expect(s.getByRole('heading', { name: 'The sampled token' })).toBeVisible();
});

test('the sampled token is generation’s first for the same prompt, seed, temperature, top-k and top-p (the core’s draw)', async ({ page }) => {
  await uploaded(page, ownPath);
  const prompt = 'abcd=ab';
  await walkTo(page, 6, prompt);
  const s = section(page);
  const gen = page.getByRole('region', { name: /Generation with the KV cache/ });
  const gpt = await loadGptApi();
  const node = gpt.load(await readFile(ownPath));
  const settings = [
    { temperature: 1, top_k: 0, top_p: 1, seed: 1 },
    { temperature: 1.5, top_k: 0, top_p: 0.8, seed: 7 },
    { temperature: 0.8, top_k: 3, top_p: 1, seed: 2 },
    { temperature: 2, top_k: 5, top_p: 0.9, seed: 11 },
    { temperature: 3, top_k: 0, top_p: 0.95, seed: 12 },
    { greedy: true, seed: 4 },
  ];
  await s.getByLabel('Step', { exact: true }).selectOption({ label: '13. The sampled token' });
  const said = s.locator('.tr-walk-choice');
  const drawn = new Set();
  for (const o of settings) {
    await gen.getByLabel('Greedy (always the most likely token)').setChecked(!!o.greedy);
    if (!o.greedy) {
      await gen.getByLabel('Temperature', { exact: true }).fill(String(o.temperature));
      await gen.getByLabel('Top-k (0: all)').fill(String(o.top_k));
      await gen.getByLabel('Top-p (1: all)').fill(String(o.top_p));
    }
    await gen.getByLabel('Seed', { exact: true }).fill(String(o.seed));
    await s.getByRole('button', { name: 'Walk this position' }).click();
    // Node's generation (the same wasm API) from the same prompt and settings: its first token
    node.generateStart({ prompt, max_new_tokens: 1, ...o });
    const g = node.generateNext();
    await expect(s.getByRole('heading', { name: 'The sampled token' })).toBeVisible();
    if (o.greedy) {
      await expect(s.getByText(/^Generation \(section 7\) is set to greedy/)).toContainText(`seed, ${o.seed},`);
      await expect(said).toHaveText(`Greedy: “${mark(g.text)}”, the most likely token. Generation from the prompt up to this position starts with it.`);
      continue;
    }
    await expect(s.getByText(/^Drawn as generation/)).toContainText(`temperature ${o.temperature}, top-k ${o.top_k || '—'}, top-p ${o.top_p < 1 ? o.top_p : '—'}, seed ${o.seed}.`);
    await expect(said).toContainText(`Drawn: “${mark(g.text)}”`);
    await expect(said).toContainText(`u = ${f4(g.draw.u)} fell in [`);
    drawn.add(g.text);
    // the draw's arithmetic: coin = u·S, in the drawn token's stretch
    await s.getByRole('group', { name: 'u', exact: true }).getByRole('button').click();
    const ls = await lines(page);
    expect(ls[0]).toBe('coin = u·S');
    expect(ls).toContain(`= ${f4(g.draw.coin)}`);
    expect(ls).toContain(`${f4(g.draw.from)} ≤ coin < ${f4(g.draw.to)}`);
    // the reshaped probabilities are the next-token distribution's for the same options
    const dist = node.nextToken({ prompt, temperature: o.temperature, top_k: o.top_k, top_p: o.top_p, show: 10 });
    const cells = s.getByRole('group', { name: 'p′', exact: true }).getByRole('button');
    await expect(cells).toHaveCount(10);
    for (let k = 0; k < 3; k++) await expect(cells.nth(k)).toHaveAccessibleName(`p′ ${mark(dist.top[k].text)} = ${f4(dist.top[k].p)}${dist.top[k].id === g.token ? ' · the drawn token' : ''}`);
  }
  node.free();
  expect(drawn.size).toBeGreaterThan(1); // draws, not always the same token
});

test('an opened GPT-2 layout (gelu_new, n_embd 64): heat strips read by the keyboard and the pointer', async ({ page }, testInfo) => {
  const cfg = { n_layer: 2, n_head: 4, n_embd: 64, block_size: 16, vocab_size: 50 };
  const { model, config } = hfGpt2Files(cfg, 7, { activation: 'gelu_new' });
  await boot(page);
  await openFiles(page, testInfo, { 'model.safetensors': model, 'config.json': config });
  await expect(page.locator('#app')).toHaveAttribute('data-open', 'opened', { timeout: BOOT_MS });
  await walkTo(page, 3, '[1][2][3][4][5]');
  const s = section(page);
  await expect(page.locator('#tr-walk-status')).toContainText('GPT-2’s tanh GELU (gelu_new)');
  // a model read as ids (no tokenizer files): the position's token is said as an id, not "[4]"
  await expect(page.locator('#tr-walk-status')).toContainText(/^Position 3 \(token id 4\) through/);
  const x = s.getByRole('slider', { name: 'x', exact: true });
  await x.focus();
  await x.press('ArrowRight');
  await x.press('ArrowRight');
  await expect(x).toHaveAttribute('aria-valuenow', '3');
  await expect(x).toHaveAttribute('aria-valuemax', '64');
  expect((await lines(page))[0]).toBe('x[3] = wte[t,3] + wpe[p,3]');
  await x.press('End');
  await expect(x).toHaveAttribute('aria-valuenow', '64');
  await expect(s.locator('.tr-walk-readout').last()).toContainText('x[64] = ');
  // the MLP's 256 numbers: a strip, its tanh GELU
  await s.getByLabel('Step', { exact: true }).selectOption({ label: '6. Layer 1 · MLP (c_fc, GELU, c_proj) and the residual' });
  const g = s.getByRole('slider', { name: 'g', exact: true });
  await expect(g).toHaveAttribute('aria-valuemax', '256');
  const box = await g.boundingBox();
  await page.mouse.click(box.x + box.width * 0.5 + 1, box.y + box.height / 2);
  await expect(g).toHaveAttribute('aria-valuenow', '129');
  expect((await lines(page))[0]).toBe('g[129] = 0.5·h·(1 + tanh(√(2/π)·(h + 0.044715·h³)))');
  await saveStep(page, 'Layer 1 · MLP (c_fc, GELU, c_proj) and the residual');
});

test('a model too wide for the trace to carry its keys: a score’s q·k terms and a context’s Σ a·v are fetched when opened', async ({ page }, testInfo) => {
  // 5 layers × 256 wide: the 64 visible keys of the longest prompt (the maps' 64 tokens) are 81,920
  // floats a tensor, past the 65,536 the trace carries
  const cfg = { n_layer: 5, n_head: 4, n_embd: 256, block_size: 64, vocab_size: 50 };
  const files = hfGpt2Files(cfg, 11, {});
  const set = { 'model.safetensors': files.model, 'config.json': files.config };
  const prompt = Array.from({ length: 64 }, (_, i) => `[${i % 50}]`).join(''); // 64 ids, 250 characters
  // the core's numbers for the same file and prompt, in Node: without kv_layer the trace has no keys
  const gpt = await loadGptApi();
  const node = await gpt.openModel(Object.entries(set).map(([name, data]) => ({ name, data })));
  let ref;
  try {
    expect(node.blockTrace({ prompt, position: 63 }).layers[4].keys).toBeUndefined();
    ref = node.blockTrace({ prompt, position: 63, kv_layer: 4 }).layers[4];
  } finally {
    node.free();
  }
  expect(ref.keys).toHaveLength(64 * 256);
  const C = 256;
  const hs = 64;
  const t4 = (v) => (v < 0 ? `(${f4(v)})` : f4(v));
  /** The explanation's two lines of Σ a[k]·b[k]: its products, then their values (cut after 6, the last 2 kept). */
  const dotLines = (a, b) => {
    const cut = (ts) => `= ${ts.slice(0, 6).join(' + ')} + … + ${ts.slice(-2).join(' + ')}`;
    return [cut(a.map((v, k) => `${t4(v)}·${t4(b[k])}`)), cut(a.map((v, k) => t4(v * b[k])))];
  };

  await boot(page);
  await openFiles(page, testInfo, set);
  await expect(page.locator('#app')).toHaveAttribute('data-open', 'opened', { timeout: BOOT_MS });
  await walkTo(page, 63, prompt);
  const s = section(page);
  await s.getByLabel('Step', { exact: true }).selectOption({ label: '23. Layer 5 · attention' });
  await expect(s.getByRole('heading', { name: 'Layer 5 · attention' })).toBeVisible();
  // head 2's score of key 64 (the position itself): q·k over the head's 64 numbers
  const a = s.getByRole('slider', { name: 'a (head 2)', exact: true });
  await expect(a).toHaveAttribute('aria-valuemax', '64');
  await a.focus();
  await a.press('End');
  const explain = s.locator('.tr-walk-explain');
  await expect(explain).toContainText('A sum of 64 products', { timeout: RUN_MS });
  let ls = await lines(page);
  expect(ls[0]).toBe('s[64] = q·k[64] / √d');
  const q = ref.q.slice(hs, 2 * hs);
  const k = ref.keys.slice(63 * C + hs, 63 * C + 2 * hs);
  const [prods, vals] = dotLines(q, k);
  expect(ls[1]).toBe(prods);
  expect(ls[2]).toBe(vals);
  expect(ls).toContain(`= ${f4(ref.heads[1].scores[63])}`);
  expect(ls).toContain(`= ${f4(ref.heads[1].weights[63])}`);
  await s.screenshot({ path: testInfo.outputPath('walk-wide-score.png') });
  // the context's first number: Σ_j a[j]·v[j,1] over the 64 positions (the fetched layer is kept)
  const y = s.getByRole('slider', { name: 'y', exact: true });
  await y.focus();
  await y.press('Home');
  await expect.poll(() => lines(page).then((l) => l[0]), { timeout: RUN_MS }).toBe('y[1] = Σ_j a[j]·v[j,1]');
  await expect(explain).toContainText('A sum of 64 products');
  ls = await lines(page);
  const [cp, cv] = dotLines(ref.heads[0].weights, ref.heads[0].weights.map((_, j) => ref.values[j * C]));
  expect(ls[1]).toBe(cp);
  expect(ls[2]).toBe(cv);
  expect(result(ls)).toBe(`= ${f4(ref.atty[0])}`);
});

test('an opened nanoGPT ckpt.pt without biases, in 中文: β and the biases are absent, and said so', async ({ page }, testInfo) => {
  const CHARS = [...'\n !,:;ERMOTabdehilmnorstuw'].sort();
  const cfg = { n_layer: 1, n_head: 2, n_embd: 16, block_size: 16, vocab_size: CHARS.length, bias: false };
  await boot(page, '#lang=zh');
  await openFiles(page, testInfo, { 'ckpt.pt': nanoGptCkpt(cfg, 5), 'meta.pkl': metaPkl(CHARS) });
  await expect(page.locator('#app')).toHaveAttribute('data-open', 'opened', { timeout: BOOT_MS });
  await walkTo(page, 1, 'the mat');
  const s = section(page);
  await expect(s.getByRole('heading', { name: '整个模块，一步一步' })).toBeVisible();
  await s.getByRole('button', { name: '下一步 →' }).click();
  await expect(s.getByRole('heading', { name: '第 1 层 · ln_1（LayerNorm）' })).toBeVisible();
  await s.getByRole('group', { name: 'ln_1', exact: true }).getByRole('button').first().click();
  const ls = await lines(page);
  expect(ls[0]).toBe('ln_1[1] = x̂[1]·γ[1]');
  await expect(s.locator('.tr-walk-explain')).toContainText('这个模型没有偏置');
});

for (const width of [375, 1366, 1920]) {
  test(`the walk at ${width} px, English and 中文: no horizontal overflow`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width, height: 900 });
    await uploaded(page, ownPath);
    await walkTo(page, 4, 'abcd=ab');
    const s = section(page);
    await s.getByLabel('Step', { exact: true }).selectOption({ index: 2 });
    await s.getByRole('group', { name: 'a (head 1)' }).getByRole('button').first().click();
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(await overflow()).toBe(0);
    await s.screenshot({ path: testInfo.outputPath(`walk-${width}.png`) });
    await page.getByRole('button', { name: '中文' }).click();
    await expect(s.getByRole('heading', { name: '第 1 层 · 注意力' })).toBeVisible();
    expect(await overflow()).toBe(0);
  });
}
