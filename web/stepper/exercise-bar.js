// exercise-bar.js — the exercise mode's page: the bar (title, task, tolerance, Check / Show the
// answers / Reset / Edit, the result), the questions in the panels' cells, covering the later
// steps, checking the answers against the values shown and emitting 'exercise', and authoring
// (cells or whole steps picked as questions). The learner computes some cells
// (state.exercise.ask); later steps stay covered until the exercise is solved or the answers shown.
//
// The logic without the DOM (the ready-made exercises, the ask syntax, reading and checking an
// answer, localStorage) is exercise.js's; this file is its user interface. Every function takes
// the stepper's context (context.js); ctx.ex is the learner's work on the current exercise.
import { el, hide, setText } from '../common/ui.js';
import { MatrixView } from './panels.js';
import { visibleBSteps } from './backward.js';
import { EXERCISE_IDS, withReadyExercise, askedCells, checkAnswer, parseAnswer, readAnswers, localAnswers, customId, DEFAULT_TOL, validateTol, isSlip } from '../common/exercise.js';
import { STEPS, biases, userChange, getState, visibleSteps, variantsOn } from './context.js';
import { encodeState } from '../common/permalink.js';

/** The key of one asked cell in the learner's answers, hints and results. */
export const exKey = (p, i, j) => `${p}:${i}:${j}`;

/** The answer store of this stepper (mountStepper's answerStore, else localStorage). */
const store = (ctx) => ctx.answerStore ?? localAnswers;

/** The learner's work on the current exercise, loaded from the answer store when it changes. */
export function exerciseData(ctx) {
  const x = ctx.state.exercise;
  if (!x) { ctx.ex = null; return null; }
  if (!ctx.ex || ctx.ex.id !== x.id) ctx.ex = { id: x.id, ...readAnswers(store(ctx).load(x.id)), results: {}, checkedKey: null, pendingCheck: false };
  if (ctx.ex.checked && !ctx.ex.checkedKey) ctx.ex.pendingCheck = true; // check the restored answers once the trace is there
  return ctx.ex;
}

function exSave(ctx) {
  const { ex } = ctx;
  if (ex) store(ctx).save(ex.id, { answers: ex.answers, hints: ex.hints, checked: ex.checked, revealed: ex.revealed });
}

/** The learner is at work: questions in the cells, later steps covered. */
export const quizzing = (ctx) => !!ctx.state.exercise && !ctx.authoring && !!ctx.ex && !ctx.ex.revealed && !exSolved(ctx);

function exSolved(ctx) {
  if (!ctx.ex || !ctx.state.exercise) return false;
  const keys = exAllKeys(ctx);
  return keys.length > 0 && keys.every((k) => ctx.ex.results[k] === 'right');
}

/** Every asked cell of the panels on the page: ["panel:r:c", …]. */
function exAllKeys(ctx) {
  const out = [];
  for (const [p, m] of Object.entries(ctx.shown)) {
    const { set } = askedCells(ctx.state.exercise?.ask, p, m.length, m[0]?.length ?? 0);
    for (const k of set) { const [i, j] = k.split(','); out.push(exKey(p, i, j)); }
  }
  return out;
}

/** The toolbar's choice: no exercise, a ready-made one (with its example), or your own. */
export function chooseExercise(ctx, v) {
  ctx.authoring = false;
  if (!v) ctx.state.exercise = null;
  else if (v === 'custom') {
    ctx.state.exercise = { id: customId(ctx.state, []), ask: [], tol: { ...DEFAULT_TOL } };
    ctx.authoring = true;
  } else {
    ctx.state = withReadyExercise(ctx.state, v, ctx.api);
    for (const k of Object.keys(ctx.optErrors)) delete ctx.optErrors[k];
  }
  ctx.render();
  userChange(ctx);
}

