// stepper.spec.mjs — the Attention Stepper's features: typing, options, bad input, keyboard,
// cell arithmetic, step mode, paste, performance.
import { test, expect, panelCells, settled, explainText } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

const gridCell = (page, m, r, c) => page.locator(`[data-matrix="${m}"] td[data-r="${r}"][data-c="${c}"]`);
const row = (page, panel, i) => page.locator(`figure[data-panel="${panel}"] table tbody tr`).nth(i).locator('td[data-c]');
const preset = (page, id) => page.locator('select[data-key="preset"]').selectOption(id);
const explainBox = (page) => page.locator('.aps-explain');

async function typeInto(page, m, r, c, text) {
  await gridCell(page, m, r, c).click();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

test('typing the identity example cell by cell gives 0.6698 / 0.3302', async ({ page }) => {
  await ready(page);
  await preset(page, 'two-token'); // Q = I, K = [[1,0],[1,1]], V = [[1,2],[3,4]]
  await expect(row(page, 'weights', 0)).toHaveText(['0.5000', '0.5000']);
  await typeInto(page, 'K', 1, 0, '0');
  await typeInto(page, 'V', 0, 1, '0');
  await typeInto(page, 'V', 1, 0, '0');
  await typeInto(page, 'V', 1, 1, '1');
  await expect(page.locator('select[data-key="preset"]')).toHaveValue('custom');
  await expect(panelCells(page, 'weights')).toHaveText(['0.6698', '0.3302', '0.3302', '0.6698']);
  await expect(panelCells(page, 'context')).toHaveText(['0.6698', '0.3302', '0.3302', '0.6698']);
  expect((await page.evaluate(() => window.attentionStepper.getState())).matrices.K).toBe('1 0\n0 1');
});

test('each option changes what it should', async ({ page }) => {
  await ready(page);
  // causal on: the first query sees only itself
  await page.locator('input[data-key="causal"]').check();
  await expect(row(page, 'masked', 0)).toHaveText(['0.7071', '−∞']);
  await expect(row(page, 'masked', 0).nth(1)).toHaveClass(/is-neginf/);
  await expect(row(page, 'weights', 0)).toHaveText(['1', '0']);
  await expect(row(page, 'weights', 1)).toHaveText(['0.3302', '0.6698']);
  // inclusive: the first row is empty (all −∞, weights 0, Σ 0) and a warning says so
  await page.locator('[data-key="mask.inclusive"]').click();
  await expect(row(page, 'masked', 0)).toHaveText(['−∞', '−∞']);
  await expect(row(page, 'weights', 0)).toHaveText(['0', '0']);
  await expect(page.locator('[data-panel="weights"] td.is-sum').first()).toHaveText('0.0000');
  await expect(page.locator('.aps-warnings li')).toContainText([/hides every key/]);
  await page.locator('[data-key="mask.strict"]').click();
  await page.locator('input[data-key="causal"]').uncheck();
  await expect(row(page, 'weights', 0)).toHaveText(['0.6698', '0.3302']);
  // scaling off: S' = S, softmax([1, 0])
  await page.locator('input[data-key="scale"]').uncheck();
  await expect(row(page, 'scaled', 0)).toHaveText(['1', '0']);
  await expect(row(page, 'weights', 0)).toHaveText(['0.7311', '0.2689']);
  await page.locator('input[data-key="scale"]').check();
  await expect(row(page, 'scaled', 0)).toHaveText(['0.7071', '0']);
  // softmax naive vs stable around 1000
  await preset(page, 'overflow-naive');
  await expect(row(page, 'weights', 0)).toHaveText(['NaN', 'NaN']);
  await expect(row(page, 'weights', 0).first()).toHaveClass(/is-nan/);
  await expect(page.locator('.aps-warnings li').first()).toContainText(/overflow/);
  await page.locator('[data-key="softmax.stable"]').click();
  await expect(row(page, 'weights', 0)).toHaveText(['0.7311', '0.2689']);
  await expect(page.locator('.aps-warnings li')).toHaveCount(0);
  // base: the KV-cache step has 3 queries over 5 keys; base 1 gives 4 queries
  await preset(page, 'kv-cache');
  await expect(page.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr')).toHaveCount(3);
  await expect(row(page, 'masked', 0).nth(3)).toHaveText('−∞');
  await expect(row(page, 'masked', 0).nth(2)).not.toHaveText('−∞');
  await page.locator('input[data-key="base"]').fill('1');
  await expect(page.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr')).toHaveCount(4);
  await expect(row(page, 'masked', 0).nth(2)).toHaveText('−∞');
  // n_head: two heads of d_k = 2, a head selector, concat of both heads' A·V
  await preset(page, 'causal-4');
  await expect(page.locator('figure[data-panel="q"] .aps-shape')).toHaveText('T × d_k = 4 × 4');
  await page.locator('input[data-key="n_head"]').fill('2');
  await expect(page.locator('figure[data-panel="q"] .aps-shape')).toHaveText('T × d_k = 4 × 2');
  await expect(page.locator('.aps-heads button[data-key^="head."]')).toHaveCount(2);
  await expect(page.locator('figure[data-panel="concat"] .aps-shape')).toHaveText('T × n_head·d_v = 4 × 4');
  await settled(page);
  const head1 = await row(page, 'weights', 3).allTextContents();
  await page.locator('.aps-heads [data-key="head.1"]').click();
  await expect(page.locator('[data-panel="weights"] .aps-panel-title')).toContainText('head 2');
  await expect.poll(() => row(page, 'weights', 3).allTextContents()).not.toEqual(head1);
  // n_head 3 does not divide 4: the message is beside n_head
  await page.locator('input[data-key="n_head"]').fill('3');
  await expect(page.locator('[data-field="n_head"] .aps-field-error')).toContainText('n_head must divide');
  await expect(page.locator('.aps-steps')).toBeHidden();
});

test('bad input: every kind gets its message beside the matrix, keeps the input, hides stale numbers', async ({ page }, testInfo) => {
  await ready(page);
  const xErr = page.locator('[data-matrix="x"] .aps-field-error').first();
  const steps = page.locator('.aps-steps');
  // a non-number
  await typeInto(page, 'x', 1, 0, 'abc');
  await expect(xErr).toContainText("row 2, column 1: 'abc' is not a number");
  await expect(gridCell(page, 'x', 1, 0)).toHaveText('abc');
  await expect(gridCell(page, 'x', 1, 0)).toHaveClass(/is-bad/);
  await expect(gridCell(page, 'x', 1, 0)).toHaveAttribute('aria-invalid', 'true');
  await expect(steps).toBeHidden();
  await expect(page.locator('.aps-stale')).toBeVisible();
  await expect(page.locator('.aps-status')).toHaveText('Waiting for valid input');
  await page.screenshot({ path: testInfo.outputPath('error.png'), fullPage: true });
  // NaN and ±Inf
  await typeInto(page, 'x', 1, 0, 'nan');
  await expect(xErr).toContainText('not a finite number');
  await typeInto(page, 'x', 1, 0, '-inf');
  await expect(xErr).toContainText('not a finite number');
  await expect(gridCell(page, 'x', 1, 0)).toHaveText('-inf');
  // an empty cell (Delete)
  await gridCell(page, 'x', 1, 0).click();
  await page.keyboard.press('Delete');
  await expect(xErr).toContainText('empty cell');
  await typeInto(page, 'x', 1, 0, '0');
  await expect(xErr).toBeHidden();
  await expect(steps).toBeVisible();
  await expect(panelCells(page, 'weights').first()).toHaveText('0.6698');
  // mismatched shapes: W_k gets a third column
  await page.locator('[data-key="W_k.col+"]').click();
  const wkErr = page.locator('[data-matrix="W_k"] .aps-field-error').first();
  await expect(wkErr).toContainText('W_k has 3 columns but W_q has 2');
  await expect(steps).toBeHidden();
  await page.locator('[data-key="W_k.col-"]').click();
  await expect(wkErr).toBeHidden();
  await expect(steps).toBeVisible();
  // a ragged row (from a state, e.g. a permalink)
  await page.evaluate(() => { const s = window.attentionStepper.getState(); s.matrices.x = '1 0\n0'; window.attentionStepper.setState(s); });
  await expect(xErr).toContainText('row 2 has 1 numbers but row 1 has 2');
  await expect(page.locator('[data-matrix="x"] tbody tr').nth(1)).toHaveClass(/is-bad/);
  await expect(steps).toBeHidden();
  // beyond the page's limit of 64 × 64
  await page.evaluate(() => { const s = window.attentionStepper.getState(); s.matrices.x = Array.from({ length: 65 }, () => '1 0').join('\n'); window.attentionStepper.setState(s); });
  await expect(xErr).toContainText('x is 65 × 2; this page allows at most 64 × 64');
  await expect(steps).toBeHidden();
  // the paste box: a parse error with row and column, the grid unchanged, the text kept
  await page.evaluate(() => { const s = window.attentionStepper.getState(); s.matrices.x = '1 0\n0 1'; window.attentionStepper.setState(s); });
  await page.locator('[data-matrix="W_q"] .aps-paste summary').click();
  const area = page.locator('[data-key="W_q.paste"]');
  await area.fill('1 2\n3 x');
  await page.locator('[data-key="W_q.paste-use"]').click();
  await expect(page.locator('[data-matrix="W_q"] .aps-paste .aps-field-error')).toContainText("row 2, column 2: 'x' is not a number");
  await expect(area).toHaveValue('1 2\n3 x');
  await expect(gridCell(page, 'W_q', 0, 0)).toHaveText('1');
  const big = Array.from({ length: 70 }, () => '1 2').join('\n');
  await area.fill(big);
  await page.locator('[data-key="W_q.paste-use"]').click();
  await expect(page.locator('[data-matrix="W_q"] .aps-paste .aps-field-error')).toContainText('70 × 2');
  // a bad option value
  await page.locator('input[data-key="n_head"]').fill('0');
  await expect(page.locator('[data-field="n_head"] .aps-field-error')).toContainText('whole number from 1 to 16');
  await expect(steps).toBeHidden();
  await page.locator('input[data-key="n_head"]').fill('1');
  await expect(steps).toBeVisible();
});

test('paste box and grid paste read NumPy, TSV, JSON and "1 0; 0 1" with the C++ parser', async ({ page }) => {
  await ready(page);
  const area = page.locator('[data-key="x.paste"]');
  const use = page.locator('[data-key="x.paste-use"]');
  for (const text of ['array([[1., 0.],\n       [0., 1.],\n       [1., 1.]], dtype=float32)', '[[1. 0.]\n [0. 1.]\n [1. 1.]]', '1\t0\n0\t1\n1\t1', '[[1, 0], [0, 1], [1, 1]]', '1 0; 0 1; 1 1']) {
    await page.locator('[data-matrix="x"] .aps-paste summary').click(); // (Use this closed it)
    await area.fill(text);
    await use.click();
    await expect(area, text).toBeHidden();
    await expect(page.locator('[data-matrix="x"] .aps-shape'), text).toHaveText('3 × 2');
    await expect(page.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr'), text).toHaveCount(3);
    await page.locator('[data-matrix="x"] [data-key="x.row-"]').click();
  }
  // a multi-cell block pasted into a grid cell fills the grid from there, growing it
  await gridCell(page, 'x', 0, 0).click();
  await page.evaluate(() => {
    const dt = new DataTransfer();
    dt.setData('text/plain', '5\t6\n7\t8\n9\t10');
    document.activeElement.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
  });
  await expect(page.locator('[data-matrix="x"] .aps-shape')).toHaveText('3 × 2');
  await expect(gridCell(page, 'x', 2, 1)).toHaveText('10');
  expect((await page.evaluate(() => window.attentionStepper.getState())).matrices.x).toBe('5 6\n7 8\n9 10');
});

test('paste box reads NumPy and PyTorch code and prints, closes after Use this, names the character at fault', async ({ page }) => {
  await ready(page);
  const x = page.getByRole('region', { name: 'Matrix x' });
  const open = () => x.getByText('Paste a matrix').click();
  const area = x.getByLabel(/Text for x/);
  const use = x.getByRole('button', { name: 'Use this' });
  const cases = [
    ['np.array([[1., 2.],\n          [3., 4.],\n          [5., 6.]])', ['1', '2', '3', '4', '5', '6']],
    ['torch.tensor([[1., 0.], [0., 1.], [2., 2.]], dtype=torch.float32, requires_grad=True)', ['1', '0', '0', '1', '2', '2']],
    ['tensor([[ 0.1000, -0.2000],\n        [ 0.3000,  0.4000],\n        [-1.5000,  2.0000]], grad_fn=<MmBackward0>)', ['0.1', '-0.2', '0.3', '0.4', '-1.5', '2']],
  ];
  for (const [text, cells] of cases) {
    await open();
    await area.fill(text);
    await use.click();
    await expect(area, text).toBeHidden(); // the box closed
    await expect(x.locator('.aps-shape'), text).toHaveText('3 × 2');
    await expect(x.getByRole('gridcell'), text).toHaveText(cells);
    await expect(page.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr'), text).toHaveCount(3);
  }
  // the keyboard is back on the grid it filled
  await expect(x.getByRole('gridcell', { name: 'x row 1, column 1' })).toBeFocused();
  // bad code: the message names the character, the box stays open with the text, the grid unchanged
  await open();
  await area.fill('tensor([[1., 0.]], 7)');
  await use.click();
  await expect(x.locator('.aps-paste .aps-field-error')).toContainText("unexpected text after the closing ']' at character 20: '7'");
  await expect(area).toHaveValue('tensor([[1., 0.]], 7)');
  await expect(x.getByRole('gridcell').first()).toHaveText('0.1');
  await area.fill('tensor([[0.1, ..., 0.9]])');
  await use.click();
  await expect(x.locator('.aps-paste .aps-field-error')).toContainText("row 1, column 2: the print left numbers out ('...')");
  // 中文: the same box, the same reader
  await page.getByRole('button', { name: '中文' }).click();
  const xz = page.getByRole('region', { name: '矩阵 x' });
  await xz.getByText('粘贴矩阵').click();
  await xz.getByLabel(/x 的文本/).fill('np.array([[7., 8.]])');
  await xz.getByRole('button', { name: '使用' }).click();
  await expect(xz.getByLabel(/x 的文本/)).toBeHidden();
  await expect(xz.getByRole('gridcell')).toHaveText(['7', '8']);
});

test('grid keyboard: arrows, typing replaces, Enter moves down, F2 edits, Escape cancels, Tab, resize keeps values', async ({ page }) => {
  await ready(page);
  await gridCell(page, 'x', 0, 0).click();
  await expect(gridCell(page, 'x', 0, 0)).toBeFocused();
  await page.keyboard.press('ArrowRight');
  await expect(gridCell(page, 'x', 0, 1)).toBeFocused();
  await expect(gridCell(page, 'x', 0, 1)).toHaveAttribute('tabindex', '0');
  await expect(gridCell(page, 'x', 0, 0)).toHaveAttribute('tabindex', '-1');
  await page.keyboard.type('2');                     // typing replaces
  await page.keyboard.press('Enter');                // commits and moves down
  await expect(gridCell(page, 'x', 0, 1)).toHaveText('2');
  await expect(gridCell(page, 'x', 1, 1)).toBeFocused();
  await page.keyboard.press('F2');                   // edit the existing value
  await page.keyboard.type('99');
  await page.keyboard.press('Escape');               // cancel
  await expect(gridCell(page, 'x', 1, 1)).toHaveText('1');
  await expect(gridCell(page, 'x', 1, 1)).toBeFocused();
  await page.keyboard.press('Shift+Tab');
  await expect(gridCell(page, 'x', 1, 0)).toBeFocused();
  await page.keyboard.press('ArrowUp');
  await expect(gridCell(page, 'x', 0, 0)).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(gridCell(page, 'x', 0, 1)).toBeFocused();
  await page.keyboard.press('Enter');                // Enter on a cell edits it
  await expect(page.locator('[data-matrix="x"] input.aps-cell-input')).toBeFocused();
  await page.keyboard.press('Backspace');
  await page.keyboard.type('3');
  await page.keyboard.press('Tab');                  // commits and moves right (wraps to the next row)
  await expect(gridCell(page, 'x', 0, 1)).toHaveText('3');
  await expect(gridCell(page, 'x', 1, 0)).toBeFocused();
  // the new value is used (x = [[1, 3], [0, 1]])
  await expect(page.locator('[data-panel="scores"] td[data-c]').first()).toHaveText('10');
  // resize: a row and a column are added with zeros, removing them keeps the rest
  await page.locator('[data-key="x.row+"]').click();
  await page.locator('[data-key="x.col+"]').click();
  await expect(page.locator('[data-matrix="x"] .aps-shape')).toHaveText('3 × 3');
  await expect(gridCell(page, 'x', 2, 2)).toHaveText('0');
  await expect(page.locator('[data-key="x.row+"]')).toHaveAttribute('aria-label', 'Add a row to x');
  await page.locator('[data-key="x.col-"]').click();
  await expect(page.locator('[data-matrix="x"] .aps-shape')).toHaveText('3 × 2');
  await expect(gridCell(page, 'x', 0, 1)).toHaveText('3');
});

test('cell arithmetic: focus or hover a cell, see its terms; the cells that feed it light up', async ({ page }, testInfo) => {
  await ready(page);
  await expect.poll(() => explainText(page)).toContain('Point at or focus');
  // S[1,1] = q1·k1 = 1·1 + 0·0
  await page.locator('[data-panel="scores"] td[data-r="0"][data-c="0"]').focus();
  await expect.poll(() => explainText(page)).toContain('S[1,1] = q1 · k1');
  await expect.poll(() => explainText(page)).toContain('= 1·1 + 0·0');
  await expect(explainBox(page).locator('.aps-ex-result')).toHaveAttribute('data-text', '= 1');
  await expect(page.locator('[data-panel="q"] tbody tr').nth(0).locator('td.is-feed')).toHaveCount(2);
  await expect(page.locator('[data-panel="k"] tbody tr').nth(0).locator('td.is-feed')).toHaveCount(2);
  await expect(page.locator('[data-panel="k"] tbody tr').nth(1).locator('td.is-feed')).toHaveCount(0);
  // arrow keys move within the panel (roving tabindex)
  await page.keyboard.press('ArrowRight');
  await expect(page.locator('[data-panel="scores"] td[data-r="0"][data-c="1"]')).toBeFocused();
  await expect.poll(() => explainText(page)).toContain('S[1,2]');
  // the division by √d_k
  await page.locator('[data-panel="scaled"] td[data-r="0"][data-c="0"]').focus();
  await expect.poll(() => explainText(page)).toContain('S′[1,1] = S[1,1] / √d_k = S[1,1] / √2');
  await expect.poll(() => explainText(page)).toContain('= 1 × 0.7071');
  await expect(explainBox(page).locator('.aps-ex-result')).toHaveAttribute('data-text', '= 0.7071');
  // softmax: e^(x − max) over the row sum
  await page.locator('[data-panel="weights"] td[data-r="0"][data-c="0"]').hover();
  await expect.poll(() => explainText(page)).toContain('max = 0.7071');
  await expect.poll(() => explainText(page)).toContain('= 1 / (1 + 0.4931)');
  await expect(explainBox(page).locator('.aps-ex-result')).toHaveAttribute('data-text', '= 0.6698');
  await expect(page.locator('[data-panel="masked"] tbody tr').nth(0).locator('td.is-feed')).toHaveCount(2);
  // from here on the keyboard: no pointer left over a cell (a hover is explained before a focus,
  // and focusing a cell scrolls the page under the pointer)
  await page.mouse.move(0, 0);
  // an output cell: the weighted sum of the rows of V
  await page.locator('[data-panel="context"] td[data-r="1"][data-c="0"]').focus();
  await expect.poll(() => explainText(page)).toContain('O[2,1] = Σ_k A[2,k] · V[k,1]');
  await expect.poll(() => explainText(page)).toContain('= 0.3302·1 + 0.6698·0');
  await expect(page.locator('[data-panel="v"] td.is-feed')).toHaveCount(2);
  // Q from x and W_q: the x row and the W_q column are highlighted in the input grids
  await page.locator('[data-panel="q"] td[data-r="1"][data-c="0"]').focus();
  await expect.poll(() => explainText(page)).toContain('Q[2,1] = x[2,:] · W_q[:,1]');
  await expect(page.locator('[data-matrix="x"] td.is-feed')).toHaveCount(2);
  await expect(page.locator('[data-matrix="W_q"] td.is-feed')).toHaveCount(2);
  // ·W_o
  await page.locator('[data-panel="out"] td[data-r="0"][data-c="1"]').focus();
  await expect.poll(() => explainText(page)).toContain('Y[1,2] = Σ_c C[1,c] · W_o[c,2]');
  // the mask: why −∞, with the actual i, j, base
  await preset(page, 'kv-cache');
  await page.mouse.move(0, 0); // no hover left over from above: the focused cell is explained
  await page.locator('[data-panel="masked"] td[data-r="0"][data-c="3"]').focus();
  await expect.poll(() => explainText(page)).toContain('j = 4 > i + base = 1 + 2 = 3');
  await expect.poll(() => explainText(page)).toContain('comes after query i = 1');
  await expect(explainBox(page).locator('.aps-ex-result')).toHaveAttribute('data-text', '= −∞');
  await page.locator('[data-panel="weights"] td[data-r="0"][data-c="3"]').focus();
  await expect.poll(() => explainText(page)).toContain('e^(−∞)');
  expect(await page.evaluate(() => window.attentionStepper.getState().focus)).toEqual({ panel: 'weights', row: 0, col: 3 });
  await page.screenshot({ path: testInfo.outputPath('explain.png') });
});

test('step mode: next / previous buttons, N / P keys, progress indicator, all-steps view', async ({ page }, testInfo) => {
  await ready(page);
  await page.locator('[data-key="view.step"]').click();
  const progress = page.locator('.aps-progress-text');
  await expect(progress).toHaveText('Step 1 of 8: queries, keys and values');
  await expect(page.locator('figure[data-panel="q"]')).toBeVisible();
  await expect(page.locator('figure[data-panel="scores"]')).toBeHidden();
  await expect(page.locator('[data-key="step.prev"]')).toBeDisabled();
  await page.locator('[data-key="step.next"]').click();
  await expect(progress).toHaveText('Step 2 of 8: scores S = QKᵀ');
  await expect(page.locator('figure[data-panel="scores"]')).toHaveClass(/is-current/);
  await expect(page.locator('figure[data-panel="q"]')).toHaveClass(/is-source/);
  await expect(page.locator('figure[data-panel="v"]')).toBeHidden();
  await page.locator('[data-key="step.next"]').focus();
  await page.keyboard.press('n');
  await page.keyboard.press('n');
  await page.keyboard.press('n');
  await expect(progress).toHaveText('Step 5 of 8: softmax of each row');
  await expect(page.locator('figure[data-panel="weights"]')).toBeVisible();
  await expect(page.locator('.aps-dot[aria-current="step"]')).toHaveCount(1);
  await page.screenshot({ path: testInfo.outputPath('step.png'), fullPage: true });
  await page.keyboard.press('p');
  await expect(progress).toHaveText('Step 4 of 8: adding the mask');
  await page.locator('[data-key="step.prev"]').click();
  await expect(progress).toHaveText('Step 3 of 8: scaling by 1/√d_k');
  await page.locator('.aps-dot').nth(7).click();
  await expect(progress).toHaveText('Step 8 of 8: output projection ·W_o');
  await expect(page.locator('[data-key="step.next"]')).toBeDisabled();
  expect(await page.evaluate(() => window.attentionStepper.getState())).toMatchObject({ view: 'step', step: 7 });
  // typing in a grid does not step
  await gridCell(page, 'x', 0, 0).click();
  await page.keyboard.press('p');
  await page.keyboard.press('Escape');
  await expect(progress).toHaveText('Step 8 of 8: output projection ·W_o');
  await page.locator('[data-key="view.all"]').click();
  await expect(page.locator('.aps-stepnav')).toBeHidden();
  for (const p of ['q', 'scores', 'weights', 'out']) await expect(page.locator(`figure[data-panel="${p}"]`)).toBeVisible();
});

test('step mode keys: ← → J K Home End with the focus anywhere but a field; the keys are written under the steps', async ({ page }) => {
  await ready(page);
  await page.getByRole('radio', { name: 'Step by step' }).click();
  const nav = page.getByRole('navigation', { name: 'Step navigation' });
  const progress = nav.locator('.aps-progress-text');
  await expect(progress).toHaveText('Step 1 of 8: queries, keys and values');
  await expect(nav.getByText('Keys: → or N next, ← or P previous')).toBeVisible();
  await page.evaluate(() => document.activeElement.blur()); // the focus on the page itself
  await page.keyboard.press('ArrowRight');
  await expect(progress).toHaveText('Step 2 of 8: scores S = QKᵀ');
  await expect(page.locator('figure[data-panel="scores"]')).toBeVisible();
  await page.keyboard.press('j');
  await expect(progress).toHaveText('Step 3 of 8: scaling by 1/√d_k');
  await page.keyboard.press('k');
  await page.keyboard.press('ArrowLeft');
  await expect(progress).toHaveText('Step 1 of 8: queries, keys and values');
  await page.keyboard.press('End');
  await expect(progress).toHaveText('Step 8 of 8: output projection ·W_o');
  await expect(page.locator('figure[data-panel="out"]')).toBeVisible();
  await page.keyboard.press('Home');
  await expect(progress).toHaveText('Step 1 of 8: queries, keys and values');
  // from the Next button too (Tab reaches it; the arrows then step)
  await nav.getByRole('button', { name: 'Next →' }).focus();
  await page.keyboard.press('ArrowRight');
  await expect(progress).toHaveText('Step 2 of 8: scores S = QKᵀ');
  // a panel's cells keep their arrows: the cell moves, the step stays
  const q = page.getByRole('grid', { name: /^Q/ }).first();
  await q.getByRole('gridcell').first().focus();
  await page.keyboard.press('ArrowRight');
  await expect(q.getByRole('gridcell').nth(1)).toBeFocused();
  await expect(progress).toHaveText('Step 2 of 8: scores S = QKᵀ');
  // and so does an input grid
  await page.getByRole('gridcell', { name: 'x row 1, column 1' }).click();
  await page.keyboard.press('ArrowRight');
  await expect(page.getByRole('gridcell', { name: 'x row 1, column 2' })).toBeFocused();
  await page.keyboard.press('End');
  await expect(progress).toHaveText('Step 2 of 8: scores S = QKᵀ');
  // 中文
  await page.getByRole('button', { name: '中文' }).click();
  await expect(page.getByText('按键：→ 或 N 下一步')).toBeVisible();
  await page.evaluate(() => document.activeElement.blur());
  await page.keyboard.press('ArrowRight');
  await expect(page.locator('.aps-progress-text')).toHaveText(/^第 3 步，共 8 步/);
});

test('undo and redo: Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y over typing, a random fill and an example', async ({ page }) => {
  await ready(page);
  const weights = () => panelCells(page, 'weights').allTextContents();
  const example = page.getByRole('combobox', { name: 'Example' });
  const x00 = page.getByRole('gridcell', { name: 'x row 1, column 1' });
  const start = { x: await page.evaluate(() => window.attentionStepper.getState().matrices), w: await weights() };
  // typing one cell is one entry, whatever the number of keystrokes
  await x00.click();
  await page.keyboard.type('2.5');
  await page.keyboard.press('Enter');
  await expect(x00).toHaveText('2.5');
  await expect(example).toHaveValue('custom');
  await expect.poll(weights).not.toEqual(start.w); // the panels follow the edit after it lands
  const typed = await weights();
  await page.getByRole('button', { name: 'Random fill' }).click();
  const filled = await page.evaluate(() => window.attentionStepper.getState().matrices);
  expect(filled.W_q).not.toBe(start.x.W_q);
  await example.selectOption('two-token');
  await expect(panelCells(page, 'weights')).toHaveText(['0.5000', '0.5000', '0.3302', '0.6698']);
  // back, one change at a time (the keyboard on the example's select, then on the page)
  await page.keyboard.press('Control+z');
  await expect(example).toHaveValue('custom');
  await expect.poll(() => page.evaluate(() => window.attentionStepper.getState().matrices)).toEqual(filled);
  await page.evaluate(() => document.activeElement.blur());
  await page.keyboard.press('Control+z');
  await expect(x00).toHaveText('2.5');
  await expect.poll(weights).toEqual(typed);
  await page.keyboard.press('Control+z');
  await expect(x00).toHaveText('1');
  await expect.poll(weights).toEqual(start.w);
  expect(await page.evaluate(() => window.attentionStepper.getState().matrices)).toEqual(start.x);
  await page.keyboard.press('Control+z'); // nothing more to undo: nothing changes
  await expect(x00).toHaveText('1');
  // and forward again
  await page.keyboard.press('Control+Shift+z');
  await expect(x00).toHaveText('2.5');
  await page.keyboard.press('Control+y');
  await expect.poll(() => page.evaluate(() => window.attentionStepper.getState().matrices)).toEqual(filled);
  await page.keyboard.press('Control+y');
  await expect(example).toHaveValue('two-token');
  // Ctrl+Z in a grid cell undoes there too, and the keyboard stays in the grid
  await page.getByRole('gridcell', { name: 'K row 2, column 1' }).click();
  await page.keyboard.press('Delete');
  await expect(page.getByRole('gridcell', { name: 'K row 2, column 1' })).toHaveText('');
  await page.keyboard.press('Control+z');
  await expect(page.getByRole('gridcell', { name: 'K row 2, column 1' })).toHaveText('1');
  await expect(page.getByRole('gridcell', { name: 'K row 2, column 1' })).toBeFocused();
});

test('the browser’s Back and Forward go through examples and random fills; typing stays in its entry', async ({ page }) => {
  await ready(page);
  const example = page.getByRole('combobox', { name: 'Example' });
  await example.selectOption('two-token');
  await expect(panelCells(page, 'weights')).toHaveText(['0.5000', '0.5000', '0.3302', '0.6698']);
  await example.selectOption('causal-4');
  await expect(example).toHaveValue('causal-4');
  await expect(panelCells(page, 'weights')).toHaveCount(16); // the panels follow the example
  const causal = await panelCells(page, 'weights').allTextContents();
  await page.getByRole('button', { name: 'Random fill' }).click();
  const filled = await page.evaluate(() => window.attentionStepper.getState().matrices);
  // keystrokes replace the entry they are made in (no entry per keystroke)
  await page.getByRole('gridcell', { name: 'x row 1, column 1' }).click();
  await page.keyboard.type('3');
  await page.keyboard.press('Enter');
  const inLink = () => page.evaluate(async () => (await import('/common/permalink.js')).decodeState(location.hash)?.matrices.x.split(/\s/)[0]);
  await expect.poll(inLink).toBe('3'); // written into this entry once the typing pauses
  await page.goBack();
  await expect(example).toHaveValue('causal-4');
  await expect(panelCells(page, 'weights')).toHaveText(causal);
  await page.goBack();
  await expect(example).toHaveValue('two-token');
  await expect(panelCells(page, 'weights')).toHaveText(['0.5000', '0.5000', '0.3302', '0.6698']);
  await page.goBack();
  await expect(example).toHaveValue('identity'); // the page as first opened
  await page.goForward();
  await page.goForward();
  await page.goForward();
  await expect(page.getByRole('gridcell', { name: 'x row 1, column 1' })).toHaveText('3');
  const now = await page.evaluate(() => window.attentionStepper.getState().matrices);
  expect({ ...now, x: filled.x }).toEqual(filled);
});

test('on a phone the cell arithmetic closes: its × button and Escape (en, 中文)', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 375, height: 740 });
  await ready(page);
  const box = page.getByRole('complementary', { name: 'Cell arithmetic' });
  const cell = page.getByRole('grid', { name: 'softmax (A)' }).getByRole('gridcell').first();
  await cell.scrollIntoViewIfNeeded();
  await cell.click();
  await expect(box.locator('.aps-explain-title')).toContainText('Cell arithmetic: ');
  const open = (await box.boundingBox()).height;
  expect(open).toBeGreaterThan(740 / 5); // what the issue saw: a good part of the screen
  await page.screenshot({ path: testInfo.outputPath('phone-explain-open.png') });
  const close = box.getByRole('button', { name: 'Close the cell arithmetic' });
  await close.click();
  await expect(box.getByText('Point at or focus')).toBeVisible();
  await expect(close).toHaveCount(0);
  expect((await box.boundingBox()).height).toBeLessThan(open / 2);
  expect(await page.evaluate(() => window.attentionStepper.getState().focus)).toBeNull();
  await page.screenshot({ path: testInfo.outputPath('phone-explain-closed.png') });
  // Escape, from the cell the keyboard is on
  await cell.focus();
  await expect(box.locator('.aps-explain-title')).toContainText('Cell arithmetic: ');
  await page.keyboard.press('Escape');
  await expect(box.getByText('Point at or focus')).toBeVisible();
  // 中文
  await page.locator('[data-key="lang.zh"]').click();
  const zhCell = page.getByRole('grid', { name: 'softmax（A）' }).getByRole('gridcell').first();
  await zhCell.scrollIntoViewIfNeeded();
  await zhCell.click();
  const zhBox = page.getByRole('complementary', { name: '单元格算式' });
  await zhBox.getByRole('button', { name: '关闭单元格算式' }).click();
  await expect(zhBox.getByRole('button', { name: '关闭单元格算式' })).toHaveCount(0);
});

test('random fill is seeded; qkv mode; d_k = 64 saturation shows max and entropy', async ({ page }) => {
  await ready(page);
  await page.locator('input[data-key="seed"]').fill('7');
  await page.locator('[data-key="random"]').click();
  const a = (await page.evaluate(() => window.attentionStepper.getState())).matrices.W_q;
  expect(a).not.toBe('1 0\n0 1');
  for (const v of a.split(/\s+/).map(Number)) expect(Math.abs(v)).toBeLessThanOrEqual(1 / Math.sqrt(2) + 1e-3);
  await page.locator('[data-key="random"]').click();
  expect((await page.evaluate(() => window.attentionStepper.getState())).matrices.W_q).toBe(a);
  await page.locator('[data-key="mode.qkv"]').click();
  await expect(page.locator('[data-matrix="Q"]')).toBeVisible();
  await expect(page.locator('[data-matrix="x"]')).toHaveCount(0);
  await preset(page, 'saturate-64');
  await expect(page.locator('figure[data-panel="q"] .aps-shape')).toHaveText('T × d_k = 4 × 64');
  const max = page.locator('[data-panel="weights"] td.is-derived');
  await expect(max).toHaveCount(8);
  await settled(page);
  const maxes = (await page.locator('[data-panel="weights"] .aps-stats tbody tr').evaluateAll((rs) => rs.map((r) => Number(r.querySelectorAll('td.is-derived')[0].textContent))));
  expect(Math.max(...maxes)).toBeGreaterThan(0.99);
  await page.locator('input[data-key="scale"]').check();
  await settled(page);
  const maxes2 = (await page.locator('[data-panel="weights"] .aps-stats tbody tr').evaluateAll((rs) => rs.map((r) => Number(r.querySelectorAll('td.is-derived')[0].textContent))));
  const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
  expect(mean(maxes2)).toBeLessThan(mean(maxes) - 0.2);
});

test('16×16 with 4 heads: every edit recomputes and repaints the panels (timing: npm run bench:stepper)', async ({ page }) => {
  await ready(page);
  await page.evaluate(() => {
    const m = (seed) => Array.from({ length: 16 }, (_, i) => Array.from({ length: 16 }, (_, j) => ((i * 7 + j * 3 + seed) % 11) / 10 - 0.5).join(' ')).join('\n');
    const s = window.attentionStepper.getState();
    Object.assign(s, { mode: 'qkv', preset: 'custom', use_W_o: false });
    s.matrices.Q = m(1); s.matrices.K = m(2); s.matrices.V = m(3);
    s.options.n_head = 4; s.options.causal = true;
    window.attentionStepper.setState(s);
  });
  await expect(page.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr')).toHaveCount(16);
  const firstRow = page.locator('figure[data-panel="scores"] tbody tr').first();
  for (let k = 1; k <= 3; k++) {
    const before = await firstRow.textContent();
    await typeInto(page, 'Q', 0, 0, String(k));
    await expect(firstRow).not.toHaveText(before);  // S row 1 depends on Q[0][0]: new numbers shown
  }
});

test('the explanation box is MathML: every line of every cell of every panel reads as notation', async ({ page }) => {
  await ready(page);
  // hover: the lines of a softmax cell are <math> with a fraction, indices as subscripts
  await page.locator('[data-panel="weights"] td[data-r="0"][data-c="0"]').hover();
  const box = page.locator('.aps-explain');
  await expect(box.locator('.aps-ex-formula math')).toHaveCount(1);
  await expect(box.locator('.aps-ex-formula math mfrac')).toHaveCount(1);
  await expect(box.locator('.aps-ex-formula math msub').first()).toBeVisible();
  await expect(box.locator('.aps-ex-formula math')).toHaveAttribute('aria-label', 'A[1,1] = e^(M[1,1] − max) / Σ_k e^(M[1,k] − max)');
  await expect(box.locator('.aps-ex-note math')).toHaveCount(0); // notes stay prose
  // every explanation the page can show, forward and backward, for specs that reach every branch
  const bad = await page.evaluate(async () => {
    const { loadAttention } = await import('/attention.js');
    const { explain } = await import('/stepper/explain.js');
    const { explainGrad } = await import('/stepper/explain-grad.js');
    const { mathLine } = await import('/common/explain-math.js');
    const { createI18n } = await import('/stepper/i18n.js');
    const api = await loadAttention();
    const X4 = '0.5 -1 0.25 0\n1 0.5 -0.5 0.75\n-0.25 0.5 1 -1\n0 1.5 0.5 0.25';
    const specs = [
      { x: X4, W_q: X4, W_k: X4, W_v: X4, W_o: X4, n_head: 2, causal: true, base: 1 },
      { x: X4, W_q: X4, W_k: X4, W_v: X4, W_o: X4, b_q: '1 -2 0.5 0', b_k: '0 0 1 1', b_v: '-1 0 0 2', b_o: '0.25 0 0 -1' },
      { x: X4, W_q: X4, W_k: X4, W_v: X4, n_head: 1, causal: true, mask: 'inclusive', scale: false },
      { Q: '1 0\n0 1', K: '1000 999\n999 1000', V: '1 0\n0 1', softmax: 'naive', scale: false },
    ];
    const panels = ['q', 'k', 'v', 'scores', 'scaled', 'masked', 'weights', 'context', 'concat', 'out'];
    const grads = { d_out: 'out', d_W_o: 'W_o', d_concat: 'concat', d_context: 'context', d_weights: 'weights', d_v: 'v', d_scaled: 'scaled', d_scores: 'scores', d_q: 'q', d_k: 'k', d_Q: 'Q', d_K: 'K', d_V: 'V', d_x: 'x', d_W_q: 'W_q', d_W_k: 'W_k', d_W_v: 'W_v', d_b_q: 'b_q', d_b_k: 'b_k', d_b_v: 'b_v', d_b_o: 'b_o' };
    const out = [];
    let lines = 0;
    for (const lang of ['en', 'zh']) {
      const { t } = createI18n(lang);
      for (const spec of specs) {
        const bw = api.backward(spec);
        const tr = bw.trace;
        for (let head = 0; head < tr.n_head; head++) {
          const check = (mk, where) => {
            let ex;
            try { ex = mk(); } catch (e) { out.push(`${where}: ${e.message}`); return; }
            for (const l of ex.lines) {
              if (l.kind === 'note') continue;
              lines++;
              if (mathLine(l.text).dataset.fallback) out.push(`${where}: ${l.text}`);
            }
          };
          for (const p of panels) {
            if (p === 'out' && !tr.inputs.W_o) continue; // the page shows ·W_o only with W_o
            const m = p === 'concat' || p === 'out' ? tr[p] : tr.heads[head][p];
            m.forEach((r, i) => r.forEach((_, j) => check(() => explain(tr, { panel: p, row: i, col: j, head }, t), `${p}[${i},${j}]`)));
          }
          for (const [p, name] of Object.entries(grads)) {
            let g = ['context', 'weights', 'v', 'scaled', 'scores', 'q', 'k'].includes(name) ? bw.grads.heads[head][name] : bw.grads[name];
            if (!g) continue;
            if (!Array.isArray(g[0])) g = [g]; // a bias: one row
            for (const upstream of ['sum', 'mse', 'd_out']) {
              g.forEach((r, i) => r.forEach((_, j) => check(() => explainGrad(bw, { panel: p, row: i, col: j, head }, t, { upstream, target: tr.out.map((rr) => rr.map(() => 0)) }), `${p}[${i},${j}] ${upstream}`)));
            }
          }
        }
      }
    }
    return { out: out.slice(0, 10), lines };
  });
  expect(bad.lines).toBeGreaterThan(1000);
  expect(bad.out).toEqual([]);
});
