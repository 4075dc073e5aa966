// a11y-stepper.spec.mjs — axe-core (WCAG 2.0/2.1/2.2 A and AA, a11y-helpers.mjs) on the stepper's
// states that a11y.spec.mjs does not reach, in English and 中文: biases on, several heads side by
// side, a bad cell with its message, the gradient check's table, an exercise being authored, the
// share and export toolbar in use, each variant's example (RoPE, ALiBi, grouped-query heads, the
// window with sinks, FlashAttention's tiles stepped, latent attention), the variants' exercises
// (RoPE, ALiBi, the window, FlashAttention, latent attention: a wrong answer checked, its hint
// shown) and large mode. Each state
// starts from a fresh page (its `go` loads it and waits until it is there), so one state's failure
// does not hide the next. Limits: axe judges the DOM (a canvas's pixels are a11y-views.spec's).
import { test, expect, openStepper } from './fixtures.mjs';
import { noViolations, largeMode, focused } from './a11y-helpers.mjs';

const LANG = {
  en: { status: /C\+\+/, asked: 'cells asked', right: /\d+ of \d+ right/ },
  zh: { status: /内核/, asked: '个单元格', right: /\d+ 个中对了 \d+ 个/ },
};
const gridCell = (page, m, r, c) => page.locator(`[data-matrix="${m}"] td[data-r="${r}"][data-c="${c}"]`);

/** Opens the stepper in `lang` at `hash` and waits for the core's first trace. */
async function open(page, lang, hash = '') {
  await openStepper(page, lang, hash);
  await expect(page.locator('.aps-status')).toContainText(LANG[lang].status);
}

