// export.test.mjs — the pure text exports of web/stepper/export.js (CSV, JSON, NumPy, LaTeX, SVG).
import test from 'node:test';
import assert from 'node:assert/strict';
import {
  toCSV, toJSON, toNumPy, toLaTeX, matrixToText, panelSVG, formatNumber, fileName, pythonName,
  heatColor, parseColor, asMatrix, FORMATS,
} from '../../web/stepper/export.js';

// A masked, softmaxed-and-overflowed little matrix: finite, −∞ and NaN cells.
const M = [
  [0.66976154, -Infinity],
  [NaN, 1],
  [-0.5, 1.2e-7],
];

test('CSV: one line per row, full precision, -inf / nan', () => {
  assert.equal(toCSV(M), '0.66976154,-inf\nnan,1\n-0.5,1.2e-7\n');
  assert.equal(toCSV([[Infinity]]), 'inf\n');
});

test('CSV: a vector is one row', () => {
  assert.equal(toCSV([1, 0.5]), '1,0.5\n');
  assert.deepEqual(asMatrix([1, 2]), [[1, 2]]);
  assert.deepEqual(asMatrix([new Float32Array([1, 2])]), [[1, 2]]);
});

test('JSON: valid JSON, non-finite as the core\'s strings, round-trips', () => {
  const text = toJSON(M);
  const back = JSON.parse(text);
  assert.deepEqual(back, [[0.66976154, '-inf'], ['nan', 1], [-0.5, 1.2e-7]]);
  assert.equal(toJSON([]), '[]\n');
});

test('NumPy: np.array(..., dtype=np.float32) with -np.inf and np.nan', () => {
  const text = toNumPy(M);
  assert.equal(text, 'np.array([[0.66976154, -np.inf],\n          [np.nan, 1],\n          [-0.5, 1.2e-7]], dtype=np.float32)\n');
  const named = toNumPy([[1, Infinity]], { name: 'S / √d_k' });
  assert.match(named, /^import numpy as np\n\nS_d_k = np\.array\(\[\[1, np\.inf\]\], dtype=np\.float32\)\n$/);
  // every cell of a bigger matrix is there
  const big = Array.from({ length: 5 }, (_, i) => Array.from({ length: 5 }, (_, j) => i * 5 + j + 0.25));
  const t = toNumPy(big);
  for (const row of big) for (const v of row) assert.ok(t.includes(String(v)), `${v} missing`);
});

test('LaTeX: bmatrix, 4 decimals, -\\infty and \\mathrm{NaN}, exponents', () => {
  assert.equal(
    toLaTeX(M),
    '\\begin{bmatrix}\n  0.6698 & -\\infty \\\\\n  \\mathrm{NaN} & 1 \\\\\n  -0.5000 & 1.20 \\times 10^{-7}\n\\end{bmatrix}\n',
  );
  assert.match(toLaTeX([[Infinity]], { env: 'pmatrix' }), /\\begin\{pmatrix\}\n {2}\\infty\n\\end\{pmatrix\}/);
  assert.equal(toLaTeX([[0.123456]], { digits: 2 }).split('\n')[1], '  0.12');
  assert.ok(!/−/.test(toLaTeX(M)), 'LaTeX uses an ASCII minus');
});

test('matrixToText dispatches and refuses unknown formats', () => {
  assert.equal(matrixToText(M, 'csv'), toCSV(M));
  assert.equal(matrixToText(M, 'latex'), toLaTeX(M));
  assert.equal(matrixToText(M, 'numpy', { name: 'w' }), toNumPy(M, { name: 'w' }));
  assert.throws(() => matrixToText(M, 'xlsx'), RangeError);
  for (const f of ['csv', 'json', 'numpy', 'latex', 'svg', 'png']) assert.ok(FORMATS[f].mime);
});

test('formatNumber matches the page', () => {
  assert.equal(formatNumber(0.66976154), '0.6698');
  assert.equal(formatNumber(-Infinity), '−∞');
  assert.equal(formatNumber(NaN), 'NaN');
  assert.equal(formatNumber(-2), '−2');
  assert.equal(formatNumber(-0), '0');
  assert.equal(formatNumber(1.2e-7), '1.20e−7');
});

test('file and variable names are safe', () => {
  assert.equal(fileName('S / √d_k', 'csv'), 'S_d_k.csv');
  assert.equal(fileName('head 2 weights', 'numpy'), 'head_2_weights.py');
  assert.equal(fileName('', 'png'), 'matrix.png');
  assert.equal(pythonName('2x'), 'm_2x');
  assert.equal(pythonName('+ mask'), 'mask');
});

test('SVG panel: self-contained, every number as text, title, heat colours', () => {
  const weights = [[0.66976154, 0.33023846], [0.33023846, 0.66976154]];
  const svg = panelSVG({ title: 'softmax <weights>', subtitle: 'T × T_total = 2 × 2', matrix: weights, colors: 'heat' });
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="\d+" height="\d+"/);
  assert.ok(svg.includes('softmax &lt;weights&gt;'), 'title escaped');
  assert.ok(svg.includes('T × T_total = 2 × 2'));
  assert.equal((svg.match(/>0\.6698</g) || []).length, 2);
  assert.equal((svg.match(/>0\.3302</g) || []).length, 2);
  assert.ok(svg.includes('<title>0.66976154</title>'), 'exact value kept');
  // no external references, no script, no style attribute / element
  assert.ok(!/<script|style=|<style|href=|<image|<foreignObject/i.test(svg));
  // heat: the larger weight is the darker cell
  assert.ok(svg.includes(`fill="${heatColor(0.66976154)}"`));
  assert.notEqual(heatColor(0.7), heatColor(0.3));
  assert.equal(heatColor(-Infinity), null);
});

test('SVG panel: −∞ and NaN cells, vectors, colours from the page', () => {
  const svg = panelSVG({ title: 'mask', matrix: M, colors: [['rgba(47, 91, 211, 0.5)', null], [null, '#000'], [null, null]] });
  for (const t of ['0.6698', '−∞', 'NaN', '1', '−0.5000', '1.20e−7']) assert.ok(svg.includes(`>${t}<`), `${t} missing`);
  assert.ok(svg.includes('fill="rgb(151, 173, 233)"'), 'rgba mixed over white');
  assert.ok(/fill="rgb\(0, 0, 0\)"[^]*?fill="#ffffff">1</.test(svg), 'white text on a dark cell');
  const v = panelSVG({ title: 'Σ', matrix: [1, 0, NaN] });
  for (const t of ['>1<', '>0<', '>NaN<']) assert.ok(v.includes(t));
  assert.deepEqual(parseColor('rgb(1, 2, 3)'), [1, 2, 3, 1]);
  assert.deepEqual(parseColor('#fff'), [255, 255, 255, 1]);
  assert.equal(parseColor('transparent'), null);
});

test('SVG panel: a 16×16 matrix has every number', () => {
  const m = Array.from({ length: 16 }, (_, i) => Array.from({ length: 16 }, (_, j) => (i * 16 + j) / 1000 + 0.00001));
  const svg = panelSVG({ title: 'scores', matrix: m, colors: (v) => heatColor(v) });
  for (const row of m) for (const v of row) assert.ok(svg.includes(`>${formatNumber(v)}<`), `${v}`);
  assert.equal((svg.match(/<rect /g) || []).length, 1 + 256);
});
