// section-training.js — the training page's "training" section (#tr-training): Start, Pause,
// Resume and Reset of the main run in the worker; its status, the note that the form has changed
// since the model was made, the alert (a divergence in the core's words, or another message),
// the figures (step, loss, validation loss, tokens/s, time), the live loss chart and the samples.
// A run paused or ended is kept in the browser (section-runs.js keepMain).
//
// Interface (every section's: a class made with the page's context): render() → its element;
// mounted() once it is in the document (the chart measures its box); refresh(). Also onMessage(m)
// (the main worker's events: progress, a run stopped by an error, a crash), start(), pause(),
// resume(), reset(), resetRun() (forgets the run's curves and figures) and chartPoints() (for
// tests). The Workers field: how many workers share each step's batch (worker.js's data-parallel
// training), 1 … the cores the browser reports (navigator.hardwareConcurrency, at most 16), the
// cores by default; applied to the next steps as soon as it is chosen. Its hint says which path
// shares the steps: wasm threads in one module where the page is cross-origin isolated, else
// separate workers.
import { MODEL_FIELDS, TRAIN_FIELDS, runSpec } from './config.js';
import { el, statusLine, setText, setData, setDisabled, hide } from '../common/ui.js';
import { LossChart } from './chart.js';
import { HeadChart } from './head-chart.js';
import { Section } from './section.js';
import { newRun } from './context.js';
import { button, buttonBar, fieldBox, fmtInt, fmtLoss, fmtTime, idEl } from './fields.js';

const STATS = ['step', 'loss', 'val', 'tps', 'elapsed'];
const MAX_WORKERS = 16; // worker.js's
/** While a run trains, the shortest time between two refreshes of its figures (the chart's REDRAW_MS). */
const REFRESH_MS = 250;

/** The cores the browser reports (at least 1). */
const cores = () => Math.max(1, Math.floor(globalThis.navigator?.hardwareConcurrency ?? 1));

export class TrainingSection extends Section {
  /** @param {object} ctx the page's context (context.js) */
  constructor(ctx) {
    super(ctx);
    this.worker = ctx.worker;
    this.refreshQueued = false;
    this.runEnded = false; // a message since the last refresh ended the run: every section must hear of it
  }

  render() {
    const { t } = this.ctx;
    const s = this.newCard({ id: 'tr-training', cls: 'tr-card tr-training', title: t('train.title'), headingId: 'tr-train-h' });
    const { dom } = this;
    dom.start = button(t('train.start'), 'start', () => this.start(), 'aps-btn aps-btn-primary');
    dom.pause = button(t('train.pause'), 'pause', () => this.pause());
    dom.resume = button(t('train.resume'), 'resume', () => this.resume());
    dom.reset = button(t('train.reset'), 'reset', () => this.reset());
    // the status line changes at every chunk of a run: it is shown, not spoken; a screen reader hears
    // dom.say, a live region written only when the state changes or the run passes a tenth of its steps
    dom.status = idEl('tr-status', 'p', 'tr-status');
    dom.say = statusLine('tr-status-say', 'tr-sr-only');
    dom.changed = idEl('tr-changed', 'p', 'tr-note');
    dom.alert = idEl('tr-alert', 'div', 'tr-alert');
    dom.alert.setAttribute('role', 'alert');
    const stats = idEl('tr-stats', 'dl', 'tr-stats');
    dom.stats = {};
    for (const k of STATS) {
      const d = el('div', 'tr-stat');
      d.dataset.stat = k;
      const dd = el('dd', '', '—');
      d.append(el('dt', '', t(`stat.${k}`)), dd);
      dom.stats[k] = dd;
      stats.append(d);
    }
    const fig = el('figure', 'tr-chart-fig');
    dom.chartBox = idEl('tr-chart', 'div', 'tr-chart');
    dom.chartEmpty = el('p', 'tr-chart-empty', t('chart.empty'));
    dom.headBox = idEl('tr-head-box', 'div', 'tr-head-box'); // the heads' scores when the run records them
    hide(dom.headBox, true);
    fig.append(dom.chartEmpty, dom.chartBox, dom.headBox, el('figcaption', 'aps-hint', t('chart.caption')));
    const samples = el('div', 'tr-samples');
    dom.samples = idEl('tr-samples', 'ol', 'tr-sample-list');
    dom.samplesHint = el('p', 'aps-hint', '');
    samples.append(el('h3', 'tr-h3', t('samples.title')), dom.samplesHint, dom.samples);
    s.append(buttonBar(dom.start, dom.pause, dom.resume, dom.reset), this.renderWorkers(), dom.status, dom.say, dom.changed, dom.alert, stats, fig, samples);
    return s;
  }

