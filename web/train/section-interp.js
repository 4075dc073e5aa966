// section-interp.js — the training page's "Take it apart" section (#tr-interp): the
// interpretability tools on the model in the page (a run trained here or an opened model), on a
// prompt the learner types: the logit lens (layers × positions), direct logit attribution (each
// head, MLP and the embeddings toward a token's logit, or two tokens' difference), ablation (zero
// or mean, layers × heads and each MLP), activation patching beside attribution patching
// (fraction of the logit difference recovered), and the heads' induction and previous-token
// scores, with the one-click experiment that trains an induction head (interp-induction.js); with
// exercises (interp-exercises.js) answered by picking a cell. Every number is the
// core's (gpt.js lens, attribute, ablate, patch, attribution_patch, head_scores through the
// worker's 'interp' op); this file lays them out (interp-figures.js) and checks nothing itself.
//
// Limits: patching runs in workers of its own, as many as the Workers field says and as many
// copies of the model as fit in about 1 GiB (each counted as what the model holds in memory now,
// not its file: interp-patch-pool.js patchCopies), each loading the model's checkpoint and taking
// the sweep's cells in turn (interp-patch-pool.js), so Cancel stops it at once (the workers are
// ended); its bar moves with each finished cell. A model that cannot be saved (of token ids: no
// vocabulary to write) or whose saving would convert it to float32 (an opened model with typed
// matrices) patches in the page's worker instead, Cancel ending the sweep between two cells. Mean ablation averages over the first validation windows (at most 8) or the texts the
// learner gives, one per line.
import { el, statusLine, setText, hide, segGroup } from '../common/ui.js';
import { exportBar, tokenMark } from '../common/export.js';
import { Section } from './section.js';
import { button, buttonBar, idEl, fromField, errorSpan, fieldBox } from './fields.js';
import { startWorker } from './client.js';
import { gridTable, barsTable, legend, fmt } from './interp-figures.js';
import { ExerciseBox } from './interp-exercises.js';
import { patchSweep, patchCopies } from './interp-patch-pool.js';
import { InductionRun } from './interp-induction.js';

export const TOOLS = ['lens', 'attribute', 'ablate', 'patch', 'heads'];
/** The inputs of the section, by the core's field names that fall on them. */
const FIELD_OF = {
  prompt: 'prompt', clean: 'prompt', ids: 'prompt', token: 'token', target: 'token', other: 'other', corrupted: 'corrupted', reference: 'reference', position: 'prompt',
};

export class InterpSection extends Section {
  constructor(ctx) {
    super(ctx);
    this.tool = 'lens';
    this.vals = null; // what the learner typed: {prompt, token, other, corrupted, reference, mode, source}
    this.res = {}; // tool → {answer} (and patch: {real, attr})
    this.errors = {}; // input → message
    this.status = {}; // tool → () => its line (translated when shown: the language may change)
    this.busy = '';
    this.edited = false; // whether the learner has typed a prompt
    this.patchers = null; // the patching workers (client.js), made per run of patching
    this.exercises = new ExerciseBox(this);
    this.induction = new InductionRun(ctx);
  }

  defaults() {
    const prompt = fromField(this.ctx.mapsPrompt());
    return { prompt, token: '', other: '', corrupted: prompt, reference: '', mode: 'zero', source: 'validation' };
  }

  render() {
    const { t } = this.ctx;
    const s = this.newCard({ id: 'tr-interp', cls: 'tr-card tr-interp', title: t('ip.title'), headingId: 'tr-interp-h', lede: t('ip.lede') });
    this.vals ??= this.defaults();
    const { dom } = this;
    const inputs = el('div', 'tr-interp-inputs');
    inputs.append(this.input('prompt', 'input'), this.input('token', 'input'), this.input('other', 'input'));
    dom.tools = segGroup({
      label: t('ip.tools'), key: 'tool', items: TOOLS.map((k) => [k, t(`ip.tool.${k}`)]), value: this.tool,
      onPick: (v) => { this.tool = v; this.refresh(); }, idPrefix: 'tr-interp-',
    });
    dom.panels = {};
    for (const k of TOOLS) {
      const p = el('div', 'tr-interp-panel');
      p.id = `tr-interp-panel-${k}`;
      dom.panels[k] = p;
    }
    this.lensPanel(dom.panels.lens);
    this.attributePanel(dom.panels.attribute);
    this.ablatePanel(dom.panels.ablate);
    this.patchPanel(dom.panels.patch);
    this.headsPanel(dom.panels.heads);
    dom.readout = idEl('tr-interp-readout', 'p', 'tr-interp-readout');
    dom.readout.setAttribute('aria-live', 'polite');
    s.append(inputs, dom.tools, ...Object.values(dom.panels), dom.readout, this.exercises.render());
    dom.shown = {};
    return s;
  }

