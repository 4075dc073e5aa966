// exercise.spec.mjs — the exercise mode on the playground page: each ready-made exercise of the
// tutorials with right and wrong answers (checked against the core's values within the tolerance),
// marks in text and colour, the hint sequence (formula → terms → value), later steps covered until
// solved, answers kept in localStorage with a reset, bad answers named, and an exercise made on the
// page (cells picked, tolerance set) carried by the permalink.
import { test, expect, explainText, BOOT_MS } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

const answerCell = (page, panel, r, c) => page.locator(`figure[data-panel="${panel}"] td[data-r="${r}"][data-c="${c}"]`);
const answer = (page, panel, r, c) => answerCell(page, panel, r, c).locator('input.aps-answer');

async function choose(page, id) {
  await page.locator('select[data-key="exercise"]').selectOption(id);
  await expect(page.locator('.aps-exercise')).toBeVisible();
}

/** Types answers: {"panel:r:c": text}. */
async function fill(page, answers) {
  for (const [k, v] of Object.entries(answers)) {
    const [p, r, c] = k.split(':');
    await answer(page, p, +r, +c).fill(v);
  }
}

/** The core's values of a forward panel of the current state (the page's own trace). */
function coreValues(page, panel, head = 0) {
  return page.evaluate(async ({ panel, head }) => {
    const { loadAttention } = await import('/attention.js');
    const { formatNumber } = await import('/common/format.js');
    const api = await loadAttention();
    const s = window.attentionStepper.getState();
    const keys = s.mode === 'x' ? ['x', 'W_q', 'W_k', 'W_v'] : ['Q', 'K', 'V'];
    const spec = { ...s.options };
    for (const k of keys) spec[k] = s.matrices[k];
    if (s.use_W_o) spec.W_o = s.matrices.W_o;
    const tr = api.trace(spec);
    const m = ['concat', 'out'].includes(panel) ? tr[panel] : tr.heads[head][panel];
    return m.map((row) => row.map((v) => formatNumber(v).replace('−∞', '-inf')));
  }, { panel, head });
}

async function check(page) {
  await page.locator('[data-key="ex.check"]').click();
}

