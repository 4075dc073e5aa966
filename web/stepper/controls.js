// controls.js — what the learner sets in a stepper: the toolbar (example, input mode, direction,
// view, exercise, and the language in embed mode), the language switch, the input column (the
// upstream gradient of the backward pass, the options box, the matrix grids) and what each control
// does to the state: a new example, a random fill, a bias turned on.
//
// Every function takes the stepper's context (context.js). A control that changes what the page
// shows rebuilds it (rebuild: ctx.render), one that changes the numbers computes again
// (recompute, or ctx.schedule for typing), and every user change emits 'change'.
import { el, segGroup, langSwitch } from '../common/ui.js';
import { MAX_DIM, MAX_HEADS, BIAS_OF, VARIANTS_OFF } from '../common/state.js';
import { createI18n, storeLang } from './i18n.js';
import { MatrixEditor, textToCells } from './grid.js';
import { cellText, formatNumber } from '../common/format.js';
import { PRESETS, presetPatch } from '../common/presets.js';
import { EXERCISE_IDS } from '../common/exercise.js';
import { STEPS, BIASES, UPSTREAM_EDITOR, rebuild, recompute, userChange, activeInputs, isBackward, tokenRowLabel } from './context.js';
import { layoutSteps } from './pipeline.js';
import { chooseExercise } from './exercise-bar.js';

/** The shape of each input grid, shown beside its name. */
const DIMS = {
  x: 'T_total × d_model', W_q: 'd_model × n_head·d_k', W_k: 'd_model × n_head·d_k', W_v: 'd_model × n_head·d_v',
  W_o: 'n_head·d_v × d_out', Q: 'T × n_head·d_k', K: 'T_total × n_head·d_k', V: 'T_total × n_head·d_v',
  b_q: 'n_head·d_k', b_k: 'n_head·d_k', b_v: 'n_head·d_v', b_o: 'd_out',
  W_dkv: 'd_model × d_c', W_uk: 'd_c × n_head·d_nope', W_uv: 'd_c × n_head·d_v', W_kr: 'd_model × d_rope', W_qr: 'd_model × n_head·d_rope',
};

/** A pick that rebuilds the page when it changes the value: get(state) reads it, set(state, v) writes it. */
const rebuildOnPick = (ctx, get, set) => (v) => { if (v !== get(ctx.state)) rebuild(ctx, (s) => set(s, v)); };

/** The language switch (the header's, or the toolbar's in embed mode). */
export function languageSwitch(ctx) {
  return langSwitch({ lang: ctx.state.lang, label: ctx.t('lang.label'), onPick: (code) => setLang(ctx, code) });
}

function setLang(ctx, code) {
  if (code === ctx.state.lang) return;
  ctx.state.lang = code;
  storeLang(code);
  ctx.i18n = createI18n(code);
  ctx.render();
  userChange(ctx);
}

/** A tool of the toolbar: its label and a control. */
function tool(label, control) {
  const w = el('div', 'aps-tool');
  w.append(label, control);
  return w;
}

/** A tool with a segmented group of choices. */
function segTool(ctx, key, labelKey, items, value, onPick) {
  const label = ctx.t(labelKey);
  return tool(el('span', 'aps-label', label), segGroup({ label, key, items, value, onPick }));
}

/** A tool with a select: its label (for=), the options [value, text], the current value. */
function selectTool(ctx, key, labelKey, options, value, onChange) {
  const sel = el('select', 'aps-select');
  sel.dataset.key = key;
  sel.id = `${ctx.id}${key}`;
  for (const [v, text] of options) sel.append(new Option(text, v));
  sel.value = value;
  sel.addEventListener('change', () => onChange(sel.value));
  const label = el('label', 'aps-label', ctx.t(labelKey));
  label.htmlFor = sel.id;
  return { sel, tool: tool(label, sel) };
}

