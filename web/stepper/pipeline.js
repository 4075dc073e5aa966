// pipeline.js — the steps column of a stepper: its header (status, errors, warnings, the large-input
// note, the summary, the head buttons' slot), the step navigation, one figure per panel (forward,
// and in backward mode the gradients with the forward values they read), the heads side by side,
// the gradient check, and their layout: which panels show for the view (all steps, or one step
// with its sources) and which is current.
//
// It builds the DOM and lays it out; the numbers are written by paint.js. Every function takes
// the stepper's context (context.js); the figures are ctx.views, the named elements ctx.dom.
import { el, hide, setText, scrollBehavior } from '../common/ui.js';
import { MatrixView, pointerMoved } from './panels.js';
import { HeatmapView } from './heatmap.js';
import { visibleBSteps, panelReads, stepReads, INPUT_GRADS, gradCheckBox } from './backward.js';
import { STEPS, LARGE_T, userChange, activeInputs, isBackward, biases, forwardSteps, visibleSteps, variantsOn, readCtx, largeT, heatOnly, headsSide } from './context.js';
import { explainBox, showExplain, showReads } from './explain-box.js';
import { toggleAsk } from './exercise-bar.js';

/** The steps column (ctx.dom.pipeline), its panels empty until the first paint. */
export function pipelineColumn(ctx) {
  const { t, dom } = ctx;
  const col = el('section', 'aps-pipeline');
  dom.pipeline = col;
  col.setAttribute('aria-label', t('ui.steps'));
  col.id = `${ctx.id}steps`; // the skip link's target (stepper.js)
  col.tabIndex = -1;
  const top = el('div', 'aps-pipe-head');
  top.append(el('h2', 'aps-h2', t('ui.steps')));
  dom.status = el('p', 'aps-status');
  dom.status.setAttribute('role', 'status');
  top.append(dom.status);
  col.append(top);

  dom.error = el('div', 'aps-error-banner');
  dom.error.setAttribute('aria-live', 'assertive');
  dom.error.hidden = true;
  col.append(dom.error);

  dom.warnings = el('ul', 'aps-warnings');
  dom.warnings.setAttribute('aria-label', t('ui.warnings'));
  col.append(dom.warnings);
  col.append(largeNote(ctx));

  dom.summary = el('dl', 'aps-summary');
  col.append(dom.summary);

  dom.heads = el('div', 'aps-heads');
  dom.heads.setAttribute('role', 'group');
  dom.heads.setAttribute('aria-label', t('ui.head'));
  col.append(dom.heads);

  if (isBackward(ctx)) col.append(backwardIntro(ctx));
  col.append(stepNav(ctx));

  dom.stale = el('div', 'aps-stale');
  dom.stale.append(el('p', '', t('ui.stale')));
  dom.staleList = el('ul', 'aps-stale-list');
  dom.stale.append(dom.staleList);
  dom.stale.hidden = true;
  col.append(dom.stale);

  dom.steps = el('div', 'aps-steps');
  if (isBackward(ctx)) {
    visibleBSteps(ctx.state.mode, ctx.state.use_W_o, biases(ctx), { rope: true, flash: true, mla: variantsOn(ctx.state).mla }).forEach((s, si) => { for (const p of s.panels) panelFigure(ctx, p, si + 1, s.id, true); });
    dom.cacheHead = el('h3', 'aps-cache-head', t('bw.cache'));
    dom.steps.append(dom.cacheHead);
  }
  const shownSteps = forwardSteps(ctx); // numbered as shown (a variant's step, when on, shifts the rest)
  STEPS.forEach((s, si) => {
    const no = shownSteps.includes(s) ? shownSteps.indexOf(s) + 1 : si + 1;
    for (const p of s.panels) {
      if (p === 'weights-heads') headsFigure(ctx, no, s.id); else panelFigure(ctx, p, no, s.id, false);
    }
  });
  col.append(dom.steps);
  if (isBackward(ctx)) col.append(gradCheckSection(ctx));
  col.append(explainBox(ctx));
  return col;
}

