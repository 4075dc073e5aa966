// section-next-token.js — the training page's "next token" section (#tr-next): for the last
// position of a prompt, bars for the most likely next tokens (the token with a visible mark for a
// space or a newline, its probability and its logit), and the controls that reshape them live —
// the temperature, and the top k or the top p. Every change is answered by the core
// (gpt.js nextToken, src/core/model/next_token.h: the numbers the sampler draws from); nothing is
// recomputed here. A prompt runs the model once; a slider reshapes the logits the core kept.
//
// Requests go through the worker one at a time: while one is out, a newer slider position waits,
// and only the latest is sent next (a fast drag does not queue dozens). Each answer repeats the
// options it was computed for, and the bars say them. While the run trains, the bars follow its
// weights about once a second (follow()), not after every chunk of steps.
//
// Interface (every section's): render() → its element; refresh(). Also reset() (the model is gone)
// and followTask() (a prompt that was the default follows a new task).
import { el, segGroup, statusLine, setText, hide } from '../common/ui.js';
import { Section } from './section.js';
import { barsTable, fillBars, factsText } from './next-bars.js';
import { exportBar, tokenMark as tokenLabel } from '../common/export.js';
import { promptField, refreshFieldError, fromField, idEl, button } from './fields.js';
import { samplingText } from './section-generation.js';

/** The last 40 characters of a text, '…' before them if it is longer (a figure's title). */
const tail = (x) => ([...x].length > 40 ? `…${[...x].slice(-40).join('')}` : x);

/** How many of the most likely tokens get a bar. */
export const SHOW = 16;
/** While a run trains, the bars follow its weights at most this often. */
const FOLLOW_MS = 1000;


/** A labelled range input with its value beside it. */
function slider(id, label, { min, max, step, value }, onInput) {
  const box = el('div', 'tr-field tr-next-slider');
  const lab = el('label', 'aps-label', label);
  lab.htmlFor = id;
  const inp = idEl(id, 'input', 'tr-range');
  inp.type = 'range';
  inp.min = String(min);
  inp.max = String(max);
  inp.step = String(step);
  inp.value = String(value);
  const out = el('output', 'tr-num tr-next-value', String(value));
  out.htmlFor = id;
  inp.addEventListener('input', () => { out.textContent = inp.value; onInput(Number(inp.value)); });
  box.append(lab, inp, out);
  return { box, input: inp, out };
}

export class NextTokenSection extends Section {
  /** @param {object} ctx the page's context (context.js) */
  constructor(ctx) {
    super(ctx);
    this.opts = { mode: 'top_k', temperature: 1, top_k: 5, top_p: 0.9 };
    this.answer = null; // the core's last answer, with the step it is of
    this.error = '';
    this.inFlight = false;
    this.queued = false; // a newer request waits for the one out
    this.ranFor = null; // {info, step, prompt}: what the core's kept logits are of
    this.askedAt = -Infinity; // when the last request went out (performance.now())
    this.followTimer = null; // follow()'s next look while the run trains
  }

