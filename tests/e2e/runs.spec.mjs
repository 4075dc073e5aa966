// runs.spec.mjs — the training page's kept runs (web/train/section-runs.js, run-store.js) in
// Chromium, as a learner uses them: a paused run is found again after a reload and resumed, its
// step count going on; two kept runs overlaid on one chart; one deleted, one downloaded (the
// checkpoint's bytes read as the core's safetensors, the losses as CSV); an experiment's two runs
// kept as one pair; a full quota (the browser's own quota error, through Chromium's DevTools
// protocol) and a browser without IndexedDB each named in a visible message, the run staying in
// the page; another tab hearing of a keep and a delete; 中文 and the keyboard.
//
// Each test has a fresh browser context, so a fresh, empty IndexedDB. Every wait is on a state
// (#app's data-train, data-kept, data-runs; the runtime), never on the clock.
import { readFile } from 'node:fs/promises';
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';

const RUN_FOREVER = 20_000;
const app = (page) => page.locator('#app');
const rt = (page, expr) => page.evaluate(`(() => { const rt = window.trainPage.runtime; return ${expr}; })()`);
const runItem = (page, name) => page.locator('#tr-runs-list li.tr-run').filter({ has: page.locator('.tr-run-name', { hasText: new RegExp(`^${name}( ·|$)`) }) });

async function open(page, hash = '') {
  await page.goto(`/train/${hash}`);
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await expect(app(page)).toHaveAttribute('data-runs', /ready|unavailable/);
}

async function trainToEnd(page) {
  await page.locator('#tr-start').click();
  await expect(app(page)).toHaveAttribute('data-train', /done|diverged/, { timeout: RUN_MS });
}

/** Starts a run too long to end, waits until it has done `steps` steps, pauses it; returns the step. */
async function trainAndPause(page, steps = 5) {
  await page.locator('#tr-start').click();
  await expect.poll(() => rt(page, 'rt.step'), { timeout: RUN_MS }).toBeGreaterThanOrEqual(steps);
  await page.locator('#tr-pause').click();
  await expect(app(page)).toHaveAttribute('data-train', 'paused');
  return rt(page, 'rt.step');
}

/** The safetensors header of a file (8 bytes of length, then JSON), as the core writes it. */
function safetensorsHeader(bytes) {
  const n = Number(bytes.readBigUInt64LE(0));
  expect(8 + n).toBeLessThanOrEqual(bytes.length);
  return JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
}

