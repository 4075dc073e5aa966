// panels.js — a read-only matrix of one step: numbers always visible, a colour-blind-safe
// sequential heatmap behind them (ColorBrewer "Blues", bins h0…h8) or, for the signed gradients,
// a diverging one centred on 0 (PuOr, d0…d8), −∞ and NaN drawn distinctly.
//
// How it is drawn (a repaint budget per edit, measured with npm run bench:stepper):
//   - The heatmap and its numbers are painted on a <canvas> behind a real <table>: the cells and
//     the numbers into a pixel buffer from glyph masks that the canvas rasterised once
//     (pixels.js), put on the canvas at once; the patterned cells (−∞, NaN) with the canvas's
//     paths and fillText after it. The table holds the same numbers as text, transparent over
//     the canvas: it is what screen readers read, what a selection selects (selected text shows
//     in ink) and what Ctrl+C copies, and its cells take focus, hover, the arrow keys and the
//     outlines of the cell arithmetic.
//   - The canvas is painted in the frame of the edit; the table's text, classes and titles follow
//     right after that frame is rendered (the next frame has them: within two frames of the edit;
//     panels near the screen a frame later, far ones in the next idle periods or, after 250 ms,
//     one per task),
//     and at once when anything could read them: a mousedown or a focus in the table, a selection
//     starting, a copy, printing (text-queue.js: flushPending). Other writes of an edit that are not its numbers
//     (the status line) wait for the same pass (text-queue.js: afterFrame), so the edit's frame lays out the
//     cell editor alone.
//   - Geometry does not depend on the text: column widths are set from the numbers' widths
//     (canvas measureText) with table-layout: fixed, rows have a fixed height, so the canvas and
//     the table's cells line up without reading layout, and changing text never moves anything.
//   - The edit's frame paints only the panels on the screen; those within half a screen of it are
//     painted right after that frame (hidden until then), the others when they come near
//     (IntersectionObservers). One whose canvas is behind hides it and shows its table's own text
//     and colours instead once they are current (a full-page screenshot, printing), and nothing
//     while they are not, so a stale number is never on screen.
//   - Without a canvas (forced colours / Windows high contrast, or a matrix too large for one)
//     the table shows its text and colours itself, updated at once, as before.
// Cells are updated in place; the table is rebuilt only when the shape changes. Cells are keyboard
// focusable with a roving tabindex (arrow keys move).
import { el, setText } from '../common/ui.js';
import { formatNumber } from '../common/format.js';
import { queueSync, takePending, flushPending } from './text-queue.js';
import { PixelBuffer, glyphWidth } from './pixels.js';

export { setText }; // ui.js's, exported here too

export const BINS = 9;
/** ColorBrewer "Blues" and the ink that reads on each (the same as stepper.css h0…h8). */
export const BLUES = ['#f7fbff', '#deebf7', '#c6dbef', '#9ecae1', '#6baed6', '#4292c6', '#2171b5', '#08519c', '#08306b'];
export const BLUES_INK = ['#0b1a2b', '#0b1a2b', '#0b1a2b', '#0b1a2b', '#0b1a2b', '#06111d', '#ffffff', '#ffffff', '#ffffff'];
/** ColorBrewer "PuOr" (orange negative … purple positive) and its ink (stepper.css d0…d8). */
export const PUOR = ['#b35806', '#e08214', '#fdb863', '#fee0b6', '#f7f7f7', '#d8daeb', '#b2abd2', '#8073ac', '#542788'];
export const PUOR_INK = ['#ffffff', '#1a0f00', '#1a0f00', '#1a0f00', '#1c2027', '#100a1f', '#100a1f', '#0a0614', '#ffffff'];
const ERROR = '#b42318';
const MUTED = '#4b5058';
const INK = '#1c2027';
/** A canvas larger than this (device pixels) is not worth its memory: the table draws itself. */
const MAX_CANVAS_PIXELS = 12_000_000;

function title(e, text) {
  if (text === null) e.removeAttribute('title'); else e.title = text;
}

/** Whether two updates show the same: same numbers, range, colour map and cell classes. */
function sameData(a, b) {
  if (!a || a.lo !== b.lo || a.hi !== b.hi || !!a.opts.diverging !== !!b.opts.diverging) return false;
  if ((a.opts.extra?.length ?? 0) || (b.opts.extra?.length ?? 0)) return false; // (the row statistics: small, always written)
  const x = a.m;
  const y = b.m;
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) {
    const r = x[i];
    const q = y[i];
    if (r.length !== q.length) return false;
    for (let j = 0; j < r.length; j++) {
      if (!Object.is(r[j], q[j])) return false;
      if (b.opts.cellClass && a.opts.cellClass?.(i, j) !== b.opts.cellClass(i, j)) return false;
    }
  }
  return true;
}

// Pointing follows the mouse, not the page. When the page scrolls or its layout shifts under a
// resting mouse (a cell focused with the keyboard scrolls it into view), Chrome sends trusted
// mouseover/mouseenter/mousemove events at the mouse's unchanged position; the content moved, not
// the pointer, so they must not take the explanation away from the focused cell. pointerMoved(e)
// says whether e comes from the mouse having moved since the last mousemove (a wheel scroll under
// a resting mouse then changes nothing until the mouse moves).
let lastMove = null; // clientX/Y of the last mousemove
let prevMove = null; // and of the one before it
if (typeof window !== 'undefined') {
  window.addEventListener('mousemove', (e) => { prevMove = lastMove; lastMove = { x: e.clientX, y: e.clientY }; }, { capture: true, passive: true });
}
export function pointerMoved(e) {
  const ref = e.type === 'mousemove' ? prevMove : lastMove; // a mousemove has already been recorded
  return !ref || ref.x !== e.clientX || ref.y !== e.clientY;
}