test('identity softmax by hand: wrong, then the hints one by one, then right; later steps covered until solved', async ({ page }, testInfo) => {
  await ready(page);
  await choose(page, 'identity-softmax');
  await expect(page.locator('.aps-exercise-title')).toHaveText('The 2×2 identity softmax by hand');
  await expect(page.locator('.aps-exercise-tol')).toHaveText('An answer counts as right to 4 decimals.');
  // the four weights are questions: no number in the cell, the value neither painted nor in the DOM
  for (const [r, c] of [[0, 0], [0, 1], [1, 0], [1, 1]]) {
    await expect(answer(page, 'weights', r, c)).toBeVisible();
    await expect(answerCell(page, 'weights', r, c)).not.toHaveAttribute('title', /./);
  }
  expect(await page.locator('figure[data-panel="weights"]').evaluate((f) => f.textContent.includes('0.6698'))).toBe(false);
  // the Σ/max/H of the asked rows would tell: '?'; A·V, concat and ·W_o (equal to A here) are covered
  await expect(page.locator('figure[data-panel="weights"] .aps-stats td.is-derived').first()).toHaveText('?');
  for (const p of ['context', 'concat', 'out']) {
    await expect(page.locator(`figure[data-panel="${p}"]`)).toHaveClass(/is-covered/);
    await expect(page.locator(`figure[data-panel="${p}"] .aps-cover-note`)).toBeVisible();
    await expect(page.locator(`figure[data-panel="${p}"] .aps-mat-scroll`)).toBeHidden();
  }
  await expect(page.locator('figure[data-panel="scaled"]')).not.toHaveClass(/is-covered/);
  // answers: one wrong (0.35), one not a number, the others right
  await fill(page, { 'weights:0:0': '0.6698', 'weights:0:1': '0.35', 'weights:1:0': 'abc', 'weights:1:1': '0.6698' });
  await check(page);
  await expect(page.locator('.aps-exercise-result')).toHaveText('2 of 4 right. Not yet: softmax (A) [1,2], softmax (A) [2,1].');
  await expect(answerCell(page, 'weights', 0, 0)).toHaveClass(/is-right/);
  await expect(answerCell(page, 'weights', 0, 0).locator('.aps-answer-mark')).toHaveText('✓');
  await expect(answerCell(page, 'weights', 0, 1)).toHaveClass(/is-wrong/);
  await expect(answerCell(page, 'weights', 0, 1).locator('.aps-answer-mark')).toHaveText('✗');
  await expect(answer(page, 'weights', 0, 1)).toHaveAttribute('aria-invalid', 'true');
  await expect(answer(page, 'weights', 0, 1)).toHaveAttribute('aria-label', 'softmax (A) [1,2]: your answer, wrong');
  // colour too: right green, wrong red (and never colour alone: the ✓ / ✗ text)
  const bg = (r, c) => answerCell(page, 'weights', r, c).evaluate((td) => getComputedStyle(td).backgroundColor);
  expect(await bg(0, 0)).toBe('rgb(232, 245, 238)');
  expect(await bg(0, 1)).toBe('rgb(253, 240, 238)');
  // the not-a-number answer is named
  await answer(page, 'weights', 1, 0).focus();
  await expect(page.locator('.aps-explain .aps-verdict')).toHaveText('✗ softmax (A) [2,1]: “abc” is not a number. Type a number such as 0.6698, or −∞ (-inf) or NaN.');
  // the hints of a wrong cell: formula, then terms, then the value
  await page.mouse.move(0, 0);
  await answer(page, 'weights', 0, 1).focus();
  await expect(page.locator('.aps-explain .aps-verdict')).toHaveText('✗ Not right: 0.35. The hints show the cell’s arithmetic one step at a time.');
  await expect(page.locator('.aps-explain .aps-ex-formula')).toHaveCount(0);
  await page.locator('[data-key="ex.hint"]').click();
  await expect(page.locator('.aps-explain .aps-ex-formula')).toHaveAttribute('data-text', 'A[1,2] = e^(M[1,2] − max) / Σ_k e^(M[1,k] − max)');
  await expect(page.locator('.aps-explain .aps-ex-formula math mfrac')).toHaveCount(1);
  await expect(page.locator('.aps-explain .aps-ex-terms')).toHaveCount(0);
  await expect(page.locator('[data-key="ex.hint"]')).toHaveText('Hint 2: the terms');
  await page.locator('[data-key="ex.hint"]').click();
  await expect(page.locator('.aps-explain .aps-ex-terms').first()).toHaveAttribute('data-text', 'max = 0.7071');
  await expect(page.locator('.aps-explain .aps-ex-result')).toHaveCount(0);
  // the third hint from the keyboard: ? in the cell
  await answer(page, 'weights', 0, 1).focus();
  await page.keyboard.press('?');
  await expect(page.locator('.aps-explain .aps-ex-result')).toHaveAttribute('data-text', '= 0.3302');
  await expect(page.locator('[data-key="ex.hint"]')).toHaveCount(0);
  await page.screenshot({ path: testInfo.outputPath('exercise-hints.png'), fullPage: true });
  // correct the two: all right, the later steps come back, the explanation opens
  await answer(page, 'weights', 0, 1).fill('0.3302');
  await answer(page, 'weights', 1, 0).fill('0.3302');
  await answer(page, 'weights', 1, 0).press('Enter');
  await expect(page.locator('.aps-exercise-result')).toHaveText('All 4 right ✓ — the later steps are shown again.');
  for (const p of ['context', 'concat', 'out']) await expect(page.locator(`figure[data-panel="${p}"]`)).not.toHaveClass(/is-covered/);
  await expect(page.locator('figure[data-panel="out"] td[data-c]').first()).toHaveText('0.6698');
  await expect(page.locator('.aps-exercise-why')).toHaveAttribute('open', '');
  await expect(page.locator('.aps-exercise-why')).toContainText('0.669762');
});