  /** After a render: the induction experiment's charts again. */
  mounted() {
    this.induction.mounted();
  }

  /** A labelled input of the section (#tr-interp-KEY) with its message (#tr-err-interp-KEY); what is typed stays. */
  input(key, tag) {
    const { t } = this.ctx;
    const lab = el('label', 'aps-label', t(`ip.f.${key}`));
    lab.htmlFor = `tr-interp-${key}`;
    const inp = idEl(`tr-interp-${key}`, tag, tag === 'textarea' ? 'tr-input' : 'tr-input tr-prompt');
    if (tag === 'input') inp.type = 'text';
    if (tag === 'textarea') inp.rows = 3;
    inp.spellcheck = false;
    inp.autocomplete = 'off';
    inp.value = tag === 'textarea' ? this.vals[key] : this.vals[key].replace(/\n/g, '↵');
    const err = errorSpan(`interp-${key}`, 'span');
    const hint = idEl(`tr-interp-h-${key}`, 'span', 'aps-hint', t(`ip.h.${key}`));
    inp.setAttribute('aria-describedby', `${err.id} ${hint.id}`);
    inp.addEventListener('input', () => {
      this.vals[key] = tag === 'textarea' ? inp.value : fromField(inp.value);
      this.edited = true; // the prompts stop following the task's default
      delete this.errors[key];
      this.refreshErrors();
    });
    this.dom[`in_${key}`] = inp;
    return fieldBox(`interp-${key}`, lab, inp, err, hint);
  }

  /** A tool's panel parts: its button, its status line, its figures' box. */
  panelParts(p, tool, label, run) {
    const d = { button: button(label, `interp-run-${tool}`, run), status: statusLine(`tr-interp-status-${tool}`), box: el('div', 'tr-interp-figs') };
    this.dom[tool] = d;
    p.append(buttonBar(d.button), d.status, d.box);
    return d;
  }

  lensPanel(p) {
    const { t } = this.ctx;
    p.append(el('p', 'tr-hint', t('ip.lens.about')));
    const d = this.panelParts(p, 'lens', t('ip.run.lens'), () => this.run('lens'));
    d.chips = el('div', 'tr-interp-chips');
    d.chips.setAttribute('role', 'group');
    d.chips.setAttribute('aria-label', t('ip.lens.pick'));
    p.insertBefore(d.chips, d.box);
  }

  attributePanel(p) {
    p.append(el('p', 'tr-hint', this.ctx.t('ip.attr.about')));
    this.panelParts(p, 'attribute', this.ctx.t('ip.run.attribute'), () => this.run('attribute'));
  }

  ablatePanel(p) {
    const { t } = this.ctx;
    p.append(el('p', 'tr-hint', t('ip.abl.about')));
    const modes = segGroup({ label: t('ip.abl.mode'), key: 'mode', items: [['zero', t('ip.abl.zero')], ['mean', t('ip.abl.mean')]], value: this.vals.mode, onPick: (v) => { this.vals.mode = v; this.refresh(); }, idPrefix: 'tr-interp-' });
    const src = segGroup({ label: t('ip.abl.source'), key: 'source', items: [['validation', t('ip.abl.val')], ['text', t('ip.abl.text')]], value: this.vals.source, onPick: (v) => { this.vals.source = v; this.refresh(); }, idPrefix: 'tr-interp-' });
    this.dom.meanBox = el('div', 'tr-interp-mean');
    this.dom.meanBox.append(src, this.input('reference', 'textarea'));
    p.append(modes, this.dom.meanBox);
    this.panelParts(p, 'ablate', t('ip.run.ablate'), () => this.run('ablate'));
  }

