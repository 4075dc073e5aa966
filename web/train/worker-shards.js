// worker-shards.js — the training worker's data-parallel part (the calls' table's role "shards",
// src/api/gpt_shards.h): the helper workers (shard-worker.js), each run's mirrors in them, a
// chunk of steps split over them (parallelSteps) and the evaluation split by whole batches
// (parallelEvaluate). worker.js owns the runs and the requests; it gives this module what it
// reads of them through initShards. The protocol and why it is so: worker.js's head comment.
// Limits: MAX_WORKERS (worker.js) helpers at most, started on first need, never stopped.
import { mark, tracing } from './worker-trace.js';

/** The helpers: {worker, pending: Map id → {resolve, reject}}, started on first need. */
const helpers = [];
let helperId = 1;
// worker.js's state this part reads: gpt (the loaded API), workers (the count chosen), waiting
// (requests waiting for the chunk under way)
let ctx = { gpt: () => null, workers: () => 1, waiting: () => 0 };

/** Gives this part worker.js's state: {gpt, workers, waiting}, each a function. */
export function initShards(context) {
  ctx = context;
}

/** Run r's mirrors dropped from the helpers (the run is freed). */
export function dropMirrors(r) {
  helpers.forEach((h, k) => {
    if (h?.mirrors.delete(r)) askHelper(k, { op: 'unmirror', key: r.key }, []).catch(() => {});
  });
}

function helper(k) {
  if (helpers[k]) return helpers[k];
  const h = {
    worker: new Worker(new URL('./shard-worker.js', import.meta.url), { type: 'module' }), pending: new Map(),
    awaiting: new Map(), inbox: new Map(), shareError: null, mirrors: new Map(), // run → the step its mirror is at
  };
  const fail = (message) => {
    for (const { reject } of h.pending.values()) reject(new Error(message));
    for (const { reject } of h.awaiting.values()) reject(new Error(message));
    h.pending.clear();
    h.awaiting.clear();
    helpers[k] = null; // the next step starts another
  };
  h.worker.onmessage = (e) => {
    const m = e.data;
    if (m.share) { shareCame(h, k, m.share); return; }
    if (tracing() && m.result?.t) mark('recv', -1, { k, t: m.result.t });
    const p = h.pending.get(m.id);
    if (!p) return;
    h.pending.delete(m.id);
    if (m.ok) p.resolve(m.result);
    else p.reject(Object.assign(new Error(m.error.message), { field: m.error.field }));
  };
  h.worker.onerror = (e) => { e.preventDefault?.(); fail(`a training helper worker stopped: ${e.message || 'it could not load'}`); };
  helpers[k] = h;
  return h;
}

/** A mirror's share (shard-worker.js 'run'), to the step waiting for it or kept until it waits. */
function shareCame(h, k, m) {
  if (m.chunk !== liveChunk) { if (m.grads) keep(m.grads); return; } // an ended chunk's step
  if (tracing() && m.t) mark('recv', -1, { k, t: m.t });
  if (m.error) {
    h.shareError = { chunk: m.chunk, error: Object.assign(new Error(m.error.message), { field: m.error.field }) };
    for (const [key, w] of h.awaiting) if (key.startsWith(`${m.chunk}:`)) { w.reject(h.shareError.error); h.awaiting.delete(key); }
    return;
  }
  const key = `${m.chunk}:${m.step}`;
  const w = h.awaiting.get(key);
  if (w) { h.awaiting.delete(key); w.resolve(m); } else h.inbox.set(key, m);
}

/** Helper k's share of step `step` of chunk `chunk`. */
function shareOf(k, chunk, step) {
  const h = helper(k);
  const key = `${chunk}:${step}`;
  if (h.inbox.has(key)) { const m = h.inbox.get(key); h.inbox.delete(key); return Promise.resolve(m); }
  if (h.shareError?.chunk === chunk) return Promise.reject(h.shareError.error);
  return new Promise((resolve, reject) => h.awaiting.set(key, { resolve, reject }));
}

function askHelper(k, msg, transfer) {
  const h = helper(k);
  const id = helperId++;
  return new Promise((resolve, reject) => {
    h.pending.set(id, { resolve, reject });
    h.worker.postMessage({ id, ...msg }, transfer);
  });
}

