// kv.js — generation with the KV cache, one token at a time, made visible: the context (prompt,
// then each new token), the cache's K and V rows of one layer growing by one row per step (the
// new row outlined and labelled), each step's `base` and the one query row that attends over
// base + 1 keys (its weights per head, as numbers), and beside it the largest difference between
// the logits computed with the cache and those of a full forward pass over the same context
// (0, or float rounding: ≤ 1e-5 is marked as agreeing, in text). Each generated token carries the
// probability it was drawn with; choosing one shows the distribution it was drawn from (its
// temperature, top-k and top-p, the bars) and the draw (the uniform number, the coin, the token's
// segment). Every number comes from the core
// (the worker's gen_start / gen_next answers); this file only lays them out. With grouped-query
// attention a cached row holds n_kv_head heads (KC = n_kv_head·head_dim numbers, not n_embd): the
// facts say the cache's bytes beside what one key/value head per query head would take.
import { heat, HEAT_WHITE_TEXT, tokenMark as tokenLabel } from '../common/export.js';
import { el } from '../common/ui.js';
import { barsTable, fillBars, factsText, pct } from './next-bars.js';

export const KV_TOLERANCE = 1e-5;

/** A difference as text: exactly 0 says 0; others in exponent form. */
export const diffText = (d) => (d === 0 ? '0' : d.toExponential(1));

/** Signed values: orange below 0, blue above, white at 0 (scaled by the largest |v|). */
function signed(v, max) {
  const x = max > 0 ? Math.max(-1, Math.min(1, v / max)) : 0;
  const a = Math.abs(x);
  const [r, g, b] = x >= 0 ? [33, 113, 181] : [217, 95, 2];
  const mix = (c) => Math.round(255 + (c - 255) * a);
  return `rgb(${mix(r)},${mix(g)},${mix(b)})`;
}

