// state.js — the stepper's STATE: a plain, JSON-serialisable object (see the contract at the top
// of stepper.js). defaultState() gives the identity example; validateState(obj) turns anything
// (junk, an old or hand-edited permalink) into a clean state and never throws; its exercise is
// cleaned by validateExercise, at the end of this file (exercise.js is the logic that uses it).
//
// {
//   version: 1,
//   preset: 'identity' | 'two-token' | 'causal-4' | 'overflow-naive' | 'overflow-stable'
//         | 'saturate-64' | 'inclusive' | 'kv-cache' | 'custom',
//   mode: 'x' | 'qkv',
//   matrices: { x, W_q, W_k, W_v, W_o, Q, K, V,     // the TEXT per matrix, as typed (rows on
//               b_q, b_k, b_v, b_o },              // lines, cells by spaces or tabs); the biases
//                                                  // are one row ('' = zeros when turned on)
//   use_W_o: boolean,
//   use_bias: boolean,              // the biases b_q, b_k, b_v (x mode) and b_o (with W_o)
//   options: { n_head, causal, mask: 'strict'|'inclusive', base, scale, softmax: 'stable'|'naive' },
//   variants: { rope: 'none'|'interleaved'|'halves', rope_base, rope_dims (0 = head_dim),  // the modern
//               alibi: boolean, n_kv_head (0 = n_head), window (0 = none), sinks,     // variants (VARIANTS_OFF)
//               flash_block_q, flash_block_k (0 = off: FlashAttention's tiles, both or neither),
//               mla: boolean,  // multi-head latent attention: K and V from x·W_dkv (x mode)
//               alibi_slope (0 = ALiBi's own m_h; else one head's slope, as a GPT head opened here has) },
//   seed: integer ≥ 0,              // for the "random fill" button
//   view: 'all' | 'step', step: integer ≥ 0,   // step index into the visible steps
//   head: integer ≥ 0,              // which head the panels show (when n_head > 1)
//   head_view: 'one' | 'side',      // 'side': every head's weights side by side as well
//   display: 'auto' | 'numbers' | 'heatmap',  // auto: heatmaps only past 32 tokens, else numbers
//   exercise: null | { id, ask: [{ panel, cells: 'all' | [[row, col], …] }], tol: { decimals, rel, abs } }
//                                   // cells the learner computes (exercise.js); answers stay local
//   lang: 'en' | 'zh',
//   focus: { panel, row, col } | null,  // the explained cell (0-based row/col in that panel;
//                                       // gradient panels are 'd_out', 'd_weights', 'd_x', …)
//   direction: 'forward' | 'backward',  // which pass the steps show
//   upstream: {                         // the upstream gradient ∂L/∂out of the backward pass
//     kind: 'sum' | 'mse' | 'd_out',    //   L = Σ out | L = mean((out − target)²) | dOut as typed
//     d_out: text,                      //   the typed dOut ('' = ones of out's shape when chosen)
//     target: text,                     //   the target of 'mse' ('' = zeros of out's shape)
//   },
//   source: null | {                    // where Q, K, V came from: one head of a model on a prompt
//     layer, head: integer ≥ 0,         //   (the training page's link; 0-based, shown from 1)
//     model: string,                    //   the model's name as that page shows it
//     prompt: string, tokens: [string], //   the prompt and its tokens (the rows' labels: queries
//                                       //   tokens[base + i], keys tokens[j]), as the model read it
//     back: string,                     //   the page to go back to (a relative or http(s) URL)
//   }
// }
// States from before the backward mode (no direction / upstream) are valid: forward, the default
// loss (MSE against zeros).

export const MATRIX_KEYS = ['x', 'W_q', 'W_k', 'W_v', 'W_o', 'Q', 'K', 'V', 'b_q', 'b_k', 'b_v', 'b_o',
  // multi-head latent attention's own weights (variants.mla): the latent, its up-projections, the rotary parts
  'W_dkv', 'W_uk', 'W_uv', 'W_kr', 'W_qr'];
