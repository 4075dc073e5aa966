// section-surprisal.js — the training page's "surprisal" section (#tr-surprisal): the loss made
// visible. Type or paste a text (or take the validation windows the loss chart is computed on),
// and every token is coloured by the probability p the model gave it from the tokens before it;
// pointing at a token (or moving through them with the arrow keys) reads p and −log p. The mean
// −log p over the text is the loss: for the validation windows, exactly the validation loss the
// chart shows (the core's evaluate(), bit for bit). Every number comes from the core (gpt.js
// surprisal, src/core/model/inspect.h); this file lays them out.
//
// Limits: a text of at most 65,536 bytes (the core's); a text longer than block_size is read in
// windows of block_size predictions that overlap by one token (a mark shows where the model's
// context starts again).
//
// Interface (every section's): render() → its element; refresh(); reset() (the model is gone).
import { el, statusLine, setText, hide } from '../common/ui.js';
import { Section } from './section.js';
import { button, buttonBar, idEl, fromField } from './fields.js';
import { heat, HEAT_WHITE_TEXT, tokenMark as tokenLabel } from '../common/export.js';

const TOP = 10; // the most surprising tokens listed in the table

export class SurprisalSection extends Section {
  /** @param {object} ctx the page's context (context.js) */
  constructor(ctx) {
    super(ctx);
    this.result = null; // {kind: 'text' | 'validation', answer, items: [{tok, p, nll, start}]}
    this.error = '';
    this.cursor = -1;
  }

  render() {
    const { t } = this.ctx;
    const s = this.newCard({ id: 'tr-surprisal', cls: 'tr-card tr-surprisal', title: t('sur.title'), headingId: 'tr-surprisal-h', lede: t('sur.lede') });
    const { dom } = this;
    const lab = el('label', 'aps-label', t('sur.text'));
    lab.htmlFor = 'tr-surprisal-text';
    dom.text = idEl('tr-surprisal-text', 'textarea', 'tr-input tr-surprisal-text');
    dom.text.rows = 3;
    dom.text.spellcheck = false;
    dom.text.value = this.dom.lastText ?? this.defaultText();
    dom.scoreText = button(t('sur.scoreText'), 'sur-text', () => this.score({ text: fromField(dom.text.value) }, 'text'));
    dom.scoreVal = button(t('sur.scoreVal'), 'sur-val', () => this.score({ validation: true }, 'validation'));
    dom.status = statusLine('tr-surprisal-status');
    dom.strip = idEl('tr-surprisal-strip', 'div', 'tr-surprisal-strip');
    dom.strip.tabIndex = 0;
    dom.strip.setAttribute('role', 'group');
    dom.strip.setAttribute('aria-label', t('sur.strip'));
    dom.strip.addEventListener('pointerover', (e) => { const i = Number(e.target.dataset?.i); if (Number.isInteger(i)) this.point(i); });
    dom.strip.addEventListener('keydown', (e) => this.key(e));
    dom.readout = idEl('tr-surprisal-readout', 'p', 'tr-surprisal-readout');
    dom.readout.setAttribute('aria-live', 'polite');
    dom.table = el('table', 'tr-table tr-surprisal-top');
    dom.table.setAttribute('aria-label', t('sur.topTable'));
    const hr = el('tr');
    for (const k of ['sur.col.pos', 'sur.col.token', 'sur.col.p', 'sur.col.nll']) { const th = el('th', '', t(k)); th.scope = 'col'; hr.append(th); }
    const head = el('thead');
    head.append(hr);
    dom.table.append(head, el('tbody'));
    const sc = el('div', 'tr-scroll');
    sc.append(dom.table);
    dom.tableBox = sc; // shown once something is scored (no header row over nothing)
    hide(sc, true);
    s.append(lab, dom.text, buttonBar(dom.scoreText, dom.scoreVal), dom.status, dom.strip, dom.readout, el('p', 'tr-hint', t('sur.legend')), sc);
    dom.shown = null;
    return s;
  }

  defaultText() {
    const ex = this.ctx.taskInfo()?.example;
    return ex ? ex.replace(/\n/g, '↵') : '';
  }