export function toolbar(ctx) {
  const { t, state } = ctx;
  const bar = el('div', 'aps-toolbar');
  // the example
  const src = state.source;
  const custom = src ? t('source.option', { l: src.layer + 1, h: src.head + 1 }) : t('preset.custom.title');
  const preset = selectTool(ctx, 'preset', 'ui.preset', [...PRESETS.map((p) => [p, t(`preset.${p}.title`)]), ['custom', custom]],
    state.preset, (v) => applyPreset(ctx, v));
  preset.sel.setAttribute('aria-describedby', `${ctx.id}preset-note`);
  ctx.dom.presetSelect = preset.sel;
  bar.append(preset.tool);
  bar.append(segTool(ctx, 'mode', 'ui.mode', [['x', t('mode.x')], ['qkv', t('mode.qkv')]], state.mode,
    rebuildOnPick(ctx, (s) => s.mode, (s, v) => { s.mode = v; s.preset = 'custom'; })));
  // the forward pass or the backward pass
  bar.append(segTool(ctx, 'direction', 'ui.direction', [['forward', t('dir.forward')], ['backward', t('dir.backward')]], state.direction,
    rebuildOnPick(ctx, (s) => s.direction, (s, v) => { s.direction = v; s.step = 0; s.focus = null; })));
  bar.append(segTool(ctx, 'view', 'ui.view', [['all', t('view.all')], ['step', t('view.step')]], state.view, (v) => {
    if (v === ctx.state.view) return;
    ctx.state.view = v;
    layoutSteps(ctx);
    userChange(ctx);
  }));
  // the exercise: none, a ready-made one, or your own (pick cells)
  const x = state.exercise;
  const exercise = selectTool(ctx, 'exercise', 'ui.exercise',
    [['', t('exercise.none')], ...EXERCISE_IDS.map((id) => [id, t(`exercise.${id}.title`)]), ['custom', t('exercise.custom.option')]],
    x ? (EXERCISE_IDS.includes(x.id) ? x.id : 'custom') : '', (v) => chooseExercise(ctx, v));
  bar.append(exercise.tool);
  if (ctx.embed) bar.append(languageSwitch(ctx));
  return bar;
}

function applyPreset(ctx, p) {
  const patch = presetPatch(p, ctx.api);
  ctx.authoring = false;
  rebuild(ctx, (s) => {
    s.preset = p;
    s.exercise = null; // another example: the exercise was about the old one
    if (!patch) return;
    s.source = null; // its matrices are no longer the model's
    s.mode = patch.mode;
    s.matrices = { ...s.matrices, ...patch.matrices };
    s.use_W_o = patch.use_W_o;
    s.use_bias = patch.use_bias ?? false;
    s.options = { ...patch.options };
    s.variants = { ...patch.variants };
    s.head = 0;
    s.step = Math.min(s.step, STEPS.length - 1);
    s.focus = null;
    // a new example has new shapes: dOut and the target start again from out's shape
    s.upstream = { ...s.upstream, d_out: '', target: '' };
    for (const k of Object.keys(ctx.optErrors)) delete ctx.optErrors[k];
  });
}

const PROMPT_SHOWN = 160; // characters of a prompt shown in the source line

/**
 * Where the matrices came from (state.source): "Layer 2, head 3 of <model> on “<prompt>”", and
 * the link back to the page that opened it.
 */
export function sourceLine(ctx) {
  const { t } = ctx;
  const src = ctx.state.source;
  const line = el('p', 'aps-source');
  const cut = src.prompt.length > PROMPT_SHOWN ? `${src.prompt.slice(0, PROMPT_SHOWN)}…` : src.prompt;
  const words = { l: src.layer + 1, h: src.head + 1, model: src.model, prompt: cut.replace(/\n/g, '↵') };
  line.append(el('span', 'aps-source-text', t(src.model ? 'source.line' : 'source.lineNoModel', words)));
  if (src.back) {
    const a = el('a', 'aps-source-back', t('source.back'));
    a.href = new URL(src.back, location.href).href;
    line.append(' ', a);
  }
  return line;
}

/** The example's explanation under the toolbar. */
export function updatePresetNote(ctx) {
  ctx.dom.presetNote.textContent = ctx.t(`preset.${ctx.state.preset}.text`);
}

/**
 * The rows' labels of an input grid whose rows are the tokens of a prompt (state.source): x, K and
 * V have a row per token, Q a row per query (the tokens from base on); null for the others.
 */
function tokenRows(ctx, name) {
  const tokens = ctx.state.source?.tokens;
  if (!tokens?.length || !['x', 'Q', 'K', 'V'].includes(name)) return null;
  const from = name === 'Q' ? ctx.state.options.base : 0;
  return (i) => (from + i < tokens.length ? tokenRowLabel(from + i, tokens[from + i]) : null);
}

/**
 * An input grid, in ctx.editors. store(text): keeps the typed text in the state, false when it is
 * the same; a change is computed at the next frame (schedule) and emits 'change'.
 */
function matrixEditor(ctx, name, hint, text, vector, store) {
  const ed = new MatrixEditor({
    name, hint, text, t: ctx.t, api: ctx.api, idPrefix: ctx.id, maxDim: MAX_DIM, vector, rowLabel: tokenRows(ctx, name),
    onChange: (typed, typing) => {
      if (store(typed) === false) return;
      ctx.schedule();
      userChange(ctx, typing ? `${name}:${typing}` : null);
    },
  });
  ctx.editors.set(name, ed);
  return ed;
}

