// pixels.spec.mjs — the panels' cells and numbers drawn from glyph masks into a pixel buffer
// (web/stepper/pixels.js) look as the canvas draws them with paths and fillText (the reference,
// what globalThis.APS_NO_PIXELS selects): the same panels of the same state are read back from
// both pages and compared pixel by pixel, at device pixel ratios 1, 1.25 and 2, for numbers of
// every kind (4 decimals, negatives with a true minus, exponents, ±∞, NaN, the hatched −∞ and the
// striped NaN cells, the row statistics' columns, the gradients' diverging colours and masked zeros).
import { test, expect, settled } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

/** A deterministic n × n matrix as text, 2 decimals in ±scale. */
function matrixText(n, seed, scale = 1) {
  let s = seed >>> 0;
  const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
  return Array.from({ length: n }, () => Array.from({ length: n }, () => (rnd() * scale).toFixed(2)).join(' ')).join('\n');
}

const state = (n, { scale = 1, softmax = 'stable' } = {}) => ({
  version: 1, preset: 'custom', mode: 'x',
  matrices: { x: matrixText(n, 1, scale), W_q: matrixText(n, 2, scale), W_k: matrixText(n, 3), W_v: matrixText(n, 4), W_o: matrixText(n, 5), Q: '1 0\n0 1', K: '1 0\n0 1', V: '1 0\n0 1' },
  use_W_o: true, options: { n_head: 2, causal: true, mask: 'strict', base: 0, scale: true, softmax },
  seed: 1, view: 'all', step: 0, head: 0, lang: 'en', focus: null,
});

/** Shows a state and waits for its compute (the status line names the core). */
async function show(page, st) {
  await page.evaluate((s) => window.attentionStepper.setState(s), st);
  const panel = st.direction === 'backward' ? 'd_scores' : 'scores';
  await expect(page.locator(`figure[data-panel="${panel}"] tbody tr`)).toHaveCount(st.matrices.x.split('\n').length);
  await expect(page.locator('.aps-status')).toContainText(/C\+\+/);
}

/** Keeps a copy of every painted canvas of each panel in the page, under name (window.__pictures). */
async function keep(page, name, panels) {
  for (const panel of panels) {
    const fig = page.locator(`figure[data-panel="${panel}"]`);
    await fig.scrollIntoViewIfNeeded();
    await settled(page);
    await fig.evaluate((f, key) => {
      const all = (window.__pictures ??= {});
      all[key] = [...f.querySelectorAll('canvas.aps-mat-canvas')].filter((c) => c.width > 1)
        .map((c) => ({ w: c.width, h: c.height, data: c.getContext('2d').getImageData(0, 0, c.width, c.height).data }));
    }, `${name}:${panel}`);
  }
}

/**
 * How the pictures kept as a and b differ, per canvas: the share of pixels off by more than 48
 * and 128 levels (the largest of R, G, B, A) and the mean difference; onlyOpaque compares only the
 * pixels opaque in both (inside the cells: the text, not the cells' edges).
 */
function compare(page, a, b, panel, onlyOpaque) {
  return page.evaluate(({ a, b, onlyOpaque }) => {
    const A = window.__pictures[a];
    const B = window.__pictures[b];
    return A.map((p, k) => {
      const q = B[k];
      if (!q || p.w !== q.w || p.h !== q.h) return { size: [p.w, p.h, q?.w, q?.h] };
      let n = 0;
      let over48 = 0;
      let over128 = 0;
      let sum = 0;
      let ink = false;
      for (let i = 0; i < p.data.length; i += 4) {
        if (p.data[i + 3]) ink = true;
        if (onlyOpaque && (p.data[i + 3] < 255 || q.data[i + 3] < 255)) continue;
        let d = 0;
        for (let c = 0; c < 4; c++) d = Math.max(d, Math.abs(p.data[i + c] - q.data[i + c]));
        n++;
        if (d > 48) over48++;
        if (d > 128) over128++;
        sum += d;
      }
      return { ink, n, over48: over48 / n, over128: over128 / n, mean: sum / n };
    });
  }, { a: `${a}:${panel}`, b: `${b}:${panel}`, onlyOpaque });
}

const CASES = [
  { name: 'numbers and the hatched −∞', st: state(8), panels: ['q', 'scores', 'masked', 'weights', 'out'] },
  { name: 'exponents, NaN and the naive softmax', st: state(6, { scale: 400, softmax: 'naive' }), panels: ['scores', 'scaled', 'weights'] },
  { name: 'gradients (the diverging colours) and the masked zeros', st: { ...state(8), direction: 'backward' }, panels: ['d_out', 'd_weights', 'd_scores', 'd_W_q'] },
];

for (const dpr of [1, 1.25, 2]) {
  test(`at device pixel ratio ${dpr}, the numbers drawn from glyph masks look as fillText draws them`, async ({ browser, baseURL }) => {
    const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 900 }, deviceScaleFactor: dpr });
    const page = await context.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await ready(page);
    for (const c of CASES) {
      await page.evaluate(() => { delete globalThis.APS_NO_PIXELS; });
      await show(page, c.st);
      await keep(page, 'pixels', c.panels);
      // the reference: the same state painted again with paths and fillText
      await page.evaluate(() => { globalThis.APS_NO_PIXELS = true; });
      await show(page, state(4));
      await show(page, c.st);
      await keep(page, 'canvas', c.panels);
      for (const panel of c.panels) {
        const diffs = await compare(page, 'pixels', 'canvas', panel, !Number.isInteger(dpr));
        expect(diffs.length, `${c.name}: ${panel}'s canvases`).toBeGreaterThan(0);
        diffs.forEach((d, k) => {
          const where = `${c.name}: ${panel} canvas ${k} at ${dpr}×: ${JSON.stringify(d)}`;
          expect(d.size, where).toBeUndefined();
          expect(d.ink, where).toBe(true); // blank pictures would compare equal
          // the same glyphs at the same places; anti-aliasing differs by a few levels (at a
          // fractional ratio, only the cells' insides: the canvas blends their edges, the buffer
          // puts them on whole device pixels)
          expect(d.over48, where).toBeLessThan(0.002);
          expect(d.mean, where).toBeLessThan(0.5);
        });
      }
    }
    await page.evaluate(() => { delete globalThis.APS_NO_PIXELS; });
    expect(problems).toEqual([]);
    await context.close();
  });
}

test('a glyph out of place would be caught: the comparison sees a one-pixel shift of the numbers', async ({ page }) => {
  // the check above must be able to fail: the same state drawn with its text one device pixel to
  // the right differs beyond its bounds
  await page.setViewportSize({ width: 1280, height: 900 });
  await ready(page);
  await show(page, state(8));
  await keep(page, 'pixels', ['scores']);
  await page.evaluate(async () => {
    const { PixelBuffer } = await import('/stepper/pixels.js');
    const text = PixelBuffer.prototype.text;
    PixelBuffer.prototype.text = function (s, x, ...rest) { return text.call(this, s, x + 1, ...rest); };
  });
  await show(page, state(4));
  await show(page, state(8));
  await keep(page, 'shifted', ['scores']);
  const [d] = await compare(page, 'pixels', 'shifted', 'scores', false);
  expect(d.ink).toBe(true);
  expect(d.over48, JSON.stringify(d)).toBeGreaterThan(0.002);
});