/**
 * The heat bin of one value, without a string: 0…8 (sequential from lo to hi, or diverging
 * centred on 0), −1 for NaN, −2 for −∞, −3 for +∞ (the canvas's per-cell path; look() names it).
 */
export function heatBin(v, lo, hi, diverging) {
  if (Number.isNaN(v)) return -1;
  if (v === -Infinity) return -2;
  if (v === Infinity) return -3;
  if (diverging) {
    // signed values (gradients): 0 in the middle bin d4, ±max(|v|) at d0 / d8
    const m = Math.max(Math.abs(lo), Math.abs(hi));
    const x = m > 0 ? v / m : 0;
    return Math.max(0, Math.min(BINS - 1, 4 + Math.round(x * 4)));
  }
  const span = hi - lo;
  const x = span > 0 ? (v - lo) / span : (hi > 0 ? 1 : 0);
  return Math.max(0, Math.min(BINS - 1, Math.round(x * (BINS - 1))));
}

/** The look of one value: its class (the table's) and bin. */
export function look(v, lo, hi, diverging) {
  const bin = heatBin(v, lo, hi, diverging);
  if (bin === -1) return { cls: 'aps-c is-nan', kind: 'nan' };
  if (bin === -2) return { cls: 'aps-c is-neginf', kind: 'neginf' };
  if (bin === -3) return { cls: 'aps-c is-posinf', kind: 'posinf' };
  return diverging ? { cls: `aps-c d${bin}`, kind: 'd', bin } : { cls: `aps-c h${bin}`, kind: 'h', bin };
}

let documentHooked = false;
function hookDocument() {
  if (documentHooked || typeof document === 'undefined') return;
  documentHooked = true;
  for (const type of ['selectstart', 'copy', 'cut', 'beforeprint']) document.addEventListener(type, flushPending, true);
  globalThis.addEventListener?.('beforeprint', flushPending);
}

const forcedColors = globalThis.matchMedia?.('(forced-colors: active)');

// Text is measured on a canvas that is not in the document (measureText needs no style of the
// page). The numbers are drawn on the visible canvas itself: drawing them outside the document and
// copying the picture over (to spare the font changes a style update) cost more than it saved once
// the DOM writes of an edit were moved after its frame (docs/performance-journal.md).
const HAS_OFFSCREEN = typeof OffscreenCanvas === 'function';
let measureCtx = null;
const widthCache = new Map();
/** The width (CSS px) of text in a font, measured once per (font, text). */
function textWidth(font, text) {
  const key = `${font}\u0001${text}`;
  let w = widthCache.get(key);
  if (w === undefined) {
    if (!measureCtx) measureCtx = HAS_OFFSCREEN ? new OffscreenCanvas(1, 1).getContext('2d') : document.createElement('canvas').getContext('2d');
    if (measureCtx.font !== font) measureCtx.font = font;
    w = measureCtx.measureText(text).width;
    if (widthCache.size > 20000) widthCache.clear();
    widthCache.set(key, w);
  }
  return w;
}

/** Font metrics of a font (the '0' advance and the font's ascent and descent). */
function fontMetrics(font) {
  textWidth(font, '0');
  measureCtx.font = font;
  const mt = measureCtx.measureText('0');
  return { zero: mt.width, ascent: mt.fontBoundingBoxAscent, descent: mt.fontBoundingBoxDescent };
}

// hatching for −∞ (and exact zeros under the mask) and stripes for NaN, like the CSS patterns
const patterns = new WeakMap();
export function pattern(ctx, kind) {
  let cache = patterns.get(ctx);
  if (!cache) { cache = {}; patterns.set(ctx, cache); }
  if (cache[kind]) return cache[kind];
  const s = 8;
  const tile = HAS_OFFSCREEN ? new OffscreenCanvas(s, s) : document.createElement('canvas');
  tile.width = s;
  tile.height = s;
  const c = tile.getContext('2d');
  const [a, b] = kind === 'nan' ? ['#fde2e0', '#ffffff'] : ['#e9e7e0', '#f6f5f1'];
  c.fillStyle = b;
  c.fillRect(0, 0, s, s);
  c.strokeStyle = a;
  c.lineWidth = s / 2.8;
  c.beginPath();
  for (const d of [-s, 0, s]) {
    if (kind === 'nan') { c.moveTo(d, 0); c.lineTo(d + s, s); } else { c.moveTo(d, s); c.lineTo(d + s, 0); }
  }
  c.stroke();
  cache[kind] = ctx.createPattern(tile, 'repeat');
  return cache[kind];
}

/** The cells drawn with a pattern (−∞ hatching, NaN stripes), not a plain colour. */
const isPattern = (fill) => fill === 'nan' || fill === 'neginf';
/**
 * Whether cells and numbers are drawn from a pixel buffer (pixels.js) rather than with paths and
 * fillText: always where ImageData exists, unless globalThis.APS_NO_PIXELS is set (read at each
 * paint) — the reference drawing that tests/e2e/pixels.spec.mjs compares the buffer with.
 */
const HAS_IMAGE_DATA = typeof ImageData === 'function';
const usePixels = () => HAS_IMAGE_DATA && !globalThis.APS_NO_PIXELS;
let sharedPixels = null;

/** One colour's cells on a 2D context (a pattern for −∞ and NaN, NaN's outlined too). */
function fillCells(ctx, fill, rects, rect) {
  ctx.fillStyle = isPattern(fill) ? pattern(ctx, fill) : fill;
  ctx.beginPath();
  for (const [x0, y0, w, h] of rects) rect(ctx, x0, y0, w, h);
  ctx.fill();
  if (fill === 'nan') {
    ctx.strokeStyle = ERROR;
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (const [x0, y0, w, h] of rects) rect(ctx, x0 + 0.5, y0 + 0.5, w - 1, h - 1);
    ctx.stroke();
  }
}

