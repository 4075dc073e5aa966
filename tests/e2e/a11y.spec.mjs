// a11y.spec.mjs — accessibility, measured: axe-core (@axe-core/playwright) with the WCAG 2.2 A
// and AA rules on the states a learner reaches (the stepper in its modes, an exercise checked and
// hinted, large mode, 中文, the training page before and after a run, embed.html, the course
// page's <attention-stepper>, the SCORM player, <gpt-lab>), plus what axe cannot see: the skip
// link walked by keyboard, prefers-reduced-motion and forced colours. Every state must have zero
// violations; a rule turned off is named in a11y-helpers.mjs with its reason. Its siblings:
// a11y-train (every training-page state, en and zh), a11y-stepper (the stepper's other states, en
// and zh), a11y-keyboard, a11y-views (reflow, colour, motion, names, live regions), a11y-graphics
// (non-text contrast, forced colours and reflow after a run, screenshots). What is not yet covered is listed in docs/accessibility.md.
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';
import { trained } from './train-helpers.mjs';
import { noViolations, largeMode } from './a11y-helpers.mjs';

const gridCell = (page, m, r, c) => page.locator(`[data-matrix="${m}"] td[data-r="${r}"][data-c="${c}"]`);
const answer = (page, panel, r, c) => page.locator(`figure[data-panel="${panel}"] td[data-r="${r}"][data-c="${c}"] input.aps-answer`);

test('stepper: the default state, a cell focused and explained, Q/K/V input mode', async ({ page }) => {
  await ready(page);
  await noViolations(page, 'the stepper as it opens');
  await page.locator('figure[data-panel="weights"] td[data-r="0"][data-c="1"]').focus();
  await expect(page.locator('.aps-explain')).toBeVisible();
  await noViolations(page, 'a weights cell focused, its arithmetic explained');
  await page.locator('select[data-key="preset"]').selectOption('two-token'); // Q, K, V typed directly
  await expect(page.locator('[data-matrix="Q"]')).toBeVisible();
  await noViolations(page, 'the Q/K/V input mode');
});

test('stepper: backward mode, all steps and step by step', async ({ page }) => {
  await ready(page);
  await page.locator('[data-key="direction.backward"]').click();
  await expect(page.locator('figure[data-panel="d_out"]')).toBeVisible();
  await noViolations(page, 'backward mode');
  await page.locator('[data-key="upstream.d_out"]').click();
  await expect(gridCell(page, 'd_out', 0, 0)).toBeVisible();
  await noViolations(page, 'backward mode with a typed dOut');
  await page.locator('[data-key="view.step"]').click();
  const progress = page.locator('.aps-progress-text');
  const total = Number((await progress.textContent()).match(/of (\d+)/)[1]);
  // the first step, the second (a step done, panels shown as sources) and the last
  for (let i = 1; i <= total; i++) {
    await expect(progress).toContainText(`Step ${i} of ${total}`);
    if (i <= 2 || i === total) await noViolations(page, `backward, step ${i} of ${total}`);
    if (i < total) await page.locator('[data-key="step.next"]').click();
  }
});

test('stepper: forward step by step, each step', async ({ page }) => {
  await ready(page);
  await page.locator('[data-key="view.step"]').click();
  const progress = page.locator('.aps-progress-text');
  for (let i = 1; i <= 8; i++) {
    await expect(progress).toContainText(`Step ${i} of 8`);
    if (i <= 2 || i === 8) await noViolations(page, `forward, step ${i} of 8`);
    if (i < 8) await page.locator('[data-key="step.next"]').click();
  }
});

test('stepper: an exercise checked with wrong answers, then every hint shown', async ({ page }) => {
  await ready(page);
  await page.locator('select[data-key="exercise"]').selectOption('identity-softmax');
  await expect(page.locator('.aps-exercise')).toBeVisible();
  await noViolations(page, 'an exercise before any answer');
  await answer(page, 'weights', 0, 0).fill('0.6698');
  await answer(page, 'weights', 0, 1).fill('0.35');
  await answer(page, 'weights', 1, 0).fill('abc');
  await page.locator('[data-key="ex.check"]').click();
  await expect(page.locator('.aps-exercise-result')).toContainText('1 of 4 right');
  await noViolations(page, 'an exercise checked, right, wrong, not-a-number and empty answers');
  await answer(page, 'weights', 0, 1).focus();
  await page.locator('[data-key="ex.hint"]').click();
  await expect(page.locator('.aps-explain .aps-ex-formula')).toBeVisible();
  await page.locator('[data-key="ex.hint"]').click();
  await answer(page, 'weights', 0, 1).focus();
  await page.keyboard.press('?');
  await expect(page.locator('.aps-explain .aps-ex-result')).toBeVisible();
  await noViolations(page, 'an exercise with all three hints of a wrong cell shown');
});

