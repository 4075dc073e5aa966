// main.js — the first page: a few built-in examples, each shown as the full trace of one
// attention forward pass (web/attention.js → the wasm core). No inline scripts or styles, so the
// page runs under a strict Content-Security-Policy.
import { loadAttention, AttentionError } from './attention.js';

const I2 = '1 0; 0 1';

/** The built-in examples; the first is the tutorial's. Specs follow docs/api.md. */
const EXAMPLES = [
  {
    id: 'identity',
    title: 'Identity 2×2 (tutorial example)',
    description:
      'Two tokens, x = I, and every weight matrix the identity. Each token attends to itself a little more than to the other: softmax([1/√2, 0]) = [0.6698, 0.3302]. With V = W_o = I the output is the weight matrix itself.',
    spec: { x: I2, W_q: I2, W_k: I2, W_v: I2, W_o: I2 },
  },
  {
    id: 'causal',
    title: '4 tokens, causal mask',
    description:
      'Four tokens with random weights (seed 1). The causal mask adds −∞ above the diagonal, so token i only attends to tokens 1…i: the first row of the weights is [1, 0, 0, 0].',
    spec: { x: '1 0 1; 0 1 0; 1 1 0; 0 0.5 1', seed: 1, causal: true },
  },
  {
    id: 'inclusive',
    title: 'Exercise: inclusive mask (j ≥ i)',
    description:
      'The tutorials’ exercise masks j ≥ i, so each token loses itself and the first token sees nothing at all. Its row of weights would be NaN; the core sets it to zeros and reports it.',
    spec: { x: '1 0; 0 1; 1 1', W_q: I2, W_k: I2, W_v: I2, causal: true, mask: 'inclusive' },
  },
  {
    id: 'naive',
    title: 'Scores around 1000, naive softmax',
    description:
      'exp(1000) overflows float32 to +∞, and ∞/∞ is NaN: the naive softmax breaks. The NaN is kept (that is the lesson) and reported. Compare with the stable softmax.',
    spec: { Q: I2, K: '1000 999; 999 1000', V: I2, scale: false, softmax: 'naive' },
  },
  {
    id: 'stable',
    title: 'Scores around 1000, stable softmax',
    description:
      'Same scores, but the stable softmax subtracts each row’s maximum before exp: softmax([1000, 999]) = softmax([1, 0]) = [0.7311, 0.2689].',
    spec: { Q: I2, K: '1000 999; 999 1000', V: I2, scale: false, softmax: 'stable' },
  },
  {
    id: 'kv-cache',
    title: 'KV-cache step (base 2)',
    description:
      'Two positions are already cached (base 2), so only the last two tokens are queries, at positions 3 and 4. Keys and values cover all four positions: the scores are 2 × 4, and the mask hides position 4 from the query at position 3.',
    spec: { x: '1 0; 0 1; 1 1; 2 0', W_q: I2, W_k: I2, W_v: I2, causal: true, base: 2 },
  },
];

const $ = (id) => document.getElementById(id);

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A number as the page shows it: 4 decimals, −∞ / ∞ / NaN spelled out, integers as they are. */
export function formatNumber(v) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '∞';
  if (Object.is(v, -0)) v = 0;
  if (Number.isInteger(v) && Math.abs(v) < 1e6) return String(v).replace('-', '−');
  const a = Math.abs(v);
  const s = a >= 1e5 || a < 1e-4 ? v.toExponential(2) : v.toFixed(4);
  return s.replace('-', '−');
}

function shapeOf(m) {
  return Array.isArray(m[0]) ? [m.length, m[0].length] : [m.length];
}

function shapeText(m, dims) {
  const s = shapeOf(m).join(' × ');
  return dims ? `${dims} = ${s}` : s;
}

/**
 * A matrix (or vector) as a table. opts.heat shades cells by value (0…1); opts.sums appends a Σ
 * column; opts.rowClass(i) marks rows; opts.rowLabel(i) names rows (default 1…n).
 */
