// section-data.js — the training page's "data and model" section (#tr-data): the task or the
// learner's own text (typed or a UTF-8 file), the task's description, the preset and the model's
// four dimensions, the mask and the softmax, the parameter count, and the training fields. Every
// change goes into ctx.state and the link; refresh() writes each field's message (the page's
// validation, or the core's in rt.errors), the preset buttons and the parameter count.
//
// Interface (every section's: a class made with the page's context): render() → its element;
// refresh(). Also fromInfo(info): the form from a loaded checkpoint's info.
import {
  FIELDS, MODEL_FIELDS, TRAIN_FIELDS, SOURCES, MAX_TEXT_BYTES, MAX_LINK_TEXT, VARIANTS, applyPreset, presetOf, paramCount,
} from './config.js';
import { el, segGroup } from '../common/ui.js';
import { Section } from './section.js';
import { fieldBox, errorSpan, numField, showFieldError, fmtInt, idEl } from './fields.js';

export class DataSection extends Section {
  /** A field of buttons (role radiogroup) with its label and hint: the preset, the mask, the softmax. */
  choice(key, items, onPick) {
    const { t } = this.ctx;
    const seg = segGroup({ label: t(`f.${key}`), key, items, value: this.ctx.state[key], onPick, idPrefix: 'tr-' });
    return fieldBox(key, el('span', 'aps-label', t(`f.${key}`)), seg, el('span', 'aps-hint', t(`h.${key}`)));
  }

  /** The task: a built-in one or the learner's text (the prompts that were its defaults follow it). */
  taskField() {
    const { t, state } = this.ctx;
    const tl = el('label', 'aps-label', t('f.task'));
    tl.htmlFor = 'tr-f-task';
    const sel = idEl('tr-f-task', 'select', 'aps-select');
    for (const name of SOURCES) sel.append(new Option(t(`task.${name}`), name));
    sel.value = state.task;
    sel.setAttribute('aria-describedby', 'tr-task-about tr-err-task');
    sel.addEventListener('change', () => {
      this.ctx.state.task = sel.value;
      delete this.rt.errors.task;
      // prompts that were the old task's defaults follow the new task
      this.ctx.sections.maps.followTask();
      this.ctx.sections.generation.followTask();
      this.ctx.sections.next.followTask();
      this.dom.textBox.hidden = this.ctx.state.task !== 'text';
      this.refreshTaskAbout();
      this.ctx.formChanged();
    });
    return fieldBox('task', tl, sel, errorSpan('task'));
  }

  /** The learner's own text: typed, or read from a UTF-8 file of at most MAX_TEXT_BYTES. */
  textBox() {
    const { t, state } = this.ctx;
    const tb = el('div', 'tr-textbox');
    tb.hidden = state.task !== 'text';
    const ta = idEl('tr-f-text', 'textarea', 'tr-text');
    ta.rows = 6;
    ta.spellcheck = false;
    ta.value = state.text;
    ta.setAttribute('aria-describedby', 'tr-err-text tr-text-hint');
    const tal = el('label', 'aps-label', t('f.text'));
    tal.htmlFor = ta.id;
    ta.addEventListener('input', () => {
      this.ctx.state.text = ta.value;
      this.ctx.state.text_name = 'text';
      delete this.rt.errors.text;
      this.ctx.formChanged();
    });
    const file = el('input', 'tr-file');
    file.type = 'file';
    file.id = 'tr-f-textfile';
    file.accept = '.txt,text/plain';
    const fl = el('label', 'aps-label', t('f.textfile'));
    fl.htmlFor = file.id;
    file.addEventListener('change', async () => {
      const f = file.files?.[0];
      file.value = '';
      if (!f) return;
      const text = await this.readTextFile(f);
      if (text === null) { this.refresh(); return; }
      this.ctx.state.text = text;
      this.ctx.state.text_name = f.name.slice(0, 200);
      ta.value = text;
      delete this.rt.errors.text;
      this.ctx.formChanged();
    });
    const th = idEl('tr-text-hint', 'p', 'aps-hint', t('h.text', { max: fmtInt(MAX_TEXT_BYTES), link: fmtInt(MAX_LINK_TEXT) }));
    tb.append(tal, ta, errorSpan('text'), fl, file, th);
    return tb;
  }