test('stepper: large mode (40 tokens, heatmaps) and 中文', async ({ page }) => {
  await ready(page);
  await largeMode(page);
  await noViolations(page, 'large mode, 40 tokens');
  await page.locator('[data-key="lang.zh"]').click();
  await expect(page.locator('.aps-root')).toHaveAttribute('lang', 'zh-CN');
  await noViolations(page, 'large mode in Chinese');
  await page.locator('select[data-key="preset"]').selectOption('identity');
  await expect(page.locator('.aps-large')).toBeHidden();
  await noViolations(page, 'the stepper in Chinese');
});

test('training page: before a run and after a short run', async ({ page }) => {
  await page.goto('/train/');
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await noViolations(page, 'the training page before a run');
  await trained(page, '#steps=12&batch_size=4&eval_interval=4&sample_every=0');
  await noViolations(page, 'the training page after a 12-step run');
  // the "Take it apart" section: the lens's grid with an exercise answered, then patching's maps
  const interp = page.locator('#tr-interp');
  await interp.getByLabel('Exercise').selectOption({ label: 'Which layer first predicts the answer?' });
  await interp.getByRole('button', { name: 'Show the lens' }).click();
  await expect(page.locator('#app')).toHaveAttribute('data-interp', 'lens-ready');
  await interp.locator('#tr-interp-lens td.tr-interp-cell').first().click();
  await expect(interp.locator('#tr-interp-ex-result')).not.toBeEmpty();
  await noViolations(page, 'the training page: the logit lens, an exercise answered');
  await interp.getByRole('radio', { name: 'Patching' }).click();
  await interp.getByRole('button', { name: 'Patch', exact: true }).click();
  await expect(page.locator('#app')).toHaveAttribute('data-interp', /patch-ready|failed/);
  await noViolations(page, 'the training page: patching');
});

test('embed.html, and the course page with two <attention-stepper> and an iframe', async ({ page }) => {
  await page.goto('/embed.html#preset=causal-4');
  await expect(page.locator('figure[data-panel="weights"] td[data-c]').first()).toHaveText('1', { timeout: BOOT_MS });
  await noViolations(page, 'embed.html');
  await page.goto('/examples/');
  await expect(page.locator('#stepper-identity figure[data-panel="weights"] td[data-c]').first()).toHaveText('0.6698', { timeout: BOOT_MS });
  await expect(page.locator('#stepper-causal figure[data-panel="weights"] td[data-c]').first()).toHaveText('1', { timeout: BOOT_MS });
  await expect(page.frameLocator('#frame-identity').locator('figure[data-panel="weights"] td[data-c]').first()).toHaveText('0.6698', { timeout: BOOT_MS });
  await noViolations(page, 'the examples page (its Chinese stepper holds an exercise)');
});

test('the SCORM player, without an LMS, in place', async ({ page }) => {
  await page.goto('/scorm/player.html');
  await expect(page.locator('input.aps-answer').first()).toBeVisible({ timeout: BOOT_MS });
  await noViolations(page, 'the SCORM player');
});

test('keyboard: the skip link is the stepper\'s first Tab stop and moves the focus to the steps', async ({ page }) => {
  await ready(page);
  const skip = page.locator('[data-key="skip-to-steps"]');
  await page.keyboard.press('Tab'); // the site's link to the training page
  await page.keyboard.press('Tab');
  await expect(skip).toBeFocused();
  await expect(skip).toHaveText('Skip to the steps');
  await expect(skip).toBeInViewport(); // seen once focused
  const hash = await page.evaluate(() => location.hash);
  await page.keyboard.press('Enter');
  await expect(page.locator('section.aps-pipeline')).toBeFocused();
  expect(await page.evaluate(() => location.hash)).toBe(hash); // the permalink's hash is untouched
  // the next Tab reaches the steps' own controls, not the inputs
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => !!document.activeElement.closest('section.aps-pipeline'))).toBe(true);
  await page.locator('[data-key="lang.zh"]').click();
  await expect(skip).toHaveText('跳到计算步骤');
});

