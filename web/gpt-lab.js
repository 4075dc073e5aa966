// gpt-lab.js — <gpt-lab>, the training page (web/train/) as one HTML element for course pages: a
// tiny GPT trained in a Web Worker, with the page's own sections (the same modules, mounted with
// explicit inputs) inside a shadow root, so its styles and ids stay in the element and the page's
// styles stay out of it.
//
//   <script type="module" src="/path/to/gpt-lab.js"></script>
//   <gpt-lab task="copy" steps="500" seed="7" sections="training maps" layer="2" head="3" autostart></gpt-lab>
//
// Attributes (all optional; docs/embedding.md has the full list). The run, as the training page's
// link spells it (web/train/config.js; a bad value is shown beside its field, as on the page):
//   task        copy | reverse | sort | induction | sums | grammar | text    (default copy)
//   text        the text to learn (with task="text", or alone: then task is text)
//   preset      tiny | small      n-layer n-head n-embd block-size (each overrides the preset's)
//   steps seed lr batch-size eval-interval sample-every     mask strict|inclusive   softmax stable|naive
//   prompt      the maps' prompt  gen-prompt  the generation's prompt        lang  en | zh
// The element:
//   sections    which sections show, in the page's order: data training experiments maps next
//               surprisal generation checkpoints (default "training maps generation")
//   autostart   trains as soon as the core has loaded (a lab without the training section, which
//               holds the Start button, starts by itself)
//   layer head  the map shown enlarged once the run ends (1-based; default 1 1)
// Properties and methods: .ready (a Promise, resolved once the core has loaded), .status (loading |
// idle | starting | training | paused | done | diverged | error | destroyed, also the host's
// data-status), .start(), .pause(), .destroy() (terminates the element's workers; the element
// shows nothing more). Removing the element from the document destroys it too.
// Events (bubbling; docs/embedding.md lists the detail fields): 'gpt-lab-ready' {tasks},
// 'gpt-lab-progress' {step, steps, loss, val, tokensPerSec, elapsed}, 'gpt-lab-done' {step,
// steps, loss, val}, 'gpt-lab-diverged' {step, steps, loss, message}, 'gpt-lab-maps' {layer, head,
// step, prompt}, 'gpt-lab-error' {message, fields}.
//
// The worker and the wasm are found relative to this file (import.meta.url), so the element works
// from any folder. Limits: a browser runs a worker only from the page's own origin, so serve these
// files from the course site (or use the iframe page, lab-embed.html, from another origin). Changing
// a run attribute after the element started replaces the form's settings (the run in progress goes
// on; Start makes the new one).
import { el, ensureStylesheet } from './common/ui.js';
import { defaultState, decodeHash, encodeHash } from './train/config.js';
import { startWorker } from './train/client.js';
import { createContext } from './train/context.js';
import { createI18n, loadStrings, stringsLoaded } from './train/i18n.js';
import { makeSections, assemble, LAB_SECTIONS } from './train/sections.js';

/** The stylesheets of the shadow root, next to this file (each written as new URL('…',
 * import.meta.url) so that the package's walk, scripts/pack.mjs, finds and ships it). */
export const STYLESHEETS = [
  new URL('./stepper/stepper.css', import.meta.url).href,
  new URL('./gen/vendor/uplot.min.css', import.meta.url).href,
  new URL('./train/train.css', import.meta.url).href,
  new URL('./gpt-lab.css', import.meta.url).href,
];
/** The training page, where "copy link" points. */
export const TRAIN_PAGE_URL = new URL('./train/index.html', import.meta.url).href;

/** The sections a lesson may show, in the page's order (train/sections.js declares them, with the page). */
export const SECTIONS = LAB_SECTIONS;
export const DEFAULT_SECTIONS = ['training', 'maps', 'generation'];
const SECTION_ALIASES = { 'next-token': 'next', train: 'training', map: 'maps', gen: 'generation', checkpoint: 'checkpoints' };

/** The run's attributes, each with its key in the page's link (config.js). */
export const RUN_ATTRS = {
  task: 'task', text: 'text', 'text-name': 'text_name', preset: 'preset', mask: 'mask', softmax: 'softmax',
  'n-layer': 'n_layer', 'n-head': 'n_head', 'n-embd': 'n_embd', 'block-size': 'block_size',
  steps: 'steps', seed: 'seed', lr: 'lr', 'batch-size': 'batch_size', 'eval-interval': 'eval_interval', 'sample-every': 'sample_every',
  prompt: 'prompt', 'gen-prompt': 'gen_prompt', lang: 'lang',
};
const ELEMENT_ATTRS = ['sections', 'autostart', 'layer', 'head'];

