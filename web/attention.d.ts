// attention.d.ts — types of web/attention.js, the JavaScript API of Attention Playground.
// Hand-written; the names are the core's (src/api/api.h), snake_case where the JSON has it.
// Reference with examples: docs/api.md.
// The tiny GPT's API (loadGpt, GptError and their types) is in gpt.d.ts, re-exported here.

export * from './gpt.js';

/**
 * A matrix as the API accepts it:
 * - `number[][]`: rows of numbers, e.g. `[[1, 0], [0, 1]]`;
 * - an array of `Float32Array` (or other typed array) rows;
 * - `{rows, cols, data}` with `data` row-major, `data.length === rows * cols`;
 * - text for the core's matrix parser: `"1 0; 0 1"`, `"1 0\n0 1"`, `"[[1, 0], [0, 1]]"`,
 *   NumPy's print or repr, a spreadsheet's tab-separated copy.
 *
 * NaN and ±Infinity cells are sent as `"nan"` / `"inf"` / `"-inf"` so the core refuses them with
 * the cell's row and column (an {@link AttentionError}); input matrices must be finite.
 * Numbers are rounded to float32. A flat `number[]` is read as one row.
 */
export type MatrixInput =
  | number[][]
  | ArrayLike<number>[]
  | { rows: number; cols: number; data: ArrayLike<number> }
  | string;

/** A bias vector: `[1, 2]`, a `Float32Array`, or text `"1 2"`. */
export type VectorInput = number[] | ArrayLike<number> | string;

/** A matrix as the API returns it: rows of float32 values; masked cells are `-Infinity`. */
export type Matrix = number[][];

/**
 * The input of {@link Attention.trace}. All keys are optional, but one of two modes is needed:
 * - **x mode**: `x` (T_total × d_model) with `W_q`, `W_k`, `W_v` (or a `seed` for the missing ones);
 *   Q = x[base:]·W_q + b_q, K = x·W_k + b_k, V = x·W_v + b_v.
 * - **qkv mode**: `Q` (T × n_head·head_dim), `K` (T_total × n_head·head_dim), `V` (T_total × n_head·d_v).
 * Unknown keys are refused (field = the key).
 */
export interface TraceSpec {
  /** Token vectors, T_total × d_model (the cached rows first when base > 0). */
  x?: MatrixInput;
  /** Query weights, d_model × n_head·head_dim. */
  W_q?: MatrixInput;
  /** Key weights, d_model × n_head·head_dim. */
  W_k?: MatrixInput;
  /** Value weights, d_model × n_head·d_v. */
  W_v?: MatrixInput;
  /** Output projection, n_head·d_v × d_out. Without it, out = concat. */
  W_o?: MatrixInput;
  /** Query bias, n_head·head_dim values. */
  b_q?: VectorInput;
  /** Key bias, n_head·head_dim values. */
  b_k?: VectorInput;
  /** Value bias, n_head·d_v values. */
  b_v?: VectorInput;
  /** Output bias, d_out values; needs W_o. */
  b_o?: VectorInput;
  /** Queries, T × n_head·head_dim (qkv mode). */
  Q?: MatrixInput;
  /** Keys, T_total × n_head·head_dim, T_total = T + base (qkv mode). */
  K?: MatrixInput;
  /** Values, T_total × n_head·d_v (qkv mode). */
  V?: MatrixInput;
  /**
   * x mode only: integer 0 … 2^53 that fills the missing W_q, W_k, W_v (square, d_model × d_model)
   * uniform in ±1/√head_dim. The same seed gives the same numbers natively and in wasm.
   */
  seed?: number;
  /** Number of heads (default 1); must divide the columns of Q (W_q) and V (W_v). */
  n_head?: number;
  /** Apply the causal mask (default false). */
  causal?: boolean;
  /**
   * Which causal mask (default "strict"): "strict" masks key j where j > i + base (each query
   * sees itself and the past); "inclusive" masks j >= i + base (the tutorials' exercise: queries
   * lose themselves and the first query of the first step sees nothing).
   */
  mask?: 'strict' | 'inclusive';
  /** KV-cache offset (default 0): cached positions before the T queries; T_total = T + base. */
  base?: number;
  /** Divide scores by √head_dim (default true). */
  scale?: boolean;
  /** "stable" (default) subtracts the row max before exp; "naive" does not and overflows above ~88.72. */
  softmax?: 'stable' | 'naive';
  /**
   * FlashAttention's tiles (both or neither; the stable softmax): query rows per block and key
   * columns per block. The trace then adds {@link FlashTrace} beside the plain path.
   */
  flash_block_q?: number;
  flash_block_k?: number;
  /**
   * Multi-head latent attention (DeepSeek-V2), selected by W_dkv (d_model × d_c), with x, W_q
   * (d_model × n_head·d_nope), W_uk (d_c × n_head·d_nope), W_uv (d_c × n_head·d_v) and the
   * decoupled rotary part W_kr (d_model × d_rope) with W_qr (d_model × n_head·d_rope), which need
   * rope. The trace then adds {@link MlaTrace}.
   */
  W_dkv?: MatrixInput;
  W_uk?: MatrixInput;
  W_uv?: MatrixInput;
  W_kr?: MatrixInput;
  W_qr?: MatrixInput;
}