test('a paused run survives a reload; resumed, its step count goes on and it is kept again as the same run', async ({ page }) => {
  await open(page, `#steps=${RUN_FOREVER}&batch_size=4&sample_every=0&eval_interval=5`);
  await expect(page.locator('#tr-runs-status')).toHaveText('No run kept yet: pause a run, or let one finish.');
  const at = await trainAndPause(page, 6);
  await expect(app(page)).toHaveAttribute('data-kept', '1');
  await expect(page.locator('#tr-runs-msg')).toContainText('Run 1 kept');
  const points = await page.evaluate(() => window.trainPage.chartPoints());

  // the learner changes the form, then reloads: the run is listed with its figures
  await page.locator('#tr-f-lr').fill('0.01');
  await page.reload();
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await expect(app(page)).toHaveAttribute('data-kept', '1');
  const item = runItem(page, 'Run 1');
  await expect(item).toContainText('copy · 2 layers, 4 heads, n_embd 64 · seed 1337');
  await expect(item).toContainText(`paused · step ${at} of 20,000`);
  await expect(page.locator('#tr-runs-status')).toContainText('Runs kept: 1');
  await expect(app(page)).toHaveAttribute('data-train', 'idle');

  // resume: the checkpoint goes into the worker, the settings into the form, the curve goes on
  await item.getByRole('button', { name: 'Resume' }).click();
  await expect.poll(() => rt(page, 'rt.step'), { timeout: RUN_MS }).toBeGreaterThan(at + 2);
  // one curve from step 1 on, without a gap or a restart at the reload
  expect(await rt(page, 'rt.series.steps.length >= rt.step - 1 && rt.series.steps.every((s, i) => s === i + 1)')).toBe(true);
  await expect(page.locator('#tr-f-lr')).toHaveValue('0.003'); // the run's settings, not the edited form
  await expect(page.locator('#tr-f-steps')).toHaveValue(String(RUN_FOREVER));
  expect(await page.evaluate(() => window.trainPage.chartPoints())).toBeGreaterThan(points);
  // paused again: the same run (one record), at its new step
  await page.locator('#tr-pause').click();
  await expect(app(page)).toHaveAttribute('data-train', 'paused');
  const later = await rt(page, 'rt.step');
  await expect(item).toContainText(`paused · step ${later} of 20,000`);
  await expect(app(page)).toHaveAttribute('data-kept', '1');
  // the worker's model and the kept checkpoint are at the same step
  const info = await page.evaluate(() => window.trainPage.worker.call('info', { run: 'main' }));
  expect(info.step).toBe(later);

  // determinism: the same settings trained again without a pause or a reload give the same
  // losses, bit for bit, over the steps the kept run has done (the checkpoint carries the
  // optimiser's state and the data's position)
  const kept = await rt(page, 'rt.series.train.slice()');
  await page.locator('#tr-start').click(); // "Restart": a new run from the same form
  await expect.poll(() => rt(page, 'rt.step'), { timeout: RUN_MS }).toBeGreaterThanOrEqual(later);
  await page.locator('#tr-pause').click();
  await expect(app(page)).toHaveAttribute('data-kept', '2');
  expect(await rt(page, `rt.series.train.slice(0, ${later})`)).toEqual(kept.slice(0, later));
});

test('another tab of the page lists a run kept or deleted in this one', async ({ page, context }) => {
  await open(page, '#steps=6&batch_size=4&sample_every=0');
  const other = await context.newPage();
  await open(other, '#steps=6&batch_size=4&sample_every=0');
  await expect(app(other)).toHaveAttribute('data-kept', '0');
  await trainToEnd(page);
  await expect(app(page)).toHaveAttribute('data-kept', '1');
  await expect(app(other)).toHaveAttribute('data-kept', '1');
  await expect(runItem(other, 'Run 1')).toContainText('finished · step 6 of 6');
  await runItem(other, 'Run 1').getByRole('button', { name: 'Delete' }).click();
  await expect(app(page)).toHaveAttribute('data-kept', '0');
  await other.close();
});