test('identity softmax: the tutorials\' 0.6699 / 0.3301 is marked wrong, and the page says why (en, zh)', async ({ page }) => {
  await ready(page);
  await choose(page, 'identity-softmax');
  // the true value in float64: e^(1/√2) / (e^(1/√2) + 1) = 0.669762 → 0.6698, not 0.6699
  const exact = 1 / (1 + Math.exp(-Math.SQRT1_2));
  expect(exact.toFixed(4)).toBe('0.6698');
  await fill(page, { 'weights:0:0': '0.6699', 'weights:0:1': '0.3301', 'weights:1:0': '0.3301', 'weights:1:1': '0.6699' });
  await check(page);
  const result = page.locator('.aps-exercise-result');
  await expect(result).toContainText('0 of 4 right.');
  await expect(result).toContainText('0.6699 / 0.3301 is the tutorials’ value, and it is off in the fourth decimal');
  await expect(result).toContainText('0.669762, which rounds to 0.6698');
  await answer(page, 'weights', 0, 0).focus();
  await expect(page.locator('.aps-explain .aps-verdict')).toContainText('✗ Not right: 0.6699.');
  await expect(page.locator('.aps-explain .aps-verdict')).toContainText('it is off in the fourth decimal');
  // one digit off the slip is an ordinary wrong answer, without the slip's words
  await fill(page, { 'weights:0:0': '0.6698', 'weights:0:1': '0.3302', 'weights:1:0': '0.3302', 'weights:1:1': '0.6697' });
  await check(page);
  await expect(result).toHaveText('3 of 4 right. Not yet: softmax (A) [2,2].');
  await fill(page, { 'weights:1:1': '0.6699' });
  await page.locator('[data-key="lang.zh"]').click();
  await check(page);
  await expect(result).toContainText('0.6699 / 0.3301 是教程里的数，第四位小数错了');
  await expect(page.locator('.aps-exercise-tol')).toHaveText(/4/);
  await fill(page, { 'weights:1:1': '0.6698' });
  await check(page);
  await expect(result).toContainText('4 个全部正确');
  await expect(page.locator('.aps-exercise-why')).toContainText('这个练习按 4 位小数判分');
  await page.locator('[data-key="lang.en"]').click();
});

test('the masked row of the causal 4×4: −∞ typed as -inf, the row\'s softmax', async ({ page }) => {
  await ready(page);
  await choose(page, 'causal-row');
  const masked = await coreValues(page, 'masked');
  const weights = await coreValues(page, 'weights');
  expect(masked[2][3]).toBe('-inf');
  // questions: row 3 of M and of A; row 4 of A is shown, A·V on is covered
  await expect(page.locator('figure[data-panel="masked"] input.aps-answer')).toHaveCount(4);
  await expect(page.locator('figure[data-panel="weights"] input.aps-answer')).toHaveCount(4);
  await expect(page.locator('figure[data-panel="weights"] td[data-r="3"][data-c="0"]')).toHaveText(weights[3][0]);
  await expect(page.locator('figure[data-panel="context"]')).toHaveClass(/is-covered/);
  // wrong: the visible score where the mask adds −∞, and 0 instead of −∞
  const wrong = { 'masked:2:0': masked[2][0], 'masked:2:1': masked[2][1], 'masked:2:2': masked[2][2], 'masked:2:3': '0' };
  for (let c = 0; c < 4; c++) wrong[`weights:2:${c}`] = weights[2][c];
  await fill(page, wrong);
  await check(page);
  await expect(page.locator('.aps-exercise-result')).toHaveText('7 of 8 right. Not yet: + mask [3,4].');
  await answer(page, 'masked', 2, 3).focus();
  await page.keyboard.press('?');
  await expect(page.locator('.aps-explain .aps-ex-formula')).toHaveAttribute('data-text', 'M[3,4] = S′[3,4] + mask[3,4]');
  await page.keyboard.press('?');
  await expect.poll(() => explainText(page)).toContain('j = 4 > i + base = 3 + 0 = 3');
  // right: −∞ as the page prints it (true minus and ∞)
  await answer(page, 'masked', 2, 3).fill('−∞');
  await check(page);
  await expect(page.locator('.aps-exercise-result')).toContainText('All 8 right');
});

