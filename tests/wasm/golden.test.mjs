// golden.test.mjs — every case of tests/golden/attention_cases.json through web/attention.js.
//
// File format: {"cases":[{"name", "spec", "expect":{...}, "tolerance"}]}, non-finite numbers as
// the strings "-inf" / "inf" / "nan". Only the keys present in expect are compared, at any depth.
// Numbers match when |a - b| <= tol·(1 + |b|) (b expected); NaN matches NaN, ±∞ only itself.
// empty_rows and overflow_rows match as sets of {head, row} (tests/golden/README.md).
// expect is matched against the trace object; for a case that must fail it holds "ok": false
// and any of "error", "field", "row", "column", matched against the thrown AttentionError.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadApi, loadGolden } from './load.mjs';
import { AttentionError } from '../../web/attention.js';
import { match } from './match.mjs';

const api = await loadApi();
const golden = await loadGolden();
const DEFAULT_TOLERANCE = 1e-6;

assert.ok(Array.isArray(golden.cases) && golden.cases.length > 0, 'golden file has no cases');

for (const c of golden.cases) {
  test(`golden: ${c.name}`, () => {
    const tol = c.tolerance ?? DEFAULT_TOLERANCE;
    const wantsError = c.expect?.ok === false;
    let trace;
    let error;
    try {
      trace = api.trace(c.spec);
    } catch (e) {
      if (!(e instanceof AttentionError)) throw e;
      error = e;
    }
    if (wantsError) {
      assert.ok(error, `expected an error, got a trace`);
      const { ok, ...rest } = c.expect;
      match({ error: error.message, field: error.field, row: error.row, column: error.column }, rest, tol);
    } else {
      assert.ok(!error, `unexpected error: ${error?.message} (field ${error?.field}, row ${error?.row}, column ${error?.column})`);
      const { ok, trace: nested, ...rest } = c.expect ?? {};
      match(trace, nested ?? rest, tol);
    }
  });
}
