// paint.js — writing a new trace into a stepper's panels: each panel's matrix, shape, title,
// formula and note (forward, and the gradients in backward mode), the heads side by side, the
// summary, the warnings, the large-input note and the head buttons; then the layout and the
// explanation. This is the repaint path of every edit (an edit → the core's trace → paint): each
// view paints its canvas only near the screen (panels.js), and every write here is skipped when
// the text is the same (setText, the keyed summary and warnings, the formula's key).
//
// Every function takes the stepper's context (context.js): ctx.trace (and ctx.bw in backward
// mode) are what is painted.
import { el, hide, setText } from '../common/ui.js';
import { formula, gradFormula } from '../common/math.js';
import { HEAD_GRAD_PANELS } from './backward.js';
import { formatNumber } from '../common/format.js';
import { BIASES, HEAD_PANELS, LARGE_T, userChange, largeT, heatOnly, heatPanel, headsSide, tokenAxes } from './context.js';
import { viewKind, buildMultiples, layoutSteps } from './pipeline.js';
import { showExplain } from './explain-box.js';
import { variantSpecs, variantGradSpecs, variantNote, variantFormula, tileGradNote } from './variants.js';
import { paintExercise, quizzing } from './exercise-bar.js';

/** The entropy of a row of weights, in bits (NaN when a weight is). */
const entropyBits = (row) => {
  if (row.some((v) => Number.isNaN(v))) return NaN;
  let h = 0;
  for (const w of row) if (w > 0) h -= w * Math.log2(w);
  return h;
};

/** A panel note: its text, hidden when empty (written only when it changes). */
function setNote(e, text) {
  setText(e, text);
  hide(e, !text);
}

/** Paints ctx.trace (and ctx.bw) into the panels and everything around them. */
export function paint(ctx) {
  const { t, views } = ctx;
  const tr = ctx.trace;
  const bw = ctx.bw;
  const h = ctx.state.head;
  const hs = tr.n_head > 1 ? ` · ${t('ui.headN', { h: h + 1 })}` : '';
  const fctx = { mode: tr.mode, base: tr.base, scale: tr.options.scale, causal: tr.options.causal, maskKind: tr.options.mask, softmax: tr.options.softmax,
    biases: BIASES.filter((b) => tr.inputs[b]), rope: !!tr.rope, alibi: !!tr.alibi, window: tr.options.window ?? 0, sinks: tr.options.sinks ?? 0,
    mla: tr.mode === 'mla' };
  const quiz = quizzing(ctx); // an unsolved exercise: no marks that would tell the answer
  const fkey = JSON.stringify(fctx);
  const specs = { ...forwardSpecs(ctx, tr, h, quiz), ...variantSpecs(ctx, tr, h) };
  // the matrices on the page (what the exercise checks against), then the exercise's questions
  const gspecs = bw ? { ...gradSpecs(bw, h), ...variantGradSpecs(bw, h) } : {};
  ctx.shown = {};
  for (const [p, [m]] of [...Object.entries(specs), ...Object.entries(gspecs)]) if (m && views.has(p)) ctx.shown[p] = m;
  const asked = new Set((ctx.state.exercise?.ask ?? []).map((a) => a.panel));
  const heat = heatOnly(ctx);
  for (const [p, [m]] of [...Object.entries(specs), ...Object.entries(gspecs)]) {
    if (m && views.has(p)) viewKind(ctx, views.get(p), heat && heatPanel(ctx, m) && !asked.has(p)); // a question needs its cells
  }
  paintExercise(ctx);
  for (const [p, [m, shape, opts, statsOpts]] of Object.entries(specs)) {
    const v = views.get(p);
    v.view.update(m, opts);
    if (v.stats) v.stats.update(m.map(() => []), statsOpts);
    setText(v.shape, shape);
    setText(v.title, t(`panel.${p}`) + (HEAD_PANELS.includes(p) ? hs : ''));
    if (v.fkey !== fkey) { v.fslot.replaceChildren(variantFormula(p, fctx) ?? formula(p, fctx)); v.fkey = fkey; }
    setNote(v.note, variantNote(ctx, p, tr, h) ?? panelNote(ctx, p, tr, h));
  }
  const side = views.get('weights-heads');
  if (side && headsSide(ctx)) paintSideHeads(ctx, side, tr, h, heat);
  if (bw) paintGrads(ctx, bw, h, hs, gspecs);
  paintSummary(ctx, tr, bw);
  paintWarnings(ctx, tr, quiz);
  paintLarge(ctx, heat);
  paintHeadButtons(ctx, tr, h);
  layoutSteps(ctx);
  showExplain(ctx);
}