/** The widest a text label of a row or a column may make its header (em of the numbers' font). */
const LABEL_EM = 9;
/** An element's horizontal padding (px). */
const paddingX = (e) => { const cs = getComputedStyle(e); return parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight); };
/** A row or column header's text label (its title too, for one cut by the ellipsis). */
const labelHead = (th, text) => { setText(th, text); if (th.title !== text) th.title = text; };

export class MatrixView {
  /**
   * opts: { panel, label, onFocusCell(panel, r, c), onHover(panel, r, c | null, to: where the pointer went),
   *         compact?: boolean (smaller numbers, for small multiples),
   *         stats?: boolean (a table of row statistics only: a matrix with no columns plus extra),
   *         observer?: an IntersectionObserver from visibilityObserver() (paint only near the screen) }
   */
  constructor(opts) {
    this.o = opts;
    hookDocument();
    this.scroll = el('div', 'aps-mat-scroll');
    this.wrap = el('div', 'aps-mat-wrap');
    this.table = el('table', `aps-mat${opts.compact ? ' is-compact' : ''}${opts.stats ? ' aps-stats' : ''}`);
    this.table.setAttribute('role', 'grid');
    this.table.setAttribute('aria-readonly', 'true');
    this.table.setAttribute('aria-label', opts.label);
    this.canvas = el('canvas', 'aps-mat-canvas');
    this.canvas.setAttribute('aria-hidden', 'true');
    this.probe = el('div', 'aps-em-probe');
    this.probe.setAttribute('aria-hidden', 'true');
    this.wrap.append(this.canvas, this.table, this.probe);
    this.scroll.append(this.wrap);
    this.scroll.apsView = this;
    this.shape = '';
    this.pos = { r: 0, c: 0 };
    this.live = true; // near the screen (until the observer says otherwise)
    this.visible = true; // on the screen (idem)
    this.data = null; // the last update: { m, opts, lo, hi }
    this.painted = null; // the data the canvas shows
    this.synced = null; // the data the table's text shows
    this.geo = null;
    this.table.addEventListener('keydown', (e) => this.onKey(e));
    this.table.addEventListener('focusin', (e) => {
      this.flush();
      const td = e.target.closest('td[data-r]');
      if (!td) return;
      this.rove(+td.dataset.r, +td.dataset.c, false);
      opts.onFocusCell(opts.panel, +td.dataset.r, +td.dataset.c);
    });
    this.table.addEventListener('mousedown', () => this.flush(), true);
    this.table.addEventListener('click', (e) => {
      const td = e.target.closest('td[data-r]');
      if (!td) return;
      const input = td.querySelector('input');
      if (input) { if (e.target !== input) input.focus(); } else td.focus();
      opts.onActivate?.(opts.panel, +td.dataset.r, +td.dataset.c);
    });
    this.table.addEventListener('mouseover', (e) => {
      const td = e.target.closest('td[data-r]');
      if (td && pointerMoved(e)) opts.onHover(opts.panel, +td.dataset.r, +td.dataset.c);
    });
    this.table.addEventListener('mouseleave', (e) => opts.onHover(opts.panel, null, null, e.relatedTarget));
    // the font size changed (a media query, the embedding page, zoom): measure and paint again
    if (globalThis.ResizeObserver) {
      this.ro = new ResizeObserver(() => {
        if (!this.geo || this.probe.offsetWidth === this.geo.probe) return;
        this.geo = null;
        this.widths = null;
        this.painted = null;
        this.render();
      });
      this.ro.observe(this.probe);
    }
    opts.observer?.observe(this.scroll);
  }

  /** Whether the canvas draws this view (false: the table shows its own text and colours). */
  get canvasMode() {
    return !forcedColors?.matches && !this.noCanvas;
  }

  /**
   * m: number[][]; opts: { rowLabels, colLabels, range: [lo, hi] | null (auto),
   *   extra: [{ head, title, values: number[], cls, fmt? }] (columns after the matrix),
   *   rowClass(i), diverging: boolean (a signed map centred on 0, for gradients),
   *   cellClass(i, j) → extra class of one cell ('' for none) }
   */
  update(m, opts = {}) {
    const R = m.length;
    const C = R ? m[0].length : 0;
    const extra = opts.extra ?? [];
    const shape = `${R}x${C}x${extra.map((x) => x.head).join('|')}`;
    if (shape !== this.shape) this.build(R, C, extra);
    this.shape = shape;
    let lo = Infinity;
    let hi = -Infinity;
    if (opts.range) [lo, hi] = opts.range;
    else for (const row of m) for (const v of row) if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
    const next = { m, opts, lo, hi, texts: null };
    // the same numbers as before (V when W_q changed, …): nothing to paint or write
    if (!sameData(this.data, next)) this.data = next;
    else this.data.opts = opts;
    // what shows outside the numbers (row headers, labels) is written now
    for (let i = 0; i < R; i++) {
      const cls = opts.rowClass?.(i) ?? '';
      if (this.rowEls[i].className !== cls) this.rowEls[i].className = cls;
      if (opts.rowLabels) labelHead(this.rowHeads[i], String(opts.rowLabels[i]));
    }
    if (opts.colLabels) opts.colLabels.forEach((l, j) => labelHead(this.colHeads[j], String(l)));
    this.refreshAsk();
    this.render();
  }

  /** Paints (when near the screen) and queues the table's text; without a canvas, writes it now. */
  render() {
    if (!this.data) return;
    if (!this.canvasMode) {
      this.setCanvas(false);
      this.syncText();
      return;
    }
    if (this.painted === this.data && this.synced === this.data) return;
    if (this.visible) this.paint();
    else if (this.live) {
      // near the screen but not on it: painted right after this frame (the edit's frame paints
      // only what is on screen); hidden until then (opacity on one element, no restyle of cells;
      // not visibility, which would make its cells unfocusable for that frame)
      if (this.painted !== this.data && !this.hiddenNow) { this.wrap.style.opacity = '0'; this.hiddenNow = true; }
    } else {
      // far: not painted now; hide the canvas, and the table's text too until it is written
      this.wrap.classList.add('is-stale');
      if (this.synced !== this.data) this.wrap.classList.add('is-text-old');
    }
    if (this.synced !== this.data || this.painted !== this.data) queueSync(this);
  }

