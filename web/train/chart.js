// chart.js — the loss charts of the training page, on uPlot (vendored into web/gen/vendor/ by
// scripts/vendor.mjs from package-lock.json; no CDN). One chart shows one or more runs, each with
// a training loss (a line per step) and a validation loss (points joined by a dashed line at each
// evaluation). A run that diverged gets a vertical marker with its step written beside it, so the
// place is told by text and line style, not by colour alone. The chart follows its container's
// width (ResizeObserver) and keeps its data when rebuilt. Beside it, PNG and SVG buttons save the
// chart as a picture for slides (../common/figures.js lossSvg: the same runs, overlays and markers, drawn
// from the numbers, with axis labels and a legend in text). uPlot itself is loaded with the first
// points to draw (a dynamic import, shared by every chart): a page where nothing has trained yet
// does not download it, and its box stays empty until then (the sections say why beside it).
//
//   const c = new LossChart(el, { runs: [{ label: 'strict', color: '#2457a6' }], t });
//   c.set(0, { steps: [1, 2, …], train: [2.5, …], valSteps: [0, 25, …], val: [2.49, …], divergedAt: null });
//   c.destroy();
import { exportBar } from '../common/export.js';

// Each run's training loss in its colour and dash; its validation loss in a colour of its own
// (teal, violet), dotted with dots: the two curves differ in colour, line and legend swatch.
export const RUN_STYLES = [
  { color: '#2457a6', dash: [], glyph: '━━', valColor: '#0f766e' },         // blue, solid; teal
  { color: '#c2410c', dash: [10, 5], glyph: '– – –', valColor: '#7c3aed' },  // orange, dashed; violet
  { color: '#15803d', dash: [2, 3], glyph: '·····', valColor: '#b45309' },    // green, dotted; amber
];
/** The task's loss floor (a perfect model's loss): a grey dash-dot line across the chart. */
const FLOOR = { color: '#5d636d', dash: [8, 4, 2, 4], glyph: '─·─' };
/** The shortest time between two redraws of a chart while data streams in. */
const REDRAW_MS = 250;
/** The validation series' look, in the legend's text too: a dotted line with dots. */
const VAL_GLYPH = '·●·';
/** A line's dash pattern as a legend swatch's CSS border style. */
const swatchStyle = (dash) => (!dash?.length ? 'solid' : dash[0] <= 2 ? 'dotted' : 'dashed');
/** uPlot's class, loaded once, on the first chart that has a point to draw. */
let uPlotClass = null;
const loadUPlot = () => (uPlotClass ??= import('../gen/vendor/uplot.mjs').then((m) => m.default));

export class LossChart {
  /**
   * @param {HTMLElement} el container
   * @param {{runs: {label: string}[], t: Function, height?: number, title?: string}} opts
   */
  constructor(el, { runs, t, height = 260, title = '' }) {
    this.el = el;
    this.t = t;
    this.runs = runs.map((r, i) => ({ ...r, ...RUN_STYLES[i % RUN_STYLES.length], steps: [], train: [], valSteps: [], val: [], divergedAt: null }));
    this.height = height;
    this.title = title;
    this.floor = null; // the task's loss floor, drawn when set (setFloor)
    this.plot = null;
    this.pending = false;
    this.lastDraw = -Infinity;
    this.destroyed = false;
    this.ro = new ResizeObserver(() => this.resize());
    this.ro.observe(el);
    this.build();
    this.tools = this.exportTools();
    el.after(this.tools);
  }

  /** The PNG and SVG buttons, with the line that says what was saved. */
  exportTools() {
    const { t } = this;
    return exportBar({
      lead: t('chart.exportLead'), file: 'loss-chart', makeSvg: () => this.svg(), cls: 'tr-chart-tools',
      words: { png: 'PNG', svg: 'SVG', group: t('chart.exportGroup'), saved: t('export.saved') },
    });
  }

