// heads.spec.mjs — several heads: the head selector and the "side by side" view, which shows every
// head's weights at once (small multiples) on the same scale; picking a head there selects it for
// the other panels; the cell arithmetic of a small multiple is that head's; the view is part of
// the state (a permalink keeps it) and of step mode.
import { test, expect, explainText, settled } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

const multiples = (page) => page.locator('figure[data-panel="weights-heads"] .aps-multiple');
const rowsOf = (scope) => scope.locator('.aps-mat:not(.aps-stats) tbody tr').evaluateAll((rs) => rs.map((r) => [...r.querySelectorAll('td[data-c]')].map((td) => td.textContent)));

test('side by side: every head\'s weights at once, the same numbers as each head\'s panel', async ({ page }, testInfo) => {
  await ready(page);
  await page.locator('select[data-key="preset"]').selectOption('causal-4');
  await expect(page.locator('[data-key="heads.side"]')).toHaveCount(0); // one head: nothing to compare
  await page.locator('input[data-key="n_head"]').fill('2');
  await expect(page.locator('.aps-heads button[data-key^="head."]')).toHaveCount(2);
  await expect(page.locator('figure[data-panel="weights-heads"]')).toBeHidden();
  await page.locator('[data-key="heads.side"]').click();
  await expect(page.locator('[data-key="heads.side"]')).toHaveAttribute('aria-pressed', 'true');
  const fig = page.locator('figure[data-panel="weights-heads"]');
  await expect(fig).toBeVisible();
  await expect(multiples(page)).toHaveCount(2);
  await expect(fig.locator('.aps-shape')).toHaveText('2 × (T × T_total) = 2 × 4 × 4');
  await settled(page);
  const side = [await rowsOf(multiples(page).nth(0)), await rowsOf(multiples(page).nth(1))];
  expect(side[0]).not.toEqual(side[1]);
  const weights = page.locator('figure[data-panel="weights"]');
  expect(await rowsOf(weights)).toEqual(side[0]); // head 1 is selected
  await expect(multiples(page).nth(0)).toHaveClass(/is-current-head/);
  // pick head 2 in the small multiples: the other panels follow
  await multiples(page).nth(1).locator('.aps-multiple-head').click();
  await expect(page.locator('figure[data-panel="weights"] .aps-panel-title')).toContainText('head 2');
  await expect(multiples(page).nth(1)).toHaveClass(/is-current-head/);
  await expect(page.locator('.aps-heads [data-key="head.1"]')).toHaveAttribute('aria-pressed', 'true');
  await settled(page);
  expect(await rowsOf(weights)).toEqual(side[1]);
  // a cell of head 1's map explains head 1 even while head 2 is selected
  await multiples(page).nth(0).locator('td[data-r="3"][data-c="1"]').hover();
  await expect.poll(() => explainText(page)).toContain('A[4,2] (head 1)');
  await expect.poll(() => explainText(page)).toContain(`= ${side[0][3][1]}`);
  await page.screenshot({ path: testInfo.outputPath('heads-side.png'), fullPage: true });
  // the state keeps the view; step mode shows it with the softmax step
  expect(await page.evaluate(() => window.attentionStepper.getState())).toMatchObject({ head: 1, head_view: 'side', options: { n_head: 2 } });
  await page.locator('[data-key="view.step"]').click();
  await page.locator('.aps-dot').nth(4).click();
  await expect(page.locator('.aps-progress-text')).toContainText('softmax');
  await expect(fig).toBeVisible();
  await page.locator('.aps-dot').nth(5).click();
  await expect(fig).toBeHidden();
  // four heads: four maps; back to one head: the view is gone
  await page.locator('[data-key="view.all"]').click();
  await page.locator('input[data-key="n_head"]').fill('4');
  await expect(multiples(page)).toHaveCount(4);
  await page.locator('input[data-key="n_head"]').fill('1');
  await expect(page.locator('figure[data-panel="weights-heads"]')).toBeHidden();
  await expect(page.locator('[data-key="heads.side"]')).toHaveCount(0);
});

test('side by side restored from a state (a permalink)', async ({ page }) => {
  await ready(page);
  await page.evaluate(() => {
    const s = window.attentionStepper.getState();
    window.attentionStepper.setState({ ...s, preset: 'custom', mode: 'qkv', use_W_o: false, matrices: { ...s.matrices, Q: '1 0 0 1\n0 1 1 0', K: '1 0 1 0\n0 1 0 1', V: '1 2 3 4\n5 6 7 8' }, options: { ...s.options, n_head: 2 }, head_view: 'side', head: 1 });
  });
  await expect(multiples(page)).toHaveCount(2);
  await expect(multiples(page).nth(1)).toHaveClass(/is-current-head/);
});