/** The forward panels' matrices: {panel: [matrix, shape, opts, statsOpts]} of head h. */
function forwardSpecs(ctx, tr, h, quiz) {
  const { t } = ctx;
  const H = tr.heads[h];
  const empty = new Set(tr.empty_rows.filter((r) => r.head === h).map((r) => r.row));
  const over = new Set(tr.overflow_rows.filter((r) => r.head === h).map((r) => r.row));
  const rowClass = (i) => (quiz ? '' : empty.has(i) ? 'is-empty-row' : over.has(i) ? 'is-overflow-row' : '');
  const TT = `T × T_total = ${tr.T} × ${tr.T_total}`;
  // the prompt's tokens on the axes, when the matrices came from a model (state.source)
  const axes = tokenAxes(ctx, tr.T_total);
  const qRows = axes ? { rowLabels: axes.queries } : {};
  const kRows = axes ? { rowLabels: axes.keys } : {};
  const qk = axes ? { rowLabels: axes.queries, colLabels: axes.keys } : {};
  return {
    q: [H.q, `T × d_k = ${tr.T} × ${tr.head_dim}`, qRows],
    k: [H.k, `T_total × d_k = ${tr.T_total} × ${tr.head_dim}`, kRows],
    v: [H.v, `T_total × d_v = ${tr.T_total} × ${tr.d_v}`, kRows],
    scores: [H.scores, TT, qk],
    scaled: [H.scaled, TT, qk],
    masked: [H.masked, TT, qk],
    weights: [H.weights, TT, { range: [0, 1], rowClass, ...qk }, { rowClass, ...qRows, extra: [
      // a float sum: always 4 decimals (1.0000 and 0.99999994 alike), never a bare "1" beside "1.0000"
      { head: 'Σ', title: t('panel.sumTitle'), values: H.weight_row_sums, cls: 'is-sum', fmt: (v) => (Number.isFinite(v) ? v.toFixed(4) : formatNumber(v)) },
      { head: 'max', title: t('panel.derivedTitle'), values: H.weights.map((r) => (r.some(Number.isNaN) ? NaN : Math.max(...r))), cls: 'is-derived' },
      { head: 'H', title: t('panel.derivedTitle'), values: H.weights.map(entropyBits), cls: 'is-derived', fmt: (v) => (Number.isNaN(v) ? 'NaN' : v.toFixed(2)) },
    ] }],
    context: [H.context, `T × d_v = ${tr.T} × ${tr.d_v}`, { rowClass, ...qRows }],
    concat: [tr.concat, `T × n_head·d_v = ${tr.T} × ${tr.n_head * tr.d_v}`, qRows],
    out: [tr.out, `T × d_out = ${tr.T} × ${tr.d_out}`, qRows],
  };
}

/** Every head's weights side by side (the small multiples follow the number of heads). */
function paintSideHeads(ctx, side, tr, h, heat) {
  if (side.multi.length !== tr.n_head || side.heat !== heat) buildMultiples(ctx, side, tr.n_head, heat);
  side.multi.forEach((mm, k) => {
    const e = new Set(tr.empty_rows.filter((r) => r.head === k).map((r) => r.row));
    const o = new Set(tr.overflow_rows.filter((r) => r.head === k).map((r) => r.row));
    mm.view.update(tr.heads[k].weights, { range: [0, 1], rowClass: (i) => (e.has(i) ? 'is-empty-row' : o.has(i) ? 'is-overflow-row' : '') });
    mm.box.classList.toggle('is-current-head', k === h);
    mm.button.setAttribute('aria-pressed', String(k === h));
  });
  setText(side.shape, `${tr.n_head} × (T × T_total) = ${tr.n_head} × ${tr.T} × ${tr.T_total}`);
}

