// fields.js — the training page's form pieces, shared by its sections (section-*.js): an element
// with an id, a button with the page's id and action, a row of buttons, a number field with its
// range and message, a prompt field, the message beside a field, and the page's number formats.
// Each piece reads and writes the learner's choices through the page's context (context.js);
// none keeps state.
//
// A prompt field shows a newline as ↵ (a one-line input cannot hold one; Shift+Enter types it);
// the model gets '\n' back (fromField).
import { FIELDS, MODEL_FIELDS, presetOf } from './config.js';
import { el } from '../common/ui.js';

export const NEWLINE_MARK = '↵';
export const toField = (text) => text.replace(/\n/g, NEWLINE_MARK);
export const fromField = (field) => field.replaceAll(NEWLINE_MARK, '\n');

export const fmtInt = (v) => Math.round(v).toLocaleString('en-US');
export const fmtLoss = (v) => (v == null ? '—' : Number.isFinite(v) ? v.toFixed(4) : String(v));
export const fmtTime = (ms) => {
  const s = Math.floor(ms / 1000);
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, '0')}`;
};

/** A new element (ui.js el) with an id. */
export function idEl(id, tag, cls, text) {
  const e = el(tag, cls, text);
  e.id = id;
  return e;
}

/**
 * A file picker: a visually hidden <input type=file> #id (it takes the focus, shown on its label)
 * and the label that looks like a button. onFiles(files) gets the chosen files; the input is
 * cleared so that the same file can be chosen again. Returns {input, label}.
 */
export function filePicker(id, text, accept, onFiles, { multiple = false, cls = 'aps-btn tr-upload' } = {}) {
  const input = el('input', 'tr-file-hidden');
  input.type = 'file';
  input.id = id;
  input.accept = accept;
  input.multiple = multiple;
  input.addEventListener('change', () => {
    const files = [...(input.files ?? [])];
    input.value = '';
    if (files.length) onFiles(files);
  });
  const label = el('label', cls, text);
  label.htmlFor = id;
  input.addEventListener('focus', () => label.classList.add('is-focus'));
  input.addEventListener('blur', () => label.classList.remove('is-focus'));
  return { input, label };
}

/** A button #tr-KEY (data-action KEY). */
export function button(text, key, onClick, cls = 'aps-btn') {
  const b = el('button', cls, text);
  b.type = 'button';
  b.dataset.action = key;
  b.id = `tr-${key}`;
  b.addEventListener('click', onClick);
  return b;
}

/** A section's row of buttons (and whatever goes beside them). */
export function buttonBar(...items) {
  const bar = el('div', 'tr-buttons');
  bar.append(...items);
  return bar;
}

/** A field's box (.tr-field, data-field KEY) holding its label, control, message and hint. */
export function fieldBox(key, ...children) {
  const wrap = el('div', 'tr-field');
  if (key) wrap.dataset.field = key;
  wrap.append(...children);
  return wrap;
}

/** The message of field KEY (#tr-err-KEY), announced politely; `tag` 'span' inside a field box. */
export function errorSpan(key, tag = 'p') {
  const err = idEl(`tr-err-${key}`, tag, 'aps-field-error');
  err.setAttribute('aria-live', 'polite');
  return err;
}

/**
 * The message beside field `key` (#tr-err-key), its input's aria-invalid and its field's mark.
 * `byId` finds an element by id in the page's root (ctx.byId; the document by default).
 */
export function showFieldError(key, msg, byId = (id) => document.getElementById(id)) {
  const err = byId(`tr-err-${key}`);
  if (!err) return;
  if (err.textContent !== msg) err.textContent = msg;
  const inp = byId(`tr-f-${key}`);
  if (inp) { if (msg) inp.setAttribute('aria-invalid', 'true'); else inp.removeAttribute('aria-invalid'); }
  err.closest('.tr-field')?.classList.toggle('has-error', Boolean(msg));
}

/** A field whose message comes only from an action (the prompts): rt.errors[key], or none. */
export function refreshFieldError(ctx, key) {
  showFieldError(key, ctx.rt.errors[key] ?? '', ctx.byId);
}

/** A labelled text field for a number (FIELDS[key]), with its range and its message. */
export function numField(ctx, key) {
  const { t } = ctx;
  const f = FIELDS[key];
  const id = `tr-f-${key}`;
  const lab = el('label', 'aps-label', t(`f.${key}`));
  lab.htmlFor = id;
  const inp = idEl(id, 'input', 'aps-num tr-input');
  inp.type = 'text';
  inp.inputMode = f.kind === 'int' ? 'numeric' : 'decimal';
  inp.autocomplete = 'off';
  inp.spellcheck = false;
  inp.value = ctx.state.fields[key];
  inp.dataset.key = key;
  const hint = idEl(`tr-h-${key}`, 'span', 'aps-hint', t(`h.${key}`));
  const err = errorSpan(key, 'span');
  inp.setAttribute('aria-describedby', `${err.id} ${hint.id}`);
  inp.addEventListener('input', () => {
    ctx.state.fields[key] = inp.value;
    delete ctx.rt.errors[key];
    if (MODEL_FIELDS.includes(key)) ctx.state.preset = presetOf(ctx.state.fields);
    ctx.formChanged();
  });
  return fieldBox(key, lab, inp, err, hint);
}

/** Shift+Enter in a prompt field types ↵ (a newline) at the caret. */
function newlineKey(inp, e) {
  if (e.key !== 'Enter' || !e.shiftKey) return false;
  e.preventDefault();
  inp.setRangeText(NEWLINE_MARK, inp.selectionStart ?? inp.value.length, inp.selectionEnd ?? inp.value.length, 'end');
  inp.dispatchEvent(new Event('input', { bubbles: true }));
  return true;
}

/**
 * A prompt field (`key`: 'prompt' or 'gen_prompt') with its label, message and hint: what is
 * typed goes into the state and the link; Enter runs `onEnter` (if any); Shift+Enter types ↵.
 * Returns {row, input, err, hint}: the row holds the label and the input (and room for a button).
 */
export function promptField(ctx, key, value, onEnter, hintText) {
  const row = el('div', 'tr-inline');
  const lab = el('label', 'aps-label', ctx.t(`f.${key}`));
  lab.htmlFor = `tr-f-${key}`;
  const input = idEl(`tr-f-${key}`, 'input', 'tr-input tr-prompt');
  input.type = 'text';
  input.spellcheck = false;
  input.autocomplete = 'off';
  input.value = value;
  input.setAttribute('aria-describedby', `tr-err-${key} tr-h-${key}`);
  input.addEventListener('input', () => {
    ctx.state[key] = input.value;
    delete ctx.rt.errors[key];
    refreshFieldError(ctx, key);
    ctx.writeHash();
  });
  input.addEventListener('keydown', (e) => { if (!newlineKey(input, e) && e.key === 'Enter' && onEnter) onEnter(); });
  row.append(lab, input);
  const hint = idEl(`tr-h-${key}`, 'p', 'aps-hint', hintText);
  return { row, input, err: errorSpan(key), hint };
}
