// a11y-train.spec.mjs — axe-core (WCAG 2.0/2.1/2.2 A and AA, a11y-helpers.mjs) on every state of
// the training page a learner reaches, in English and 中文 (one page load each, the states in
// sequence): before a run, after one, during another and paused, then each section in use (the maps and
// model view with a head enlarged, the walk of a position, the next-token bars with top-k, the
// surprisal of the validation windows, generation with the KV view, a kept run picked, a model
// opened, the fine-tuning panel, fine-tuning while it runs, a damaged and an unknown model file
// refused with their messages); and lab-embed.html (<gpt-lab> in its iframe page) before and
// after its run. A section added to the page adds its state to STATES below (name, and the steps
// that reach it from the one before). Limits: axe judges the DOM; the canvases' pixels are
// checked by a11y-views.spec.mjs.
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';
import { noViolations } from './a11y-helpers.mjs';
import { nanoGptCkpt, metaPkl } from '../lib/foreign-files.mjs';
import { openFiles } from './train-helpers.mjs';

const app = (page) => page.locator('#app');
const CHARS = [...'\n !,:;ERMOTabdehilmnorstuw'].sort();
const FOREIGN = { 'ckpt.pt': nanoGptCkpt({ n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, vocab_size: CHARS.length }, 5), 'meta.pkl': metaPkl(CHARS) };
const FT_TEXT = 'ROMEO: To be, or not to be; that is the time!\nMERO: a time to ride, tame the wind;\n'.repeat(12);
// a model file refused: the checkpoint cut short (damaged), and text under a model's name (unknown)
const REFUSED = { damaged: { 'ckpt.pt': FOREIGN['ckpt.pt'].slice(0, FOREIGN['ckpt.pt'].length - 100) }, unknown: { 'weights.safetensors': new TextEncoder().encode('this is not a model at all, just some text') } };

/**
 * The states, in the order one page reaches them: each `go(page, t)` takes the page from the state
 * before to its own and waits until it is there (`t` holds what the test knows: its testInfo, whose
 * output folder takes the files a state opens). Add a section's state here; keep each reachable
 * from the one before.
 */