  /** The chart as SVG text (a promise: figures.js loads on the first save): every run's losses, divergence markers, legend. */
  async svg() {
    const { t } = this;
    const { lossSvg } = await import('../common/figures.js');
    return lossSvg(this.runs, {
      title: this.title || t('chart.figTitle'), subtitle: this.runs.length > 1 ? this.runs.map((r) => `${r.glyph} ${r.label}`).join('   ') : '',
      x: t('chart.step'), y: t('chart.loss'), train: t('chart.train'), val: t('chart.val'), diverged: `✕ ${t('chart.diverged', { step: '{step}' })}`,
      floor: this.floor == null ? null : { value: this.floor, text: this.floorLabel(), color: FLOOR.color, dash: FLOOR.dash.join(' ') },
    });
  }

  /** Draws the chart once uPlot is here: at once if it is, else when it has loaded (not without points). */
  build() {
    if (this.destroyed || !this.points()) return;
    if (typeof uPlotClass !== 'function') {
      this.loading ??= loadUPlot().then((U) => { uPlotClass = U; this.build(); });
      return;
    }
    const uPlot = uPlotClass;
    const series = [{ label: this.t('chart.step') }];
    for (const r of this.runs) {
      const prefix = this.runs.length > 1 ? `${r.label}: ` : '';
      series.push({
        // the line's style is in the label's text too, so colour is not the only cue
        label: `${r.glyph} ${prefix}${this.t('chart.train')}`, stroke: r.color, width: 1.5, dash: r.dash, points: { show: false },
        value: (u, v) => (v == null ? '—' : v.toFixed(4)),
      });
      series.push({
        label: `${VAL_GLYPH} ${prefix}${this.t('chart.val')}`, stroke: r.valColor, width: 2.5, dash: [2, 4], spanGaps: true,
        points: { show: true, size: 7, fill: '#fff', stroke: r.valColor, width: 2 },
        value: (u, v) => (v == null ? '—' : v.toFixed(4)),
      });
    }
    if (this.floor != null) {
      series.push({ label: this.floorLabel(), stroke: FLOOR.color, width: 1.5, dash: FLOOR.dash, points: { show: false }, value: () => this.floor.toFixed(3) });
    }
    const width = Math.max(200, Math.floor(this.el.clientWidth || 600));
    const opts = {
      width, height: this.height, title: this.title || undefined,
      scales: { x: { time: false } },
      axes: [
        // steps are whole numbers: ticks at 1, 2, 5, 10, 20, 50, … only
        { label: this.t('chart.step'), stroke: '#5d636d', grid: { stroke: '#e6e4dd' }, ticks: { stroke: '#dddbd4' },
          incrs: [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000] },
        { label: this.t('chart.loss'), stroke: '#5d636d', grid: { stroke: '#e6e4dd' }, ticks: { stroke: '#dddbd4' }, size: 56 },
      ],
      // each swatch in its series' colour and line style (solid, dotted, dashed), not all solid
      legend: { live: true, markers: { dash: (u, i) => swatchStyle(u.series[i].dash) } },
      cursor: { drag: { x: true, y: false } },
      series,
      plugins: [this.markerPlugin()],
    };
    this.plot?.destroy();
    this.plot = new uPlot(opts, this.data(), this.el);
    this.plot.root.setAttribute('role', 'img');
    this.updateLabel();
  }

  /** Draws each diverged run's step as a vertical dashed line with its step written beside it. */
  markerPlugin() {
    return {
      hooks: {
        draw: [(u) => {
          const { ctx } = u;
          for (const r of this.runs) {
            if (r.divergedAt == null) continue;
            const x = u.valToPos(r.divergedAt, 'x', true);
            const { top, height } = u.bbox;
            ctx.save();
            ctx.strokeStyle = '#b42318';
            ctx.lineWidth = 2 * devicePixelRatio;
            ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
            ctx.setLineDash([]);
            ctx.fillStyle = '#b42318';
            ctx.font = `${600} ${12 * devicePixelRatio}px system-ui, sans-serif`;
            const text = this.t('chart.diverged', { step: r.divergedAt });
            const w = ctx.measureText(text).width;
            const tx = x + w + 8 * devicePixelRatio > u.bbox.left + u.bbox.width ? x - w - 6 * devicePixelRatio : x + 6 * devicePixelRatio;
            ctx.fillText(`✕ ${text}`, tx, top + 16 * devicePixelRatio);
            ctx.restore();
          }
        }],
      },
    };
  }

