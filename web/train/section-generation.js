// section-generation.js — the training page's "generation" section (#tr-gen): a prompt and the
// sampling options (greedy, or temperature, top-k and top-p; the seed; how many tokens), then one token
// at a time (Next) or one every 350 ms (Play), with the KV cache made visible (kv.js, loaded on the first
// generation). Generation needs a model and waits while it trains.
//
// Interface (every section's: a class made with the page's context): render() → its element;
// refresh(). Also stop() (stops playing), reset() (forgets the generation) and followTask() (a
// prompt that was the task's default follows a new task).
import { GEN_FIELDS } from './config.js';
import { el, statusLine, setText } from '../common/ui.js';
import { Section } from './section.js';
import { button, buttonBar, numField, promptField, refreshFieldError, fromField, idEl } from './fields.js';

const PLAY_MS = 350;

/** Sampling options {greedy, temperature, top_k, top_p} in words, for a vocabulary of V tokens. */
export function samplingText(t, o, V) {
  if (o.greedy) return t('samp.greedy');
  const parts = [t('samp.temperature', { v: o.temperature })];
  if (o.top_k > 0 && o.top_k < V) parts.push(t('samp.top_k', { k: o.top_k }));
  if (o.top_p < 1) parts.push(t('samp.top_p', { p: o.top_p }));
  if (parts.length === 1) parts.push(t('samp.all'));
  return parts.join(t('samp.sep'));
}

export class GenerationSection extends Section {
  /** @param {object} ctx the page's context (context.js) */
  constructor(ctx) {
    super(ctx);
    this.view = null; // one view for the page's life: a render gives it the new box and the new words
    this.playTimer = 0;
  }

  render() {
    const { t, state } = this.ctx;
    const s = this.newCard({ id: 'tr-gen', cls: 'tr-card tr-gen', title: t('gen.title'), headingId: 'tr-gen-h', lede: t('gen.lede') });
    const { dom } = this;
    const p = promptField(this.ctx, 'gen_prompt', this.ctx.genPrompt(), null, t('h.gen_prompt'));
    dom.prompt = p.input;
    const grid = el('div', 'tr-grid');
    for (const k of GEN_FIELDS) grid.append(numField(this.ctx, k));
    const gw = el('div', 'tr-field aps-field-check tr-greedy');
    const gl = el('label', 'aps-check-label');
    const cb = el('input', 'aps-check');
    cb.type = 'checkbox';
    cb.id = 'tr-f-gen_greedy';
    cb.checked = state.gen_greedy;
    cb.addEventListener('change', () => { this.ctx.state.gen_greedy = cb.checked; this.refresh(); this.ctx.writeHash(); });
    gl.append(cb, el('span', '', t('f.gen_greedy')));
    gw.append(gl);
    grid.append(gw);
    dom.start = button(t('gen.start'), 'gen-start', () => this.start(), 'aps-btn aps-btn-primary');
    dom.next = button(t('gen.next'), 'gen-next', () => this.next());
    dom.play = button(t('gen.play'), 'gen-play', () => this.play());
    dom.status = statusLine('tr-gen-status');
    dom.box = idEl('tr-kv', 'div', 'tr-kv');
    dom.draws = idEl('tr-gen-draws', 'p', 'tr-hint tr-gen-draws');
    s.append(p.row, p.err, p.hint, grid, dom.draws, buttonBar(dom.start, dom.next, dom.play), dom.status, dom.box);
    if (this.view) { this.view.root = dom.box; this.view.opts = { t }; }
    return s;
  }

  /** The KV-cache view (kv.js), loaded on the first generation: a learner who never generates never downloads it. */
  async loadView() {
    if (this.view) return;
    this.kv ??= await import('./kv.js');
    this.view ??= new this.kv.KvView(this.dom.box, { t: this.ctx.t });
    this.view.width = this.dom.box.clientWidth; // its ResizeObserver reports after the first drawing
  }

  /** Stops playing. */
  stop() {
    clearTimeout(this.playTimer);
    this.rt.gen.playing = false;
  }

  /** Forgets the generation (the run was reset or replaced). */
  reset() {
    this.stop();
    this.view?.reset();
    this.rt.gen.active = false;
  }

  /** The core's generation spec from the form. */
  spec() {
    const v = this.ctx.validated().values;
    const greedy = this.ctx.state.gen_greedy;
    const out = { prompt: fromField(this.ctx.genPrompt()), max_new_tokens: v.gen_max ?? 24, greedy, seed: v.gen_seed ?? 1 };
    if (!greedy) { out.temperature = v.gen_temperature ?? 1; out.top_k = v.gen_top_k ?? 0; out.top_p = v.gen_top_p ?? 1; }
    return out;
  }

