// section-open.js — the training page's "Open a model" section (#tr-open): a model trained
// elsewhere, by the file picker or dropped on the section: nanoGPT's ckpt.pt (with its meta.pkl),
// a Hugging Face GPT-2 model.safetensors (with config.json and the tokenizer's files), a
// .safetensors of this playground (a model-only file, or a training checkpoint without its text),
// a Hugging Face folder of the Llama family (SmolLM2, Qwen, Llama, Mistral: config.json, the
// safetensors shards with their index, tokenizer.json), chosen whole by the folder picker where the
// browser has one (<input webkitdirectory>) or as its files, or one GGUF file (llama.cpp, Ollama).
// The files go to the worker as File objects; it reads the model file in slices into the core's
// memory (gpt.js openModel) and reports progress, shown here as a progress bar. Once open, the
// model is the page's run: the maps, head → stepper, next-token bars, surprisal, generation and
// download use it as they use a trained one; it is for inference, so the training section says
// that Start makes a new model from the form instead. What is missing or unused among the files is
// said (no meta.pkl: token ids; tokenizer files this version does not read yet). A file the core
// refuses is named with the core's message (the byte, record or tensor at fault), and the model
// that was there stays. Once a model is open, finetune-panel.js (loaded then) offers to fine-tune it on
// the learner's text, inside this section.
//
// Interface (every section's): render() → its element; refresh(); onMessage(m) for the worker's
// 'open_progress' events.
import { el } from '../common/ui.js';
import { Section } from './section.js';
import { fmtInt, idEl, filePicker } from './fields.js';

const ACCEPT = '.pt,.pth,.ckpt,.pkl,.safetensors,.json,.txt,.gguf';
/** A model's own file (the others — meta.pkl, config.json, a tokenizer's — go with one). */
const MODEL_FILE = /\.(pt|pth|ckpt|safetensors|bin|gguf)$/i;
/** Bytes as megabytes, as the section writes them. */
const mb = (b) => (b / 1e6).toFixed(b < 1e7 ? 1 : 0);
/** Whether this browser's file input picks folders (webkitdirectory: Chromium, Firefox, Safari). */
const FOLDERS = typeof HTMLInputElement !== 'undefined' && 'webkitdirectory' in HTMLInputElement.prototype;

/**
 * The files of dropped entries (a dropped folder's files, one level deep, as a Hugging Face model's
 * folder lays them out) and the folder's name when one folder was dropped.
 */
async function folderFiles(entries) {
  const file = (x) => new Promise((resolve, reject) => x.file(resolve, reject));
  const files = [];
  const dirs = entries.filter((x) => x.isDirectory);
  for (const d of dirs) {
    const reader = d.createReader();
    for (;;) {
      const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
      if (!batch.length) break;
      for (const x of batch) if (x.isFile) files.push(await file(x));
    }
  }
  for (const x of entries) if (x.isFile) files.push(await file(x));
  return { files, folder: dirs.length === 1 ? dirs[0].name : undefined };
}

/** A folder's name from its files' paths (the folder picker's webkitRelativePath), or undefined. */
function folderName(files) {
  const parts = String(files.find((f) => f.webkitRelativePath)?.webkitRelativePath ?? '').split('/');
  return parts.length > 1 ? parts[0] : undefined;
}