  /** The Workers field: a choice of 1 … the cores (at least 2, so that the split can be seen anywhere). */
  renderWorkers() {
    const { t, state } = this.ctx;
    const { dom } = this;
    const most = Math.min(MAX_WORKERS, Math.max(2, cores()));
    state.workers ??= Math.min(MAX_WORKERS, cores());
    const lab = el('label', 'aps-label', t('train.workers'));
    lab.htmlFor = 'tr-workers';
    dom.workers = idEl('tr-workers', 'select', 'aps-select tr-workers'); // styled as the page's other selects
    for (let n = 1; n <= most; n++) {
      const o = el('option', '', String(n));
      o.value = String(n);
      dom.workers.append(o);
    }
    dom.workers.value = String(state.workers);
    dom.workersHint = idEl('tr-workers-hint', 'span', 'aps-hint', '');
    dom.workers.setAttribute('aria-describedby', dom.workersHint.id);
    dom.workers.addEventListener('change', () => {
      state.workers = Number(dom.workers.value);
      this.applyWorkers().catch((e) => { this.rt.message = { kind: 'error', text: e.message }; this.refresh(); });
      this.refresh();
    });
    return fieldBox('workers', lab, dom.workers, dom.workersHint);
  }

  /** Tells the worker how many workers share each step. */
  async applyWorkers() {
    const r = await this.worker.call('workers', { n: this.ctx.state.workers });
    this.path = r.path; // 'threads' (wasm threads: the page is cross-origin isolated) or 'workers'
    this.refresh();
    return r;
  }

  /** The chart, once its box is in the document (it measures its width). */
  mounted() {
    this.chart = new LossChart(this.dom.chartBox, { runs: [{ label: this.ctx.t('chart.run') }], t: this.ctx.t });
    this.heads?.destroy();
    this.heads = new HeadChart(this.dom.headBox, this.ctx.t);
    this.updateChart();
  }

  /** The chart follows the run's curve. */
  updateChart() {
    // the floor of the task the run learns (a built-in task's, from the core; a text has none)
    this.chart?.setFloor(this.rt.info ? this.rt.info.data?.loss_floor : this.ctx.taskInfo()?.loss_floor);
    this.chart?.set(0, this.rt.series);
    const s = this.rt.series;
    // the loss chart's range of steps, so that the two charts share their step axis
    const x0 = Math.min(s.steps[0] ?? Infinity, s.valSteps[0] ?? Infinity);
    const x1 = Math.max(s.steps.at(-1) ?? -Infinity, s.valSteps.at(-1) ?? -Infinity);
    this.heads?.set(s.heads ?? [], [Number.isFinite(x0) ? x0 : 0, Number.isFinite(x1) ? x1 : 1]);
  }

  /** The first field at fault, in the page's order. */
  firstError(v) {
    const order = ['task', 'text', ...MODEL_FIELDS, 'model', ...TRAIN_FIELDS];
    return order.find((k) => v.errors[k] || this.rt.errors[k]);
  }

