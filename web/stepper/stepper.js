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
//     embed,        // optional boolean: compact chrome (no header / footer; the language switch
//                   //   in the toolbar)
//     lang,         // optional 'en' | 'zh' (default: state.lang, else localStorage
//                   //   'attention-playground.lang', else 'en')
//     attention,    // optional: an API already loaded with loadAttention() (shared by instances)
//     answerStore,  // optional: where an exercise's answers are kept, {load(id) → record | null,
//                   //   save(id, record), clear(id)} (record: exercise.js's readAnswers);
//                   //   default localStorage, key 'attention-playground.exercise.<id>'
//   });
//   ctl.getState()        → a deep copy of the current state (plain JSON; see state.js)
//   ctl.setState(state)   → replaces the state (validated) and re-renders; emits no 'change'
//   ctl.on('change', fn)  → fn(state, {push}) after every user change (typing, options, steps,
//                           focus…); push: what the learner made changed on purpose (an example,
//                           a random fill, an option; not a keystroke, not the view): a page that
//                           keeps the state in its URL makes it a new history entry
//   ctl.paintAll()       → paints every shown panel and writes its table now, and renders them while
//                           off screen until the next edit: for a full-page screenshot (the page
//                           paints only the panels near the screen; printing does this by itself)
//   ctl.undo(dir = -1)    → undoes (−1) or redoes (1) the last change the learner made (what
//                           Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y do); false when there is none
//   ctl.on('trace', fn)   → fn(trace) after every new trace computed by the core
//                           (in backward mode, state.direction = 'backward', the trace part of
//                           api.backward's result: the forward values the gradients belong to)
//   ctl.on('exercise', fn) → fn(result) at each check of an exercise's answers (the Check button,
//                           Enter in an answer), when the answers are shown (revealed: true) and
//                           when they are reset (reset: true): {id, ready, total, right, wrong,
//                           empty, solved, revealed, reset?, tol, cells: [{panel, row, col, answer,
//                           status: 'right'|'wrong'|'invalid'|'empty', correct, expected, value?}]}
//                           (row, col from 0; value: the answer read as a number, at a check)
//   ctl.on(...) returns an unsubscribe function; another event name throws
//   ctl.focusCell()       → moves the keyboard focus to the explained cell (state.focus: a link
//                           that names a cell, e.g. a query row of the training page's walk),
//                           scrolled into view; false when there is none (no focus, its panel
//                           not shown in this view)
//   ctl.exerciseOpen()    → true while an exercise is being worked on (not solved, answers not
//                           shown): its answers are hidden from the page
//   ctl.exerciseResult()  → the learner's result as last checked, without the cells: {id, ready,
//                           total, right, wrong, empty, solved, revealed, tol} (empty: the cells
//                           not marked yet), or null without an exercise
//   ctl.destroy()         → removes the DOM and every listener
//
// The component renders into `root` (light DOM). Its stylesheet is web/stepper/stepper.css, which
// mountStepper links once into the root's document or shadow root (CSP: style-src 'self'). No
// inline scripts, handlers or styles. Several instances may live on one page (ids are prefixed).
//
// The parts of the component are modules around one context object (context.js): controls.js
// (toolbar, options, grids), pipeline.js (the steps' panels and their layout), paint.js (a trace
// into the panels), explain-box.js (the cell arithmetic box), exercise-bar.js (the exercise mode's
// page). This file keeps the state, computing it in the core, building the page, and the
// controller above.
// ────────────────────────────────────────────────────────────────────────────────────────────
import { loadAttention, AttentionError } from '../attention.js';
import { el, hide, setText, scrollBehavior, keepFocusClear } from '../common/ui.js';
import { defaultState, validateState, variantSpec, MATRIX_KEYS, MAX_DIM } from '../common/state.js';
import { createI18n, storedLang } from './i18n.js';
import { cellText } from '../common/format.js';
import { createContext, getState, activeInputs, isBackward, destroyViews, OPTION_FIELDS, UPSTREAM_EDITOR } from './context.js';
import { languageSwitch, toolbar, inputColumn, updatePresetNote, fillBiases, sourceLine } from './controls.js';
import { pipelineColumn, onStepKey } from './pipeline.js';
import { paint } from './paint.js';
import { afterFrame } from './text-queue.js';
import { hookPrint, paintAll } from './print.js';
import { showExplain, placeExplain, closeExplain } from './explain-box.js';
import { exerciseData, exerciseBar, exCheck, quizzing, exerciseNow } from './exercise-bar.js';
import { createUndo, noteChange, undoStep, undoKey } from './undo.js';

