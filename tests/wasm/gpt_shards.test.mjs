// gpt_shards.test.mjs — data-parallel training through the wasm API (web/gpt.js stepBegin,
// stepOwn, stepAdd, stepFinish and gpt.shard(config).gradients), as the training page's workers
// use it, here with the shares computed one after another in one module:
//  - a step split one way is train(1), bit for bit;
//  - split two ways, the same run twice gives the same bits, and the losses agree with one way
//    within the tolerance of tests/test_train_threads.cpp (1e-5 relative; the first step's loss
//    is the same bits: the forward is row-wise);
//  - the batch is the same whatever the split; a run saved mid-way with two shares resumes with
//    one or three;
//  - shares of the wrong size, out of order, or with bytes that are not whole floats are refused
//    by name, and the run stays usable;
//  - the page's exchange (stepBegin's into, gradients' grads: one buffer per helper, reused, each
//    helper's model used once on zeros before the first step) gives the same bits as new arrays
//    and fresh models every step;
//  - mirrors (runs loaded from the leader's save(), each computing its share with stepShare and
//    adding the others' in order: the page's helpers) give the split steps' bits and end in the
//    leader's state, for two and three shares;
//  - the evaluation split 1 … 5 ways by whole batches (evalBegin, evalOwn, shard.evaluate, evalAdd,
//    evalFinish) is evaluate()'s answer to the bit, run after run, and refuses bad shares by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadGptApi } from './load.mjs';

const gpt = await loadGptApi();
const SPEC = { task: 'sort', n_layer: 1, n_embd: 16, n_head: 2, block_size: 16, batch_size: 6, n_chars: 4000, seed: 3, steps: 40, warmup_steps: 2 };

/** `steps` steps of `run`, each split `shares` ways over fresh shard models: the losses. */
function splitSteps(run, shares, steps) {
  const config = run.info().config;
  const workers = Array.from({ length: shares - 1 }, () => gpt.shard(config));
  const losses = [];
  try {
    for (let i = 0; i < steps; i++) {
      const b = run.stepBegin(shares);
      run.stepOwn();
      for (let k = 1; k < shares; k++) {
        const rows = [b.rows[k] * b.T, b.rows[k + 1] * b.T];
        const r = workers[k - 1].gradients(b.params, b.ids.slice(...rows), b.targets.slice(...rows), b.rows[shares]);
        assert.equal(r.grads.length, run.info().n_params);
        assert.equal(r.losses.length, rows[1] - rows[0]);
        run.stepAdd(r.grads, r.losses);
      }
      const res = run.stepFinish();
      assert.equal(res.diverged, false);
      losses.push(res.losses[0]);
    }
  } finally {
    for (const w of workers) w.free();
  }
  return losses;
}

test('one share is train(1), bit for bit; the same split twice gives the same bits', () => {
  const a = gpt.create(SPEC), b = gpt.create(SPEC), c = gpt.create(SPEC), d = gpt.create(SPEC);
  try {
    const plain = Array.from(a.train(8).losses);
    assert.deepEqual(splitSteps(b, 1, 8), plain);
    assert.deepEqual(b.save(), a.save());
    const two = splitSteps(c, 2, 8), again = splitSteps(d, 2, 8);
    assert.deepEqual(two, again);
    assert.deepEqual(c.save(), d.save());
    assert.equal(two[0], plain[0]); // the forward is row-wise
    for (let i = 0; i < plain.length; i++) {
      assert.ok(Math.abs(two[i] - plain[i]) <= 1e-5 * plain[i], `step ${i + 1}: ${two[i]} vs ${plain[i]}`);
    }
  } finally {
    for (const r of [a, b, c, d]) r.free();
  }
});