test('the j ≥ i + base mask: the empty row is 0, not NaN; answers kept across a reload, then reset', async ({ page }) => {
  await ready(page);
  await choose(page, 'mask-base');
  await expect(page.locator('.aps-warnings')).toBeHidden(); // "row 1 is empty" would answer it
  await expect(page.locator('figure[data-panel="weights"] tbody tr').first()).not.toHaveClass(/is-empty-row/);
  const masked = await coreValues(page, 'masked');
  expect(masked[0]).toEqual(['-inf', '-inf', '-inf']);
  const all = {};
  masked.forEach((row, r) => row.forEach((v, c) => { all[`masked:${r}:${c}`] = v; }));
  // the classic mistake: the empty row's softmax as NaN (0/0)
  Object.assign(all, { 'weights:0:0': 'NaN', 'weights:0:1': 'NaN', 'weights:0:2': 'NaN' });
  await fill(page, all);
  await check(page);
  await expect(page.locator('.aps-exercise-result')).toHaveText('9 of 12 right. Not yet: softmax (A) [1,1], softmax (A) [1,2], softmax (A) [1,3].');
  // the answers and marks survive a reload (localStorage, per exercise)
  const key = 'attention-playground.exercise.mask-base';
  expect(JSON.parse(await page.evaluate((k) => localStorage.getItem(k), key)).answers['weights:0:0']).toBe('NaN');
  const url = await page.evaluate(async () => {
    const { encodeState } = await import('/common/permalink.js');
    return location.pathname + encodeState(window.attentionStepper.getState());
  });
  await page.goto(url);
  await expect(answer(page, 'weights', 0, 0)).toHaveValue('NaN', { timeout: BOOT_MS });
  await expect(answerCell(page, 'weights', 0, 0)).toHaveClass(/is-wrong/);
  await expect(page.locator('.aps-exercise-result')).toContainText('9 of 12 right');
  await answer(page, 'weights', 0, 0).focus();
  for (let k = 0; k < 3; k++) await page.keyboard.press('?');
  await expect.poll(() => explainText(page)).toContain('Every key of row 1 is masked');
  for (let c = 0; c < 3; c++) await answer(page, 'weights', 0, c).fill('0');
  await check(page);
  await expect(page.locator('.aps-exercise-result')).toContainText('All 12 right');
  // reset: the answers go, from the page and from localStorage
  await page.locator('[data-key="ex.reset"]').click();
  await expect(answer(page, 'weights', 0, 0)).toHaveValue('');
  await expect(page.locator('.aps-exercise-result')).toHaveText('');
  expect(await page.evaluate((k) => localStorage.getItem(k), key)).toBeNull();
  await expect(page.locator('figure[data-panel="context"]')).toHaveClass(/is-covered/);
});

test('the naive softmax at 1000: the stable answer is wrong, NaN is right; show the answers', async ({ page }) => {
  await ready(page);
  await choose(page, 'naive-1000');
  await expect(page.locator('.aps-warnings')).toBeHidden();
  await fill(page, { 'weights:0:0': '0.7311', 'weights:0:1': '0.2689' });
  await check(page);
  await expect(page.locator('.aps-exercise-result')).toContainText('0 of 2 right');
  await answer(page, 'weights', 0, 0).focus();
  await page.locator('[data-key="ex.hint"]').click();
  await expect(page.locator('.aps-explain .aps-ex-formula')).toHaveAttribute('data-text', /^A\[1,1\] = e\^M\[1,1\] \/ Σ_k e\^M\[1,k\]/);
  await page.locator('[data-key="ex.hint"]').click();
  await expect.poll(() => explainText(page)).toContain('= ∞ / (∞ + ∞)');
  await page.locator('[data-key="ex.hint"]').click();
  await expect(page.locator('.aps-explain .aps-ex-result')).toHaveAttribute('data-text', '= NaN');
  await fill(page, { 'weights:0:0': 'nan', 'weights:0:1': 'NaN' });
  await check(page);
  await expect(page.locator('.aps-exercise-result')).toContainText('All 2 right');
  // show the answers (another learner): the values in place of the questions, steps uncovered
  await page.locator('[data-key="ex.reset"]').click();
  await page.locator('[data-key="ex.reveal"]').click();
  await expect(page.locator('.aps-exercise-result')).toHaveText('The answers are shown. “Reset” to try again.');
  await expect(page.locator('figure[data-panel="weights"] input.aps-answer')).toHaveCount(0);
  await expect(page.locator('figure[data-panel="weights"] td.is-shown').first()).toHaveText('NaN');
  await expect(page.locator('figure[data-panel="context"]')).not.toHaveClass(/is-covered/);
});

