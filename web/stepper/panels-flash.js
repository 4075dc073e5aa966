// panels-flash.js — two step panels under the stepper: FlashAttention's tiles (one tile step at a
// time: the running maximum m, the running sum ℓ, the rescale α = e^(m_old − m_new) of the partial
// output when a new maximum arrives) and multi-head latent attention (the latent c, the absorbed
// form's scores beside the plain ones, the KV cache's size). Every number is the C++ core's trace
// (web/attention.js → wasm, src/core/attention/flash.h and mla.h); JS only formats it.
// Limits: the examples are fixed (FLASH_EXAMPLE is the golden case flash_16_tokens_causal,
// MLA_EXAMPLE mla_latent_rope_halves, tests/wasm/variant_panels.test.mjs checks it); the tiles can
// also take the stepper's own matrices, read from its 'trace' event. Strings: English and 中文, here.
import { el, setText } from '../common/ui.js';
import { loadAttention } from '../attention.js';

export const FLASH_EXAMPLE = {
  x: [[1.415, -1.772, -0.996, 0.616], [0.311, 0.25, 0.173, -0.507], [1.918, 0.579, -1.869, -0.113],
    [-0.617, -1.22, 0.24, -0.558], [0.072, -1.669, -1.518, 1.497], [-1.446, -1.32, -0.347, -1.128],
    [1.575, 0.428, 0.506, -0.408], [1.099, -0.517, -1.539, 1.664], [0.693, -0.791, -1.903, -1.442],
    [-0.433, -0.986, -0.856, -1.005], [-1.26, -1.271, 0.659, 0.286], [1.193, 1.56, 1.417, 0.683],
    [1.881, -1.502, 0.332, -0.239], [-0.87, 1.933, 0.49, 1.235], [-0.529, -0.622, -0.531, -1.694],
    [1.516, 0.732, 0.703, 0.841]],
  W_q: [[0.266, -0.404, 0.649, 0.161], [0.187, 0.586, -0.111, -0.226], [-0.572, -0.94, 0.558, 0.344],
    [0.887, -0.161, 0.647, 0.196]],
  W_k: [[0.651, -0.649, -0.245, -0.581], [0.645, 0.011, 0.545, -0.85], [0.814, 0.849, -0.936, 0.271],
    [0.268, -0.717, 0.687, 0.008]],
  W_v: [[0.365, -0.892, -0.559, -0.631], [-0.648, 0.624, 0.847, -0.447], [0.64, 0.78, 0.026, -0.51],
    [0.648, -0.572, 0.483, 0.26]],
  W_o: [[0.571, 0.572, 0.938], [0.496, 0.311, 0.878], [-0.643, 0.177, -0.114], [-0.302, -0.338, -0.681]],
  n_head: 2,
  causal: true,
  flash_block_q: 4,
  flash_block_k: 4,
};

export const MLA_EXAMPLE = {
  x: [[0.5, -1, 0.25, 0], [1, 0.5, -0.5, 0.75], [-0.25, 0.5, 1, -1], [0, 1.5, 0.5, 0.25]],
  W_q: [[1, 0, 0.5, 0], [0, 1, 0, -0.5], [0.5, 0, 1, 0], [0, 0.25, 0, 1]],
  W_dkv: [[0.5, 0.5, 0], [0, 1, 0.25], [-0.5, 0, 1], [0, 0, -0.25]],
  W_uk: [[1, 0, 0.5, 0], [0, 1, 0, -0.5], [0.5, 0, 1, 0]],
  W_uv: [[1, 2, 0, -1], [0, 1, 1, 0], [-1, 0, 0.5, 1]],
  W_kr: [[0.3, -0.2], [0.1, 0.4], [-0.5, 0.2], [0.6, 0.1]],
  W_qr: [[0.2, 0.1, -0.3, 0.5], [0.4, -0.6, 0.2, 0.1], [0.1, 0.3, 0.5, -0.2], [-0.4, 0.2, 0.1, 0.3]],
  W_o: [[1, 0, 0.5, 0], [0, 1, 0, -0.5], [0.5, 0, 1, 0], [0, 0.25, 0, 1]],
  n_head: 2,
  causal: true,
  base: 1,
  rope: "halves",
};

