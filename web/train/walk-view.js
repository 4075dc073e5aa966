// walk-view.js — the view of "the whole block, step by step" (section-walk.js loads it on first
// use): one step of the walk at a time (walk-steps.js), picked from a list or with Previous /
// Next, showing the step's formula, its facts and its vectors; any number of a vector, picked by
// pointer or keyboard, has its arithmetic in the explanation box beside the vectors (MathML lines
// from the stepper's explain-math.js). In the attention step each head links into the Attention
// Stepper with the real Q, K and V of this prompt (maps.js stepperUrl). Each step saves as PNG or
// SVG (export.js; the figure is walk-figure.js, loaded on the first save).
//
// A vector shorter than WIDE numbers is a row of buttons, one per number; a wider one (n_embd 64
// and up, as in the stepper's large mode) is a heat strip on a canvas: a slider for the keyboard
// (arrows, Page Up/Down by 16, Home, End), pointing picks a number, and the picked number is read
// out under it. Colours: blue below zero, red above, white at zero, scaled to the vector's largest
// magnitude (attention weights and probabilities, all ≥ 0, on the maps' blues).
import { el } from '../common/ui.js';
import { exportBar, heat, tokenMark, whiteText } from '../common/export.js';
import { exLine, mathLine } from '../common/explain-math.js';
import { formatNumber as f } from '../common/format.js';
import { stepperUrl, headSource } from './maps.js';
import { walkSteps } from './walk-steps.js';

export const WIDE = 64;

/** A signed value in −1…1 as a diverging colour (blue, white, red). */
export function diverge(x) {
  const a = Math.max(-1, Math.min(1, x));
  const mix = (c) => Math.round(255 + (c - 255) * Math.abs(a));
  return a < 0 ? `rgb(${mix(33)},${mix(102)},${mix(172)})` : `rgb(${mix(178)},${mix(24)},${mix(43)})`;
}

/** The colour of value v in a vector: blues for a vector ≥ 0 (weights, probabilities), else diverging. */
export function colourOf(values) {
  let mx = 0;
  let neg = false;
  for (const v of values) { if (Math.abs(v) > mx) mx = Math.abs(v); if (v < 0) neg = true; }
  const s = mx > 0 ? mx : 1;
  return neg ? (v) => diverge(v / s) : (v) => heat(v / s);
}

/** A number's label in a vector: name[i] (from 1), or the token it belongs to. */
const cellName = (vec, i) => (vec.labels ? `${vec.name} ${tokenMark(vec.labels[i])}` : `${vec.name}[${i + 1}]`);

export class WalkView {
  /**
   * @param {HTMLElement} root where the view lays itself out
   * @param {{t: Function, lang: string, row: Function, kv?: Function}} opts i18n, the language of the stepper
   *   links, row(spec) → a promise of a weight row (the worker's weight_row), kv(layer) → a promise
   *   of that layer's {keys, values} when the trace has none (the worker's walk_kv)
   */
  constructor(root, opts) {
    this.root = root;
    this.opts = opts;
    this.trace = null;
    this.steps = [];
    this.index = 0;
    this.pick = null; // {v: vector index, i}
    this.asked = 0; // the explanation's request number: an older async answer is dropped
  }

  /** Shows a trace (the worker's walk answer: blockTrace's with specs), from its first step. */
  show(trace, keepStep = false) {
    const id = this.steps[this.index]?.id;
    this.trace = trace;
    this.steps = walkSteps(this.opts.t, trace, this.opts.row, this.opts.kv);
    const again = keepStep ? this.steps.findIndex((s) => s.id === id) : -1;
    this.index = again >= 0 ? again : 0;
    this.pick = null;
    this.render();
  }

  clear() {
    this.trace = null;
    this.steps = [];
    this.root.replaceChildren();
  }

  go(index) {
    this.index = Math.max(0, Math.min(this.steps.length - 1, index));
    this.pick = null;
    this.render();
    this.dom.select.focus();
  }

