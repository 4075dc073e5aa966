// variants.spec.mjs — the modern variants in the stepper (RoPE, ALiBi, grouped-query heads, the
// sliding window with sinks), driven by labels and visible text: each example in English and 中文
// at 375, 1366 and 1920 px under the strict CSP, its panels, notes and cell arithmetic; the
// options by keyboard, with the core's message beside the field at fault; a permalink, the export
// and print; the backward pass of each; two ready-made exercises; axe (WCAG 2.2 A/AA) on the states.
import { writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { test, expect, panelText, explainText, settled, watchNetwork, openStepper } from './fixtures.mjs';

const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:";
const WIDTHS = [375, 1366, 1920];
const L = {
  en: { example: 'Example', status: /C\+\+/, pass: 'Pass', backward: 'Backward (gradients)', exercise: 'Exercise', check: 'Check answers' },
  zh: { example: '示例', status: /内核/, pass: '方向', backward: '反向（梯度）', exercise: '练习', check: '检查答案' },
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

const example = (page, lang, id) => page.getByLabel(L[lang].example, { exact: true }).selectOption(id);
const figure = (page, title) => page.locator('figure').filter({ has: page.getByRole('heading', { name: title, exact: true }) });
const cell = (fig, r, c) => fig.locator(`td[data-r="${r}"][data-c="${c}"]`);

async function noViolations(page, state, off = []) {
  const { violations } = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).disableRules(off).analyze();
  expect.soft(violations.flatMap((v) => v.nodes.map((n) => `${v.id} ${n.target.join(' ')}`)), `axe on ${state}`).toEqual([]);
}

/** The formulas and the explanation that are cut (content wider than their box), as "panel: px". */
const clippedText = (page) => page.evaluate(() => [...document.querySelectorAll('.aps-formula, .aps-explain-lines')]
  .filter((b) => b.offsetParent && b.scrollWidth - b.clientWidth > 1)
  .map((b) => `${b.closest('[data-panel]')?.dataset.panel ?? 'explain'}: ${b.scrollWidth - b.clientWidth}px`));

/** The page never scrolls sideways (a wide panel scrolls in its own box). */
const pageOverflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

// Each example: what it shows, checked in the language and at the widths given.
const EXAMPLES = {
  'rope-distance': async (page, lang) => {
    const angles = figure(page, lang === 'en' ? 'Angles φ = position · θ' : '角度 φ = 位置 · θ');
    await expect(angles).toBeVisible();
    await expect(angles).toContainText(lang === 'en' ? 'θ0 = 1, θ1 = 0.0100' : 'θ0 = 1, θ1 = 0.0100');
    // only the distance counts: every diagonal of S holds one number
    const S = await panelText(page, 'scores');
    for (let i = 1; i < 4; i++) for (let j = 1; j < 4; j++) expect(S[i][j], `S[${i + 1},${j + 1}]`).toBe(S[i - 1][j - 1]);
    const qrot = figure(page, lang === 'en' ? 'q′ = q rotated' : 'q′ = 旋转后的 q');
    await cell(qrot, 1, 0).focus();
    await expect.poll(() => explainText(page)).toContain('q′[2,1] = q[2,1]·cos φ − q[2,2]·sin φ');
    await expect.poll(() => explainText(page)).toContain('= 0.5403');
    await expect(page.locator('.aps-explain')).toContainText(lang === 'en' ? 'Dimensions 1 and 2 form pair 0' : '第 1 维和第 2 维组成第 0 对');
  },
  'alibi-heads': async (page, lang) => {
    const bias = figure(page, lang === 'en' ? 'ALiBi bias B · head 1' : 'ALiBi 偏置 B · 第 1 个头');
    await expect(bias).toContainText(lang === 'en' ? 'Head 1’s slope m = 0.2500 (all heads: 0.2500, 0.0625, 0.0156, 0.0039)' : '头 1 的斜率 m = 0.2500');
    expect((await panelText(page, 'bias'))[5]).toEqual(['−1.2500', '−1', '−0.7500', '−0.5000', '−0.2500', '0']);
    // far keys fade: the last row of weights grows toward the query
    const w = (await panelText(page, 'weights'))[5].map((s) => Number(s.replace('−', '-')));
    for (let j = 1; j < 6; j++) expect(w[j]).toBeGreaterThan(w[j - 1]);
    await cell(bias, 3, 0).focus();
    await expect.poll(() => explainText(page)).toContain('= −0.2500 × (0 + 4 − 1)');
  },
  'gqa-8-2': async (page, lang) => {
    const kv = figure(page, lang === 'en' ? 'Shared key/value heads' : '共享的键/值头');
    await expect(kv).toContainText(lang === 'en' ? '12 numbers, against 48 with one K and V per query head (8) — 4× smaller' : '小了 4 倍');
    expect(await panelText(page, 'kv_heads')).toEqual([...Array(4).fill(['1', '0']), ...Array(4).fill(['0', '1'])]);
    await cell(kv, 5, 1).focus();
    await expect.poll(() => explainText(page)).toContain('kv(6) = ⌈6 / 4⌉ = 2');
  },
  'window-sink': async (page, lang) => {
    const mask = figure(page, lang === 'en' ? 'Window mask' : '窗口掩码');
    await expect(mask).toContainText(lang === 'en' ? 'the first 1 keys, the sinks, always' : '汇聚点');
    expect((await panelText(page, 'mask'))[7]).toEqual(['0', '−∞', '−∞', '−∞', '0', '0', '0', '0', '−∞', '−∞', '−∞', '−∞']);
    await cell(mask, 7, 2).focus();
    await expect(page.locator('.aps-explain')).toContainText(lang === 'en' ? 'Key 3 is before the window, which starts at 5' : '键 3 在从 5 开始的窗口之前');
    await cell(mask, 7, 0).focus();
    await expect(page.locator('.aps-explain')).toContainText(lang === 'en' ? 'Key 1 is a sink' : '键 1 是汇聚点');
  },
};

for (const [id, check] of Object.entries(EXAMPLES)) {
  test(`${id}: its panels and arithmetic in English and 中文 at ${WIDTHS.join(' / ')} px, under the strict CSP`, async ({ page }, testInfo) => {
    const problems = await strict(page);
    for (const [k, width] of WIDTHS.entries()) {
      const lang = k === 1 ? 'en' : 'zh';
      await page.setViewportSize({ width, height: 900 });
      if (k === 0) await open(page, lang);
      else await page.getByRole('button', { name: lang === 'en' ? 'English' : '中文', exact: true }).click();
      await example(page, lang, id);
      await check(page, lang);
      await settled(page);
      expect(await pageOverflow(page), `${id} at ${width} px: the page scrolls sideways`).toBeLessThanOrEqual(0);
      expect(await clippedText(page), `${id} at ${width} px: formulas and arithmetic whole`).toEqual([]);
      await page.screenshot({ path: testInfo.outputPath(`${id}-${width}-${lang}.png`) });
      if (k === 1) await noViolations(page, `${id}, a cell explained`);
    }
    // the English walk once more at a phone's width
    await page.getByRole('button', { name: 'English', exact: true }).click();
    await page.setViewportSize({ width: 375, height: 800 });
    await check(page, 'en');
    await problems.quiet();
    expect([...problems]).toEqual([]);
  });
}

test('the options by keyboard, the core’s message at the field, a permalink, export and print', async ({ page }, testInfo) => {
  await open(page);
  // RoPE's pairing is a group of radios: Tab to it and move with the arrows
  const rope = page.getByRole('radiogroup', { name: 'Rotary positions (RoPE)' });
  await rope.getByRole('radio', { name: 'off' }).focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await expect(page.getByRole('radiogroup', { name: 'Rotary positions (RoPE)' }).getByRole('radio', { name: 'halves (i, i + d/2)' })).toHaveAttribute('aria-checked', 'true');
  await expect(page.getByRole('heading', { name: 'k′ = k rotated', exact: true })).toBeVisible();
  await expect(figure(page, 'q′ = q rotated')).toContainText('GPT-NeoX and Llama’s halves');
  await page.getByLabel('Rotated dims (0 = all)').fill('3');
  await expect(page.locator('[data-field="rope_dims"]')).toContainText('even');
  await page.getByLabel('Rotated dims (0 = all)').fill('0');
  // a window needs the causal mask: the core says so beside the window
  await page.getByLabel('Window w (0 = none)').fill('1');
  await expect(page.locator('[data-field="window"]')).toContainText('causal');
  await page.getByLabel('Causal mask').check();
  await expect(page.locator('[data-field="window"] .aps-field-error')).toHaveText('');
  await expect(figure(page, 'Window mask')).toBeVisible();
  // with w = 1 each query sees itself only: the identity example's weights are I
  expect((await panelText(page, 'weights')).filter((r) => r.length)).toEqual([['1', '0'], ['0', '1']]);
  await page.getByLabel('ALiBi: a distance penalty per head').check();
  await expect(page.getByRole('heading', { name: 'ALiBi bias B', exact: true })).toBeVisible();
  // a permalink restores the variants
  const url = await page.evaluate(async () => {
    const { encodeState } = await import('/common/permalink.js');
    return encodeState(window.attentionStepper.getState());
  });
  await page.goto(`/${url}`);
  await expect(page.getByRole('status').filter({ hasText: /C\+\+/ }).first()).toBeVisible();
  await expect(page.getByRole('radiogroup', { name: 'Rotary positions (RoPE)' }).getByRole('radio', { name: 'halves (i, i + d/2)' })).toHaveAttribute('aria-checked', 'true');
  await expect(page.getByLabel('Window w (0 = none)')).toHaveValue('1');
  await expect(page.getByLabel('ALiBi: a distance penalty per head')).toBeChecked();
  await expect(figure(page, 'Window mask')).toBeVisible();
  // the export offers the rotated q and k, the bias and the angles
  const options = await page.getByLabel('Matrix to export').locator('option').allTextContents();
  for (const name of ['q_rot', 'k_rot', 'bias', 'rope_angles']) expect(options, name).toContain(name);
  // print (from the step view): the variants' panels with their numbers
  const rows = { q_rot: await panelText(page, 'q_rot'), bias: await panelText(page, 'bias') };
  await page.getByRole('radio', { name: 'Step by step' }).click();
  if (existsSync('/usr/bin/pdftotext')) {
    const path = testInfo.outputPath('variants.pdf');
    await writeFile(path, await page.pdf({ format: 'A4', printBackground: true }));
    const text = execFileSync('/usr/bin/pdftotext', ['-layout', path, '-']).toString().replace(/[ \t]+/g, ' ');
    for (const [p, m] of Object.entries(rows)) for (const r of m) expect(text, `${p}: ${r.join(' ')}`).toContain(` ${r.join(' ')}`);
    expect(text).toContain('Window mask');
  }
});

test('backward: every variant’s example, with RoPE’s rotation back and the groups’ sums', async ({ page }) => {
  await open(page);
  await page.getByRole('radiogroup', { name: L.en.pass }).getByRole('radio', { name: L.en.backward }).click();
  await example(page, 'en', 'rope-distance');
  const dq = figure(page, '∂L/∂q');
  await cell(dq, 1, 1).focus();
  await expect.poll(() => explainText(page)).toContain('∂L/∂q[2,2] = −∂L/∂q′[2,1]·sin φ + ∂L/∂q′[2,2]·cos φ');
  await expect(figure(page, '∂L/∂q′ (rotated queries)').getByText('reads:')).toBeVisible();
  await noViolations(page, 'RoPE backward, a cell explained');
  await example(page, 'en', 'gqa-8-2');
  const dK = figure(page, '∂L/∂K');
  await expect(dK.locator('.aps-shape')).toHaveText('T_total × n_head·d_k = 3 × 8');
  await cell(dK, 0, 1).focus();
  await expect(page.locator('.aps-explain')).toContainText('adds the gradients of the query heads that read it: 5, 6, 7, 8');
  for (const id of ['alibi-heads', 'window-sink']) {
    await example(page, 'en', id);
    await expect(figure(page, '∂L/∂S (scores) · head 1').or(figure(page, '∂L/∂S (scores)'))).toBeVisible();
    // the masked keys get exactly 0
    const dS = await panelText(page, 'd_scores');
    const mask = id === 'window-sink' ? await panelText(page, 'mask') : null;
    if (mask) mask.forEach((r, i) => r.forEach((v, j) => { if (v === '−∞') expect(dS[i][j], `${i},${j}`).toBe('0'); }));
  }
});

test('n_head changed under grouped-query heads: the mismatch named beside the key/value heads, the settings kept', async ({ page }) => {
  await open(page);
  await example(page, 'en', 'gqa-8-2');
  await expect(figure(page, 'Shared key/value heads')).toBeVisible();
  const nHead = page.getByLabel('Heads (n_head)');
  await nHead.fill('3');
  await expect(page.locator('[data-field="n_kv_head"] .aps-field-error')).toContainText('n_kv_head must divide n_head = 3');
  await expect(page.getByText('Waiting for valid input')).toBeVisible();
  await expect(nHead).toHaveValue('3');
  await expect(page.getByLabel('Key/value heads (0 = n_head)')).toHaveValue('2');
  await nHead.fill('8');
  await expect(page.locator('[data-field="n_kv_head"] .aps-field-error')).toHaveText('');
  await expect(figure(page, 'Shared key/value heads')).toContainText('n_head × n_kv_head = 8 × 2');
});

test('a core message on an option without a message slot (RoPE on an odd head_dim) is shown, not lost', async ({ page }) => {
  await open(page);
  await page.getByLabel('Heads (n_head)').fill('2'); // the identity example's 2 columns: head_dim 1
  await page.getByRole('radiogroup', { name: 'Rotary positions (RoPE)' }).getByRole('radio', { name: 'pairs (2i, 2i+1)' }).click();
  await expect(page.getByText(/RoPE turns pairs of dimensions but head_dim is 1, odd/).first()).toBeVisible();
  await expect(page.getByText('Waiting for valid input')).toBeVisible();
  await page.getByLabel('Heads (n_head)').fill('1');
  await expect(page.getByText('Waiting for valid input')).toBeHidden();
  await expect(page.getByText(/RoPE turns pairs of dimensions/)).toBeHidden();
  await expect(page.getByRole('heading', { name: 'q′ = q rotated', exact: true })).toBeVisible();
});

test('exercises: a windowed query’s keys in English, a rotated q in 中文 with its hints', async ({ page }) => {
  await open(page);
  await page.getByLabel(L.en.exercise, { exact: true }).selectOption('window-keys');
  await expect(page.getByRole('heading', { name: 'Which keys does a windowed query see?' })).toBeVisible();
  await noViolations(page, 'the window exercise before any answer');
  const want = ['0', '-inf', '-inf', '-inf', '0', '0', '0', '0', '-inf', '-inf', '-inf', 'inf'];
  for (const [c, v] of want.entries()) await figure(page, 'Window mask').locator(`td[data-r="7"][data-c="${c}"] input`).fill(v);
  await page.getByRole('button', { name: L.en.check }).click();
  await expect(page.locator('.aps-exercise-result')).toContainText('11 of 12 right');
  await figure(page, 'Window mask').locator('td[data-r="7"][data-c="11"] input').fill('-inf');
  await page.getByRole('button', { name: L.en.check }).click();
  await expect(page.locator('.aps-exercise-result')).toContainText('All 12 right');

  await page.getByRole('button', { name: '中文', exact: true }).click();
  await page.getByLabel(L.zh.exercise, { exact: true }).selectOption('rope-rotate');
  await expect(page.getByRole('heading', { name: '手算旋转一个查询（RoPE）' })).toBeVisible();
  const input = figure(page, 'q′ = 旋转后的 q').locator('td[data-r="1"][data-c="0"] input');
  await input.fill('1'); // q[2,1] before the rotation: a known slip, answered by name
  await page.getByRole('button', { name: L.zh.check }).click();
  await expect(page.locator('.aps-exercise-result')).toContainText('1 是旋转之前的 q[2,1]');
  await input.focus();
  await page.locator('[data-key="ex.hint"]').click();
  await expect.poll(() => explainText(page)).toContain('q′[2,1] = q[2,1]·cos φ − q[2,2]·sin φ');
  await input.fill('0.5403');
  await page.getByRole('button', { name: L.zh.check }).click();
  await expect(page.locator('.aps-exercise-why')).toContainText('cos 1 ≈ 0.5403');
  await noViolations(page, 'the RoPE exercise solved, in 中文');
});
