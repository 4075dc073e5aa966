// page.spec.mjs — the first page in Chromium: loads the wasm core, shows the built-in examples.
import { test as base, expect } from '@playwright/test';

// Every test fails on a page error or a console error/warning (a CSP violation, a 404, or
// Emscripten's "wasm streaming compile failed" MIME-type fallback all show up there).
const test = base.extend({
  page: async ({ page }, use) => {
    const problems = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()} (${m.location().url})`);
    });
    await use(page);
    expect(problems).toEqual([]);
  },
});

async function ready(page, hash = '') {
  await page.goto(`/${hash}`);
  await expect(page.locator('#status')).toHaveText('ready');
}

/** The softmax step's table (of the first head). */
const weights = (page) => page.locator('figure.step', { has: page.locator('.step-title', { hasText: /^softmax$/ }) }).first().locator('table');

test('server sends application/wasm', async ({ request }) => {
  const res = await request.get('/gen/attention_core.wasm');
  expect(res.ok()).toBeTruthy();
  expect(res.headers()['content-type']).toMatch(/^application\/wasm/);
});

test('the page carries a strict CSP and no inline script or style', async ({ page }) => {
  await ready(page);
  const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  expect(csp).toContain("script-src 'self' 'wasm-unsafe-eval'");
  expect(csp).toContain("style-src 'self'");
  expect(await page.locator('script:not([src])').count()).toBe(0);
  expect(await page.locator('style').count()).toBe(0);
  expect(await page.locator('[style]').count()).toBe(0);
});

test('identity example: ready, weights 0.6698 / 0.3302, every step shown', async ({ page }, testInfo) => {
  await ready(page);
  await expect(page.locator('#example')).toHaveValue('identity');
  const w = weights(page);
  await expect(w.locator('tbody tr').nth(0).locator('td').nth(0)).toHaveText('0.6698');
  await expect(w.locator('tbody tr').nth(0).locator('td').nth(1)).toHaveText('0.3302');
  await expect(w.locator('tbody tr').nth(1).locator('td').nth(0)).toHaveText('0.3302');
  await expect(w.locator('tbody tr').nth(0).locator('td.sum')).toHaveText('1');
  for (const title of ['x', 'W_q', 'W_k', 'W_v', 'W_o', 'Q', 'K', 'V', 'S', 'S / √d_k', 'mask', '+ mask', 'softmax', 'A·V', 'concat', 'out']) {
    await expect(page.locator('.step-title', { hasText: new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }), title).toHaveCount(1);
  }
  await expect(page.locator('#warnings')).toBeHidden();
  await page.screenshot({ path: testInfo.outputPath('identity.png'), fullPage: true });
});

test('inclusive-mask exercise: −∞ on the diagonal, the empty first row is warned about', async ({ page }, testInfo) => {
  await ready(page);
  await page.locator('#example').selectOption('inclusive');
  await expect(page.locator('#warnings')).toBeVisible();
  await expect(page.locator('#warning-list li')).toContainText([/empty|every key|masked|sees nothing|no key/i]);
  const w = weights(page);
  await expect(w.locator('tbody tr').nth(0)).toHaveClass(/row-empty/);
  await expect(w.locator('tbody tr').nth(0).locator('td.sum')).toHaveText('0');
  const mask = page.locator('figure.step', { has: page.locator('.step-title', { hasText: /^mask$/ }) }).locator('table');
  await expect(mask.locator('tbody tr').nth(0).locator('td').nth(0)).toHaveText('−∞');
  await expect(page).toHaveURL(/#inclusive$/);
  await page.screenshot({ path: testInfo.outputPath('inclusive.png'), fullPage: true });
});

test('scores around 1000: naive shows NaN and an overflow warning, stable does not', async ({ page }, testInfo) => {
  await ready(page);
  await page.locator('#example').selectOption('naive');
  await expect(page.locator('#warnings')).toBeVisible();
  await expect(page.locator('#warning-list li')).toContainText([/overflow|non-finite|NaN/i]);
  await expect(weights(page).locator('tbody tr').nth(0).locator('td').nth(0)).toHaveText('NaN');
  await expect(weights(page).locator('td.nan').first()).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('naive.png'), fullPage: true });

  await page.locator('#example').selectOption('stable');
  await expect(page.locator('#warnings')).toBeHidden();
  await expect(weights(page).locator('tbody tr').nth(0).locator('td').nth(0)).toHaveText('0.7311');
});

test('KV-cache step: queries at positions 3 and 4 over 4 keys; deep link by hash', async ({ page }) => {
  await ready(page, '#kv-cache');
  await expect(page.locator('#example')).toHaveValue('kv-cache');
  const w = weights(page);
  await expect(w.locator('tbody tr')).toHaveCount(2);
  await expect(w.locator('tbody tr th')).toHaveText(['3', '4']);
  await expect(w.locator('tbody tr').nth(0).locator('td:not(.sum)')).toHaveCount(4);
  await expect(w.locator('tbody tr').nth(0).locator('td').nth(3)).toHaveText('0');
  const mask = page.locator('figure.step', { has: page.locator('.step-title', { hasText: /^mask$/ }) }).locator('table');
  await expect(mask.locator('tbody tr').nth(0).locator('td')).toHaveText(['0', '0', '0', '−∞']);
});

test('every example renders without errors; full-page screenshot', async ({ page }, testInfo) => {
  await ready(page);
  const ids = await page.locator('#example option').evaluateAll((os) => os.map((o) => o.value));
  expect(ids.length).toBeGreaterThanOrEqual(5);
  for (const id of ids) {
    await page.locator('#example').selectOption(id);
    await expect(page.locator('.step-title', { hasText: /^out$/ })).toHaveCount(1);
    await expect(page.locator('#warning-list li.error')).toHaveCount(0);
    await page.screenshot({ path: testInfo.outputPath(`example-${id}.png`), fullPage: true });
  }
  await page.locator('#example').selectOption('identity');
  await page.screenshot({ path: testInfo.outputPath('page.png'), fullPage: true });
});

test('narrow screen: no horizontal page overflow', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await ready(page, '#causal');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await page.screenshot({ path: testInfo.outputPath('narrow.png'), fullPage: true });
});