const STRINGS = {
  en: {
    'flash.title': 'FlashAttention, tile by tile',
    'flash.lede': 'FlashAttention never holds a whole row of scores. For each block of queries it walks the blocks of keys, keeping per query row a running maximum m, a running sum ℓ of e^(s − m), and an unnormalised partial output o. When a tile brings a larger maximum, the old ℓ and o were measured against the old m: both are multiplied by α = e^(m_old − m_new) before the tile is added. At the end, context = o / ℓ — the same numbers as the softmax path, up to float32 rounding.',
    'flash.source': 'Matrices',
    'flash.source.example': 'the 16-token example (2 heads, causal)',
    'flash.source.stepper': 'the stepper’s matrices above',
    'flash.block_q': 'query rows per block',
    'flash.block_k': 'keys per block',
    'flash.slider': 'tile step',
    'flash.prev': '◀ previous tile',
    'flash.next': 'next tile ▶',
    'flash.step': 'Step {s} of {n}: head {h}, query block {qb} (rows {r0}–{r1}) meets key block {kb} (keys {c0}–{c1})',
    'flash.skipped': 'Every score of this tile is masked (the keys are in the queries’ future): FlashAttention skips it; m, ℓ and o stay.',
    'flash.map': 'Tiles of head {h}: the current one outlined; grey tiles are skipped',
    'flash.col.row': 'query row',
    'flash.col.m_old': 'm before',
    'flash.col.m_new': 'm after',
    'flash.col.alpha': 'α = e^(m_old − m_new)',
    'flash.col.l': 'ℓ after = α·ℓ + Σ p',
    'flash.col.o': 'o after = α·o + p·v',
    'flash.col.what': 'what happened',
    'flash.what.first': 'first visible keys: α = 0 (nothing to rescale)',
    'flash.what.rescale': 'new maximum: old ℓ and o rescaled by α',
    'flash.what.same': 'maximum unchanged: α = 1',
    'flash.what.none': 'no visible key yet',
    'flash.diff': 'Largest |flash − plain| over the context: {d} (float32 rounding allows {b}); over out: {d2} (allows {b2}).',
    'flash.error': 'The tiles cannot be computed: {message}',
    'mla.title': 'Multi-head latent attention (DeepSeek-V2)',
    'mla.lede': 'Keys and values are made from a small latent c = x·W_dkv: k = c·W_uk, v = c·W_uv. The cache keeps only c and one shared rotated key part k_R. Because q·kᵀ = q·(c·W_uk)ᵀ = (q·W_ukᵀ)·cᵀ, the query can absorb W_uk and score against c directly: the same scores, without ever building k.',
    'mla.latent': 'the latent c = x·W_dkv (T_total × d_c = {t} × {dc})',
    'mla.cache': 'The KV cache holds T_total·(d_c + d_rope) = {mla} numbers here; multi-head attention would hold T_total·n_head·(head_dim + d_v) = {mha}.',
    'mla.head': 'head',
    'mla.plain': 'scores = q·kᵀ, k built from c (head {h})',
    'mla.absorbed': 'absorbed: (q_C·W_ukᵀ)·cᵀ + q_R·k_Rᵀ (head {h})',
    'mla.diff': 'Largest difference between the two forms: scores {s}, context {c}.',
  },
  zh: {
    'flash.title': 'FlashAttention：逐块计算',
    'flash.lede': 'FlashAttention 从不保存一整行分数。对每个查询块，它依次走过各个键块，为每个查询行保存一个运行最大值 m、e^(s − m) 的运行和 ℓ，以及未归一化的部分输出 o。当某个块带来更大的最大值时，旧的 ℓ 和 o 是相对旧的 m 算的：先把它们都乘以 α = e^(m_旧 − m_新)，再加上这个块。最后 context = o / ℓ——与 softmax 路径的数相同，只差 float32 舍入。',
    'flash.source': '矩阵',
    'flash.source.example': '16 个词元的例子（2 个头，因果）',
    'flash.source.stepper': '上面步进器里的矩阵',
    'flash.block_q': '每块查询行数',
    'flash.block_k': '每块键数',
    'flash.slider': '分块步骤',
    'flash.prev': '◀ 上一块',
    'flash.next': '下一块 ▶',
    'flash.step': '第 {s} 步，共 {n} 步：头 {h}，查询块 {qb}（行 {r0}–{r1}）遇到键块 {kb}（键 {c0}–{c1}）',
    'flash.skipped': '这个块的分数全被掩码（这些键在查询的未来）：FlashAttention 跳过它；m、ℓ 和 o 不变。',
    'flash.map': '头 {h} 的分块：当前块加框；灰色块被跳过',
    'flash.col.row': '查询行',
    'flash.col.m_old': '之前的 m',
    'flash.col.m_new': '之后的 m',
    'flash.col.alpha': 'α = e^(m_旧 − m_新)',
    'flash.col.l': '之后的 ℓ = α·ℓ + Σ p',
    'flash.col.o': '之后的 o = α·o + p·v',
    'flash.col.what': '发生了什么',
    'flash.what.first': '第一次看到可见的键：α = 0（没有要缩放的）',
    'flash.what.rescale': '新的最大值：旧的 ℓ 和 o 乘以 α',
    'flash.what.same': '最大值不变：α = 1',
    'flash.what.none': '还没有可见的键',
    'flash.diff': 'context 上 |flash − 普通| 的最大值：{d}（float32 舍入允许 {b}）；out 上：{d2}（允许 {b2}）。',
    'flash.error': '无法计算分块：{message}',
    'mla.title': '多头潜在注意力（DeepSeek-V2）',
    'mla.lede': '键和值由一个小的潜在向量 c = x·W_dkv 得到：k = c·W_uk，v = c·W_uv。缓存只保存 c 和一个共享的旋转键部分 k_R。因为 q·kᵀ = q·(c·W_uk)ᵀ = (q·W_ukᵀ)·cᵀ，查询可以吸收 W_uk，直接与 c 打分：分数相同，却从不构造 k。',
    'mla.latent': '潜在向量 c = x·W_dkv（T_total × d_c = {t} × {dc}）',
    'mla.cache': '这里 KV 缓存保存 T_total·(d_c + d_rope) = {mla} 个数；多头注意力要保存 T_total·n_head·(head_dim + d_v) = {mha} 个。',
    'mla.head': '头',
    'mla.plain': '分数 = q·kᵀ，k 由 c 构造（头 {h}）',
    'mla.absorbed': '吸收形式：(q_C·W_ukᵀ)·cᵀ + q_R·k_Rᵀ（头 {h}）',
    'mla.diff': '两种形式的最大差：分数 {s}，context {c}。',
  },
};

