// a11y-keyboard.spec.mjs — the training page's learner tasks by keyboard alone (keyboard.press and
// type only: no click, no fill, no mouse), checking after every key that the focus is on an element
// (never lost to <body>) with a visible focus indicator (an outline or box-shadow in its computed
// style, a11y-helpers.mjs focusVisible): the skip link past the forms; train, pause; the maps, a
// head focused and opened in the stepper; the next-token sliders; the walk of a position; opening a
// model by the file input (its chooser answered by the test, as a person's file dialog would be);
// and no keyboard trap (Tab alone goes from the top of the page to its footer). Limits: a person's
// judgement of focus order is not measured; the stepper's skip link is in a11y.spec.mjs.
import { writeFileSync } from 'node:fs';
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';
import { focusVisible, focused } from './a11y-helpers.mjs';
import { nanoGptCkpt, metaPkl } from '../lib/foreign-files.mjs';

const app = (page) => page.locator('#app');

/**
 * Presses `key` (Tab by default) until the focused element matches `want` ({id} or a predicate on
 * focused()'s answer), at most `max` times, checking the focus is visible and not lost at each stop.
 */
async function tabTo(page, want, { key = 'Tab', max = 200 } = {}) {
  const ok = typeof want === 'function' ? want : (f) => f.id === want.id;
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(key);
    const f = await focusVisible(page, `${key} ×${i + 1} towards ${JSON.stringify(want.id ?? 'a target')}`);
    if (ok(f)) return f;
  }
  throw new Error(`${key} ×${max} never reached ${want.id ?? want}`);
}

test('keyboard only: skip link, train and pause, a head into the stepper, the sliders, the walk, open a model', async ({ page, context }, testInfo) => {
  await page.goto('/train/#steps=20000&batch_size=4&eval_interval=50&sample_every=0');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  // the first Tab stop: the skip link, seen when focused; Enter lands on the first section below training
  await page.keyboard.press('Tab');
  await expect(page.locator('#tr-skip')).toBeFocused();
  await expect(page.locator('#tr-skip')).toHaveText('Skip to the sections below training');
  await expect(page.locator('#tr-skip')).toBeInViewport();
  await focusVisible(page, 'the first Tab');
  const hash = await page.evaluate(() => location.hash);
  await page.keyboard.press('Enter');
  const landed = await focused(page);
  expect(landed.inBody).toBe(true);
  expect(await page.evaluate(() => document.activeElement.matches('section, [role="region"]') && !document.activeElement.closest('.tr-top'))).toBe(true);
  expect(await page.evaluate(() => location.hash)).toBe(hash);

  // train and pause: from the top, Tab to Start, Enter; Tab to Pause, Enter
  await page.keyboard.press('Shift+Tab');
  await tabTo(page, { id: 'tr-start' }, { key: 'Shift+Tab' });
  await page.keyboard.press('Enter');
  await expect(app(page)).toHaveAttribute('data-train', 'training', { timeout: RUN_MS });
  // Start disabled itself: the focus moved to Pause, not to <body>; Pause moves it to Resume
  await expect(page.locator('#tr-pause')).toBeFocused();
  await focusVisible(page, 'Start');
  await page.keyboard.press('Enter');
  await expect(app(page)).toHaveAttribute('data-train', 'paused', { timeout: RUN_MS });
  await expect(page.locator('#tr-resume')).toBeFocused();
  await focusVisible(page, 'Pause');

  // the maps: Tab to "Show attention maps", Enter; Tab to a head's map; Enter opens it in the stepper
  await tabTo(page, { id: 'tr-maps' });
  await page.keyboard.press('Enter');
  await expect(page.locator('#tr-maps-box')).toHaveAttribute('data-painted', /^[1-9]/, { timeout: RUN_MS });
  await focusVisible(page, 'Show attention maps');
  const head = await tabTo(page, (f) => /^Layer 1, head 2: open in the Attention Stepper$/.test(f.name));
  expect(head.tag).toBe('a');
  const [stepper] = await Promise.all([context.waitForEvent('page'), page.keyboard.press('Enter')]);
  await expect(stepper.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await stepper.close();

  // the walk: Tab to Position, ArrowUp picks the position before the last; Tab to "Walk", Enter
  await tabTo(page, { id: 'tr-walk-position' });
  await page.keyboard.press('ArrowUp');
  await tabTo(page, { id: 'tr-walk-go' });
  await page.keyboard.press('Enter');
  await expect(page.locator('#tr-walk-status')).toContainText(/^Position \d+ /, { timeout: RUN_MS });
  await focusVisible(page, 'a position picked');

  // the next-token bars: Tab to the temperature and top-k sliders, move them by the arrow keys
  await tabTo(page, { id: 'tr-next-temperature' });
  const t0 = await page.locator('#tr-next-temperature').inputValue();
  await page.keyboard.press('ArrowRight');
  await expect(page.locator('#tr-next-temperature')).not.toHaveValue(t0);
  await expect(app(page)).toHaveAttribute('data-next', 'ready', { timeout: RUN_MS });
  await tabTo(page, { id: 'tr-next-top_k' });
  await page.keyboard.press('Home');
  await expect(page.locator('#tr-next-top_k')).toHaveValue('1');
  await expect(app(page)).toHaveAttribute('data-next', 'ready', { timeout: RUN_MS });
  await expect(page.locator('#tr-next-facts')).toContainText('before top-k 1');
  await focusVisible(page, 'the sliders moved');

  // open a model: the file input reached by Shift+Tab (it is above), Space opens the chooser
  const CHARS = [...'\n !,:;ERMOTabdehilmnorstuw'].sort();
  const files = Object.entries({ 'ckpt.pt': nanoGptCkpt({ n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, vocab_size: CHARS.length }, 5), 'meta.pkl': metaPkl(CHARS) })
    .map(([name, bytes]) => { const p = testInfo.outputPath(name); writeFileSync(p, bytes); return p; });
  await tabTo(page, { id: 'tr-open-file' }, { key: 'Shift+Tab' });
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.keyboard.press('Space')]);
  await chooser.setFiles(files);
  await expect(app(page)).toHaveAttribute('data-open', 'opened', { timeout: BOOT_MS });
  await focusVisible(page, 'a model opened');
});

test('keyboard only: no trap — Tab alone goes from the top of the page to its footer, focus always visible', async ({ page }) => {
  await page.goto('/train/');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await tabTo(page, { id: 'tr-copy-link' }, { max: 300 });
});