  /** A panel near the screen: paint what is behind, show it again. */
  catchUp() {
    if (this.data && this.canvasMode && this.painted !== this.data) this.paint();
    if (this.hiddenNow) { this.wrap.style.removeProperty('opacity'); this.hiddenNow = false; }
  }

  /** Near the screen (within half a screen) or not (from the IntersectionObserver). */
  setLive(live) {
    if (this.live === live) return;
    this.live = live;
    if (live && this.data && this.painted !== this.data) this.render();
  }

  /** On the screen or not: what is on screen is painted in the frame of the edit. */
  setVisible(visible) {
    if (this.visible === visible) return;
    this.visible = visible;
    if (visible && this.data && (this.painted !== this.data || this.hiddenNow)) { this.paint(); this.catchUp(); }
  }

  /** Paints now if the canvas is behind (a panel shown by step navigation, a scroll jump). */
  ensurePainted() {
    if (this.data && this.canvasMode && this.painted !== this.data) this.paint();
    this.catchUp();
  }

  /** The table's text now (it is otherwise written right after the next frame). */
  flush() {
    if (takePending(this)) { this.catchUp(); this.syncText(); }
  }

  setCanvas(on) {
    this.table.classList.toggle('is-canvas', on);
    this.table.classList.toggle('is-sized', on);
    if (!on) {
      this.wrap.classList.remove('is-stale');
      this.wrap.style.removeProperty('contain-intrinsic-size');
      this.table.style.removeProperty('width');
      for (const c of this.cols ?? []) c.style.removeProperty('width');
      this.painted = null;
      if (this.canvas.width) { this.canvas.width = 0; this.canvas.height = 0; }
    }
  }

  build(R, C, extra) {
    this.table.replaceChildren();
    const colgroup = el('colgroup');
    this.cols = [];
    for (let j = 0; j < 1 + C + extra.length; j++) { const c = el('col'); colgroup.append(c); this.cols.push(c); }
    this.table.append(colgroup);
    const head = this.table.createTHead().insertRow();
    head.append(el('th', 'aps-corner'));
    this.colHeads = [];
    for (let j = 0; j < C; j++) {
      const th = el('th', 'aps-idx', String(j + 1));
      th.scope = 'col';
      head.append(th);
      this.colHeads.push(th);
    }
    for (const x of extra) {
      const th = el('th', `aps-idx aps-extra-head ${x.cls ?? ''}`, x.head);
      th.scope = 'col';
      if (x.title) th.title = x.title;
      head.append(th);
    }
    const body = this.table.createTBody();
    this.tds = [];
    this.cache = [];
    this.marked = [];
    this.extraTds = [];
    this.rowEls = [];
    this.rowHeads = [];
    for (let i = 0; i < R; i++) {
      const tr = body.insertRow();
      this.rowEls.push(tr);
      const th = el('th', 'aps-idx', String(i + 1));
      th.scope = 'row';
      tr.append(th);
      this.rowHeads.push(th);
      const row = [];
      for (let j = 0; j < C; j++) {
        const td = el('td');
        td.append(document.createTextNode(''));
        td.setAttribute('role', 'gridcell');
        td.dataset.r = i;
        td.dataset.c = j;
        td.tabIndex = -1;
        tr.append(td);
        row.push(td);
      }
      this.tds.push(row);
      this.cache.push(row.map((td) => ({ v: undefined, text: '', title: null, cls: '', lo: 0, hi: 0, xc: '', node: td.firstChild })));
      this.extraTds.push(extra.map(() => { const td = el('td', 'aps-extra'); td.append(document.createTextNode('')); tr.append(td); return td; }));
    }
    this.pos = { r: Math.min(this.pos.r, R - 1), c: Math.min(this.pos.c, C - 1) };
    if (R && C) this.tds[this.pos.r][this.pos.c].tabIndex = 0;
    this.geo = null;
    this.painted = null;
    this.synced = null;
    this.widths = null; // (a new table: refreshAsk writes its questions again)
  }

  /** The texts of the current data (numbers and extra columns), computed once per update. */
  texts() {
    const d = this.data;
    if (d.texts) return d.texts;
    const cells = d.m.map((row) => row.map((v) => formatNumber(v)));
    const extra = (d.opts.extra ?? []).map((x) => x.values.map((v) => (x.fmt ? x.fmt(v) : formatNumber(v))));
    d.texts = { cells, extra };
    return d.texts;
  }

  /** Font metrics of the table (read from the computed style once per build or font change). */
  measure() {
    const cs = getComputedStyle(this.table);
    const fontPx = parseFloat(cs.fontSize);
    const family = cs.fontFamily;
    const thPx = this.rowHeads?.[0] ? parseFloat(getComputedStyle(this.rowHeads[0]).fontSize) : fontPx * 0.84;
    if (!this.canvas.getContext) { this.noCanvas = true; return null; }
    const font = (style = '', weight = '') => `${style} ${weight} ${fontPx}px ${family}`.trim();
    const mt = fontMetrics(font());
    const ascent = mt.ascent ?? fontPx * 0.8;
    const descent = mt.descent ?? fontPx * 0.2;
    const digitTh = textWidth(`${thPx}px ${family}`, '0');
    // cell padding and row height in em of the numbers' font, from stepper.css (narrower on phones)
    const em = (name, dflt) => { const v = parseFloat(cs.getPropertyValue(name)); return Number.isFinite(v) ? v : dflt; };
    const rowH = Math.round(fontPx * em('--aps-cell-h', 2));
    const padX = Math.round(fontPx * em('--aps-cell-pad', 0.45));
    const R = this.tds.length;
    this.geo = {
      fontPx, family, font, ascent, descent, rowH, padX, sp: 2,
      headH: Math.round(thPx * 1.6),
      thFont: `500 ${thPx}px ${family}`, thPad: this.rowHeads?.[0] ? paddingX(this.rowHeads[0]) : 2 * Math.round(thPx * 0.3),
      rowHeadW: Math.ceil(digitTh * Math.max(2, String(R).length) + 2 * Math.round(thPx * 0.3)),
      minW: Math.ceil(mt.zero * 6 + 2 * padX),
      probe: this.probe.offsetWidth,
    };
    return this.geo;
  }

