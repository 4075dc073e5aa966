// exercise.test.mjs — the exercise mode's logic (web/common/exercise.js) in Node: reading a
// learner's answer, checking it within a tolerance, the ask and tolerance syntax of attributes,
// cleaning an exercise from a state, and the ready-made exercises against the core's values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseAnswer, checkAnswer, parseAsk, askText, askedCells, parseTol, validateExercise, validateTol,
  readyExercise, withReadyExercise, customId, EXERCISES, EXERCISE_IDS, DEFAULT_TOL, isSlip,
} from '../../web/common/exercise.js';
import { defaultState, validateState } from '../../web/common/state.js';
import { loadApi } from './load.mjs';

test('answers: what people type for a number is read, anything else is not', () => {
  const ok = {
    '0.6698': 0.6698, '.6698': 0.6698, '−0.5': -0.5, '-0.5': -0.5, '+2': 2, '1e-3': 0.001, '1E+2': 100,
    '1/2': 0.5, '-3/4': -0.75, '0,6698': 0.6698, '１．５': 1.5, ' 0.25 ': 0.25, '-inf': -Infinity,
    '−∞': -Infinity, '-Infinity': -Infinity, 'inf': Infinity, '∞': Infinity,
  };
  for (const [text, v] of Object.entries(ok)) assert.deepEqual(parseAnswer(text), { ok: true, value: v }, text);
  assert.ok(Number.isNaN(parseAnswer('NaN').value));
  assert.ok(Number.isNaN(parseAnswer('nan').value));
  for (const bad of ['abc', '1/0', '1.2.3', '0x10', '1,2,3', '--1', 'e5', '∞∞', '0.5%']) assert.equal(parseAnswer(bad).ok, false, bad);
  assert.deepEqual(parseAnswer('   '), { ok: false, empty: true });
});

test('checking: 4 decimals or ±0.1 % by default; non-finite values exactly; empty and invalid apart', () => {
  const v = 0.66976154; // the identity example's weight (float32)
  assert.equal(checkAnswer('0.6698', v), 'right'); // 4 decimals
  assert.equal(checkAnswer('0.6699', v), 'right'); // the tutorials' value: within 0.1 %
  assert.equal(checkAnswer('0.67', v), 'right'); // within 0.1 % (3.6e-4)
  assert.equal(checkAnswer('0.671', v), 'wrong'); // 1.9e-3
  assert.equal(checkAnswer('0.3302', v), 'wrong');
  assert.equal(checkAnswer('', v), 'empty');
  assert.equal(checkAnswer('abc', v), 'invalid');
  assert.equal(checkAnswer('nan', NaN), 'right');
  assert.equal(checkAnswer('0', NaN), 'wrong');
  assert.equal(checkAnswer('-inf', -Infinity), 'right');
  assert.equal(checkAnswer('inf', -Infinity), 'wrong');
  assert.equal(checkAnswer('-1e30', -Infinity), 'wrong');
  assert.equal(checkAnswer('nan', 0.5), 'wrong');
  // zero: the relative rule cannot help, the decimals can
  assert.equal(checkAnswer('0.00004', 0), 'right');
  assert.equal(checkAnswer('0.0001', 0), 'wrong');
  // the author's tolerance
  assert.equal(checkAnswer('0.67', v, { decimals: 4 }), 'wrong');
  assert.equal(checkAnswer('0.67', v, { decimals: 2 }), 'right');
  assert.equal(checkAnswer('0.68', v, { rel: 0.02 }), 'right');
  assert.equal(checkAnswer('0.68', v, { abs: 0.005 }), 'wrong');
  assert.equal(checkAnswer('1/3', 1 / 3, { decimals: 6 }), 'right');
});

test('the ask syntax: whole steps, cells, rows, columns; errors name the item', () => {
  const { ask, errors } = parseAsk('weights[1,*] masked[3,2]; scores[*,2] d_scaled');
  assert.deepEqual(ask, [
    { panel: 'weights', cells: [[0, null]] },
    { panel: 'masked', cells: [[2, 1]] },
    { panel: 'scores', cells: [[null, 1]] },
    { panel: 'd_scaled', cells: 'all' },
  ]);
  assert.deepEqual(errors, []);
  assert.equal(askText(ask), 'weights[1,*] masked[3,2] scores[*,2] d_scaled');
  const bad = parseAsk('foo[1,1] weights[0,1] weights[x]');
  assert.deepEqual(bad.ask, []);
  assert.equal(bad.errors.length, 3);
  assert.match(bad.errors[0], /"foo" is not a panel/);
  assert.match(bad.errors[1], /count from 1/);
  // cells of a 3 × 3 panel; outside ones reported
  const { set, outside } = askedCells([{ panel: 'weights', cells: [[0, null], [null, 2], [5, 5]] }], 'weights', 3, 3);
  assert.deepEqual([...set].sort(), ['0,0', '0,1', '0,2', '1,2', '2,2']);
  assert.deepEqual(outside, [[5, 5]]);
});