/** The exercise bar: title, task, tolerance, Check / Show the answers / Reset / Edit, result. */
export function exerciseBar(ctx) {
  const { t, dom } = ctx;
  const x = ctx.state.exercise;
  const ready = EXERCISE_IDS.includes(x.id);
  const bar = el('section', 'aps-exercise');
  bar.dataset.key = 'exercise.bar';
  const h = el('h2', 'aps-exercise-title', ready ? t(`exercise.${x.id}.title`) : t('exercise.custom.title'));
  h.id = `${ctx.id}exercise-title`;
  bar.setAttribute('aria-labelledby', h.id);
  bar.append(h);
  bar.append(el('p', 'aps-exercise-task', ctx.authoring ? t('exercise.author.task') : ready ? t(`exercise.${x.id}.task`) : t('exercise.custom.task')));
  bar.append(el('p', 'aps-exercise-tol', tolText(t, x.tol)));
  if (!ctx.authoring) {
    // where the questions are: often far below, in a later step (exPointer writes it)
    dom.exGo = el('button', 'aps-exercise-go');
    dom.exGo.type = 'button';
    dom.exGo.dataset.key = 'ex.go';
    dom.exGo.hidden = true;
    dom.exGo.addEventListener('click', () => goToQuestions(ctx));
    bar.append(dom.exGo);
  } else dom.exGo = null;
  dom.exErrors = el('ul', 'aps-exercise-errors');
  bar.append(dom.exErrors);
  const buttons = el('div', 'aps-exercise-row');
  const button = (key, text, fn, primary = false) => {
    const b = el('button', primary ? 'aps-btn aps-btn-primary' : 'aps-btn', text);
    b.type = 'button';
    b.dataset.key = key;
    b.addEventListener('click', fn);
    buttons.append(b);
    return b;
  };
  if (ctx.authoring) {
    bar.append(tolInputs(ctx, bar));
    dom.exAsked = el('p', 'aps-exercise-tol');
    bar.append(dom.exAsked);
    button('ex.try', t('exercise.try'), () => { ctx.authoring = false; exerciseData(ctx); ctx.render(); }, true);
    button('ex.scorm', t('exercise.scorm'), () => scormDownload(ctx));
  } else {
    button('ex.check', t('exercise.check'), () => exCheck(ctx, true), true);
    button('ex.reveal', t('exercise.reveal'), () => exReveal(ctx));
    button('ex.reset', t('exercise.reset'), () => exReset(ctx));
    button('ex.edit', t('exercise.edit'), () => { ctx.authoring = true; ctx.render(); });
  }
  bar.append(buttons);
  dom.exResult = el('p', 'aps-exercise-result');
  dom.exResult.setAttribute('role', 'status');
  bar.append(dom.exResult);
  if (ready) {
    const why = el('details', 'aps-exercise-why');
    why.append(el('summary', '', t('exercise.why')), el('p', '', t(`exercise.${x.id}.why`)));
    dom.exWhy = why;
    bar.append(why);
  }
  return bar;
}

/**
 * The exercise as a SCORM 1.2 package for an LMS (web/common/scorm-download.js, loaded now: the same
 * package as `npm run scorm`), its one exercise the state's permalink; the outcome in the bar.
 */
