// attention-stepper.js — <attention-stepper>, the attention stepper as one HTML element for course
// pages: one script tag, one element.
//
//   <script type="module" src="/path/to/attention-stepper.js"></script>
//   <attention-stepper preset="causal-4" lang="zh"></attention-stepper>
//
// Attributes (all optional; docs/embedding.md has the full list):
//   preset    identity | two-token | causal-4 | overflow-naive | overflow-stable | saturate-64 |
//             inclusive | kv-cache                          (default identity)
//   lang      en | zh            mode      x | qkv
//   n-head    1…16               causal    true | false (or present/absent)
//   mask      strict | inclusive base      0…63
//   scale     true | false       softmax   stable | naive
//   seed      integer ≥ 0        view      all | step        step   0…
//   exercise  a ready-made exercise (identity-softmax | causal-row | mask-base | naive-1000 |
//             softmax-backward), or your own exercise's id (letters, digits, _ . -)
//   ask       the cells to ask: "weights" (a whole step), "weights[1,2]", "masked[3,*]" (a row),
//             "scores[*,2]" (a column); rows and columns from 1
//   tolerance "decimals:4 rel:0.001" (default), or any of decimals:N, rel:x, abs:x
//   embed     compact chrome (the component's embed mode)
//   height    a CSS length ("480" = 480px): the element scrolls inside that height
//   tools     "none" hides the share/export toolbar
// Or a JSON child, read once when the element starts (a <script type="application/json"> is data,
// not script: a strict Content-Security-Policy allows it):
//   <attention-stepper>
//     <script type="application/json">{"preset": "identity", "matrices": {"x": "1 0\n0 1"}}</script>
//   </attention-stepper>
// The JSON is either a whole state (it has "version": 1, as a permalink holds) or a spec: any of
// preset, mode, matrices (text or number[][]), x/W_q/…/V at the top level, options or the option
// names at the top level, use_W_o, use_bias (the biases b_q, b_k, b_v, b_o: matrices keys too),
// seed, view, step, head, lang. Precedence: preset < JSON <
// attributes.
//
// Everything is loaded relative to this file (import.meta.url), so the element works from any page
// path; every element on a page shares one wasm instance. Properties: .controller (the stepper's
// {getState, setState, on, exerciseOpen, destroy}: the contract at the top of stepper/stepper.js),
// .state (get/set), .ready (a Promise of the controller).
// Events (bubbling): 'stepper-ready', 'stepper-change' (detail: state), 'stepper-trace' (detail: the
// 'trace' payload), 'stepper-exercise' (detail: the 'exercise' payload, the learner's result at each
// check, reveal or reset: {id, ready, total, right, wrong, empty, solved, revealed, reset?, tol,
// cells: [{panel, row, col, answer, status, correct, expected, value?}]}), 'stepper-error' (detail:
// the error).
import { loadAttention } from './attention.js';
import { el, ensureStylesheet } from './common/ui.js';
import { mountStepper } from './stepper/stepper.js';
import { defaultState, validateState, MATRIX_KEYS } from './common/state.js';
import { presetPatch, PRESETS } from './common/presets.js';
import { EXERCISES, withReadyExercise, readyExercise, parseAsk, parseTol, validateExercise, customId } from './common/exercise.js';
import { attachShareTools, keepInToolbar } from './stepper/share.js';
import { encodeState } from './common/permalink.js';

/** The stylesheets the element needs, next to this file. */
export const STYLESHEETS = [new URL('./stepper/stepper.css', import.meta.url).href, new URL('./stepper/share.css', import.meta.url).href];
/** The playground page a "copy link" points to. */
export const PLAYGROUND_URL = new URL('./index.html', import.meta.url).href;

let attentionPromise = null;
/** The one wasm instance of this page (loaded on first use, then shared by every element). */
export function sharedAttention() {
  if (!attentionPromise) {
    attentionPromise = loadAttention().catch((e) => {
      attentionPromise = null; // let a later element try again
      throw e;
    });
  }
  return attentionPromise;
}

