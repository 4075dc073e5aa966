// train.spec.mjs — the training page (web/train/) in Chromium: a 100-step run of the tiny preset on
// the copy task lowers the loss and draws the chart; pause, resume and reset; the learner types,
// asks for maps and scrolls while the worker trains; the strict/inclusive experiment; a divergence
// stopped with the core's message and marked; an attention head opened in the stepper shows the
// same weights; the KV-cache view's differences stay ≤ 1e-5; checkpoints download and upload;
// a corrupted upload gets the core's message and the model stays; 中文; phone and projector
// layouts; bad input in every field; the permalink. Runs are kept short (batch 4–8, tens of
// steps) so the suite stays within CI's budget, but for one 100-step run that shows the loss fall.
//
// Every wait is on a state (an attribute of #app, the runtime, a count), never a race with the
// worker: a test that acts during a run uses a run too long to end before it acts (RUN_FOREVER),
// then pauses or resets it. How fast the page and the worker are (tokens/s, the page's script
// time per frame while it trains) is measured by bench/train_bench.mjs, which prints and never
// fails.
import { readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';

/** The native gpt CLI (scripts/build native), for the checkpoint trained outside the page. */
const GPT = process.env.AP_GPT || fileURLToPath(new URL('../../build/gpt', import.meta.url));

/** The most steps a run may have (config.js FIELDS.steps): minutes of training even on a fast machine. */
const RUN_FOREVER = 20_000;

const app = (page) => page.locator('#app');
const rt = (page, expr) => page.evaluate(`(() => { const rt = window.trainPage.runtime; return ${expr}; })()`);

async function open(page, hash = '') {
  await page.goto(`/train/${hash}`);
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
}

async function trainToEnd(page) {
  await page.locator('#tr-start').click();
  await expect(app(page)).toHaveAttribute('data-train', /done|diverged/, { timeout: RUN_MS });
}

/** Pauses a run that cannot have ended (RUN_FOREVER steps): the page and the worker agree it stands still. */
async function pauseRun(page) {
  await page.locator('#tr-pause').click();
  await expect(app(page)).toHaveAttribute('data-train', 'paused');
  const at = await rt(page, 'rt.step');
  // nothing moves while paused: the worker, asked three times in turn (each answer comes after any
  // progress it posted before it), is at the same step as the page
  for (let k = 0; k < 3; k++) {
    const info = await page.evaluate(() => window.trainPage.worker.call('info', { run: 'main' }));
    expect(info.step).toBe(at);
    expect(await rt(page, 'rt.step')).toBe(at);
  }
  return at;
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

test('the page loads its worker and the GPT wasm from its own origin (uPlot later), and links to the stepper and back', async ({ page }) => {
  const urls = [];
  page.on('request', (r) => urls.push(r.url()));
  await open(page);
  await expect(page.locator('h1')).toHaveText('Train a tiny GPT');
  const origin = new URL(page.url()).origin;
  expect(urls.every((u) => u.startsWith(origin) || u.startsWith('data:'))).toBe(true);
  expect(urls.some((u) => u.endsWith('/train/worker.js'))).toBe(true);
  expect(urls.some((u) => u.endsWith('.wasm'))).toBe(true);
  // what no learner needs before using it loads on first use: uPlot with the first points, the
  // KV-cache view with the first generation (the CSP test sees the chart drawn after a run)
  expect(urls.some((u) => u.endsWith('/gen/vendor/uplot.mjs'))).toBe(false);
  expect(urls.some((u) => u.endsWith('/train/kv.js'))).toBe(false);
  // to the stepper, and from the stepper back here
  await page.locator('#tr-nav-stepper').click();
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await page.locator('a[href$="train/"], a[href$="train/index.html"]').first().click();
  await expect(page.locator('h1')).toHaveText('Train a tiny GPT');
});

test('a 100-step run of the tiny preset on the copy task lowers the loss, and the chart has the points', async ({ page }, testInfo) => {
  await open(page, '#steps=100&batch_size=8&eval_interval=25&sample_every=50');
  await expect(page.locator('#tr-f-task')).toHaveValue('copy');
  await expect(page.locator('#tr-preset-tiny')).toHaveAttribute('aria-checked', 'true');
  await trainToEnd(page);
  await expect(app(page)).toHaveAttribute('data-train', 'done');
  // a finished run neither pauses nor resumes
  await expect(page.locator('#tr-pause')).toBeDisabled();
  await expect(page.locator('#tr-resume')).toBeDisabled();
  const s = await rt(page, 'rt.series');
  expect(s.train).toHaveLength(100);
  expect(s.steps).toEqual([...Array(100).keys()].map((k) => k + 1)); // step k is the k-th update
  expect(s.valSteps).toEqual([0, 25, 50, 75, 100]);
  expect(s.train.every(Number.isFinite)).toBe(true);
  // the loss falls: the last ten steps against the first ten, and validation from start to end
  expect(mean(s.train.slice(90))).toBeLessThan(mean(s.train.slice(0, 10)));
  expect(s.val[4]).toBeLessThan(s.val[0]);
  expect(await page.evaluate(() => window.trainPage.chartPoints())).toBe(105);
  // uPlot drew them: the canvas has ink, the legend names both series
  await expect(page.locator('#tr-chart .u-legend')).toContainText('training loss');
  await expect(page.locator('#tr-chart .u-legend')).toContainText('validation loss');
  // the two curves differ in colour and line style, their legend swatches too; the task's floor
  // (the one the form states) is drawn and named
  const floor = (await page.locator('#tr-data').getByText(/the floor\): [\d.]+ nats/).textContent()).match(/the floor\): ([\d.]+) nats/)[1];
  await expect(page.locator('#tr-chart .u-legend')).toContainText(`the task’s floor, ${floor} (a perfect model’s loss)`);
  const swatches = await page.locator('#tr-chart .u-legend .u-series').evaluateAll((rows) => rows.map((r) => {
    const m = r.querySelector('.u-marker');
    if (!m) return null;
    const st = getComputedStyle(m);
    return { label: r.textContent, color: st.borderTopColor, style: st.borderTopStyle };
  }).filter(Boolean));
  const sw = (word) => swatches.find((x) => x.label.includes(word));
  expect(sw('training loss').color).not.toBe(sw('validation loss').color);
  expect(sw('training loss').style).toBe('solid');
  expect(sw('validation loss').style).toBe('dotted');
  expect(sw('floor').style).toBe('dashed');
  expect(new Set([sw('training loss'), sw('validation loss'), sw('floor')].map((x) => x.color)).size).toBe(3);
  // every section numbered from one list, 1 to 12 in order
  const heads = await page.locator('#app section > h2').allTextContents();
  expect(heads.map((h) => Number(h.split(' · ')[0]))).toEqual([...Array(heads.length).keys()].map((k) => k + 1));
  expect(heads.length).toBe(12);
  // the Workers select looks like the page's other selects
  const look = (sel) => page.locator(sel).evaluate((e) => { const c = getComputedStyle(e); return [c.borderTopWidth, c.borderTopStyle, c.borderRadius, c.paddingTop, c.fontSize].join(' '); });
  expect(await look('#tr-workers')).toBe(await look('#tr-f-task'));
  await expect(page.locator('[data-stat="step"] dd')).toHaveText('100 / 100');
  await expect(page.locator('[data-stat="val"] dd')).toHaveText(s.val[4].toFixed(4));
  expect(Number((await page.locator('[data-stat="tps"] dd').textContent()).replace(/,/g, ''))).toBeGreaterThan(0);
  await expect(page.locator('[data-stat="elapsed"] dd')).toHaveText(/^\d+:\d\d$/);
  // a sample at step 50 and at step 100, continuing the generation prompt
  await expect(page.locator('#tr-samples li')).toHaveCount(2);
  await expect(page.locator('#tr-samples li').first()).toContainText('step 100');
  await expect(page.locator('#tr-samples .tr-sample-prompt').first()).toHaveText('↵cabej='); // a task line starts after '\n'
  await page.locator('#tr-training').screenshot({ path: testInfo.outputPath('loss-chart.png') });
});

