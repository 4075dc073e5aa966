// train-workers.spec.mjs — the training page's data-parallel training in Chromium, on both paths:
// as a static host serves it (/train/: plain workers, worker.js + shard-worker.js) and cross-origin
// isolated (/isolated/train/, scripts/web-server.mjs: wasm threads, gpt_core_mt). The Workers field shows the cores the browser reports and how many training uses;
// one worker and two workers give losses that agree within the core's stated tolerance (1e-5
// relative, tests/test_train_threads.cpp; the first step's the same bits), and two workers twice
// give the same bits; a run paused and resumed with two workers gives the losses of the same run
// uninterrupted, step for step; with two workers the validation loss (the evaluation split over
// them) is the core's evaluation by one worker of the same parameters, to the bit; the field in
// 中文. Then across the paths: each loads one GPT module
// (the threaded one only where isolated) and says which path it uses; two threads give the bits of
// two workers; a checkpoint saved with two threads resumes with one worker. On the workers path the
// helper starts when two workers are chosen, before Start, and is the one that trains the run; the
// step trace (worker.js op 'trace') marks each step and each helper's share on one clock.
//
// Every wait is on a state (an attribute of #app, the runtime's step), never a race with the
// worker. The runs are short (batch 4, block 16, tens of steps).
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';

const RUN_FOREVER = 20_000;
const SHORT = '#task=sort&n_layer=1&n_embd=32&n_head=2&block_size=16&batch_size=4&eval_interval=10&sample_every=0';
const app = (page) => page.locator('#app');
const rt = (page, expr) => page.evaluate(`(() => { const rt = window.trainPage.runtime; return ${expr}; })()`);

const PATHS = [{ path: 'workers', base: '/train/' }, { path: 'threads', base: '/isolated/train/' }];

async function open(page, hash, base = '/train/') {
  await page.goto(`${base}${hash}`);
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
}

/** A whole run with `n` workers: its training losses (and, with {val: true}, the whole series). */
async function lossesWith(page, n, steps = 30, { val = false } = {}) {
  await page.getByLabel('Workers').selectOption(String(n));
  await page.locator('#tr-start').click();
  await expect(app(page)).toHaveAttribute('data-train', 'done', { timeout: RUN_MS });
  const s = await rt(page, 'rt.series');
  expect(s.steps).toEqual([...Array(steps).keys()].map((k) => k + 1));
  return val ? s : s.train;
}

for (const { path, base } of PATHS) {
  test(`${path}: the Workers field: the cores the browser reports, how many training uses, and the path`, async ({ page }) => {
    await open(page, SHORT, base);
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    const field = page.getByLabel('Workers');
    await expect(field).toHaveValue(String(Math.min(16, cores)));
    await expect(page.locator('#tr-workers-hint')).toContainText(`uses ${Math.min(16, cores)} of the ${cores} cores`);
    await field.selectOption('1');
    await expect(page.locator('#tr-workers-hint')).toContainText(`uses 1 of the ${cores} cores`);
    await expect(page.locator('#tr-workers-hint')).toContainText(path === 'threads' ? 'Path: wasm threads' : 'Path: separate workers');
    expect(await field.locator('option').count()).toBe(Math.min(16, Math.max(2, cores)));
    await field.focus(); // reachable and operable with the keyboard
    await page.keyboard.press('ArrowDown');
    await expect(field).toHaveValue('2');
  });

  test(`${path}: one worker and two agree within the tolerance; two workers twice give the same bits`, async ({ page }) => {
    await open(page, `${SHORT}&steps=30`, base);
    const one = await lossesWith(page, 1);
    const two = await lossesWith(page, 2);
    const again = await lossesWith(page, 2);
    expect(again).toEqual(two);
    expect(two[0]).toBe(one[0]); // the forward is row-wise: the first batch's loss is the same bits
    for (let i = 0; i < one.length; i++) {
      expect(Math.abs(two[i] - one[i]), `step ${i + 1}: ${two[i]} vs ${one[i]}`).toBeLessThanOrEqual(1e-5 * one[i]);
    }
    expect(two).not.toEqual(one); // the split does regroup the sums: this compares something
  });

  test(`${path}: paused and resumed with two workers, a run gives the losses of the same run uninterrupted`, async ({ page }) => {
    await open(page, `${SHORT}&steps=${RUN_FOREVER}`, base);
    await page.getByLabel('Workers').selectOption('2');
    await page.locator('#tr-start').click();
    await expect.poll(() => rt(page, 'rt.step'), { timeout: RUN_MS }).toBeGreaterThanOrEqual(3);
    await page.locator('#tr-pause').click();
    await expect(app(page)).toHaveAttribute('data-train', 'paused');
    const at = await rt(page, 'rt.step');
    const info = await page.evaluate(() => window.trainPage.worker.call('info', { run: 'main' }));
    expect(info.step).toBe(at); // a step is whole before the worker answers
    await page.locator('#tr-resume').click();
    await expect.poll(() => rt(page, 'rt.step'), { timeout: RUN_MS }).toBeGreaterThan(at + 12);
    await page.locator('#tr-pause').click();
    await expect(app(page)).toHaveAttribute('data-train', 'paused');
    const paused = await rt(page, 'rt.series');
    expect(paused.steps).toEqual([...Array(paused.steps.length).keys()].map((k) => k + 1));
    // the same run again, never paused
    await page.locator('#tr-start').click();
    await expect.poll(() => rt(page, 'rt.step'), { timeout: RUN_MS }).toBeGreaterThanOrEqual(paused.steps.length);
    await page.locator('#tr-pause').click();
    await expect(app(page)).toHaveAttribute('data-train', 'paused');
    const straight = await rt(page, 'rt.series.train');
    expect(straight.slice(0, paused.train.length)).toEqual(paused.train);
  });
}

