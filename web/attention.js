// attention.js — the JavaScript API of Attention Playground, for course pages and Node.
//
// What it is: a thin wrapper over the C++ attention core compiled to WebAssembly
// (web/gen/attention_core.mjs + .wasm). The core speaks JSON text (src/api/api.h); this file turns
// JS values into that JSON and the answers back into plain JS objects, and turns the core's
// {"ok":false,...} answers into a thrown AttentionError. It adds no maths of its own: every
// number you get back was computed by the same C++ code as the native CLI, bit for bit.
//
//   import { loadAttention } from './attention.js';
//   const api = await loadAttention();
//   const t = api.trace({ x: '1 0; 0 1', W_q: '1 0; 0 1', W_k: '1 0; 0 1', W_v: '1 0; 0 1' });
//   t.heads[0].weights   // [[0.66976154, 0.33023846], [0.33023846, 0.66976154]]
//
// Conventions (docs/api.md has the full reference, web/attention.d.ts the types):
//   - Names are the core's: trace keys stay snake_case as the JSON gives them (weight_row_sums,
//     empty_rows, overflow_rows, …), one name per concept in C++, JS and the page.
//   - Matrices come back as number[][]; the core's "-inf" / "inf" / "nan" strings become
//     -Infinity / Infinity / NaN. Numbers are float32 values.
//   - NaN or ±Infinity in an input matrix is sent as "nan" / "inf" / "-inf", so the core refuses
//     it with the cell's 1-based row and column instead of JSON turning it into null.
//   - Every call is synchronous once loadAttention() has resolved. Errors throw AttentionError
//     with .field, .row, .column (1-based; 0 when not about one cell).
// The tiny GPT has its own wrapper and module (web/gpt.js, web/gen/gpt_core.mjs): loadGpt and
// GptError are exported here too, so that one import serves both, but gpt.js is fetched only when
// loadGpt() is called; the stepper's page does not load it.
//
// Limits (the core's): each dimension ≤ 1024, n_head·T·T_total ≤ 262,144, parsed matrix text
// ≤ 1024 × 1024. Calls run on the calling thread: a trace near the limits takes a noticeable
// time and builds a large object, so keep course examples small or run them in a worker.

import { readAnswer } from './common/non-finite.js';

export { GptError } from './common/gpt-error.js';

/**
 * Loads the tiny GPT (web/gpt.js, which this imports now, and its wasm module) and returns its
 * API: see gpt.js and gpt.d.ts. Options as for loadAttention ({wasmBinary} in Node).
 */
export async function loadGpt(options = {}) {
  const gpt = await import('./gpt.js');
  return gpt.loadGpt(options);
}

/** Thrown for every input the core refuses: bad shapes, bad numbers, bad options, limits. */
export class AttentionError extends Error {
  /**
   * @param {string} message the core's message, e.g. "K has 3 columns but Q has 4"
   * @param {{field?: string, row?: number, column?: number}} [where]
   */
  constructor(message, { field = '', row = 0, column = 0 } = {}) {
    super(message);
    this.name = 'AttentionError';
    /** The input at fault ("x", "W_q", "K", "n_head", "text", …), or "" if none. */
    this.field = field;
    /** 1-based row of the bad cell, 0 if the error is not about one cell. */
    this.row = row;
    /** 1-based column of the bad cell (counts numbers, not characters), 0 if none. */
    this.column = column;
  }
}

const MATRIX_KEYS = ['x', 'W_q', 'W_k', 'W_v', 'W_o', 'Q', 'K', 'V', 'd_out', 'target', 'W_dkv', 'W_uk', 'W_uv', 'W_kr', 'W_qr'];
const VECTOR_KEYS = ['b_q', 'b_k', 'b_v', 'b_o'];

// A number as the core's JSON takes it: non-finite numbers become the core's strings.
function cell(v) {
  if (typeof v !== 'number' || Number.isFinite(v)) return v;
  if (Number.isNaN(v)) return 'nan';
  return v > 0 ? 'inf' : '-inf';
}

function isTypedArray(v) {
  return ArrayBuffer.isView(v) && !(v instanceof DataView);
}

function toCells(row) {
  return Array.from(row, cell);
}

// One matrix in any accepted form → number[][] (with non-finite cells as strings) or a string.
// Anything else is passed through unchanged, so the core reports it under its own field name.
function toMatrix(m, field) {
  if (typeof m === 'string') return m;
  if (Array.isArray(m)) return m.map((row) => (Array.isArray(row) || isTypedArray(row) ? toCells(row) : row));
  if (m && typeof m === 'object' && 'data' in m && 'rows' in m && 'cols' in m) {
    const { rows, cols, data } = m;
    const n = data == null ? -1 : data.length;
    if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 0 || cols < 0 || n !== rows * cols) {
      throw new AttentionError(
        `${field} has ${n < 0 ? 'no' : n} numbers in data but rows × cols is ${rows} × ${cols}`,
        { field },
      );
    }
    const out = new Array(rows);
    for (let i = 0; i < rows; i++) {
      const r = new Array(cols);
      for (let j = 0; j < cols; j++) r[j] = cell(data[i * cols + j]);
      out[i] = r;
    }
    return out;
  }
  return m;
}

function toVector(v) {
  if (Array.isArray(v) || isTypedArray(v)) return toCells(v);
  return v;
}

