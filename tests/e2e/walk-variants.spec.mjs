// walk-variants.spec.mjs — the training page with the GPT's variants (gpt.h), driven by labels and
// visible text: a RoPE + RMSNorm + SwiGLU + grouped-query model (trained briefly by the wasm API
// in Node, uploaded as a learner uploads it) walked through its block — the RMSNorm step, the
// rotation step with a turned number's arithmetic, the SwiGLU gate — each checked against the
// core's blockTrace of the same model in Node (itself checked against PyTorch by walk_torch); a
// head opened in the stepper with its variant set lands on the model's weight; the KV view gives
// the cache's bytes for 2 key/value heads; the Sharing keys experiment (中文) with a few steps: its
// three KV caches' bytes, 2·n_layer·block_size·n_kv_head·head_dim·4, counted here. At 375, 1366
// and 1920 px nothing overflows (screenshots in the test's output).
import { readFile } from 'node:fs/promises';
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';
import { noViolations } from './a11y-helpers.mjs';
import { loadGptApi } from '../wasm/load.mjs';
import { savedModel, uploaded } from './train-helpers.mjs';

let llama;
const SPEC = { task: 'copy', n_layer: 1, n_head: 4, n_embd: 16, block_size: 16, batch_size: 2, seed: 3, pos: 'rope', norm: 'rmsnorm', mlp: 'swiglu', n_inner: 32, n_kv_head: 2 };
const f4 = (v) => { if (v === 0) return '0'; const s = Math.abs(v) >= 1e5 || (Math.abs(v) < 1e-4 && v !== 0) ? v.toExponential(2) : v.toFixed(4); return s.replace('-', '−'); };
const section = (page) => page.getByRole('region', { name: /The whole block, step by step|整个模块，一步一步/ });
const lines = (page) => section(page).locator('.tr-walk-explain [data-text]').evaluateAll((ds) => ds.map((d) => d.dataset.text));
const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

test.describe.configure({ mode: 'default' });
test.beforeAll(async ({}, testInfo) => { llama = await savedModel(testInfo, 'llama.safetensors', SPEC, 20); });

async function walkTo(page, position, prompt) {
  await page.locator('#tr-f-prompt').fill(prompt);
  await page.locator('#tr-maps').click();
  await expect(page.locator('#tr-walk-status')).toContainText(/^Pick a position|^选一个/, { timeout: RUN_MS });
  await section(page).getByLabel(/^Position$|^位置$/).selectOption(String(position));
  await expect(page.locator('#tr-walk-status')).toContainText(new RegExp(`^(Position ${position} |位置 ${position}（)`), { timeout: RUN_MS });
}

test('a Llama-like model walked: RMSNorm, the rotation, SwiGLU, a head into the stepper, the KV cache', async ({ page, context }) => {
  await uploaded(page, llama);
  await walkTo(page, 3, 'abcd=ab');
  const gpt = await loadGptApi();
  const node = gpt.load(await readFile(llama));
  const ref = node.blockTrace({ prompt: 'abcd=ab', position: 3 });
  node.free();
  const s = section(page);
  const step = s.getByLabel(/^Step$/);
  // embedding, ln_1, RoPE, attention, c_proj, ln_2, MLP, the head, the sampled token
  await expect(step.locator('option')).toHaveCount(9);
  await expect(s.getByRole('heading', { name: 'Embedding: wte[token] (no position vector)' })).toBeVisible();
  await s.getByRole('button', { name: 'Next step →' }).click();
  await expect(s.getByRole('heading', { name: 'Layer 1 · ln_1 (RMSNorm)' })).toBeVisible();
  await s.getByRole('group', { name: 'x̂', exact: true }).getByRole('button').first().click();
  let ls = await lines(page);
  expect(ls).toContain('ms = Σ_c x[c]² / C');
  expect(ls).toContain(`= ${f4(ref.layers[0].ln_1.rstd)}`);
  // the rotation step: q's first number is its pair turned by the position's first angle
  await s.getByRole('button', { name: 'Next step →' }).click();
  await expect(s.getByRole('heading', { name: 'Layer 1 · RoPE: q and k turned by position' })).toBeVisible();
  await s.getByRole('group', { name: 'q', exact: true }).getByRole('button', { name: /^q\[1\] = / }).click();
  ls = await lines(page);
  expect(ls[0]).toBe('q[1] = q₀[1]·cos θ − q₀[3]·sin θ');
  expect(ls.filter((l) => l.startsWith('= ')).at(-1)).toBe(`= ${f4(ref.layers[0].q[0])}`);
  // attention: head 3 reads key/value head 2
  await s.getByRole('button', { name: 'Next step →' }).click();
  await expect(s.getByText(/Grouped-query attention: 2 key\/value heads, each read by 2 query heads \(1→1, 2→1, 3→2, 4→2\)/)).toBeVisible();
  await s.getByRole('group', { name: 'a (head 3)' }).getByRole('button').nth(1).click();
  await expect(s.locator('.tr-walk-explain')).toContainText('Query head 3 reads key/value head 2');
  // the head in the stepper, with the model's weight on the focused cell
  const [stepper] = await Promise.all([context.waitForEvent('page'), s.getByRole('link', { name: 'Open head 3 in the Attention Stepper' }).click()]);
  await stepper.waitForLoadState();
  const focused = stepper.getByRole('grid', { name: 'softmax (A)' }).locator('[role=gridcell]:focus');
  await expect(focused).toHaveText(f4(ref.layers[0].heads[2].weights[0]));
  await stepper.close();
  // SwiGLU's gate
  await step.selectOption({ label: '7. Layer 1 · MLP (SwiGLU: gate, up, down) and the residual' });
  await s.getByRole('group', { name: 'g', exact: true }).getByRole('button').first().click();
  ls = await lines(page);
  expect(ls[0]).toBe('g[1] = silu[1]·up[1]');
  expect(ls.filter((l) => l.startsWith('= ')).at(-1)).toBe(`= ${f4(ref.layers[0].act[0])}`);
  // the KV cache: 2 key/value heads of 4 (1 layer × 2 × 16 rows × 8 numbers × 4 bytes at the prompt's length)
  await page.locator('#tr-gen-start').click();
  await expect(page.getByText(/Cache size/)).toBeVisible({ timeout: RUN_MS });
  await expect(page.getByText(/2 key\/value heads for 4 query heads; one per query head would take/)).toBeVisible();
});

