// model-view.js — the model view of a prompt: every layer × head as a small map on one colour
// scale (0 … 1, the same for every map), and beside each layer its two summaries from the core
// (gpt api attention_summary: the mean over heads, and attention rollout). Above the maps, the
// prompt's tokens: pointing at one (hover or keyboard focus; a click pins it) outlines, in every
// map, its row (what it attends to) and its column (what attends to it). A map under the pointer
// or the keyboard opens large beside the grid (below it on narrow screens), with readable labels,
// the weight under the pointer, and in words each query's strongest key (for screen readers);
// clicking a head's map opens it in the Attention Stepper (maps.js stepperUrl), as Enter does.
// The model view and the enlarged map export as PNG and SVG (../common/export.js) with a legend.
// With grouped-query attention (n_kv_head < n_head) the heads' columns are grouped by the key/value
// head they share: each column says its group, and a rule starts each group.
//
// Cost: the maps are canvases, painted a few per animation frame; pointing at a token writes one
// CSS variable (the outlines are two absolutely placed boxes per map, positioned by CSS), so a
// 12 × 12 model with a 64-token prompt points as fast as a 1 × 1 one. Past the box's width the grid
// scrolls inside its own box, with the layer and head labels sticky.
import { el } from '../common/ui.js';
import { exportBar, exportButtons } from '../common/export.js';

/** The figures' module, loaded on the first save (export.js). */
const figures = () => import('../common/figures.js');
import { drawMap, masked, stepperUrl, headSource, tokenLabel } from './maps.js';

/** From this width of the maps' box on, the enlarged map stands beside the grid (train.css says the same). */
const BESIDE = 960;

/** The enlarged map's cell size for a box W px wide and T tokens. */
function zoomCell(W, T) {
  const avail = Math.max(200, Math.min(620, W - 24));
  return Math.max(8, Math.min(26, Math.floor((avail - 24) / T)));
}

/** The kinds of map: a head's, a layer's mean over heads, the rollout up to a layer. */
const SUMMARIES = ['mean', 'rollout'];

export class ModelView {
  /** @param {{t: Function, lang: string, file?: string}} opts */
  constructor(root, opts) {
    this.opts = opts;
    this.result = null;
    this.mask = 'strict';
    this.zoomed = null;
    this.pinned = null;
    this.pointed = null;
    this.width = 0;
    // the box's width, kept up to date without asking for a layout in the middle of a render
    this.ro = new ResizeObserver((entries) => { this.width = entries[entries.length - 1].contentRect.width; });
    this.root = root;
  }

  get root() { return this._root; }
  set root(r) {
    this.ro.disconnect();
    this._root = r;
    this.width = r.clientWidth || this.width; // now (the view is made with the first maps), then from the observer
    this.ro.observe(r);
  }

  /** result: the worker's maps answer (with mean and rollout); mask: the model's. */
  show(result, mask) {
    this.result = result;
    this.mask = mask;
    this.pinned = null;
    this.pointed = null;
    this.render();
  }

  clear() {
    this.result = null;
    this.root.replaceChildren();
  }

  /** The values of a map: {data, offset} for kind 'head' (layer l, head h), 'mean' or 'rollout' (layer l). */
  source(kind, l, h) {
    const { T, n_head: NH, weights, mean, rollout } = this.result;
    if (kind === 'head') return { data: weights, offset: (l * NH + h) * T * T };
    return { data: kind === 'mean' ? mean : rollout, offset: l * T * T };
  }

  /** A map's title: "Layer 2, head 3", "Layer 2, mean over heads", "Rollout to layer 2". */
  title(kind, l, h) {
    const { t } = this.opts;
    if (kind === 'head') return t('mv.headTitle', { l: l + 1, h: h + 1 });
    return t(`mv.${kind}Title`, { l: l + 1 });
  }