test('pause, resume and reset', async ({ page }) => {
  // a run too long to end before the clicks: each state below is the page's doing, not the run's
  await open(page, `#steps=${RUN_FOREVER}&batch_size=4&eval_interval=10&sample_every=0`);
  await page.locator('#tr-start').click();
  await expect(app(page)).toHaveAttribute('data-train', 'training', { timeout: RUN_MS });
  await expect.poll(() => rt(page, 'rt.step'), { timeout: RUN_MS }).toBeGreaterThanOrEqual(3);
  const at = await pauseRun(page);
  await expect(page.locator('#tr-status')).toContainText('Paused at step');
  await expect(page.locator('#tr-resume')).toBeEnabled();
  await expect(page.locator('#tr-pause')).toBeDisabled();
  await page.locator('#tr-resume').click();
  await expect(app(page)).toHaveAttribute('data-train', 'training');
  // it trains on from where it stood, past an evaluation or two
  await expect.poll(() => rt(page, 'rt.step'), { timeout: RUN_MS }).toBeGreaterThan(at + 20);
  const end = await pauseRun(page);
  const s = await rt(page, 'rt.series');
  expect(s.steps).toEqual([...Array(end).keys()].map((k) => k + 1)); // no step lost or repeated across the pause
  expect(s.valSteps).toEqual([...Array(Math.floor(end / 10) + 1).keys()].map((k) => 10 * k));
  await page.locator('#tr-reset').click();
  await expect(app(page)).toHaveAttribute('data-train', 'idle');
  await expect(page.locator('[data-stat="step"] dd')).toHaveText('—');
  expect(await page.evaluate(() => window.trainPage.chartPoints())).toBe(0);
  await expect(page.locator('#tr-reset')).toBeDisabled();
  await expect(page.locator('#tr-maps')).toBeDisabled();
  await expect(page.locator('#tr-download')).toBeDisabled();
});

