// model-view.spec.mjs — the training page's model view (web/train/model-view.js) on a 12-layer,
// 12-head model built for the test (n_embd 48, a few steps, saved by the wasm API in Node and
// uploaded as a learner would): 144 head maps and 24 summaries; pointing at a token (keyboard
// focus) outlines its row and column in every map and says where it looks; any head, the last
// included, opens large and in the stepper; the mean over heads and the rollout the page shows
// equal a float64 computation from the heads' weights (the core computes them; this checks the
// wiring and the definition); every map and the model view save as SVG (parses as SVG, has its
// legend) and PNG (IHDR size = the size the page states); English and 中文; no overflow at 375,
// 1366 and 1920 px.
import { readFile } from 'node:fs/promises';
import { test, expect, RUN_MS } from './fixtures.mjs';
import { savedModel, uploaded } from './train-helpers.mjs';

let modelPath;

// In order, in one worker: the beforeAll below builds its file once (the suite is otherwise fully parallel).
test.describe.configure({ mode: 'default' });

test.beforeAll(async ({}, testInfo) => {
  modelPath = await savedModel(testInfo, 'm12x12.safetensors', { task: 'copy', n_layer: 12, n_head: 12, n_embd: 48, block_size: 64, batch_size: 2, seed: 3 }, 3);
});

async function openWithModel(page, hash = '') {
  await uploaded(page, modelPath, hash);
  await page.locator('#tr-maps').click();
  await expect(page.locator('#tr-maps-box')).toHaveAttribute('data-painted', '168', { timeout: RUN_MS });
}

/** The width and height in a PNG's IHDR chunk. */
function pngSize(bytes) {
  expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(bytes.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

test('12 × 12 heads: every map and summary, a token pointed in all of them, any head large and in the stepper', async ({ page, context }) => {
  await openWithModel(page);
  const box = page.locator('#tr-maps-section');
  await expect(box.locator('.tr-map')).toHaveCount(144);
  await expect(box.getByRole('button', { name: /mean over heads, enlarge/ })).toHaveCount(12);
  await expect(box.getByRole('button', { name: /Attention rollout up to layer \d+, enlarge/ })).toHaveCount(12);
  await expect(page.locator('#tr-maps-status')).toContainText('12 layers × 12 heads');

  // the keyboard points at a token: its row and column outlined in every map, and said in words
  const tokens = box.getByRole('group', { name: /The prompt’s tokens/ }).getByRole('button');
  const n = await tokens.count();
  expect(n).toBeGreaterThan(3);
  await tokens.nth(2).focus();
  await expect(box.locator('.tr-mv-pointed')).toContainText(/Token 3 “.”\. In Layer 1, head 1: it attends most to token \d+/);
  await expect(box.locator('.tr-mv-grid .tr-hl-row').first()).toBeVisible();
  await expect(box.locator('.tr-mv-grid .tr-hl-col').nth(167)).toBeAttached();
  const k = await box.locator('.tr-mv').evaluate((e) => getComputedStyle(e).getPropertyValue('--k').trim());
  expect(k).toBe('2');
  // the outline sits on token 3's row: 2 cells down from the map's top (CSS computes it)
  const [rowTop, cell] = await box.locator('.tr-mv-grid .tr-hl-row').first().evaluate((e) => [parseFloat(getComputedStyle(e).top), parseFloat(getComputedStyle(e).height)]);
  const m = await box.locator('.tr-mv-grid').evaluate((e) => parseFloat(e.style.getPropertyValue('--m')));
  expect(rowTop).toBeCloseTo(m + 2 * cell, 3);
  // a click pins it: it stays when the pointer leaves
  await tokens.nth(4).click();
  await expect(tokens.nth(4)).toHaveAttribute('aria-pressed', 'true');
  await page.mouse.move(1, 1);
  await expect(box.locator('.tr-mv-pointed')).toContainText('Token 5');

  // the last head, scrolled to in the grid's own box, opens large by the keyboard, with its words
  const last = box.getByRole('link', { name: 'Layer 12, head 12: open in the Attention Stepper' });
  await last.focus();
  await expect(box.locator('.tr-zoom-caption')).toContainText('Layer 12, head 12.');
  await expect(page.locator('#tr-zoom-words')).toContainText('Each query’s strongest key: 1 “');
  const [stepper] = await Promise.all([context.waitForEvent('page'), last.press('Enter')]);
  await stepper.waitForLoadState();
  expect(stepper.url()).toContain('/index.html#');
  // the stepper knows who the head is: its line names layer, head, model and prompt, its rows are
  // the prompt's tokens, and a link goes back to the training page
  const { prompt, tokens: toks } = await page.evaluate(() => window.trainPage.runtime.maps);
  const mark = (s) => s.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥');
  await expect(stepper.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: RUN_MS });
  await expect(stepper.getByText(`Layer 12, head 12 of m12x12.safetensors on “${prompt.replace(/\n/g, '↵')}”`)).toBeVisible();
  await expect(stepper.getByRole('combobox', { name: 'Example' })).toHaveValue('custom');
  await expect(stepper.getByRole('combobox', { name: 'Example' }).locator('option:checked')).toHaveText('Layer 12, head 12 of a model');
  const weights = stepper.getByRole('grid', { name: /softmax/ }).first();
  await expect(weights.locator('tbody th')).toHaveText(toks.map((tok, i) => `${i + 1} ${mark(tok)}`));
  await expect(weights.locator('thead th.aps-idx')).toHaveText(toks.map((tok, i) => `${i + 1} ${mark(tok)}`));
  await expect(stepper.getByRole('region', { name: 'Matrix Q' }).locator('tbody th')).toHaveText(toks.map((tok, i) => `${i + 1} ${mark(tok)}`));
  const back = stepper.getByRole('link', { name: '← Back to the training page' });
  expect(await back.getAttribute('href')).toBe(page.url());
  await stepper.getByRole('button', { name: '中文' }).click();
  await expect(stepper.getByText(`m12x12.safetensors 的第 12 层第 12 个头，输入为“${prompt.replace(/\n/g, '↵')}”`)).toBeVisible();
  await expect(stepper.getByRole('link', { name: '← 返回训练页面' })).toBeVisible();
  await stepper.close();

  // the summaries: the rollout up to layer 12 opens large with its explanation
  await box.getByRole('button', { name: 'Attention rollout up to layer 12, enlarge' }).click();
  await expect(box.locator('.tr-zoom-caption')).toContainText('Attention rollout up to layer 12.');
  await expect(box.locator('.tr-zoom-caption')).toContainText('Abnar and Zuidema 2020');
  await expect(box.locator('.tr-mv-notes')).toContainText('It does not say what any one head does');

  // the numbers: the page's mean and rollout are the definition's, from its own heads' weights
  const worst = await page.evaluate(() => {
    const { T, n_layer: L, n_head: NH, weights, mean, rollout } = window.trainPage.runtime.maps;
    let err = 0;
    let R = null;
    for (let l = 0; l < L; l++) {
      const A = [];
      for (let i = 0; i < T; i++) {
        const row = [];
        for (let j = 0; j < T; j++) {
          let s = 0;
          for (let h = 0; h < NH; h++) s += weights[((l * NH + h) * T + i) * T + j];
          err = Math.max(err, Math.abs(s / NH - mean[(l * T + i) * T + j]));
          row.push(0.5 * (s / NH) + (i === j ? 0.5 : 0));
        }
        const sum = row.reduce((a, b) => a + b, 0);
        A.push(row.map((v) => v / sum));
      }
      R = R ? A.map((row) => R[0].map((_, j) => row.reduce((acc, a, q) => acc + a * R[q][j], 0))) : A;
      for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) err = Math.max(err, Math.abs(R[i][j] - rollout[(l * T + i) * T + j]));
    }
    return err;
  });
  expect(worst).toBeLessThan(1e-5);
});