function tr(lang, key, vars = {}) {
  const s = (STRINGS[lang] ?? STRINGS.en)[key] ?? STRINGS.en[key];
  return s.replace(/\{(\w+)\}/g, (_, k) => String(vars[k]));
}

// −∞ as the core's JSON writes it, or as web/attention.js hands it over.
const isNegInf = (v) => v === '-inf' || v === -Infinity;

/** A number as the panels show it: 4 decimals, −∞ for a masked entry. */
export function num(v) {
  if (isNegInf(v)) return '−∞';
  if (typeof v !== 'number') return String(v);
  const s = v.toFixed(4);
  return s === '-0.0000' ? '0.0000' : s;
}

function table(rows, head, cls) {
  const t = el('table', cls);
  if (head) {
    const tr_ = el('tr'), thead = el('thead');
    for (const h of head) tr_.append(el('th', '', h));
    thead.append(tr_);
    t.append(thead);
  }
  const body = el('tbody');
  for (const r of rows) {
    const tr_ = el('tr');
    for (const c of r) tr_.append(el('td', '', c));
    body.append(tr_);
  }
  t.append(body);
  return t;
}

function matrixTable(m) {
  return table(m.map((row) => row.map(num)), null, 'apv-mat');
}

function labelled(text, input) {
  const l = el('label', 'apv-field');
  l.append(el('span', '', text), input);
  return l;
}

