// section-experiments.js — the training page's "experiments" section (#tr-exp): the tutorials'
// two experiments from the form's settings and one seed (strict vs inclusive mask, stable vs
// naive softmax), two runs trained side by side in a worker of their own, their curves overlaid,
// and a sentence on what differed (experiments.js) when they end or are stopped; then the pair is
// kept in the browser (section-runs.js keepPair). The variants' two experiments (exp-variants.js:
// length — learned, ALiBi and RoPE positions evaluated past their trained context; kv — n_kv_head
// = n_head, 2, 1) train three runs the same way, then measure them and show the measurements.
//
// Interface (every section's: a class made with the page's context): render() → its element;
// mounted() once it is in the document (the chart measures its box); refresh(). Also onMessage(m)
// (the experiments' worker's events) and chartPoints() (for tests).
import { runSpec } from './config.js';
import { el, statusLine, setText, hide } from '../common/ui.js';
import { LossChart } from './chart.js';
import { experimentSentence } from './experiments.js';
import { VARIANT_KINDS, variantRuns, measure, resultView } from './exp-variants.js';
import { Section } from './section.js';
import { button, buttonBar, idEl } from './fields.js';

export class ExperimentsSection extends Section {
  /** @param {object} ctx the page's context (context.js) */
  constructor(ctx) {
    super(ctx);
    this.queued = false;
  }

  /** The two runs' names in the page's language. */
  labelsOf(kind) {
    const { t } = this.ctx;
    if (VARIANT_KINDS.includes(kind)) return variantRuns(kind, t, this.rt.exp?.nHead ?? 4).labels;
    return kind === 'mask' ? [t('mask.strict'), t('mask.inclusive')] : [t('softmax.stable'), t('softmax.naive')];
  }

  /** A new chart for the two runs. */
  newChart(labels) {
    return new LossChart(this.dom.chartBox, { runs: labels.map((label) => ({ label })), t: this.ctx.t });
  }

  render() {
    const { t } = this.ctx;
    const s = this.newCard({ id: 'tr-exp', cls: 'tr-card tr-exp', title: t('exp.title'), headingId: 'tr-exp-h', lede: t('exp.lede') });
    const { dom } = this;
    dom.mask = button(t('exp.mask'), 'exp-mask', () => this.run('mask'));
    dom.softmax = button(t('exp.softmax'), 'exp-softmax', () => this.run('softmax'));
    dom.length = button(t('exp.length'), 'exp-length', () => this.run('length'));
    dom.kv = button(t('exp.kvButton'), 'exp-kv', () => this.run('kv'));
    dom.stop = button(t('exp.stop'), 'exp-stop', () => this.stop());
    dom.status = statusLine('tr-exp-status');
    dom.chartBox = idEl('tr-exp-chart', 'div', 'tr-chart');
    dom.sentence = idEl('tr-exp-sentence', 'p', 'tr-sentence');
    dom.sentence.setAttribute('aria-live', 'polite');
    dom.results = idEl('tr-exp-results', 'div', 'tr-exp-results-box');
    s.append(buttonBar(dom.mask, dom.softmax, dom.length, dom.kv, dom.stop), dom.status, dom.chartBox, dom.sentence, dom.results);
    return s;
  }

  /** The chart again, with the labels and the sentence in the page's language now. */
  mounted() {
    const ex = this.rt.exp;
    if (!ex || !ex.runs.length) return;
    ex.labels = this.labelsOf(ex.kind);
    if (ex.sentence && !VARIANT_KINDS.includes(ex.kind)) ex.sentence = experimentSentence(ex, this.ctx.t);
    this.chart = this.newChart(ex.labels);
    this.chart.setFloor(ex.floor);
    ex.runs.forEach((r, i) => this.chart.set(i, r));
  }

  /** Runs experiment `kind` ('mask' or 'softmax'): two runs from the form's settings, one seed. */
  async run(kind) {
    const { rt } = this;
    const v = this.ctx.validated();
    if (!v.ok) {
      this.ctx.sections.data.refresh();
      rt.exp = { kind, labels: [], runs: [], status: 'invalid' };
      this.refresh();
      return;
    }
    const w = this.ctx.expWorker();
    const variant = VARIANT_KINDS.includes(kind) ? variantRuns(kind, this.ctx.t, v.values.n_head) : null;
    const labels = variant ? variant.labels : this.labelsOf(kind);
    const over = variant ? variant.over : kind === 'mask' ? [{ mask: 'strict' }, { mask: 'inclusive' }] : [{ softmax: 'stable' }, { softmax: 'naive' }];
    const names = variant ? variant.names : ['a', 'b'];
    const series = () => ({ steps: [], train: [], valSteps: [], val: [], divergedAt: null, divergence: '', done: false, step: 0 });
    rt.exp = { kind, labels, names, runs: names.map(series), status: 'starting', sentence: '', seed: v.values.seed, steps: v.values.steps, over, nHead: v.values.n_head, floor: this.ctx.taskInfo()?.loss_floor ?? null };
    rt.exp.state = structuredClone(this.ctx.state); // the settings the pair is kept with (section-runs.js)
    this.chart?.destroy();
    this.chart = this.newChart(labels);
    this.chart.setFloor(rt.exp.floor);
    this.refresh();
    this.dom.results.replaceChildren();
    try {
      for (let i = 0; i < names.length; i++) {
        const r = await w.call('create', { run: names[i], spec: runSpec(this.ctx.state, v.values, over[i]) });
        rt.exp.runs[i].valSteps.push(0); rt.exp.runs[i].val.push(r.val_loss);
        this.chart.set(i, rt.exp.runs[i]);
      }
      await w.call('start', { runs: names });
      rt.exp.status = 'running';
    } catch (e) {
      rt.exp.status = 'error';
      rt.exp.error = e.message;
    }
    this.refresh();
  }