/** The weights multi-head latent attention reads in place of W_k and W_v (W_kr, W_qr with RoPE only). */
export const MLA_KEYS = ['W_dkv', 'W_uk', 'W_uv', 'W_kr', 'W_qr'];
/** The bias vectors and the weight matrix whose columns each one matches. */
export const BIAS_OF = { b_q: 'W_q', b_k: 'W_k', b_v: 'W_v', b_o: 'W_o' };
export const PRESET_IDS = ['identity', 'two-token', 'causal-4', 'overflow-naive', 'overflow-stable',
  'saturate-64', 'inclusive', 'kv-cache', 'rope-distance', 'alibi-heads', 'gqa-8-2', 'window-sink', 'flash-tiles', 'mla-latent', 'custom'];
export const PANEL_IDS = ['q', 'k', 'v', 'scores', 'scaled', 'masked', 'weights', 'context', 'concat', 'out',
  // the modern variants' panels (shown when their option is on)
  'kv_heads', 'rope_angles', 'q_rot', 'k_rot', 'bias', 'mask',
  'latent', 'q_latent', 'scores_absorbed', 'flash_m', 'flash_alpha', 'flash_l', 'flash_context'];
/** The backward pass's panels: ∂L/∂ of each forward value (d_ + the value's name). */
export const GRAD_PANEL_IDS = ['d_out', 'd_W_o', 'd_b_o', 'd_concat', 'd_context', 'd_weights', 'd_v', 'd_scaled', 'd_scores',
  'd_q_rot', 'd_k_rot', 'd_q', 'd_k', 'd_Q', 'd_K', 'd_V', 'd_x', 'd_W_q', 'd_W_k', 'd_W_v', 'd_b_q', 'd_b_k', 'd_b_v',
  // FlashAttention-2's backward (D, the recomputed P) and latent attention's gradients
  'flash_D', 'flash_P', 'd_latent', 'd_W_dkv', 'd_W_uk', 'd_W_uv', 'd_W_kr', 'd_W_qr'];
/**
 * What the learner makes, as opposed to how the page shows it: the fields that undo and redo
 * restore (undo.js) and whose change is a new entry in the browser's history (permalink.js). The
 * view (view, step, head, head_view, display, lang, focus) is neither undone nor a history entry.
 */
export const CONTENT_KEYS = ['preset', 'mode', 'matrices', 'use_W_o', 'use_bias', 'options', 'variants', 'seed', 'exercise', 'direction', 'upstream', 'source'];
/** The panels an exercise may ask (exercise.js). */
export const ASK_PANELS = [...PANEL_IDS, ...GRAD_PANEL_IDS];
export const UPSTREAM_KINDS = ['sum', 'mse', 'd_out'];
/** The page's size limit per matrix (rows and columns). */
export const MAX_DIM = 64;
/** The largest n_head the page offers. */
export const MAX_HEADS = 16;

/** The default tolerance of an exercise: 4 decimals, or ±0.1 % relative. */
export const DEFAULT_TOL = Object.freeze({ decimals: 4, rel: 1e-3 });
// A ready-made exercise whose point needs a stricter tolerance than the default: the identity
// softmax must tell the true 0.6698 from the tutorials' 0.6699 (0.02 % apart, inside ±0.1 %).
const READY_TOL = { 'identity-softmax': Object.freeze({ decimals: 4 }) };
/** The tolerance an exercise gets when none is given: its own for a ready-made id, else the default. */
export const toleranceOf = (id) => ({ ...(READY_TOL[id] ?? DEFAULT_TOL) });
const ID_RE = /^[A-Za-z0-9_.-]{1,64}$/;

const I2 = '1 0\n0 1';
/**
 * The modern variants' options, all off: what a state without them (an old permalink) means. They
 * are a key of their own (state.variants) so that state.options stays a spec the core takes as is.
 */
export const VARIANTS_OFF = Object.freeze({ rope: 'none', rope_base: 10000, rope_dims: 0, alibi: false, n_kv_head: 0, window: 0, sinks: 0,
  flash_block_q: 0, flash_block_k: 0, mla: false, alibi_slope: 0 });
export const ROPE_PAIRINGS = ['none', 'interleaved', 'halves'];

/**
 * The core's spec keys of the variants in use (rope_base and rope_dims with RoPE, sinks with a
 * window; an option that is off is left out, as the core refuses e.g. rope_base without rope).
 * nHead: the state's n_head. A GPT head's own ALiBi slope (alibi_slope) is one head's: it is used
 * while n_head is 1; with more heads the slopes follow n_head (ALiBi's own 2^(−8h/n_head)), and
 * the slope stays in the state for when n_head is 1 again.
 */
