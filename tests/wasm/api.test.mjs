// api.test.mjs — web/attention.js over the real wasm core, in Node.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { loadApi } from './load.mjs';
import { AttentionError } from '../../web/attention.js';

const api = await loadApi();

const I2 = [[1, 0], [0, 1]];
// softmax([1/√2, 0]) in exact arithmetic; the core's float32 result is within 1e-6 of it.
const E = Math.exp(Math.SQRT1_2);
const W_DIAG = E / (E + 1); // 0.66976…
const W_OFF = 1 / (E + 1); // 0.33023…

function close(actual, expected, tol = 1e-6, path = '') {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: expected an array, got ${JSON.stringify(actual)}`);
    assert.equal(actual.length, expected.length, `${path}: length`);
    expected.forEach((e, i) => close(actual[i], e, tol, `${path}[${i}]`));
    return;
  }
  if (Number.isNaN(expected)) return assert.ok(Number.isNaN(actual), `${path}: expected NaN, got ${actual}`);
  if (!Number.isFinite(expected)) return assert.equal(actual, expected, path);
  assert.ok(Math.abs(actual - expected) <= tol * (1 + Math.abs(expected)), `${path}: ${actual} vs ${expected}`);
}

function throwsAttention(fn, expected) {
  let caught;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught, 'expected an AttentionError, nothing was thrown');
  assert.ok(caught instanceof AttentionError, `expected an AttentionError, got ${caught?.name}: ${caught?.message}`);
  assert.ok(caught instanceof Error);
  assert.equal(caught.name, 'AttentionError');
  for (const [k, v] of Object.entries(expected)) {
    if (v instanceof RegExp) assert.match(caught[k], v, `.${k}`);
    else assert.equal(caught[k], v, `.${k} (message: ${caught.message})`);
  }
  return caught;
}

describe('loadAttention', () => {
  test('version is a semantic version string', () => {
    assert.match(api.version, /^\d+\.\d+\.\d+/);
  });
  test('the raw module is exposed with the contract functions', () => {
    for (const f of ['trace_json', 'parse_matrix_json', 'random_matrix_json', 'causal_mask_json', 'softmax_json', 'version', 'heap_bytes_in_use']) {
      assert.equal(typeof api.module[f], 'function', f);
    }
  });
});

describe('trace', () => {
  test('identity 2x2 (the tutorial example): weights 0.6698/0.3302, out = weights', () => {
    const t = api.trace({ x: I2, W_q: I2, W_k: I2, W_v: I2, W_o: I2 });
    assert.equal(t.mode, 'x');
    assert.equal(t.T, 2);
    assert.equal(t.T_total, 2);
    assert.equal(t.base, 0);
    assert.equal(t.n_head, 1);
    assert.equal(t.d_model, 2);
    assert.equal(t.head_dim, 2);
    assert.equal(t.d_v, 2);
    assert.equal(t.d_out, 2);
    close(t.scale_factor, Math.SQRT1_2);
    assert.equal(t.heads.length, 1);
    const h = t.heads[0];
    close(h.scores, I2);
    close(h.scaled, [[Math.SQRT1_2, 0], [0, Math.SQRT1_2]]);
    close(h.weights, [[W_DIAG, W_OFF], [W_OFF, W_DIAG]]);
    assert.equal(h.weights[0][0].toFixed(4), '0.6698');
    assert.equal(h.weights[0][1].toFixed(4), '0.3302');
    close(h.weight_row_sums, [1, 1]);
    assert.deepEqual(t.out, h.weights);
    assert.deepEqual(t.concat, h.weights);
    assert.deepEqual(h.context, h.weights);
    assert.deepEqual(t.empty_rows, []);
    assert.deepEqual(t.overflow_rows, []);
    assert.deepEqual(t.warnings, []);
    assert.deepEqual(t.mask, [[0, 0], [0, 0]]);
  });

  test('Q, K, V given directly: mode "qkv", out = concat = weights when V = I', () => {
    const t = api.trace({ Q: I2, K: I2, V: I2 });
    assert.equal(t.mode, 'qkv');
    close(t.heads[0].weights, [[W_DIAG, W_OFF], [W_OFF, W_DIAG]]);
    assert.deepEqual(t.out, t.heads[0].weights);
  });

  test('every matrix form gives the same trace', () => {
    const forms = [
      I2,
      [new Float32Array([1, 0]), new Float32Array([0, 1])],
      { rows: 2, cols: 2, data: new Float32Array([1, 0, 0, 1]) },
      { rows: 2, cols: 2, data: [1, 0, 0, 1] },
      '1 0; 0 1',
      '[[1, 0], [0, 1]]',
    ];
    const want = api.trace({ Q: I2, K: I2, V: I2 });
    for (const m of forms) assert.deepEqual(api.trace({ Q: m, K: m, V: m }), want, JSON.stringify(m));
    // and the spec as JSON text
    assert.deepEqual(api.trace(JSON.stringify({ Q: I2, K: I2, V: I2 })), want);
  });

  test('vectors: number[], Float32Array or text', () => {
    const a = api.trace({ x: I2, W_q: I2, W_k: I2, W_v: I2, b_v: [1, 2] });
    const b = api.trace({ x: I2, W_q: I2, W_k: I2, W_v: I2, b_v: new Float32Array([1, 2]) });
    const c = api.trace({ x: I2, W_q: I2, W_k: I2, W_v: I2, b_v: '1 2' });
    assert.deepEqual(a, b);
    assert.deepEqual(a, c);
    close(a.heads[0].v, [[2, 2], [1, 3]]);
  });

  test('the spec object is not modified', () => {
    const spec = { Q: [new Float32Array([1, 0]), new Float32Array([0, 1])], K: I2, V: I2 };
    const copy = { ...spec };
    api.trace(spec);
    assert.deepEqual(spec, copy);
    assert.ok(spec.Q[0] instanceof Float32Array);
  });

  test('causal: −∞ mask above the diagonal comes back as -Infinity, weights lower-triangular', () => {
    const x = [[1, 0], [0, 1], [1, 1], [0.5, -0.5]];
    const t = api.trace({ x, seed: 3, causal: true });
    assert.equal(t.T, 4);
    for (let i = 0; i < 4; i++) {
      for (let j = 0; j < 4; j++) {
        assert.equal(t.mask[i][j], j > i ? -Infinity : 0, `mask[${i}][${j}]`);
        if (j > i) {
          assert.equal(t.heads[0].masked[i][j], -Infinity);
          assert.equal(t.heads[0].weights[i][j], 0);
        }
      }
    }
    close(t.heads[0].weight_row_sums, [1, 1, 1, 1], 1e-6);
    assert.equal(t.heads[0].weights[0][0], 1);
    // random weights are reported among the inputs used
    for (const k of ['W_q', 'W_k', 'W_v']) {
      assert.equal(t.inputs[k].length, 2, k);
      assert.equal(t.inputs[k][0].length, 2, k);
    }
  });

  test('the seed fills W_q, W_k, W_v reproducibly, within ±1/√head_dim', () => {
    const x = [[1, 2, 3, 4], [0, 1, 0, 1]];
    const a = api.trace({ x, seed: 11, n_head: 2 });
    const b = api.trace({ x, seed: 11, n_head: 2 });
    const c = api.trace({ x, seed: 12, n_head: 2 });
    assert.deepEqual(a, b);
    assert.notDeepEqual(a.inputs.W_q, c.inputs.W_q);
    const bound = 1 / Math.sqrt(a.head_dim);
    for (const row of a.inputs.W_q) for (const v of row) assert.ok(Math.abs(v) <= bound, String(v));
    assert.equal(a.n_head, 2);
    assert.equal(a.head_dim, 2);
    assert.equal(a.heads.length, 2);
    assert.equal(a.concat[0].length, 4);
  });

  test('inclusive mask: row 1 sees nothing → zeros, reported in empty_rows with a warning', () => {
    const x = [[1, 0], [0, 1], [1, 1]];
    const t = api.trace({ x, W_q: I2, W_k: I2, W_v: I2, causal: true, mask: 'inclusive' });
    assert.equal(t.options.mask, 'inclusive');
    assert.deepEqual(t.mask[0], [-Infinity, -Infinity, -Infinity]);
    assert.deepEqual(t.heads[0].weights[0], [0, 0, 0]);
    assert.deepEqual(t.heads[0].context[0], [0, 0]);
    assert.equal(t.heads[0].weight_row_sums[0], 0);
    assert.equal(t.empty_rows.length, 1);
    assert.equal(t.empty_rows[0].head, 0);
    assert.ok(t.warnings.length >= 1);
    assert.ok(t.heads[0].weights.flat().every((v) => !Number.isNaN(v)));
  });

  test('naive softmax at 1000 gives NaN, reported in overflow_rows; stable does not', () => {
    const spec = { Q: I2, K: [[1000, 999], [999, 1000]], V: I2, scale: false };
    const naive = api.trace({ ...spec, softmax: 'naive' });
    assert.ok(Number.isNaN(naive.heads[0].weights[0][0]));
    assert.ok(Number.isNaN(naive.out[0][0]));
    assert.equal(naive.overflow_rows.length, 2);
    assert.ok(naive.warnings.length >= 1);
    const stable = api.trace({ ...spec, softmax: 'stable' });
    close(stable.heads[0].weights, [[1 / (1 + Math.exp(-1)), 1 / (1 + Math.E)], [1 / (1 + Math.E), 1 / (1 + Math.exp(-1))]]);
    assert.deepEqual(stable.overflow_rows, []);
    assert.deepEqual(stable.warnings, []);
  });

  test('KV cache: base 2 → T = T_total − 2 queries, shapes (T, T_total)', () => {
    const x = [[1, 0], [0, 1], [1, 1], [2, 0]];
    const t = api.trace({ x, W_q: I2, W_k: I2, W_v: I2, causal: true, base: 2 });
    assert.equal(t.base, 2);
    assert.equal(t.T_total, 4);
    assert.equal(t.T, 2);
    assert.deepEqual(t.mask, [[0, 0, 0, -Infinity], [0, 0, 0, 0]]);
    assert.equal(t.heads[0].q.length, 2);
    assert.deepEqual(t.heads[0].q, [[1, 1], [2, 0]]);
    assert.equal(t.heads[0].k.length, 4);
    assert.equal(t.heads[0].weights[0].length, 4);
  });
});

describe('trace errors', () => {
  test('shape mismatch: AttentionError with the core message and field', () => {
    throwsAttention(
      () => api.trace({ Q: [[1, 0, 0, 0], [0, 1, 0, 0]], K: [[1, 0, 0], [0, 1, 0]], V: I2 }),
      { message: 'K has 3 columns but Q has 4', field: 'K', row: 0, column: 0 },
    );
  });

  test('NaN and ±Infinity in input are reported by cell (1-based), not turned into null', () => {
    throwsAttention(() => api.trace({ Q: [[1, 0], [NaN, 1]], K: I2, V: I2 }), { field: 'Q', row: 2, column: 1 });
    throwsAttention(() => api.trace({ Q: I2, K: [new Float32Array([1, Infinity]), new Float32Array([0, 1])], V: I2 }), { field: 'K', row: 1, column: 2 });
    throwsAttention(() => api.trace({ Q: I2, K: I2, V: { rows: 2, cols: 2, data: [1, 0, 0, -Infinity] } }), { field: 'V', row: 2, column: 2 });
    throwsAttention(() => api.trace({ x: I2, W_q: I2, W_k: I2, W_v: I2, b_q: [0, NaN] }), { field: 'b_q', column: 2 });
  });

  test('bad matrix text inside a spec names the matrix and the cell', () => {
    throwsAttention(() => api.trace({ Q: I2, K: '1 0; 0 zz', V: I2 }), { field: 'K', row: 2, column: 2 });
  });

  test('{rows, cols, data} of the wrong length is refused before the core', () => {
    throwsAttention(() => api.trace({ Q: { rows: 2, cols: 2, data: [1, 2, 3] }, K: I2, V: I2 }), { field: 'Q', row: 0, column: 0 });
  });

  test('bad options name the option', () => {
    throwsAttention(() => api.trace({ Q: I2, K: I2, V: I2, softmax: 'fast' }), { field: 'softmax' });
    throwsAttention(() => api.trace({ Q: I2, K: I2, V: I2, mask: 'sideways' }), { field: 'mask' });
    throwsAttention(() => api.trace({ x: [[1, 2, 3]], seed: 1, n_head: 2 }), { field: 'n_head' });
  });

  test('limits: a dimension above 1024 and n_head·T·T_total above 262,144', () => {
    throwsAttention(() => api.trace({ Q: [new Array(1025).fill(0)], K: [new Array(1025).fill(0)], V: [[1]] }), { message: /1024/ });
    const x = Array.from({ length: 513 }, () => [0, 0]);
    throwsAttention(() => api.trace({ x, seed: 1 }), { message: /262144/, field: 'n_head' });
  });

  test('limits: a trace at the limit (one head, 512 × 512) still works', () => {
    const x = Array.from({ length: 512 }, (_, i) => [Math.sin(i), Math.cos(i)]);
    const t = api.trace({ x, seed: 1, causal: true });
    assert.equal(t.heads[0].weights.length, 512);
    assert.equal(t.heads[0].weights[511].length, 512);
    assert.equal(t.heads[0].weights[0][1], 0);
  });

  test('unknown keys are refused by name (no silent typos)', () => {
    throwsAttention(() => api.trace({ Q: I2, K: I2, V: I2, casual: true }), { message: 'unknown key "casual" in the spec', field: 'casual' });
  });

  test('x mode and qkv mode do not mix', () => {
    throwsAttention(() => api.trace({ x: I2, Q: I2, K: I2, V: I2, W_q: I2, W_k: I2, W_v: I2 }), { field: 'Q' });
    throwsAttention(() => api.trace({ Q: I2, K: I2, V: I2, seed: 1 }), { field: 'seed' });
  });

  test('not JSON, or not an object: refused', () => {
    throwsAttention(() => api.trace('{"Q": [[1]]'), { field: 'spec' });
    assert.throws(() => api.trace(42), TypeError);
  });
});

describe('parseMatrix', () => {
  const formats = {
    'lines and spaces': '1 0\n0 1',
    'commas and semicolons': '1, 0; 0, 1',
    'spreadsheet tabs': '1\t0\r\n0\t1\r\n',
    JSON: '[[1, 0], [0, 1]]',
    'NumPy print': '[[1. 0.]\n [0. 1.]]',
    'NumPy repr': 'array([[1., 0.], [0., 1.]], dtype=float32)',
  };
  for (const [name, text] of Object.entries(formats)) {
    test(`reads ${name}`, () => assert.deepEqual(api.parseMatrix(text), I2));
  }
  test('a single bracketed row', () => assert.deepEqual(api.parseMatrix('[1, 2]'), [[1, 2]]));
  test('number syntax: .5, 1e-3, +2, -0.5; float32 written as its shortest text', () => {
    const m = api.parseMatrix('.5 1e-3 +2 -0.5 0.1');
    // 1e-3 and 0.1 are float32 values, written as the shortest text that reads back to them:
    // JS reads that text as the nearest double, and Math.fround gives the float32 back.
    assert.deepEqual(m, [[0.5, 0.001, 2, -0.5, 0.1]]);
    assert.equal(Math.fround(m[0][4]), Math.fround(0.1));
  });
  test('errors carry the 1-based row and column (numbers, not characters)', () => {
    throwsAttention(() => api.parseMatrix('1 2\n3 4 5'), { row: 2 });
    throwsAttention(() => api.parseMatrix('1 2; 3 abc'), { row: 2, column: 2 });
    throwsAttention(() => api.parseMatrix('1 nan'), { row: 1, column: 2 });
    throwsAttention(() => api.parseMatrix('inf 1'), { row: 1, column: 1 });
    throwsAttention(() => api.parseMatrix('1 1e39'), { row: 1, column: 2 });
    throwsAttention(() => api.parseMatrix('[[1, 2], [3, 4]'), {});
    throwsAttention(() => api.parseMatrix(''), {});
  });
  test('limit 1024 × 1024', () => {
    assert.equal(api.parseMatrix(new Array(1024).fill('0').join(' ')).length, 1);
    throwsAttention(() => api.parseMatrix(new Array(1025).fill('0').join(' ')), { message: /1024/ });
    throwsAttention(() => api.parseMatrix(new Array(1025).fill('0').join('\n')), { message: /1024/ });
  });
  test('a non-string is a TypeError', () => assert.throws(() => api.parseMatrix([[1]]), TypeError));
});

describe('randomMatrix', () => {
  test('same seed, same numbers; another seed, other numbers', () => {
    const a = api.randomMatrix(3, 4, { seed: 7 });
    assert.deepEqual(api.randomMatrix(3, 4, { seed: 7 }), a);
    assert.notDeepEqual(api.randomMatrix(3, 4, { seed: 8 }), a);
    assert.equal(a.length, 3);
    assert.equal(a[0].length, 4);
  });
  test('bound defaults to 1/√cols and can be set', () => {
    for (const v of api.randomMatrix(8, 4, { seed: 1 }).flat()) assert.ok(v >= -0.5 && v < 0.5, String(v));
    const m = api.randomMatrix(8, 8, { seed: 1, bound: 3 }).flat();
    for (const v of m) assert.ok(v >= -3 && v < 3, String(v));
    assert.ok(m.some((v) => Math.abs(v) > 1), 'bound 3 should give some values above 1');
  });
  test('bad sizes are refused', () => {
    throwsAttention(() => api.randomMatrix(0, 2, { seed: 1 }), {});
    throwsAttention(() => api.randomMatrix(2, 2000, { seed: 1 }), {});
    throwsAttention(() => api.randomMatrix(2, 2, { seed: -1 }), { field: 'seed' });
  });
});

describe('causalMask', () => {
  test('strict (default): 0 on and below the diagonal, −∞ above', () => {
    const m = api.causalMask(4);
    assert.deepEqual(m, [
      [0, -Infinity, -Infinity, -Infinity],
      [0, 0, -Infinity, -Infinity],
      [0, 0, 0, -Infinity],
      [0, 0, 0, 0],
    ]);
  });
  test('inclusive: the diagonal is masked too, row 1 sees nothing', () => {
    assert.deepEqual(api.causalMask(3, { mask: 'inclusive' }), [
      [-Infinity, -Infinity, -Infinity],
      [0, -Infinity, -Infinity],
      [0, 0, -Infinity],
    ]);
  });
  test('base shifts the queries: (T, T + base)', () => {
    assert.deepEqual(api.causalMask(2, { base: 2 }), [
      [0, 0, 0, -Infinity],
      [0, 0, 0, 0],
    ]);
  });
  test('bad T or mask is refused', () => {
    throwsAttention(() => api.causalMask(-1), {});
    throwsAttention(() => api.causalMask(2, { mask: 'both' }), { field: 'mask' });
  });
});

describe('softmax', () => {
  test('stable and naive agree on small inputs', () => {
    const rows = [[1, 2, 3], [0, 0, 0]];
    const s = api.softmax(rows);
    const n = api.softmax(rows, { softmax: 'naive' });
    close(s.weights, n.weights, 1e-6);
    close(s.weights[1], [1 / 3, 1 / 3, 1 / 3]);
    assert.deepEqual(s.empty_rows, []);
    assert.deepEqual(s.overflow_rows, []);
  });
  test('at 1000: stable is fine, naive overflows to NaN and reports the row', () => {
    const rows = [[1000, 999], [1, 0]];
    const s = api.softmax(rows, { softmax: 'stable' });
    close(s.weights, [[1 / (1 + Math.exp(-1)), 1 / (1 + Math.E)], [1 / (1 + Math.exp(-1)), 1 / (1 + Math.E)]]);
    assert.deepEqual(s.overflow_rows, []);
    const n = api.softmax(rows, { softmax: 'naive' });
    assert.ok(Number.isNaN(n.weights[0][0]) && Number.isNaN(n.weights[0][1]));
    close(n.weights[1], s.weights[1]);
    assert.equal(n.overflow_rows.length, 1);
  });
  test('a row of −∞ becomes zeros and is reported as empty', () => {
    const r = api.softmax([[-Infinity, -Infinity], [0, -Infinity]]);
    assert.deepEqual(r.weights, [[0, 0], [1, 0]]);
    assert.equal(r.empty_rows.length, 1);
  });
  test('a bad option is refused', () => {
    throwsAttention(() => api.softmax([[1]], { softmax: 'fast' }), { field: 'softmax' });
  });
});
