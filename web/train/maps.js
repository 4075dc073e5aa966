// maps.js — drawing one attention map of a prompt (rows: queries, columns: keys, the prompt's
// characters on both axes) on a canvas, so that a 64-token prompt with 12 × 12 heads stays a cheap
// paint; and each head's link into the Attention Stepper (web/index.html) in Q, K, V mode with that
// head's q, k, v, through the stepper's own permalink format (web/common/permalink.js), so the
// stepper recomputes the same weights with all its cell arithmetic. The model view that lays the
// maps out is model-view.js.
//
// Colour is not the only cue: masked keys are hatched (not just pale), each row's strongest key
// carries a dot.
// Loaded with the first model view or walk (model-view.js, walk-view.js), not at the page's start:
// the sections that only show tokens take heat and tokenMark from ../common/export.js itself.
// Limits: the stepper takes matrices of at most 64 rows (its MAX_DIM), so the page's prompt for
// the maps is at most 64 of the model's tokens (config.js STEPPER_MAX_ROWS).
import { encodeState } from '../common/permalink.js';
import { VARIANTS_OFF } from '../common/state.js';
import { el } from '../common/ui.js';
import { heat, tokenMark } from '../common/export.js';

// the colour scale and the token marks are export.js's (the pictures use the same)
export { heat };
export const tokenLabel = tokenMark;

/** `s` cut to at most `w` px in ctx's font, ending in "…" when cut (at least its first character). */
function fitText(ctx, s, w) {
  const cs = [...s];
  if (cs.length <= 1 || ctx.measureText(s).width <= w) return s;
  while (cs.length > 1 && ctx.measureText(`${cs.join('')}…`).width > w) cs.pop();
  return `${cs.join('')}…`;
}

/**
 * Whether key j is hidden from query i by the model's mask (base 0): mask is the mask's name, or
 * {mask, window, sink} for a model with a sliding window (keys before it hidden but for the sinks).
 */
export const masked = (i, j, mask) => {
  const m = mask && typeof mask === 'object' ? mask : { mask };
  if (m.mask === 'inclusive' ? j >= i : j > i) return true;
  return m.window > 0 && j <= i - m.window && j >= (m.sink ?? 0);
};

/** A matrix (number[][]) as the stepper's matrix text: rows on lines, cells by spaces. */
export const matrixText = (m) => m.map((r) => r.map((v) => String(v)).join(' ')).join('\n');

/**
 * The stepper's variants (common/state.js VARIANTS_OFF) of a head's spec: its window and sinks, and
 * ALiBi with the head's own slope. RoPE stays off: the spec's Q and K are already turned; a
 * grouped-query head is one head with its group's K and V.
 */
export function headVariants(spec) {
  return {
    ...VARIANTS_OFF,
    window: spec.window ?? 0,
    sinks: spec.sinks ?? 0,
    alibi: spec.alibi === true,
    alibi_slope: spec.alibi_slopes?.[0] ?? 0,
  };
}

/**
 * The stepper's state for one head's spec {Q, K, V, n_head, causal, mask, softmax} (and its
 * variants: headVariants): Q, K, V mode, no W_o, so its weights panel is this head's attention. row (optional, from 0): the query
 * row the stepper opens on (its weights panel's first cell of that row, focused and explained).
 * source (optional): who the head is, {layer, head, model, prompt, tokens} (headSource), so the
 * stepper labels its rows with the tokens, names the head and links back to this page.
 */
export function stepperState(spec, lang, row = null, source = null) {
  return {
    version: 1,
    preset: 'custom',
    mode: 'qkv',
    matrices: { Q: matrixText(spec.Q), K: matrixText(spec.K), V: matrixText(spec.V) },
    use_W_o: false,
    options: { n_head: 1, causal: spec.causal !== false, mask: spec.mask ?? 'strict', base: 0, scale: true, softmax: spec.softmax ?? 'stable' },
    variants: headVariants(spec),
    seed: 1,
    view: 'all',
    step: 0,
    head: 0,
    lang,
    focus: row == null ? null : { panel: 'weights', row, col: 0 },
    source: source && { ...source, back: location.href },
  };
}

/** Who a head is, for the stepper (state.source): layer and head from 0, the model's name, the prompt and its tokens. */
export const headSource = (layer, head, { model = '', prompt = '', tokens = [] } = {}) => ({ layer, head, model, prompt, tokens });

/** The stepper page's URL for a head, relative to this file; row: the query row it lands on; source: headSource's. */
export function stepperUrl(spec, lang, row = null, source = null) {
  return new URL('../index.html', import.meta.url).href.split('#')[0] + encodeState(stepperState(spec, lang, row, source));
}

/**
 * Draws a T×T map: cell px `c`, a label margin `m` (0: no labels).
 * weights: Float32Array, offset: where this head's T·T values start.
 */
function draw(canvas, { weights, offset, T, tokens, mask }, c, m) {
  const dpr = globalThis.devicePixelRatio || 1;
  const size = m + T * c;
  canvas.width = Math.round(size * dpr);
  canvas.height = Math.round(size * dpr);
  canvas.style.width = `${size}px`; // CSSOM (allowed by style-src 'self'), not a style attribute
  canvas.style.height = `${size}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, size, size);
  for (let i = 0; i < T; i++) {
    let best = -1;
    let bestW = -Infinity;
    for (let j = 0; j < T; j++) {
      const w = weights[offset + i * T + j];
      const x = m + j * c;
      const y = m + i * c;
      if (masked(i, j, mask)) {
        ctx.fillStyle = '#efeee9';
        ctx.fillRect(x, y, c, c);
        if (c >= 4) {
          ctx.strokeStyle = '#c9c6bc';
          ctx.lineWidth = 1;
          ctx.beginPath();
          ctx.moveTo(x, y + c);
          ctx.lineTo(x + c, y);
          ctx.stroke();
        }
        continue;
      }
      ctx.fillStyle = heat(w);
      ctx.fillRect(x, y, c, c);
      if (w > bestW) { bestW = w; best = j; }
    }
    if (best >= 0 && c >= 5 && bestW > 0) {
      ctx.fillStyle = bestW > 0.55 ? '#ffffff' : '#08306b';
      ctx.beginPath();
      ctx.arc(m + best * c + c / 2, m + i * c + c / 2, Math.max(1.2, c / 6), 0, 2 * Math.PI);
      ctx.fill();
    }
  }
  if (m > 0) {
    ctx.fillStyle = '#1c2027';
    const fs = Math.max(7, Math.min(14, c - 1));
    ctx.font = `${fs}px ui-monospace, "DejaVu Sans Mono", monospace`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    for (let k = 0; k < T; k++) {
      const label = tokenLabel(tokens[k]); // a BPE piece ("␣the") may be wider than its cell: cut with "…"
      ctx.fillText(fitText(ctx, label, m - 2), m / 2, m + k * c + c / 2); // queries, down the left
      ctx.fillText(fitText(ctx, label, c - 1), m + k * c + c / 2, m / 2); // keys, along the top
    }
  }
}

export { draw as drawMap };
