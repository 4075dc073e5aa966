// print.spec.mjs — printing the stepper (web/stepper/print.js and stepper.css's @media print):
// page.pdf() in Chromium (which fires beforeprint and turns the print media query on, as Ctrl+P
// and "Save as PDF" do), then the PDF's text read by pdftotext (Debian's poppler-utils, in
// scripts/setup's list): every panel's numbers are there, panels 3–8 included, even in the
// step-by-step view, where the screen shows one step and the other panels were never painted;
// after printing the step view is back as it was. In 中文 too.
// Panels the screen lays out wider than the paper (16 columns) or as heatmaps only (40 tokens)
// print their numbers too, in blocks of columns (the input grids as well): the first and last
// columns of every row are in the PDF's text; after printing the screen is as it was (no print copy, the heatmap back).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { test, expect, panelText } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

const PDFTOTEXT = '/usr/bin/pdftotext';
// panels 3–8 of the forward pass (context.js STEPS): S/√d_k, + mask, softmax, A·V, concat, ·W_o
const LATE = ['scaled', 'masked', 'weights', 'context', 'concat', 'out'];

/** The stepper, in English or switched to 中文 with its language button (as a user does). */
async function open(page, lang) {
  await ready(page);
  if (lang === 'zh') {
    await page.locator('[data-key="lang.zh"]').click();
    await expect(page.locator('.aps-root')).toHaveAttribute('lang', 'zh-CN');
  }
}

async function printed(page, testInfo, name) {
  const path = testInfo.outputPath(`${name}.pdf`);
  await writeFile(path, await page.pdf({ format: 'A4', printBackground: true }));
  // -layout keeps a row's numbers on one line, in order, as the panel shows them
  return execFileSync(PDFTOTEXT, ['-layout', path, '-']).toString().replace(/[ \t]+/g, ' ');
}

for (const lang of ['en', 'zh']) {
  test(`printing the step-by-step view (${lang}) shows every panel's numbers, then the view is back`, async ({ page }, testInfo) => {
    test.skip(!existsSync(PDFTOTEXT), 'no pdftotext: scripts/setup installs poppler-utils');
    await open(page, lang);
    await page.locator('select[data-key="preset"]').selectOption('kv-cache');
    // what each panel shows, row by row, read in the all-steps view
    const want = {};
    for (const p of LATE) want[p] = await panelText(page, p);
    for (const p of LATE) expect(want[p].length, p).toBeGreaterThan(0);
    // the step view: step 1 only; the late panels are not on the page
    await page.locator('[data-key="view.step"]').click();
    await expect(page.locator('figure[data-panel="weights"]')).toBeHidden();
    const text = await printed(page, testInfo, `stepper-${lang}`);
    for (const p of LATE) {
      for (const row of want[p]) expect(text, `panel ${p}, row ${row.join(' ')}`).toContain(` ${row.join(' ')}`);
    }
    // the numbers' panels keep their titles (a reader of the PDF knows which is which)
    expect(text).toMatch(lang === 'zh' ? /softmax ?（A）/ : /softmax \(A\)/); // (pdftotext may space a full-width parenthesis)
    // after printing: the step view as it was, its state untouched
    await expect(page.locator('figure[data-panel="weights"]')).toBeHidden();
    expect(await page.evaluate(() => window.attentionStepper.getState().view)).toBe('step');
  });
}

/** Sets the state's matrices and options (as a permalink would), then waits for the trace. */
async function setInput(page, patch) {
  await page.evaluate((patch) => {
    const s = window.attentionStepper.getState();
    window.attentionStepper.setState({ ...s, preset: 'custom', ...patch, matrices: { ...s.matrices, ...patch.matrices }, options: { ...s.options, ...patch.options } });
  }, patch);
}

/** Every row's first and last four numbers (a block holds more than four columns) are printed. */
function expectRows(text, panel, rows) {
  expect(rows.length, panel).toBeGreaterThan(0);
  for (const [i, row] of rows.entries()) {
    for (const part of [row.slice(0, 4), row.slice(-4)]) expect(text, `panel ${panel}, row ${i + 1}: ${part.join(' ')}`).toContain(` ${part.join(' ')}`);
  }
}

