// interp-figures.js — the figures of the training page's "Take it apart" section (section-interp.js):
// a heat-map grid that is also the figure's table (a <table> with its row and column headers, each
// cell's number written in it, coloured by a sequential or a diverging scale, focusable and
// pickable: an exercise's answer is a picked cell), a bar chart that is also a table, the scales'
// legends. The same figures as SVG text, for the PNG / SVG buttons, are interp-svg.js's (loaded on
// the first save).
//
// Limits: the numbers come in as they are (the core's answers); this file only lays them out. A
// diverging scale is symmetric around 0 and clamped at ±max (the legend says so).
import { el } from '../common/ui.js';
import { heat, whiteText } from '../common/export.js';

const NEG = [178, 24, 43]; // ColorBrewer RdBu's ends: red for < 0, blue for > 0
const POS = [33, 102, 172];

/** v in −max…max as the diverging scale's colour (white at 0, clamped). */
export function diverge(v, max) {
  if (!Number.isFinite(v)) return '#efeee9';
  const x = Math.max(-1, Math.min(1, v / (max || 1)));
  const end = x < 0 ? NEG : POS;
  const f = Math.abs(x);
  return `rgb(${end.map((c) => Math.round(255 + (c - 255) * f)).join(',')})`;
}

/** A grid's cell colour: o.scale 'seq' (0…1) or 'div' (−o.max…o.max; o.flip: red for > 0, as when a larger number is worse). */
export const cellColor = (o, v) => (o.scale === 'seq' ? heat(v) : diverge(o.flip ? -v : v, o.max));

/** Whether a grid's cell (o, as cellColor's) needs white text: whichever of white and the ink contrasts more. */
export const dark = (o, v) => Number.isFinite(v) && whiteText(cellColor(o, v));

/** A number as the figures write it: 3 significant digits, a true minus. */
export const fmt = (v) => (v == null ? '—' : Number.isFinite(v) ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3)).replace('-', '−') : String(v));

/**
 * A heat-map grid as a table. o: {id, caption, rows: [label], cols: [label], value(r, c) → number,
 * text(r, c) → the cell's text, detail(r, c) → its longer reading (title and readout), scale:
 * 'seq' (0…1) | 'div' (−max…max), max, flip (cellColor), onPick(r, c), onPoint(text)}. Returns the table.
 */
export function gridTable(o) {
  const tb = el('table', 'tr-table tr-interp-grid');
  if (o.id) { tb.id = o.id; tb.setAttribute('aria-labelledby', `${o.id}-cap`); } // its figure's caption
  const head = el('thead');
  const hr = el('tr');
  hr.append(el('td', 'tr-interp-corner', ''));
  for (const c of o.cols) { const th = el('th', 'tr-mono', c); th.scope = 'col'; hr.append(th); }
  head.append(hr);
  const body = el('tbody');
  o.rows.forEach((rl, r) => {
    const tr = el('tr');
    const th = el('th', 'tr-mono', rl);
    th.scope = 'row';
    tr.append(th);
    o.cols.forEach((_, c) => {
      const v = o.value(r, c);
      const td = el('td', 'tr-interp-cell', o.text(r, c));
      td.tabIndex = -1;
      td.dataset.r = String(r);
      td.dataset.c = String(c);
      td.style.background = cellColor(o, v); // CSSOM: allowed by style-src 'self'
      if (dark(o, v)) td.classList.add('is-dark');
      td.title = o.detail(r, c);
      tr.append(td);
    });
    body.append(tr);
  });
  tb.append(head, body);
  const first = body.querySelector('td');
  if (first) first.tabIndex = 0;
  const cellOf = (e) => e.target.closest?.('td.tr-interp-cell');
  const point = (td) => { if (td) o.onPoint?.(td.title); };
  tb.addEventListener('pointerover', (e) => point(cellOf(e)));
  tb.addEventListener('focusin', (e) => point(cellOf(e)));
  tb.addEventListener('click', (e) => { const td = cellOf(e); if (td) o.onPick?.(+td.dataset.r, +td.dataset.c, td); });
  tb.addEventListener('keydown', (e) => {
    const td = cellOf(e);
    if (!td) return;
    if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); o.onPick?.(+td.dataset.r, +td.dataset.c, td); return; }
    const moves = { ArrowRight: [0, 1], ArrowLeft: [0, -1], ArrowDown: [1, 0], ArrowUp: [-1, 0] };
    if (!(e.key in moves)) return;
    e.preventDefault();
    const r = Math.max(0, Math.min(o.rows.length - 1, +td.dataset.r + moves[e.key][0]));
    const c = Math.max(0, Math.min(o.cols.length - 1, +td.dataset.c + moves[e.key][1]));
    const next = tb.querySelector(`td[data-r="${r}"][data-c="${c}"]`);
    if (!next) return;
    td.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  });
  return tb;
}

/** The legend of a scale as a line of text and a strip: 'seq' 0…1, 'div' −max…max (flip: +max…−max, red first). */
export function legend(scale, label, max, flip = false) {
  const box = el('div', 'tr-interp-legend');
  box.append(el('span', '', label));
  const strip = el('span', 'tr-interp-strip');
  for (let k = 0; k <= 10; k++) {
    const s = el('span', 'tr-interp-swatch');
    s.style.background = scale === 'seq' ? heat(k / 10) : diverge((k / 5 - 1) * max, max);
    strip.append(s);
  }
  const sign = flip ? -1 : 1;
  box.append(el('span', 'tr-mono', scale === 'seq' ? '0' : fmt(-sign * max)), strip, el('span', 'tr-mono', scale === 'seq' ? '1' : fmt(sign * max)));
  return box;
}

/**
 * Bars as a table: items [{label, value}] (a bar from the middle, right for > 0, left for < 0,
 * scaled to the largest |value|); the number in its own column. o: {id, caption, items, head: [part, bar, value], onPick(i)}.
 */
export function barsTable(o) {
  const tb = el('table', 'tr-table tr-interp-bars');
  if (o.id) { tb.id = o.id; tb.setAttribute('aria-labelledby', `${o.id}-cap`); }
  const hr = el('tr');
  for (const h of o.head) { const th = el('th', '', h); th.scope = 'col'; hr.append(th); }
  const head = el('thead');
  head.append(hr);
  const max = Math.max(1e-12, ...o.items.map((x) => Math.abs(x.value)));
  const body = el('tbody');
  o.items.forEach((it, i) => {
    const tr = el('tr');
    const th = el('th', 'tr-mono', it.label);
    th.scope = 'row';
    const cell = el('td', 'tr-interp-barcell');
    const bar = el('span', `tr-interp-bar ${it.value < 0 ? 'is-neg' : 'is-pos'}`);
    const w = (Math.abs(it.value) / max) * 50;
    bar.style.width = `${w}%`;
    bar.style.left = it.value < 0 ? `${50 - w}%` : '50%';
    cell.append(bar);
    const num = el('td', 'tr-num tr-interp-cell', fmt(it.value));
    num.tabIndex = 0;
    num.dataset.i = String(i);
    tr.append(th, cell, num);
    body.append(tr);
  });
  tb.append(head, body);
  tb.addEventListener('click', (e) => { const td = e.target.closest?.('td[data-i]'); if (td) o.onPick?.(+td.dataset.i, td); });
  tb.addEventListener('keydown', (e) => {
    const td = e.target.closest?.('td[data-i]');
    if (td && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); o.onPick?.(+td.dataset.i, td); }
  });
  return tb;
}
