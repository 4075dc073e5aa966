// section-checkpoints.js — the training page's "checkpoints" section (#tr-ckpt): download the
// model as .safetensors (the core's format), and upload one (the page's own or the gpt CLI's).
// An upload that the core refuses gets its message, and the model that was there stays (its run
// paused for the load and resumed after); one it accepts fills the form with its config and
// starts its curve where it was saved.
//
// Interface (every section's: a class made with the page's context): render() → its element;
// refresh().
import { el, downloadBlob } from '../ui.js';
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
      const name = `gpt-${info.data?.task ?? 'text'}-${info.config.n_layer}x${info.config.n_embd}-step${info.step}.safetensors`;
      downloadBlob(name, new Blob([bytes], { type: 'application/octet-stream' }));
      rt.ckpt.message = { kind: 'info', text: this.ctx.t('ckpt.saved', { name, bytes: fmtInt(bytes.length), step: info.step }) };
    } catch (e) {
      rt.ckpt.message = { kind: 'error', text: e.message };
    }
    this.refresh();
  }

  /** Loads a checkpoint into the main run: the form, the curve and the views follow it. */
  async upload(file) {
    const { rt } = this;
    const { t } = this.ctx;
    const { training, data, generation } = this.ctx.sections;
    rt.ckpt.message = { kind: 'info', text: t('ckpt.reading', { name: file.name }) };
    this.refresh();
    const wasTraining = rt.status === 'training';
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      if (wasTraining) await training.pause();
      const { state } = this.ctx;
      const text = state.task === 'text' ? state.text : '';
      const info = await this.ctx.worker.call('load', { run: 'main', bytes, text, sample: { prompt: '', every: 0 } }, [bytes.buffer]);
      // the new model: its config fills the form; its curve starts where it was saved
      data.fromInfo(info);
      training.resetRun();
      rt.info = info;
      rt.step = info.step;
      rt.steps = info.steps;
      rt.runSpecKey = this.ctx.specKey();
      if (info.val_loss != null) { rt.series.valSteps.push(info.step); rt.series.val.push(info.val_loss); rt.lastVal = info.val_loss; }
      rt.status = info.diverged ? 'diverged' : info.step >= info.steps ? 'done' : 'paused';
      rt.divergence = info.divergence ?? '';
      rt.loadedFrom = file.name;
      rt.maps = null;
      generation.reset();
      // the sampling prompt goes with the loaded model's data
      await this.ctx.worker.call('set_sample', { run: 'main', sample: this.ctx.sampleSpec(this.ctx.validated().values) }).catch(() => {});
      this.ctx.render();
      rt.ckpt.message = { kind: 'info', text: t('ckpt.loaded', { name: file.name, step: info.step, n: fmtInt(info.n_params) }) };
      this.ctx.writeHash();
    } catch (e) {
      // the core's message; the model that was there stays
      rt.ckpt.message = { kind: 'error', text: t('ckpt.refused', { name: file.name }), detail: e.message };
      if (wasTraining) await training.resume();
    }
    this.refresh();
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
      if (m.kind === 'error' && rt.info) dom.msg.append(el('p', 'aps-hint', this.ctx.t('ckpt.kept', { step: rt.step })));
    } else dom.msg.className = 'tr-ckpt-msg';
  }
}