export class OpenSection extends Section {
  render() {
    const { t } = this.ctx;
    const s = this.newCard({ id: 'tr-open', cls: 'tr-card tr-open', title: t('open.title'), headingId: 'tr-open-h', lede: t('open.lede') });
    const { dom } = this;
    const { input: file, label: pick } = filePicker('tr-open-file', t('open.choose'), ACCEPT, (files) => this.open(files),
      { multiple: true, cls: 'aps-btn aps-btn-primary tr-upload' });
    const zone = el('div', 'tr-open-drop');
    zone.append(file, pick);
    if (FOLDERS) {
      const { input: dir, label: pickDir } = filePicker('tr-open-folder', t('open.chooseFolder'), '', (files) => this.open(files),
        { multiple: true, cls: 'aps-btn tr-upload' });
      dir.webkitdirectory = true;
      zone.append(dir, pickDir);
    }
    zone.append(el('span', 'tr-open-or', t('open.drop')));
    for (const ev of ['dragenter', 'dragover']) {
      s.addEventListener(ev, (e) => {
        if (![...(e.dataTransfer?.types ?? [])].includes('Files')) return;
        e.preventDefault();
        zone.classList.add('is-over');
      });
    }
    s.addEventListener('dragleave', (e) => { if (!s.contains(e.relatedTarget)) zone.classList.remove('is-over'); });
    s.addEventListener('drop', (e) => {
      e.preventDefault();
      zone.classList.remove('is-over');
      const entries = [...(e.dataTransfer?.items ?? [])].map((i) => i.webkitGetAsEntry?.()).filter(Boolean); // now: the list empties after the event
      const files = [...(e.dataTransfer?.files ?? [])];
      if (entries.some((x) => x.isDirectory)) {
        folderFiles(entries).then(({ files: all, folder }) => all.length && this.open(all, folder), (err) => this.showError(files, err));
      } else if (files.length) this.open(files);
    });
    dom.zone = zone;
    dom.progressBox = el('div', 'tr-open-progress');
    dom.progress = el('progress', 'tr-open-bar');
    dom.progress.id = 'tr-open-bar';
    dom.progressLabel = el('label', 'tr-open-bar-label');
    dom.progressLabel.htmlFor = dom.progress.id;
    dom.progressBox.append(dom.progressLabel, dom.progress);
    dom.msg = idEl('tr-open-msg', 'div', 'tr-open-msg');
    dom.msg.setAttribute('role', 'status');
    s.append(zone, dom.progressBox, dom.msg, el('p', 'aps-hint', t('open.hint')));
    if (this.panel) s.append(this.panel.render());
    return s;
  }

  /** The fine-tuning panel (finetune-panel.js), loaded on the first opening: the page's start does not carry it. */
  async loadPanel() {
    if (this.panel) return;
    const { FinetunePanel } = await import('./finetune-panel.js');
    this.panel ??= new FinetunePanel(this.ctx);
  }

  /** Opens the files as the page's model (in the worker); the model that was there stays on failure. */
  /** A drop that could not be read (a folder the browser would not list): said as an opening's refusal. */
  showError(files, err) {
    this.rt.openMessage = { kind: 'error', names: files.map((f) => f.name).join(', '), detail: err?.message ?? String(err) };
    this.ctx.app.dataset.open = 'refused';
    this.refresh();
  }

  async open(picked, dropped) {
    const { rt } = this;
    const { training, maps, generation, next, surprisal } = this.ctx.sections;
    if (rt.opening) return;
    // companion files alone (a meta.pkl, a tokenizer's files) complete the model opened before:
    // it is opened again with them, in place of any file of the same name
    const prev = rt.opened && this.openedFiles;
    const alone = !picked.some((f) => MODEL_FILE.test(f.name));
    const files = prev && alone ? [...prev.filter((f) => !picked.some((p) => p.name === f.name)), ...picked] : picked;
    const completed = prev && alone ? { added: picked.map((f) => f.name).join(', '), model: prev.filter((f) => MODEL_FILE.test(f.name)).map((f) => f.name).join(', ') } : null;
    const folder = dropped ?? folderName(picked);
    const names = folder ?? files.map((f) => f.name).join(', ');
    rt.opening = { names, loaded: 0, total: 0, name: '' };
    rt.openMessage = null;
    this.ctx.app.dataset.open = 'reading';
    this.refresh();
    const wasTraining = rt.status === 'training';
    try {
      if (wasTraining) await training.pause();
      generation.stop?.();
      const [info] = await Promise.all([this.ctx.worker.call('open', { run: 'main', files, name: folder }), this.loadPanel()]);
      training.resetRun();
      rt.info = info;
      rt.opened = info.opened;
      rt.step = info.step;
      rt.steps = info.steps;
      rt.status = 'opened';
      rt.loadedFrom = '';
      rt.runSpecKey = '';
      rt.maps = null;
      maps.clear();
      generation.reset();
      next.reset();
      surprisal.reset();
      this.ctx.sections.interp?.reset(); // the opened model's prompt, the old model's answers gone
      rt.openMessage = { kind: 'info', info, completed };
      this.openedFiles = files;
      rt.opening = null;
      this.ctx.render(); // the prompts' fields follow the opened model's vocabulary
      this.ctx.app.dataset.open = 'opened';
    } catch (e) {
      rt.openMessage = { kind: 'error', names, detail: e.message };
      this.ctx.app.dataset.open = 'refused';
      if (wasTraining) await training.resume();
    }
    rt.opening = null;
    this.ctx.refreshRun();
    this.refresh();
  }