/** One (query block, key block) step of FlashAttention for one head: the state after it. */
export interface FlashStep {
  head: number;
  q_block: number;
  k_block: number;
  /** First query row and number of rows of the block (0-based). */
  r0: number;
  rows: number;
  /** First key column and number of columns of the block (0-based). */
  c0: number;
  cols: number;
  /** Every entry of the tile was masked: nothing changed. */
  skipped: boolean;
  /** Running maximum per row (-Infinity before the row's first visible key). */
  m: number[];
  /** e^(m_old − m): the rescale of the old sums; 1 when the maximum stayed, 0 at the first key. */
  alpha: number[];
  /** Running sum per row: alpha·l_old + Σ_j p. */
  l: number[];
  /** e^(masked − m) over the tile, rows × cols. */
  p: Matrix;
  /** The unnormalised partial output alpha·o_old + p·v, rows × d_v. */
  o: Matrix;
}

/** FlashAttention's forward, tile by tile, and how far it is from the plain path. */
export interface FlashTrace {
  block_q: number;
  block_k: number;
  n_q_blocks: number;
  n_k_blocks: number;
  /** Head-major, then query block, then key block. */
  steps: FlashStep[];
  /** Per head: final m, l, the logsumexp L = m + log l (T values each) and context = o / l. */
  heads: { m: number[]; l: number[]; lse: number[]; context: Matrix }[];
  concat: Matrix;
  out: Matrix;
  /** Largest |flash − plain| over the context and out. */
  max_abs_diff: { context: number; out: number };
  /** What float32 rounding allows (src/core/attention/flash.h). */
  bound: { context: number; out: number };
  within_bound: boolean;
}

/** Multi-head latent attention's latent, both forms of the scores and context, and the cache. */
export interface MlaTrace {
  d_c: number;
  d_nope: number;
  d_rope: number;
  d_v: number;
  /** The latent x·W_dkv, T_total × d_c. */
  c: Matrix;
  /** c·W_uk (T_total × n_head·d_nope) and x[base:]·W_q (T × n_head·d_nope). */
  k_C: Matrix;
  q_C: Matrix;
  /** x·W_kr (T_total × d_rope) and x[base:]·W_qr (T × n_head·d_rope), before RoPE; absent when d_rope = 0. */
  k_R?: Matrix;
  q_R?: Matrix;
  /** The absorbed form per head. */
  heads: {
    q_latent: Matrix;
    scores_latent: Matrix;
    scores_rope?: Matrix;
    scores_absorbed: Matrix;
    context_latent: Matrix;
    context_absorbed: Matrix;
  }[];
  /** Largest |absorbed − plain| over the scores and the context. */
  max_abs_diff: { scores: number; context: number };
  /** Floats MLA's KV cache holds, T_total·(d_c + d_rope), and multi-head attention's. */
  cache_floats: number;
  cache_floats_mha: number;
}

