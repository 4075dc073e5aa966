// interp-figures.js — the figures of the training page's "Take it apart" section (section-interp.js):
// a heat-map grid that is also the figure's table (a <table> with its row and column headers, each
// cell's number written in it, coloured by a sequential or a diverging scale, focusable and
// pickable: an exercise's answer is a picked cell), a bar chart that is also a table, the scales'
// legends, and the same figures as SVG text for the PNG / SVG buttons (export.js).
//
// Limits: the numbers come in as they are (the core's answers); this file only lays them out. A
// diverging scale is symmetric around 0 and clamped at ±max (the legend says so). SVG presentation
// attributes only (the strict CSP); fonts are the viewer's.
import { el } from '../common/ui.js';
import { heat, xml, tokenMark } from '../common/export.js';

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

/** Whether a cell's colour needs white text. */
export const dark = (scale, v, max) => (scale === 'seq' ? v > 0.55 : Math.abs(v / (max || 1)) > 0.6);

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
      if (dark(o.scale, v, o.max)) td.classList.add('is-dark');
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

// ───────────────────────────── SVG ─────────────────────────────

const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', 'Noto Sans CJK SC', sans-serif";
const MONO = "ui-monospace, 'DejaVu Sans Mono', 'Noto Sans Mono CJK SC', monospace";
const r2 = (v) => Math.round(v * 100) / 100;
const textW = (s, size) => [...String(s)].reduce((w, ch) => w + (ch.codePointAt(0) > 0x2e80 ? 1 : 0.56), 0) * size;

function text(x, y, s, { size = 15, anchor = 'start', fill = '#1c2027', mono = false, weight = '' } = {}) {
  return `<text x="${r2(x)}" y="${r2(y)}" font-size="${size}" text-anchor="${anchor}" dominant-baseline="middle" fill="${fill}"${mono ? ` font-family="${MONO}"` : ''}${weight ? ` font-weight="${weight}"` : ''}>${xml(s)}</text>`;
}
const rect = (x, y, w, h, fill, extra = '') => `<rect x="${r2(x)}" y="${r2(y)}" width="${r2(w)}" height="${r2(h)}" fill="${fill}"${extra}/>`;
function doc(w, h, parts) {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${Math.ceil(w)}" height="${Math.ceil(h)}" viewBox="0 0 ${Math.ceil(w)} ${Math.ceil(h)}" font-family="${FONT}">\n<rect width="100%" height="100%" fill="#ffffff"/>\n${parts.join('\n')}\n</svg>\n`;
}

/** A grid (gridTable's options) as SVG text, with its title, subtitle and its scale's legend. */
export function gridSvg(o) {
  const p = [];
  const R = o.rows.length, C = o.cols.length;
  const cw = Math.max(44, Math.min(90, Math.floor(1400 / Math.max(1, C))));
  const ch = 40;
  const left = 24 + Math.max(60, ...o.rows.map((s) => textW(s, 15))) + 12;
  const top = 120;
  p.push(text(24, 30, o.caption, { size: 22, weight: '700' }));
  if (o.subtitle) p.push(text(24, 62, o.subtitle, { size: 15, fill: '#555b66' }));
  o.cols.forEach((s, c) => p.push(text(left + c * cw + cw / 2, top - 16, tokenMark(s), { size: 14, anchor: 'middle', mono: true })));
  o.rows.forEach((s, r) => {
    p.push(text(left - 10, top + r * ch + ch / 2, s, { size: 14, anchor: 'end', mono: true }));
    for (let c = 0; c < C; c++) {
      const v = o.value(r, c);
      p.push(rect(left + c * cw, top + r * ch, cw, ch, cellColor(o, v), ' stroke="#ffffff" stroke-width="1"'));
      p.push(text(left + c * cw + cw / 2, top + r * ch + ch / 2, o.text(r, c).replace(/\n/g, ' '), { size: 12, anchor: 'middle', mono: true, fill: dark(o.scale, v, o.max) ? '#ffffff' : '#1c2027' }));
    }
  });
  const ly = top + R * ch + 30;
  p.push(text(left, ly, o.legend, { size: 14, fill: '#555b66' }));
  const lw = 300;
  for (let k = 0; k < 40; k++) p.push(rect(left + (k * lw) / 40, ly + 14, lw / 40 + 0.5, 14, o.scale === 'seq' ? heat(k / 39) : diverge((k / 19.5 - 1) * o.max, o.max)));
  const sign = o.flip ? -1 : 1;
  p.push(text(left, ly + 42, o.scale === 'seq' ? '0' : fmt(-sign * o.max), { size: 13, anchor: 'middle', fill: '#555b66' }));
  if (o.scale === 'div') p.push(text(left + lw / 2, ly + 42, '0', { size: 13, anchor: 'middle', fill: '#555b66' }));
  p.push(text(left + lw, ly + 42, o.scale === 'seq' ? '1' : fmt(sign * o.max), { size: 13, anchor: 'middle', fill: '#555b66' }));
  const w = Math.max(left + C * cw + 30, 48 + textW(o.caption, 22), 48 + textW(o.subtitle ?? '', 15), left + lw + 60);
  return doc(w, ly + 70, p);
}