  patchPanel(p) {
    const { t } = this.ctx;
    p.append(el('p', 'tr-hint', t('ip.patch.about')), this.input('corrupted', 'input'));
    const d = this.panelParts(p, 'patch', t('ip.run.patch'), () => this.patch());
    d.cancel = button(t('ip.patch.cancel'), 'interp-cancel', () => this.cancelPatch());
    d.progress = el('progress', 'tr-interp-progress');
    d.progress.id = 'tr-interp-progress';
    d.progress.max = 4;
    d.progress.setAttribute('aria-label', t('ip.patch.progress'));
    d.button.after(d.cancel, d.progress);
  }

  headsPanel(p) {
    const { t, state } = this.ctx;
    p.append(el('p', 'tr-hint', t('ip.heads.about')));
    // the run option head_scores_interval: the curves under the loss chart
    const lab = el('label', 'aps-check-label tr-interp-check');
    const cb = idEl('tr-f-head_scores', 'input', 'aps-check');
    cb.type = 'checkbox';
    cb.checked = Boolean(state.head_scores);
    cb.addEventListener('change', () => { this.ctx.state.head_scores = cb.checked; this.ctx.formChanged(); });
    lab.append(cb, el('span', '', t('ip.heads.record')));
    p.append(lab);
    this.panelParts(p, 'heads', this.ctx.t('ip.run.heads'), () => this.run('heads'));
    p.append(this.induction.render()); // the one-click experiment: an induction head forms
  }

  // ───────────────────────────── asking the core ─────────────────────────────

  /**
   * The spec of a tool from the inputs. A token is its text (␣ a space, as the figures write it;
   * the core reads a text that is exactly one token) or [id].
   */
  spec(tool) {
    const v = this.vals;
    const tok = (x) => (/^\[\d+\]$/.test(x) ? Number(x.slice(1, -1)) : x.replace(/␣/g, ' '));
    const metric = {};
    if (v.token) metric.token = tok(v.token);
    if (v.other) metric.other = tok(v.other);
    if (tool === 'lens') return { prompt: v.prompt, top_k: 5, ...(v.token ? { target: metric.token } : {}) };
    if (tool === 'attribute') return { prompt: v.prompt, ...metric };
    if (tool === 'ablate') {
      const s = { prompt: v.prompt, mode: v.mode, ...metric };
      if (v.mode === 'mean') s.reference = v.source === 'validation' ? 'validation' : v.reference.split('\n').filter((x) => x);
      return s;
    }
    if (tool === 'heads') return {};
    return { clean: v.prompt, corrupted: v.corrupted, ...metric };
  }

  /** One call of the core in the page's worker ('interp' op); the answer or an error by input. */
  async ask(worker, call, spec) {
    try {
      return { answer: await worker.call('interp', { run: 'main', call, spec }) };
    } catch (e) {
      return { error: e.message, field: FIELD_OF[e.field] ?? '' };
    }
  }

  /** Runs a tool (not patching) and shows its answer. */
  async run(tool) {
    if (!this.rt.info || this.busy) return;
    this.busy = tool;
    this.ctx.app.dataset.interp = 'asking';
    this.refresh();
    const call = { lens: 'lens', attribute: 'attribute', ablate: 'ablate', heads: 'head_scores' }[tool];
    const spec = this.spec(tool);
    const r = await this.ask(this.ctx.worker, call, spec);
    r.target = spec.target == null ? null : String(this.vals.token); // the lens's followed token as typed (its answer names it by id)
    this.busy = '';
    this.settle(tool, r);
  }

  /** A tool's answer (or error) into the state, then the page. */
  settle(tool, r) {
    if (r.error) {
      if (r.field) this.errors[r.field] = r.error;
      this.status[tool] = () => (r.field ? this.ctx.t('ip.err.field', { field: this.ctx.t(`ip.f.${r.field}`), message: r.error }) : r.error);
    } else {
      for (const k of Object.keys(this.errors)) delete this.errors[k];
      this.res[tool] = r;
      this.status[tool] = () => this.summary(tool, r);
    }
    this.ctx.app.dataset.interp = r.error ? 'failed' : `${tool}-ready`;
    this.dom.shown[tool] = null;
    this.refresh();
    this.exercises.refresh();
  }

