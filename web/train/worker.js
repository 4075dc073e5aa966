// worker.js — the training page's Web Worker: it owns the wasm GPT (web/gpt.js → web/gen/
// gpt_core.mjs) and every run, so the page's thread never runs the model. Training goes in chunks
// of steps sized to about CHUNK_MS each; between chunks the worker returns to its event loop, so
// pause, reset and the other requests are answered within one chunk (a data-parallel chunk, longer,
// ends after the step under way when a request comes).
//
// Protocol (client.js is the page's side):
//   page → worker  {id, op, …}            one request; answered by {id, ok: true, result} or
//                                          {id, ok: false, error: {message, field}}
//   worker → page  {event: 'progress', run, step, steps, losses (Float32Array), first, val,
//                   (losses[k] is the loss of step first + k, counted from 0 as the core does;
//                   step: the steps done; val: the validation loss after them, or null)
//                   elapsed, tokens_per_sec, sample, diverged, divergence, done,
//                   head_scores: [{step, induction, previous}] with the spec's head_scores_interval, else null}
//                  {event: 'stopped', run, reason: 'done' | 'diverged' | 'paused'}
// Ops: init → {tasks, kernels}; memory {spec} → {bytes, limit}, the core's memory estimate for a
// run spec (gpt.memoryEstimate; past the limit, the core's error); create {run, spec, sample} →
// info, once the helpers of the workers path are ready for it (the old run of that name is
// freed); start {runs} (trains those runs, interleaved, until each is done, diverged or paused);
// pause {runs}; free {run}; set_sample {run, sample}; info {run};
// maps {run, prompt, max_tokens?} → {tokens, T, n_layer, n_head, weights (L,NH,T,T), specs [L][NH],
// mean (L,T,T), rollout (L,T,T)}, or {too_long: {tokens, max}} past max_tokens of the model's tokens;
// next_token {run, spec} → gpt.js nextToken's answer (the next-token distribution);
// surprisal {run, spec} → gpt.js surprisal's answer (−log p per token);
// walk {run, spec} → gpt.js blockTrace's answer with specs [L][NH] (each head's stepper spec);
// walk_kv {run, spec with kv_layer} → {keys, values} of that layer (a trace too large to carry them);
// weight_row {run, spec} → gpt.js weightRow's answer;
// interp {run, call, spec} → an interpretability call's answer (below: prompts past the context refused);
// call {run, call, args} → gpt.js run.call(call, ...args): any call of the core's table (its typed
// arrays transferred), so that a new call reaches the page without an op of its own;
// gen_start {run, spec} / gen_next {run} → the core's step info with logits, full_logits,
// cache_attention, cache_keys, cache_values; save {run} → {bytes}; load {run, bytes, text} → info
// (on failure the run that was there stays); open {run, files: [File]} → info with "opened" and
// "memory" (gpt.openMemory() after opening: {left, max, size}, size the wasm memory now) (gpt.js
// openModel: the model file read in slices, each announced by {event: 'open_progress', run,
// loaded, total, name}; on failure the run that was there stays); finetune_memory {run, spec} → gpt.js
// finetuneMemory's answer; finetune {run, spec, text} → info with val_loss (gpt.js finetune: the
// opened model becomes a run on the text, then trained by start like any run, on this worker alone:
// a model from elsewhere may be GPT-2's size, and each helper or thread would hold another copy of
// its gradients and activations; refused, the model stays); workers {n} → {workers, cores, path}: how many
// workers (path 'workers') or threads (path 'threads') share each training step (below; the
// helpers of the workers path are started then); trace {on} → the step trace's marks since it was
// turned on (bench/train_bench.mjs; [what, ms, step, extra], below), kept from now on while on;
// while it is on, a run on one share (one worker, or the threads path) trains one step per call,
// each marked with its time ('one').
//
// Data-parallel training: with workers = n > 1, each step's batch (the same for a seed and step
// whatever n is) is split by rows into n shares; this worker computes share 0 while n − 1 helper
// workers (shard-worker.js, started when the count is chosen and kept) compute the others. Each
// helper holds a mirror of the run (the run's save() loaded there, made again only when it has
// not stepped with every step since): it samples the same batch and sends its share's gradients
// as soon as they are computed; this worker sends its own share's to the helpers (and, with
// three or more, each helper's to the others); every side adds the shares in share order and
// applies the same AdamW, so only gradients travel (transferred ArrayBuffers, reused step after
// step), the helpers' parameters stay this run's bit for bit, and nobody waits for another's add
// or AdamW. The helpers are this worker's own workers, so the exchange never goes through the
// page's thread. The same n gives the same numbers every time (the bits of the exchange before
// the mirrors: the same shares, summed in the same order); another n agrees within the fast
// tier's tolerance. The evaluation is split too, by whole validation batches (gpt.js evalBegin
// … evalFinish, the parameters sent to each helper's shard model): each batch's loss is the
// same forward pass wherever it runs and the sum keeps the batches' order, so
// the validation loss of given parameters is evaluate()'s to the bit, whatever n. A step is
// whole before any other request touches the run (busy below), so pause, save and the rest see
// the run between steps. The count is not in the checkpoint: a run saved with n resumes with any.
//
// Wasm threads: where the page is cross-origin isolated (COOP + COEP, so SharedArrayBuffer and
// Atomics.wait work), init loads the threaded module instead (gpt.js loadGpt({threads}), one module
// or the other) and the count sets the training run's threads (run.setThreads): the core's own
// pool on pthreads over one shared memory, as natively, so no parameters or gradients travel; the
// pool's threads share evaluate()'s batches the same way.
// One run holds the threads at a time (the one training now; the pool's workers are the module's).
import { loadGpt, threadsAvailable } from '../gpt.js';
import { clock, mark, takeTrace, tracing } from './worker-trace.js';
import { dropMirrors, initShards, parallelEvaluate, parallelSteps, prepareHelpers, syncMirrors } from './worker-shards.js';

