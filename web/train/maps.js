// maps.js — the attention maps of a prompt: one small heatmap per layer and head (rows: queries,
// columns: keys, the prompt's characters on both axes), drawn on canvases so that a 64-token
// prompt with many heads stays one cheap paint. Hovering or focusing a map shows it enlarged with
// readable labels and the weight under the pointer; each map is a link that opens the Attention
// Stepper (web/index.html) in Q, K, V mode with that head's q, k, v, through the stepper's own
// permalink format (web/stepper/permalink.js), so the stepper recomputes the same weights with
// all its cell arithmetic.
//
// Colour is not the only cue: masked keys are hatched (not just pale), each row's strongest key
// carries a dot, and the enlarged view reads out the exact weight under the pointer.
// Limits: the stepper takes matrices of at most 64 rows (its MAX_DIM), so the page's prompt for
// the maps is at most 64 characters (config.js STEPPER_MAX_ROWS).
import { encodeState } from '../stepper/permalink.js';
import { el } from '../ui.js';

// the stepper's sequential scale (ColorBrewer Blues, stepper.css h0…h8), interpolated
const STOPS = ['#f7fbff', '#deebf7', '#c6dbef', '#9ecae1', '#6baed6', '#4292c6', '#2171b5', '#08519c', '#08306b']
  .map((h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)));

