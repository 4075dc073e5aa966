// share.spec.mjs — sharing: the permalink round trip (edit, reload the URL, identical state and
// numbers, bad text included), the copy-link button, and every export format as a download.
import { readFile } from 'node:fs/promises';
import { test, expect, panelText, BOOT_MS } from './fixtures.mjs';

const stateOf = (page) => page.evaluate(() => window.__stepper.controller.getState());

/** The page's URL once its hash holds this state (the hash is written when edits pause). */
async function urlOf(page, state) {
  await expect.poll(() => page.evaluate(async (s) => {
    const { decodeState } = await import('/common/permalink.js');
    return JSON.stringify(decodeState(location.hash)) === JSON.stringify(s);
  }, state)).toBe(true);
  return page.url();
}

/** Edits one cell of an input grid through the UI: double-click, type, Enter. */
async function editCell(scope, matrix, r, c, text) {
  const td = scope.locator(`[data-matrix="${matrix}"] td[data-r="${r}"][data-c="${c}"]`);
  await td.dblclick();
  const input = scope.locator(`[data-matrix="${matrix}"] input.aps-cell-input`);
  await input.fill(text);
  await input.press('Enter');
}

test('permalink round trip: edits, options, view and bad text survive a reload', async ({ page, context }) => {
  await page.goto('/embed.html#preset=causal-4');
  await expect(page.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr')).toHaveCount(4, { timeout: BOOT_MS });
  await editCell(page, 'x', 0, 0, '2.5');
  await page.locator('[data-key="mask.inclusive"]').click();
  await expect(page.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr').nth(0)).toHaveClass(/is-empty-row/);
  const before = await stateOf(page);
  expect(before.preset).toBe('custom');
  expect(before.matrices.x.split('\n')[0].split(/\s+/)[0]).toBe('2.5');
  const numbers = {};
  for (const p of ['scores', 'weights', 'context']) numbers[p] = await panelText(page, p);
  const url = await urlOf(page, before);
  expect(url).toMatch(/#s=1\.[A-Za-z0-9_-]+$/);

  const again = await context.newPage();
  await again.goto(url);
  await expect(again.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr')).toHaveCount(4, { timeout: BOOT_MS });
  expect(await stateOf(again)).toEqual(before);
  for (const p of Object.keys(numbers)) expect(await panelText(again, p)).toEqual(numbers[p]);

  // text that does not parse is kept, and shown with its error after the reload
  await editCell(again, 'W_q', 1, 1, 'zz');
  await expect(again.locator('[data-matrix="W_q"] > .aps-field-error')).toContainText('zz');
  const bad = await stateOf(again);
  const third = await context.newPage();
  await third.goto(await urlOf(again, bad));
  await expect(third.locator('[data-matrix="W_q"] > .aps-field-error')).toContainText('zz', { timeout: BOOT_MS });
  await expect(third.locator('[data-matrix="W_q"] td[data-r="1"][data-c="1"]')).toHaveText('zz');
  expect(await stateOf(third)).toEqual(bad);
  await again.close();
  await third.close();
});

test('copy link: the clipboard gets a URL that opens the same state', async ({ page, context, baseURL }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  await page.goto('/embed.html#preset=two-token&n-head=1&view=step&step=2');
  await expect(page.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr')).toHaveCount(2, { timeout: BOOT_MS });
  const button = page.locator('button.apx-copy-link');
  await expect(button).toBeVisible();
  await button.click();
  await expect(page.locator('.apx-status')).toHaveText('Link copied');
  const link = await page.evaluate(() => navigator.clipboard.readText());
  expect(link).toMatch(/\/index\.html#s=1\.[A-Za-z0-9_-]+$/);
  const state = await stateOf(page);
  const decoded = await page.evaluate(async (l) => (await import('/common/permalink.js')).decodeState(l), link);
  expect(decoded).toEqual(state);
  // the same state opens in the embed page from that hash
  const other = await context.newPage();
  await other.goto(`/embed.html${new URL(link).hash}`);
  await expect(other.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr')).toHaveCount(2, { timeout: BOOT_MS });
  expect(await stateOf(other)).toEqual(state);
  await other.close();
});

test('copy link falls back to execCommand without the clipboard API', async ({ page }) => {
  await page.addInitScript(() => { Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined }); });
  await page.goto('/embed.html#preset=identity');
  await expect(page.locator('figure[data-panel="weights"] td[data-c]').first()).toHaveText('0.6698', { timeout: BOOT_MS });
  await page.evaluate(() => {
    window.__copied = null;
    document.addEventListener('copy', (e) => { window.__copied = document.getSelection().toString(); });
  });
  await page.locator('button.apx-copy-link').click();
  await expect(page.locator('.apx-status')).toHaveText('Link copied');
  expect(await page.evaluate(() => window.__copied)).toMatch(/#s=1\./);
  await expect(page.locator('textarea.apx-offscreen')).toHaveCount(0);
});

test('export: CSV, JSON, NumPy, LaTeX, SVG and PNG downloads of the weights', async ({ page }) => {
  await page.goto('/embed.html#preset=identity&causal=true');
  await expect(page.locator('figure[data-panel="weights"] td[data-c]')).toHaveText(['1', '0', '0.3302', '0.6698'], { timeout: BOOT_MS });
  await expect(page.locator('select.apx-matrix')).toHaveValue('heads.0.weights');
  const expected = {
    csv: ['weights.csv', (t) => expect(t).toBe('1,0\n0.33023846,0.66976154\n')],
    json: ['weights.json', (t) => expect(JSON.parse(t)).toEqual([[1, 0], [0.33023846, 0.66976154]])],
    numpy: ['weights.py', (t) => expect(t).toContain('weights = np.array([[1, 0],')],
    latex: ['weights.tex', (t) => expect(t).toBe('\\begin{bmatrix}\n  1 & 0 \\\\\n  0.3302 & 0.6698\n\\end{bmatrix}\n')],
    svg: ['weights.svg', (t) => { for (const n of ['>1<', '>0<', '>0.3302<', '>0.6698<', '>weights<']) expect(t).toContain(n); }],
  };
  for (const [format, [name, check]] of Object.entries(expected)) {
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator(`button.apx-format[data-format="${format}"]`).click()]);
    expect(download.suggestedFilename()).toBe(name);
    check(await readFile(await download.path(), 'utf8'));
  }
  const [png] = await Promise.all([page.waitForEvent('download'), page.locator('button.apx-format[data-format="png"]').click()]);
  expect(png.suggestedFilename()).toBe('weights.png');
  const bytes = await readFile(await png.path());
  expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(bytes.readUInt32BE(16)).toBeGreaterThan(100); // width at 2×

  // the mask, with −∞, as NumPy and LaTeX
  await page.locator('select.apx-matrix').selectOption('mask');
  const [np] = await Promise.all([page.waitForEvent('download'), page.locator('button.apx-format[data-format="numpy"]').click()]);
  expect(await readFile(await np.path(), 'utf8')).toContain('mask = np.array([[0, -np.inf],');
  const [tex] = await Promise.all([page.waitForEvent('download'), page.locator('button.apx-format[data-format="latex"]').click()]);
  expect(await readFile(await tex.path(), 'utf8')).toContain('0 & -\\infty');
});

test('export from an <attention-stepper> element, 2 heads: per-head matrices', async ({ page }) => {
  await page.goto('/examples/');
  const el = page.locator('#stepper-causal');
  await expect(el.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr')).toHaveCount(4, { timeout: BOOT_MS });
  await el.evaluate((e) => e.setAttribute('n-head', '2'));
  await expect(el.locator('select.apx-matrix option[value="heads.1.weights"]')).toHaveCount(1);
  await el.locator('select.apx-matrix').selectOption('heads.1.scores');
  const [d] = await Promise.all([page.waitForEvent('download'), el.locator('button.apx-format[data-format="csv"]').click()]);
  expect(d.suggestedFilename()).toBe('head2_scores.csv');
  const csv = await readFile(await d.path(), 'utf8');
  expect(csv.trim().split('\n')).toHaveLength(4);
});

/** The playground page with sharing on: enableSharing(controller, #app) — what main.js calls
 * (idempotent, so this also works once main.js does it itself). */
async function playground(page, hash = '') {
  await page.goto(`/${hash}`);
  await page.waitForFunction(() => window.attentionStepper);
  await page.evaluate(async () => {
    const { enableSharing } = await import('/stepper/share.js');
    enableSharing(window.attentionStepper, document.getElementById('app'));
  });
  await expect(page.locator('#app .aps-toolbar .apx-share')).toHaveCount(1);
}

test('the playground page: hash permalink round trip, toolbar kept across re-renders', async ({ page, context }) => {
  await playground(page);
  await page.locator('#app .aps-toolbar select[data-key="preset"]').selectOption('kv-cache');
  await expect(page.locator('#app .aps-toolbar .apx-share')).toHaveCount(1); // re-rendered, put back
  await editCell(page, 'W_k', 2, 0, '-1.5');
  await page.locator('[data-key="view.step"]').click();
  await expect(page).toHaveURL(/#s=1\.[A-Za-z0-9_-]+$/);
  const before = await page.evaluate(() => window.attentionStepper.getState());
  expect(before).toMatchObject({ preset: 'custom', view: 'step', options: { base: 2, causal: true } });
  const numbers = await panelText(page, 'q');
  const again = await context.newPage();
  await playground(again, new URL(await urlOf(page, before)).hash);
  expect(await again.evaluate(() => window.attentionStepper.getState())).toEqual(before);
  expect(await panelText(again, 'q')).toEqual(numbers);
  await expect(again.locator('select.apx-matrix')).toHaveValue('heads.0.weights');
  const [d] = await Promise.all([again.waitForEvent('download'), again.locator('button.apx-format[data-format="json"]').click()]);
  expect(JSON.parse(await readFile(await d.path(), 'utf8'))).toHaveLength(3); // T = 5 − base 2 = 3 queries
  await again.close();
});