  /** Start (or Restart): a new run from the form, trained in the worker. */
  async start() {
    const { rt } = this;
    const { t } = this.ctx;
    if (rt.status === 'starting') return;
    const v = this.ctx.validated();
    if (!v.ok) {
      this.ctx.sections.data.refresh();
      const k = this.firstError(v);
      rt.message = { kind: 'error', text: t('train.fixFirst') };
      this.refresh();
      this.ctx.byId(`tr-f-${k === 'model' ? 'n_embd' : k}`)?.focus();
      return;
    }
    this.resetRun();
    rt.status = 'starting';
    rt.message = null;
    this.refresh();
    const spec = runSpec(this.ctx.state, v.values);
    try {
      await this.applyWorkers();
      const info = await this.worker.call('create', { run: 'main', spec, sample: this.ctx.sampleSpec(v.values) });
      rt.info = info;
      rt.runSpecKey = this.ctx.specKey();
      rt.runState = structuredClone(this.ctx.state);
      rt.steps = info.steps;
      rt.step = info.step;
      rt.series.valSteps.push(info.step);
      rt.series.val.push(info.val_loss);
      rt.lastVal = info.val_loss;
      rt.loadedFrom = '';
      this.updateChart();
      await this.worker.call('start', { runs: ['main'] });
      rt.status = 'training';
    } catch (e) {
      rt.status = 'idle';
      this.showCoreError(e);
    }
    this.ctx.refreshRun();
  }

  /** The core's message beside its field when the page has one, else in the section's alert. */
  showCoreError(e) {
    const { rt } = this;
    const { t } = this.ctx;
    const map = { n_layer: 'n_layer', n_head: 'n_head', n_embd: 'n_embd', block_size: 'block_size', lr: 'lr', batch_size: 'batch_size',
      steps: 'steps', seed: 'seed', eval_interval: 'eval_interval', text: 'text', task: 'task', n_chars: 'task' };
    const field = map[e.field];
    if (field && this.ctx.byId(`tr-err-${field}`)) {
      rt.errors[field] = e.message;
      this.ctx.sections.data.refresh();
      rt.message = { kind: 'error', text: t('train.coreRefused') };
      this.ctx.byId(`tr-f-${field}`)?.focus();
    } else {
      rt.message = { kind: 'error', text: e.message };
    }
  }

  /** Pauses the run in the worker (a run that ended meanwhile stays ended). */
  async pause() {
    const { rt } = this;
    if (rt.status !== 'training') return;
    await this.worker.call('pause', { runs: ['main'] }).catch(() => {});
    if (rt.status === 'training') rt.status = 'paused';
    this.ctx.refreshRun();
    await this.ctx.sections.runs.keepMain();
  }

  /** Resumes a paused run, with the samples' prompt as the form says now. */
  async resume() {
    const { rt } = this;
    if (rt.status !== 'paused') return;
    try {
      await this.applyWorkers();
      await this.worker.call('set_sample', { run: 'main', sample: this.ctx.sampleSpec(this.ctx.validated().values) });
      await this.worker.call('start', { runs: ['main'] });
      rt.status = 'training';
      this.ctx.sections.generation.stop();
    } catch (e) {
      rt.message = { kind: 'error', text: e.message };
    }
    this.ctx.refreshRun();
  }

  /** Frees the run: no model, no curve, no maps, no generation. */
  async reset() {
    const { rt } = this;
    await this.worker.call('free', { run: 'main' }).catch(() => {});
    this.resetRun();
    rt.status = 'idle';
    rt.message = null;
    rt.maps = null;
    this.ctx.sections.maps.clear();
    this.ctx.sections.generation.reset();
    this.ctx.sections.next.reset();
    this.ctx.sections.surprisal.reset();
    this.ctx.sections.interp?.reset();
    this.ctx.refreshRun();
  }

  /** Forgets the run: its info, curves, figures and samples. */
  resetRun() {
    Object.assign(this.rt, newRun());
    this.updateChart();
  }