test('tolerance text and cleaning', () => {
  assert.deepEqual(parseTol('decimals:3 rel:0.01'), { tol: { decimals: 3, rel: 0.01 }, errors: [] });
  assert.deepEqual(parseTol('abs=1e-4').tol, { abs: 1e-4 });
  const p = parseTol('decimals:-1 pct:3');
  assert.equal(p.tol, null);
  assert.equal(p.errors.length, 2);
  assert.deepEqual(validateTol({}), DEFAULT_TOL);
  assert.deepEqual(validateTol({ decimals: 99, rel: -1 }), DEFAULT_TOL);
});

test('an exercise in a state is cleaned; junk gives none', () => {
  assert.equal(validateExercise(null), null);
  assert.equal(validateExercise({ id: 'has space' }), null);
  assert.equal(validateExercise({ id: 'x'.repeat(65) }), null);
  const x = validateExercise({ id: 'q1', ask: [{ panel: 'weights', cells: [[0, 0], [0, 0], [1, 'a'], [null, null]] }, { panel: 'nope', cells: 'all' }], tol: { decimals: 2 } });
  assert.deepEqual(x, { id: 'q1', ask: [{ panel: 'weights', cells: [[0, 0]] }], tol: { decimals: 2 } });
  const s = validateState({ ...defaultState(), exercise: { id: 'identity-softmax', ask: [{ panel: 'weights', cells: 'all' }] } });
  assert.deepEqual(s.exercise, readyExercise('identity-softmax'));
  assert.equal(validateState({ ...defaultState(), exercise: 7 }).exercise, null);
  // an author's exercise id depends on what it asks of which input
  const st = defaultState();
  assert.match(customId(st, []), /^custom-[0-9a-f]{8}$/);
  assert.notEqual(customId(st, []), customId(st, [{ panel: 'weights', cells: 'all' }]));
});

test('the ready-made exercises: their examples, and the answers they expect from the core', async () => {
  const api = await loadApi();
  assert.deepEqual(EXERCISE_IDS, Object.keys(EXERCISES));
  const specOf = (s) => {
    const spec = { ...s.options };
    for (const k of s.mode === 'x' ? ['x', 'W_q', 'W_k', 'W_v'] : ['Q', 'K', 'V']) spec[k] = s.matrices[k];
    if (s.use_W_o) spec.W_o = s.matrices.W_o;
    return spec;
  };
  const s1 = withReadyExercise(defaultState(), 'identity-softmax', api);
  const w = api.trace(specOf(s1)).heads[0].weights;
  assert.equal(checkAnswer('0.6698', w[0][0]), 'right');
  assert.equal(checkAnswer('0.3302', w[0][1]), 'right');
  // the exercise's point: the tutorials' 0.6699 / 0.3301 is wrong at its tolerance (4 decimals),
  // against the float64 value e^(1/√2) / (e^(1/√2) + 1) = 0.669762 as well as the core's
  const exact = 1 / (1 + Math.exp(-Math.SQRT1_2));
  assert.deepEqual(s1.exercise.tol, { decimals: 4 });
  for (const v of [exact, w[0][0]]) {
    assert.equal(checkAnswer('0.6698', v, s1.exercise.tol), 'right');
    assert.equal(checkAnswer('0.6699', v, s1.exercise.tol), 'wrong');
    assert.equal(checkAnswer('0.3302', 1 - v, s1.exercise.tol), 'right');
    assert.equal(checkAnswer('0.3301', 1 - v, s1.exercise.tol), 'wrong');
  }
  assert.ok(isSlip('identity-softmax', '0.6699') && isSlip('identity-softmax', ' .3301'));
  assert.ok(!isSlip('identity-softmax', '0.6698') && !isSlip('causal-row', '0.6699'));
  const s2 = withReadyExercise(defaultState(), 'causal-row', api);
  assert.equal(s2.options.causal, true);
  assert.equal(api.trace(specOf(s2)).heads[0].masked[2][3], -Infinity);
  const s3 = withReadyExercise(defaultState(), 'mask-base', api);
  const t3 = api.trace(specOf(s3));
  assert.deepEqual(t3.heads[0].masked[0], [-Infinity, -Infinity, -Infinity]);
  assert.deepEqual(t3.heads[0].weights[0], [0, 0, 0]); // the empty row: 0, not NaN
  const s4 = withReadyExercise(defaultState(), 'naive-1000', api);
  for (const v of api.trace(specOf(s4)).heads[0].weights[0]) assert.equal(checkAnswer('NaN', v), 'right');
  const s5 = withReadyExercise(defaultState(), 'softmax-backward', api);
  assert.equal(s5.direction, 'backward');
  const b = api.backward({ ...specOf(s5), d_out: s5.upstream.d_out });
  assert.equal(checkAnswer('0.2212', b.grads.heads[0].scaled[0][0]), 'right');
  assert.equal(checkAnswer('0.6698', b.grads.heads[0].scaled[0][0]), 'wrong'); // the Σ_k term forgotten
  // every state a ready-made exercise sets up is a valid state
  for (const id of EXERCISE_IDS) assert.deepEqual(validateState(withReadyExercise(defaultState(), id, api)).exercise, readyExercise(id), id);
});
