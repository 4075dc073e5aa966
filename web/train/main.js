// main.js — the training page (web/train/index.html): train the tiny GPT in a Web Worker and
// watch it learn; run the tutorials' two experiments; see a prompt's attention maps and open any
// head in the Attention Stepper; generate one token at a time with the KV cache made visible;
// download and upload checkpoints. The page's thread only lays out what the worker answers
// (worker.js owns the wasm model), so it stays responsive while the model trains.
//
// Pieces: config.js (the state, per-field validation, the run spec, the permalink), client.js
// (requests to the worker), chart.js (uPlot loss charts), maps.js (attention maps, stepper
// links), kv.js (the KV-cache view), i18n.js (English and 中文).
// No inline scripts or styles: the page runs under script-src 'self' 'wasm-unsafe-eval' and
// style-src 'self'.
import {
  FIELDS, MODEL_FIELDS, TRAIN_FIELDS, SOURCES, MAX_TEXT_BYTES, STEPPER_MAX_ROWS, MAX_LINK_TEXT,
  defaultState, cleanState, validate, runSpec, encodeHash, decodeHash, applyPreset, presetOf, codePoints,
  memorySpec, withMemory,
} from './config.js';
import { startWorker } from './client.js';
import { createI18n, storedLang, storeLang } from './i18n.js';
import { LossChart } from './chart.js';
import { MapsView } from './maps.js';
import { KvView, KV_TOLERANCE } from './kv.js';
import { experimentSentence } from './experiments.js';

const app = document.getElementById('app');
const fromLink = decodeHash(location.hash);
let state = fromLink ?? cleanState({ ...defaultState(), lang: storedLang() ?? 'en' });
let i18n = createI18n(state.lang);
const t = (k, p) => i18n.t(k, p);

const worker = startWorker();
let expWorker = null;

/** Everything that is not the learner's choices: the run, its curves, the views' data. */
const rt = {
  tasks: [],
  status: 'loading', // loading | idle | starting | training | paused | done | diverged | error
  info: null, // the main run's info (config, train, vocab, step, …)
  runSpecKey: '', // the state the run was made from (to tell when the form has changed)
  series: { steps: [], train: [], valSteps: [], val: [], divergedAt: null },
  step: 0, steps: 0, elapsed: 0, tps: 0, lastLoss: null, lastVal: null,
  divergence: '',
  message: null, // {kind: 'error' | 'info', text}
  samples: [],
  errors: {}, // core errors by field, shown beside the field until it changes
  exp: null, // {kind, labels, runs: [series, series], status, sentence, steps}
  maps: null, mapsError: '',
  gen: { active: false, playing: false, error: '' },
  ckpt: { message: null },
  loadedFrom: '',
};

const dom = {};
let chart = null;
let expChart = null;
let mapsView = null;
let kvView = null;

/**
 * validate(state) with the core's memory answer (withMemory), remembered while the fields, the
 * task and the text are the same: the page asks several times per keystroke, and a long text costs
 * a pass over it each time. The core is in the worker: settings with a new memorySpec send one
 * 'memory' request, and until it is answered the result is pending (not ok: Start waits).
 */
let lastValid = { key: null, text: null, result: null };
let memory = { key: null, answer: undefined }; // the worker's answer for the memorySpec `key`
function validated() {
  const key = JSON.stringify([state.fields, state.task, state.mask, state.softmax]);
  if (lastValid.key !== key || lastValid.text !== state.text) {
    const v = validate(state);
    const spec = memorySpec(state, v);
    const mkey = spec && JSON.stringify(spec);
    if (mkey && mkey !== memory.key) askMemory(spec, mkey);
    lastValid = { key, text: state.text, result: withMemory(v, spec, memory.answer) };
  }
  return lastValid.result;
}