test('the end of a run reaches every section even when several progress messages share one frame', async ({ page }) => {
  // Hold animation frames from the run's first progress message on, so that every later one, the
  // final one that says done included, arrives while the page's refresh waits for its frame; then
  // let the frames run: generation must become possible, as after any finished run. The hold
  // starts in a listener of the worker's events (after the page's own), not in a race with the run.
  await page.addInitScript(() => {
    const raf = window.requestAnimationFrame.bind(window);
    window.__held = [];
    window.requestAnimationFrame = (cb) => (window.__hold ? (window.__held.push(cb), 0) : raf(cb));
  });
  await open(page, '#steps=300&batch_size=4&block_size=12&eval_interval=100&sample_every=0&gen_prompt=cabej%3D&gen_max=4');
  await page.evaluate(() => {
    window.__heldAt = null;
    window.trainPage.worker.on((m) => {
      if (m.event !== 'progress' || m.run !== 'main' || window.__heldAt !== null) return;
      window.__hold = true;
      window.__heldAt = m.step;
    });
  });
  await page.locator('#tr-start').click();
  await expect.poll(() => rt(page, 'rt.status'), { timeout: RUN_MS }).toBe('done');
  const { held, heldAt } = await page.evaluate(() => ({ held: window.__held.length, heldAt: window.__heldAt }));
  expect(held).toBeGreaterThan(0);
  expect(heldAt).toBeLessThan(300); // messages that did not end the run came during the hold too
  await page.evaluate(() => { window.__hold = false; const cbs = window.__held.splice(0); for (const cb of cbs) cb(performance.now()); });
  await expect(app(page)).toHaveAttribute('data-train', 'done');
  await expect(page.locator('#tr-gen-start')).toBeEnabled();
  await expect(page.locator('#tr-gen-status')).not.toContainText('Pause training');
});

test('while the worker trains, the learner types, asks for attention maps and scrolls: the maps come, the run goes on', async ({ page }) => {
  // (how long the page's own scripts hold its thread meanwhile, frame by frame, is what
  // bench/train_bench.mjs measures and prints)
  await open(page, `#steps=${RUN_FOREVER}&batch_size=8&eval_interval=10&sample_every=10`);
  await page.locator('#tr-start').click();
  await expect.poll(() => rt(page, 'rt.step'), { timeout: RUN_MS }).toBeGreaterThanOrEqual(5);
  await page.locator('#tr-f-lr').fill('0.002');
  await page.locator('#tr-f-seed').fill('7');
  await expect(page.locator('#tr-changed')).toBeVisible(); // the form no longer describes the model that trains
  await page.locator('#tr-maps').click();
  await expect(page.locator('.tr-map').first()).toBeVisible({ timeout: RUN_MS });
  await page.mouse.wheel(0, 800);
  await page.locator('.tr-map').nth(3).hover();
  await expect(page.locator('.tr-zoom-caption')).toContainText('Layer 1, head 4.');
  expect(await rt(page, 'rt.status')).toBe('training');
  const mapsAt = await rt(page, 'rt.maps.step');
  await expect.poll(() => rt(page, 'rt.step'), { timeout: RUN_MS }).toBeGreaterThan(mapsAt + 10);
  const end = await pauseRun(page);
  expect(await page.evaluate(() => window.trainPage.chartPoints())).toBe(end + Math.floor(end / 10) + 1); // every step and evaluation drawn
  await page.locator('#tr-reset').click();
  await expect(app(page)).toHaveAttribute('data-train', 'idle');
});

test('divergence: the naive softmax at a high learning rate stops with the core’s message, and the chart marks the step', async ({ page }) => {
  await open(page, '#softmax=naive&lr=0.05&steps=200&batch_size=8&eval_interval=10&sample_every=0');
  await trainToEnd(page, 110_000);
  await expect(app(page)).toHaveAttribute('data-train', 'diverged');
  const at = await rt(page, 'rt.series.divergedAt');
  expect(Number.isInteger(at)).toBe(true);
  const alert = page.locator('#tr-alert');
  await expect(alert).toContainText(`diverged at step ${at}`);
  await expect(alert.locator('.tr-core-msg')).toContainText(`at step ${at}`); // the core's words name the same step
  await expect(alert.locator('.tr-core-msg')).toContainText('naive softmax');
  // the chart (redrawn at most every 250 ms) names the step in its description and draws the marker
  await expect(page.locator('#tr-chart .uplot')).toHaveAttribute('aria-label', new RegExp(`diverged at step ${at}\\.`));
  await expect(page.locator('#tr-status')).toContainText(`step ${at}`);
  await expect(page.locator('#tr-resume')).toBeDisabled();
});

test('experiment: strict vs inclusive mask from one seed, two curves overlaid, a sentence from the numbers', async ({ page }, testInfo) => {
  await open(page, '#steps=30&batch_size=4&eval_interval=10');
  await page.locator('#tr-exp-mask').click();
  await expect(app(page)).toHaveAttribute('data-exp', 'done', { timeout: RUN_MS });
  const ex = await rt(page, 'rt.exp');
  expect(ex.labels).toEqual(['strict j > i', 'inclusive j ≥ i']);
  for (const r of ex.runs) {
    expect(r.steps).toEqual([...Array(30).keys()].map((k) => k + 1));
    expect(r.valSteps).toEqual([0, 10, 20, 30]);
  }
  // the same seed: the same initial weights and batches, so the step-0 validation loss of both
  // differs only by the mask
  expect(ex.runs[0].val[0]).not.toBe(ex.runs[1].val[0]);
  expect(await page.evaluate(() => window.trainPage.expChartPoints())).toBe(2 * (30 + 4));
  const sentence = page.locator('#tr-exp-sentence');
  await expect(sentence).toContainText('At step 30 the validation loss');
  await expect(sentence).toContainText(ex.runs[0].val[3].toFixed(3));
  await expect(sentence).toContainText(ex.runs[1].val[3].toFixed(3));
  await expect(page.locator('#tr-exp-chart .u-legend')).toContainText('strict j > i: training loss');
  await expect(page.locator('#tr-exp-chart .u-legend')).toContainText('inclusive j ≥ i: validation loss');
  await page.locator('#tr-exp').screenshot({ path: testInfo.outputPath('experiment.png') });
});