function matrixTable(m, opts = {}) {
  const rows = Array.isArray(m[0]) ? m : [m];
  const table = el('table', 'matrix');
  const cols = rows.length ? rows[0].length : 0;
  const head = table.createTHead().insertRow();
  head.appendChild(el('th', 'corner'));
  for (let j = 0; j < cols; j++) head.appendChild(el('th', 'index', String(j + 1))).scope = 'col';
  if (opts.sums) head.appendChild(el('th', 'index sum', 'Σ')).scope = 'col';
  const body = table.createTBody();
  rows.forEach((row, i) => {
    const tr = body.insertRow();
    const cls = opts.rowClass?.(i);
    if (cls) tr.className = cls;
    const th = el('th', 'index', opts.rowLabel ? opts.rowLabel(i) : String(i + 1));
    th.scope = 'row';
    tr.appendChild(th);
    for (const v of row) {
      const td = el('td', '', formatNumber(v));
      td.title = String(v);
      if (Number.isNaN(v)) td.classList.add('nan');
      else if (!Number.isFinite(v)) td.classList.add('inf');
      if (opts.heat && Number.isFinite(v)) td.classList.add(`heat-${Math.round(Math.min(1, Math.max(0, v)) * 10)}`);
      tr.appendChild(td);
    }
    if (opts.sums) {
      const v = opts.sums[i];
      const td = el('td', 'sum', formatNumber(v));
      td.title = String(v);
      if (Number.isNaN(v)) td.classList.add('nan');
      tr.appendChild(td);
    }
  });
  return table;
}

/** One labelled step: a title, a formula, the shape, the table. */
function step(title, formula, m, dims, opts) {
  const fig = el('figure', 'step');
  const cap = el('figcaption');
  const line = el('span', 'step-head');
  line.append(el('span', 'step-title', title));
  if (formula) line.append(el('span', 'formula', formula));
  cap.append(line, el('span', 'shape', shapeText(m, dims)));
  fig.append(cap, matrixTable(m, opts));
  return fig;
}

function group(title, figures, note) {
  const section = el('section', 'group');
  section.append(el('h2', '', title));
  if (note) section.append(el('p', 'note', note));
  const grid = el('div', 'grid');
  grid.append(...figures.filter(Boolean));
  section.append(grid);
  return section;
}

const INPUT_DIMS = {
  x: 'T_total × d_model',
  W_q: 'd_model × n_head·head_dim',
  W_k: 'd_model × n_head·head_dim',
  W_v: 'd_model × n_head·d_v',
  W_o: 'n_head·d_v × d_out',
  b_q: 'n_head·head_dim',
  b_k: 'n_head·head_dim',
  b_v: 'n_head·d_v',
  b_o: 'd_out',
  Q: 'T × n_head·head_dim',
  K: 'T_total × n_head·head_dim',
  V: 'T_total × n_head·d_v',
};

function renderSummary(t) {
  const dl = $('summary');
  dl.replaceChildren();
  const items = [
    ['T', t.T], ['T_total', t.T_total], ['base', t.base], ['n_head', t.n_head],
    ['d_model', t.mode === 'x' ? t.d_model : '—'], ['head_dim', t.head_dim], ['d_v', t.d_v], ['d_out', t.d_out],
    ['scale', t.options.scale === false ? 'off' : `1/√${t.head_dim} = ${formatNumber(t.scale_factor)}`],
    ['mask', t.options.causal ? t.options.mask : 'none'],
    ['softmax', t.options.softmax],
  ];
  for (const [k, v] of items) {
    const div = el('div');
    div.append(el('dt', '', k), el('dd', '', String(v)));
    dl.append(div);
  }
}

function renderWarnings(t) {
  const list = $('warning-list');
  list.replaceChildren(...t.warnings.map((w) => el('li', '', w)));
  $('warnings').hidden = t.warnings.length === 0;
}

