// rendering.spec.mjs — the numbers painted on a canvas (panels.js) lose nothing: the canvas and
// the table of the same numbers line up cell for cell (a number's colour on the canvas is its
// table cell's heat bin), the table's text is the numbers (screen readers), a selection selects
// and copies them — right after an edit too —, a panel far off screen has the right text, and in
// forced-colours mode the table draws itself.
import { test, expect, settled, explainText } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

const BLUES = ['#f7fbff', '#deebf7', '#c6dbef', '#9ecae1', '#6baed6', '#4292c6', '#2171b5', '#08519c', '#08306b'];

/** For each number cell of a panel: its heat bin (from its class) and the canvas pixel at its centre. */
function canvasUnderCells(page, panel) {
  return page.locator(`figure[data-panel="${panel}"] .aps-mat-wrap`).first().evaluate((wrap) => {
    const canvas = wrap.querySelector('canvas.aps-mat-canvas');
    const cr = canvas.getBoundingClientRect();
    const sx = canvas.width / cr.width;
    const sy = canvas.height / cr.height;
    const all = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data; // one readback
    return [...wrap.querySelectorAll('td[data-c]')].map((td) => {
      const r = td.getBoundingClientRect();
      // a point inside the cell, left of its number (the background, not a glyph)
      const x = Math.floor((r.left + 3 - cr.left) * sx);
      const y = Math.floor((r.top + r.height / 2 - cr.top) * sy);
      const o = (y * canvas.width + x) * 4;
      const [R, G, B] = [all[o], all[o + 1], all[o + 2]];
      const bin = /\bh(\d)\b/.exec(td.className)?.[1];
      return { r: td.dataset.r, c: td.dataset.c, bin: bin === undefined ? null : +bin, rgb: [R, G, B], inside: r.left >= cr.left - 1 && r.right <= cr.right + 1 && r.top >= cr.top - 1 && r.bottom <= cr.bottom + 1 };
    });
  });
}

const hex = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));

test('the canvas and the table line up: each cell\'s canvas colour is its own heat bin', async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await ready(page);
  await page.locator('select[data-key="preset"]').selectOption('causal-4');
  for (const panel of ['scores', 'weights']) {
    await page.locator(`figure[data-panel="${panel}"]`).scrollIntoViewIfNeeded();
    await settled(page);
    const cells = await canvasUnderCells(page, panel);
    expect(cells.length, panel).toBe(16);
    for (const c of cells) {
      expect(c.inside, `${panel}[${c.r},${c.c}] inside the canvas`).toBe(true);
      if (c.bin === null) continue; // −∞: hatched
      const want = hex(BLUES[c.bin]);
      for (let k = 0; k < 3; k++) expect(Math.abs(c.rgb[k] - want[k]), `${panel}[${c.r},${c.c}] bin ${c.bin}: ${c.rgb} vs ${want}`).toBeLessThanOrEqual(2);
    }
    // the table's text is transparent over the canvas, and it is the numbers
    await expect(page.locator(`figure[data-panel="${panel}"] table.aps-mat`).first()).toHaveClass(/is-canvas/);
  }
});

test('numbers stay selectable and copyable, right after an edit too', async ({ page, context, baseURL }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  await ready(page);
  const selectRow = (panel, r) => page.evaluate(({ panel, r }) => {
    const row = document.querySelectorAll(`figure[data-panel="${panel}"] .aps-mat:not(.aps-stats) tbody tr`)[r];
    const range = document.createRange();
    range.setStart(row.querySelector('td[data-c="0"]'), 0);
    range.setEnd(row.querySelector('td[data-c="1"]'), 1);
    document.getSelection().removeAllRanges();
    document.dispatchEvent(new Event('selectstart')); // what a pointer selection starts with
    document.getSelection().addRange(range);
    document.execCommand('copy');
    return document.getSelection().toString();
  }, { panel, r });
  expect((await selectRow('weights', 0)).replace(/\s+/g, ' ').trim()).toBe('0.6698 0.3302');
  expect((await page.evaluate(() => navigator.clipboard.readText())).replace(/\s+/g, ' ').trim()).toBe('0.6698 0.3302');
  // an edit, then a selection at once: the table's text is brought up to date first
  await page.evaluate(() => {
    const s = window.attentionStepper.getState();
    window.attentionStepper.setState({ ...s, preset: 'custom', options: { ...s.options, causal: true } });
  });
  expect((await selectRow('weights', 0)).replace(/\s+/g, ' ').trim()).toBe('1 0');
  // the selected text shows in ink over the canvas
  const color = await page.locator('figure[data-panel="weights"] td[data-r="0"][data-c="0"]').evaluate((td) => getComputedStyle(td, '::selection').color);
  expect(color).toBe('rgb(28, 32, 39)');
});