test('one backward cell through the softmax: ∂L/∂S′[1,1] = 0.2212', async ({ page }) => {
  await ready(page);
  await choose(page, 'softmax-backward');
  await expect(page.locator('figure[data-panel="d_out"] td[data-c]')).toHaveText(['1', '0', '0', '0']);
  await expect(answer(page, 'd_scaled', 0, 0)).toBeVisible();
  await expect(page.locator('figure[data-panel="d_scaled"] td[data-r="0"][data-c="1"]')).toHaveText('−0.2212'); // only [1,1] is asked
  // later gradients would give it away (∂L/∂S = ∂L/∂S′/√2): covered; the forward cache is not
  await expect(page.locator('figure[data-panel="d_scores"]')).toHaveClass(/is-covered/);
  await expect(page.locator('figure[data-panel="d_weights"]')).not.toHaveClass(/is-covered/);
  await expect(page.locator('figure[data-panel="weights"]')).not.toHaveClass(/is-covered/);
  // forgetting the Σ_k term: A·G = 0.6698
  await fill(page, { 'd_scaled:0:0': '0.6698' });
  await answer(page, 'd_scaled', 0, 0).press('Enter');
  await expect(answerCell(page, 'd_scaled', 0, 0)).toHaveClass(/is-wrong/);
  await page.keyboard.press('?');
  await page.keyboard.press('?');
  await expect.poll(() => explainText(page)).toContain('Σ_k G[1,k]·A[1,k] = 1·0.6698 + 0·0.3302 = 0.6698');
  await fill(page, { 'd_scaled:0:0': '0.2212' });
  await answer(page, 'd_scaled', 0, 0).press('Enter');
  await expect(page.locator('.aps-exercise-result')).toContainText('All 1 right');
  await expect(page.locator('figure[data-panel="d_scores"]')).not.toHaveClass(/is-covered/);
});

test('an exercise made on the page: pick cells and a step, set the tolerance, carried by the permalink', async ({ page, context }) => {
  await ready(page);
  await page.locator('select[data-key="preset"]').selectOption('two-token');
  await page.locator('select[data-key="exercise"]').selectOption('custom');
  await expect(page.locator('.aps-exercise-task')).toContainText('Choose the questions');
  // a cell by click, another by keyboard (Enter on a focused cell), a whole step by its button
  await page.locator('figure[data-panel="scores"] td[data-r="1"][data-c="0"]').click();
  await page.locator('figure[data-panel="scores"] td[data-r="1"][data-c="1"]').focus();
  await page.keyboard.press('Enter');
  await expect(page.locator('figure[data-panel="scores"] td.is-asked')).toHaveCount(2);
  await page.locator('[data-key="ask.context"]').click();
  await expect(page.locator('[data-key="ask.context"]')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.locator('figure[data-panel="context"] td.is-asked')).toHaveCount(4);
  await expect(page.locator('.aps-exercise')).toContainText('6 cells asked.');
  // clicking an asked cell again takes it back
  await page.locator('figure[data-panel="scores"] td[data-r="1"][data-c="1"]').click();
  await expect(page.locator('.aps-exercise')).toContainText('5 cells asked.');
  // tolerance: 2 decimals, no relative error
  await page.locator('[data-key="ex.decimals"]').fill('2');
  await page.locator('[data-key="ex.decimals"]').dispatchEvent('change');
  await page.locator('[data-key="ex.rel"]').fill('');
  await page.locator('[data-key="ex.rel"]').dispatchEvent('change');
  await expect(page.locator('.aps-exercise-tol').first()).toHaveText('An answer counts as right to 2 decimals.');
  const state = await page.evaluate(() => window.attentionStepper.getState());
  expect(state.exercise.id).toMatch(/^custom-[0-9a-f]{8}$/);
  expect(state.exercise.tol).toEqual({ decimals: 2 });
  expect([...state.exercise.ask].sort((a, b) => a.panel.localeCompare(b.panel))).toEqual([{ panel: 'context', cells: 'all' }, { panel: 'scores', cells: [[1, 0]] }]);
  // the link opens it for a learner: questions, covered steps
  const url = await page.evaluate(async () => {
    const { encodeState } = await import('/common/permalink.js');
    return location.pathname + encodeState(window.attentionStepper.getState());
  });
  const learner = await context.newPage();
  await learner.goto(url);
  await expect(learner.locator('.aps-exercise-title')).toHaveText('Exercise', { timeout: BOOT_MS });
  await expect(learner.locator('figure[data-panel="scores"] input.aps-answer')).toHaveCount(1);
  await expect(learner.locator('figure[data-panel="context"] input.aps-answer')).toHaveCount(4);
  await expect(learner.locator('figure[data-panel="concat"]')).toHaveClass(/is-covered/);
  // S[2,1] = q2·k1 = [0,1]·[1,0] = 0; 2 decimals: 0.004 counts, 0.006 does not
  await learner.locator('figure[data-panel="scores"] input.aps-answer').fill('0.004');
  await learner.locator('[data-key="ex.check"]').click();
  await expect(learner.locator('figure[data-panel="scores"] td.is-right')).toHaveCount(1);
  await learner.locator('figure[data-panel="scores"] input.aps-answer').fill('0.006');
  await learner.locator('[data-key="ex.check"]').click();
  await expect(learner.locator('figure[data-panel="scores"] td.is-wrong')).toHaveCount(1);
  await learner.close();
});