  /** Asks the core for −log p of the text or of the validation windows. */
  async score(spec, kind) {
    const { rt } = this;
    if (!rt.info) return;
    this.dom.lastText = this.dom.text.value;
    this.ctx.app.dataset.surprisal = 'asking';
    try {
      const a = await this.ctx.worker.call('surprisal', { run: 'main', spec });
      const items = [];
      a.windows.forEach((w, k) => {
        // a text's windows overlap by one token: its first token once, before the first window
        if (kind === 'validation' || k === 0) items.push({ tok: w.tokens[0], p: null, nll: null, start: true, offset: w.offset, pos: w.offset });
        w.losses.forEach((l, i) => items.push({ tok: w.tokens[i + 1], p: Math.exp(-l), nll: l, start: kind === 'text' && k > 0 && i === 0, pos: w.offset + i + 1 }));
      });
      this.result = { kind, answer: a, items, val: rt.lastVal, valStep: rt.series.valSteps.at(-1) };
      this.error = '';
      this.cursor = -1;
    } catch (e) {
      this.result = null;
      this.error = e.message;
    }
    this.ctx.app.dataset.surprisal = this.error ? 'failed' : 'ready';
    this.refresh();
  }

  /** The readout for token i. */
  point(i) {
    const { t } = this.ctx;
    const it = this.result?.items[i];
    if (!it) return;
    this.dom.strip.querySelector('.is-cursor')?.classList.remove('is-cursor');
    this.dom.strip.querySelector(`[data-i="${i}"]`)?.classList.add('is-cursor');
    this.cursor = i;
    setText(this.dom.readout, it.p == null ? t('sur.readoutContext', { tok: tokenLabel(it.tok), pos: it.pos })
      : t('sur.readout', { tok: tokenLabel(it.tok), pos: it.pos, p: it.p.toPrecision(4), nll: it.nll.toFixed(4) }));
  }

  /** Arrow keys move through the tokens; Home and End jump. */
  key(e) {
    const n = this.result?.items.length ?? 0;
    if (!n) return;
    const moves = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
    let i = this.cursor;
    if (e.key in moves) i = Math.max(0, Math.min(n - 1, (i < 0 ? 0 : i + moves[e.key])));
    else if (e.key === 'Home') i = 0;
    else if (e.key === 'End') i = n - 1;
    else return;
    e.preventDefault();
    this.point(i);
  }

  reset() {
    this.result = null;
    this.error = '';
  }

  refresh() {
    const { rt, dom } = this;
    if (!dom.status) return;
    const { t } = this.ctx;
    const training = rt.status === 'training' || rt.status === 'starting';
    dom.scoreText.disabled = !rt.info || training;
    dom.scoreVal.disabled = !rt.info || training || rt.info.has_data === false;
    const r = this.result;
    let s;
    if (!rt.info) s = t('sur.noModel');
    else if (training) s = t('sur.training');
    else if (this.error) s = this.error;
    else if (!r) s = t('sur.ready');
    else if (r.kind === 'text') s = t('sur.meanText', { mean: r.answer.mean.toFixed(4), n: r.answer.count, ...this.ctx.modelLabel(r.answer.step), windows: r.answer.windows.length });
    else s = t('sur.meanVal', { mean: String(r.answer.mean), n: r.answer.count, step: r.answer.step, windows: r.answer.windows.length, val: r.val == null ? '—' : String(r.val), valStep: r.valStep ?? '—' });
    setText(dom.status, s);
    if (dom.shown === r) return;
    dom.shown = r;
    this.paint(r);
  }

  paint(r) {
    const { dom } = this;
    const { t } = this.ctx;
    setText(dom.readout, r ? t('sur.readoutHint') : '');
    hide(dom.tableBox, !r);
    if (!r) { dom.strip.replaceChildren(); dom.table.tBodies[0].replaceChildren(); return; }
    const frag = document.createDocumentFragment();
    r.items.forEach((it, i) => {
      if (it.start && i > 0) frag.append(el('span', r.kind === 'validation' ? 'tr-sur-break is-window' : 'tr-sur-break', ''));
      const sp = el('span', `tr-sur-tok${it.p == null ? ' is-context' : ''}`, tokenLabel(it.tok));
      sp.dataset.i = String(i);
      if (it.p != null) {
        sp.style.background = heat(it.p); // CSSOM, allowed by style-src 'self'
        if (it.p >= HEAT_WHITE_TEXT) sp.classList.add('is-dark');
        sp.title = t('sur.readout', { tok: tokenLabel(it.tok), pos: it.pos, p: it.p.toPrecision(4), nll: it.nll.toFixed(4) });
      }
      frag.append(sp);
    });
    dom.strip.replaceChildren(frag);
    const top = r.items.filter((it) => it.p != null).sort((a, b) => b.nll - a.nll).slice(0, TOP);
    dom.table.tBodies[0].replaceChildren(...top.map((it) => {
      const tr = el('tr');
      const th = el('th', 'tr-mono', tokenLabel(it.tok));
      th.scope = 'row';
      tr.append(el('td', 'tr-num', String(it.pos)), th, el('td', 'tr-num', it.p.toPrecision(3)), el('td', 'tr-num', it.nll.toFixed(3)));
      return tr;
    }));
  }
}
