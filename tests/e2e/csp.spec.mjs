// csp.spec.mjs — the playground, the iframe embed and the example course pages under the strict
// Content-Security-Policy a course platform can keep, sent as a real response header on every
// response (Playwright's page.route adds it), in the page and in its iframes. Any
// 'securitypolicyviolation' event or console error fails the test.
import { test as base } from '@playwright/test';
import { test, expect, watchNetwork, BOOT_MS, RUN_MS } from './fixtures.mjs';

const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:";

/**
 * Serves every response with the CSP header and records every violation, in every frame. Returns
 * the violations, and `quiet()`: the page's network has gone quiet (every request it made has had
 * its answer, and so its chance to be refused).
 */
async function strict(page) {
  const violations = [];
  const net = watchNetwork(page);
  await page.exposeFunction('__cspViolation', (v) => violations.push(v));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__cspViolation(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`);
    });
  });
  await page.route('**/*', async (route) => {
    // no timeout on the fetch: its default (30 s) can pass on a machine at load 20. A fetch that
    // fails is aborted and counted, so the page sees it fail and the test names it.
    try {
      const response = await route.fetch({ timeout: 0 });
      await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': CSP } });
    } catch (e) {
      violations.push(`fetch failed: ${route.request().url()}: ${e.message.split('\n')[0]}`);
      await route.abort().catch(() => {});
    }
  });
  return Object.assign(violations, { quiet: () => net.quiet() });
}

test('the playground page under the strict CSP header', async ({ page }) => {
  const violations = await strict(page);
  const res = await page.goto('/');
  expect(res.headers()['content-security-policy']).toBe(CSP);
  await expect(page.locator('figure table td').first()).toBeVisible({ timeout: BOOT_MS });
  await violations.quiet();
  expect([...violations]).toEqual([]);
});

test('embed.html under the strict CSP header: edit, copy link, PNG and SVG export', async ({ page, context, baseURL }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  const violations = await strict(page);
  const res = await page.goto('/embed.html#preset=causal-4&lang=zh');
  expect(res.headers()['content-security-policy']).toBe(CSP);
  await expect(page.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr').nth(0).locator('td[data-c]')).toHaveText(['1', '0', '0', '0'], { timeout: BOOT_MS });
  // edit a cell (the component re-renders, the hash is rewritten)
  const td = page.locator('[data-matrix="x"] td[data-r="0"][data-c="0"]');
  await td.dblclick();
  await page.locator('[data-matrix="x"] input.aps-cell-input').fill('3');
  await page.locator('[data-matrix="x"] input.aps-cell-input').press('Enter');
  await page.locator('button.apx-copy-link').click();
  for (const format of ['png', 'svg', 'csv']) {
    const [d] = await Promise.all([page.waitForEvent('download'), page.locator(`button.apx-format[data-format="${format}"]`).click()]);
    expect(d.suggestedFilename()).toMatch(new RegExp(`\\.${format}$`));
  }
  await violations.quiet();
  expect([...violations]).toEqual([]);
});

test('the example course page under the strict CSP header: two elements and an iframe', async ({ page }) => {
  const violations = await strict(page);
  await page.goto('/examples/');
  await expect(page.locator('#stepper-identity figure[data-panel="weights"] td[data-c]').first()).toHaveText('0.6698', { timeout: BOOT_MS });
  await expect(page.locator('#stepper-causal figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr')).toHaveCount(4);
  await expect(page.frameLocator('#frame-identity').locator('figure[data-panel="weights"] td[data-c]').first()).toHaveText('0.6698');
  // the iframe was resized from its message (CSSOM style, allowed)
  await expect.poll(async () => (await page.locator('#frame-identity').boundingBox()).height).not.toBe(600);
  await page.locator('#stepper-identity').evaluate((el) => el.setAttribute('height', '400'));
  await violations.quiet();
  expect([...violations]).toEqual([]);
});

test('the quiz page with a gradebook under the strict CSP header: a result reaches it from its iframe', async ({ page }) => {
  const violations = await strict(page);
  await page.goto('/examples/results.html');
  const frame = page.frameLocator('#quiz-softmax');
  const answer = frame.locator('figure[data-panel="weights"] td[data-r="0"][data-c="0"] input.aps-answer');
  await expect(answer).toBeVisible({ timeout: BOOT_MS });
  await answer.fill('0.6698');
  await frame.getByRole('button', { name: 'Check answers' }).click();
  await expect(page.locator('#gradebook tr[data-frame="quiz-softmax"] td').nth(1)).toHaveText('1');
  await violations.quiet();
  expect([...violations]).toEqual([]);
});

test('the training page under the strict CSP header: its worker, the GPT wasm, uPlot, a run, the maps, the block walk, the next token, surprisal and the pictures; 中文', async ({ page }) => {
  const violations = await strict(page);
  const res = await page.goto('/train/#steps=4&batch_size=4&sample_every=2');
  expect(res.headers()['content-security-policy']).toBe(CSP);
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await page.locator('#tr-start').click();
  await expect(page.locator('#app')).toHaveAttribute('data-train', 'done', { timeout: RUN_MS });
  await expect(page.locator('#tr-chart .uplot canvas')).toBeVisible();
  await page.locator('#tr-maps').click();
  await expect(page.locator('.tr-map')).toHaveCount(8);
  // the block walk: its lazily loaded view, heat strips (canvas) and MathML under the same policy
  await page.getByRole('button', { name: 'Walk this position' }).click();
  await expect(page.getByRole('slider', { name: 'x', exact: true })).toBeVisible({ timeout: RUN_MS });
  await page.getByRole('button', { name: 'Next step →' }).click();
  await expect(page.locator('.tr-walk-explain math').first()).toBeVisible();
  // the next-token bars, the surprisal and the pictures (figures.js, a PNG drawn from the SVG)
  await page.getByRole('region', { name: '7 · The next token' }).getByRole('slider', { name: 'Temperature' }).press('ArrowLeft');
  const sur = page.getByRole('region', { name: '8 · Surprisal: the loss, token by token' });
  await sur.getByRole('button', { name: 'Score the validation windows' }).click();
  await expect(sur.getByRole('status')).toContainText('validation windows:', { timeout: RUN_MS });
  for (const name of ['Save this step', 'Save the model view as a picture', 'Save the next-token bars as a picture']) {
    const group = page.getByRole('group', { name });
    for (const kind of ['SVG', 'PNG']) {
      await Promise.all([page.waitForEvent('download'), group.getByRole('button', { name: kind }).click()]);
    }
  }
  await page.locator('#tr-lang-zh').click();
  await expect(page.getByRole('heading', { name: '整个模块，一步一步' })).toBeVisible();
  await violations.quiet();
  expect([...violations]).toEqual([]);
});

test('the training lab under the strict CSP header: <gpt-lab> on a course page, and its iframe page trains and shows its maps', async ({ page }) => {
  const violations = await strict(page);
  await page.goto('/examples/lab.html');
  await expect(page.locator('#lab-sums')).toHaveAttribute('data-status', 'idle', { timeout: BOOT_MS });
  await expect(page.locator('#lab-copy')).toHaveAttribute('data-status', /training|done/, { timeout: BOOT_MS });
  await expect(page.frameLocator('#frame-reverse').locator('gpt-lab')).toHaveAttribute('data-status', 'idle', { timeout: BOOT_MS });
  await page.goto('/lab-embed.html#steps=6&batch-size=4&sections=training+maps&layer=2&head=4&autostart');
  await expect(page.locator('gpt-lab')).toHaveAttribute('data-status', 'done', { timeout: RUN_MS });
  await expect(page.locator('gpt-lab .tr-map')).toHaveCount(8);
  await expect(page.locator('gpt-lab .tr-zoom-caption')).toContainText('Layer 2, head 4.');
  await violations.quiet();
  expect([...violations]).toEqual([]);
});

// The detector itself: an inline <style> is a violation it must see (no console fixture here: the
// browser logs the violation as an error, on purpose).
base('the violation detector sees an inline style', async ({ page }) => {
  const violations = await strict(page);
  await page.goto('/embed.html');
  await page.evaluate(() => {
    const s = document.createElement('style');
    s.textContent = 'body { color: red }';
    document.head.append(s);
  });
  await expect.poll(() => violations.length).toBeGreaterThan(0);
  expect(violations[0]).toMatch(/^style-src/);
  // the page may still be loading through the route (no fixture here to stop it): its handlers
  // must not outlive the test
  await page.unrouteAll({ behavior: 'ignoreErrors' });
});

// The network watch itself: a request the test holds open keeps it from being quiet, and its
// failure names the request; once answered, the network goes quiet.
test('the network watch waits for a request held open and names it', async ({ page }) => {
  const net = watchNetwork(page);
  let release;
  const held = new Promise((r) => { release = r; });
  await page.route('**/held.txt', async (route) => { await held; await route.fulfill({ body: 'ok', contentType: 'text/plain' }); });
  await page.goto('/embed.html');
  const answer = page.evaluate(() => fetch('/held.txt').then((r) => r.text()));
  await expect.poll(() => net.open().some((u) => u.endsWith('/held.txt'))).toBe(true);
  const error = await net.quiet({ timeout: 2_000 }).then(() => null, (e) => e.message);
  expect(error).toMatch(/requests still open: .*\/held\.txt/);
  release();
  expect(await answer).toBe('ok');
  await net.quiet();
  expect(net.open()).toEqual([]);
});