const OPTION_ATTRS = { 'n-head': 'n_head', causal: 'causal', mask: 'mask', base: 'base', scale: 'scale', softmax: 'softmax' };
const OPTION_KEYS = ['n_head', 'causal', 'mask', 'base', 'scale', 'softmax'];
const TOP_KEYS = ['use_W_o', 'use_bias', 'seed', 'view', 'step', 'head', 'lang', 'mode', 'focus'];

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Attribute text → a value: 'true'/'false'/'' → boolean, integers → numbers, else the text. */
function attrValue(name, text) {
  if (text === null) return undefined;
  const s = text.trim();
  if (name === 'causal' || name === 'scale') {
    if (s === '' || s === 'true' || s === name) return true;
    if (s === 'false') return false;
    return s;
  }
  if (/^-?\d+$/.test(s) && ['n_head', 'base', 'seed', 'step', 'head'].includes(name)) return Number(s);
  return s;
}

/** number[][] → matrix text (rows on lines, cells by spaces); text stays text. */
function matrixText(m) {
  if (typeof m === 'string') return m;
  if (Array.isArray(m)) {
    const rows = m.every(Array.isArray) ? m : [m];
    return rows.map((r) => r.map((v) => String(v)).join(' ')).join('\n');
  }
  return undefined;
}

/**
 * The state for a preset id, starting from the defaults (null for an unknown id).
 * @param {string} id
 * @param {object} attention the loaded API (one preset draws seeded random matrices)
 */
export function presetState(id, attention) {
  const s = defaultState();
  const patch = PRESETS.includes(id) ? presetPatch(id, attention) : null;
  if (!patch) return null;
  return {
    ...s,
    ...patch,
    preset: id,
    matrices: { ...s.matrices, ...patch.matrices },
    options: { ...s.options, ...patch.options },
  };
}

/**
 * Merges a spec ({preset, matrices, options, x, n_head, …}) into a state. A whole state (one with
 * version) replaces it.
 */
export function applySpec(state, spec, attention) {
  if (!isObj(spec)) return state;
  if (spec.version !== undefined) return validateState(spec);
  let s = state;
  if (typeof spec.preset === 'string') s = presetState(spec.preset, attention) ?? s;
  s = { ...s, matrices: { ...s.matrices }, options: { ...s.options } };
  let edited = false;
  const mats = { ...(isObj(spec.matrices) ? spec.matrices : {}) };
  for (const k of MATRIX_KEYS) if (spec[k] !== undefined) mats[k] = spec[k];
  for (const [k, v] of Object.entries(mats)) {
    const t = matrixText(v);
    if (t !== undefined && MATRIX_KEYS.includes(k)) {
      s.matrices[k] = t;
      edited = true;
    }
  }
  const opts = { ...(isObj(spec.options) ? spec.options : {}) };
  for (const k of OPTION_KEYS) if (spec[k] !== undefined) opts[k] = spec[k];
  Object.assign(s.options, opts);
  for (const k of TOP_KEYS) if (spec[k] !== undefined) s[k] = spec[k];
  if (spec.W_o !== undefined && spec.use_W_o === undefined) s.use_W_o = true;
  if (['b_q', 'b_k', 'b_v', 'b_o'].some((k) => mats[k] !== undefined) && spec.use_bias === undefined) s.use_bias = true;
  if (edited && typeof spec.preset !== 'string') s.preset = 'custom';
  const x = exerciseOf(spec, s);
  if (x !== undefined) s.exercise = x;
  if (edited && spec.mode === undefined) {
    if (['Q', 'K', 'V'].some((k) => mats[k] !== undefined) && !['x', 'W_q', 'W_k', 'W_v'].some((k) => mats[k] !== undefined)) s.mode = 'qkv';
    else if (['x', 'W_q', 'W_k', 'W_v'].some((k) => mats[k] !== undefined)) s.mode = 'x';
  }
  return validateState(s);
}

/**
 * The exercise of a spec or of attributes: {exercise: id | {id, ask, tol}, ask: text | list,
 * tolerance: text | {decimals, rel, abs}} → an exercise for the state (null for none). A
 * ready-made id without ask is that exercise; ask without an id gets a "custom-…" id. Problems
 * (an unknown panel, a bad tolerance) are reported on the console and left out.
 */
