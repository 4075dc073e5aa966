// a11y-graphics.spec.mjs — what the eye needs beyond text, computed: non-text contrast (WCAG 1.4.11,
// 3:1) of the focus rings over every heat colour and the page, the editable cells' and fields'
// borders, and the loss chart's lines; forced colours (`forced-colors: active`) on the training
// page's maps after a run (the canvases keep their heat colours and masked cells, a focused map its
// ring), and in a dark and a light forced palette on the loss and head-score charts (their lines
// against the canvas's backdrop, the curve's pixels on the screen), the next-token bars, the KV
// view's and the lens's heat cells and the scale legend; reflow at 320 CSS px (= 200 % zoom of 640 px) after a run with the maps, walk, next-token
// bars and KV view shown; and the screenshots docs/accessibility.md shows (200 % zoom, forced
// colours, deuteranopia), written to the test's output folder. Limits: the contrast is the WCAG
// ratio of computed CSS colours (a canvas's pixels are read where it says so); a person looks at the
// screenshots.
import { test, expect, settled, RUN_MS } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';
import { focusVisible, afterRun, walkAfterRun, RUN, noViolations } from './a11y-helpers.mjs';

/**
 * In the page: WCAG's contrast ratio of two CSS colours (rgb()/rgba() strings or #hex), and the
 * colour an element's box shows behind it (its own or its nearest ancestor's opaque background).
 */
const CONTRAST_LIB = () => {
  const parse = (c) => {
    if (c.startsWith('#')) { const h = c.length === 4 ? [...c.slice(1)].map((x) => x + x).join('') : c.slice(1); return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)); }
    return c.match(/[\d.]+/g).slice(0, 3).map(Number);
  };
  const lum = (c) => { const [r, g, b] = parse(c).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  window.__ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  window.__behind = (e) => {
    for (let a = e; a; a = a.parentElement) { const bg = getComputedStyle(a).backgroundColor; const m = bg.match(/[\d.]+/g); if (m && (m.length < 4 || Number(m[3]) === 1)) return bg; }
    return 'rgb(255, 255, 255)';
  };
};

/**
 * What is on the screen: a screenshot (PNG bytes) decoded in the page, as [colour (0xRRGGBB), pixels of it]
 * pairs, one per colour it holds.
 */
async function screenColours(page, shot) {
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width; c.height = img.height;
    const x = c.getContext('2d');
    x.drawImage(img, 0, 0);
    const d = x.getImageData(0, 0, c.width, c.height).data;
    const count = new Map();
    for (let i = 0; i < d.length; i += 4) { const k = (d[i] << 16) | (d[i + 1] << 8) | d[i + 2]; count.set(k, (count.get(k) ?? 0) + 1); }
    return [...count];
  }, shot.toString('base64'));
}

