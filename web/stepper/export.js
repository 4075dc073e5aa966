// export.js — a matrix or a panel of the stepper, out of the page: CSV, JSON, NumPy, LaTeX, SVG, PNG.
//
// The text formats are pure functions (unit-tested in Node, tests/wasm/export.test.mjs); only
// svgToPngBlob and the download helpers (ui.js's) need a browser. Everything works under a strict
// CSP (no eval, no inline script or style; the PNG goes through a data: image, allowed by
// img-src 'self' data:).
//
// Non-finite numbers, which the stepper shows as −∞ and NaN, are written as each format reads them:
//   CSV  -inf / inf / nan            (what NumPy's loadtxt, pandas and spreadsheets read)
//   JSON "-inf" / "inf" / "nan"     (the core's own convention: JSON has no Infinity)
//   NumPy -np.inf / np.inf / np.nan
//   LaTeX -\infty / \infty / \mathrm{NaN}
// CSV, JSON and NumPy keep every digit (the shortest text that reads back to the same float32);
// LaTeX and the SVG/PNG panels round like the page (4 decimals).

import { formatNumber } from '../common/format.js';
import { downloadBlob, downloadText } from '../common/ui.js';
import { svgToPngBlob, xml } from '../common/export.js';

export { svgToPngBlob };

// the download helpers are ui.js's (both pages offer files the same way), exported here too
export { downloadBlob, downloadText };

/** @typedef {number[][]} Matrix */

/** The export formats: file extension, MIME type, label. */
export const FORMATS = {
  csv: { ext: 'csv', mime: 'text/csv', label: 'CSV' },
  json: { ext: 'json', mime: 'application/json', label: 'JSON' },
  numpy: { ext: 'py', mime: 'text/x-python', label: 'NumPy' },
  latex: { ext: 'tex', mime: 'application/x-tex', label: 'LaTeX' },
  svg: { ext: 'svg', mime: 'image/svg+xml', label: 'SVG' },
  png: { ext: 'png', mime: 'image/png', label: 'PNG' },
};

/** A vector (number[]) as a one-row matrix; a matrix as it is. */
export function asMatrix(m) {
  if (!Array.isArray(m)) throw new TypeError('a matrix must be an array of rows');
  if (m.length === 0) return [];
  return m.every((r) => Array.isArray(r) || ArrayBuffer.isView(r)) ? m.map((r) => Array.from(r)) : [Array.from(m)];
}

function plain(v) {
  if (Number.isNaN(v)) return 'nan';
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  return String(v);
}

/** CSV: one line per row, comma-separated, full precision; -inf / inf / nan. */
export function toCSV(matrix) {
  return asMatrix(matrix).map((row) => row.map(plain).join(',')).join('\n') + '\n';
}

/** JSON: an array of rows; non-finite cells as the strings "-inf", "inf", "nan". One row a line. */
export function toJSON(matrix) {
  const rows = asMatrix(matrix).map((row) => '  [' + row.map((v) => (Number.isFinite(v) ? String(v) : `"${plain(v)}"`)).join(', ') + ']');
  return rows.length ? `[\n${rows.join(',\n')}\n]\n` : '[]\n';
}

/** A Python identifier from a matrix name ("S / √d_k" → "S_d_k", "W_q" → "W_q"). */
export function pythonName(name) {
  let s = String(name ?? '').normalize('NFKD').replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  if (!s) s = 'm';
  if (/^\d/.test(s)) s = `m_${s}`;
  return s;
}

/**
 * NumPy: `np.array([[…], […]], dtype=np.float32)` with -np.inf / np.inf / np.nan. With a name, a
 * small script: `import numpy as np` and `name = np.array(…)`.
 * @param {Matrix} matrix
 * @param {{name?: string}} [options]
 */
export function toNumPy(matrix, { name } = {}) {
  const cell = (v) => (Number.isNaN(v) ? 'np.nan' : v === Infinity ? 'np.inf' : v === -Infinity ? '-np.inf' : String(v));
  const rows = asMatrix(matrix).map((row) => '[' + row.map(cell).join(', ') + ']');
  const prefix = name !== undefined ? `${pythonName(name)} = ` : '';
  const indent = ' '.repeat(prefix.length + 'np.array(['.length);
  const expr = `np.array([${rows.join(`,\n${indent}`)}], dtype=np.float32)`;
  return name !== undefined ? `import numpy as np\n\n${prefix}${expr}\n` : `${expr}\n`;
}

/** A number as the page shows it: see format.js (re-exported for export's callers). */
export { formatNumber };

/**
 * LaTeX: a bmatrix (amsmath), rounded to `digits` decimals; -\infty, \infty, \mathrm{NaN};
 * 1.23e-5 as 1.23 \times 10^{-5}.
 * @param {Matrix} matrix
 * @param {{digits?: number, env?: string}} [options]
 */