  summary(tool, r) {
    const { t } = this.ctx;
    const a = r.answer ?? r.real?.answer;
    const m = this.ctx.modelLabel();
    if (tool === 'lens') return t('ip.lens.done', { n: a.tokens.length, points: a.points.length, ...m });
    if (tool === 'attribute') return t('ip.attr.done', { sum: fmt(a.sum), logit: fmt(a.logit), metric: this.metricName(a.token?.text ?? a.token, a.other?.text ?? a.other) });
    if (tool === 'ablate') return t('ip.abl.done', { loss: fmt(a.loss), mode: t(`ip.abl.${a.mode}`) });
    if (tool === 'heads') return t('ip.heads.done', { length: a.length, batch: a.batch, ...m });
    return t('ip.patch.done', { clean: fmt(a.clean_metric), corrupted: fmt(a.corrupted_metric) });
  }

  metricName(a, b) {
    return b != null && b !== '' ? `logit(“${tokenMark(a)}”) − logit(“${tokenMark(b)}”)` : `logit(“${tokenMark(a)}”)`;
  }

  /** Whether the model is an opened one whose matrices stay in their files' types (not fine-tuned: that is float32). */
  typedModel() {
    const o = this.rt.opened;
    return Boolean(o && !this.rt.info?.base && (o.weight_types ?? []).some((t) => t !== 'F32'));
  }

  /** How many workers patch: the Workers field's count, as many as fit (interp-patch-pool.js patchCopies). */
  patchWorkers(mem) {
    return patchCopies(Math.min(16, Number(this.ctx.state.workers) || 1), mem);
  }

  /**
   * Patching split over workers of its own (each a copy of the model; interp-patch-pool.js), its
   * progress in cells, then attribution patching on the first; Cancel ends them all at once. A
   * model that cannot be copied (its save refused) patches in the page's worker instead.
   */
  async patch() {
    if (!this.rt.info || this.busy) return;
    const spec = this.spec('patch');
    this.busy = 'patch';
    this.ctx.app.dataset.interp = 'patching';
    const bar = this.dom.patch.progress;
    const stage = (k, key) => { bar.max = 4; bar.value = k; this.status.patch = () => this.ctx.t(key, { k, n: 4 }); this.refresh(); };
    const ws = [];
    this.patchers = ws;
    const alive = () => this.patchers === ws;
    let out;
    try {
      stage(0, 'ip.patch.copying');
      // a model that cannot be saved (one of token ids: no vocabulary to write) is patched where it
      // is, in the page's worker, cell by cell: Cancel stops asking between two cells; so is an
      // opened model whose matrices stay typed (BF16, Q8_0, …): saving it would convert it to
      // float32 (twice a BF16 file or more), and each worker's copy would be float32 too
      const saved = this.typedModel() ? null : await this.ctx.worker.call('save', { run: 'main' }).catch(() => null);
      if (!alive()) return;
      stage(1, 'ip.patch.loading');
      const mem = await this.ctx.worker.call('call', { run: 'main', call: 'run_memory' });
      if (!alive()) return;
      const n = saved ? this.patchWorkers(mem) : 1;
      for (let i = 0; saved && i < n; i++) ws.push(startWorker());
      await Promise.all(ws.map((w) => { const b = saved.bytes.slice(); return w.call('load', { run: 'main', bytes: b }, [b.buffer]); }));
      if (!alive()) return;
      const on = saved ? ws : [this.ctx.worker];
      let real;
      try {
        real = { answer: await patchSweep(on, spec, { stop: () => !alive(), onProgress: (done, cells) => {
          if (!alive()) return;
          bar.max = cells;
          bar.value = done;
          this.status.patch = () => this.ctx.t('ip.patch.cells', { done, cells, n });
          this.refresh();
        } }) };
      } catch (e) {
        real = { error: e.message, field: FIELD_OF[e.field] ?? '' };
      }
      if (!alive()) return;
      if (real.error) out = real;
      else {
        stage(3, 'ip.patch.stAttr');
        const attr = await this.ask(on[0], 'attribution_patch', spec);
        if (!alive()) return;
        out = attr.error ? attr : { real, attr };
      }
    } catch (e) {
      if (!alive()) return;
      out = { error: e.message, field: '' };
    }
    this.patchers = null;
    for (const w of ws) w.terminate();
    this.busy = '';
    bar.max = 4;
    bar.value = out.error ? 0 : 4;
    this.settle('patch', out);
  }

