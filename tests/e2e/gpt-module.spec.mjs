// gpt-module.spec.mjs — the tiny GPT's wasm module in Chromium, as the training page will use it:
//  - the stepper's page fetches none of the GPT (no gpt.js, no gpt_core) until loadGpt() is called;
//  - loadGpt() from attention.js fetches and runs gpt_core under the strict CSP header
//    (script-src 'self' 'wasm-unsafe-eval'): create, train, sample, the KV cache, save and load;
//  - the same in a module Web Worker (ENVIRONMENT=web,worker), with the losses posted back.
// The worker's script is served by the test (page.route) so that web/ holds no test-only file.
import { test, expect, watchNetwork, BOOT_MS } from './fixtures.mjs';

const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:";
const SPEC = { n_layer: 1, n_embd: 16, n_head: 2, block_size: 8, batch_size: 4, n_chars: 2000, seed: 1 };

const WORKER = `
import { loadGpt, GptError } from '/attention.js';
const gpt = await loadGpt();
onmessage = ({ data }) => {
  try {
    const run = gpt.create(data);
    const r = run.train(5);
    const text = run.sample({ prompt: 'ab', greedy: true, max_new_tokens: 4 }).text;
    run.free();
    postMessage({ losses: r.losses, text, kernels: gpt.setKernels('fast') }, [r.losses.buffer]);
  } catch (e) {
    postMessage({ error: e.message, field: e instanceof GptError ? e.field : null });
  }
};
postMessage({ ready: true });
`;

async function strict(page) {
  const requests = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  await page.route('**/*', async (route) => {
    if (new URL(route.request().url()).pathname === '/__e2e__/gpt-worker.mjs') {
      await route.fulfill({ body: WORKER, contentType: 'text/javascript', headers: { 'content-security-policy': CSP } });
      return;
    }
    // no timeout on the fetch: its default (30 s) can pass on a loaded machine (csp.spec)
    const response = await route.fetch({ timeout: 0 });
    await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': CSP } });
  });
  return requests;
}

test('the stepper page loads none of the GPT; loadGpt() then runs gpt_core under the strict CSP', async ({ page }) => {
  const requests = await strict(page);
  const net = watchNetwork(page);
  await page.goto('/');
  await expect(page.locator('figure table td').first()).toBeVisible({ timeout: BOOT_MS });
  await net.quiet();
  expect(requests.filter((p) => /gpt\.js|gpt_core/.test(p))).toEqual([]);

  const result = await page.evaluate(async (spec) => {
    const { loadGpt, GptError } = await import('/attention.js');
    const gpt = await loadGpt();
    const run = gpt.create(spec);
    const r = run.train(5);
    const step = run.generateStart({ prompt: 'abc', greedy: true });
    const next = run.generateNext();
    const bytes = run.save();
    const loaded = gpt.load(bytes);
    const same = JSON.stringify(loaded.info()) === JSON.stringify(run.info());
    let field = null;
    try {
      gpt.load(bytes.subarray(0, 50));
    } catch (e) {
      field = e instanceof GptError ? e.field : String(e);
    }
    loaded.free();
    run.free();
    return { losses: Array.from(r.losses), diff: Math.max(step.max_abs_diff, next.max_abs_diff), base: next.base, bytes: bytes.length, same, field };
  }, SPEC);
  expect(result.losses).toHaveLength(5);
  expect(result.losses.every(Number.isFinite)).toBe(true);
  expect(result.diff).toBeLessThanOrEqual(1e-5);
  expect(result.base).toBe(3);
  expect(result.bytes).toBeGreaterThan(1000);
  expect(result.same).toBe(true);
  expect(result.field).toBe('checkpoint');
  expect(requests.filter((p) => p.endsWith('/gen/gpt_core.wasm'))).toHaveLength(1);
});

test('gpt_core in a module Web Worker: trains and posts its losses back', async ({ page }) => {
  await strict(page);
  await page.goto('/');
  const result = await page.evaluate(
    (spec) =>
      new Promise((resolve, reject) => {
        const worker = new Worker('/__e2e__/gpt-worker.mjs', { type: 'module' });
        worker.onerror = (e) => reject(new Error(`worker error: ${e.message}`));
        worker.onmessage = ({ data }) => {
          if (data.ready) worker.postMessage(spec);
          else {
            worker.terminate();
            resolve({ ...data, losses: data.losses ? Array.from(data.losses) : null, isF32: data.losses instanceof Float32Array });
          }
        };
      }),
    SPEC,
  );
  expect(result.error).toBeUndefined();
  expect(result.isF32).toBe(true);
  expect(result.losses).toHaveLength(5);
  expect(result.text.startsWith('ab')).toBe(true);
  expect(typeof result.kernels).toBe('string');
});