async function scormDownload(ctx) {
  const { t, dom } = ctx;
  const x = ctx.state.exercise;
  if (!x?.ask?.length) { setText(dom.exResult, t('exercise.scorm.empty')); return; }
  setText(dom.exResult, t('exercise.scorm.busy'));
  try {
    const { downloadScorm } = await import('../common/scorm-download.js');
    const title = EXERCISE_IDS.includes(x.id) ? t(`exercise.${x.id}.title`) : t('exercise.custom.title');
    const spec = encodeState(getState(ctx)).replace(/^#/, '');
    const { name, size } = await downloadScorm({ title, lang: ctx.state.lang, exercises: [spec] });
    setText(dom.exResult, t('exercise.scorm.done', { name, kb: Math.round(size / 1024) }));
  } catch (e) {
    setText(dom.exResult, t('exercise.scorm.failed', { error: e?.message ?? String(e) }));
  }
}

/** The author's tolerance: decimals and a relative error (written to the bar's tolerance line). */
function tolInputs(ctx, bar) {
  const { t, dom } = ctx;
  const tol = ctx.state.exercise.tol;
  const row = el('div', 'aps-exercise-row');
  const num = (key, label, value, attrs) => {
    const w = el('label', 'aps-field');
    w.append(el('span', 'aps-label', label));
    const i = el('input', 'aps-num');
    i.type = 'number';
    Object.assign(i, attrs);
    i.value = value ?? '';
    i.dataset.key = key;
    i.addEventListener('change', () => {
      const d = Number(ctx.dom.exDecimals.value);
      const r = Number(ctx.dom.exRel.value);
      ctx.state.exercise.tol = validateTol({
        ...(ctx.dom.exDecimals.value !== '' && Number.isInteger(d) ? { decimals: d } : {}),
        ...(ctx.dom.exRel.value !== '' && Number.isFinite(r) ? { rel: r / 100 } : {}),
      });
      bar.querySelector('.aps-exercise-tol').textContent = tolText(ctx.t, ctx.state.exercise.tol);
      userChange(ctx);
    });
    w.append(i);
    row.append(w);
    return i;
  };
  dom.exDecimals = num('ex.decimals', t('exercise.tolDecimals'), tol.decimals, { min: 0, max: 10, step: 1 });
  dom.exRel = num('ex.rel', t('exercise.tolRel'), tol.rel !== undefined ? +(tol.rel * 100).toPrecision(6) : '', { min: 0, step: 'any' });
  return row;
}

function tolText(t, tol) {
  const parts = [];
  if (tol.decimals !== undefined) parts.push(t('exercise.tol.decimals', { n: tol.decimals }));
  if (tol.rel !== undefined) parts.push(t('exercise.tol.rel', { p: +(tol.rel * 100).toPrecision(4) }));
  if (tol.abs !== undefined) parts.push(t('exercise.tol.abs', { a: tol.abs }));
  return t('exercise.tol', { rules: parts.join(t('exercise.tol.or')) });
}

/** The exercise's part of paint(): questions in the cells, covered steps, the bar's result. */
export function paintExercise(ctx) {
  const { t, dom, views, authoring } = ctx;
  const x = ctx.state.exercise;
  const quiz = quizzing(ctx);
  const askedPanels = new Set((x?.ask ?? []).map((a) => a.panel));
  // the earliest asked step, forward and backward: what comes after it would give it away
  const fwdIndex = (p) => STEPS.findIndex((st) => st.panels.includes(p));
  const bSteps = visibleBSteps(ctx.state.mode, ctx.state.use_W_o, biases(ctx), variantsOn(ctx.state));
  const bIndex = (p) => bSteps.findIndex((st) => st.panels.includes(p));
  const fwdAsked = [...askedPanels].filter((p) => fwdIndex(p) >= 0).map(fwdIndex);
  const bAsked = [...askedPanels].filter((p) => bIndex(p) >= 0).map(bIndex);
  const firstFwd = fwdAsked.length ? Math.min(...fwdAsked) : Infinity;
  const firstB = bAsked.length ? Math.min(...bAsked) : Infinity;
  const errors = [];
  for (const [p, v] of views) {
    const m = p === 'weights-heads' ? null : ctx.shown[p];
    let covered = false;
    if (quiz && !askedPanels.has(p)) {
      if (v.grad) covered = bIndex(p) > firstB || fwdAsked.length > 0;
      else covered = p === 'weights-heads' ? askedPanels.has('weights') || fwdIndex(p) > firstFwd : fwdIndex(p) > firstFwd;
    }
    v.fig.classList.toggle('is-covered', covered);
    if (covered && !v.cover) {
      v.cover = el('p', 'aps-cover-note', t('exercise.covered'));
      v.fig.insertBefore(v.cover, v.note);
    }
    if (v.cover) hide(v.cover, !covered);
    if (v.askButton) {
      hide(v.askButton, !authoring);
      v.askButton.setAttribute('aria-pressed', String((x?.ask ?? []).some((a) => a.panel === p && a.cells === 'all')));
    }
    if (!m || !(v.view instanceof MatrixView)) continue;
    const { set, outside } = askedCells(x?.ask, p, m.length, m[0]?.length ?? 0);
    for (const [i, j] of outside) errors.push(t('exercise.outside', { cell: `${p}[${i + 1},${j + 1}]`, rows: m.length, cols: m[0]?.length ?? 0 }));
    const mode = authoring ? 'author' : quiz ? 'quiz' : 'shown';
    v.view.setAsk(set.size ? set : null, mode, exCtl(ctx, p));
    if (v.stats) v.stats.setHiddenRows(quiz && set.size ? new Set([...set].map((k) => +k.split(',')[0])) : null);
  }
  if (dom.exErrors) dom.exErrors.replaceChildren(...errors.map((e) => el('li', '', e)));
  if (dom.exAsked) setText(dom.exAsked, t('exercise.asked', { n: exAllKeys(ctx).length }));
  exResultText(ctx);
  exPointer(ctx);
}

/** The first panel with questions, in the page's order, and how many cells are asked; null if none. */
function firstQuestion(ctx) {
  const keys = exAllKeys(ctx);
  const panels = new Set(keys.map((k) => k.split(':')[0]));
  for (const p of ctx.views.keys()) if (panels.has(p)) return { panel: p, n: keys.length };
  return null;
}

/** The bar's pointer to the questions: "Your 4 cells to answer are in step 5 (…) ↓", while they are open. */
function exPointer(ctx) {
  const b = ctx.dom.exGo;
  if (!b) return;
  const q = quizzing(ctx) ? firstQuestion(ctx) : null;
  hide(b, !q);
  if (!q) return;
  const fig = ctx.views.get(q.panel).fig;
  const k = visibleSteps(ctx).findIndex((st) => st.id === fig.dataset.step); // (the badge is renumbered after this)
  const s = k >= 0 ? String(k + 1) : fig.querySelector('.aps-step-no')?.textContent ?? '';
  setText(b, ctx.t('exercise.goto', { n: q.n, s, name: ctx.t(`stepname.${fig.dataset.step}`) }));
}

/** Scrolls to the first question (its step shown in the step-by-step view) and puts the keyboard in it. */
function goToQuestions(ctx) {
  const q = firstQuestion(ctx);
  if (!q || !ctx.trace) return;
  const v = ctx.views.get(q.panel);
  if (ctx.state.view === 'step') {
    const k = visibleSteps(ctx).findIndex((st) => st.id === v.fig.dataset.step);
    if (k >= 0 && k !== ctx.state.step) { ctx.state.step = k; ctx.paint(); userChange(ctx); }
  }
  v.fig.scrollIntoView({ block: 'start' });
  v.view.ensurePainted?.();
  v.fig.querySelector('td.is-ask input')?.focus({ preventScroll: true });
}

/** The handlers of the answer inputs of one panel. */
function exCtl(ctx, p) {
  const { t } = ctx;
  return {
    answer: (i, j) => ctx.ex?.answers[exKey(p, i, j)] ?? '',
    status: (i, j) => ctx.ex?.results[exKey(p, i, j)] ?? '',
    label: (i, j, status) => t('exercise.cellLabel', { name: `${t(`panel.${p}`)} [${i + 1},${j + 1}]`, status: status ? t(`exercise.status.${status}`) : '' }),
    onInput: (i, j, text) => {
      const { ex } = ctx;
      const k = exKey(p, i, j);
      ex.answers[k] = text;
      if (ex.results[k]) { delete ex.results[k]; ctx.views.get(p)?.view.refreshAsk(); }
      exSave(ctx);
      const f = ctx.state.focus;
      if (f?.panel === p && f.row === i && f.col === j) ctx.showExplain();
    },
    onKey: (e, i, j) => {
      if (e.key === 'Enter') { e.preventDefault(); exCheck(ctx, true); ctx.views.get(p)?.view.answerInput(i, j)?.focus(); }
      else if (e.key === '?') { e.preventDefault(); exHint(ctx, p, i, j); }
      else if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
        // to the question above / below in this panel
        e.preventDefault();
        const view = ctx.views.get(p).view;
        const d = e.key === 'ArrowUp' ? -1 : 1;
        for (let r = i + d; r >= 0 && r < (view.tds?.length ?? 0); r += d) {
          const input = view.answerInput(r, j);
          if (input) { input.focus(); break; }
        }
      }
    },
  };
}

