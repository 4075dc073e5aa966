// context.js — the one context object (ctx) of a mounted stepper: everything the parts of the
// component share, as named fields, and the questions asked of it (which inputs are in use, which
// steps show, heatmaps or numbers). mountStepper (stepper.js) makes one per instance; every
// function of controls.js, pipeline.js, paint.js, explain-box.js and exercise-bar.js takes it as
// its first argument and reads the fields when it runs (render() replaces dom, editors and views;
// setState replaces state), never a copy kept from an earlier render.
//
// The modules import one another downwards only: exercise-bar ← explain-box ← pipeline ← paint ←
// controls ← stepper. The few calls that go back up (a rebuild, a compute, a repaint, the
// explanation) are ctx's verbs, which stepper.js installs: ctx.render(), ctx.compute(),
// ctx.schedule(), ctx.paint(), ctx.showExplain(), ctx.buildSpec().
//
// Limits: no DOM of its own; the fields are the component's, not an API for other code.
import { BIAS_OF, MLA_KEYS } from '../common/state.js';
import { tokenMark } from '../common/export.js';
import { createUndo, noteChange } from './undo.js';
import { createI18n } from './i18n.js';
import { visibleBSteps } from './backward.js';
import { visibilityObserver } from './panels.js';

/**
 * The forward steps: their panels, and the panels each one is computed from. when(options): a
 * modern variant's step, shown only with its option on (state.variants) (grouped-query heads, RoPE, ALiBi's bias,
 * the sliding window's mask, latent attention's latent and absorbed scores, FlashAttention's tiles).
 */
export const STEPS = [
  { id: 'latent', panels: ['latent'], from: [], when: (o) => o.mla },
  { id: 'qkv', panels: ['q', 'k', 'v'], from: ['latent'] },
  { id: 'gqa', panels: ['kv_heads'], from: ['k', 'v'], when: (o) => o.n_kv_head > 0 },
  { id: 'rope', panels: ['rope_angles', 'q_rot', 'k_rot'], from: ['q', 'k'], when: (o) => o.rope !== 'none' },
  { id: 'scores', panels: ['scores'], from: ['q', 'k', 'q_rot', 'k_rot'] },
  { id: 'absorbed', panels: ['q_latent', 'scores_absorbed'], from: ['q', 'latent', 'scores'], when: (o) => o.mla },
  { id: 'scaled', panels: ['scaled'], from: ['scores'] },
  { id: 'alibi', panels: ['bias'], from: [], when: (o) => o.alibi },
  { id: 'window', panels: ['mask'], from: [], when: (o) => o.window > 0 },
  { id: 'masked', panels: ['masked'], from: ['scaled', 'bias', 'mask'] },
  { id: 'softmax', panels: ['weights', 'weights-heads'], from: ['masked'] },
  { id: 'context', panels: ['context'], from: ['weights', 'v'] },
  { id: 'flash', panels: ['flash_m', 'flash_alpha', 'flash_l', 'flash_context'], from: ['masked', 'v', 'context'], when: (o) => o.flash_block_q > 0 && o.flash_block_k > 0 },
  { id: 'concat', panels: ['concat'], from: ['context'] },
  { id: 'out', panels: ['out'], from: ['concat'] },
];
/** The forward panels of one head (their title names the head when n_head > 1). */
export const HEAD_PANELS = ['q', 'k', 'v', 'q_rot', 'k_rot', 'scores', 'scaled', 'bias', 'masked', 'weights', 'context',
  'q_latent', 'scores_absorbed', 'flash_m', 'flash_alpha', 'flash_l', 'flash_context'];
export const BIASES = Object.keys(BIAS_OF);
/** The option fields of the options box (their errors have a slot of their own). */
export const OPTION_FIELDS = ['n_head', 'causal', 'mask', 'base', 'scale', 'softmax', 'seed',
  'rope', 'rope_base', 'rope_dims', 'alibi', 'alibi_slopes', 'n_kv_head', 'window', 'sinks', 'flash_block_q', 'flash_block_k', 'mla'];
/** The upstream kinds typed in a grid → that grid's name. */
export const UPSTREAM_EDITOR = { d_out: 'd_out', mse: 'target' };
/** Past this many tokens (T or T_total) the steps show heatmaps only, unless asked for numbers. */
export const LARGE_T = 32;