export function heat(w) {
  const x = Math.max(0, Math.min(1, w)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const a = STOPS[i];
  const b = STOPS[i + 1];
  return `rgb(${Math.round(a[0] + (b[0] - a[0]) * f)},${Math.round(a[1] + (b[1] - a[1]) * f)},${Math.round(a[2] + (b[2] - a[2]) * f)})`;
}

/**
 * A token as a label: every space, newline and tab made visible (␣ ↵ ⇥), so GPT-2's piece " the"
 * shows as "␣the". The one convention; the CLI's is core/bpe.h's visible_token.
 */
export function tokenLabel(s) {
  return String(s).replace(/[ \n\t]/g, (c) => (c === ' ' ? '␣' : c === '\n' ? '↵' : '⇥'));
}

/** `s` cut to at most `w` px in ctx's font, ending in "…" when cut (at least its first character). */
function fitText(ctx, s, w) {
  const cs = [...s];
  if (cs.length <= 1 || ctx.measureText(s).width <= w) return s;
  while (cs.length > 1 && ctx.measureText(`${cs.join('')}…`).width > w) cs.pop();
  return `${cs.join('')}…`;
}

/** Whether key j is hidden from query i by the model's mask (base 0). */
export const masked = (i, j, mask) => (mask === 'inclusive' ? j >= i : j > i);

/** A matrix (number[][]) as the stepper's matrix text: rows on lines, cells by spaces. */
export const matrixText = (m) => m.map((r) => r.map((v) => String(v)).join(' ')).join('\n');

/**
 * The stepper's state for one head's spec {Q, K, V, n_head, causal, mask, softmax}: Q, K, V
 * mode, no W_o, so its weights panel is this head's attention.
 */
export function stepperState(spec, lang) {
  return {
    version: 1,
    preset: 'custom',
    mode: 'qkv',
    matrices: { Q: matrixText(spec.Q), K: matrixText(spec.K), V: matrixText(spec.V) },
    use_W_o: false,
    options: { n_head: 1, causal: spec.causal !== false, mask: spec.mask ?? 'strict', base: 0, scale: true, softmax: spec.softmax ?? 'stable' },
    seed: 1,
    view: 'all',
    step: 0,
    head: 0,
    lang,
    focus: null,
  };
}

/** The stepper page's URL for a head, relative to this file. */
export function stepperUrl(spec, lang) {
  return new URL('../index.html', import.meta.url).href.split('#')[0] + encodeState(stepperState(spec, lang));
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

/** From this width of the maps' box on, the enlarged map stands beside the grid (train.css says the same). */
const BESIDE = 960;

/** The enlarged map's cell size for a box W px wide and T tokens. */
function zoomCell(W, T) {
  const avail = Math.max(200, Math.min(620, W - 24));
  return Math.max(8, Math.min(26, Math.floor((avail - 24) / T)));
}

export class MapsView {
  /** @param {{t: Function, lang: string}} opts */
  constructor(root, opts) {
    this.opts = opts;
    this.result = null;
    this.mask = 'strict';
    this.zoomed = null;
    this.width = 0;
    // the box's width, kept up to date without asking for a layout in the middle of a render
    this.ro = new ResizeObserver((entries) => { this.width = entries[entries.length - 1].contentRect.width; });
    this.root = root;
  }

  get root() { return this._root; }
  set root(r) {
    this.ro.disconnect();
    this._root = r;
    this.ro.observe(r);
  }

  /** result: the worker's maps answer; mask: the model's. */
  show(result, mask) {
    this.result = result;
    this.mask = mask;
    this.render();
  }

  clear() {
    this.result = null;
    this.root.replaceChildren();
  }

  render() {
    const { t, lang } = this.opts;
    const r = this.result;
    this.root.replaceChildren();
    if (!r) return;
    const { T, n_layer: L, n_head: NH, tokens, weights, specs } = r;
    const pending = [];
    const grid = el('div', 'tr-maps-grid');
    grid.setAttribute('role', 'list');
    // Cell size from the room there is: the enlarged map takes its width beside the grid (from
    // BESIDE px; below it, under it), then a layer's heads share one row if each can have ~100 px,
    // else half as many per row; at most ~170 px a map.
    const W = this.width || 600;
    const cz = zoomCell(W, T);
    const gridW = W >= BESIDE ? W - Math.max(288, (cz + 8) + T * cz + 26) - 16 : W;
    let perRow = NH;
    let per = (gridW - (perRow - 1) * 10) / perRow - 12;
    while (per < 100 && perRow > 1) {
      perRow = Math.ceil(perRow / 2);
      per = (gridW - (perRow - 1) * 10) / perRow - 12;
    }
    per = Math.min(170, per);
    const c = Math.max(3, Math.min(14, Math.floor((per - 4) / (T + 1))));
    const m = c >= 6 ? c + 4 : 0;
    for (let l = 0; l < L; l++) {
      const row = el('div', 'tr-maps-row');
      row.setAttribute('role', 'listitem');
      row.append(el('h4', 'tr-maps-layer', t('maps.layer', { l: l + 1 })));
      const heads = el('div', 'tr-maps-heads');
      for (let h = 0; h < NH; h++) {
        const a = el('a', 'tr-map');
        a.href = stepperUrl(specs[l][h], lang);
        a.target = '_blank';
        a.rel = 'noopener';
        a.dataset.layer = String(l);
        a.dataset.head = String(h);
        a.setAttribute('aria-label', t('maps.open', { l: l + 1, h: h + 1 }));
        const canvas = el('canvas', 'tr-map-canvas');
        canvas.setAttribute('aria-hidden', 'true');
        // its final size now (no reflow later); its pixels a few maps per frame (below)
        canvas.style.width = `${m + T * c}px`;
        canvas.style.height = `${m + T * c}px`;
        pending.push(() => draw(canvas, { weights, offset: (l * NH + h) * T * T, T, tokens, mask: this.mask }, c, m));
        a.append(canvas, el('span', 'tr-map-caption', t('maps.head', { h: h + 1 })));
        const zoom = () => this.zoom(l, h, a);
        a.addEventListener('mouseenter', zoom);
        a.addEventListener('focus', zoom);
        heads.append(a);
      }
      row.append(heads);
      grid.append(row);
    }
    this.zoomBox = el('figure', 'tr-zoom');
    this.root.append(grid, this.zoomBox);
    this.zoom(0, 0, grid.querySelector('.tr-map'));
    // Draw the small maps a few at a time, one batch per animation frame (≈ 8 ms of work each),
    // so a model with many heads and a long prompt never holds the page's thread for long.
    const token = (this.drawing = {});
    const step = () => {
      if (this.drawing !== token) return; // a newer render took over
      const t0 = performance.now();
      while (pending.length && performance.now() - t0 < 8) pending.shift()();
      if (pending.length) requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  }

  /** Shows one head enlarged, with readable labels and a readout of the weight under the pointer. */
  zoom(l, h, link) {
    const { t } = this.opts;
    const r = this.result;
    if (!r || !this.zoomBox) return;
    this.root.querySelectorAll('.tr-map.is-zoomed').forEach((x) => x.classList.remove('is-zoomed'));
    link?.classList.add('is-zoomed');
    this.zoomed = { l, h };
    const { T, n_head: NH, tokens, weights } = r;
    const offset = (l * NH + h) * T * T;
    const c = zoomCell(this.width || 600, T);
    const m = c + 8;
    const box = this.zoomBox;
    box.replaceChildren();
    const cap = el('figcaption', 'tr-zoom-caption');
    cap.append(el('strong', '', t('maps.zoomTitle', { l: l + 1, h: h + 1 })), document.createTextNode(` ${t('maps.axes')}`));
    const scroll = el('div', 'tr-zoom-scroll');
    const canvas = el('canvas', 'tr-zoom-canvas');
    canvas.setAttribute('aria-hidden', 'true');
    draw(canvas, { weights, offset, T, tokens, mask: this.mask }, c, m);
    scroll.append(canvas);
    // as wide as its map (its caption wraps), so the grid of small maps gets the rest (CSSOM)
    box.style.width = this.width >= BESIDE ? `${Math.max(288, m + T * c + 26)}px` : '';
    const readout = el('p', 'tr-zoom-readout', t('maps.readoutHint'));
    readout.setAttribute('aria-live', 'polite');
    canvas.addEventListener('mousemove', (e) => {
      const rect = canvas.getBoundingClientRect();
      const j = Math.floor((e.clientX - rect.left - m) / c);
      const i = Math.floor((e.clientY - rect.top - m) / c);
      if (i < 0 || j < 0 || i >= T || j >= T) { readout.textContent = t('maps.readoutHint'); return; }
      const q = tokenLabel(tokens[i]);
      const k = tokenLabel(tokens[j]);
      readout.textContent = masked(i, j, this.mask)
        ? t('maps.readoutMasked', { i: i + 1, q, j: j + 1, k })
        : t('maps.readout', { i: i + 1, q, j: j + 1, k, w: weights[offset + i * T + j].toFixed(4) });
    });
    const open = el('a', 'aps-btn tr-zoom-open', t('maps.openBtn', { l: l + 1, h: h + 1 }));
    open.href = link?.href ?? '#';
    open.target = '_blank';
    open.rel = 'noopener';
    open.tabIndex = -1; // the small map is the keyboard's link; this one is for the mouse
    box.append(cap, scroll, readout, open);
  }
}