/** A row of one head that the softmax flagged. Both indices are 0-based. */
export interface RowRef {
  /** 0-based head index. */
  head: number;
  /** 0-based query row within the head (query position = base + row). */
  row: number;
}

/** Everything one head computed. Shapes use T queries and T_total keys. */
export interface HeadTrace {
  /** Queries of this head, T × head_dim. */
  q: Matrix;
  /** Keys of this head, T_total × head_dim. */
  k: Matrix;
  /** Values of this head, T_total × d_v. */
  v: Matrix;
  /** S = q·kᵀ, T × T_total. */
  scores: Matrix;
  /** S · scale_factor (S / √head_dim, or S when scaling is off), T × T_total. */
  scaled: Matrix;
  /** scaled + mask, T × T_total; masked cells are -Infinity. */
  masked: Matrix;
  /**
   * softmax of each row of masked, T × T_total ("attn" in the tutorials). An empty row (every key
   * masked) is all zeros; a naive overflow row keeps its NaN.
   */
  weights: Matrix;
  /** Σ_j weights[i][j] for each query row, T values: 1, 0 for an empty row, NaN after overflow. */
  weight_row_sums: number[];
  /** weights·v, T × d_v. */
  context: Matrix;
}

/** The options as the core used them (defaults filled in). */
export interface TraceOptions {
  n_head: number;
  causal: boolean;
  mask: 'strict' | 'inclusive';
  base: number;
  scale: boolean;
  softmax: 'stable' | 'naive';
}

/** The result of {@link Attention.trace}: every step of one forward pass, as the JSON gives it. */
export interface Trace {
  /** "x" when the spec gave x and weights, "qkv" when it gave Q, K, V, "mla" with W_dkv. */
  mode: 'x' | 'qkv' | 'mla';
  /** Number of queries (rows of Q). */
  T: number;
  /** Number of keys, T + base. */
  T_total: number;
  /** KV-cache offset used. */
  base: number;
  /** Number of heads. */
  n_head: number;
  /** Columns of x; null in qkv mode. */
  d_model: number | null;
  /** Columns of Q and K per head. */
  head_dim: number;
  /** Columns of V per head. */
  d_v: number;
  /** Columns of out (of W_o, or n_head·d_v without W_o). */
  d_out: number;
  /** 1/√head_dim as float32, or 1 when scaling is off. */
  scale_factor: number;
  /** The options used. */
  options: TraceOptions;
  /**
   * The matrices used, by spec name (x, W_q, W_k, W_v, b_q, b_k, b_v, W_o, b_o or Q, K, V);
   * random weights from seed included. Biases are number[].
   */
  inputs: Partial<Record<'x' | 'W_q' | 'W_k' | 'W_v' | 'W_o' | 'Q' | 'K' | 'V', Matrix>> &
    Partial<Record<'b_q' | 'b_k' | 'b_v' | 'b_o', number[]>>;
  /** The mask added to the scaled scores, T × T_total: 0 or -Infinity (all 0 when causal is off). */
  mask: Matrix;
  /** One entry per head. */
  heads: HeadTrace[];
  /** The heads' contexts side by side, T × n_head·d_v. */
  concat: Matrix;
  /** concat·W_o + b_o, or concat when there is no W_o; T × d_out. */
  out: Matrix;
  /** Rows whose every key is masked: weights and context set to 0, not NaN. */
  empty_rows: RowRef[];
  /** Rows where the softmax met a non-finite value (naive overflow); their NaN is kept. */
  overflow_rows: RowRef[];
  /** Plain-language notes on empty and overflow rows (rows counted from 1 there). */
  warnings: string[];
  /** With flash_block_q and flash_block_k. */
  flash?: FlashTrace;
  /** With W_dkv. */
  mla?: MlaTrace;
}