export { defaultState, validateState };
export { LARGE_T } from './context.js';

let instanceCount = 0;

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

/** Mounts the stepper into root; see the contract above. */
export async function mountStepper(root, options = {}) {
  const api = options.attention ?? await loadAttention();
  ensureStylesheet(root);
  const state = validateState(options.state ?? defaultState());
  const explicitLang = options.lang === 'en' || options.lang === 'zh' ? options.lang : null;
  state.lang = explicitLang ?? (options.state && ['en', 'zh'].includes(options.state.lang) ? options.state.lang : storedLang() ?? 'en');
  const ctx = createContext({ api, root, id: `aps${++instanceCount}-`, embed: !!options.embed, state });
  ctx.answerStore = options.answerStore ?? null;
  ctx.render = () => render(ctx);
  ctx.compute = () => compute(ctx);
  ctx.schedule = () => schedule(ctx);
  ctx.paint = () => paint(ctx);
  ctx.showExplain = () => showExplain(ctx);
  ctx.buildSpec = (forwardOnly) => buildSpec(ctx, forwardOnly);

  root.classList.add('aps-root');
  // the explanation: a third, sticky column on wide screens; docked at the bottom of the steps otherwise
  const wide = window.matchMedia('(min-width: 1400px)');
  const onWide = () => placeExplain(ctx, wide);
  wide.addEventListener('change', onWide);
  ctx.wide = wide;
  // printing: every step's panels shown, painted and written first (print.js)
  const unhookPrint = hookPrint(ctx);
  // keyboard shortcuts: undo and redo, the steps (not while typing in a field or a grid); on a
  // page of its own also while the focus is nowhere (on the body)
  const onKey = (e) => { if (!onUndoKey(ctx, e) && !onEscape(ctx, e)) onStepKey(ctx, e); };
  root.addEventListener('keydown', onKey);
  const onPageKey = (e) => { if (e.target === document.body || e.target === document.documentElement) onKey(e); };
  if (!ctx.embed) document.addEventListener('keydown', onPageKey);
  // the focus never hides under the explanation box docked at the window's bottom, nor under the
  // stale notice at its top (WCAG 2.4.11)
  const unhookFocus = keepFocusClear(root, () => [ctx.dom.explain, ctx.dom.stale]);

  canonicalise(ctx);
  ctx.undo = createUndo(ctx.state);
  render(ctx);

  return {
    getState: () => getState(ctx),
    /** An exercise is being worked on (not solved, answers not shown): its answers are hidden. */
    exerciseOpen: () => quizzing(ctx),
    /** The learner's result as last checked ({id, total, right, wrong, empty, solved, revealed, …}), or null. */
    exerciseResult: () => exerciseNow(ctx),
    setState(s) {
      const next = validateState(s);
      if (explicitLang && !(s && s.lang)) next.lang = ctx.state.lang;
      ctx.state = next;
      ctx.i18n = createI18n(next.lang);
      for (const k of Object.keys(ctx.optErrors)) delete ctx.optErrors[k];
      canonicalise(ctx);
      noteChange(ctx.undo, ctx.state); // a link or the browser's Back: undone like an edit
      render(ctx);
    },
    /** Paints every shown panel now, for a full-page screenshot (print.js paintAll). */
    paintAll: () => paintAll(ctx),
    /** Undoes (dir −1) or redoes (dir 1) the last change the learner made; false when there is none. */
    undo: (dir = -1) => undoRedo(ctx, dir),
    on: (ev, fn) => ctx.events.on(ev, fn),
    focusCell() {
      const f = ctx.state.focus;
      const v = f && ctx.views.get(f.panel);
      if (!v?.view?.cell(f.row, f.col) || v.fig.hidden) return false;
      v.fig.scrollIntoView({ block: 'center' });
      v.view.ensurePainted();
      if (v.view.heat) { v.view.cursor = { r: f.row, c: f.col }; v.view.canvas.focus(); } // a heatmap (large inputs): its cursor
      else v.view.rove(f.row, f.col);
      return true;
    },
    destroy() {
      ctx.destroyed = true;
      if (ctx.raf) cancelAnimationFrame(ctx.raf);
      root.removeEventListener('keydown', onKey);
      document.removeEventListener('keydown', onPageKey);
      wide.removeEventListener('change', onWide);
      unhookPrint();
      unhookFocus();
      destroyViews(ctx.views);
      ctx.visObs?.disconnect();
      ctx.events.clear();
      root.replaceChildren();
      root.classList.remove('aps-root', 'aps-embed', 'aps-is-stale', 'aps-step-view');
    },
  };
}