  /** Column widths (px) for the current texts: the widest text of each column, at least "0.0000". */
  layoutColumns(ctx, g, texts) {
    const C = texts.cells[0]?.length ?? 0;
    const widest = (list) => {
      let best = '';
      for (const s of list) if (s.length > best.length) best = s;
      return best;
    };
    const widths = [];
    const measure = (s, bold) => (usePixels() ? glyphWidth : textWidth)(g.font('', bold ? '700' : ''), s); // as it will be drawn
    for (let j = 0; j < C; j++) {
      // an asked cell is as wide as an answer may be, whatever the value (its width tells nothing)
      const s = widest(texts.cells.map((r, i) => (this.ask?.has(`${i},${j}`) ? '−0.000000' : r[j])));
      widths.push(Math.max(g.minW, g.colMin?.[j] ?? 0, Math.ceil(measure(s, s === 'NaN') + 2 * g.padX + 1)));
    }
    const extra = this.data.opts.extra ?? [];
    texts.extra.forEach((vals, k) => {
      const s = widest([...vals, extra[k].head]);
      widths.push(Math.ceil(measure(s, true) + 2 * g.padX + 2));
    });
    return widths;
  }

  /** The geometry widened for text labels (a prompt's tokens), up to LABEL_EM em (then "…", the title whole). */
  labelGeometry(g) {
    const { rowLabels, colLabels } = this.data.opts;
    if (!rowLabels && !colLabels) return g;
    const w = (s) => Math.min(Math.round(g.fontPx * LABEL_EM), Math.ceil(textWidth(g.thFont, String(s))) + g.thPad + 2);
    return { ...g, rowHeadW: rowLabels ? Math.max(g.rowHeadW, ...rowLabels.map(w)) : g.rowHeadW, colMin: colLabels?.map(w) };
  }

  /** Sets the table's geometry (fixed layout) from the widths; written only when it changes. */
  applyGeometry(g, widths) {
    const key = `${g.rowH}|${g.headH}|${g.rowHeadW}|${widths.join(',')}`;
    if (this.widths === key) return;
    this.widths = key;
    const total = g.sp + g.rowHeadW + widths.reduce((a, w) => a + w + g.sp, 0) + g.sp;
    this.table.style.width = `${total}px`;
    this.table.style.setProperty('--aps-row-h', `${g.rowH}px`);
    this.table.style.setProperty('--aps-head-h', `${g.headH}px`);
    this.table.style.setProperty('--aps-pad-x', `${g.padX}px`);
    this.cols[0].style.width = `${g.rowHeadW}px`;
    widths.forEach((w, k) => { this.cols[k + 1].style.width = `${w}px`; });
    const W = widths.reduce((a, w) => a + w + g.sp, 0) - g.sp;
    const H = this.tds.length * (g.rowH + g.sp) - g.sp;
    this.canvas.style.left = `${g.sp + g.rowHeadW + g.sp}px`;
    this.canvas.style.top = `${g.sp + g.headH + g.sp}px`;
    this.canvas.style.width = `${Math.max(0, W)}px`;
    this.canvas.style.height = `${Math.max(0, H)}px`;
    this.cssSize = [Math.max(0, W), Math.max(0, H)];
    // the exact size, for content-visibility: auto while the table is skipped (off screen)
    this.wrap.style.containIntrinsicSize = `${total}px ${g.sp + g.headH + g.sp + H + g.sp}px`;
  }

  /**
   * The fixed geometry for the current data (measured widths, fixed rows), set on the table; null
   * when there is no canvas to paint (no 2D context, or a canvas too large to be worth it).
   */
  ensureGeometry() {
    const g0 = this.geo ?? this.measure();
    if (!g0) return null;
    const g = this.labelGeometry(g0);
    const widths = this.layoutColumns(null, g, this.texts());
    this.applyGeometry(g, widths);
    const [W, H] = this.cssSize;
    const dpr = globalThis.devicePixelRatio || 1;
    if (W * H * dpr * dpr > MAX_CANVAS_PIXELS) { this.noCanvas = true; return null; }
    this.setCanvas(true);
    return { g, widths };
  }