  cancelPatch() {
    const ws = this.patchers;
    if (!ws) return;
    this.patchers = null;
    for (const w of ws) w.terminate();
    this.busy = '';
    this.dom.patch.progress.value = 0;
    this.status.patch = () => this.ctx.t('ip.patch.cancelled');
    this.ctx.app.dataset.interp = 'cancelled';
    this.refresh();
  }

  reset() {
    this.cancelPatch();
    this.res = {};
    this.status = {};
    this.vals = this.defaults();
    this.edited = false;
    for (const k of ['prompt', 'token', 'other', 'corrupted', 'reference']) {
      const inp = this.dom[`in_${k}`];
      if (inp) inp.value = inp.tagName === 'TEXTAREA' ? this.vals[k] : this.vals[k].replace(/\n/g, '↵');
    }
    this.exercises.reset();
  }

  // ───────────────────────────── the page ─────────────────────────────

  refreshErrors() {
    for (const k of ['prompt', 'token', 'other', 'corrupted', 'reference']) {
      const err = this.dom.panels && this.ctx.byId(`tr-err-interp-${k}`);
      const inp = this.dom[`in_${k}`];
      if (!err || !inp) continue;
      const msg = this.errors[k] ?? '';
      setText(err, msg);
      if (msg) inp.setAttribute('aria-invalid', 'true'); else inp.removeAttribute('aria-invalid');
      err.closest('.tr-field')?.classList.toggle('has-error', Boolean(msg));
    }
  }

  refresh() {
    const { dom, rt } = this;
    if (!dom.panels) return;
    const { t } = this.ctx;
    const training = rt.status === 'training' || rt.status === 'starting';
    this.followDefault();
    for (const k of TOOLS) {
      hide(dom.panels[k], k !== this.tool);
      const d = dom[k];
      d.button.disabled = !rt.info || training || Boolean(this.busy);
      const s = !rt.info ? t('ip.noModel') : training ? t('ip.training') : this.status[k]?.() ?? t('ip.ready');
      setText(d.status, s);
      if (dom.shown[k] !== this.res[k]) { dom.shown[k] = this.res[k]; this.paint(k); }
    }
    this.induction.refresh();
    hide(dom.patch.cancel, this.busy !== 'patch');
    hide(dom.patch.progress, this.busy !== 'patch');
    hide(dom.meanBox, this.vals.mode !== 'mean');
    hide(dom.in_reference.closest('.tr-field'), this.vals.source !== 'text');
    this.refreshErrors();
    this.exercises.refresh();
  }

  /** Until the learner types one, the prompts are the task's (or the opened model's) default. */
  followDefault() {
    if (this.edited || !this.rt.info) return;
    const d = this.defaults();
    if (d.prompt === this.vals.prompt && d.prompt === this.vals.corrupted) return;
    this.vals.prompt = d.prompt;
    this.vals.corrupted = d.corrupted;
    this.dom.in_prompt.value = d.prompt.replace(/\n/g, '↵');
    this.dom.in_corrupted.value = d.corrupted.replace(/\n/g, '↵');
  }

  /** A tool's figures from its answer. */
  paint(tool) {
    const r = this.res[tool];
    const d = this.dom[tool];
    if (tool === 'lens') d.chips.replaceChildren();
    if (!r) { d.box.replaceChildren(); return; }
    const figs = this[`figs_${tool}`](r);
    d.box.replaceChildren(...figs.map((f) => this.figure(f)));
    d.box.classList.toggle('is-pair', tool === 'patch'); // real patching | attribution patching, row by row
  }

