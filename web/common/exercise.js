// exercise.js — the exercise mode's logic, without the DOM: the ready-made exercises from the
// tutorials, the "ask" syntax authors write (attributes, permalink parameters), reading a learner's
// answer, checking it against the core's value within the author's tolerance, and keeping the
// answers in localStorage (nothing is sent anywhere).
//
// An exercise in the state (state.exercise):
//   { id: 'identity-softmax' | an author's id ([A-Za-z0-9_.-], ≤ 64),
//     ask: [{ panel: 'weights' | 'masked' | 'd_scaled' | …,
//             cells: 'all' | [[row, col], …] }],   // 0-based; null for a whole row or column
//     tol: { decimals: 4, rel: 0.001, abs?: number } }   // right if any of them holds
// The learner's answers are not in the state (a permalink shares the exercise, not the answers).
import { ASK_PANELS, DEFAULT_TOL, toleranceOf, validateExercise, validateTol } from './state.js';
import { presetPatch } from './presets.js';

// The exercise's part of the state is validated with the rest of the state (state.js); these are
// exported here too, with the logic that uses them.
export { DEFAULT_TOL, toleranceOf, validateExercise, validateTol };

export const EXERCISE_IDS = ['identity-softmax', 'causal-row', 'mask-base', 'naive-1000', 'softmax-backward',
  'rope-rotate', 'alibi-bias', 'window-keys', 'flash-running', 'mla-absorb'];
export const STORAGE_PREFIX = 'attention-playground.exercise.';

/**
 * The ready-made exercises: the state they start from (a preset, and for the backward one the
 * direction and dOut) and the cells they ask; slips: wrong answers the learner is expected to
 * meet (a value printed elsewhere), answered with exercise.<id>.slip when typed. Titles, tasks and
 * explanations are in i18n.js (exercise.<id>.title / .task / .why); a ready-made exercise's own
 * tolerance is in state.js (toleranceOf).
 */
export const EXERCISES = {
  'identity-softmax': { preset: 'identity', ask: [{ panel: 'weights', cells: 'all' }], slips: [0.6699, 0.3301] },
  'causal-row': { preset: 'causal-4', ask: [{ panel: 'masked', cells: row(2, 4) }, { panel: 'weights', cells: row(2, 4) }] },
  'mask-base': { preset: 'inclusive', ask: [{ panel: 'masked', cells: 'all' }, { panel: 'weights', cells: row(0, 3) }] },
  'naive-1000': { preset: 'overflow-naive', ask: [{ panel: 'weights', cells: row(0, 2) }] },
  'softmax-backward': {
    preset: 'identity',
    state: { direction: 'backward', upstream: { kind: 'd_out', d_out: '1 0\n0 0', target: '' } },
    ask: [{ panel: 'd_scaled', cells: [[0, 0]] }],
  },
  'rope-rotate': { preset: 'rope-distance', ask: [{ panel: 'q_rot', cells: [[1, 0]] }], slips: [1] },
  'alibi-bias': { preset: 'alibi-heads', ask: [{ panel: 'bias', cells: [[3, 0]] }] },
  'window-keys': { preset: 'window-sink', ask: [{ panel: 'mask', cells: row(7, 12) }] },
  // row 6 of head 1 across the 4 key blocks: ℓ forgetting the rescale (1.6782 + 1.2489) is the slip
  'flash-running': { preset: 'flash-tiles', ask: [{ panel: 'flash_m', cells: row(5, 4) }, { panel: 'flash_l', cells: row(5, 4) }], slips: [2.9271] },
  'mla-absorb': { preset: 'mla-latent', ask: [{ panel: 'q_latent', cells: row(0, 3) }] },
};

function row(r, n) {
  return Array.from({ length: n }, (_, c) => [r, c]);
}

/** The exercise object of a ready-made id (a deep copy), or null. */
export function readyExercise(id) {
  const e = EXERCISES[id];
  return e ? { id, ask: JSON.parse(JSON.stringify(e.ask)), tol: toleranceOf(id) } : null;
}

/** Whether a learner's answer is one of a ready-made exercise's known slips (see EXERCISES). */
export function isSlip(id, text) {
  const a = parseAnswer(text);
  return a.ok && (EXERCISES[id]?.slips ?? []).some((v) => Math.abs(a.value - v) < 1e-9);
}

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A state set up for a ready-made exercise: its example (preset), direction and dOut, the view
 * reset to all steps, and the exercise itself. api: the loaded core (one preset draws seeded
 * matrices). Returns a new state (the input is not changed); an unknown id returns it as it is.
 */
