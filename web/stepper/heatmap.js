// heatmap.js — the heatmap-only view of one step, for large inputs (past 32 tokens): the colours of
// every cell on a canvas of small squares, without printing the numbers (48 × 48 numbers per
// panel would slow the page down and be unreadable anyway). The numbers are still one step away:
//   - point at a cell, or focus the map (Tab) and move with the arrow keys (Home / End, PageUp /
//     PageDown move by 8): the readout under the map says "A[3,5] = 0.1234" (a live region, so a
//     screen reader reads it) and the explanation box shows the cell's arithmetic;
//   - Ctrl+C (⌘C) on the focused map copies the whole matrix as tab-separated text, full precision.
// The same interface as MatrixView (panels.js): update, setLive, ensurePainted, cell, mark, destroy,
// fillColors, scroll (the element to place).
import { look, BLUES, PUOR, pattern, pointerMoved } from './panels.js';
import { el } from '../common/ui.js';
import { formatNumber } from '../common/format.js';

/** The side of a cell (CSS px) for a matrix C columns wide: the map stays within about 560 px. */
export function heatCell(C) {
  return Math.max(5, Math.min(14, Math.floor(560 / Math.max(1, C))));
}

export class HeatmapView {
  /** opts: { panel, label, onFocusCell(panel, r, c), onHover(panel, r, c | null, to: where the pointer went), observer?, t } */
  constructor(opts) {
    this.o = opts;
    this.heat = true;
    this.scroll = el('div', 'aps-mat-scroll aps-heat-scroll');
    this.wrap = el('div', 'aps-heat-wrap');
    this.canvas = el('canvas', 'aps-heat-canvas');
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'application');
    this.canvas.setAttribute('aria-roledescription', opts.t('heat.role'));
    this.overlay = el('canvas', 'aps-heat-overlay');
    this.overlay.setAttribute('aria-hidden', 'true');
    this.wrap.append(this.canvas, this.overlay);
    this.readout = el('p', 'aps-heat-readout', opts.t('heat.hint'));
    this.readout.setAttribute('aria-live', 'polite');
    this.scroll.append(this.wrap, this.readout);
    this.scroll.apsView = this;
    this.live = true;
    this.data = null;
    this.painted = null;
    this.cursor = { r: 0, c: 0 };
    this.marks = { sel: null, feeds: [] };
    const at = (e) => {
      const s = this.size;
      if (!s || !this.data) return null;
      const rect = this.canvas.getBoundingClientRect();
      const c = Math.floor((e.clientX - rect.left) / s);
      const r = Math.floor((e.clientY - rect.top) / s);
      return this.cell(r, c) ? { r, c } : null;
    };
    this.canvas.addEventListener('mousemove', (e) => {
      if (!pointerMoved(e)) return; // the page moved under a resting mouse
      const p = at(e);
      if (!p) return;
      if (this.hovered?.r === p.r && this.hovered?.c === p.c) return;
      this.hovered = p;
      this.say(p.r, p.c);
      opts.onHover(opts.panel, p.r, p.c);
    });
    this.canvas.addEventListener('mouseleave', (e) => { this.hovered = null; opts.onHover(opts.panel, null, null, e.relatedTarget); });
    this.canvas.addEventListener('click', (e) => {
      const p = at(e);
      if (!p) return;
      this.cursor = p;
      this.canvas.focus();
      this.choose();
    });
    this.canvas.addEventListener('focus', () => this.choose());
    this.canvas.addEventListener('keydown', (e) => this.onKey(e));
    opts.observer?.observe(this.scroll);
  }

  update(m, opts = {}) {
    let lo = Infinity;
    let hi = -Infinity;
    if (opts.range) [lo, hi] = opts.range;
    else for (const row of m) for (const v of row) if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
    this.data = { m, opts, lo, hi };
    const R = m.length;
    const C = R ? m[0].length : 0;
    this.cursor = { r: Math.min(this.cursor.r, R - 1), c: Math.min(this.cursor.c, C - 1) };
    this.canvas.setAttribute('aria-label', this.o.t('heat.label', { name: this.o.label, rows: R, cols: C }));
    if (this.live) this.paint(); else this.wrap.classList.add('is-stale');
  }

  setLive(live) {
    if (this.live === live) return;
    this.live = live;
    if (live && this.data && this.painted !== this.data) this.paint();
  }

  ensurePainted() { if (this.data && this.painted !== this.data) this.paint(); }

  setVisible() {}

  flush() {}

  paint() {
    const { m, opts, lo, hi } = this.data;
    const R = m.length;
    const C = R ? m[0].length : 0;
    const s = heatCell(C);
    this.size = s;
    const W = C * s;
    const H = R * s;
    const dpr = globalThis.devicePixelRatio || 1;
    for (const c of [this.canvas, this.overlay]) {
      if (c.width !== Math.round(W * dpr) || c.height !== Math.round(H * dpr)) { c.width = Math.round(W * dpr); c.height = Math.round(H * dpr); }
      c.style.width = `${W}px`;
      c.style.height = `${H}px`;
    }
    const ctx = this.canvas.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    const gap = s >= 8 ? 1 : 0;
    for (let i = 0; i < R; i++) {
      for (let j = 0; j < C; j++) {
        const v = m[i][j];
        const L = look(v, lo, hi, opts.diverging);
        const xc = opts.cellClass?.(i, j) ?? '';
        if (L.kind === 'nan') ctx.fillStyle = '#b42318';
        else if (L.kind === 'neginf' || xc.includes('is-masked0')) ctx.fillStyle = pattern(ctx, 'neginf');
        else if (L.kind === 'posinf') ctx.fillStyle = '#ffb347';
        else ctx.fillStyle = L.kind === 'd' ? PUOR[L.bin] : BLUES[L.bin];
        ctx.fillRect(j * s, i * s, s - gap, s - gap);
      }
    }
    this.painted = this.data;
    this.wrap.classList.remove('is-stale');
    this.drawMarks();
  }

  cell(r, c) {
    const m = this.data?.m;
    return m && r >= 0 && c >= 0 && r < m.length && c < m[0].length ? { r, c } : null;
  }

  /** The readout: "A[3,5] = 0.1234" (a live region). */
  say(r, c) {
    const v = this.data.m[r][c];
    this.readout.textContent = this.o.t('heat.readout', { name: this.o.label, r: r + 1, c: c + 1, v: formatNumber(v), exact: Number.isFinite(v) ? String(v) : formatNumber(v) });
  }

  choose() {
    if (!this.data) return;
    const { r, c } = this.cursor;
    this.say(r, c);
    this.o.onFocusCell(this.o.panel, r, c);
  }

  onKey(e) {
    if (!this.data) return;
    const R = this.data.m.length;
    const C = this.data.m[0].length;
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'c') {
      e.preventDefault();
      const text = this.data.m.map((row) => row.map((v) => (Number.isFinite(v) ? String(v) : Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf')).join('\t')).join('\n');
      navigator.clipboard?.writeText(text).then(() => { this.readout.textContent = this.o.t('heat.copied', { rows: R, cols: C }); }, () => {});
      return;
    }
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], PageUp: [-8, 0], PageDown: [8, 0] };
    let { r, c } = this.cursor;
    if (moves[e.key]) { r += moves[e.key][0]; c += moves[e.key][1]; }
    else if (e.key === 'Home') c = 0;
    else if (e.key === 'End') c = C - 1;
    else return;
    e.preventDefault();
    e.stopPropagation();
    this.cursor = { r: Math.max(0, Math.min(R - 1, r)), c: Math.max(0, Math.min(C - 1, c)) };
    this.choose();
  }

  mark(sel, feeds) {
    this.marks = { sel, feeds };
    this.drawMarks();
  }

  drawMarks() {
    const s = this.size;
    const ctx = this.overlay.getContext('2d');
    if (!s || !ctx || !this.data) return;
    const dpr = globalThis.devicePixelRatio || 1;
    const R = this.data.m.length;
    const C = R ? this.data.m[0].length : 0;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, C * s, R * s);
    ctx.strokeStyle = '#d9480f';
    for (const f of this.marks.feeds) {
      const r0 = f.row ?? 0; const r1 = f.row ?? R - 1;
      const c0 = f.col ?? 0; const c1 = f.col ?? C - 1;
      ctx.lineWidth = 1.5;
      ctx.setLineDash([3, 2]);
      ctx.strokeRect(c0 * s + 0.75, r0 * s + 0.75, (c1 - c0 + 1) * s - 1.5, (r1 - r0 + 1) * s - 1.5);
    }
    ctx.setLineDash([]);
    const sel = this.marks.sel;
    if (sel) { ctx.lineWidth = 2; ctx.strokeRect(sel[1] * s + 1, sel[0] * s + 1, s - 2, s - 2); }
  }

  fillColors() {
    const d = this.data;
    if (!d) return null;
    return d.m.map((row) => row.map((v) => {
      const L = look(v, d.lo, d.hi, d.opts.diverging);
      if (L.kind === 'nan' || L.kind === 'neginf') return null;
      if (L.kind === 'posinf') return '#fff0d6';
      return L.kind === 'd' ? PUOR[L.bin] : BLUES[L.bin];
    }));
  }

  destroy() {
    this.o.observer?.unobserve(this.scroll);
  }
}
