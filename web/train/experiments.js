// experiments.js — the sentence under an experiment's overlaid curves (the tutorials' exercises:
// strict vs inclusive mask, stable vs naive softmax), written from the two runs' numbers: where
// the training losses first differ, by how much at most, the validation losses at the last step
// both reached, which run diverged and where. Then one sentence on why, chosen by what happened.
// No numbers are made up here: every figure is read from the runs' series.

/** The last validation loss at a step both runs reached: {step, a, b} or null. */
export function lastCommonVal(a, b) {
  const bSteps = new Map(b.valSteps.map((s, i) => [s, b.val[i]]));
  for (let i = a.valSteps.length - 1; i >= 0; i--) {
    const s = a.valSteps[i];
    if (bSteps.has(s)) return { step: s, a: a.val[i], b: bSteps.get(s) };
  }
  return null;
}

/** Compares the training losses step by step: {n, first, maxDiff, maxAt}. */
export function compareTrain(a, b) {
  const n = Math.min(a.train.length, b.train.length);
  let first = null;
  let maxDiff = 0;
  let maxAt = null;
  for (let i = 0; i < n; i++) {
    const x = a.train[i];
    const y = b.train[i];
    if (!Number.isFinite(x) || !Number.isFinite(y)) break;
    const d = Math.abs(x - y);
    if (d > 0 && first === null) first = a.steps[i];
    if (d > maxDiff) { maxDiff = d; maxAt = a.steps[i]; }
  }
  return { n, first, maxDiff, maxAt };
}

const f3 = (v) => (Number.isFinite(v) ? v.toFixed(3) : String(v));

/**
 * @param {{kind: 'mask'|'softmax', labels: string[], runs: object[], steps: number, seed: number, floor?: number}} ex
 *   floor: the task's loss floor (a perfect model's loss), when the data is a built-in task
 * @param {Function} t the page's i18n
 */
export function experimentSentence(ex, t) {
  const [a, b] = ex.runs;
  const [la, lb] = ex.labels;
  const c = compareTrain(a, b);
  const v = lastCommonVal(a, b);
  const parts = [];
  const diverged = [[a, la, b, lb], [b, lb, a, la]].find(([r]) => r.divergedAt != null);
  if (diverged) {
    const [r, l, o, lo] = diverged;
    const ov = o.val.length ? o.val[o.val.length - 1] : null;
    parts.push(t('exp.s.diverged', { run: l, step: r.divergedAt, other: lo, val: f3(ov), ostep: o.valSteps[o.valSteps.length - 1] ?? 0 }));
    if (o.divergedAt != null) parts.push(t('exp.s.bothDiverged', { run: lo, step: o.divergedAt }));
  } else if (c.n > 0 && c.maxDiff === 0) {
    parts.push(t('exp.s.identical', { n: c.n, seed: ex.seed }));
  } else if (c.n > 0) {
    parts.push(t('exp.s.differ', { n: c.n, first: c.first, max: c.maxDiff < 1e-3 ? c.maxDiff.toExponential(1) : c.maxDiff.toFixed(3), at: c.maxAt }));
  }
  if (v && !diverged && v.step > 0) {
    const d = v.b - v.a;
    const same = Math.abs(d) < 0.005;
    parts.push(t(same ? 'exp.s.valSame' : 'exp.s.val', {
      step: v.step, a: la, b: lb, va: f3(v.a), vb: f3(v.b), lower: d > 0 ? la : lb, by: Math.abs(d).toFixed(3),
    }));
  }
  // why: chosen by what was observed
  let why;
  if (ex.kind === 'softmax') why = diverged ? 'exp.why.softmaxDiverged' : c.maxDiff === 0 ? 'exp.why.softmaxSame' : 'exp.why.softmaxRounding';
  else if (v && Number.isFinite(ex.floor) && Math.min(v.a, v.b) > ex.floor + 0.5) why = 'exp.why.maskEarly';
  else why = v && v.b - v.a > 0.005 ? 'exp.why.maskWorse' : 'exp.why.maskClose';
  parts.push(t(why, { floor: Number.isFinite(ex.floor) ? ex.floor.toFixed(2) : '' }));
  return parts.join(' ');
}
