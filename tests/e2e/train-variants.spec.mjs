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

// A head of an ALiBi model opens in the stepper with its own slope (one head). The learner then
// splits it into more heads: the slopes follow n_head (ALiBi's own 2^(−8h/n_head)), and back at
// one head the model's slope returns; no error, and what the learner typed stays.
test('an ALiBi head opened in the stepper follows a change of n_head', async ({ page, context }) => {
  await page.goto('/train/#steps=20&batch_size=4&eval_interval=10&sample_every=0&pos=alibi');
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await page.locator('#tr-start').click();
  await expect(page.locator('#app')).toHaveAttribute('data-train', /done|diverged/, { timeout: RUN_MS });
  await page.getByRole('button', { name: 'Show attention maps' }).click();
  const head = page.getByRole('link', { name: 'Layer 1, head 1: open in the Attention Stepper' });
  const [stepper] = await Promise.all([context.waitForEvent('page'), head.click()]);
  await expect(stepper.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: RUN_MS });
  const bias = () => stepper.getByText(/^Head 1’s slope m = /);
  // the model has 4 heads: head 1's slope is 2^(−8·1/4) = 0.25 (ALiBi's own for one head: 2^−8)
  await expect(bias()).toContainText('m = 0.2500 (all heads: 0.2500)');
  await expect(stepper.getByText('The model’s slope for this head, m = 0.2500, is used with one head')).toBeVisible();
  const nHead = stepper.getByLabel('Heads (n_head)');
  await nHead.fill('2');
  await expect(stepper.getByText('(all heads: 0.0625, 0.0039)')).toBeVisible();
  await expect(stepper.locator('.aps-field-error').filter({ hasText: /\S/ })).toHaveCount(0);
  await expect(stepper.getByText('Waiting for valid input')).toBeHidden();
  await nHead.fill('1');
  await expect(bias()).toContainText('m = 0.2500 (all heads: 0.2500)');
});

// n_head changed under grouped-query heads or sinks without a window: the core's message names the
// mismatch, the learner's choices stay, and the fix clears it.
test('the form names a key/value-head or sink mismatch and keeps the choices', async ({ page }) => {
  await page.goto('/train/#n_kv_head=2&n_embd=48');
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  const nHead = page.getByLabel('Heads (n_head)');
  await nHead.fill('3');
  await expect(page.getByText('n_kv_head is 2, which does not divide n_head = 3')).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'Fix the settings marked above before training.' })).toBeAttached();
  await expect(page.getByRole('radiogroup', { name: 'Key/value heads' }).getByRole('radio', { name: '2', exact: true })).toHaveAttribute('aria-checked', 'true');
  await expect(nHead).toHaveValue('3');
  await nHead.fill('4');
  await expect(page.getByText(/n_kv_head is 2/)).toHaveCount(0);
  await page.getByRole('radiogroup', { name: 'Attention sinks' }).getByRole('radio', { name: '4', exact: true }).click();
  await expect(page.getByText('sink is given but there is no window')).toBeVisible();
  await page.getByRole('radiogroup', { name: 'Sliding window' }).getByRole('radio', { name: '8', exact: true }).click();
  await expect(page.getByText(/sink is given/)).toHaveCount(0);
  await expect(page.getByRole('status').filter({ hasText: 'Fix the settings marked above before training.' })).toHaveCount(0);
});
