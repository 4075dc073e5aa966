// worker.js — the training page's Web Worker: it owns the wasm GPT (web/gpt.js → web/gen/
// gpt_core.mjs) and every run, so the page's thread never runs the model. Training goes in chunks
// of steps sized to about CHUNK_MS each; between chunks the worker returns to its event loop, so
// pause, reset and the other requests are answered within one chunk.
//
// Protocol (client.js is the page's side):
//   page → worker  {id, op, …}            one request; answered by {id, ok: true, result} or
//                                          {id, ok: false, error: {message, field}}
//   worker → page  {event: 'progress', run, step, steps, losses (Float32Array), first, val,
//                   (losses[k] is the loss of step first + k, counted from 0 as the core does;
//                   step: the steps done; val: the validation loss after them, or null)
//                   elapsed, tokens_per_sec, sample, diverged, divergence, done}
//                  {event: 'stopped', run, reason: 'done' | 'diverged' | 'paused'}
// Ops: init → {tasks, kernels}; memory {spec} → {bytes, limit}, the core's memory estimate for a
// run spec (gpt.memoryEstimate; past the limit, the core's error); create {run, spec, sample} →
// info (the old run of that name is freed); start {runs} (trains those runs, interleaved, until
// each is done, diverged or paused); pause {runs}; free {run}; set_sample {run, sample}; info
// {run}; maps {run, prompt} → {tokens, T, n_layer, n_head, weights (L,NH,T,T), specs [L][NH],
// mean (L,T,T), rollout (L,T,T)};
// next_token {run, spec} → gpt.js nextToken's answer (the next-token distribution);
// surprisal {run, spec} → gpt.js surprisal's answer (−log p per token);
// gen_start {run, spec} / gen_next {run} → the core's step info with logits, full_logits,
// cache_attention, cache_keys, cache_values; save {run} → {bytes}; load {run, bytes, text} → info
// (on failure the run that was there stays).
import { loadGpt } from '../gpt.js';

const CHUNK_MS = 60;
const SAMPLE_TOKENS = 40;

let gpt = null;
let loading = null; // loadGpt's promise: requests that arrive while it loads wait for the same one
/** name → {run, spec, info, sample: {prompt, every}, training, chunk, elapsed, tokens, evalEvery, steps} */
const runs = new Map();
let looping = false;

const post = (msg, transfer = []) => self.postMessage(msg, transfer);

function errorOf(e) {
  return { message: e?.message ?? String(e), field: e?.field ?? '' };
}

function need(name) {
  const r = runs.get(name);
  if (!r) throw Object.assign(new Error('no model yet: press Start to create one'), { field: 'model' });
  return r;
}

function free(name) {
  const r = runs.get(name);
  if (!r) return;
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

const ops = {
  async init() {
    loading ??= loadGpt({ locateFile: (path) => new URL(`../gen/${path}`, import.meta.url).href });
    gpt = await loading;
    return { tasks: gpt.tasks() };
  },
  memory({ spec }) { return gpt.memoryEstimate(spec); },
  create({ run: name, spec, sample }) {
    const run = gpt.create(spec); // throws GptError naming the field; the old run stays
    free(name);
    const r = { run, spec, sample: sample ?? { prompt: '', every: 0 }, training: false, chunk: 1, elapsed: 0, tokens: 0 };
    runs.set(name, r);
    const info = describe(r);
    r.steps = info.steps;
    r.evalEvery = info.train.eval_interval;
    // the validation loss before any training: the curve's first point
    const ev = run.evaluate();
    r.val0 = num(ev.val_loss);
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
  maps({ run: name, prompt }) {
    const r = need(name);
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
  next_token({ run: name, spec }) { return need(name).run.nextToken(spec); },
  surprisal({ run: name, spec }) { return need(name).run.surprisal(spec); },
  gen_start({ run: name, spec }) {
    const g = genInfo(need(name).run.generateStart(spec));
    return { transfer: transfers(g), value: g };
  },
  gen_next({ run: name }) {
    const g = genInfo(need(name).run.generateNext());
    return { transfer: transfers(g), value: g };
  },
  save({ run: name }) {
    const r = need(name);
    const bytes = r.run.save();
    const out = bytes instanceof Uint8Array ? bytes.slice() : new Uint8Array(bytes);
    return { transfer: [out.buffer], value: { bytes: out, info: describe(r) } };
  },
  load({ run: name, bytes, text, sample }) {
    const run = gpt.load(bytes, text || undefined); // a bad file throws here: the current run stays
    free(name);
    const r = { run, spec: null, sample: sample ?? { prompt: '', every: 0 }, training: false, chunk: 1, elapsed: 0, tokens: 0 };
    runs.set(name, r);
    const info = describe(r);
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

/** One chunk of one run: up to the next evaluation, the next sample or the end, about CHUNK_MS. */
function chunk(name, r) {
  const info = r.info;
  const step = info.step;
  const left = r.steps - step;
  if (left <= 0) { r.training = false; post({ event: 'stopped', run: name, reason: 'done', step }); return; }
  const toEval = r.evalEvery - (step % r.evalEvery);
  const every = r.sample.every;
  const toSample = every > 0 ? every - (step % every) : Infinity;
  const n = Math.max(1, Math.min(r.chunk, left, toEval, toSample));
  const t0 = performance.now();
  const res = r.run.train(n);
  const done = res.losses.length;
  const newStep = res.step;
  let val = null;
  let sample = null;
  if (!res.diverged && (newStep % r.evalEvery === 0 || newStep === r.steps)) val = num(r.run.evaluate().val_loss);
  if (!res.diverged && every > 0 && r.sample.prompt && (newStep % every === 0 || newStep === r.steps)) {
    try {
      const s = r.run.sample({ prompt: r.sample.prompt, max_new_tokens: SAMPLE_TOKENS, greedy: true });
      sample = { step: newStep, prompt: r.sample.prompt, text: s.new_text };
    } catch (err) {
      sample = { step: newStep, prompt: r.sample.prompt, error: errorOf(err).message };
    }
  }
  const dt = performance.now() - t0;
  r.elapsed += dt;
  r.tokens += done * (info.tokens_per_step ?? 0);
  // aim the next chunk at CHUNK_MS
  const per = dt / Math.max(1, n);
  r.chunk = Math.max(1, Math.min(1000, Math.round(CHUNK_MS / Math.max(per, 0.01))));
  info.step = newStep;
  if (res.diverged) { info.diverged = true; info.divergence = res.divergence; }
  const losses = Float32Array.from(res.losses);
  const finished = res.diverged || newStep >= r.steps;
  post({
    event: 'progress', run: name, first: step, step: newStep, steps: r.steps, losses, val, sample,
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
          chunk(name, r);
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