/** The gradient panels' matrices and shapes: {panel: [matrix, shape, cellClass]}. */
function gradSpecs(b, h) {
  const tr = b.trace;
  const g = b.grads;
  const G = g.heads[h];
  const maskCls = (i, j) => (tr.mask[i][j] === -Infinity ? 'is-masked0' : '');
  const TT = `T × T_total = ${tr.T} × ${tr.T_total}`;
  const dm = tr.d_model;
  return {
    d_out: [g.out, `T × d_out = ${tr.T} × ${tr.d_out}`],
    d_W_o: [g.W_o, `n_head·d_v × d_out = ${tr.n_head * tr.d_v} × ${tr.d_out}`],
    d_concat: [g.concat, `T × n_head·d_v = ${tr.T} × ${tr.n_head * tr.d_v}`],
    d_context: [G.context, `T × d_v = ${tr.T} × ${tr.d_v}`],
    d_weights: [G.weights, TT],
    d_v: [G.v, `T_total × d_v = ${tr.T_total} × ${tr.d_v}`],
    d_scaled: [G.scaled, TT, maskCls],
    d_scores: [G.scores, TT, maskCls],
    d_q: [G.q, `T × d_k = ${tr.T} × ${tr.head_dim}`],
    d_k: [G.k, `T_total × d_k = ${tr.T_total} × ${tr.head_dim}`],
    d_Q: [g.Q, `T × n_head·d_k = ${tr.T} × ${tr.n_head * tr.head_dim}`],
    d_K: [g.K, `T_total × n_head·d_k = ${tr.T_total} × ${tr.n_head * tr.head_dim}`],
    d_V: [g.V, `T_total × n_head·d_v = ${tr.T_total} × ${tr.n_head * tr.d_v}`],
    d_x: [g.x, `T_total × d_model = ${tr.T_total} × ${dm}`],
    d_W_q: [g.W_q, `d_model × n_head·d_k = ${dm} × ${tr.n_head * tr.head_dim}`],
    d_W_k: [g.W_k, `d_model × n_head·d_k = ${dm} × ${tr.n_head * tr.head_dim}`],
    d_W_v: [g.W_v, `d_model × n_head·d_v = ${dm} × ${tr.n_head * tr.d_v}`],
    // the biases' gradients: vectors, shown as one row
    d_b_q: [g.b_q && [g.b_q], `n_head·d_k = ${tr.n_head * tr.head_dim}`],
    d_b_k: [g.b_k && [g.b_k], `n_head·d_k = ${tr.n_head * tr.head_dim}`],
    d_b_v: [g.b_v && [g.b_v], `n_head·d_v = ${tr.n_head * tr.d_v}`],
    d_b_o: [g.b_o && [g.b_o], `d_out = ${tr.d_out}`],
  };
}

function paintGrads(ctx, b, h, hs, specs) {
  const { t, views } = ctx;
  const tr = b.trace;
  const fctx = { base: tr.base, scale: tr.options.scale, upstream: ctx.state.upstream.kind, useWo: ctx.state.use_W_o, nHead: tr.n_head, rope: !!tr.rope };
  const fkey = JSON.stringify(fctx);
  for (const [p, [m, shape, cellClass]] of Object.entries(specs)) {
    const v = views.get(p);
    if (!v || !m) continue;
    v.view.update(m, { diverging: true, cellClass });
    setText(v.shape, shape);
    setText(v.title, t(`panel.${p}`) + (HEAD_GRAD_PANELS.includes(p) ? hs : ''));
    if (v.fkey !== fkey) { v.fslot.replaceChildren(variantFormula(p, fctx) ?? gradFormula(p, fctx)); v.fkey = fkey; }
    setNote(v.note, gradNote(ctx, p, b, h));
  }
}

