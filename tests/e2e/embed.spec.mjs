// embed.spec.mjs — the example course page (web/examples/index.html): two <attention-stepper>
// elements (identity in English by attributes, causal-4 in Chinese by inline JSON) and an iframe
// of embed.html, all with the right numbers and no console error.
import { test, expect, watchNetwork, panelCells, panelText, BOOT_MS } from './fixtures.mjs';

const identity = (page) => page.locator('#stepper-identity');
const causal = (page) => page.locator('#stepper-causal');

test('examples page: both elements and the iframe show the right numbers', async ({ page }, testInfo) => {
  const wasmLoads = [];
  page.on('request', (r) => { if (r.url().endsWith('.wasm')) wasmLoads.push(r.frame() === page.mainFrame() ? 'main' : 'frame'); });
  await page.goto('/examples/');

  // 1. identity, English, configured by attributes
  const w1 = panelCells(identity(page), 'weights');
  await expect(w1).toHaveText(['0.6698', '0.3302', '0.3302', '0.6698'], { timeout: BOOT_MS });
  await expect(identity(page).locator('.aps-root')).toHaveAttribute('lang', 'en');
  await expect(identity(page).locator('figure[data-panel="out"] td[data-c]')).toHaveText(['0.6698', '0.3302', '0.3302', '0.6698']);

  // 2. causal-4, Chinese, configured by the JSON child: the first query sees only itself
  const w2 = causal(page).locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr');
  await expect(w2).toHaveCount(4);
  await expect(w2.nth(0).locator('td[data-c]')).toHaveText(['1', '0', '0', '0']);
  await expect(causal(page).locator('figure[data-panel="masked"] tbody tr').nth(0).locator('td[data-c]').nth(1)).toHaveText('−∞');
  await expect(causal(page).locator('.aps-root')).toHaveAttribute('lang', /^zh/);
  await expect(causal(page).locator('.apx-copy-link')).toHaveText('复制链接');
  // the JSON child stays in place as data, not shown
  await expect(causal(page).locator('script[type="application/json"]')).toHaveCount(1);
  const state2 = await page.evaluate(() => document.getElementById('stepper-causal').state);
  expect(state2).toMatchObject({ preset: 'causal-4', lang: 'zh', options: { causal: true } });

  // 3. the iframe: embed.html#preset=identity, auto-resized to its content
  const frame = page.frameLocator('#frame-identity');
  await expect(panelCells(frame, 'weights')).toHaveText(['0.6698', '0.3302', '0.3302', '0.6698']);
  await expect.poll(async () => (await page.locator('#frame-identity').boundingBox()).height).not.toBe(600);
  // the frame fits its content once the resizes have settled (the content may grow after the first)
  const misfit = () => page.locator('#frame-identity').evaluate((f) => Math.abs(f.getBoundingClientRect().height - f.contentDocument.documentElement.scrollHeight));
  await expect.poll(misfit).toBeLessThanOrEqual(4);

  // one wasm instance for both elements of the page (the iframe is another document)
  expect(wasmLoads.filter((w) => w === 'main')).toHaveLength(1);
  await page.screenshot({ path: testInfo.outputPath('examples.png'), fullPage: true });
});

