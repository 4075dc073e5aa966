// a11y-focus.spec.mjs — WCAG 2.4.11 (focus not obscured, minimum) and 1.4.13 (content on hover or
// focus) on both pages. 2.4.11: Tab alone through every stop of the stepper (a cell of each grid
// explained as the focus reaches it, the explanation box sticky at the bottom of a 1280 × 600 window)
// and of the training page after a run (maps, walk, model view), in English and 中文: after each key
// the focused element is on the screen and not covered where it is (points sampled over its box,
// hit-tested: some must land on it, not on a sticky box or anything else drawn over it). 1.4.13:
// the stepper's explanation of a hovered cell stays while the pointer moves onto it (hoverable) and
// goes with Escape, the pointer still there (dismissible); the walk's explanation of a hovered
// number stays while the pointer moves onto it. A press on a button partly under the box is a
// click: the focus it gives is scrolled clear after the release, not between. Limits: Chromium,
// one window size per page; the cells' native title tooltips are the browser's (exempt from
// 1.4.13) and not tested; the stepper's explanation stays for a pointer moved straight onto its
// box (a path across other content on the way clears it, as leaving the cells does).
import { test, expect, BOOT_MS, openStepper } from './fixtures.mjs';
import { RUN, walkAfterRun } from './a11y-helpers.mjs';

/**
 * In the page: the focused element (through shadow roots; a visually hidden input by its label)
 * and whether a person sees it: its box meets the window and, of 25 points sampled over the part
 * in the window, at least one hit-tests to it (or inside it, or to an ancestor that takes no
 * pointer). Returns {lost} or {what, again (the first stop reached again), hidden: why or ''}.
 */
const SEEN = () => {
  let e = document.activeElement;
  while (e?.shadowRoot?.activeElement) e = e.shadowRoot.activeElement;
  if (!e || e === document.body || e === document.documentElement) return { lost: true };
  const again = e === window.firstStop; // back at the first stop: the walk is done
  window.firstStop ??= e;
  const what = `<${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className && typeof e.className === 'string' ? `.${e.className.trim().split(/\s+/).join('.')}` : ''}> "${(e.getAttribute('aria-label') || e.textContent || '').trim().slice(0, 30)}"`;
  let shown = e;
  const box = (x) => x.getBoundingClientRect();
  if (e.labels?.length && (box(e).width < 4 || box(e).height < 4 || getComputedStyle(e).opacity === '0')) shown = e.labels[0];
  const r = box(shown);
  const [x0, x1, y0, y1] = [Math.max(r.left, 0), Math.min(r.right, innerWidth), Math.max(r.top, 0), Math.min(r.bottom, innerHeight)];
  if (x1 - x0 < 1 || y1 - y0 < 1) return { what, again, hidden: `outside the window (${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.width)}×${Math.round(r.height)})` };
  const root = e.getRootNode();
  const tops = new Set();
  for (let i = 0; i < 5; i++) {
    for (let j = 0; j < 5; j++) {
      const hit = root.elementFromPoint(x0 + ((x1 - x0) * (i + 0.5)) / 5, y0 + ((y1 - y0) * (j + 0.5)) / 5);
      if (hit && (shown.contains(hit) || hit.contains(shown))) return { what, again, hidden: '' };
      if (hit) tops.add(`<${hit.tagName.toLowerCase()}.${String(hit.className).trim().split(/\s+/).join('.')}>`);
    }
  }
  return { what, again, hidden: `covered by ${[...tops].join(', ')}` };
};

/** Two frames: what the page does after a focus move (a box grown, a scroll) has been laid out. */
const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

/**
 * Presses Tab from where the focus is until it comes back to the first stop it reached (or `most`
 * presses), checking after each that the focus is seen; returns the stops and the failures.
 */
async function tabThrough(page, most) {
  await page.evaluate(() => { document.activeElement?.blur?.(); window.scrollTo(0, 0); window.firstStop = null; });
  const bad = [];
  let n = 0;
  let wrapped = 0;
  for (; n < most; n++) {
    await page.keyboard.press('Tab');
    await frames(page);
    const s = await page.evaluate(SEEN);
    // past the page's last stop the focus leaves for the browser's own controls (<body> here),
    // once a round; the walk starts where the focus was, so that may come at any point
    if (s.lost) { if (wrapped++) bad.push(`Tab ${n + 1}: the focus is lost to <body>`); continue; }
    if (s.again) break;
    if (s.hidden) bad.push(`Tab ${n + 1}: ${s.what} ${s.hidden}`);
  }
  return { stops: n, bad };
}