for (const { path, base } of PATHS) {
  test(`${path}: the validation loss with the evaluation split over two workers is the core's one-worker evaluation, to the bit`, async ({ page }) => {
    await open(page, `${SHORT}&steps=30`, base);
    const two = await lossesWith(page, 2, 30, { val: true });
    expect(two.valSteps).toEqual([0, 10, 20, 30]);
    // the next-token bars follow a training run at most once a second: once it ends, they are its last step's
    const next = page.getByRole('region', { name: '7 · The next token' }).getByRole('status').filter({ hasText: 'The model at step' });
    await expect(next).toContainText('The model at step 30,');
    // the model after step 30, evaluated again by the training worker alone (the surprisal of the
    // validation windows: the same batches, one forward after another in one module)
    const alone = await page.evaluate(() => window.trainPage.worker.call('surprisal', { run: 'main', spec: { validation: true } }));
    expect(alone.mean).toBe(two.val[3]);
    const again = await lossesWith(page, 2, 30, { val: true });
    expect(again.val).toEqual(two.val); // the same count: the same bits
    const one = await lossesWith(page, 1, 30, { val: true });
    expect(one.val[0]).toBe(two.val[0]); // before any step: the same parameters, the same bits
    for (let i = 1; i < 4; i++) {
      // after steps the parameters differ in the last digits (the training's tolerance above, 1e-5
      // relative; measured: these 30 steps' validation losses came out the same floats)
      expect(Math.abs(two.val[i] - one.val[i]), `step ${two.valSteps[i]}: ${two.val[i]} vs ${one.val[i]}`).toBeLessThanOrEqual(1e-5 * one.val[i]);
    }
  });
}

test('workers: the helper starts when two workers are chosen, before Start, and is kept for the run', async ({ page }) => {
  await open(page, `${SHORT}&steps=20`);
  // the training worker's own workers (nested): the helper's module loads while nothing waits on it
  const helpers = () => page.workers().filter((w) => w.url().endsWith('/train/shard-worker.js')).length;
  await page.getByLabel('Workers').selectOption('1');
  await expect(page.locator('#tr-workers-hint')).toContainText('uses 1 of');
  expect(helpers()).toBe(0);
  await page.getByLabel('Workers').selectOption('2');
  await expect.poll(helpers).toBe(1);
  // the step trace (bench/train_bench.mjs --trace): marks on one clock from the worker and its helper
  await page.evaluate(() => window.trainPage.worker.call('trace', { on: true }));
  await page.locator('#tr-start').click();
  await expect(app(page)).toHaveAttribute('data-train', 'done', { timeout: RUN_MS });
  expect(helpers()).toBe(1); // the same helper trained the run: none was started on the first step
  const marks = await page.evaluate(() => window.trainPage.worker.call('trace', { on: false }));
  expect(marks.filter(([w]) => w === 'begin').map(([, , step]) => step)).toEqual([...Array(20).keys()]);
  expect(marks.filter(([w]) => w === 'eval').length).toBe(2); // after steps 10 and 20
  const recv = marks.filter(([w]) => w === 'recv');
  expect(recv.length).toBe(22); // each step's share and each evaluation's, answered by helper 0
  for (const [, t, , { k, t: [came, done] }] of recv) {
    expect(k).toBe(0);
    expect(came).toBeLessThanOrEqual(done);
    expect(done).toBeLessThanOrEqual(t + 1); // answered before the worker had it (clocks' rounding: 1 ms)
  }
  for (let i = 1; i < marks.length; i++) expect(marks[i][1]).toBeGreaterThanOrEqual(marks[i - 1][1]);
  expect(await page.evaluate(() => window.trainPage.worker.call('trace', { on: false }))).toEqual([]); // off: none kept
});

