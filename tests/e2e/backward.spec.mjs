// backward.spec.mjs — the stepper's backward mode: the upstream gradient (loss sum, mse, typed
// dOut), the gradient panels and their numbers, a cell's arithmetic, the "reads" chips, masked
// positions, bad dOut input, the gradient check, step mode, Chinese, and a phone-sized screen.
import { test, expect, panelCells, explainText } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

const gridCell = (page, m, r, c) => page.locator(`[data-matrix="${m}"] td[data-r="${r}"][data-c="${c}"]`);
const row = (page, panel, i) => page.locator(`figure[data-panel="${panel}"] table tbody tr`).nth(i).locator('td[data-c]');
const cell = (page, panel, r, c) => page.locator(`figure[data-panel="${panel}"] td[data-r="${r}"][data-c="${c}"]`);
const explainBox = (page) => page.locator('.aps-explain');

async function typeInto(page, m, r, c, text) {
  await gridCell(page, m, r, c).click();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

async function backward(page) {
  await page.locator('[data-key="direction.backward"]').click();
  await expect(page.locator('figure[data-panel="d_out"]')).toBeVisible();
}

/** Identity preset, backward, dOut = [[1, 0], [0, 0]] typed in the grid. */
async function identityDout(page) {
  await ready(page);
  await backward(page);
  await page.locator('[data-key="upstream.d_out"]').click();
  await expect(gridCell(page, 'd_out', 1, 1)).toHaveText('1'); // ones of out's shape
  await typeInto(page, 'd_out', 0, 1, '0');
  await typeInto(page, 'd_out', 1, 0, '0');
  await typeInto(page, 'd_out', 1, 1, '0');
  await expect(panelCells(page, 'd_out')).toHaveText(['1', '0', '0', '0']);
}

test('identity, dOut = [[1,0],[0,0]]: the softmax backward and ∂L/∂x from the core', async ({ page }, testInfo) => {
  await identityDout(page);
  await expect(row(page, 'd_scaled', 0)).toHaveText(['0.2212', '−0.2212']);
  await expect(row(page, 'd_scaled', 1)).toHaveText(['0', '0']);
  expect(Number(await cell(page, 'd_scaled', 0, 0).getAttribute('title'))).toBeCloseTo(0.221181, 6);
  await expect(panelCells(page, 'd_x')).toHaveText(['0.9826', '−0.1564', '0.1738', '0']);
  await expect(panelCells(page, 'd_weights')).toHaveText(['1', '0', '0', '0']);
  await expect(panelCells(page, 'd_W_q')).toHaveText(['0.1564', '−0.1564', '0', '0']);
  // formulas are MathML; signed colours: the positive and the negative cell differ
  await expect(page.locator('figure[data-panel="d_scaled"] math')).toHaveCount(1);
  await expect(cell(page, 'd_scaled', 0, 0)).toHaveClass(/\bd8\b/);
  await expect(cell(page, 'd_scaled', 0, 1)).toHaveClass(/\bd0\b/);
  await expect(cell(page, 'd_scaled', 1, 0)).toHaveClass(/\bd4\b/);
  // the loss and the state
  await expect(page.locator('figure[data-panel="d_out"] .aps-panel-note')).toContainText('L = Σ dOut ⊙ out = 0.6698');
  const st = await page.evaluate(() => window.attentionStepper.getState());
  expect(st.direction).toBe('backward');
  // the target is the default loss's (MSE against zeros of out's shape), kept for switching back
  expect(st.upstream).toEqual({ kind: 'd_out', d_out: '1 0\n0 0', target: '0 0\n0 0' });
  // the forward values stay on screen as the cache
  await expect(page.locator('.aps-cache-head')).toBeVisible();
  await expect(panelCells(page, 'weights').first()).toHaveText('0.6698');
  await page.screenshot({ path: testInfo.outputPath('backward-all.png'), fullPage: true });
});

test('cell arithmetic of gradients and the "reads" chips', async ({ page }, testInfo) => {
  await identityDout(page);
  // dS'[1,1] = A11 (G11 − Σ_k G1k A1k)
  await cell(page, 'd_scaled', 0, 0).hover();
  const ex = explainBox(page);
  await expect.poll(() => explainText(page)).toContain('dS′[1,1] = A[1,1] · (G[1,1] − Σ_k G[1,k]·A[1,k])');
  await expect.poll(() => explainText(page)).toContain('Σ_k G[1,k]·A[1,k] = 1·0.6698 + 0·0.3302 = 0.6698');
  await expect.poll(() => explainText(page)).toContain('= 0.6698 · (1 − 0.6698)');
  await expect(ex.locator('.aps-ex-result')).toHaveAttribute('data-text', '= 0.2212');
  await expect(cell(page, 'weights', 0, 1)).toHaveClass(/is-feed/);
  await expect(cell(page, 'd_weights', 0, 1)).toHaveClass(/is-feed/);
  await page.screenshot({ path: testInfo.outputPath('backward-explain.png') });
  // d_weights[i][j] = Σ_c dO_ic·V_jc
  await cell(page, 'd_weights', 0, 1).hover();
  await expect.poll(() => explainText(page)).toContain('∂L/∂A[1,2] = Σ_c ∂L/∂O[1,c] · V[2,c]');
  await expect.poll(() => explainText(page)).toContain('= 1·0 + 0·1');
  // d_q: Σ_j dS_ij·k_j
  await cell(page, 'd_q', 0, 0).hover();
  await expect.poll(() => explainText(page)).toContain('∂L/∂q[1,1] = Σ_j ∂L/∂S[1,j] · k[j,1]');
  await expect(ex.locator('.aps-ex-result')).toHaveAttribute('data-text', '= 0.1564');
  // d_W_q: Σ_t x_t·dQ_t, the x grid's column lights up
  await cell(page, 'd_W_q', 0, 1).hover();
  await expect.poll(() => explainText(page)).toContain('∂L/∂W_q[1,2] = Σ_t x[t,1] · ∂L/∂Q[t,2]');
  await expect(gridCell(page, 'x', 1, 0)).toHaveClass(/is-feed/);
  // d_x: three sums
  await cell(page, 'd_x', 0, 0).hover();
  await expect.poll(() => explainText(page)).toContain('∂L/∂x[1,1]');
  await expect(ex.locator('.aps-ex-result')).toHaveAttribute('data-text', '= 0.9826');
  // keyboard: focus a cell and move with the arrows; the explanation follows
  await page.mouse.move(0, 0); // no hover left over (the scroll to the focused cell moves the page under the mouse)
  await cell(page, 'd_v', 0, 0).focus();
  await page.keyboard.press('ArrowDown');
  await expect.poll(() => explainText(page)).toContain('∂L/∂V[2,1] = Σ_i A[i,2] · ∂L/∂O[i,1]');
  // "reads: V (values)" on ∂L/∂A: hover or focus highlights the cached V
  const chip = page.locator('figure[data-panel="d_weights"] .aps-chip');
  await expect(chip).toHaveText('V (values)');
  await chip.focus();
  await expect(page.locator('figure[data-panel="v"]')).toHaveClass(/is-read/);
  await expect(cell(page, 'v', 1, 1)).toHaveClass(/is-feed/);
  await expect(page.locator('figure[data-panel="d_scaled"] .aps-chip')).toHaveText('softmax (A)');
  await expect(page.locator('figure[data-panel="d_x"] .aps-chip')).toHaveText(['W_q', 'W_k', 'W_v']);
  await page.locator('figure[data-panel="d_x"] .aps-chip').first().hover();
  await expect(gridCell(page, 'W_q', 1, 1)).toHaveClass(/is-feed/);
});

test('backward opens on MSE against zeros: the softmax backward is not 0 (float64 check)', async ({ page }) => {
  await ready(page);
  await backward(page);
  await expect(page.locator('[data-key="upstream.mse"]')).toHaveAttribute('aria-checked', 'true');
  await expect(gridCell(page, 'target', 0, 0)).toHaveText('0');
  await expect(row(page, 'd_out', 0)).toHaveText(['0.3349', '0.1651']);
  await cell(page, 'd_out', 0, 0).hover();
  await expect.poll(() => explainText(page)).toContain('= 2·(0.6698 − 0) / 4');
  // float64: out = A (V = W_o = I), G = ∂L/∂A = 2A/4, ∂L/∂S′ = A ⊙ (G − rowsum(G ⊙ A))
  const a = 1 / (1 + Math.exp(-Math.SQRT1_2));
  const A = [a, 1 - a];
  const G = A.map((v) => v / 2);
  const s = G[0] * A[0] + G[1] * A[1];
  const want = A.map((v, k) => v * (G[k] - s));
  for (let k = 0; k < 2; k++) expect(Number(await cell(page, 'd_scaled', 0, k).getAttribute('title'))).toBeCloseTo(want[k], 6);
  expect(Math.abs(want[0])).toBeGreaterThan(0.03);
  for (const p of ['d_W_q', 'd_W_k']) await expect(panelCells(page, p).first()).not.toHaveText('0');
  await expect(page.locator('figure[data-panel="d_scaled"] .aps-panel-note')).not.toContainText('is 0 here');
});

test('loss sum on identity: ∂L/∂V is all ones, the softmax backward is 0, and the page says why (en, zh)', async ({ page }) => {
  await ready(page);
  await backward(page);
  await page.locator('[data-key="upstream.sum"]').click();
  await expect(panelCells(page, 'd_out')).toHaveText(['1', '1', '1', '1']);
  await expect(panelCells(page, 'd_V')).toHaveText(['1', '1', '1', '1']);
  await expect(panelCells(page, 'd_weights')).toHaveText(['1', '1', '1', '1']);
  await expect(panelCells(page, 'd_scaled')).toHaveText(['0', '0', '0', '0']);
  await expect(panelCells(page, 'd_W_q')).toHaveText(['0', '0', '0', '0']);
  await expect(page.locator('.aps-summary')).toContainText('L2');
  const note = (p) => page.locator(`figure[data-panel="${p}"] .aps-panel-note`);
  await expect(note('d_scaled')).toContainText('Every ∂L/∂S′ is 0 here, and so is every gradient from here back to W_q and W_k. Not because Q and K do not matter');
  await expect(note('d_scaled')).toContainText('(row 1: 1)');
  for (const p of ['d_scores', 'd_q', 'd_k', 'd_W_q', 'd_W_k']) await expect(note(p)).toContainText('0 because ∂L/∂S′ is 0');
  await page.locator('[data-key="lang.zh"]').click();
  await expect(note('d_scaled')).toContainText('这并不说明 Q 和 K 无关紧要');
  await expect(note('d_W_k')).toContainText('因为 ∂L/∂S′ 是 0');
  await page.locator('[data-key="lang.en"]').click();
  // a dOut that tells the keys apart: the note goes
  await page.locator('[data-key="upstream.d_out"]').click();
  await typeInto(page, 'd_out', 0, 1, '0');
  await expect(row(page, 'd_scaled', 0)).not.toHaveText(['0', '0']);
  await expect(note('d_scaled')).not.toContainText('is 0 here');
  await expect(note('d_W_q')).toHaveText('');
});

test('causal mask: masked positions of the softmax backward are exactly 0', async ({ page }) => {
  await ready(page);
  await page.locator('select[data-key="preset"]').selectOption('causal-4');
  await backward(page);
  for (const panel of ['d_scaled', 'd_scores']) {
    for (let i = 0; i < 4; i++) {
      for (let j = i + 1; j < 4; j++) {
        await expect(cell(page, panel, i, j)).toHaveText('0');
        await expect(cell(page, panel, i, j)).toHaveClass(/is-masked0/);
        expect(await cell(page, panel, i, j).getAttribute('title')).toBe('0');
      }
    }
  }
  await expect(cell(page, 'd_scaled', 3, 0)).not.toHaveText('0');
  await expect(page.locator('figure[data-panel="d_scaled"] .aps-panel-note')).toContainText('Masked positions are exactly 0');
  await cell(page, 'd_scaled', 0, 2).hover();
  await expect.poll(() => explainText(page)).toContain('Position (1, 3) is masked');
});

test('bad dOut and target input: the message beside the grid, the text kept', async ({ page }) => {
  await ready(page);
  await backward(page);
  await page.locator('[data-key="upstream.d_out"]').click();
  await typeInto(page, 'd_out', 0, 1, 'abc');
  const err = page.locator('[data-matrix="d_out"] .aps-field-error').first();
  await expect(err).toContainText("d_out: row 1, column 2: 'abc' is not a number");
  await expect(gridCell(page, 'd_out', 0, 1)).toHaveText('abc');
  await expect(gridCell(page, 'd_out', 0, 1)).toHaveClass(/is-bad/);
  await expect(page.locator('.aps-steps')).toBeHidden();
  await expect(page.locator('.aps-gradcheck')).toBeHidden();
  expect((await page.evaluate(() => window.attentionStepper.getState())).upstream.d_out).toBe('1 abc\n1 1');
  await typeInto(page, 'd_out', 0, 1, '2');
  await expect(err).toBeHidden();
  await expect(row(page, 'd_out', 0)).toHaveText(['1', '2']);
  // a wrong shape
  await page.locator('[data-key="d_out.col+"]').click();
  await expect(err).toContainText('d_out is [2, 3] but out is [2, 2]');
  await page.locator('[data-key="d_out.reset"]').click();
  await expect(err).toBeHidden();
  await expect(panelCells(page, 'd_out')).toHaveText(['1', '1', '1', '1']);
  // the paste box reads the core's formats
  await page.locator('[data-matrix="d_out"] summary').click();
  await page.locator('[data-key="d_out.paste"]').fill('[[0.5, 0], [0, -1]]');
  await page.locator('[data-key="d_out.paste-use"]').click();
  await expect(panelCells(page, 'd_out')).toHaveText(['0.5000', '0', '0', '−1']);
  // the mse target
  await page.locator('[data-key="upstream.mse"]').click();
  await typeInto(page, 'target', 1, 0, 'nan');
  await expect(page.locator('[data-matrix="target"] .aps-field-error').first()).toContainText('not a finite number');
  await expect(gridCell(page, 'target', 1, 0)).toHaveText('nan');
});

test('check this gradient: W_q on the identity example agrees', async ({ page }, testInfo) => {
  await identityDout(page);
  const box = page.locator('.aps-gradcheck');
  await expect(box.locator('[data-key="gc.eps"]')).toHaveValue('0.01');
  await box.locator('[data-key="gc.name"]').selectOption('W_q');
  await expect(box.locator('[data-key="gc.all"]')).toHaveText('Check all of W_q');
  await box.locator('[data-key="gc.all"]').click();
  const rows = box.locator('.aps-gc-table tbody tr');
  await expect(rows).toHaveCount(4);
  await expect(rows.locator('th')).toHaveText(['W_q[1,1]', 'W_q[1,2]', 'W_q[2,1]', 'W_q[2,2]']);
  await expect(rows.nth(0).locator('td').nth(0)).toHaveText('0.1564');
  await expect(rows.nth(0).locator('td').nth(1)).toHaveText('0.1564');
  for (const t of await box.locator('.aps-gc-rel').evaluateAll((tds) => tds.map((td) => Number(td.title)))) expect(t).toBeLessThan(1e-3);
  await expect(rows.locator('.aps-gc-result')).toHaveText(['✓ pass', '✓ pass', '✓ pass', '✓ pass']);
  await expect(box.locator('.aps-gc-summary')).toHaveText('All 4 entries agree.');
  await box.scrollIntoViewIfNeeded();
  await page.screenshot({ path: testInfo.outputPath('gradcheck.png') });
  // pick an entry by clicking a cell of an input's gradient panel, another eps
  await cell(page, 'd_x', 1, 0).click();
  await expect(box.locator('[data-key="gc.name"]')).toHaveValue('x');
  await expect(box.locator('[data-key="gc.row"]')).toHaveValue('2');
  await box.locator('[data-key="gc.eps"]').fill('0.001');
  await box.locator('[data-key="gc.one"]').click();
  await expect(rows).toHaveCount(1);
  await expect(rows.locator('th')).toHaveText('x[2,1]');
  await expect(box.locator('caption')).toContainText('eps = 0.001');
  await expect(rows.locator('td').nth(0)).toHaveText('0.1738');
  // a bad eps is refused beside the box
  await box.locator('[data-key="gc.eps"]').fill('0');
  await box.locator('[data-key="gc.one"]').click();
  await expect(box.locator('.aps-field-error')).toContainText('eps must be');
  // changing the input clears the table (never a stale check)
  await typeInto(page, 'd_out', 1, 1, '1');
  await expect(rows).toHaveCount(0);
});

test('step by step backward: next / previous, the cache each step reads', async ({ page }, testInfo) => {
  await ready(page);
  await backward(page);
  await page.locator('[data-key="view.step"]').click();
  const progress = page.locator('.aps-progress-text');
  await expect(progress).toHaveText('Step 1 of 9: the upstream gradient ∂L/∂out');
  await expect(page.locator('figure[data-panel="d_out"]')).toBeVisible();
  await expect(page.locator('figure[data-panel="d_x"]')).toBeHidden();
  await expect(page.locator('[data-key="step.prev"]')).toBeDisabled();
  await page.locator('[data-key="step.next"]').click();
  await expect(progress).toHaveText('Step 2 of 9: back through the output projection');
  await expect(page.locator('figure[data-panel="d_W_o"]')).toHaveClass(/is-current/);
  await expect(page.locator('figure[data-panel="d_out"]')).toHaveClass(/is-source/);
  await expect(page.locator('figure[data-panel="concat"]')).toBeVisible(); // read by ∂L/∂W_o
  await page.locator('[data-key="step.next"]').click();
  await page.locator('[data-key="step.next"]').click();
  await page.locator('[data-key="step.next"]').click();
  await expect(progress).toHaveText('Step 5 of 9: back through the softmax');
  await expect(page.locator('figure[data-panel="d_scaled"]')).toBeVisible();
  await expect(page.locator('figure[data-panel="weights"]')).toBeVisible();
  await expect(page.locator('figure[data-panel="d_weights"]')).toHaveClass(/is-source/);
  await expect(page.locator('figure[data-panel="q"]')).toBeHidden();
  await page.screenshot({ path: testInfo.outputPath('backward-step.png'), fullPage: true });
  // keyboard: N / P outside the fields
  await page.locator('[data-key="step.next"]').focus();
  await page.keyboard.press('n');
  await expect(progress).toHaveText('Step 6 of 9: back through the 1/√d_k scaling');
  await page.keyboard.press('p');
  await page.locator('[data-key="step.prev"]').click();
  await expect(progress).toHaveText('Step 4 of 9: back through A·V: ∂L/∂A and ∂L/∂V');
  await page.locator('.aps-dots button').last().click();
  await expect(progress).toHaveText('Step 9 of 9: back to the inputs: ∂L/∂x and the weights');
  await expect(page.locator('[data-key="step.next"]')).toBeDisabled();
  // qkv mode has no input step (Q, K, V are the inputs); without W_o, ∂L/∂concat = ∂L/∂out: 8 steps
  await page.locator('select[data-key="preset"]').selectOption('two-token');
  await expect(progress).toHaveText('Step 8 of 8: the heads put side by side: ∂L/∂Q, ∂L/∂K, ∂L/∂V');
  // back to forward: the forward steps again
  await page.locator('[data-key="direction.forward"]').click();
  await expect(progress).toHaveText(/^Step 1 of 7: queries, keys and values$/);
  await expect(page.locator('figure[data-panel="d_out"]')).toHaveCount(0);
});

test('Chinese: the backward mode speaks Chinese', async ({ page }, testInfo) => {
  await identityDout(page);
  await page.locator('[data-key="lang.zh"]').click();
  await expect(page.locator('[data-key="direction.backward"]')).toHaveText('反向（梯度）');
  await expect(page.locator('.aps-upstream legend')).toHaveText('上游梯度 ∂L/∂out');
  await expect(page.locator('figure[data-panel="d_weights"] .aps-panel-title')).toHaveText('∂L/∂A（权重）');
  await expect(page.locator('.aps-cache-head')).toHaveText('前向值（反向传播读取的缓存）');
  await expect(page.locator('figure[data-panel="d_scaled"] .aps-reads-label')).toHaveText('读取：');
  await expect(row(page, 'd_scaled', 0)).toHaveText(['0.2212', '−0.2212']);
  const box = page.locator('.aps-gradcheck');
  await expect(box.locator('.aps-gc-title')).toHaveText('检验这个梯度');
  await box.locator('[data-key="gc.name"]').selectOption('W_q');
  await box.locator('[data-key="gc.all"]').click();
  await expect(box.locator('.aps-gc-result').first()).toHaveText('✓ 通过');
  await cell(page, 'd_scaled', 1, 0).hover();
  await expect.poll(() => explainText(page)).toContain('softmax 把一整行耦合在一起');
  await page.screenshot({ path: testInfo.outputPath('backward-zh.png'), fullPage: true });
});

test('phone, 375 px: no horizontal overflow in backward mode', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 375, height: 800 });
  await identityDout(page);
  const box = page.locator('.aps-gradcheck');
  await box.locator('[data-key="gc.all"]').click();
  await expect(box.locator('.aps-gc-table tbody tr')).toHaveCount(4);
  await cell(page, 'd_scaled', 0, 0).click();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await page.locator('[data-key="view.step"]').click();
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
  await page.locator('[data-key="view.all"]').click();
  await page.screenshot({ path: testInfo.outputPath('backward-phone.png'), fullPage: true });
});

