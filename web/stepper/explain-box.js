// explain-box.js — the explanation box of a stepper: the arithmetic behind the focused or hovered
// cell (explain.js, explain-grad.js) as MathML lines, with the cells that feed it marked in the
// other panels and input grids; for a question of an open exercise, the learner's verdict and the
// hints instead of the answer. Also the marks of a gradient's "reads" chips, and where the box
// sits: a third, sticky column on wide screens, docked under the steps otherwise.
//
// Every function takes the stepper's context (context.js). The box itself is ctx.dom.explain.
import { el } from '../common/ui.js';
import { explain } from './explain.js';
import { explainGrad } from './explain-grad.js';
import { exLine } from '../common/explain-math.js';
import { quizzing, exKey, exHint } from './exercise-bar.js';
import { isSlip } from '../common/exercise.js';
import { userChange } from './context.js';

/** The (empty) explanation box, ctx.dom.explain: filled by showExplain. */
export function explainBox(ctx) {
  const box = el('aside', 'aps-explain');
  box.setAttribute('aria-live', 'polite');
  box.setAttribute('aria-label', ctx.t('ex.label'));
  // a long explanation scrolls inside the box (sticky, at most the screen's height): the keyboard
  // must reach it too
  box.tabIndex = 0;
  // a hovered cell's explanation stays while the pointer is on the box, to read or select it, and
  // goes when the pointer leaves the box (WCAG 1.4.13: hoverable); Escape closes it (onEscape)
  box.addEventListener('mouseleave', () => { if (ctx.hover) { ctx.hover = null; showExplain(ctx); } });
  ctx.dom.explain = box;
  return box;
}

/**
 * The box of an explanation's lines: a long formula (a hint in 中文, latent attention's) scrolls
 * sideways inside it, so it is a named Tab stop the arrow keys scroll (WCAG 2.1.1).
 */
function linesBox(ctx) {
  const box = el('div', 'aps-explain-lines');
  box.tabIndex = 0;
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', ctx.t('ex.lines'));
  return box;
}

/** The explanation of the hovered cell, else of the focused one (state.focus), else the hint. */
export function showExplain(ctx) {
  const { t, dom, views, editors } = ctx;
  if (!ctx.trace) return;
  const sel = ctx.hover ?? ctx.state.focus;
  clearMarks(ctx);
  // a cell of one of the side-by-side heads: that head's weights
  const selView = (x) => (x.panel === 'weights-heads' ? views.get(x.panel)?.multi?.[x.head]?.view : views.get(x.panel)?.view);
  const valid = sel && views.has(sel.panel) && (() => {
    const v = selView(sel);
    return !!v?.cell(sel.row, sel.col) && !views.get(sel.panel).fig.hidden;
  })();
  if (!valid && dom.explainHint) return; // the hint is already there
  dom.explain.replaceChildren();
  dom.explainHint = false;
  const head = el('h3', 'aps-explain-title', t('ex.label'));
  if (valid) dom.explain.append(closeButton(ctx));
  dom.explain.append(head);
  if (!valid) {
    dom.explain.append(el('p', 'aps-explain-hint', t('ex.hint')));
    dom.explainHint = true;
    return;
  }
  const multiple = sel.panel === 'weights-heads';
  const h = ctx.state.head;
  const exp = views.get(sel.panel).grad
    ? explainGrad(ctx.bw, { ...sel, head: h }, t, { upstream: ctx.state.upstream.kind, target: upstreamTarget(ctx) })
    : explain(ctx.trace, { ...sel, panel: multiple ? 'weights' : sel.panel, head: multiple ? sel.head : h }, t);
  head.textContent = `${t('ex.label')}: ${exp.title}`;
  // a question of an unsolved exercise: the learner's verdict and the hints, not the answer
  const question = quizzing(ctx) && !multiple && views.get(sel.panel).view.ask?.has(`${sel.row},${sel.col}`);
  if (question) {
    hintBox(ctx, sel, exp, head);
    selView(sel).mark([sel.row, sel.col], []);
    return;
  }
  const box = linesBox(ctx);
  for (const line of exp.lines) box.append(exLine(line));
  dom.explain.append(box);
  selView(sel).mark([sel.row, sel.col], []);
  if (multiple && sel.head !== h) return; // the other panels show another head
  const byPanel = new Map();
  for (const f of exp.feeds) {
    if (f.panel) { if (!byPanel.has(f.panel)) byPanel.set(f.panel, []); byPanel.get(f.panel).push(f); }
    else if (f.editor && editors.has(f.editor)) editors.get(f.editor).highlight(f.row ?? null, f.col ?? null);
  }
  for (const [p, fs] of byPanel) views.get(p).view.mark(null, fs);
}