test('two kept runs overlaid on one chart; one downloaded (checkpoint and losses), one deleted', async ({ page }, testInfo) => {
  await open(page, '#steps=12&batch_size=4&sample_every=0&eval_interval=6');
  await trainToEnd(page);
  await expect(app(page)).toHaveAttribute('data-kept', '1');
  await page.locator('#tr-f-seed').fill('7');
  await trainToEnd(page);
  await expect(app(page)).toHaveAttribute('data-kept', '2');
  await page.reload();
  await expect(app(page)).toHaveAttribute('data-kept', '2', { timeout: BOOT_MS });
  const one = runItem(page, 'Run 1');
  const two = runItem(page, 'Run 2');
  await expect(one).toContainText('seed 1337');
  await expect(two).toContainText('seed 7');
  await expect(two).toContainText('finished · step 12 of 12');
  await expect(two.getByRole('button', { name: 'Open' })).toBeVisible();

  // overlay: tick both (by their labels)
  await expect(page.locator('#tr-runs-chart')).toBeHidden();
  await page.getByLabel(/^Run 1/).check();
  await page.getByLabel(/^Run 2/).check();
  const legend = page.locator('#tr-runs-chart .u-legend');
  await expect(legend).toContainText('Run 1: training loss');
  await expect(legend).toContainText('Run 2: validation loss');
  await expect.poll(() => page.evaluate(() => window.trainPage.keptChartPoints())).toBe(2 * (12 + 3));
  const series = await page.evaluate(async () => (await import('/train/run-store.js')).openRunStore().then((s) => s.list()));
  expect(series.map((m) => m.series.train[0])).not.toEqual([series[0].series.train[0], series[0].series.train[0]]); // two seeds, two curves
  await page.locator('#tr-runs').screenshot({ path: testInfo.outputPath('runs-overlay.png') });

  // download Run 2: the checkpoint is the core's safetensors of the model after step 12
  const [ck] = await Promise.all([page.waitForEvent('download'), two.getByRole('button', { name: 'Checkpoint .safetensors' }).click()]);
  expect(ck.suggestedFilename()).toBe('gpt-copy-2x64-step12-run2.safetensors');
  const bytes = await readFile(await ck.path());
  const header = safetensorsHeader(bytes);
  expect(header['transformer.wte.weight'].shape).toEqual([12, 64]);
  expect(header['transformer.wte.weight'].dtype).toBe('F32');
  expect(JSON.stringify(header.__metadata__)).toContain('"seed"');
  // … and the page's own checkpoint reader takes it back
  const info = await page.evaluate((b64) => window.trainPage.worker.call('load', { run: 'probe', bytes: Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)), text: '' }), bytes.toString('base64'));
  expect(info.step).toBe(12);
  expect(String(info.seed)).toBe('7');
  await page.evaluate(() => window.trainPage.worker.call('free', { run: 'probe' }));
  const [csv] = await Promise.all([page.waitForEvent('download'), two.getByRole('button', { name: 'Losses .csv' }).click()]);
  expect(csv.suggestedFilename()).toBe('gpt-copy-2x64-step12-run2-losses.csv');
  const lines = (await readFile(await csv.path(), 'utf8')).trim().split('\n');
  expect(lines[0]).toBe('step,loss,val_loss');
  expect(lines).toHaveLength(1 + 13); // steps 0 (validation only) to 12
  expect(lines[1]).toMatch(/^0,,\d+\.\d+$/);
  expect(lines[12]).toMatch(/^11,\d+\.\d+,$/);
  expect(lines[13]).toMatch(/^12,\d+\.\d+,\d+\.\d+$/);
  const kept = series.find((m) => m.n === 2);
  expect(Number(lines[5].split(',')[1])).toBeCloseTo(kept.series.train[3], 6);

  // delete Run 1: gone from the list, the chart and the store, after a reload too
  await one.getByRole('button', { name: 'Delete' }).click();
  await expect(app(page)).toHaveAttribute('data-kept', '1');
  await expect(page.locator('#tr-runs-msg')).toContainText('Run 1 deleted.');
  await expect(page.locator('#tr-runs-h')).toBeFocused();
  await expect(legend).not.toContainText('Run 1');
  await expect.poll(() => page.evaluate(() => window.trainPage.keptChartPoints())).toBe(12 + 3);
  await page.reload();
  await expect(app(page)).toHaveAttribute('data-kept', '1', { timeout: BOOT_MS });
  await expect(runItem(page, 'Run 1')).toHaveCount(0);
  await expect(runItem(page, 'Run 2')).toHaveCount(1);
});

