// figures.js — the pages' figures as SVG text for slides and papers (export.js saves them as SVG
// and PNG): built from the figure's own numbers (not a screenshot), with a title, axis labels and
// a legend in text. Figures: attention maps (one map with the tokens on both axes, or a grid of
// maps — the model view — with its layer and head labels, one colour scale), next-token bars,
// loss charts with their overlays and divergence markers. Loaded on the first "save" click.
//
// SVG presentation attributes only (no style element: the strict CSP). Text is set at 14 px or
// more in the SVG's own units, so a slide 1280 px wide shows it readable; the PNG is twice as big.
// Limits: the fonts are the viewer's (a system sans and a monospace; CJK needs a CJK font there);
// a figure's width follows its title's estimated width, not a measured one.
import { heat, xml, tokenMark } from './export.js';

const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', 'Noto Sans CJK SC', sans-serif";
const MONO = "ui-monospace, 'DejaVu Sans Mono', 'Noto Sans Mono CJK SC', monospace";
const INK = '#1c2027';
const MUTED = '#555b66';
const MASKED = '#efeee9';

/** A small SVG writer: shapes and text in user units, then doc(). */
class Svg {
  constructor() { this.parts = []; }
  rect(x, y, w, h, fill, extra = '') { this.parts.push(`<rect x="${r2(x)}" y="${r2(y)}" width="${r2(w)}" height="${r2(h)}" fill="${fill}"${extra}/>`); }
  line(x1, y1, x2, y2, stroke, width = 1, dash = '') {
    this.parts.push(`<line x1="${r2(x1)}" y1="${r2(y1)}" x2="${r2(x2)}" y2="${r2(y2)}" stroke="${stroke}" stroke-width="${width}"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`);
  }
  poly(points, stroke, width = 2, dash = '') {
    if (points.length < 2) return;
    this.parts.push(`<polyline fill="none" stroke="${stroke}" stroke-width="${width}" stroke-linejoin="round"${dash ? ` stroke-dasharray="${dash}"` : ''} points="${points.map(([x, y]) => `${r2(x)},${r2(y)}`).join(' ')}"/>`);
  }
  dot(x, y, r, fill) { this.parts.push(`<circle cx="${r2(x)}" cy="${r2(y)}" r="${r2(r)}" fill="${fill}"/>`); }
  text(x, y, s, { size = 16, anchor = 'start', weight = 'normal', fill = INK, mono = false, baseline = 'middle', rotate = 0 } = {}) {
    const tr = rotate ? ` transform="rotate(${rotate} ${r2(x)} ${r2(y)})"` : '';
    this.parts.push(`<text x="${r2(x)}" y="${r2(y)}" font-size="${size}" text-anchor="${anchor}" dominant-baseline="${baseline}"${weight !== 'normal' ? ` font-weight="${weight}"` : ''} fill="${fill}"${mono ? ` font-family="${MONO}"` : ''}${tr}>${xml(s)}</text>`);
  }
  doc(w, h) {
    return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${Math.ceil(w)}" height="${Math.ceil(h)}" viewBox="0 0 ${Math.ceil(w)} ${Math.ceil(h)}" font-family="${FONT}">\n<rect width="100%" height="100%" fill="#ffffff"/>\n${this.parts.join('\n')}\n</svg>\n`;
  }
}
const r2 = (v) => Math.round(v * 100) / 100;
/** About how wide a line of text is at a font size (CJK characters count double): for the figure's width. */
const textWidth = (s, size) => [...String(s)].reduce((w, ch) => w + (ch.codePointAt(0) > 0x2e80 ? 1 : 0.56), 0) * size;

/** Whether key j is hidden from query i by the mask (base 0). */
const hidden = (i, j, mask) => (mask === 'inclusive' ? j >= i : mask === 'none' ? false : j > i);

