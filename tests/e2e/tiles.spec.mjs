// tiles.spec.mjs — FlashAttention's tiles and multi-head latent attention in the stepper, driven
// by labels and visible text: the 16-token example stepped to its rescale and the tiled output's
// equality with the plain path, latent attention's absorbed scores agreeing with the scores, in
// English and 中文 at 375 / 1366 / 1920 px under the strict CSP; the flash exercise answered wrong
// (the forgotten rescale, named) then right; the backward pass of RoPE, the tiles and MLA; a
// permalink round-trip of both options; print (the PDF's text holds the tiles' numbers); axe's WCAG 2.2 A/AA rules on each state. Numbers come from the golden cases' float64 values
// (tests/golden/attention_cases.json), never from the page itself.
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import AxeBuilder from '@axe-core/playwright';
import { test, expect, panelText, explainText, settled, watchNetwork, openStepper } from './fixtures.mjs';

const golden = JSON.parse(readFileSync(new URL('../golden/attention_cases.json', import.meta.url), 'utf8'));
const expectOf = (name) => golden.cases.find((c) => c.name === name).expect;
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:";
const WIDTHS = [375, 1366, 1920];
const L = {
  en: { example: 'Example', status: /C\+\+/, pass: 'Pass', backward: 'Backward (gradients)', exercise: 'Exercise', check: 'Check answers',
    view: 'Step by step', next: 'Next →', m: 'Running maximum m', alpha: 'Rescale α', l: 'Running sum ℓ', out: 'Tiled output o / ℓ',
    progress: 'FlashAttention’s tiles: running max and sum', latent: 'Latent c = x·W_dkv', absorbed: 'Absorbed scores',
    rescale: 'row 6 at block 2 (α = 0.2586)', equal: 'The tiled output equals the plain path’s context within float32 rounding',
    agree: 'The absorbed form never builds k, yet gives the same scores' },
  zh: { example: '示例', status: /内核/, pass: '方向', backward: '反向（梯度）', exercise: '练习', check: '检查答案',
    view: '逐步演示', next: '下一步 →', m: '运行最大值 m', alpha: '缩放因子 α', l: '运行和 ℓ', out: '分块输出 o / ℓ',
    progress: 'FlashAttention 的分块：运行最大值与运行和', latent: '潜在向量 c = x·W_dkv', absorbed: '吸收形式的分数',
    rescale: '第 6 行、第 2 块（α = 0.2586）', equal: '分块输出与普通路径的 context 只差 float32 舍入',
    agree: '吸收形式从不构造 k，却给出相同的分数' },
};