test('a panel far off screen gets its text (what a screen reader reads) within a moment', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 500 });
  await ready(page);
  await page.locator('select[data-key="preset"]').selectOption('causal-4');
  await page.evaluate(() => window.scrollTo(0, 0));
  const out = page.locator('figure[data-panel="context"] td[data-r="0"][data-c="0"]');
  const before = await out.textContent();
  await page.locator('input[data-key="causal"]').uncheck();
  await expect(out).not.toHaveText(before);
  const want = await page.evaluate(async () => {
    const { loadAttention } = await import('/attention.js');
    const { formatNumber } = await import('/common/format.js');
    const api = await loadAttention();
    const s = window.attentionStepper.getState();
    return formatNumber(api.trace({ ...s.options, x: s.matrices.x, W_q: s.matrices.W_q, W_k: s.matrices.W_k, W_v: s.matrices.W_v }).heads[0].context[0][0]);
  });
  await expect(out).toHaveText(want);
});

test('forced colours (high contrast): the table draws its own numbers and colours', async ({ page }) => {
  await page.emulateMedia({ forcedColors: 'active' });
  await ready(page);
  await expect(page.locator('figure[data-panel="weights"] td[data-c]')).toHaveText(['0.6698', '0.3302', '0.3302', '0.6698']);
  await expect(page.locator('figure[data-panel="weights"] table.is-canvas')).toHaveCount(0);
  const color = await page.locator('figure[data-panel="weights"] td[data-c]').first().evaluate((td) => getComputedStyle(td).color);
  expect(color).not.toBe('rgba(0, 0, 0, 0)');
});

test('a cell focused far away keeps the explanation, though the scroll brings another cell under the resting mouse', async ({ page }) => {
  await page.setViewportSize({ width: 1366, height: 700 });
  await ready(page);
  await page.locator('select[data-key="preset"]').selectOption('causal-4');
  // the mouse rests on a cell of Q (pointing shows that cell's arithmetic)
  const q = page.locator('figure[data-panel="q"] td[data-r="0"][data-c="0"]');
  await q.scrollIntoViewIfNeeded();
  await q.hover();
  const box = await q.boundingBox(); // hover() rests the mouse at the cell's centre
  const mouse = [box.x + box.width / 2, box.y + box.height / 2];
  await expect.poll(() => explainText(page)).toContain('Q[1,1]');
  // the keyboard (or a script) focuses a cell of A·V, far below: the page scrolls under the mouse
  await page.locator('figure[data-panel="context"] td[data-r="1"][data-c="1"]').focus();
  await expect.poll(() => explainText(page)).toContain('O[2,2]');
  // whatever the scroll put under the mouse does not take the explanation back while the mouse
  // rests: wait until the browser has moved its hover to the number cell now under the mouse (what
  // the page would hear as pointing at it), then two frames for the page's handlers
  await expect.poll(() => page.evaluate(([x, y]) => {
    const e = document.elementFromPoint(x, y);
    return Boolean(e?.matches('td[data-c]') && e.matches(':hover'));
  }, mouse)).toBe(true);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  expect(await explainText(page)).toContain('O[2,2]');
  // moving the mouse points again
  const k = page.locator('figure[data-panel="k"] td[data-r="0"][data-c="0"]');
  await k.scrollIntoViewIfNeeded();
  await k.hover();
  await expect.poll(() => explainText(page)).toContain('K[1,1]');
});

