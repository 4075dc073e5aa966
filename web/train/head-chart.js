// head-chart.js — the heads' scores during training, right under the loss chart and on its step
// axis (the same range of steps): at each evaluation of a run made with "record head scores"
// (the run spec's head_scores_interval), the highest induction score of any head and the highest
// previous-token score, so a learner sees the induction head form and the loss bump that comes
// with it (Olsson et al. 2022). Every number is the core's (train's head_scores). Beside it: the
// PNG and SVG buttons (interp-svg.js curvesSvg), and a table
// of every recorded step with its best heads (the text alternative).
//
// Limits: uPlot loaded as the loss chart loads it (on the first points). With several workers the
// scores are taken at the end of each chunk that ends on a multiple of the interval (worker.js).
import { el, hide } from '../common/ui.js';
import { exportBar } from '../common/export.js';
import { argmax } from './interp-exercises.js';
import { fmt } from './interp-figures.js';

const COLORS = { induction: '#7c3aed', previous: '#0f766e' };
const DASH = { induction: [], previous: [8, 4] };

/** The best head of each kind at each recorded step: {steps, induction, previous, best: [{step, ind, prev}]}. */
export function headCurves(heads) {
  const best = heads.map((h) => ({ step: h.step, ind: argmax(h.induction), prev: argmax(h.previous) }));
  return { steps: best.map((b) => b.step), induction: best.map((b) => b.ind.v), previous: best.map((b) => b.prev.v), best };
}

export class HeadChart {
  /** @param {HTMLElement} box where the chart, its buttons and its table go; t the translator; id the plot's */
  constructor(box, t, id = 'tr-head-chart') {
    this.t = t;
    this.box = box;
    this.plotBox = el('div', 'tr-chart tr-head-chart');
    this.plotBox.id = id;
    this.table = el('table', 'tr-table tr-head-table');
    this.table.setAttribute('aria-label', t('hc.table'));
    const hr = el('tr');
    for (const k of ['hc.step', 'hc.induction', 'hc.previous']) { const th = el('th', '', t(k)); th.scope = 'col'; hr.append(th); }
    const head = el('thead');
    head.append(hr);
    this.table.append(head, el('tbody'));
    const details = el('details', 'tr-head-details');
    details.append(el('summary', '', t('hc.numbers')), this.table);
    const tools = exportBar({
      lead: t('hc.exportLead'), file: 'head-scores', cls: 'tr-chart-tools', makeSvg: () => this.svg(),
      words: { png: 'PNG', svg: 'SVG', group: t('hc.exportGroup'), saved: t('export.saved') },
    });
    box.append(el('p', 'tr-head-title', t('hc.title')), this.plotBox, tools, details);
    this.plot = null;
    this.curves = null;
    this.range = null;
    this.ro = new ResizeObserver(() => this.resize());
    this.ro.observe(this.plotBox);
  }

  /** The recorded scores and the loss chart's step range [first, last]. */
  set(heads, range) {
    hide(this.box, !heads?.length);
    if (!heads?.length) { this.plot?.destroy(); this.plot = null; this.curves = null; this.n = 0; return; }
    // redrawn when a step was scored or the steps' range grew by 2 % (progress comes every ~60 ms)
    if (heads.length === this.n && this.range && range[1] - this.range[1] <= 0.02 * (range[1] - range[0])) return;
    this.n = heads.length;
    this.curves = headCurves(heads);
    this.range = range;
    this.draw();
    this.table.tBodies[0].replaceChildren(...this.curves.best.map((b) => {
      const tr = el('tr');
      tr.append(el('td', 'tr-num', String(b.step)), el('td', 'tr-num', `L${b.ind.r} H${b.ind.c}: ${fmt(b.ind.v)}`), el('td', 'tr-num', `L${b.prev.r} H${b.prev.c}: ${fmt(b.prev.v)}`));
      return tr;
    }));
  }

  async draw() {
    const U = (await import('../gen/vendor/uplot.mjs')).default;
    const c = this.curves;
    if (!c) return;
    const { t } = this;
    const data = [c.steps, c.induction, c.previous];
    const [x0, x1] = this.range;
    if (this.plot) { this.plot.setData(data, false); this.plot.setScale('x', { min: x0, max: x1 }); return; }
    const width = Math.max(200, Math.floor(this.plotBox.clientWidth || 600));
    this.plot = new U({
      width, height: 160,
      scales: { x: { time: false, range: () => [this.range[0], this.range[1]] }, y: { range: [0, 1] } },
      axes: [
        { label: t('chart.step'), stroke: '#5d636d', grid: { stroke: '#e6e4dd' }, incrs: [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000] },
        { label: t('hc.score'), stroke: '#5d636d', grid: { stroke: '#e6e4dd' }, size: 56 },
      ],
      legend: { live: true },
      series: [
        { label: t('chart.step') },
        { label: `━━ ${t('hc.induction')}`, stroke: COLORS.induction, width: 2, points: { show: true, size: 5 }, value: (u, v) => fmt(v) },
        { label: `– – ${t('hc.previous')}`, stroke: COLORS.previous, width: 2, dash: DASH.previous, points: { show: true, size: 5 }, value: (u, v) => fmt(v) },
      ],
    }, data, this.plotBox);
    this.plot.root.setAttribute('role', 'img');
    this.plot.root.setAttribute('aria-label', t('hc.title'));
  }

  /** The curves as SVG text (interp-svg.js curvesSvg), on the chart's step range. */
  async svg() {
    const c = this.curves;
    if (!c) return '';
    const { t } = this;
    const { curvesSvg } = await import('./interp-svg.js');
    return curvesSvg({
      caption: t('hc.title'), subtitle: t('hc.sub'), x: t('chart.step'), y: t('hc.score'), range: this.range,
      lines: [
        { label: t('hc.induction'), color: COLORS.induction, dash: DASH.induction, steps: c.steps, values: c.induction },
        { label: t('hc.previous'), color: COLORS.previous, dash: DASH.previous, steps: c.steps, values: c.previous },
      ],
    });
  }

  resize() {
    if (this.plot) this.plot.setSize({ width: Math.max(200, Math.floor(this.plotBox.clientWidth || 600)), height: 160 });
  }

  destroy() {
    this.ro.disconnect();
    this.plot?.destroy();
    this.plot = null;
  }
}