test('non-text contrast (1.4.11): focus rings over every heat colour and the page, cell and field borders, chart lines, at 3:1', async ({ page }) => {
  await ready(page);
  await page.evaluate(CONTRAST_LIB);
  const low = await page.evaluate(async () => {
    const out = [];
    const root = document.querySelector('.aps-root');
    // a focus ring drawn inside a heat cell (outline-offset < 0) meets the cell's colour on one side
    // and an inner ring (box-shadow) on the other: one of them must differ from it by 3:1
    const table = document.createElement('table');
    table.className = 'aps-mat';
    const row = table.insertRow();
    for (const k of [...Array(9).keys()].flatMap((i) => [`h${i}`, `d${i}`])) {
      const td = row.insertCell();
      td.className = `aps-c ${k}`;
      td.tabIndex = 0;
      td.textContent = '0.5';
    }
    root.append(table);
    for (const td of table.rows[0].cells) {
      td.focus();
      const s = getComputedStyle(td);
      const ring = s.outlineColor;
      const inner = s.boxShadow.match(/rgba?\([^)]*\)/)?.[0];
      const best = Math.max(window.__ratio(ring, s.backgroundColor), inner ? window.__ratio(ring, inner) : 0);
      if (best < 3) out.push(`focus ring ${ring} in a ${td.className} cell (${s.backgroundColor}): ${best.toFixed(2)}`);
    }
    table.remove();
    // rings drawn outside an element meet the page behind it
    for (const e of [document.querySelector('[data-key="view.step"]'), document.querySelector('.aps-btn'), document.querySelector('select[data-key="preset"]'), document.querySelector('.site-nav-link')].filter(Boolean)) {
      e.focus();
      const s = getComputedStyle(e);
      const r = window.__ratio(s.outlineColor, window.__behind(e.parentElement));
      if (r < 3) out.push(`focus ring ${s.outlineColor} of ${e.tagName}.${e.className}: ${r.toFixed(2)}`);
    }
    // an editable cell or a field is found by its border: 3:1 against what is inside or outside it
    const fields = [...document.querySelectorAll('.aps-gc, input[type="number"], input[type="text"], select, textarea')].filter((e) => e.getClientRects().length);
    const seen = new Set();
    for (const e of fields) {
      const s = getComputedStyle(e);
      const key = `${e.tagName}.${e.className}|${s.borderTopColor}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const inside = window.__behind(e);
      const outside = window.__behind(e.parentElement);
      const r = Math.max(window.__ratio(s.borderTopColor, inside), window.__ratio(s.borderTopColor, outside), window.__ratio(inside, outside));
      if (parseFloat(s.borderTopWidth) > 0 && r < 3) out.push(`border ${s.borderTopColor} of ${e.tagName.toLowerCase()}.${e.className} (inside ${inside}, outside ${outside}): ${r.toFixed(2)}`);
    }
    // the loss chart's lines against the chart's white
    const { RUN_STYLES } = await import('/train/chart.js');
    for (const s of RUN_STYLES) for (const c of [s.color, s.valColor]) { const r = window.__ratio(c, '#ffffff'); if (r < 3) out.push(`chart line ${c}: ${r.toFixed(2)}`); }
    return out;
  });
  expect(low).toEqual([]);
});

test('forced colours on the training page after a run: the maps keep their heat and masks, a focused map its ring', async ({ page }, testInfo) => {
  await afterRun(page);
  await page.emulateMedia({ forcedColors: 'active' });
  const canvas = page.locator('#tr-maps-box canvas.tr-map-canvas').first();
  await canvas.scrollIntoViewIfNeeded();
  // the heat bins and the masked (causal) cells: many colours, not one flat system colour
  const colours = await canvas.evaluate((c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const set = new Set();
    for (let i = 0; i < d.length; i += 4) set.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    return set.size;
  });
  expect(colours).toBeGreaterThan(3);
  // what is on the screen (a screenshot, after forced colours) still holds those colours
  const onScreen = await screenColours(page, await canvas.screenshot());
  expect(onScreen.length).toBeGreaterThan(3);
  // the maps' key, "weights 0 → 1", keeps its scale (forced colours drop background images)
  const key = await page.locator('.tr-mv-scale').first().evaluate((e) => getComputedStyle(e).backgroundImage);
  expect(key, 'the maps\' weight scale in forced colours').toMatch(/gradient/);
  // a map reached by Tab shows its focus (an outline or box-shadow, in a system colour)
  await page.locator('#tr-maps').focus();
  for (let i = 0; i < 40 && !(await page.evaluate(() => document.activeElement?.classList.contains('tr-map'))); i++) await page.keyboard.press('Tab');
  await focusVisible(page, 'Tab to a map in forced colours');
  await page.screenshot({ path: testInfo.outputPath('forced-colors-train-maps.png') });
});

for (const scheme of ['dark', 'light']) {
  test(`forced colours (${scheme} palette) on the training page: the loss and head-score charts, the next-token bars, the heat maps, the lens grid and the surprisal strip stay visible`, async ({ page }, testInfo) => {
    await afterRun(page, `${RUN}&head_scores=1`);
    await expect(page.locator('#tr-head-box')).toBeVisible({ timeout: RUN_MS });
    await page.locator('#tr-interp').getByRole('button', { name: 'Show the lens' }).click();
    await expect(page.locator('#app')).toHaveAttribute('data-interp', 'lens-ready', { timeout: RUN_MS });
    await page.locator('#tr-sur-val').click();
    await expect(page.locator('#app')).toHaveAttribute('data-surprisal', 'ready', { timeout: RUN_MS });
    await page.evaluate(CONTRAST_LIB);
    await page.emulateMedia({ forcedColors: 'active', colorScheme: scheme });
    expect(await page.evaluate(() => matchMedia('(forced-colors: active)').matches)).toBe(true);
    const lens = await page.evaluate(async () => {
      const out = [];
      // the charts: each canvas's backdrop (its own background or what shows through it) against the
      // runs' line colours, the heads' curves (induction, previous token) and the axes' grey
      const { RUN_STYLES } = await import('/train/chart.js');
      const lines = [...RUN_STYLES.flatMap((r) => [r.color, r.valColor]), '#7c3aed', '#0f766e', '#5d636d'];
      for (const c of document.querySelectorAll('#tr-chart canvas, #tr-head-box canvas')) {
        const back = window.__behind(c);
        for (const l of lines) { const r = window.__ratio(l, back); if (r < 3) out.push(`a chart's line ${l} on its backdrop ${back}: ${r.toFixed(2)}`); }
      }
      // the bars: the drawn probability against the bar's ground and the page
      const bar = document.querySelector('.tr-next-bar');
      const fill = bar.querySelector('.tr-next-fill');
      const [fb, bb] = [getComputedStyle(fill).backgroundColor, window.__behind(bar)];
      if (window.__ratio(fb, bb) < 3) out.push(`a next-token bar ${fb} on ${bb}: ${window.__ratio(fb, bb).toFixed(2)}`);
      if (!fill.getBoundingClientRect().width) out.push('the first bar has no width');
      // the heat maps: their cells keep more than three colours (not one forced Canvas)
      for (const [name, sel] of [['the KV view', '.tr-kv-att td'], ['the lens grid', '#tr-interp-lens td.tr-interp-cell'], ['the scale legend', '.tr-interp-swatch'],
        ['the surprisal strip', '.tr-sur-tok']]) {
        const n = new Set([...document.querySelectorAll(sel)].map((e) => getComputedStyle(e).backgroundColor)).size;
        if (n <= 3) out.push(`${name}: ${n} background colour(s)`);
      }
      return out;
    });
    expect(lens).toEqual([]);
    // what is on the screen: the loss chart's picture holds its curves' colour, read back from a screenshot
    const chart = page.locator('#tr-chart');
    await chart.scrollIntoViewIfNeeded();
    const shot = await chart.screenshot({ path: testInfo.outputPath(`forced-colors-${scheme}-chart.png`) });
    const near = ([k]) => Math.abs((k >> 16) - 0x24) + Math.abs(((k >> 8) & 0xff) - 0x57) + Math.abs((k & 0xff) - 0xa6) < 40;
    const curve = (await screenColours(page, shot)).filter(near).reduce((n, [, pixels]) => n + pixels, 0);
    expect(curve, 'pixels of the training curve on the screen').toBeGreaterThan(50);
    for (const [sel, name] of [['table.tr-next-bars', 'bars'], ['#tr-interp-lens', 'lens'], ['#tr-kv', 'kv']]) {
      await page.locator(sel).first().scrollIntoViewIfNeeded();
      await page.locator(sel).first().screenshot({ path: testInfo.outputPath(`forced-colors-${scheme}-${name}.png`) });
    }
  });
}