  render() {
    const { t } = this.opts;
    const r = this.result;
    this.root.replaceChildren();
    if (!r) return;
    const { T, n_layer: L, n_head: NH, tokens } = r;
    const hasSum = !!(r.mean && r.rollout);
    const ncol = NH + (hasSum ? SUMMARIES.length : 0);
    // Cell size from the room there is: the enlarged map takes its width beside the grid (from
    // BESIDE px; below it, under it); the layer's maps share the rest, no smaller than 2 px a cell
    // (the grid then scrolls in its box) and no larger than 14.
    const W = this.width || 600;
    const cz = zoomCell(W, T);
    const gridW = W >= BESIDE ? W - Math.max(288, (cz + 8) + T * cz + 26) - 16 : W;
    const per = (gridW - 72) / ncol - 16; // the layer's label; a map's padding, border and gap
    const c = Math.max(2, Math.min(14, Math.floor(per / (T + 1))));
    const m = c >= 7 ? c + 4 : 0;
    const view = el('div', 'tr-mv');
    this.view = view;
    view.style.setProperty('--k', '0'); // CSSOM (allowed by style-src 'self'), not a style attribute

    // the tokens: point at one to outline its row and column in every map
    const strip = el('div', 'tr-mv-tokens');
    strip.setAttribute('role', 'group');
    strip.setAttribute('aria-label', t('mv.tokens'));
    this.tokenButtons = tokens.map((s, k) => {
      const b = el('button', 'tr-mv-token tr-mono', tokenLabel(s));
      b.type = 'button';
      b.setAttribute('aria-label', t('mv.token', { i: k + 1, q: tokenLabel(s) }));
      b.setAttribute('aria-pressed', 'false');
      b.addEventListener('mouseenter', () => this.point(k));
      b.addEventListener('focus', () => this.point(k));
      b.addEventListener('mouseleave', () => this.point(this.pinned));
      b.addEventListener('blur', () => this.point(this.pinned));
      b.addEventListener('click', () => { this.pinned = this.pinned === k ? null : k; this.point(k); });
      return b;
    });
    strip.append(el('span', 'tr-mv-tokens-label', t('mv.tokensLead')), ...this.tokenButtons);
    const key = el('p', 'tr-mv-key');
    key.append(el('span', 'tr-mv-swatch tr-mv-swatch-row'), document.createTextNode(` ${t('mv.keyRow')} `),
      el('span', 'tr-mv-swatch tr-mv-swatch-col'), document.createTextNode(` ${t('mv.keyCol')} `),
      el('span', 'tr-mv-scale'), document.createTextNode(` ${t('mv.keyScale')}`));
    this.pointedLine = el('p', 'tr-mv-pointed', t('mv.pointHint'));
    this.pointedLine.setAttribute('aria-live', 'polite');
    const tools = exportBar({
      lead: t('mv.exportAll'), file: 'model-view', makeSvg: () => this.svgModel(), cls: 'tr-mv-tools',
      words: { png: 'PNG', svg: 'SVG', group: t('mv.exportAllGroup'), saved: t('export.saved') },
    });

    const scroll = el('div', 'tr-mv-scroll');
    scroll.tabIndex = -1;
    const grid = el('div', 'tr-mv-grid');
    grid.style.gridTemplateColumns = `max-content repeat(${ncol}, max-content)`;
    grid.style.setProperty('--c', `${c}px`);
    grid.style.setProperty('--m', `${m}px`);
    grid.style.setProperty('--T', String(T));
    grid.append(el('span', 'tr-mv-corner'));
    // grouped-query attention: the query heads that share a key/value head stand together
    const KV = r.n_kv_head > 0 && r.n_kv_head < NH ? r.n_kv_head : 0;
    const group = KV ? NH / KV : 1;
    const kvStart = (h) => (KV && h > 0 && h % group === 0 ? ' tr-mv-kvstart' : '');
    for (let h = 0; h < NH; h++) {
      grid.append(el('span', `tr-mv-colhead${kvStart(h)}`, KV ? t('mv.kvHead', { h: h + 1, g: Math.floor(h / group) + 1 }) : t('maps.head', { h: h + 1 })));
    }
    if (hasSum) for (const s of SUMMARIES) grid.append(el('span', 'tr-mv-colhead tr-mv-sumhead', t(`mv.${s}`)));
    const pending = [];
    const size = m + T * c;
    const pic = (kind, l, h) => {
      const p = el('span', 'tr-map-pic');
      const canvas = el('canvas', 'tr-map-canvas');
      canvas.setAttribute('aria-hidden', 'true');
      canvas.style.width = `${size}px`; // its final size now (no reflow later); its pixels a few maps per frame
      canvas.style.height = `${size}px`;
      const src = this.source(kind, l, h);
      pending.push(() => drawMap(canvas, { weights: src.data, offset: src.offset, T, tokens, mask: this.mask }, c, m));
      p.append(canvas, el('span', 'tr-hl-row'), el('span', 'tr-hl-col'));
      return p;
    };
    for (let l = 0; l < L; l++) {
      grid.append(el('h4', 'tr-mv-rowhead', t('maps.layer', { l: l + 1 })));
      for (let h = 0; h < NH; h++) {
        const a = el('a', `tr-map${kvStart(h)}`);
        a.href = stepperUrl(r.specs[l][h], this.opts.lang, null, headSource(l, h, r));
        a.target = '_blank';
        a.rel = 'noopener';
        a.dataset.layer = String(l);
        a.dataset.head = String(h);
        a.setAttribute('aria-label', t('maps.open', { l: l + 1, h: h + 1 }));
        a.setAttribute('aria-describedby', 'tr-zoom-words');
        a.append(pic('head', l, h));
        const zoom = () => this.zoom('head', l, h, a);
        a.addEventListener('mouseenter', zoom);
        a.addEventListener('focus', zoom);
        grid.append(a);
      }
      if (hasSum) {
        for (const s of SUMMARIES) {
          const b = el('button', 'tr-mapsum');
          b.type = 'button';
          b.dataset.layer = String(l);
          b.dataset.kind = s;
          b.setAttribute('aria-label', t(`mv.${s}Open`, { l: l + 1 }));
          b.setAttribute('aria-describedby', 'tr-zoom-words');
          b.append(pic(s, l, 0));
          const zoom = () => this.zoom(s, l, 0, b);
          b.addEventListener('mouseenter', zoom);
          b.addEventListener('focus', zoom);
          b.addEventListener('click', zoom);
          grid.append(b);
        }
      }
    }
    scroll.append(grid);
    const notes = el('div', 'tr-mv-notes');
    if (KV) notes.append(el('p', 'tr-mv-note', t('mv.kvNote', { kv: KV, n_head: NH, group })));
    if (hasSum) for (const s of SUMMARIES) notes.append(el('p', 'tr-mv-note', t(`mv.${s}Note`)));
    view.append(strip, key, this.pointedLine, tools, scroll, notes);
    this.zoomBox = el('figure', 'tr-zoom');
    this.root.append(view, this.zoomBox);
    this.zoom('head', 0, 0, grid.querySelector('.tr-map'));
    // Draw the small maps a few at a time, one batch per animation frame (≈ 8 ms of work each),
    // so a model with many heads and a long prompt never holds the page's thread for long.
    const token = (this.drawing = {});
    const step = () => {
      if (this.drawing !== token) return; // a newer render took over
      const t0 = performance.now();
      while (pending.length && performance.now() - t0 < 8) pending.shift()();
      if (pending.length) requestAnimationFrame(step);
      else this.root.dataset.painted = String(L * ncol);
    };
    delete this.root.dataset.painted;
    requestAnimationFrame(step);
  }