/**
 * The training page's state from run parameters {key: text} (the attributes, or an iframe's hash),
 * read as the page reads its link: unknown keys ignored, bad values kept to be shown with their
 * message. A text alone makes the task 'text'.
 * @param {Record<string, string>} params keys as in RUN_ATTRS (either spelling)
 * @param {string} [fallbackLang] when params name no language
 */
export function labState(params, fallbackLang = 'en') {
  const link = new URLSearchParams();
  for (const [attr, key] of Object.entries(RUN_ATTRS)) {
    const v = params[attr] ?? params[key];
    if (v != null && key !== 'text') link.set(key, v);
  }
  const text = params.text;
  if (text != null && !link.has('task')) link.set('task', 'text');
  const state = decodeHash(`#${link.toString().replace(/\+/g, '%20')}`) ?? defaultState();
  if (text != null) state.text = String(text); // set directly: a link's length limit is not the element's
  if (params.lang == null) state.lang = fallbackLang === 'zh' ? 'zh' : 'en';
  return state;
}

/** "training maps" → ['training', 'maps'] in the page's order (unknown names warned of and left out). */
export function parseSections(text) {
  if (text == null) return DEFAULT_SECTIONS.slice();
  const want = new Set();
  for (const w of String(text).toLowerCase().split(/[\s,]+/).filter(Boolean)) {
    const name = SECTION_ALIASES[w] ?? w;
    if (name === 'all') SECTIONS.forEach((k) => want.add(k));
    else if (SECTIONS.includes(name)) want.add(name);
    else console.warn(`<gpt-lab> sections: "${w.slice(0, 40)}" is not a section (${SECTIONS.join(', ')}): left out`);
  }
  return SECTIONS.filter((k) => want.has(k));
}

/** A 1-based index attribute → 0-based (null when absent or not a whole number ≥ 1). */
function index1(text, name) {
  if (text == null) return null;
  const s = String(text).trim();
  if (/^\d+$/.test(s) && Number(s) >= 1) return Number(s) - 1;
  console.warn(`<gpt-lab> ${name}: "${s.slice(0, 20)}" is not a whole number from 1: the first is shown`);
  return null;
}

const on = (v) => v != null && v !== 'false' && v !== '0';

export class GptLabElement extends HTMLElement {
  static get observedAttributes() { return [...Object.keys(RUN_ATTRS), ...ELEMENT_ATTRS]; }

  constructor() {
    super();
    this._lab = null; // {ctx, sections, offs, shadow root's app}
    this._destroyed = false;
    this._newReady();
  }

  _newReady() {
    this.ready = new Promise((resolve, reject) => { this._ready = { resolve, reject }; });
    this.ready.catch(() => {}); // an unwatched failure is reported by the event, not as unhandled
  }

  /** The run's status (see the top of this file). */
  get status() {
    if (this._destroyed) return 'destroyed';
    return this._lab?.ctx.rt.status ?? 'loading';
  }

  /** The settings as the training page's link (#task=…), '' for the defaults. */
  get link() {
    return this._lab ? TRAIN_PAGE_URL + encodeHash(this._lab.ctx.state) : TRAIN_PAGE_URL;
  }

  connectedCallback() {
    if (this._lab || this._destroyed) return;
    this._mount();
  }

  disconnectedCallback() {
    // moving the element disconnects and reconnects it in one task: destroy only if it stays out
    queueMicrotask(() => { if (!this.isConnected) this.destroy(); });
  }

  attributeChangedCallback(name, oldValue, newValue) {
    const lab = this._lab;
    if (!lab || oldValue === newValue) return;
    if (name === 'layer' || name === 'head') { this._zoom(); return; }
    if (name === 'autostart') return;
    if (name !== 'sections') this._follow();
    else this._render();
  }

  /** The settings from the attributes, once their language's strings are loaded (Chinese: on first use). */
  _follow() {
    const lab = this._lab;
    const state = labState(this._params(), this._docLang());
    if (!stringsLoaded(state.lang)) {
      // the attributes are read again then: the latest ones win
      loadStrings(state.lang).then(() => { if (!this._destroyed) this._follow(); });
      return;
    }
    lab.ctx.setState(state);
    lab.sections.maps.followTask();
    lab.sections.generation.followTask();
    lab.sections.next.followTask();
    this._render();
  }