/** The result of {@link Attention.softmax}. */
export interface SoftmaxResult {
  /** Softmax of each row, same shape as the input. */
  weights: Matrix;
  /** 0-based indices of rows that were all -Infinity (set to zeros). */
  empty_rows: number[];
  /** 0-based indices of rows that met a non-finite value (NaN kept). */
  overflow_rows: number[];
}

/** A backward spec: a trace spec plus the upstream gradient (at most one of d_out and loss). */
export interface BackwardSpec extends TraceSpec {
  /** ∂L/∂out, out's shape: L = Σ d_out ⊙ out. */
  d_out?: MatrixInput;
  /** "sum" (default when d_out is absent): L = Σ out; "mse": L = mean((out − target)²). */
  loss?: 'sum' | 'mse';
  /** The target of loss "mse", out's shape. */
  target?: MatrixInput;
}

/** ∂L/∂ of one head's forward values, under their forward names. */
export interface HeadGrads {
  context: Matrix;
  weights: Matrix;
  v: Matrix;
  /** The softmax backward A ⊙ (G − rowsum(G ⊙ A)); 0 where the mask hides a key. */
  scaled: Matrix;
  /** scaled · 1/√d_k. */
  scores: Matrix;
  q: Matrix;
  k: Matrix;
}

/** ∂L/∂ of every forward value, under the forward value's own name; absent inputs are absent. */
export interface Grads {
  /** The upstream gradient used. */
  out: Matrix;
  W_o?: Matrix;
  b_o?: number[];
  concat: Matrix;
  heads: HeadGrads[];
  Q: Matrix;
  K: Matrix;
  V: Matrix;
  x?: Matrix;
  W_q?: Matrix;
  W_k?: Matrix;
  W_v?: Matrix;
  b_q?: number[];
  b_k?: number[];
  b_v?: number[];
  /**
   * FlashAttention-2's backward: per head D = rowsum(dO ⊙ O) and P recomputed from L; after each
   * tile, the key block's dV (cols × d_v) and dK (cols × head_dim) and the query block's dQ
   * (rows × head_dim) accumulated so far.
   */
  flash?: {
    heads: { D: number[]; P: Matrix }[];
    steps: { head: number; k_block: number; q_block: number; r0: number; rows: number; c0: number; cols: number;
      dv: Matrix; dk: Matrix; dq: Matrix }[];
  };
  /** Multi-head latent attention: the latent, the rotary parts and the weights. */
  c?: Matrix;
  k_R?: Matrix;
  q_R?: Matrix;
  W_dkv?: Matrix;
  W_uk?: Matrix;
  W_uv?: Matrix;
  W_kr?: Matrix;
  W_qr?: Matrix;
}

/** The result of {@link Attention.backward}. */
export interface BackwardResult {
  trace: Trace;
  /** The loss L the gradients belong to (NaN after a naive-softmax overflow). */
  loss: number;
  grads: Grads;
}

/** One entry of {@link Attention.gradcheck}. */
export interface GradCheck {
  /** The input ("x", "W_q", "K", …), and its 0-based row and column (row 0 for a bias). */
  name: string;
  row: number;
  col: number;
  analytic: number;
  /** (L(θ + eps) − L(θ − eps)) / 2eps. */
  numeric: number;
  abs_error: number;
  /** |numeric − analytic| / (|numeric| + |analytic|). */
  rel_error: number;
}

