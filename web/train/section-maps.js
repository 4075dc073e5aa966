// section-maps.js — the training page's "attention maps" section (#tr-maps-section): a prompt
// (the task's example by default), and the trained model's attention maps for it, one per layer
// and head with the mean over heads and the rollout (the model view, model-view.js, loaded with the
// first maps; maps.js draws them), each head a link to the Attention Stepper. The prompt is checked here
// (a model, not empty) and in the worker (at most the stepper's STEPPER_MAX_ROWS tokens of the model,
// counted by the core's tokenizer: characters, GPT-2's BPE pieces or [id]s); the core checks the
// rest (characters the model never saw) and its message goes beside the prompt, which stays as typed.
//
// Interface (every section's: a class made with the page's context): render() → its element;
// refresh(). Also clear() (no maps), followTask() and onShown (set by main.js: called after new maps) (a prompt that was the task's default follows
// a new task).
import { STEPPER_MAX_ROWS } from './config.js';
import { el, statusLine } from '../common/ui.js';
import { Section } from './section.js';
import { button, promptField, refreshFieldError, fromField, idEl } from './fields.js';

export class MapsSection extends Section {
  /** @param {object} ctx the page's context (context.js) */
  constructor(ctx) {
    super(ctx);
    this.view = null; // one view for the page's life (from the first maps): a render gives it the new box and the new words
  }

  render() {
    const { t } = this.ctx;
    const s = this.newCard({ id: 'tr-maps-section', cls: 'tr-card tr-maps', title: t('maps.title'), headingId: 'tr-maps-h', lede: t('maps.lede') });
    const { dom } = this;
    const p = promptField(this.ctx, 'prompt', this.ctx.mapsPrompt(), () => this.show(), t('h.prompt', { max: STEPPER_MAX_ROWS }));
    dom.prompt = p.input;
    dom.button = button(t('maps.show'), 'maps', () => this.show(), 'aps-btn aps-btn-primary');
    p.row.append(dom.button);
    dom.status = statusLine('tr-maps-status');
    dom.box = idEl('tr-maps-box', 'div', 'tr-maps-box');
    s.append(p.row, p.err, p.hint, dom.status, dom.box);
    this.viewOpts = { t, lang: this.ctx.state.lang, modelLabel: (step) => this.ctx.modelLabel(step) };
    if (this.view) { this.view.root = dom.box; this.view.opts = this.viewOpts; this.view.result = null; }
    return s;
  }

  /** The model view (model-view.js, loaded with the first maps: the page does not carry it before). */
  async loadView() {
    const { ModelView } = await import('./model-view.js');
    if (!this.view) this.view = new ModelView(this.dom.box, this.viewOpts);
    this.refresh();
  }

  /** The message beside the prompt (an action's: rt.errors.prompt). */
  fail(msg) {
    this.rt.errors.prompt = msg;
    refreshFieldError(this.ctx, 'prompt');
  }

  /** The trained model's attention maps for the prompt, from the worker. */
  async show() {
    const { rt } = this;
    const { t } = this.ctx;
    const prompt = fromField(this.ctx.mapsPrompt());
    delete rt.errors.prompt;
    if (!rt.info) { this.fail(t('maps.noModel')); return; }
    if (!prompt) { this.fail(t('err.promptEmpty')); return; }
    this.dom.status.textContent = t('maps.computing');
    // Only the latest request's answer is shown, and only while its model is the page's: an earlier
    // request can come back after a later one, and a model loaded meanwhile (an upload read while
    // the maps were computed) must not get the previous model's maps.
    const ticket = (this.ticket = (this.ticket ?? 0) + 1);
    const info = rt.info;
    const stale = () => ticket !== this.ticket || rt.info !== info;
    try {
      const r = await this.ctx.worker.call('maps', { run: 'main', prompt, max_tokens: STEPPER_MAX_ROWS });
      if (stale()) return;
      if (r.too_long) {
        this.dom.status.textContent = '';
        this.fail(t('err.promptLong', { n: r.too_long.tokens, max: r.too_long.max }));
        return;
      }
      rt.maps = { ...r, n_kv_head: rt.info.config.n_kv_head, mask: rt.info.config.mask, window: rt.info.config.window ?? 0, sink: rt.info.config.sink ?? 0, step: rt.step, prompt, model: this.modelName() };
      this.refresh();
      this.onShown?.();
    } catch (e) {
      if (stale()) return;
      this.dom.status.textContent = '';
      this.fail(e.message);
    }
  }

  /** The model's name for the stepper's line about a head: an opened or loaded model's file, else the one trained here. */
  modelName() {
    const { rt } = this;
    const c = rt.info.config;
    return rt.opened?.name || rt.loadedFrom || this.ctx.t('maps.modelHere', { L: c.n_layer, H: c.n_head, step: rt.step });
  }

  refresh() {
    const { rt, dom } = this;
    if (!dom.button) return;
    const { t } = this.ctx;
    dom.button.disabled = !rt.info;
    refreshFieldError(this.ctx, 'prompt');
    if (!rt.maps) {
      dom.status.textContent = rt.info ? t('maps.ready') : t('maps.noModel');
      this.view?.clear();
      return;
    }
    const m = rt.maps;
    dom.status.textContent = t(rt.info?.tokenizer && rt.info.tokenizer !== 'characters' ? 'maps.shownTokens' : 'maps.shown', { ...this.ctx.modelLabel(m.step), T: m.T, L: m.n_layer, H: m.n_head, mask: t(`mask.${m.mask}`) });
    if (!this.view) this.loadView().catch((e) => this.fail(e.message));
    else if (this.view.result !== m) this.view.show(m, m.window ? { mask: m.mask, window: m.window, sink: m.sink } : m.mask);
  }

  /** No maps (the run was reset). */
  clear() {
    this.view?.clear();
  }

  /** A prompt that was the task's default follows a new task. */
  followTask() {
    if (!this.ctx.state.prompt && this.dom.prompt) this.dom.prompt.value = this.ctx.mapsPrompt();
  }
}