  /** Starts (or restarts) a run from the settings; resolves once the worker has it, or it was refused. */
  async start() {
    const lab = await this._live();
    await settled(lab.ctx);
    await lab.sections.training.start();
    const { rt } = lab.ctx;
    if (rt.status === 'idle' && rt.message) {
      const v = lab.ctx.validated();
      const fields = Object.keys({ ...v.errors, ...rt.errors });
      const words = fields.map((k) => `${k}: ${rt.errors[k] ?? lab.ctx.t(v.errors[k].key, { ...v.errors[k].params, name: k })}`);
      this._fire('gpt-lab-error', { message: [rt.message.text, ...words].join(' '), fields });
    }
    this._status();
  }

  /** Pauses the run. */
  async pause() {
    const lab = await this._live();
    await lab.sections.training.pause();
    this._status();
  }

  /** The lab once the core has loaded; rejects if the element was destroyed. */
  async _live() {
    await this.ready;
    if (!this._lab) throw new Error('the lab was destroyed');
    return this._lab;
  }

  /** Stops the element for good: its workers terminated, its contents gone. */
  destroy() {
    if (this._destroyed) return;
    this._destroyed = true;
    const lab = this._lab;
    this._lab = null;
    if (lab) {
      for (const off of lab.offs) off();
      lab.sections.generation.stop();
      lab.sections.runs.destroy();
      for (const s of Object.values(lab.sections)) s.chart?.destroy();
      lab.ctx.worker.terminate();
      lab.expWorker?.terminate();
    }
    this.shadowRoot?.replaceChildren();
    this._ready.reject(new Error('the lab was destroyed')); // (if it was still loading)
    this.ready = Promise.reject(new Error('the lab was destroyed'));
    this.ready.catch(() => {});
    this.dataset.status = 'destroyed';
  }

  _params() {
    const p = {};
    for (const a of Object.keys(RUN_ATTRS)) if (this.hasAttribute(a)) p[a] = this.getAttribute(a);
    return p;
  }

  _docLang() {
    return String(document.documentElement.lang || 'en').toLowerCase().startsWith('zh') ? 'zh' : 'en';
  }

