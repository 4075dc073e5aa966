// walk-figure.js — one step of the block walk (walk-steps.js) as an SVG figure for a slide: the
// step's title, the prompt and position, its formula lines, then each vector as a labelled heat
// strip (numbers written in the cells when there are at most 16), with its smallest and largest
// value at the right, and a legend of the colour scales. Loaded by walk-view.js on the first save.
// Text only: no script, no external reference (the SVG opens anywhere).
import { xml, tokenMark, whiteText } from '../common/export.js';

const W = 960; // the figure's width
const LEFT = 150; // the labels' column
const RIGHT = 170; // the min … max column
const ROW = 34;
const FONT = 'font-family="DejaVu Sans, Arial, sans-serif"';

/**
 * @param {object} step a walk step {title, formula, vectors: [{name, values, labels?}]}
 * @param {{title: string, subtitle: string, colourOf: Function, fmt: Function, legend: string, note?: string}} o
 *   note: a sentence under the vectors (the sampled token's), wrapped
 * @returns {string} SVG text
 */
export function stepSvg(step, o) {
  const out = [];
  let y = 34;
  out.push(`<text x="16" y="${y}" ${FONT} font-size="20" font-weight="700">${xml(o.title)}</text>`);
  y += 24;
  out.push(`<text x="16" y="${y}" ${FONT} font-size="14" fill="#4a4f57">${xml(o.subtitle)}</text>`);
  for (const line of step.formula) {
    y += 22;
    out.push(`<text x="16" y="${y}" font-family="DejaVu Sans Mono, monospace" font-size="15">${xml(line)}</text>`);
  }
  y += 18;
  const stripW = W - LEFT - RIGHT - 16;
  for (const vec of step.vectors) {
    const n = vec.values.length;
    const colour = o.colourOf(vec.values);
    const cw = stripW / n;
    out.push(`<text x="16" y="${y + ROW / 2 + 5}" ${FONT} font-size="14" font-weight="700">${xml(vec.name)}</text>`);
    out.push(`<text x="16" y="${y + ROW / 2 + 20}" ${FONT} font-size="11" fill="#4a4f57">${n}</text>`);
    vec.values.forEach((v, i) => {
      out.push(`<rect x="${(LEFT + i * cw).toFixed(2)}" y="${y}" width="${(cw + 0.3).toFixed(2)}" height="${ROW - 6}" fill="${colour(v)}"/>`);
      if (n <= 16) {
        const label = vec.labels ? `${tokenMark(vec.labels[i])} ${o.fmt(v, 2)}` : o.fmt(v, 2);
        // white where it contrasts more than the ink, as the page writes them (walk-view.js's is-dark)
        const ink = whiteText(colour(v)) ? ' fill="#ffffff"' : '';
        out.push(`<text x="${(LEFT + (i + 0.5) * cw).toFixed(2)}" y="${y + ROW / 2 + 1}" ${FONT} font-size="11" text-anchor="middle"${ink}>${xml(label)}</text>`);
      }
    });
    out.push(`<rect x="${LEFT}" y="${y}" width="${stripW}" height="${ROW - 6}" fill="none" stroke="#8a8f98" stroke-width="0.6"/>`);
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of vec.values) { if (v < lo) lo = v; if (v > hi) hi = v; }
    out.push(`<text x="${W - RIGHT}" y="${y + ROW / 2 + 1}" ${FONT} font-size="12">${xml(`${o.fmt(lo, 3)} … ${o.fmt(hi, 3)}`)}</text>`);
    y += ROW;
  }
  // the sentence under the vectors (the sampled token), wrapped to the figure's width
  for (const line of wrap(o.note || '', 128)) {
    y += 20;
    out.push(`<text x="16" y="${y}" ${FONT} font-size="13">${xml(line)}</text>`);
  }
  if (o.note) y += 12;
  y += 8;
  // the legend: the diverging scale (signed vectors) and the blues (weights, probabilities)
  const sw = 180;
  for (let k = 0; k < 36; k++) {
    const x = -1 + (2 * k) / 35;
    out.push(`<rect x="${(16 + (k * sw) / 36).toFixed(2)}" y="${y}" width="${(sw / 36 + 0.3).toFixed(2)}" height="12" fill="${o.colourOf([-1, 1])(x)}"/>`);
    out.push(`<rect x="${(220 + (k * sw) / 36).toFixed(2)}" y="${y}" width="${(sw / 36 + 0.3).toFixed(2)}" height="12" fill="${o.colourOf([0, 1])((k / 35))}"/>`);
  }
  out.push(`<text x="16" y="${y + 26}" ${FONT} font-size="11">−max</text><text x="${16 + sw}" y="${y + 26}" ${FONT} font-size="11" text-anchor="end">+max</text>`);
  out.push(`<text x="220" y="${y + 26}" ${FONT} font-size="11">0</text><text x="${220 + sw}" y="${y + 26}" ${FONT} font-size="11" text-anchor="end">max</text>`);
  // the legend's sentence beside the scales, wrapped to the figure's width (12 px text, 524 px)
  const legend = wrap(o.legend, 68);
  legend.forEach((line, k) => out.push(`<text x="420" y="${y + 11 + 16 * k}" ${FONT} font-size="12" fill="#4a4f57">${xml(line)}</text>`));
  const H = Math.ceil(y + Math.max(40, 11 + 16 * legend.length));
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">`
    + `<rect width="${W}" height="${H}" fill="#ffffff"/>${out.join('')}</svg>`;
}

/** Width in half-em units: a CJK character counts two. */
const width = (text) => [...text].reduce((w, c) => w + (c >= '\u2e80' ? 2 : 1), 0);

/** Lines of at most `max` units: broken at spaces, or anywhere in a run without one (Chinese). */
function wrap(text, max) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ').filter(Boolean)) {
    const next = line ? `${line} ${word}` : word;
    if (width(next) <= max) { line = next; continue; }
    if (line) lines.push(line);
    line = '';
    for (const c of word) {
      if (width(line + c) > max) { lines.push(line); line = ''; }
      line += c;
    }
  }
  if (line) lines.push(line);
  return lines;
}