/** The colour scale's legend at (x, y), w wide: a bar from 0 to 1 with its ticks and its name. */
function heatLegend(svg, x, y, w, label, maskedLabel) {
  svg.text(x, y, label, { size: 15, fill: MUTED });
  const n = 40;
  for (let k = 0; k < n; k++) svg.rect(x + (k * w) / n, y + 14, w / n + 0.5, 14, heat(k / (n - 1)));
  svg.rect(x, y + 14, w, 14, 'none', ` stroke="${MUTED}" stroke-width="0.5"`);
  for (const v of [0, 0.25, 0.5, 0.75, 1]) svg.text(x + v * w, y + 40, String(v), { size: 14, anchor: 'middle', fill: MUTED });
  if (maskedLabel) {
    svg.rect(x + w + 24, y + 14, 14, 14, MASKED, ` stroke="#c9c6bc"`);
    svg.text(x + w + 44, y + 21, maskedLabel, { size: 14, fill: MUTED });
  }
}

/** One T×T map at (x, y), cell size c. */
function mapCells(svg, data, offset, T, mask, x, y, c) {
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < T; j++) {
      if (hidden(i, j, mask)) svg.rect(x + j * c, y + i * c, c, c, MASKED);
      else svg.rect(x + j * c, y + i * c, c, c, heat(data[offset + i * T + j]));
    }
  }
  svg.rect(x, y, T * c, T * c, 'none', ` stroke="${MUTED}" stroke-width="0.75"`);
}

/**
 * A figure of attention maps as SVG text.
 *   title, subtitle: text above; tokens (T); mask: 'strict' | 'inclusive' | 'none';
 *   maps: [{row, col, data, offset}] — a grid of maps (row and col from 0), each data[offset + i·T + j];
 *   rows, cols: the grid's labels (one map alone: rows = cols = ['']); labels: {legend, masked, queries, keys}.
 * A single map gets the tokens on both axes; a grid gets its row and column labels.
 */
export function mapsSvg({ title, subtitle = '', tokens, mask, maps, rows, cols, labels }) {
  const T = tokens.length;
  const single = maps.length === 1;
  const svg = new Svg();
  const c = single ? Math.max(14, Math.min(40, Math.floor(720 / T))) : Math.max(2, Math.min(12, Math.floor(1600 / (cols.length * T))));
  const side = T * c;
  const gap = single ? 0 : Math.max(14, Math.round(side * 0.12));
  const left = single ? 90 : 130;
  const top = single ? 150 : 130;
  let x0 = left;
  svg.text(24, 30, title, { size: 24, weight: '700' });
  if (subtitle) svg.text(24, 62, subtitle, { size: 16, fill: MUTED });
  if (single) {
    const fs = Math.max(14, Math.min(22, c - 4));
    svg.text(left + side / 2, top - 46, labels.keys, { size: 15, anchor: 'middle', fill: MUTED });
    svg.text(left - 60, top + side / 2, labels.queries, { size: 15, anchor: 'middle', fill: MUTED, rotate: -90 });
    for (let k = 0; k < T; k++) {
      svg.text(left - 10, top + k * c + c / 2, tokenMark(tokens[k]), { size: fs, anchor: 'end', mono: true });
      svg.text(left + k * c + c / 2, top - 14, tokenMark(tokens[k]), { size: fs, anchor: 'middle', mono: true });
    }
    mapCells(svg, maps[0].data, maps[0].offset, T, mask, left, top, c);
  } else {
    cols.forEach((s, k) => svg.text(x0 + k * (side + gap) + side / 2, top - 18, s, { size: 15, anchor: 'middle', weight: '600' }));
    rows.forEach((s, k) => svg.text(left - 14, top + k * (side + gap) + side / 2, s, { size: 15, anchor: 'end', weight: '600' }));
    for (const m of maps) mapCells(svg, m.data, m.offset, T, mask, x0 + m.col * (side + gap), top + m.row * (side + gap), c);
  }
  const gridW = single ? side : cols.length * (side + gap) - gap;
  const gridH = single ? side : rows.length * (side + gap) - gap;
  const ly = top + gridH + 34;
  heatLegend(svg, left, ly, Math.min(360, Math.max(240, gridW * 0.5)), labels.legend, labels.masked);
  return svg.doc(Math.max(left + gridW + 40, left + 560, 48 + textWidth(title, 24), 48 + textWidth(subtitle, 16)), ly + 70);
}

