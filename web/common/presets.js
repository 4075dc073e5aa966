// presets.js — the tutorials' examples. Each preset sets mode, matrices (as text), use_W_o, use_bias,
// options and variants (the modern ones: RoPE, ALiBi, grouped-query heads, a window, FlashAttention's
// tiles, latent attention); its one-paragraph explanation lives in i18n.js under `preset.<id>.text`.
import { cellText } from './format.js';
import { VARIANTS_OFF, MLA_KEYS } from './state.js';

const I2 = '1 0\n0 1';
const X4 = '0.5 -1 0.25 0\n1 0.5 -0.5 0.75\n-0.25 0.5 1 -1\n0 1.5 0.5 0.25';
const WQ4 = '1 0 0.5 0\n0 1 0 -0.5\n0.5 0 1 0\n0 0.25 0 1';
const WK4 = '0.5 0.5 0 0\n0 1 0.25 0\n-0.5 0 1 0.5\n0 0 -0.25 1';
const WV4 = '1 2 0 -1\n0 1 1 0\n-1 0 0.5 1\n0.5 0 0 2';
const OPT = { n_head: 1, causal: false, mask: 'strict', base: 0, scale: true, softmax: 'stable' };

/** Preset ids in menu order ('custom' is not a preset, it is what editing turns a preset into). */
export const PRESETS = ['identity', 'two-token', 'causal-4', 'overflow-naive', 'overflow-stable',
  'saturate-64', 'inclusive', 'kv-cache', 'rope-distance', 'alibi-heads', 'gqa-8-2', 'window-sink', 'flash-tiles', 'mla-latent'];

/** A matrix's text of n rows, row i given by fn(i) (a list of numbers). */
const rows = (n, fn) => Array.from({ length: n }, (_, i) => fn(i).join(' ')).join('\n');

/** A matrix's text from its rows (lists of numbers). */
const text = (m) => m.map((r) => r.join(' ')).join('\n');

const round = (m, d) => m.map((r) => r.map((v) => cellText(Number(v.toFixed(d))))).map((r) => r.join(' ')).join('\n');

/** The parts of the state a preset sets. api is needed for the seeded d_k = 64 example. */
export function presetPatch(id, api) {
  const x = (matrices, options = {}, useWo = false) => ({ mode: 'x', matrices, use_W_o: useWo, use_bias: false, options: { ...OPT, ...options }, variants: { ...VARIANTS_OFF } });
  const qkv = (matrices, options = {}, variants = {}) => ({ mode: 'qkv', matrices, use_W_o: false, use_bias: false, options: { ...OPT, ...options }, variants: { ...VARIANTS_OFF, ...variants } });
  switch (id) {
    case 'identity': return x({ x: I2, W_q: I2, W_k: I2, W_v: I2, W_o: I2 }, {}, true);
    case 'two-token': return qkv({ Q: I2, K: '1 0\n1 1', V: '1 2\n3 4' });
    case 'causal-4': return x({ x: X4, W_q: WQ4, W_k: WK4, W_v: WV4 }, { causal: true });
    case 'overflow-naive': return qkv({ Q: I2, K: '1000 999\n999 1000', V: I2 }, { scale: false, softmax: 'naive' });
    case 'overflow-stable': return qkv({ Q: I2, K: '1000 999\n999 1000', V: I2 }, { scale: false, softmax: 'stable' });
    case 'saturate-64': {
      // Q and K: 4 × 64, uniform in ±√3 (variance 1, like randn), seeded; V = I (so A·V shows A).
      const q = api.randomMatrix(4, 64, { seed: 64, bound: Math.sqrt(3) });
      const k = api.randomMatrix(4, 64, { seed: 65, bound: Math.sqrt(3) });
      return qkv({ Q: round(q, 2), K: round(k, 2), V: '1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1' }, { scale: false });
    }
    case 'inclusive': return x({ x: X4.split('\n').slice(0, 3).join('\n'), W_q: WQ4, W_k: WK4, W_v: WV4 }, { causal: true, mask: 'inclusive' });
    case 'kv-cache': return x({
      x: '0.1 0.2 -0.3\n0.5 -0.4 0.25\n-0.6 0.1 0.8\n0.3 0.9 -0.2\n-0.7 -0.5 0.4',
      W_q: '0.5 -0.25 1\n0.75 0.5 0\n-0.5 1 0.25',
      W_k: '1 0.25 -0.5\n0 0.5 0.75\n0.25 -1 0.5',
      W_v: '0.2 -0.4 0.6\n1 0.3 -0.1\n-0.5 0.7 0.9',
    }, { causal: true, base: 2 });
    // the modern variants: RoPE on the same q and k at every position (S depends on i − j only);
    // ALiBi on zero scores (only the bias decides), V = each key's position; 8 query heads over 2
    // key/value heads; a window of 4 with one sink over 12 tokens
    case 'rope-distance': return qkv({ Q: rows(4, () => [1, 0, 1, 0]), K: rows(4, () => [0.5, 1, 0.5, 1]), V: rows(4, (i) => [0, 1, 2, 3].map((c) => (c === i ? 1 : 0))) },
      {}, { rope: 'interleaved' });
    case 'alibi-heads': return qkv({ Q: rows(6, () => [0, 0, 0, 0]), K: rows(6, () => [0, 0, 0, 0]), V: rows(6, (i) => [i + 1, i + 1, i + 1, i + 1]) },
      { n_head: 4, causal: true }, { alibi: true });
    case 'gqa-8-2': return qkv({
      Q: '1 0 0.5 -1 0.25 1 -0.5 0\n0 1 1 0.5 -1 0 0.75 1\n-0.5 0.5 0 1 1 -0.25 0 0.5',
      K: '1 0.5\n0.5 -1\n-1 1', V: '1 0\n0 1\n0.5 0.5' }, { n_head: 8, causal: true }, { n_kv_head: 2 });
    case 'window-sink': return qkv({
      Q: rows(12, (i) => [((i * 3) % 5) / 2 - 1, ((i * 7) % 4) / 2 - 0.5]),
      K: rows(12, (j) => [((j * 5) % 4) / 2 - 0.5, ((j * 2) % 5) / 2 - 1]),
      V: rows(12, (j) => [j + 1, j % 2]) }, { causal: true }, { window: 4, sinks: 1 });
    // FlashAttention's tiles: 16 tokens, 2 heads, causal, 4 × 4 blocks (the golden case
    // flash_16_tokens_causal); multi-head latent attention with its decoupled RoPE key
    // (mla_latent_rope_halves): both are tests/golden/ref_flash_mla.py's inputs
    case 'flash-tiles': {
      const e = FLASH_EXAMPLE;
      return { mode: 'x', matrices: { x: text(e.x), W_q: text(e.W_q), W_k: text(e.W_k), W_v: text(e.W_v), W_o: text(e.W_o) }, use_W_o: true, use_bias: false,
        options: { ...OPT, n_head: e.n_head, causal: true }, variants: { ...VARIANTS_OFF, flash_block_q: e.flash_block_q, flash_block_k: e.flash_block_k } };
    }
    case 'mla-latent': {
      const e = MLA_EXAMPLE;
      const matrices = Object.fromEntries(['x', 'W_q', 'W_o', ...MLA_KEYS].map((k) => [k, text(e[k])]));
      return { mode: 'x', matrices, use_W_o: true, use_bias: false, options: { ...OPT, n_head: e.n_head, causal: true, base: e.base },
        variants: { ...VARIANTS_OFF, rope: e.rope, mla: true } };
    }
    default: return null;
  }
}