export function variantSpec(o = VARIANTS_OFF, nHead = 1) {
  const spec = {};
  if (o.rope !== 'none') {
    spec.rope = o.rope;
    spec.rope_base = o.rope_base;
    if (o.rope_dims) spec.rope_dims = o.rope_dims;
  }
  if (o.alibi) spec.alibi = true;
  if (o.alibi && o.alibi_slope && nHead === 1) spec.alibi_slopes = [o.alibi_slope];  // a GPT head's own slope (one head)
  if (o.n_kv_head) spec.n_kv_head = o.n_kv_head;
  if (o.window) { spec.window = o.window; if (o.sinks) spec.sinks = o.sinks; }
  // the tiles need both sizes: one alone goes to the core, which names the one missing
  if (o.flash_block_q) spec.flash_block_q = o.flash_block_q;
  if (o.flash_block_k) spec.flash_block_k = o.flash_block_k;
  return spec;
}

export function defaultState() {
  return {
    version: 1,
    preset: 'identity',
    mode: 'x',
    matrices: { x: I2, W_q: I2, W_k: I2, W_v: I2, W_o: I2, Q: I2, K: I2, V: I2, b_q: '', b_k: '', b_v: '', b_o: '',
      W_dkv: I2, W_uk: I2, W_uv: I2, W_kr: I2, W_qr: I2 },
    use_W_o: true,
    use_bias: false,
    options: { n_head: 1, causal: false, mask: 'strict', base: 0, scale: true, softmax: 'stable' },
    variants: { ...VARIANTS_OFF },
    seed: 1,
    view: 'all',
    step: 0,
    head: 0,
    head_view: 'one',
    display: 'auto',
    exercise: null,
    lang: 'en',
    focus: null,
    direction: 'forward',
    // MSE against zeros: a loss whose gradient reaches Q and K (L = Σ out gives the identity
    // example ∂L/∂S′ = 0 all the way back to W_q and W_k; paint.js says why where it happens)
    upstream: { kind: 'mse', d_out: '', target: '' },
    source: null,
  };
}

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const intIn = (v, lo, hi, dflt) => (Number.isInteger(v) && v >= lo && v <= hi ? v : dflt);
const oneOf = (v, list, dflt) => (list.includes(v) ? v : dflt);
const bool = (v, dflt) => (typeof v === 'boolean' ? v : dflt);

/** A clean state from anything: unknown keys dropped, bad values replaced by the defaults. */
export function validateState(obj) {
  const d = defaultState();
  if (!isObj(obj)) return d;
  const s = d;
  s.preset = oneOf(obj.preset, PRESET_IDS, 'custom');
  s.mode = oneOf(obj.mode, ['x', 'qkv'], d.mode);
  if (isObj(obj.matrices)) {
    for (const k of MATRIX_KEYS) {
      const v = obj.matrices[k];
      if (typeof v === 'string' && v.length <= 200_000) s.matrices[k] = v;
    }
  }
  s.use_W_o = bool(obj.use_W_o, d.use_W_o);
  s.use_bias = bool(obj.use_bias, d.use_bias);
  const o = isObj(obj.options) ? obj.options : {};
  s.options = {
    n_head: intIn(o.n_head, 1, MAX_HEADS, 1),
    causal: bool(o.causal, false),
    mask: oneOf(o.mask, ['strict', 'inclusive'], 'strict'),
    base: intIn(o.base, 0, MAX_DIM - 1, 0),
    scale: bool(o.scale, true),
    softmax: oneOf(o.softmax, ['stable', 'naive'], 'stable'),
  };
  const v = isObj(obj.variants) ? obj.variants : {};
  s.variants = {
    rope: oneOf(v.rope, ROPE_PAIRINGS, 'none'),
    rope_base: typeof v.rope_base === 'number' && v.rope_base > 1 && v.rope_base <= 1e9 ? v.rope_base : VARIANTS_OFF.rope_base,
    rope_dims: intIn(v.rope_dims, 0, MAX_DIM, 0),
    alibi: bool(v.alibi, false),
    n_kv_head: intIn(v.n_kv_head, 0, MAX_HEADS, 0),
    window: intIn(v.window, 0, MAX_DIM * 2, 0),
    sinks: intIn(v.sinks, 0, MAX_DIM * 2, 0),
    flash_block_q: intIn(v.flash_block_q, 0, MAX_DIM * 2, 0),
    flash_block_k: intIn(v.flash_block_k, 0, MAX_DIM * 2, 0),
    mla: bool(v.mla, false),
    alibi_slope: typeof v.alibi_slope === 'number' && v.alibi_slope > 0 && v.alibi_slope <= 1 ? v.alibi_slope : 0,
  };
  s.seed = intIn(obj.seed, 0, Number.MAX_SAFE_INTEGER, d.seed);
  s.view = oneOf(obj.view, ['all', 'step'], 'all');
  s.step = intIn(obj.step, 0, 20, 0);
  s.head = intIn(obj.head, 0, MAX_HEADS - 1, 0);
  s.head_view = oneOf(obj.head_view, ['one', 'side'], 'one');
  s.display = oneOf(obj.display, ['auto', 'numbers', 'heatmap'], 'auto');
  s.exercise = validateExercise(obj.exercise);
  s.lang = oneOf(obj.lang, ['en', 'zh'], 'en');
  const f = obj.focus;
  s.focus = isObj(f) && (PANEL_IDS.includes(f.panel) || GRAD_PANEL_IDS.includes(f.panel))
    ? { panel: f.panel, row: intIn(f.row, 0, MAX_DIM * 2, 0), col: intIn(f.col, 0, MAX_DIM * MAX_HEADS, 0) }
    : null;
  s.direction = oneOf(obj.direction, ['forward', 'backward'], 'forward');
  const u = isObj(obj.upstream) ? obj.upstream : {};
  const text = (v) => (typeof v === 'string' && v.length <= 200_000 ? v : '');
  s.upstream = { kind: oneOf(u.kind, UPSTREAM_KINDS, d.upstream.kind), d_out: text(u.d_out), target: text(u.target) };
  s.source = validateSource(obj.source);
  return s;
}

