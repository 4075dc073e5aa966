// open-threads.spec.mjs — opening models in the threaded core (gpt_core_mt) on the cross-origin
// isolated training page (/isolated/train/): a checkpoint this project saved and a Hugging Face GPT-2
// model.safetensors + config.json open through "Open a model", and the next-token bars are the
// core's for the same file opened in Node (the plain module), to the 3 decimals shown; through
// gpt.js on the same page, an opened model's next-token logits and probabilities on 1, 2 and 1
// threads again are the same bits (GPT::set_threads' promise). Limits: the page itself runs an
// opened model's forward on one thread (worker.js gives threads to training); Node cannot load
// gpt_core_mt (built for web and worker), so there is no tests/wasm twin. A refusal is waited for
// too, so a failure shows its message.
import { test, expect, BOOT_MS } from './fixtures.mjs';
import { hfGpt2Files } from '../lib/foreign-files.mjs';
import { loadGptApi } from '../wasm/load.mjs';
import { openFiles } from './train-helpers.mjs';

const app = (page) => page.locator('#app');
const shown = (text) => text.replace(/\n/g, '↵').replace(/ /g, '␣');

async function checkOpened(page, testInfo, set) {
  await page.goto('/isolated/train/');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await openFiles(page, testInfo, set);
  await expect(app(page)).toHaveAttribute('data-open', /^(opened|refused)$/, { timeout: BOOT_MS });
  await expect(page.locator('#tr-open-msg')).not.toContainText('unknown error');
  await expect(app(page)).toHaveAttribute('data-open', 'opened');
  const gpt = await loadGptApi();
  const node = await gpt.openModel(Object.entries(set).map(([name, data]) => ({ name, data })));
  const next = page.getByRole('region', { name: '7 · The next token' });
  const nextPrompt = (await next.getByRole('textbox').first().inputValue()).replace(/↵/g, '\n');
  const table = page.getByRole('table', { name: 'The most likely next tokens' });
  await expect(table.locator('tbody tr').first()).toBeVisible();
  const got = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => ({ token: tr.children[0].textContent, logit: Number(tr.children[2].textContent) })));
  const want = node.nextToken({ prompt: nextPrompt, temperature: 1, top_k: 5, show: got.length }).top;
  expect(got.length).toBeGreaterThan(3);
  for (let i = 0; i < got.length; i++) {
    expect(got[i].token, `bar ${i}`).toBe(shown(want[i].text));
    expect(Math.abs(got[i].logit - want[i].logit), `bar ${i}`).toBeLessThanOrEqual(0.0005 + 1e-6);
  }
  node.free?.();
}

test('threads page: a checkpoint this project saved opens, and its next-token bars are the core’s', async ({ page }, testInfo) => {
  const gpt = await loadGptApi();
  const run = gpt.create({ task: 'sort', n_layer: 1, n_embd: 32, n_head: 2, block_size: 16, batch_size: 4 });
  await checkOpened(page, testInfo, { 'mine.safetensors': run.save() });
});

test('threads page: a Hugging Face GPT-2 model.safetensors opens, and its next-token bars are the core’s', async ({ page }, testInfo) => {
  const { model, config } = hfGpt2Files({ n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, vocab_size: 27 });
  await checkOpened(page, testInfo, { 'model.safetensors': model, 'config.json': config });
});

test.describe('on the page’s main thread', () => {
// gpt.js runs here on the main thread (the page's own calls run in its worker), whose pool waits
// Emscripten warns about; the threads are already started (loadGpt's pthreads), so nothing waits on a load
test.use({ ignoreProblems: [/Blocking on the main thread is very dangerous/] });
test('threads page: an opened checkpoint and GPT-2 safetensors give the same logits on 1 and 2 threads', async ({ page }) => {
  const gpt = await loadGptApi();
  const mine = gpt.create({ task: 'sort', n_layer: 2, n_embd: 64, n_head: 4, block_size: 32, batch_size: 4 }).save();
  const hf = hfGpt2Files({ n_layer: 2, n_head: 4, n_embd: 64, block_size: 32, vocab_size: 40 });
  await page.goto('/isolated/train/');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  const sets = {
    checkpoint: [['mine.safetensors', [...mine]]],
    gpt2: [['model.safetensors', [...hf.model]], ['config.json', [...hf.config]]],
  };
  const hfPrompt = Array.from({ length: 30 }, (_, i) => `[${(i * 7) % 40}]`).join('');
  const got = await page.evaluate(async ({ sets, hfPrompt }) => {
    const { loadGpt } = await import('/isolated/gpt.js');
    const g = await loadGpt({ threads: 2 });
    const out = {};
    for (const [key, files] of Object.entries(sets)) {
      const run = await g.openModel(files.map(([name, bytes]) => ({ name, data: new Uint8Array(bytes) })));
      const V = run.info().config.vocab_size;
      const spec = { prompt: key === 'gpt2' ? hfPrompt : 'cab=abc\nhgfd=dfgh\njiea=aeij\nbdc=', show: V };
      const at = (n) => {
        const threads = run.setThreads(n).threads;
        const r = run.nextToken(spec);
        return { threads, tokens: r.tokens.length, top: JSON.stringify(r.top) };
      };
      out[key] = [at(1), at(2), at(1)];
      run.free();
    }
    return out;
  }, { sets, hfPrompt });
  for (const [key, [one, two, again]] of Object.entries(got)) {
    expect([one.threads, two.threads, again.threads], key).toEqual([1, 2, 1]);
    expect(one.tokens, key).toBeGreaterThan(20); // enough work for the forward to split
    expect(two.top, key).toBe(one.top); // float32 values printed to round-trip: the same text, the same bits
    expect(again.top, key).toBe(one.top);
  }
});
});