export function inputColumn(ctx) {
  const { t } = ctx;
  const col = el('section', 'aps-inputs');
  col.setAttribute('aria-label', t('ui.inputs'));
  col.append(el('h2', 'aps-h2', t('ui.inputs')));
  if (isBackward(ctx)) col.append(upstreamBox(ctx));
  col.append(optionsBox(ctx));
  const eds = el('div', 'aps-editors');
  for (const name of activeInputs(ctx)) {
    const ed = matrixEditor(ctx, name, DIMS[name], ctx.state.matrices[name], BIASES.includes(name), (text) => {
      const s = ctx.state;
      if (s.matrices[name] === text) return false;
      s.matrices[name] = text;
      if (s.preset !== 'custom') { s.preset = 'custom'; ctx.dom.presetSelect.value = 'custom'; updatePresetNote(ctx); }
      return true;
    });
    eds.append(ed.el);
  }
  col.append(eds);
  return col;
}

// the upstream gradient ∂L/∂out of the backward pass: a loss, or dOut typed in a grid
function upstreamBox(ctx) {
  const { t, dom } = ctx;
  const box = el('fieldset', 'aps-options aps-upstream');
  box.dataset.field = 'loss';
  box.append(el('legend', 'aps-legend', t('up.title')));
  const u = ctx.state.upstream;
  const seg = segGroup({ label: t('up.title'), key: 'upstream', items: [['sum', t('up.sum')], ['mse', t('up.mse')], ['d_out', t('up.d_out')]], value: u.kind,
    onPick: rebuildOnPick(ctx, (s) => s.upstream.kind, (s, v) => { s.upstream.kind = v; s.focus = null; }) });
  box.append(seg, el('p', 'aps-hint', t(`up.${u.kind}.hint`)));
  dom.upstreamError = el('p', 'aps-field-error');
  dom.upstreamError.id = `${ctx.id}err-loss`;
  dom.upstreamError.setAttribute('aria-live', 'polite');
  box.append(dom.upstreamError);
  const name = UPSTREAM_EDITOR[u.kind];
  if (name) {
    const ed = matrixEditor(ctx, name, 'T × d_out', u[name], undefined, (text) => {
      if (ctx.state.upstream[name] === text) return false;
      ctx.state.upstream[name] = text;
      return true;
    });
    const reset = el('button', 'aps-btn aps-btn-small', t(`up.reset.${name}`));
    reset.type = 'button';
    reset.dataset.key = `${name}.reset`;
    reset.addEventListener('click', () => recompute(ctx, (s) => { s.upstream[name] = ''; })); // compute fills it to out's shape
    box.append(ed.el, reset);
  }
  return box;
}

/** An option with its label and an error slot (ids: PREFIX opt-KEY, PREFIX opt-err-KEY). */
function field(ctx, labelText, control, key) {
  const wrap = el('div', 'aps-field');
  wrap.dataset.field = key;
  const lab = el('label', 'aps-label', labelText);
  control.id = `${ctx.id}opt-${key}`;
  lab.htmlFor = control.id;
  const err = el('span', 'aps-field-error');
  err.id = `${ctx.id}opt-err-${key}`;
  err.setAttribute('aria-live', 'polite');
  control.setAttribute('aria-describedby', err.id);
  wrap.append(lab, control, err);
  return wrap;
}

/** An integer option in [min, max]: a bad value is an error (ctx.optErrors) until it is fixed. */
function intInput(ctx, key, value, min, max) {
  const inp = el('input', 'aps-num');
  inp.type = 'number';
  inp.min = min;
  inp.max = max;
  inp.step = 1;
  inp.value = value;
  inp.dataset.key = key;
  inp.inputMode = 'numeric';
  inp.addEventListener('input', () => {
    const v = inp.value.trim() === '' ? NaN : Number(inp.value);
    if (!Number.isInteger(v) || v < min || v > max) {
      ctx.optErrors[key] = ctx.t('err.int', { name: key, min, max });
    } else {
      delete ctx.optErrors[key];
      if (key === 'seed') ctx.state.seed = v; else if (key in VARIANTS_OFF) ctx.state.variants[key] = v; else ctx.state.options[key] = v;
    }
    ctx.schedule();
    userChange(ctx, `option:${key}`);
  });
  return inp;
}