test('zh: the exercise in Chinese', async ({ page }) => {
  await ready(page);
  await page.locator('[data-key="lang.zh"]').click();
  await choose(page, 'naive-1000');
  await expect(page.locator('.aps-exercise-title')).toHaveText('在 1000 附近的朴素 softmax：什么溢出了');
  await expect(page.locator('.aps-exercise-why')).toContainText('溢出');
  await expect(page.locator('[data-key="ex.check"]')).toHaveText('检查答案');
  await page.locator('[data-key="lang.en"]').click();
});

test('during an exercise the export offers the inputs only; once solved, every matrix again', async ({ page }) => {
  await ready(page);
  await choose(page, 'identity-softmax');
  const options = () => page.locator('select.apx-matrix option').evaluateAll((os) => os.map((o) => o.value));
  await expect.poll(options).toEqual(['inputs.x', 'inputs.W_q', 'inputs.W_k', 'inputs.W_v', 'inputs.W_o']);
  await fill(page, { 'weights:0:0': '0.6698', 'weights:0:1': '0.3302', 'weights:1:0': '0.3302', 'weights:1:1': '0.6698' });
  await check(page);
  await expect.poll(options).toContain('heads.0.weights');
  await page.locator('[data-key="ex.reset"]').click();
  await expect.poll(options).not.toContain('heads.0.weights');
});

test('on a phone the bar points to the questions far below, and its link takes the keyboard there (en, 中文, step view)', async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 740 });
  await ready(page);
  await choose(page, 'causal-row');
  const go = page.getByRole('button', { name: 'Your 8 cells to answer are in step 4 (adding the mask) ↓' });
  await expect(go).toBeVisible();
  const first = answer(page, 'masked', 2, 0);
  await expect(first).not.toBeInViewport(); // far below the fold
  await go.click();
  await expect(first).toBeFocused();
  await expect(first).toBeInViewport();
  // in the step-by-step view the link shows that step first
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.getByRole('radio', { name: 'Step by step' }).click();
  await expect(page.locator('.aps-progress-text')).toHaveText('Step 1 of 7: queries, keys and values');
  await go.click();
  await expect(page.locator('.aps-progress-text')).toHaveText('Step 4 of 7: adding the mask');
  await expect(first).toBeFocused();
  // solved: the pointer goes away
  await page.getByRole('radio', { name: 'All steps' }).click();
  const masked = await coreValues(page, 'masked');
  const weights = await coreValues(page, 'weights');
  const right = {};
  for (let c = 0; c < 4; c++) { right[`masked:2:${c}`] = masked[2][c]; right[`weights:2:${c}`] = weights[2][c]; }
  await fill(page, right);
  await check(page);
  await expect(page.locator('.aps-exercise-result')).toContainText('All 8 right');
  await expect(go).toBeHidden();
  // 中文
  await page.getByRole('button', { name: 'Reset', exact: true }).click();
  await page.locator('[data-key="lang.zh"]').click();
  await expect(page.getByRole('button', { name: /^你要填写的 8 个单元格在第 4 步（.+）↓$/ })).toBeVisible();
});