  /** A file's text, or null with the reason in rt.errors.text (too big, not UTF-8). */
  async readTextFile(f) {
    const { t } = this.ctx;
    if (f.size > MAX_TEXT_BYTES) {
      this.rt.errors.text = t('err.fileBig', { name: f.name, bytes: fmtInt(f.size), max: fmtInt(MAX_TEXT_BYTES) });
      return null;
    }
    const bytes = new Uint8Array(await f.arrayBuffer());
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      this.rt.errors.text = t('err.fileUtf8', { name: f.name, at: fmtInt(firstBadUtf8(bytes)) });
      return null;
    }
  }

  /** The model: the preset, the four dimensions, the mask, the softmax, the variants, the parameter count. */
  modelFields() {
    const { dom } = this;
    const { t } = this.ctx;
    const ms = el('fieldset', 'tr-fieldset');
    ms.append(el('legend', 'aps-legend', t('data.model')));
    const pw = this.choice('preset', [['tiny', 'tiny'], ['small', 'small'], ['custom', t('preset.custom')]], (v) => {
      if (v === 'custom') { this.ctx.byId('tr-f-n_layer')?.focus(); return; }
      this.ctx.state = applyPreset(this.ctx.state, v);
      for (const k of MODEL_FIELDS) {
        const inp = this.ctx.byId(`tr-f-${k}`);
        if (inp) inp.value = this.ctx.state.fields[k];
        delete this.rt.errors[k];
      }
      this.ctx.formChanged();
    });
    dom.presetSeg = pw.querySelector('[role=radiogroup]');
    ms.append(pw);
    const grid = el('div', 'tr-grid');
    for (const k of MODEL_FIELDS) grid.append(numField(this.ctx, k));
    ms.append(grid);
    const opts = el('div', 'tr-grid tr-grid-2');
    const pick = (key) => (v) => { this.ctx.state[key] = v; this.ctx.formChanged(); };
    opts.append(
      this.choice('mask', [['strict', t('mask.strict')], ['inclusive', t('mask.inclusive')]], pick('mask')),
      this.choice('softmax', [['stable', t('softmax.stable')], ['naive', t('softmax.naive')]], pick('softmax')),
    );
    ms.append(opts);
    // the variants (gpt.h): RoPE, ALiBi, RMSNorm, SwiGLU, grouped-query heads, a window, its sinks
    const vars = el('div', 'tr-grid tr-grid-2');
    for (const [k, vals] of Object.entries(VARIANTS))
      vars.append(this.choice(k, vals.map((v) => [v, /^\d+$/.test(v) ? v : t(`${k}.${v}`)]), pick(k)));
    ms.append(vars);
    dom.params = idEl('tr-params', 'p', 'tr-params');
    ms.append(dom.params, errorSpan('model'));
    return ms;
  }

  render() {
    const { t } = this.ctx;
    const s = this.newCard({ id: 'tr-data', cls: 'tr-card tr-data', title: t('data.title'), headingId: 'tr-data-h' });
    const { dom } = this;
    // the data
    const fs = el('fieldset', 'tr-fieldset');
    fs.append(el('legend', 'aps-legend', t('data.data')));
    dom.taskAbout = idEl('tr-task-about', 'div', 'tr-task-about');
    dom.textBox = this.textBox();
    fs.append(this.taskField(), dom.taskAbout, dom.textBox);
    // the model, then training
    const ts = el('fieldset', 'tr-fieldset');
    ts.append(el('legend', 'aps-legend', t('data.training')));
    const tg = el('div', 'tr-grid');
    for (const k of TRAIN_FIELDS) tg.append(numField(this.ctx, k));
    ts.append(tg);
    s.append(fs, this.modelFields(), ts);
    return s;
  }

  /** The task's description, example, what attention must do, and its loss floor. */
  refreshTaskAbout() {
    const { t, state } = this.ctx;
    const box = this.dom.taskAbout;
    if (!box) return;
    box.replaceChildren();
    const info = this.ctx.taskInfo();
    if (state.task === 'text') {
      box.append(el('p', 'aps-hint', t('task.textAbout')));
      return;
    }
    if (!info) return;
    const ex = el('p', 'tr-example');
    ex.append(el('span', 'aps-label', `${t('task.example')} `), el('code', 'tr-mono', info.example));
    // English from the core's own task list; Chinese from i18n.js
    const zh = state.lang === 'zh' && this.ctx.i18n.has(`taskd.${info.name}`);
    const desc = zh ? t(`taskd.${info.name}`) : info.description;
    const att = zh ? t(`taska.${info.name}`) : info.attention;
    box.append(el('p', 'tr-about-line', desc), ex, el('p', 'aps-hint', `${t('task.attention')} ${att}`),
      el('p', 'aps-hint', t('task.floor', { floor: info.loss_floor.toFixed(3) })));
  }

  /** Messages beside the fields, the preset, the parameter count. */
  refresh() {
    const { rt, dom } = this;
    const { t, state } = this.ctx;
    const v = this.ctx.validated();
    for (const k of [...Object.keys(FIELDS), 'text', 'model', 'task']) {
      let msg = '';
      if (rt.errors[k]) msg = rt.errors[k];
      else if (v.errors[k]) msg = t(v.errors[k].key, { ...v.errors[k].params, name: k });
      showFieldError(k, msg, this.ctx.byId);
    }
    // the preset buttons follow the four dimensions
    const p = presetOf(state.fields);
    state.preset = p;
    dom.presetSeg?.querySelectorAll('[role=radio]').forEach((b) => {
      const on = b.dataset.value === p;
      b.setAttribute('aria-checked', String(on));
      b.tabIndex = on ? 0 : -1;
    });
    if (dom.params) {
      const vals = v.values;
      if (MODEL_FIELDS.every((k) => vals[k] !== undefined) && !v.errors.n_head) {
        const V = state.task === 'text' ? null : (this.ctx.taskInfo()?.alphabet?.length ?? null);
        const C = vals.n_embd;
        const P = paramCount(vals, state, V ?? 0);
        dom.params.textContent = V ? t('params.count', { n: fmtInt(P), v: V, hd: C / vals.n_head }) : t('params.countText', { n: fmtInt(P), hd: C / vals.n_head });
      } else dom.params.textContent = '';
    }
    this.refreshTaskAbout();
  }

  /** Fills the form from a loaded checkpoint's info (config, training, data, seed). */
  fromInfo(info) {
    const { state } = this.ctx;
    const c = info.config;
    const tr = info.train;
    state.fields = { ...state.fields, n_layer: String(c.n_layer), n_head: String(c.n_head), n_embd: String(c.n_embd), block_size: String(c.block_size),
      lr: String(tr.lr), batch_size: String(tr.batch_size), steps: String(tr.steps), eval_interval: String(tr.eval_interval), seed: String(info.seed) };
    state.mask = c.mask;
    state.softmax = c.softmax;
    if (info.data?.task) state.task = info.data.task;
    else state.task = 'text';
    state.preset = presetOf(state.fields);
  }
}

/** The byte offset where strict UTF-8 decoding fails: decode growing prefixes (binary search). */
function firstBadUtf8(bytes) {
  let lo = 0;
  let hi = bytes.length;
  // a fresh decoder each time: stream mode keeps state between calls; it accepts a cut-off last character
  const okPrefix = (n) => { try { new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, n), { stream: true }); return true; } catch { return false; } };
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (okPrefix(mid)) lo = mid; else hi = mid - 1;
  }
  // lo may end inside a character cut short: the bad sequence starts where that character starts
  for (let n = lo; n >= Math.max(0, lo - 3); n--) {
    try { new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, n)); return n; } catch { /* keep going back */ }
  }
  return lo;
}