// the patching grid, the walk's cells and the Length experiment's SVG curves: one page with a run
// (n_embd 32, so the walk's vectors are rows of cells), the experiment done, a position walked and a
// patching sweep shown, then a dark and a light forced palette
test('forced colours (dark and light palettes): the patching grid, the walk\'s cells and the Length experiment\'s curves stay visible, told apart, focus drawn', async ({ page }, testInfo) => {
  test.slow(); // an experiment of three runs, a run, a walk and a patching sweep
  const app = page.locator('#app');
  await walkAfterRun(page, '#steps=6&batch_size=2&eval_interval=3&sample_every=0&preset=custom&n_embd=32', async () => {
    await page.getByRole('button', { name: 'Length: learned vs ALiBi vs RoPE positions' }).click();
    await expect(app).toHaveAttribute('data-exp', 'done', { timeout: RUN_MS });
  });
  await expect(page.locator('#tr-walk-status')).toContainText(/^Position \d+ /);
  await expect(page.locator('.tr-walk-cell').first()).toBeVisible();
  const interp = page.getByRole('region', { name: /· Take it apart/ });
  await interp.getByRole('radio', { name: 'Patching' }).click();
  await interp.getByLabel('Exercise').selectOption({ label: 'Which position’s residual restores the answer?' });
  await interp.getByRole('button', { name: 'Patch', exact: true }).click();
  await expect(app).toHaveAttribute('data-interp', 'patch-ready', { timeout: RUN_MS });
  // the same state under axe, before the palettes: the experiment's curves and table, the walk, the grid
  await noViolations(page, 'the training page with the Length experiment done, a position walked and a patching sweep');
  await page.evaluate(CONTRAST_LIB);
  for (const scheme of ['dark', 'light']) {
    await page.emulateMedia({ forcedColors: 'active', colorScheme: scheme });
    expect(await page.evaluate(() => matchMedia('(forced-colors: active)').matches)).toBe(true);
    const found = await page.evaluate(() => {
      const out = [];
      const probe = document.createElement('span');
      probe.style.color = 'CanvasText';
      probe.style.backgroundColor = 'Canvas';
      document.body.append(probe);
      const [ink, canvas] = [getComputedStyle(probe).color, getComputedStyle(probe).backgroundColor];
      probe.remove();
      if (window.__ratio(ink, canvas) < 7) out.push(`the forced palette itself: ${ink} on ${canvas}`);
      // the curves: drawn in CanvasText (not their page colours, some under 3:1 on a dark Canvas), each its own dash
      const svg = document.querySelector('svg.tr-exp-curves');
      const back = window.__behind(svg);
      const lines = [...svg.querySelectorAll('polyline')];
      if (lines.length < 2) out.push(`${lines.length} curve(s)`);
      for (const e of svg.querySelectorAll('polyline, line')) {
        const s = getComputedStyle(e).stroke;
        if (s !== ink) out.push(`a ${e.tagName}'s stroke ${s}, not CanvasText ${ink}`);
        else if (window.__ratio(s, back) < 3) out.push(`a ${e.tagName}'s stroke ${s} on ${back}: ${window.__ratio(s, back).toFixed(2)}`);
      }
      for (const e of svg.querySelectorAll('text')) { const f = getComputedStyle(e).fill; if (f !== ink || window.__ratio(f, back) < 4.5) out.push(`an axis label's ${f} on ${back}`); }
      const dashes = lines.map((e) => getComputedStyle(e).strokeDasharray);
      if (new Set(dashes).size !== lines.length) out.push(`curves not told apart by dash: ${dashes.join(' | ')}`);
      // the cells: their heat kept (several backgrounds), their number as text at 4.5:1 on their colour,
      // a border at 3:1 on the forced Canvas around each
      for (const [name, sel] of [['the patching grid', '#tr-interp-real-resid td.tr-interp-cell'], ['the walk', '.tr-walk-cell']]) {
        const cells = [...document.querySelectorAll(sel)].filter((e) => e.getClientRects().length);
        if (!cells.length) { out.push(`${name}: no cells`); continue; }
        if (new Set(cells.map((e) => getComputedStyle(e).backgroundColor)).size <= 3) out.push(`${name}: its heat is lost`);
        for (const e of cells) {
          const s = getComputedStyle(e);
          if (!/\d/.test(e.textContent)) out.push(`${name}: a cell without its number`);
          if (window.__ratio(s.color, s.backgroundColor) < 4.5) out.push(`${name}: "${e.textContent}" ${s.color} on ${s.backgroundColor}`);
          if (s.borderTopStyle === 'none' || parseFloat(s.borderTopWidth) < 1 || window.__ratio(s.borderTopColor, canvas) < 3) out.push(`${name}: the border ${s.borderTopWidth} ${s.borderTopStyle} ${s.borderTopColor} of "${e.textContent}"`);
        }
      }
      return out;
    });
    expect(found, `the ${scheme} forced palette`).toEqual([]);
    // the focus, reached by keys: a ring that stands out on the cell's own colour (or an inner Canvas ring)
    for (const [name, cell] of [['the patching grid', page.locator('#tr-interp-real-resid td.tr-interp-cell').first()], ['the walk', page.locator('.tr-walk-cell:not(:disabled)').first()]]) {
      await cell.scrollIntoViewIfNeeded();
      await page.keyboard.press('Shift'); // a key first: the focus that follows is drawn as the keyboard's
      await cell.focus();
      const f = await focusVisible(page, `focusing ${name}'s cell in forced colours`);
      const best = await cell.evaluate((e) => {
        const s = getComputedStyle(e);
        const inner = s.boxShadow.match(/rgba?\([^)]*\)/)?.[0];
        return Math.max(window.__ratio(s.outlineColor, s.backgroundColor), inner ? window.__ratio(s.outlineColor, inner) : 0, s.outlineOffset.startsWith('-') ? 0 : window.__ratio(s.outlineColor, window.__behind(e.parentElement)));
      });
      expect(best, `${name}: the focus ring of "${f.name}" (${scheme} palette)`).toBeGreaterThanOrEqual(3);
    }
    await page.locator('#tr-interp-real-resid').screenshot({ path: testInfo.outputPath(`forced-colors-${scheme}-patching.png`) });
  }
  await page.locator('#tr-exp').screenshot({ path: testInfo.outputPath('forced-colors-light-length.png') });
});