export function exerciseOf({ exercise, ask, tolerance }, state) {
  if (exercise == null && ask == null) return undefined;
  let id = typeof exercise === 'string' ? exercise.trim() : isObj(exercise) ? exercise.id : undefined;
  let list = isObj(exercise) ? exercise.ask : undefined;
  let tol = isObj(exercise) ? exercise.tol ?? exercise.tolerance : undefined;
  if (ask != null) list = ask;
  if (tolerance != null) tol = tolerance;
  if (typeof list === 'string') {
    const p = parseAsk(list);
    for (const e of p.errors) console.warn(`<attention-stepper> ask: ${e}`);
    list = p.ask;
  }
  if (typeof tol === 'string') {
    const p = parseTol(tol);
    for (const e of p.errors) console.warn(`<attention-stepper> tolerance: ${e}`);
    tol = p.tol ?? undefined;
  }
  if (id === '' || id === 'none') return null;
  if (id && EXERCISES[id] && list === undefined) return { ...readyExercise(id), ...(tol ? { tol } : {}) };
  const x = validateExercise({ id: id || customId(state, list ?? []), ask: list ?? [], tol });
  if (!x) console.warn(`<attention-stepper> exercise: "${id}" is not an id (letters, digits, _ . -, at most 64)`);
  return x;
}

/**
 * Makes the component compute its trace again, so listeners added after mountStepper (which
 * computes the first trace while it mounts) receive one: setState with the same state re-renders
 * and emits 'trace' (and no 'change').
 */
export function refreshTrace(controller) {
  controller.setState(controller.getState());
}

/** A CSS length from the height attribute: "480" → "480px"; "30rem", "60vh" kept; junk → null. */
function cssLength(v) {
  if (v == null) return null;
  const s = v.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return `${s}px`;
  if (/^\d+(\.\d+)?(px|rem|em|vh|%)$/.test(s)) return s;
  return null;
}

const OBSERVED = ['preset', 'lang', 'mode', 'n-head', 'causal', 'mask', 'base', 'scale', 'softmax', 'seed', 'view', 'step', 'embed', 'height', 'tools', 'exercise', 'ask', 'tolerance'];

export class AttentionStepperElement extends HTMLElement {
  static get observedAttributes() { return OBSERVED; }

  constructor() {
    super();
    this.controller = null;
    this._tools = null;
    this._offs = [];
    this._starting = null;
    let resolve;
    /** Resolves with the controller once the stepper is mounted. */
    this.ready = new Promise((r) => { resolve = r; });
    this._resolveReady = resolve;
  }

  connectedCallback() {
    if (this.controller || this._starting) return;
    // Children (the JSON script) are parsed after the element opens: start when the document is
    // parsed (module scripts run after that anyway; this covers a synchronous define).
    if (document.readyState === 'loading') {
      document.addEventListener('DOMContentLoaded', () => this.isConnected && this.connectedCallback(), { once: true });
      return;
    }
    this._starting = this._start().finally(() => { this._starting = null; });
  }

  disconnectedCallback() {
    // Moving the element disconnects then reconnects it in one task: only tear down if it stays out.
    queueMicrotask(() => {
      if (!this.isConnected) this._teardown();
    });
  }

  attributeChangedCallback(name, oldValue, newValue) {
    if (!this.controller || oldValue === newValue) return;
    if (name === 'embed' || name === 'tools') {
      this._teardown();
      this.connectedCallback();
      return;
    }
    if (name === 'height') {
      this._applyHeight();
      return;
    }
    sharedAttention().then((attention) => {
      if (!this.controller) return;
      let s = this.controller.getState();
      if (name === 'preset') s = presetState(newValue, attention) ? { ...presetState(newValue, attention), lang: s.lang } : s;
      if (name === 'exercise' && EXERCISES[newValue] && !this.hasAttribute('preset')) s = withReadyExercise(s, newValue, attention);
      s = this._applyAttributes(s, [name]);
      this.controller.setState(s);
    });
  }

  /** The stepper's current state (a JSON-serialisable object), or null before it is mounted. */
  get state() { return this.controller ? this.controller.getState() : null; }
  set state(s) {
    this.ready.then((c) => c.setState(validateState(s)));
  }

  /** A link to the playground page showing this element's current state. */
  get permalink() {
    return this.controller ? PLAYGROUND_URL + encodeState(this.controller.getState()) : PLAYGROUND_URL;
  }

  _inlineSpec() {
    const script = [...this.children].find((c) => c.tagName === 'SCRIPT' && /^application\/(ld\+)?json$/i.test(c.type.trim()));
    if (!script) return null;
    try {
      return JSON.parse(script.textContent);
    } catch (e) {
      console.warn(`<attention-stepper>: the JSON config does not parse (${e.message}); using the attributes only`);
      return null;
    }
  }