  render() {
    const { t } = this.ctx;
    const s = this.newCard({ id: 'tr-next', cls: 'tr-card tr-next', title: t('next.title'), headingId: 'tr-next-h', lede: t('next.lede') });
    const { dom } = this;
    const p = promptField(this.ctx, 'next_prompt', this.ctx.nextPrompt(), () => this.ask(), t('h.next_prompt'));
    p.input.addEventListener('input', () => this.ask());
    dom.prompt = p.input;
    const V = this.vocabSize();
    const o = this.opts;
    const temp = slider('tr-next-temperature', t('next.temperature'), { min: 0.05, max: 3, step: 0.05, value: o.temperature }, (v) => { o.temperature = v; this.ask(); });
    const mode = segGroup({
      label: t('next.mode'), key: 'next_mode', idPrefix: 'tr-', value: o.mode,
      items: [['top_k', t('next.mode.top_k')], ['top_p', t('next.mode.top_p')]],
      onPick: (v) => { o.mode = v; this.refreshControls(); this.ask(); },
    });
    const modeBox = el('div', 'tr-field');
    modeBox.append(el('span', 'aps-label', t('next.mode')), mode);
    const k = slider('tr-next-top_k', t('next.top_k'), { min: 1, max: Math.max(V, 1), step: 1, value: Math.min(o.top_k, Math.max(V, 1)) }, (v) => { o.top_k = v; this.ask(); });
    const pp = slider('tr-next-top_p', t('next.top_p'), { min: 0.01, max: 1, step: 0.01, value: o.top_p }, (v) => { o.top_p = v; this.ask(); });
    dom.k = k;
    dom.p = pp;
    const controls = el('div', 'tr-next-controls');
    controls.append(temp.box, modeBox, k.box, pp.box);
    dom.status = statusLine('tr-next-status');
    dom.facts = idEl('tr-next-facts', 'p', 'tr-next-facts');
    dom.table = barsTable(t, t('next.table'));
    const scroll = el('div', 'tr-scroll');
    scroll.append(dom.table);
    const tools = exportBar({
      lead: t('next.exportLead'), file: 'next-token', makeSvg: () => this.svg(), cls: 'tr-chart-tools',
      words: { png: 'PNG', svg: 'SVG', group: t('next.exportGroup'), saved: t('export.saved') },
    });
    // one set of sampling settings seen from both sides: what generation draws with, and a button
    // that makes it draw with these sliders (generation's own fields stay the ones it uses)
    dom.link = el('div', 'tr-next-link');
    dom.genSays = idEl('tr-next-gen', 'p', 'tr-next-gen');
    dom.genSays.setAttribute('aria-live', 'polite');
    dom.useGen = button(t('next.useGen'), 'next-use-gen', () => this.useForGeneration());
    dom.link.append(dom.genSays, dom.useGen);
    s.append(p.row, p.err, p.hint, controls, dom.link, dom.status, dom.facts, scroll, el('p', 'tr-hint tr-next-legend', t('next.legend')), tools);
    this.refreshControls();
    return s;
  }

  /** The bars shown as SVG text (nothing before an answer; a promise: figures.js loads on the first save). */
  async svg() {
    const a = this.answer;
    if (!a) return '';
    const { t } = this.ctx;
    const { barsSvg } = await import('../common/figures.js');
    return barsSvg(a, {
      title: t('next.figTitle', { prompt: tail((a.tokens ?? []).map(tokenLabel).join('')) }), subtitle: factsText(t, a),
      p: t('next.col.p'), logit: t('next.col.logit'), dropped: t('next.figDropped'), keptKey: t('next.figKept'), fullKey: t('next.figFull'),
    });
  }

  vocabSize() {
    return this.rt.info?.config?.vocab_size ?? this.answer?.vocab_size ?? 1;
  }

  /** The top-k slider's range follows the vocabulary; the inactive mode's slider is hidden. */
  refreshControls() {
    const { dom, opts } = this;
    if (!dom.k) return;
    const V = Math.max(this.vocabSize(), 1);
    if (dom.k.input.max !== String(V)) dom.k.input.max = String(V);
    const k = String(Math.min(opts.top_k, V));
    if (dom.k.input.value !== k) dom.k.input.value = k;
    setText(dom.k.out, k);
    hide(dom.k.box, opts.mode !== 'top_k');
    hide(dom.p.box, opts.mode !== 'top_p');
  }

  /** The generation's sampling fields set to these sliders (greedy off): generation draws as the bars show. */
  useForGeneration() {
    const { state } = this.ctx;
    const o = this.spec();
    state.fields.gen_temperature = String(o.temperature);
    state.fields.gen_top_k = String(o.top_k);
    state.fields.gen_top_p = String(o.top_p);
    state.gen_greedy = false;
    for (const k of ['gen_temperature', 'gen_top_k', 'gen_top_p']) {
      const inp = this.ctx.byId(`tr-f-${k}`);
      if (inp) inp.value = state.fields[k];
    }
    const cb = this.ctx.byId('tr-f-gen_greedy');
    if (cb) cb.checked = false;
    this.ctx.formChanged();
  }