/**
 * Gets the helpers of the next steps ready while nothing waits on them (the count is chosen, a run
 * is made to be trained): each started, its GPT module loaded and, given the run (create's, which
 * Start trains next), its model made and one share of its shape computed once, so that the first
 * step's clock holds neither a module's loading nor a first call's costs. On the threads path and for a solo run there are none. A helper that fails here fails
 * again on the step, which says why.
 */
export function prepareHelpers(r) {
  const gpt = ctx.gpt();
  const workers = ctx.workers();
  if (!gpt || gpt.threads > 1 || r?.solo) return Promise.resolve();
  const config = r?.info?.config;
  const B = r?.info?.train?.batch_size ?? 0;
  const shares = Math.min(workers, B);
  const ready = [];
  for (let k = 0; k < workers - 1; k++) {
    // a helper with a share also computes one on zeros of its share's shape (rows k + 1 of the
    // core's split, shard_row in src/core/model/train.h), thrown away: see shard-worker.js's prepare
    const rows = k + 1 < shares ? Math.floor((B * (k + 2)) / shares) - Math.floor((B * (k + 1)) / shares) : 0;
    const warm = config && rows > 0 ? { nParams: r.info.n_params, rows, batchRows: B } : null;
    ready.push(askHelper(k, { op: 'prepare', config, warm }, []).catch(() => {}));
  }
  return Promise.all(ready);
}

/**
 * Helpers 1 … shares − 1's own buffers of nParams floats for the split evaluation: each goes out
 * with the parameters and comes back with the answer (giveBack), reused evaluation after evaluation.
 */
function takeBuffers(shares, nParams) {
  const bufs = [];
  for (let k = 1; k < shares; k++) {
    const h = helper(k - 1);
    if (h.buf?.length !== nParams) h.buf = new Float32Array(nParams);
    bufs.push(h.buf);
    h.buf = null; // transferred: back with the answer
  }
  return bufs;
}

/** Helper k − 1's buffer back (an answer's, or one not sent), for the next step. */
function giveBack(k, buf) {
  if (helpers[k - 1]) helpers[k - 1].buf = buf;
}

/**
 * The validation loss with the batches split over the workers (gpt.js evalBegin … evalFinish):
 * each computes whole batches, so the answer is evaluate()'s to the bit, whatever the count.
 */
export async function parallelEvaluate(r, shares) {
  const bufs = takeBuffers(shares, r.info.n_params);
  const b = r.run.evalBegin(shares, { into: bufs });
  const per = b.B * b.T;
  const jobs = [];
  for (let k = 1; k < b.shares; k++) {
    const ids = b.ids.slice(b.bounds[k] * per, b.bounds[k + 1] * per);
    const targets = b.targets.slice(b.bounds[k] * per, b.bounds[k + 1] * per);
    const params = bufs[k - 1];
    jobs.push(askHelper(k - 1, { op: 'evaluate', config: r.info.config, params, ids, targets, B: b.B, T: b.T, trace: tracing() },
      [params.buffer, ids.buffer, targets.buffer]));
  }
  for (let k = b.shares; k < shares; k++) giveBack(k, bufs[k - 1]); // fewer batches than workers
  r.run.evalOwn(); // share 0 here, while the helpers compute theirs
  const parts = await Promise.all(jobs);
  for (let k = 1; k < b.shares; k++) {
    r.run.evalAdd(parts[k - 1].losses); // in share order
    giveBack(k, parts[k - 1].params);
  }
  return r.run.evalFinish();
}

let chunkSeq = 0;
let liveChunk = 0; // the chunk whose shares the mirrors send now (0: none)
let runSeq = 0;
const spare = []; // Float32Arrays of n_params that came back with the mirrors' shares: the next puts'
/** An array that came back, kept for a next put (a few: with three or more workers more come than go). */
const keep = (a) => { if (spare.length < 4) spare.push(a); };

/**
 * Each helper's mirror of run r made current (shard-worker.js 'mirror': r.run.save() loaded
 * there), unless it already is: its mirror stepped with every step since (h.mirrors: run → step).
 */