/** Escape outside a field closes the explanation box (a grid's edit and a field's own Escape come first). */
function onEscape(ctx, e) {
  if (e.key !== 'Escape' || e.defaultPrevented || e.target.closest?.('input, textarea, select')) return false;
  if (!closeExplain(ctx)) return false;
  e.preventDefault();
  return true;
}

// ───────────────────────────── undo and redo ─────────────────────────────
/** Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y outside a text field (whose own undo is the browser's); true when handled. */
function onUndoKey(ctx, e) {
  const dir = undoKey(e);
  if (!dir || e.defaultPrevented) return false;
  if (e.target.closest?.('textarea, input:not([type="checkbox"]):not([type="radio"]), [contenteditable]')) return false;
  e.preventDefault();
  undoRedo(ctx, dir);
  return true;
}

/** Goes one entry back or forward (undo.js), rebuilds the page, keeps the keyboard in its grid. */
function undoRedo(ctx, dir) {
  const next = undoStep(ctx.undo, ctx.state, dir);
  if (!next) return false;
  const td = document.activeElement?.closest?.('td[data-r]');
  const grid = td && ctx.root.contains(td) ? td.closest('[data-matrix]')?.dataset.matrix : null;
  ctx.state = next;
  if (!next.exercise) ctx.authoring = false;
  for (const k of Object.keys(ctx.optErrors)) delete ctx.optErrors[k];
  render(ctx);
  if (grid && ctx.editors.has(grid)) ctx.editors.get(grid).setPos(+td.dataset.r, +td.dataset.c);
  ctx.events.emit('change', getState(ctx), { push: false });
  return true;
}

// ───────────────────────────── building the DOM ─────────────────────────────
function render(ctx) {
  const { root, t, embed } = ctx;
  fillBiases(ctx);
  const activeKey = document.activeElement && root.contains(document.activeElement) ? document.activeElement.dataset.key : null;
  root.replaceChildren();
  root.lang = ctx.state.lang === 'zh' ? 'zh-CN' : 'en';
  root.classList.toggle('aps-embed', embed);
  ctx.editors = new Map();
  destroyViews(ctx.views);
  ctx.views = new Map();
  const dom = {};
  ctx.dom = dom;
  ctx.hover = null;

  const app = el('div', 'aps');
  if (!embed) app.append(skipLink(ctx));
  if (!embed) {
    const header = el('header', 'aps-header');
    const titles = el('div', 'aps-titles');
    titles.append(el('h1', 'aps-title', t('app.title')), el('p', 'aps-lede', t('app.lede')));
    header.append(titles, languageSwitch(ctx));
    app.append(header);
  }
  app.append(toolbar(ctx));
  if (ctx.state.source) app.append(sourceLine(ctx));
  dom.presetNote = el('p', 'aps-preset-note');
  dom.presetNote.id = `${ctx.id}preset-note`;
  app.append(dom.presetNote);
  exerciseData(ctx);
  if (ctx.state.exercise) { dom.presetNote.hidden = true; app.append(exerciseBar(ctx)); }
  root.classList.toggle('aps-authoring', !!ctx.state.exercise && ctx.authoring);

  const layout = el('div', 'aps-layout');
  layout.append(inputColumn(ctx), pipelineColumn(ctx));
  dom.layout = layout;
  placeExplain(ctx, ctx.wide);
  app.append(layout);
  if (!embed) {
    const footer = el('footer', 'aps-footer');
    footer.append(el('p', '', t('app.footer')));
    app.append(footer);
  }
  root.append(app);
  updatePresetNote(ctx);
  compute(ctx);
  if (activeKey) root.querySelector(`[data-key="${CSS.escape(activeKey)}"]`)?.focus();
}

// ───────────────────────────── computing ─────────────────────────────
// An edit is computed and painted at once (the work overlaps the wait for the next frame);
// further edits before that frame are coalesced into one compute at its start.
function schedule(ctx) {
  ctx.root.classList.remove('aps-painted-all'); // (paintAll's, until an edit)
  if (ctx.raf) { ctx.pendingCompute = true; return; }
  compute(ctx, true);
  ctx.raf = requestAnimationFrame(() => {
    ctx.raf = 0;
    if (ctx.pendingCompute && !ctx.destroyed) { ctx.pendingCompute = false; compute(ctx, true); }
  });
}