/**
 * The next-token bars as SVG text: answer is gpt.js nextToken's; labels {title, subtitle, p, logit, dropped}.
 * Each token gets its bar (the probability it is drawn with), a pale bar behind (before top-k/top-p)
 * and its numbers; dropped tokens are grey and say so.
 */
export function barsSvg(answer, labels) {
  const svg = new Svg();
  const rowH = 30;
  const barW = 520;
  const x = 130;
  const top = 110;
  svg.text(24, 30, labels.title, { size: 24, weight: '700' });
  if (labels.subtitle) svg.text(24, 62, labels.subtitle, { size: 16, fill: MUTED });
  svg.text(x, top - 20, labels.p, { size: 15, fill: MUTED });
  svg.text(x + barW + 190, top - 20, labels.logit, { size: 15, fill: MUTED, anchor: 'end' });
  answer.top.forEach((e, k) => {
    const y = top + k * rowH;
    svg.text(x - 14, y + rowH / 2, tokenMark(e.text), { size: 18, anchor: 'end', mono: true, fill: e.kept ? INK : MUTED });
    svg.rect(x, y + 5, barW * e.p_full, rowH - 10, '#dbe4f3');
    if (e.kept) svg.rect(x, y + 5, barW * e.p, rowH - 10, '#2457a6');
    svg.text(x + barW + 12, y + rowH / 2, e.kept ? `${(e.p * 100).toFixed(1)}%` : `${labels.dropped} (${(e.p_full * 100).toFixed(1)}%)`, { size: 15, fill: e.kept ? INK : MUTED });
    svg.text(x + barW + 190, y + rowH / 2, e.logit.toFixed(3), { size: 15, anchor: 'end', mono: true, fill: e.kept ? INK : MUTED });
  });
  const ly = top + answer.top.length * rowH + 24;
  svg.rect(x, ly, 18, 14, '#2457a6');
  svg.text(x + 26, ly + 7, labels.keptKey, { size: 14, fill: MUTED });
  svg.rect(x + 300, ly, 18, 14, '#dbe4f3');
  svg.text(x + 326, ly + 7, labels.fullKey, { size: 14, fill: MUTED });
  return svg.doc(Math.max(x + barW + 230, 48 + textWidth(labels.title, 24), 48 + textWidth(labels.subtitle ?? '', 16)), ly + 40);
}

/** A round tick step for a range. */
function niceStep(span, n) {
  const raw = span / Math.max(1, n);
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? raw;
}

/**
 * Loss curves as SVG text: runs [{label, color, dash: number[], steps, train, valSteps, val,
 * divergedAt, valColor?}] and labels {title, subtitle, x, y, train, val, diverged, floor?: {value, text, color, dash}}. Axes with ticks, each run's
 * training loss as a line and its validation loss as dots on a dotted line, a divergence marker
 * with its step, and a legend naming every series by text and line style.
 */
