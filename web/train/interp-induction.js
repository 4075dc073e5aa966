// interp-induction.js — "Take it apart"'s one-click experiment: watch an induction head form. The
// seeded run of tests/test_interp_train.cpp (the tiny preset on the induction task: 8–24 random
// letters, then the same letters again; batch 16, AdamW at 3e-3 decaying to 3e-4 over a 4,000-step
// schedule, seed 1) trained in a worker of its own, its loss on a chart and, under it on the same
// steps, the best head's induction and previous-token scores (head-chart.js), scored every
// `every` steps; it stops when a head's induction score passes the stated threshold (0.4) or at
// the step budget (2,000 by default), and says which, with the step and the score. The claim
// itself — 0.4 within 2,000 steps — is the native test's (slow); the page runs the same config,
// so its numbers are the core's on the same seed (the fast tier's arithmetic in wasm, so the step
// it passes at may differ from the native one by a scoring interval).
//
// Limits: the budget field is the learner's (10 … 4,000 steps; the tests use a short budget to
// check the wiring). The scores are taken every budget/8 steps, at most every 250. The worker
// trains in chunks, so the run may go a few steps past the budget before it is ended: those steps
// are not shown or counted.
import { el, statusLine, setText, hide } from '../common/ui.js';
import { LossChart } from './chart.js';
import { HeadChart } from './head-chart.js';
import { argmax } from './interp-exercises.js';
import { fmt } from './interp-figures.js';
import { button, buttonBar, idEl, errorSpan, fieldBox } from './fields.js';
import { startWorker } from './client.js';

/** The experiment, declared once: the run spec (gpt_json.h) and the stated claim. */
export const INDUCTION = {
  spec: {
    preset: 'tiny', task: 'induction', n_chars: 100000, batch_size: 16, steps: 4000, warmup_steps: 100,
    lr: 3e-3, min_lr: 3e-4, seed: 1,
  },
  threshold: 0.4, // a head's induction score that counts as an induction head
  budget: 2000,   // the steps within which the native test requires it
};

/** How often the heads are scored for a budget of n steps. */
export const scoreEvery = (n) => Math.max(1, Math.min(250, Math.round(n / 8)));

/** The run's best head so far: {step, v, r, c} of the highest induction score recorded, or null. */
export function bestHead(heads) {
  let best = null;
  for (const h of heads) {
    const a = argmax(h.induction);
    if (!best || a.v > best.v) best = { step: h.step, ...a };
  }
  return best;
}

export class InductionRun {
  /** @param {object} ctx the page's context (context.js) */
  constructor(ctx) {
    this.ctx = ctx;
    this.dom = {};
    this.state = null; // {status, budget, every, steps, train, heads, best, passed, error}
    this.worker = null;
    this.budget = String(INDUCTION.budget); // the budget as typed (kept across renders)
  }

  render() {
    const { t } = this.ctx;
    const d = this.dom;
    const box = el('div', 'tr-interp-induction');
    box.append(el('h3', 'tr-h3', t('ip.ind.title')), el('p', 'tr-hint', t('ip.ind.about', { threshold: INDUCTION.threshold, budget: INDUCTION.budget })));
    const lab = el('label', 'aps-label', t('ip.ind.budget'));
    lab.htmlFor = 'tr-interp-ind-budget';
    d.budget = idEl('tr-interp-ind-budget', 'input', 'tr-input tr-num-input');
    d.budget.type = 'number';
    d.budget.min = '10';
    d.budget.max = '4000';
    d.budget.step = '10';
    d.budget.value = this.budget;
    d.budget.addEventListener('input', () => { this.budget = d.budget.value; });
    const err = errorSpan('interp-ind-budget', 'span');
    d.budget.setAttribute('aria-describedby', err.id);
    d.err = err;
    d.start = button(t('ip.ind.run'), 'interp-ind-run', () => this.start());
    d.stop = button(t('ip.ind.stop'), 'interp-ind-stop', () => this.stop('stopped'));
    d.status = statusLine('tr-interp-ind-status');
    d.chartBox = idEl('tr-interp-ind-chart', 'div', 'tr-chart');
    d.headBox = idEl('tr-interp-ind-heads', 'div', 'tr-head-box');
    box.append(fieldBox('interp-ind-budget', lab, d.budget, err), buttonBar(d.start, d.stop), d.status, d.chartBox, d.headBox);
    return box;
  }