test('an attention map’s head opens in the stepper, which shows the same weights number for number', async ({ page, context }, testInfo) => {
  await open(page, '#steps=20&batch_size=4&sample_every=0&prompt=cabej%3Dcabej');
  await trainToEnd(page);
  await page.locator('#tr-maps').click();
  await expect(page.locator('.tr-map')).toHaveCount(8);
  await expect(page.locator('#tr-maps-status')).toContainText('11 characters: 2 layers × 4 heads');
  await page.locator('#tr-maps-section').screenshot({ path: testInfo.outputPath('attention-maps.png') });
  for (const [l, h] of [[1, 2], [0, 0]]) {
    const map = await page.evaluate(([l, h]) => {
      const m = window.trainPage.runtime.maps;
      const T = m.T;
      const off = (l * m.n_head + h) * T * T;
      return { T, w: Array.from(m.weights.subarray(off, off + T * T)) };
    }, [l, h]);
    const link = page.locator(`.tr-map[data-layer="${l}"][data-head="${h}"]`);
    await link.focus(); // keyboard: focus enlarges, Enter opens
    await expect(page.locator('.tr-zoom-caption')).toContainText(`Layer ${l + 1}, head ${h + 1}.`);
    const [stepper] = await Promise.all([context.waitForEvent('page'), link.press('Enter')]);
    await expect(stepper.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
    const rows = stepper.locator('figure[data-panel="weights"] table.aps-mat:not(.aps-stats) tbody tr');
    await expect(rows).toHaveCount(map.T);
    // the table's numbers are written (a stepper that paints its heatmap first writes them right
    // after that frame): the last cell has its number, then two frames and a task
    await expect(stepper.locator('figure[data-panel="weights"] td[data-c]').last()).toHaveText(/\d/);
    await stepper.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0)))));
    const cells = await stepper.evaluate(() => {
      return [...document.querySelectorAll('figure[data-panel="weights"] table.aps-mat:not(.aps-stats) tbody tr')].map((tr) =>
        [...tr.querySelectorAll('td[data-c]')].map((td) => ({ text: td.textContent, exact: Number(td.title) })));
    });
    const fmt = await stepper.evaluate(async (w) => {
      const { formatNumber } = await import('/common/format.js');
      return w.map((v) => formatNumber(v));
    }, map.w);
    let worst = 0;
    let sameBits = 0;
    for (let i = 0; i < map.T; i++) {
      expect(cells[i]).toHaveLength(map.T);
      for (let j = 0; j < map.T; j++) {
        const c = cells[i][j];
        const w = map.w[i * map.T + j];
        expect(c.text, `weights[${i}][${j}]`).toBe(fmt[i * map.T + j]); // what the learner reads
        worst = Math.max(worst, Math.abs(Math.fround(c.exact) - w)); // the stepper's float32 (its title)
        if (Math.fround(c.exact) === w) sameBits++;
      }
    }
    console.log(`layer ${l} head ${h}: ${sameBits} of ${map.T * map.T} weights bit-identical; largest |stepper − map| = ${worst}`);
    expect(worst).toBeLessThanOrEqual(1e-6);
    // the stepper is in Q, K, V mode with one head and the model's mask
    const st = await stepper.evaluate(() => window.attentionStepper.getState());
    expect(st.mode).toBe('qkv');
    expect(st.options).toMatchObject({ n_head: 1, causal: true, mask: 'strict', softmax: 'stable' });
    if (l === 1) await stepper.screenshot({ path: testInfo.outputPath('stepper-head.png') });
    await stepper.close();
  }
});

