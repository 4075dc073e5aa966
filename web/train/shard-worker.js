// shard-worker.js — a helper of the training worker (worker.js) for data-parallel training: it
// holds a model of the run's config (gpt.shard) and computes one share of each step's batch, with
// the parameters it is sent, into gradients and per-token losses that it sends back, and its share
// of the validation batches into their losses. The training worker sums the shares in a fixed
// order and applies AdamW; this worker keeps no training state.
//
// Protocol (worker.js is the other side; every array is transferred, none copied through JSON):
//   → {id, op: 'prepare', config?, warm?: {nParams, rows, batchRows}}  ← {id, ok: true, result: {}}:
//      loads the GPT module (and, with a config, makes its model; with warm, computes one share of
//      rows rows on zeros, thrown away) ahead of the first step, so that none is on a step's clock
//   → {id, op: 'gradients', config, params (Float32Array), ids, targets (Int32Array, whole rows),
//      batchRows}   ← {id, ok: true, result: {loss, grads (Float32Array), losses (Float32Array)}}
//   grads is the params array sent, its buffer transferred back (the training worker reuses it).
//   → {id, op: 'evaluate', config, params, ids, targets (whole validation batches), B, T}
//      ← {id, ok: true, result: {losses (Float32Array, one per batch), params (the array sent, back)}}
//   ← {id, ok: false, error: {message, field}} when the core refuses
//   With trace: true in a request, its answer's result also holds t: [received, done] (ms,
//   performance.timeOrigin + now(): one clock across the workers) for the training worker's trace.
// A model is made for the first config it is sent and remade when the config changes.
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

const ops = {
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
  async gradients({ config, params, ids, targets, batchRows }) {
    const r = (await modelFor(config)).gradients(params, ids, targets, batchRows, { grads: params }); // the same buffer goes back
    return { value: { loss: r.loss, grads: r.grads, losses: r.losses }, transfer: [r.grads.buffer, r.losses.buffer] };
  },
  async evaluate({ config, params, ids, targets, B, T }) {
    const r = (await modelFor(config)).evaluate(params, ids, targets, B, T);
    return { value: { losses: r.losses, params }, transfer: [r.losses.buffer, params.buffer] };
  },
};

const clock = () => performance.timeOrigin + performance.now();

self.onmessage = async (e) => {
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
