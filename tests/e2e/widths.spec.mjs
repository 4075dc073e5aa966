// widths.spec.mjs — every window width from a phone to a 2560 px screen shows the small examples'
// numbers whole: no step panel, input grid or explanation needs a horizontal scrollbar, and the
// page itself never scrolls sideways. The widths are the ones people use (375 phone, 768 tablet,
// the laptops 1280, 1366, 1400 and 1440, 1920 and 2560 screens) and the ones in between where the
// layout changes (1099/1100 and 1399 px).
import { test, expect, settled } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

const WIDTHS = [375, 414, 768, 1024, 1099, 1100, 1280, 1366, 1399, 1400, 1440, 1680, 1920, 2560];
// the tutorials' examples small enough to be read whole (saturate-64 has 64 columns: it scrolls)
const SMALL = ['identity', 'two-token', 'causal-4', 'overflow-naive', 'inclusive', 'kv-cache'];

/** Every scroll box of numbers that is cut (its content wider than its box), as "what: by px". */
function clipped(page) {
  return page.evaluate(() => {
    const out = [];
    const boxes = document.querySelectorAll('.aps-mat-scroll, .aps-grid-scroll, .aps-explain-lines, .aps-formula');
    for (const b of boxes) {
      if (!b.offsetParent) continue; // hidden
      const over = b.scrollWidth - b.clientWidth;
      if (over > 1) {
        const owner = b.closest('[data-panel]')?.dataset.panel ?? b.closest('[data-matrix]')?.dataset.matrix ?? '';
        out.push(`${owner} ${b.className}: ${over}px`);
      }
    }
    const page = document.documentElement.scrollWidth - document.documentElement.clientWidth;
    if (page > 0) out.push(`page: ${page}px`);
    return out;
  });
}

for (const width of WIDTHS) {
  test(`${width} px: the small examples' numbers are whole, forward and backward`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width, height: 900 });
    await ready(page);
    for (const id of SMALL) {
      await page.locator('select[data-key="preset"]').selectOption(id);
      await expect(page.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr').first()).toBeVisible();
      await settled(page);
      expect(await clipped(page), `${id}, forward`).toEqual([]);
    }
    await page.locator('select[data-key="preset"]').selectOption('identity');
    if ([1366, 1400, 1440].includes(width)) await page.screenshot({ path: testInfo.outputPath(`identity-${width}.png`), fullPage: true });
    await page.locator('[data-key="direction.backward"]').click();
    for (const id of ['identity', 'causal-4', 'kv-cache']) {
      await page.locator('select[data-key="preset"]').selectOption(id);
      await expect(page.locator('figure[data-panel="d_out"]')).toBeVisible();
      await settled(page);
      expect(await clipped(page), `${id}, backward`).toEqual([]);
    }
  });
}

test('1400 px, identity: K, S and concat show their second column without scrolling (the width at which they were once cut)', async ({ page }) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  await ready(page);
  for (const p of ['k', 'scores', 'concat']) {
    const box = page.locator(`figure[data-panel="${p}"] .aps-mat-scroll`);
    const cell = page.locator(`figure[data-panel="${p}"] td[data-r="0"][data-c="1"]`);
    const b = await box.boundingBox();
    const c = await cell.boundingBox();
    expect(c.x + c.width, p).toBeLessThanOrEqual(b.x + b.width + 0.5);
    expect(await box.evaluate((e) => e.scrollWidth - e.clientWidth), p).toBeLessThanOrEqual(1);
  }
});

for (const width of [375, 1366, 1920]) {
  test(`${width} px: the exercises' questions and bar fit, heads side by side too`, async ({ page }) => {
    await page.setViewportSize({ width, height: 900 });
    await ready(page);
    for (const id of ['identity-softmax', 'causal-row', 'mask-base', 'naive-1000', 'softmax-backward']) {
      await page.locator('select[data-key="exercise"]').selectOption(id);
      await expect(page.locator('input.aps-answer').first()).toBeVisible();
      await settled(page);
      expect(await clipped(page), id).toEqual([]);
    }
    await page.locator('select[data-key="exercise"]').selectOption('');
    await page.locator('select[data-key="preset"]').selectOption('causal-4');
    await page.locator('input[data-key="n_head"]').fill('2');
    // the two heads traced (the head buttons shown) before the toggle is pressed
    await expect(page.locator('[data-key="head.1"]')).toBeVisible();
    await settled(page);
    await page.locator('[data-key="heads.side"]').click();
    await expect(page.locator('[data-key="heads.side"]')).toHaveAttribute('aria-pressed', 'true');
    await expect(page.locator('.aps-multiple')).toHaveCount(2);
    await settled(page);
    expect(await clipped(page), 'heads side by side').toEqual([]);
  });
}
