// section-runs.js — the training page's "kept runs" section (#tr-runs): every run the learner
// pauses or finishes, and every experiment's pair of runs when it ends or is stopped, is kept in
// the browser (run-store.js: IndexedDB) with its checkpoint, its loss series and its settings, so
// a reload or the next day finds them here. Any two kept runs overlay their losses on one chart
// (chart.js); a kept run can be resumed in the main run (its checkpoint loaded into the worker,
// its settings into the form, its curve continued), downloaded (the checkpoint as .safetensors,
// the losses as CSV) or deleted. A pair is listed, and deleted, as one.
//
// A run is one record, updated each time it is kept again: the main run's record id is
// rt.keepId (a new run gets a new one at its first keep; a resumed single run keeps its own;
// a resumed member of a pair becomes a new run, so the pair stays as the experiment left it).
// When the browser cannot keep a run (no IndexedDB, a full quota, another refusal) the section
// says which run was not kept and why, in an alert; nothing is dropped without a word.
//
// Other tabs of the page hear of each keep and delete (a BroadcastChannel) and list again.
//
// Interface (every section's): render() → its element; mounted(); refresh(). Also boot() (opens
// the store and lists the runs, once), keepMain() (the main run paused or ended), keepPair() (the
// experiment ended or was stopped), and for tests chartPoints().
import { el, setText, hide, statusLine, downloadBlob, downloadText } from '../common/ui.js';
import { LossChart } from './chart.js';
import { Section } from './section.js';
import { button, buttonBar, fmtInt, fmtLoss, idEl } from './fields.js';
import { openRunStore, storageEstimate, lossCsv, StoreError } from './run-store.js';

/** The channel on which the page's tabs tell each other that the kept runs changed. */
const CHANNEL = 'attention-playground-runs';
/** The most runs overlaid on the chart. */
const OVERLAY = 2;

