// shard-worker.js — a helper of the training worker (worker.js) for data-parallel training: it
// holds a mirror of each run (below), which computes its share of each step's batch and applies
// the same AdamW as the training worker, and a model of the run's config (gpt.shard) that
// computes its share of the validation batches, with the parameters it is sent, into their losses.
//
// Protocol (worker.js is the other side; every array is transferred, none copied through JSON):
//   → {id, op: 'prepare', config?, warm?: {nParams, rows, batchRows}}  ← {id, ok: true, result: {}}:
//      loads the GPT module (and, with a config, makes its model; with warm, computes one share of
//      rows rows on zeros, thrown away) ahead of the first step, so that none is on a step's clock
//   → {id, op: 'evaluate', config, params, ids, targets (whole validation batches), B, T}
//      ← {id, ok: true, result: {losses (Float32Array, one per batch), params (the array sent, back)}}
//   ← {id, ok: false, error: {message, field}} when the core refuses
//   With trace: true in a request, its answer's result also holds t: [received, done] (ms,
//   performance.timeOrigin + now(): one clock across the workers) for the training worker's trace.
// A model is made for the first config it is sent and remade when the config changes.
//
// The training steps go through the mirror (only gradients travel, nothing waits on one
// worker's AdamW): the run itself, loaded from the training worker's save() and stepping with it.
//   → {id, op: 'mirror', key, bytes (Uint8Array: run.save()), text}  ← {id, ok: true, result: {}}:
//      the run key's mirror (re)loaded from bytes (a run trained on the learner's text needs it)
//   → {id, op: 'unmirror', key}  ← {id, ok: true, result: {}}: that mirror freed
//   → {id, op: 'run', chunk, key, shares, k, steps, traced}  ← {id, ok: true, result: {}}: mirror
//      key takes `steps` steps, computing share k of each (gpt.js stepBegin, stepShare); each share
//      goes out at once, unasked, as {share: {chunk, step (0 … steps − 1), k, loss, grads
//      (Float32Array, n_params), losses (Float32Array, per token), t (traced): [began, sent]}} or
//      {share: {chunk, error: {message, field}}}; then the other shares of that step come as
//   → {put: {chunk, step, j, grads, losses}} (no answer): added in share order (stepAdd; its own in
//      its turn), then stepFinish, the leader's AdamW, and the next step begins at once. Shares of
//      another chunk are dropped: a chunk the training worker ended early leaves this mirror with a
//      step begun, which its next stepBegin begins again from the same batch.
// The arrays sent are reused: each put's grads comes back as a later share's.
import { loadGpt } from '../gpt.js';

let gpt = null;
let loading = null; // loadGpt's promise: a request that comes while the module loads waits for the same one
let shard = null;
let shardConfig = '';

/** The GPT module, loaded once. */
async function load() {
  loading ??= loadGpt({ locateFile: (path) => new URL(`../gen/${path}`, import.meta.url).href })
    .catch((e) => { loading = null; throw e; }); // the next request tries again
  gpt = await loading;
  return gpt;
}

/** The model of this config (made, or remade when the config changes). */
async function modelFor(config) {
  await load();
  const key = JSON.stringify(config);
  if (key !== shardConfig) {
    shard?.free();
    shard = null;
    shard = gpt.shard(config);
    shardConfig = key;
  }
  return shard;
}

const clock = () => performance.timeOrigin + performance.now();
const mirrors = new Map(); // key → the run (gpt.load of the training worker's save())
let mirroring = Promise.resolve(); // the mirror being loaded
let job = null; // the chunk under way: {chunk, key, run, shares, k, steps, done, next, got, trace}
const spare = []; // Float32Arrays that came with puts, for the next shares' gradients
/** An array that came, kept for a next share (a few: with three or more workers more come than go). */
const keep = (a) => { if (spare.length < 4) spare.push(a); };

function shareOut(msg, transfer) { self.postMessage({ share: msg }, transfer); }