/** Types `text` into a matrix cell by keyboard (Enter commits it). */
async function typeInto(page, m, r, c, text) {
  await gridCell(page, m, r, c).click();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

/** Picks a ready-made example by its id (the example select's value). */
async function example(page, id) {
  await page.locator('select[data-key="preset"]').selectOption(id);
  await expect(page.locator('select[data-key="preset"]')).toHaveValue(id);
  await expect(page.locator('.aps-steps')).toBeVisible();
}

/**
 * The states, each reached from a fresh page: `go(page, lang)` opens it and waits until the state
 * shows; `off` names rules turned off (a11y-helpers.mjs says why). Add a stepper state here.
 */
const STATES = [
  {
    name: 'biases on, b_q edited, a Q cell explained', go: async (page, lang) => {
      await open(page, lang);
      await page.locator('input[data-key="use_bias"]').check();
      await expect(page.locator('[data-matrix="b_o"]')).toBeVisible();
      await typeInto(page, 'b_q', 0, 0, '0.5');
      await expect(page.locator('figure[data-panel="q"] td[data-r="0"][data-c="0"]')).toHaveText('1.5000');
      await page.locator('figure[data-panel="q"] td[data-r="0"][data-c="0"]').focus();
      await expect(gridCell(page, 'b_q', 0, 0)).toHaveClass(/is-feed/);
    },
  },
  {
    name: 'two heads side by side', go: async (page, lang) => {
      await open(page, lang, '#preset=causal-4');
      await page.locator('input[data-key="n_head"]').fill('2');
      await expect(page.locator('.aps-heads button[data-key^="head."]')).toHaveCount(2);
      await page.locator('[data-key="heads.side"]').click();
      await expect(page.locator('figure[data-panel="weights-heads"] .aps-multiple')).toHaveCount(2);
    },
  },
  {
    name: 'a bad cell, its message beside the matrix', go: async (page, lang) => {
      await open(page, lang);
      await typeInto(page, 'x', 1, 0, 'abc');
      await expect(gridCell(page, 'x', 1, 0)).toHaveAttribute('aria-invalid', 'true');
      await expect(page.locator('[data-matrix="x"] .aps-field-error').first()).toContainText('abc');
    },
  },
  {
    name: 'backward, the gradient check of W_q', go: async (page, lang) => {
      await open(page, lang);
      await page.locator('[data-key="direction.backward"]').click();
      const box = page.locator('.aps-gradcheck');
      await box.locator('[data-key="gc.name"]').selectOption('W_q');
      await box.locator('[data-key="gc.all"]').click();
      await expect(box.locator('.aps-gc-table tbody tr')).toHaveCount(4);
    },
  },
  {
    name: 'an exercise authored: cells and a step asked, tolerance set', go: async (page, lang) => {
      await open(page, lang, '#preset=two-token');
      await page.locator('select[data-key="exercise"]').selectOption('custom');
      await page.locator('figure[data-panel="scores"] td[data-r="1"][data-c="0"]').click();
      await page.locator('[data-key="ask.context"]').click();
      await expect(page.locator('figure[data-panel="context"] td.is-asked')).toHaveCount(4);
      await expect(page.locator('.aps-exercise')).toContainText(LANG[lang].asked);
      await page.locator('[data-key="ex.decimals"]').fill('2');
      await page.locator('[data-key="ex.decimals"]').dispatchEvent('change');
    },
  },
  {
    name: 'share and export: a link copied, the mask chosen to export', go: async (page, lang) => {
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
      await open(page, lang, '#preset=causal-4');
      await page.locator('button.apx-copy-link').click();
      await expect(page.locator('.apx-status')).not.toBeEmpty();
      await page.locator('select.apx-matrix').selectOption('mask');
      await page.locator('button.apx-format[data-format="csv"]').focus();
    },
  },
  ...['rope-distance', 'alibi-heads', 'gqa-8-2', 'window-sink', 'mla-latent'].map((id) => ({
    name: `the ${id} example, a cell explained`, go: async (page, lang) => {
      await open(page, lang);
      await example(page, id);
      await page.locator('figure[data-panel="weights"] td[data-r="0"][data-c="0"]').first().focus();
      await expect(page.locator('.aps-explain')).toBeVisible();
    },
  })),
  {
    name: 'FlashAttention\'s tiles, step by step at the rescale', go: async (page, lang) => {
      await open(page, lang);
      await example(page, 'flash-tiles');
      await page.locator('[data-key="view.step"]').click();
      const progress = page.locator('.aps-progress-text');
      await expect(progress).toBeVisible();
      // step on until the tiles' step (its panels: the running maximum)
      for (let i = 0; i < 12 && !(await page.locator('figure[data-panel="flash_m"]').isVisible()); i++) {
        const before = await progress.textContent();
        await page.locator('[data-key="step.next"]').click();
        await expect(progress).not.toHaveText(before);
      }
      await expect(page.locator('figure[data-panel="flash_m"]')).toBeVisible();
    },
  },
  // the variants' exercises (grouped-query heads have none): picked, the first answer wrong, checked, its hint shown
  ...['rope-rotate', 'alibi-bias', 'window-keys', 'flash-running', 'mla-absorb'].map((id) => ({
    name: `the ${id} exercise, a wrong answer checked and its hint shown`,
    go: async (page, lang) => {
      await open(page, lang);
      await page.locator('select[data-key="exercise"]').selectOption(id);
      const first = page.locator('input.aps-answer').first();
      await expect(first).toBeVisible();
      await first.fill('12345');
      await page.locator('[data-key="ex.check"]').click();
      await expect(page.locator('.aps-exercise-result')).toContainText(LANG[lang].right);
      await first.focus();
      await page.locator('[data-key="ex.hint"]').click();
      await expect(page.locator('.aps-explain')).toBeVisible();
    },
  })),
  {
    name: 'large mode (40 tokens, two heads, heatmaps)', go: async (page, lang) => {
      await open(page, lang);
      await largeMode(page);
    },
  },
];

for (const lang of ['en', 'zh']) {
  test(`stepper, the states a11y.spec does not reach, ${lang}`, async ({ page }) => {
    test.slow(); // a dozen page loads, each checked by axe
    for (const s of STATES) {
      await test.step(s.name, async () => {
        await s.go(page, lang);
        await noViolations(page, `the stepper (${lang}): ${s.name}`);
      });
    }
  });
}

// latent attention's hint in 中文: its formula's MathML runs a few pixels taller than its box, which
// scrolls (axe's scrollable-region-focusable, once turned off for this state); the keyboard reaches
// the box (a named Tab stop before the next hint's button) and its arrow keys scroll it
test('keyboard: the latent-attention hint\'s formula box (中文), which scrolls, is a named Tab stop the arrow keys scroll', async ({ page }) => {
  await open(page, 'zh');
  await page.locator('select[data-key="exercise"]').selectOption('mla-absorb');
  const first = page.locator('input.aps-answer').first();
  await first.fill('12345');
  await page.locator('[data-key="ex.check"]').click();
  await first.focus();
  await page.locator('[data-key="ex.hint"]').click();
  const lines = page.locator('.aps-explain .aps-explain-lines');
  await expect(lines).toBeVisible();
  expect(await lines.evaluate((e) => Math.max(e.scrollWidth - e.clientWidth, e.scrollHeight - e.clientHeight)), 'the formula overflows its box').toBeGreaterThan(0);
  await page.locator('[data-key="ex.hint"]').focus();
  await page.keyboard.press('Shift+Tab');
  await expect(lines).toBeFocused();
  await expect(lines).toHaveAccessibleName('算式（过宽时可横向滚动）');
  const f = await focused(page);
  expect(f.outline, 'its focus is drawn').toBe(true);
  for (const key of ['ArrowRight', 'ArrowDown', 'ArrowDown']) await page.keyboard.press(key);
  await expect.poll(() => lines.evaluate((e) => e.scrollLeft + e.scrollTop)).toBeGreaterThan(0);
  await noViolations(page, 'the stepper (zh): the latent-attention hint, its formula box focused');
});
