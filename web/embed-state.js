// embed-state.js — what a stepper page outside the playground (the iframe page embed.html, the
// SCORM player scorm/player.js) reads from its address: the state to show, and the origins it may
// tell the learner's results to. No DOM, no side effects: a module both pages import.
//
// A state comes from a permalink (#s=1.…, what "Copy link" gives) or from simple parameters
// (#preset=causal-4&lang=zh&n-head=2&causal=true&mask=inclusive&base=1&scale=false&softmax=naive
// &seed=3&view=step&step=2, and an exercise: exercise=…&ask=…&tolerance=…, as the element's
// attributes). The origins come from `report-to=https://course.example` (embed-origins.js).
import { presetState, applySpec } from './attention-stepper.js';
import { defaultState, validateState } from './common/state.js';
import { decodeState } from './common/permalink.js';
import { EXERCISES, withReadyExercise } from './common/exercise.js';
import { RESULT_TYPE, REQUEST_RESULT_TYPE } from './embed-results.js';

// where results may go: one module, shared with the lab's iframe page (lab-embed.js)
export { REPORT_KEY, exactOrigin, reportOrigins, reportSuffix } from './embed-origins.js';

/** #preset=…&lang=… → a spec for applySpec (or null when the hash has none of those keys). */
export function hashSpec(hash) {
  const p = new URLSearchParams(String(hash).replace(/^#/, ''));
  const spec = {};
  const opts = {};
  const num = (v) => (/^\d+$/.test(v) ? Number(v) : v);
  const bool = (v) => (v === '' || v === 'true' || v === '1' ? true : v === 'false' || v === '0' ? false : v);
  for (const [k, v] of p) {
    if (k === 'preset' || k === 'lang' || k === 'mode' || k === 'view') spec[k] = v;
    else if (k === 'exercise' || k === 'ask' || k === 'tolerance') spec[k] = v;
    else if (k === 'seed' || k === 'step' || k === 'head') spec[k] = num(v);
    else if (k === 'n-head' || k === 'n_head') opts.n_head = num(v);
    else if (k === 'base') opts.base = num(v);
    else if (k === 'causal' || k === 'scale') opts[k] = bool(v);
    else if (k === 'mask' || k === 'softmax') opts[k] = v;
  }
  if (Object.keys(opts).length) spec.options = opts;
  return Object.keys(spec).length ? spec : null;
}

/**
 * The stepper's state for a hash (or any text holding one): a permalink's state, else the
 * parameters' (a ready-made exercise brings its own example unless a preset is given), else the
 * default example.
 * @param {string} hash
 * @param {object} attention the loaded API (one preset draws seeded random matrices)
 */
export function stateFromHash(hash, attention) {
  const fromLink = decodeState(hash, { validate: validateState });
  if (fromLink) return fromLink;
  const spec = hashSpec(hash);
  let state = defaultState();
  if (spec?.preset) state = presetState(spec.preset, attention) ?? state;
  else if (EXERCISES[spec?.exercise]) state = withReadyExercise(state, spec.exercise, attention);
  if (spec) state = applySpec(state, { ...spec, preset: undefined }, attention);
  return state;
}

// the message types: one definition, in the course page's module (it has no side effects)
export { RESULT_TYPE, REQUEST_RESULT_TYPE };

/**
 * The learner's result as a message for the page around: the counts and flags of an 'exercise'
 * payload (or of exerciseResult()), score = right / total (0 … 1), and never the cells, the
 * answers or the expected values. id: null when the stepper shows no exercise.
 */
export function resultMessage(r) {
  if (!r) return { type: RESULT_TYPE, id: null, total: 0, right: 0, wrong: 0, empty: 0, solved: false, revealed: false, reset: false, score: 0 };
  const total = r.total | 0;
  return {
    type: RESULT_TYPE,
    id: String(r.id),
    total,
    right: r.right | 0,
    wrong: r.wrong | 0,
    empty: r.empty | 0,
    solved: !!r.solved,
    revealed: !!r.revealed,
    reset: !!r.reset,
    score: total > 0 ? (r.right | 0) / total : 0,
  };
}