  /** Paints the heatmap and the numbers of the current data on the canvas. */
  paint() {
    const pixels = usePixels();
    const d = this.data;
    const geometry = this.ensureGeometry();
    if (!geometry) { this.render(); return; }
    const { g, widths } = geometry;
    const texts = this.texts();
    const [W, H] = this.cssSize;
    const dpr = globalThis.devicePixelRatio || 1;
    const bw = Math.max(1, Math.round(W * dpr));
    const bh = Math.max(1, Math.round(H * dpr));
    // drawn straight on the visible canvas: a picture drawn outside the document and copied onto
    // it cost the copy and a second rasterisation (the edit's script time, 16 × 16, 4 heads: 18 ms
    // of CPU against 21 under load; docs/performance-journal.md)
    if (this.canvas.width !== bw || this.canvas.height !== bh) { this.canvas.width = bw; this.canvas.height = bh; }
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const { m, opts, lo, hi } = d;
    const R = m.length;
    const C = R ? m[0].length : 0;
    const ask = this.ask;
    // backgrounds, grouped by fill (one path per colour; with the pixel buffer, by row, and only the
    // patterned ones by fill), then the numbers grouped by font and ink (the plain cells' in a list)
    const fills = new Map();
    const inks = new Map();
    const patternInks = new Map(); // the text of the patterned cells (−∞, NaN): drawn on the canvas after them
    const xs = [];
    let x = 0;
    for (let j = 0; j < widths.length; j++) { xs.push(x); x += widths[j] + g.sp; }
    const radius = 4;
    const rect = (path, x0, y0, w, h) => (path.roundRect ? path.roundRect(x0, y0, w, h, radius) : path.rect(x0, y0, w, h));
    const addText = (key, item, to = inks) => { if (!to.has(key)) to.set(key, []); to.get(key).push(item); };
    const rowCells = pixels ? Array.from({ length: R }, () => []) : null; // [x, w, fill, …] per row
    const plain = []; // the plain cells' numbers: [text, x, y, ink, fill, …]
    for (let i = 0; i < R; i++) {
      const y = i * (g.rowH + g.sp);
      for (let j = 0; j < C; j++) {
        if (ask?.has(`${i},${j}`)) continue; // an exercise's cell: the learner's input, never the answer
        const v = m[i][j];
        const bin = heatBin(v, lo, hi, opts.diverging);
        const xc = opts.cellClass?.(i, j) ?? '';
        if (pixels && bin >= 0 && !xc.includes('is-masked0')) {
          // a plain cell (most of them): its colour and number straight into the buffer's lists
          const fill = opts.diverging ? PUOR[bin] : BLUES[bin];
          rowCells[i].push(xs[j], widths[j], fill);
          plain.push(texts.cells[i][j], xs[j] + widths[j] - g.padX, y, opts.diverging ? PUOR_INK[bin] : BLUES_INK[bin], fill);
          continue;
        }
        const L = look(v, lo, hi, opts.diverging);
        let fill;
        let ink;
        let style = '';
        let align = 'right';
        if (L.kind === 'nan') { fill = 'nan'; ink = ERROR; style = '800'; align = 'center'; }
        else if (L.kind === 'neginf') { fill = 'neginf'; ink = MUTED; style = 'italic'; align = 'center'; }
        else if (L.kind === 'posinf') { fill = '#fff0d6'; ink = '#7a4100'; style = '700'; align = 'center'; }
        else if (xc.includes('is-masked0')) { fill = 'neginf'; ink = MUTED; style = 'italic'; }
        else if (L.kind === 'd') { fill = PUOR[L.bin]; ink = PUOR_INK[L.bin]; }
        else { fill = BLUES[L.bin]; ink = BLUES_INK[L.bin]; }
        if (pixels && !isPattern(fill)) rowCells[i].push(xs[j], widths[j], fill);
        else {
          if (!fills.has(fill)) fills.set(fill, []);
          fills.get(fill).push([xs[j], y, widths[j], g.rowH]);
        }
        addText(`${style}|${ink}|${align}`, [texts.cells[i][j], align === 'center' ? xs[j] + widths[j] / 2 : xs[j] + widths[j] - g.padX, y, fill], isPattern(fill) ? patternInks : inks);
      }
      if (this.hiddenRows?.has(i)) {
        // an exercise asks this row: its Σ/max/H would tell the answer
        (opts.extra ?? []).forEach((col, k) => { const jx = C + k; addText(`|#8a94a6|right`, ['?', xs[jx] + widths[jx] - g.padX, y]); });
        continue;
      }
      (opts.extra ?? []).forEach((col, k) => {
        const v = col.values[i];
        const nan = Number.isNaN(v);
        const style = nan || col.cls === 'is-sum' ? '700' : col.cls === 'is-derived' ? 'italic' : '';
        const ink = nan ? ERROR : col.cls === 'is-derived' ? '#5d636d' : INK;
        const jx = C + k;
        addText(`${style}|${ink}|right`, [texts.extra[k][i], xs[jx] + widths[jx] - g.padX, y]);
      });
    }
    const base = Math.round((g.rowH - (g.ascent + g.descent)) / 2 + g.ascent);
    const fontOf = (style) => g.font(style === 'italic' ? 'italic' : '', style === 'italic' ? '' : style);
    // the Σ column's left rule
    const sum = opts.extra?.findIndex((x) => x.cls === 'is-sum') ?? -1;
    if (pixels) {
      // cells and numbers into a pixel buffer, put at once; the patterned cells on the canvas after
      const pb = (sharedPixels ??= new PixelBuffer()); // (panels are painted one at a time)
      pb.begin(bw, bh, dpr);
      for (let i = 0; i < R; i++) pb.cellRow(i * (g.rowH + g.sp), g.rowH, radius, rowCells[i]);
      if (sum >= 0) pb.rect(xs[C + sum], 0, 2, H, '#dddbd4');
      const f0 = fontOf('');
      for (let k = 0; k < plain.length; k += 5) pb.text(plain[k], plain[k + 1], plain[k + 2] + base, f0, plain[k + 3], 'right', plain[k + 4]);
      for (const [key, items] of inks) {
        const [style, ink, align] = key.split('|');
        const f = fontOf(style);
        for (const [s, tx, y, bg] of items) pb.text(s, tx, y + base, f, ink, align, bg ?? null);
      }
      pb.put(ctx);
    } else {
      ctx.clearRect(0, 0, W, H);
      for (const [fill, rects] of fills) if (!isPattern(fill)) fillCells(ctx, fill, rects, rect);
      if (sum >= 0) { ctx.fillStyle = '#dddbd4'; ctx.fillRect(xs[C + sum], 0, 2, H); }
    }
    for (const [fill, rects] of fills) if (isPattern(fill)) fillCells(ctx, fill, rects, rect);
    ctx.textBaseline = 'alphabetic';
    for (const [key, items] of pixels ? patternInks : [...inks, ...patternInks]) {
      const [style, ink, align] = key.split('|');
      const f = fontOf(style);
      if (ctx.font !== f) ctx.font = f;
      ctx.fillStyle = ink;
      ctx.textAlign = align;
      for (const [s, tx, y] of items) ctx.fillText(s, tx, y + base);
    }
    this.painted = d;
    if (this.wrap.classList.contains('is-stale')) this.wrap.classList.remove('is-stale');
  }