test.describe('2.4.11 focus not obscured: Tab through every stop', () => {
  test.use({ viewport: { width: 1280, height: 600 } });
  for (const lang of ['en', 'zh']) {
    test(`the stepper, its explanation box sticky at the bottom (${lang})`, async ({ page }) => {
      await openStepper(page, lang);
      // the box docked under the steps, sticky at the window's bottom (not the side column of wide screens)
      await page.locator('figure[data-panel="weights"] td[data-r="0"][data-c="0"]').first().focus();
      expect(await page.locator('.aps-pipeline > .aps-explain').evaluate((e) => getComputedStyle(e).position)).toBe('sticky');
      const { stops, bad } = await tabThrough(page, 400);
      expect(stops, 'Tab stops walked').toBeGreaterThan(20);
      expect(bad).toEqual([]);
    });
    // a press focuses the button; were that focus scrolled clear of the box before the release,
    // the release would land beside the button and the click be lost (a frame passes between the
    // two here, as under load): nothing scrolls while the button is held, the click steps on, and
    // then the button is scrolled clear of the box as a keyboard's focus would be
    test(`a press on Next, partly under the sticky explanation box, is a click (${lang})`, async ({ page }) => {
      await openStepper(page, lang);
      await page.locator('[data-key="view.step"]').click();
      const progress = page.locator('.aps-progress-text');
      const before = await progress.textContent();
      // the window scrolled so that Next's top 12 px show above the box docked at its bottom
      const at = await page.evaluate(() => {
        const next = document.querySelector('[data-key="step.next"]');
        const box = document.querySelector('.aps-pipeline > .aps-explain');
        window.scrollBy({ top: next.getBoundingClientRect().top - (box.getBoundingClientRect().top - 12), behavior: 'instant' });
        const n = next.getBoundingClientRect();
        const b = box.getBoundingClientRect();
        const x = n.left + n.width / 2;
        const y = n.top + 6;
        return { x, y, covered: b.top < n.bottom && b.top > n.top, onNext: document.elementFromPoint(x, y) === next, scrollY };
      });
      expect(at.covered, 'the box covers the lower part of Next').toBe(true);
      expect(at.onNext, 'the press point hit-tests to Next').toBe(true);
      await page.mouse.move(at.x, at.y);
      await page.mouse.down();
      await frames(page);
      expect(await page.evaluate(() => scrollY), 'nothing scrolls while Next is held').toBe(at.scrollY);
      await page.mouse.up();
      await expect(progress).not.toHaveText(before);
      await frames(page);
      const seen = await page.evaluate(SEEN);
      expect(await page.evaluate(() => document.activeElement?.dataset.key)).toBe('step.next');
      expect(seen.hidden, 'Next, still focused, is scrolled clear of the box after the click').toBe('');
    });
    // and a cell pressed where the box covers most of it (its explanation then grows over it too)
    // is scrolled clear once released, as Tab's focus is. The press is the page's events in their
    // order (mousedown, the focus in the same task; mouseup later): a real pointer moved onto a
    // cell first shows the hovered cell's explanation, which grows over the pointer
    test(`a cell pressed partly under the box is scrolled clear after the release (${lang})`, async ({ page }) => {
      await openStepper(page, lang);
      const y0 = await page.evaluate(() => {
        const cell = document.querySelector('figure[data-panel="weights"] td[data-r="1"][data-c="0"]');
        const box = document.querySelector('.aps-pipeline > .aps-explain');
        window.scrollBy({ top: cell.getBoundingClientRect().top - (box.getBoundingClientRect().top - 8), behavior: 'instant' });
        cell.dispatchEvent(new MouseEvent('mousedown', { bubbles: true, cancelable: true }));
        cell.focus();
        return scrollY;
      });
      await frames(page);
      expect(await page.evaluate(() => scrollY), 'nothing scrolls while the cell is held').toBe(y0);
      await page.evaluate(() => document.activeElement.dispatchEvent(new MouseEvent('mouseup', { bubbles: true, cancelable: true })));
      await frames(page);
      const seen = await page.evaluate(SEEN);
      expect(seen.what).toMatch(/^<td/);
      expect(seen.hidden, 'the pressed cell, focused, is clear of the box').toBe('');
    });
    test(`the training page after a run, maps, walk and model view shown (${lang})`, async ({ page }) => {
      test.slow(); // a run, then every stop of the page
      await walkAfterRun(page, `${RUN}&lang=${lang}`);
      const { stops, bad } = await tabThrough(page, 600);
      expect(stops, 'Tab stops walked').toBeGreaterThan(40);
      expect(bad).toEqual([]);
    });
  }
});

test.describe('1.4.13 content on hover or focus', () => {
  test.use({ viewport: { width: 1280, height: 600 } });
  test('the stepper: a hovered cell\'s explanation is hoverable and goes with Escape', async ({ page }) => {
    await page.goto('/');
    await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
    const box = page.locator('.aps-explain');
    const cell = page.locator('figure[data-panel="weights"] td[data-r="1"][data-c="0"]').first();
    await cell.scrollIntoViewIfNeeded();
    await cell.hover();
    await expect(box).toContainText(/\[2,\s*1\]|2, 1/);
    const said = await box.textContent();
    // the pointer straight from the cell onto the box, then about inside it: the explanation stays
    const b = await box.boundingBox();
    await page.mouse.move(b.x + 20, b.y + 20);
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 4 });
    await expect(box).toHaveText(said);
    // Escape, the pointer still on it: the explanation goes (the box back to its hint)
    await page.keyboard.press('Escape');
    await expect(box).not.toHaveText(said);
    await expect(box.locator('.aps-explain-close')).toHaveCount(0);
    // hovered again, the pointer leaving for the page: it goes
    await cell.hover();
    await expect(box).toHaveText(said);
    await page.mouse.move(2, 2, { steps: 4 });
    await expect(box).not.toHaveText(said);
  });

  test('the training page: the walk\'s explanation of a hovered number stays while the pointer moves onto it', async ({ page }) => {
    test.slow();
    await walkAfterRun(page, '#steps=6&batch_size=2&eval_interval=3&sample_every=0&preset=custom&n_embd=32');
    const cell = page.locator('.tr-walk-cell:not(:disabled)').nth(1);
    await cell.scrollIntoViewIfNeeded();
    await cell.hover();
    const explain = page.locator('.tr-walk-explain');
    await expect(explain).not.toBeEmpty();
    const said = await explain.textContent();
    const b = await explain.boundingBox();
    await page.mouse.move(b.x + b.width / 2, b.y + Math.min(20, b.height / 2), { steps: 6 });
    await expect(explain).toHaveText(said);
  });
});