function clearErrors(ctx) {
  const { dom } = ctx;
  for (const ed of ctx.editors.values()) ed.setError('');
  if (dom.upstreamError) dom.upstreamError.textContent = '';
  for (const k of OPTION_FIELDS) setOptError(ctx, k, '');
  hide(dom.error, true);
  if (dom.error.firstChild) dom.error.replaceChildren();
}

/** An option's error message (its slot), and aria-invalid on its control. */
function setOptError(ctx, key, msg) {
  const e = optErrorSlot(ctx, key);
  if (e) setText(e, msg);
  const c = ctx.root.querySelector(`#${CSS.escape(`${ctx.id}opt-${key}`)}`);
  if (c) { if (msg) c.setAttribute('aria-invalid', 'true'); else if (c.hasAttribute('aria-invalid')) c.removeAttribute('aria-invalid'); }
}

const optErrorSlot = (ctx, key) => ctx.root.querySelector(`#${CSS.escape(`${ctx.id}opt-err-${key}`)}`);

function localized(t, e) {
  const where = e.row ? (e.column ? t('err.cell', { r: e.row, c: e.column }) : t('err.row', { r: e.row })) : '';
  return t('err.wrap', { where, msg: e.message });
}

/** The list of what is wrong, shown while the steps are stale. */
function staleReasons(ctx) {
  const { dom } = ctx;
  const items = [];
  for (const ed of ctx.editors.values()) if (ed.errorEl.textContent) items.push(ed.errorEl.textContent);
  if (dom.upstreamError?.textContent) items.push(dom.upstreamError.textContent);
  for (const k of OPTION_FIELDS) {
    const e = optErrorSlot(ctx, k);
    if (e?.textContent) items.push(e.textContent.includes(k) ? e.textContent : `${k}: ${e.textContent}`);
  }
  if (!dom.error.hidden) items.push(dom.error.textContent);
  dom.staleList.replaceChildren(...items.map((x) => el('li', '', x)));
}

/** Stale: the input is invalid, so no number of the last trace stays on the page. */
function setStale(ctx, stale) {
  const { dom } = ctx;
  if (stale) staleReasons(ctx);
  ctx.root.classList.toggle('aps-is-stale', stale);
  hide(dom.stale, !stale);
  hide(dom.steps, stale);
  hide(dom.summary, stale);
  hide(dom.heads, stale || !ctx.trace || ctx.trace.n_head < 2);
  hide(dom.warnings, stale || !dom.warnings.childElementCount);
  if (stale) hide(dom.large, true);
  hide(dom.explain, stale);
  if (dom.gcBox) hide(dom.gcBox.el, stale);
  if (dom.bIntro) hide(dom.bIntro, stale);
  if (stale) { ctx.trace = null; ctx.bw = null; dom.warnings.replaceChildren(); dom.summary.replaceChildren(); dom.warningsKey = null; dom.summaryKey = null; }
}

/** The core's spec of the state: the options and the grids' text (and the loss in backward mode). */
function buildSpec(ctx, forwardOnly = false) {
  const spec = { ...ctx.state.options, ...variantSpec(ctx.state.variants, ctx.state.options.n_head) };
  for (const k of activeInputs(ctx)) spec[k] = ctx.editors.get(k).text();
  if (isBackward(ctx) && !forwardOnly) {
    const u = ctx.state.upstream;
    if (u.kind === 'd_out') spec.d_out = u.d_out;
    else if (u.kind === 'mse') { spec.loss = 'mse'; spec.target = u.target; }
    else spec.loss = 'sum';
  }
  return spec;
}

// a blank dOut / target (just chosen, or reset) becomes ones / zeros of out's shape
function fillUpstream(ctx) {
  const u = ctx.state.upstream;
  const name = UPSTREAM_EDITOR[u.kind];
  if (!name || u[name].trim() !== '') return;
  let out;
  try { out = ctx.api.trace(buildSpec(ctx, true)).out; } catch { return; } // the forward error will show
  const v = name === 'd_out' ? '1' : '0';
  u[name] = out.map((r) => r.map(() => v).join(' ')).join('\n');
  ctx.editors.get(name)?.setText(u[name]);
}

/** The page's own checks (options, sizes); false (and the page stale) when one fails. */
function pageChecks(ctx) {
  let bad = false;
  for (const [k, msg] of Object.entries(ctx.optErrors)) { setOptError(ctx, k, msg); bad = true; }
  for (const [name, ed] of ctx.editors) {
    if (ed.rows > MAX_DIM || ed.cols > MAX_DIM) {
      ed.setError(ctx.t('err.limit', { name, rows: ed.rows, cols: ed.cols, max: MAX_DIM }));
      bad = true;
    }
  }
  return !bad;
}

