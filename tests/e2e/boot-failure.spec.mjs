// boot-failure.spec.mjs — a page whose wasm core does not come (a clone where web/gen/ was never
// built, a host that left it out) says what to run, in English and in 中文: the stepper's page
// (web/main.js) and the training page (web/train/main.js). The core's module is answered 404 by
// the test (page.route), so nothing of web/ has to be removed.
// Limits: only the message is checked, not every way a core can fail to load.
import { test, expect, BOOT_MS } from './fixtures.mjs';

// the 404s and the failed import are what this test makes happen
test.use({ ignoreProblems: [/404|Failed to fetch dynamically imported module|did not load|未能加载/] });

/** Answers 404 for the page's core (and the GPT's other builds): a web/ without gen/. */
async function withoutCore(page, pattern) {
  await page.route(pattern, (route) => route.fulfill({ status: 404, contentType: 'text/plain', body: 'not built' }));
}

const zhFirst = (page) => page.addInitScript(() => localStorage.setItem('attention-playground.lang', 'zh'));

test('the stepper without its core names the file and says what to run', async ({ page }) => {
  await withoutCore(page, '**/gen/attention_core.*');
  await page.goto('/');
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'failed', { timeout: BOOT_MS });
  const alert = page.getByRole('alert');
  await expect(alert).toContainText('attention_core');
  await expect(alert).toContainText('scripts/serve');
  await expect(alert).toContainText('scripts/build wasm');
});

test('the stepper without its core, in 中文', async ({ page }) => {
  await zhFirst(page);
  await withoutCore(page, '**/gen/attention_core.*');
  await page.goto('/');
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'failed', { timeout: BOOT_MS });
  const alert = page.getByRole('alert');
  await expect(alert).toContainText('注意力内核');
  await expect(alert).toContainText('scripts/serve');
  await expect(alert).toContainText('scripts/build wasm');
});

test('the training page without its core names the file and says what to run', async ({ page }) => {
  await withoutCore(page, '**/gen/gpt_core*');
  await page.goto('/train/');
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'failed', { timeout: BOOT_MS });
  const message = page.getByText('did not load');
  await expect(message).toContainText('gpt_core');
  await expect(message).toContainText('scripts/serve');
  await expect(message).toContainText('scripts/build wasm');
});

test('the training page without its core, in 中文', async ({ page }) => {
  await zhFirst(page);
  await withoutCore(page, '**/gen/gpt_core*');
  await page.goto('/train/');
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'failed', { timeout: BOOT_MS });
  const message = page.getByText('未能加载');
  await expect(message).toContainText('GPT 内核');
  await expect(message).toContainText('scripts/serve');
  await expect(message).toContainText('scripts/build wasm');
});