test('element attributes keep working after start; events and permalink', async ({ page }) => {
  await page.goto('/examples/');
  const w = panelCells(identity(page), 'weights');
  await expect(w.first()).toHaveText('0.6698', { timeout: BOOT_MS });
  const changes = page.evaluate(() => new Promise((resolve) => {
    document.getElementById('stepper-identity').addEventListener('stepper-trace', (e) => resolve(e.detail.heads[0].weights[0]), { once: true });
  }));
  await identity(page).evaluate((el) => el.setAttribute('causal', ''));
  await expect(w).toHaveText(['1', '0', '0.3302', '0.6698']);
  expect(await changes).toEqual([1, 0]);
  await identity(page).evaluate((el) => el.setAttribute('preset', 'two-token'));
  await expect(identity(page).locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr')).toHaveCount(2);
  const link = await identity(page).evaluate((el) => el.permalink);
  expect(link).toMatch(/\/index\.html#s=1\.[A-Za-z0-9_-]+$/);
});

test('an element made by script: preset, height and tools=none', async ({ page }) => {
  await page.goto('/examples/');
  await expect(panelCells(identity(page), 'weights').first()).toHaveText('0.6698', { timeout: BOOT_MS });
  await page.evaluate(() => {
    const el = document.createElement('attention-stepper');
    el.id = 'late';
    el.setAttribute('preset', 'overflow-naive');
    el.setAttribute('height', '300');
    el.setAttribute('tools', 'none');
    document.querySelector('main').append(el);
  });
  const late = page.locator('#late');
  await expect(late.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr').first().locator('td[data-c]').first()).toHaveText('NaN');
  await expect(late.locator('.apx-share')).toHaveCount(0);
  const h = await late.locator('.apx-body').evaluate((b) => b.getBoundingClientRect().height);
  expect(h).toBeLessThanOrEqual(301);
});

test('embed.html alone: parameters in the hash, state written back as a permalink', async ({ page }, testInfo) => {
  await page.goto('/embed.html#preset=identity&causal=true&mask=inclusive&lang=zh');
  const w = page.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr');
  await expect(w.nth(0).locator('td[data-c]')).toHaveText(['0', '0'], { timeout: BOOT_MS }); // the inclusive mask's empty row
  await expect(w.nth(1).locator('td[data-c]')).toHaveText(['1', '0']);
  await expect(page).toHaveURL(/#s=1\.[A-Za-z0-9_-]+$/);
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh');
  await expect(page.locator('#open-playground')).toHaveAttribute('href', /index\.html#s=1\./);
  expect(await page.locator('script:not([src])').count()).toBe(0);
  expect(await page.locator('style').count()).toBe(0);
  expect(await (await page.request.get('/embed.html')).text()).not.toMatch(/<style|\sstyle=/);
  await page.screenshot({ path: testInfo.outputPath('embed.png'), fullPage: true });
});

test('embed.html: junk in the hash falls back to the default example', async ({ page }) => {
  await page.goto('/embed.html#s=1.bm90IGpzb24');
  await expect(panelCells(page, 'weights')).toHaveText(['0.6698', '0.3302', '0.3302', '0.6698'], { timeout: BOOT_MS });
  expect(await panelText(page, 'out')).toEqual([['0.6698', '0.3302'], ['0.3302', '0.6698']]);
});

test('offline: every page loads only from its own origin (no CDN, no analytics)', async ({ page, baseURL }) => {
  const foreign = [];
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(baseURL) && !u.startsWith('data:') && !u.startsWith('blob:')) foreign.push(u);
  });
  const net = watchNetwork(page);
  for (const path of ['/', '/embed.html#preset=causal-4', '/examples/']) {
    await page.goto(path);
    await net.quiet();
  }
  await expect(page.frameLocator('#frame-identity').locator('figure[data-panel="weights"] td[data-c]').first()).toHaveText('0.6698', { timeout: BOOT_MS });
  expect(foreign).toEqual([]);
});

test('an exercise embedded with one element: its event carries the result, the course page records it', async ({ page }) => {
  await page.goto('/examples/');
  const el = page.locator('#stepper-exercise');
  const input = (r, c) => el.locator(`figure[data-panel="weights"] td[data-r="${r}"][data-c="${c}"] input.aps-answer`);
  await expect(input(0, 0)).toBeVisible({ timeout: BOOT_MS });
  await expect(el.locator('.aps-exercise-title')).toHaveText('The 2×2 identity softmax by hand');
  await expect(el.locator('figure[data-panel="context"]')).toHaveClass(/is-covered/);
  // the event, as a course page receives it
  const events = page.evaluate(() => new Promise((resolve) => {
    const got = [];
    document.getElementById('stepper-exercise').addEventListener('stepper-exercise', (e) => { got.push(e.detail); if (got.length === 2) resolve(got); });
  }));
  await input(0, 0).fill('0.6698');
  await input(0, 1).fill('0.3');
  await el.locator('[data-key="ex.check"]').click();
  await expect(page.locator('[data-progress-for="stepper-exercise"]')).toHaveText('Progress: 1 of 4 right so far.');
  await input(0, 1).fill('0.3302');
  await input(1, 0).fill('0.3302');
  await input(1, 1).fill('0.6698');
  await input(1, 1).press('Enter');
  await expect(page.locator('[data-progress-for="stepper-exercise"]')).toHaveText('Progress: solved — 4 of 4 right.');
  const [first, second] = await events;
  expect(first).toMatchObject({ id: 'identity-softmax', ready: true, total: 4, right: 1, wrong: 1, empty: 2, solved: false, tol: { decimals: 4 } });
  expect(first.cells).toHaveLength(4);
  expect(first.cells.find((c) => c.row === 0 && c.col === 1)).toMatchObject({ panel: 'weights', answer: '0.3', status: 'wrong', correct: false });
  expect(first.cells.find((c) => c.row === 0 && c.col === 1).expected).toBeCloseTo(0.3302385, 6);
  expect(second).toMatchObject({ total: 4, right: 4, solved: true });
  await expect(el.locator('figure[data-panel="context"]')).not.toHaveClass(/is-covered/);
});

test('an exercise of the author\'s own by attributes: ask, tolerance; attributes keep working', async ({ page }) => {
  await page.goto('/examples/');
  const el = page.locator('#stepper-own');
  await expect(el.locator('figure[data-panel="masked"] input.aps-answer')).toHaveCount(4, { timeout: BOOT_MS });
  await expect(el.locator('figure[data-panel="weights"] input.aps-answer')).toHaveCount(4);
  await expect(el.locator('.aps-exercise-tol')).toHaveText('An answer counts as right to 3 decimals.');
  expect(await el.evaluate((e) => e.state.exercise)).toEqual({ id: 'lesson3-row3', ask: [{ panel: 'masked', cells: [[2, null]] }, { panel: 'weights', cells: [[2, null]] }], tol: { decimals: 3 } });
  // a changed attribute changes the exercise
  await el.evaluate((e) => e.setAttribute('ask', 'weights[1,1]'));
  await expect(el.locator('input.aps-answer')).toHaveCount(1);
  // a ready-made exercise by attribute brings its example
  await el.evaluate((e) => { e.removeAttribute('ask'); e.removeAttribute('preset'); e.setAttribute('exercise', 'naive-1000'); });
  await expect(el.locator('.aps-exercise-title')).toHaveText('The naive softmax at 1000: what overflows');
  await expect(el.locator('figure[data-panel="weights"] input.aps-answer')).toHaveCount(2);
});

test('embed.html: an exercise from the hash parameters, and in its permalink', async ({ page, context }) => {
  await page.goto('/embed.html#exercise=mask-base&lang=en');
  await expect(page.locator('.aps-exercise-title')).toHaveText('The j ≥ i + base mask: which row is empty, and why', { timeout: BOOT_MS });
  await expect(page.locator('figure[data-panel="masked"] input.aps-answer')).toHaveCount(9);
  await expect(page).toHaveURL(/#s=1\./);
  const again = await context.newPage();
  await again.goto(page.url());
  await expect(again.locator('figure[data-panel="weights"] input.aps-answer')).toHaveCount(3, { timeout: BOOT_MS });
  await again.close();
  // the author's own exercise in the parameters (a new page: a hash change alone is no navigation)
  const own = await context.newPage();
  await own.goto('/embed.html#preset=two-token&exercise=quiz-1&ask=scores[2,*]&tolerance=rel:0.01');
  await expect(own.locator('figure[data-panel="scores"] input.aps-answer')).toHaveCount(2, { timeout: BOOT_MS });
  await expect(own.locator('.aps-exercise-tol')).toHaveText('An answer counts as right within ±1 %.');
  await own.close();
});