// 200 % zoom of a 640-px window lays the page out in 320 CSS px (a11y-views.spec.mjs says why it is emulated so)
test.describe('reflow after a run: 320 CSS px wide', () => {
  test.use({ viewport: { width: 320, height: 640 }, deviceScaleFactor: 2 });
  for (const lang of ['en', 'zh']) {
    test(`the training page with maps, walk, bars and KV view (${lang}): no page scroll sideways, nothing cut off`, async ({ page }, testInfo) => {
      await afterRun(page, `${RUN}&lang=${lang}`);
      await expect(page.locator('html')).toHaveAttribute('lang', lang === 'zh' ? 'zh-CN' : 'en');
      const o = await page.evaluate(() => {
        const se = document.scrollingElement;
        const W = se.clientWidth;
        const scrolls = (e) => { for (let a = e.parentElement; a; a = a.parentElement) { const x = getComputedStyle(a).overflowX; if (x === 'auto' || x === 'scroll' || x === 'hidden') return true; } return false; };
        const lost = [...document.querySelectorAll('button, input, select, textarea, a, h1, h2, h3, p, label, summary, canvas, table')].filter((e) => {
          const r = e.getBoundingClientRect();
          if (!r.width || !r.height || getComputedStyle(e).visibility === 'hidden' || e.classList.contains('tr-file-hidden') || e.id === 'tr-skip') return false;
          return (r.right > W + 1 || r.left < -1) && !scrolls(e);
        }).map((e) => `${e.tagName.toLowerCase()}#${e.id}.${[...e.classList].join('.')} "${e.textContent.trim().slice(0, 30)}"`);
        return { scrollWidth: se.scrollWidth, clientWidth: W, lost };
      });
      if (lang === 'en') await page.screenshot({ path: testInfo.outputPath('train-320px-200pc.png'), fullPage: true });
      expect(o.scrollWidth, 'the page scrolls sideways').toBeLessThanOrEqual(o.clientWidth);
      expect(o.lost, 'cut off at 320 px').toEqual([]);
    });
  }
});