  _fire(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true }));
  }

  _status() {
    if (!this._destroyed) this.dataset.status = this.status;
  }

  async _mount() {
    const root = this.shadowRoot ?? this.attachShadow({ mode: 'open' });
    const app = el('div', 'aps-root tr-root gl-root');
    app.dataset.status = 'loading';
    let state = labState(this._params(), this._docLang());
    if (!stringsLoaded(state.lang)) {
      await loadStrings(state.lang); // Chinese: fetched on first use, before the first words
      if (this._destroyed) return;
      state = labState(this._params(), this._docLang()); // (attributes changed meanwhile)
    }
    const { t } = createI18n(state.lang);
    app.append(el('p', 'gl-boot', t('status.loading')));
    app.setAttribute('role', 'region');
    app.setAttribute('aria-label', t('app.title'));
    root.replaceChildren(app);
    this.dataset.status = 'loading';
    await Promise.all(STYLESHEETS.map((href) => ensureStylesheet(href, app)));
    if (this._destroyed) return;
    const lab = { offs: [], expWorker: null };
    const route = (worker, fn) => { lab.offs.push(worker.on(fn)); return worker; };
    const ctx = createContext({
      app,
      state,
      worker: startWorker(),
      startExpWorker: () => (lab.expWorker = route(startWorker(), (m) => lab.sections.experiments.onMessage(m))),
      render: () => this._render(),
    });
    // the host page's address is the course's: the lab writes nothing into it
    ctx.writeHash = () => {};
    ctx.linkUrl = () => this.link;
    lab.ctx = ctx;
    lab.sections = makeSections(ctx, SECTIONS);
    ctx.sections = lab.sections;
    this._lab = lab;
    route(ctx.worker, (m) => { lab.sections.training.onMessage(m); this._onWorker(m); });
    this._render();
    try {
      const { tasks } = await ctx.worker.call('init');
      if (this._destroyed) return;
      ctx.rt.tasks = tasks;
      ctx.rt.status = 'idle';
      app.dataset.status = 'ready';
      for (const k of ['maps', 'generation', 'next']) lab.sections[k].followTask();
      lab.sections.data.refresh();
      ctx.refreshRun();
      this._status();
      this._ready.resolve(this);
      this._fire('gpt-lab-ready', { tasks: tasks.map((x) => x.name ?? x) });
    } catch (e) {
      if (this._destroyed) return;
      ctx.rt.status = 'error';
      app.dataset.status = 'failed';
      ctx.rt.message = { kind: 'error', text: ctx.t('boot.failed', { message: e.message }) };
      lab.sections.training.refresh();
      this._status();
      this._ready.reject(e);
      this._fire('gpt-lab-error', { message: ctx.rt.message.text, fields: [] });
      return;
    }
    const shown = parseSections(this.getAttribute('sections'));
    if (on(this.getAttribute('autostart')) || !shown.includes('training')) this.start().catch(() => {}); // (destroyed meanwhile)
  }

  /** The sections the attribute names, in the page's order; the others are made but not shown. */
  _render() {
    const lab = this._lab;
    if (!lab) return;
    const { ctx, sections } = lab;
    const root = this.shadowRoot;
    const focusId = root.activeElement?.id;
    const shown = parseSections(this.getAttribute('sections'));
    const { top, rest } = assemble(ctx, shown, { numbered: false }); // a lesson's few sections: no numbers
    const page = el('div', 'aps tr-page gl-page');
    page.lang = ctx.state.lang === 'zh' ? 'zh-CN' : 'en';
    if (top?.childElementCount === 1) top.classList.add('gl-single');
    if (top) page.append(top);
    page.append(...rest);
    ctx.app.replaceChildren(page);
    ctx.app.dataset.sections = shown.join(' ');
    for (const k of shown) sections[k].mounted?.();
    if (shown.includes('runs')) sections.runs.boot(); // runs are kept only where the lesson shows them (once)
    for (const s of Object.values(sections)) s.refresh();
    if (focusId) root.getElementById(focusId)?.focus();
    if (ctx.rt.maps) this._zoom();
  }

  /** The main worker's events, as the element's events. */
  _onWorker(m) {
    const lab = this._lab;
    if (!lab) return;
    const { rt } = lab.ctx;
    if (m.event === 'progress' && m.run === 'main') {
      const loss = m.losses.length ? m.losses[m.losses.length - 1] : rt.lastLoss;
      const base = { step: m.step, steps: m.steps, loss: finite(loss), val: finite(rt.lastVal) };
      this._fire('gpt-lab-progress', { ...base, tokensPerSec: m.tokens_per_sec, elapsed: m.elapsed });
      if (m.diverged) this._fire('gpt-lab-diverged', { step: m.first + m.losses.length, steps: m.steps, loss: finite(loss), message: m.divergence });
      else if (m.done) {
        this._fire('gpt-lab-done', base);
        this._showMaps();
      }
    } else if (m.event === 'crash' || (m.event === 'stopped' && m.run === 'main' && m.reason === 'error')) {
      this._fire('gpt-lab-error', { message: m.message ?? m.error?.message ?? 'error', fields: [] });
    }
    this._status();
  }

  /** At the run's end, the maps (when shown) for the prompt, with the chosen head enlarged. */
  async _showMaps() {
    const lab = this._lab;
    if (!lab || !parseSections(this.getAttribute('sections')).includes('maps')) return;
    await lab.sections.maps.show();
    if (this._lab === lab && lab.ctx.rt.maps) this._zoom();
  }

  /** The head the layer and head attributes name, enlarged (the first when they name none). */
  _zoom(again = true) {
    const lab = this._lab;
    const m = lab?.ctx.rt.maps;
    if (!m) return;
    const maps = lab.sections.maps;
    const view = maps.view;
    if (!view || view.result !== m) { // the model view (model-view.js) loads with the first maps
      if (again) maps.loadView().then(() => { if (this._lab === lab) this._zoom(false); }).catch(() => {});
      return;
    }
    let l = index1(this.getAttribute('layer'), 'layer') ?? 0;
    let h = index1(this.getAttribute('head'), 'head') ?? 0;
    if (l >= m.n_layer) { console.warn(`<gpt-lab> layer: the model has ${m.n_layer} layers: the first is shown`); l = 0; }
    if (h >= m.n_head) { console.warn(`<gpt-lab> head: the model has ${m.n_head} heads: the first is shown`); h = 0; }
    const link = this.shadowRoot.querySelector(`.tr-map[data-layer="${l}"][data-head="${h}"]`);
    view.zoom('head', l, h, link);
    this._fire('gpt-lab-maps', { layer: l + 1, head: h + 1, step: m.step, prompt: m.prompt });
  }
}

/** A number, or null for a missing or non-finite one (events carry JSON-safe values). */
function finite(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/**
 * Waits until the core has answered for the settings' memory (until then the page's validation is
 * pending and Start waits): the worker answers in order, so one round trip after the question
 * has brought its answer.
 */
async function settled(ctx) {
  for (let i = 0; i < 8 && ctx.validated().memory === 'pending'; i++) await ctx.worker.call('init');
}

if (!customElements.get('gpt-lab')) customElements.define('gpt-lab', GptLabElement);