  render() {
    const { t } = this.opts;
    if (!this.trace) { this.root.replaceChildren(); return; }
    const step = this.steps[this.index];
    const nav = el('div', 'tr-walk-nav');
    const lab = el('label', 'aps-label', t('walk.step'));
    lab.htmlFor = 'tr-walk-step';
    const select = el('select', 'tr-select tr-walk-select');
    select.id = 'tr-walk-step';
    this.steps.forEach((s, k) => {
      const o = el('option', '', `${k + 1}. ${s.title}`);
      o.value = String(k);
      select.append(o);
    });
    select.value = String(this.index);
    select.addEventListener('change', () => this.go(Number(select.value)));
    const prev = el('button', 'aps-btn', t('walk.prev'));
    prev.type = 'button';
    prev.disabled = this.index === 0;
    prev.addEventListener('click', () => this.go(this.index - 1));
    const next = el('button', 'aps-btn aps-btn-primary', t('walk.next'));
    next.type = 'button';
    next.disabled = this.index === this.steps.length - 1;
    next.addEventListener('click', () => this.go(this.index + 1));
    nav.append(lab, select, prev, next);

    const body = el('div', 'tr-walk-step');
    body.setAttribute('role', 'group');
    body.setAttribute('aria-labelledby', 'tr-walk-title');
    const h = el('h3', 'tr-walk-title', step.title);
    h.id = 'tr-walk-title';
    const formula = el('div', 'tr-walk-formula');
    for (const line of step.formula) { const p = el('p', 'tr-walk-fline'); p.append(mathLine(line)); formula.append(p); }
    body.append(h, formula);
    if (step.facts) body.append(el('p', 'tr-walk-facts', step.facts));
    const grid = el('div', 'tr-walk-grid');
    const vecs = el('div', 'tr-walk-vecs');
    step.vectors.forEach((vec, v) => vecs.append(this.vector(vec, v, step)));
    const explain = el('aside', 'aps-explain tr-walk-explain');
    explain.setAttribute('aria-live', 'polite');
    explain.setAttribute('aria-label', t('walk.explain'));
    grid.append(vecs, explain);
    body.append(grid);
    if (step.draw) body.append(this.drawn(step.draw));
    const tools = exportBar({
      lead: t('walk.exportLead'), file: `walk-${step.id}`, makeSvg: () => this.svg(), cls: 'tr-chart-tools',
      words: { png: 'PNG', svg: 'SVG', group: t('walk.exportGroup'), saved: t('export.saved') },
    });
    body.append(tools);
    this.dom = { select, explain, vecs, cells: [] };
    this.root.replaceChildren(nav, body);
    const first = step.vectors.findLastIndex((vec) => vec.explain);
    this.explainOf(first, 0, false);
  }

  /** The sampled token in words: which token, its probability, and the number that drew it. */
  drawn(d) {
    const p = el('p', 'tr-walk-choice');
    p.setAttribute('role', 'status');
    p.textContent = this.drawnText(d);
    return p;
  }

  /** The sentence naming the sampled token, on the page and in the saved figure. */
  drawnText(d) {
    const { t } = this.opts;
    const tok = tokenMark(d.text);
    return d.greedy
      ? t('walk.drawnGreedy', { tok })
      : t('walk.drawn', { tok, p: f(d.p), u: f(d.u), lo: f(d.cum_from), hi: f(d.cum_to), rank: d.rank + 1 });
  }

  /** One vector: its name and size, its numbers (buttons or a heat strip), stepper links for heads. */
  vector(vec, v, step) {
    const { t } = this.opts;
    const box = el('div', 'tr-walk-vec');
    const head = el('div', 'tr-walk-vechead');
    head.append(el('span', 'tr-walk-vecname tr-mono', vec.name), el('span', 'tr-walk-vecsize', t(vec.values.length === 1 ? 'walk.size1' : 'walk.size', { n: vec.values.length })));
    if (vec.explain === null) head.append(el('span', 'tr-walk-vecsize', t('walk.input')));
    if (step.heads && vec.head != null) {
      const spec = this.trace.specs?.[step.layer]?.[vec.head];
      if (spec) {
        const a = el('a', 'tr-walk-stepper', t('walk.openHead', { h: vec.head + 1 }));
        const tokens = this.trace.tokens ?? [];
        const source = headSource(step.layer, vec.head, { prompt: tokens.join(''), tokens });
        a.href = stepperUrl(spec, this.opts.lang, this.trace.position, source); // lands on this position's query row
        a.target = '_blank';
        a.rel = 'noopener';
        head.append(a);
      }
    }
    box.append(head);
    box.append(vec.values.length >= WIDE ? this.strip(vec, v) : this.cells(vec, v));
    return box;
  }

  /** A short vector: one button per number. */
  cells(vec, v) {
    const row = el('div', 'tr-walk-cells');
    row.setAttribute('role', 'group');
    row.setAttribute('aria-label', vec.name);
    const colour = colourOf(vec.values);
    const buttons = vec.values.map((x, i) => {
      const b = el('button', 'tr-walk-cell tr-mono', vec.labels ? `${tokenMark(vec.labels[i])} ${f(x, 3)}` : f(x, 3));
      b.type = 'button';
      b.style.background = colour(x); // CSSOM, allowed by style-src 'self'
      if (whiteText(colour(x))) b.classList.add('is-dark');
      b.setAttribute('aria-label', `${cellName(vec, i)} = ${f(x)}`);
      if (!vec.explain) b.disabled = true;
      if (vec.mark === i) { b.classList.add('is-drawn'); b.setAttribute('aria-label', `${cellName(vec, i)} = ${f(x)} · ${this.opts.t('walk.drawnMark')}`); }
      b.addEventListener('click', () => this.explainOf(v, i));
      b.addEventListener('pointerenter', () => { if (vec.explain) this.explainOf(v, i, false); });
      b.addEventListener('focus', () => { if (vec.explain) this.explainOf(v, i, false); });
      return b;
    });
    this.later(() => { this.dom.cells[v] = { kind: 'cells', buttons }; });
    row.append(...buttons);
    return row;
  }