// large inputs: heatmaps only (and the way back to every number)
function largeNote(ctx) {
  const { dom } = ctx;
  dom.large = el('div', 'aps-large');
  dom.large.setAttribute('role', 'status');
  dom.largeText = el('p', 'aps-large-text');
  dom.largeButton = el('button', 'aps-btn aps-btn-small');
  dom.largeButton.type = 'button';
  dom.largeButton.dataset.key = 'display.toggle';
  dom.largeButton.addEventListener('click', () => {
    ctx.state.display = heatOnly(ctx) ? 'numbers' : (largeT(ctx) > LARGE_T ? 'auto' : 'heatmap');
    ctx.paint();
    userChange(ctx);
  });
  dom.large.append(dom.largeText, dom.largeButton);
  dom.large.hidden = true;
  return dom.large;
}

// the step navigation: previous, the progress (text and dots), next
function stepNav(ctx) {
  const { t, dom } = ctx;
  const nav = el('nav', 'aps-stepnav');
  nav.setAttribute('aria-label', t('ui.stepNav'));
  dom.prev = el('button', 'aps-btn', t('step.prev'));
  dom.prev.type = 'button';
  dom.prev.dataset.key = 'step.prev';
  dom.prev.setAttribute('aria-keyshortcuts', 'ArrowLeft P K [');
  dom.next = el('button', 'aps-btn aps-btn-primary', t('step.next'));
  dom.next.type = 'button';
  dom.next.dataset.key = 'step.next';
  dom.next.setAttribute('aria-keyshortcuts', 'ArrowRight N J ]');
  dom.prev.addEventListener('click', () => go(ctx, -1));
  dom.next.addEventListener('click', () => go(ctx, 1));
  dom.progress = el('div', 'aps-progress');
  dom.progressText = el('p', 'aps-progress-text');
  dom.progressText.setAttribute('aria-live', 'polite');
  dom.progressBar = el('ol', 'aps-dots');
  dom.progress.append(dom.progressText, dom.progressBar);
  nav.append(dom.prev, dom.progress, dom.next);
  const keys = el('p', 'aps-stepnav-keys', t('step.keys'));
  keys.id = `${ctx.id}step-keys`;
  nav.append(keys);
  dom.prev.setAttribute('aria-describedby', keys.id);
  dom.next.setAttribute('aria-describedby', keys.id);
  dom.stepnav = nav;
  nav.hidden = ctx.state.view !== 'step'; // (layoutSteps keeps it so; an invalid first input never lays out)
  return nav;
}

/** The figure of one panel (forward or gradient), added to the steps and to ctx.views. */
function panelFigure(ctx, p, no, stepId, grad) {
  const { t, dom } = ctx;
  const fig = el('figure', grad ? 'aps-panel aps-grad' : 'aps-panel');
  fig.dataset.panel = p;
  fig.dataset.step = stepId;
  const cap = el('figcaption', 'aps-cap');
  const titleRow = el('div', 'aps-cap-row');
  const noEl = el('span', grad ? 'aps-step-no is-back' : 'aps-step-no', String(no));
  noEl.setAttribute('aria-hidden', 'true');
  const title = el('h3', 'aps-panel-title', t(`panel.${p}`));
  const fslot = el('span', 'aps-formula');
  titleRow.append(noEl, title);
  // authoring an exercise: the whole step becomes a question
  const askButton = el('button', 'aps-ask-step', t('exercise.askStep'));
  askButton.type = 'button';
  askButton.dataset.key = `ask.${p}`;
  askButton.hidden = true;
  askButton.addEventListener('click', () => toggleAsk(ctx, p, null, null));
  titleRow.append(askButton);
  const shape = el('p', 'aps-shape');
  cap.append(titleRow, fslot, shape);
  if (grad) {
    const reads = panelReads(p, readCtx(ctx));
    if (reads.length) cap.append(readsChips(ctx, reads));
  }
  const viewOpts = {
    panel: p,
    label: t(`panel.${p}`),
    onActivate: (panel, r, c) => {
      if (!ctx.authoring || !ctx.state.exercise) return false;
      toggleAsk(ctx, panel, r, c);
      return true;
    },
    onFocusCell: (panel, r, c) => {
      ctx.state.focus = { panel, row: r, col: c };
      ctx.hover = null;
      if (INPUT_GRADS[panel] && ctx.dom.gcBox) { ctx.gc.pick = { name: INPUT_GRADS[panel], row: r, col: c }; ctx.dom.gcBox.setPick(INPUT_GRADS[panel], r, c); }
      showExplain(ctx);
      userChange(ctx);
    },
    onHover: (panel, r, c, to) => {
      if (r == null && ctx.dom.explain?.contains(to)) return; // onto the explanation: it stays (WCAG 1.4.13)
      ctx.hover = r == null ? null : { panel, row: r, col: c };
      showExplain(ctx);
    },
  };
  const view = new MatrixView({ ...viewOpts, observer: ctx.visObs });
  const note = el('p', 'aps-panel-note');
  // the softmax panel's row statistics (Σ, max, H) are a table of their own beside the
  // weights, which wraps under them when the panel is narrow (a phone)
  let stats = null;
  if (p === 'weights' && !grad) {
    stats = new MatrixView({ panel: 'weights-stats', label: t('panel.stats'), observer: ctx.visObs, stats: true, onFocusCell: () => {}, onHover: () => {} });
    const group = el('div', 'aps-mat-group');
    group.append(view.scroll, stats.scroll);
    fig.append(cap, group, note);
  } else fig.append(cap, view.scroll, note);
  dom.steps.append(fig);
  ctx.views.set(p, { fig, view, stats, title, fslot, shape, note, grad, viewOpts, askButton, noEl });
}

