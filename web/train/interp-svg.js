// interp-svg.js — the "Take it apart" section's figures (interp-figures.js) as SVG text for the
// PNG and SVG buttons (export.js): a heat-map grid with its axes' labels, its cells' numbers and its
// scale's legend; bars from a middle line; curves on a 0…1 scale against the steps (head-chart.js).
// Loaded on the first save. SVG presentation attributes only (the strict CSP); fonts are the
// viewer's, widths estimated from the text's length.
import { heat, xml, tokenMark } from '../common/export.js';
import { cellColor, dark, diverge, fmt } from './interp-figures.js';

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
      p.push(text(left + c * cw + cw / 2, top + r * ch + ch / 2, o.text(r, c).replace(/\n/g, ' '), { size: 12, anchor: 'middle', mono: true, fill: dark(o, v) ? '#ffffff' : '#000000' }));
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