  /** Writes the table's text, titles and classes for the current data (only what changed). */
  syncText() {
    const d = this.data;
    if (!d || this.synced === d) return;
    if (this.canvasMode && !this.ensureGeometry()) this.setCanvas(false); // sized as it will be painted
    const { m, opts, lo, hi } = d;
    const texts = this.texts();
    const R = m.length;
    const C = R ? m[0].length : 0;
    const extra = opts.extra ?? [];
    const ask = this.ask;
    for (let i = 0; i < R; i++) {
      const rowTds = this.tds[i];
      const cache = this.cache[i];
      for (let j = 0; j < C; j++) {
        if (ask?.has(`${i},${j}`)) continue;
        const v = m[i][j];
        const c = cache[j];
        const xc = opts.cellClass?.(i, j) ?? '';
        if (Object.is(c.v, v) && c.lo === lo && c.hi === hi && c.xc === xc) continue;
        const td = rowTds[j];
        if (!Object.is(c.v, v)) {
          const text = texts.cells[i][j];
          if (c.text !== text) {
            if (c.node.parentNode === td) c.node.data = text;
            else { td.textContent = text; c.node = td.firstChild; } // someone replaced the text
            c.text = text;
          }
          const title = Number.isFinite(v) ? String(v) : text;
          if (c.title !== title) { td.title = title; c.title = title; }
        }
        const k = look(v, lo, hi, opts.diverging).cls + (xc ? ` ${xc}` : '');
        if (c.cls !== k) { if (c.cls) td.classList.remove(...c.cls.split(' ')); td.classList.add(...k.split(' ')); c.cls = k; }
        c.v = v; c.lo = lo; c.hi = hi; c.xc = xc;
      }
      for (let k = 0; k < extra.length; k++) {
        const v = extra[k].values[i];
        const td = this.extraTds[i][k];
        const text = this.hiddenRows?.has(i) ? '?' : texts.extra[k][i];
        if (td.firstChild?.data !== text) td.firstChild ? (td.firstChild.data = text) : (td.textContent = text);
        const ec = `aps-extra ${extra[k].cls ?? ''}${Number.isNaN(v) ? ' is-nan' : ''}`;
        if (td.className !== ec) td.className = ec;
      }
    }
    this.synced = d;
    if (this.wrap.classList.contains('is-text-old')) this.wrap.classList.remove('is-text-old');
  }

  /**
   * Exercise cells. keys: a Set of "r,c" (0-based) or null; mode: 'quiz' (an <input> for the
   * learner's answer, the value neither painted nor in the table), 'author' (the value shown,
   * the cell marked as asked), 'shown' (the value shown after the exercise: revealed or solved).
   * ctl: { answer(i, j) → text, status(i, j) → 'right'|'wrong'|'invalid'|'empty'|'' ,
   *        label(i, j, status) → the input's accessible name, onInput(i, j, text), onKey(e, i, j) }.
   * Call before update(); the asked cells are refreshed by every update.
   */
  setAsk(keys, mode, ctl) {
    const quiz = mode === 'quiz' && keys?.size ? keys : null;
    const before = this.askKeys ?? new Set();
    const after = keys ?? new Set();
    this.askMode = keys?.size ? mode : null;
    this.askCtl = ctl;
    // cells that stop being questions get their text back (written by the next sync)
    for (const k of before) {
      if (after.has(k) && mode === 'quiz' && this.ask) continue;
      const [i, j] = k.split(',').map(Number);
      const td = this.tds?.[i]?.[j];
      if (!td) continue;
      td.querySelector('input.aps-answer')?.remove();
      td.querySelector('.aps-answer-mark')?.remove();
      td.classList.remove('is-ask', 'is-asked', 'is-shown', 'is-right', 'is-wrong', 'is-invalid');
      if (!td.firstChild || td.firstChild.nodeType !== 3) td.prepend(document.createTextNode(''));
      this.cache[i][j] = { v: undefined, text: '', title: null, cls: '', lo: 0, hi: 0, xc: '', node: td.firstChild };
    }
    this.askKeys = after;
    const changed = (this.ask?.size ?? 0) !== (quiz?.size ?? 0) || [...(quiz ?? [])].some((k) => !this.ask?.has(k));
    this.ask = quiz;
    if (changed) { this.widths = null; this.painted = null; this.synced = null; }
  }

