// stepper.js — THE ATTENTION STEPPER: type matrices, watch every step of attention with the
// arithmetic behind each number. Every number of attention shown comes from the C++ core's trace
// (web/attention.js → wasm); JS only formats it (and works out the displayed terms of a cell's
// explanation, plus the clearly labelled derived row statistics max and H of the softmax panel).
//
// ─── COMPONENT CONTRACT (for embedding and for <attention-stepper>) ───────────────────────────
//
//   import { mountStepper } from './stepper/stepper.js';
//   const ctl = await mountStepper(rootElement, {
//     state,        // optional: a state object (see state.js); junk is cleaned by validateState
//     embed,        // optional boolean: compact chrome (no header / footer)
//     lang,         // optional 'en' | 'zh' (default: state.lang, else localStorage
//                   //   'attention-playground.lang', else 'en')
//     attention,    // optional: an API already loaded with loadAttention() (shared by instances)
//   });
//   ctl.getState()        → a deep copy of the current state (plain JSON; see state.js)
//   ctl.setState(state)   → replaces the state (validated) and re-renders; emits no 'change'
//   ctl.on('change', fn)  → fn(state) after every user change (typing, options, steps, focus…)
//   ctl.on('trace', fn)   → fn(trace) after every new trace computed by the core
//                           (in backward mode, state.direction = 'backward', the trace part of
//                           api.backward's result: the forward values the gradients belong to)
//   ctl.on(...) returns an unsubscribe function
//   ctl.destroy()         → removes the DOM and listeners
//
// The component renders into `root` (light DOM). Its stylesheet is web/stepper/stepper.css, which
// mountStepper links once into the root's document or shadow root (CSP: style-src 'self'). No
// inline scripts, handlers or styles. Several instances may live on one page (ids are prefixed).
// ────────────────────────────────────────────────────────────────────────────────────────────
import { loadAttention, AttentionError } from '../attention.js';
import { defaultState, validateState, MATRIX_KEYS, MAX_DIM, MAX_HEADS, BIAS_OF } from './state.js';
import { createI18n, storedLang, storeLang } from './i18n.js';
import { MatrixEditor, textToCells } from './grid.js';
import { MatrixView, setText, visibilityObserver, pointerMoved } from './panels.js';
import { HeatmapView } from './heatmap.js';
import { explain } from './explain.js';
import { explainGrad } from './explain-grad.js';
import { formula, gradFormula } from './math.js';
import { mathLine, plainText } from './explain-math.js';
import { visibleBSteps, panelReads, stepReads, HEAD_GRAD_PANELS, INPUT_GRADS, gradCheckBox } from './backward.js';
import { formatNumber, cellText } from './format.js';
import { PRESETS, presetPatch } from './presets.js';
import { EXERCISE_IDS, withReadyExercise, askedCells, checkAnswer, parseAnswer, loadAnswers, saveAnswers, clearAnswers, customId, DEFAULT_TOL, validateTol } from './exercise.js';

export { defaultState, validateState };

const STEPS = [
  { id: 'qkv', panels: ['q', 'k', 'v'], from: [] },
  { id: 'scores', panels: ['scores'], from: ['q', 'k'] },
  { id: 'scaled', panels: ['scaled'], from: ['scores'] },
  { id: 'masked', panels: ['masked'], from: ['scaled'] },
  { id: 'softmax', panels: ['weights', 'weights-heads'], from: ['masked'] },
  { id: 'context', panels: ['context'], from: ['weights', 'v'] },
  { id: 'concat', panels: ['concat'], from: ['context'] },
  { id: 'out', panels: ['out'], from: ['concat'] },
];
const HEAD_PANELS = ['q', 'k', 'v', 'scores', 'scaled', 'masked', 'weights', 'context'];
const BIASES = Object.keys(BIAS_OF);
const DIMS = {
  x: 'T_total × d_model', W_q: 'd_model × n_head·d_k', W_k: 'd_model × n_head·d_k', W_v: 'd_model × n_head·d_v',
  W_o: 'n_head·d_v × d_out', Q: 'T × n_head·d_k', K: 'T_total × n_head·d_k', V: 'T_total × n_head·d_v',
  b_q: 'n_head·d_k', b_k: 'n_head·d_k', b_v: 'n_head·d_v', b_o: 'd_out',
};
const OPTION_FIELDS = ['n_head', 'causal', 'mask', 'base', 'scale', 'softmax', 'seed'];
const UPSTREAM_EDITOR = { d_out: 'd_out', mse: 'target' };
/** Past this many tokens (T or T_total) the steps show heatmaps only, unless asked for numbers. */
export const LARGE_T = 32;

let instanceCount = 0;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Shows or hides an element, writing the attribute only when it changes. */
function hide(e, hidden) {
  if (e.hidden !== hidden) e.hidden = hidden;
}

/** A panel note: its text, hidden when empty (written only when it changes). */
function setNote(e, text) {
  setText(e, text);
  hide(e, !text);
}

function ensureStylesheet(root) {
  const host = root.getRootNode();
  const href = new URL('./stepper.css', import.meta.url).href;
  const scope = host instanceof ShadowRoot ? host : document.head;
  if ([...scope.querySelectorAll('link[rel="stylesheet"]')].some((l) => l.href === href)) return;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = href;
  scope.append(link);
}

const entropyBits = (row) => {
  if (row.some((v) => Number.isNaN(v))) return NaN;
  let h = 0;
  for (const w of row) if (w > 0) h -= w * Math.log2(w);
  return h;
};