/** The box's close button (Escape does the same): on a phone the box covers a good part of the screen. */
function closeButton(ctx) {
  const b = el('button', 'aps-explain-close', '×');
  b.type = 'button';
  b.dataset.key = 'ex.close';
  b.setAttribute('aria-label', ctx.t('ex.close'));
  b.title = ctx.t('ex.close');
  b.setAttribute('aria-keyshortcuts', 'Escape');
  b.addEventListener('click', () => closeExplain(ctx));
  return b;
}

/**
 * Closes the explanation: no cell explained (the box back to its one-line hint), the keyboard on
 * the box; false when there was nothing to close.
 */
export function closeExplain(ctx) {
  if (!ctx.trace || !ctx.dom.explain || ctx.dom.explainHint) return false;
  ctx.hover = null;
  ctx.state.focus = null;
  showExplain(ctx);
  ctx.dom.explain.tabIndex = -1;
  ctx.dom.explain.focus({ preventScroll: true });
  userChange(ctx);
  return true;
}

/**
 * The explanation box for a question: what the learner typed and whether it is right; for a
 * wrong answer the cell's arithmetic as hints, one step at a time — the formula, then the terms,
 * then the value (hint level 1, 2, 3; kept with the answers).
 */
function hintBox(ctx, sel, exp, head) {
  const { t, dom, ex } = ctx;
  const k = exKey(sel.panel, sel.row, sel.col);
  const name = `${t(`panel.${sel.panel}`)} [${sel.row + 1},${sel.col + 1}]`;
  head.textContent = t('exercise.yourAnswer', { name });
  const status = ex.results[k] ?? '';
  const answer = ex.answers[k] ?? '';
  const verdict = el('p', `aps-verdict ${status ? `is-${status === 'right' ? 'right' : 'wrong'}` : ''}`);
  verdict.dataset.key = 'ex.verdict';
  if (status === 'right') verdict.textContent = t('exercise.v.right', { answer });
  else if (status === 'wrong' && isSlip(ctx.state.exercise.id, answer)) verdict.textContent = `${t('exercise.v.wrong', { answer })} ${t(`exercise.${ctx.state.exercise.id}.slip`)}`;
  else if (status === 'wrong') verdict.textContent = t('exercise.v.wrong', { answer });
  else if (status === 'invalid') verdict.textContent = t('exercise.v.invalid', { answer, name });
  else if (status === 'empty') verdict.textContent = t('exercise.v.empty');
  else verdict.textContent = t('exercise.v.todo');
  dom.explain.append(verdict);
  const level = status === 'wrong' || status === 'invalid' ? ex.hints[k] ?? 0 : 0;
  const kinds = level >= 3 ? ['formula', 'terms', 'result', 'note'] : level === 2 ? ['formula', 'terms'] : level === 1 ? ['formula'] : [];
  const lines = exp.lines.filter((l) => kinds.includes(l.kind));
  if (lines.length) {
    const box = linesBox(ctx);
    for (const line of lines) box.append(exLine(line));
    dom.explain.append(box);
  }
  if ((status === 'wrong' || status === 'invalid') && level < 3) {
    const row = el('div', 'aps-hint-steps');
    const b = el('button', 'aps-btn aps-btn-small', t(`exercise.hint${level + 1}`));
    b.type = 'button';
    b.dataset.key = 'ex.hint';
    b.setAttribute('aria-keyshortcuts', '?');
    b.addEventListener('click', () => {
      exHint(ctx, sel.panel, sel.row, sel.col);
      ctx.dom.explain.querySelector('[data-key="ex.hint"]')?.focus();
    });
    row.append(b, el('span', 'aps-hint', t('exercise.hintKey')));
    dom.explain.append(row);
  }
}


// the target of the mse loss as numbers (read by the core's parser), for the explanation's terms
function upstreamTarget(ctx) {
  if (ctx.state.upstream.kind !== 'mse') return null;
  try { return ctx.api.parseMatrix(ctx.state.upstream.target); } catch { return null; }
}

/** Marks the forward values a gradient reads (its chips): their panels, or their input grids. */
export function showReads(ctx, reads) {
  if (!ctx.trace) return;
  clearMarks(ctx);
  for (const r of reads) {
    if (ctx.views.has(r)) { ctx.views.get(r).view.mark(null, [{}]); ctx.views.get(r).fig.classList.add('is-read'); }
    else if (ctx.editors.has(r)) ctx.editors.get(r).highlightAll();
  }
}

function clearMarks(ctx) {
  for (const { view, fig } of ctx.views.values()) { view.mark(null, []); if (fig.classList.contains('is-read')) fig.classList.remove('is-read'); }
  for (const ed of ctx.editors.values()) ed.highlight(null, null);
}

/**
 * Where the box sits: a third, sticky column on wide screens (wide: a MediaQueryList), docked at
 * the bottom of the steps otherwise.
 */
export function placeExplain(ctx, wide) {
  const { dom } = ctx;
  if (!dom.layout) return;
  if (wide.matches) dom.layout.append(dom.explain); else dom.pipeline.append(dom.explain);
  dom.layout.classList.toggle('has-side', wide.matches);
}
