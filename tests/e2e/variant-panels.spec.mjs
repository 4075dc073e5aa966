// variant-panels.spec.mjs — the FlashAttention tiles and MLA panels under the stepper
// (web/stepper/panels-flash.js), driven by their visible labels: the 16-token example's steps,
// a skipped tile, the row a new maximum rescales (m, α, ℓ as the float64 NumPy golden case
// flash_16_tokens_causal states them), the stepper's own matrices, MLA's two forms of the scores
// (golden mla_latent_rope_halves), both languages, and axe's WCAG 2.2 A/AA rules on the open
// panels. The page's meta CSP is the strict one: a violation would be a console error, which fails
// every test here (fixtures.mjs).
import { readFileSync } from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { test, expect } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

const golden = JSON.parse(readFileSync(new URL('../golden/attention_cases.json', import.meta.url), 'utf8'));
const expectOf = (name) => golden.cases.find((c) => c.name === name).expect;
const value = (text) => (text === '−∞' ? -Infinity : Number(text));
const close = (shown, want) => {
  if (want === '-inf') return expect(shown).toBe('−∞');
  expect(Math.abs(value(shown) - want)).toBeLessThanOrEqual(5e-5 + 1e-4 * Math.abs(want));
};

test('FlashAttention tiles: steps, a skipped tile and the rescale, as the golden case', async ({ page }) => {
  const flash = expectOf('flash_16_tokens_causal').flash;
  await ready(page);
  await page.getByText('FlashAttention, tile by tile · Multi-head latent attention (DeepSeek-V2)').click();
  const panel = page.locator('section[data-panel="flash"]');
  await expect(panel).toHaveAttribute('data-status', 'ready');
  await expect(panel.locator('.apv-step')).toHaveText(
    'Step 1 of 32: head 1, query block 1 (rows 1–4) meets key block 1 (keys 1–4)');
  // step 1: every row meets its first visible key (α = 0); the causal mask's −∞ are on the map
  await expect(panel.locator('.apv-steps tbody tr')).toHaveCount(4);
  for (let r = 0; r < 4; r++) await expect(panel.locator('.apv-steps tbody tr').nth(r)).toContainText('first visible keys: α = 0');
  const masked = expectOf('flash_16_tokens_causal').heads[0].masked.flat().filter((v) => v === '-inf').length;
  expect(masked).toBe(120); // 16·15/2 keys in the future
  await expect(panel.locator('.apv-tiles td', { hasText: '−∞' })).toHaveCount(masked);
  const next = page.getByRole('button', { name: 'next tile ▶' });
  // step 2: keys 5–8 are all in the future of rows 1–4
  expect(flash.steps[1].skipped).toBe(true);
  await next.click();
  await expect(panel.getByText('Every score of this tile is masked')).toBeVisible();
  // walk to the first step where a new maximum rescales a row (0 < α < 1)
  const at = flash.steps.findIndex((s) => s.alpha.some((a) => a > 0 && a < 1));
  const row = flash.steps[at].alpha.findIndex((a) => a > 0 && a < 1);
  for (let s = 1; s < at; s++) await next.click();
  await expect(panel.locator('.apv-step')).toContainText(`Step ${at + 1} of 32`);
  const rescaled = panel.locator('tr.is-rescale').first();
  await expect(rescaled).toContainText('new maximum: old ℓ and o rescaled by α');
  const cells = await panel.locator('.apv-steps tbody tr').nth(row).locator('td').allTextContents();
  expect(cells[0]).toBe(String(flash.steps[at].r0 + row + 1));
  close(cells[1], flash.steps[at - 1].m[row]);
  close(cells[2], flash.steps[at].m[row]);
  close(cells[3], flash.steps[at].alpha[row]);
  close(cells[4], flash.steps[at].l[row]);
  await expect(panel.locator('.apv-diff')).toContainText('Largest |flash − plain| over the context');
  // smaller tiles: more steps
  await panel.getByLabel('keys per block').fill('2');
  await panel.getByLabel('keys per block').press('Enter');
  await expect(panel.locator('.apv-step')).toContainText('Step 1 of 64');
  // the stepper's own matrices (its default example)
  await panel.getByLabel('Matrices').selectOption({ label: 'the stepper’s matrices above' });
  await expect(panel.locator('.apv-step')).toContainText(/Step 1 of \d+: head 1/);
});

test('MLA: the plain and the absorbed scores agree, as the golden case; 中文', async ({ page }) => {
  const mla = expectOf('mla_latent_rope_halves');
  await ready(page);
  await page.getByText('FlashAttention, tile by tile · Multi-head latent attention (DeepSeek-V2)').click();
  const panel = page.locator('section[data-panel="mla"]');
  await expect(panel).toHaveAttribute('data-status', 'ready');
  await expect(panel).toContainText('The KV cache holds T_total·(d_c + d_rope) = 20 numbers here');
  for (const h of [0, 1]) {
    await panel.getByRole('button', { name: `head ${h + 1}` }).click();
    for (const form of ['plain', 'absorbed']) {
      const rows = await panel.locator(`figure[data-form="${form}"] tbody tr`).evaluateAll((rs) => rs.map((r) => [...r.cells].map((c) => c.textContent)));
      const want = form === 'plain' ? mla.heads[h].scores : mla.mla.heads[h].scores_absorbed;
      expect(rows.length).toBe(want.length);
      rows.forEach((r, i) => r.forEach((c, j) => close(c, want[i][j])));
    }
  }
  const latent = await panel.locator('figure[data-form="latent"] tbody tr').first().locator('td').allTextContents();
  latent.forEach((c, j) => close(c, mla.mla.c[0][j]));
  await page.locator('[data-key="lang.zh"]').click();
  await expect(page.getByText('FlashAttention：逐块计算 · 多头潜在注意力（DeepSeek-V2）')).toBeVisible();
  await expect(panel.locator('h2')).toHaveText('多头潜在注意力（DeepSeek-V2）');
  await expect(page.locator('section[data-panel="flash"] .apv-step')).toContainText('第 1 步，共 32 步');
});

test('the open panels have no axe (WCAG 2.2 A/AA) violation, in English and 中文', async ({ page }) => {
  await ready(page);
  await page.getByText('FlashAttention, tile by tile · Multi-head latent attention (DeepSeek-V2)').click();
  await expect(page.locator('section[data-panel="mla"]')).toHaveAttribute('data-status', 'ready');
  await expect(page.locator('section[data-panel="flash"]')).toHaveAttribute('data-status', 'ready');
  for (const lang of ['en', 'zh']) {
    await page.locator(`[data-key="lang.${lang}"]`).click();
    await expect(page.locator('.apv-region')).toHaveAttribute('lang', lang === 'zh' ? 'zh-CN' : 'en');
    const { violations } = await new AxeBuilder({ page }).include('.apv-region')
      .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).analyze();
    expect(violations.flatMap((v) => v.nodes.map((n) => `${v.id} ${n.target.join(' ')}`)), lang).toEqual([]);
  }
});