/** The 16-token example of FlashAttention's tiles (the golden case flash_16_tokens_causal). */
export const FLASH_EXAMPLE = {
  x: [[1.415, -1.772, -0.996, 0.616], [0.311, 0.25, 0.173, -0.507], [1.918, 0.579, -1.869, -0.113],
    [-0.617, -1.22, 0.24, -0.558], [0.072, -1.669, -1.518, 1.497], [-1.446, -1.32, -0.347, -1.128],
    [1.575, 0.428, 0.506, -0.408], [1.099, -0.517, -1.539, 1.664], [0.693, -0.791, -1.903, -1.442],
    [-0.433, -0.986, -0.856, -1.005], [-1.26, -1.271, 0.659, 0.286], [1.193, 1.56, 1.417, 0.683],
    [1.881, -1.502, 0.332, -0.239], [-0.87, 1.933, 0.49, 1.235], [-0.529, -0.622, -0.531, -1.694],
    [1.516, 0.732, 0.703, 0.841]],
  W_q: [[0.266, -0.404, 0.649, 0.161], [0.187, 0.586, -0.111, -0.226], [-0.572, -0.94, 0.558, 0.344],
    [0.887, -0.161, 0.647, 0.196]],
  W_k: [[0.651, -0.649, -0.245, -0.581], [0.645, 0.011, 0.545, -0.85], [0.814, 0.849, -0.936, 0.271],
    [0.268, -0.717, 0.687, 0.008]],
  W_v: [[0.365, -0.892, -0.559, -0.631], [-0.648, 0.624, 0.847, -0.447], [0.64, 0.78, 0.026, -0.51],
    [0.648, -0.572, 0.483, 0.26]],
  W_o: [[0.571, 0.572, 0.938], [0.496, 0.311, 0.878], [-0.643, 0.177, -0.114], [-0.302, -0.338, -0.681]],
  n_head: 2,
  causal: true,
  flash_block_q: 4,
  flash_block_k: 4,
};

/** The example of multi-head latent attention (the golden case mla_latent_rope_halves). */
export const MLA_EXAMPLE = {
  x: [[0.5, -1, 0.25, 0], [1, 0.5, -0.5, 0.75], [-0.25, 0.5, 1, -1], [0, 1.5, 0.5, 0.25]],
  W_q: [[1, 0, 0.5, 0], [0, 1, 0, -0.5], [0.5, 0, 1, 0], [0, 0.25, 0, 1]],
  W_dkv: [[0.5, 0.5, 0], [0, 1, 0.25], [-0.5, 0, 1], [0, 0, -0.25]],
  W_uk: [[1, 0, 0.5, 0], [0, 1, 0, -0.5], [0.5, 0, 1, 0]],
  W_uv: [[1, 2, 0, -1], [0, 1, 1, 0], [-1, 0, 0.5, 1]],
  W_kr: [[0.3, -0.2], [0.1, 0.4], [-0.5, 0.2], [0.6, 0.1]],
  W_qr: [[0.2, 0.1, -0.3, 0.5], [0.4, -0.6, 0.2, 0.1], [0.1, 0.3, 0.5, -0.2], [-0.4, 0.2, 0.1, 0.3]],
  W_o: [[1, 0, 0.5, 0], [0, 1, 0, -0.5], [0.5, 0, 1, 0], [0, 0.25, 0, 1]],
  n_head: 2,
  causal: true,
  base: 1,
  rope: 'halves',
};