  /** A figure: its legend, its table-grid (scrolling when wide) and its PNG / SVG buttons. */
  figure(f) {
    const { t } = this.ctx;
    const box = el('figure', 'tr-interp-fig');
    const cap = el('figcaption', 'tr-interp-caption', f.caption);
    cap.id = `${f.id}-cap`; // the table's name (a caption inside a scrolled table would scroll away)
    const sc = el('div', 'tr-scroll');
    const grid = f.items ? barsTable(f) : gridTable({ ...f, onPoint: (x) => setText(this.dom.readout, x), onPick: (r, c, td) => this.exercises.picked(f.kind, r, c, td) });
    sc.append(grid);
    const tools = exportBar({
      lead: t('ip.exportLead'), file: f.file, cls: 'tr-chart-tools',
      makeSvg: async () => { const m = await import('./interp-svg.js'); return f.items ? m.barsSvg(f) : m.gridSvg(f); },
      words: { png: 'PNG', svg: 'SVG', group: t('ip.exportGroup', { fig: f.caption }), saved: t('export.saved') },
    });
    box.append(cap, sc);
    if (f.legend) box.append(legend(f.scale, f.legend, f.max ?? 1, f.flip));
    box.append(tools);
    return box;
  }

  posLabels(tokens) {
    return tokens.map((x, i) => `${i} ${tokenMark(x)}`);
  }

  figs_lens({ answer: a, target }) {
    const { t } = this.ctx;
    // the followed token: the one typed, else the model's own prediction (the last point's top token)
    const tgt = (c) => target ?? a.top.at(-1)[c][0].text;
    const last = a.top.at(-1).at(-1);
    const d = this.dom.lens;
    for (const e of last) {
      const b = el('button', 'aps-btn tr-interp-chip', tokenMark(e.text));
      b.type = 'button';
      b.addEventListener('click', () => { this.vals.token = e.text; this.dom.in_token.value = tokenMark(e.text).replace(/␣/g, ' '); this.run('lens'); });
      d.chips.append(b);
    }
    const given = target != null;
    return [{
      kind: 'lens', id: 'tr-interp-lens', file: 'logit-lens', scale: 'seq',
      caption: given ? t('ip.lens.caption', { tok: tokenMark(tgt(0)) }) : t('ip.lens.captionOwn'),
      subtitle: this.ctx.modelLabel().Model, legend: t('ip.lens.legend'),
      rows: a.points, cols: this.posLabels(a.tokens),
      value: (r, c) => a.target_p[r][c],
      text: (r, c) => `${tokenMark(a.top[r][c][0].text)} ${fmt(a.target_p[r][c])}`,
      detail: (r, c) => t('ip.lens.cell', {
        point: a.points[r], pos: c, tok: tokenMark(a.tokens[c]), target: tokenMark(tgt(c)), p: fmt(a.target_p[r][c]), rank: a.target_rank[r][c] + 1,
        top: a.top[r][c].map((e) => `“${tokenMark(e.text)}” ${fmt(e.p)}`).join(', '),
      }),
    }];
  }

  figs_attribute({ answer: a }) {
    const { t } = this.ctx;
    const items = [{ label: 'wte', value: a.wte }, { label: 'wpe', value: a.wpe }];
    a.heads.forEach((row, l) => {
      row.forEach((v, h) => items.push({ label: `L${l} H${h}`, value: v }));
      items.push({ label: `L${l} ${t('ip.attnBias')}`, value: a.attn_bias[l] });
      items.push({ label: `L${l} MLP`, value: a.mlps[l] });
      items.push({ label: `L${l} ${t('ip.mlpBias')}`, value: a.mlp_bias[l] });
    });
    items.push({ label: 'ln_f β', value: a.ln_f_bias });
    const metric = this.metricName(a.token?.text ?? a.token, a.other?.text ?? a.other);
    return [{
      kind: 'attribute', id: 'tr-interp-attr', file: 'logit-attribution', items,
      caption: t('ip.attr.caption', { metric, pos: a.position }),
      subtitle: t('ip.attr.sum', { sum: fmt(a.sum), logit: fmt(a.logit) }),
      head: [t('ip.attr.part'), t('ip.attr.bar'), t('ip.attr.value')],
      onPick: (i, td) => this.exercises.picked('attribute', i, 0, td, items[i]),
    }];
  }