export function toLaTeX(matrix, { digits = 4, env = 'bmatrix' } = {}) {
  const cell = (v) => {
    if (Number.isNaN(v)) return '\\mathrm{NaN}';
    if (v === Infinity) return '\\infty';
    if (v === -Infinity) return '-\\infty';
    const s = formatNumber(v, digits).replace('−', '-');
    const m = /^(-?[\d.]+)e([+-])(\d+)$/.exec(s);
    return m ? `${m[1]} \\times 10^{${m[2] === '-' ? '-' : ''}${m[3]}}` : s;
  };
  const rows = asMatrix(matrix).map((row) => '  ' + row.map(cell).join(' & '));
  return `\\begin{${env}}\n${rows.join(' \\\\\n')}\n\\end{${env}}\n`;
}

/**
 * A matrix as text in one of the text formats.
 * @param {Matrix} matrix
 * @param {'csv'|'json'|'numpy'|'latex'} format
 * @param {{name?: string, digits?: number}} [options]
 */
export function matrixToText(matrix, format, options = {}) {
  switch (format) {
    case 'csv': return toCSV(matrix);
    case 'json': return toJSON(matrix);
    case 'numpy': return toNumPy(matrix, options);
    case 'latex': return toLaTeX(matrix, options);
    default: throw new RangeError(`unknown text format "${format}"`);
  }
}

/** A file name from a matrix name: "S / √d_k" + "csv" → "S_d_k.csv". */
export function fileName(name, format) {
  const base = String(name ?? 'matrix').normalize('NFKD').replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^_+|_+$/g, '') || 'matrix';
  return `${base}.${FORMATS[format]?.ext ?? format}`;
}

// ---- colours --------------------------------------------------------------------------------

const HEAT_RGB = [47, 91, 211]; // the page's accent (style.css --heat)

/** The page's heat shade for a value in 0…1 (weights), as an opaque rgb() on white; null outside. */
export function heatColor(v) {
  if (!Number.isFinite(v)) return null;
  const a = Math.round(Math.min(1, Math.max(0, v)) * 10) / 10 * 0.85;
  const c = HEAT_RGB.map((x) => Math.round(255 + (x - 255) * a));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

/** [r, g, b, a] of a CSS colour in #rgb, #rrggbb, rgb() or rgba() form; null for anything else. */
export function parseColor(css) {
  if (typeof css !== 'string') return null;
  const s = css.trim().toLowerCase();
  let m = /^#([0-9a-f]{3})$/.exec(s);
  if (m) return [...m[1]].map((h) => parseInt(h + h, 16)).concat(1);
  m = /^#([0-9a-f]{6})$/.exec(s);
  if (m) return [0, 2, 4].map((i) => parseInt(m[1].slice(i, i + 2), 16)).concat(1);
  m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:[\s,/]+([\d.]+%?))?\s*\)$/.exec(s);
  if (m) {
    let a = m[4] === undefined ? 1 : m[4].endsWith('%') ? parseFloat(m[4]) / 100 : parseFloat(m[4]);
    return [+m[1], +m[2], +m[3], a];
  }
  return null;
}

/** A colour made opaque over white, as rgb(); null for transparent or unreadable colours. */
function opaque(css) {
  const c = parseColor(css);
  if (!c || c[3] === 0) return null;
  const [r, g, b, a] = c;
  const mix = (x) => Math.round(255 + (x - 255) * a);
  return `rgb(${mix(r)}, ${mix(g)}, ${mix(b)})`;
}

function isDark(css) {
  const c = parseColor(css);
  if (!c) return false;
  const lum = (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]) / 255;
  return lum < 0.55;
}

// ---- SVG panel ------------------------------------------------------------------------------


/**
 * A panel (a title, a matrix, its heatmap colours) as a self-contained SVG: numbers are <text>
 * (selectable, searchable), each cell's exact value is its <title>, no external references, no
 * style elements or attributes (presentation attributes only).
 * @param {object} panel
 * @param {string} panel.title          e.g. "softmax"
 * @param {Matrix|number[]} panel.matrix
 * @param {string} [panel.subtitle]     e.g. "stable softmax · T × T_total = 2 × 2"
 * @param {'heat'|null|((v: number, i: number, j: number) => string|null)|(string|null)[][]} [panel.colors]
 *   cell fill colours: 'heat' (the page's weight shading), a function, a 2-D array of CSS colours
 *   (e.g. read from the page with getComputedStyle), or null for none
 * @param {string[]} [panel.rowLabels]  default 1…T
 * @param {string[]} [panel.colLabels]  default 1…n
 * @param {number} [panel.digits]       decimals, default 4
 * @returns {string}
 */
