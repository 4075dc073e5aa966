// section-experiments.js — the training page's "experiments" section (#tr-exp): the tutorials'
// two experiments from the form's settings and one seed (strict vs inclusive mask, stable vs
// naive softmax), two runs trained side by side in a worker of their own, their curves overlaid,
// and a sentence on what differed (experiments.js) when they end or are stopped; then the pair is
// kept in the browser (section-runs.js keepPair).
//
// Interface (every section's: a class made with the page's context): render() → its element;
// mounted() once it is in the document (the chart measures its box); refresh(). Also onMessage(m)
// (the experiments' worker's events) and chartPoints() (for tests).
import { runSpec } from './config.js';
import { el, statusLine, setText, hide } from '../common/ui.js';
import { LossChart } from './chart.js';
import { experimentSentence } from './experiments.js';
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
    dom.stop = button(t('exp.stop'), 'exp-stop', () => this.stop());
    dom.status = statusLine('tr-exp-status');
    dom.chartBox = idEl('tr-exp-chart', 'div', 'tr-chart');
    dom.sentence = idEl('tr-exp-sentence', 'p', 'tr-sentence');
    dom.sentence.setAttribute('aria-live', 'polite');
    s.append(buttonBar(dom.mask, dom.softmax, dom.stop), dom.status, dom.chartBox, dom.sentence);
    return s;
  }

  /** The chart again, with the labels and the sentence in the page's language now. */
  mounted() {
    const ex = this.rt.exp;
    if (!ex || !ex.runs.length) return;
    ex.labels = this.labelsOf(ex.kind);
    if (ex.sentence) ex.sentence = experimentSentence(ex, this.ctx.t);
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
    const labels = this.labelsOf(kind);
    const over = kind === 'mask' ? [{ mask: 'strict' }, { mask: 'inclusive' }] : [{ softmax: 'stable' }, { softmax: 'naive' }];
    const series = () => ({ steps: [], train: [], valSteps: [], val: [], divergedAt: null, divergence: '', done: false, step: 0 });
    rt.exp = { kind, labels, runs: [series(), series()], status: 'starting', sentence: '', seed: v.values.seed, steps: v.values.steps, over, floor: this.ctx.taskInfo()?.loss_floor ?? null };
    rt.exp.state = structuredClone(this.ctx.state); // the settings the pair is kept with (section-runs.js)
    this.chart?.destroy();
    this.chart = this.newChart(labels);
    this.chart.setFloor(rt.exp.floor);
    this.refresh();
    try {
      const a = await w.call('create', { run: 'a', spec: runSpec(this.ctx.state, v.values, over[0]) });
      const b = await w.call('create', { run: 'b', spec: runSpec(this.ctx.state, v.values, over[1]) });
      rt.exp.runs[0].valSteps.push(0); rt.exp.runs[0].val.push(a.val_loss);
      rt.exp.runs[1].valSteps.push(0); rt.exp.runs[1].val.push(b.val_loss);
      this.chart.set(0, rt.exp.runs[0]);
      this.chart.set(1, rt.exp.runs[1]);
      await w.call('start', { runs: ['a', 'b'] });
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
    await this.ctx.expWorker().call('pause', { runs: ['a', 'b'] }).catch(() => {});
    rt.exp.status = 'stopped';
    rt.exp.sentence = experimentSentence(rt.exp, this.ctx.t);
    this.refresh();
    await this.ctx.sections.runs.keepPair();
  }

  /** Both runs ended: the sentence. */
  finish() {
    const ex = this.rt.exp;
    if (ex.status === 'done') return;
    ex.status = 'done';
    ex.sentence = experimentSentence(ex, this.ctx.t);
    this.refresh();
    this.ctx.sections.runs.keepPair(); // both ended: the pair is kept
  }

  /** The experiments' worker's events: each run's progress, a crash. */
  onMessage(m) {
    const ex = this.rt.exp;
    if (!ex) return;
    if (m.event === 'progress') {
      const r = ex.runs[m.run === 'a' ? 0 : 1];
      for (let k = 0; k < m.losses.length; k++) { r.steps.push(m.first + k + 1); r.train.push(m.losses[k]); }
      if (m.val != null) { r.valSteps.push(m.step); r.val.push(m.val); }
      r.step = m.step;
      if (m.diverged) { r.divergedAt = m.first + m.losses.length; r.divergence = m.divergence; }
      if (m.done) r.done = true;
      this.chart?.set(m.run === 'a' ? 0 : 1, r);
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
    dom.mask.disabled = running || pending;
    dom.softmax.disabled = running || pending;
    dom.stop.disabled = !running;
    this.ctx.app.dataset.exp = ex ? ex.status : 'none';
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
    setText(dom.status, status);
    dom.sentence.textContent = ex?.sentence ?? '';
    dom.sentence.hidden = !ex?.sentence;
    hide(dom.chartBox, !ex || !ex.runs.length);
  }
}