const CHUNK_MS = 60;
/**
 * A chunk of data-parallel steps aims at this instead (the page redraws its figures at most every
 * 250 ms): each chunk's end is a progress message to the page's thread and a return to this
 * worker's event loop while the helpers wait idle, so fewer of them leave the helpers less idle
 * time. A request that comes meanwhile still waits at most one step: it ends the chunk (waiting).
 */
const PARALLEL_CHUNK_MS = 250;
const SAMPLE_TOKENS = 40;

let gpt = null;
let loading = null; // loadGpt's promise: requests that arrive while it loads wait for the same one
/** name → {run, spec, info, sample: {prompt, every}, training, chunk, elapsed, tokens, evalEvery, steps} */
const runs = new Map();
let looping = false;
let workers = 1; // the workers sharing each step of this worker's runs (1: this one alone)
const MAX_WORKERS = 16;
let busy = null; // a chunk of data-parallel steps under way: requests that touch a run wait for it
let waiting = 0; // requests waiting for that chunk: it ends after the step under way

const post = (msg, transfer = []) => self.postMessage(msg, transfer);
initShards({ gpt: () => gpt, workers: () => workers, waiting: () => waiting });


function errorOf(e) {
  return { message: e?.message ?? String(e), field: e?.field ?? '' };
}

function need(name) {
  const r = runs.get(name);
  if (!r) throw Object.assign(new Error('no model yet: press Start to create one'), { field: 'model' });
  return r;
}

let pooled = null; // the run whose trainer holds the module's threads (threads path)

/** Gives run r the threads for its next steps (threads path): the run that had them gives them back. */
function useThreads(r) {
  const n = Math.min(workers, gpt.threads);
  if (pooled && pooled !== r && !pooled.run.freed) { pooled.run.setThreads(1); pooled.threads = 1; }
  pooled = r;
  if (r.threads !== n) { r.run.setThreads(n); r.threads = n; }
}

/**
 * Run `name` for a forward that learns nothing (maps, next token, surprisal, the walk, generation,
 * interpretability, a call): on the threads path an opened model (not fine-tuned) takes the
 * module's threads for it (GPT::set_threads splits its products' columns and heads: the same bits
 * whatever the count) unless another run is training with them.
 */
function forInference(name) {
  const r = need(name);
  if (gpt.threads > 1 && r.run.opened && !r.solo && !(pooled && pooled !== r && pooled.training)) useThreads(r);
  return r;
}