/** The core's error, beside the field at fault (a grid, an option, the loss) or in the banner. */
function showCoreError(ctx, e) {
  const { dom, editors } = ctx;
  const err = e instanceof AttentionError ? e : new AttentionError(String(e?.message ?? e), {});
  const msg = localized(ctx.t, err);
  if (editors.has(err.field)) editors.get(err.field).setError(msg, err.row, err.column);
  else if (OPTION_FIELDS.includes(err.field) && optErrorSlot(ctx, err.field)) setOptError(ctx, err.field, msg);
  else if ((err.field === 'loss' || err.field === 'target' || err.field === 'd_out') && dom.upstreamError) dom.upstreamError.textContent = msg;
  else {
    dom.error.hidden = false;
    dom.error.textContent = msg;
  }
}

/**
 * The status line: "computed in 3.2 ms" (later: after an edit's frame, with the tables' text, so
 * that frame lays out the cell editor alone, not the document), or at once ("Waiting for valid
 * input"; a later write replaces one still waiting).
 */
function setStatus(ctx, text, later = false) {
  ctx.statusNext = later ? text : null;
  if (!later) { setText(ctx.dom.status, text); return; }
  afterFrame(() => {
    if (ctx.statusNext !== text || ctx.destroyed) return;
    ctx.statusNext = null;
    setText(ctx.dom.status, text);
  });
}

/**
 * Computes the state in the core and paints it; an invalid input makes the page stale instead.
 * edit: an edit's compute (schedule), whose status line waits for the frame (setStatus).
 */
function compute(ctx, edit = false) {
  const { dom, api, gc } = ctx;
  clearErrors(ctx);
  const t0 = performance.now();
  // 1. the page's own checks: option values, the size limit per matrix
  if (!pageChecks(ctx)) {
    setStale(ctx, true);
    setStatus(ctx, ctx.t('status.invalid'));
    return;
  }
  // 2. the core
  let tr;
  try {
    if (isBackward(ctx)) {
      fillUpstream(ctx);
      const spec = buildSpec(ctx);
      ctx.bw = api.backward(spec);
      tr = ctx.bw.trace;
      const key = JSON.stringify(spec);
      if (gc.key !== key) { gc.key = key; gc.result = null; dom.gcBox?.el.querySelector('.aps-gc-out')?.replaceChildren(); }
    } else {
      ctx.bw = null;
      tr = api.trace(buildSpec(ctx));
    }
  } catch (e) {
    showCoreError(ctx, e);
    setStale(ctx, true);
    setStatus(ctx, ctx.t('status.invalid'));
    return;
  }
  ctx.trace = tr;
  if (ctx.state.head >= tr.n_head) ctx.state.head = 0;
  const { ex } = ctx;
  if (ex?.checkedKey && ex.checkedKey !== JSON.stringify(buildSpec(ctx))) { ex.results = {}; ex.checkedKey = null; } // other numbers: check again
  paint(ctx);
  if (ex?.pendingCheck) { ex.pendingCheck = false; exCheck(ctx, false); } // restored answers: their marks
  setStale(ctx, false);
  const ms = performance.now() - t0;
  setStatus(ctx, ctx.t('status.ok', { ms: ms.toFixed(1), v: api.version }), edit);
  ctx.events.emit('trace', tr);
}

// bracket text (JSON, NumPy) from a permalink: show it in the grid as numbers when it parses
function canonicalise(ctx) {
  const s = ctx.state;
  const canon = (text) => {
    if (!/[[\]]/.test(text)) return text;
    try { return ctx.api.parseMatrix(text).map((r) => r.map(cellText).join(' ')).join('\n'); } catch { return text; /* keep the text */ }
  };
  for (const k of MATRIX_KEYS) s.matrices[k] = canon(s.matrices[k]);
  for (const k of ['d_out', 'target']) if (s.upstream[k]) s.upstream[k] = canon(s.upstream[k]);
}

/** The first Tab stop of the page's stepper: a link past the inputs to the steps, seen when focused. */
function skipLink(ctx) {
  const a = el('a', 'aps-skip', ctx.t('ui.skipToSteps'));
  a.href = `#${ctx.id}steps`;
  a.dataset.key = 'skip-to-steps';
  // the page's hash holds the permalink state: move the focus without touching it
  a.addEventListener('click', (e) => {
    e.preventDefault();
    ctx.dom.pipeline.focus({ preventScroll: true });
    ctx.dom.pipeline.scrollIntoView({ block: 'start', behavior: scrollBehavior() });
  });
  return a;
}
