// stepper-frame.spec.mjs — what the stepper's cheaper edit frame must not lose (docs/performance-journal.md,
// "The stepper: edit → repaint"): the input grids clip a cell (with an ellipsis) only when its text
// could overflow, yet a long value never spills out of its cell; the cell editor looks and sits as
// before inside its cell; the panels' numbers, no longer clipped cell by cell, fit their cells.
import { test, expect, settled } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

const gridCell = (page, m, r, c) => page.locator(`[data-matrix="${m}"] td[data-r="${r}"][data-c="${c}"]`);

/** A cell's box, its text's width and whether it clips (its computed overflow). */
const cellBox = (loc) => loc.evaluate((td) => {
  const r = td.getBoundingClientRect();
  const range = document.createRange();
  range.selectNodeContents(td);
  return { left: r.left, right: r.right, width: r.width, text: range.getBoundingClientRect().width, scroll: td.scrollWidth, client: td.clientWidth,
    overflow: getComputedStyle(td).overflowX, ellipsis: getComputedStyle(td).textOverflow };
});

test('an input grid cell clips (with an ellipsis) only a value that could overflow it; the others are not clipped', async ({ page }) => {
  await ready(page);
  const cell = gridCell(page, 'x', 0, 0);
  const short = await cellBox(cell);
  expect(short.overflow).toBe('visible'); // a clip per cell is a paint chunk each, for 1,280 cells
  expect(short.scroll).toBeLessThanOrEqual(short.client);
  await cell.click();
  await page.keyboard.type('0.12345678901234567');
  await page.keyboard.press('Enter');
  await expect(cell).toHaveText('0.12345678901234567');
  const long = await cellBox(cell);
  expect(long.overflow).toBe('hidden');
  expect(long.ellipsis).toBe('ellipsis');
  expect(long.scroll).toBeGreaterThan(long.client); // cut, not grown: the cell keeps its width
  expect(long.width).toBeLessThanOrEqual(7 * 16 + 0.5);
  // up to 7 characters fit in any font: not clipped; from 8 on, clipped
  for (const [text, overflow] of [['-0.1234', 'visible'], ['-0.12345', 'hidden'], ['2', 'visible']]) {
    await cell.click();
    await page.keyboard.type(text);
    await page.keyboard.press('Enter');
    await expect(cell).toHaveText(text);
    expect((await cellBox(cell)).overflow, text).toBe(overflow);
  }
});

test('the cell editor sits inside its cell, centred, its text right-aligned as typed', async ({ page }) => {
  await ready(page);
  const cell = gridCell(page, 'x', 0, 0);
  await cell.dblclick();
  const input = page.locator('[data-matrix="x"] input.aps-cell-input');
  await expect(input).toBeFocused();
  await page.keyboard.press('End');
  await page.keyboard.type('25');
  await expect(input).toHaveValue(/25$/);
  const g = await input.evaluate((i) => {
    const td = i.parentElement.getBoundingClientRect();
    const r = i.getBoundingClientRect();
    const lh = parseFloat(getComputedStyle(i).lineHeight);
    return { top: r.top - td.top, bottom: td.bottom - r.bottom, height: r.height, lh, overflow: getComputedStyle(i.parentElement).overflowX };
  });
  expect(Math.abs(g.height - g.lh)).toBeLessThan(0.5); // one line high
  expect(Math.abs(g.top - g.bottom)).toBeLessThan(1.5); // centred in the cell
  expect(g.overflow).toBe('hidden'); // the input is wider than the cell's content box: clipped while editing
  await page.keyboard.press('Enter');
  await expect(cell).toHaveText(/25$/);
});

test('the panels\' numbers fit their cells (no clip per cell): none is wider than its column', async ({ page }) => {
  await page.setViewportSize({ width: 1400, height: 1000 });
  await ready(page);
  await page.locator('select[data-key="preset"]').selectOption('causal-4');
  for (const panel of ['scores', 'weights']) {
    await page.locator(`figure[data-panel="${panel}"]`).scrollIntoViewIfNeeded();
    await settled(page);
    const over = await page.locator(`figure[data-panel="${panel}"] .aps-mat-wrap`).first().evaluate((wrap) => {
      const bad = [];
      for (const td of wrap.querySelectorAll('td[data-c]')) {
        const range = document.createRange();
        range.selectNodeContents(td);
        const t = range.getBoundingClientRect();
        const r = td.getBoundingClientRect();
        if (t.width && (t.left < r.left - 0.5 || t.right > r.right + 0.5)) bad.push(`${td.dataset.r},${td.dataset.c}: ${td.textContent}`);
      }
      return { cells: wrap.querySelectorAll('td[data-c]').length, bad, sized: wrap.querySelector('table').classList.contains('is-sized') };
    });
    expect(over.sized).toBe(true);
    expect(over.cells).toBeGreaterThan(0);
    expect(over.bad).toEqual([]);
  }
});

test('the status line follows an edit after its frame; the last of two edits in one frame wins', async ({ page }) => {
  await ready(page);
  const status = page.locator('.aps-status');
  await gridCell(page, 'W_q', 0, 0).dblclick();
  const input = page.locator('[data-matrix="W_q"] input.aps-cell-input');
  await expect(input).toBeFocused();
  /** Types the values into the cell editor in one task (one frame), then waits for the frame after. */
  const typeInOneFrame = (values) => page.evaluate(async (vals) => {
    const i = document.querySelector('[data-matrix="W_q"] input.aps-cell-input');
    for (const v of vals) { i.value = v; i.dispatchEvent(new Event('input', { bubbles: true })); }
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0))));
  }, values);
  // an edit's status ("computed in … ms") is written after its frame, with the tables' text
  await typeInOneFrame(['0.5']);
  await expect(status).toContainText('C++');
  // valid, then invalid in the same frame: the page waits for valid input, and a status still
  // waiting for the first edit's frame does not overwrite it
  await typeInOneFrame(['0.25', '0.2x']);
  await settled(page);
  await expect(status).toHaveText('Waiting for valid input');
  await expect(page.locator('.aps-stale')).toBeVisible();
  // invalid, then valid in the same frame: computed again
  await typeInOneFrame(['0.2y', '0.75']);
  await settled(page);
  await expect(status).toContainText('C++');
  await expect(page.locator('.aps-stale')).toBeHidden();
});