function numberInput(key, value) {
  const i = el('input');
  i.type = 'number';
  i.min = '1';
  i.max = '16';
  i.value = String(value);
  i.dataset.key = key;
  return i;
}

// The spec of the stepper's current matrices and options (its trace's inputs and options).
function stepperSpec(t) {
  if (!t) return null;
  const o = t.options;
  const spec = { ...t.inputs, n_head: o.n_head, causal: o.causal, mask: o.mask, base: o.base, scale: o.scale };
  for (const k of ['rope', 'rope_base', 'rope_dims', 'alibi', 'n_kv_head', 'window', 'sinks']) if (o[k] !== undefined) spec[k] = o[k];
  if (t.alibi) spec.alibi_slopes = t.alibi.slopes;
  return spec;
}

function flashPanel(ctl, getApi) {
  const state = { source: 'example', bq: 4, bk: 4, step: 0, lastTrace: null, flash: null, error: '' };
  const root = el('section', 'apv-panel apv-flash');
  root.dataset.panel = 'flash';
  const title = el('h2');
  const lede = el('p', 'apv-lede');
  const source = el('select');
  source.dataset.key = 'flash.source';
  const bq = numberInput('flash.block_q', state.bq);
  const bk = numberInput('flash.block_k', state.bk);
  const srcLabel = labelled('', source), bqLabel = labelled('', bq), bkLabel = labelled('', bk);
  const prev = el('button'), next = el('button');
  prev.type = next.type = 'button';
  prev.dataset.key = 'flash.prev';
  next.dataset.key = 'flash.next';
  const slider = el('input');
  slider.type = 'range';
  slider.min = '0';
  slider.dataset.key = 'flash.step';
  const stepLine = el('p', 'apv-step');
  stepLine.setAttribute('aria-live', 'polite');
  const mapCaption = el('p', 'apv-caption');
  const map = el('div', 'apv-map');
  const rows = el('div', 'apv-rows');
  const diff = el('p', 'apv-diff');
  const controls = el('div', 'apv-controls');
  controls.append(srcLabel, bqLabel, bkLabel);
  const nav = el('div', 'apv-nav');
  nav.append(prev, slider, next);
  root.append(title, lede, controls, nav, stepLine, mapCaption, map, rows, diff);

  async function recompute() {
    const api = await getApi();
    const base = state.source === 'stepper' ? stepperSpec(state.lastTrace) : FLASH_EXAMPLE;
    try {
      const t = api.trace({ ...base, flash_block_q: state.bq, flash_block_k: state.bk });
      state.flash = t.flash;
      state.masked = t.heads.map((h) => h.masked);
      state.error = '';
    } catch (e) {
      state.flash = null;
      state.error = e.message;
    }
    state.step = Math.min(state.step, state.flash ? state.flash.steps.length - 1 : 0);
    render();
  }

  function render() {
    const lang = ctl.getState().lang;
    const t = (k, v) => tr(lang, k, v);
    setText(title, t('flash.title'));
    setText(lede, t('flash.lede'));
    srcLabel.firstChild.textContent = t('flash.source');
    bqLabel.firstChild.textContent = t('flash.block_q');
    bkLabel.firstChild.textContent = t('flash.block_k');
    source.replaceChildren(...['example', 'stepper'].map((v) => {
      const o = el('option', '', t(`flash.source.${v}`));
      o.value = v;
      o.selected = state.source === v;
      return o;
    }));
    slider.setAttribute('aria-label', t('flash.slider'));
    setText(prev, t('flash.prev'));
    setText(next, t('flash.next'));
    const f = state.flash;
    root.dataset.status = f ? 'ready' : 'error';
    if (!f) {
      setText(stepLine, state.error ? t('flash.error', { message: state.error }) : '');
      map.replaceChildren();
      rows.replaceChildren();
      setText(diff, '');
      return;
    }
    const s = f.steps[state.step];
    slider.max = String(f.steps.length - 1);
    slider.value = String(state.step);
    prev.disabled = state.step === 0;
    next.disabled = state.step === f.steps.length - 1;
    setText(stepLine, t('flash.step', {
      s: state.step + 1, n: f.steps.length, h: s.head + 1, qb: s.q_block + 1, r0: s.r0 + 1, r1: s.r0 + s.rows,
      kb: s.k_block + 1, c0: s.c0 + 1, c1: s.c0 + s.cols,
    }));
    renderMap(f, s, t);
    const before = s.k_block === 0 ? null : f.steps[state.step - 1];
    const body = [];
    for (let r = 0; r < s.rows; r++) {
      const mOld = before ? before.m[r] : -Infinity;
      const a = s.alpha[r];
      const what = isNegInf(s.m[r]) ? 'none' : isNegInf(mOld) ? 'first' : a < 1 ? 'rescale' : 'same';
      body.push([String(s.r0 + r + 1), num(mOld), num(s.m[r]), num(a), num(s.l[r]), s.o[r].map(num).join('  '),
        t(`flash.what.${what}`)]);
    }
    const tab = table(body, ['row', 'm_old', 'm_new', 'alpha', 'l', 'o', 'what'].map((k) => t(`flash.col.${k}`)), 'apv-steps');
    tab.querySelectorAll('tbody tr').forEach((rowEl, r) => {
      const a = s.alpha[r];
      if (typeof a === 'number' && a > 0 && a < 1) rowEl.classList.add('is-rescale');
    });
    rows.replaceChildren(...(s.skipped ? [el('p', 'apv-skipped', t('flash.skipped'))] : []), tab);
    setText(diff, t('flash.diff', { d: f.max_abs_diff.context.toExponential(2), b: f.bound.context.toExponential(2),
      d2: f.max_abs_diff.out.toExponential(2), b2: f.bound.out.toExponential(2) }));
  }

  // The head's masked scores as a grid of tiles: the current tile outlined, skipped ones grey.
  function renderMap(f, s, t) {
    setText(mapCaption, t('flash.map', { h: s.head + 1 }));
    const m = state.masked[s.head];
    const skipped = new Set(f.steps.filter((x) => x.head === s.head && x.skipped).map((x) => `${x.q_block},${x.k_block}`));
    const grid = el('table', 'apv-tiles');
    m.forEach((row, i) => {
      const tr_ = el('tr');
      row.forEach((v, j) => {
        const td = el('td', '', isNegInf(v) ? '−∞' : '');
        const qb = Math.floor(i / f.block_q), kb = Math.floor(j / f.block_k);
        if (skipped.has(`${qb},${kb}`)) td.classList.add('is-skipped');
        if (qb === s.q_block && kb === s.k_block) td.classList.add('is-current');
        if (j % f.block_k === 0) td.classList.add('tile-left');
        if (i % f.block_q === 0) td.classList.add('tile-top');
        td.title = `${i + 1}, ${j + 1}: ${num(v)}`;
        tr_.append(td);
      });
      grid.append(tr_);
    });
    map.replaceChildren(grid);
  }

  source.addEventListener('change', () => {
    state.source = source.value;
    state.step = 0;
    // The stepper's first trace came before these panels listened: redrawing it with its own state
    // (no change, no undo entry) sends it again, and onTrace recomputes.
    if (state.source === 'stepper' && !state.lastTrace) ctl.setState(ctl.getState());
    else recompute();
  });
  for (const [input, key] of [[bq, 'bq'], [bk, 'bk']])
    input.addEventListener('input', () => {
      const v = Math.round(Number(input.value));
      if (v >= 1 && v <= 16) { state[key] = v; state.step = 0; recompute(); }
    });
  prev.addEventListener('click', () => { state.step = Math.max(0, state.step - 1); render(); });
  next.addEventListener('click', () => { state.step = Math.min(state.flash.steps.length - 1, state.step + 1); render(); });
  slider.addEventListener('input', () => { state.step = Number(slider.value); render(); });
  return {
    root, render, recompute,
    onTrace(t) { state.lastTrace = t; if (state.source === 'stepper') recompute(); },
  };
}

