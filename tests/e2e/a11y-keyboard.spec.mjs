// a11y-keyboard.spec.mjs — the learner tasks of both pages by keyboard alone (keyboard.press and
// type only: no click, no fill, no mouse), checking after every key that the focus is on an element
// (never lost to <body>) with a visible focus indicator (an outline or box-shadow in its computed
// style, a11y-helpers.mjs focusVisible): the skip link past the forms; train, pause; the maps, a
// head focused and opened in the stepper; the next-token sliders; the walk of a position; opening a
// model by the file input (its chooser answered by the test, as a person's file dialog would be);
// the stepper's tasks (a matrix typed and every step stepped through; an exercise answered);
// and no keyboard trap (Tab alone goes from the top of the page to its footer). Limits: a person's
// judgement of focus order is not measured; the stepper's skip link is in a11y.spec.mjs.
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';
import { focusVisible, focused } from './a11y-helpers.mjs';
import { ready } from './stepper-helpers.mjs';
import { nanoGptCkpt, metaPkl } from '../lib/foreign-files.mjs';
import { modelFiles } from './train-helpers.mjs';

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
  const files = modelFiles(testInfo, { 'ckpt.pt': nanoGptCkpt({ n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, vocab_size: CHARS.length }, 5), 'meta.pkl': metaPkl(CHARS) });
  await tabTo(page, { id: 'tr-open-file' }, { key: 'Shift+Tab' });
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.keyboard.press('Space')]);
  await chooser.setFiles(files);
  await expect(app(page)).toHaveAttribute('data-open', 'opened', { timeout: BOOT_MS });
  await focusVisible(page, 'a model opened');
});

test('keyboard only: Tab on from Pause while a run trains, each stop held until the run has moved on twice', async ({ page }) => {
  await page.goto('/train/#steps=20000&batch_size=4&eval_interval=50&sample_every=0');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await tabTo(page, { id: 'tr-start' });
  await page.keyboard.press('Enter');
  await expect(app(page)).toHaveAttribute('data-train', 'training', { timeout: RUN_MS });
  await expect(page.locator('#tr-pause')).toBeFocused();
  // every Tab stop to the footer, each kept while the page redraws the run's progress twice (a part
  // redrawn or disabled under the focus would drop it to <body>)
  const status = page.locator('#tr-status');
  for (let i = 0; i < 200; i++) {
    await page.keyboard.press('Tab');
    const f = await focusVisible(page, `Tab ×${i + 1} while training`);
    for (let k = 0; k < 2; k++) await expect(status).not.toHaveText(await status.textContent(), { timeout: RUN_MS });
    await focusVisible(page, `the run moving on under the focus on <${f.tag} id="${f.id}"> "${f.name}"`);
    if (f.id === 'tr-copy-link') break;
  }
  await expect(app(page)).toHaveAttribute('data-train', 'training');
});

test('keyboard only: generation token by token to its last, then played, the focus kept', async ({ page }) => {
  await page.goto('/train/#steps=12&batch_size=4&eval_interval=4&sample_every=0&seed=3&gen_max=3');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await tabTo(page, { id: 'tr-start' });
  await page.keyboard.press('Enter');
  await expect(app(page)).toHaveAttribute('data-train', /done|diverged/, { timeout: RUN_MS });
  // run the prompt, then Next by Enter until the third token: Next disables itself there
  await tabTo(page, { id: 'tr-gen-start' });
  await page.keyboard.press('Enter');
  await expect(page.locator('#tr-gen-next')).toBeEnabled({ timeout: RUN_MS });
  await tabTo(page, { id: 'tr-gen-next' });
  for (let i = 1; i <= 5 && (await page.locator('#tr-gen-next').evaluate((b) => b === document.activeElement)); i++) {
    const before = await page.locator('#tr-gen-status').textContent();
    await page.keyboard.press('Enter');
    await expect(page.locator('#tr-gen-status')).not.toHaveText(before, { timeout: RUN_MS });
    await focusVisible(page, `Next token, ${i} time(s)`);
  }
  await expect(page.locator('#tr-gen-next')).toBeDisabled();
  // Next and Play are done: the focus went to "Run the prompt"; Enter runs it again, Play to the end
  await expect(page.locator('#tr-gen-start')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.locator('#tr-gen-play')).toBeEnabled({ timeout: RUN_MS });
  await tabTo(page, { id: 'tr-gen-play' });
  await page.keyboard.press('Enter');
  await expect(page.locator('#tr-gen-play')).toBeDisabled({ timeout: RUN_MS });
  await expect(page.locator('#tr-gen-start')).toBeFocused();
  await focusVisible(page, 'Play to the last token');
});

test('keyboard only: no trap — Tab alone goes from the top of the page to its footer, focus always visible', async ({ page }) => {
  await page.goto('/train/');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await tabTo(page, { id: 'tr-copy-link' }, { max: 300 });
});