// Scalar fields that are numbers (a NaN loss after a naive-softmax overflow comes as "nan").
const NUMERIC_FIELDS = new Set(['loss', 'analytic', 'numeric', 'abs_error', 'rel_error', 'scale_factor', 'eps']);



/**
 * Parses a JSON answer of the core; throws AttentionError for {"ok":false,...}.
 * @param {string} text
 */
function answer(text) {
  return readAnswer(text, {
    core: 'attention core',
    numericFields: NUMERIC_FIELDS,
    failure: (r) => new AttentionError(r && typeof r.error === 'string' ? r.error : 'attention core failed', {
      field: r?.field ?? '',
      row: r?.row ?? 0,
      column: r?.column ?? 0,
    }),
  });
}

function toSpecText(spec) {
  if (typeof spec === 'string') return spec; // already JSON text
  if (spec == null || typeof spec !== 'object' || Array.isArray(spec)) {
    throw new TypeError('trace(spec): spec must be an object (or JSON text)');
  }
  const out = { ...spec };
  for (const k of MATRIX_KEYS) if (k in out) out[k] = toMatrix(out[k], k);
  for (const k of VECTOR_KEYS) if (k in out) out[k] = toVector(out[k]);
  return JSON.stringify(out);
}

const inNode = () => typeof process === 'object' && typeof process.versions?.node === 'string' && typeof window === 'undefined';

/** What to pass in Node, where the web build cannot fetch its .wasm: the file's own path in it. */
function nodeWithoutBytes() {
  const file = decodeURIComponent(new URL('./gen/attention_core.wasm', import.meta.url).pathname);
  return `loadAttention() in Node needs the core's bytes: pass { wasmBinary }, e.g. ` +
    `loadAttention({ wasmBinary: await readFile('${file}') }) with readFile from 'node:fs/promises' ` +
    `(the file is built by scripts/build wasm)`;
}

/**
 * Loads the wasm core and returns the API. Call once and keep the result.
 * @param {{wasmBinary?: ArrayBuffer|Uint8Array, locateFile?: (path: string, prefix: string) => string}} [options]
 *   passed to the Emscripten factory. In Node give wasmBinary (the bytes of
 *   web/gen/attention_core.wasm): the web build cannot fetch files there. Without it (nor
 *   instantiateWasm) Node gets an AttentionError (field 'wasmBinary') saying what to pass.
 */
export async function loadAttention(options = {}) {
  if (inNode() && !options.wasmBinary && !options.instantiateWasm) throw new AttentionError(nodeWithoutBytes(), { field: 'wasmBinary' });
  const { default: createModule } = await import('./gen/attention_core.mjs');
  const M = await createModule({ ...options });

  return {
    /** The core's version, e.g. "0.1.0". */
    version: M.version(),

    /** Runs attention on a spec and returns the whole trace (see attention.d.ts, docs/api.md). */
    trace(spec) {
      return answer(M.trace_json(toSpecText(spec))).trace;
    },

    /**
     * The backward pass: spec = a trace spec plus the upstream gradient (`d_out` matrix, or
     * `loss: 'sum'` (default) / `loss: 'mse'` with `target`). Returns {trace, loss, grads}, where
     * grads has ∂L/∂ of every forward value under the forward's name (grads.W_q, grads.heads[h].weights…).
     */
    backward(spec) {
      const { trace, loss, grads } = answer(M.backward_json(toSpecText(spec)));
      return { trace, loss, grads };
    },

    /**
     * Checks backward's gradients by central finite differences: spec = a backward spec plus
     * `check: [{name, row, col}]` (default: every input entry, ≤ 1024) and `eps` (default 0.01).
     * Returns {loss, eps, checks: [{name, row, col, analytic, numeric, abs_error, rel_error}]}.
     */
    gradcheck(spec) {
      const { loss, eps, checks } = answer(M.gradcheck_json(toSpecText(spec)));
      return { loss, eps, checks };
    },

    /** Parses matrix text ("1 0; 0 1", "[[1, 0], [0, 1]]", NumPy print, TSV) → number[][]. */
    parseMatrix(text) {
      if (typeof text !== 'string') throw new TypeError('parseMatrix(text): text must be a string');
      return answer(M.parse_matrix_json(text)).matrix;
    },

    /** A seeded rows × cols matrix, uniform in [-bound, bound) (bound defaults to 1/√cols). */
    randomMatrix(rows, cols, { seed, bound } = {}) {
      const spec = { rows, cols };
      if (seed !== undefined) spec.seed = seed;
      if (bound !== undefined) spec.bound = cell(bound);
      return answer(M.random_matrix_json(JSON.stringify(spec))).matrix;
    },

    /** The (T, T + base) causal mask: 0 where a query may look, -Infinity where it may not. */
    causalMask(T, { base, mask } = {}) {
      const spec = { T };
      if (base !== undefined) spec.base = base;
      if (mask !== undefined) spec.mask = mask;
      return answer(M.causal_mask_json(JSON.stringify(spec))).mask;
    },

    /** The row softmax alone: {weights, empty_rows, overflow_rows}. */
    softmax(rows, { softmax } = {}) {
      const spec = { x: toMatrix(rows, 'x') };
      if (softmax !== undefined) spec.softmax = softmax;
      const { weights, empty_rows, overflow_rows } = answer(M.softmax_json(JSON.stringify(spec)));
      return { weights, empty_rows, overflow_rows };
    },

    /** The Emscripten module itself (raw JSON functions, heap_bytes_in_use). For tests and tools. */
    module: M,
  };
}
