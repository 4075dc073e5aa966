// match.mjs — compares the core's answer with a golden "expect" tree, for the golden tests.
// Only the keys present in expect are compared, at any depth. Numbers match when
// |a - b| <= tol·(1 + |b|) (b expected); NaN matches NaN, ±∞ only itself; the strings
// "-inf"/"inf"/"nan" in expect stand for those numbers. empty_rows and overflow_rows match as
// sets of {head, row}.
import assert from 'node:assert/strict';

const SET_KEYS = new Set(['empty_rows', 'overflow_rows']);
const sorted = (rows) => [...rows].sort((a, b) => (a.head ?? 0) - (b.head ?? 0) || (a.row ?? a) - (b.row ?? b));

function num(v) {
  if (v === '-inf') return -Infinity;
  if (v === 'inf') return Infinity;
  if (v === 'nan') return NaN;
  return v;
}

export function match(actual, expected, tol, path = '$') {
  expected = num(expected);
  if (typeof expected === 'number') {
    assert.equal(typeof actual, 'number', `${path}: expected a number, got ${JSON.stringify(actual)}`);
    if (Number.isNaN(expected)) return assert.ok(Number.isNaN(actual), `${path}: expected NaN, got ${actual}`);
    if (!Number.isFinite(expected)) return assert.equal(actual, expected, `${path}: expected ${expected}, got ${actual}`);
    assert.ok(
      Math.abs(actual - expected) <= tol * (1 + Math.abs(expected)),
      `${path}: got ${actual}, expected ${expected} (tolerance ${tol})`,
    );
    return;
  }
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: expected an array, got ${JSON.stringify(actual)}`);
    assert.equal(actual.length, expected.length, `${path}: length`);
    expected.forEach((e, i) => match(actual[i], e, tol, `${path}[${i}]`));
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    assert.ok(actual !== null && typeof actual === 'object', `${path}: expected an object, got ${JSON.stringify(actual)}`);
    for (const [k, e] of Object.entries(expected)) {
      assert.ok(k in actual, `${path}.${k}: missing`);
      if (SET_KEYS.has(k) && Array.isArray(e) && Array.isArray(actual[k])) match(sorted(actual[k]), sorted(e), tol, `${path}.${k}`);
      else match(actual[k], e, tol, `${path}.${k}`);
    }
    return;
  }
  assert.equal(actual, expected, path);
}