  /** Starts the seeded run in a worker of its own. */
  async start() {
    const { t } = this.ctx;
    const budget = Number(this.dom.budget.value);
    if (!Number.isInteger(budget) || budget < 10 || budget > 4000) {
      setText(this.dom.err, t('ip.ind.badBudget'));
      this.dom.budget.setAttribute('aria-invalid', 'true');
      return;
    }
    setText(this.dom.err, '');
    this.dom.budget.removeAttribute('aria-invalid');
    this.end();
    const every = scoreEvery(budget);
    this.state = { status: 'starting', budget, every, steps: [], train: [], valSteps: [], val: [], heads: [], best: null, passed: null, step: 0 };
    this.makeCharts();
    this.refresh();
    const w = startWorker();
    this.worker = w;
    w.on((m) => this.onMessage(w, m));
    try {
      const info = await w.call('create', { run: 'ind', spec: { ...INDUCTION.spec, eval_interval: every, head_scores_interval: every } });
      if (this.worker !== w) return;
      this.state.valSteps.push(0);
      this.state.val.push(info.val_loss);
      if (this.state.status === 'starting') this.state.status = 'running';
      await w.call('start', { runs: ['ind'] });
      if (this.worker !== w) return;
    } catch (e) {
      if (this.worker !== w) return;
      this.state.status = 'error';
      this.state.error = e.message;
      this.end();
    }
    this.refresh();
  }

  /** The loss chart and the heads' chart under it, in this render's boxes. */
  makeCharts() {
    const { t } = this.ctx;
    this.chart?.destroy();
    this.heads?.destroy();
    this.chart = new LossChart(this.dom.chartBox, { runs: [{ label: t('ip.ind.run') }], t, height: 200 });
    this.heads = new HeadChart(this.dom.headBox, t, 'tr-interp-ind-head-chart');
  }

  /** After a render (a language, a link): the charts again, with what the run has recorded. */
  mounted() {
    const s = this.state;
    if (!s || !this.dom.chartBox) return;
    this.makeCharts();
    this.chart.set(0, s);
    this.heads.set(s.heads, [0, Math.max(s.budget, 1)]);
  }

  /** The worker's progress: the losses, the heads' scores; the end when a head passes or the budget is spent. */
  onMessage(w, m) {
    const s = this.state;
    if (this.worker !== w || !s) return;
    if (m.event === 'crash') { s.status = 'error'; s.error = m.message; this.end(); this.refresh(); return; }
    if (m.event !== 'progress' || m.run !== 'ind') return;
    // the worker trains in chunks, which may pass the budget: what lies past it is not kept
    const within = (step) => step <= s.budget;
    for (let k = 0; k < m.losses.length && within(m.first + k + 1); k++) { s.steps.push(m.first + k + 1); s.train.push(m.losses[k]); }
    if (m.val != null && within(m.step)) { s.valSteps.push(m.step); s.val.push(m.val); }
    s.step = Math.min(m.step, s.budget);
    if (m.head_scores?.length) s.heads.push(...m.head_scores.filter((h) => within(h.step)));
    s.best = bestHead(s.heads);
    this.chart.set(0, s);
    this.heads.set(s.heads, [0, Math.max(s.budget, 1)]);
    const passed = s.heads.find((h) => argmax(h.induction).v > INDUCTION.threshold);
    if (passed) { s.passed = { step: passed.step, ...argmax(passed.induction) }; this.stop('passed'); return; }
    if (s.step >= s.budget || m.done) { this.stop('spent'); return; }
    this.refresh();
  }

  /** Ends the run: passed, spent (the budget, no head passed) or stopped by the learner. */
  stop(how) {
    if (!this.state || !['running', 'starting'].includes(this.state.status)) return;
    this.state.status = how;
    this.end();
    this.refresh();
  }

  end() {
    const w = this.worker;
    this.worker = null; // first: ending it sends a 'crash' event, no longer this run's
    w?.terminate();
  }

  refresh() {
    const d = this.dom;
    if (!d.status) return;
    const { t } = this.ctx;
    const s = this.state;
    const running = s?.status === 'running' || s?.status === 'starting';
    d.start.disabled = running;
    d.stop.disabled = !running;
    d.budget.disabled = running;
    hide(d.chartBox, !s);
    this.ctx.app.dataset.induction = s ? s.status : 'none';
    const best = s?.best ? { score: fmt(s.best.v), head: `L${s.best.r} H${s.best.c}`, at: s.best.step } : null;
    let text = t('ip.ind.idle', { threshold: INDUCTION.threshold, budget: INDUCTION.budget });
    if (s?.status === 'starting') text = t('ip.ind.starting');
    else if (s?.status === 'running') text = best ? t('ip.ind.running', { step: s.step, budget: s.budget, ...best }) : t('ip.ind.runningNo', { step: s.step, budget: s.budget });
    else if (s?.status === 'passed') text = t('ip.ind.passed', { threshold: INDUCTION.threshold, step: s.passed.step, score: fmt(s.passed.v), head: `L${s.passed.r} H${s.passed.c}`, budget: s.budget });
    else if (s?.status === 'spent' || s?.status === 'stopped') {
      text = t(s.status === 'spent' ? 'ip.ind.spent' : 'ip.ind.stopped', { threshold: INDUCTION.threshold, step: s.step, budget: s.budget, score: best?.score ?? '—', head: best?.head ?? '—', at: best?.at ?? 0 });
    } else if (s?.status === 'error') text = s.error;
    setText(d.status, text);
  }

  destroy() {
    this.end();
    this.chart?.destroy();
    this.heads?.destroy();
  }
}