function renderTrace(t, spec) {
  const steps = $('steps');
  steps.replaceChildren();
  renderSummary(t);
  renderWarnings(t);

  // position of query i in the sequence (1-based), so KV-cache rows read as positions
  const queryLabel = (i) => String(t.base + i + 1);
  // In qkv mode with one head, the head's q, k, v are the inputs Q, K, V: show them once, below.
  const dedupe = t.mode === 'qkv' && t.n_head === 1;
  const inputs = Object.keys(INPUT_DIMS)
    .filter((k) => t.inputs[k] !== undefined && !(dedupe && ['Q', 'K', 'V'].includes(k)))
    .map((k) => step(k, '', t.inputs[k], INPUT_DIMS[k], k === 'Q' ? { rowLabel: queryLabel } : undefined));
  if (inputs.length) {
    const note = spec.seed !== undefined ? `Weights not given are drawn uniformly from ±1/√head_dim with seed ${spec.seed}.` : '';
    steps.append(group('Inputs', inputs, note));
  }

  const scaleFormula = t.options.scale === false ? 'S (scaling off)' : `S · 1/√${t.head_dim}`;
  t.heads.forEach((h, hi) => {
    const isEmpty = new Set(t.empty_rows.filter((r) => r.head === hi).map((r) => r.row));
    const isOverflow = new Set(t.overflow_rows.filter((r) => r.head === hi).map((r) => r.row));
    const rowClass = (i) => (isEmpty.has(i) ? 'row-empty' : isOverflow.has(i) ? 'row-overflow' : '');
    const q = { rowLabel: queryLabel };
    const figures = [
      step('Q', t.mode === 'x' ? `x[base:]·W_q${t.inputs.b_q ? ' + b_q' : ''}` : 'given', h.q, 'T × head_dim', q),
      step('K', t.mode === 'x' ? `x·W_k${t.inputs.b_k ? ' + b_k' : ''}` : 'given', h.k, 'T_total × head_dim'),
      step('V', t.mode === 'x' ? `x·W_v${t.inputs.b_v ? ' + b_v' : ''}` : 'given', h.v, 'T_total × d_v'),
      step('S', 'Q·Kᵀ', h.scores, 'T × T_total', q),
      step('S / √d_k', scaleFormula, h.scaled, 'T × T_total', q),
      step('mask', t.options.causal ? (t.options.mask === 'inclusive' ? '−∞ where j ≥ i + base' : '−∞ where j > i + base') : 'not causal: all 0', t.mask, 'T × T_total', q),
      step('+ mask', 'S / √d_k + mask', h.masked, 'T × T_total', q),
      step('softmax', `${t.options.softmax} softmax, row sums Σ`, h.weights, 'T × T_total', { ...q, heat: true, sums: h.weight_row_sums, rowClass }),
      step('A·V', 'weights·V', h.context, 'T × d_v', { ...q, rowClass }),
    ];
    const title = t.n_head > 1 ? `Head ${hi + 1} of ${t.n_head}` : 'Attention';
    steps.append(group(title, figures));
  });

  const hasWo = t.inputs.W_o !== undefined;
  steps.append(group('Output', [
    step('concat', 'heads side by side', t.concat, 'T × n_head·d_v', { rowLabel: queryLabel }),
    step('out', hasWo ? `concat·W_o${t.inputs.b_o ? ' + b_o' : ''}` : 'concat (no W_o)', t.out, 'T × d_out', { rowLabel: queryLabel }),
  ]));
}

function showError(e) {
  const list = $('warning-list');
  const where = e instanceof AttentionError && e.field ? ` (${e.field}${e.row ? `, row ${e.row}` : ''}${e.column ? `, column ${e.column}` : ''})` : '';
  list.replaceChildren(el('li', 'error', `${e.message}${where}`));
  $('warnings').hidden = false;
  $('steps').replaceChildren();
  $('summary').replaceChildren();
}

function show(api, id) {
  const ex = EXAMPLES.find((x) => x.id === id) ?? EXAMPLES[0];
  $('description').textContent = ex.description;
  try {
    renderTrace(api.trace(ex.spec), ex.spec);
  } catch (e) {
    showError(e);
  }
}

async function main() {
  const select = $('example');
  for (const ex of EXAMPLES) select.append(new Option(ex.title, ex.id));
  const fromHash = location.hash.slice(1);
  if (EXAMPLES.some((x) => x.id === fromHash)) select.value = fromHash;

  let api;
  try {
    api = await loadAttention();
  } catch (e) {
    $('status').textContent = `failed to load the attention core: ${e.message ?? e}`;
    $('status').classList.add('failed');
    return;
  }
  select.addEventListener('change', () => {
    history.replaceState(null, '', `#${select.value}`);
    show(api, select.value);
  });
  show(api, select.value);
  select.disabled = false;
  $('status').textContent = 'ready';
  $('status').title = `core ${api.version}`;
  $('status').classList.add('ready');
}

main();