test('a panel waiting for its paint (just off screen, right after an edit) still takes focus', async ({ page }) => {
  await page.setViewportSize({ width: 1366, height: 600 });
  await ready(page);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))); // the observers have reported
  // an edit typed in x, then, before the next frame, a cell of a panel just below the screen is focused
  const r = await page.evaluate(() => {
    const td = document.querySelector('[data-matrix="x"] td[data-r="0"][data-c="0"]');
    td.focus();
    td.dispatchEvent(new KeyboardEvent('keydown', { key: '3', bubbles: true, cancelable: true }));
    const waiting = [...document.querySelectorAll('figure[data-panel] .aps-mat-wrap')].filter((w) => w.style.visibility === 'hidden' || w.style.opacity === '0');
    const cell = waiting[0]?.querySelector('td[data-r]');
    cell?.focus();
    return { waiting: waiting.length, panel: cell?.closest('figure').dataset.panel, focused: !!cell && document.activeElement === cell };
  });
  expect(r.waiting).toBeGreaterThan(0); // the case this test is about happened
  expect(r.focused, `a cell of ${r.panel}`).toBe(true);
  await expect.poll(() => explainText(page)).toContain('Cell arithmetic');
});

test('after each keystroke the tables\' text (what screen readers read and a selection copies) becomes the new numbers: on screen, near it and far from it', async ({ page }) => {
  await page.setViewportSize({ width: 1400, height: 1000 });
  await ready(page);
  // the benchmark's case: 16 × 16 x and weights, 4 heads, causal, W_o
  await page.evaluate(() => {
    const matrix = (seed) => {
      let s = seed;
      const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
      return Array.from({ length: 16 }, () => Array.from({ length: 16 }, () => rnd().toFixed(2)).join(' ')).join('\n');
    };
    const s = window.attentionStepper.getState();
    window.attentionStepper.setState({ ...s, preset: 'custom', mode: 'x', use_W_o: true,
      matrices: { ...s.matrices, x: matrix(1), W_q: matrix(2), W_k: matrix(3), W_v: matrix(4), W_o: matrix(5) },
      options: { ...s.options, n_head: 4, causal: true, mask: 'strict', scale: true, softmax: 'stable' } });
  });
  const cells = (panel) => page.locator(`figure[data-panel="${panel}"] table.aps-mat:not(.aps-stats)`).first().getByRole('gridcell');
  await expect(cells('scores')).toHaveCount(256);
  // a user types into W_q[1,1] with the scores on screen: every keystroke is an edit
  await page.locator('[data-matrix="W_q"] td[data-r="0"][data-c="0"]').dblclick();
  await page.evaluate(() => document.querySelector('figure[data-panel="scores"]').scrollIntoView({ block: 'start' }));
  await page.keyboard.press('Control+A');
  /** The numbers of the panels as the core computes them for the state now, formatted as shown. */
  const want = () => page.evaluate(async () => {
    const { loadAttention } = await import('/attention.js');
    const { formatNumber } = await import('/common/format.js');
    const api = await loadAttention();
    const s = window.attentionStepper.getState();
    const tr = api.trace({ ...s.options, x: s.matrices.x, W_q: s.matrices.W_q, W_k: s.matrices.W_k, W_v: s.matrices.W_v, W_o: s.matrices.W_o });
    const flat = (m) => m.flat().map((v) => formatNumber(v));
    return { scores: flat(tr.heads[0].scores), weights: flat(tr.heads[0].weights), out: flat(tr.out), q: flat(tr.heads[0].q) };
  });
  let typed = '';
  for (const key of ['3', '1', '4']) {
    await page.keyboard.type(key);
    typed += key;
    await expect.poll(() => page.evaluate(() => window.attentionStepper.getState().matrices.W_q.split(/\s+/)[0])).toBe(typed);
    await expect(cells('scores')).toHaveText((await want()).scores); // on screen
  }
  const w = await want();
  // the panels near the screen and far from it follow (in the frames after, and in idle time)
  await expect(cells('weights')).toHaveText(w.weights);
  await expect(cells('out')).toHaveText(w.out);
  await expect(cells('q')).toHaveText(w.q);
});
