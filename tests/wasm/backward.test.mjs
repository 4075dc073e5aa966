// backward.test.mjs — the backward pass through web/attention.js: every case of
// tests/golden/attention_grad_cases.json (independent float64 NumPy gradients), the native CLI's
// `backward` and `gradcheck` giving the same bytes as the wasm module, gradcheck agreeing with the
// analytic gradients, exact zeros where the mask hides a key, and errors that name their field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { loadApi, loadGolden, GRAD_GOLDEN_PATH, ROOT } from './load.mjs';
import { match } from './match.mjs';
import { AttentionError } from '../../web/attention.js';

const api = await loadApi();
const golden = await loadGolden(GRAD_GOLDEN_PATH);
const CLI = process.env.AP_CLI ?? join(ROOT, 'build', 'attention');

assert.ok(golden.cases.length >= 10, 'the gradient golden file has too few cases');

for (const c of golden.cases) {
  test(`golden gradients: ${c.name}`, () => {
    const r = api.backward(c.spec);
    match(r, c.expect, c.tolerance ?? 1e-5);
  });

  test(`native and wasm agree byte for byte: backward ${c.name}`, () => {
    const text = JSON.stringify(c.spec);
    const cli = execFileSync(CLI, ['backward', '-'], { input: text, encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(cli.replace(/\r?\n$/, ''), api.module.backward_json(text));
  });
}

test('native and wasm agree byte for byte: gradcheck', () => {
  const text = JSON.stringify({ ...golden.cases.find((c) => c.name === 'multi_head_2_mse').spec, eps: 0.01 });
  const cli = execFileSync(CLI, ['gradcheck', '-'], { input: text, encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(cli.replace(/\r?\n$/, ''), api.module.gradcheck_json(text));
});

test('gradcheck: numeric and analytic agree on every entry (float32, eps 0.01)', () => {
  for (const name of ['identity_2x2_dout', 'causal_4x4', 'kv_cache_base2', 'rectangular']) {
    const { checks } = api.gradcheck({ ...golden.cases.find((c) => c.name === name).spec });
    assert.ok(checks.length > 0);
    for (const ch of checks)
      assert.ok(Math.abs(ch.numeric - ch.analytic) <= 2e-3 * (1 + Math.abs(ch.analytic)),
        `${name} ${ch.name}[${ch.row}][${ch.col}]: analytic ${ch.analytic}, numeric ${ch.numeric}`);
  }
});

test('gradcheck of chosen entries returns exactly those, with relative errors', () => {
  const r = api.gradcheck({ Q: '1 2; 3 4', K: '1 0; 0 1; 1 1', V: '1; 2; 3', base: 1, causal: true,
    check: [{ name: 'K', row: 2, col: 1 }, { name: 'V', row: 0, col: 0 }] });
  assert.deepEqual(r.checks.map((c) => [c.name, c.row, c.col]), [['K', 2, 1], ['V', 0, 0]]);
  for (const c of r.checks) assert.ok(c.rel_error < 1e-3, JSON.stringify(c));
});

test('masked positions get exactly zero gradient', () => {
  const r = api.backward({ x: '1 2; 3 4; 5 6', seed: 3, causal: true, d_out: '1 -1; 2 0.5; -3 1' });
  const mask = r.trace.mask;
  for (const head of r.grads.heads)
    mask.forEach((row, i) => row.forEach((m, j) => {
      if (m === -Infinity) {
        assert.equal(head.scaled[i][j], 0);
        assert.equal(head.scores[i][j], 0);
      }
    }));
});

test('a NaN loss (naive softmax overflow) and NaN checks come back as numbers, not "nan" strings', () => {
  const spec = { Q: '1 0\n0 1', K: '1000 999\n999 1000', V: '1 0\n0 1', softmax: 'naive', scale: false };
  const r = api.backward(spec);
  assert.equal(typeof r.loss, 'number');
  assert.ok(Number.isNaN(r.loss));
  assert.ok(Number.isNaN(r.grads.heads[0].scaled[0][0])); // A is NaN, so is A ⊙ (G − rowsum(G ⊙ A))
  const g = api.gradcheck({ ...spec, check: [{ name: 'Q', row: 0, col: 0 }] });
  assert.ok(Number.isNaN(g.loss));
  for (const k of ['analytic', 'numeric', 'abs_error', 'rel_error']) assert.equal(typeof g.checks[0][k], 'number', k);
  assert.equal(g.checks[0].name, 'Q'); // strings that are names stay strings
  assert.equal(api.trace(spec).options.softmax, 'naive');
});

test('backward errors name their field', () => {
  const base = { Q: '1 0; 0 1', K: '1 0; 0 1', V: '1 2; 3 4' };
  const cases = [
    [{ ...base, d_out: '1 2 3; 4 5 6' }, 'd_out'],
    [{ ...base, d_out: '1 2; 3 4', loss: 'sum' }, 'loss'],
    [{ ...base, loss: 'mse' }, 'target'],
    [{ ...base, d_out: [[1, NaN], [0, 0]] }, 'd_out'],
  ];
  for (const [spec, field] of cases)
    assert.throws(() => api.backward(spec), (e) => e instanceof AttentionError && e.field === field);
});