/**
 * Every asked cell with the learner's answer and its status against the value shown. record: the
 * statuses become the learner's marks (ctx.ex.results) and each cell carries the answer's value.
 */
function gradeCells(ctx, record) {
  const { ex } = ctx;
  const x = ctx.state.exercise;
  const cells = [];
  for (const [p, m] of Object.entries(ctx.shown)) {
    const { set } = askedCells(x.ask, p, m.length, m[0]?.length ?? 0);
    for (const kk of set) {
      const [i, j] = kk.split(',').map(Number);
      const k = exKey(p, i, j);
      const answer = ex.answers[k] ?? '';
      const status = checkAnswer(answer, m[i][j], x.tol);
      const cell = { panel: p, row: i, col: j, answer, status, correct: status === 'right', expected: m[i][j] };
      if (record) {
        ex.results[k] = status;
        const a = parseAnswer(answer);
        if (a.ok) cell.value = a.value;
      }
      cells.push(cell);
    }
  }
  return cells;
}

/** Checks every answer against the core's value; emits 'exercise' when the learner asked. */
export function exCheck(ctx, announce) {
  const { ex } = ctx;
  if (!ex || !ctx.state.exercise || !ctx.trace) return null;
  const cells = gradeCells(ctx, true);
  ex.checked = true;
  ex.checkedKey = JSON.stringify(ctx.buildSpec());
  exSave(ctx);
  const result = exResult(ctx, cells);
  ctx.paint();
  if (announce) ctx.events.emit('exercise', result);
  return result;
}