  /** Outlines token k's row and column in every map (null: none), and says it in words. */
  point(k) {
    const { t } = this.opts;
    if (!this.view) return;
    this.pointed = k;
    this.view.classList.toggle('is-pointing', k != null);
    this.tokenButtons?.forEach((b, i) => {
      b.setAttribute('aria-pressed', String(i === this.pinned));
      b.classList.toggle('is-pointed', i === k);
    });
    if (k == null) { this.pointedLine.textContent = t('mv.pointHint'); return; }
    this.view.style.setProperty('--k', String(k));
    this.zoomBox?.style.setProperty('--k', String(k));
    const { T, tokens } = this.result;
    const z = this.zoomed;
    const { data, offset } = this.source(z.kind, z.l, z.h);
    // in the enlarged map: where token k looks most, and which query looks at it most
    let to = -1, toW = -1, from = -1, fromW = -1;
    for (let j = 0; j < T; j++) {
      if (!masked(k, j, this.mask) && data[offset + k * T + j] > toW) { toW = data[offset + k * T + j]; to = j; }
      if (!masked(j, k, this.mask) && data[offset + j * T + k] > fromW) { fromW = data[offset + j * T + k]; from = j; }
    }
    const q = tokenLabel(tokens[k]);
    const parts = [t('mv.pointed', { i: k + 1, q, map: this.title(z.kind, z.l, z.h) })];
    if (to >= 0) parts.push(t('mv.pointedTo', { j: to + 1, k: tokenLabel(tokens[to]), w: toW.toFixed(3) }));
    if (from >= 0) parts.push(t('mv.pointedFrom', { j: from + 1, k: tokenLabel(tokens[from]), w: fromW.toFixed(3) }));
    this.pointedLine.textContent = parts.join(' ');
  }