export function withReadyExercise(state, id, api) {
  const def = EXERCISES[id];
  if (!def) return state;
  const patch = presetPatch(def.preset, api);
  return {
    ...state,
    preset: def.preset,
    mode: patch.mode,
    use_W_o: patch.use_W_o,
    use_bias: false,
    matrices: { ...state.matrices, ...patch.matrices },
    options: { ...patch.options },
    variants: { ...patch.variants },
    head: 0, focus: null, view: 'all', step: 0, head_view: 'one', display: 'auto',
    direction: def.state?.direction ?? 'forward',
    upstream: { ...state.upstream, d_out: '', target: '', ...(def.state?.upstream ?? {}) },
    exercise: readyExercise(id),
  };
}

/**
 * The ask syntax of attributes and permalink parameters: items separated by spaces, commas between
 * brackets excepted, or ';': "weights" (every cell), "weights[1,2]", "weights[3,*]" (a row),
 * "weights[*,2]" (a column); rows and columns count from 1, as on the page. Returns
 * {ask, errors: ['…']}; rows and columns are checked against the trace later (cells outside it are
 * reported then).
 */
export function parseAsk(text) {
  const ask = [];
  const errors = [];
  const items = String(text ?? '').match(/[A-Za-z_]+(?:\[[^\]]*\])?/g) ?? [];
  const byPanel = new Map();
  for (const item of items) {
    const m = /^([A-Za-z_]+)(?:\[\s*(\*|\d+)\s*,\s*(\*|\d+)\s*\])?$/.exec(item);
    if (!m) { errors.push(`"${item}" is not panel[row,col]`); continue; }
    const [, panel, r, c] = m;
    if (!ASK_PANELS.includes(panel)) { errors.push(`"${panel}" is not a panel (${ASK_PANELS.join(', ')})`); continue; }
    if (r === undefined || (r === '*' && c === '*')) { byPanel.set(panel, 'all'); continue; }
    if ((r !== '*' && +r < 1) || (c !== '*' && +c < 1)) { errors.push(`${item}: rows and columns count from 1`); continue; }
    const cur = byPanel.get(panel);
    if (cur === 'all') continue;
    const list = cur ?? [];
    list.push([r === '*' ? null : +r - 1, c === '*' ? null : +c - 1]);
    byPanel.set(panel, list);
  }
  for (const [panel, cells] of byPanel) ask.push({ panel, cells: cells === 'all' ? 'all' : cells });
  return { ask, errors };
}

/** The ask list back as text (rows and columns from 1): for attributes and permalinks. */
export function askText(ask) {
  const n = (x) => (x === null ? '*' : x + 1);
  return (ask ?? []).map((a) => (a.cells === 'all' ? a.panel : a.cells.map(([r, c]) => `${a.panel}[${n(r)},${n(c)}]`).join(' '))).join(' ');
}

/**
 * The cells asked in a panel of R × C, as a Set of "r,c" (rows/columns given as * expand here), and
 * the items that fall outside it.
 */
export function askedCells(ask, panel, R, C) {
  const set = new Set();
  const outside = [];
  for (const a of ask ?? []) {
    if (a.panel !== panel) continue;
    if (a.cells === 'all') { for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) set.add(`${r},${c}`); continue; }
    for (const [r, c] of a.cells) {
      const rows = r === null ? [...Array(R).keys()] : [r];
      const cols = c === null ? [...Array(C).keys()] : [c];
      for (const i of rows) for (const j of cols) {
        if (i < R && j < C) set.add(`${i},${j}`); else outside.push([i, j]);
      }
    }
  }
  return { set, outside };
}

/**
 * A learner's answer → {ok: true, value} or {ok: false}. Reads what people type for a number:
 * 0.6698, .6698, −0.5 (true minus), 1e-3, 1/2, 0,6698 (decimal comma), full-width digits, and the
 * non-finite values the page prints: −∞ / -inf / -infinity, ∞ / inf, NaN.
 */
export function parseAnswer(text) {
  let s = String(text ?? '').normalize('NFKC').trim().replace(/[\u2212\u2012\u2013\u2014]/g, '-').replace(/\s+/g, '');
  if (s === '') return { ok: false, empty: true };
  const lower = s.toLowerCase();
  if (lower === 'nan') return { ok: true, value: NaN };
  const inf = /^([+-]?)(∞|inf|infinity)$/.exec(lower);
  if (inf) return { ok: true, value: inf[1] === '-' ? -Infinity : Infinity };
  if (/^[+-]?\d+,\d+$/.test(s)) s = s.replace(',', '.');
  const num = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
  if (num.test(s)) return { ok: true, value: Number(s) };
  const frac = /^([+-]?(?:\d+\.?\d*|\.\d+))\/((?:\d+\.?\d*|\.\d+))$/.exec(s);
  if (frac && Number(frac[2]) !== 0) return { ok: true, value: Number(frac[1]) / Number(frac[2]) };
  return { ok: false };
}