test('the exchange without new buffers (stepBegin into, gradients into params) gives the same bits', () => {
  const a = gpt.create(SPEC), b = gpt.create(SPEC);
  const n = a.info().n_params;
  const shards = [gpt.shard(a.info().config), gpt.shard(a.info().config)];
  const bufs = [new Float32Array(n), new Float32Array(n)];
  try {
    const plain = splitSteps(a, 3, 6);
    // the page's helpers each compute one share on zeros before the first step (shard-worker.js's
    // prepare): thrown away, it changes none of the steps' bits
    const T = a.info().config.block_size;
    for (const sh of shards) sh.gradients(new Float32Array(n), new Int32Array(2 * T), new Int32Array(2 * T), SPEC.batch_size);
    const reused = [];
    for (let i = 0; i < 6; i++) {
      const s = b.stepBegin(3, { into: bufs });
      assert.equal(s.params, undefined);
      for (const buf of bufs) assert.deepEqual(buf, b.stepBegin(3).params); // a begun step begun again: the same
      b.stepOwn();
      for (let k = 1; k < 3; k++) {
        const rows = [s.rows[k] * s.T, s.rows[k + 1] * s.T];
        const r = shards[k - 1].gradients(bufs[k - 1], s.ids.slice(...rows), s.targets.slice(...rows), s.rows[3], { grads: bufs[k - 1] });
        assert.equal(r.grads, bufs[k - 1]); // written over the parameters it was given
        b.stepAdd(r.grads, r.losses);
      }
      reused.push(b.stepFinish().losses[0]);
    }
    assert.deepEqual(reused, plain);
    assert.deepEqual(b.save(), a.save());
    b.stepBegin(2);
    assert.throws(() => b.stepBegin(2, { into: [new Float32Array(3)] }), { field: 'params', message: new RegExp(`${n} parameters`) });
    const s = b.stepBegin(2);
    const rows = [s.rows[1] * s.T, s.rows[2] * s.T];
    assert.throws(() => shards[0].gradients(s.params, s.ids.slice(...rows), s.targets.slice(...rows), 6, { grads: new Float32Array(4) }), { field: 'grads', message: /holds 4 floats/ });
    assert.throws(() => shards[0].gradients(s.params, s.ids.slice(...rows), s.targets.slice(...rows), 6, { grads: [0] }), { field: 'grads' });
  } finally {
    for (const x of [a, b, ...shards]) x.free();
  }
});

test('the batch is the same whatever the split; a run saved with two shares resumes with one or three', () => {
  const a = gpt.create(SPEC), b = gpt.create(SPEC);
  try {
    const one = a.stepBegin(1), three = b.stepBegin(3);
    assert.deepEqual(three.ids, one.ids);
    assert.deepEqual(three.targets, one.targets);
    assert.deepEqual(three.rows, [0, 2, 4, 6]);
  } finally {
    a.free();
    b.free();
  }
  const run = gpt.create(SPEC);
  try {
    splitSteps(run, 2, 5);
    const bytes = run.save();
    const later = splitSteps(run, 3, 4);
    for (const shares of [1, 3]) {
      const resumed = gpt.load(bytes);
      try {
        assert.equal(resumed.info().step, 5);
        const l = shares === 1 ? Array.from(resumed.train(4).losses) : splitSteps(resumed, 3, 4);
        if (shares === 3) assert.deepEqual(l, later);
        else for (let i = 0; i < 4; i++) assert.ok(Math.abs(l[i] - later[i]) <= 1e-5 * later[i]);
      } finally {
        resumed.free();
      }
    }
  } finally {
    run.free();
  }
});

/**
 * `steps` steps of `run` split `shares` ways with mirrors (the page's helpers): each mirror loaded
 * from run.save() samples the batch itself, computes its share (stepShare) and takes the others'
 * in order; nothing but gradients goes from one to another. → the leader's losses.
 */