test('old states stay valid; the backward state survives setState', async ({ page }) => {
  await ready(page);
  const s = await page.evaluate(() => {
    const st = window.attentionStepper.getState();
    delete st.direction;
    delete st.upstream;
    window.attentionStepper.setState(st);
    return window.attentionStepper.getState();
  });
  expect(s.direction).toBe('forward');
  expect(s.upstream).toEqual({ kind: 'mse', d_out: '', target: '' });
  await page.evaluate(() => window.attentionStepper.setState({ ...window.attentionStepper.getState(), direction: 'backward', upstream: { kind: 'd_out', d_out: '[[1, 0], [0, 0]]', target: 7 }, focus: { panel: 'd_scaled', row: 0, col: 1 } }));
  await expect(row(page, 'd_scaled', 0)).toHaveText(['0.2212', '−0.2212']);
  await expect(gridCell(page, 'd_out', 0, 0)).toHaveText('1');
  await expect.poll(() => explainText(page)).toContain('∂L/∂S′[1,2]');
  const st = await page.evaluate(() => window.attentionStepper.getState());
  expect(st.upstream).toEqual({ kind: 'd_out', d_out: '1 0\n0 0', target: '' });
});

test('backward on the naive overflow: L = NaN is shown, not a crash', async ({ page }) => {
  await ready(page);
  await page.locator('select[data-key="preset"]').selectOption('overflow-naive');
  // the default loss (MSE) refuses a NaN output (below); L = Σ out shows it
  await page.locator('[data-key="direction.backward"]').click();
  await page.locator('[data-key="upstream.sum"]').click();
  await expect(page.locator('figure[data-panel="d_out"] .aps-panel-note')).toContainText('L = Σ out = NaN');
  await expect(row(page, 'd_scaled', 0).first()).toHaveText('NaN');
  await cell(page, 'd_scaled', 0, 0).hover();
  await expect.poll(() => explainText(page)).toContain('∂L/∂S′[1,1]');
  // MSE against a NaN output: the core refuses the NaN gradient, and says so beside the loss
  await page.locator('[data-key="upstream.mse"]').click();
  await expect(page.locator('.aps-upstream .aps-field-error').first()).toContainText('NaN');
  await expect(page.locator('.aps-steps')).toBeHidden();
});