/** A checkbox option: div.aps-field-check (data-field when given) › label › checkbox + text. */
function checkField(key, checked, text, onChange, fieldKey) {
  const c = el('input', 'aps-check');
  c.type = 'checkbox';
  c.checked = checked;
  c.dataset.key = key;
  c.addEventListener('change', () => onChange(c.checked));
  const w = el('div', 'aps-field aps-field-check');
  if (fieldKey) w.dataset.field = fieldKey;
  const l = el('label', 'aps-check-label');
  l.append(c, el('span', '', text));
  w.append(l);
  return w;
}

/** A segmented option: div.aps-field (data-field) › its label, the group, and what follows. */
function segField(ctx, cls, key, labelKey, items, value, ...after) {
  const label = ctx.t(labelKey);
  const w = el('div', cls);
  w.dataset.field = key;
  w.append(el('span', 'aps-label', label), segGroup({ label, key, items, value, onPick: (v) => recompute(ctx, (s) => { s.options[key] = v; }) }), ...after);
  return w;
}

function optionsBox(ctx) {
  const { t, state } = ctx;
  const box = el('fieldset', 'aps-options');
  box.append(el('legend', 'aps-legend', t('ui.options')));
  const o = state.options;
  const row1 = el('div', 'aps-opt-row');
  row1.append(field(ctx, t('opt.n_head'), intInput(ctx, 'n_head', o.n_head, 1, MAX_HEADS), 'n_head'));
  row1.append(field(ctx, t('opt.base'), intInput(ctx, 'base', o.base, 0, MAX_DIM - 1), 'base'));
  box.append(row1);
  box.append(checkField('causal', o.causal, t('opt.causal'), (v) => recompute(ctx, (s) => {
    s.options.causal = v;
    ctx.dom.maskGroup.classList.toggle('is-off', !v);
  }), 'causal'));
  const mask = segField(ctx, 'aps-field aps-subfield', 'mask', 'opt.mask', [['strict', 'j > i + base'], ['inclusive', 'j ≥ i + base']], o.mask,
    el('span', 'aps-hint', t('opt.maskHint')), el('span', 'aps-hint aps-off-note', t('opt.maskOff')));
  mask.classList.toggle('is-off', !o.causal);
  ctx.dom.maskGroup = mask;
  box.append(mask);
  box.append(checkField('scale', o.scale, t('opt.scale'), (v) => recompute(ctx, (s) => { s.options.scale = v; }), 'scale'));
  box.append(segField(ctx, 'aps-field', 'softmax', 'opt.softmax', [['stable', t('opt.stable')], ['naive', t('opt.naive')]], o.softmax));
  box.append(variantsBox(ctx));
  box.append(checkField('use_W_o', state.use_W_o, t('opt.useWo'), (v) => rebuild(ctx, (s) => { s.use_W_o = v; s.preset = 'custom'; })));
  box.append(checkField('use_bias', state.use_bias, t(state.mode === 'x' ? 'opt.useBias' : 'opt.useBiasQkv'),
    (v) => rebuild(ctx, (s) => { s.use_bias = v; s.preset = 'custom'; }), 'use_bias'));

  const rw = el('div', 'aps-opt-row aps-random');
  rw.append(field(ctx, t('opt.seed'), intInput(ctx, 'seed', state.seed, 0, Number.MAX_SAFE_INTEGER), 'seed'));
  const rb = el('button', 'aps-btn', t('opt.random'));
  rb.type = 'button';
  rb.dataset.key = 'random';
  rb.addEventListener('click', () => randomFill(ctx));
  rw.append(rb);
  box.append(rw, el('p', 'aps-hint', t(state.mode === 'x' ? 'opt.randomHintX' : 'opt.randomHintQkv')));
  return box;
}

/** A number option > min (rope_base): a bad value is an error (ctx.optErrors) until it is fixed. */
function numInput(ctx, key, value, min, max) {
  const inp = el('input', 'aps-num');
  inp.type = 'number';
  inp.step = 'any';
  inp.value = value;
  inp.dataset.key = key;
  inp.inputMode = 'decimal';
  inp.addEventListener('input', () => {
    const v = inp.value.trim() === '' ? NaN : Number(inp.value);
    if (!Number.isFinite(v) || v <= min || v > max) ctx.optErrors[key] = ctx.t('err.range', { name: key, min, max });
    else { delete ctx.optErrors[key]; ctx.state.variants[key] = v; }
    ctx.schedule();
    userChange(ctx, `option:${key}`);
  });
  return inp;
}

/**
 * The modern variants (each off by default): RoPE (pairing, θ's base, rotated dimensions), ALiBi,
 * grouped-query attention (n_kv_head), the sliding window with its sinks (with causal),
 * FlashAttention's tiles (block sizes) and multi-head latent attention (x mode).
 */