for (const width of [375, 1366, 1920]) {
  test(`Sharing keys at ${width} px in 中文: the three caches' bytes beside the losses, nothing overflows`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width, height: 900 });
    await page.goto('/train/#steps=6&batch_size=2&eval_interval=3&sample_every=0&lang=zh');
    await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
    await page.getByRole('button', { name: '共享键：n_kv_head = n_head、2、1' }).click();
    await expect(page.locator('#app')).toHaveAttribute('data-exp', 'done', { timeout: RUN_MS });
    const table = page.locator('#tr-exp-results table');
    // the tiny preset: 2 layers, block_size 64, 4 heads of 16: 2·2·64·(n_kv_head·16)·4 bytes
    for (const [k, bytes] of [[4, 65536], [2, 32768], [1, 16384]]) {
      await expect(table.getByRole('row', { name: new RegExp(`n_kv_head = ${k} ${bytes.toLocaleString('en-US')} \\d`) })).toBeVisible();
    }
    await expect(page.getByText(/KV 缓存随 n_kv_head 缩小/)).toBeVisible();
    expect(await overflow(page)).toBe(0);
    await noViolations(page, `the Sharing keys experiment done, 中文, ${width} px`);
    await page.locator('#tr-exp').screenshot({ path: testInfo.outputPath(`sharing-keys-${width}.png`) });
  });
}

test('Length: learned positions stop at their table, ALiBi and RoPE are read at 64 and 128', async ({ page }, testInfo) => {
  await page.goto('/train/#steps=6&batch_size=2&eval_interval=3&sample_every=0');
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await page.getByRole('button', { name: 'Length: learned vs ALiBi vs RoPE positions' }).click();
  await expect(page.locator('#app')).toHaveAttribute('data-exp', 'done', { timeout: RUN_MS });
  const table = page.locator('#tr-exp-results table');
  await expect(table.getByRole('row', { name: /^learned \(wpe\) \d\.\d{4} cannot: no wpe row past 32 \(context 64\) cannot: no wpe row past 32 \(context 128\)$/ })).toBeVisible();
  for (const name of ['ALiBi', 'RoPE']) await expect(table.getByRole('row', { name: new RegExp(`^${name}( \\d\\.\\d{4}){3}$`) })).toBeVisible();
  await expect(page.getByText(/there is no wpe row for position 32 and on/)).toBeVisible();
  await expect(page.getByRole('img', { name: /Loss by position for windows of 128 tokens, one line per model: ALiBi, RoPE/ })).toBeVisible();
  expect(await overflow(page)).toBe(0);
  await page.locator('#tr-exp').screenshot({ path: testInfo.outputPath('length-1366.png') });
});