function exResult(ctx, cells) {
  const x = ctx.state.exercise;
  const n = (s) => cells.filter((c) => c.status === s).length;
  return {
    id: x.id,
    ready: EXERCISE_IDS.includes(x.id),
    total: cells.length, right: n('right'), wrong: n('wrong') + n('invalid'), empty: n('empty'),
    solved: cells.length > 0 && n('right') === cells.length,
    revealed: !!ctx.ex.revealed,
    tol: { ...x.tol },
    cells,
  };
}

/**
 * The learner's result as last checked (the marks on the cells: what the last 'exercise' event
 * said, or what the restored answers were checked to), without checking again: {id, ready, total,
 * right, wrong, empty, solved, revealed, tol}, empty counting the cells not marked; null without an
 * exercise or before its trace.
 */
export function exerciseNow(ctx) {
  const x = ctx.state.exercise;
  if (!x || !ctx.ex || !ctx.trace) return null;
  const res = exAllKeys(ctx).map((k) => ctx.ex.results[k]);
  const n = (...st) => res.filter((r) => st.includes(r)).length;
  return {
    id: x.id,
    ready: EXERCISE_IDS.includes(x.id),
    total: res.length, right: n('right'), wrong: n('wrong', 'invalid'), empty: res.length - n('right', 'wrong', 'invalid'),
    solved: res.length > 0 && n('right') === res.length,
    revealed: !!ctx.ex.revealed,
    tol: { ...x.tol },
  };
}

