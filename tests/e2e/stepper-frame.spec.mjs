// stepper-frame.spec.mjs — what the stepper's cheaper edit frame must not lose (docs/PERFORMANCE.md,
// "The stepper: edit → repaint"): the input grids clip a cell (with an ellipsis) only when its text
// could overflow, yet a long value never spills out of its cell; the cell editor looks and sits as
// before inside its cell; the panels' numbers, no longer clipped cell by cell, fit their cells; a
// panel's numbers drawn in cached pieces (panels.js drawPieces) give the pixels of whole numbers.
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

test('the panels\' numbers fit their cells (no clip per cell): none is wider than its column; drawn in pieces, they are the pixels drawn whole', async ({ page }) => {
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
  // drawn in cached pieces (panels.js drawPieces), a panel's numbers have the pixels of each drawn whole
  // 6 × 6 numbers of both signs, 2 heads: the scores have 4 decimals, some above 10 in size
  let seed = 7;
  const m = () => Array.from({ length: 6 }, () => Array.from({ length: 6 }, () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return ((seed / 2 ** 32) * 8 - 4).toFixed(3);
  }).join(' ')).join('\n');
  await page.evaluate((mats) => {
    const s = window.attentionStepper.getState();
    Object.assign(s.matrices, mats);
    s.options.n_head = 2;
    s.use_W_o = false;
    window.attentionStepper.setState(s);
  }, { x: m(), W_q: m(), W_k: m(), W_v: m() });
  const fig = page.locator('figure[data-panel="scores"]');
  await expect(fig.locator('tbody tr')).toHaveCount(6);
  await fig.scrollIntoViewIfNeeded();
  await settled(page);
  const r = await fig.evaluate(async (f) => {
    const { setSplitDigits } = await import('/stepper/panels.js');
    const view = f.querySelector('.aps-mat-scroll').apsView;
    const draw = (split) => { setSplitDigits(split); view.painted = null; view.paint(); return view.canvas.toDataURL(); };
    const pieces = draw(true);
    const whole = draw(false);
    setSplitDigits(true);
    const texts = view.texts().cells.flat();
    return { same: pieces === whole, tabular: view.geo.tabular, four: texts.filter((t) => /^[−-]?\d+\.\d{4}$/.test(t)).length, negative: texts.filter((t) => t.startsWith('−')).length, big: texts.filter((t) => /^[−-]?\d\d/.test(t)).length };
  });
  expect(r.tabular).toBe(true); // the page's monospace font here (DejaVu Sans Mono): pieces are drawn
  expect(r.four).toBe(36);
  expect(r.negative).toBeGreaterThan(0);
  expect(r.big).toBeGreaterThan(0);
  expect(r.same).toBe(true);
});