test('keyboard only, the stepper: type into a matrix, then step through every step', async ({ page }) => {
  await ready(page);
  // Tab to x's grid (its one Tab stop is the cell last focused: the first), type a number, Enter
  const cell = await tabTo(page, (f) => f.tag === 'td' && /aps-gc/.test(f.cls));
  expect(cell.name).toBe('x row 1, column 1');
  await page.keyboard.type('2');
  await page.keyboard.press('Enter');
  await expect(page.locator('[data-matrix="x"] td[data-r="0"][data-c="0"]')).toHaveText('2');
  await expect(page.locator('figure[data-panel="weights"] td[data-c]').first()).not.toHaveText('0.6698');
  await focusVisible(page, 'a cell typed and committed by Enter');
  // the view's radios: Tab to the checked one ("All steps"), ArrowRight picks "Step by step"
  await tabTo(page, (f) => f.key === 'view.all', { key: 'Shift+Tab' }); // the toolbar is above the inputs
  await page.keyboard.press('ArrowRight');
  await expect(page.locator('[data-key="view.step"]')).toHaveAttribute('aria-checked', 'true');
  await focusVisible(page, 'Step by step picked by ArrowRight');
  // Next by Enter to the last step; the focus stays on a control when Next can go no further
  await tabTo(page, (f) => f.key === 'step.next');
  const progress = page.locator('.aps-progress-text');
  for (let i = 1; i < 8; i++) {
    await expect(progress).toContainText(`Step ${i} of 8`);
    await page.keyboard.press('Enter');
    await expect(progress).toContainText(`Step ${i + 1} of 8`);
    await focusVisible(page, `Next to step ${i + 1}`);
  }
});

test('keyboard only, the stepper: pick an exercise, type the answers, check them', async ({ page }) => {
  await ready(page);
  // the exercise picker by Tab, its choice by the arrow keys (a closed <select> changes in place)
  await tabTo(page, (f) => f.key === 'exercise');
  const select = page.locator('select[data-key="exercise"]');
  for (let i = 0; i < 40 && (await select.inputValue()) !== 'identity-softmax'; i++) await page.keyboard.press('ArrowDown');
  await expect(select).toHaveValue('identity-softmax');
  await expect(page.locator('.aps-exercise')).toBeVisible();
  await focusVisible(page, 'an exercise picked');
  // Tab to the first answer; type it; Tab to the second, type it
  await tabTo(page, (f) => f.tag === 'input' && /aps-answer/.test(f.cls));
  await page.keyboard.type('0.6698');
  await page.keyboard.press('Tab');
  await focusVisible(page, 'Tab from the first answer');
  await page.keyboard.type('0.3302');
  // back to "Check answers" by Shift+Tab, Enter: the result is announced and the focus stays visible
  await tabTo(page, (f) => f.key === 'ex.check', { key: 'Shift+Tab' });
  await page.keyboard.press('Enter');
  await expect(page.getByRole('status').filter({ hasText: /2 of 4 right/ })).toBeVisible();
  await focusVisible(page, 'Check answers');
});

/**
 * Waits for the run's status line to change `n` times (the step counter moving on) and, after each
 * change, checks that the focus is still on the element with id `id` (visible, not <body>).
 */
async function heldThrough(page, id, n, what) {
  const status = page.locator('#tr-status');
  for (let k = 1; k <= n; k++) {
    await expect(status).not.toHaveText(await status.textContent(), { timeout: RUN_MS });
    const f = await focusVisible(page, `${what}, progress update ${k}`);
    expect(f.id, `${what}, progress update ${k}: the focus moved off #${id}`).toBe(id);
  }
}

for (const lang of ['en', 'zh']) {
  test(`keyboard only during a run (${lang}): start, progress, pause, resume, reset, a run to its end — the focus kept through every update`, async ({ page }) => {
    await page.goto(`/train/#steps=20000&batch_size=4&eval_interval=50&sample_every=0&lang=${lang}`);
    await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
    await tabTo(page, { id: 'tr-start' });
    await page.keyboard.press('Enter');
    await expect(app(page)).toHaveAttribute('data-train', 'training', { timeout: RUN_MS });
    // Start disabled itself: Pause has the focus, and keeps it while the chart and stats redraw
    await heldThrough(page, 'tr-pause', 4, 'Start');
    await page.keyboard.press('Enter');
    await expect(app(page)).toHaveAttribute('data-train', 'paused', { timeout: RUN_MS });
    await expect(page.locator('#tr-resume')).toBeFocused();
    await focusVisible(page, 'Pause');
    await page.keyboard.press('Enter');
    await expect(app(page)).toHaveAttribute('data-train', 'training', { timeout: RUN_MS });
    // Resume disabled itself: the focus went to Pause, the button that now does the next thing
    await heldThrough(page, 'tr-pause', 3, 'Resume');
    // Tab on to Reset (past the disabled buttons) while the run trains, held there, then Enter stops the run
    await tabTo(page, { id: 'tr-reset' });
    await heldThrough(page, 'tr-reset', 2, 'Tab to Reset');
    await page.keyboard.press('Enter');
    await expect(app(page)).toHaveAttribute('data-train', 'idle', { timeout: RUN_MS });
    // Reset disabled itself (no run left): the focus is on Start, where the learner begins again
    await expect(page.locator('#tr-start')).toBeFocused();
    await focusVisible(page, 'Reset');
    // a run that ends under the focus: Pause disables itself at the end, the focus goes to Start
    await tabTo(page, { id: 'tr-f-steps' }, { key: 'Shift+Tab' });
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('60');
    await tabTo(page, { id: 'tr-start' });
    await page.keyboard.press('Enter');
    await expect(app(page)).toHaveAttribute('data-train', /training|done/, { timeout: RUN_MS });
    await expect(app(page)).toHaveAttribute('data-train', /done|diverged/, { timeout: RUN_MS });
    await expect(page.locator('#tr-start')).toBeFocused();
    await focusVisible(page, 'the run ended under the focus on Pause');
  });
}