  /** The main worker's events. */
  onMessage(m) {
    const { rt } = this;
    if (m.event === 'progress') this.onProgress(m);
    else if (m.event === 'stopped' && m.run === 'main' && m.reason === 'error') {
      rt.status = 'paused';
      rt.message = { kind: 'error', text: m.error?.message ?? 'error' };
      this.refresh();
      this.ctx.sections.runs.keepMain(); // paused by the error: kept as any paused run
    } else if (m.event === 'crash') {
      rt.status = 'error';
      rt.message = { kind: 'error', text: m.message };
      this.refresh();
    }
  }

  /** A chunk of steps: the curve and the figures now, the DOM once a frame. */
  onProgress(m) {
    const { rt } = this;
    if (m.run !== 'main') return;
    const s = rt.series;
    for (let k = 0; k < m.losses.length; k++) {
      s.steps.push(m.first + k + 1); // step k is the k-th update (counted from 1, as the core's messages)
      s.train.push(m.losses[k]);
    }
    if (m.val != null) { s.valSteps.push(m.step); s.val.push(m.val); rt.lastVal = m.val; }
    if (m.head_scores?.length) (s.heads ??= []).push(...m.head_scores);
    if (m.losses.length) rt.lastLoss = m.losses[m.losses.length - 1];
    rt.step = m.step;
    rt.steps = m.steps;
    rt.elapsed = rt.elapsedBase + m.elapsed;
    rt.tps = m.tokens_per_sec;
    if (m.sample) rt.samples.unshift(m.sample);
    if (rt.samples.length > 8) rt.samples.length = 8;
    if (m.diverged) {
      s.divergedAt = m.first + m.losses.length;
      rt.divergence = m.divergence;
      rt.status = 'diverged';
    } else if (m.done) rt.status = 'done';
    if (rt.info) rt.info.step = m.step;
    if (m.done || m.diverged) this.ctx.sections.runs.keepMain(); // a finished run is kept
    this.updateChart();
    // Several messages can arrive before the refresh: it reads what they left, not the first one.
    // While the run trains the figures change at most every REFRESH_MS (a chunk of steps arrives
    // every ~60 ms, and each refresh relaid and repainted the page's thread, on the cores that
    // train); the end of a run is shown in the next frame.
    if (m.done || m.diverged) this.runEnded = true;
    if (!this.refreshQueued) {
      this.refreshQueued = true;
      const wait = this.runEnded ? 0 : Math.max(0, (this.refreshedAt ?? -Infinity) + REFRESH_MS - performance.now());
      setTimeout(() => requestAnimationFrame(() => {
        this.refreshQueued = false;
        this.refreshedAt = performance.now();
        const ended = this.runEnded;
        this.runEnded = false;
        if (ended) this.ctx.refreshRun(); else this.refresh();
      }), wait);
    }
  }