function exResultText(ctx) {
  const { t, dom, ex } = ctx;
  if (!dom.exResult) return;
  const keys = exAllKeys(ctx);
  const res = keys.map((k) => ex?.results[k]);
  let text = '';
  let cls = '';
  if (ctx.authoring) text = '';
  else if (ex?.revealed) text = t('exercise.revealed');
  else if (keys.length && res.every((r) => r === 'right')) { text = t('exercise.solved', { n: keys.length }); cls = 'is-solved'; }
  else if (res.some(Boolean)) {
    const wrong = keys.filter((k) => ex.results[k] === 'wrong' || ex.results[k] === 'invalid').map((k) => { const [p, i, j] = k.split(':'); return `${t(`panel.${p}`)} [${+i + 1},${+j + 1}]`; });
    text = t('exercise.score', { right: res.filter((r) => r === 'right').length, total: keys.length }) + (wrong.length ? ` ${t('exercise.wrongList', { cells: wrong.join(', ') })}` : '');
    // a known slip among the wrong answers: say why it is one
    const id = ctx.state.exercise.id;
    if (keys.some((k) => ex.results[k] === 'wrong' && isSlip(id, ex.answers[k]))) text += ` ${t(`exercise.${id}.slip`)}`;
    cls = 'is-open';
  }
  setText(dom.exResult, text);
  dom.exResult.className = `aps-exercise-result ${cls}`;
  if (dom.exWhy && (ex?.revealed || cls === 'is-solved')) dom.exWhy.open = true;
}

function exReveal(ctx) {
  if (!ctx.ex) return;
  ctx.ex.revealed = true;
  exSave(ctx);
  const res = exResult(ctx, gradeCells(ctx, false)); // the results, the learner's marks untouched
  ctx.paint();
  ctx.events.emit('exercise', { ...res, revealed: true });
}

function exReset(ctx) {
  if (!ctx.ex) return;
  store(ctx).clear(ctx.ex.id);
  ctx.ex = { id: ctx.ex.id, answers: {}, hints: {}, checked: false, revealed: false, results: {}, checkedKey: null, pendingCheck: false };
  for (const v of ctx.views.values()) for (const inp of v.fig.querySelectorAll('input.aps-answer')) inp.value = '';
  ctx.paint();
  ctx.events.emit('exercise', { ...exResult(ctx, gradeCells(ctx, false)), reset: true });
}

/** The next hint of a wrong cell: the formula, then the terms, then the value. */
export function exHint(ctx, p, i, j) {
  const k = exKey(p, i, j);
  ctx.ex.hints[k] = Math.min(3, (ctx.ex.hints[k] ?? 0) + 1);
  exSave(ctx);
  ctx.state.focus = { panel: p, row: i, col: j };
  ctx.hover = null;
  ctx.showExplain();
}

/** Authoring: a cell or a whole panel becomes a question, or stops being one. */
export function toggleAsk(ctx, p, i, j) {
  const x = ctx.state.exercise;
  const m = ctx.shown[p];
  if (!x || !m) return;
  const R = m.length;
  const C = m[0]?.length ?? 0;
  const { set } = askedCells(x.ask, p, R, C);
  if (i === null) {
    const whole = x.ask.some((a) => a.panel === p && a.cells === 'all');
    x.ask = x.ask.filter((a) => a.panel !== p);
    if (!whole) x.ask.push({ panel: p, cells: 'all' });
  } else {
    const kk = `${i},${j}`;
    if (set.has(kk)) set.delete(kk); else set.add(kk);
    x.ask = x.ask.filter((a) => a.panel !== p);
    if (set.size === R * C) x.ask.push({ panel: p, cells: 'all' });
    else if (set.size) x.ask.push({ panel: p, cells: [...set].map((s2) => s2.split(',').map(Number)).sort((a, b) => a[0] - b[0] || a[1] - b[1]) });
  }
  if (!EXERCISE_IDS.includes(x.id) || x.ask.length) x.id = customId(ctx.state, x.ask);
  exerciseData(ctx);
  ctx.paint();
  userChange(ctx);
}
