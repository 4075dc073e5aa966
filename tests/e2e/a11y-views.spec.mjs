// a11y-views.spec.mjs — what axe cannot judge, measured in Chromium on the stepper and the training
// page: reflow at 320 CSS px (WCAG 1.4.10) and 200 % zoom; colour vision (Chromium's emulated
// protanopia, deuteranopia, tritanopia) on the heat scales, the loss chart's curves and the
// right/wrong marks, read back from screenshots; forced colours (cells, masks, focus);
// prefers-reduced-motion; and the accessibility tree (aria snapshots): every control named.
// Limits: a screenshot's colours stand for what a person with that deficiency sees only as far as
// Chromium's simulation (Machado et al. 2009) does; no person with a screen reader checked these.
import { test, expect, BOOT_MS } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

/** The pages and languages the reflow check visits (add a page's state here). */
const REFLOW = [
  { name: 'the stepper', path: '/', wait: (page) => ready(page, '/') },
  { name: 'the stepper in 中文', path: '/#lang=zh', wait: (page) => ready(page, '/#lang=zh') },
  { name: 'the training page', wait: async (page) => { await page.goto('/train/'); await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS }); } },
  { name: 'the training page in 中文', wait: async (page) => { await page.goto('/train/#lang=zh'); await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS }); } },
];

/**
 * What does not fit a narrow window: the page's own horizontal scroll, and every visible control,
 * heading or paragraph whose box runs past the window's edges without an ancestor that scrolls it
 * (the matrices' and heat maps' own scrollers may be wider than the window: that is allowed).
 */
function overflow(page) {
  return page.evaluate(() => {
    const se = document.scrollingElement;
    const W = se.clientWidth;
    const scrolls = (e) => { for (let a = e.parentElement; a; a = a.parentElement) { const o = getComputedStyle(a).overflowX; if (o === 'auto' || o === 'scroll' || o === 'hidden') return true; } return false; };
    const lost = [...document.querySelectorAll('button, input, select, textarea, a, h1, h2, h3, p, label, summary')].filter((e) => {
      const r = e.getBoundingClientRect();
      if (!r.width || !r.height || getComputedStyle(e).visibility === 'hidden') return false;
      if (e.classList.contains('aps-skip') || e.classList.contains('tr-file-hidden')) return false; // off screen until focused / visually hidden
      return (r.right > W + 1 || r.left < -1) && !scrolls(e);
    }).map((e) => `${e.tagName.toLowerCase()}#${e.id}.${[...e.classList].join('.')} "${e.textContent.trim().slice(0, 30)}"`);
    return { scrollWidth: se.scrollWidth, clientWidth: W, lost };
  });
}

// 200 % zoom of a 640-px-wide window lays the page out in 320 CSS px, which is what Chromium's zoom
// does (it shrinks the CSS viewport and scales the pixels); deviceScaleFactor 2 draws it at that
// scale. document.body.style.zoom is not used: it scales the body without shrinking the viewport,
// so media queries and the window's width would not be what a zoomed browser has.
test.describe('reflow: 320 CSS px wide (= a 640 px window at 200 % zoom)', () => {
  test.use({ viewport: { width: 320, height: 640 }, deviceScaleFactor: 2 });
  for (const r of REFLOW) {
    test(`${r.name}: no page scroll sideways, nothing cut off`, async ({ page }, testInfo) => {
      await r.wait(page);
      const o = await overflow(page);
      await page.screenshot({ path: testInfo.outputPath('320px-200pc.png'), fullPage: true });
      expect(o.scrollWidth, 'the page scrolls sideways').toBeLessThanOrEqual(o.clientWidth);
      expect(o.lost, 'cut off at 320 px').toEqual([]);
    });
  }
});

