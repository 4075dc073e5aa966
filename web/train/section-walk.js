// section-walk.js — the training page's "whole block, step by step" section (#tr-walk): pick a
// position of the attention maps' prompt and walk its vector through the whole model with the
// model's own numbers — wte + wpe, ln_1, attention (each head linking into the stepper with the
// real Q, K, V), c_proj and the residual, ln_2, the MLP and its residual, layer after layer, then
// ln_f, the logits, the softmax and the sampled token: the core's seeded draw with generation's
// settings (sampling(): greedy, or temperature, top-k, top-p, and the seed), the same draw
// generation makes first for the same prompt. The core computes the trace in the reference tier (gpt.js
// blockTrace, through the worker's walk op); the view (walk-view.js, with walk-steps.js) is
// loaded on the first walk, so the page does not carry it before.
//
// Inputs (explicit, from main.js): maps() → the maps section's last result ({prompt, tokens, T,
// step} or null): the walk is of the prompt the maps show; new maps (another prompt, more
// training) forget the walk. main.js calls refresh() when the maps change. sampling() → the
// generation section's sampling options {greedy, seed, temperature?, top_k?, top_p?}, read at
// each walk.
// Interface (every section's): render() → its element; refresh(); clear() (the model is gone).
import { el, statusLine } from '../common/ui.js';
import { Section } from './section.js';
import { button, idEl } from './fields.js';
import { tokenMark as tokenLabel } from '../common/export.js';

export class WalkSection extends Section {
  /**
   * @param {object} ctx the page's context (context.js)
   * @param {{maps: () => object | null, sampling: () => object}} inputs
   */
  constructor(ctx, { maps, sampling }) {
    super(ctx);
    this.maps = maps;
    this.sampling = sampling;
    this.view = null; // one view for the page's life (walk-view.js)
    this.trace = null; // the last walk: the worker's answer with {prompt, step}
    this.position = -1; // the picked position (-1: the last)
    this.error = '';
  }

  render() {
    const { t } = this.ctx;
    const s = this.newCard({ id: 'tr-walk', cls: 'tr-card tr-walk', title: t('walk.title'), headingId: 'tr-walk-h', lede: t('walk.lede') });
    const { dom } = this;
    const row = el('div', 'tr-inline');
    const lab = el('label', 'aps-label', t('walk.position'));
    lab.htmlFor = 'tr-walk-position';
    dom.position = idEl('tr-walk-position', 'select', 'tr-select');
    dom.position.addEventListener('change', () => { this.position = Number(dom.position.value); this.walk(); });
    dom.button = button(t('walk.go'), 'walk-go', () => this.walk(), 'aps-btn aps-btn-primary');
    row.append(lab, dom.position, dom.button);
    dom.status = statusLine('tr-walk-status');
    dom.box = idEl('tr-walk-box', 'div', 'tr-walk-box');
    s.append(row, dom.status, dom.box);
    this.viewOpts = {
      t, lang: this.ctx.state.lang,
      row: (spec) => this.ctx.worker.call('weight_row', { run: 'main', spec }),
      kv: (layer) => this.keysOf(layer),
    };
    if (this.view) { this.view.root = dom.box; this.view.opts = this.viewOpts; if (this.trace) this.view.show(this.trace, true); }
    this.optionsFor = null;
    return s;
  }

  /**
   * A layer's keys and values for the trace shown, when it came without them (a model too large to
   * send them all): asked of the worker once per layer, on the first score or context opened.
   */
  keysOf(layer) {
    // the worker's model has trained on since this walk: its keys are not this trace's any more
    if (this.trace && this.rt.step !== this.trace.step) return Promise.reject(new Error(this.ctx.t('walk.kvStale', { step: this.trace.step })));
    if (!this.kvCache.has(layer)) {
      const asked = this.ctx.worker.call('walk_kv', { run: 'main', spec: { ...this.kvSpec, kv_layer: layer } });
      this.kvCache.set(layer, asked.catch((e) => { this.kvCache.delete(layer); throw e; })); // a failure is asked again
    }
    return this.kvCache.get(layer);
  }

  /** The trace of the picked position of the maps' prompt, from the worker. */
  async walk() {
    const m = this.maps();
    const { t } = this.ctx;
    if (!m) return;
    const position = this.position >= 0 && this.position < m.T ? this.position : m.T - 1;
    this.dom.status.textContent = t('walk.computing');
    // only the latest walk's answer is shown, and only while its maps are the page's (new maps: a
    // new prompt or model, and refresh() has already said so)
    const ticket = (this.ticket = (this.ticket ?? 0) + 1);
    const stale = () => ticket !== this.ticket || this.maps() !== m;
    try {
      const spec = { prompt: m.prompt, position, show: 10, sample: this.sampling() };
      const r = await this.ctx.worker.call('walk', { run: 'main', spec });
      if (stale()) return;
      this.kvSpec = { prompt: spec.prompt, position, show: 1 };
      this.kvCache = new Map();
      this.trace = { ...r, maps: m, step: m.step };
      this.error = '';
      if (!this.view) {
        const { WalkView } = await import('./walk-view.js');
        this.view = new WalkView(this.dom.box, this.viewOpts);
      }
      this.view.show(this.trace, true);
    } catch (e) {
      if (stale()) return;
      this.error = e.message;
    }
    this.refresh();
  }

  /** The position list follows the maps' prompt (its tokens). */
  refreshOptions(m) {
    const { dom } = this;
    if (this.optionsFor === m) return;
    this.optionsFor = m;
    const opts = (m?.tokens ?? []).map((tok, i) => {
      const o = el('option', '', `${i} · ${tokenLabel(tok)}`);
      o.value = String(i);
      return o;
    });
    dom.position.replaceChildren(...opts);
    if (m) dom.position.value = String(this.position >= 0 && this.position < m.T ? this.position : m.T - 1);
  }

  refresh() {
    const { dom } = this;
    if (!dom.button) return;
    const { t } = this.ctx;
    const m = this.maps();
    this.refreshOptions(m);
    dom.button.disabled = !m;
    dom.position.disabled = !m;
    if (this.trace && this.trace.maps !== m) { this.trace = null; this.view?.clear(); } // new maps: a new prompt or model
    if (this.error) dom.status.textContent = this.error;
    else if (!m) dom.status.textContent = t('walk.needMaps');
    else if (!this.trace) dom.status.textContent = t('walk.ready');
    else {
      const tr = this.trace;
      dom.status.textContent = t('walk.shown', { p: tr.position, tok: this.tokenSaid(tr.tokens[tr.position]), step: tr.step, L: tr.config.n_layer, act: tr.config.mlp === 'swiglu' ? t('walk.act.swiglu') : tr.activation === 'gelu_new' ? t('walk.act.tanh') : t('walk.act.erf') });
    }
  }

  /** A token as the status says it: its text, or "token id 13" for a model read as ids (not "[13]", which reads like an index). */
  tokenSaid(tok) {
    const { t } = this.ctx;
    const id = this.rt.info?.tokenizer === 'token_ids' && /^\[(\d+)\]$/.exec(tok);
    return id ? t('walk.tokId', { id: id[1] }) : t('walk.tokText', { tok: tokenLabel(tok) });
  }

  /** The model is gone (a reset): no trace. */
  clear() {
    this.trace = null;
    this.view?.clear();
    this.refresh();
  }
}
