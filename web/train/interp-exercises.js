// interp-exercises.js — the exercises of the "Take it apart" section (section-interp.js), in the
// spirit of the stepper's (common/exercise.js: a question, a hint, the learner's answer checked
// and explained): each names the tool to use; the learner runs it and answers by picking a cell
// of its figure; the page checks the pick against the core's numbers of that figure (never a
// stored answer: the right cell is whatever the model in the page computes) and explains with
// those numbers.
//
// Limits: an answer is right when its number is the figure's extreme or within TOL of it (two
// heads may score alike); the copy and induction exercises mean most on a model trained on that
// task (the question says so), but they check against any model. The GPT-2 exercise needs GPT-2's
// tokenizer (an opened GPT-2).
import { el, setText, hide } from '../common/ui.js';
import { tokenMark } from '../common/export.js';
import { button, buttonBar, idEl } from './fields.js';
import { fmt } from './interp-figures.js';

const TOL = 0.9; // a pick within 90 % of the extreme counts as right

/** The cell of a layers × heads map with the largest value: {r, c, v}. */
export function argmax(m) {
  let best = { r: -1, c: -1, v: -Infinity };
  m.forEach((row, r) => row.forEach((v, c) => { if (v > best.v) best = { r, c, v }; }));
  return best;
}

/** The first lens point whose top token at the last position is the model's own prediction there. */
export function firstLensPoint(a) {
  const P = a.top.length, T = a.tokens.length;
  const final = a.top[P - 1][T - 1][0].id;
  for (let r = 0; r < P; r++) if (a.top[r][T - 1][0].id === final) return { r, id: final, text: a.top[P - 1][T - 1][0].text };
  return { r: P - 1, id: final, text: a.top[P - 1][T - 1][0].text };
}

/** Where attribution patching's residual map differs most from real patching's: {r, c, real, attr, d}. */
export function worstDisagreement(real, attr) {
  let best = { r: -1, c: -1, d: -1 };
  real.resid.forEach((row, r) => row.forEach((v, c) => {
    const d = Math.abs(attr.resid[r][c] - v);
    if (d > best.d) best = { r, c, d, real: v, attr: attr.resid[r][c] };
  }));
  return best;
}

const head = (r, c) => `L${r} H${c}`;

/** The exercises: tool, the figures a pick may come from, setup (optional), check(pick, section) → {ok, why}. */
export const EXERCISES = [
  {
    id: 'induction', tool: 'heads', kinds: ['induction'],
    check(p, s) {
      const best = argmax(s.res.heads.answer.induction);
      const v = s.res.heads.answer.induction[p.r][p.c];
      return { ok: v >= TOL * best.v, why: { head: head(p.r, p.c), v: fmt(v), best: head(best.r, best.c), bv: fmt(best.v) } };
    },
  },
  {
    id: 'lens', tool: 'lens', kinds: ['lens'],
    check(p, s) {
      const a = s.res.lens.answer;
      if (p.c !== a.tokens.length - 1) return { ok: false, key: 'lastColumn' };
      const f = firstLensPoint(a);
      return { ok: p.r === f.r, why: { point: a.points[p.r], best: a.points[f.r], tok: tokenMark(f.text), top: tokenMark(a.top[p.r][p.c][0].text) } };
    },
  },
  {
    id: 'ablate', tool: 'ablate', kinds: ['ablate-loss'],
    check(p, s) {
      const a = s.res.ablate.answer;
      if (p.c >= a.head_loss[0].length) return { ok: false, key: 'aHead' };
      const best = argmax(a.head_loss);
      const v = a.head_loss[p.r][p.c];
      return { ok: best.v > 0 && v >= TOL * best.v, why: { head: head(p.r, p.c), v: fmt(v), best: head(best.r, best.c), bv: fmt(best.v), loss: fmt(a.loss) } };
    },
  },
  {
    id: 'patch', tool: 'patch', kinds: ['real-resid'], setup: copySetup,
    check(p, s) {
      const a = s.res.patch.real.answer;
      const best = argmax(a.resid);
      const v = a.resid[p.r][p.c];
      const rows = a.resid.length;
      const name = (r, c) => `${r < rows - 1 ? `L${r}` : 'ln_f'}, ${c} “${tokenMark(a.tokens[c])}”`;
      return { ok: v >= TOL * best.v, why: { cell: name(p.r, p.c), v: fmt(v), best: name(best.r, best.c), bv: fmt(best.v) } };
    },
  },
  {
    id: 'disagree', tool: 'patch', kinds: ['real-resid', 'attr-resid'], setup: copySetup,
    check(p, s) {
      const real = s.res.patch.real.answer, attr = s.res.patch.attr.answer;
      const w = worstDisagreement(real, attr);
      const d = Math.abs(attr.resid[p.r][p.c] - real.resid[p.r][p.c]);
      const name = (r, c) => `${r < real.resid.length - 1 ? `L${r}` : 'ln_f'}, ${c}`;
      return { ok: d >= TOL * w.d, why: { cell: name(p.r, p.c), real: fmt(real.resid[p.r][p.c]), attr: fmt(attr.resid[p.r][p.c]), best: name(w.r, w.c), breal: fmt(w.real), battr: fmt(w.attr) } };
    },
  },
  {
    id: 'ioi', tool: 'attribute', kinds: ['attribute'], needsGpt2: true,
    setup: () => ({ prompt: 'When Mary and John went to the store, John gave a drink to', token: ' Mary', other: ' John' }),
    check(p, s) {
      const a = s.res.attribute.answer;
      const heads = a.heads;
      const best = argmax(heads);
      const m = /^L(\d+) H(\d+)$/.exec(p.item?.label ?? '');
      if (!m) return { ok: false, key: 'aHead' };
      const v = heads[+m[1]][+m[2]];
      return { ok: v >= TOL * best.v, why: { head: p.item.label, v: fmt(v), best: head(best.r, best.c), bv: fmt(best.v) } };
    },
  },
];