  /** Writes the asked cells: inputs, their answers and marks (quiz), or the asked/shown classes. */
  refreshAsk() {
    if (!this.askKeys?.size || !this.tds) return;
    const ctl = this.askCtl;
    for (const k of this.askKeys) {
      const [i, j] = k.split(',').map(Number);
      const td = this.tds[i]?.[j];
      if (!td) continue;
      if (this.askMode !== 'quiz') {
        td.classList.toggle('is-asked', this.askMode === 'author');
        td.classList.toggle('is-shown', this.askMode === 'shown');
        continue;
      }
      let input = td.querySelector('input.aps-answer');
      if (!input) {
        if (td.firstChild?.nodeType === 3) td.firstChild.data = '';
        title(td, null);
        input = document.createElement('input');
        input.className = 'aps-answer';
        input.type = 'text';
        input.inputMode = 'text';
        input.spellcheck = false;
        input.autocomplete = 'off';
        input.maxLength = 64;
        input.setAttribute('aria-keyshortcuts', '?');
        input.addEventListener('input', () => ctl.onInput(i, j, input.value));
        input.addEventListener('keydown', (e) => this.askCtl.onKey(e, i, j));
        const mark = el('span', 'aps-answer-mark');
        mark.setAttribute('aria-hidden', 'true');
        td.append(input, mark);
        td.classList.add('is-ask');
        this.cache[i][j].cls = '';
        td.className = 'is-ask';
      }
      const answer = ctl.answer(i, j);
      if (input.value !== answer && document.activeElement !== input) input.value = answer;
      const status = ctl.status(i, j);
      td.classList.toggle('is-right', status === 'right');
      td.classList.toggle('is-wrong', status === 'wrong');
      td.classList.toggle('is-invalid', status === 'invalid');
      const markText = status === 'right' ? '✓' : status === 'wrong' || status === 'invalid' ? '✗' : '';
      const mark = td.querySelector('.aps-answer-mark');
      if (mark.textContent !== markText) mark.textContent = markText;
      const label = ctl.label(i, j, status);
      if (input.getAttribute('aria-label') !== label) input.setAttribute('aria-label', label);
      if (status === 'wrong' || status === 'invalid') input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid');
    }
  }

  /** Rows whose extra columns (Σ, max, H) are hidden: an exercise asks for those rows. */
  setHiddenRows(rows) {
    const key = rows?.size ? [...rows].sort((a, b) => a - b).join(',') : '';
    if ((this.hiddenKey ?? '') === key) return;
    this.hiddenKey = key;
    this.hiddenRows = rows?.size ? rows : null;
    this.painted = null;
    this.synced = null;
  }

  /** The answer input of a cell, if it is a question. */
  answerInput(r, c) {
    return this.tds?.[r]?.[c]?.querySelector('input.aps-answer') ?? null;
  }

  /** The colours of the cells as painted (for the SVG/PNG export), or null. */
  fillColors() {
    const d = this.data;
    if (!d) return null;
    return d.m.map((row, i) => row.map((v, j) => {
      const L = look(v, d.lo, d.hi, d.opts.diverging);
      const xc = d.opts.cellClass?.(i, j) ?? '';
      if (L.kind === 'nan' || L.kind === 'neginf' || xc.includes('is-masked0')) return null;
      if (L.kind === 'posinf') return '#fff0d6';
      return L.kind === 'd' ? PUOR[L.bin] : BLUES[L.bin];
    }));
  }

  rove(r, c, focus = true) {
    if (!this.tds?.length) return;
    r = Math.max(0, Math.min(this.tds.length - 1, r));
    c = Math.max(0, Math.min(this.tds[0].length - 1, c));
    const old = this.tds[this.pos.r]?.[this.pos.c];
    if (old) old.tabIndex = -1;
    this.pos = { r, c };
    this.tds[r][c].tabIndex = 0;
    if (focus) this.tds[r][c].focus();
  }

  cell(r, c) { return this.tds?.[r]?.[c] ?? null; }

  onKey(e) {
    const td = e.target.closest('td[data-r]');
    if (!td || e.target !== td) return;
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const { r, c } = this.pos;
    if ((e.key === 'Enter' || e.key === ' ') && this.o.onActivate?.(this.o.panel, r, c)) { e.preventDefault(); return; }
    if (moves[e.key]) { e.preventDefault(); e.stopPropagation(); this.rove(r + moves[e.key][0], c + moves[e.key][1]); }
    else if (e.key === 'Home') { e.preventDefault(); this.rove(r, 0); }
    else if (e.key === 'End') { e.preventDefault(); this.rove(r, this.tds[0].length - 1); }
  }

  /** Marks cells: sel = [r, c] | null, feeds = [{ row, col }] (null row/col = all). Touches only what changes. */
  mark(sel, feeds) {
    if (!this.tds) return;
    for (const [td, c] of this.marked) td.classList.remove(c);
    this.marked = [];
    const R = this.tds.length;
    const C = R ? this.tds[0].length : 0;
    for (const f of feeds) {
      for (let i = f.row ?? 0; i <= (f.row ?? R - 1) && i < R; i++) {
        for (let j = f.col ?? 0; j <= (f.col ?? C - 1) && j < C; j++) {
          if (sel && sel[0] === i && sel[1] === j) continue;
          this.tds[i][j].classList.add('is-feed');
          this.marked.push([this.tds[i][j], 'is-feed']);
        }
      }
    }
    const td = sel && this.tds[sel[0]]?.[sel[1]];
    if (td) { td.classList.add('is-sel'); this.marked.push([td, 'is-sel']); }
  }

  destroy() {
    takePending(this);
    this.ro?.disconnect();
    this.o.observer?.unobserve(this.scroll);
  }
}

/**
 * The visibility of the views of a stepper (two IntersectionObservers): a view on the screen is
 * painted in the frame of an edit, one within half a screen of it right after that frame, the
 * others when they come near. {observe(el), unobserve(el), disconnect()}.
 */
export function visibilityObserver() {
  if (!globalThis.IntersectionObserver) return null;
  const onScreen = new IntersectionObserver((entries) => {
    for (const e of entries) e.target.apsView?.setVisible(e.isIntersecting);
  });
  const near = new IntersectionObserver((entries) => {
    for (const e of entries) e.target.apsView?.setLive(e.isIntersecting);
  }, { rootMargin: '50% 0px 50% 0px' });
  return {
    observe(e) { onScreen.observe(e); near.observe(e); },
    unobserve(e) { onScreen.unobserve(e); near.unobserve(e); },
    disconnect() { onScreen.disconnect(); near.disconnect(); },
  };
}