function free(name) {
  const r = runs.get(name);
  if (!r) return;
  dropMirrors(r); // the helpers' mirrors of it
  if (pooled === r) pooled = null;
  r.training = false;
  try { r.run.free(); } catch { /* already freed */ }
  runs.delete(name);
}

function describe(r) {
  const info = r.run.info();
  r.info = info;
  return info;
}

/** A loss as a number: the core's JSON spells non-finite values "nan", "inf", "-inf". */
const num = (v) => (typeof v === 'number' ? v : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v == null ? null : NaN);

const copy = (a) => (a ? Float32Array.from(a) : new Float32Array(0));

function genInfo(s) {
  const out = {
    token: s.token, text: s.text, base: s.base, cache_length: s.cache_length, rebuilt: s.rebuilt,
    generated: s.generated, tokens: s.tokens, max_abs_diff: s.max_abs_diff, draw: s.draw, distribution: s.distribution,
    logits: copy(s.logits), full_logits: copy(s.full_logits), cache_attention: copy(s.cache_attention),
    cache_keys: copy(s.cache_keys), cache_values: copy(s.cache_values),
  };
  return out;
}

/**
 * train(n) one step at a time, each step marked ['one', start, step, ms] (the trace is on): the
 * one-share path's steps each timed on their own, as W3 times them (bench/train_bench.mjs).
 */
function stepByStep(r, n) {
  const losses = [], lrs = [], norms = [];
  let res = null;
  for (let i = 0; i < n; i++) {
    const t0 = clock();
    res = r.run.train(1);
    mark('one', r.info.step + i, clock() - t0);
    losses.push(...res.losses);
    lrs.push(...res.lrs);
    norms.push(...res.grad_norms);
    if (res.diverged) break;
  }
  return { ...res, losses: Float32Array.from(losses), lrs: Float32Array.from(lrs), grad_norms: Float32Array.from(norms) };
}

