// large.spec.mjs — past 32 tokens the page says so and shows heatmaps only (no 40 × 40 tables of
// numbers); every number stays reachable: pointing at a cell or moving over a map with the arrow
// keys reads it out and explains it, Ctrl+C copies the map's matrix; one click shows every number
// anyway, and the choice is part of the state.
import { test, expect, explainText } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

const T = 40;
const I4 = '1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1';

async function large(page) {
  await ready(page);
  await page.evaluate(({ T, I4 }) => {
    const s = window.attentionStepper.getState();
    const x = Array.from({ length: T }, (_, i) => Array.from({ length: 4 }, (_, j) => (Math.round(Math.sin(i * 3 + j) * 90) / 100).toString()).join(' ')).join('\n');
    window.attentionStepper.setState({ ...s, preset: 'custom', matrices: { ...s.matrices, x, W_q: I4, W_k: I4, W_v: I4, W_o: I4 }, options: { ...s.options, causal: true, n_head: 2 } });
  }, { T, I4 });
  await expect(page.locator('.aps-large')).toBeVisible();
}

test('40 tokens: the page says so, the big panels are heatmaps, the numbers one key away', async ({ page, context, baseURL }, testInfo) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  await large(page);
  await expect(page.locator('.aps-large')).toContainText('40 tokens');
  const scores = page.locator('figure[data-panel="scores"]');
  await expect(scores.locator('canvas.aps-heat-canvas')).toHaveCount(1);
  await expect(scores.locator('td')).toHaveCount(0); // no 40 × 40 table
  await expect(page.locator('figure[data-panel="weights"] .aps-heat-canvas')).toBeVisible();
  // a tall narrow panel (40 queries × d_k = 2) keeps its numbers
  await expect(page.locator('figure[data-panel="q"] td[data-c]')).toHaveCount(T * 2);
  // keyboard: Tab to the weights map, arrows move, the readout and the explanation follow
  const map = page.locator('figure[data-panel="weights"] .aps-heat-canvas');
  await map.focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  const want = await page.evaluate(async () => {
    const { loadAttention } = await import('/attention.js');
    const { formatNumber } = await import('/common/format.js');
    const api = await loadAttention();
    const s = window.attentionStepper.getState();
    const tr = api.trace({ ...s.options, x: s.matrices.x, W_q: s.matrices.W_q, W_k: s.matrices.W_k, W_v: s.matrices.W_v, W_o: s.matrices.W_o });
    return { a22: formatNumber(tr.heads[0].weights[1][1]), s1: tr.heads[0].scores[0] };
  });
  const readout = page.locator('figure[data-panel="weights"] .aps-heat-readout');
  await expect(readout).toHaveText(`softmax (A) [2,2] = ${want.a22}`);
  await expect(readout).toHaveAttribute('aria-live', 'polite');
  await expect.poll(() => explainText(page)).toContain('A[2,2] (head 1)');
  await expect(page.locator('.aps-explain .aps-ex-result')).toHaveAttribute('data-text', `= ${want.a22}`);
  await expect(map).toHaveAttribute('role', 'application');
  await expect(map).toHaveAttribute('aria-label', /heatmap of 40 × 40/);
  // Ctrl+C on the scores map: its 40 × 40 numbers, full precision
  await page.locator('figure[data-panel="scores"] .aps-heat-canvas').focus();
  await page.keyboard.press('Control+c');
  await expect(page.locator('figure[data-panel="scores"] .aps-heat-readout')).toContainText('40 × 40 numbers copied');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  const rows = copied.split('\n');
  expect(rows).toHaveLength(T);
  expect(rows[0].split('\t').map(Number)).toEqual(want.s1);
  // pointing at a cell reads it out too
  await map.scrollIntoViewIfNeeded();
  const box = await map.boundingBox();
  await page.mouse.move(box.x + 3, box.y + 3);
  await expect(readout).toContainText('softmax (A) [1,1] = 1');
  await page.screenshot({ path: testInfo.outputPath('large-heat.png') });
  // every number anyway, and back; the choice is in the state
  await page.locator('[data-key="display.toggle"]').click();
  await expect(scores.locator('td[data-c]')).toHaveCount(T * T);
  await expect(page.locator('.aps-large')).toContainText('Every number of 40 tokens');
  expect((await page.evaluate(() => window.attentionStepper.getState())).display).toBe('numbers');
  await page.locator('[data-key="display.toggle"]').click();
  await expect(scores.locator('td')).toHaveCount(0);
  expect((await page.evaluate(() => window.attentionStepper.getState())).display).toBe('auto');
});

test('a small input: no notice; the heatmap-only view can still be chosen from a state', async ({ page }) => {
  await ready(page);
  await expect(page.locator('.aps-large')).toBeHidden();
  await page.evaluate(() => window.attentionStepper.setState({ ...window.attentionStepper.getState(), display: 'heatmap' }));
  await expect(page.locator('.aps-large')).toContainText('Heatmaps only');
  await expect(page.locator('figure[data-panel="weights"] .aps-heat-canvas')).toHaveCount(1);
  await page.locator('[data-key="display.toggle"]').click();
  await expect(page.locator('figure[data-panel="weights"] td[data-c]')).toHaveText(['0.6698', '0.3302', '0.3302', '0.6698']);
});
