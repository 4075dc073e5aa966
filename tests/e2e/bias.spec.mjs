// bias.spec.mjs — the biases b_q, b_k, b_v, b_o on the page: turned on they start as zeros of the
// right length, an edited bias moves Q (and the steps after it) by exactly its value, the cell
// arithmetic shows the + b term and lights the bias cell, the backward pass shows ∂L/∂b as the
// column sums, the gradient check accepts a bias entry, bad bias input gets its message, and the
// state (a permalink) keeps them.
import { test, expect, panelCells, explainText, settled } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

const gridCell = (page, m, r, c) => page.locator(`[data-matrix="${m}"] td[data-r="${r}"][data-c="${c}"]`);

async function typeInto(page, m, r, c, text) {
  await gridCell(page, m, r, c).click();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

test('biases: zeros when turned on, an edit moves Q by the bias, explanation and backward', async ({ page }, testInfo) => {
  await ready(page);
  await expect(page.locator('[data-matrix="b_q"]')).toHaveCount(0);
  await page.locator('input[data-key="use_bias"]').check();
  for (const b of ['b_q', 'b_k', 'b_v', 'b_o']) {
    await expect(page.locator(`[data-matrix="${b}"] .aps-shape`), b).toHaveText('1 × 2');
    await expect(page.locator(`[data-matrix="${b}"] [data-key="${b}.row+"]`), b).toBeHidden(); // a vector: no rows to add
  }
  // the editors sit after their weights: x, W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o
  expect(await page.locator('[data-matrix]').evaluateAll((es) => es.map((e) => e.dataset.matrix))).toEqual(['x', 'W_q', 'b_q', 'W_k', 'b_k', 'W_v', 'b_v', 'W_o', 'b_o']);
  await expect(panelCells(page, 'weights')).toHaveText(['0.6698', '0.3302', '0.3302', '0.6698']); // zeros change nothing
  // b_q = [0.5, 0]: Q = x·W_q + b_q = [[1.5, 0], [0.5, 1]]
  await typeInto(page, 'b_q', 0, 0, '0.5');
  await expect(panelCells(page, 'q')).toHaveText(['1.5000', '0', '0.5000', '1']);
  await expect(page.locator('figure[data-panel="q"] math')).toHaveAttribute('aria-label', 'Q = x W_q + b_q');
  // S = Q·Kᵀ with K = I: the first row is [1.5, 0]
  await expect(page.locator('figure[data-panel="scores"] tbody tr').first().locator('td[data-c]')).toHaveText(['1.5000', '0']);
  // the cell arithmetic: + b_q[1], and the b_q cell lights up
  await page.locator('figure[data-panel="q"] td[data-r="0"][data-c="0"]').focus();
  await expect.poll(() => explainText(page)).toContain('Q[1,1] = x[1,:] · W_q[:,1] + b_q[1]');
  await expect.poll(() => explainText(page)).toContain('= 1·1 + 0·0 + 0.5');
  await expect(gridCell(page, 'b_q', 0, 0)).toHaveClass(/is-feed/);
  // b_o = [0, −1]: out = concat·W_o + b_o
  await typeInto(page, 'b_o', 0, 1, '-1');
  await page.locator('figure[data-panel="out"] td[data-r="0"][data-c="1"]').focus();
  await expect.poll(() => explainText(page)).toContain('Y[1,2] = Σ_c C[1,c] · W_o[c,2] + b_o[2]');
  await expect(page.locator('.aps-explain .aps-ex-result')).toHaveAttribute('data-text', /^= −0\.\d{4}$/);
  // the state keeps them (a permalink restores the biases)
  const st = await page.evaluate(() => window.attentionStepper.getState());
  expect(st).toMatchObject({ use_bias: true, matrices: { b_q: '0.5 0', b_o: '0 -1', b_k: '0 0', b_v: '0 0' } });
  await page.screenshot({ path: testInfo.outputPath('bias.png'), fullPage: true });
  // backward: ∂L/∂b are the column sums (L = Σ out: ∂L/∂b_o = T = 2 ones per column)
  await page.locator('[data-key="direction.backward"]').click();
  await page.locator('[data-key="upstream.sum"]').click();
  await expect(panelCells(page, 'd_b_o')).toHaveText(['2', '2']);
  const dQ = await page.evaluate(() => new Promise((resolve) => {
    import('/attention.js').then(async ({ loadAttention }) => {
      const api = await loadAttention();
      const s = window.attentionStepper.getState();
      const spec = { x: s.matrices.x, W_q: s.matrices.W_q, W_k: s.matrices.W_k, W_v: s.matrices.W_v, W_o: s.matrices.W_o, b_q: s.matrices.b_q, b_k: s.matrices.b_k, b_v: s.matrices.b_v, b_o: s.matrices.b_o };
      const b = api.backward(spec);
      resolve({ dQ: b.grads.Q, db: b.grads.b_q });
    });
  }));
  for (let j = 0; j < 2; j++) expect(dQ.db[j]).toBeCloseTo(dQ.dQ[0][j] + dQ.dQ[1][j], 6);
  await page.locator('figure[data-panel="d_b_q"] td[data-r="0"][data-c="1"]').hover();
  await expect.poll(() => explainText(page)).toContain('∂L/∂b_q[2] = Σ_t ∂L/∂Q[t,2]');
  // the gradient check takes a bias entry
  await page.locator('figure[data-panel="d_b_q"] td[data-r="0"][data-c="0"]').click();
  await expect(page.locator('[data-key="gc.name"]')).toHaveValue('b_q');
  await page.locator('[data-key="gc.one"]').click();
  await expect(page.locator('.aps-gc-table tbody tr')).toHaveCount(1);
  await expect(page.locator('.aps-gc-table tbody th')).toHaveText('b_q[1,1]');
  await expect(page.locator('.aps-gc-table .aps-gc-result')).toContainText('pass');
});

test('bad bias input: the message names the bias and its cell; the wrong length is refused', async ({ page }) => {
  await ready(page);
  await page.locator('input[data-key="use_bias"]').check();
  await typeInto(page, 'b_k', 0, 1, 'zz');
  await expect(page.locator('[data-matrix="b_k"] > .aps-field-error')).toContainText("b_k: row 1, column 2: 'zz' is not a number");
  await expect(page.locator('.aps-steps')).toBeHidden();
  await typeInto(page, 'b_k', 0, 1, '0');
  await expect(page.locator('.aps-steps')).toBeVisible();
  await page.locator('[data-key="b_k.col+"]').click();
  await expect(page.locator('[data-matrix="b_k"] > .aps-field-error')).toContainText('b_k');
  await expect(page.locator('.aps-steps')).toBeHidden();
  await page.locator('[data-key="b_k.col-"]').click();
  await expect(page.locator('.aps-steps')).toBeVisible();
  // off again: the biases are kept in the state but not used
  await page.locator('input[data-key="use_bias"]').uncheck();
  await expect(page.locator('[data-matrix="b_k"]')).toHaveCount(0);
  await settled(page);
  await expect(panelCells(page, 'weights')).toHaveText(['0.6698', '0.3302', '0.3302', '0.6698']);
});