/** The public events and their listeners: on(event, fn) → off; emit; clear (all of them). */
export function createEvents(names) {
  const listeners = Object.fromEntries(names.map((n) => [n, new Set()]));
  const q = (n) => `"${n}"`;
  return {
    on(ev, fn) {
      if (!listeners[ev]) throw new Error(`unknown event "${ev}" (use ${names.slice(0, -1).map(q).join(', ')} or ${q(names.at(-1))})`);
      listeners[ev].add(fn);
      return () => listeners[ev].delete(fn);
    },
    /** Calls every listener of ev; one that throws does not stop the others (its error is rethrown later). */
    emit(ev, ...args) {
      for (const fn of listeners[ev]) { try { fn(...args); } catch (e) { setTimeout(() => { throw e; }); } }
    },
    clear() { for (const set of Object.values(listeners)) set.clear(); },
  };
}

/**
 * A new context. api: the loaded core; root: the element the stepper renders into; id: the
 * instance's id prefix; embed: compact chrome; state: a valid state (its lang set).
 */
export function createContext({ api, root, id, embed, state }) {
  const ctx = {
    api, root, id, embed,
    state, // the state (state.js); replaced whole by setState and by a ready-made exercise
    i18n: createI18n(state.lang), // replaced with the language
    t: (k, p) => ctx.i18n.t(k, p),
    events: createEvents(['change', 'trace', 'exercise']),
    // DOM references, rebuilt by render(): the named elements, the input grids, the panels
    dom: {},
    editors: new Map(), // input name → MatrixEditor (grid.js)
    views: new Map(), // panel → {fig, view, stats?, title, fslot, shape, note, grad, viewOpts, askButton, …}
    trace: null, // the core's last trace (null while the input is invalid)
    bw: null, // the backward result {trace, loss, grads} in backward mode
    gc: { key: '', result: null, pick: null, eps: 0.01 }, // the gradient check (kept while the spec is the same)
    hover: null, // the cell under the mouse {panel, row, col, head?}: explained instead of state.focus
    optErrors: {}, // option key → its message, while the typed value is invalid
    undo: createUndo(state), // undo and redo over what the learner made (undo.js)
    raf: 0, // the frame that ends the current compute (schedule)
    pendingCompute: false, // an edit came before that frame: compute again at its start
    destroyed: false,
    visObs: visibilityObserver(), // panels are painted only near the screen (panels.js)
    wide: null, // the media query of the wide layout (the explanation in a third column), set by mountStepper
    // the exercise mode: authoring (choosing cells, page-local) and the learner's work on the
    // current exercise (answers, hint levels, results; kept in localStorage per exercise id)
    authoring: false,
    ex: null,
    answerStore: null, // where the exercise's answers are kept (mountStepper's answerStore; null: localStorage)
    shown: {}, // panel → the matrix it shows now (the values the answers are checked against)
    // the verbs, installed by mountStepper (see the top of this file)
    render: null, compute: null, schedule: null, paint: null, showExplain: null, buildSpec: null,
  };
  return ctx;
}

/** A deep copy of the state (plain JSON). */
export const getState = (ctx) => JSON.parse(JSON.stringify(ctx.state));
/**
 * A change made by the user: 'change' with the new state and {push}: true when what the learner
 * made changed on purpose (an example, a random fill, an option: a new entry in the browser's
 * history), false for a keystroke or the view. typing: the cell or field being typed in, so that
 * its keystrokes make one undo entry (undo.js).
 */
export function userChange(ctx, typing = null) {
  const made = noteChange(ctx.undo, ctx.state, typing);
  ctx.events.emit('change', getState(ctx), { push: made && !typing });
}

/** A change that rebuilds the page: mutate(state), render, then 'change'. */
export function rebuild(ctx, mutate) {
  mutate(ctx.state);
  ctx.render();
  userChange(ctx);
}

/** A change of an option the panels show: mutate(state), compute, then 'change'. */
export function recompute(ctx, mutate) {
  mutate(ctx.state);
  ctx.compute();
  userChange(ctx);
}

/** Multi-head latent attention is on (it takes x, so the x mode only). */
export const mlaOn = (s) => s.variants.mla && s.mode === 'x';

