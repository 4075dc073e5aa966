// export.js — pictures of the pages' figures for slides and papers, shared by both pages: the
// "PNG" and "SVG" buttons (exportButtons), an SVG text rendered to a PNG at twice its size
// (svgToPngBlob), and what the pages and the figures share (the maps' colour scale heat, the
// token marks, XML escaping). The figures themselves (SVG text built from the numbers, with
// title, labels and legend) are in figures.js, loaded on the first click: the pages do not carry
// them until someone saves a picture. The stepper's panels use its own panelSVG
// (stepper/export.js) and this PNG path.
//
// Works under the strict CSP (no eval, no inline style; the PNG goes through a data: image,
// allowed by img-src 'self' data:).
import { downloadBlob, downloadText } from './ui.js';

// the sequential scale of the pages' attention maps (ColorBrewer Blues), interpolated
const STOPS = ['#f7fbff', '#deebf7', '#c6dbef', '#9ecae1', '#6baed6', '#4292c6', '#2171b5', '#08519c', '#08306b']
  .map((h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)));

/**
 * From this weight on, text over heat(w) is white, below it black: both keep a contrast of at least
 * 4.5:1 (WCAG 1.4.3) on the whole scale (white reaches 4.57:1 at 0.715, black 4.59:1).
 */
export const HEAT_WHITE_TEXT = 0.715;

/**
 * Whether text over the colour `rgb` ('rgb(r,g,b)') is white rather than black: the one of the two
 * with the larger contrast, which is at least 4.58:1 (√21, WCAG 1.4.3) on any colour. (The page's
 * ink, #1c2027, would not do: both fall under 4.5:1 on the diverging scales' middle reds and blues.)
 */
export function whiteText(rgb) {
  const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const [r, g, b] = rgb.match(/[\d.]+/g).slice(0, 3).map((v) => lin(Number(v)));
  const L = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return 1.05 / (L + 0.05) > (L + 0.05) / 0.05;
}

/** A weight in 0…1 as the maps' colour (clamped). */
export function heat(w) {
  const x = Math.max(0, Math.min(1, w)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const a = STOPS[i];
  const b = STOPS[i + 1];
  return `rgb(${Math.round(a[0] + (b[0] - a[0]) * f)},${Math.round(a[1] + (b[1] - a[1]) * f)},${Math.round(a[2] + (b[2] - a[2]) * f)})`;
}

/** Text escaped for XML. */
export function xml(s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * A token as a label: every space, newline and tab made visible (␣ ↵ ⇥), so GPT-2's piece " the"
 * shows as "␣the". The one convention (maps.js's tokenLabel); the CLI's is core/tokenizers/bpe.h's
 * visible_token, both checked against tests/golden/token_labels.json.
 */
export function tokenMark(s) {
  return String(s).replace(/[ \n\t]/g, (c) => (c === ' ' ? '␣' : c === '\n' ? '↵' : '⇥'));
}

/** The width and height attributes of an SVG text. */
export function svgSize(svg) {
  const w = /<svg[^>]*\swidth="([\d.]+)"/.exec(svg);
  const h = /<svg[^>]*\sheight="([\d.]+)"/.exec(svg);
  return [w ? +w[1] : 300, h ? +h[1] : 150];
}

/**
 * Renders an SVG text to a PNG Blob (browser only): data: image → canvas → toBlob. A data: image
 * is allowed by `img-src 'self' data:`. The PNG is scale × the SVG's width and height.
 * @param {string} svg
 * @param {{scale?: number}} [options] pixel ratio, default 2 (crisp on slides)
 * @returns {Promise<Blob>}
 */
export async function svgToPngBlob(svg, { scale = 2 } = {}) {
  const [w, h] = svgSize(svg);
  const bytes = new TextEncoder().encode(svg);
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  const img = new Image();
  img.decoding = 'async';
  img.src = `data:image/svg+xml;base64,${btoa(bin)}`;
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = Math.ceil(w * scale);
  canvas.height = Math.ceil(h * scale);
  const ctx = canvas.getContext('2d');
  ctx.scale(scale, scale);
  ctx.drawImage(img, 0, 0, w, h);
  return new Promise((resolve, reject) => {
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('canvas.toBlob gave no PNG'))), 'image/png');
  });
}

/**
 * Two buttons, "PNG" and "SVG", that save a figure: makeSvg() → SVG text or a promise of it
 * (built when clicked, from the numbers shown then; figures.js loaded then); file: the name without extension; say(text) reports what was
 * saved (the PNG's size in pixels). words: {png, svg, group, saved} (saved has {file}, {w}, {h}).
 */
export function exportButtons({ file, makeSvg, words, say, cls = 'aps-btn ap-export-btn' }) {
  const box = document.createElement('span');
  box.className = 'ap-export';
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', words.group);
  for (const kind of ['png', 'svg']) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = cls;
    b.textContent = words[kind];
    b.addEventListener('click', async () => {
      const svg = await makeSvg();
      if (!svg) return;
      const [w, h] = svgSize(svg);
      const name = `${file}.${kind}`;
      if (kind === 'svg') {
        downloadText(name, svg, 'image/svg+xml');
        say?.(words.saved.replace('{file}', name).replace('{w}', w).replace('{h}', h));
      } else {
        downloadBlob(name, await svgToPngBlob(svg, { scale: 2 }));
        say?.(words.saved.replace('{file}', name).replace('{w}', w * 2).replace('{h}', h * 2));
      }
    });
    box.append(b);
  }
  return box;
}

/** exportButtons in a bar: a lead text before them and, after them, the line that says what was saved. */
export function exportBar({ lead, file, makeSvg, words, cls = 'ap-export-bar' }) {
  const box = document.createElement('div');
  box.className = cls;
  const leadEl = document.createElement('span');
  leadEl.textContent = lead;
  const saved = document.createElement('span');
  saved.className = 'ap-export-saved';
  saved.setAttribute('role', 'status');
  box.append(leadEl, exportButtons({ file, makeSvg, words, say: (x) => { saved.textContent = x; } }), saved);
  return box;
}