/** Bars (barsTable's options) as SVG text, with a subtitle (the sum and the logit). */
export function barsSvg(o) {
  const p = [];
  const left = 24 + Math.max(80, ...o.items.map((x) => textW(x.label, 14))) + 12;
  const bw = 520, rowH = 26, top = 100;
  const max = Math.max(1e-12, ...o.items.map((x) => Math.abs(x.value)));
  p.push(text(24, 30, o.caption, { size: 22, weight: '700' }));
  if (o.subtitle) p.push(text(24, 62, o.subtitle, { size: 15, fill: '#555b66' }));
  o.items.forEach((it, i) => {
    const y = top + i * rowH;
    p.push(text(left - 10, y + rowH / 2, it.label, { size: 14, anchor: 'end', mono: true }));
    const w = (Math.abs(it.value) / max) * (bw / 2);
    p.push(rect(it.value < 0 ? left + bw / 2 - w : left + bw / 2, y + 4, w, rowH - 8, it.value < 0 ? 'rgb(178,24,43)' : 'rgb(33,102,172)'));
    p.push(text(left + bw + 12, y + rowH / 2, fmt(it.value), { size: 14, mono: true }));
  });
  p.push(`<line x1="${left + bw / 2}" y1="${top - 4}" x2="${left + bw / 2}" y2="${top + o.items.length * rowH + 4}" stroke="#555b66" stroke-width="1"/>`);
  return doc(Math.max(left + bw + 110, 48 + textW(o.caption, 22), 48 + textW(o.subtitle ?? '', 15)), top + o.items.length * rowH + 30, p);
}

/**
 * Curves on a 0…1 scale against the steps, as SVG text: o {caption, subtitle, x, y, range: [x0,
 * x1], lines: [{label, color, dash: number[], steps, values}]}; a legend names each by its text and dash.
 */
export function curvesSvg(o) {
  const p = [];
  const W = 1100, L = 90, R = 30, top = 90, bottom = 430;
  const [x0, x1] = o.range[1] > o.range[0] ? o.range : [o.range[0], o.range[0] + 1];
  const X = (s) => L + ((s - x0) / (x1 - x0)) * (W - L - R);
  const Y = (v) => bottom - Math.max(0, Math.min(1, v)) * (bottom - top);
  p.push(text(24, 30, o.caption, { size: 22, weight: '700' }));
  if (o.subtitle) p.push(text(24, 62, o.subtitle, { size: 15, fill: '#555b66' }));
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    p.push(`<line x1="${L}" y1="${r2(Y(v))}" x2="${W - R}" y2="${r2(Y(v))}" stroke="#e3e5e8" stroke-width="1"/>`);
    p.push(text(L - 10, Y(v), String(v), { size: 13, anchor: 'end', fill: '#555b66' }));
  }
  for (const s of [x0, Math.round((x0 + x1) / 2), x1]) p.push(text(X(s), bottom + 20, String(s), { size: 13, anchor: 'middle', fill: '#555b66' }));
  p.push(text((L + W - R) / 2, bottom + 46, o.x, { size: 14, anchor: 'middle', fill: '#555b66' }));
  p.push(`<text x="24" y="${(top + bottom) / 2}" font-size="14" text-anchor="middle" fill="#555b66" transform="rotate(-90 24 ${(top + bottom) / 2})">${xml(o.y)}</text>`);
  let ly = bottom + 80;
  for (const ln of o.lines) {
    const pts = ln.steps.map((s, i) => `${r2(X(s))},${r2(Y(ln.values[i]))}`).join(' ');
    const dash = ln.dash?.length ? ` stroke-dasharray="${ln.dash.join(' ')}"` : '';
    p.push(`<polyline fill="none" stroke="${ln.color}" stroke-width="2"${dash} points="${pts}"/>`);
    p.push(`<line x1="${L}" y1="${ly}" x2="${L + 40}" y2="${ly}" stroke="${ln.color}" stroke-width="2"${dash}/>`);
    p.push(text(L + 50, ly, ln.label, { size: 14 }));
    ly += 26;
  }
  return doc(Math.max(W, 48 + textW(o.caption, 22)), ly + 10, p);
}
