// interp_section.test.mjs — the "Take it apart" section (web/train/section-interp.js) shows the
// core's numbers: its figures, built from gpt.js's lens, attribute, ablate, patch,
// attribution_patch and head_scores answers, hold those answers cell for cell (the rows and
// columns where the answer has them), the attribution's bars add up (in float64, here) to the
// logit the core reports, and the exercises' right cells are the extremes of those answers,
// found again here by a plain search. A model trained a few steps on copy, in the wasm module.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadGptApi } from './load.mjs';
import { InterpSection } from '../../web/train/section-interp.js';
import { argmax, firstLensPoint, worstDisagreement, EXERCISES } from '../../web/train/interp-exercises.js';
import { fmt } from '../../web/train/interp-figures.js';
import { gridSvg, barsSvg } from '../../web/train/interp-svg.js';

const ctx = { t: (k, p) => `${k}${p ? JSON.stringify(p) : ''}`, rt: {}, modelLabel: () => ({ model: 'm', Model: 'M' }) };

async function trainedRun() {
  const gpt = await loadGptApi();
  const run = gpt.create({ task: 'copy', n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, batch_size: 4, steps: 30, seed: 3 });
  run.train(30);
  return run;
}

test('the section’s figures hold the core’s answers cell for cell', async () => {
  const run = await trainedRun();
  const s = new InterpSection(ctx);
  s.vals = { prompt: '\nabc=ab', token: 'c', other: 'a', corrupted: '\nabd=ab', reference: '', mode: 'zero', source: 'text' };
  s.dom = { lens: { chips: { append() {} } } };

  // a token typed as [id] is that id, ␣ a space; the ids reach the core as numbers
  s.vals.token = '[4]'; s.vals.other = '␣';
  assert.deepEqual(s.spec('attribute'), { prompt: '\nabc=ab', token: 4, other: ' ' });
  assert.equal(s.spec('lens').target, 4);
  assert.equal(run.attribute({ prompt: '\nabc=ab', token: 4 }).token, 'c'); // id 4 of the copy task's vocabulary
  s.vals.token = 'c'; s.vals.other = 'a';

  const heads = run.headScores({ length: 4 });
  const [ind, prev] = s.figs_heads({ answer: heads });
  for (let l = 0; l < 2; l++) for (let h = 0; h < 2; h++) {
    assert.equal(ind.value(l, h), heads.induction[l][h]);
    assert.equal(prev.value(l, h), heads.previous[l][h]);
    assert.equal(ind.text(l, h), fmt(heads.induction[l][h]));
  }
  const best = argmax(heads.induction);
  for (const row of heads.induction) for (const v of row) assert.ok(v <= best.v);
  const ex = EXERCISES.find((e) => e.id === 'induction');
  s.res.heads = { answer: heads };
  assert.equal(ex.check({ r: best.r, c: best.c }, s).ok, true);

  const ab = run.ablate({ prompt: '\nabc=ab', token: 'c', other: 'a' });
  const [loss, metric] = s.figs_ablate({ answer: ab });
  for (let l = 0; l < 2; l++) {
    for (let h = 0; h < 2; h++) { assert.equal(loss.value(l, h), ab.head_loss[l][h]); assert.equal(metric.value(l, h), ab.head_metric[l][h]); }
    assert.equal(loss.value(l, 2), ab.mlp_loss[l]);
    assert.equal(metric.value(l, 2), ab.mlp_metric[l]);
  }
  assert.match(gridSvg(loss), new RegExp(fmt(ab.head_loss[1][1]).replace(/[.]/g, '\\.')));

  const at = run.attribute({ prompt: '\nabc=ab', token: 'c', other: 'a' });
  const [bars] = s.figs_attribute({ answer: at });
  const total = bars.items.reduce((a, x) => a + x.value, 0); // float64 here
  assert.ok(Math.abs(total - at.logit) < 1e-4 * Math.max(1, Math.abs(at.logit)), `the bars sum to ${total}, the logit is ${at.logit}`);
  assert.equal(bars.items.length, 2 + 2 * (2 + 3) + 1);
  assert.match(barsSvg(bars), /<svg/);

  const real = run.patch({ clean: '\nabc=', corrupted: '\nabd=', token: 'c', other: 'd' });
  const attr = run.attributionPatch({ clean: '\nabc=', corrupted: '\nabd=', token: 'c', other: 'd' });
  const maps = s.figs_patch({ real: { answer: real }, attr: { answer: attr } });
  assert.equal(maps[0].rows.length, 3);
  real.resid.forEach((row, r) => row.forEach((v, c) => { assert.equal(maps[0].value(r, c), v); assert.equal(maps[1].value(r, c), attr.resid[r][c]); }));
  for (let l = 0; l < 2; l++) assert.equal(maps[2].value(l, 2), real.mlps[l]);
  // patching the clean stream at the last layer restores the clean run at the last position
  assert.ok(Math.abs(real.resid[2][4] - 1) < 1e-4, `ln_f in, last position: ${real.resid[2][4]}`);
  const w = worstDisagreement(real, attr);
  real.resid.forEach((row, r) => row.forEach((v, c) => assert.ok(Math.abs(attr.resid[r][c] - v) <= w.d)));

  const lens = run.lens({ prompt: '\nabc=ab', top_k: 5 });
  globalThis.document = { createElement: () => ({ classList: { add() {} }, setAttribute() {}, addEventListener() {}, append() {} }) };
  const [g] = s.figs_lens({ answer: lens, target: null });
  delete globalThis.document;
  lens.points.forEach((_, r) => lens.tokens.forEach((_, c) => assert.equal(g.value(r, c), lens.target_p[r][c])));
  const f = firstLensPoint(lens);
  const T = lens.tokens.length;
  assert.equal(lens.top[f.r][T - 1][0].id, lens.targets[T - 1]);
  for (let r = 0; r < f.r; r++) assert.notEqual(lens.top[r][T - 1][0].id, lens.targets[T - 1]);
  run.free();
});

