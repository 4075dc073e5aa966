// player.js — the SCO of a SCORM 1.2 package (player.html): the activity's exercises one at a
// time, in the stepper, with the LMS keeping the learner's work.
//
// In an LMS (an `API` object up the parents or the opener, scorm-api.js) it:
//   - calls LMSInitialize; sets cmi.core.lesson_status to 'incomplete' unless the learner has
//     already passed, and cmi.core.score.min/max to 0/100;
//   - reads cmi.suspend_data back (the answers of each exercise, which exercise was open, each
//     one's last result), so a learner who returns finds their answers;
//   - at each check, reveal and reset: writes the answers to cmi.suspend_data, the score to
//     cmi.core.score.raw (the mean over the exercises of right cells / asked cells, in %, never
//     lower than a score already recorded) and 'passed' to lesson_status once every exercise is
//     solved, then LMSCommit;
//   - on leaving (pagehide): cmi.core.session_time, cmi.core.exit = 'suspend' (so the LMS hands
//     the answers back next time), LMSCommit, LMSFinish.
// Without an API it is a plain page: it says so once, keeps the answers in this browser
// (localStorage, as the playground does) and records no score.
//
// Limits: SCORM 1.2's 4096 characters of suspend_data hold the answers of a few exercises
// (about 60 characters per answered cell); past that the hint levels are left out, then the
// latest answers are not saved in the LMS, and the page says so. A learner can read the
// expected values with the browser's tools: it is for practice, not for an exam.
import { sharedAttention } from '../attention-stepper.js';
import { mountStepper } from '../stepper/stepper.js';
import { readAnswers } from '../common/exercise.js';
import { translator } from '../common/lang.js';
import { stateFromHash } from '../embed-state.js';
import { readActivity } from '../common/scorm-activity.js';
import { findApi, openSession, timespan, SUSPEND_LIMIT } from './scorm-api.js';
import { STRINGS } from './i18n.js';

const $ = (id) => document.getElementById(id);

let activity;
try {
  activity = readActivity(JSON.parse($('activity').textContent));
} catch (e) {
  activity = readActivity({ exercises: [] });
  activity.problems.unshift(`the activity is not JSON: ${e.message}`);
}
// the page's language: the activity's, then the learner's choice in the stepper
let lang = activity.lang;
const t = (key, params) => translator(STRINGS, lang).t(key, params);
const started = Date.now();

/** What the LMS keeps between visits: {v, at, answers: {id: record}, results: {id: {right, total, solved}}}. */
function readSuspend(text) {
  let o = null;
  try { o = JSON.parse(text); } catch { o = null; }
  const ok = o && typeof o === 'object' && o.v === 1;
  const answers = Object.create(null); // keyed by exercise ids, which are the author's text
  const results = Object.create(null);
  const own = (obj, id) => (obj && typeof obj === 'object' && Object.hasOwn(obj, id) ? obj[id] : null);
  for (const { id } of activity.exercises) {
    if (ok && own(o.answers, id)) answers[id] = readAnswers(own(o.answers, id));
    const r = ok ? own(o.results, id) : null;
    if (r && Number.isInteger(r.right) && Number.isInteger(r.total) && r.total > 0 && r.right >= 0 && r.right <= r.total) {
      results[id] = { right: r.right, total: r.total, solved: r.solved === true };
    }
  }
  const at = ok && Number.isInteger(o.at) && o.at >= 0 && o.at < activity.exercises.length ? o.at : 0;
  return { v: 1, at, answers, results };
}

/** suspend_data's text for `kept`, within SCORM 1.2's limit: without the hints if need be, else null. */
function suspendText(kept) {
  const full = JSON.stringify(kept);
  if (full.length <= SUSPEND_LIMIT) return { text: full, trimmed: false };
  const answers = {};
  for (const [id, r] of Object.entries(kept.answers)) answers[id] = { ...r, hints: {} };
  const lean = JSON.stringify({ ...kept, answers });
  return lean.length <= SUSPEND_LIMIT ? { text: lean, trimmed: true } : { text: null, trimmed: true };
}

/** The activity's score (0 … 100): the mean over the exercises of right / asked; unseen ones count 0. */
function scoreOf(results) {
  const n = activity.exercises.length;
  if (!n) return 0;
  const sum = activity.exercises.reduce((acc, { id }) => acc + (results[id] ? results[id].right / results[id].total : 0), 0);
  return Math.round((100 * sum) / n);
}

const allSolved = (results) => activity.exercises.length > 0 && activity.exercises.every(({ id }) => results[id]?.solved);

/** The LMS line: one sentence, set once (an error replaces it); kept to be said again in another language. */
let said = null;
function say(key, params, isError = false) {
  said = { key, params };
  $('sp-lms').textContent = t(key, params);
  $('sp-lms').classList.toggle('is-error', isError);
}

/** The page's own words, in the current language. */
function label() {
  document.documentElement.lang = lang;
  $('sp-nav').setAttribute('aria-label', t('nav.label'));
  $('sp-prev').textContent = t('nav.prev');
  $('sp-next').textContent = t('nav.next');
  if (said) $('sp-lms').textContent = t(said.key, said.params);
}

