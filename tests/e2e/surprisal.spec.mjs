// surprisal.spec.mjs — the training page's surprisal section in Chromium, driven by labels, roles
// and visible text: after a run, the validation windows' mean −log p is the validation loss the
// chart shows, digit for digit; a typed text is scored token by token (the mean shown is the mean
// of the values read on the tokens), pointing or the arrow keys read a token's p; a character the
// model does not know gets the core's message; 中文; no horizontal overflow at 375, 1366 and 1920 px
// in English and 中文.
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';

const app = (page) => page.locator('#app');

test('surprisal: the validation windows average to the chart’s validation loss; a text token by token', async ({ page }, testInfo) => {
  await page.goto('/train/#steps=40&batch_size=4&sample_every=0&eval_interval=20');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await page.locator('#tr-start').click();
  await expect(app(page)).toHaveAttribute('data-train', 'done', { timeout: RUN_MS });
  const section = page.getByRole('region', { name: '8 · Surprisal: the loss, token by token' });
  const status = section.getByRole('status');

  // nothing scored yet: no table (not an empty header row)
  await expect(section.getByRole('table', { name: 'The most surprising tokens' })).toBeHidden();
  await section.getByRole('button', { name: 'Score the validation windows' }).click();
  await expect(status).toContainText('validation windows:');
  const m = (await status.textContent()).match(/: ([\d.]+) nats — the validation loss on the chart is ([\d.]+) \(step 40\)/);
  expect(m).not.toBeNull();
  expect(m[1]).toBe(m[2]);
  expect(Number(m[1])).toBe(await page.evaluate(() => window.trainPage.runtime.lastVal));

  await section.getByLabel('Text').fill('abc=abc↵cab=cab');
  await section.getByRole('button', { name: 'Score the text' }).click();
  await expect(status).toContainText('over the 14 predicted tokens');
  const mean = Number((await status.textContent()).match(/: ([\d.]+) nats/)[1]);
  const strip = section.getByRole('group', { name: /The tokens coloured by p/ });
  const nlls = await strip.locator('span[title]').evaluateAll((ss) => ss.map((s) => Number(s.title.match(/−log p = ([\d.]+)/)[1])));
  expect(nlls).toHaveLength(14);
  expect(Math.abs(nlls.reduce((a, b) => a + b, 0) / 14 - mean)).toBeLessThan(1e-3);
  // pointing reads a token; the keyboard moves through them
  await strip.locator('span[title]').nth(3).hover();
  await expect(section.locator('#tr-surprisal-readout')).toContainText('Position 4, “a”: p = ');
  await strip.focus();
  await page.keyboard.press('Home');
  await expect(section.locator('#tr-surprisal-readout')).toContainText('Position 0, “a”: the start of a window');
  await page.keyboard.press('ArrowRight');
  await expect(section.locator('#tr-surprisal-readout')).toContainText('Position 1, “b”: p = ');
  await expect(section.getByRole('table', { name: 'The most surprising tokens' }).locator('tbody tr')).toHaveCount(10);
  const widths = async (lang) => {
    for (const w of [375, 1366, 1920]) {
      await page.setViewportSize({ width: w, height: 900 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), `${lang} ${w} px`).toBeLessThanOrEqual(0);
      await page.locator('#tr-surprisal').screenshot({ path: testInfo.outputPath(`surprisal-${lang}-${w}.png`) }); // the region's name is the language's
    }
  };
  await widths('en');

  // a character the model does not know
  await section.getByLabel('Text').fill('abZ');
  await section.getByRole('button', { name: 'Score the text' }).click();
  await expect(status).toContainText('"Z"');

  await page.locator('#tr-lang-zh').click();
  await expect(page.getByRole('region', { name: '8 · 意外度：逐个词元看损失' }).getByRole('button', { name: '为验证窗口打分' })).toBeVisible();
  await widths('zh');
});