const clone = (x) => (x == null ? x : structuredClone(x));
const newId = () => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
/** A size in bytes as people read it: kB up to a MB, then MB, then GB. */
export function fmtSize(n) {
  if (n < 1024 * 1024) return `${fmtInt(Math.max(1, Math.round(n / 1024)))} kB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}
const kB = fmtSize;

export class RunsSection extends Section {
  /** @param {object} ctx the page's context (context.js) */
  constructor(ctx) {
    super(ctx);
    this.store = null; // run-store.js's store, once open
    this.storeError = null; // why there is none (a StoreError)
    this.kept = []; // the records, oldest first
    this.picked = []; // the ids overlaid, at most OVERLAY, in the order ticked
    this.message = null; // {kind: 'error' | 'info', text}
    this.estimate = null;
    this.booted = false;
    this.channel = null;
    this.queue = Promise.resolve(); // keeps and deletes one after another
  }

  /** Opens the store and lists what it keeps (once; the page calls it at start). */
  async boot() {
    if (this.booted) return;
    this.booted = true;
    try {
      this.store = await openRunStore();
      await this.reload();
      // another tab of the page kept or deleted a run: list again
      this.channel = globalThis.BroadcastChannel ? new BroadcastChannel(CHANNEL) : null;
      if (this.channel) this.channel.onmessage = () => this.serial(async () => { await this.reload(); this.refresh(); });
    } catch (e) {
      this.storeError = e instanceof StoreError ? e : new StoreError('failed', e.message);
      this.message = { kind: 'error', text: this.ctx.t('runs.noStore', { reason: this.reason(this.storeError) }) };
    }
    this.ctx.app.dataset.runs = this.store ? 'ready' : 'unavailable';
    this.refresh();
  }

  /** Stops listening to the page's other tabs (a <gpt-lab> that is destroyed). */
  destroy() {
    this.channel?.close();
    this.channel = null;
  }

  /** The list again from the store, and the browser's storage figures. */
  async reload() {
    this.kept = await this.store.list();
    this.picked = this.picked.filter((id) => this.kept.some((m) => m.id === id));
    this.estimate = await storageEstimate();
  }

  /** Why a run was not kept, in the page's language. */
  reason(err, bytes = 0) {
    const { t } = this.ctx;
    if (err.kind === 'quota') return t('runs.why.quota', { size: kB(bytes) });
    if (err.kind === 'unavailable') return t('runs.why.unavailable');
    return t('runs.why.failed', { message: err.message });
  }

  /** One after another: a keep never races a delete or another keep. */
  serial(fn) {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => {});
    return next;
  }

  /** A run's name: "Run 3", and a pair member's option ("Run 4 · strict j > i"). */
  nameOf(m) {
    const { t } = this.ctx;
    const base = t('runs.name', { n: m.n });
    return m.pair ? `${base} · ${this.optionLabel(m.pair.kind, m.pair.value)}` : base;
  }

  optionLabel(kind, value) {
    return this.ctx.t(`${kind}.${value}`);
  }

  /** The next run number (one more than any kept). */
  nextN(k = 0) {
    return this.kept.reduce((a, m) => Math.max(a, m.n ?? 0), 0) + 1 + k;
  }

  /**
   * The record of a run: its settings (the form it was made from), the core's info, its curve and
   * figures. `run` has the runtime's fields (series, step, steps, elapsed, lastLoss, lastVal,
   * divergence, samples).
   */
  record({ id, n, created, state, info, run, status, bytes, pair = null }) {
    return {
      id, n, created, saved: Date.now(), status, pair, bytes: bytes.length,
      state: clone({ ...state, lang: undefined }),
      info: clone({ config: info.config, train: info.train, data: info.data, seed: info.seed, n_params: info.n_params, step: info.step, steps: info.steps, diverged: !!info.diverged }),
      series: clone(run.series),
      step: run.step, steps: run.steps, elapsed: run.elapsed ?? 0,
      lastLoss: run.lastLoss ?? null, lastVal: run.lastVal ?? null,
      divergence: run.divergence ?? '', samples: clone(run.samples ?? []),
    };
  }

  /** The main run paused or ended: its checkpoint, curve and settings are kept (its record replaced). */
  keepMain() {
    const { rt } = this;
    if (!this.booted || !rt.info) return Promise.resolve(); // (a <gpt-lab> without this section keeps nothing)
    if (rt.info.base) return Promise.resolve(); // a model from elsewhere, fine-tuned: its text is not the form's; Download keeps it
    // everything is read now, with the save request sent now, before a resume can be asked
    rt.keepId ||= newId();
    const id = rt.keepId;
    const old = this.kept.find((m) => m.id === id);
    const run = { ...rt, series: clone(rt.series), samples: clone(rt.samples) };
    const state = rt.runState ?? this.ctx.state;
    const saving = this.ctx.worker.call('save', { run: 'main' });
    return this.serial(async () => {
      const n = old?.n ?? this.nextN();
      const name = this.ctx.t('runs.name', { n });
      const status = run.status === 'diverged' || run.divergence ? 'diverged' : run.step >= run.steps ? 'done' : 'paused';
      let bytes;
      try {
        ({ bytes } = await saving);
      } catch (e) {
        this.say('error', this.ctx.t('runs.notKept', { name, reason: this.ctx.t('runs.why.failed', { message: e.message }) }));
        return;
      }
      const meta = this.record({ id, n, created: old?.created ?? Date.now(), state, info: { ...rt.info, step: run.step }, run, status, bytes });
      await this.put([{ meta, bytes }], name);
    });
  }

  /** The experiment ended or was stopped: both runs, kept as one pair (both or neither). */
  keepPair() {
    const ex = this.rt.exp;
    if (!this.booted || !ex || !ex.runs.length || !ex.state) return Promise.resolve();
    const w = this.ctx.expWorker();
    const saving = [w.call('save', { run: 'a' }), w.call('save', { run: 'b' })];
    const runs = ex.runs.map((r) => ({ ...r, series: clone({ steps: r.steps, train: r.train, valSteps: r.valSteps, val: r.val, divergedAt: r.divergedAt }) }));
    ex.keepId ||= newId();
    const pairId = ex.keepId;
    return this.serial(async () => {
      const old = this.kept.filter((m) => m.pair?.id === pairId);
      const n0 = old.length ? Math.min(...old.map((m) => m.n)) : this.nextN();
      const name = this.ctx.t('runs.pairName', { a: this.ctx.t('runs.name', { n: n0 }), b: this.ctx.t('runs.name', { n: n0 + 1 }) });
      let saved;
      try {
        saved = await Promise.all(saving);
      } catch (e) {
        this.say('error', this.ctx.t('runs.notKept', { name, reason: this.ctx.t('runs.why.failed', { message: e.message }) }));
        return;
      }
      const created = old[0]?.created ?? Date.now();
      const items = saved.map(({ bytes, info }, i) => {
        const r = runs[i];
        const value = Object.values(ex.over[i])[0];
        const run = { ...r, steps: info.steps, step: r.step, lastLoss: r.train.at(-1) ?? null, lastVal: r.val.at(-1) ?? null, samples: [] };
        const status = r.divergence ? 'diverged' : r.step >= info.steps ? 'done' : 'paused';
        const state = { ...ex.state, [ex.kind]: value };
        const pair = { id: pairId, kind: ex.kind, value, index: i, seed: ex.seed };
        return { meta: this.record({ id: `${pairId}-${i}`, n: n0 + i, created, state, info, run, status, bytes, pair }), bytes };
      });
      await this.put(items, name);
    });
  }

  /** Writes runs to the store; says what was kept, or which run was not and why. */
  async put(items, name) {
    const { t } = this.ctx;
    const bytes = items.reduce((a, x) => a + x.bytes.length, 0);
    if (!this.store) {
      this.say('error', t('runs.notKept', { name, reason: this.reason(this.storeError ?? new StoreError('unavailable', '')) }));
      return;
    }
    try {
      await this.store.put(items);
      this.channel?.postMessage('kept');
      await this.reload();
      this.say('info', t('runs.kept', { name, size: kB(bytes) }));
    } catch (e) {
      const err = e instanceof StoreError ? e : new StoreError('failed', e.message);
      this.say('error', t('runs.notKept', { name, reason: this.reason(err, bytes) }));
    }
  }

  say(kind, text) {
    this.message = { kind, text };
    this.refresh();
  }

  /** Deletes a run, or a whole pair. */
  remove(m) {
    return this.serial(async () => {
      const ids = m.pair ? this.kept.filter((x) => x.pair?.id === m.pair.id).map((x) => x.id) : [m.id];
      const name = m.pair ? this.pairName(m.pair.id) : this.nameOf(m);
      try {
        await this.store.remove(ids);
        this.channel?.postMessage('deleted');
        // the main run goes on; if it is kept again, it is a new record
        if (ids.includes(this.rt.keepId)) this.rt.keepId = '';
        if (m.pair && this.rt.exp?.keepId === m.pair.id) this.rt.exp.keepId = '';
        await this.reload();
        this.say('info', this.ctx.t('runs.deleted', { name }));
      } catch (e) {
        this.say('error', this.ctx.t('runs.notDeleted', { name, message: e.message }));
      }
      this.ctx.byId('tr-runs-h')?.focus();
    });
  }

  pairName(pairId) {
    const ms = this.kept.filter((x) => x.pair?.id === pairId);
    return this.ctx.t('runs.pairName', { a: this.ctx.t('runs.name', { n: ms[0]?.n }), b: this.ctx.t('runs.name', { n: ms[1]?.n }) });
  }

  /** A file name for a run's downloads: the page's checkpoint naming, with the run's number. */
  fileBase(m) {
    const c = m.info.config;
    return `gpt-${m.info.data?.task ?? 'text'}-${c.n_layer}x${c.n_embd}-step${m.step}-run${m.n}`;
  }

  async downloadCheckpoint(m) {
    try {
      const bytes = await this.store.checkpoint(m.id);
      downloadBlob(`${this.fileBase(m)}.safetensors`, new Blob([bytes], { type: 'application/octet-stream' }));
    } catch (e) {
      this.say('error', this.ctx.t('runs.notRead', { name: this.nameOf(m), message: e.message }));
    }
  }

  downloadLosses(m) {
    downloadText(`${this.fileBase(m)}-losses.csv`, lossCsv(m.series), 'text/csv');
  }

  /** Loads a kept run into the main run: its settings, its curve, and training goes on if it can. */
  async resume(m) {
    const { rt } = this;
    const { t } = this.ctx;
    const { training, checkpoints } = this.ctx.sections;
    if (rt.status === 'starting') return;
    if (rt.status === 'training') await training.pause(); // the run that was training is kept first
    await this.queue;
    const name = this.nameOf(m);
    try {
      const bytes = await this.store.checkpoint(m.id);
      const state = { ...this.ctx.state, ...clone(m.state), lang: this.ctx.state.lang };
      const text = state.task === 'text' ? state.text : '';
      const info = await this.ctx.worker.call('load', { run: 'main', bytes, text, sample: { prompt: '', every: 0 } }, [bytes.buffer]);
      await checkpoints.adopt(info, {
        name: t('runs.loadedName', { name }),
        state,
        kept: {
          series: clone(m.series), samples: clone(m.samples ?? []), lastLoss: m.lastLoss, lastVal: m.lastVal,
          elapsed: m.elapsed, elapsedBase: m.elapsed, divergence: m.divergence ?? '',
          keepId: m.pair ? '' : m.id, // a pair's run goes on as a run of its own: the pair stays as it was
        },
      });
      this.say('info', t('runs.resumed', { name, step: info.step }));
      if (rt.status === 'paused') await training.resume();
    } catch (e) {
      this.say('error', t('runs.notLoaded', { name, message: e.message }));
    }
  }

  /** Ticks or unticks a run for the overlay: at most OVERLAY, the earliest ticked gives way. */
  pick(id, on) {
    this.picked = this.picked.filter((x) => x !== id);
    if (on) this.picked.push(id);
    while (this.picked.length > OVERLAY) this.picked.shift();
    this.refresh();
  }

  render() {
    const { t } = this.ctx;
    const s = this.newCard({ id: 'tr-runs', cls: 'tr-card tr-runs', title: t('runs.title'), headingId: 'tr-runs-h', lede: t('runs.lede') });
    const { dom } = this;
    s.querySelector('h2').tabIndex = -1; // focus goes back here after a delete
    dom.msg = idEl('tr-runs-msg', 'div', 'tr-ckpt-msg');
    dom.msg.setAttribute('role', 'alert');
    dom.status = statusLine('tr-runs-status');
    dom.quota = idEl('tr-runs-quota', 'p', 'aps-hint');
    dom.list = idEl('tr-runs-list', 'ul', 'tr-runs-list');
    dom.list.setAttribute('aria-labelledby', 'tr-runs-h');
    const fig = el('figure', 'tr-chart-fig');
    dom.fig = fig;
    dom.chartBox = idEl('tr-runs-chart', 'div', 'tr-chart');
    fig.append(dom.chartBox, el('figcaption', 'aps-hint', t('runs.chartCaption')));
    s.append(dom.msg, dom.status, dom.quota, el('p', 'aps-hint', t('runs.pickHint')), dom.list, fig);
    return s;
  }

  mounted() {
    this.chartSig = '';
  }

  refresh() {
    const { dom } = this;
    if (!dom.list) return;
    const { t } = this.ctx;
    const app = this.ctx.app;
    app.dataset.kept = String(this.kept.length);
    // the message: an alert for a run not kept, a line for what was kept
    const m = this.message;
    dom.msg.replaceChildren();
    dom.msg.className = m ? `tr-ckpt-msg is-${m.kind}` : 'tr-ckpt-msg';
    if (m) dom.msg.append(el('p', '', m.text));
    const bytes = this.kept.reduce((a, x) => a + (x.bytes ?? 0), 0);
    const status = !this.booted || (!this.store && !this.storeError) ? t('runs.opening')
      : !this.store ? t('runs.none')
        : this.kept.length ? t('runs.count', { n: this.kept.length, size: kB(bytes) }) : t('runs.empty');
    setText(dom.status, status);
    setText(dom.quota, this.store && this.estimate ? t('runs.quota', { usage: kB(this.estimate.usage), quota: kB(this.estimate.quota) }) : '');
    const sig = JSON.stringify([this.kept.map((x) => [x.id, x.saved]), this.picked, this.ctx.state.lang]);
    if (dom.list.dataset.sig !== sig) {
      dom.list.dataset.sig = sig;
      const focusId = this.ctx.app.getRootNode().activeElement?.id; // (the page's document, or a <gpt-lab>'s shadow root)
      dom.list.replaceChildren(...this.items());
      if (focusId && !this.ctx.byId(focusId)?.isConnected) this.ctx.byId('tr-runs-h')?.focus();
      else if (focusId) this.ctx.byId(focusId)?.focus();
    }
    this.refreshChart();
  }

  /** The list: newest first; a pair as one item holding its two runs. */
  items() {
    const out = [];
    const seen = new Set();
    for (const m of [...this.kept].reverse()) {
      if (!m.pair) { out.push(this.runItem(m, 'li')); continue; }
      if (seen.has(m.pair.id)) continue;
      seen.add(m.pair.id);
      const ms = this.kept.filter((x) => x.pair?.id === m.pair.id).sort((a, b) => a.pair.index - b.pair.index);
      out.push(this.pairItem(ms));
    }
    return out;
  }

  pairItem(ms) {
    const { t } = this.ctx;
    const p = ms[0].pair;
    const li = el('li', 'tr-run-pair');
    li.dataset.pair = p.id;
    const hId = `tr-pair-${p.id}`;
    const h = idEl(hId, 'h3', 'tr-h3', t('runs.pairTitle', { exp: t(`exp.${p.kind}`), seed: p.seed }));
    li.setAttribute('aria-labelledby', hId);
    const inner = el('ul', 'tr-runs-list');
    inner.append(...ms.map((m) => this.runItem(m, 'li', false)));
    const del = button(t('runs.deletePair'), `run-delete-${p.id}`, () => this.remove(ms[0]));
    del.setAttribute('aria-describedby', hId);
    li.append(h, inner, buttonBar(del));
    return li;
  }

  /** One run: a tick for the overlay (its name is the label), its figures, its buttons. */
  runItem(m, tag, deletable = true) {
    const { t } = this.ctx;
    const li = el(tag, 'tr-run');
    li.dataset.run = m.id;
    li.dataset.status = m.status;
    const nameId = `tr-run-name-${m.id}`;
    const head = el('div', 'tr-run-head');
    const box = idEl(`tr-run-pick-${m.id}`, 'input', 'tr-run-pick');
    box.type = 'checkbox';
    box.checked = this.picked.includes(m.id);
    box.addEventListener('change', () => this.pick(m.id, box.checked));
    const label = el('label', 'tr-run-label');
    label.htmlFor = box.id;
    const name = idEl(nameId, 'strong', 'tr-run-name', this.nameOf(m));
    label.append(name, el('span', 'tr-run-what', this.describe(m)));
    head.append(box, label);
    const figures = t('runs.figures', {
      status: t(`runs.status.${m.status}`, { step: m.series.divergedAt ?? m.step }), step: fmtInt(m.step), steps: fmtInt(m.steps),
      loss: fmtLoss(m.lastLoss), val: fmtLoss(m.lastVal), size: kB(m.bytes ?? 0), n: fmtInt(m.info.n_params ?? 0),
      saved: new Date(m.saved).toLocaleString(this.ctx.state.lang === 'zh' ? 'zh-CN' : 'en-GB', { dateStyle: 'medium', timeStyle: 'short' }),
    });
    const p = el('p', 'tr-run-figures aps-hint', figures);
    p.id = `tr-run-fig-${m.id}`;
    const can = m.status === 'paused';
    const b = (text, key, fn) => {
      const x = button(text, `run-${key}-${m.id}`, fn);
      x.setAttribute('aria-describedby', nameId);
      return x;
    };
    const items = [
      b(t(can ? 'runs.resume' : 'runs.open'), 'resume', () => this.resume(m)),
      b(t('runs.downloadCkpt'), 'ckpt', () => this.downloadCheckpoint(m)),
      b(t('runs.downloadLoss'), 'csv', () => this.downloadLosses(m)),
    ];
    if (deletable) items.push(b(t('runs.delete'), 'delete', () => this.remove(m)));
    li.append(head, p, buttonBar(...items));
    return li;
  }

  /** The run's task and size in words. */
  describe(m) {
    const { t } = this.ctx;
    const c = m.info.config;
    const task = m.info.data?.task ? t(`task.${m.info.data.task}`) : (m.state?.text_name || t('task.text'));
    return t('runs.what', { task, n_layer: c.n_layer, n_head: c.n_head, n_embd: c.n_embd, seed: m.info.seed });
  }

  /** The overlay chart: the ticked runs' curves (hidden when none is ticked). */
  refreshChart() {
    const { dom } = this;
    const ms = this.picked.map((id) => this.kept.find((m) => m.id === id)).filter(Boolean);
    const sig = JSON.stringify([ms.map((m) => [m.id, m.saved]), this.ctx.state.lang]);
    hide(dom.fig, ms.length === 0);
    if (sig === this.chartSig) return;
    this.chartSig = sig;
    this.chart?.destroy();
    this.chart = null;
    if (!ms.length) return;
    this.chart = new LossChart(dom.chartBox, { runs: ms.map((m) => ({ label: this.nameOf(m) })), t: this.ctx.t });
    ms.forEach((m, i) => this.chart.set(i, m.series));
  }
}
