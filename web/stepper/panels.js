// panels.js — a read-only matrix of one step: numbers always visible, a colour-blind-safe
// sequential heatmap behind them (CSS classes h0…h8, no inline styles) or, for the signed
// gradients, a diverging one centred on 0 (d0…d8), −∞ and NaN drawn distinctly. Cells are
// updated in place; the table is rebuilt only when the shape changes.
// Cells are keyboard focusable with a roving tabindex (arrow keys move).
import { formatNumber } from './format.js';

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

export const BINS = 9;

/** Sets an element's text only when it differs (no DOM write, no relayout, otherwise). */
export function setText(e, text) {
  if (e.textContent !== text) e.textContent = text;
}

function cellClass(v, lo, hi, diverging) {
  if (Number.isNaN(v)) return 'aps-c is-nan';
  if (v === -Infinity) return 'aps-c is-neginf';
  if (v === Infinity) return 'aps-c is-posinf';
  if (diverging) {
    // signed values (gradients): 0 in the middle bin d4, ±max(|v|) at d0 / d8
    const m = Math.max(Math.abs(lo), Math.abs(hi));
    const x = m > 0 ? v / m : 0;
    return `aps-c d${Math.max(0, Math.min(BINS - 1, 4 + Math.round(x * 4)))}`;
  }
  // (always 'aps-c' plus one of the above or a heat bin h0…h8)
  const span = hi - lo;
  const x = span > 0 ? (v - lo) / span : (hi > 0 ? 1 : 0);
  return `aps-c h${Math.max(0, Math.min(BINS - 1, Math.round(x * (BINS - 1))))}`;
}

export class MatrixView {
  /** opts: { panel, label, onFocusCell(panel, r, c), onHover(panel, r, c | null) } */
  constructor(opts) {
    this.o = opts;
    this.scroll = el('div', 'aps-mat-scroll');
    this.table = el('table', 'aps-mat');
    this.table.setAttribute('role', 'grid');
    this.table.setAttribute('aria-readonly', 'true');
    this.table.setAttribute('aria-label', opts.label);
    this.scroll.append(this.table);
    this.shape = '';
    this.pos = { r: 0, c: 0 };
    this.table.addEventListener('keydown', (e) => this.onKey(e));
    this.table.addEventListener('focusin', (e) => {
      const td = e.target.closest('td[data-r]');
      if (!td) return;
      this.rove(+td.dataset.r, +td.dataset.c, false);
      opts.onFocusCell(opts.panel, +td.dataset.r, +td.dataset.c);
    });
    this.table.addEventListener('click', (e) => {
      const td = e.target.closest('td[data-r]');
      if (td) td.focus();
    });
    this.table.addEventListener('mouseover', (e) => {
      const td = e.target.closest('td[data-r]');
      if (td) opts.onHover(opts.panel, +td.dataset.r, +td.dataset.c);
    });
    this.table.addEventListener('mouseleave', () => opts.onHover(opts.panel, null, null));
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
    if (shape !== this.shape) this.build(R, C, extra, opts);
    this.shape = shape;
    let lo = Infinity;
    let hi = -Infinity;
    if (opts.range) [lo, hi] = opts.range;
    else for (const row of m) for (const v of row) if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
    // Only what changed is written, and a cell's text is changed in its own text node (no new
    // node: the layout object is kept and only reshaped).
    for (let i = 0; i < R; i++) {
      const rowTds = this.tds[i];
      const cache = this.cache[i];
      const cls = opts.rowClass?.(i) ?? '';
      if (this.rowEls[i].className !== cls) this.rowEls[i].className = cls;
      if (opts.rowLabels) setText(this.rowHeads[i], String(opts.rowLabels[i]));
      for (let j = 0; j < C; j++) {
        const v = m[i][j];
        const c = cache[j];
        const xc = opts.cellClass?.(i, j) ?? '';
        if (Object.is(c.v, v) && c.lo === lo && c.hi === hi && c.xc === xc) continue;
        const td = rowTds[j];
        if (!Object.is(c.v, v)) {
          const text = formatNumber(v);
          if (c.text !== text) {
            if (c.node.parentNode === td) c.node.data = text;
            else { td.textContent = text; c.node = td.firstChild; } // someone replaced the text
            c.text = text;
          }
          const title = Number.isFinite(v) ? String(v) : text;
          if (c.title !== title) { td.title = title; c.title = title; }
        }
        const k = cellClass(v, lo, hi, opts.diverging) + (xc ? ` ${xc}` : '');
        if (c.cls !== k) { if (c.cls) td.classList.remove(...c.cls.split(' ')); td.classList.add(...k.split(' ')); c.cls = k; }
        c.v = v; c.lo = lo; c.hi = hi; c.xc = xc;
      }
      for (let k = 0; k < extra.length; k++) {
        const x = extra[k];
        const v = x.values[i];
        const td = this.extraTds[i][k];
        setText(td, x.fmt ? x.fmt(v) : formatNumber(v));
        const ec = `aps-extra ${x.cls ?? ''}${Number.isNaN(v) ? ' is-nan' : ''}`;
        if (td.className !== ec) td.className = ec;
      }
    }
    if (opts.colLabels) opts.colLabels.forEach((l, j) => setText(this.colHeads[j], String(l)));
  }

  build(R, C, extra, opts) {
    this.table.replaceChildren();
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
      this.cache.push(row.map((td) => ({ v: undefined, text: '', title: null, cls: '', lo: 0, hi: 0, node: td.firstChild })));
      this.extraTds.push(extra.map(() => { const td = el('td', 'aps-extra'); tr.append(td); return td; }));
    }
    this.pos = { r: Math.min(this.pos.r, R - 1), c: Math.min(this.pos.c, C - 1) };
    if (R && C) this.tds[this.pos.r][this.pos.c].tabIndex = 0;
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
    if (!td) return;
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const { r, c } = this.pos;
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
}