/** The loaded API. Every method is synchronous and throws {@link AttentionError} for bad input. */
export interface Attention {
  /** The core's version, e.g. "0.1.0". */
  readonly version: string;
  /**
   * Runs scaled dot-product attention and returns the trace of every step. `spec` may also be
   * JSON text, sent as it is.
   * @throws {AttentionError} bad shapes ("K has 3 columns but Q has 4", field "K"), non-finite or
   *   unparsable cells (field, row and column), bad options, limits exceeded.
   * @throws {TypeError} when spec is neither an object nor a string.
   */
  trace(spec: TraceSpec | string): Trace;
  /**
   * The backward pass: the forward trace, the loss, and ∂L/∂ of every forward value.
   * @throws {AttentionError} as trace, plus field "d_out" / "loss" / "target" for a bad gradient.
   */
  backward(spec: BackwardSpec | string): BackwardResult;
  /**
   * Central finite differences against the analytic gradients of {@link Attention.backward}.
   * @param spec a backward spec plus `check` (entries; default every input entry, ≤ 1024) and `eps` (default 0.01)
   */
  gradcheck(spec: (BackwardSpec & { check?: { name: string; row: number; col: number }[]; eps?: number }) | string): {
    loss: number;
    eps: number;
    checks: GradCheck[];
  };
  /**
   * Parses matrix text as people type or paste it (see {@link MatrixInput}); at most 1024 × 1024.
   * @throws {AttentionError} with the 1-based row and column (counting numbers) of the problem;
   *   field is "".
   */
  parseMatrix(text: string): Matrix;
  /**
   * A rows × cols matrix, uniform in [-bound, bound), from a seeded portable generator: the same
   * seed gives the same floats everywhere. rows, cols 1 … 1024.
   * @param options.seed integer 0 … 2^53 (default 0)
   * @param options.bound half-width, 0 … 1e30 (default 1/√cols)
   */
  randomMatrix(rows: number, cols: number, options?: { seed?: number; bound?: number }): Matrix;
  /**
   * The causal mask, T × (T + base): 0 where query i may look at key j, -Infinity where not.
   * @param options.base KV-cache offset (default 0)
   * @param options.mask "strict" (default, j > i + base masked) or "inclusive" (j >= i + base)
   */
  causalMask(T: number, options?: { base?: number; mask?: 'strict' | 'inclusive' }): Matrix;
  /**
   * The row softmax alone. Input cells may be -Infinity (masked); a row of only -Infinity gives
   * zeros and is listed in empty_rows.
   * @param options.softmax "stable" (default) or "naive"
   */
  softmax(rows: MatrixInput, options?: { softmax?: 'stable' | 'naive' }): SoftmaxResult;
  /**
   * The Emscripten module: the raw JSON functions (trace_json, parse_matrix_json,
   * random_matrix_json, causal_mask_json, softmax_json, version) and heap_bytes_in_use().
   * For tests and tools; course pages should not need it.
   */
  readonly module: AttentionCoreModule;
}

/** The raw wasm module (web/gen/attention_core.mjs). Strings in, JSON text out; never throws. */
export interface AttentionCoreModule {
  trace_json(spec: string): string;
  backward_json(spec: string): string;
  gradcheck_json(spec: string): string;
  parse_matrix_json(text: string): string;
  random_matrix_json(spec: string): string;
  causal_mask_json(spec: string): string;
  softmax_json(spec: string): string;
  version(): string;
  /** Bytes malloc'd now (for leak tests). */
  heap_bytes_in_use(): number;
}

/** Options for {@link loadAttention} (and loadGpt), passed to the Emscripten factory. */
export interface LoadOptions {
  /** The bytes of the module's .wasm file (web/gen/attention_core.wasm, or gpt_core.wasm for
   * loadGpt). Required in Node, where the web build cannot fetch it: loadAttention() without it
   * rejects with an AttentionError (field 'wasmBinary') that names the file to read. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Where to find the .wasm file (default: next to its .mjs in web/gen/). */
  locateFile?: (path: string, prefix: string) => string;
}

/**
 * Loads the wasm core (web/gen/attention_core.mjs, resolved next to attention.js) and returns the
 * API. Call once and keep the result.
 */
export function loadAttention(options?: LoadOptions): Promise<Attention>;

/** Thrown for every input the core refuses, with where the problem is. */
export class AttentionError extends Error {
  constructor(message: string, where?: { field?: string; row?: number; column?: number });
  name: 'AttentionError';
  /** The input at fault ("x", "W_q", "K", "n_head", "mask", "spec", …), or "" when none (parseMatrix). */
  field: string;
  /** 1-based row of the bad cell; 0 when the error is not about one row. */
  row: number;
  /** 1-based column of the bad cell, counting numbers not characters; 0 when not about one cell. */
  column: number;
}