const ops = {
  trace({ on }) { return takeTrace(on); },
  async init() {
    const threads = threadsAvailable() ? Math.min(MAX_WORKERS, Math.max(2, self.navigator?.hardwareConcurrency ?? 1)) : 1;
    loading ??= loadGpt({ threads, locateFile: (path) => new URL(`../gen/${path}`, import.meta.url).href });
    gpt = await loading;
    return { tasks: gpt.tasks() };
  },
  memory({ spec }) { return gpt.memoryEstimate(spec); },
  workers({ n }) {
    if (!Number.isInteger(n) || n < 1 || n > MAX_WORKERS) {
      throw Object.assign(new Error(`workers is ${n}: it must be a whole number from 1 to ${MAX_WORKERS}`), { field: 'workers' });
    }
    workers = n;
    prepareHelpers(null);
    const threads = gpt.threads > 1;
    return { workers: threads ? Math.min(n, gpt.threads) : n, cores: self.navigator?.hardwareConcurrency ?? 1, path: threads ? 'threads' : 'workers' };
  },
  async create({ run: name, spec, sample }) {
    const run = gpt.create(spec); // throws GptError naming the field; the old run stays
    free(name);
    const r = { run, spec, text: spec?.text ?? '', sample: sample ?? { prompt: '', every: 0 }, training: false, chunk: 1, elapsed: 0, tokens: 0 };
    runs.set(name, r);
    const info = describe(r);
    // their models and their mirrors of this run are made while this one evaluates
    const ready = prepareHelpers(r).then(() => (gpt.threads > 1 ? null : syncMirrors(r, Math.min(workers, info.train.batch_size)))).catch(() => {});
    r.steps = info.steps;
    r.evalEvery = info.train.eval_interval;
    // the validation loss before any training: the curve's first point
    const ev = run.evaluate();
    r.val0 = num(ev.val_loss);
    // the run is made when its helpers are ready too (their module loaded, their model made and
    // warmed): the first step, and the training clock, then hold no worker's start, as with one
    // worker, whose module loads with the page. A helper that failed says why on the first step.
    await ready;
    return { ...info, val_loss: r.val0 };
  },
  start({ runs: names }) {
    for (const n of names) {
      const r = need(n);
      if (r.info?.diverged) continue;
      r.training = true;
    }
    if (!looping) loop();
    return { started: names };
  },
  pause({ runs: names }) {
    for (const n of names) { const r = runs.get(n); if (r) r.training = false; }
    return { paused: names, step: names.map((n) => runs.get(n)?.info?.step ?? 0) };
  },
  free({ run: name }) { free(name); return {}; },
  set_sample({ run: name, sample }) { need(name).sample = sample; return {}; },
  info({ run: name }) { return describe(need(name)); },
  maps({ run: name, prompt, max_tokens: max }) {
    const r = forInference(name);
    if (max != null) {
      // the limit is on the model's tokens (GPT-2's BPE pieces, ids of [15496][11]), counted by the
      // core's tokenizer; a prompt it cannot read is left to runPrompt, whose message names the fault
      let n = -1;
      try { n = r.run.encode(prompt).ids.length; } catch { /* runPrompt says why */ }
      if (n > max) return { too_long: { tokens: n, max } };
    }
    const res = r.run.runPrompt(prompt);
    const specs = [];
    for (let l = 0; l < res.n_layer; l++) {
      const row = [];
      for (let h = 0; h < res.n_head; h++) row.push(r.run.headSpec(l, h));
      specs.push(row);
    }
    const weights = copy(res.weights);
    const sum = r.run.attentionSummary();
    const mean = copy(sum.head_mean);
    const rollout = copy(sum.rollout);
    return { transfer: [weights.buffer, mean.buffer, rollout.buffer], value: { tokens: res.tokens, T: res.T, n_layer: res.n_layer, n_head: res.n_head, weights, specs, mean, rollout } };
  },
  next_token({ run: name, spec }) { return forInference(name).run.nextToken(spec); },
  surprisal({ run: name, spec }) { return forInference(name).run.surprisal(spec); },
  async walk({ run: name, spec }) {
    const r = forInference(name);
    await gpt.loadFull(); // the walk's C++ is the full module, fetched on the first walk
    const trace = r.run.blockTrace(spec);
    // the stepper's spec of each head for the same prompt (the walk's links into the stepper)
    const m = r.run.runPrompt(spec.prompt);
    const specs = [];
    for (let l = 0; l < m.n_layer; l++) specs.push(Array.from({ length: m.n_head }, (_, h) => r.run.headSpec(l, h)));
    return { ...trace, specs };
  },
  async walk_kv({ run: name, spec }) {
    const r = forInference(name);
    await gpt.loadFull();
    const layer = r.run.blockTrace(spec).layers[spec.kv_layer];
    return { keys: layer.keys, values: layer.values };
  },
  async weight_row({ run: name, spec }) {
    await gpt.loadFull();
    return need(name).run.weightRow(spec);
  },
  gen_start({ run: name, spec }) {
    const g = genInfo(forInference(name).run.generateStart(spec));
    return { transfer: transfers(g), value: g };
  },
  gen_next({ run: name }) {
    const g = genInfo(forInference(name).run.generateNext());
    return { transfer: transfers(g), value: g };
  },
  save({ run: name }) {
    const r = need(name);
    const bytes = r.run.save();
    const out = bytes instanceof Uint8Array ? bytes.slice() : new Uint8Array(bytes);
    return { transfer: [out.buffer], value: { bytes: out, info: describe(r) } };
  },
  async open({ run: name, files, name: model }) {
    // user-timing measures for bench/chromium_bench.mjs --open: "open module" (the full module
    // fetched and compiled), "open request" (the whole request); gpt-open.js measures its phases
    const t0 = performance.now();
    await gpt.loadFull();
    performance.measure('open module', { start: t0 });
    const run = await gpt.openModel(files, { name: model, onProgress: (p) => post({ event: 'open_progress', run: name, ...p }) });
    free(name);
    const r = { run, spec: null, sample: { prompt: '', every: 0 }, training: false, chunk: 1, elapsed: 0, tokens: 0 };
    runs.set(name, r);
    const info = describe(r);
    info.val_loss = num(info.val_loss);
    r.steps = info.steps;
    r.evalEvery = info.train.eval_interval;
    performance.measure('open request', { start: t0 });
    return { ...info, opened: run.opened, memory: gpt.openMemory() };
  },
  async call({ run: name, call, args = [] }) {
    const r = forInference(name);
    if (gpt.calls().find((c) => c.name === call)?.full) await gpt.loadFull(); // the full module's
    const value = r.run.call(call, ...args);
    const arrays = ArrayBuffer.isView(value) ? [value] : Object.values(value).filter((v) => ArrayBuffer.isView(v));
    return { transfer: arrays.map((a) => a.buffer), value };
  },
  /**
   * An interpretability call (lens, attribute, ablate, patch, attribution_patch, head_scores) on
   * the run: a prompt longer than the model's context is refused naming its field (the core would
   * keep its last block_size tokens); reference 'validation' is the run's first validation windows
   * (at most 8) as the mean ablation's texts.
   */
  interp({ run: name, call, spec }) {
    const r = forInference(name);
    const S = r.info.config.block_size;
    for (const key of ['prompt', 'clean', 'corrupted']) {
      if (typeof spec[key] !== 'string') continue;
      let n = 0;
      try { n = r.run.encode(spec[key]).ids.length; } catch { continue; } // the call names the fault
      if (n > S) throw Object.assign(new Error(`the ${key} has ${n} tokens, more than the model's context of ${S}`), { field: key });
    }
    if (spec.reference === 'validation') {
      if (r.info.has_data === false) throw Object.assign(new Error('this model has no validation set: give reference texts'), { field: 'reference' });
      spec = { ...spec, reference: r.run.surprisal({ validation: true }).windows.slice(0, 8).map((w) => w.tokens.join('')) };
    }
    return r.run.call(call, spec);
  },
  finetune_memory({ run: name, spec }) { return need(name).run.finetuneMemory(spec); },
  finetune({ run: name, spec, text }) {
    const r = need(name);
    // a fine-tune trains on this worker's one thread: the threads its forward had go back first
    if (r.threads > 1) { r.run.setThreads(1); r.threads = 1; }
    if (pooled === r) pooled = null;
    const info = r.run.finetune(spec, text); // refused: the opened model stays as it was
    Object.assign(r, { spec: null, training: false, chunk: 1, elapsed: 0, tokens: 0, solo: true });
    r.info = info;
    r.steps = info.steps;
    r.evalEvery = info.train.eval_interval;
    const ev = r.run.evaluate(); // the curve's first point: the opened model on the text
    return { ...info, val_loss: num(ev.val_loss) };
  },
  load({ run: name, bytes, text, sample }) {
    const run = gpt.load(bytes, text || undefined); // a bad file throws here: the current run stays
    free(name);
    const r = { run, spec: null, text: text || '', sample: sample ?? { prompt: '', every: 0 }, training: false, chunk: 1, elapsed: 0, tokens: 0 };
    runs.set(name, r);
    const info = describe(r);
    prepareHelpers(null); // their module only: a checkpoint may be large, and may never be trained here
    info.val_loss = num(info.val_loss);
    r.steps = info.steps;
    r.evalEvery = info.train.eval_interval;
    return info;
  },
};