test('an experiment’s two runs are kept as one pair: listed, opened and deleted together', async ({ page }, testInfo) => {
  await open(page, '#steps=8&batch_size=4&eval_interval=4&sample_every=0');
  await page.locator('#tr-exp-mask').click();
  await expect(app(page)).toHaveAttribute('data-exp', 'done', { timeout: RUN_MS });
  await expect(app(page)).toHaveAttribute('data-kept', '2');
  const expRuns = await rt(page, 'rt.exp.runs.map((r) => r.train)');
  await page.reload();
  await expect(app(page)).toHaveAttribute('data-kept', '2', { timeout: BOOT_MS });
  const pair = page.locator('#tr-runs-list > li.tr-run-pair');
  await expect(pair).toHaveCount(1);
  await expect(pair.locator('h3')).toHaveText('Experiment: Strict vs inclusive mask (exercise 2), seed 1337');
  await expect(pair.locator('.tr-run-name')).toHaveText(['Run 1 · strict j > i', 'Run 2 · inclusive j ≥ i']);
  // the pair's curves are the experiment's, overlaid as they were
  await page.getByLabel(/^Run 1 · strict/).check();
  await page.getByLabel(/^Run 2 · inclusive/).check();
  await expect.poll(() => page.evaluate(() => window.trainPage.keptChartPoints())).toBe(2 * (8 + 3));
  const kept = await page.evaluate(async () => (await import('/train/run-store.js')).openRunStore().then((s) => s.list()));
  expect(kept.map((m) => m.series.train)).toEqual(expRuns);
  expect(kept.map((m) => m.state.mask)).toEqual(['strict', 'inclusive']);
  await pair.screenshot({ path: testInfo.outputPath('runs-pair.png') });

  // a member opened in the main run: its settings (the inclusive mask), its model, its curve
  await runItem(page, 'Run 2').getByRole('button', { name: 'Open' }).click();
  await expect(app(page)).toHaveAttribute('data-train', 'done');
  await expect(page.locator('#tr-mask-inclusive')).toHaveAttribute('aria-checked', 'true');
  await expect(page.locator('[data-stat="step"] dd')).toHaveText('8 / 8');
  expect(await rt(page, 'rt.series.train')).toEqual(expRuns[1]);
  // a member has no Delete of its own; the pair goes as one
  await expect(runItem(page, 'Run 1').getByRole('button', { name: 'Delete' })).toHaveCount(0);
  await pair.getByRole('button', { name: 'Delete the pair' }).click();
  await expect(app(page)).toHaveAttribute('data-kept', '0');
  await expect(page.locator('#tr-runs-msg')).toContainText('The pair Run 1 and Run 2 deleted.');
});

test('a full quota: the browser’s own quota error names the run that was not kept, and the run stays in the page', async ({ page, context }) => {
  await open(page, `#steps=${RUN_FOREVER}&batch_size=4&sample_every=0`);
  // the origin's quota, made smaller than a checkpoint (about 1.2 MB) by Chromium itself
  const cdp = await context.newCDPSession(page);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(page.url()).origin, quotaSize: 64 * 1024 });
  const at = await trainAndPause(page, 3);
  const msg = page.locator('#tr-runs-msg');
  await expect(msg).toHaveAttribute('role', 'alert');
  await expect(msg).toContainText(/Run 1 was not kept: the browser’s storage for this site is full \(1\.\d MB would not fit\)/);
  await expect(msg).toHaveClass(/is-error/);
  await expect(app(page)).toHaveAttribute('data-kept', '0');
  // nothing else was lost: the run is in the page and goes on
  expect(await rt(page, 'rt.step')).toBe(at);
  await page.locator('#tr-resume').click();
  await expect.poll(() => rt(page, 'rt.step'), { timeout: RUN_MS }).toBeGreaterThan(at);
  // room again: the next pause keeps it
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(page.url()).origin });
  await page.locator('#tr-pause').click();
  await expect(app(page)).toHaveAttribute('data-kept', '1');
  await expect(msg).toContainText('Run 1 kept');
});

test('a store that refuses a write (stubbed put): the run that was not kept is named', async ({ page }) => {
  await page.addInitScript(() => {
    IDBObjectStore.prototype.put = function put() { throw new DOMException('The quota has been exceeded.', 'QuotaExceededError'); };
  });
  await open(page, '#steps=6&batch_size=4&sample_every=0');
  await trainToEnd(page);
  await expect(page.locator('#tr-runs-msg')).toContainText('Run 1 was not kept: the browser’s storage for this site is full');
  await expect(app(page)).toHaveAttribute('data-kept', '0');
  await expect(page.locator('#tr-download')).toBeEnabled(); // the way to keep it by hand
});