/** sRGB → CIELAB (D65), and the CIE76 distance ΔE between two colours. */
function deltaE(a, b) {
  const lab = ([r, g, b2]) => {
    const lin = (c) => { c /= 255; return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    const [R, G, B] = [lin(r), lin(g), lin(b2)];
    const xyz = [(0.4124 * R + 0.3576 * G + 0.1805 * B) / 0.95047, 0.2126 * R + 0.7152 * G + 0.0722 * B, (0.0193 * R + 0.1192 * G + 0.9505 * B) / 1.08883];
    const f = (t) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116);
    const [fx, fy, fz] = xyz.map(f);
    return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
  };
  const [p, q] = [lab(a), lab(b)];
  return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

/**
 * The swatches the colour check reads: each group's colours in order (adjacent ones compared), taken
 * from the pages' own sources: the stepper's heat classes h0…h8 and d0…d8 (their computed
 * backgrounds), the maps' scale (common/export.js heat at the nine stops), the loss chart's two
 * curves (train/chart.js RUN_STYLES), and an exercise's right and wrong marks (their computed colours).
 */
async function swatches(page) {
  return page.evaluate(async () => {
    const { heat } = await import('/common/export.js');
    const { RUN_STYLES } = await import('/train/chart.js');
    const probe = (cls, prop = 'backgroundColor', tag = 'div') => {
      const e = document.createElement(tag);
      e.className = cls;
      document.querySelector('.aps-root').append(e);
      const c = getComputedStyle(e)[prop];
      e.remove();
      return c;
    };
    const right = document.createElement('table');
    right.className = 'aps-mat';
    right.innerHTML = '<tr><td class="is-right"><span class="aps-answer-mark"></span></td><td class="is-wrong"><span class="aps-answer-mark"></span></td></tr>';
    document.querySelector('.aps-root').append(right);
    const marks = [...right.querySelectorAll('.aps-answer-mark')].map((m) => getComputedStyle(m).color);
    right.remove();
    return {
      'stepper heat h0…h8': [0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => probe(`aps-c h${i}`)),
      'stepper diverging d0…d8': [0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => probe(`aps-c d${i}`)),
      'maps scale, 9 stops': [0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => heat(i / 8)),
      'loss chart: training vs validation': [RUN_STYLES[0].color, RUN_STYLES[0].valColor],
      'loss chart: run 1 vs run 2': [RUN_STYLES[0].color, RUN_STYLES[1].color],
      'exercise marks: right vs wrong': marks,
    };
  });
}

/**
 * Smallest ΔE (CIE76) between neighbours that stays readable. A just noticeable difference is about
 * 2.3; adjacent steps of a scale must be at least MIN_STEP apart, the two things of a pair (curves,
 * marks) at least MIN_PAIR, under each deficiency, as Chromium renders them.
 */
const MIN_STEP = 3;
const MIN_PAIR = 10;

test('colour vision: heat scales, the loss curves and right/wrong stay apart under protanopia, deuteranopia, tritanopia', async ({ page }, testInfo) => {
  await ready(page);
  const groups = await swatches(page);
  // the swatches drawn side by side (CSSOM styles: the page's CSP allows them), 20 × 20 px each
  await page.evaluate((groups) => {
    const box = document.createElement('div');
    box.id = 'a11y-swatches';
    Object.assign(box.style, { position: 'fixed', left: '0', top: '0', zIndex: '99999', background: '#fff' });
    for (const colors of Object.values(groups)) {
      const row = document.createElement('div');
      row.style.display = 'flex';
      for (const c of colors) {
        const s = document.createElement('div');
        Object.assign(s.style, { width: '20px', height: '20px', background: c });
        row.append(s);
      }
      box.append(row);
    }
    document.body.append(box);
  }, groups);
  const cdp = await page.context().newCDPSession(page);
  const names = Object.keys(groups);
  const report = [];
  for (const type of ['none', 'protanopia', 'deuteranopia', 'tritanopia']) {
    await cdp.send('Emulation.setEmulatedVisionDeficiency', { type });
    const png = await page.locator('#a11y-swatches').screenshot({ path: testInfo.outputPath(`swatches-${type}.png`) });
    // the screenshot read back in the page: each swatch's centre pixel
    const seen = await page.evaluate(async ({ b64, sizes }) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width; c.height = img.height;
      const g = c.getContext('2d', { willReadFrequently: true });
      g.drawImage(img, 0, 0);
      const k = img.width / document.getElementById('a11y-swatches').getBoundingClientRect().width;
      return sizes.map((n, row) => Array.from({ length: n }, (_, i) => [...g.getImageData(Math.floor((i * 20 + 10) * k), Math.floor((row * 20 + 10) * k), 1, 1).data.slice(0, 3)]));
    }, { b64: png.toString('base64'), sizes: names.map((n) => groups[n].length) });
    names.forEach((name, g) => {
      const cs = seen[g];
      const min = Math.min(...cs.slice(1).map((c, i) => deltaE(cs[i], c)));
      const need = cs.length > 2 ? MIN_STEP : MIN_PAIR;
      report.push(`${type} · ${name}: least ΔE ${min.toFixed(1)} (need ${need})`);
      expect.soft(min, `${type} · ${name}`).toBeGreaterThanOrEqual(need);
    });
  }
  await testInfo.attach('delta-e.txt', { body: report.join('\n') });
  console.log(report.join('\n'));
});

test('meaning not by colour alone: an exercise\'s marks carry ✓ / ✗ text', async ({ page }) => {
  await ready(page);
  await page.locator('select[data-key="exercise"]').selectOption('identity-softmax');
  const a = (r, c) => page.locator(`figure[data-panel="weights"] td[data-r="${r}"][data-c="${c}"] input.aps-answer`);
  await a(0, 0).fill('0.6698');
  await a(0, 1).fill('0.35');
  await page.locator('[data-key="ex.check"]').click();
  await expect(page.locator('figure[data-panel="weights"] td.is-right .aps-answer-mark')).toHaveText(/✓/);
  await expect(page.locator('figure[data-panel="weights"] td.is-wrong .aps-answer-mark')).toHaveText(/✗/);
});

