#!/usr/bin/env node
// docs-screenshots.mjs — the screenshots of docs/stepper.md's modern variants, taken from the page
// itself: each variant's example opened in Debian's Chromium at 1366 × 900, scrolled to the
// variant's step, one cell of it focused so that the explanation box shows its arithmetic, and
// saved as docs/stepper-<variant>.png (a viewport capture, 1366 px wide).
//
//   node scripts/docs-screenshots.mjs            # all of them
//   node scripts/docs-screenshots.mjs flash mla  # some of them (the names of SHOTS)
//
// Limits: needs web/gen/ built (scripts/build wasm) and /usr/bin/chromium (or CHROMIUM_PATH); the
// pictures follow the page, so they are taken again by hand after the page changes.
import { chromium } from '@playwright/test';
import { fileURLToPath } from 'node:url';
import { serveWeb } from './web-server.mjs';

const DOCS = fileURLToPath(new URL('../docs/', import.meta.url));
const WIDTH = 1366;

/**
 * Each screenshot: the example, the panel to scroll to the top of the window, and the cell to focus
 * (its arithmetic in the explanation box). backward: the backward pass's step instead.
 */
const SHOTS = {
  rope: { example: 'rope-distance', panel: 'q_rot', cell: [1, 0] },
  alibi: { example: 'alibi-heads', panel: 'bias', cell: [3, 0] },
  gqa: { example: 'gqa-8-2', panel: 'kv_heads', cell: [5, 1] },
  window: { example: 'window-sink', panel: 'mask', cell: [7, 2] },
  flash: { example: 'flash-tiles', panel: 'flash_m', focus: 'flash_l', cell: [5, 1] },
  mla: { example: 'mla-latent', panel: 'q_latent', focus: 'scores_absorbed', cell: [2, 1] },
};

const names = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(SHOTS);
for (const n of names) if (!SHOTS[n]) throw new Error(`no screenshot "${n}" (use ${Object.keys(SHOTS).join(', ')})`);

const { server, url } = await serveWeb({ port: 0 });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.addInitScript(() => localStorage.setItem('attention-playground.lang', 'en'));
  for (const name of names) {
    const s = SHOTS[name];
    await page.goto(`${url}/index.html`);
    await page.locator('#app[data-status="ready"]').waitFor();
    await page.locator('select[data-key="preset"]').selectOption(s.example);
    const fig = page.locator(`figure[data-panel="${s.panel}"]`);
    await fig.locator('td[data-r="0"][data-c="0"]').waitFor();
    await fig.evaluate((f) => f.scrollIntoView({ block: 'start' }));
    const focus = page.locator(`figure[data-panel="${s.focus ?? s.panel}"] td[data-r="${s.cell[0]}"][data-c="${s.cell[1]}"]`);
    await focus.focus({ preventScroll: true });
    await page.locator('.aps-explain-lines').first().waitFor();
    // the panels near the screen paint in the next frames: wait for two of them
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const path = `${DOCS}stepper-${name}.png`;
    await page.screenshot({ path });
    console.log(`docs/stepper-${name}.png: ${s.example}, ${s.panel}`);
  }
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
} finally {
  await browser.close();
  server.close();
}