/**
 * A copy-task patching pair from the prompt: up to its first '=' (what comes next is the copy's
 * first letter), the corrupted prompt with that letter changed to another of the vocabulary; the
 * metric is the clean letter's logit minus the other's. Nothing when the prompt has no '='.
 */
function copySetup(s) {
  const p = s.vals.prompt;
  const eq = p.indexOf('=');
  const vocab = s.rt.info?.vocab;
  if (eq < 0 || !Array.isArray(vocab)) return null;
  const clean = p.slice(0, eq + 1);
  const at = clean.startsWith('\n') ? 1 : 0;
  const was = clean[at];
  const other = vocab.find((ch) => /^[a-z]$/.test(ch) && ch !== was && !clean.includes(ch)) ?? vocab.find((ch) => /^[a-z]$/.test(ch) && ch !== was);
  if (!was || !other) return null;
  return { prompt: clean, corrupted: clean.slice(0, at) + other + clean.slice(at + 1), token: was, other };
}

/** The exercise box of the section: pick an exercise, read its question and hint, answer by picking a cell. */
export class ExerciseBox {
  constructor(section) {
    this.s = section;
    this.active = null;
    this.feedback = null; // {ok, key, why}: translated when shown
  }

  get ctx() { return this.s.ctx; }

  render() {
    const { t } = this.ctx;
    const box = el('div', 'tr-interp-ex');
    box.id = 'tr-interp-ex';
    box.append(el('h3', 'tr-interp-ex-h', t('ipx.title')));
    const lab = el('label', 'aps-label', t('ipx.pick'));
    lab.htmlFor = 'tr-interp-ex-select';
    const sel = idEl('tr-interp-ex-select', 'select', 'tr-input');
    sel.append(new Option(t('ipx.none'), ''));
    for (const x of EXERCISES) sel.append(new Option(t(`ipx.${x.id}.title`), x.id));
    sel.value = this.active?.id ?? '';
    sel.addEventListener('change', () => this.choose(sel.value));
    this.dom = { sel };
    this.dom.question = idEl('tr-interp-ex-q', 'p', 'tr-interp-ex-q');
    this.dom.hint = idEl('tr-interp-ex-hinttext', 'p', 'tr-hint');
    this.dom.hintBtn = button(t('ipx.hint'), 'interp-ex-hint', () => { hide(this.dom.hint, false); setText(this.dom.hint, t(`ipx.${this.active.id}.hint`)); });
    this.dom.result = idEl('tr-interp-ex-result', 'p', 'tr-interp-ex-result');
    this.dom.result.setAttribute('role', 'status');
    box.append(lab, sel, this.dom.question, buttonBar(this.dom.hintBtn), this.dom.hint, this.dom.result);
    this.refresh();
    return box;
  }

  choose(id) {
    const x = EXERCISES.find((e) => e.id === id) ?? null;
    this.active = x;
    this.feedback = null;
    if (x) {
      const set = x.setup && (!x.needsGpt2 || this.gpt2()) ? x.setup(this.s) : null;
      if (set) { Object.assign(this.s.vals, set); this.s.edited = true; }
      this.s.tool = x.tool;
      this.s.ctx.app.dataset.interpExercise = x.id;
      if (set) { this.s.ctx.render(); return; } // the inputs show the exercise's prompt and tokens
    }
    this.s.refresh();
  }

  gpt2() {
    return this.s.rt.info?.tokenizer === 'gpt2-bpe';
  }

  /** A picked cell of a figure: the answer to the active exercise when it is one of its figures. */
  picked(kind, r, c, td, item) {
    const x = this.active;
    if (!x || !x.kinds.includes(kind)) return;
    const out = x.check({ r, c, item }, this.s);
    this.feedback = { ok: out.ok, key: out.key ? `ipx.${out.key}` : `ipx.${x.id}.${out.ok ? 'right' : 'wrong'}`, why: out.why };
    this.s.ctx.app.dataset.interpAnswer = out.ok ? 'right' : 'wrong';
    this.s.ctx.byId('tr-interp')?.querySelectorAll('.is-picked').forEach((e) => e.classList.remove('is-picked'));
    td?.classList.add('is-picked');
    this.refresh();
  }

  reset() {
    this.feedback = null;
  }

  refresh() {
    if (!this.dom) return;
    const { t } = this.ctx;
    const x = this.active;
    hide(this.dom.hintBtn, !x);
    if (!x) hide(this.dom.hint, true);
    let q = '';
    if (x) {
      q = t(`ipx.${x.id}.q`);
      if (x.needsGpt2 && !this.gpt2()) q += ` ${t('ipx.needGpt2')}`;
      else if (!this.s.res[x.tool]) q += ` ${t('ipx.runFirst', { tool: t(`ip.tool.${x.tool}`) })}`;
    }
    setText(this.dom.question, q);
    const f = this.feedback;
    setText(this.dom.result, f ? `${f.ok ? t('ipx.right') : t('ipx.wrong')} ${t(f.key, f.why)}` : '');
    this.dom.result.classList.toggle('is-right', Boolean(this.feedback?.ok));
    this.dom.result.classList.toggle('is-wrong', Boolean(this.feedback && !this.feedback.ok));
  }
}
