// page.spec.mjs — the page (web/index.html → the Attention Stepper) in Chromium: the wasm core
// loads under a strict CSP, the identity example shows the tutorial's numbers, the layout holds on
// a phone and a projector, the language is remembered. Screenshots land in test-results/.
import { test, expect, panelCells, BOOT_MS } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

test('server sends application/wasm', async ({ request }) => {
  const res = await request.get('/gen/attention_core.wasm');
  expect(res.ok()).toBeTruthy();
  expect(res.headers()['content-type']).toMatch(/^application\/wasm/);
});

test('the page carries a strict CSP and no inline script, style or handler', async ({ page, request }) => {
  await ready(page);
  // the markup as served: no style attribute or element (sizes set later from script go through
  // the CSSOM, which the CSP allows; csp.spec.mjs checks that nothing is blocked at run time)
  for (const path of ['/', '/stepper/stepper.js']) expect((await (await request.get(path)).text()).match(/<style|\sstyle=/g), path).toBeNull();
  const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  expect(csp).toContain("script-src 'self' 'wasm-unsafe-eval'");
  expect(csp).toContain("style-src 'self'");
  expect(await page.locator('script:not([src])').count()).toBe(0);
  expect(await page.locator('style').count()).toBe(0);
  const handlers = await page.evaluate(() => [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length);
  expect(handlers).toBe(0);
});

test('identity example: 0.6698 / 0.3302, every step shown with a MathML formula', async ({ page }, testInfo) => {
  await ready(page);
  await expect(page.locator('select[data-key="preset"]')).toHaveValue('identity');
  await expect(panelCells(page, 'weights')).toHaveText(['0.6698', '0.3302', '0.3302', '0.6698']);
  await expect(page.locator('[data-panel="weights"] td.is-sum')).toHaveText(['1.0000', '1.0000']);
  for (const p of ['q', 'k', 'v', 'scores', 'scaled', 'masked', 'weights', 'context', 'concat', 'out']) {
    const fig = page.locator(`figure[data-panel="${p}"]`);
    await expect(fig, p).toBeVisible();
    await expect(fig.locator('math'), p).toHaveCount(1);
  }
  await expect(page.locator('.aps-preset-note')).toContainText('0.669762');
  await expect(page.locator('.aps-preset-note')).toContainText('0.6699');
  await page.screenshot({ path: testInfo.outputPath('en.png'), fullPage: true });
  // Σ is a float sum, always to 4 decimals: an exact 1 and a 0.99999994 look alike
  await page.locator('select[data-key="preset"]').selectOption('causal-4');
  await expect(page.locator('[data-panel="weights"] td.is-sum')).toHaveText(['1.0000', '1.0000', '1.0000', '1.0000']);
});

test('zh: switching shows Chinese everywhere and is remembered after a reload', async ({ page }, testInfo) => {
  await ready(page);
  await page.locator('[data-key="lang.zh"]').click();
  await expect(page.locator('.aps-title')).toHaveText('注意力步进器');
  await expect(page.locator('.aps-root')).toHaveAttribute('lang', 'zh-CN');
  await expect(page.locator('.aps-preset-note')).toContainText('舍入');
  await expect(page.locator('[data-panel="q"] .aps-panel-title')).toContainText('查询');
  await expect(page.locator('select[data-key="preset"] option').first()).toHaveText('2×2 单位矩阵（教程示例）');
  expect(await page.evaluate(() => localStorage.getItem('attention-playground.lang'))).toBe('zh');
  await page.reload();
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await expect(page.locator('.aps-title')).toHaveText('注意力步进器');
  await expect(page.locator('[data-key="step.next"]')).toHaveText('下一步 →');
  expect(await page.evaluate(() => window.attentionStepper.getState().lang)).toBe('zh');
  await expect(panelCells(page, 'weights').first()).toHaveText('0.6698');
  await page.screenshot({ path: testInfo.outputPath('zh.png'), fullPage: true });
  await page.locator('[data-key="lang.en"]').click();
  await expect(page.locator('.aps-title')).toHaveText('The Attention Stepper');
});

test('phone (375 px): no horizontal page overflow, in every example and in step mode', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 375, height: 812 });
  await ready(page);
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  const ids = await page.locator('select[data-key="preset"] option').evaluateAll((os) => os.map((o) => o.value).filter((v) => v !== 'custom'));
  for (const id of ids) {
    await page.locator('select[data-key="preset"]').selectOption(id);
    await expect(page.locator('figure[data-panel="weights"]')).toBeVisible();
    expect(await overflow(), id).toBeLessThanOrEqual(0);
  }
  await page.locator('select[data-key="preset"]').selectOption('causal-4');
  await page.screenshot({ path: testInfo.outputPath('phone.png'), fullPage: true });
  await page.locator('[data-key="view.step"]').click();
  await page.locator('[data-key="step.next"]').click();
  expect(await overflow()).toBeLessThanOrEqual(0);
  await page.screenshot({ path: testInfo.outputPath('phone-step.png'), fullPage: true });
});

test('projector (1920 px): two columns, no overflow', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  await ready(page);
  await page.locator('select[data-key="preset"]').selectOption('causal-4');
  const inputs = await page.locator('.aps-inputs').boundingBox();
  const pipe = await page.locator('.aps-pipeline').boundingBox();
  expect(pipe.x).toBeGreaterThan(inputs.x + inputs.width - 1);
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
  await page.screenshot({ path: testInfo.outputPath('projector.png') });
});