/**
 * The inputs in use, each bias after its weights: x, W_q, b_q, W_k, b_k, …, W_o, b_o; with latent
 * attention x, W_q, W_dkv, W_uk, W_uv (W_kr, W_qr with RoPE), W_o, b_o (it has no b_q, b_k, b_v).
 */
export function activeInputs(ctx) {
  const s = ctx.state;
  const b = (name) => (s.use_bias ? [name] : []);
  const mla = ['x', 'W_q', ...MLA_KEYS.filter((k) => s.variants.rope !== 'none' || (k !== 'W_kr' && k !== 'W_qr'))];
  const names = mlaOn(s) ? mla : s.mode === 'x' ? ['x', 'W_q', ...b('b_q'), 'W_k', ...b('b_k'), 'W_v', ...b('b_v')] : ['Q', 'K', 'V'];
  if (s.use_W_o) names.push('W_o', ...b('b_o'));
  return names;
}

/** A row's label from a token: its number and the token with spaces made visible ("3 ␣the"). */
export const tokenRowLabel = (i, token) => `${i + 1} ${tokenMark(token)}`;

/**
 * The token labels of the axes when the matrices came from a model on a prompt (state.source) and
 * have a row per token: {keys: T_total labels, queries: T labels (keys from base on)}; else null.
 */
export function tokenAxes(ctx, T_total) {
  const tokens = ctx.state.source?.tokens;
  if (!tokens?.length || tokens.length !== T_total) return null;
  const keys = tokens.map((tok, j) => tokenRowLabel(j, tok));
  return { keys, queries: keys.slice(ctx.state.options.base) };
}

export const isBackward = (ctx) => ctx.state.direction === 'backward';
/** The biases in use. */
export const biases = (ctx) => activeInputs(ctx).filter((n) => BIASES.includes(n));
/** The forward steps shown (·W_o only with W_o). */
export const forwardSteps = (ctx) => STEPS.filter((s) => (s.id !== 'out' || ctx.state.use_W_o) && (!s.when || s.when({ ...ctx.state.variants, mla: mlaOn(ctx.state) })));
/** The steps of the current direction. */
export const visibleSteps = (ctx) => (isBackward(ctx) ? visibleBSteps(ctx.state.mode, ctx.state.use_W_o, biases(ctx), variantsOn(ctx.state)) : forwardSteps(ctx));
/** The variants whose backward steps show: { rope, flash, mla } (backward.js:visibleBSteps). */
export const variantsOn = (s) => ({ rope: s.variants.rope !== 'none', flash: s.variants.flash_block_q > 0 && s.variants.flash_block_k > 0, mla: mlaOn(s) });
/** What decides which forward values a gradient reads (backward.js). */
export const readCtx = (ctx) => ({ upstream: ctx.state.upstream.kind, useWo: ctx.state.use_W_o, rope: ctx.state.variants.rope !== 'none' });
/** Large input: the tokens, when past LARGE_T (else 0). */
export const largeT = (ctx) => (ctx.trace ? Math.max(ctx.trace.T, ctx.trace.T_total) : 0);
/** The steps show heatmaps only: asked for, or a large input that did not ask for numbers. */
export const heatOnly = (ctx) => ctx.state.display === 'heatmap' || (ctx.state.display === 'auto' && largeT(ctx) > LARGE_T);
/**
 * In heatmaps-only mode, which panels lose their numbers: all when asked for; for a large input
 * the wide or big ones (T × T_total, …), while a tall narrow one (40 × 2 queries) keeps them.
 */
export const heatPanel = (ctx, m) => ctx.state.display === 'heatmap' || (m[0]?.length ?? 0) > LARGE_T || m.length * (m[0]?.length ?? 0) > 512;
/** Every head's weights side by side (only with several heads). */
export const headsSide = (ctx) => ctx.state.head_view === 'side' && !!ctx.trace && ctx.trace.n_head > 1;

/** Destroys a panel's views (numbers, row statistics, heatmap). */
export function destroyViews(views) {
  for (const v of views.values()) { v.view.destroy(); v.stats?.destroy(); v.numbersView?.destroy(); v.heatView?.destroy(); }
}