function drawCache(canvas, data, layer, T, C, tokens, newRow, width) {
  const dpr = globalThis.devicePixelRatio || 1;
  const cw = Math.max(2, Math.min(8, Math.floor((width - 50) / C)));
  const ch = Math.max(8, Math.min(16, Math.floor(380 / Math.max(T, 1))));
  const m = 44;
  const w = m + C * cw + 4;
  const h = T * ch + 2;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(h * dpr);
  canvas.style.width = `${w}px`; // CSSOM, allowed by style-src 'self'
  canvas.style.height = `${h}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, w, h);
  const off = layer * T * C;
  let max = 0;
  for (let i = 0; i < T * C; i++) max = Math.max(max, Math.abs(data[off + i]));
  for (let t = 0; t < T; t++) {
    for (let c = 0; c < C; c++) {
      ctx.fillStyle = signed(data[off + t * C + c], max);
      ctx.fillRect(m + c * cw, 1 + t * ch, cw, ch);
    }
    ctx.fillStyle = t === newRow ? '#d9480f' : '#5d636d';
    ctx.font = `${t === newRow ? 700 : 400} ${Math.min(12, ch)}px ui-monospace, "DejaVu Sans Mono", monospace`;
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'right';
    ctx.fillText(`${t} ${tokenLabel(tokens[t] ?? '')}`, m - 4, 1 + t * ch + ch / 2);
  }
  if (newRow >= 0) {
    ctx.strokeStyle = '#d9480f';
    ctx.lineWidth = 2;
    ctx.setLineDash([4, 2]);
    ctx.strokeRect(m - 1, 1 + newRow * ch - 1, C * cw + 2, ch + 2);
  }
}

export class KvView {
  constructor(root, opts) {
    this.width = 0;
    // the box's width, kept up to date without asking for a layout in the middle of a render
    this.ro = new ResizeObserver((entries) => { this.width = entries[entries.length - 1].contentRect.width; });
    this.root = root;
    this.opts = opts; // {t, onLayer}
    this.layer = 0;
    this.history = [];
    this.last = null;
    this.model = null; // {n_layer, n_head, n_kv_head, n_embd, vocab}
    this.promptLength = 0;
    this.allText = '';
    this.selected = -1; // the step whose draw is shown (-1: the newest)
  }

  get root() { return this._root; }
  set root(r) {
    this.ro.disconnect();
    this._root = r;
    this.ro.observe(r);
  }

  reset() {
    this.history = [];
    this.last = null;
    this.allText = '';
    this.selected = -1;
    this.root.replaceChildren();
  }

  /** The first answer (the prompt through the cache). */
  start(g, model, prompt) {
    this.model = model;
    this.history = [];
    this.selected = -1;
    this.promptLength = g.cache_length;
    this.allText = prompt;
    this.layer = Math.min(this.layer, model.n_layer - 1);
    this.push(g, true);
  }

  /** One more token's answer. */
  push(g, first = false) {
    if (!first) this.allText += g.text;
    this.history.push({ n: this.history.length, token: first ? null : g.text, base: g.base, keys: g.base + 1, diff: g.max_abs_diff, rebuilt: g.rebuilt,
      draw: g.draw ?? null, distribution: g.distribution ?? null });
    this.last = g;
    this.render();
  }

  /** The step whose draw is shown: the one chosen, else the newest that drew. */
  shownDraw() {
    const chosen = this.history[this.selected];
    if (chosen?.draw) return chosen;
    for (let i = this.history.length - 1; i >= 0; i--) if (this.history[i].draw) return this.history[i];
    return null;
  }

  /** What the shown step's token was drawn from, and the draw. */
  drawView() {
    const { t } = this.opts;
    const s = this.shownDraw();
    if (!s) return null;
    const d = s.draw;
    const a = { ...s.distribution, vocab_size: this.model.vocab_size ?? this.model.vocab?.length ?? '' };
    const box = el('section', 'tr-kv-draw');
    box.setAttribute('aria-labelledby', 'tr-kv-draw-h');
    const h = el('h4', 'tr-h4', t('kv.drawTitle', { n: s.n, tok: tokenLabel(s.token), p: pct(d.p) }));
    h.id = 'tr-kv-draw-h';
    box.append(h, el('p', 'tr-next-facts', factsText(t, a)));
    const f = (x) => Number(x.toPrecision(5));
    box.append(el('p', 'tr-kv-explain', d.greedy ? t('kv.drawGreedy', { tok: tokenLabel(s.token) })
      : t('kv.drawExplain', { u: f(d.u), sum: f(d.sum), coin: f(d.coin), tok: tokenLabel(s.token), from: f(d.from), to: f(d.to), kept: d.kept })));
    const table = barsTable(t, t('kv.drawTable', { n: s.n }));
    fillBars(table, t, a, d.token);
    const sc = el('div', 'tr-scroll');
    sc.append(table);
    box.append(sc);
    return box;
  }

  render() {
    const { t } = this.opts;
    const g = this.last;
    if (!g || !this.model) return;
    const { n_layer: L, n_head: NH, n_embd: E } = this.model;
    const NKV = this.model.n_kv_head || NH;
    const C = (E / NH) * NKV;  // a cached row's numbers: n_kv_head heads of head_dim
    const T = g.cache_length;
    this.root.replaceChildren();

    // the text and the context
    const ctxBox = el('div', 'tr-kv-context');
    ctxBox.append(el('h4', 'tr-h4', t('kv.context', { n: T })));
    const strip = el('p', 'tr-kv-tokens');
    const generatedInCtx = Math.min(T, g.generated);
    g.tokens.forEach((tok, i) => {
      const isNew = i === T - 1 && g.generated > 0;
      const isGen = i >= T - generatedInCtx;
      const s = el('span', `tr-tok${isGen ? ' is-gen' : ' is-prompt'}${isNew ? ' is-new' : ''}`, tokenLabel(tok));
      s.title = `${t('kv.position')} ${i}${isGen ? ` · ${t('kv.generated')}` : ` · ${t('kv.prompt')}`}`;
      strip.append(s);
    });
    const legend = el('p', 'tr-hint', t('kv.legend'));
    ctxBox.append(strip, legend);

    // this step's facts
    const facts = el('dl', 'tr-kv-facts');
    const fact = (k, v, cls = '') => {
      const d = el('div', cls);
      d.append(el('dt', '', k), el('dd', '', v));
      facts.append(d);
    };
    const ok = g.max_abs_diff <= KV_TOLERANCE;
    fact(t('kv.step'), String(g.generated));
    fact('base', String(g.base));
    fact(t('kv.keys'), `base + 1 = ${g.base + 1}`);
    fact(t('kv.cacheLen'), String(T));
    // K and V, every layer, T rows of C float32 numbers; beside it one key/value head per query head
    const bytes = 2 * L * T * C * 4;
    fact(t('kv.bytes'), NKV === NH ? t('kv.bytesText', { b: bytes.toLocaleString('en-US'), L, T, c: C })
      : t('kv.bytesGqa', { b: bytes.toLocaleString('en-US'), L, T, c: C, full: (2 * L * T * E * 4).toLocaleString('en-US'), NKV, NH }));
    fact(t('kv.diff'), `${diffText(g.max_abs_diff)} ${ok ? t('kv.diffOk') : t('kv.diffBad')}`, ok ? 'is-ok' : 'is-bad');
    const explain = el('p', 'tr-kv-explain', g.rebuilt ? t('kv.rebuilt', { n: T }) : t('kv.explain', { base: g.base, keys: g.base + 1, row: g.base }));

    // the query row over base + 1 keys, per head of the chosen layer
    const layerSel = el('select', 'aps-select tr-kv-layer');
    layerSel.id = 'tr-kv-layer';
    for (let l = 0; l < L; l++) layerSel.append(new Option(t('maps.layer', { l: l + 1 }), String(l)));
    layerSel.value = String(this.layer);
    layerSel.addEventListener('change', () => { this.layer = Number(layerSel.value); this.render(); this.root.querySelector('#tr-kv-layer')?.focus(); });
    const layerLab = el('label', 'aps-label', t('kv.layer'));
    layerLab.htmlFor = layerSel.id;
    const layerRow = el('div', 'tr-kv-layerrow');
    layerRow.append(layerLab, layerSel);

    const qBox = el('div', 'tr-kv-query');
    qBox.append(el('h4', 'tr-h4', t('kv.queryTitle', { row: g.base, keys: g.base + 1 })));
    const scroll = el('div', 'tr-scroll');
    const table = el('table', 'tr-kv-att');
    table.dataset.kind = 'query-row';
    const thead = el('thead');
    const hr = el('tr');
    hr.append(el('th', '', ''));
    for (let j = 0; j < T; j++) {
      const th = el('th', '', tokenLabel(g.tokens[j]));
      th.title = `${t('kv.position')} ${j}`;
      th.scope = 'col';
      hr.append(th);
    }
    thead.append(hr);
    const tbody = el('tbody');
    for (let h = 0; h < NH; h++) {
      const tr = el('tr');
      const th = el('th', '', t('maps.head', { h: h + 1 }));
      th.scope = 'row';
      tr.append(th);
      const off = (this.layer * NH + h) * T;
      let best = 0;
      for (let j = 1; j < T; j++) if (g.cache_attention[off + j] > g.cache_attention[off + best]) best = j;
      for (let j = 0; j < T; j++) {
        const w = g.cache_attention[off + j];
        const td = el('td', j === best ? 'is-max' : '', w.toFixed(2));
        td.title = String(w);
        td.style.background = heat(w); // CSSOM, allowed by style-src 'self'
        if (w >= HEAT_WHITE_TEXT) td.classList.add('is-dark');
        tr.append(td);
      }
      tbody.append(tr);
    }
    table.append(thead, tbody);
    scroll.append(table);
    qBox.append(scroll, el('p', 'tr-hint', t('kv.queryHint')));

    // the cache's K and V rows
    const caches = el('div', 'tr-kv-caches');
    for (const [name, data] of [['K', g.cache_keys], ['V', g.cache_values]]) {
      const fig = el('figure', 'tr-kv-cache');
      fig.dataset.cache = name;
      fig.append(el('figcaption', '', t('kv.cacheTitle', { name, n: T, c: C, l: this.layer + 1 })));
      const sc = el('div', 'tr-scroll');
      const cv = el('canvas');
      cv.setAttribute('role', 'img');
      cv.setAttribute('aria-label', t('kv.cacheAria', { name, n: T, c: C }));
      const W = this.width || 600;
      drawCache(cv, data, this.layer, T, C, g.tokens, g.rebuilt ? -1 : T - 1, W >= 700 ? W / 2 - 24 : W - 8);
      sc.append(cv);
      fig.append(sc);
      caches.append(fig);
    }
    const cacheNote = el('p', 'tr-hint', t('kv.cacheHint'));

    // the logits with the cache beside a full forward pass
    const logits = el('div', 'tr-kv-logits');
    logits.append(el('h4', 'tr-h4', t('kv.logitsTitle')));
    const V = g.logits.length;
    const order = [...Array(V).keys()].sort((a, b) => g.logits[b] - g.logits[a]).slice(0, 5);
    const lt = el('table', 'tr-kv-logit-table');
    const lh = el('tr');
    for (const k of ['kv.token', 'kv.cached', 'kv.full', 'kv.absdiff']) lh.append(el('th', '', t(k)));
    const lhead = el('thead');
    lhead.append(lh);
    const lb = el('tbody');
    const vocab = this.model.vocab ?? [];
    for (const v of order) {
      const tr = el('tr');
      tr.append(el('td', 'tr-mono', tokenLabel(vocab[v] ?? `[${v}]`)), el('td', 'tr-num', g.logits[v].toFixed(6)),
        el('td', 'tr-num', g.full_logits[v].toFixed(6)), el('td', 'tr-num', diffText(Math.abs(g.logits[v] - g.full_logits[v]))));
      lb.append(tr);
    }
    lt.append(lhead, lb);
    logits.append(lt);

    // every step so far
    const hist = el('div', 'tr-kv-history');
    hist.append(el('h4', 'tr-h4', t('kv.history')));
    const hs = el('div', 'tr-scroll tr-kv-history-scroll');
    const ht = el('table', 'tr-kv-steps');
    const hh = el('tr');
    for (const k of ['kv.step', 'kv.token', 'base', 'kv.keys', 'kv.diff']) hh.append(el('th', '', k.startsWith('kv.') ? t(k) : k));
    const hhead = el('thead');
    hhead.append(hh);
    const hb = el('tbody');
    for (const s of this.history) {
      const tr = el('tr');
      const okRow = s.diff <= KV_TOLERANCE;
      const tokCell = el('td', 'tr-mono');
      if (s.token == null) tokCell.textContent = t('kv.promptRow');
      else if (!s.draw) tokCell.textContent = tokenLabel(s.token);
      else {
        // the token with the probability it was drawn with: a button that shows what it was drawn from
        const b = el('button', 'tr-kv-drawn', `${tokenLabel(s.token)} ${pct(s.draw.p)}`);
        b.type = 'button';
        b.setAttribute('aria-pressed', String(s === this.shownDraw()));
        b.setAttribute('aria-label', t('kv.drawnLabel', { n: s.n, tok: tokenLabel(s.token), p: pct(s.draw.p) }));
        b.addEventListener('click', () => { this.selected = s.n; this.render(); this.root.querySelector(`.tr-kv-drawn[data-n="${s.n}"]`)?.focus(); });
        b.dataset.n = String(s.n);
        tokCell.append(b);
      }
      tr.append(el('td', 'tr-num', String(s.n)), tokCell, el('td', 'tr-num', String(s.base)), el('td', 'tr-num', String(s.keys)));
      const d = el('td', `tr-num ${okRow ? 'is-ok' : 'is-bad'}`, `${diffText(s.diff)} ${okRow ? '✓' : '✗'}`);
      d.dataset.diff = String(s.diff);
      tr.append(d);
      if (s.rebuilt) tr.classList.add('is-rebuilt');
      hb.append(tr);
    }
    ht.append(hhead, hb);
    hs.append(ht);
    hist.append(hs);
    const drawBox = this.drawView();
    if (drawBox) hist.append(drawBox);
    // the newest step in view, in the next frame (its layout is done then anyway: no extra one now)
    requestAnimationFrame(() => { hs.scrollTop = hs.scrollHeight; });

    const text = el('p', 'tr-kv-text');
    text.append(el('span', 'aps-label', `${t('kv.textSoFar')} `), el('span', 'tr-mono', this.allText.replace(/\n/g, '↵')));

    const top = el('div', 'tr-kv-top');
    const left = el('div', 'tr-kv-col');
    left.append(ctxBox, facts, explain, layerRow, qBox);
    const right = el('div', 'tr-kv-col');
    right.append(logits, hist);
    top.append(left, right);
    this.root.append(text, top, caches, cacheNote);
  }
}