export async function syncMirrors(r, shares) {
  r.key ??= ++runSeq;
  const step = r.info.step;
  let bytes = null;
  const made = [];
  for (let k = 1; k < shares; k++) {
    const h = helper(k - 1);
    if (h.mirrors.get(r) === step) continue;
    h.mirrors.delete(r);
    if (!bytes) { const b = r.run.save(); bytes = b instanceof Uint8Array ? b : new Uint8Array(b); }
    const copy = bytes.slice();
    made.push(askHelper(k - 1, { op: 'mirror', key: r.key, bytes: copy, text: r.text ?? '' }, [copy.buffer])
      .then(() => { h.mirrors.set(r, step); }));
  }
  await Promise.all(made);
}

/**
 * Up to n steps split over the workers: train(n)'s answer. Each helper's mirror of the run steps
 * with this one: it samples the same batch, computes its share and sends its gradients at once;
 * this worker computes share 0 and sends its gradients to the helpers (and each helper's to the
 * others, with three or more); each side adds the shares in share order and applies the same
 * AdamW, so only gradients travel and no one waits for the other's add or AdamW.
 */
export async function parallelSteps(r, n, shares) {
  await syncMirrors(r, shares);
  const nParams = r.info.n_params;
  const chunk = ++chunkSeq;
  liveChunk = chunk;
  for (let k = 1; k < shares; k++) {
    helper(k - 1).worker.postMessage({ id: 0, op: 'run', chunk, key: r.key, shares, k, steps: n, traced: tracing() });
  }
  const losses = [], lrs = [], norms = [];
  let res = null;
  try {
    for (let i = 0; i < n; i++) {
      mark('begin', r.info.step + i);
      r.run.stepBegin(shares, { mirror: true });
      mark('sent');
      let g0 = spare.pop();
      if (g0?.length !== nParams) g0 = new Float32Array(nParams);
      const own = r.run.stepOwn({ grads: g0 }); // share 0 here, while the helpers compute theirs
      mark('own');
      for (let k = 1; k < shares; k++) {
        // the last helper takes the arrays themselves; the others copies
        const last = k === shares - 1;
        const grads = last ? own.grads : own.grads.slice();
        const l = last ? own.losses : own.losses.slice();
        helper(k - 1).worker.postMessage({ put: { chunk, step: i, j: 0, grads, losses: l } }, [grads.buffer, l.buffer]);
      }
      mark('posted');
      const parts = await Promise.all(Array.from({ length: shares - 1 }, (_, k) => shareOf(k, chunk, i)));
      mark('all');
      for (let k = 1; k < shares; k++) {
        const p = parts[k - 1];
        // with three or more, each helper's share to the others (copies)
        for (let o = 1; o < shares; o++) {
          if (o === k) continue;
          const grads = p.grads.slice(), l = p.losses.slice();
          helper(o - 1).worker.postMessage({ put: { chunk, step: i, j: k, grads, losses: l } }, [grads.buffer, l.buffer]);
        }
        r.run.stepAdd(p.grads, p.losses); // in share order
        keep(p.grads);
      }
      mark('added');
      res = r.run.stepFinish();
      mark('finish');
      losses.push(...res.losses);
      lrs.push(...res.lrs);
      norms.push(...res.grad_norms);
      for (let k = 1; k < shares; k++) helper(k - 1).mirrors.set(r, res.step); // stepped with this one
      if (res.diverged || ctx.waiting() > 0) break; // a request waits: it is answered after this step
    }
  } catch (err) {
    for (let k = 1; k < shares; k++) helpers[k - 1]?.mirrors.delete(r); // made again on the next chunk
    throw err;
  } finally {
    liveChunk = 0;
    for (let k = 1; k < shares; k++) {
      const h = helpers[k - 1];
      if (!h) continue;
      for (const key of h.inbox.keys()) if (key.startsWith(`${chunk}:`)) h.inbox.delete(key);
    }
  }
  return { ...res, losses: Float32Array.from(losses), lrs: Float32Array.from(lrs), grad_norms: Float32Array.from(norms) };
}