test('prefers-reduced-motion: a script\'s scroll jumps instead of gliding, and no CSS animation runs', async ({ page }) => {
  // every scrollIntoView's options, recorded before the page's scripts run
  await page.addInitScript(() => {
    window.__scrolls = [];
    const own = Element.prototype.scrollIntoView;
    Element.prototype.scrollIntoView = function (o) { window.__scrolls.push(o?.behavior ?? null); return own.call(this, o); };
  });
  await ready(page);
  await page.locator('[data-key="direction.backward"]').click();
  const chip = page.locator('figure[data-panel="d_weights"] .aps-chip').first();
  await chip.click();
  await expect.poll(() => page.evaluate(() => window.__scrolls.at(-1))).toBe('smooth');
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await chip.click();
  await expect.poll(() => page.evaluate(() => window.__scrolls.at(-1))).toBe('auto');
  await page.locator('[data-key="skip-to-steps"]').focus();
  await page.keyboard.press('Enter');
  await expect.poll(() => page.evaluate(() => window.__scrolls.at(-1))).toBe('auto');
  // nothing on the page animates or transitions
  const moving = await page.evaluate(() => [...document.querySelectorAll('.aps-root *')].filter((e) => {
    const s = getComputedStyle(e);
    return s.animationName !== 'none' || (s.transitionDuration.split(',').some((d) => parseFloat(d) > 0));
  }).length);
  expect(moving).toBe(0);
});

test.describe('<gpt-lab>', () => {
  // axe reads the stylesheets of the element's shadow root by adding <style> copies there, which
  // the page's strict CSP refuses (a console error); the lab's own CSP is tested in csp.spec.mjs
  // and gpt-lab.spec.mjs, without axe
  test.use({ ignoreProblems: [/^console\.error: Applying inline style violates the following Content Security Policy directive 'style-src 'self''/] });

  test('<gpt-lab> on a course page: every section, before a run and after a short one', async ({ page, baseURL }) => {
    // a course page on the tool's origin (the element's worker must start there), strict CSP
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8">
  <meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:">
  <title>A lesson</title><link rel="icon" href="data:,"><script type="module" src="/gpt-lab.js"></script></head>
  <body><main><h1>A lesson</h1><gpt-lab id="lab" task="copy" steps="8" batch-size="4" sections="all"></gpt-lab></main></body></html>`;
    await page.route(`${baseURL}/a11y-lab.html`, (r) => r.fulfill({ contentType: 'text/html; charset=utf-8', body: html }));
    await page.goto('/a11y-lab.html');
    const lab = page.locator('gpt-lab#lab');
    await expect(lab).toHaveAttribute('data-status', 'idle', { timeout: BOOT_MS });
    await expect(lab.getByRole('heading', { level: 2 })).toHaveCount(10);
    await noViolations(page, '<gpt-lab> with every section, before a run');
    await lab.getByRole('button', { name: 'Start training' }).click();
    await expect(lab).toHaveAttribute('data-status', /done|diverged/, { timeout: RUN_MS });
    await noViolations(page, '<gpt-lab> with every section, after an 8-step run');
  });
});

test('forced-colors: the step dots keep done and current apart, and the focus ring stays', async ({ page }) => {
  await ready(page);
  await page.emulateMedia({ forcedColors: 'active' });
  await page.locator('[data-key="view.step"]').click();
  await page.locator('[data-key="step.next"]').click();
  await page.locator('[data-key="step.next"]').click();
  const fill = (i) => page.locator('.aps-dot').nth(i).evaluate((b) => getComputedStyle(b, '::before').backgroundColor);
  const [done, current, ahead] = [await fill(0), await fill(2), await fill(3)];
  expect(new Set([done, current, ahead]).size).toBe(3);
  await page.locator('[data-key="step.next"]').focus();
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Tab');
  const ring = await page.locator('[data-key="step.next"]').evaluate((b) => getComputedStyle(b).outlineStyle);
  expect(ring).not.toBe('none');
});