// "side by side": every head's weights at once (small multiples); a head's button selects it
function headsFigure(ctx, no, stepId) {
  const { t, dom } = ctx;
  const fig = el('figure', 'aps-panel aps-heads-panel');
  fig.dataset.panel = 'weights-heads';
  fig.dataset.step = stepId;
  const cap = el('figcaption', 'aps-cap');
  const titleRow = el('div', 'aps-cap-row');
  const noEl = el('span', 'aps-step-no', String(no));
  noEl.setAttribute('aria-hidden', 'true');
  const title = el('h3', 'aps-panel-title', t('panel.weights-heads'));
  fig.noEl = noEl;
  titleRow.append(noEl, title);
  const shape = el('p', 'aps-shape');
  cap.append(titleRow, shape);
  const grid = el('div', 'aps-multiples');
  const note = el('p', 'aps-panel-note', t('note.heads'));
  fig.append(cap, grid, note);
  dom.steps.append(fig);
  const multi = [];
  const view = {
    multi,
    ensurePainted() { for (const m of multi) m.view.ensurePainted(); },
    mark() { for (const m of multi) m.view.mark(null, []); },
    cell() { return null; },
    destroy() { for (const m of multi) m.view.destroy(); },
  };
  ctx.views.set('weights-heads', { fig, view, title, shape, note, grad: false, multi, grid });
}

/** A panel shows its numbers (MatrixView) or, for a large input, its heatmap only (HeatmapView). */
export function viewKind(ctx, entry, heat) {
  if (!!entry.view.heat === heat) return;
  const make = heat ? HeatmapView : MatrixView;
  const other = heat ? entry.heatView : entry.numbersView;
  const next = other ?? new make({ ...entry.viewOpts, observer: ctx.visObs, t: ctx.t });
  if (heat) entry.numbersView = entry.view; else entry.heatView = entry.view;
  entry.view.scroll.replaceWith(next.scroll);
  entry.view = next;
}

/** The small multiples for n heads (rebuilt when the number of heads changes). */
export function buildMultiples(ctx, entry, n, heat) {
  const { t } = ctx;
  entry.heat = heat;
  for (const m of entry.multi) m.view.destroy();
  entry.multi.length = 0;
  entry.grid.replaceChildren();
  for (let k = 0; k < n; k++) {
    const box = el('section', 'aps-multiple');
    box.dataset.head = k;
    const b = el('button', 'aps-multiple-head', t('ui.headN', { h: k + 1 }));
    b.type = 'button';
    b.dataset.key = `heads-side.${k}`;
    b.addEventListener('click', () => { ctx.state.head = k; ctx.paint(); userChange(ctx); });
    const view = new (heat ? HeatmapView : MatrixView)({
      panel: 'weights-heads',
      label: `${t('panel.weights')} · ${t('ui.headN', { h: k + 1 })}`,
      observer: ctx.visObs,
      compact: true,
      t,
      onFocusCell: (panel, r, c) => { ctx.hover = { panel, row: r, col: c, head: k }; showExplain(ctx); },
      onHover: (panel, r, c, to) => {
        if (r == null && ctx.dom.explain?.contains(to)) return; // onto the explanation: it stays
        ctx.hover = r == null ? null : { panel, row: r, col: c, head: k };
        showExplain(ctx);
      },
    });
    box.append(b, view.scroll);
    entry.grid.append(box);
    entry.multi.push({ box, button: b, view });
  }
}