test('the KV-cache view: base grows by one per token, the query row covers base + 1 keys, cached and full logits agree to ≤ 1e-5', async ({ page }, testInfo) => {
  // block_size 12: the generation passes it, so a step crops the context and rebuilds the cache
  await open(page, '#steps=15&batch_size=4&block_size=12&sample_every=0&gen_prompt=cabej%3D&gen_max=10');
  await trainToEnd(page);
  await page.locator('#tr-gen-start').click();
  await expect(page.locator('.tr-kv-facts')).toContainText('base + 1 = 6');
  for (let n = 1; n <= 10; n++) {
    await page.locator('#tr-gen-next').click();
    await expect(page.locator('.tr-kv-steps tbody tr')).toHaveCount(n + 1);
  }
  await expect(page.locator('#tr-gen-next')).toBeDisabled();
  const rows = await page.locator('.tr-kv-steps tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  const diffs = await page.locator('.tr-kv-steps td[data-diff]').evaluateAll((tds) => tds.map((td) => Number(td.dataset.diff)));
  expect(diffs).toHaveLength(11);
  for (const d of diffs) expect(d).toBeLessThanOrEqual(1e-5);
  // bases: 5 for the prompt's last position, then 6 … 11, then the context stays at block_size 12
  const bases = rows.map((r) => Number(r[2]));
  expect(bases).toEqual([5, 6, 7, 8, 9, 10, 11, 11, 11, 11, 11]);
  expect(rows.map((r) => Number(r[3]))).toEqual(bases.map((b) => b + 1));
  await expect(page.locator('.tr-kv-steps tr.is-rebuilt')).toHaveCount(4);
  // the query row table has one row per head and base + 1 columns summing to 1
  const att = await page.locator('table[data-kind="query-row"] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.title))));
  expect(att).toHaveLength(4);
  for (const r of att) {
    expect(r).toHaveLength(12);
    expect(Math.abs(r.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-5);
  }
  await expect(page.locator('figure[data-cache="K"] figcaption')).toContainText('12 rows × 64');
  await page.locator('#tr-gen').screenshot({ path: testInfo.outputPath('kv-cache.png') });
  // sampling options: temperature and top-k are used when greedy is off
  await page.locator('#tr-f-gen_greedy').uncheck();
  await expect(page.locator('#tr-f-gen_temperature')).toBeEnabled();
  await page.locator('#tr-f-gen_temperature').fill('0.8');
  await page.locator('#tr-f-gen_top_k').fill('3');
  await page.locator('#tr-gen-start').click();
  await page.locator('#tr-gen-next').click();
  await expect(page.locator('.tr-kv-steps tbody tr')).toHaveCount(2);
});

test('lazily loaded pieces work on first use by keyboard: the loss chart (uPlot) with the first points, the KV-cache view with the first generation', async ({ page }) => {
  const urls = [];
  page.on('request', (r) => urls.push(new URL(r.url()).pathname));
  await open(page, '#steps=6&batch_size=4&eval_interval=2&sample_every=0&gen_prompt=cabej%3D&gen_max=3');
  const loaded = (file) => urls.some((u) => u.endsWith(file));
  expect(loaded('/gen/vendor/uplot.mjs')).toBe(false);
  expect(loaded('/train/kv.js')).toBe(false);
  // the chart box is there at once, empty, with the line that says why
  await expect(page.locator('#tr-chart')).toBeVisible();
  await expect(page.locator('.tr-chart-empty')).toBeVisible();
  await page.locator('#tr-start').focus();
  await page.keyboard.press('Enter');
  await expect(app(page)).toHaveAttribute('data-train', /done|diverged/, { timeout: RUN_MS });
  await expect(page.locator('#tr-chart .uplot canvas')).toBeVisible();
  expect(loaded('/gen/vendor/uplot.mjs')).toBe(true);
  expect(await page.evaluate(() => window.trainPage.chartPoints())).toBeGreaterThan(0);
  await expect(page.locator('#tr-chart .uplot')).toHaveAttribute('aria-label', /step 6/);
  // generation by keyboard: the KV-cache view loads with the first Start and shows the prompt's step
  expect(loaded('/train/kv.js')).toBe(false);
  await page.locator('#tr-gen-start').focus();
  await page.keyboard.press('Enter');
  await expect(page.locator('.tr-kv-steps tbody tr')).toHaveCount(1);
  expect(loaded('/train/kv.js')).toBe(true);
  await expect(page.locator('#tr-gen-status')).toContainText('0 of 3 new tokens');
  await expect(page.locator('#tr-gen-status')).not.toContainText('undefined');
  await page.locator('#tr-gen-next').focus();
  await page.keyboard.press('Enter');
  await expect(page.locator('.tr-kv-steps tbody tr')).toHaveCount(2);
});

test('checkpoints: download, reset, upload — the same model generates the same greedy text', async ({ page }, testInfo) => {
  await open(page, '#steps=12&batch_size=4&sample_every=0&gen_max=12');
  await trainToEnd(page);
  const greedy = async () => {
    await page.locator('#tr-gen-start').click();
    await page.locator('#tr-gen-play').click();
    // Play is disabled once it has played to the end (Next is disabled while it plays, too)
    await expect(page.locator('#tr-gen-play')).toBeDisabled({ timeout: RUN_MS });
    await expect(page.locator('#tr-gen-next')).toBeDisabled();
    await expect(page.locator('.tr-kv-steps tbody tr')).toHaveCount(13);
    return page.locator('.tr-kv-text .tr-mono').textContent();
  };
  const before = await greedy();
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#tr-download').click()]);
  expect(download.suggestedFilename()).toMatch(/^gpt-copy-2x64-step12\.safetensors$/);
  const path = testInfo.outputPath('model.safetensors');
  await download.saveAs(path);
  const bytes = await readFile(path);
  const headerLen = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLen).toString('utf8'));
  expect(header['transformer.wte.weight'].shape).toEqual([12, 64]);
  await expect(page.locator('#tr-ckpt-msg')).toContainText('step 12');
  await page.locator('#tr-reset').click();
  await expect(app(page)).toHaveAttribute('data-train', 'idle');
  // change the form: the checkpoint's config must come back into it
  await page.locator('#tr-f-n_layer').fill('3');
  await page.locator('#tr-upload-file').setInputFiles(path);
  await expect(app(page)).toHaveAttribute('data-train', 'done', { timeout: RUN_MS });
  await expect(page.locator('#tr-f-n_layer')).toHaveValue('2');
  await expect(page.locator('#tr-ckpt-msg')).toContainText('Loaded model.safetensors');
  await expect(page.locator('[data-stat="step"] dd')).toHaveText('12 / 12');
  expect(await greedy()).toBe(before);
});

test('a checkpoint trained with the gpt CLI: uploaded, the page generates the CLI’s greedy text', async ({ page }, testInfo) => {
  test.skip(!existsSync(GPT), `no native gpt CLI at ${GPT}: build it with scripts/build native (scripts/test does)`);
  const path = testInfo.outputPath('cli.safetensors');
  execFileSync(GPT, ['train', '-o', path, '--task', 'sort', '--steps', '15', '--batch-size', '4', '--seed', '5', '--quiet']);
  const cli = JSON.parse(execFileSync(GPT, ['sample', path, '--prompt', '\ncabej=', '--greedy', '-n', '12', '--json']).toString());
  await open(page, `#gen_prompt=${encodeURIComponent('↵cabej=')}&gen_max=12`); // the field's ↵ is the CLI's newline
  await page.locator('#tr-upload-file').setInputFiles(path);
  await expect(page.locator('#tr-ckpt-msg')).toContainText('Loaded cli.safetensors');
  await expect(page.locator('#tr-f-task')).toHaveValue('sort');
  await expect(page.locator('#tr-f-seed')).toHaveValue('5');
  await expect(page.locator('[data-stat="step"] dd')).toHaveText('15 / 15');
  await page.locator('#tr-gen-start').click();
  await page.locator('#tr-gen-play').click();
  await expect(page.locator('#tr-gen-play')).toBeDisabled({ timeout: RUN_MS }); // played to the end
  await expect(page.locator('.tr-kv-steps tbody tr')).toHaveCount(13);
  await expect(page.locator('.tr-kv-text .tr-mono')).toHaveText(cli.text.replace(/\n/g, '↵')); // the page shows a newline as ↵
});

test('a corrupted or foreign upload gets the core’s message and the current model stays', async ({ page }, testInfo) => {
  await open(page, '#steps=8&batch_size=4&sample_every=0');
  await trainToEnd(page);
  const step = await rt(page, 'rt.step');
  const files = {
    'garbage.safetensors': Buffer.from('this is not a checkpoint at all'),
    'huge-header.safetensors': Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]), Buffer.from('{}')]),
    'empty.safetensors': Buffer.alloc(0),
  };
  for (const [name, data] of Object.entries(files)) {
    const path = testInfo.outputPath(name);
    await writeFile(path, data);
    await page.locator('#tr-upload-file').setInputFiles(path);
    const msg = page.locator('#tr-ckpt-msg');
    await expect(msg).toHaveClass(/is-error/);
    await expect(msg).toContainText(`${name} was not loaded`);
    const core = (await msg.locator('.tr-core-msg').textContent()).trim();
    expect(core.length, name).toBeGreaterThan(10);
    await expect(msg).toContainText(`The model at step ${step} is kept, unchanged.`);
    expect(await rt(page, 'rt.step')).toBe(step);
    await expect(app(page)).toHaveAttribute('data-train', 'done');
  }
  // and the model still answers
  await page.locator('#tr-maps').click();
  await expect(page.locator('.tr-map')).toHaveCount(8);
});