function mlaPanel(ctl, getApi) {
  const root = el('section', 'apv-panel apv-mla');
  root.dataset.panel = 'mla';
  let trace = null, head = 0;
  async function recompute() {
    trace = (await getApi()).trace(MLA_EXAMPLE);
    render();
  }
  function render() {
    if (!trace) return;
    const lang = ctl.getState().lang;
    const t = (k, v) => tr(lang, k, v);
    const m = trace.mla;
    const heads = el('div', 'apv-controls');
    for (let h = 0; h < trace.n_head; h++) {
      const b = el('button', '', `${t('mla.head')} ${h + 1}`);
      b.type = 'button';
      b.dataset.key = `mla.head.${h}`;
      b.setAttribute('aria-pressed', String(h === head));
      b.addEventListener('click', () => { head = h; render(); });
      heads.append(b);
    }
    const side = el('div', 'apv-side');
    const plain = el('figure'), absorbed = el('figure');
    plain.dataset.form = 'plain';
    absorbed.dataset.form = 'absorbed';
    plain.append(el('figcaption', '', t('mla.plain', { h: head + 1 })), matrixTable(trace.heads[head].scores));
    absorbed.append(el('figcaption', '', t('mla.absorbed', { h: head + 1 })), matrixTable(m.heads[head].scores_absorbed));
    side.append(plain, absorbed);
    const latent = el('figure');
    latent.dataset.form = 'latent';
    latent.append(el('figcaption', '', t('mla.latent', { t: trace.T_total, dc: m.d_c })), matrixTable(m.c));
    root.dataset.status = 'ready';
    root.replaceChildren(el('h2', '', t('mla.title')), el('p', 'apv-lede', t('mla.lede')), latent,
      el('p', 'apv-cache', t('mla.cache', { mla: m.cache_floats, mha: m.cache_floats_mha })), heads, side,
      el('p', 'apv-diff', t('mla.diff', { s: m.max_abs_diff.scores.toExponential(2), c: m.max_abs_diff.context.toExponential(2) })));
  }
  return { root, render, recompute };
}