export function panelSVG({ title = '', matrix, subtitle = '', colors = null, rowLabels, colLabels, digits = 4 }) {
  const m = asMatrix(matrix);
  const nr = m.length;
  const nc = nr ? Math.max(...m.map((r) => r.length)) : 0;
  const texts = m.map((row) => row.map((v) => formatNumber(v, digits)));
  const rl = rowLabels ?? m.map((_, i) => String(i + 1));
  const cl = colLabels ?? Array.from({ length: nc }, (_, j) => String(j + 1));
  const CH = 7.8; // width of one character of the 13px monospace font
  const maxLen = Math.max(4, ...texts.flat().map((t) => t.length), ...cl.map((t) => String(t).length));
  const cw = Math.ceil(maxLen * CH + 16);
  const ch = 26;
  const pad = 16;
  const rhw = Math.ceil(Math.max(2, ...rl.map((t) => String(t).length)) * CH + 12);
  const titleH = title ? 24 : 0;
  const subH = subtitle ? 20 : 0;
  const top = pad + titleH + subH + 4;
  const gridX = pad + rhw;
  const gridY = top + ch;
  const width = Math.max(gridX + nc * cw + pad, pad * 2 + Math.max(String(title).length * 9.5, String(subtitle).length * 7));
  const height = gridY + nr * ch + pad;
  const fillOf = (v, i, j) => {
    let c = null;
    if (colors === 'heat') c = heatColor(v);
    else if (typeof colors === 'function') c = colors(v, i, j);
    else if (Array.isArray(colors)) c = colors[i]?.[j] ?? null;
    return c ? opaque(c) : null;
  };
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${Math.ceil(width)}" height="${height}" viewBox="0 0 ${Math.ceil(width)} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', 'Noto Sans CJK SC', sans-serif">`);
  if (title) out.push(`<title>${xml(title)}</title>`);
  out.push(`<rect x="0" y="0" width="${Math.ceil(width)}" height="${height}" fill="#ffffff"/>`);
  if (title) out.push(`<text x="${pad}" y="${pad + 16}" font-size="16" font-weight="600" fill="#1d1f24">${xml(title)}</text>`);
  if (subtitle) out.push(`<text x="${pad}" y="${pad + titleH + 14}" font-size="12" fill="#5f6570">${xml(subtitle)}</text>`);
  const mono = `font-family="ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace" font-size="13"`;
  out.push(`<g ${mono} fill="#5f6570" text-anchor="middle">`);
  cl.forEach((t, j) => out.push(`<text x="${gridX + j * cw + cw / 2}" y="${top + 17}">${xml(t)}</text>`));
  rl.forEach((t, i) => out.push(`<text x="${pad + rhw / 2}" y="${gridY + i * ch + 17}">${xml(t)}</text>`));
  out.push('</g>');
  out.push(`<g ${mono} text-anchor="end">`);
  m.forEach((row, i) => {
    row.forEach((v, j) => {
      const x = gridX + j * cw;
      const y = gridY + i * ch;
      const fill = fillOf(v, i, j);
      const ink = Number.isNaN(v) ? '#b3261e' : !Number.isFinite(v) ? '#5f6570' : fill && isDark(fill) ? '#ffffff' : '#1d1f24';
      out.push(`<g><title>${xml(plain(v))}</title><rect x="${x}" y="${y}" width="${cw}" height="${ch}" fill="${fill ?? '#ffffff'}" stroke="#dcdde1"/><text x="${x + cw - 8}" y="${y + 17}" fill="${ink}">${xml(texts[i][j])}</text></g>`);
    });
  });
  out.push('</g>');
  out.push('</svg>');
  return out.join('\n') + '\n';
}

// ---- browser-only -----------------------------------------------------------------------------

/**
 * Exports one matrix in any format as a download (browser only).
 * @param {string} name matrix name, used for the file and the NumPy variable
 * @param {Matrix} matrix
 * @param {keyof FORMATS} format
 * @param {{title?: string, subtitle?: string, colors?: any, rowLabels?: string[], colLabels?: string[]}} [panel]
 *   for SVG and PNG
 */
export async function exportMatrix(name, matrix, format, panel = {}) {
  const file = fileName(name, format);
  if (format === 'svg' || format === 'png') {
    const svg = panelSVG({ title: name, ...panel, matrix });
    if (format === 'svg') downloadText(file, svg, FORMATS.svg.mime);
    else downloadBlob(file, await svgToPngBlob(svg));
    return file;
  }
  downloadText(file, matrixToText(matrix, format, { name }), FORMATS[format].mime);
  return file;
}