test('zh: the page in Chinese, the language shared with the stepper', async ({ page, context }, testInfo) => {
  await open(page, '#lang=zh&steps=6&batch_size=4&sample_every=3');
  await expect(page.locator('h1')).toHaveText('训练一个小 GPT');
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await expect(page.locator('#tr-start')).toHaveText('开始训练');
  await expect(page.locator('#tr-task-about')).toContainText('随机字符串');
  await page.locator('#tr-f-n_head').fill('5');
  await expect(page.locator('#tr-err-n_head')).toHaveText('5 个头无法平分宽度 64：n_head 必须整除 n_embd。');
  await page.locator('#tr-f-n_head').fill('4');
  await trainToEnd(page);
  await expect(page.locator('#tr-status')).toHaveText('完成：6 步。');
  await expect(page.locator('#tr-samples li').first()).toContainText('第 6 步');
  await page.screenshot({ path: testInfo.outputPath('zh.png'), fullPage: true });
  await page.locator('#tr-maps').click();
  const [stepper] = await Promise.all([context.waitForEvent('page'), page.locator('.tr-map').first().click()]);
  await expect(stepper.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await expect(stepper.locator('.aps-title')).toHaveText('注意力步进器');
  await stepper.close();
  await page.locator('#tr-gen-start').click();
  await page.locator('#tr-gen-next').click();
  await expect(page.locator('.tr-kv-steps tbody tr')).toHaveCount(2);
  await expect(page.locator('.tr-kv-facts')).toContainText('✓ 一致');
  // switching the language keeps the run, the chart, the maps and the generation
  await page.locator('#tr-lang-en').click();
  await expect(page.locator('h1')).toHaveText('Train a tiny GPT');
  await expect(page.locator('#tr-status')).toHaveText('Done: 6 steps.');
  await expect(page.locator('.tr-map')).toHaveCount(8);
  await expect(page.locator('.tr-kv-steps tbody tr')).toHaveCount(2);
  await expect(page.locator('.tr-kv-facts')).toContainText('✓ agree');
  expect(await page.evaluate(() => window.trainPage.chartPoints())).toBe(6 + 2);
  await page.locator('#tr-gen-next').click();
  await expect(page.locator('.tr-kv-steps tbody tr')).toHaveCount(3);
});

test('zh remembered: the page speaks Chinese from its first words; its strings are fetched only for a Chinese reader', async ({ page }) => {
  const fetched = [];
  page.on('request', (r) => { if (r.url().endsWith('/train/i18n-zh.js')) fetched.push(r.url()); });
  // the first heading the page draws, whatever comes after it
  await page.addInitScript(() => {
    new MutationObserver((_, obs) => {
      const h1 = document.querySelector('h1');
      if (h1) { window.firstHeading = h1.textContent; obs.disconnect(); }
    }).observe(document, { childList: true, subtree: true });
  });
  await open(page);
  await expect(page.locator('h1')).toHaveText('Train a tiny GPT');
  expect(fetched, 'an English reader never fetches the Chinese strings').toEqual([]);
  await page.locator('#tr-lang-zh').click(); // the switch waits for them
  await expect(page.locator('h1')).toHaveText('训练一个小 GPT');
  await expect(page.locator('#tr-start')).toHaveText('开始训练');
  expect(fetched).toHaveLength(1);
  // remembered: the next visit starts in Chinese, with no English first
  await open(page);
  expect(await page.evaluate(() => window.firstHeading)).toBe('训练一个小 GPT');
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await expect(page.locator('#tr-task-about')).toContainText('随机字符串');
});

for (const width of [375, 1366, 1920]) {
  test(`layout at ${width} px: no horizontal overflow, before and after training, maps and generation`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width, height: 900 });
    await open(page, '#steps=6&batch_size=4&sample_every=3&gen_max=4');
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await trainToEnd(page);
    await page.locator('#tr-maps').click();
    await expect(page.locator('.tr-map')).toHaveCount(8);
    await page.locator('#tr-gen-start').click();
    await page.locator('#tr-gen-next').click();
    await expect(page.locator('.tr-kv-steps tbody tr')).toHaveCount(2);
    await page.locator('#tr-exp-mask').click(); // the experiment's chart and sentence appear too
    await expect(app(page)).toHaveAttribute('data-exp', 'done', { timeout: RUN_MS });
    await expect(page.locator('#tr-exp-chart .uplot')).toBeVisible();
    expect(await overflow()).toBeLessThanOrEqual(0);
    // every control is inside the viewport's width
    const outside = await page.evaluate(() => [...document.querySelectorAll('button, input, select, a, textarea')]
      .filter((e) => e.offsetParent && e.getBoundingClientRect().right > innerWidth + 1).map((e) => e.id || e.className));
    expect(outside).toEqual([]);
    await page.screenshot({ path: testInfo.outputPath(`train-${width}.png`), fullPage: true });
  });
}