/** Mounts the stepper into root; see the contract above. */
export async function mountStepper(root, options = {}) {
  const api = options.attention ?? await loadAttention();
  ensureStylesheet(root);
  const id = `aps${++instanceCount}-`;
  const embed = !!options.embed;
  let state = validateState(options.state ?? defaultState());
  const explicitLang = options.lang === 'en' || options.lang === 'zh' ? options.lang : null;
  state.lang = explicitLang ?? (options.state && ['en', 'zh'].includes(options.state.lang) ? options.state.lang : storedLang() ?? 'en');
  let i18n = createI18n(state.lang);
  const listeners = { change: new Set(), trace: new Set(), exercise: new Set() };
  const emit = (ev, arg) => { for (const fn of listeners[ev]) { try { fn(arg); } catch (e) { setTimeout(() => { throw e; }); } } };

  // DOM references, rebuilt by render()
  let editors = new Map();
  let views = new Map();
  let dom = {};
  let trace = null;
  let bw = null; // the backward result {trace, loss, grads} in backward mode
  let gc = { key: '', result: null, pick: null, eps: 0.01 }; // the gradient check (kept while the spec is the same)
  let hover = null;
  const optErrors = {};
  let raf = 0;
  let pendingCompute = false;
  let destroyed = false;
  const visObs = visibilityObserver(); // panels are painted only near the screen (panels.js)
  // the exercise mode: authoring (choosing cells, page-local) and the learner's work on the
  // current exercise (answers, hint levels, results; kept in localStorage per exercise id)
  let authoring = false;
  let ex = null;
  let shown = {}; // panel → the matrix it shows now (the values the answers are checked against)

  const t = (k, p) => i18n.t(k, p);
  const userChange = () => emit('change', getState());
  const getState = () => JSON.parse(JSON.stringify(state));
  /** The inputs in use, each bias after its weights: x, W_q, b_q, W_k, b_k, …, W_o, b_o. */
  const activeInputs = () => {
    const b = (name) => (state.use_bias ? [name] : []);
    const names = state.mode === 'x' ? ['x', 'W_q', ...b('b_q'), 'W_k', ...b('b_k'), 'W_v', ...b('b_v')] : ['Q', 'K', 'V'];
    if (state.use_W_o) names.push('W_o', ...b('b_o'));
    return names;
  };
  const backward = () => state.direction === 'backward';
  const bias = () => activeInputs().filter((n) => BIASES.includes(n));
  const visibleSteps = () => (backward() ? visibleBSteps(state.mode, state.use_W_o, bias()) : STEPS.filter((s) => s.id !== 'out' || state.use_W_o));
  const readCtx = () => ({ upstream: state.upstream.kind, useWo: state.use_W_o });
  /** Large input: the tokens, when past LARGE_T (else 0). */
  const largeT = () => (trace ? Math.max(trace.T, trace.T_total) : 0);
  /** The steps show heatmaps only: asked for, or a large input that did not ask for numbers. */
  const heatOnly = () => state.display === 'heatmap' || (state.display === 'auto' && largeT() > LARGE_T);
  /**
   * In heatmaps-only mode, which panels lose their numbers: all when asked for; for a large input
   * the wide or big ones (T × T_total, …), while a tall narrow one (40 × 2 queries) keeps them.
   */
  const heatPanel = (m) => state.display === 'heatmap' || (m[0]?.length ?? 0) > LARGE_T || m.length * (m[0]?.length ?? 0) > 512;
  /** Every head's weights side by side (only with several heads). */
  const headsSide = () => state.head_view === 'side' && !!trace && trace.n_head > 1;

  root.classList.add('aps-root');

  // ───────────────────────────── building the DOM ─────────────────────────────
  function render() {
    fillBiases();
    const activeKey = document.activeElement && root.contains(document.activeElement) ? document.activeElement.dataset.key : null;
    root.replaceChildren();
    root.lang = state.lang === 'zh' ? 'zh-CN' : 'en';
    root.classList.toggle('aps-embed', embed);
    editors = new Map();
    for (const v of views.values()) { v.view.destroy(); v.stats?.destroy(); v.numbersView?.destroy(); v.heatView?.destroy(); }
    views = new Map();
    dom = {};
    hover = null;

    const app = el('div', 'aps');
    if (!embed) {
      const header = el('header', 'aps-header');
      const titles = el('div', 'aps-titles');
      titles.append(el('h1', 'aps-title', t('app.title')), el('p', 'aps-lede', t('app.lede')));
      header.append(titles, langSwitch());
      app.append(header);
    }
    app.append(toolbar());
    dom.presetNote = el('p', 'aps-preset-note');
    dom.presetNote.id = `${id}preset-note`;
    app.append(dom.presetNote);
    exerciseData();
    if (state.exercise) { dom.presetNote.hidden = true; app.append(exerciseBar()); }
    root.classList.toggle('aps-authoring', !!state.exercise && authoring);

    const layout = el('div', 'aps-layout');
    layout.append(inputColumn(), pipelineColumn());
    dom.layout = layout;
    placeExplain();
    app.append(layout);
    if (!embed) {
      const footer = el('footer', 'aps-footer');
      footer.append(el('p', '', t('app.footer')));
      app.append(footer);
    }
    root.append(app);
    updatePresetNote();
    compute();
    if (activeKey) root.querySelector(`[data-key="${CSS.escape(activeKey)}"]`)?.focus();
  }

  function langSwitch() {
    const g = el('div', 'aps-lang');
    g.setAttribute('role', 'group');
    g.setAttribute('aria-label', t('lang.label'));
    for (const [code, label] of [['en', 'English'], ['zh', '中文']]) {
      const b = el('button', 'aps-seg', label);
      b.type = 'button';
      b.lang = code === 'zh' ? 'zh-CN' : 'en';
      b.dataset.key = `lang.${code}`;
      b.setAttribute('aria-pressed', String(state.lang === code));
      b.addEventListener('click', () => setLang(code));
      g.append(b);
    }
    return g;
  }

  function setLang(code) {
    if (code === state.lang) return;
    state.lang = code;
    storeLang(code);
    i18n = createI18n(code);
    render();
    userChange();
  }

  function segGroup(label, key, items, value, onPick) {
    const g = el('div', 'aps-segs');
    g.setAttribute('role', 'radiogroup');
    g.setAttribute('aria-label', label);
    const buttons = items.map(([v, text]) => {
      const b = el('button', 'aps-seg', text);
      b.type = 'button';
      b.setAttribute('role', 'radio');
      b.setAttribute('aria-checked', String(v === value));
      b.tabIndex = v === value ? 0 : -1;
      b.dataset.key = `${key}.${v}`;
      b.dataset.value = v;
      b.addEventListener('click', () => onPick(v));
      g.append(b);
      return b;
    });
    g.addEventListener('keydown', (e) => {
      const k = e.key;
      if (!['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown'].includes(k)) return;
      e.preventDefault();
      e.stopPropagation();
      const i = buttons.indexOf(document.activeElement);
      const n = buttons[(i + (k === 'ArrowLeft' || k === 'ArrowUp' ? -1 : 1) + buttons.length) % buttons.length];
      n.focus();
      n.click();
    });
    return g;
  }

  function field(labelText, control, key) {
    const wrap = el('div', 'aps-field');
    wrap.dataset.field = key;
    const lab = el('label', 'aps-label', labelText);
    control.id = `${id}opt-${key}`;
    lab.htmlFor = control.id;
    const err = el('span', 'aps-field-error');
    err.id = `${id}opt-err-${key}`;
    err.setAttribute('aria-live', 'polite');
    control.setAttribute('aria-describedby', err.id);
    wrap.append(lab, control, err);
    return wrap;
  }

  function toolbar() {
    const bar = el('div', 'aps-toolbar');
    // preset
    const sel = el('select', 'aps-select');
    sel.dataset.key = 'preset';
    for (const p of PRESETS) sel.append(new Option(t(`preset.${p}.title`), p));
    sel.append(new Option(t('preset.custom.title'), 'custom'));
    sel.value = state.preset;
    sel.addEventListener('change', () => applyPreset(sel.value));
    dom.presetSelect = sel;
    const pw = el('div', 'aps-tool');
    const pl = el('label', 'aps-label', t('ui.preset'));
    sel.id = `${id}preset`;
    pl.htmlFor = sel.id;
    sel.setAttribute('aria-describedby', `${id}preset-note`);
    pw.append(pl, sel);
    bar.append(pw);
    // mode
    const mw = el('div', 'aps-tool');
    mw.append(el('span', 'aps-label', t('ui.mode')), segGroup(t('ui.mode'), 'mode', [['x', t('mode.x')], ['qkv', t('mode.qkv')]], state.mode, (v) => {
      if (v === state.mode) return;
      state.mode = v;
      state.preset = 'custom';
      render();
      userChange();
    }));
    bar.append(mw);
    // direction: the forward pass or the backward pass
    const dw = el('div', 'aps-tool');
    dw.append(el('span', 'aps-label', t('ui.direction')), segGroup(t('ui.direction'), 'direction', [['forward', t('dir.forward')], ['backward', t('dir.backward')]], state.direction, (v) => {
      if (v === state.direction) return;
      state.direction = v;
      state.step = 0;
      state.focus = null;
      render();
      userChange();
    }));
    bar.append(dw);
    // view
    const vw = el('div', 'aps-tool');
    vw.append(el('span', 'aps-label', t('ui.view')), segGroup(t('ui.view'), 'view', [['all', t('view.all')], ['step', t('view.step')]], state.view, (v) => {
      if (v === state.view) return;
      state.view = v;
      syncViewButtons();
      layoutSteps();
      userChange();
    }));
    dom.viewGroup = vw;
    bar.append(vw);
    // exercise: none, a ready-made one, or your own (pick cells)
    const xw = el('div', 'aps-tool');
    const xs = el('select', 'aps-select');
    xs.dataset.key = 'exercise';
    xs.id = `${id}exercise`;
    const xl = el('label', 'aps-label', t('ui.exercise'));
    xl.htmlFor = xs.id;
    xs.append(new Option(t('exercise.none'), ''));
    for (const x of EXERCISE_IDS) xs.append(new Option(t(`exercise.${x}.title`), x));
    xs.append(new Option(t('exercise.custom.option'), 'custom'));
    xs.value = state.exercise ? (EXERCISE_IDS.includes(state.exercise.id) ? state.exercise.id : 'custom') : '';
    xs.addEventListener('change', () => chooseExercise(xs.value));
    xw.append(xl, xs);
    bar.append(xw);
    if (embed) bar.append(langSwitch());
    return bar;
  }

  function syncViewButtons() {
    dom.viewGroup.querySelectorAll('[role=radio]').forEach((b) => {
      const on = b.dataset.value === state.view;
      b.setAttribute('aria-checked', String(on));
      b.tabIndex = on ? 0 : -1;
    });
  }

  function applyPreset(p) {
    const patch = presetPatch(p, api);
    state.preset = p;
    state.exercise = null; // another example: the exercise was about the old one
    authoring = false;
    if (patch) {
      state.mode = patch.mode;
      state.matrices = { ...state.matrices, ...patch.matrices };
      state.use_W_o = patch.use_W_o;
      state.use_bias = patch.use_bias ?? false;
      state.options = { ...patch.options };
      state.head = 0;
      state.step = Math.min(state.step, STEPS.length - 1);
      state.focus = null;
      // a new example has new shapes: dOut and the target start again from out's shape
      state.upstream = { ...state.upstream, d_out: '', target: '' };
      for (const k of Object.keys(optErrors)) delete optErrors[k];
    }
    render();
    userChange();
  }

  function updatePresetNote() {
    dom.presetNote.textContent = t(`preset.${state.preset}.text`);
  }

  function inputColumn() {
    const col = el('section', 'aps-inputs');
    col.setAttribute('aria-label', t('ui.inputs'));
    col.append(el('h2', 'aps-h2', t('ui.inputs')));
    if (backward()) col.append(upstreamBox());
    col.append(optionsBox());
    const eds = el('div', 'aps-editors');
    for (const name of activeInputs()) {
      const ed = new MatrixEditor({
        name, hint: DIMS[name], text: state.matrices[name], t, api, idPrefix: id, maxDim: MAX_DIM, vector: BIASES.includes(name),
        onChange: (text) => {
          if (state.matrices[name] === text) return;
          state.matrices[name] = text;
          if (state.preset !== 'custom') { state.preset = 'custom'; dom.presetSelect.value = 'custom'; updatePresetNote(); }
          schedule();
          userChange();
        },
      });
      editors.set(name, ed);
      eds.append(ed.el);
    }
    col.append(eds);
    return col;
  }

  // the upstream gradient ∂L/∂out of the backward pass: a loss, or dOut typed in a grid
  function upstreamBox() {
    const box = el('fieldset', 'aps-options aps-upstream');
    box.dataset.field = 'loss';
    box.append(el('legend', 'aps-legend', t('up.title')));
    const u = state.upstream;
    const seg = segGroup(t('up.title'), 'upstream', [['sum', t('up.sum')], ['mse', t('up.mse')], ['d_out', t('up.d_out')]], u.kind, (v) => {
      if (v === state.upstream.kind) return;
      state.upstream.kind = v;
      state.focus = null;
      render();
      userChange();
    });
    box.append(seg, el('p', 'aps-hint', t(`up.${u.kind}.hint`)));
    dom.upstreamError = el('p', 'aps-field-error');
    dom.upstreamError.id = `${id}err-loss`;
    dom.upstreamError.setAttribute('aria-live', 'polite');
    box.append(dom.upstreamError);
    const name = UPSTREAM_EDITOR[u.kind];
    if (name) {
      const ed = new MatrixEditor({
        name, hint: 'T × d_out', text: u[name], t, api, idPrefix: id, maxDim: MAX_DIM,
        onChange: (text) => {
          if (state.upstream[name] === text) return;
          state.upstream[name] = text;
          schedule();
          userChange();
        },
      });
      editors.set(name, ed);
      const reset = el('button', 'aps-btn aps-btn-small', t(`up.reset.${name}`));
      reset.type = 'button';
      reset.dataset.key = `${name}.reset`;
      reset.addEventListener('click', () => {
        state.upstream[name] = '';
        compute(); // fills it to out's shape
        userChange();
      });
      box.append(ed.el, reset);
    }
    return box;
  }

  function optionsBox() {
    const box = el('fieldset', 'aps-options');
    box.append(el('legend', 'aps-legend', t('ui.options')));
    const o = state.options;
    const num = (key, value, min, max) => {
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
          optErrors[key] = t('err.int', { name: key, min, max });
        } else {
          delete optErrors[key];
          if (key === 'seed') state.seed = v; else state.options[key] = v;
        }
        schedule();
        userChange();
      });
      return inp;
    };
    const check = (key, checked, onChange) => {
      const c = el('input', 'aps-check');
      c.type = 'checkbox';
      c.checked = checked;
      c.dataset.key = key;
      c.addEventListener('change', () => onChange(c.checked));
      return c;
    };
    const row1 = el('div', 'aps-opt-row');
    row1.append(field(t('opt.n_head'), num('n_head', o.n_head, 1, MAX_HEADS), 'n_head'));
    row1.append(field(t('opt.base'), num('base', o.base, 0, MAX_DIM - 1), 'base'));
    box.append(row1);

    const causal = check('causal', o.causal, (v) => {
      state.options.causal = v;
      dom.maskGroup.classList.toggle('is-off', !v);
      compute();
      userChange();
    });
    const cw = el('div', 'aps-field aps-field-check');
    cw.dataset.field = 'causal';
    const cl = el('label', 'aps-check-label');
    cl.append(causal, el('span', '', t('opt.causal')));
    cw.append(cl);
    box.append(cw);

    const mw = el('div', 'aps-field aps-subfield');
    mw.dataset.field = 'mask';
    mw.append(el('span', 'aps-label', t('opt.mask')));
    const maskSeg = segGroup(t('opt.mask'), 'mask', [['strict', 'j > i + base'], ['inclusive', 'j ≥ i + base']], o.mask, (v) => {
      state.options.mask = v;
      maskSeg.querySelectorAll('[role=radio]').forEach((b) => { b.setAttribute('aria-checked', String(b.dataset.value === v)); b.tabIndex = b.dataset.value === v ? 0 : -1; });
      compute();
      userChange();
    });
    mw.append(maskSeg, el('span', 'aps-hint', t('opt.maskHint')));
    mw.classList.toggle('is-off', !o.causal);
    dom.maskGroup = mw;
    box.append(mw);

    const sw = el('div', 'aps-field aps-field-check');
    sw.dataset.field = 'scale';
    const sl = el('label', 'aps-check-label');
    sl.append(check('scale', o.scale, (v) => { state.options.scale = v; compute(); userChange(); }), el('span', '', t('opt.scale')));
    sw.append(sl);
    box.append(sw);

    const smw = el('div', 'aps-field');
    smw.dataset.field = 'softmax';
    smw.append(el('span', 'aps-label', t('opt.softmax')));
    const smSeg = segGroup(t('opt.softmax'), 'softmax', [['stable', t('opt.stable')], ['naive', t('opt.naive')]], o.softmax, (v) => {
      state.options.softmax = v;
      smSeg.querySelectorAll('[role=radio]').forEach((b) => { b.setAttribute('aria-checked', String(b.dataset.value === v)); b.tabIndex = b.dataset.value === v ? 0 : -1; });
      compute();
      userChange();
    });
    smw.append(smSeg);
    box.append(smw);

    const ww = el('div', 'aps-field aps-field-check');
    const wl = el('label', 'aps-check-label');
    wl.append(check('use_W_o', state.use_W_o, (v) => { state.use_W_o = v; state.preset = 'custom'; fillBiases(); render(); userChange(); }), el('span', '', t('opt.useWo')));
    ww.append(wl);
    box.append(ww);
    const bw = el('div', 'aps-field aps-field-check');
    bw.dataset.field = 'use_bias';
    const bl = el('label', 'aps-check-label');
    bl.append(check('use_bias', state.use_bias, (v) => { state.use_bias = v; state.preset = 'custom'; fillBiases(); render(); userChange(); }), el('span', '', t(state.mode === 'x' ? 'opt.useBias' : 'opt.useBiasQkv')));
    bw.append(bl);
    box.append(bw);

    const rw = el('div', 'aps-opt-row aps-random');
    rw.append(field(t('opt.seed'), num('seed', state.seed, 0, Number.MAX_SAFE_INTEGER), 'seed'));
    const rb = el('button', 'aps-btn', t('opt.random'));
    rb.type = 'button';
    rb.dataset.key = 'random';
    rb.addEventListener('click', randomFill);
    rw.append(rb);
    box.append(rw, el('p', 'aps-hint', t(state.mode === 'x' ? 'opt.randomHintX' : 'opt.randomHintQkv')));
    return box;
  }

  // a bias turned on with no text yet: zeros, as many as its weight matrix has columns
  function fillBiases() {
    if (!state.use_bias) return;
    for (const [b, w] of Object.entries(BIAS_OF)) {
      if (state.matrices[b].trim() !== '') continue;
      const cols = Math.max(1, ...textToCells(state.matrices[w]).map((r) => r.length));
      state.matrices[b] = Array(cols).fill('0').join(' ');
    }
  }

  function randomFill() {
    if (optErrors.seed) return;
    const names = state.mode === 'x' ? ['W_q', 'W_k', 'W_v', ...(state.use_W_o ? ['W_o'] : [])] : ['Q', 'K', 'V', ...(state.use_W_o ? ['W_o'] : [])];
    const ref = editors.get(state.mode === 'x' ? 'W_q' : 'Q');
    const nh = state.options.n_head;
    const dk = ref.cols % nh === 0 ? ref.cols / nh : ref.cols;
    const bound = 1 / Math.sqrt(dk);
    names.forEach((name, k) => {
      const ed = editors.get(name);
      const m = api.randomMatrix(ed.rows, ed.cols, { seed: state.seed + k, bound });
      state.matrices[name] = m.map((r) => r.map((v) => cellText(Number(v.toFixed(3)))).join(' ')).join('\n');
    });
    state.preset = 'custom';
    render();
    userChange();
  }

  function pipelineColumn() {
    const col = el('section', 'aps-pipeline');
    dom.pipeline = col;
    col.setAttribute('aria-label', t('ui.steps'));
    const top = el('div', 'aps-pipe-head');
    top.append(el('h2', 'aps-h2', t('ui.steps')));
    dom.status = el('p', 'aps-status');
    dom.status.setAttribute('role', 'status');
    top.append(dom.status);
    col.append(top);

    dom.error = el('div', 'aps-error-banner');
    dom.error.setAttribute('aria-live', 'assertive');
    dom.error.hidden = true;
    col.append(dom.error);

    dom.warnings = el('ul', 'aps-warnings');
    dom.warnings.setAttribute('aria-label', t('ui.warnings'));
    col.append(dom.warnings);

    // large inputs: heatmaps only (and the way back to every number)
    dom.large = el('div', 'aps-large');
    dom.large.setAttribute('role', 'status');
    dom.largeText = el('p', 'aps-large-text');
    dom.largeButton = el('button', 'aps-btn aps-btn-small');
    dom.largeButton.type = 'button';
    dom.largeButton.dataset.key = 'display.toggle';
    dom.largeButton.addEventListener('click', () => {
      state.display = heatOnly() ? 'numbers' : (largeT() > LARGE_T ? 'auto' : 'heatmap');
      paint();
      userChange();
    });
    dom.large.append(dom.largeText, dom.largeButton);
    dom.large.hidden = true;
    col.append(dom.large);

    dom.summary = el('dl', 'aps-summary');
    col.append(dom.summary);

    dom.heads = el('div', 'aps-heads');
    dom.heads.setAttribute('role', 'group');
    dom.heads.setAttribute('aria-label', t('ui.head'));
    col.append(dom.heads);

    if (backward()) col.append(backwardIntro());

    // step navigation
    const nav = el('nav', 'aps-stepnav');
    nav.setAttribute('aria-label', t('ui.stepNav'));
    dom.prev = el('button', 'aps-btn', t('step.prev'));
    dom.prev.type = 'button';
    dom.prev.dataset.key = 'step.prev';
    dom.prev.setAttribute('aria-keyshortcuts', 'P [');
    dom.next = el('button', 'aps-btn aps-btn-primary', t('step.next'));
    dom.next.type = 'button';
    dom.next.dataset.key = 'step.next';
    dom.next.setAttribute('aria-keyshortcuts', 'N ]');
    dom.prev.addEventListener('click', () => go(-1));
    dom.next.addEventListener('click', () => go(1));
    dom.progress = el('div', 'aps-progress');
    dom.progressText = el('p', 'aps-progress-text');
    dom.progressText.setAttribute('aria-live', 'polite');
    dom.progressBar = el('ol', 'aps-dots');
    dom.progress.append(dom.progressText, dom.progressBar);
    nav.append(dom.prev, dom.progress, dom.next);
    dom.stepnav = nav;
    nav.hidden = state.view !== 'step'; // (layoutSteps keeps it so; an invalid first input never lays out)
    col.append(nav);

    dom.stale = el('div', 'aps-stale');
    dom.stale.append(el('p', '', t('ui.stale')));
    dom.staleList = el('ul', 'aps-stale-list');
    dom.stale.append(dom.staleList);
    dom.stale.hidden = true;
    col.append(dom.stale);

    dom.steps = el('div', 'aps-steps');
    const makeFig = (p, no, stepId, grad) => {
      if (p === 'weights-heads') { makeHeadsFig(no, stepId); return; }
      const fig = el('figure', grad ? 'aps-panel aps-grad' : 'aps-panel');
      fig.dataset.panel = p;
      fig.dataset.step = stepId;
      const cap = el('figcaption', 'aps-cap');
      const titleRow = el('div', 'aps-cap-row');
      const noEl = el('span', grad ? 'aps-step-no is-back' : 'aps-step-no', String(no));
      noEl.setAttribute('aria-hidden', 'true');
      const title = el('h3', 'aps-panel-title', t(`panel.${p}`));
      const fslot = el('span', 'aps-formula');
      titleRow.append(noEl, title);
      // authoring an exercise: the whole step becomes a question
      const askButton = el('button', 'aps-ask-step', t('exercise.askStep'));
      askButton.type = 'button';
      askButton.dataset.key = `ask.${p}`;
      askButton.hidden = true;
      askButton.addEventListener('click', () => toggleAsk(p, null, null));
      titleRow.append(askButton);
      const shape = el('p', 'aps-shape');
      cap.append(titleRow, fslot, shape);
      if (grad) {
        const reads = panelReads(p, readCtx());
        if (reads.length) cap.append(readsChips(reads));
      }
      const viewOpts = {
        panel: p,
        label: t(`panel.${p}`),
        onActivate: (panel, r, c) => {
          if (!authoring || !state.exercise) return false;
          toggleAsk(panel, r, c);
          return true;
        },
        onFocusCell: (panel, r, c) => {
          state.focus = { panel, row: r, col: c };
          hover = null;
          if (INPUT_GRADS[panel] && dom.gcBox) { gc.pick = { name: INPUT_GRADS[panel], row: r, col: c }; dom.gcBox.setPick(INPUT_GRADS[panel], r, c); }
          showExplain();
          userChange();
        },
        onHover: (panel, r, c) => {
          hover = r == null ? null : { panel, row: r, col: c };
          showExplain();
        },
      };
      const view = new MatrixView({ ...viewOpts, observer: visObs });
      const note = el('p', 'aps-panel-note');
      // the softmax panel's row statistics (Σ, max, H) are a table of their own beside the
      // weights, which wraps under them when the panel is narrow (a phone)
      let stats = null;
      if (p === 'weights' && !grad) {
        stats = new MatrixView({ panel: 'weights-stats', label: t('panel.stats'), observer: visObs, stats: true, onFocusCell: () => {}, onHover: () => {} });
        const group = el('div', 'aps-mat-group');
        group.append(view.scroll, stats.scroll);
        fig.append(cap, group, note);
      } else fig.append(cap, view.scroll, note);
      dom.steps.append(fig);
      views.set(p, { fig, view, stats, title, fslot, shape, note, grad, viewOpts, askButton });
    };
    if (backward()) {
      visibleBSteps(state.mode, state.use_W_o, bias()).forEach((s, si) => { for (const p of s.panels) makeFig(p, si + 1, s.id, true); });
      dom.cacheHead = el('h3', 'aps-cache-head', t('bw.cache'));
      dom.steps.append(dom.cacheHead);
    }
    STEPS.forEach((s, si) => { for (const p of s.panels) makeFig(p, si + 1, s.id, false); });
    col.append(dom.steps);
    if (backward()) col.append(gradCheckSection());

    dom.explain = el('aside', 'aps-explain');
    dom.explain.setAttribute('aria-live', 'polite');
    dom.explain.setAttribute('aria-label', t('ex.label'));
    col.append(dom.explain);
    return col;
  }

  // "side by side": every head's weights at once (small multiples); a head's button selects it
  function makeHeadsFig(no, stepId) {
    const fig = el('figure', 'aps-panel aps-heads-panel');
    fig.dataset.panel = 'weights-heads';
    fig.dataset.step = stepId;
    const cap = el('figcaption', 'aps-cap');
    const titleRow = el('div', 'aps-cap-row');
    const noEl = el('span', 'aps-step-no', String(no));
    noEl.setAttribute('aria-hidden', 'true');
    const title = el('h3', 'aps-panel-title', t('panel.weights-heads'));
    titleRow.append(noEl, title);
    const shape = el('p', 'aps-shape');
    cap.append(titleRow, shape);
    const grid = el('div', 'aps-multiples');
    const note = el('p', 'aps-panel-note', t('note.heads'));
    fig.append(cap, grid, note);
    dom.steps.append(fig);
    const multi = [];
    const view = {
      multi,
      ensurePainted() { for (const m of multi) m.view.ensurePainted(); },
      mark(sel, feeds) { for (const m of multi) m.view.mark(null, []); },
      cell() { return null; },
      destroy() { for (const m of multi) m.view.destroy(); },
    };
    const entry = { fig, view, title, shape, note, grad: false, multi, grid };
    views.set('weights-heads', entry);
  }

  /** A panel shows its numbers (MatrixView) or, for a large input, its heatmap only (HeatmapView). */
  function viewKind(entry, heat) {
    if (!!entry.view.heat === heat) return;
    const make = heat ? HeatmapView : MatrixView;
    const other = heat ? entry.heatView : entry.numbersView;
    const next = other ?? new make({ ...entry.viewOpts, observer: visObs, t });
    if (heat) entry.numbersView = entry.view; else entry.heatView = entry.view;
    entry.view.scroll.replaceWith(next.scroll);
    entry.view = next;
  }

  /** The small multiples for n heads (rebuilt when the number of heads changes). */
  function buildMultiples(entry, n, heat) {
    entry.heat = heat;
    for (const m of entry.multi) m.view.destroy();
    entry.multi.length = 0;
    entry.grid.replaceChildren();
    for (let k = 0; k < n; k++) {
      const box = el('section', 'aps-multiple');
      box.dataset.head = k;
      const b = el('button', 'aps-multiple-head', t('ui.headN', { h: k + 1 }));
      b.type = 'button';
      b.dataset.key = `heads-side.${k}`;
      b.addEventListener('click', () => { state.head = k; paint(); userChange(); });
      const view = new (heat ? HeatmapView : MatrixView)({
        panel: 'weights-heads',
        label: `${t('panel.weights')} · ${t('ui.headN', { h: k + 1 })}`,
        observer: visObs,
        compact: true,
        t,
        onFocusCell: (panel, r, c) => { hover = { panel, row: r, col: c, head: k }; showExplain(); },
        onHover: (panel, r, c) => { hover = r == null ? null : { panel, row: r, col: c, head: k }; showExplain(); },
      });
      box.append(b, view.scroll);
      entry.grid.append(box);
      entry.multi.push({ box, button: b, view });
    }
  }

  function backwardIntro() {
    const box = el('div', 'aps-bintro');
    dom.bIntro = box;
    box.append(el('p', '', t('bw.intro')));
    const legend = el('div', 'aps-legend-div');
    legend.setAttribute('role', 'img');
    legend.setAttribute('aria-label', t('bw.legendLabel'));
    legend.append(el('span', 'aps-legend-end', t('bw.neg')));
    for (let k = 0; k < 9; k++) legend.append(el('span', `aps-swatch d${k}`, k === 4 ? '0' : ''));
    legend.append(el('span', 'aps-legend-end', t('bw.pos')));
    box.append(legend);
    return box;
  }

  // "reads: A (weights), V" — the cached forward values a gradient panel reads; hover or focus
  // highlights them, a click brings them into view
  function readsChips(reads) {
    const p = el('p', 'aps-reads');
    p.append(el('span', 'aps-reads-label', t('bw.reads')));
    for (const r of reads) {
      const b = el('button', 'aps-chip', FWD_LABEL(r));
      b.type = 'button';
      b.dataset.read = r;
      b.setAttribute('aria-label', t('bw.readsChip', { name: FWD_LABEL(r) }));
      const on = () => showReads([r]);
      const off = () => showExplain();
      b.addEventListener('mouseenter', (e) => { if (pointerMoved(e)) on(); });
      b.addEventListener('focus', on);
      b.addEventListener('mouseleave', off);
      b.addEventListener('blur', off);
      b.addEventListener('click', () => {
        const target = views.get(r)?.fig ?? editors.get(r)?.el;
        if (target && !target.hidden) target.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
        showReads([r]);
      });
      p.append(b);
    }
    return p;
  }

  function FWD_LABEL(r) {
    return STEPS.some((st) => st.panels.includes(r)) ? t(`panel.${r}`) : r;
  }

  function showReads(reads) {
    if (!trace) return;
    clearMarks();
    for (const r of reads) {
      if (views.has(r)) { views.get(r).view.mark(null, [{}]); views.get(r).fig.classList.add('is-read'); }
      else if (editors.has(r)) editors.get(r).highlightAll();
    }
  }

  function clearMarks() {
    for (const { view, fig } of views.values()) { view.mark(null, []); if (fig.classList.contains('is-read')) fig.classList.remove('is-read'); }
    for (const ed of editors.values()) ed.highlight(null, null);
  }

  function gradCheckSection() {
    const names = activeInputs();
    const box = gradCheckBox({
      t, idPrefix: id, names, pick: gc.pick, eps: gc.eps, result: gc.result,
      dims: (name) => {
        const m = bw?.trace.inputs[name];
        if (!m) return null;
        return Array.isArray(m[0]) ? [m.length, m[0].length] : [1, m.length]; // a bias: one row
      },
      run: (entries, eps) => {
        gc.eps = eps;
        return api.gradcheck({ ...buildSpec(), check: entries, eps });
      },
      onResult: (res) => { gc.result = res; },
    });
    dom.gcBox = box;
    return box.el;
  }

  // ───────────────────────────── the exercise mode ─────────────────────────────
  // The learner computes some cells (state.exercise.ask) and the page checks them against the
  // core's values; later steps are covered until the exercise is solved or the answers shown.

  const exKey = (p, i, j) => `${p}:${i}:${j}`;

  /** The learner's work on the current exercise, loaded from localStorage when it changes. */
  function exerciseData() {
    if (!state.exercise) { ex = null; return null; }
    if (!ex || ex.id !== state.exercise.id) ex = { id: state.exercise.id, ...loadAnswers(state.exercise.id), results: {}, checkedKey: null, pendingCheck: false };
    if (ex.checked && !ex.checkedKey) ex.pendingCheck = true; // check the restored answers once the trace is there
    return ex;
  }

  const exSave = () => { if (ex) saveAnswers(ex.id, { answers: ex.answers, hints: ex.hints, checked: ex.checked, revealed: ex.revealed }); };
  /** The learner is at work: questions in the cells, later steps covered. */
  const quizzing = () => !!state.exercise && !authoring && !!ex && !ex.revealed && !exSolved();
  const exSolved = () => {
    if (!ex || !state.exercise) return false;
    const keys = exAllKeys();
    return keys.length > 0 && keys.every((k) => ex.results[k] === 'right');
  };

  /** Every asked cell of the panels on the page: ["panel:r:c", …]. */
  function exAllKeys() {
    const out = [];
    for (const [p, m] of Object.entries(shown)) {
      const { set } = askedCells(state.exercise?.ask, p, m.length, m[0]?.length ?? 0);
      for (const k of set) { const [i, j] = k.split(','); out.push(exKey(p, i, j)); }
    }
    return out;
  }

  function chooseExercise(v) {
    authoring = false;
    if (!v) state.exercise = null;
    else if (v === 'custom') {
      state.exercise = { id: customId(state, []), ask: [], tol: { ...DEFAULT_TOL } };
      authoring = true;
    } else {
      state = withReadyExercise(state, v, api);
      for (const k of Object.keys(optErrors)) delete optErrors[k];
    }
    render();
    userChange();
  }

  /** The exercise bar: title, task, tolerance, Check / Show the answers / Reset / Edit, result. */
  function exerciseBar() {
    const x = state.exercise;
    const ready = EXERCISE_IDS.includes(x.id);
    const bar = el('section', 'aps-exercise');
    bar.dataset.key = 'exercise.bar';
    const h = el('h2', 'aps-exercise-title', ready ? t(`exercise.${x.id}.title`) : t('exercise.custom.title'));
    h.id = `${id}exercise-title`;
    bar.setAttribute('aria-labelledby', h.id);
    bar.append(h);
    bar.append(el('p', 'aps-exercise-task', authoring ? t('exercise.author.task') : ready ? t(`exercise.${x.id}.task`) : t('exercise.custom.task')));
    bar.append(el('p', 'aps-exercise-tol', tolText(x.tol)));
    dom.exErrors = el('ul', 'aps-exercise-errors');
    bar.append(dom.exErrors);
    const buttons = el('div', 'aps-exercise-row');
    const button = (key, text, fn, primary = false) => {
      const b = el('button', primary ? 'aps-btn aps-btn-primary' : 'aps-btn', text);
      b.type = 'button';
      b.dataset.key = key;
      b.addEventListener('click', fn);
      buttons.append(b);
      return b;
    };
    if (authoring) {
      // the author's tolerance: decimals and a relative error
      const tol = el('div', 'aps-exercise-row');
      const num = (key, label, value, attrs) => {
        const w = el('label', 'aps-field');
        w.append(el('span', 'aps-label', label));
        const i = el('input', 'aps-num');
        i.type = 'number';
        Object.assign(i, attrs);
        i.value = value ?? '';
        i.dataset.key = key;
        i.addEventListener('change', () => {
          const d = Number(dom.exDecimals.value);
          const r = Number(dom.exRel.value);
          state.exercise.tol = validateTol({
            ...(dom.exDecimals.value !== '' && Number.isInteger(d) ? { decimals: d } : {}),
            ...(dom.exRel.value !== '' && Number.isFinite(r) ? { rel: r / 100 } : {}),
          });
          bar.querySelector('.aps-exercise-tol').textContent = tolText(state.exercise.tol);
          userChange();
        });
        w.append(i);
        tol.append(w);
        return i;
      };
      dom.exDecimals = num('ex.decimals', t('exercise.tolDecimals'), x.tol.decimals, { min: 0, max: 10, step: 1 });
      dom.exRel = num('ex.rel', t('exercise.tolRel'), x.tol.rel !== undefined ? +(x.tol.rel * 100).toPrecision(6) : '', { min: 0, step: 'any' });
      bar.append(tol);
      dom.exAsked = el('p', 'aps-exercise-tol');
      bar.append(dom.exAsked);
      button('ex.try', t('exercise.try'), () => { authoring = false; exerciseData(); render(); }, true);
    } else {
      button('ex.check', t('exercise.check'), () => exCheck(true), true);
      button('ex.reveal', t('exercise.reveal'), exReveal);
      button('ex.reset', t('exercise.reset'), exReset);
      button('ex.edit', t('exercise.edit'), () => { authoring = true; render(); });
    }
    bar.append(buttons);
    dom.exResult = el('p', 'aps-exercise-result');
    dom.exResult.setAttribute('role', 'status');
    bar.append(dom.exResult);
    if (ready) {
      const why = el('details', 'aps-exercise-why');
      why.append(el('summary', '', t('exercise.why')), el('p', '', t(`exercise.${x.id}.why`)));
      dom.exWhy = why;
      bar.append(why);
    }
    return bar;
  }

  function tolText(tol) {
    const parts = [];
    if (tol.decimals !== undefined) parts.push(t('exercise.tol.decimals', { n: tol.decimals }));
    if (tol.rel !== undefined) parts.push(t('exercise.tol.rel', { p: +(tol.rel * 100).toPrecision(4) }));
    if (tol.abs !== undefined) parts.push(t('exercise.tol.abs', { a: tol.abs }));
    return t('exercise.tol', { rules: parts.join(t('exercise.tol.or')) });
  }

  /** The exercise's part of paint(): questions in the cells, covered steps, the bar's result. */
  function paintExercise() {
    const x = state.exercise;
    const quiz = quizzing();
    const askedPanels = new Set((x?.ask ?? []).map((a) => a.panel));
    // the earliest asked step, forward and backward: what comes after it would give it away
    const fwdIndex = (p) => STEPS.findIndex((st) => st.panels.includes(p));
    const bSteps = visibleBSteps(state.mode, state.use_W_o, bias());
    const bIndex = (p) => bSteps.findIndex((st) => st.panels.includes(p));
    const fwdAsked = [...askedPanels].filter((p) => fwdIndex(p) >= 0).map(fwdIndex);
    const bAsked = [...askedPanels].filter((p) => bIndex(p) >= 0).map(bIndex);
    const firstFwd = fwdAsked.length ? Math.min(...fwdAsked) : Infinity;
    const firstB = bAsked.length ? Math.min(...bAsked) : Infinity;
    const errors = [];
    for (const [p, v] of views) {
      const m = p === 'weights-heads' ? null : shown[p];
      let covered = false;
      if (quiz && !askedPanels.has(p)) {
        if (v.grad) covered = bIndex(p) > firstB || fwdAsked.length > 0;
        else covered = p === 'weights-heads' ? askedPanels.has('weights') || fwdIndex(p) > firstFwd : fwdIndex(p) > firstFwd;
      }
      v.fig.classList.toggle('is-covered', covered);
      if (covered && !v.cover) {
        v.cover = el('p', 'aps-cover-note', t('exercise.covered'));
        v.fig.insertBefore(v.cover, v.note);
      }
      if (v.cover) hide(v.cover, !covered);
      if (v.askButton) {
        hide(v.askButton, !authoring);
        v.askButton.setAttribute('aria-pressed', String((x?.ask ?? []).some((a) => a.panel === p && a.cells === 'all')));
      }
      if (!m || !(v.view instanceof MatrixView)) continue;
      const { set, outside } = askedCells(x?.ask, p, m.length, m[0]?.length ?? 0);
      for (const [i, j] of outside) errors.push(t('exercise.outside', { cell: `${p}[${i + 1},${j + 1}]`, rows: m.length, cols: m[0]?.length ?? 0 }));
      const mode = authoring ? 'author' : quiz ? 'quiz' : 'shown';
      v.view.setAsk(set.size ? set : null, mode, exCtl(p));
      if (v.stats) v.stats.setHiddenRows(quiz && set.size ? new Set([...set].map((k) => +k.split(',')[0])) : null);
    }
    if (dom.exErrors) dom.exErrors.replaceChildren(...errors.map((e) => el('li', '', e)));
    if (dom.exAsked) setText(dom.exAsked, t('exercise.asked', { n: exAllKeys().length }));
    exResultText();
  }

  /** The handlers of the answer inputs of one panel. */
  function exCtl(p) {
    return {
      answer: (i, j) => ex?.answers[exKey(p, i, j)] ?? '',
      status: (i, j) => ex?.results[exKey(p, i, j)] ?? '',
      label: (i, j, status) => t('exercise.cellLabel', { name: `${t(`panel.${p}`)} [${i + 1},${j + 1}]`, status: status ? t(`exercise.status.${status}`) : '' }),
      onInput: (i, j, text) => {
        const k = exKey(p, i, j);
        ex.answers[k] = text;
        if (ex.results[k]) { delete ex.results[k]; views.get(p)?.view.refreshAsk(); }
        exSave();
        if (state.focus?.panel === p && state.focus.row === i && state.focus.col === j) showExplain();
      },
      onKey: (e, i, j) => {
        if (e.key === 'Enter') { e.preventDefault(); exCheck(true); views.get(p)?.view.answerInput(i, j)?.focus(); }
        else if (e.key === '?') { e.preventDefault(); exHint(p, i, j); }
        else if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
          // to the question above / below in this panel
          e.preventDefault();
          const view = views.get(p).view;
          const d = e.key === 'ArrowUp' ? -1 : 1;
          for (let r = i + d; r >= 0 && r < (view.tds?.length ?? 0); r += d) {
            const input = view.answerInput(r, j);
            if (input) { input.focus(); break; }
          }
        }
      },
    };
  }

  /** Checks every answer against the core's value; emits 'exercise' when the learner asked. */
  function exCheck(announce) {
    if (!ex || !state.exercise || !trace) return null;
    const cells = [];
    for (const [p, m] of Object.entries(shown)) {
      const { set } = askedCells(state.exercise.ask, p, m.length, m[0]?.length ?? 0);
      for (const kk of set) {
        const [i, j] = kk.split(',').map(Number);
        const k = exKey(p, i, j);
        const answer = ex.answers[k] ?? '';
        const status = checkAnswer(answer, m[i][j], state.exercise.tol);
        ex.results[k] = status;
        const a = parseAnswer(answer);
        cells.push({ panel: p, row: i, col: j, answer, status, correct: status === 'right', expected: m[i][j], ...(a.ok ? { value: a.value } : {}) });
      }
    }
    ex.checked = true;
    ex.checkedKey = JSON.stringify(buildSpec());
    exSave();
    const result = exResult(cells);
    paint();
    if (announce) emit('exercise', result);
    return result;
  }

  function exResult(cells) {
    const n = (s) => cells.filter((c) => c.status === s).length;
    return {
      id: state.exercise.id,
      ready: EXERCISE_IDS.includes(state.exercise.id),
      total: cells.length, right: n('right'), wrong: n('wrong') + n('invalid'), empty: n('empty'),
      solved: cells.length > 0 && n('right') === cells.length,
      revealed: !!ex.revealed,
      tol: { ...state.exercise.tol },
      cells,
    };
  }

  function exResultText() {
    if (!dom.exResult) return;
    const keys = exAllKeys();
    const res = keys.map((k) => ex?.results[k]);
    let text = '';
    let cls = '';
    if (authoring) text = '';
    else if (ex?.revealed) text = t('exercise.revealed');
    else if (keys.length && res.every((r) => r === 'right')) { text = t('exercise.solved', { n: keys.length }); cls = 'is-solved'; }
    else if (res.some(Boolean)) {
      const wrong = keys.filter((k) => ex.results[k] === 'wrong' || ex.results[k] === 'invalid').map((k) => { const [p, i, j] = k.split(':'); return `${t(`panel.${p}`)} [${+i + 1},${+j + 1}]`; });
      text = t('exercise.score', { right: res.filter((r) => r === 'right').length, total: keys.length }) + (wrong.length ? ` ${t('exercise.wrongList', { cells: wrong.join(', ') })}` : '');
      cls = 'is-open';
    }
    setText(dom.exResult, text);
    dom.exResult.className = `aps-exercise-result ${cls}`;
    if (dom.exWhy && (ex?.revealed || cls === 'is-solved')) dom.exWhy.open = true;
  }

  function exReveal() {
    if (!ex) return;
    ex.revealed = true;
    exSave();
    const res = exCheckQuiet();
    paint();
    emit('exercise', { ...res, revealed: true });
  }

  /** The results without touching the learner's marks (for the reveal event). */
  function exCheckQuiet() {
    const cells = [];
    for (const [p, m] of Object.entries(shown)) {
      const { set } = askedCells(state.exercise.ask, p, m.length, m[0]?.length ?? 0);
      for (const kk of set) {
        const [i, j] = kk.split(',').map(Number);
        const answer = ex.answers[exKey(p, i, j)] ?? '';
        const status = checkAnswer(answer, m[i][j], state.exercise.tol);
        cells.push({ panel: p, row: i, col: j, answer, status, correct: status === 'right', expected: m[i][j] });
      }
    }
    return exResult(cells);
  }

  function exReset() {
    if (!ex) return;
    clearAnswers(ex.id);
    ex = { id: ex.id, answers: {}, hints: {}, checked: false, revealed: false, results: {}, checkedKey: null, pendingCheck: false };
    for (const v of views.values()) for (const inp of v.fig.querySelectorAll('input.aps-answer')) inp.value = '';
    paint();
    emit('exercise', { ...exCheckQuiet(), reset: true });
  }

  /** The next hint of a wrong cell: the formula, then the terms, then the value. */
  function exHint(p, i, j) {
    const k = exKey(p, i, j);
    ex.hints[k] = Math.min(3, (ex.hints[k] ?? 0) + 1);
    exSave();
    state.focus = { panel: p, row: i, col: j };
    hover = null;
    showExplain();
  }

  /** Authoring: a cell or a whole panel becomes a question, or stops being one. */
  function toggleAsk(p, i, j) {
    const x = state.exercise;
    const m = shown[p];
    if (!x || !m) return;
    const R = m.length;
    const C = m[0]?.length ?? 0;
    const { set } = askedCells(x.ask, p, R, C);
    if (i === null) {
      const whole = x.ask.some((a) => a.panel === p && a.cells === 'all');
      x.ask = x.ask.filter((a) => a.panel !== p);
      if (!whole) x.ask.push({ panel: p, cells: 'all' });
    } else {
      const kk = `${i},${j}`;
      if (set.has(kk)) set.delete(kk); else set.add(kk);
      x.ask = x.ask.filter((a) => a.panel !== p);
      if (set.size === R * C) x.ask.push({ panel: p, cells: 'all' });
      else if (set.size) x.ask.push({ panel: p, cells: [...set].map((s2) => s2.split(',').map(Number)).sort((a, b) => a[0] - b[0] || a[1] - b[1]) });
    }
    if (!EXERCISE_IDS.includes(x.id) || x.ask.length) x.id = customId(state, x.ask);
    exerciseData();
    paint();
    userChange();
  }

  // ───────────────────────────── computing and painting ─────────────────────────────
  // An edit is computed and painted at once (the work overlaps the wait for the next frame);
  // further edits before that frame are coalesced into one compute at its start.
  function schedule() {
    if (raf) { pendingCompute = true; return; }
    compute();
    raf = requestAnimationFrame(() => {
      raf = 0;
      if (pendingCompute && !destroyed) { pendingCompute = false; compute(); }
    });
  }

  function clearErrors() {
    for (const ed of editors.values()) ed.setError('');
    if (dom.upstreamError) dom.upstreamError.textContent = '';
    for (const k of OPTION_FIELDS) setOptError(k, '');
    hide(dom.error, true);
    if (dom.error.firstChild) dom.error.replaceChildren();
  }

  function setOptError(key, msg) {
    const e = root.querySelector(`#${CSS.escape(`${id}opt-err-${key}`)}`);
    if (e) setText(e, msg);
    const c = root.querySelector(`#${CSS.escape(`${id}opt-${key}`)}`);
    if (c) { if (msg) c.setAttribute('aria-invalid', 'true'); else if (c.hasAttribute('aria-invalid')) c.removeAttribute('aria-invalid'); }
  }

  function localized(e) {
    const where = e.row ? (e.column ? t('err.cell', { r: e.row, c: e.column }) : t('err.row', { r: e.row })) : '';
    return t('err.wrap', { where, msg: e.message });
  }

  function staleReasons() {
    const items = [];
    for (const ed of editors.values()) if (ed.errorEl.textContent) items.push(ed.errorEl.textContent);
    if (dom.upstreamError?.textContent) items.push(dom.upstreamError.textContent);
    for (const k of OPTION_FIELDS) {
      const e = root.querySelector(`#${CSS.escape(`${id}opt-err-${k}`)}`);
      if (e?.textContent) items.push(e.textContent.includes(k) ? e.textContent : `${k}: ${e.textContent}`);
    }
    if (!dom.error.hidden) items.push(dom.error.textContent);
    dom.staleList.replaceChildren(...items.map((x) => el('li', '', x)));
  }

  function setStale(stale) {
    if (stale) staleReasons();
    root.classList.toggle('aps-is-stale', stale);
    hide(dom.stale, !stale);
    hide(dom.steps, stale);
    hide(dom.summary, stale);
    hide(dom.heads, stale || !trace || trace.n_head < 2);
    hide(dom.warnings, stale || !dom.warnings.childElementCount);
    if (stale) hide(dom.large, true);
    hide(dom.explain, stale);
    if (dom.gcBox) hide(dom.gcBox.el, stale);
    if (dom.bIntro) hide(dom.bIntro, stale);
    if (stale) { trace = null; bw = null; dom.warnings.replaceChildren(); dom.summary.replaceChildren(); dom.warningsKey = null; dom.summaryKey = null; }
  }

  function buildSpec(forwardOnly = false) {
    const spec = { ...state.options };
    for (const k of activeInputs()) spec[k] = editors.get(k).text();
    if (backward() && !forwardOnly) {
      const u = state.upstream;
      if (u.kind === 'd_out') spec.d_out = u.d_out;
      else if (u.kind === 'mse') { spec.loss = 'mse'; spec.target = u.target; }
      else spec.loss = 'sum';
    }
    return spec;
  }

  // a blank dOut / target (just chosen, or reset) becomes ones / zeros of out's shape
  function fillUpstream() {
    const name = UPSTREAM_EDITOR[state.upstream.kind];
    if (!name || state.upstream[name].trim() !== '') return;
    let out;
    try { out = api.trace(buildSpec(true)).out; } catch { return; } // the forward error will show
    const v = name === 'd_out' ? '1' : '0';
    state.upstream[name] = out.map((r) => r.map(() => v).join(' ')).join('\n');
    editors.get(name)?.setText(state.upstream[name]);
  }

  function compute() {
    clearErrors();
    const t0 = performance.now();
    // 1. the page's own checks: option values, the size limit per matrix
    let bad = false;
    for (const [k, msg] of Object.entries(optErrors)) { setOptError(k, msg); bad = true; }
    for (const [name, ed] of editors) {
      if (ed.rows > MAX_DIM || ed.cols > MAX_DIM) {
        ed.setError(t('err.limit', { name, rows: ed.rows, cols: ed.cols, max: MAX_DIM }));
        bad = true;
      }
    }
    if (bad) {
      setStale(true);
      dom.status.textContent = t('status.invalid');
      return;
    }
    // 2. the core
    let tr;
    try {
      if (backward()) {
        fillUpstream();
        const spec = buildSpec();
        bw = api.backward(spec);
        tr = bw.trace;
        const key = JSON.stringify(spec);
        if (gc.key !== key) { gc.key = key; gc.result = null; dom.gcBox?.el.querySelector('.aps-gc-out')?.replaceChildren(); }
      } else {
        bw = null;
        tr = api.trace(buildSpec());
      }
    } catch (e) {
      const err = e instanceof AttentionError ? e : new AttentionError(String(e?.message ?? e), {});
      const msg = localized(err);
      if (editors.has(err.field)) editors.get(err.field).setError(msg, err.row, err.column);
      else if (OPTION_FIELDS.includes(err.field)) setOptError(err.field, msg);
      else if ((err.field === 'loss' || err.field === 'target' || err.field === 'd_out') && dom.upstreamError) dom.upstreamError.textContent = msg;
      else {
        dom.error.hidden = false;
        dom.error.textContent = msg;
      }
      setStale(true);
      dom.status.textContent = t('status.invalid');
      return;
    }
    trace = tr;
    if (state.head >= tr.n_head) state.head = 0;
    if (ex?.checkedKey && ex.checkedKey !== JSON.stringify(buildSpec())) { ex.results = {}; ex.checkedKey = null; } // other numbers: check again
    paint();
    if (ex?.pendingCheck) { ex.pendingCheck = false; exCheck(false); } // restored answers: their marks
    setStale(false);
    const ms = performance.now() - t0;
    dom.status.textContent = t('status.ok', { ms: ms.toFixed(1), v: api.version });
    emit('trace', tr);
  }

  function paint() {
    const tr = trace;
    const h = state.head;
    const H = tr.heads[h];
    const hs = tr.n_head > 1 ? ` · ${t('ui.headN', { h: h + 1 })}` : '';
    const fctx = { mode: tr.mode, base: tr.base, scale: tr.options.scale, causal: tr.options.causal, maskKind: tr.options.mask, softmax: tr.options.softmax,
      biases: BIASES.filter((b) => tr.inputs[b]) };
    const empty = new Set(tr.empty_rows.filter((r) => r.head === h).map((r) => r.row));
    const over = new Set(tr.overflow_rows.filter((r) => r.head === h).map((r) => r.row));
    const quiz = quizzing(); // an unsolved exercise: no marks that would tell the answer
    const rowClass = (i) => (quiz ? '' : empty.has(i) ? 'is-empty-row' : over.has(i) ? 'is-overflow-row' : '');
    const TT = `T × T_total = ${tr.T} × ${tr.T_total}`;
    const fkey = JSON.stringify(fctx);
    const specs = {
      q: [H.q, `T × d_k = ${tr.T} × ${tr.head_dim}`],
      k: [H.k, `T_total × d_k = ${tr.T_total} × ${tr.head_dim}`],
      v: [H.v, `T_total × d_v = ${tr.T_total} × ${tr.d_v}`],
      scores: [H.scores, TT],
      scaled: [H.scaled, TT],
      masked: [H.masked, TT],
      weights: [H.weights, TT, { range: [0, 1], rowClass }, { rowClass, extra: [
        { head: 'Σ', title: t('panel.sumTitle'), values: H.weight_row_sums, cls: 'is-sum' },
        { head: 'max', title: t('panel.derivedTitle'), values: H.weights.map((r) => (r.some(Number.isNaN) ? NaN : Math.max(...r))), cls: 'is-derived' },
        { head: 'H', title: t('panel.derivedTitle'), values: H.weights.map(entropyBits), cls: 'is-derived', fmt: (v) => (Number.isNaN(v) ? 'NaN' : v.toFixed(2)) },
      ] }],
      context: [H.context, `T × d_v = ${tr.T} × ${tr.d_v}`, { rowClass }],
      concat: [tr.concat, `T × n_head·d_v = ${tr.T} × ${tr.n_head * tr.d_v}`],
      out: [tr.out, `T × d_out = ${tr.T} × ${tr.d_out}`],
    };
    // the matrices on the page (what the exercise checks against), then the exercise's questions
    const gspecs = bw ? gradSpecs(bw, h) : {};
    shown = {};
    for (const [p, [m]] of [...Object.entries(specs), ...Object.entries(gspecs)]) if (m && views.has(p)) shown[p] = m;
    const asked = new Set((state.exercise?.ask ?? []).map((a) => a.panel));
    const heat = heatOnly();
    for (const [p, [m]] of [...Object.entries(specs), ...Object.entries(gspecs)]) {
      if (m && views.has(p)) viewKind(views.get(p), heat && heatPanel(m) && !asked.has(p)); // a question needs its cells
    }
    paintExercise();
    for (const [p, [m, shape, opts, statsOpts]] of Object.entries(specs)) {
      const v = views.get(p);
      v.view.update(m, opts);
      if (v.stats) v.stats.update(m.map(() => []), statsOpts);
      setText(v.shape, shape);
      setText(v.title, t(`panel.${p}`) + (HEAD_PANELS.includes(p) ? hs : ''));
      if (v.fkey !== fkey) { v.fslot.replaceChildren(formula(p, fctx)); v.fkey = fkey; }
      setNote(v.note, panelNote(p, tr, h));
    }
    const side = views.get('weights-heads');
    if (side && headsSide()) {
      if (side.multi.length !== tr.n_head || side.heat !== heat) buildMultiples(side, tr.n_head, heat);
      side.multi.forEach((mm, k) => {
        const e = new Set(tr.empty_rows.filter((r) => r.head === k).map((r) => r.row));
        const o = new Set(tr.overflow_rows.filter((r) => r.head === k).map((r) => r.row));
        mm.view.update(tr.heads[k].weights, { range: [0, 1], rowClass: (i) => (e.has(i) ? 'is-empty-row' : o.has(i) ? 'is-overflow-row' : '') });
        mm.box.classList.toggle('is-current-head', k === h);
        mm.button.setAttribute('aria-pressed', String(k === h));
      });
      setText(side.shape, `${tr.n_head} × (T × T_total) = ${tr.n_head} × ${tr.T} × ${tr.T_total}`);
    }
    if (bw) paintGrads(bw, h, hs, gspecs);
    // summary
    const items = [
      ['T', tr.T], ['T_total', tr.T_total], ['base', tr.base], ['n_head', tr.n_head],
      ['d_model', tr.d_model ?? '—'], ['d_k', tr.head_dim], ['d_v', tr.d_v], ['d_out', tr.d_out],
      [t('sum.scale'), tr.options.scale ? `1/√${tr.head_dim} = ${formatNumber(tr.scale_factor)}` : t('sum.off')],
      ...(bw ? [['L', formatNumber(bw.loss)]] : []),
    ];
    const skey = JSON.stringify(items);
    if (dom.summaryKey !== skey) {
      dom.summary.replaceChildren(...items.map(([k, v]) => { const d = el('div'); d.append(el('dt', '', k), el('dd', '', String(v))); return d; }));
      dom.summaryKey = skey;
    }
    // warnings (translated from the core's row lists)
    const warns = [
      ...tr.empty_rows.map((r) => t('warn.empty', { h: r.head + 1, r: r.row + 1, heads: tr.n_head })),
      ...tr.overflow_rows.map((r) => t('warn.overflow', { h: r.head + 1, r: r.row + 1, heads: tr.n_head })),
    ];
    if (quiz) warns.length = 0; // "row 1 is empty" would answer the exercise
    const wkey = JSON.stringify(warns);
    if (dom.warningsKey !== wkey) {
      dom.warnings.replaceChildren(...warns.map((w) => el('li', '', w)));
      dom.warningsKey = wkey;
    }
    // large inputs
    const big = largeT() > LARGE_T;
    hide(dom.large, !big && state.display !== 'heatmap');
    if (!dom.large.hidden) {
      setText(dom.largeText, heat ? t(big ? 'large.heat' : 'large.heatAsked', { n: largeT(), max: LARGE_T }) : t('large.numbers', { n: largeT() }));
      setText(dom.largeButton, t(heat ? 'large.showNumbers' : 'large.showHeat'));
    }
    // heads
    if (tr.n_head > 1) {
      if (dom.heads.childElementCount !== tr.n_head + 2) {
        dom.heads.replaceChildren(el('span', 'aps-label', t('ui.head')));
        for (let k = 0; k < tr.n_head; k++) {
          const b = el('button', 'aps-seg', String(k + 1));
          b.type = 'button';
          b.dataset.key = `head.${k}`;
          b.setAttribute('aria-label', t('ui.headN', { h: k + 1 }));
          b.addEventListener('click', () => { state.head = k; paint(); userChange(); });
          dom.heads.append(b);
        }
        const sb = el('button', 'aps-seg aps-side-toggle', t('ui.headsSide'));
        sb.type = 'button';
        sb.dataset.key = 'heads.side';
        sb.addEventListener('click', () => {
          state.head_view = state.head_view === 'side' ? 'one' : 'side';
          paint();
          if (state.head_view === 'side') views.get('weights-heads')?.fig.scrollIntoView({ block: 'nearest' });
          userChange();
        });
        dom.heads.append(sb);
      }
      dom.heads.querySelectorAll('button[data-key^="head."]').forEach((b, k) => { if (b.getAttribute('aria-pressed') !== String(k === h)) b.setAttribute('aria-pressed', String(k === h)); });
      dom.heads.querySelector('[data-key="heads.side"]').setAttribute('aria-pressed', String(state.head_view === 'side'));
    } else if (dom.heads.childElementCount) dom.heads.replaceChildren();
    layoutSteps();
    showExplain();
  }

  /** The gradient panels' matrices and shapes: {panel: [matrix, shape, cellClass]}. */
  function gradSpecs(b, h) {
    const tr = b.trace;
    const g = b.grads;
    const G = g.heads[h];
    const maskCls = (i, j) => (tr.mask[i][j] === -Infinity ? 'is-masked0' : '');
    const TT = `T × T_total = ${tr.T} × ${tr.T_total}`;
    const dm = tr.d_model;
    const specs = {
      d_out: [g.out, `T × d_out = ${tr.T} × ${tr.d_out}`],
      d_W_o: [g.W_o, `n_head·d_v × d_out = ${tr.n_head * tr.d_v} × ${tr.d_out}`],
      d_concat: [g.concat, `T × n_head·d_v = ${tr.T} × ${tr.n_head * tr.d_v}`],
      d_context: [G.context, `T × d_v = ${tr.T} × ${tr.d_v}`],
      d_weights: [G.weights, TT],
      d_v: [G.v, `T_total × d_v = ${tr.T_total} × ${tr.d_v}`],
      d_scaled: [G.scaled, TT, maskCls],
      d_scores: [G.scores, TT, maskCls],
      d_q: [G.q, `T × d_k = ${tr.T} × ${tr.head_dim}`],
      d_k: [G.k, `T_total × d_k = ${tr.T_total} × ${tr.head_dim}`],
      d_Q: [g.Q, `T × n_head·d_k = ${tr.T} × ${tr.n_head * tr.head_dim}`],
      d_K: [g.K, `T_total × n_head·d_k = ${tr.T_total} × ${tr.n_head * tr.head_dim}`],
      d_V: [g.V, `T_total × n_head·d_v = ${tr.T_total} × ${tr.n_head * tr.d_v}`],
      d_x: [g.x, `T_total × d_model = ${tr.T_total} × ${dm}`],
      d_W_q: [g.W_q, `d_model × n_head·d_k = ${dm} × ${tr.n_head * tr.head_dim}`],
      d_W_k: [g.W_k, `d_model × n_head·d_k = ${dm} × ${tr.n_head * tr.head_dim}`],
      d_W_v: [g.W_v, `d_model × n_head·d_v = ${dm} × ${tr.n_head * tr.d_v}`],
      // the biases' gradients: vectors, shown as one row
      d_b_q: [g.b_q && [g.b_q], `n_head·d_k = ${tr.n_head * tr.head_dim}`],
      d_b_k: [g.b_k && [g.b_k], `n_head·d_k = ${tr.n_head * tr.head_dim}`],
      d_b_v: [g.b_v && [g.b_v], `n_head·d_v = ${tr.n_head * tr.d_v}`],
      d_b_o: [g.b_o && [g.b_o], `d_out = ${tr.d_out}`],
    };
    return specs;
  }

  function paintGrads(b, h, hs, specs) {
    const tr = b.trace;
    const fctx = { base: tr.base, scale: tr.options.scale, upstream: state.upstream.kind, useWo: state.use_W_o, nHead: tr.n_head };
    const fkey = JSON.stringify(fctx);
    for (const [p, [m, shape, cellClass]] of Object.entries(specs)) {
      const v = views.get(p);
      if (!v || !m) continue;
      v.view.update(m, { diverging: true, cellClass });
      setText(v.shape, shape);
      setText(v.title, t(`panel.${p}`) + (HEAD_GRAD_PANELS.includes(p) ? hs : ''));
      if (v.fkey !== fkey) { v.fslot.replaceChildren(gradFormula(p, fctx)); v.fkey = fkey; }
      setNote(v.note, gradNote(p, b, h));
    }
  }

  function gradNote(p, b, h) {
    const tr = b.trace;
    const hidden = tr.options.causal && tr.mask.some((r) => r.includes(-Infinity));
    switch (p) {
      case 'd_out': return t(`bn.out.${state.upstream.kind}`, { loss: formatNumber(b.loss) });
      case 'd_concat': return state.use_W_o ? '' : t('bn.noWo');
      case 'd_context': return tr.n_head > 1 ? t('bn.context', { h: h + 1, d: tr.d_v }) : '';
      case 'd_scaled': return [t('bn.scaled'), hidden ? t('bn.masked') : '', tr.empty_rows.some((r) => r.head === h) ? t('bn.emptyRow') : ''].filter(Boolean).join(' ');
      case 'd_scores': return hidden ? t('bn.masked') : '';
      case 'd_x': return tr.base > 0 ? t('bn.xbase', { base: tr.base }) : '';
      case 'd_W_q': return tr.base > 0 ? t('bn.wqbase', { base: tr.base }) : '';
      default: return '';
    }
  }

  function panelNote(p, tr, h) {
    if (p === 'weights') {
      const parts = [t('note.weights')];
      if (quizzing()) return parts[0]; // the notes on empty and overflow rows would tell the answer
      if (tr.empty_rows.some((r) => r.head === h)) parts.push(t('note.emptyRow'));
      if (tr.overflow_rows.some((r) => r.head === h)) parts.push(t('note.overflow'));
      return parts.join(' ');
    }
    if (p === 'masked' && tr.options.causal) return t(tr.options.mask === 'strict' ? 'note.maskStrict' : 'note.maskInclusive', { base: tr.base });
    if (p === 'q' && tr.base > 0 && tr.mode === 'x') return t('note.qbase', { base: tr.base });
    if (p === 'out' && !state.use_W_o) return '';
    if (p === 'concat' && tr.n_head === 1) return t('note.concat1');
    return '';
  }

  function layoutSteps() {
    const steps = visibleSteps();
    const step = state.view === 'step';
    if (state.step >= steps.length) state.step = steps.length - 1;
    const cur = steps[state.step];
    if (backward()) {
      // gradient panels of the visible steps; the forward panels are the cache they read
      const reads = new Set(stepReads(cur, readCtx()));
      const fwdSteps = STEPS.filter((s) => s.id !== 'out' || state.use_W_o);
      for (const [p, v] of views) {
        const mine = p === 'weights-heads' && !headsSide() ? null
          : v.grad ? steps.find((s) => s.panels.includes(p)) : fwdSteps.find((s) => s.panels.includes(p));
        const isCur = step && v.grad && mine === cur;
        const isSrc = step && ((v.grad && cur.from.includes(p)) || (!v.grad && reads.has(p)));
        const was = v.fig.hidden;
        hide(v.fig, !mine || (step && !isCur && !isSrc));
        if (was && !v.fig.hidden) v.view.ensurePainted(); // shown now: paint before the frame
        v.fig.classList.toggle('is-current', isCur);
        v.fig.classList.toggle('is-source', isSrc);
      }
      hide(dom.cacheHead, step && ![...reads].some((r) => views.has(r)));
    } else {
      for (const s of STEPS) {
        for (const p of s.panels) {
          const v = views.get(p);
          const visible = steps.includes(s) && (!step || s === cur || cur.from.includes(p)) && (p !== 'weights-heads' || headsSide());
          const was = v.fig.hidden;
          hide(v.fig, !visible);
          if (was && visible) v.view.ensurePainted(); // shown now: paint before the frame
          v.fig.classList.toggle('is-current', step && s === cur);
          v.fig.classList.toggle('is-source', step && s !== cur && cur.from.includes(p));
        }
      }
    }
    hide(dom.stepnav, !step);
    root.classList.toggle('aps-step-view', step);
    if (step) {
      dom.prev.disabled = state.step === 0;
      dom.next.disabled = state.step === steps.length - 1;
      dom.progressText.textContent = t('step.progress', { n: state.step + 1, total: steps.length, name: t(`stepname.${cur.id}`) });
      if (dom.progressBar.childElementCount !== steps.length) {
        dom.progressBar.replaceChildren(...steps.map((s, k) => {
          const li = el('li');
          const b = el('button', 'aps-dot');
          b.type = 'button';
          b.dataset.key = `dot.${k}`;
          b.setAttribute('aria-label', t('step.goto', { n: k + 1, name: t(`stepname.${s.id}`) }));
          b.title = t(`stepname.${s.id}`);
          b.addEventListener('click', () => { state.step = k; layoutSteps(); userChange(); });
          li.append(b);
          return li;
        }));
      }
      dom.progressBar.querySelectorAll('.aps-dot').forEach((b, k) => {
        b.classList.toggle('is-done', k < state.step);
        if (k === state.step) b.setAttribute('aria-current', 'step'); else b.removeAttribute('aria-current');
      });
    }
  }

  function go(d) {
    const n = visibleSteps().length;
    const s = Math.max(0, Math.min(n - 1, state.step + d));
    if (s === state.step) return;
    state.step = s;
    layoutSteps();
    userChange();
  }

  function showExplain() {
    if (!trace) return;
    const sel = hover ?? state.focus;
    clearMarks();
    // a cell of one of the side-by-side heads: that head's weights
    const selView = (x) => (x.panel === 'weights-heads' ? views.get(x.panel)?.multi?.[x.head]?.view : views.get(x.panel)?.view);
    const valid = sel && views.has(sel.panel) && (() => {
      const v = selView(sel);
      return !!v?.cell(sel.row, sel.col) && !views.get(sel.panel).fig.hidden;
    })();
    if (!valid && dom.explainHint) return; // the hint is already there
    dom.explain.replaceChildren();
    dom.explainHint = false;
    const head = el('h3', 'aps-explain-title', t('ex.label'));
    dom.explain.append(head);
    if (!valid) {
      dom.explain.append(el('p', 'aps-explain-hint', t('ex.hint')));
      dom.explainHint = true;
      return;
    }
    const multiple = sel.panel === 'weights-heads';
    const exp = views.get(sel.panel).grad
      ? explainGrad(bw, { ...sel, head: state.head }, t, { upstream: state.upstream.kind, target: upstreamTarget() })
      : explain(trace, { ...sel, panel: multiple ? 'weights' : sel.panel, head: multiple ? sel.head : state.head }, t);
    head.textContent = `${t('ex.label')}: ${exp.title}`;
    // a question of an unsolved exercise: the learner's verdict and the hints, not the answer
    const question = quizzing() && !multiple && views.get(sel.panel).view.ask?.has(`${sel.row},${sel.col}`);
    if (question) {
      hintBox(sel, exp, head);
      selView(sel).mark([sel.row, sel.col], []);
      return;
    }
    const box = el('div', 'aps-explain-lines');
    for (const line of exp.lines) box.append(exLine(line));
    dom.explain.append(box);
    selView(sel).mark([sel.row, sel.col], []);
    if (multiple && sel.head !== state.head) return; // the other panels show another head
    const byPanel = new Map();
    for (const f of exp.feeds) {
      if (f.panel) { if (!byPanel.has(f.panel)) byPanel.set(f.panel, []); byPanel.get(f.panel).push(f); }
      else if (f.editor && editors.has(f.editor)) editors.get(f.editor).highlight(f.row ?? null, f.col ?? null);
    }
    for (const [p, fs] of byPanel) views.get(p).view.mark(null, fs);
  }

  /**
   * The explanation box for a question: what the learner typed and whether it is right; for a
   * wrong answer the cell's arithmetic as hints, one step at a time — the formula, then the terms,
   * then the value (hint level 1, 2, 3; kept with the answers).
   */
  function hintBox(sel, exp, head) {
    const k = exKey(sel.panel, sel.row, sel.col);
    const name = `${t(`panel.${sel.panel}`)} [${sel.row + 1},${sel.col + 1}]`;
    head.textContent = t('exercise.yourAnswer', { name });
    const status = ex.results[k] ?? '';
    const answer = ex.answers[k] ?? '';
    const verdict = el('p', `aps-verdict ${status ? `is-${status === 'right' ? 'right' : 'wrong'}` : ''}`);
    verdict.dataset.key = 'ex.verdict';
    if (status === 'right') verdict.textContent = t('exercise.v.right', { answer });
    else if (status === 'wrong') verdict.textContent = t('exercise.v.wrong', { answer });
    else if (status === 'invalid') verdict.textContent = t('exercise.v.invalid', { answer, name });
    else if (status === 'empty') verdict.textContent = t('exercise.v.empty');
    else verdict.textContent = t('exercise.v.todo');
    dom.explain.append(verdict);
    const level = status === 'wrong' || status === 'invalid' ? ex.hints[k] ?? 0 : 0;
    const kinds = level >= 3 ? ['formula', 'terms', 'result', 'note'] : level === 2 ? ['formula', 'terms'] : level === 1 ? ['formula'] : [];
    const lines = exp.lines.filter((l) => kinds.includes(l.kind));
    if (lines.length) {
      const box = el('div', 'aps-explain-lines');
      for (const line of lines) box.append(exLine(line));
      dom.explain.append(box);
    }
    if ((status === 'wrong' || status === 'invalid') && level < 3) {
      const row = el('div', 'aps-hint-steps');
      const b = el('button', 'aps-btn aps-btn-small', t(`exercise.hint${level + 1}`));
      b.type = 'button';
      b.dataset.key = 'ex.hint';
      b.setAttribute('aria-keyshortcuts', '?');
      b.addEventListener('click', () => {
        exHint(sel.panel, sel.row, sel.col);
        dom.explain.querySelector('[data-key="ex.hint"]')?.focus();
      });
      row.append(b, el('span', 'aps-hint', t('exercise.hintKey')));
      dom.explain.append(row);
    }
  }

  /** One line of a cell's arithmetic: MathML (as the panels' formulas), or prose for a note. */
  function exLine(line) {
    const text = plainText(line.text);
    const d = el('div', `aps-ex-${line.kind}`);
    d.dataset.text = text; // the line as text (what the <math> says in its aria-label)
    if (line.kind === 'note') d.textContent = text;
    else d.append(mathLine(line.text));
    return d;
  }

  // the target of the mse loss as numbers (read by the core's parser), for the explanation's terms
  function upstreamTarget() {
    if (state.upstream.kind !== 'mse') return null;
    try { return api.parseMatrix(state.upstream.target); } catch { return null; }
  }

  // the explanation: a third, sticky column on wide screens; docked at the bottom of the steps otherwise
  const wide = window.matchMedia('(min-width: 1400px)');
  function placeExplain() {
    if (!dom.layout) return;
    if (wide.matches) dom.layout.append(dom.explain); else dom.pipeline.append(dom.explain);
    dom.layout.classList.toggle('has-side', wide.matches);
  }
  wide.addEventListener('change', placeExplain);

  // keyboard shortcuts for the steps (not while typing in a field or a grid)
  function onKey(e) {
    if (state.view !== 'step' || e.ctrlKey || e.metaKey || e.altKey) return;
    const tgt = e.target;
    if (tgt.closest('input, textarea, select, .aps-grid, [contenteditable]')) return;
    if (e.key === 'n' || e.key === ']' || e.key === 'N') { e.preventDefault(); go(1); }
    else if (e.key === 'p' || e.key === '[' || e.key === 'P') { e.preventDefault(); go(-1); }
  }
  root.addEventListener('keydown', onKey);

  // bracket text (JSON, NumPy) from a permalink: show it in the grid as numbers when it parses
  function canonicalise() {
    const canon = (s) => {
      if (!/[[\]]/.test(s)) return s;
      try { return api.parseMatrix(s).map((r) => r.map(cellText).join(' ')).join('\n'); } catch { return s; /* keep the text */ }
    };
    for (const k of MATRIX_KEYS) state.matrices[k] = canon(state.matrices[k]);
    for (const k of ['d_out', 'target']) if (state.upstream[k]) state.upstream[k] = canon(state.upstream[k]);
  }

  canonicalise();
  render();

  return {
    getState,
    /** An exercise is being worked on (not solved, answers not shown): its answers are hidden. */
    exerciseOpen: () => quizzing(),
    setState(s) {
      const next = validateState(s);
      if (explicitLang && !(s && s.lang)) next.lang = state.lang;
      state = next;
      i18n = createI18n(state.lang);
      for (const k of Object.keys(optErrors)) delete optErrors[k];
      canonicalise();
      render();
    },
    on(ev, fn) {
      if (!listeners[ev]) throw new Error(`unknown event "${ev}" (use "change", "trace" or "exercise")`);
      listeners[ev].add(fn);
      return () => listeners[ev].delete(fn);
    },
    destroy() {
      destroyed = true;
      if (raf) cancelAnimationFrame(raf);
      root.removeEventListener('keydown', onKey);
      wide.removeEventListener('change', placeExplain);
      for (const v of views.values()) { v.view.destroy(); v.stats?.destroy(); v.numbersView?.destroy(); v.heatView?.destroy(); }
      visObs?.disconnect();
      listeners.change.clear();
      listeners.trace.clear();
      root.replaceChildren();
      root.classList.remove('aps-root', 'aps-embed', 'aps-is-stale', 'aps-step-view');
    },
  };
}