  /** Shows one map enlarged, with readable labels, a readout of the weight under the pointer, its words and its export. */
  zoom(kind, l, h, cell) {
    const { t } = this.opts;
    const r = this.result;
    if (!r || !this.zoomBox) return;
    this.root.querySelectorAll('.is-zoomed').forEach((x) => x.classList.remove('is-zoomed'));
    cell?.classList.add('is-zoomed');
    this.zoomed = { kind, l, h };
    const { T, tokens } = r;
    const { data, offset } = this.source(kind, l, h);
    const c = zoomCell(this.width || 600, T);
    const m = c + 8;
    const box = this.zoomBox;
    box.replaceChildren();
    box.style.setProperty('--c', `${c}px`);
    box.style.setProperty('--m', `${m}px`);
    box.style.setProperty('--T', String(T));
    const cap = el('figcaption', 'tr-zoom-caption');
    cap.append(el('strong', '', `${this.title(kind, l, h)}.`), document.createTextNode(` ${t('maps.axes')}`));
    if (kind !== 'head') cap.append(document.createTextNode(` ${t(`mv.${kind}Note`)}`));
    const scroll = el('div', 'tr-zoom-scroll');
    const p = el('span', 'tr-map-pic');
    const canvas = el('canvas', 'tr-zoom-canvas');
    canvas.setAttribute('aria-hidden', 'true');
    drawMap(canvas, { weights: data, offset, T, tokens, mask: this.mask }, c, m);
    p.append(canvas, el('span', 'tr-hl-row'), el('span', 'tr-hl-col'));
    scroll.append(p);
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
        : t('maps.readout', { i: i + 1, q, j: j + 1, k, w: data[offset + i * T + j].toFixed(4) });
    });
    // in words, for a screen reader (the small maps point here with aria-describedby)
    const words = el('p', 'tr-sr', this.words(kind, l, h));
    words.id = 'tr-zoom-words';
    const saved = el('p', 'tr-mv-saved');
    saved.setAttribute('role', 'status');
    const tools = el('div', 'tr-zoom-tools');
    tools.append(exportButtons({
      file: kind === 'head' ? `attention-layer${l + 1}-head${h + 1}` : `attention-${kind}-layer${l + 1}`,
      makeSvg: () => this.svgMap(kind, l, h), say: (s) => { saved.textContent = s; },
      words: { png: 'PNG', svg: 'SVG', group: t('mv.exportMapGroup', { map: this.title(kind, l, h) }), saved: t('export.saved') },
    }));
    if (kind === 'head') {
      const open = el('a', 'aps-btn tr-zoom-open', t('maps.openBtn', { l: l + 1, h: h + 1 }));
      open.href = cell?.href ?? '#';
      open.target = '_blank';
      open.rel = 'noopener';
      open.tabIndex = -1; // the small map is the keyboard's link; this one is for the mouse
      tools.append(open);
    }
    box.append(cap, scroll, readout, words, tools, saved);
    if (this.pointed != null) this.point(this.pointed);
  }

  /** A map in words: each query's strongest key and its weight. */
  words(kind, l, h) {
    const { t } = this.opts;
    const { T, tokens } = this.result;
    const { data, offset } = this.source(kind, l, h);
    const rows = [];
    for (let i = 0; i < T; i++) {
      let best = -1, bw = -1;
      for (let j = 0; j < T; j++) if (!masked(i, j, this.mask) && data[offset + i * T + j] > bw) { bw = data[offset + i * T + j]; best = j; }
      if (best >= 0) rows.push(t('mv.wordsRow', { i: i + 1, q: tokenLabel(tokens[i]), j: best + 1, k: tokenLabel(tokens[best]), w: bw.toFixed(3) }));
    }
    return `${this.title(kind, l, h)}. ${t('mv.wordsLead')} ${rows.join('; ')}.`;
  }

  /** The labels every exported map figure has. */
  figureLabels() {
    const { t } = this.opts;
    return { legend: t('mv.legend'), masked: t('mv.legendMasked'), queries: t('mv.queries'), keys: t('mv.keys') };
  }

  /** {model, Model}: which model the maps are of (the page's label, else "the model at step N"). */
  modelLabel(step) {
    if (this.opts.modelLabel) return this.opts.modelLabel(step);
    const model = this.opts.t('model.step', { step });
    return { model, Model: model.charAt(0).toUpperCase() + model.slice(1) };
  }

  /** The enlarged map as SVG text (a promise: figures.js is loaded on the first save). */
  async svgMap(kind, l, h) {
    const { t } = this.opts;
    const r = this.result;
    if (!r) return '';
    const { mapsSvg } = await figures();
    return mapsSvg({
      title: this.title(kind, l, h), subtitle: t('mv.figSubtitle', { ...this.modelLabel(r.step ?? 0), T: r.T }),
      tokens: r.tokens, mask: this.mask?.mask ?? this.mask, maps: [{ row: 0, col: 0, ...this.source(kind, l, h) }], rows: [''], cols: [''], labels: this.figureLabels(),
    });
  }

  /** The whole model view (every head, the means and the rollouts) as SVG text (a promise, as svgMap). */
  async svgModel() {
    const { t } = this.opts;
    const r = this.result;
    if (!r) return '';
    const { n_layer: L, n_head: NH } = r;
    const hasSum = !!(r.mean && r.rollout);
    const maps = [];
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < NH; h++) maps.push({ row: l, col: h, ...this.source('head', l, h) });
      if (hasSum) SUMMARIES.forEach((s, i) => maps.push({ row: l, col: NH + i, ...this.source(s, l, 0) }));
    }
    const cols = [...Array.from({ length: NH }, (_, h) => t('maps.head', { h: h + 1 })), ...(hasSum ? SUMMARIES.map((s) => t(`mv.${s}`)) : [])];
    const { mapsSvg } = await figures();
    return mapsSvg({
      title: t('mv.figTitle', { L, H: NH }), subtitle: `${t('mv.figSubtitle', { ...this.modelLabel(r.step ?? 0), T: r.T })} ${t('mv.figPrompt', { p: r.tokens.map(tokenLabel).join('') })}`,
      tokens: r.tokens, mask: this.mask, maps, rows: Array.from({ length: L }, (_, l) => t('maps.layer', { l: l + 1 })), cols, labels: this.figureLabels(),
    });
  }
}