test('keyboard: every control is reachable with Tab and the radio groups move with the arrow keys', async ({ page }) => {
  await open(page);
  const seen = new Set();
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press('Tab');
    const id = await page.evaluate(() => document.activeElement?.id ?? '');
    if (id) seen.add(id);
  }
  for (const id of ['tr-nav-stepper', 'tr-lang-zh', 'tr-f-task', 'tr-preset-tiny', 'tr-f-n_layer', 'tr-mask-strict', 'tr-softmax-stable', 'tr-f-lr', 'tr-start', 'tr-exp-mask', 'tr-f-prompt', 'tr-f-gen_prompt', 'tr-upload-file', 'tr-copy-link']) {
    expect(seen.has(id), id).toBe(true);
  }
  await page.locator('#tr-mask-strict').focus();
  await page.keyboard.press('ArrowRight');
  await expect(page.locator('#tr-mask-inclusive')).toHaveAttribute('aria-checked', 'true');
  await expect(page.locator('#tr-mask-inclusive')).toBeFocused();
  await expect.poll(() => page.evaluate(() => location.hash)).toContain('mask=inclusive');
});

test('bad input: a message beside each field, nothing starts, nothing crashes; a bad link keeps what it says', async ({ page }) => {
  await open(page, '#n_embd=65&lr=fast&steps=-3&block_size=1e9&batch_size=2.5&seed=');
  await expect(page.locator('#tr-err-n_embd')).toHaveText('');
  await expect(page.locator('#tr-err-n_head')).toHaveText('4 heads cannot share a width of 65 equally: n_head must divide n_embd.');
  await expect(page.locator('#tr-err-lr')).toHaveText('“fast” is not a number.');
  await expect(page.locator('#tr-err-steps')).toHaveText('Out of range: from 1 to 20,000.');
  await expect(page.locator('#tr-err-block_size')).toHaveText('Out of range: from 4 to 128.');
  await expect(page.locator('#tr-err-batch_size')).toHaveText('A whole number from 1 to 64, please.');
  await expect(page.locator('#tr-err-seed')).toHaveText('Type a number from 0 to 2⁵³.');
  await expect(page.locator('#tr-f-lr')).toHaveValue('fast'); // what the learner had stays
  await expect(page.locator('#tr-f-lr')).toHaveAttribute('aria-invalid', 'true');
  await page.locator('#tr-start').click();
  await expect(page.locator('#tr-alert')).toContainText('Some settings need fixing first');
  await expect(app(page)).toHaveAttribute('data-train', 'idle');
  await expect(page.locator('#tr-f-n_head')).toBeFocused(); // the first field at fault
  for (const [k, v] of [['n_embd', '64'], ['lr', '0.003'], ['steps', '5'], ['block_size', '16'], ['batch_size', '4'], ['seed', '1']]) await page.locator(`#tr-f-${k}`).fill(v);
  await expect(page.locator('.tr-field.has-error')).toHaveCount(0);
  // too big a model: the core's estimate (asked of the worker) and its message, with the sizes
  await page.locator('#tr-f-n_layer').fill('8');
  await page.locator('#tr-f-n_embd').fill('256');
  await page.locator('#tr-f-block_size').fill('128');
  await page.locator('#tr-f-batch_size').fill('64');
  await expect(page.locator('#tr-err-model')).toHaveText(
    'a batch of 64 sequences of 128 tokens needs 1381 MiB for this model, more than the limit of 1024 MiB: use a smaller batch_size or block_size');
  await expect(page.locator('#tr-start')).toBeEnabled(); // answered: Start says what to fix
  await page.locator('#tr-start').click();
  await expect(page.locator('#tr-alert')).toContainText('Some settings need fixing first');
  await expect(app(page)).toHaveAttribute('data-train', 'idle');
  await page.locator('#tr-preset-tiny').click();
  await page.locator('#tr-f-batch_size').fill('4');
  await expect(page.locator('#tr-err-model')).toHaveText('');
  // the user's text: empty, too short, then enough
  await page.locator('#tr-f-task').selectOption('text');
  await expect(page.locator('#tr-err-text')).toHaveText('The text is empty: paste some, or upload a file.');
  await page.locator('#tr-f-text').fill('hello');
  await expect(page.locator('#tr-err-text')).toContainText('The text has 5 characters; a block_size of 64 needs at least 130');
  await page.locator('#tr-f-block_size').fill('8');
  await page.locator('#tr-f-text').fill('注意力就是你所需要的。'.repeat(4));
  await expect(page.locator('#tr-err-text')).toHaveText('');
  // a file that is not UTF-8
  await page.locator('#tr-f-textfile').setInputFiles({ name: 'latin1.txt', mimeType: 'text/plain', buffer: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]) });
  await expect(page.locator('#tr-err-text')).toHaveText('latin1.txt is not valid UTF-8 (the first bad byte is at offset 3). Save it as UTF-8 and try again.');
  await page.locator('#tr-start').click();
  await expect(app(page)).toHaveAttribute('data-train', /training|done/, { timeout: RUN_MS });
  await expect(app(page)).toHaveAttribute('data-train', 'done', { timeout: RUN_MS });
  // a prompt with a character the model never saw: the core's message, beside the prompt
  await page.locator('#tr-f-prompt').fill('注意xyz');
  await page.locator('#tr-maps').click();
  await expect(page.locator('#tr-err-prompt')).toContainText('x');
  await expect(page.locator('.tr-map')).toHaveCount(0);
  await page.locator('#tr-f-prompt').fill('注意力'.repeat(30));
  await page.locator('#tr-maps').click();
  await expect(page.locator('#tr-err-prompt')).toHaveText('This prompt is 90 tokens: at most 64 here, as the stepper takes matrices of up to 64 rows.');
  await expect(page.locator('#tr-f-prompt')).toHaveValue('注意力'.repeat(30));
});