test('a map and the model view save as SVG (valid, with their legend) and PNG (the size the page states)', async ({ page }) => {
  await openWithModel(page);
  const box = page.locator('#tr-maps-section');
  await box.getByRole('link', { name: 'Layer 3, head 7: open in the Attention Stepper' }).focus();
  const mapSave = box.getByRole('group', { name: 'Save Layer 3, head 7 as a picture' });
  const check = async (group, file) => {
    const [svgD] = await Promise.all([page.waitForEvent('download'), group.getByRole('button', { name: 'SVG' }).click()]);
    expect(svgD.suggestedFilename()).toBe(`${file}.svg`);
    const svg = await readFile(await svgD.path(), 'utf8');
    const parsed = await page.evaluate((text) => {
      const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
      return { error: doc.getElementsByTagName('parsererror').length, root: doc.documentElement.localName, text: doc.documentElement.textContent };
    }, svg);
    expect(parsed.error).toBe(0);
    expect(parsed.root).toBe('svg');
    expect(parsed.text).toContain('Attention weight');
    expect(parsed.text).toContain('masked (weight 0)');
    const [pngD] = await Promise.all([page.waitForEvent('download'), group.getByRole('button', { name: 'PNG' }).click()]);
    expect(pngD.suggestedFilename()).toBe(`${file}.png`);
    const [w, h] = pngSize(await readFile(await pngD.path()));
    await expect(box.getByText(`Saved ${file}.png (${w} × ${h} px).`)).toBeVisible();
    expect(w).toBeGreaterThan(1000); // twice the SVG, readable on a slide
    return parsed.text;
  };
  const one = await check(mapSave, 'attention-layer3-head7');
  expect(one).toContain('Layer 3, head 7');
  expect(one).toContain('queries');
  const all = await check(box.getByRole('group', { name: 'Save the model view as a picture' }), 'model-view');
  expect(all).toContain('12 layers × 12 heads');
  expect(all).toContain('layer 12');
  expect(all).toContain('rollout');
  // the window made narrow after the maps were drawn beside the enlarged one: it stays in its card
  await page.setViewportSize({ width: 375, height: 900 });
  await expect.poll(() => box.evaluate((e) => e.scrollWidth - e.clientWidth)).toBeLessThanOrEqual(0);
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
});

for (const width of [375, 1366, 1920]) {
  test(`model view at ${width} px in 中文: no horizontal overflow, the grid scrolls in its box`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width, height: 900 });
    await openWithModel(page, '#lang=zh');
    const box = page.locator('#tr-maps-section');
    await expect(box.getByRole('group', { name: /提示的词元/ })).toBeVisible();
    await expect(box.locator('.tr-mv-notes')).toContainText('注意力展开（Abnar 与 Zuidema，2020）');
    await box.getByRole('group', { name: /提示的词元/ }).getByRole('button').first().focus();
    await expect(box.locator('.tr-mv-pointed')).toContainText('词元 1');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBe(0);
    await box.screenshot({ path: testInfo.outputPath(`model-view-${width}.png`) });
  });
}