/** Serves the page with the strict CSP header and records every violation and console error. */
async function strict(page) {
  const problems = [];
  const net = watchNetwork(page);
  await page.exposeFunction('__cspViolation', (v) => problems.push(v));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => window.__cspViolation(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`));
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  await page.route('**/*', async (route) => {
    const response = await route.fetch({ timeout: 0 });
    await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': CSP } });
  });
  return Object.assign(problems, { quiet: () => net.quiet() });
}

async function open(page, lang = 'en', hash = '') {
  await openStepper(page, lang, hash);
  await expect(page.getByRole('status').filter({ hasText: L[lang].status }).first()).toBeVisible();
}

async function noViolations(page, state, off = []) {
  const { violations } = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).disableRules(off).analyze();
  expect.soft(violations.flatMap((v) => v.nodes.map((n) => `${v.id} ${n.target.join(' ')}`)), `axe on ${state}`).toEqual([]);
}

const example = (page, lang, id) => page.getByLabel(L[lang].example, { exact: true }).selectOption(id);
const figure = (page, title) => page.locator('figure').filter({ has: page.getByRole('heading', { name: title }) }).first();
const cell = (fig, r, c) => fig.locator(`td[data-r="${r}"][data-c="${c}"]`);
const value = (s) => (s === '−∞' ? -Infinity : Number(s.replace('−', '-')));
const near = (shown, want, what) => expect(Math.abs(value(shown) - want), `${what}: ${shown} vs ${want}`).toBeLessThanOrEqual(6e-5 * Math.max(1, Math.abs(want)));

test('FlashAttention: stepped to the rescale, the tiled output equal to the plain path, in English and 中文 at 375 / 1366 / 1920 px', async ({ page }, testInfo) => {
  const problems = await strict(page);
  const want = expectOf('flash_16_tokens_causal').flash;
  const step = want.steps.find((s) => s.head === 0 && s.q_block === 1 && s.k_block === 1);
  for (const [k, width] of WIDTHS.entries()) {
    const lang = k === 1 ? 'en' : 'zh';
    const T = L[lang];
    await page.setViewportSize({ width, height: 900 });
    if (k === 0) await open(page, lang);
    else await page.getByRole('button', { name: lang === 'en' ? 'English' : '中文', exact: true }).click();
    await example(page, lang, 'flash-tiles');
    // step by step to the tiles
    await page.getByRole('radio', { name: T.view }).click();
    for (let n = 0; n < 12 && !(await page.locator('.aps-progress-text').textContent()).includes(T.progress); n++) {
      await page.getByRole('button', { name: T.next, exact: true }).click();
    }
    await expect(page.locator('.aps-progress-text')).toContainText(T.progress);
    const alpha = figure(page, T.alpha);
    await expect(alpha).toBeVisible();
    // row 6 of head 1 meets key block 2: a new maximum, α = e^(m_old − m_new) (golden float64)
    near((await panelText(page, 'flash_alpha'))[5][1], step.alpha[1], 'α[6,2]');
    near((await panelText(page, 'flash_m'))[5][1], step.m[1], 'm[6,2]');
    near((await panelText(page, 'flash_l'))[5][1], step.l[1], 'ℓ[6,2]');
    await expect(figure(page, T.m)).toContainText(T.rescale);
    await cell(figure(page, T.l), 5, 1).focus();
    await expect.poll(() => explainText(page)).toContain('ℓ[6,2] = α[6,2]·ℓ[6,1]');
    await expect.poll(() => explainText(page)).toContain('0.2586 × 1.6782 + 0.2489 + 1');
    // the equality: the page states the largest difference and the bound
    const out = figure(page, T.out);
    await expect(out).toContainText(T.equal);
    const shown = await panelText(page, 'flash_context');
    want.heads[0].context.forEach((r, i) => r.forEach((v, j) => near(shown[i][j], v, `O[${i + 1},${j + 1}]`)));
    await settled(page);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), `${width} px: no sideways scroll`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: testInfo.outputPath(`flash-${width}-${lang}.png`) });
    if (k === 1) await noViolations(page, 'the tiles, stepped to the rescale, a cell explained');
    await page.getByRole('radio', { name: lang === 'en' ? 'All steps' : '全部步骤' }).click();
  }
  await problems.quiet();
  expect([...problems]).toEqual([]);
});

test('latent attention: the latent, and the absorbed scores agreeing with the scores, in English and 中文 at 375 / 1366 / 1920 px', async ({ page }) => {
  const problems = await strict(page);
  const want = expectOf('mla_latent_rope_halves');
  for (const [k, width] of WIDTHS.entries()) {
    const lang = k === 1 ? 'en' : 'zh';
    const T = L[lang];
    await page.setViewportSize({ width, height: 900 });
    if (k === 0) await open(page, lang);
    else await page.getByRole('button', { name: lang === 'en' ? 'English' : '中文', exact: true }).click();
    await example(page, lang, 'mla-latent');
    await expect(figure(page, T.latent)).toBeVisible();
    const c = await panelText(page, 'latent');
    want.mla.c.forEach((r, i) => r.forEach((v, j) => near(c[i][j], v, `c[${i + 1},${j + 1}]`)));
    const absorbed = figure(page, T.absorbed);
    await expect(absorbed).toContainText(T.agree);
    const S = await panelText(page, 'scores');
    const A = await panelText(page, 'scores_absorbed');
    want.heads[0].scores.forEach((r, i) => r.forEach((v, j) => { near(A[i][j], v, `S_abs[${i + 1},${j + 1}]`); near(S[i][j], v, `S[${i + 1},${j + 1}]`); }));
    await cell(absorbed, 2, 1).focus();
    await expect.poll(() => explainText(page)).toContain('S_abs[3,2] = q_lat[3,:] · c[2,:]');
    if (k === 1) await noViolations(page, 'latent attention, an absorbed score explained');
  }
  await problems.quiet();
  expect([...problems]).toEqual([]);
});

test('the flash exercise: the forgotten rescale named, then every m and ℓ right', async ({ page }) => {
  await open(page);
  await page.getByLabel(L.en.exercise, { exact: true }).selectOption('flash-running');
  await expect(page.getByRole('heading', { name: 'A tile’s running maximum and sum (FlashAttention)' })).toBeVisible();
  const want = expectOf('flash_16_tokens_causal').flash.steps.filter((s) => s.head === 0 && s.q_block === 1);
  const input = (title, c) => figure(page, title).locator(`td[data-r="5"][data-c="${c}"] input`);
  for (let c = 0; c < 4; c++) {
    await input(L.en.m, c).fill(want[c].m[1].toFixed(4));
    await input(L.en.l, c).fill(want[c].l[1].toFixed(4));
  }
  await input(L.en.l, 1).fill('2.9271'); // the old ℓ added without its rescale
  await page.getByRole('button', { name: L.en.check }).click();
  await expect(page.locator('.aps-exercise-result')).toContainText('7 of 8 right');
  await expect(page.locator('.aps-exercise-result')).toContainText('multiply it by α');
  await input(L.en.l, 1).fill(want[1].l[1].toFixed(4));
  await page.getByRole('button', { name: L.en.check }).click();
  await expect(page.locator('.aps-exercise-result')).toContainText('All 8 right');
  await expect(page.locator('.aps-exercise-why')).toContainText('1.6829');
  await noViolations(page, 'the flash exercise solved');
});

test('backward: RoPE’s rotation back, FlashAttention-2’s recomputed P, the latent’s gradient', async ({ page }) => {
  await open(page);
  await page.getByRole('radiogroup', { name: L.en.pass }).getByRole('radio', { name: L.en.backward }).click();
  await example(page, 'en', 'rope-distance');
  await cell(page.locator('figure[data-panel="d_q"]'), 1, 0).focus();
  await expect.poll(() => explainText(page)).toContain('∂L/∂q[2,1] = ∂L/∂q′[2,1]·cos φ + ∂L/∂q′[2,2]·sin φ');
  await example(page, 'en', 'flash-tiles');
  const P = figure(page, 'P recomputed from L');
  await expect(P).toContainText('It equals the forward’s weights A');
  const A = expectOf('flash_16_tokens_causal').heads[0].weights;
  const shown = await panelText(page, 'flash_P');
  A.forEach((r, i) => r.forEach((v, j) => near(shown[i][j], v, `P[${i + 1},${j + 1}]`)));
  await cell(P, 5, 4).focus();
  await expect.poll(() => explainText(page)).toContain('P[6,5] = e^(M[6,5] − L[6])');
  await expect(figure(page, 'D = rowsum(∂L/∂O ⊙ O)')).toBeVisible();
  // ∂L/∂v as FlashAttention-2 builds it: one term per tile of its key block
  await cell(page.locator('figure[data-panel="d_v"]'), 5, 1).focus();
  await expect.poll(() => explainText(page)).toContain('∂L/∂v[6,2] = Σ_b (P_bᵀ · ∂L/∂O_b)[6,2]');
  await expect(page.locator('.aps-explain')).toContainText('one term per tile');
  // ∂L/∂k kept per key block over the query blocks, ∂L/∂q per query block over the key blocks
  await cell(page.locator('figure[data-panel="d_k"]'), 5, 1).focus();
  await expect.poll(() => explainText(page)).toContain('∂L/∂k[6,2] = Σ_b (∂L/∂S_bᵀ · q_b)[6,2] b over the 4 query blocks meeting key block 2');
  await cell(page.locator('figure[data-panel="d_q"]'), 9, 1).focus();
  await expect.poll(() => explainText(page)).toContain('∂L/∂q[10,2] = Σ_b (∂L/∂S_b · k_b)[10,2] b over the 4 key blocks meeting query block 3');
  await page.getByRole('button', { name: '中文', exact: true }).click();
  await cell(page.locator('figure[data-panel="d_q"]'), 9, 1).focus();
  await expect.poll(() => explainText(page)).toContain('b 取遍与第 3 个查询块相遇的 4 个键块');
  await page.getByRole('button', { name: 'English', exact: true }).click();
  await example(page, 'en', 'mla-latent');
  await expect(figure(page, '∂L/∂c (the latent)')).toContainText('gathers both');
  await expect(figure(page, '∂L/∂W_dkv')).toBeVisible();
  await expect(page.getByRole('heading', { name: '∂L/∂W_k', exact: true })).toHaveCount(0);
  await noViolations(page, 'latent attention’s backward');
});

test('a permalink keeps the tiles’ sizes and latent attention', async ({ page }) => {
  await open(page);
  await example(page, 'en', 'mla-latent');
  await page.getByLabel('FlashAttention: query rows per tile (0 = off)').fill('2');
  await page.getByLabel('Keys per tile (0 = off)').fill('3');
  // the tiles compose with latent attention: 3 queries, 4 keys in blocks of 3
  await expect(figure(page, L.en.m).locator('.aps-shape')).toHaveText('T × n_k_blocks = 3 × 2');
  await expect(figure(page, L.en.latent)).toBeVisible();
  const url = await page.evaluate(async () => {
    const { encodeState } = await import('/common/permalink.js');
    return encodeState(window.attentionStepper.getState());
  });
  await page.goto(`/${url}`);
  await expect(page.getByRole('status').filter({ hasText: L.en.status }).first()).toBeVisible();
  await expect(page.getByLabel('FlashAttention: query rows per tile (0 = off)')).toHaveValue('2');
  await expect(page.getByLabel('Keys per tile (0 = off)')).toHaveValue('3');
  await expect(page.getByLabel('Multi-head latent attention (K and V from a latent)')).toBeChecked();
  await expect(figure(page, L.en.latent)).toBeVisible();
  await expect(figure(page, L.en.m).locator('.aps-shape')).toHaveText('T × n_k_blocks = 3 × 2');
  // the export offers the variants' panels
  const options = await page.getByLabel('Matrix to export').locator('option').allTextContents();
  for (const name of ['latent', 'W_dkv', 'head 1 · flash_m', 'head 2 · flash_l', 'head 1 · scores_absorbed']) expect(options, name).toContain(name);
  // turned off, the tiles' step goes
  await page.getByLabel('Keys per tile (0 = off)').fill('0');
  await expect(page.getByRole('heading', { name: L.en.m })).toBeHidden();
});

test('print: the tiles\' panels with their numbers', async ({ page }, testInfo) => {
  test.skip(!existsSync('/usr/bin/pdftotext'), 'pdftotext (poppler-utils) is not installed');
  await open(page);
  await example(page, 'en', 'flash-tiles');
  const rows = { m: (await panelText(page, 'flash_m'))[5], l: (await panelText(page, 'flash_l'))[5] };
  await page.getByRole('radio', { name: L.en.view }).click(); // from the step view: print shows every step
  const path = testInfo.outputPath('tiles.pdf');
  writeFileSync(path, await page.pdf({ format: 'A4', printBackground: true }));
  const text = execFileSync('/usr/bin/pdftotext', ['-layout', path, '-']).toString().replace(/[ \t]+/g, ' ');
  for (const [p, r] of Object.entries(rows)) expect(text, `${p}: ${r.join(' ')}`).toContain(` ${r.join(' ')}`);
  for (const title of [L.en.m, L.en.alpha, L.en.l, L.en.out]) expect(text).toContain(title);
});