/** The next step of the chunk: its batch, this worker's share, sent at once. */
function beginStep() {
  const t0 = clock();
  const { run, shares, k } = job;
  run.stepBegin(shares, { mirror: true });
  const n = job.nParams;
  let grads = spare.pop();
  if (grads?.length !== n) grads = new Float32Array(n);
  const r = run.stepShare(k, { grads });
  job.next = 0;
  const msg = { chunk: job.chunk, step: job.done, k, loss: r.loss, grads: r.grads, losses: r.losses };
  if (job.trace) msg.t = [t0, clock()];
  shareOut(msg, [r.grads.buffer, r.losses.buffer]);
}

/** Adds the shares that came, in order; with all of them, finishes the step and begins the next. */
function advance() {
  while (job) {
    const { run, shares, k } = job;
    while (job.next < shares) {
      if (job.next === k) { job.next++; continue; } // the core adds it in its turn
      const g = job.got.get(`${job.done}:${job.next}`);
      if (!g) return;
      job.got.delete(`${job.done}:${job.next}`);
      run.stepAdd(g.grads, g.losses);
      keep(g.grads);
      job.next++;
    }
    const res = run.stepFinish();
    job.done++;
    if (res.diverged || job.done >= job.steps) { job = null; return; }
    beginStep();
  }
}

function failJob(err) {
  if (job) shareOut({ chunk: job.chunk, error: { message: err?.message ?? String(err), field: err?.field ?? '' } }, []);
  job = null;
}

function onPut({ chunk, step, j, grads, losses }) {
  if (!job || job.chunk !== chunk || step < job.done) { keep(grads); return; } // an ended chunk's
  job.got.set(`${step}:${j}`, { grads, losses });
  if (!job.run) return; // its mirror still loads: run's advance() takes it
  try { advance(); } catch (err) { failJob(err); }
}

const ops = {
  async mirror({ key, bytes, text }) {
    const made = (async () => {
      await load();
      mirrors.get(key)?.free();
      mirrors.delete(key);
      mirrors.set(key, gpt.load(bytes, text || undefined));
    })();
    mirroring = made.catch(() => {});
    await made;
    return { value: {}, transfer: [] };
  },
  async unmirror({ key }) {
    mirrors.get(key)?.free();
    mirrors.delete(key);
    if (job?.key === key) job = null;
    return { value: {}, transfer: [] };
  },
  async run({ chunk, key, shares, k, steps, traced }) {
    const mine = { chunk, key, run: null, shares, k, steps, done: 0, next: 0, got: new Map(), trace: traced };
    job = mine; // puts that come while a mirror still loads wait in got
    await mirroring;
    if (job !== mine) return { value: {}, transfer: [] };
    try {
      job.run = mirrors.get(key);
      if (!job.run) throw new Error('a training helper has no copy of this run');
      job.nParams = job.run.info().n_params; // once a chunk, not a step: info() is JSON
      beginStep();
      advance(); // the shares that came meanwhile
    } catch (err) { failJob(err); }
    return { value: {}, transfer: [] };
  },
  async prepare({ config, warm }) {
    const m = await (config ? modelFor(config) : load());
    if (config && warm) {
      // one share's forward and backward on zeros, of the shape the steps will send, thrown away:
      // a module's first call of the backward costs several steps' time in Chromium (its functions
      // compiled on first use, the activations' memory grown), which the first step would
      // otherwise wait for. The model keeps nothing between calls, so every step's numbers stay.
      const ids = new Int32Array(warm.rows * config.block_size);
      m.gradients(new Float32Array(warm.nParams), ids, ids, warm.batchRows);
    }
    return { value: {}, transfer: [] };
  },
  async evaluate({ config, params, ids, targets, B, T }) {
    const r = (await modelFor(config)).evaluate(params, ids, targets, B, T);
    return { value: { losses: r.losses, params }, transfer: [r.losses.buffer, params.buffer] };
  },
};

self.onmessage = async (e) => {
  if (e.data?.put) { onPut(e.data.put); return; }
  const t0 = clock();
  const { id, op, trace, ...args } = e.data ?? {};
  try {
    if (!ops[op]) throw new Error(`unknown request ${op}`);
    const { value: result, transfer } = await ops[op](args);
    if (trace) result.t = [t0, clock()]; // the training worker's step trace: when this share came and ended
    self.postMessage({ id, ok: true, result }, transfer);
  } catch (err) {
    self.postMessage({ id, ok: false, error: { message: err?.message ?? String(err), field: err?.field ?? '' } });
  }
};