function backwardIntro(ctx) {
  const { t } = ctx;
  const box = el('div', 'aps-bintro');
  ctx.dom.bIntro = box;
  box.append(el('p', '', t('bw.intro')));
  const legend = el('div', 'aps-legend-div');
  legend.setAttribute('role', 'img');
  legend.setAttribute('aria-label', t('bw.legendLabel'));
  legend.append(el('span', 'aps-legend-end', t('bw.neg')));
  for (let k = 0; k < 9; k++) legend.append(el('span', `aps-swatch d${k}`, k === 4 ? '0' : ''));
  legend.append(el('span', 'aps-legend-end', t('bw.pos')));
  box.append(legend);
  return box;
}

// "reads: A (weights), V" — the cached forward values a gradient panel reads; hover or focus
// highlights them, a click brings them into view
function readsChips(ctx, reads) {
  const { t } = ctx;
  const p = el('p', 'aps-reads');
  p.append(el('span', 'aps-reads-label', t('bw.reads')));
  for (const r of reads) {
    const label = STEPS.some((st) => st.panels.includes(r)) ? t(`panel.${r}`) : r;
    const b = el('button', 'aps-chip', label);
    b.type = 'button';
    b.dataset.read = r;
    b.setAttribute('aria-label', t('bw.readsChip', { name: label }));
    const on = () => showReads(ctx, [r]);
    const off = () => showExplain(ctx);
    b.addEventListener('mouseenter', (e) => { if (pointerMoved(e)) on(); });
    b.addEventListener('focus', on);
    b.addEventListener('mouseleave', off);
    b.addEventListener('blur', off);
    b.addEventListener('click', () => {
      const target = ctx.views.get(r)?.fig ?? ctx.editors.get(r)?.el;
      if (target && !target.hidden) target.scrollIntoView({ block: 'nearest', behavior: scrollBehavior() });
      showReads(ctx, [r]);
    });
    p.append(b);
  }
  return p;
}

function gradCheckSection(ctx) {
  const { gc } = ctx;
  const box = gradCheckBox({
    t: ctx.t, idPrefix: ctx.id, names: activeInputs(ctx), pick: gc.pick, eps: gc.eps, result: gc.result,
    dims: (name) => {
      const m = ctx.bw?.trace.inputs[name];
      if (!m) return null;
      return Array.isArray(m[0]) ? [m.length, m[0].length] : [1, m.length]; // a bias: one row
    },
    run: (entries, eps) => {
      gc.eps = eps;
      return ctx.api.gradcheck({ ...ctx.buildSpec(), check: entries, eps });
    },
    onResult: (res) => { gc.result = res; },
  });
  ctx.dom.gcBox = box;
  return box.el;
}