/** A clean source (state.source) or null; its back link only a relative or an http(s) URL. */
export function validateSource(x) {
  if (!isObj(x)) return null;
  const str = (v, max) => (typeof v === 'string' ? v.slice(0, max) : '');
  const tokens = Array.isArray(x.tokens) ? x.tokens.slice(0, MAX_DIM).map((v) => str(v, 64)) : [];
  const back = str(x.back, 4000);
  return {
    layer: intIn(x.layer, 0, 1023, 0),
    head: intIn(x.head, 0, 1023, 0),
    model: str(x.model, 200),
    prompt: str(x.prompt, 4000),
    tokens,
    back: /^(https?:\/\/|\.{0,2}\/(?!\/))/i.test(back) ? back : '',
  };
}

// ───────────── the exercise (state.exercise; the logic that uses it is exercise.js) ─────────────

/** A clean exercise from anything (null when there is none); never throws. */
export function validateExercise(x) {
  if (!isObj(x) || typeof x.id !== 'string' || !ID_RE.test(x.id)) return null;
  const ask = [];
  for (const a of Array.isArray(x.ask) ? x.ask : []) {
    if (!isObj(a) || !ASK_PANELS.includes(a.panel)) continue;
    if (a.cells === 'all') { ask.push({ panel: a.panel, cells: 'all' }); continue; }
    if (!Array.isArray(a.cells)) continue;
    const ok = (n) => n === null || (Number.isInteger(n) && n >= 0 && n < 1024);
    const cells = a.cells.filter((c) => Array.isArray(c) && c.length === 2 && c.every(ok) && !(c[0] === null && c[1] === null)).map((c) => [c[0], c[1]]);
    if (cells.length) ask.push({ panel: a.panel, cells: dedupe(cells) });
  }
  return { id: x.id, ask, tol: x.tol === undefined ? toleranceOf(x.id) : validateTol(x.tol) };
}

function dedupe(cells) {
  const seen = new Set();
  return cells.filter(([r, c]) => { const k = `${r},${c}`; if (seen.has(k)) return false; seen.add(k); return true; });
}

/** A clean tolerance; {} or junk gives the default. */
export function validateTol(t) {
  if (!isObj(t)) return { ...DEFAULT_TOL };
  const out = {};
  if (Number.isInteger(t.decimals) && t.decimals >= 0 && t.decimals <= 10) out.decimals = t.decimals;
  for (const k of ['rel', 'abs']) if (typeof t[k] === 'number' && Number.isFinite(t[k]) && t[k] >= 0 && t[k] <= 1e6) out[k] = t[k];
  return Object.keys(out).length ? out : { ...DEFAULT_TOL };
}