  refresh() {
    const { rt, dom } = this;
    if (!dom.start) return;
    const { t } = this.ctx;
    const st = rt.status;
    const pending = this.ctx.validated().memory === 'pending'; // the core has not answered for these settings yet
    const valid = this.ctx.validated().ok || pending;
    // while a run trains this runs 4 times a second: only what changed is written (a write of the
    // same value still costs the page's thread a style pass, on the cores that train)
    setData(this.ctx.app, 'train', st);
    const bar = [dom.pause, dom.resume, dom.start, dom.reset];
    const root = this.ctx.app.getRootNode();
    if (bar.includes(root.activeElement)) this.refocus = true; // a button pressed may disable itself
    setDisabled(dom.start, st === 'loading' || st === 'starting' || st === 'training' || pending);
    setText(dom.start, rt.info ? t('train.restart') : t('train.start'));
    setDisabled(dom.pause, st !== 'training');
    setDisabled(dom.resume, st !== 'paused' || rt.step >= rt.steps);
    setDisabled(dom.reset, !rt.info || st === 'starting');
    // the keyboard's focus is not lost to <body> when its button disables itself (Start, Pause):
    // it moves to the button that now does the next thing (Pause, Resume), once one is enabled
    if (this.refocus) {
      const a = root.activeElement;
      if (a && a !== document.body && !bar.includes(a)) this.refocus = false; // the learner moved on
      else if (!a || a === document.body || a.disabled) {
        const next = bar.find((b) => !b.disabled);
        if (next) { next.focus(); this.refocus = false; }
      } else this.refocus = false;
    }
    // the worker's answer once it has one; before, what it will choose (gpt.js threadsAvailable: an isolated page)
    const path = this.path ?? (globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function' ? 'threads' : 'workers');
    setData(this.ctx.app, 'trainPath', path);
    const pathText = ` ${t(path === 'threads' ? 'train.pathThreads' : 'train.pathWorkers')}`;
    setText(dom.workersHint, t('train.workersHint', { n: this.ctx.state.workers, cores: cores() }) + pathText);
    const texts = {
      loading: t('status.loading'), idle: valid ? t('status.idle') : t('status.invalid'), starting: t('status.starting'),
      training: t('status.training', { step: rt.step, steps: rt.steps }), paused: t('status.paused', { step: rt.step, steps: rt.steps }),
      done: t('status.done', { steps: rt.step }), opened: t('status.opened', { name: rt.opened?.name ?? '' }), diverged: t('status.diverged', { step: rt.series.divergedAt ?? rt.step }), error: t('status.error'),
    };
    const statusText = (rt.loadedFrom && (st === 'paused' || st === 'done')) ? `${texts[st]} ${t('status.loaded', { name: rt.loadedFrom })}` : texts[st];
    setText(dom.status, statusText);
    setData(dom.status, 'status', st);
    const sayKey = st === 'training' ? `training:${Math.floor((10 * rt.step) / Math.max(1, rt.steps))}:${this.ctx.state.lang}` : `${statusText}`;
    if (dom.say.dataset.key !== sayKey) { dom.say.dataset.key = sayKey; setText(dom.say, statusText); }
    // the form has changed since the model was made
    const changed = Boolean(rt.info && rt.runSpecKey && this.ctx.specKey() !== rt.runSpecKey);
    setText(dom.changed, changed ? t('train.changed') : '');
    hide(dom.changed, !changed);
    // alert: divergence (the core's words) or another message
    const alertSig = JSON.stringify([st === 'diverged' ? rt.divergence : '', rt.message, this.ctx.state.lang]);
    if (dom.alert.dataset.sig !== alertSig) this.refreshAlert(st, alertSig);
    this.refreshStats();
  }

  /** The alert: a divergence in the core's words, or the page's message. */
  refreshAlert(st, sig) {
    const { rt, dom } = this;
    const { t } = this.ctx;
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

  /** The figures, the empty chart's note and the samples (DOM work only when they changed). */
  refreshStats() {
    const { rt, dom } = this;
    const { t } = this.ctx;
    hide(dom.chartEmpty, !(rt.series.steps.length === 0 && rt.series.valSteps.length === 0));
    const S = dom.stats;
    setText(S.step, rt.info ? `${fmtInt(rt.step)} / ${fmtInt(rt.steps)}` : '—');
    setText(S.loss, fmtLoss(rt.lastLoss));
    setText(S.val, fmtLoss(rt.lastVal));
    setText(S.tps, rt.tps ? fmtInt(rt.tps) : '—');
    setText(S.elapsed, rt.info ? fmtTime(rt.elapsed) : '—');
    // samples
    const v = this.ctx.validated();
    setText(dom.samplesHint, v.values.sample_every ? t(this.ctx.onPage('generation') ? 'samples.hint' : 'samples.hintAlone', { every: v.values.sample_every, prompt: this.ctx.genPrompt() }) : t('samples.off'));
    const sig = rt.samples.length ? `${rt.samples.length}:${rt.samples[0].step}:${this.ctx.state.lang}` : '';
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
}