  /** Stops both runs where they are, and writes the sentence on what they show so far. */
  async stop() {
    const { rt } = this;
    if (!rt.exp || rt.exp.status !== 'running') return;
    await this.ctx.expWorker().call('pause', { runs: rt.exp.names }).catch(() => {});
    rt.exp.status = 'stopped';
    if (VARIANT_KINDS.includes(rt.exp.kind)) { await this.measure(); return; }
    rt.exp.sentence = experimentSentence(rt.exp, this.ctx.t);
    this.refresh();
    await this.ctx.sections.runs.keepPair();
  }

  /** Both runs ended: the sentence. */
  finish() {
    const ex = this.rt.exp;
    if (ex.status === 'done' || ex.status === 'measuring') return;
    if (VARIANT_KINDS.includes(ex.kind)) { this.measure(); return; }
    ex.status = 'done';
    ex.sentence = experimentSentence(ex, this.ctx.t);
    this.refresh();
    this.ctx.sections.runs.keepPair(); // both ended: the pair is kept
  }

  /** A variants experiment's runs ended: the core's measurements of them, then their view. */
  async measure() {
    const ex = this.rt.exp;
    ex.status = 'measuring';
    this.refresh();
    try {
      ex.results = await measure(ex.kind, this.ctx.expWorker(), ex);
      ex.status = 'done';
    } catch (e) {
      ex.status = 'error';
      ex.error = e.message;
    }
    this.refresh();
  }

  /** The experiments' worker's events: each run's progress, a crash. */
  onMessage(m) {
    const ex = this.rt.exp;
    if (!ex) return;
    if (m.event === 'progress') {
      const k = (ex.names ?? ['a', 'b']).indexOf(m.run);
      if (k < 0) return;
      const r = ex.runs[k];
      for (let k = 0; k < m.losses.length; k++) { r.steps.push(m.first + k + 1); r.train.push(m.losses[k]); }
      if (m.val != null) { r.valSteps.push(m.step); r.val.push(m.val); }
      r.step = m.step;
      if (m.diverged) { r.divergedAt = m.first + m.losses.length; r.divergence = m.divergence; }
      if (m.done) r.done = true;
      this.chart?.set(k, r);
      if (ex.runs.every((x) => x.done)) this.finish();
      else this.refreshSoon();
    } else if (m.event === 'crash') {
      ex.status = 'error';
      ex.error = m.message;
      this.refresh();
    }
  }

  /** A refresh in the next frame (several progress messages may share it). */
  refreshSoon() {
    if (this.queued) return;
    this.queued = true;
    requestAnimationFrame(() => { this.queued = false; this.refresh(); });
  }

  refresh() {
    const { dom } = this;
    if (!dom.status) return;
    const { t } = this.ctx;
    const ex = this.rt.exp;
    const running = ex && (ex.status === 'running' || ex.status === 'starting');
    const pending = this.ctx.validated().memory === 'pending'; // the core has not answered for these settings yet
    const busy = running || ex?.status === 'measuring';
    for (const b of [dom.mask, dom.softmax, dom.length, dom.kv]) b.disabled = busy || pending;
    dom.stop.disabled = !running;
    if (ex?.status === 'done' && ex.results && !dom.results.childElementCount) dom.results.append(resultView(t, ex.kind, ex.results));
    this.ctx.app.dataset.exp = ex ? ex.status : 'none';
    let status = '';
    if (!ex) status = t('exp.idle');
    else if (ex.status === 'invalid') status = t('status.invalid');
    else if (ex.status === 'error') status = ex.error;
    else if (ex.status === 'starting') status = t('exp.starting');
    else if (ex.status === 'measuring') status = t('exp.measuring');
    else if (ex.runs.length === 3) {
      status = t(ex.status === 'running' ? 'exp.running3' : 'exp.done3',
        { runs: ex.labels.map((l, i) => `${l} ${ex.runs[i].step}`).join(', '), steps: ex.steps, seed: ex.seed });
    } else {
      const [a, b] = ex.runs;
      status = t(ex.status === 'running' ? 'exp.running' : ex.status === 'stopped' ? 'exp.stopped' : 'exp.done',
        { a: ex.labels[0], b: ex.labels[1], sa: a.step, sb: b.step, steps: ex.steps, seed: ex.seed });
    }
    setText(dom.status, status);
    dom.sentence.textContent = ex?.sentence ?? '';
    dom.sentence.hidden = !ex?.sentence;
    hide(dom.chartBox, !ex || !ex.runs.length);
  }
}

