// presets.js — the tutorials' examples. Each preset sets mode, matrices (as text), use_W_o, use_bias and
// options; its one-paragraph explanation lives in i18n.js under `preset.<id>.text`.
import { cellText } from './format.js';

const I2 = '1 0\n0 1';
const X4 = '0.5 -1 0.25 0\n1 0.5 -0.5 0.75\n-0.25 0.5 1 -1\n0 1.5 0.5 0.25';
const WQ4 = '1 0 0.5 0\n0 1 0 -0.5\n0.5 0 1 0\n0 0.25 0 1';
const WK4 = '0.5 0.5 0 0\n0 1 0.25 0\n-0.5 0 1 0.5\n0 0 -0.25 1';
const WV4 = '1 2 0 -1\n0 1 1 0\n-1 0 0.5 1\n0.5 0 0 2';
const OPT = { n_head: 1, causal: false, mask: 'strict', base: 0, scale: true, softmax: 'stable' };

/** Preset ids in menu order ('custom' is not a preset, it is what editing turns a preset into). */
export const PRESETS = ['identity', 'two-token', 'causal-4', 'overflow-naive', 'overflow-stable',
  'saturate-64', 'inclusive', 'kv-cache'];

const round = (m, d) => m.map((r) => r.map((v) => cellText(Number(v.toFixed(d))))).map((r) => r.join(' ')).join('\n');

/** The parts of the state a preset sets. api is needed for the seeded d_k = 64 example. */
export function presetPatch(id, api) {
  const x = (matrices, options = {}, useWo = false) => ({ mode: 'x', matrices, use_W_o: useWo, use_bias: false, options: { ...OPT, ...options } });
  const qkv = (matrices, options = {}) => ({ mode: 'qkv', matrices, use_W_o: false, use_bias: false, options: { ...OPT, ...options } });
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
    default: return null;
  }
}