/** The LMS side: connects, reads back, writes; a plain page when there is no LMS. */
function connect() {
  const api = findApi(window);
  if (!api) {
    say('lms.none');
    return { session: null, kept: readSuspend(''), best: 0, passed: false };
  }
  const session = openSession(api);
  if (!session.initialize()) {
    say('lms.refused', { error: `${session.error?.code ?? '?'} ${session.error?.text ?? ''}`.trim() }, true);
    return { session: null, kept: readSuspend(''), best: 0, passed: false };
  }
  say('lms.connected');
  const kept = readSuspend(session.get('cmi.suspend_data'));
  const status = session.get('cmi.core.lesson_status');
  const passed = status === 'passed';
  if (!passed) session.set('cmi.core.lesson_status', 'incomplete');
  session.set('cmi.core.score.min', '0');
  session.set('cmi.core.score.max', '100');
  const best = Number(session.get('cmi.core.score.raw')) || 0;
  session.commit();
  return { session, kept, best, passed };
}

async function main() {
  document.title = activity.title;
  $('sp-title').textContent = activity.title;
  label();
  if (activity.problems.length) {
    $('sp-problems').hidden = false;
    $('sp-problems').textContent = activity.problems.join(' · ');
  }
  const lms = connect();
  const { session, kept } = lms;
  let reported = false; // an LMS error is said once
  const persist = () => {
    if (!session?.open) return;
    const score = Math.max(lms.best, scoreOf(kept.results));
    lms.best = score;
    const { text, trimmed } = suspendText(kept);
    if (text !== null) session.set('cmi.suspend_data', text);
    session.set('cmi.core.score.raw', String(score));
    if (!lms.passed && allSolved(kept.results)) lms.passed = session.set('cmi.core.lesson_status', 'passed');
    session.commit();
    if (session.error && !reported) {
      reported = true;
      say('lms.failed', { element: session.error.element || session.error.call, error: `${session.error.code} ${session.error.text}`.trim() }, true);
    } else if (trimmed && !reported) {
      reported = true;
      say(text === null ? 'lms.too_long' : 'lms.hints_left', { limit: SUSPEND_LIMIT }, text === null);
    }
  };
  const showScore = () => {
    const score = Math.max(lms.best, scoreOf(kept.results));
    const passed = lms.passed || allSolved(kept.results);
    $('sp-score').textContent = `${t('score.text', { score })} · ${t(passed ? 'score.passed' : 'score.incomplete')}`;
    $('sp-score').classList.toggle('is-passed', passed);
  };

  if (!activity.exercises.length) {
    $('sp-stepper').textContent = t('bad.activity', { detail: activity.problems.join(' · ') || '—' });
    $('sp-nav').hidden = true;
    return;
  }
  let attention;
  try {
    attention = await sharedAttention();
  } catch (e) {
    $('sp-stepper').textContent = t('core.failed', { error: e?.message ?? e });
    return;
  }
  // the answers: in the LMS's suspend_data when there is one, else the stepper's localStorage
  // (only the activity's exercises: one the learner picks in the stepper's own menu is not kept)
  const ids = new Set(activity.exercises.map((e) => e.id));
  const answerStore = session ? {
    load: (id) => kept.answers[id] ?? null,
    save: (id, record) => { if (ids.has(id)) kept.answers[id] = readAnswers(record); },
    clear: (id) => { delete kept.answers[id]; },
  } : undefined;
  const stateAt = (i) => ({ ...stateFromHash('#' + activity.exercises[i].spec, attention), lang });
  let at = kept.at;
  const root = $('sp-stepper');
  root.replaceChildren();
  const controller = await mountStepper(root, { state: stateAt(at), embed: true, lang, attention, answerStore });
  const showPosition = () => {
    $('sp-pos').textContent = t('nav.pos', { i: at + 1, n: activity.exercises.length });
    $('sp-prev').disabled = at === 0;
    $('sp-next').disabled = at === activity.exercises.length - 1;
    $('sp-nav').hidden = false;
  };
  const go = (i) => {
    at = i;
    kept.at = i;
    controller.setState(stateAt(i));
    showPosition();
    persist();
  };
  $('sp-prev').addEventListener('click', () => { if (at > 0) go(at - 1); });
  $('sp-next').addEventListener('click', () => { if (at < activity.exercises.length - 1) go(at + 1); });
  controller.on('change', (state) => {
    if (state.lang === lang || !['en', 'zh'].includes(state.lang)) return;
    lang = state.lang;
    label();
    showPosition();
    showScore();
  });
  controller.on('exercise', (r) => {
    // the learner may pick another exercise in the stepper's own menu: only the activity's count
    if (!r || r.id !== activity.exercises[at].id || !r.total) return;
    kept.results[r.id] = { right: r.right, total: r.total, solved: r.solved && !r.revealed };
    persist();
    showScore();
  });
  showPosition();
  showScore();
  window.addEventListener('pagehide', () => {
    if (!session?.open) return;
    session.set('cmi.core.session_time', timespan((Date.now() - started) / 1000));
    session.set('cmi.core.exit', 'suspend');
    persist();
    session.finish();
  });
  window.__player = { controller, session, kept };
}

main();