test('permalink: the task, settings and seeds go into the link and come back from it', async ({ page }) => {
  await open(page);
  await page.locator('#tr-f-task').selectOption('sort');
  await page.locator('#tr-preset-small').click();
  await page.locator('#tr-f-steps').fill('250');
  await page.locator('#tr-f-seed').fill('42');
  await page.locator('#tr-softmax-naive').click();
  await expect.poll(() => page.evaluate(() => location.hash)).toBe('#task=sort&softmax=naive&preset=small&steps=250&seed=42');
  const url = page.url();
  const other = await page.context().newPage();
  await other.goto(url);
  await expect(other.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await expect(other.locator('#tr-f-task')).toHaveValue('sort');
  await expect(other.locator('#tr-f-n_layer')).toHaveValue('4');
  await expect(other.locator('#tr-f-block_size')).toHaveValue('128');
  await expect(other.locator('#tr-f-steps')).toHaveValue('250');
  await expect(other.locator('#tr-f-seed')).toHaveValue('42');
  await expect(other.locator('#tr-softmax-naive')).toHaveAttribute('aria-checked', 'true');
  await expect(other.locator('#tr-preset-small')).toHaveAttribute('aria-checked', 'true');
  await other.close();
});

test('in an iframe of another page', async ({ page, baseURL }) => {
  // a course page of its own (about:blank's origin, not the playground's) with the page in an iframe
  await page.setContent(`<!doctype html><title>course</title><iframe id="train-frame" width="900" height="700" src="${baseURL}/train/#steps=4&batch_size=4&sample_every=0"></iframe>`);
  const frame = page.frameLocator('#train-frame');
  await expect(frame.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await frame.locator('#tr-start').click();
  await expect(frame.locator('#app')).toHaveAttribute('data-train', 'done', { timeout: RUN_MS });
  await expect(frame.locator('[data-stat="step"] dd')).toHaveText('4 / 4');
});