/** The stepper on the causal 4×4 example, its weights panel in view and painted, then the window's picture. */
async function weightsShot(page, path) {
  await ready(page);
  await page.locator('select[data-key="preset"]').selectOption('causal-4'); // the stepper page takes no #preset
  const weights = page.locator('figure[data-panel="weights"]');
  await weights.scrollIntoViewIfNeeded();
  await expect(weights.locator('td[data-c]').first()).toHaveText('1');
  await settled(page);
  await page.screenshot({ path });
}

test.describe('200 % zoom of a 640 × 900 window (a 320 × 450 CSS px viewport drawn at 2×)', () => {
  test.use({ viewport: { width: 320, height: 450 }, deviceScaleFactor: 2 });
  test('screenshot for docs/accessibility.md: the stepper at 200 % zoom, the cell arithmetic box leaving the panel in view', async ({ page }, testInfo) => {
    await weightsShot(page, testInfo.outputPath('stepper-zoom-200.png'));
    // the arithmetic box: its hint waits below the steps; a cell explained, it sticks to the bottom
    // covering at most a quarter of the short window, the focused cell in view above it
    const box = page.locator('.aps-pipeline > .aps-explain');
    expect(await box.evaluate((e) => getComputedStyle(e).position)).toBe('static');
    const cell = page.locator('figure[data-panel="weights"] td[data-r="3"][data-c="3"]');
    await cell.focus();
    await expect(box.locator('.aps-explain-close')).toBeVisible();
    expect(await box.evaluate((e) => getComputedStyle(e).position)).toBe('sticky');
    const [b, c] = [await box.boundingBox(), await cell.boundingBox()];
    expect(b.height).toBeLessThanOrEqual(450 / 4 + 1);
    expect(c.y + c.height, 'the focused cell above the box').toBeLessThanOrEqual(b.y + 1);
    await page.screenshot({ path: testInfo.outputPath('stepper-zoom-200-explained.png') });
  });
});

test('screenshots for docs/accessibility.md: the stepper under deuteranopia and in forced colours', async ({ page }, testInfo) => {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setEmulatedVisionDeficiency', { type: 'deuteranopia' });
  await weightsShot(page, testInfo.outputPath('stepper-deuteranopia.png'));
  await cdp.send('Emulation.setEmulatedVisionDeficiency', { type: 'none' });
  await page.emulateMedia({ forcedColors: 'active' });
  await weightsShot(page, testInfo.outputPath('stepper-forced-colors.png'));
});