/**
 * Mounts the two panels after `host`'s content (the page's #app): they follow the stepper's
 * language, and the tiles can take its matrices. The core is loaded on the first opening.
 */
export function mountVariantPanels(ctl, host) {
  const href = new URL('./panels-flash.css', import.meta.url).href;
  if (![...document.head.querySelectorAll('link[rel="stylesheet"]')].some((l) => l.href === href)) {
    const link = el('link');
    link.rel = 'stylesheet';
    link.href = href;
    document.head.append(link);
  }
  let api = null;
  const getApi = async () => (api ??= await loadAttention());
  // A region of its own after the stepper (which redraws everything inside host), named by its summary.
  const region = el('section', 'apv-region');
  const details = el('details', 'apv');
  details.dataset.key = 'variants';
  const summary = el('summary');
  summary.id = 'apv-summary';
  region.setAttribute('aria-labelledby', summary.id);
  const flash = flashPanel(ctl, getApi), mla = mlaPanel(ctl, getApi);
  details.append(summary, flash.root, mla.root);
  region.append(details);
  host.after(region);
  const label = () => {
    const lang = ctl.getState().lang;
    region.lang = lang === 'zh' ? 'zh-CN' : 'en';
    setText(summary, `${tr(lang, 'flash.title')} · ${tr(lang, 'mla.title')}`);
  };
  label();
  let opened = false;
  details.addEventListener('toggle', () => {
    if (!details.open || opened) return;
    opened = true;
    flash.recompute();
    mla.recompute();
  });
  ctl.on('change', () => { label(); if (opened) { flash.render(); mla.render(); } });
  ctl.on('trace', (t) => flash.onTrace(t));
  return region;
}