test('a browser without IndexedDB (as some private windows): said at once, and for each run not kept', async ({ page }) => {
  await page.addInitScript(() => { Object.defineProperty(window, 'indexedDB', { get: () => undefined }); });
  await open(page, '#steps=6&batch_size=4&sample_every=0');
  await expect(app(page)).toHaveAttribute('data-runs', 'unavailable');
  const msg = page.locator('#tr-runs-msg');
  await expect(msg).toContainText('Runs cannot be kept: this browser gives the page no storage (IndexedDB is unavailable');
  await expect(page.locator('#tr-runs-status')).toHaveText('No runs can be kept in this browser.');
  await trainToEnd(page);
  await expect(msg).toContainText('Run 1 was not kept: this browser gives the page no storage');
  await expect(page.locator('#tr-status')).toHaveText('Done: 6 steps.');
});

test('中文 and the keyboard: the kept runs in Chinese; tick, open and delete with keys alone', async ({ page }, testInfo) => {
  await open(page, '#lang=zh&steps=6&batch_size=4&sample_every=0');
  await trainToEnd(page);
  await expect(app(page)).toHaveAttribute('data-kept', '1');
  await expect(page.locator('#tr-runs-h')).toHaveText('11 · 保存在本浏览器中的运行');
  await expect(page.locator('#tr-runs-msg')).toContainText('已保存 运行 1');
  const item = runItem(page, '运行 1');
  await expect(item).toContainText('已完成 · 第 6 步，共 6 步');
  await expect(item.getByRole('button', { name: '打开' })).toBeVisible();
  await expect(item.getByRole('button', { name: '删除' })).toBeVisible();
  await page.locator('#tr-runs').screenshot({ path: testInfo.outputPath('runs-zh.png') });
  // keys: Tab reaches the tick box, Space ticks it (the chart shows), Tab to Delete, Enter deletes
  await page.locator('#tr-upload-file').focus();
  let guard = 0;
  while (!(await page.evaluate(() => document.activeElement?.classList.contains('tr-run-pick'))) && guard++ < 20) await page.keyboard.press('Tab');
  await page.keyboard.press('Space');
  await expect(page.locator('#tr-runs-chart .uplot')).toBeVisible();
  while (!(await page.evaluate(() => document.activeElement?.dataset.action?.startsWith('run-delete'))) && guard++ < 40) await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await expect(app(page)).toHaveAttribute('data-kept', '0');
  await expect(page.locator('#tr-runs-msg')).toContainText('已删除 运行 1。');
  await expect(page.locator('#tr-runs-h')).toBeFocused();
});

for (const width of [375, 1366, 1920]) {
  test(`kept runs at ${width} px: a run and a pair listed and overlaid, no horizontal overflow`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width, height: 900 });
    await open(page, '#steps=6&batch_size=4&sample_every=0&eval_interval=3');
    await trainToEnd(page);
    await page.locator('#tr-exp-softmax').click();
    await expect(app(page)).toHaveAttribute('data-exp', 'done', { timeout: RUN_MS });
    await expect(app(page)).toHaveAttribute('data-kept', '3');
    await page.getByLabel(/^Run 1/).check();
    await page.getByLabel(/^Run 3/).check();
    await expect(page.locator('#tr-runs-chart .uplot')).toBeVisible();
    // a third tick replaces the first: two runs on the chart at most
    await page.getByLabel(/^Run 2/).check();
    await expect(page.getByLabel(/^Run 1/)).not.toBeChecked();
    await expect(page.locator('#tr-runs-chart .u-legend')).not.toContainText('Run 1');
    await expect(page.locator('#tr-runs-chart .u-legend')).toContainText('Run 2 · stable: training loss');
    await expect.poll(() => page.evaluate(() => window.trainPage.keptChartPoints())).toBe(2 * (6 + 3));
    await page.getByLabel(/^Run 1/).check();
    await expect(page.getByLabel(/^Run 3/)).not.toBeChecked();
    expect(await page.evaluate(() => document.documentElement.scrollWidth - innerWidth)).toBeLessThanOrEqual(0);
    const outside = await page.evaluate(() => [...document.querySelectorAll('#tr-runs button, #tr-runs input')]
      .filter((e) => e.getBoundingClientRect().right > innerWidth + 1).map((e) => e.id));
    expect(outside).toEqual([]);
    await page.locator('#tr-runs').screenshot({ path: testInfo.outputPath(`runs-${width}.png`) });
  });
}