export function lossSvg(runs, labels) {
  const svg = new Svg();
  const W = 1200, H = 640, L = 90, R = 30, top = 90, bottom = H - 150;
  const xs = runs.flatMap((r) => [...r.steps, ...r.valSteps]);
  const floor = Number.isFinite(labels.floor?.value) ? labels.floor.value : null;
  const ys = [...runs.flatMap((r) => [...r.train, ...r.val]), ...(floor == null ? [] : [floor])].filter(Number.isFinite);
  const x1 = Math.max(1, ...xs), x0 = Math.min(x1 - 1, ...xs, 0);
  let y0 = ys.length ? Math.min(...ys) : 0, y1 = ys.length ? Math.max(...ys) : 1;
  if (y1 - y0 < 1e-6) { y0 -= 0.5; y1 += 0.5; }
  const X = (s) => L + ((s - x0) / (x1 - x0)) * (W - L - R);
  const Y = (v) => bottom - ((v - y0) / (y1 - y0)) * (bottom - top);
  svg.text(24, 30, labels.title, { size: 24, weight: '700' });
  if (labels.subtitle) svg.text(24, 62, labels.subtitle, { size: 16, fill: MUTED });
  const ys_ = niceStep(y1 - y0, 6);
  for (let v = Math.ceil(y0 / ys_) * ys_; v <= y1 + 1e-9; v += ys_) {
    svg.line(L, Y(v), W - R, Y(v), '#e3e5e8');
    svg.text(L - 10, Y(v), v.toFixed(ys_ < 0.1 ? 2 : 1), { size: 14, anchor: 'end', fill: MUTED });
  }
  const xs_ = niceStep(x1 - x0, 8);
  for (let s = Math.ceil(x0 / xs_) * xs_; s <= x1 + 1e-9; s += xs_) {
    svg.line(X(s), bottom, X(s), bottom + 6, MUTED);
    svg.text(X(s), bottom + 20, String(Math.round(s)), { size: 14, anchor: 'middle', fill: MUTED });
  }
  svg.line(L, bottom, W - R, bottom, MUTED);
  svg.line(L, top, L, bottom, MUTED);
  svg.text((L + W - R) / 2, bottom + 46, labels.x, { size: 15, anchor: 'middle', fill: MUTED });
  svg.text(24, (top + bottom) / 2, labels.y, { size: 15, anchor: 'middle', fill: MUTED, rotate: -90 });
  const clipped = (v) => Math.max(top, Math.min(bottom, Y(v)));
  runs.forEach((r) => {
    const pts = r.steps.map((s, i) => [s, r.train[i]]).filter(([, v]) => Number.isFinite(v)).map(([s, v]) => [X(s), clipped(v)]);
    svg.poly(pts, r.color, 2, (r.dash ?? []).join(' '));
    const vp = r.valSteps.map((s, i) => [s, r.val[i]]).filter(([, v]) => Number.isFinite(v)).map(([s, v]) => [X(s), clipped(v)]);
    svg.poly(vp, r.valColor ?? r.color, 1.5, '2 4');
    vp.forEach(([x, y]) => svg.dot(x, y, 4, r.valColor ?? r.color));
    if (r.divergedAt != null) {
      svg.line(X(r.divergedAt), top, X(r.divergedAt), bottom, '#b42318', 2, '6 4');
      svg.text(X(r.divergedAt) + 6, top + 14, labels.diverged.replace('{step}', r.divergedAt), { size: 14, fill: '#b42318' });
    }
  });
  let ly = bottom + 80;
  runs.forEach((r) => {
    svg.line(L, ly, L + 40, ly, r.color, 2, (r.dash ?? []).join(' '));
    svg.text(L + 50, ly, `${r.label ? `${r.label}: ` : ''}${labels.train}`, { size: 15 });
    svg.line(L + 420, ly, L + 460, ly, r.valColor ?? r.color, 1.5, '2 4');
    svg.dot(L + 440, ly, 4, r.valColor ?? r.color);
    svg.text(L + 470, ly, `${r.label ? `${r.label}: ` : ''}${labels.val}`, { size: 15 });
    ly += 26;
  });
  if (floor != null) { // the task's loss floor: a perfect model's loss
    svg.line(L, Y(floor), W - R, Y(floor), labels.floor.color, 1.5, labels.floor.dash);
    svg.line(L, ly, L + 40, ly, labels.floor.color, 1.5, labels.floor.dash);
    svg.text(L + 50, ly, labels.floor.text, { size: 15 });
    ly += 26;
  }
  return svg.doc(W, Math.max(H, ly + 10));
}