/**
 * Checks one answer against the core's value: 'right' | 'wrong' | 'empty' | 'invalid' (not a
 * number). Non-finite values must match exactly (NaN with NaN, −∞ with −∞); finite ones are right
 * when any tolerance holds: |a − v| ≤ ½·10^−decimals, ≤ rel·|v|, or ≤ abs.
 */
export function checkAnswer(text, value, tol = DEFAULT_TOL) {
  const a = parseAnswer(text);
  if (a.empty) return 'empty';
  if (!a.ok) return 'invalid';
  if (Number.isNaN(value)) return Number.isNaN(a.value) ? 'right' : 'wrong';
  if (!Number.isFinite(value)) return a.value === value ? 'right' : 'wrong';
  if (!Number.isFinite(a.value)) return 'wrong';
  const d = Math.abs(a.value - value);
  const slack = 1e-12 * Math.max(1, Math.abs(value));
  if (tol.decimals !== undefined && d <= 0.5 * 10 ** -tol.decimals + slack) return 'right';
  if (tol.rel !== undefined && d <= tol.rel * Math.abs(value) + slack) return 'right';
  if (tol.abs !== undefined && d <= tol.abs + slack) return 'right';
  return 'wrong';
}

/** The tolerance as the author wrote it in an attribute: "decimals:3 rel:0.01 abs:1e-4". */
export function parseTol(text) {
  const out = {};
  const errors = [];
  for (const part of String(text ?? '').split(/[\s,;]+/).filter(Boolean)) {
    const m = /^(decimals|rel|abs)[:=](.+)$/.exec(part);
    const v = m ? Number(m[2]) : NaN;
    if (!m || !Number.isFinite(v) || v < 0) { errors.push(`"${part}" is not decimals:N, rel:x or abs:x`); continue; }
    out[m[1]] = m[1] === 'decimals' ? Math.round(v) : v;
  }
  return { tol: Object.keys(out).length ? validateTol(out) : null, errors };
}

/** The id of an exercise made on the page: "custom-" and a short hash of what it asks of what. */
export function customId(state, ask) {
  const text = JSON.stringify({ ask, mode: state.mode, matrices: state.matrices, options: state.options, use_W_o: state.use_W_o, use_bias: state.use_bias, direction: state.direction });
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) { h ^= text.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; }
  return `custom-${h.toString(16).padStart(8, '0')}`;
}

// ───────────── the learner's answers (one record per exercise) ─────────────
// A record is {answers: {"panel:r:c": text}, hints: {"panel:r:c": 0…3}, checked, revealed}. The
// stepper keeps them in an answer store: by default localStorage (one key per exercise); a page
// may give its own (mountStepper's answerStore: the SCORM player keeps them in the LMS).

/** Anything → a clean record of answers (junk becomes an empty one). */
export function readAnswers(o) {
  const answers = {};
  const hints = {};
  if (!isObj(o)) return { answers, hints, checked: false, revealed: false };
  for (const [k, v] of Object.entries(isObj(o.answers) ? o.answers : {})) if (/^[\w]+:\d+:\d+$/.test(k) && typeof v === 'string' && v.length <= 100) answers[k] = v;
  for (const [k, v] of Object.entries(isObj(o.hints) ? o.hints : {})) if (/^[\w]+:\d+:\d+$/.test(k) && Number.isInteger(v) && v >= 0 && v <= 3) hints[k] = v;
  return { answers, hints, checked: o.checked === true, revealed: o.revealed === true };
}

/** The record kept in localStorage for an exercise (an empty one when there is none). */
export function loadAnswers(id) {
  try {
    const raw = globalThis.localStorage?.getItem(STORAGE_PREFIX + id);
    return readAnswers(raw ? JSON.parse(raw) : null);
  } catch {
    return readAnswers(null);
  }
}

export function saveAnswers(id, data) {
  try {
    globalThis.localStorage?.setItem(STORAGE_PREFIX + id, JSON.stringify({ v: 1, ...data }));
  } catch { /* private mode or full: the answers are not remembered */ }
}

export function clearAnswers(id) {
  try { globalThis.localStorage?.removeItem(STORAGE_PREFIX + id); } catch { /* nothing to clear */ }
}

/** The default answer store: {load(id) → a record, save(id, record), clear(id)} on localStorage. */
export const localAnswers = { load: loadAnswers, save: saveAnswers, clear: clearAnswers };