const STATES = [
  { name: 'before a run', go: async () => {} },
  {
    name: 'after a 40-step run (done), a kept run listed', go: async (page) => {
      await page.locator('#tr-start').click();
      await expect(app(page)).toHaveAttribute('data-train', /done|diverged/, { timeout: RUN_MS });
      await expect(app(page)).not.toHaveAttribute('data-kept', '0', { timeout: RUN_MS });
    },
  },
  {
    name: 'during a second run (20000 steps)', go: async (page) => {
      await page.locator('#tr-f-steps').fill('20000');
      await page.locator('#tr-start').click();
      await expect(app(page)).toHaveAttribute('data-train', 'training', { timeout: RUN_MS });
    },
  },
  {
    name: 'that run paused', go: async (page) => {
      await page.locator('#tr-pause').click();
      await expect(app(page)).toHaveAttribute('data-train', 'paused', { timeout: RUN_MS });
    },
  },
  {
    name: 'the maps and model view, a head enlarged', go: async (page) => {
      await page.locator('#tr-maps').click();
      await expect(page.locator('#tr-maps-box')).toHaveAttribute('data-painted', /^[1-9]/, { timeout: RUN_MS });
      await page.locator('#tr-maps-box button').first().focus();
    },
  },
  {
    name: 'the walk of position 2', go: async (page) => {
      await expect(page.locator('#tr-walk-position option')).not.toHaveCount(0, { timeout: RUN_MS });
      await page.locator('#tr-walk-position').selectOption('2');
      await expect(page.locator('#tr-walk-status')).toContainText(/^(Position 2 |位置 2（)/, { timeout: RUN_MS });
    },
  },
  {
    name: 'the next-token bars, top-p at 0.8', go: async (page) => {
      await page.locator('#tr-next [role="radio"]').nth(1).click();
      await page.locator('#tr-next-top_p').fill('0.8');
      await expect(app(page)).toHaveAttribute('data-next', 'ready', { timeout: RUN_MS });
      await expect(page.locator('#tr-next table.tr-next-bars tbody tr').first()).toBeVisible();
          },
  },
  {
    name: 'the surprisal of the validation windows', go: async (page) => {
      await page.locator('#tr-sur-val').click();
      await expect(app(page)).toHaveAttribute('data-surprisal', 'ready', { timeout: RUN_MS });
    },
  },
  {
    name: 'generation: the prompt run, two tokens more, the KV view', go: async (page) => {
      await page.locator('#tr-gen-start').click();
      for (let i = 0; i < 2; i++) {
        await expect(page.locator('#tr-gen-next')).toBeEnabled({ timeout: RUN_MS });
        const before = await page.locator('#tr-gen-status').textContent();
        await page.locator('#tr-gen-next').click();
        await expect(page.locator('#tr-gen-status')).not.toHaveText(before, { timeout: RUN_MS });
      }
      await expect(page.locator('#tr-kv')).not.toBeEmpty();
    },
  },
  {
    name: 'a kept run picked (overlaid on the chart)', go: async (page) => {
      await page.locator('#tr-runs-list input.tr-run-pick').first().check();
    },
  },
  {
    name: 'a model opened, the fine-tuning panel shown', go: async (page, t) => {
      await openFiles(page, t.testInfo, FOREIGN, 'foreign');
      await expect(app(page)).toHaveAttribute('data-open', 'opened', { timeout: BOOT_MS });
      await expect(app(page)).toHaveAttribute('data-finetune', /./, { timeout: BOOT_MS });
    },
  },
  {
    name: 'fine-tuning while it runs', go: async (page) => {
      await page.locator('#tr-ft-text').fill(FT_TEXT);
      await page.locator('#tr-ft-context').fill('16');
      await page.locator('#tr-ft-batch_size').fill('2');
      await page.locator('#tr-ft-steps').fill('100000');
      await expect(page.locator('#tr-ft-start')).toBeEnabled();
      await page.locator('#tr-ft-start').click();
      await expect(app(page)).toHaveAttribute('data-finetune', 'training', { timeout: RUN_MS });
      await expect(page.locator('#tr-ft-status')).not.toBeEmpty();
    },
  },
  {
    name: 'fine-tuning stopped, then a damaged model (a truncated ckpt.pt) refused with its message', go: async (page, t) => {
      await page.locator('#tr-ft-stop').click();
      await expect(app(page)).toHaveAttribute('data-finetune', 'stopped', { timeout: RUN_MS });
      await openFiles(page, t.testInfo, REFUSED.damaged, 'damaged');
      await expect(app(page)).toHaveAttribute('data-open', 'refused', { timeout: BOOT_MS });
      await expect(page.locator('#tr-open-msg')).toContainText('ckpt.pt');
    },
  },
  {
    name: 'a file of no known model format refused with its message', go: async (page, t) => {
      await openFiles(page, t.testInfo, REFUSED.unknown, 'unknown');
      await expect(page.locator('#tr-open-msg')).toContainText('weights.safetensors', { timeout: BOOT_MS });
      await expect(app(page)).toHaveAttribute('data-open', 'refused');
    },
  },
];

for (const lang of ['en', 'zh']) {
  test(`training page, every state, ${lang}`, async ({ page }, testInfo) => {
    test.slow();  // fourteen states in one page, each checked by axe: minutes, more beside other load
    await page.goto('/train/#steps=40&batch_size=4&eval_interval=10&sample_every=20');
    await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
    if (lang === 'zh') {
      await page.locator('#tr-lang-zh').click();
      await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
    }
    for (const s of STATES) {
      await test.step(s.name, async () => {
        await s.go(page, { testInfo });
        await noViolations(page, `the training page (${lang}): ${s.name}`);
      });
    }
  });
}

test.describe('lab-embed.html', () => {
  // axe reads the stylesheets of <gpt-lab>'s shadow root by adding <style> copies there, which the
  // page's strict CSP refuses (a console error, not the page's); the CSP itself is csp.spec.mjs's
  test.use({ ignoreProblems: [/^console\.error: Applying inline style violates the following Content Security Policy directive 'style-src 'self''/] });

  test('lab-embed.html: <gpt-lab> in its iframe page, before and after a run', async ({ page }) => {
    await page.goto('/lab-embed.html#steps=6&batch-size=4&sections=all');
    const lab = page.locator('gpt-lab');
    await expect(lab).toHaveAttribute('data-status', 'idle', { timeout: BOOT_MS });
    await noViolations(page, 'lab-embed.html before a run');
    await lab.locator('button', { hasText: 'Start training' }).click();
    await expect(lab).toHaveAttribute('data-status', /done|diverged/, { timeout: RUN_MS });
    await noViolations(page, 'lab-embed.html after a 6-step run');
  });
});