for (const lang of ['en', 'zh']) {
  test(`a 16-column matrix prints every column, in blocks that fit the paper (${lang})`, async ({ page }, testInfo) => {
    test.skip(!existsSync(PDFTOTEXT), 'no pdftotext: scripts/setup installs poppler-utils');
    await open(page, lang);
    // Q, K, V: 3 × 16 of distinct signed numbers
    const mat = (seed) => Array.from({ length: 3 }, (_, i) => Array.from({ length: 16 }, (_, j) => (Math.round(Math.sin(seed + i * 16 + j) * 9000) / 10000).toString()).join(' ')).join('\n');
    await setInput(page, { mode: 'qkv', use_W_o: false, use_bias: false, matrices: { Q: mat(1), K: mat(2), V: mat(3) }, options: { causal: false, n_head: 1 } });
    await expect(page.locator('figure[data-panel="v"] thead th')).toHaveCount(17);
    const want = {};
    for (const p of ['v', 'scores', 'context']) want[p] = await panelText(page, p);
    expect(want.v[0].length).toBe(16);
    const text = await printed(page, testInfo, `wide-${lang}`);
    for (const p of ['v', 'context']) expectRows(text, p, want[p]);
    expect(text).toMatch(lang === 'zh' ? /V ?（值）/ : /V \(values\)/);
    // the input grids too: V as typed
    expectRows(text, 'V (input)', mat(3).split('\n').map((r) => r.split(' ')));
    // a narrow panel keeps its whole rows on one line
    for (const row of want.scores) expect(text).toContain(` ${row.join(' ')}`);
    // the screen: as it was
    await expect(page.locator('.aps-print-blocks')).toHaveCount(0);
    await expect(page.locator('figure[data-panel="v"] .aps-mat-scroll')).toBeVisible();
    await expect(page.locator('section[data-matrix="V"] .aps-grid-scroll')).toBeVisible();
  });

  test(`a large input's heatmap-only panels print their numbers (${lang})`, async ({ page }, testInfo) => {
    test.skip(!existsSync(PDFTOTEXT), 'no pdftotext: scripts/setup installs poppler-utils');
    await open(page, lang);
    const T = 40;
    const I4 = '1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1';
    const x = Array.from({ length: T }, (_, i) => Array.from({ length: 4 }, (_, j) => (Math.round(Math.sin(i * 3 + j) * 90) / 100).toString()).join(' ')).join('\n');
    await setInput(page, { mode: 'x', use_W_o: true, use_bias: false, matrices: { x, W_q: I4, W_k: I4, W_v: I4, W_o: I4 }, options: { causal: true, n_head: 2 } });
    const scores = page.locator('figure[data-panel="scores"]');
    await expect(scores.locator('canvas.aps-heat-canvas')).toHaveCount(1);
    // the numbers the panel would show, read with every number on, then back to heatmaps
    const toggle = page.locator('.aps-large button');
    await toggle.click();
    const want = await panelText(page, 'scores');
    expect(want.length).toBe(T);
    await toggle.click();
    await expect(scores.locator('td')).toHaveCount(0);
    const text = await printed(page, testInfo, `large-${lang}`);
    expectRows(text, 'scores', want);
    // the screen: the heatmap again, no print copy
    await expect(page.locator('.aps-print-blocks')).toHaveCount(0);
    await expect(scores.locator('canvas.aps-heat-canvas')).toBeVisible();
    await expect(scores.locator('td')).toHaveCount(0);
  });
}

/** How many pixels of a panel's canvas are painted (not blank, not white); 0 while it is hidden. */
const paintedPixels = (fig) => fig.locator('canvas.aps-mat-canvas').evaluate((c) => {
  if (!c.width || !c.height || getComputedStyle(c).visibility === 'hidden') return 0;
  const copy = document.createElement('canvas'); // (a reading canvas of its own: no readback warning)
  copy.width = c.width;
  copy.height = c.height;
  const g = copy.getContext('2d', { willReadFrequently: true });
  g.drawImage(c, 0, 0);
  const d = g.getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i + 3] && (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250)) n++;
  return n;
});

test('a far panel has its pixels and its text after beforeprint, and after paintAll() for a full-page screenshot', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await open(page, 'en');
  const example = page.getByRole('combobox', { name: 'Example' });
  const out = page.locator('figure[data-panel="context"]'); // A·V: step 6, far below the first screen
  const cells = out.locator('tbody td[data-c]');
  // far from the screen, as the page's observer sees it (panels.js paints only near the screen)
  const far = () => out.locator('.aps-mat-scroll').evaluate((e) => !e.apsView.live);
  // what the panel shows once on screen (the page's own painting), then back at the top
  await example.selectOption('causal-4');
  await out.scrollIntoViewIfNeeded();
  await expect.poll(() => paintedPixels(out)).toBeGreaterThan(100);
  const want = await cells.allTextContents();
  expect(want.length).toBeGreaterThan(0);
  await page.evaluate(() => window.scrollTo(0, 0));
  await expect.poll(far).toBe(true);
  await example.selectOption('identity');
  await example.selectOption('causal-4');
  await page.evaluate(() => window.scrollTo(0, 0));
  await expect.poll(far).toBe(true);
  // printing: beforeprint paints it and writes its table
  await page.evaluate(() => dispatchEvent(new Event('beforeprint')));
  expect(await paintedPixels(out)).toBeGreaterThan(100);
  expect(await cells.allTextContents()).toEqual(want);
  await page.evaluate(() => dispatchEvent(new Event('afterprint')));
  // a full-page screenshot: paintAll() paints every panel, rendered while off screen
  await page.evaluate(() => window.scrollTo(0, 0));
  await expect.poll(far).toBe(true);
  expect(await out.locator('.aps-mat-wrap').evaluate((e) => getComputedStyle(e).contentVisibility)).toBe('auto'); // skipped off screen
  await page.evaluate(() => window.attentionStepper.paintAll());
  expect(await paintedPixels(out)).toBeGreaterThan(100);
  expect(await cells.allTextContents()).toEqual(want);
  expect(await out.locator('.aps-mat-wrap').evaluate((e) => getComputedStyle(e).contentVisibility)).toBe('visible');
  await page.screenshot({ path: testInfo.outputPath('full-page.png'), fullPage: true });
});