  onMessage(m) {
    this.panel?.onMessage(m);
    if (m.event !== 'open_progress' || !this.rt.opening) return;
    Object.assign(this.rt.opening, { loaded: m.loaded, total: m.total, name: m.name });
    this.refreshProgress();
  }

  refreshProgress() {
    const { rt, dom } = this;
    const o = rt.opening;
    dom.progressBox.hidden = !o;
    if (!o) return;
    if (o.total) {
      dom.progress.max = o.total;
      dom.progress.value = o.loaded;
    } else dom.progress.removeAttribute('value'); // indeterminate until the first slice
    dom.progressLabel.textContent = o.total
      ? this.ctx.t('open.reading', { name: o.name, loaded: mb(o.loaded), total: mb(o.total) })
      : this.ctx.t('open.starting', { names: o.names });
  }

  refresh() {
    const { rt, dom } = this;
    if (!dom.msg) return;
    const { t } = this.ctx;
    this.refreshProgress();
    this.panel?.refresh();
    const m = rt.openMessage;
    dom.msg.replaceChildren();
    delete dom.msg.dataset.weightBytes;
    delete dom.msg.dataset.memoryBytes;
    dom.msg.className = m ? `tr-open-msg is-${m.kind}` : 'tr-open-msg';
    if (!m) return;
    if (m.kind === 'error') {
      dom.msg.append(el('p', '', t('open.refused', { names: m.names })), el('p', 'tr-core-msg', m.detail));
      if (rt.info) dom.msg.append(el('p', 'aps-hint', t('open.kept')));
      return;
    }
    if (rt.opened !== m.info.opened) return; // another model since (Start, a checkpoint)
    const { info } = m;
    const c = info.config;
    dom.msg.append(el('p', '', t('open.opened', {
      name: info.opened.name, format: t(`open.format.${info.opened.format}`), n_layer: c.n_layer, n_head: c.n_head,
      n_embd: c.n_embd, block_size: c.block_size, vocab: fmtInt(c.vocab_size), n: fmtInt(info.n_params),
    })));
    const list = el('ul', 'tr-open-notes');
    if (m.completed) list.append(el('li', '', t('open.note.completed', m.completed)));
    const kv = c.n_kv_head ?? c.n_head;
    if (kv < c.n_head) list.append(el('li', '', t('open.note.kv_heads', { kv, n_head: c.n_head, group: c.n_head / kv })));
    for (const n of info.opened.notes) list.append(el('li', '', t(`open.note.${n.code}`, { file: n.file ?? '', vocab: fmtInt(n.vocab ?? 0), ids: n.ids ?? '' })));
    const w = info.opened;
    if (w.weight_bytes && w.weight_types?.length && info.memory) {
      // the weights as the files store them, and the wasm memory they live in (data-* for tests)
      list.append(el('li', '', t('open.note.weights', { types: w.weight_types.join(', '), weights: mb(w.weight_bytes), memory: mb(info.memory.size) })));
      dom.msg.dataset.weightBytes = String(w.weight_bytes);
      dom.msg.dataset.memoryBytes = String(info.memory.size);
    }
    if (info.source) list.append(el('li', '', t('open.note.inference')));
    dom.msg.append(list);
  }
}
