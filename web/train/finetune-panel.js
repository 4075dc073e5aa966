// finetune-panel.js — "Fine-tune it on your text", the part of the training page's "Open a model"
// section (section-open.js) shown once a model trained elsewhere is open. Loaded on first use (the
// first opening), so the page's start does not carry it.
//
// The learner pastes or types a text (or loads a .txt file), chooses steps, context, batch size and
// learning rate (the core's defaults: 100 steps, context min(block_size, 128), batch 4, lr 1e-4),
// and sees before starting what fine-tuning needs against what there is (the core's figures,
// gpt.js finetuneMemory, asked again as the settings change; a setting that will not fit is refused
// in figures and Fine-tune stays off). Fine-tune turns the opened model into a run on the text in
// the worker (gpt.js finetune: the model's own tokenizer, fresh AdamW; a refusal keeps the model),
// then trains it as the page trains its own runs: the loss goes on the training section's chart
// and here as figures, Stop pauses it (Resume in the training section continues), and the maps,
// the stepper, generation and Download use the fine-tuned weights; the download is a training
// checkpoint that `gpt sample` and `gpt resume --text` read.
//
// #app's data-finetune says where it is: idle | checking | refused | starting | training | stopped
// | done | diverged (the page's tests wait on it).
import { el, setText, hide } from '../common/ui.js';
import { button, buttonBar, fieldBox, filePicker, fmtInt, fmtLoss, idEl } from './fields.js';

/** The settings: key → {id, default (from the opened model's config), whole number?, range}. */
const FIELDS = {
  steps: { dflt: () => 100, int: true, min: 1, max: 100000 },
  context: { dflt: (c) => Math.min(c.block_size, 128), int: true, min: 1, max: (c) => c.block_size },
  batch_size: { dflt: () => 4, int: true, min: 1, max: 1024 },
  lr: { dflt: () => 1e-4, int: false, min: 1e-9, max: 10 },
};

/** Bytes as people read them: MB below a GB, then GB (binary units, as the core's message). */
export function fmtBytes(n) {
  if (n < 2 ** 30) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  return `${(n / 2 ** 30).toFixed(2)} GiB`;
}

export class FinetunePanel {
  /** @param {object} ctx the page's context (context.js) */
  constructor(ctx) {
    this.ctx = ctx;
    this.dom = {};
    this.values = null; // the learner's settings as typed, {key: string}; set for each opened model
    this.text = '';
    this.memory = null; // the core's last answer {need, available, fits, error?} or {failed: message}
    this.asked = 0; // the memory request last sent (a later one wins)
    this.timer = 0;
    this.phase = 'idle'; // idle | checking | starting | refused (before the run is the text's)
    this.message = null; // {kind, text, detail}
    this.configKey = '';
  }

  get rt() {
    return this.ctx.rt;
  }

  /** The panel's element, inside the open section's card. */
  render() {
    const { t } = this.ctx;
    const dom = this.dom;
    const box = idEl('tr-ft', 'section', 'tr-ft');
    box.setAttribute('aria-labelledby', 'tr-ft-h');
    box.append(idEl('tr-ft-h', 'h3', 'tr-h3', t('ft.title')), el('p', 'aps-hint', t('ft.lede')));
    const lab = el('label', 'aps-label', t('ft.text'));
    lab.htmlFor = 'tr-ft-text';
    dom.text = idEl('tr-ft-text', 'textarea', 'tr-text tr-ft-text');
    dom.text.rows = 5;
    dom.text.spellcheck = false;
    dom.text.value = this.text;
    dom.textHint = idEl('tr-ft-text-hint', 'span', 'aps-hint', '');
    dom.text.setAttribute('aria-describedby', dom.textHint.id);
    dom.text.addEventListener('input', () => { this.text = dom.text.value; this.refresh(); });
    const { input, label } = filePicker('tr-ft-file', t('ft.file'), '.txt,text/plain', (files) => this.readFile(files[0]));
    box.append(fieldBox('ft-text', lab, dom.text, dom.textHint), el('div', 'tr-ft-file', ''));
    box.lastChild.append(input, label);
    const row = el('div', 'tr-ft-fields');
    dom.inputs = {};
    dom.errors = {};
    for (const key of Object.keys(FIELDS)) {
      const id = `tr-ft-${key}`;
      const l = el('label', 'aps-label', t(`ft.f.${key}`));
      l.htmlFor = id;
      const inp = idEl(id, 'input', 'tr-input');
      inp.type = 'text';
      inp.inputMode = FIELDS[key].int ? 'numeric' : 'decimal';
      inp.autocomplete = 'off';
      const err = idEl(`${id}-err`, 'span', 'aps-field-error');
      err.setAttribute('aria-live', 'polite');
      inp.setAttribute('aria-describedby', err.id);
      inp.addEventListener('input', () => { this.values[key] = inp.value; this.settingsChanged(); });
      dom.inputs[key] = inp;
      dom.errors[key] = err;
      row.append(fieldBox(`ft-${key}`, l, inp, err));
    }
    dom.memory = idEl('tr-ft-memory', 'div', 'tr-ft-memory');
    dom.memory.setAttribute('role', 'status');
    dom.start = button(t('ft.start'), 'ft-start', () => this.start(), 'aps-btn aps-btn-primary');
    dom.stop = button(t('ft.stop'), 'ft-stop', () => this.stop());
    dom.status = idEl('tr-ft-status', 'p', 'tr-ft-status');
    dom.status.setAttribute('role', 'status');
    dom.msg = idEl('tr-ft-msg', 'div', 'tr-open-msg');
    box.append(row, dom.memory, buttonBar(dom.start, dom.stop), dom.status, dom.msg);
    this.box = box;
    return box;
  }