  /** uPlot's aligned data: x = every step seen by any run, nulls where a series has no value. */
  data() {
    const xs = new Set();
    for (const r of this.runs) { for (const s of r.steps) xs.add(s); for (const s of r.valSteps) xs.add(s); }
    const x = [...xs].sort((a, b) => a - b);
    const index = new Map(x.map((s, i) => [s, i]));
    const out = [x];
    for (const r of this.runs) {
      const tr = new Array(x.length).fill(null);
      const va = new Array(x.length).fill(null);
      r.steps.forEach((s, i) => { tr[index.get(s)] = Number.isFinite(r.train[i]) ? r.train[i] : null; });
      r.valSteps.forEach((s, i) => { va[index.get(s)] = Number.isFinite(r.val[i]) ? r.val[i] : null; });
      out.push(tr, va);
    }
    if (this.floor != null) out.push(x.map(() => this.floor)); // a flat line, in the y range too
    return out;
  }

  /**
   * Replaces run i's data (arrays are kept by reference: the caller appends, then calls set
   * again). Redraws at most every REDRAW_MS, in an animation frame: a chunk of steps arrives every
   * ~60 ms per run, and redrawing each time would spend the page's thread for nothing.
   */
  set(i, { steps, train, valSteps, val, divergedAt = null }) {
    Object.assign(this.runs[i], { steps, train, valSteps, val, divergedAt });
    if (!this.plot) { this.build(); return; }
    if (this.pending) return;
    this.pending = true;
    const wait = Math.max(0, this.lastDraw + REDRAW_MS - performance.now());
    setTimeout(() => requestAnimationFrame(() => {
      this.pending = false;
      this.lastDraw = performance.now();
      if (!this.plot) return;
      this.plot.setData(this.data());
      this.updateLabel();
    }), wait);
  }

  /**
   * The task's loss floor (a perfect model's loss, nats per character), drawn across the chart and
   * named in its legend; null for none (a text of the learner's has no known floor).
   */
  setFloor(v) {
    const f = Number.isFinite(v) ? v : null;
    if (f === this.floor) return;
    this.floor = f;
    if (this.plot) this.build();
  }

  floorLabel() {
    return `${FLOOR.glyph} ${this.t('chart.floor', { floor: this.floor.toFixed(3) })}`;
  }

  /** A text description for assistive technology: the last values of each run. */
  updateLabel() {
    const parts = this.runs.map((r) => {
      const n = r.steps.length;
      const last = n ? r.train[n - 1] : null;
      const lv = r.val.length ? r.val[r.val.length - 1] : null;
      return this.t('chart.aria', {
        label: r.label, n, step: n ? r.steps[n - 1] : 0,
        train: last == null ? '—' : last.toFixed(3), val: lv == null ? '—' : lv.toFixed(3),
      }) + (r.divergedAt != null ? ` ${this.t('chart.diverged', { step: r.divergedAt })}.` : '');
    });
    this.plot?.root.setAttribute('aria-label', parts.join(' '));
  }

  /** The number of points drawn (train + validation) over all runs: for tests. */
  points() {
    return this.runs.reduce((a, r) => a + r.steps.length + r.valSteps.length, 0);
  }

  resize() {
    if (!this.plot) return;
    const w = Math.max(200, Math.floor(this.el.clientWidth));
    if (w !== this.plot.width) this.plot.setSize({ width: w, height: this.height });
  }

  destroy() {
    this.destroyed = true;
    this.ro.disconnect();
    this.tools?.remove();
    this.plot?.destroy();
    this.plot = null;
  }
}