function gradNote(ctx, p, b, h) {
  const { t } = ctx;
  const tr = b.trace;
  const hidden = tr.options.causal && tr.mask.some((r) => r.includes(-Infinity));
  switch (p) {
    case 'd_out': return t(`bn.out.${ctx.state.upstream.kind}`, { loss: formatNumber(b.loss) });
    case 'd_concat': return ctx.state.use_W_o ? '' : t('bn.noWo');
    case 'd_context': return tr.n_head > 1 ? t('bn.context', { h: h + 1, d: tr.d_v }) : '';
    case 'd_scaled': return [t('bn.scaled'), hidden ? t('bn.masked') : '', tr.empty_rows.some((r) => r.head === h) ? t('bn.emptyRow') : '',
      flatHead(b, h) ? t('bn.flat', { g: formatNumber(b.grads.heads[h].weights[0][0]) }) : ''].filter(Boolean).join(' ');
    case 'd_scores': return [hidden ? t('bn.masked') : '', flatHead(b, h) ? t('bn.flatAfter') : ''].filter(Boolean).join(' ');
    case 'd_q': case 'd_k': return flatHead(b, h) ? t('bn.flatAfter') : '';
    case 'd_x': return tileGradNote(ctx, p, b, h) ?? (tr.base > 0 ? t('bn.xbase', { base: tr.base }) : '');
    case 'd_W_q': case 'd_W_k': return [p === 'd_W_q' && tr.base > 0 ? t('bn.wqbase', { base: tr.base }) : '',
      b.grads.heads.every((_, k) => flatHead(b, k)) ? t('bn.flatAfter') : ''].filter(Boolean).join(' ');
    default: return tileGradNote(ctx, p, b, h) ?? '';
  }
}

/**
 * Whether the loss cannot move head h's scores: in every row, ∂L/∂A takes one value over the keys
 * the row sees. Adding one number to a row of scores leaves its softmax as it was, so ∂L/∂S′ is 0,
 * and with it every gradient back to W_q and W_k (the identity example under L = Σ out). A row of
 * A that is one-hot also gives ∂L/∂S′ = 0; that is saturation, not this.
 */
function flatHead(b, h) {
  const G = b.grads.heads[h].weights;
  const mask = b.trace.mask;
  return G.every((row, i) => {
    const seen = row.filter((_, j) => mask[i][j] !== -Infinity);
    return seen.every((g) => Number.isFinite(g) && Math.abs(g - seen[0]) <= 1e-6 * Math.max(1, Math.abs(seen[0])));
  });
}

function panelNote(ctx, p, tr, h) {
  const { t } = ctx;
  if (p === 'weights') {
    const parts = [t('note.weights')];
    if (quizzing(ctx)) return parts[0]; // the notes on empty and overflow rows would tell the answer
    if (tr.empty_rows.some((r) => r.head === h)) parts.push(t('note.emptyRow'));
    if (tr.overflow_rows.some((r) => r.head === h)) parts.push(t('note.overflow'));
    return parts.join(' ');
  }
  if (p === 'masked' && tr.options.causal) return t(tr.options.mask === 'strict' ? 'note.maskStrict' : 'note.maskInclusive', { base: tr.base });
  if (p === 'q' && tr.base > 0 && tr.mode === 'x') return t('note.qbase', { base: tr.base });
  if (p === 'out' && !ctx.state.use_W_o) return '';
  if (p === 'concat' && tr.n_head === 1) return t('note.concat1');
  return '';
}