function transfers(g) {
  return [g.logits.buffer, g.full_logits.buffer, g.cache_attention.buffer, g.cache_keys.buffer, g.cache_values.buffer];
}

self.onmessage = async (e) => {
  const { id, op, ...args } = e.data ?? {};
  if (!ops[op]) { post({ id, ok: false, error: { message: `unknown request ${op}`, field: '' } }); return; }
  try {
    if (!gpt) await ops.init(); // a second worker (the experiments') starts with its first request
    // a chunk of steps is whole first: a pause is answered after the chunk's progress event, so the
    // page's step count when it sees "paused" is the run's (as with one worker, whose chunk runs
    // between two requests)
    while (busy && op !== 'start' && op !== 'workers') {
      waiting++;
      try { await busy; } finally { waiting--; }
    }
    const out = await ops[op](args);
    if (out && out.transfer) post({ id, ok: true, result: out.value }, out.transfer);
    else post({ id, ok: true, result: out });
  } catch (err) {
    post({ id, ok: false, error: errorOf(err) });
  }
};

/** Back to the event loop (a message posted to ourselves runs after the queued requests). */
const yieldNow = () => new Promise((resolve) => {
  const ch = new MessageChannel();
  ch.port1.onmessage = () => resolve();
  ch.port2.postMessage(0);
});

/**
 * One chunk of one run: up to the next evaluation, the next sample or the end, about CHUNK_MS
 * (data-parallel: PARALLEL_CHUNK_MS, or less when a request comes).
 */