function mirroredSteps(run, shares, steps, mirrors) {
  const n = run.info().n_params;
  const losses = [];
  for (let i = 0; i < steps; i++) {
    run.stepBegin(shares, { mirror: true });
    const own = run.stepOwn({ grads: new Float32Array(n) });
    const parts = [own];
    for (let k = 1; k < shares; k++) {
      mirrors[k - 1].stepBegin(shares, { mirror: true });
      parts.push(mirrors[k - 1].stepShare(k, { grads: new Float32Array(n) }));
    }
    for (let k = 1; k < shares; k++) run.stepAdd(parts[k].grads, parts[k].losses);
    const res = run.stepFinish();
    for (let k = 1; k < shares; k++) {
      for (let j = 0; j < shares; j++) if (j !== k) mirrors[k - 1].stepAdd(parts[j].grads, parts[j].losses);
      const m = mirrors[k - 1].stepFinish();
      assert.ok(Object.is(m.losses[0], res.losses[0]), `mirror ${k}, step ${i + 1}: ${m.losses[0]} vs ${res.losses[0]}`);
    }
    losses.push(res.losses[0]);
  }
  return losses;
}

test('mirrors loaded from save() step with the run: the bits of the split steps, the same state', () => {
  for (const shares of [2, 3]) {
    const a = gpt.create(SPEC), b = gpt.create(SPEC);
    a.train(3);
    b.train(3);
    const bytes = b.save();
    const mirrors = Array.from({ length: shares - 1 }, () => gpt.load(bytes));
    try {
      const plain = splitSteps(a, shares, 6);
      assert.deepEqual(mirroredSteps(b, shares, 6, mirrors), plain);
      assert.deepEqual(b.save(), a.save());
      for (const m of mirrors) assert.deepEqual(m.save(), a.save()); // parameters, moments, sampler, step
      // a mirror's share refused by name: out of range, before its step is begun, or twice
      const m = mirrors[0];
      assert.throws(() => m.stepShare(1, { grads: new Float32Array(a.info().n_params) }), { field: 'gradients', message: /no step is begun/ });
      m.stepBegin(shares, { mirror: true });
      assert.throws(() => m.stepShare(shares, { grads: new Float32Array(a.info().n_params) }), { field: 'shares', message: /one of shares 1/ });
      assert.throws(() => m.stepShare(1, { grads: new Float32Array(3) }), { field: 'grads' });
      m.stepBegin(shares, { mirror: true }); // begun again: the same batch, and the run goes on
    } finally {
      for (const r of [a, b, ...mirrors]) r.free();
    }
  }
});

test('shares of the wrong size or out of order are refused by name; the run goes on', () => {
  const run = gpt.create(SPEC);
  const shard = gpt.shard(run.info().config);
  try {
    const n = run.info().n_params;
    const b = run.stepBegin(2);
    assert.throws(() => run.stepAdd(new Float32Array(n), new Float32Array(3 * 16)), { field: 'gradients', message: /no share is awaited/ });
    run.stepOwn();
    assert.throws(() => run.stepAdd(new Float32Array(5), new Float32Array(3 * 16)), { field: 'gradients', message: /share 1 has 5 gradients/ });
    assert.throws(() => run.stepAdd(new Float32Array(n), new Float32Array(7)), { field: 'losses', message: /share 1 has 7 losses/ });
    assert.throws(() => run.stepFinish(), { field: 'gradients', message: /1 of its 2 shares/ });
    assert.throws(() => run.stepAdd([1, 2], new Float32Array(7)), { field: 'gradients' });
    assert.throws(() => shard.gradients(new Float32Array(3), b.ids, b.targets, 6), { field: 'params', message: /params has 12 bytes/ });
    assert.throws(() => shard.gradients(b.params, b.ids.slice(0, 5), b.targets.slice(0, 5), 6), { field: 'ids', message: /whole rows/ });
    assert.throws(() => shard.gradients(b.params, b.ids, b.targets, 2), { field: 'batch_rows' });
    assert.throws(() => run.stepBegin(7), { field: 'shares', message: /split 7 ways/ });
    const r = shard.gradients(b.params, b.ids.slice(3 * 16), b.targets.slice(3 * 16), 6);
    run.stepBegin(2); // a begun step begun again: the same batch
    run.stepOwn();
    run.stepAdd(r.grads, r.losses);
    assert.equal(run.stepFinish().step, 1);
    assert.throws(() => gpt.shard({ n_layer: 1 }), { field: /config/ });
  } finally {
    shard.free();
    run.free();
  }
});

