// stepper-helpers.mjs — shared steps of the stepper specs.
import { expect, BOOT_MS } from './fixtures.mjs';

/** Loads the page and waits for the core's first trace. */
export async function ready(page, path = '/') {
  await page.goto(path);
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await expect(page.locator('.aps-status')).toContainText(/C\+\+|内核/);
}
