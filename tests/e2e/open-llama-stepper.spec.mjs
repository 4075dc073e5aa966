// open-llama-stepper.spec.mjs — a head of an opened Llama-family model, opened in the Attention
// Stepper from the attention maps, shows that head's attention weights: the stepper gets the head's
// queries and keys after RoPE has turned them, and a grouped-query head's shared key/value head, so
// its weights panel must equal the model's softmax for that head. The expected weights are our own
// PyTorch model's (tests/open_llama_fixture.py: transformers' Llama in float64), never the core's:
// a page that handed the stepper unrotated q and k, or another key/value head, fails here.
// Waits are on states (#app's data-open and data-status, the maps' status line), never on time.
import { join } from 'node:path';
import { test, expect, BOOT_MS } from './fixtures.mjs';
import { LLAMA_FOLDER as FOLDER, writeLlamaFixture } from './llama-fixture.mjs';

const app = (page) => page.locator('#app');
let dir;
let want;

test.beforeAll(({}, testInfo) => {
  const f = writeLlamaFixture(testInfo);
  dir = f.dir;
  want = f.want.folder;
});

test('a Llama head (RoPE, 2 query heads to a key/value head) opens in the stepper with PyTorch’s weights', async ({ page, context }) => {
  await page.goto('/train/');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await page.locator('#tr-open-folder').setInputFiles(join(dir, FOLDER));
  await expect(app(page)).toHaveAttribute('data-open', 'opened', { timeout: BOOT_MS });
  const maps = page.getByRole('region', { name: '5 · Attention maps' });
  await maps.getByLabel('Prompt').fill(want.prompt);
  await page.getByRole('button', { name: 'Show attention maps' }).click();
  const T = want.ids.length;
  await expect(page.locator('#tr-maps-status')).toContainText(`on ${T} tokens: 2 layers × 4 heads`);
  // layer 2's head 4 reads key/value head 2; layer 1's head 1 key/value head 1
  for (const [l, h] of [[1, 3], [0, 0]]) {
    const link = page.getByRole('link', { name: `Layer ${l + 1}, head ${h + 1}: open in the Attention Stepper` });
    const [stepper] = await Promise.all([context.waitForEvent('page'), link.click()]);
    await expect(stepper.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
    const rows = stepper.locator('figure[data-panel="weights"] table.aps-mat:not(.aps-stats) tbody tr');
    await expect(rows).toHaveCount(T);
    await expect(stepper.locator('figure[data-panel="weights"] td[data-c]').last()).toHaveText(/\d/);
    const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td[data-c]')].map((td) => Number(td.title))));
    let worst = 0;
    for (let i = 0; i < T; i++) {
      expect(cells[i], `row ${i}`).toHaveLength(T);
      for (let j = 0; j < T; j++) worst = Math.max(worst, Math.abs(cells[i][j] - want.attention[l][h][i][j]));
    }
    console.log(`layer ${l + 1} head ${h + 1}: largest |stepper − PyTorch| = ${worst.toExponential(2)}`);
    expect(worst, `layer ${l + 1} head ${h + 1}'s weights against PyTorch's`).toBeLessThanOrEqual(2e-6);
    // the stepper shows one head, causal, no RoPE of its own (its q and k are already turned)
    const st = await stepper.evaluate(() => window.attentionStepper.getState());
    expect(st.mode).toBe('qkv');
    expect(st.options.n_head).toBe(1);
    expect(st.options.causal).toBe(true);
    expect(st.variants.rope).toBe('none');
    await stepper.close();
  }
});