test('the one-click induction experiment is the native test’s seeded run, and the core takes its spec', async () => {
  const { INDUCTION, scoreEvery, bestHead } = await import('../../web/train/interp-induction.js');
  const { readFile } = await import('node:fs/promises');
  const cpp = await readFile(new URL('../test_interp_train.cpp', import.meta.url), 'utf8');
  const num = (re) => Number(cpp.match(re)?.[1]);
  // the claim and the run, as tests/test_interp_train.cpp states them
  assert.equal(INDUCTION.budget, num(/kInductionSteps = (\d+);/));
  assert.equal(INDUCTION.threshold, num(/kInductionThreshold = ([\d.]+)f;/));
  const s = INDUCTION.spec;
  assert.equal(s.batch_size, num(/t\.batch_size = (\d+);/));
  assert.equal(s.steps, num(/t\.steps = (\d+);/));
  assert.equal(s.warmup_steps, num(/t\.warmup_steps = (\d+);/));
  assert.equal(s.lr, num(/t\.lr = ([\d.e-]+)f;/));
  assert.equal(s.min_lr, num(/t\.min_lr = ([\d.e-]+)f;/));
  assert.equal(s.seed, num(/t\.seed = (\d+);/));
  assert.equal(s.n_chars, num(/d\.n_chars = (\d+);/));
  assert.equal(s.task, cpp.match(/d\.task = "(\w+)";/)?.[1]);
  assert.match(cpp, /GPTConfig::tiny\(\)/);
  assert.equal(s.preset, 'tiny');
  assert.equal(scoreEvery(INDUCTION.budget), 250); // the native test's scoring interval
  // the core takes the spec, and scores the heads every `every` steps as the page asks
  const gpt = await loadGptApi();
  const run = gpt.create({ ...s, eval_interval: 2, head_scores_interval: 2 });
  const info = run.info();
  assert.deepEqual([info.config.n_layer, info.config.n_head, info.config.n_embd], [2, 4, 64]);
  const heads = [];
  for (let i = 0; i < 2; i++) {
    run.train(2);
    const h = run.headScores({});
    heads.push({ step: 2 * (i + 1), induction: h.induction, previous: h.previous });
  }
  const best = bestHead(heads);
  const all = heads.flatMap((h) => h.induction.flat());
  assert.equal(best.v, Math.max(...all));
  assert.ok(best.v < INDUCTION.threshold, 'an untrained model has no induction head');
});