/** The validation loss with the batches split `shares` ways over the shard models (the page's way). */
function splitEvaluate(run, shares, shards) {
  const n = run.info().n_params;
  const bufs = shards.map(() => new Float32Array(n));
  const b = run.evalBegin(shares, { into: bufs });
  assert.equal(b.params, undefined);
  const per = b.B * b.T;
  assert.equal(b.ids.length, b.batches * per);
  run.evalOwn();
  for (let k = 1; k < b.shares; k++) {
    const at = [b.bounds[k] * per, b.bounds[k + 1] * per];
    const r = shards[k - 1].evaluate(bufs[k - 1], b.ids.slice(...at), b.targets.slice(...at), b.B, b.T);
    assert.equal(r.losses.length, b.bounds[k + 1] - b.bounds[k]);
    run.evalAdd(r.losses);
  }
  return { begun: b, answer: run.evalFinish() };
}

test('the evaluation split by whole batches is evaluate()\'s, bit for bit, whatever the split', () => {
  const spec = { ...SPEC, eval_batches: 5, n_chars: 8000 };
  const run = gpt.create(spec);
  const shards = Array.from({ length: 4 }, () => gpt.shard(run.info().config));
  try {
    run.train(6);
    const whole = run.evaluate();
    assert.equal(whole.step, 6);
    for (const shares of [1, 2, 3, 4, 5, 8]) {
      const { begun, answer } = splitEvaluate(run, shares, shards);
      assert.equal(begun.batches, 5);
      assert.equal(begun.shares, Math.min(shares, 5));
      assert.equal(begun.bounds.length, begun.shares + 1);
      assert.ok(Object.is(answer.val_loss, whole.val_loss), `${shares} shares: ${answer.val_loss} vs ${whole.val_loss}`);
      assert.equal(answer.step, 6);
    }
    assert.ok(Object.is(splitEvaluate(run, 2, shards).answer.val_loss, whole.val_loss)); // and again
    assert.ok(Object.is(run.info().val_loss, whole.val_loss)); // the run keeps it, as evaluate() does
    // an evaluation between steps leaves the training as it was
    const other = gpt.create(spec);
    try {
      other.train(6);
      assert.deepEqual(run.train(3).losses, other.train(3).losses);
    } finally {
      other.free();
    }
    // refused by name; the run goes on
    assert.throws(() => run.evalBegin(0), { field: 'shares', message: /split 0 ways/ });
    assert.throws(() => run.evalOwn(), { field: 'losses', message: /no evaluation is begun/ });
    const b = run.evalBegin(2);
    assert.throws(() => run.evalAdd(new Float32Array(2)), { field: 'losses', message: /no share of the evaluation/ });
    run.evalOwn();
    assert.throws(() => run.evalAdd(new Float32Array(2)), { field: 'losses', message: /share 1 of the evaluation has 2 losses: it has 3 validation batches/ });
    assert.throws(() => run.evalFinish(), { field: 'losses', message: /1 of its 2 shares/ });
    assert.throws(() => run.evalBegin(2, { into: [new Float32Array(3)] }), { field: 'params', message: /evalBegin's into/ });
    const per = b.B * b.T;
    assert.throws(() => shards[0].evaluate(b.params, b.ids.slice(0, per - 1), b.targets.slice(0, per - 1), b.B, b.T), { field: 'ids', message: /whole batches/ });
    assert.throws(() => shards[0].evaluate(b.params, b.ids, b.targets, 0, b.T), { field: 'B' });
    assert.throws(() => shards[0].evaluate(b.params, b.ids, b.targets, b.B, 17), { field: 'T', message: /block_size = 16/ });
    assert.throws(() => shards[0].evaluate(new Float32Array(3), b.ids, b.targets, b.B, b.T), { field: 'params' });
    assert.ok(Object.is(run.evaluate().val_loss, splitEvaluate(run, 3, shards).answer.val_loss));
  } finally {
    for (const x of [run, ...shards]) x.free();
  }
});