  /** A layers × (heads + MLP) map of one effect (flip: a larger number is worse, so red). */
  layerMap(kind, caption, heads, mlps, legendText, flip = false) {
    const L = heads.length, H = heads[0].length;
    const value = (r, c) => (c < H ? heads[r][c] : mlps[r]);
    const max = Math.max(1e-9, ...heads.flat().map(Math.abs), ...mlps.map(Math.abs));
    return {
      kind, id: `tr-interp-${kind}`, file: kind, scale: 'div', max, flip, caption, legend: legendText,
      subtitle: this.ctx.modelLabel().Model,
      rows: Array.from({ length: L }, (_, l) => `L${l}`), cols: [...Array.from({ length: H }, (_, h) => `H${h}`), 'MLP'],
      value, text: (r, c) => fmt(value(r, c)), detail: (r, c) => `L${r} ${c < H ? `H${c}` : 'MLP'}: ${fmt(value(r, c))}`,
    };
  }

  figs_ablate({ answer: a }) {
    const { t } = this.ctx;
    const figs = [this.layerMap('ablate-loss', t('ip.abl.lossCaption', { mode: t(`ip.abl.${a.mode}`) }), a.head_loss, a.mlp_loss, t('ip.abl.lossLegend'), true)];
    if (a.head_metric) figs.push(this.layerMap('ablate-metric', t('ip.abl.metricCaption', { metric: this.metricName(this.vals.token, this.vals.other) }), a.head_metric, a.mlp_metric, t('ip.abl.metricLegend')));
    return figs;
  }

  /** The three maps of one patching answer (residual, heads, MLPs), on one fixed scale −1…1. */
  patchMaps(a, which) {
    const { t } = this.ctx;
    const name = t(`ip.patch.${which}`);
    const L = a.heads.length, H = a.heads[0].length;
    const rows = Array.from({ length: L + 1 }, (_, l) => (l < L ? `L${l} in` : 'ln_f in'));
    const common = { scale: 'div', max: 1, legend: t('ip.patch.legend'), subtitle: t('ip.patch.sub', { clean: fmt(a.clean_metric), corrupted: fmt(a.corrupted_metric) }) };
    const cell = (v) => fmt(v);
    return [
      { ...common, kind: `${which}-resid`, id: `tr-interp-${which}-resid`, file: `${which}-patching-resid`, caption: t('ip.patch.residCaption', { name }),
        rows, cols: this.posLabels(a.tokens), value: (r, c) => a.resid[r][c], text: (r, c) => cell(a.resid[r][c]),
        detail: (r, c) => t('ip.patch.cell', { where: `${rows[r]}, ${c} “${tokenMark(a.tokens[c])}” / “${tokenMark(a.corrupted_tokens[c])}”`, v: fmt(a.resid[r][c]) }) },
      { ...common, kind: `${which}-heads`, id: `tr-interp-${which}-heads`, file: `${which}-patching-heads`, caption: t('ip.patch.headsCaption', { name }),
        rows: Array.from({ length: L }, (_, l) => `L${l}`), cols: [...Array.from({ length: H }, (_, h) => `H${h}`), 'MLP'],
        value: (r, c) => (c < H ? a.heads[r][c] : a.mlps[r]), text: (r, c) => cell(c < H ? a.heads[r][c] : a.mlps[r]),
        detail: (r, c) => t('ip.patch.cell', { where: `L${r} ${c < H ? `H${c}` : 'MLP'}`, v: fmt(c < H ? a.heads[r][c] : a.mlps[r]) }) },
    ];
  }

  figs_patch(r) {
    const real = this.patchMaps(r.real.answer, 'real');
    const attr = this.patchMaps(r.attr.answer, 'attr');
    return [real[0], attr[0], real[1], attr[1]];
  }

  figs_heads({ answer: a }) {
    const { t } = this.ctx;
    const L = a.induction.length, H = a.induction[0].length;
    const one = (kind, m) => ({
      kind, id: `tr-interp-${kind}`, file: `${kind}-scores`, scale: 'seq', caption: t(`ip.heads.${kind}`), legend: t('ip.heads.legend'),
      subtitle: t('ip.heads.sub', { length: a.length, batch: a.batch }),
      rows: Array.from({ length: L }, (_, l) => `L${l}`), cols: Array.from({ length: H }, (_, h) => `H${h}`),
      value: (r, c) => m[r][c], text: (r, c) => fmt(m[r][c]), detail: (r, c) => `L${r} H${c}: ${fmt(m[r][c])}`,
    });
    return [one('induction', a.induction), one('previous', a.previous)];
  }
}