/** The sizes and the scale (and the loss in backward mode), rewritten only when they change. */
function paintSummary(ctx, tr, bw) {
  const { t, dom } = ctx;
  const items = [
    ['T', tr.T], ['T_total', tr.T_total], ['base', tr.base], ['n_head', tr.n_head],
    ['d_model', tr.d_model ?? '—'], ['d_k', tr.head_dim], ['d_v', tr.d_v], ['d_out', tr.d_out],
    [t('sum.scale'), tr.options.scale ? `1/√${tr.head_dim} = ${formatNumber(tr.scale_factor)}` : t('sum.off')],
    ...(bw ? [['L', formatNumber(bw.loss)]] : []),
  ];
  const skey = JSON.stringify(items);
  if (dom.summaryKey !== skey) {
    dom.summary.replaceChildren(...items.map(([k, v]) => { const d = el('div'); d.append(el('dt', '', k), el('dd', '', String(v))); return d; }));
    dom.summaryKey = skey;
  }
}

/** The warnings, translated from the core's row lists (none while an exercise is open). */
function paintWarnings(ctx, tr, quiz) {
  const { t, dom } = ctx;
  const warns = [
    ...tr.empty_rows.map((r) => t('warn.empty', { h: r.head + 1, r: r.row + 1, heads: tr.n_head })),
    ...tr.overflow_rows.map((r) => t('warn.overflow', { h: r.head + 1, r: r.row + 1, heads: tr.n_head })),
  ];
  if (quiz) warns.length = 0; // "row 1 is empty" would answer the exercise
  const wkey = JSON.stringify(warns);
  if (dom.warningsKey !== wkey) {
    dom.warnings.replaceChildren(...warns.map((w) => el('li', '', w)));
    dom.warningsKey = wkey;
  }
}

/** The large-input note: heatmaps only, or every number, and the button that switches. */
function paintLarge(ctx, heat) {
  const { t, dom } = ctx;
  const n = largeT(ctx);
  const big = n > LARGE_T;
  hide(dom.large, !big && ctx.state.display !== 'heatmap');
  if (!dom.large.hidden) {
    setText(dom.largeText, heat ? t(big ? 'large.heat' : 'large.heatAsked', { n, max: LARGE_T }) : t('large.numbers', { n }));
    setText(dom.largeButton, t(heat ? 'large.showNumbers' : 'large.showHeat'));
  }
}

/** The head buttons (one per head, and "side by side"), made when the number of heads changes. */
function paintHeadButtons(ctx, tr, h) {
  const { t, dom } = ctx;
  if (tr.n_head > 1) {
    if (dom.heads.childElementCount !== tr.n_head + 2) {
      dom.heads.replaceChildren(el('span', 'aps-label', t('ui.head')));
      for (let k = 0; k < tr.n_head; k++) {
        const b = el('button', 'aps-seg', String(k + 1));
        b.type = 'button';
        b.dataset.key = `head.${k}`;
        b.setAttribute('aria-label', t('ui.headN', { h: k + 1 }));
        b.addEventListener('click', () => { ctx.state.head = k; paint(ctx); userChange(ctx); });
        dom.heads.append(b);
      }
      const sb = el('button', 'aps-seg aps-side-toggle', t('ui.headsSide'));
      sb.type = 'button';
      sb.dataset.key = 'heads.side';
      sb.addEventListener('click', () => {
        ctx.state.head_view = ctx.state.head_view === 'side' ? 'one' : 'side';
        paint(ctx);
        if (ctx.state.head_view === 'side') ctx.views.get('weights-heads')?.fig.scrollIntoView({ block: 'nearest' });
        userChange(ctx);
      });
      dom.heads.append(sb);
    }
    dom.heads.querySelectorAll('button[data-key^="head."]').forEach((b, k) => { if (b.getAttribute('aria-pressed') !== String(k === h)) b.setAttribute('aria-pressed', String(k === h)); });
    dom.heads.querySelector('[data-key="heads.side"]').setAttribute('aria-pressed', String(ctx.state.head_view === 'side'));
  } else if (dom.heads.childElementCount) dom.heads.replaceChildren();
}
