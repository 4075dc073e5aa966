// train-workers.spec.mjs — the training page's data-parallel workers (worker.js + shard-worker.js)
// in Chromium: the Workers field shows the cores the browser reports and how many training uses;
// one worker and two workers give losses that agree within the core's stated tolerance (1e-5
// relative, tests/test_train_threads.cpp; the first step's the same bits), and two workers twice
// give the same bits; a run paused and resumed with two workers gives the losses of the same run
// uninterrupted, step for step; the field in 中文.
//
// Every wait is on a state (an attribute of #app, the runtime's step), never a race with the
// worker. The runs are short (batch 4, block 16, tens of steps).
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';

const RUN_FOREVER = 20_000;
const SHORT = '#task=sort&n_layer=1&n_embd=32&n_head=2&block_size=16&batch_size=4&eval_interval=10&sample_every=0';
const app = (page) => page.locator('#app');
const rt = (page, expr) => page.evaluate(`(() => { const rt = window.trainPage.runtime; return ${expr}; })()`);

async function open(page, hash) {
  await page.goto(`/train/${hash}`);
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
}

/** A whole run with `n` workers: its training losses. */
async function lossesWith(page, n, steps = 30) {
  await page.getByLabel('Workers').selectOption(String(n));
  await page.locator('#tr-start').click();
  await expect(app(page)).toHaveAttribute('data-train', 'done', { timeout: RUN_MS });
  const s = await rt(page, 'rt.series');
  expect(s.steps).toEqual([...Array(steps).keys()].map((k) => k + 1));
  return s.train;
}

test('the Workers field: the cores the browser reports, and how many training uses', async ({ page }) => {
  await open(page, SHORT);
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  const field = page.getByLabel('Workers');
  await expect(field).toHaveValue(String(Math.min(16, cores)));
  await expect(page.locator('#tr-workers-hint')).toContainText(`uses ${Math.min(16, cores)} of the ${cores} cores`);
  await field.selectOption('1');
  await expect(page.locator('#tr-workers-hint')).toContainText(`uses 1 of the ${cores} cores`);
  expect(await field.locator('option').count()).toBe(Math.min(16, Math.max(2, cores)));
  await field.focus(); // reachable and operable with the keyboard
  await page.keyboard.press('ArrowDown');
  await expect(field).toHaveValue('2');
});

test('one worker and two agree within the tolerance; two workers twice give the same bits', async ({ page }) => {
  await open(page, `${SHORT}&steps=30`);
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

test('paused and resumed with two workers, a run gives the losses of the same run uninterrupted', async ({ page }) => {
  await open(page, `${SHORT}&steps=${RUN_FOREVER}`);
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

test('zh: the Workers field in Chinese', async ({ page }) => {
  await open(page, `${SHORT}&lang=zh`);
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  await expect(page.getByLabel('工作线程数')).toBeVisible();
  await expect(page.locator('#tr-workers-hint')).toContainText(`${cores} 个核心`);
});
