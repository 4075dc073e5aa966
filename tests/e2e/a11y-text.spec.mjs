// a11y-text.spec.mjs — WCAG 2.2's text spacing (1.4.12) on the boxes the browser lays out: the
// criterion's line, paragraph, letter and word spacing injected on both pages, in English and 中文:
// no text cut off by a box that hides its overflow, no sideways page scroll. Limits: the text drawn
// on canvases (the matrices' numbers, the maps) keeps the page's spacing; text-only zoom (a root
// font of 200 %) does not apply, as the pages size text in px: 200 % is the browser's zoom, which
// a11y-views.spec.mjs measures with the reflow at 320 px.
import { test, expect } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';
import { afterRun, RUN } from './a11y-helpers.mjs';

/** WCAG 1.4.12's spacing, as the criterion states it (the bookmarklets' CSS). */
const SPACING = `* { line-height: 1.5 !important; letter-spacing: 0.12em !important; word-spacing: 0.16em !important; }
p { margin-bottom: 2em !important; }`;

/**
 * In the page: adds `css` as a constructed style sheet (the pages' CSP admits no inline <style>),
 * then → {applied, scrollWidth, clientWidth, cut}: `cut` lists the elements holding text that hide
 * an overflow (overflow hidden or clip) their content exceeds by more than a pixel, each named.
 * Matrices and heat maps scroll inside their own boxes (overflow auto), so they are not cut.
 */
async function withStyle(page, css) {
  return page.evaluate(async (text) => {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(text);
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const se = document.scrollingElement;
    const cut = [];
    for (const e of document.querySelectorAll('body *')) {
      const s = getComputedStyle(e);
      const hides = (v) => v === 'hidden' || v === 'clip';
      if (!hides(s.overflowX) && !hides(s.overflowY)) continue;
      if (!e.getClientRects().length || s.visibility === 'hidden' || e.closest('[hidden], .tr-file-hidden, .aps-sr-only, .sr-only') || e.id === 'tr-skip') continue;
      // text of its own (a direct text node or an inline child), not a box of boxes
      if (![...e.childNodes].some((n) => (n.nodeType === 3 && /\S/.test(n.textContent)) || (n.nodeType === 1 && getComputedStyle(n).display === 'inline' && /\S/.test(n.textContent)))) continue;
      // a 1 × 1 px visually hidden text is read, not seen
      if (e.clientWidth <= 1 || e.clientHeight <= 1) continue;
      // a cell of a matrix drawn on its canvas: the table's text is transparent (the canvas shows the numbers)
      if (s.color === 'rgba(0, 0, 0, 0)') continue;
      const over = (hides(s.overflowX) && e.scrollWidth > e.clientWidth + 1) || (hides(s.overflowY) && e.scrollHeight > e.clientHeight + 1);
      if (over && s.textOverflow !== 'ellipsis') cut.push(`<${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}.${[...e.classList].join('.')}> "${e.textContent.trim().slice(0, 30)}" ${e.scrollWidth}×${e.scrollHeight} in ${e.clientWidth}×${e.clientHeight}`);
    }
    const p = document.querySelector('p');
    return { applied: getComputedStyle(p).letterSpacing, font: getComputedStyle(p).fontSize, scrollWidth: se.scrollWidth, clientWidth: se.clientWidth, cut };
  }, css);
}

for (const lang of ['en', 'zh']) {
  test.describe(`text spacing (1.4.12), ${lang}`, () => {
    test('the stepper, every panel painted', async ({ page }, testInfo) => {
      await page.addInitScript((l) => localStorage.setItem('attention-playground.lang', l), lang);
      await ready(page);
      await page.evaluate(() => window.attentionStepper.paintAll());
      for (const [what, css] of [['text spacing', SPACING]]) {
        const o = await withStyle(page, css);
        expect(parseFloat(o.applied), 'the spacing applied').toBeGreaterThan(0);
        await page.evaluate(() => window.attentionStepper.paintAll());
        await page.screenshot({ path: testInfo.outputPath(`stepper-${what.replace(/\W+/g, '-')}-${lang}.png`) });
        expect(o.cut, `${what}: text cut off`).toEqual([]);
        expect(o.scrollWidth, `${what}: the page scrolls sideways`).toBeLessThanOrEqual(o.clientWidth);
        await page.evaluate(() => { document.adoptedStyleSheets = []; });
      }
    });

    test('the training page after a run, its sections in use', async ({ page }, testInfo) => {
      await afterRun(page, `${RUN}&lang=${lang}`);
      for (const [what, css] of [['text spacing', SPACING]]) {
        const o = await withStyle(page, css);
        expect(parseFloat(o.applied), 'the spacing applied').toBeGreaterThan(0);
        await page.screenshot({ path: testInfo.outputPath(`train-${what.replace(/\W+/g, '-')}-${lang}.png`), fullPage: true });
        expect(o.cut, `${what}: text cut off`).toEqual([]);
        expect(o.scrollWidth, `${what}: the page scrolls sideways`).toBeLessThanOrEqual(o.clientWidth);
        await page.evaluate(() => { document.adoptedStyleSheets = []; });
      }
    });
  });
}
