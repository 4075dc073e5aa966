#!/usr/bin/env node
// docs-screenshots.mjs — the screenshots of the modern variants in docs/stepper.md and
// docs/train.md, taken from the pages themselves in Debian's Chromium:
//   stepper-<variant>.png: each variant's example opened in the stepper at 1366 × 900, scrolled
//     to the variant's step, one cell of it focused so that the explanation box shows its
//     arithmetic (a viewport capture, 1366 px wide);
//   train-<variant>.png: the training page's model view (every head's map of one prompt) of a
//     model with that variant chosen in the form, after a short seeded run of the copy task
//     (TRAIN_STEPS steps, the page's default seed): the model view and its enlarged head, at 1366 px.
//
//   node scripts/docs-screenshots.mjs                        # all of them
//   node scripts/docs-screenshots.mjs flash mla train-alibi  # some of them (the names of SHOTS, TRAIN_SHOTS)
//
// Limits: needs web/gen/ built (scripts/build wasm) and /usr/bin/chromium (or CHROMIUM_PATH); the
// pictures follow the pages, so they are taken again by hand after a page changes. The training
// runs take a minute or two each on a loaded machine.
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

/**
 * The training page's shots: the form's variant choices (the page's permalink keys), trained
 * TRAIN_STEPS steps on the copy task, then the model view of PROMPT. The window is 8 so that the
 * hatched keys behind it show on a 21-character prompt.
 */
const TRAIN_SHOTS = {
  'train-rope': 'pos=rope',
  'train-alibi': 'pos=alibi',
  'train-gqa': 'n_kv_head=1',
  'train-window': 'window=8',
};
const TRAIN_STEPS = 600;
const PROMPT = '\ncabej=cabej\nhid=hid\n';

const all = { ...SHOTS, ...TRAIN_SHOTS };
const names = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(all);
for (const n of names) if (!all[n]) throw new Error(`no screenshot "${n}" (use ${Object.keys(all).join(', ')})`);

/** A model of the variant `choice` trained in the page, its model view saved as docs/<name>.png. */
async function trainShot(page, url, name, choice) {
  const hash = `#steps=${TRAIN_STEPS}&sample_every=0&${choice}&prompt=${encodeURIComponent(PROMPT)}`;
  await page.goto(`${url}/train/index.html${hash}`);
  await page.locator('#app[data-status="ready"]').waitFor();
  await page.locator('#tr-start').click();
  await page.locator('#app[data-train="done"], #app[data-train="diverged"]').waitFor({ timeout: 900_000 });
  await page.locator('#tr-maps').click();
  const view = page.locator('#tr-maps-box');
  await view.waitFor();
  await page.locator('#tr-maps-box[data-painted]').waitFor();
  await view.evaluate((v) => v.scrollIntoView({ block: 'start' }));
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await view.screenshot({ path: `${DOCS}${name}.png` });
  console.log(`docs/${name}.png: ${choice}, ${TRAIN_STEPS} steps`);
}

const { server, url } = await serveWeb({ port: 0 });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.addInitScript(() => localStorage.setItem('attention-playground.lang', 'en'));
  for (const name of names) {
    if (TRAIN_SHOTS[name]) { await trainShot(page, url, name, TRAIN_SHOTS[name]); continue; }
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