  /** A wide vector: a heat strip (a slider for the keyboard) and the picked number's read-out. */
  strip(vec, v) {
    const box = el('div', 'tr-walk-stripbox');
    const canvas = el('canvas', 'tr-walk-strip');
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'slider');
    canvas.setAttribute('aria-label', vec.name);
    canvas.setAttribute('aria-valuemin', '1');
    canvas.setAttribute('aria-valuemax', String(vec.values.length));
    const read = el('div', 'tr-walk-readout tr-mono');
    const n = vec.values.length;
    const state = { kind: 'strip', canvas, read, at: 0, vec };
    const set = (i, commit) => { state.at = Math.max(0, Math.min(n - 1, i)); this.paintStrip(state); if (vec.explain) this.explainOf(v, state.at, commit); };
    const at = (e) => { const r = canvas.getBoundingClientRect(); return Math.floor(((e.clientX - r.left) / Math.max(1, r.width)) * n); };
    canvas.addEventListener('pointermove', (e) => set(at(e), false));
    canvas.addEventListener('click', (e) => { set(at(e), true); canvas.focus(); });
    canvas.addEventListener('keydown', (e) => {
      const step = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, PageDown: -16, PageUp: 16 }[e.key];
      if (step) set(state.at + step, true);
      else if (e.key === 'Home') set(0, true);
      else if (e.key === 'End') set(n - 1, true);
      else return;
      e.preventDefault();
    });
    canvas.addEventListener('focus', () => set(state.at, false));
    this.later(() => { this.dom.cells[v] = state; this.paintStrip(state); });
    box.append(canvas, read);
    return box;
  }

  /** Runs f once the render's dom is set (the vectors are built before it). */
  later(f) { queueMicrotask(f); }

  /** Paints a strip at its box's width, with the picked number outlined, and its read-out. */
  paintStrip(s) {
    const { canvas, vec, at } = s;
    const n = vec.values.length;
    const w = Math.max(1, canvas.clientWidth || 600);
    const hgt = 22;
    const dpr = globalThis.devicePixelRatio || 1;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(hgt * dpr);
    const g = canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    const colour = colourOf(vec.values);
    const cw = w / n;
    vec.values.forEach((x, i) => { g.fillStyle = colour(x); g.fillRect(i * cw, 0, Math.ceil(cw), hgt); });
    g.strokeStyle = '#1c2027';
    g.lineWidth = 2;
    g.strokeRect(at * cw, 1, Math.max(cw, 3), hgt - 2);
    const text = `${cellName(vec, at)} = ${f(vec.values[at])}`;
    canvas.setAttribute('aria-valuenow', String(at + 1));
    canvas.setAttribute('aria-valuetext', text);
    s.read.textContent = text;
  }

  /** The arithmetic of number i of vector v in the explanation box (async for a matmul's terms). */
  async explainOf(v, i, commit = true) {
    const step = this.steps[this.index];
    const vec = step?.vectors[v];
    if (!vec?.explain || !this.dom) return;
    if (!commit && this.pick?.commit) return; // a clicked number stays until another is clicked
    this.pick = { v, i, commit };
    const { t } = this.opts;
    const n = ++this.asked;
    for (const [k, c] of Object.entries(this.dom.cells)) {
      if (c?.kind === 'cells') c.buttons.forEach((b, j) => b.classList.toggle('is-picked', Number(k) === v && j === i));
    }
    const box = this.dom.explain;
    const title = el('p', 'aps-explain-title', `${cellName(vec, i)} = ${f(vec.values[i])}`);
    let lines;
    try {
      lines = await vec.explain(i);
    } catch (e) {
      lines = [{ text: e.message, kind: 'note' }];
    }
    if (n !== this.asked || box !== this.dom.explain) return;
    const list = el('div', 'aps-explain-lines');
    for (const line of lines) list.append(exLine(line));
    box.replaceChildren(title, list, el('p', 'aps-hint', t('walk.pickHint')));
  }

  /** The current step as SVG text (walk-figure.js, loaded on the first save). */
  async svg() {
    if (!this.trace) return '';
    const { stepSvg } = await import('./walk-figure.js');
    const { t } = this.opts;
    const tr = this.trace;
    return stepSvg(this.steps[this.index], {
      title: this.steps[this.index].title,
      subtitle: t('walk.figSubtitle', { tok: tokenMark(tr.tokens[tr.position]), p: tr.position, prompt: tr.tokens.map(tokenMark).join('') }),
      colourOf,
      fmt: f,
      legend: t('walk.figLegend'),
      note: this.steps[this.index].draw ? this.drawnText(this.steps[this.index].draw) : '',
    });
  }
}