  /** The opened model's config (the fields' defaults and ranges), or null without an opened model. */
  config() {
    return this.rt.opened && this.rt.info ? this.rt.info.config : null;
  }

  /** The settings read from the fields: {spec, errors: {key: message}}. */
  read() {
    const { t } = this.ctx;
    const c = this.config();
    const spec = {};
    const errors = {};
    for (const [key, f] of Object.entries(FIELDS)) {
      const raw = String(this.values[key] ?? '').trim();
      const max = typeof f.max === 'function' ? f.max(c) : f.max;
      const v = Number(raw);
      if (!raw || !Number.isFinite(v) || (f.int && !Number.isInteger(v)) || v < f.min || v > max) {
        errors[key] = t(f.int ? 'ft.err.int' : 'ft.err.num', { min: f.min, max: fmtInt(max) });
      } else spec[key] = v;
    }
    return { spec, errors };
  }

  /** A setting changed: its message now, the core's memory figures shortly after. */
  settingsChanged() {
    this.memory = null;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.askMemory(), 150);
    this.refresh();
  }

  /** Asks the worker what these settings need (the core's figures, before anything is allocated). */
  async askMemory() {
    const { spec, errors } = this.read();
    if (Object.keys(errors).length || !this.config()) return;
    const id = ++this.asked;
    let answer;
    try {
      answer = await this.ctx.worker.call('finetune_memory', { run: 'main', spec: this.memorySpec(spec) });
    } catch (e) {
      answer = { failed: e.message };
    }
    if (id !== this.asked) return; // newer settings since
    this.memory = answer;
    this.refresh();
  }

  memorySpec(spec) {
    return { context: spec.context, batch_size: spec.batch_size };
  }

  async readFile(file) {
    if (!file) return;
    this.text = await file.text();
    this.dom.text.value = this.text;
    this.refresh();
  }

  /** Fine-tune: the opened model becomes a run on the text in the worker, then trains. */
  async start() {
    const { rt, ctx } = this;
    const { t } = ctx;
    const { spec, errors } = this.read();
    if (Object.keys(errors).length || !this.text || this.memory?.fits !== true || this.busy()) return;
    this.phase = 'starting';
    this.message = null;
    this.refresh();
    const training = ctx.sections.training;
    try {
      ctx.sections.generation.stop?.();
      const info = await ctx.worker.call('finetune', { run: 'main', spec: { ...spec, text_name: t('ft.textName') }, text: this.text });
      const opened = rt.opened;
      training.resetRun();
      Object.assign(rt, { info, opened, step: info.step, steps: info.steps, loadedFrom: '', runSpecKey: '', maps: null, message: null });
      rt.series.valSteps.push(0);
      rt.series.val.push(info.val_loss);
      rt.lastVal = info.val_loss;
      this.firstVal = info.val_loss;
      training.updateChart();
      await ctx.worker.call('start', { runs: ['main'] });
      rt.status = 'training';
      this.phase = 'idle';
    } catch (e) {
      this.phase = 'refused';
      this.message = { kind: 'error', text: t('ft.refused'), detail: e.message };
    }
    ctx.refreshRun();
    this.refresh();
  }

  /** Stop: the run pauses between steps (Resume in the training section continues it). */
  async stop() {
    await this.ctx.sections.training.pause();
    this.refresh();
  }

  /** A fine-tuned run of the opened model is the page's run now. */
  tuned() {
    return Boolean(this.rt.info?.base && this.rt.opened);
  }

  busy() {
    return this.phase === 'starting' || (this.tuned() && this.rt.status === 'training');
  }

  /** The state #app's data-finetune shows. */
  state() {
    if (this.phase === 'starting' || this.phase === 'refused') return this.phase;
    if (this.tuned()) return { training: 'training', paused: 'stopped', done: 'done', diverged: 'diverged' }[this.rt.status] ?? 'stopped';
    if (this.memory === null && this.config()) return 'checking';
    return 'idle';
  }

  /** The worker's events (progress of the run): the figures here follow the chart. */
  onMessage(m) {
    if ((m.event === 'progress' || m.event === 'stopped') && m.run === 'main' && this.tuned()) {
      queueMicrotask(() => this.refresh());
    }
  }

  /** A new model is open: the fields take its defaults, and the memory is asked for them. */
  modelChanged() {
    const c = this.config();
    const key = c ? JSON.stringify([this.rt.opened?.name, c]) : '';
    if (key === this.configKey) return;
    this.configKey = key;
    this.phase = 'idle';
    this.message = null;
    this.memory = null;
    if (!c) return;
    this.values = Object.fromEntries(Object.entries(FIELDS).map(([k, f]) => [k, String(f.dflt(c))]));
    this.askMemory();
  }

  refresh() {
    const { dom, rt } = this;
    if (!dom.start || !this.box) return;
    const { t } = this.ctx;
    this.modelChanged();
    const c = this.config();
    hide(this.box, !c);
    this.ctx.app.dataset.finetune = this.state();
    if (!c) return;
    const ids = rt.info.tokenizer === 'token_ids' && !this.tuned();
    const { spec, errors } = this.read();
    for (const key of Object.keys(FIELDS)) {
      const inp = dom.inputs[key];
      if (inp.value !== this.values[key] && document.activeElement !== inp) inp.value = this.values[key];
      setText(dom.errors[key], errors[key] ?? '');
      if (errors[key]) inp.setAttribute('aria-invalid', 'true'); else inp.removeAttribute('aria-invalid');
    }
    setText(dom.textHint, ids ? t('ft.noTokenizer') : this.text ? t('ft.textCount', { n: fmtInt([...this.text].length) }) : t('ft.textHint'));
    this.refreshMemory(spec, errors);
    const busy = this.busy();
    dom.start.disabled = busy || ids || !this.text || Object.keys(errors).length > 0 || this.memory?.fits !== true;
    dom.stop.disabled = !(this.tuned() && rt.status === 'training');
    dom.text.disabled = busy;
    for (const inp of Object.values(dom.inputs)) inp.disabled = busy;
    setText(dom.status, this.statusText());
    dom.msg.replaceChildren();
    dom.msg.className = this.message ? `tr-open-msg is-${this.message.kind}` : 'tr-open-msg';
    if (this.message) dom.msg.append(el('p', '', this.message.text), el('p', 'tr-core-msg', this.message.detail));
  }

  refreshMemory(spec, errors) {
    const { dom, memory: m } = this;
    const { t } = this.ctx;
    dom.memory.replaceChildren();
    let kind = '';
    if (Object.keys(errors).length) dom.memory.append(el('p', '', t('ft.mem.fix')));
    else if (!m) dom.memory.append(el('p', '', t('ft.mem.checking')));
    else if (m.failed) { kind = 'is-error'; dom.memory.append(el('p', '', m.failed)); }
    else {
      const figures = { need: fmtBytes(m.need), available: fmtBytes(m.available), B: spec.batch_size, T: spec.context };
      kind = m.fits ? 'is-ok' : 'is-error';
      dom.memory.append(el('p', '', t(m.fits ? 'ft.mem.fits' : 'ft.mem.over', figures)));
      if (!m.fits) dom.memory.append(el('p', 'tr-core-msg', m.error));
    }
    dom.memory.className = `tr-ft-memory ${kind}`;
  }

  statusText() {
    const { rt } = this;
    const { t } = this.ctx;
    if (this.phase === 'starting') return t('ft.st.starting');
    if (!this.tuned()) return '';
    const figures = { step: fmtInt(rt.step), steps: fmtInt(rt.steps), loss: fmtLoss(rt.lastLoss), val: fmtLoss(rt.lastVal), val0: fmtLoss(this.firstVal ?? rt.series.val[0]) };
    const key = { training: 'ft.st.training', paused: 'ft.st.stopped', done: 'ft.st.done', diverged: 'ft.st.diverged' }[rt.status] ?? 'ft.st.stopped';
    return t(key, figures);
  }
}