  _applyAttributes(state, only = null) {
    const spec = { options: {} };
    const want = (a) => !only || only.includes(a);
    for (const [attr, key] of Object.entries(OPTION_ATTRS)) {
      if (want(attr) && this.hasAttribute(attr)) spec.options[key] = attrValue(key, this.getAttribute(attr));
    }
    for (const a of ['lang', 'mode', 'seed', 'view', 'step']) {
      if (want(a) && this.hasAttribute(a)) spec[a] = attrValue(a, this.getAttribute(a));
    }
    // the exercise: its three attributes together (ask or tolerance alone keeps the id)
    if (['exercise', 'ask', 'tolerance'].some((a) => want(a) && this.hasAttribute(a))) {
      spec.exercise = this.getAttribute('exercise') ?? state.exercise?.id;
      if (this.hasAttribute('ask')) spec.ask = this.getAttribute('ask');
      if (this.hasAttribute('tolerance')) spec.tolerance = this.getAttribute('tolerance');
    }
    return applySpec(state, spec);
  }

  _applyHeight() {
    const body = this._body;
    if (!body) return;
    const h = cssLength(this.getAttribute('height'));
    body.style.maxHeight = h ?? ''; // CSSOM, not a style attribute in markup: allowed by a strict CSP
    this.classList.toggle('apx-limited', Boolean(h));
  }

  async _start() {
    const config = this._inlineSpec();
    const lang = this.getAttribute('lang') ?? (isObj(config) && config.lang) ?? document.documentElement.lang ?? 'en';
    this._body = el('div', 'apx-body');
    const loading = el('p', 'apx-loading', String(lang).startsWith('zh') ? '正在加载注意力核心…' : 'Loading the attention core…');
    this._body.append(loading);
    this._toolSlot = el('div', 'apx-tools');
    // Keep the JSON child (data) where it is; the stepper goes after it.
    this.append(this._toolSlot, this._body);
    this._applyHeight();
    try {
      await Promise.all(STYLESHEETS.map((href) => ensureStylesheet(href, this)));
      const attention = await sharedAttention();
      if (!this.isConnected) return;
      let state = defaultState();
      const preset = this.getAttribute('preset') ?? (isObj(config) && typeof config.preset === 'string' ? config.preset : null);
      if (preset) state = presetState(preset, attention) ?? state;
      // a ready-made exercise brings its own example, unless a preset is given
      const exId = this.getAttribute('exercise') ?? (isObj(config) && typeof config.exercise === 'string' ? config.exercise : null);
      if (!preset && EXERCISES[exId]) state = withReadyExercise(state, exId, attention);
      if (isObj(config)) state = applySpec(state, { ...config, preset: undefined }, attention);
      state = this._applyAttributes(state);
      const embed = this.hasAttribute('embed') && this.getAttribute('embed') !== 'false';
      loading.remove();
      const controller = await mountStepper(this._body, { state, embed, lang: state.lang, attention });
      if (!this.isConnected) {
        controller.destroy();
        return;
      }
      this.controller = controller;
      const fire = (type, detail) => this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true }));
      this._offs = [
        controller.on('change', (s) => fire('stepper-change', s ?? controller.getState())),
        controller.on('trace', (t) => fire('stepper-trace', t)),
        controller.on('exercise', (r) => fire('stepper-exercise', r)),
      ];
      if (this.getAttribute('tools') !== 'none') {
        this._tools = attachShareTools(this._toolSlot, controller, { link: () => this.permalink, panelRoot: this._body });
        this._offs.push(keepInToolbar(this._toolSlot, this._body));
      }
      refreshTrace(controller);
      this._resolveReady(controller);
      fire('stepper-ready', controller);
    } catch (e) {
      loading.remove();
      const msg = `Attention stepper failed to start: ${e?.message ?? e}`;
      this._body.append(el('p', 'apx-failed', msg));
      console.error(msg);
      this.dispatchEvent(new CustomEvent('stepper-error', { detail: e, bubbles: true }));
    }
  }

  _teardown() {
    for (const off of this._offs) if (typeof off === 'function') off();
    this._offs = [];
    this._tools?.destroy();
    this._tools = null;
    try { this.controller?.destroy(); } catch { /* already gone */ }
    this.controller = null;
    this._toolSlot?.remove();
    this._body?.remove();
    this._body = null;
    this.ready = new Promise((r) => { this._resolveReady = r; });
  }
}

if (!customElements.get('attention-stepper')) customElements.define('attention-stepper', AttentionStepperElement);
