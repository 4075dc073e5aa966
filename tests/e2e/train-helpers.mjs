// train-helpers.mjs — shared steps of the training page's specs.
import { expect, BOOT_MS, RUN_MS } from './fixtures.mjs';

/** Opens the training page at `hash`, starts the run and waits for its end (done or diverged). */
export async function trained(page, hash) {
  await page.goto(`/train/${hash}`);
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await page.locator('#tr-start').click();
  await expect(page.locator('#app')).toHaveAttribute('data-train', /done|diverged/, { timeout: RUN_MS });
}