test('prefers-reduced-motion on the training page: no animation, no transition, no smooth scroll', async ({ page }) => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('/train/');
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  const moving = await page.evaluate(() => [...document.querySelectorAll('*')].filter((e) => {
    const s = getComputedStyle(e);
    return s.animationName !== 'none' || s.transitionDuration.split(',').some((d) => parseFloat(d) > 0) || s.scrollBehavior === 'smooth';
  }).map((e) => `${e.tagName}.${e.className}`));
  expect(moving).toEqual([]);
});

test('forced colours: the heat cells and masked cells keep their look (canvas), text and focus stay visible', async ({ page }, testInfo) => {
  await ready(page, '/#preset=causal-4');
  await page.emulateMedia({ forcedColors: 'active' });
  const fig = page.locator('figure[data-panel="weights"]');
  await fig.screenshot({ path: testInfo.outputPath('forced-colors-weights.png') });
  // the cells are painted on a canvas, which forced colours leave as drawn: count its colours
  const colours = await fig.locator('canvas').first().evaluate((c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const set = new Set();
    for (let i = 0; i < d.length; i += 4) set.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    return set.size;
  });
  expect(colours).toBeGreaterThan(3); // the heat bins and the masked hatching, not one flat colour
  // a cell focused shows its ring in a system colour
  await page.locator('figure[data-panel="weights"] td[data-r="1"][data-c="0"]').focus();
  const ring = await page.locator('figure[data-panel="weights"] td[data-r="1"][data-c="0"]').evaluate((e) => getComputedStyle(e).outlineStyle);
  expect(ring).not.toBe('none');
});

/** Waits until the weights panel's text has the identity example's first weight. */
async function waitWeights(page) {
  await expect(page.locator('figure[data-panel="weights"] td[data-c]').first()).toHaveText('0.6698');
}

test('the accessibility tree: every control of the stepper and the training page has a name', async ({ page }) => {
  const unnamed = (snap) => snap.split('\n').filter((l) => /^\s*- (button|checkbox|radio|slider|textbox|combobox|spinbutton|link|switch|tab)(\s*\[.*\])?\s*:?$/.test(l));
  await ready(page);
  const s1 = await page.locator('body').ariaSnapshot();
  expect(unnamed(s1)).toEqual([]);
  // a heat map's numbers are in the tree: the weights panel's canvas has its grid or table behind it
  await waitWeights(page);
  const w = await page.locator('figure[data-panel="weights"]').ariaSnapshot();
  expect(w).toMatch(/- (grid|table)/);
  expect(w).toContain('0.6698');
  await page.goto('/train/');
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  const s2 = await page.locator('body').ariaSnapshot();
  expect(unnamed(s2)).toEqual([]);
  await expect(page.locator('#tr-training')).toMatchAriaSnapshot(`
    - heading /Training/ [level=2]
    - button "Start training"
  `);
});

test('live regions: a run\'s progress is announced at most every tenth of the run; an exercise\'s result is announced', async ({ page }) => {
  await page.goto('/train/#steps=400&batch_size=2&eval_interval=100&sample_every=0');
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  // every text the live region and the shown status line take, recorded as the page writes them
  await page.evaluate(() => {
    window.__said = [];
    window.__shown = 0;
    const say = document.getElementById('tr-status-say');
    new MutationObserver(() => window.__said.push(say.textContent)).observe(say, { childList: true, characterData: true, subtree: true });
    new MutationObserver(() => { window.__shown++; }).observe(document.getElementById('tr-status'), { childList: true, characterData: true, subtree: true });
  });
  await expect(page.locator('#tr-status-say')).toHaveAttribute('role', 'status');
  await expect(page.locator('#tr-status')).not.toHaveAttribute('role', 'status');
  await page.locator('#tr-start').click();
  await expect(page.locator('#app')).toHaveAttribute('data-train', /done|diverged/, { timeout: BOOT_MS * 4 });
  const said = await page.evaluate(() => window.__said);
  const shown = await page.evaluate(() => window.__shown);
  expect(said.length).toBeGreaterThanOrEqual(2); // the start and the end at least
  expect(said.length).toBeLessThanOrEqual(14); // starting, ten tenths, done (and a little slack)
  expect(shown).toBeGreaterThan(said.length); // the shown line changed more often than was spoken
  expect(said.at(-1)).toMatch(/^Done: 400 steps|^Stopped at step/);
  console.log(`live region: ${said.length} announcements, status line written ${shown} times`);
  // an exercise's result is in a status region
  await ready(page);
  await page.locator('select[data-key="exercise"]').selectOption('identity-softmax');
  await page.locator('figure[data-panel="weights"] td[data-r="0"][data-c="0"] input.aps-answer').fill('0.6698');
  await page.locator('[data-key="ex.check"]').click();
  await expect(page.getByRole('status').filter({ hasText: /1 of 4 right/ })).toBeVisible();
});
