// section-checkpoints.js — the training page's "checkpoints" section (#tr-ckpt): download the
// model as .safetensors (the core's format), and upload one (the page's own or the gpt CLI's).
// An upload that the core refuses gets its message, and the model that was there stays (its run
// paused for the load and resumed after); one it accepts fills the form with its config and
// starts its curve where it was saved.
//
// Interface (every section's: a class made with the page's context): render() → its element;
// refresh(); adopt(info, …) (a model loaded into the main run becomes the page's run: an upload,
// or a kept run resumed by section-runs.js).
import { el, downloadBlob } from '../common/ui.js';
import { Section } from './section.js';
import { button, buttonBar, fmtInt, idEl, filePicker } from './fields.js';

export class CheckpointsSection extends Section {
  render() {
    const { t } = this.ctx;
    const s = this.newCard({ id: 'tr-ckpt', cls: 'tr-card tr-ckpt', title: t('ckpt.title'), headingId: 'tr-ckpt-h', lede: t('ckpt.lede') });
    const { dom } = this;
    dom.download = button(t('ckpt.download'), 'download', () => this.download(), 'aps-btn aps-btn-primary');
    // a label is not focusable: the file input itself takes the focus (visually hidden, focus shown on the label)
    const { input: file, label: up } = filePicker('tr-upload-file', t('ckpt.upload'), '.safetensors,application/octet-stream', (f) => this.upload(f[0]));
    dom.msg = idEl('tr-ckpt-msg', 'div', 'tr-ckpt-msg');
    dom.msg.setAttribute('role', 'status');
    s.append(buttonBar(dom.download, file, up), dom.msg, el('p', 'aps-hint', t('ckpt.hint')));
    return s;
  }

  /** Saves the model in the worker and offers it as a .safetensors download. */
  async download() {
    const { rt } = this;
    if (!rt.info) return;
    try {
      const { bytes, info } = await this.ctx.worker.call('save', { run: 'main' });
      // an opened model is named by where it came from (nanoGPT's iter_num in it), not the page's step 0
      const what = info.source && !info.base ? info.source.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
        : `${info.data?.task ?? 'text'}-${info.config.n_layer}x${info.config.n_embd}-step${info.step}`;
      const name = `gpt-${what}.safetensors`;
      downloadBlob(name, new Blob([bytes], { type: 'application/octet-stream' }));
      rt.ckpt.message = { kind: 'info', text: this.ctx.t('ckpt.saved', { name, bytes: fmtInt(bytes.length), ...this.ctx.modelLabel(info.step) }) };
    } catch (e) {
      rt.ckpt.message = { kind: 'error', text: e.message };
    }
    this.refresh();
  }

  /** Loads a checkpoint into the main run: the form, the curve and the views follow it. */
  async upload(file) {
    const { rt } = this;
    const { t } = this.ctx;
    const { training } = this.ctx.sections;
    rt.ckpt.message = { kind: 'info', text: t('ckpt.reading', { name: file.name }) };
    this.refresh();
    const wasTraining = rt.status === 'training';
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      if (wasTraining) await training.pause();
      const { state } = this.ctx;
      const text = state.task === 'text' ? state.text : '';
      const info = await this.ctx.worker.call('load', { run: 'main', bytes, text, sample: { prompt: '', every: 0 } }, [bytes.buffer]);
      await this.adopt(info, { name: file.name });
      rt.ckpt.message = { kind: 'info', text: t('ckpt.loaded', { name: file.name, step: info.step, n: fmtInt(info.n_params) }) };
    } catch (e) {
      // the core's message; the model that was there stays
      rt.ckpt.message = { kind: 'error', text: t('ckpt.refused', { name: file.name }), detail: e.message };
      if (wasTraining) await training.resume();
    }
    this.refresh();
  }

  /**
   * The model just loaded into the main run's worker becomes the page's run. The form shows
   * `state` (a kept run's settings) or else the checkpoint's config; the curve is `kept`'s (a
   * kept run's runtime fields: series, samples, figures, keepId) or else starts where the
   * checkpoint was saved; the views start again for the new model.
   */
  async adopt(info, { name, state = null, kept = null }) {
    const { rt } = this;
    const { training, data, generation } = this.ctx.sections;
    if (state) this.ctx.setState(state);
    else data.fromInfo(info);
    training.resetRun();
    if (kept) Object.assign(rt, kept);
    rt.info = info;
    rt.step = info.step;
    rt.steps = info.steps;
    const key = this.ctx.specKey();
    rt.runSpecKey = key === 'invalid' ? '' : key; // '' while the core's memory answer is pending: no "changed" note
    rt.runState = structuredClone(this.ctx.state);
    if (!kept && info.val_loss != null) { rt.series.valSteps.push(info.step); rt.series.val.push(info.val_loss); rt.lastVal = info.val_loss; }
    rt.status = info.diverged ? 'diverged' : info.step >= info.steps ? 'done' : 'paused';
    rt.divergence = info.divergence ?? '';
    rt.loadedFrom = name;
    rt.maps = null;
    generation.reset();
    this.ctx.sections.interp?.reset();
    // the sampling prompt goes with the loaded model's data
    await this.ctx.worker.call('set_sample', { run: 'main', sample: this.ctx.sampleSpec(this.ctx.validated().values) }).catch(() => {});
    this.ctx.render();
    this.ctx.writeHash();
  }

  refresh() {
    const { rt, dom } = this;
    if (!dom.download) return;
    dom.download.disabled = !rt.info;
    dom.msg.replaceChildren();
    const m = rt.ckpt.message;
    if (m) {
      dom.msg.className = `tr-ckpt-msg is-${m.kind}`;
      dom.msg.append(el('p', '', m.text));
      if (m.detail) dom.msg.append(el('p', 'tr-core-msg', m.detail));
      if (m.kind === 'error' && rt.info) dom.msg.append(el('p', 'aps-hint', this.ctx.t('ckpt.kept', this.ctx.modelLabel(rt.step))));
    } else dom.msg.className = 'tr-ckpt-msg';
  }
}