  /** What generation draws with, beside the sliders: the same as the bars, or what differs. */
  refreshLink() {
    const { dom } = this;
    if (!dom.link) return;
    const onPage = this.ctx.onPage('generation');
    hide(dom.link, !onPage);
    if (!onPage) return;
    const { t } = this.ctx;
    const gen = this.ctx.sections.generation.sampling();
    const mine = this.spec();
    const V = this.vocabSize();
    const k = (x) => (!x || x >= V ? 0 : x); // top-k of the whole vocabulary keeps every token
    const same = !gen.greedy && gen.temperature === mine.temperature && k(gen.top_k) === k(mine.top_k) && gen.top_p === mine.top_p;
    setText(dom.genSays, t(same ? 'next.gen.same' : 'next.gen.other', { how: samplingText(t, gen, V) }));
    dom.useGen.disabled = same;
  }

  /** The core's options from the controls. */
  spec() {
    const o = this.opts;
    return { temperature: o.temperature, top_k: o.mode === 'top_k' ? Math.min(o.top_k, this.vocabSize()) : 0, top_p: o.mode === 'top_p' ? o.top_p : 1, show: SHOW };
  }

  /** Asks the core for the distribution the controls describe (one request out at a time). */
  async ask() {
    this.refreshLink();
    const { rt } = this;
    if (!rt.info) return;
    if (this.inFlight) { this.queued = true; return; }
    this.inFlight = true;
    this.askedAt = performance.now();
    this.ctx.app.dataset.next = 'asking';
    const prompt = this.ctx.nextPrompt();
    const spec = this.spec();
    const r = this.ranFor;
    const fresh = !r || r.failed || r.info !== rt.info || r.step !== rt.step || r.prompt !== prompt;
    if (fresh) spec.prompt = fromField(prompt);
    const at = { info: rt.info, step: rt.step, prompt };
    try {
      const a = await this.ctx.worker.call('next_token', { run: 'main', spec });
      this.answer = { ...a, step: at.step };
      this.ranFor = at;
      this.error = '';
      delete rt.errors.next_prompt;
    } catch (e) {
      // asked for these weights and this prompt: not again until one of them changes
      this.ranFor = { ...at, failed: true };
      this.answer = null;
      if (e.field === 'prompt') rt.errors.next_prompt = e.message;
      else this.error = e.message;
    }
    this.inFlight = false;
    if (this.queued) { this.queued = false; this.ask(); } else this.ctx.app.dataset.next = 'ready';
    this.refresh();
  }

  /**
   * Asks for the new weights' bars: at once, except while the same run trains, where the bars
   * follow it at most every FOLLOW_MS (each answer is a forward pass in the training worker
   * between two chunks of steps, and new bars in the page: asked after every chunk, they took the
   * training's time and the page's thread for a change too fast to read).
   */
  follow() {
    const { rt } = this;
    const wait = this.askedAt + FOLLOW_MS - performance.now();
    if (rt.status !== 'training' || this.ranFor?.info !== rt.info || !(wait > 0)) { this.ask(); return; }
    this.followTimer ??= setTimeout(() => { this.followTimer = null; this.refresh(); }, wait);
  }

  /** The model is gone (reset): no bars. */
  reset() {
    this.answer = null;
    this.ranFor = null;
  }

  refresh() {
    const { rt, dom } = this;
    if (!dom.status) return;
    const { t } = this.ctx;
    this.refreshControls();
    this.refreshLink();
    refreshFieldError(this.ctx, 'next_prompt');
    // a new model, or new weights: ask again (the core forgets the logits when the weights change)
    const r = this.ranFor;
    if (rt.info && !this.inFlight && (!r || r.info !== rt.info || r.step !== rt.step)) this.follow();
    const a = this.answer;
    let s;
    if (!rt.info) s = t('next.noModel');
    else if (this.error) s = this.error;
    else if (!a) s = t('next.asking');
    else s = t('next.status', { ...this.ctx.modelLabel(a.step), n: a.tokens.length, context: a.tokens.map(tokenLabel).join('') });
    setText(dom.status, s);
    if (!a || !rt.info) {
      setText(dom.facts, '');
      dom.table.tBodies[0].replaceChildren();
      return;
    }
    setText(dom.facts, factsText(t, a));
    if (dom.shown !== a) { dom.shown = a; fillBars(dom.table, t, a); }
  }

  /** A prompt that was the default follows a new task. */
  followTask() {
    if (!this.ctx.state.next_prompt && this.dom.prompt) this.dom.prompt.value = this.ctx.nextPrompt();
  }
}