test('zh: the Workers field in Chinese', async ({ page }) => {
  await open(page, `${SHORT}&lang=zh`);
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  await expect(page.getByLabel('工作线程数')).toBeVisible();
  await expect(page.locator('#tr-workers-hint')).toContainText(`${cores} 个核心`);
});

test('each path loads one GPT module: the threaded one only where the page is cross-origin isolated', async ({ page }) => {
  const seen = [];
  page.context().on('request', (r) => { const p = new URL(r.url()).pathname; if (/\/gen\/gpt_core/.test(p)) seen.push(p); });
  await open(page, SHORT, '/isolated/train/');
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  await expect(app(page)).toHaveAttribute('data-train-path', 'threads');
  await expect.poll(() => seen.filter((p) => p.endsWith('/gen/gpt_core_mt.wasm')).length).toBe(1);
  expect(seen.filter((p) => /gpt_core\.(mjs|wasm)$/.test(p))).toEqual([]);
  expect(seen).toContain('/isolated/gen/gpt_core_mt.worker.js'); // the pthreads' workers, from 'self' (the strict CSP)
  seen.length = 0;
  await open(page, SHORT, '/train/');
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(false);
  await expect(app(page)).toHaveAttribute('data-train-path', 'workers');
  await expect.poll(() => seen.filter((p) => p.endsWith('/gen/gpt_core.wasm')).length).toBe(1);
  expect(seen.filter((p) => /gpt_core_mt/.test(p))).toEqual([]);
});

/** Trains the page's paused (or new) run on until its step reaches `step`, then pauses: step → loss. */
async function trainUntil(page, button, step) {
  await page.locator(button).click();
  await expect.poll(() => rt(page, 'rt.step'), { timeout: RUN_MS }).toBeGreaterThanOrEqual(step);
  await page.locator('#tr-pause').click();
  await expect(app(page)).toHaveAttribute('data-train', 'paused');
  const s = await rt(page, 'rt.series');
  return new Map(s.steps.map((k, i) => [k, s.train[i]]));
}

test('two threads give the bits of two workers; a checkpoint saved with two threads resumes with one worker', async ({ page }, testInfo) => {
  await open(page, `${SHORT}&steps=30`, '/train/');
  const workers2 = await lossesWith(page, 2);
  await open(page, `${SHORT}&steps=30`, '/isolated/train/');
  const threads2 = await lossesWith(page, 2);
  expect(threads2).toEqual(workers2); // the same shares, reduced in the same order

  // trained with two threads, saved at a pause, trained on; the file loaded into the plain page
  // and trained on there with one worker: the same steps' losses within the tolerance
  await open(page, `${SHORT}&steps=${RUN_FOREVER}`, '/isolated/train/');
  await page.getByLabel('Workers').selectOption('2');
  const first = await trainUntil(page, '#tr-start', 8);
  const at = Math.max(...first.keys());
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#tr-download').click()]);
  const file = testInfo.outputPath('threads.safetensors');
  await download.saveAs(file);
  const straight = await trainUntil(page, '#tr-resume', at + 8);
  await open(page, `${SHORT}&steps=${RUN_FOREVER}`, '/train/');
  await page.getByLabel('Workers').selectOption('1');
  await page.locator('#tr-upload-file').setInputFiles(file);
  await expect(app(page)).toHaveAttribute('data-train', 'paused', { timeout: RUN_MS });
  expect(await rt(page, 'rt.step')).toBe(at);
  const resumed = await trainUntil(page, '#tr-resume', at + 8);
  for (let k = at + 1; k <= at + 8; k++) {
    expect(resumed.has(k) && straight.has(k), `step ${k}`).toBe(true);
    expect(Math.abs(resumed.get(k) - straight.get(k)), `step ${k}: ${resumed.get(k)} vs ${straight.get(k)}`).toBeLessThanOrEqual(1e-5 * straight.get(k));
  }
});

test('threads: an experiment’s two runs train in their own worker, with the same losses as on the workers path', async ({ page }) => {
  const hash = '#steps=8&batch_size=4&eval_interval=4&sample_every=0';
  const experiment = async (base) => {
    await open(page, hash, base);
    await page.locator('#tr-exp-mask').click();
    await expect(app(page)).toHaveAttribute('data-exp', 'done', { timeout: RUN_MS });
    return rt(page, 'rt.exp.runs.map((r) => r.train)');
  };
  const threads = await experiment('/isolated/train/');
  expect(threads.map((t) => t.length)).toEqual([8, 8]);
  expect(threads).toEqual(await experiment('/train/'));
});
