// train-variants.spec.mjs — the training page's model variants (gpt.h: RoPE, RMSNorm, SwiGLU,
// grouped-query heads, a sliding window with its attention sinks): chosen in the form by their labels, they reach the core
// (the trained run's config), the parameter count is the core's, the link keeps them, and the run
// trains to its end with a falling loss.
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';

test('the Llama-like variants chosen in the form train in the core, counted and linked', async ({ page }) => {
  await page.goto('/train/#steps=40&batch_size=8&eval_interval=20&sample_every=0');
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  const pick = async (group, option) => {
    const radio = page.getByRole('radiogroup', { name: group }).getByRole('radio', { name: option, exact: true });
    await radio.click();
    await expect(radio).toHaveAttribute('aria-checked', 'true');
  };
  await pick('Positions', 'RoPE');
  await pick('Norm', 'RMSNorm');
  await pick('MLP', 'SwiGLU');
  await pick('Key/value heads', '2');
  await pick('Sliding window', '8');
  await pick('Attention sinks', '4');
  await expect(page).toHaveURL(/pos=rope/);
  await expect(page).toHaveURL(/n_kv_head=2/);
  await expect(page).toHaveURL(/sink=4/);
  await page.locator('#tr-start').click();
  await expect(page.locator('#app')).toHaveAttribute('data-train', /done|diverged/, { timeout: RUN_MS });
  await expect(page.locator('#app')).toHaveAttribute('data-train', 'done');
  const info = await page.evaluate(() => window.trainPage.worker.call('info', { run: 'main' }));
  expect(info.config).toMatchObject({ pos: 'rope', norm: 'rmsnorm', mlp: 'swiglu', n_kv_head: 2, window: 8, sink: 4 });
  await expect(page.locator('#tr-params')).toContainText(info.n_params.toLocaleString('en-US'));
  const s = await page.evaluate(() => window.trainPage.runtime.series);
  expect(s.val.at(-1)).toBeLessThan(s.val[0]);
});