/** Shows the panels of the view (all steps, or the current step and its sources) and the step navigation. */
export function layoutSteps(ctx) {
  const { state, views, dom, t } = ctx;
  const steps = visibleSteps(ctx);
  const step = state.view === 'step';
  if (state.step >= steps.length) state.step = steps.length - 1;
  const cur = steps[state.step];
  if (isBackward(ctx)) {
    // gradient panels of the visible steps; the forward panels are the cache they read
    const reads = new Set(stepReads(cur, readCtx(ctx)));
    const fwdSteps = forwardSteps(ctx);
    for (const [p, v] of views) {
      const mine = p === 'weights-heads' && !headsSide(ctx) ? null
        : v.grad ? steps.find((s) => s.panels.includes(p)) : fwdSteps.find((s) => s.panels.includes(p));
      const isCur = step && v.grad && mine === cur;
      const isSrc = step && ((v.grad && cur.from.includes(p)) || (!v.grad && reads.has(p)));
      const was = v.fig.hidden;
      if (mine) setText(v.noEl ?? v.fig.noEl, String((v.grad ? steps : fwdSteps).indexOf(mine) + 1));
      hide(v.fig, !mine || (step && !isCur && !isSrc));
      if (was && !v.fig.hidden) v.view.ensurePainted(); // shown now: paint before the frame
      v.fig.classList.toggle('is-current', isCur);
      v.fig.classList.toggle('is-source', isSrc);
    }
    hide(dom.cacheHead, step && ![...reads].some((r) => views.has(r)));
  } else {
    for (const s of STEPS) {
      for (const p of s.panels) {
        const v = views.get(p);
        if (steps.includes(s)) setText(v.noEl ?? v.fig.noEl, String(steps.indexOf(s) + 1)); // the variants' steps shift the numbers
        const visible = steps.includes(s) && (!step || s === cur || cur.from.includes(p)) && (p !== 'weights-heads' || headsSide(ctx));
        const was = v.fig.hidden;
        hide(v.fig, !visible);
        if (was && visible) v.view.ensurePainted(); // shown now: paint before the frame
        v.fig.classList.toggle('is-current', step && s === cur);
        v.fig.classList.toggle('is-source', step && s !== cur && cur.from.includes(p));
      }
    }
  }
  hide(dom.stepnav, !step);
  ctx.root.classList.toggle('aps-step-view', step);
  if (step) {
    // a button that disables itself under the keyboard's focus (Next at the last step, Previous at
    // the first) hands the focus to the other one, so it is not lost to <body>
    const had = ctx.root.getRootNode().activeElement;
    dom.prev.disabled = state.step === 0;
    dom.next.disabled = state.step === steps.length - 1;
    if (had?.disabled && (had === dom.prev || had === dom.next)) (had === dom.next ? dom.prev : dom.next).focus();
    dom.progressText.textContent = t('step.progress', { n: state.step + 1, total: steps.length, name: t(`stepname.${cur.id}`) });
    if (dom.progressBar.childElementCount !== steps.length) {
      dom.progressBar.replaceChildren(...steps.map((s, k) => {
        const li = el('li');
        const b = el('button', 'aps-dot');
        b.type = 'button';
        b.dataset.key = `dot.${k}`;
        b.setAttribute('aria-label', t('step.goto', { n: k + 1, name: t(`stepname.${s.id}`) }));
        b.title = t(`stepname.${s.id}`);
        b.addEventListener('click', () => { ctx.state.step = k; layoutSteps(ctx); userChange(ctx); });
        li.append(b);
        return li;
      }));
    }
    dom.progressBar.querySelectorAll('.aps-dot').forEach((b, k) => {
      b.classList.toggle('is-done', k < state.step);
      if (k === state.step) b.setAttribute('aria-current', 'step'); else b.removeAttribute('aria-current');
    });
  }
}

/** One step forward (d = 1) or back (d = −1), within the visible steps. */
function go(ctx, d) {
  const n = visibleSteps(ctx).length;
  const s = Math.max(0, Math.min(n - 1, ctx.state.step + d));
  if (s === ctx.state.step) return;
  ctx.state.step = s;
  layoutSteps(ctx);
  userChange(ctx);
}

/**
 * The keys of the steps (STEP_KEYS: → N J ] next, ← P K [ previous, Home first, End last), not
 * while typing in a field or a grid, nor in a widget that moves with the arrows itself (a panel's
 * cells, a heatmap, a group of choices: they keep ← → Home End).
 */
export const STEP_KEYS = {
  next: ['ArrowRight', 'n', 'N', 'j', 'J', ']'],
  prev: ['ArrowLeft', 'p', 'P', 'k', 'K', '['],
  first: ['Home'],
  last: ['End'],
};
const ARROWS = new Set(['ArrowRight', 'ArrowLeft', 'Home', 'End']);

export function onStepKey(ctx, e) {
  if (ctx.state.view !== 'step' || e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
  if (e.target.closest?.('input, textarea, select, .aps-grid, [contenteditable]')) return;
  if (ARROWS.has(e.key) && e.target.closest?.('[role="grid"], [role="application"], [role="radiogroup"], [role="group"], [role="slider"]')) return;
  const n = visibleSteps(ctx).length;
  let d = 0;
  if (STEP_KEYS.next.includes(e.key)) d = 1;
  else if (STEP_KEYS.prev.includes(e.key)) d = -1;
  else if (STEP_KEYS.first.includes(e.key)) d = -ctx.state.step;
  else if (STEP_KEYS.last.includes(e.key)) d = n - 1 - ctx.state.step;
  else return;
  e.preventDefault();
  go(ctx, d);
}