function askMemory(spec, key) {
  const asked = { key, answer: undefined };
  memory = asked;
  worker.call('memory', { spec }).catch((e) => ({ error: { message: e.message, field: e.field } })).then((answer) => {
    if (memory !== asked) return; // the settings changed since: a newer request is out
    asked.answer = answer;
    lastValid.key = null; // validate again, with the answer
    refreshForm();
    refreshTraining();
    refreshExperiment();
  });
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function button(text, key, onClick, cls = 'aps-btn') {
  const b = el('button', cls, text);
  b.type = 'button';
  b.dataset.action = key;
  b.id = `tr-${key}`;
  b.addEventListener('click', onClick);
  return b;
}

const fmtTime = (ms) => {
  const s = Math.floor(ms / 1000);
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, '0')}`;
};
const fmtLoss = (v) => (v == null ? '—' : Number.isFinite(v) ? v.toFixed(4) : String(v));
const fmtInt = (v) => Math.round(v).toLocaleString('en-US');

function taskInfo(name = state.task) {
  return rt.tasks.find((x) => x.name === name) ?? null;
}

// A prompt field shows a newline as ↵ (a one-line input cannot hold one; Shift+Enter types it),
// and the model gets '\n' back. The prompts below are in the field's form.
const NEWLINE_MARK = '↵';
const toField = (text) => text.replace(/\n/g, NEWLINE_MARK);
const fromField = (field) => field.replaceAll(NEWLINE_MARK, '\n');

/** The default prompts: the task's example (maps), and its example up to '=' (generation), each
 * after a newline: the tasks are lines, and a model finds where a line starts by its '\n' (without
 * one, a copy model has no start to copy from). */
function defaultPrompt() {
  if (state.task === 'text') return toField([...state.text].slice(0, 16).join(''));
  const ex = taskInfo()?.example ?? '';
  return ex ? NEWLINE_MARK + ex : '';
}
function defaultGenPrompt() {
  if (state.task === 'text') return toField([...state.text].slice(0, 8).join(''));
  const ex = taskInfo()?.example ?? '';
  const eq = ex.indexOf('=');
  return NEWLINE_MARK + (eq > 0 ? ex.slice(0, eq + 1) : ex.slice(0, Math.ceil(ex.length / 2)));
}
const mapsPrompt = () => state.prompt || defaultPrompt();
const genPrompt = () => state.gen_prompt || defaultGenPrompt();

/** A prompt field (`key`: 'prompt' or 'gen_prompt') with its label and hint: what is typed goes
 * into the state and the link; Enter runs `onEnter` (if any); Shift+Enter types ↵. */
function promptField(key, value, onEnter, hintText) {
  const row = el('div', 'tr-inline');
  const lab = el('label', 'aps-label', t(`f.${key}`));
  lab.htmlFor = `tr-f-${key}`;
  const inp = el('input', 'tr-input tr-prompt');
  inp.id = `tr-f-${key}`;
  inp.type = 'text';
  inp.spellcheck = false;
  inp.autocomplete = 'off';
  inp.value = value;
  inp.setAttribute('aria-describedby', `tr-err-${key} tr-h-${key}`);
  inp.addEventListener('input', () => { state[key] = inp.value; delete rt.errors[key]; refreshFieldError(key); writeHash(); });
  inp.addEventListener('keydown', (e) => { if (!newlineKey(inp, e) && e.key === 'Enter' && onEnter) onEnter(); });
  row.append(lab, inp);
  const hint = el('p', 'aps-hint', hintText);
  hint.id = `tr-h-${key}`;
  return { row, hint };
}

/** The message beside field `key` (#tr-err-key), its input's aria-invalid and its field's mark. */
function showFieldError(key, msg) {
  const err = document.getElementById(`tr-err-${key}`);
  if (!err) return;
  if (err.textContent !== msg) err.textContent = msg;
  const inp = document.getElementById(`tr-f-${key}`);
  if (inp) { if (msg) inp.setAttribute('aria-invalid', 'true'); else inp.removeAttribute('aria-invalid'); }
  err.closest('.tr-field')?.classList.toggle('has-error', Boolean(msg));
}

/** A field whose message comes only from an action (the prompts): rt.errors[key], or none. */
function refreshFieldError(key) {
  showFieldError(key, rt.errors[key] ?? '');
}

/** Shift+Enter in a prompt field types ↵ (a newline) at the caret. */
function newlineKey(inp, e) {
  if (e.key !== 'Enter' || !e.shiftKey) return false;
  e.preventDefault();
  inp.setRangeText(NEWLINE_MARK, inp.selectionStart ?? inp.value.length, inp.selectionEnd ?? inp.value.length, 'end');
  inp.dispatchEvent(new Event('input', { bubbles: true }));
  return true;
}

// ───────────────────────────── the permalink ─────────────────────────────

let hashTimer = 0;
let lastHash = location.hash;
function writeHash() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(() => {
    const h = encodeHash(state);
    if (h === location.hash || (!h && !location.hash)) return;
    lastHash = h;
    history.replaceState(history.state, '', h || `${location.pathname}${location.search}`);
  }, 150);
}
addEventListener('hashchange', () => {
  if (location.hash === lastHash) return;
  const s = decodeHash(location.hash);
  if (!s) return;
  lastHash = location.hash;
  state = s;
  i18n = createI18n(state.lang);
  render();
});

function linkUrl() {
  return `${location.href.split('#')[0]}${encodeHash(state)}`;
}

// ───────────────────────────── building the page ─────────────────────────────

function render() {
  const focusId = document.activeElement?.id;
  document.documentElement.lang = state.lang === 'zh' ? 'zh-CN' : 'en';
  document.title = t('doc.title');
  chart?.destroy();
  expChart?.destroy();
  chart = null;
  expChart = null;
  app.replaceChildren();
  const page = el('div', 'aps tr-page');
  page.append(header());
  const top = el('div', 'tr-top');
  top.append(dataSection(), trainSection());
  page.append(top, experimentSection(), mapsSection(), genSection(), checkpointSection(), footer());
  app.append(page);
  buildCharts();
  refreshForm();
  refreshTraining();
  refreshExperiment();
  refreshMaps();
  refreshGen();
  refreshCheckpoint();
  if (focusId) document.getElementById(focusId)?.focus();
}

function header() {
  const h = el('header', 'aps-header tr-header');
  const titles = el('div', 'aps-titles');
  const nav = el('nav', 'tr-nav');
  nav.setAttribute('aria-label', t('nav.label'));
  const back = el('a', 'tr-nav-link', t('nav.stepper'));
  back.href = '../index.html';
  back.id = 'tr-nav-stepper';
  nav.append(back, el('span', 'tr-nav-here', t('nav.here')));
  titles.append(nav, el('h1', 'aps-title', t('app.title')), el('p', 'aps-lede', t('app.lede')));
  h.append(titles, langSwitch());
  return h;
}

function langSwitch() {
  const g = el('div', 'aps-lang');
  g.setAttribute('role', 'group');
  g.setAttribute('aria-label', t('lang.label'));
  for (const [code, label] of [['en', 'English'], ['zh', '中文']]) {
    const b = el('button', 'aps-seg', label);
    b.type = 'button';
    b.lang = code === 'zh' ? 'zh-CN' : 'en';
    b.id = `tr-lang-${code}`;
    b.setAttribute('aria-pressed', String(state.lang === code));
    b.addEventListener('click', () => {
      if (state.lang === code) return;
      state.lang = code;
      storeLang(code);
      i18n = createI18n(code);
      render();
      writeHash();
    });
    g.append(b);
  }
  return g;
}

/** A radio group of buttons (arrow keys move and pick, as in the stepper). */
function segGroup(label, key, items, value, onPick) {
  const g = el('div', 'aps-segs');
  g.setAttribute('role', 'radiogroup');
  g.setAttribute('aria-label', label);
  g.id = `tr-${key}`;
  const buttons = items.map(([v, text]) => {
    const b = el('button', 'aps-seg', text);
    b.type = 'button';
    b.setAttribute('role', 'radio');
    b.setAttribute('aria-checked', String(v === value));
    b.tabIndex = v === value ? 0 : -1;
    b.dataset.value = v;
    b.id = `tr-${key}-${v}`;
    b.addEventListener('click', () => {
      for (const x of buttons) { const on = x === b; x.setAttribute('aria-checked', String(on)); x.tabIndex = on ? 0 : -1; }
      onPick(v);
    });
    g.append(b);
    return b;
  });
  g.addEventListener('keydown', (e) => {
    if (!['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown'].includes(e.key)) return;
    e.preventDefault();
    const i = buttons.indexOf(document.activeElement);
    const n = buttons[(i + (e.key === 'ArrowLeft' || e.key === 'ArrowUp' ? -1 : 1) + buttons.length) % buttons.length];
    n.focus();
    n.click();
  });
  return g;
}

/** A labelled text field for a number, with its range and its message. */
function numField(key) {
  const f = FIELDS[key];
  const wrap = el('div', 'tr-field');
  wrap.dataset.field = key;
  const id = `tr-f-${key}`;
  const lab = el('label', 'aps-label', t(`f.${key}`));
  lab.htmlFor = id;
  const inp = el('input', 'aps-num tr-input');
  inp.id = id;
  inp.type = 'text';
  inp.inputMode = f.kind === 'int' ? 'numeric' : 'decimal';
  inp.autocomplete = 'off';
  inp.spellcheck = false;
  inp.value = state.fields[key];
  inp.dataset.key = key;
  const hint = el('span', 'aps-hint', t(`h.${key}`));
  hint.id = `tr-h-${key}`;
  const err = el('span', 'aps-field-error');
  err.id = `tr-err-${key}`;
  err.setAttribute('aria-live', 'polite');
  inp.setAttribute('aria-describedby', `${err.id} ${hint.id}`);
  inp.addEventListener('input', () => {
    state.fields[key] = inp.value;
    delete rt.errors[key];
    if (MODEL_FIELDS.includes(key)) state.preset = presetOf(state.fields);
    onFormChange();
  });
  wrap.append(lab, inp, err, hint);
  return wrap;
}

function errorSpan(key) {
  const err = el('p', 'aps-field-error');
  err.id = `tr-err-${key}`;
  err.setAttribute('aria-live', 'polite');
  return err;
}

function dataSection() {
  const s = el('section', 'tr-card tr-data');
  s.id = 'tr-data';
  s.setAttribute('aria-labelledby', 'tr-data-h');
  const h = el('h2', 'aps-h2', t('data.title'));
  h.id = 'tr-data-h';
  s.append(h);

  // the data
  const fs = el('fieldset', 'tr-fieldset');
  fs.append(el('legend', 'aps-legend', t('data.data')));
  const tw = el('div', 'tr-field');
  tw.dataset.field = 'task';
  const tl = el('label', 'aps-label', t('f.task'));
  tl.htmlFor = 'tr-f-task';
  const sel = el('select', 'aps-select');
  sel.id = 'tr-f-task';
  for (const name of SOURCES) sel.append(new Option(t(`task.${name}`), name));
  sel.value = state.task;
  sel.setAttribute('aria-describedby', 'tr-task-about tr-err-task');
  sel.addEventListener('change', () => {
    state.task = sel.value;
    delete rt.errors.task;
    // prompts that were the old task's defaults follow the new task
    if (!state.prompt) { const p = document.getElementById('tr-f-prompt'); if (p) p.value = mapsPrompt(); }
    if (!state.gen_prompt) { const p = document.getElementById('tr-f-gen_prompt'); if (p) p.value = genPrompt(); }
    dom.textBox.hidden = state.task !== 'text';
    refreshTaskAbout();
    onFormChange();
  });
  tw.append(tl, sel, errorSpan('task'));
  const about = el('div', 'tr-task-about');
  about.id = 'tr-task-about';
  dom.taskAbout = about;
  fs.append(tw, about);

  // the learner's own text
  const tb = el('div', 'tr-textbox');
  tb.hidden = state.task !== 'text';
  dom.textBox = tb;
  const ta = el('textarea', 'tr-text');
  ta.id = 'tr-f-text';
  ta.rows = 6;
  ta.spellcheck = false;
  ta.value = state.text;
  ta.setAttribute('aria-describedby', 'tr-err-text tr-text-hint');
  const tal = el('label', 'aps-label', t('f.text'));
  tal.htmlFor = ta.id;
  ta.addEventListener('input', () => {
    state.text = ta.value;
    state.text_name = 'text';
    delete rt.errors.text;
    onFormChange();
  });
  const file = el('input', 'tr-file');
  file.type = 'file';
  file.id = 'tr-f-textfile';
  file.accept = '.txt,text/plain';
  const fl = el('label', 'aps-label', t('f.textfile'));
  fl.htmlFor = file.id;
  file.addEventListener('change', async () => {
    const f = file.files?.[0];
    file.value = '';
    if (!f) return;
    if (f.size > MAX_TEXT_BYTES) {
      rt.errors.text = t('err.fileBig', { name: f.name, bytes: fmtInt(f.size), max: fmtInt(MAX_TEXT_BYTES) });
      refreshForm();
      return;
    }
    const bytes = new Uint8Array(await f.arrayBuffer());
    let text;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      rt.errors.text = t('err.fileUtf8', { name: f.name, at: fmtInt(firstBadUtf8(bytes)) });
      refreshForm();
      return;
    }
    state.text = text;
    state.text_name = f.name.slice(0, 200);
    ta.value = text;
    delete rt.errors.text;
    onFormChange();
  });
  const th = el('p', 'aps-hint', t('h.text', { max: fmtInt(MAX_TEXT_BYTES), link: fmtInt(MAX_LINK_TEXT) }));
  th.id = 'tr-text-hint';
  tb.append(tal, ta, errorSpan('text'), fl, file, th);
  fs.append(tb);
  s.append(fs);

  // the model
  const ms = el('fieldset', 'tr-fieldset');
  ms.append(el('legend', 'aps-legend', t('data.model')));
  const pw = el('div', 'tr-field');
  pw.dataset.field = 'preset';
  pw.append(el('span', 'aps-label', t('f.preset')));
  const pseg = segGroup(t('f.preset'), 'preset', [['tiny', 'tiny'], ['small', 'small'], ['custom', t('preset.custom')]], state.preset, (v) => {
    if (v === 'custom') { document.getElementById('tr-f-n_layer')?.focus(); return; }
    state = applyPreset(state, v);
    for (const k of MODEL_FIELDS) { const inp = document.getElementById(`tr-f-${k}`); if (inp) inp.value = state.fields[k]; delete rt.errors[k]; }
    onFormChange();
  });
  dom.presetSeg = pseg;
  pw.append(pseg, el('span', 'aps-hint', t('h.preset')));
  ms.append(pw);
  const grid = el('div', 'tr-grid');
  for (const k of MODEL_FIELDS) grid.append(numField(k));
  ms.append(grid);
  const opts = el('div', 'tr-grid tr-grid-2');
  const mw = el('div', 'tr-field');
  mw.dataset.field = 'mask';
  mw.append(el('span', 'aps-label', t('f.mask')), segGroup(t('f.mask'), 'mask', [['strict', t('mask.strict')], ['inclusive', t('mask.inclusive')]], state.mask, (v) => { state.mask = v; onFormChange(); }), el('span', 'aps-hint', t('h.mask')));
  const sw = el('div', 'tr-field');
  sw.dataset.field = 'softmax';
  sw.append(el('span', 'aps-label', t('f.softmax')), segGroup(t('f.softmax'), 'softmax', [['stable', t('softmax.stable')], ['naive', t('softmax.naive')]], state.softmax, (v) => { state.softmax = v; onFormChange(); }), el('span', 'aps-hint', t('h.softmax')));
  opts.append(mw, sw);
  ms.append(opts);
  dom.params = el('p', 'tr-params');
  dom.params.id = 'tr-params';
  ms.append(dom.params, errorSpan('model'));
  s.append(ms);

  // training
  const ts = el('fieldset', 'tr-fieldset');
  ts.append(el('legend', 'aps-legend', t('data.training')));
  const tg = el('div', 'tr-grid');
  for (const k of TRAIN_FIELDS) tg.append(numField(k));
  ts.append(tg);
  s.append(ts);
  return s;
}

function firstBadUtf8(bytes) {
  // the byte offset where strict decoding fails: decode growing prefixes (binary search)
  let lo = 0;
  let hi = bytes.length;
  // a fresh decoder each time: stream mode keeps state between calls; it accepts a cut-off last character
  const okPrefix = (n) => { try { new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, n), { stream: true }); return true; } catch { return false; } };
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (okPrefix(mid)) lo = mid; else hi = mid - 1;
  }
  // lo may end inside a character cut short: the bad sequence starts where that character starts
  for (let n = lo; n >= Math.max(0, lo - 3); n--) {
    try { new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, n)); return n; } catch { /* keep going back */ }
  }
  return lo;
}

function refreshTaskAbout() {
  const box = dom.taskAbout;
  if (!box) return;
  box.replaceChildren();
  const info = taskInfo();
  if (state.task === 'text') {
    box.append(el('p', 'aps-hint', t('task.textAbout')));
    return;
  }
  if (!info) return;
  const ex = el('p', 'tr-example');
  ex.append(el('span', 'aps-label', `${t('task.example')} `), el('code', 'tr-mono', info.example));
  // English from the core's own task list; Chinese from i18n.js
  const zh = state.lang === 'zh' && i18n.has(`taskd.${info.name}`);
  const desc = zh ? t(`taskd.${info.name}`) : info.description;
  const att = zh ? t(`taska.${info.name}`) : info.attention;
  box.append(el('p', 'tr-about-line', desc), ex, el('p', 'aps-hint', `${t('task.attention')} ${att}`),
    el('p', 'aps-hint', t('task.floor', { floor: info.loss_floor.toFixed(3) })));
}

function trainSection() {
  const s = el('section', 'tr-card tr-training');
  s.id = 'tr-training';
  s.setAttribute('aria-labelledby', 'tr-train-h');
  const h = el('h2', 'aps-h2', t('train.title'));
  h.id = 'tr-train-h';
  s.append(h);
  const bar = el('div', 'tr-buttons');
  dom.start = button(t('train.start'), 'start', onStart, 'aps-btn aps-btn-primary');
  dom.pause = button(t('train.pause'), 'pause', onPause);
  dom.resume = button(t('train.resume'), 'resume', onResume);
  dom.reset = button(t('train.reset'), 'reset', onReset);
  bar.append(dom.start, dom.pause, dom.resume, dom.reset);
  s.append(bar);
  dom.status = el('p', 'tr-status');
  dom.status.id = 'tr-status';
  dom.status.setAttribute('role', 'status');
  dom.changed = el('p', 'tr-note');
  dom.changed.id = 'tr-changed';
  dom.alert = el('div', 'tr-alert');
  dom.alert.id = 'tr-alert';
  dom.alert.setAttribute('role', 'alert');
  const stats = el('dl', 'tr-stats');
  stats.id = 'tr-stats';
  dom.stats = {};
  for (const k of ['step', 'loss', 'val', 'tps', 'elapsed']) {
    const d = el('div', 'tr-stat');
    d.dataset.stat = k;
    const dd = el('dd', '', '—');
    d.append(el('dt', '', t(`stat.${k}`)), dd);
    dom.stats[k] = dd;
    stats.append(d);
  }
  const fig = el('figure', 'tr-chart-fig');
  dom.chartBox = el('div', 'tr-chart');
  dom.chartBox.id = 'tr-chart';
  const cap = el('figcaption', 'aps-hint', t('chart.caption'));
  dom.chartEmpty = el('p', 'tr-chart-empty', t('chart.empty'));
  fig.append(dom.chartEmpty, dom.chartBox, cap);
  const samples = el('div', 'tr-samples');
  samples.append(el('h3', 'tr-h3', t('samples.title')));
  dom.samples = el('ol', 'tr-sample-list');
  dom.samples.id = 'tr-samples';
  dom.samplesHint = el('p', 'aps-hint', '');
  samples.append(dom.samplesHint, dom.samples);
  s.append(dom.status, dom.changed, dom.alert, stats, fig, samples);
  return s;
}

function experimentSection() {
  const s = el('section', 'tr-card tr-exp');
  s.id = 'tr-exp';
  s.setAttribute('aria-labelledby', 'tr-exp-h');
  const h = el('h2', 'aps-h2', t('exp.title'));
  h.id = 'tr-exp-h';
  s.append(h, el('p', 'tr-lede', t('exp.lede')));
  const bar = el('div', 'tr-buttons');
  dom.expMask = button(t('exp.mask'), 'exp-mask', () => onExperiment('mask'));
  dom.expSoftmax = button(t('exp.softmax'), 'exp-softmax', () => onExperiment('softmax'));
  dom.expStop = button(t('exp.stop'), 'exp-stop', onExperimentStop);
  bar.append(dom.expMask, dom.expSoftmax, dom.expStop);
  dom.expStatus = el('p', 'tr-status');
  dom.expStatus.id = 'tr-exp-status';
  dom.expStatus.setAttribute('role', 'status');
  dom.expChartBox = el('div', 'tr-chart');
  dom.expChartBox.id = 'tr-exp-chart';
  dom.expSentence = el('p', 'tr-sentence');
  dom.expSentence.id = 'tr-exp-sentence';
  dom.expSentence.setAttribute('aria-live', 'polite');
  s.append(bar, dom.expStatus, dom.expChartBox, dom.expSentence);
  return s;
}

function mapsSection() {
  const s = el('section', 'tr-card tr-maps');
  s.id = 'tr-maps-section';
  s.setAttribute('aria-labelledby', 'tr-maps-h');
  const h = el('h2', 'aps-h2', t('maps.title'));
  h.id = 'tr-maps-h';
  s.append(h, el('p', 'tr-lede', t('maps.lede')));
  const { row, hint } = promptField('prompt', mapsPrompt(), onMaps, t('h.prompt', { max: STEPPER_MAX_ROWS }));
  dom.mapsBtn = button(t('maps.show'), 'maps', onMaps, 'aps-btn aps-btn-primary');
  row.append(dom.mapsBtn);
  dom.mapsStatus = el('p', 'tr-status');
  dom.mapsStatus.id = 'tr-maps-status';
  dom.mapsStatus.setAttribute('role', 'status');
  dom.mapsBox = el('div', 'tr-maps-box');
  dom.mapsBox.id = 'tr-maps-box';
  s.append(row, errorSpan('prompt'), hint, dom.mapsStatus, dom.mapsBox);
  // one view for the page's life: a re-render (the language) gives it the new box and the new words
  if (mapsView) { mapsView.root = dom.mapsBox; mapsView.opts = { t, lang: state.lang }; mapsView.result = null; } else mapsView = new MapsView(dom.mapsBox, { t, lang: state.lang });
  return s;
}

function genSection() {
  const s = el('section', 'tr-card tr-gen');
  s.id = 'tr-gen';
  s.setAttribute('aria-labelledby', 'tr-gen-h');
  const h = el('h2', 'aps-h2', t('gen.title'));
  h.id = 'tr-gen-h';
  s.append(h, el('p', 'tr-lede', t('gen.lede')));
  const { row, hint } = promptField('gen_prompt', genPrompt(), null, t('h.gen_prompt'));
  s.append(row, errorSpan('gen_prompt'), hint);
  const grid = el('div', 'tr-grid');
  for (const k of ['gen_temperature', 'gen_top_k', 'gen_seed', 'gen_max']) grid.append(numField(k));
  const gw = el('div', 'tr-field aps-field-check tr-greedy');
  const gl = el('label', 'aps-check-label');
  const cb = el('input', 'aps-check');
  cb.type = 'checkbox';
  cb.id = 'tr-f-gen_greedy';
  cb.checked = state.gen_greedy;
  cb.addEventListener('change', () => { state.gen_greedy = cb.checked; refreshGen(); writeHash(); });
  gl.append(cb, el('span', '', t('f.gen_greedy')));
  gw.append(gl);
  grid.append(gw);
  s.append(grid);
  const bar = el('div', 'tr-buttons');
  dom.genStart = button(t('gen.start'), 'gen-start', onGenStart, 'aps-btn aps-btn-primary');
  dom.genNext = button(t('gen.next'), 'gen-next', onGenNext);
  dom.genPlay = button(t('gen.play'), 'gen-play', onGenPlay);
  bar.append(dom.genStart, dom.genNext, dom.genPlay);
  dom.genStatus = el('p', 'tr-status');
  dom.genStatus.id = 'tr-gen-status';
  dom.genStatus.setAttribute('role', 'status');
  dom.genBox = el('div', 'tr-kv');
  dom.genBox.id = 'tr-kv';
  s.append(bar, dom.genStatus, dom.genBox);
  if (kvView) { kvView.root = dom.genBox; kvView.opts = { t }; } else kvView = new KvView(dom.genBox, { t });
  return s;
}

function checkpointSection() {
  const s = el('section', 'tr-card tr-ckpt');
  s.id = 'tr-ckpt';
  s.setAttribute('aria-labelledby', 'tr-ckpt-h');
  const h = el('h2', 'aps-h2', t('ckpt.title'));
  h.id = 'tr-ckpt-h';
  s.append(h, el('p', 'tr-lede', t('ckpt.lede')));
  const bar = el('div', 'tr-buttons');
  dom.download = button(t('ckpt.download'), 'download', onDownload, 'aps-btn aps-btn-primary');
  const file = el('input', 'tr-file-hidden');
  file.type = 'file';
  file.id = 'tr-upload-file';
  file.accept = '.safetensors,application/octet-stream';
  file.addEventListener('change', () => {
    const f = file.files?.[0];
    file.value = '';
    if (f) onUpload(f);
  });
  const up = el('label', 'aps-btn tr-upload', t('ckpt.upload'));
  up.htmlFor = file.id;
  // a label is not focusable: the file input itself takes the focus (visually hidden, focus shown on the label)
  file.addEventListener('focus', () => up.classList.add('is-focus'));
  file.addEventListener('blur', () => up.classList.remove('is-focus'));
  bar.append(dom.download, file, up);
  dom.ckptMsg = el('div', 'tr-ckpt-msg');
  dom.ckptMsg.id = 'tr-ckpt-msg';
  dom.ckptMsg.setAttribute('role', 'status');
  s.append(bar, dom.ckptMsg, el('p', 'aps-hint', t('ckpt.hint')));
  return s;
}

function footer() {
  const f = el('footer', 'aps-footer tr-footer');
  const bar = el('div', 'tr-buttons');
  const copy = button(t('link.copy'), 'copy-link', async () => {
    const ok = await copyText(linkUrl());
    dom.linkMsg.textContent = ok ? t('link.copied') : t('link.failed', { url: linkUrl() });
  });
  dom.linkMsg = el('span', 'aps-hint');
  dom.linkMsg.setAttribute('aria-live', 'polite');
  bar.append(copy, dom.linkMsg);
  f.append(bar, el('p', '', t('app.footer')));
  return f;
}

async function copyText(text) {
  try { await navigator.clipboard.writeText(text); return true; } catch { return false; }
}

// ───────────────────────────── the form ─────────────────────────────

function onFormChange() {
  refreshForm();
  refreshTraining();
  writeHash();
}

/** Messages beside the fields, the preset, the parameter count. */
function refreshForm() {
  const v = validated();
  for (const k of [...Object.keys(FIELDS), 'text', 'model', 'task']) {
    let msg = '';
    if (rt.errors[k]) msg = rt.errors[k];
    else if (v.errors[k]) msg = t(v.errors[k].key, { ...v.errors[k].params, name: k });
    showFieldError(k, msg);
  }
  // the preset buttons follow the four dimensions
  const p = presetOf(state.fields);
  state.preset = p;
  dom.presetSeg?.querySelectorAll('[role=radio]').forEach((b) => {
    const on = b.dataset.value === p;
    b.setAttribute('aria-checked', String(on));
    b.tabIndex = on ? 0 : -1;
  });
  if (dom.params) {
    const vals = v.values;
    if (MODEL_FIELDS.every((k) => vals[k] !== undefined) && !v.errors.n_head) {
      const V = state.task === 'text' ? null : (taskInfo()?.alphabet?.length ?? null);
      const { n_layer: L, n_embd: C, block_size: T } = vals;
      const P = (V ?? 0) * C + T * C + L * (12 * C * C + 13 * C) + 2 * C;
      dom.params.textContent = V ? t('params.count', { n: fmtInt(P), v: V, hd: C / vals.n_head }) : t('params.countText', { n: fmtInt(P), hd: C / vals.n_head });
    } else dom.params.textContent = '';
  }
  refreshTaskAbout();
}

/** Fills the form from a loaded checkpoint's info (config, training, data, seed). */
function formFromInfo(info) {
  const c = info.config;
  const tr = info.train;
  state.fields = { ...state.fields, n_layer: String(c.n_layer), n_head: String(c.n_head), n_embd: String(c.n_embd), block_size: String(c.block_size),
    lr: String(tr.lr), batch_size: String(tr.batch_size), steps: String(tr.steps), eval_interval: String(tr.eval_interval), seed: String(info.seed) };
  state.mask = c.mask;
  state.softmax = c.softmax;
  if (info.data?.task) state.task = info.data.task;
  else state.task = 'text';
  state.preset = presetOf(state.fields);
}

// ───────────────────────────── training ─────────────────────────────

function specKey() {
  const v = validated();
  if (!v.ok) return 'invalid';
  const spec = runSpec(state, v.values);
  return JSON.stringify({ ...spec, text: spec.text ? spec.text.length + spec.text.slice(0, 64) : undefined });
}

function firstError(v) {
  const order = ['task', 'text', ...MODEL_FIELDS, 'model', ...TRAIN_FIELDS];
  return order.find((k) => v.errors[k] || rt.errors[k]);
}

function setMessage(kind, text) {
  rt.message = text ? { kind, text } : null;
  refreshTraining();
}

async function onStart() {
  if (rt.status === 'starting') return;
  const v = validated();
  if (!v.ok) {
    refreshForm();
    const k = firstError(v);
    setMessage('error', t('train.fixFirst'));
    document.getElementById(`tr-f-${k === 'model' ? 'n_embd' : k}`)?.focus();
    return;
  }
  resetRunView();
  rt.status = 'starting';
  rt.message = null;
  refreshTraining();
  const spec = runSpec(state, v.values);
  try {
    const info = await worker.call('create', { run: 'main', spec, sample: sampleSpec(v.values) });
    rt.info = info;
    rt.runSpecKey = specKey();
    rt.steps = info.steps;
    rt.step = info.step;
    rt.series.valSteps.push(info.step);
    rt.series.val.push(info.val_loss);
    rt.lastVal = info.val_loss;
    rt.loadedFrom = '';
    updateChart();
    await worker.call('start', { runs: ['main'] });
    rt.status = 'training';
  } catch (e) {
    rt.status = 'idle';
    showCoreError(e, 'train');
  }
  refreshRun();
}

function sampleSpec(values) {
  return { prompt: fromField(genPrompt()), every: values.sample_every };
}

/** The core's message beside its field when the page has one, else in the section's alert. */
function showCoreError(e, where) {
  const field = e.field;
  const map = { n_layer: 'n_layer', n_head: 'n_head', n_embd: 'n_embd', block_size: 'block_size', lr: 'lr', batch_size: 'batch_size',
    steps: 'steps', seed: 'seed', eval_interval: 'eval_interval', text: 'text', task: 'task', n_chars: 'task' };
  if (where === 'train' && map[field] && document.getElementById(`tr-err-${map[field]}`)) {
    rt.errors[map[field]] = e.message;
    refreshForm();
    rt.message = { kind: 'error', text: t('train.coreRefused') };
    document.getElementById(`tr-f-${map[field]}`)?.focus();
  } else if (where === 'train') {
    rt.message = { kind: 'error', text: e.message };
  }
}

async function onPause() {
  if (rt.status !== 'training') return;
  await worker.call('pause', { runs: ['main'] }).catch(() => {});
  if (rt.status === 'training') rt.status = 'paused';
  refreshRun();
}

async function onResume() {
  if (rt.status !== 'paused') return;
  try {
    await worker.call('set_sample', { run: 'main', sample: sampleSpec(validated().values) });
    await worker.call('start', { runs: ['main'] });
    rt.status = 'training';
    stopGen();
  } catch (e) {
    rt.message = { kind: 'error', text: e.message };
  }
  refreshRun();
}

async function onReset() {
  await worker.call('free', { run: 'main' }).catch(() => {});
  resetRunView();
  rt.status = 'idle';
  rt.message = null;
  rt.maps = null;
  mapsView?.clear();
  stopGen();
  kvView?.reset();
  rt.gen.active = false;
  refreshRun();
}

function resetRunView() {
  rt.info = null;
  rt.series = { steps: [], train: [], valSteps: [], val: [], divergedAt: null };
  rt.step = 0;
  rt.steps = 0;
  rt.elapsed = 0;
  rt.tps = 0;
  rt.lastLoss = null;
  rt.lastVal = null;
  rt.divergence = '';
  rt.samples = [];
  rt.runSpecKey = '';
  updateChart();
}

let refreshQueued = false;
let runEnded = false; // a message since the last refresh ended the run: every section must hear of it
function onProgress(m) {
  if (m.run !== 'main') return;
  const s = rt.series;
  for (let k = 0; k < m.losses.length; k++) {
    s.steps.push(m.first + k + 1); // step k is the k-th update (counted from 1, as the core's messages)
    s.train.push(m.losses[k]);
  }
  if (m.val != null) { s.valSteps.push(m.step); s.val.push(m.val); rt.lastVal = m.val; }
  if (m.losses.length) rt.lastLoss = m.losses[m.losses.length - 1];
  rt.step = m.step;
  rt.steps = m.steps;
  rt.elapsed = m.elapsed;
  rt.tps = m.tokens_per_sec;
  if (m.sample) rt.samples.unshift(m.sample);
  if (rt.samples.length > 8) rt.samples.length = 8;
  if (m.diverged) {
    s.divergedAt = m.first + m.losses.length;
    rt.divergence = m.divergence;
    rt.status = 'diverged';
  } else if (m.done) rt.status = 'done';
  if (rt.info) rt.info.step = m.step;
  updateChart();
  // Several messages can arrive before the frame: the refresh reads what they left, not the first one.
  if (m.done || m.diverged) runEnded = true;
  if (!refreshQueued) {
    refreshQueued = true;
    requestAnimationFrame(() => {
      refreshQueued = false;
      const ended = runEnded;
      runEnded = false;
      if (ended) refreshRun(); else refreshTraining();
    });
  }
}

function updateChart() {
  chart?.set(0, rt.series);
}

function buildCharts() {
  chart = new LossChart(dom.chartBox, { runs: [{ label: t('chart.run') }], t });
  updateChart();
  if (rt.exp && rt.exp.runs.length) {
    // the labels and the sentence in the page's language now
    rt.exp.labels = rt.exp.kind === 'mask' ? [t('mask.strict'), t('mask.inclusive')] : [t('softmax.stable'), t('softmax.naive')];
    if (rt.exp.sentence) rt.exp.sentence = experimentSentence(rt.exp, t);
    expChart = new LossChart(dom.expChartBox, { runs: rt.exp.labels.map((label) => ({ label })), t });
    rt.exp.runs.forEach((r, i) => expChart.set(i, r));
  }
}

/** Every section that depends on the run (cheap: each writes only what changed). */
function refreshRun() {
  refreshTraining();
  refreshMaps();
  refreshGen();
  refreshCheckpoint();
}

function refreshTraining() {
  if (!dom.start) return;
  const st = rt.status;
  const pending = validated().memory === 'pending'; // the core has not answered for these settings yet
  const valid = validated().ok || pending;
  app.dataset.train = st;
  dom.start.disabled = st === 'loading' || st === 'starting' || st === 'training' || pending;
  dom.start.textContent = rt.info ? t('train.restart') : t('train.start');
  dom.pause.disabled = st !== 'training';
  dom.resume.disabled = st !== 'paused' || rt.step >= rt.steps;
  dom.reset.disabled = !rt.info || st === 'starting';
  const texts = {
    loading: t('status.loading'), idle: valid ? t('status.idle') : t('status.invalid'), starting: t('status.starting'),
    training: t('status.training', { step: rt.step, steps: rt.steps }), paused: t('status.paused', { step: rt.step, steps: rt.steps }),
    done: t('status.done', { steps: rt.step }), diverged: t('status.diverged', { step: rt.series.divergedAt ?? rt.step }), error: t('status.error'),
  };
  const statusText = (rt.loadedFrom && (st === 'paused' || st === 'done')) ? `${texts[st]} ${t('status.loaded', { name: rt.loadedFrom })}` : texts[st];
  if (dom.status.textContent !== statusText) dom.status.textContent = statusText;
  dom.status.dataset.status = st;
  // the form has changed since the model was made
  const changed = rt.info && rt.runSpecKey && specKey() !== rt.runSpecKey;
  dom.changed.textContent = changed ? t('train.changed') : '';
  dom.changed.hidden = !changed;
  // alert: divergence (the core's words) or another message
  const alertSig = JSON.stringify([st === 'diverged' ? rt.divergence : '', rt.message, state.lang]);
  if (dom.alert.dataset.sig !== alertSig) refreshAlert(st, alertSig);
  refreshStats();
}

function refreshAlert(st, sig) {
  dom.alert.dataset.sig = sig;
  dom.alert.replaceChildren();
  if (st === 'diverged' && rt.divergence) {
    dom.alert.append(el('strong', '', t('train.divergedTitle', { step: rt.series.divergedAt })), el('p', 'tr-core-msg', rt.divergence));
    dom.alert.className = 'tr-alert is-error';
  } else if (rt.message) {
    dom.alert.append(el('p', '', rt.message.text));
    dom.alert.className = `tr-alert is-${rt.message.kind}`;
  } else dom.alert.className = 'tr-alert';
  dom.alert.hidden = !dom.alert.firstChild;
}

function refreshStats() {
  const empty = rt.series.steps.length === 0 && rt.series.valSteps.length === 0;
  if (dom.chartEmpty.hidden !== !empty) dom.chartEmpty.hidden = !empty;
  const S = dom.stats;
  const setS = (k, v) => { if (S[k].textContent !== v) S[k].textContent = v; };
  setS('step', rt.info ? `${fmtInt(rt.step)} / ${fmtInt(rt.steps)}` : '—');
  setS('loss', fmtLoss(rt.lastLoss));
  setS('val', fmtLoss(rt.lastVal));
  setS('tps', rt.tps ? fmtInt(rt.tps) : '—');
  setS('elapsed', rt.info ? fmtTime(rt.elapsed) : '—');
  // samples
  const v = validated();
  const hint = v.values.sample_every ? t('samples.hint', { every: v.values.sample_every, prompt: genPrompt() }) : t('samples.off');
  if (dom.samplesHint.textContent !== hint) dom.samplesHint.textContent = hint;
  const sig = rt.samples.length ? `${rt.samples.length}:${rt.samples[0].step}:${state.lang}` : '';
  if (dom.samples.dataset.sig === sig) return; // the samples have not changed: no DOM work
  dom.samples.dataset.sig = sig;
  const items = rt.samples.map((smp) => {
    const li = el('li', 'tr-sample');
    li.append(el('span', 'tr-sample-step', t('samples.step', { step: smp.step })));
    const code = el('code', 'tr-mono');
    if (smp.error) code.append(el('span', 'tr-err-text', smp.error));
    else code.append(el('span', 'tr-sample-prompt', smp.prompt.replace(/\n/g, '↵')), el('span', 'tr-sample-new', smp.text.replace(/\n/g, '↵')));
    li.append(code);
    return li;
  });
  dom.samples.replaceChildren(...items);
}

worker.on((m) => {
  if (m.event === 'progress') onProgress(m);
  else if (m.event === 'stopped' && m.run === 'main' && m.reason === 'error') {
    rt.status = 'paused';
    rt.message = { kind: 'error', text: m.error?.message ?? 'error' };
    refreshTraining();
  } else if (m.event === 'crash') {
    rt.status = 'error';
    rt.message = { kind: 'error', text: m.message };
    refreshTraining();
  }
});

// ───────────────────────────── experiments ─────────────────────────────

function ensureExpWorker() {
  if (expWorker) return expWorker;
  expWorker = startWorker();
  expWorker.on((m) => {
    const ex = rt.exp;
    if (!ex) return;
    if (m.event === 'progress') {
      const r = ex.runs[m.run === 'a' ? 0 : 1];
      for (let k = 0; k < m.losses.length; k++) { r.steps.push(m.first + k + 1); r.train.push(m.losses[k]); }
      if (m.val != null) { r.valSteps.push(m.step); r.val.push(m.val); }
      r.step = m.step;
      if (m.diverged) { r.divergedAt = m.first + m.losses.length; r.divergence = m.divergence; }
      if (m.done) r.done = true;
      expChart?.set(m.run === 'a' ? 0 : 1, r);
      if (ex.runs.every((x) => x.done)) finishExperiment();
      else refreshExperimentSoon();
    } else if (m.event === 'crash') {
      ex.status = 'error';
      ex.error = m.message;
      refreshExperiment();
    }
  });
  return expWorker;
}

let expQueued = false;
function refreshExperimentSoon() {
  if (expQueued) return;
  expQueued = true;
  requestAnimationFrame(() => { expQueued = false; refreshExperiment(); });
}

async function onExperiment(kind) {
  const v = validated();
  if (!v.ok) {
    refreshForm();
    rt.exp = { kind, labels: [], runs: [], status: 'invalid' };
    refreshExperiment();
    return;
  }
  const w = ensureExpWorker();
  const labels = kind === 'mask' ? [t('mask.strict'), t('mask.inclusive')] : [t('softmax.stable'), t('softmax.naive')];
  const over = kind === 'mask' ? [{ mask: 'strict' }, { mask: 'inclusive' }] : [{ softmax: 'stable' }, { softmax: 'naive' }];
  const run = () => ({ steps: [], train: [], valSteps: [], val: [], divergedAt: null, divergence: '', done: false, step: 0 });
  rt.exp = { kind, labels, runs: [run(), run()], status: 'starting', sentence: '', seed: v.values.seed, steps: v.values.steps, over, floor: taskInfo()?.loss_floor ?? null };
  expChart?.destroy();
  expChart = new LossChart(dom.expChartBox, { runs: labels.map((label) => ({ label })), t });
  refreshExperiment();
  try {
    const a = await w.call('create', { run: 'a', spec: runSpec(state, v.values, over[0]) });
    const b = await w.call('create', { run: 'b', spec: runSpec(state, v.values, over[1]) });
    rt.exp.runs[0].valSteps.push(0); rt.exp.runs[0].val.push(a.val_loss);
    rt.exp.runs[1].valSteps.push(0); rt.exp.runs[1].val.push(b.val_loss);
    expChart.set(0, rt.exp.runs[0]);
    expChart.set(1, rt.exp.runs[1]);
    await w.call('start', { runs: ['a', 'b'] });
    rt.exp.status = 'running';
  } catch (e) {
    rt.exp.status = 'error';
    rt.exp.error = e.message;
  }
  refreshExperiment();
}

async function onExperimentStop() {
  if (!rt.exp || rt.exp.status !== 'running') return;
  await expWorker.call('pause', { runs: ['a', 'b'] }).catch(() => {});
  rt.exp.status = 'stopped';
  rt.exp.sentence = experimentSentence(rt.exp, t);
  refreshExperiment();
}

function finishExperiment() {
  const ex = rt.exp;
  if (ex.status === 'done') return;
  ex.status = 'done';
  ex.sentence = experimentSentence(ex, t);
  refreshExperiment();
}

function refreshExperiment() {
  if (!dom.expStatus) return;
  const ex = rt.exp;
  const running = ex && (ex.status === 'running' || ex.status === 'starting');
  const pending = validated().memory === 'pending';
  dom.expMask.disabled = running || pending;
  dom.expSoftmax.disabled = running || pending;
  dom.expStop.disabled = !running;
  app.dataset.exp = ex ? ex.status : 'none';
  let status = '';
  if (!ex) status = t('exp.idle');
  else if (ex.status === 'invalid') status = t('status.invalid');
  else if (ex.status === 'error') status = ex.error;
  else if (ex.status === 'starting') status = t('exp.starting');
  else {
    const [a, b] = ex.runs;
    status = t(ex.status === 'running' ? 'exp.running' : ex.status === 'stopped' ? 'exp.stopped' : 'exp.done',
      { a: ex.labels[0], b: ex.labels[1], sa: a.step, sb: b.step, steps: ex.steps, seed: ex.seed });
  }
  if (dom.expStatus.textContent !== status) dom.expStatus.textContent = status;
  dom.expSentence.textContent = ex?.sentence ?? '';
  dom.expSentence.hidden = !ex?.sentence;
  dom.expChartBox.hidden = !ex || !ex.runs.length;
}

// ───────────────────────────── attention maps ─────────────────────────────

async function onMaps() {
  const prompt = fromField(mapsPrompt());
  delete rt.errors.prompt;
  if (!rt.info) { rt.errors.prompt = t('maps.noModel'); refreshFieldError('prompt'); return; }
  if (!prompt) { rt.errors.prompt = t('err.promptEmpty'); refreshFieldError('prompt'); return; }
  const n = codePoints(prompt, STEPPER_MAX_ROWS + 2);
  if (n > STEPPER_MAX_ROWS) { rt.errors.prompt = t('err.promptLong', { max: STEPPER_MAX_ROWS }); refreshFieldError('prompt'); return; }
  dom.mapsStatus.textContent = t('maps.computing');
  try {
    const r = await worker.call('maps', { run: 'main', prompt });
    rt.maps = { ...r, mask: rt.info.config.mask, step: rt.step, prompt };
    refreshMaps();
  } catch (e) {
    rt.errors.prompt = e.message;
    dom.mapsStatus.textContent = '';
    refreshFieldError('prompt');
  }
}

function refreshMaps() {
  if (!dom.mapsBtn) return;
  dom.mapsBtn.disabled = !rt.info;
  refreshFieldError('prompt');
  if (!rt.maps) {
    dom.mapsStatus.textContent = rt.info ? t('maps.ready') : t('maps.noModel');
    mapsView.clear();
    return;
  }
  const m = rt.maps;
  dom.mapsStatus.textContent = t('maps.shown', { step: m.step, T: m.T, L: m.n_layer, H: m.n_head, mask: t(`mask.${m.mask}`) });
  if (mapsView.result !== m) mapsView.show(m, m.mask);
}

// ───────────────────────────── generation with the KV cache ─────────────────────────────

let playTimer = 0;
function stopGen() {
  clearTimeout(playTimer);
  rt.gen.playing = false;
}

function genSpec() {
  const v = validated().values;
  const spec = { prompt: fromField(genPrompt()), max_new_tokens: v.gen_max ?? 24, greedy: state.gen_greedy, seed: v.gen_seed ?? 1 };
  if (!state.gen_greedy) { spec.temperature = v.gen_temperature ?? 1; spec.top_k = v.gen_top_k ?? 0; }
  return spec;
}

function genFieldsValid() {
  const v = validated();
  return ['gen_temperature', 'gen_top_k', 'gen_seed', 'gen_max'].every((k) => !v.errors[k]);
}

async function onGenStart() {
  stopGen();
  delete rt.errors.gen_prompt;
  if (!genFieldsValid()) { refreshForm(); return; }
  if (!genPrompt()) { rt.errors.gen_prompt = t('err.promptEmpty'); refreshFieldError('gen_prompt'); return; }
  try {
    const g = await worker.call('gen_start', { run: 'main', spec: genSpec() });
    const info = rt.info;
    kvView.start(g, { n_layer: info.config.n_layer, n_head: info.config.n_head, n_embd: info.config.n_embd, vocab: info.vocab }, fromField(genPrompt()));
    rt.gen.active = true;
    rt.gen.generated = 0;
    rt.gen.max = genSpec().max_new_tokens;
  } catch (e) {
    rt.errors.gen_prompt = e.message;
  }
  refreshGen();
}

async function onGenNext() {
  if (!rt.gen.active) return false;
  if (rt.gen.generated >= rt.gen.max) { stopGen(); refreshGen(); return false; }
  try {
    const g = await worker.call('gen_next', { run: 'main' });
    rt.gen.generated = g.generated;
    kvView.push(g);
  } catch (e) {
    rt.errors.gen_prompt = e.message;
    stopGen();
    rt.gen.active = false;
  }
  refreshGen();
  return rt.gen.active;
}

function onGenPlay() {
  if (rt.gen.playing) { stopGen(); refreshGen(); return; }
  if (!rt.gen.active) return;
  rt.gen.playing = true;
  refreshGen();
  const tick = async () => {
    if (!rt.gen.playing) return;
    const more = await onGenNext();
    if (more && rt.gen.playing && rt.gen.generated < rt.gen.max) playTimer = setTimeout(tick, 350);
    else { stopGen(); refreshGen(); }
  };
  tick();
}

function refreshGen() {
  if (!dom.genStart) return;
  const training = rt.status === 'training' || rt.status === 'starting';
  const can = Boolean(rt.info) && !training;
  dom.genStart.disabled = !can;
  dom.genNext.disabled = !can || !rt.gen.active || rt.gen.playing || rt.gen.generated >= rt.gen.max;
  dom.genPlay.disabled = !can || !rt.gen.active || (!rt.gen.playing && rt.gen.generated >= rt.gen.max);
  dom.genPlay.textContent = rt.gen.playing ? t('gen.stop') : t('gen.play');
  for (const k of ['gen_temperature', 'gen_top_k']) {
    const inp = document.getElementById(`tr-f-${k}`);
    if (inp) inp.disabled = state.gen_greedy;
  }
  refreshFieldError('gen_prompt');
  let s;
  if (!rt.info) s = t('gen.noModel');
  else if (training) s = t('gen.training');
  else if (!rt.gen.active) s = t('gen.ready');
  else s = t('gen.status', { n: rt.gen.generated, max: rt.gen.max, tol: KV_TOLERANCE });
  if (dom.genStatus.textContent !== s) dom.genStatus.textContent = s;
  if (training && rt.gen.active) { rt.gen.active = false; stopGen(); }
  if (rt.gen.active && kvView.last && !dom.genBox.firstChild) kvView.render();
}

// ───────────────────────────── checkpoints ─────────────────────────────

async function onDownload() {
  if (!rt.info) return;
  try {
    const { bytes, info } = await worker.call('save', { run: 'main' });
    const name = `gpt-${info.data?.task ?? 'text'}-${info.config.n_layer}x${info.config.n_embd}-step${info.step}.safetensors`;
    const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
    const a = el('a');
    a.href = url;
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    rt.ckpt.message = { kind: 'info', text: t('ckpt.saved', { name, bytes: fmtInt(bytes.length), step: info.step }) };
  } catch (e) {
    rt.ckpt.message = { kind: 'error', text: e.message };
  }
  refreshCheckpoint();
}

async function onUpload(file) {
  rt.ckpt.message = { kind: 'info', text: t('ckpt.reading', { name: file.name }) };
  refreshCheckpoint();
  const wasTraining = rt.status === 'training';
  try {
    const bytes = new Uint8Array(await file.arrayBuffer());
    if (wasTraining) await onPause();
    const info = await worker.call('load', { run: 'main', bytes, text: state.task === 'text' ? state.text : '', sample: { prompt: '', every: 0 } }, [bytes.buffer]);
    // the new model: its config fills the form; its curve starts where it was saved
    formFromInfo(info);
    resetRunView();
    rt.info = info;
    rt.step = info.step;
    rt.steps = info.steps;
    rt.runSpecKey = specKey();
    if (info.val_loss != null) { rt.series.valSteps.push(info.step); rt.series.val.push(info.val_loss); rt.lastVal = info.val_loss; }
    rt.status = info.diverged ? 'diverged' : info.step >= info.steps ? 'done' : 'paused';
    rt.divergence = info.divergence ?? '';
    rt.loadedFrom = file.name;
    rt.maps = null;
    rt.gen.active = false;
    kvView.reset();
    // the sampling prompt goes with the loaded model's data
    await worker.call('set_sample', { run: 'main', sample: sampleSpec(validated().values) }).catch(() => {});
    render();
    rt.ckpt.message = { kind: 'info', text: t('ckpt.loaded', { name: file.name, step: info.step, n: fmtInt(info.n_params) }) };
    writeHash();
  } catch (e) {
    // the core's message; the model that was there stays
    rt.ckpt.message = { kind: 'error', text: t('ckpt.refused', { name: file.name }), detail: e.message };
    if (wasTraining) await onResume();
  }
  refreshCheckpoint();
}

function refreshCheckpoint() {
  if (!dom.download) return;
  dom.download.disabled = !rt.info;
  dom.ckptMsg.replaceChildren();
  const m = rt.ckpt.message;
  if (m) {
    dom.ckptMsg.className = `tr-ckpt-msg is-${m.kind}`;
    dom.ckptMsg.append(el('p', '', m.text));
    if (m.detail) dom.ckptMsg.append(el('p', 'tr-core-msg', m.detail));
    if (m.kind === 'error' && rt.info) dom.ckptMsg.append(el('p', 'aps-hint', t('ckpt.kept', { step: rt.step })));
  } else dom.ckptMsg.className = 'tr-ckpt-msg';
}

// ───────────────────────────── start ─────────────────────────────

/** For tests and the console: the state, the runtime and the charts. */
window.trainPage = {
  getState: () => JSON.parse(JSON.stringify(state)),
  runtime: rt,
  chartPoints: () => chart?.points() ?? 0,
  expChartPoints: () => expChart?.points() ?? 0,
  worker,
};

render();
try {
  const { tasks } = await worker.call('init');
  rt.tasks = tasks;
  rt.status = 'idle';
  app.dataset.status = 'ready';
  if (!state.prompt && !fromLink?.prompt) { const p = document.getElementById('tr-f-prompt'); if (p) p.value = mapsPrompt(); }
  const gp = document.getElementById('tr-f-gen_prompt');
  if (gp && !state.gen_prompt) gp.value = genPrompt();
  refreshForm();
  refreshRun();
} catch (e) {
  rt.status = 'error';
  app.dataset.status = 'failed';
  rt.message = { kind: 'error', text: t('boot.failed', { message: e.message }) };
  refreshTraining();
}