  /** The sampling options of the spec (no prompt, no length): the walk's draw uses them too. */
  sampling() {
    const { prompt, max_new_tokens, ...o } = this.spec();
    return o;
  }

  /** Starts generating from the prompt: the prompt goes through the cache. */
  async start() {
    const { rt } = this;
    this.stop();
    delete rt.errors.gen_prompt;
    const v = this.ctx.validated();
    if (!GEN_FIELDS.every((k) => !v.errors[k])) { this.ctx.sections.data.refresh(); return; }
    if (!this.ctx.genPrompt()) { rt.errors.gen_prompt = this.ctx.t('err.promptEmpty'); refreshFieldError(this.ctx, 'gen_prompt'); return; }
    try {
      const g = await this.ctx.worker.call('gen_start', { run: 'main', spec: this.spec() });
      await this.loadView();
      const c = rt.info.config;
      this.view.start(g, { n_layer: c.n_layer, n_head: c.n_head, n_kv_head: c.n_kv_head || c.n_head, n_embd: c.n_embd, vocab: rt.info.vocab, vocab_size: c.vocab_size }, fromField(this.ctx.genPrompt()));
      rt.gen.active = true;
      rt.gen.generated = 0;
      rt.gen.max = this.spec().max_new_tokens;
    } catch (e) {
      rt.errors.gen_prompt = e.message;
    }
    this.refresh();
  }

  /** One more token; resolves whether another may follow. */
  async next() {
    const { rt } = this;
    if (!rt.gen.active) return false;
    if (rt.gen.generated >= rt.gen.max) { this.stop(); this.refresh(); return false; }
    try {
      const g = await this.ctx.worker.call('gen_next', { run: 'main' });
      rt.gen.generated = g.generated;
      this.view.push(g);
    } catch (e) {
      rt.errors.gen_prompt = e.message;
      this.stop();
      rt.gen.active = false;
    }
    this.refresh();
    return rt.gen.active;
  }

  /** Play: one token every PLAY_MS until the end or Stop; Stop when playing. */
  play() {
    const { rt } = this;
    if (rt.gen.playing) { this.stop(); this.refresh(); return; }
    if (!rt.gen.active) return;
    rt.gen.playing = true;
    this.refresh();
    const tick = async () => {
      if (!rt.gen.playing) return;
      const more = await this.next();
      if (more && rt.gen.playing && rt.gen.generated < rt.gen.max) this.playTimer = setTimeout(tick, PLAY_MS);
      else { this.stop(); this.refresh(); }
    };
    tick();
  }

  refresh() {
    const { rt, dom } = this;
    if (!dom.start) return;
    const { t } = this.ctx;
    const training = rt.status === 'training' || rt.status === 'starting';
    const can = Boolean(rt.info) && !training;
    const bar = [dom.next, dom.play, dom.start];
    const had = this.ctx.app.getRootNode().activeElement;
    dom.start.disabled = !can;
    dom.next.disabled = !can || !rt.gen.active || rt.gen.playing || rt.gen.generated >= rt.gen.max;
    dom.play.disabled = !can || !rt.gen.active || (!rt.gen.playing && rt.gen.generated >= rt.gen.max);
    // a button that disabled itself under the keyboard's focus (Next or Play at the last token)
    // hands the focus to one that still works, not to <body>
    if (bar.includes(had) && had.disabled) bar.find((b) => !b.disabled)?.focus();
    dom.play.textContent = rt.gen.playing ? t('gen.stop') : t('gen.play');
    for (const k of ['gen_temperature', 'gen_top_k', 'gen_top_p']) {
      const inp = this.ctx.byId(`tr-f-${k}`);
      if (inp) inp.disabled = this.ctx.state.gen_greedy;
    }
    refreshFieldError(this.ctx, 'gen_prompt');
    // what the fields mean for each new token, and where the next-token panel's sliders come in
    const V = rt.info?.config?.vocab_size ?? Infinity;
    setText(dom.draws, [t('gen.draws', { how: samplingText(t, this.sampling(), V) }), this.ctx.onPage('next') ? t('gen.drawsLink') : ''].filter(Boolean).join(' '));
    this.ctx.sections.next?.refreshLink();
    let s;
    if (!rt.info) s = t('gen.noModel');
    else if (training) s = t('gen.training');
    else if (!rt.gen.active) s = t('gen.ready');
    else s = t('gen.status', { n: rt.gen.generated, max: rt.gen.max, tol: this.kv.KV_TOLERANCE });
    setText(dom.status, s);
    if (training && rt.gen.active) { rt.gen.active = false; this.stop(); }
    if (rt.gen.active && this.view?.last && !dom.box.firstChild) this.view.render();
  }

  /** A prompt that was the task's default follows a new task. */
  followTask() {
    if (!this.ctx.state.gen_prompt && this.dom.prompt) this.dom.prompt.value = this.ctx.genPrompt();
  }
}