async function chunk(name, r) {
  const info = r.info;
  const step = info.step;
  const left = r.steps - step;
  if (left <= 0) { r.training = false; post({ event: 'stopped', run: name, reason: 'done', step }); return; }
  const toEval = r.evalEvery - (step % r.evalEvery);
  const every = r.sample.every;
  const toSample = every > 0 ? every - (step % every) : Infinity;
  const n = Math.max(1, Math.min(r.chunk, left, toEval, toSample));
  const t0 = performance.now();
  // a solo run (a fine-tune) trains here alone, on one thread
  const threaded = gpt.threads > 1 && !r.solo;
  const shares = threaded || r.solo ? 1 : Math.min(workers, info.train.batch_size);
  let res;
  let val = null;
  if (threaded) useThreads(r); // the core's pool splits the steps and the evaluation
  if (shares > 1) {
    let done;
    busy = new Promise((resolve) => { done = resolve; });
    try {
      res = await parallelSteps(r, n, shares);
      // the shares' steps record no head scores: this worker's run scores its heads at the chunk's
      // end when that is a multiple of the interval (chunks end at evaluations; the page's interval
      // is the evaluation's)
      const hsEvery = r.spec?.head_scores_interval ?? 0;
      if (!res.diverged && hsEvery > 0 && res.step % hsEvery === 0) {
        const h = r.run.headScores({});
        res.head_scores = [{ step: res.step, induction: h.induction, previous: h.previous }];
      }
      if (!res.diverged && (res.step % r.evalEvery === 0 || res.step === r.steps)) {
        mark('eval');
        val = num((await parallelEvaluate(r, shares)).val_loss);
        mark('evaled');
      }
    } finally {
      busy = null;
      done();
    }
  } else {
    res = tracing() ? stepByStep(r, n) : r.run.train(n);
    if (!res.diverged && (res.step % r.evalEvery === 0 || res.step === r.steps)) val = num(r.run.evaluate().val_loss);
  }
  const done = res.losses.length;
  const newStep = res.step;
  let sample = null;
  if (!res.diverged && every > 0 && r.sample.prompt && (newStep % every === 0 || newStep === r.steps)) {
    try {
      const s = r.run.sample({ prompt: r.sample.prompt, max_new_tokens: SAMPLE_TOKENS, greedy: true });
      sample = { step: newStep, prompt: r.sample.prompt, text: s.new_text };
    } catch (err) {
      sample = { step: newStep, prompt: r.sample.prompt, error: errorOf(err).message };
    }
  }
  const dt = performance.now() - t0;
  mark('chunk', newStep);
  r.elapsed += dt;
  r.tokens += done * (info.tokens_per_step ?? 0);
  // aim the next chunk at CHUNK_MS (PARALLEL_CHUNK_MS for data-parallel steps)
  const per = dt / Math.max(1, done);
  r.chunk = Math.max(1, Math.min(1000, Math.round((shares > 1 ? PARALLEL_CHUNK_MS : CHUNK_MS) / Math.max(per, 0.01))));
  info.step = newStep;
  if (res.diverged) { info.diverged = true; info.divergence = res.divergence; }
  const losses = Float32Array.from(res.losses);
  const finished = res.diverged || newStep >= r.steps;
  post({
    event: 'progress', run: name, first: step, step: newStep, steps: r.steps, losses, val, sample, head_scores: res.head_scores ?? null,
    elapsed: r.elapsed, tokens_per_sec: r.tokens / (r.elapsed / 1000), diverged: res.diverged, divergence: res.divergence,
    done: finished,
  }, [losses.buffer]);
  if (finished) {
    r.training = false;
    post({ event: 'stopped', run: name, reason: res.diverged ? 'diverged' : 'done', step: newStep });
  }
}

async function loop() {
  looping = true;
  try {
    for (;;) {
      const active = [...runs.entries()].filter(([, r]) => r.training);
      if (active.length === 0) break;
      for (const [name, r] of active) {
        if (!r.training || runs.get(name) !== r) continue;
        try {
          await chunk(name, r);
        } catch (err) {
          r.training = false;
          post({ event: 'stopped', run: name, reason: 'error', error: errorOf(err) });
        }
        await yieldNow();
      }
    }
  } finally {
    looping = false;
  }
}