function variantsBox(ctx) {
  const { t, state } = ctx;
  const o = state.variants;
  const box = el('fieldset', 'aps-options aps-variants');
  box.append(el('legend', 'aps-legend', t('var.title')));
  const rope = el('div', 'aps-opt-row aps-subfield');
  const pick = el('div', 'aps-field');
  pick.dataset.field = 'rope';
  pick.append(el('span', 'aps-label', t('var.rope')), segGroup({ label: t('var.rope'), key: 'rope', value: o.rope,
    items: [['none', t('var.off')], ['interleaved', t('var.interleaved')], ['halves', t('var.halves')]],
    onPick: rebuildOnPick(ctx, (s) => s.variants.rope, (s, v) => { s.variants.rope = v; }) })); // the backward's steps change
  box.append(pick);
  rope.classList.toggle('is-off', o.rope === 'none');
  rope.append(field(ctx, t('var.rope_base'), numInput(ctx, 'rope_base', o.rope_base, 1, 1e9), 'rope_base'));
  rope.append(field(ctx, t('var.rope_dims'), intInput(ctx, 'rope_dims', o.rope_dims, 0, MAX_DIM), 'rope_dims'));
  box.append(rope);
  const alibi = checkField('alibi', o.alibi, t('var.alibi'), (v) => recompute(ctx, (s) => { s.variants.alibi = v; }), 'alibi');
  // a GPT head's own slope (state.js variantSpec: used while n_head is 1)
  if (o.alibi_slope) alibi.append(el('span', 'aps-hint', t('var.alibiSlope', { m: formatNumber(o.alibi_slope) })));
  box.append(alibi);
  const row = el('div', 'aps-opt-row');
  row.append(field(ctx, t('var.n_kv_head'), intInput(ctx, 'n_kv_head', o.n_kv_head, 0, MAX_HEADS), 'n_kv_head'));
  row.append(field(ctx, t('var.window'), intInput(ctx, 'window', o.window, 0, MAX_DIM * 2), 'window'));
  row.append(field(ctx, t('var.sinks'), intInput(ctx, 'sinks', o.sinks, 0, MAX_DIM * 2), 'sinks'));
  const tiles = el('div', 'aps-opt-row');
  tiles.append(field(ctx, t('var.flash_block_q'), intInput(ctx, 'flash_block_q', o.flash_block_q, 0, MAX_DIM * 2), 'flash_block_q'));
  tiles.append(field(ctx, t('var.flash_block_k'), intInput(ctx, 'flash_block_k', o.flash_block_k, 0, MAX_DIM * 2), 'flash_block_k'));
  // latent attention reads other weights (W_dkv, W_uk, W_uv, …): the grids change, so the page is rebuilt
  const mla = checkField('mla', o.mla, t('var.mla'), (v) => rebuild(ctx, (s) => { s.variants.mla = v; s.preset = 'custom'; }), 'mla');
  if (state.mode !== 'x') mla.append(el('span', 'aps-hint', t('var.mlaX')));
  box.append(row, tiles, mla, el('p', 'aps-hint', t('var.hint')));
  return box;
}

/** A bias turned on with no text yet: zeros, as many as its weight matrix has columns. */
export function fillBiases(ctx) {
  const s = ctx.state;
  if (!s.use_bias) return;
  for (const [b, w] of Object.entries(BIAS_OF)) {
    if (s.matrices[b].trim() !== '') continue;
    const cols = Math.max(1, ...textToCells(s.matrices[w]).map((r) => r.length));
    s.matrices[b] = Array(cols).fill('0').join(' ');
  }
}

/** Seeded random weights (or Q, K, V) of the current shapes, bounded by 1/√d_k. */
function randomFill(ctx) {
  if (ctx.optErrors.seed) return;
  const { editors } = ctx;
  const s = ctx.state;
  const names = s.mode === 'x' ? ['W_q', 'W_k', 'W_v', ...(s.use_W_o ? ['W_o'] : [])] : ['Q', 'K', 'V', ...(s.use_W_o ? ['W_o'] : [])];
  const ref = editors.get(s.mode === 'x' ? 'W_q' : 'Q');
  const nh = s.options.n_head;
  const dk = ref.cols % nh === 0 ? ref.cols / nh : ref.cols;
  const bound = 1 / Math.sqrt(dk);
  rebuild(ctx, () => {
    names.forEach((name, k) => {
      const ed = editors.get(name);
      const m = ctx.api.randomMatrix(ed.rows, ed.cols, { seed: s.seed + k, bound });
      s.matrices[name] = m.map((r) => r.map((v) => cellText(Number(v.toFixed(3)))).join(' ')).join('\n');
    });
    s.preset = 'custom';
  });
}
