// gpt.js — the JavaScript API of the tiny GPT, for the training page (in a Web Worker) and Node.
//
// What it is: a thin wrapper over the C++ GPT core compiled to WebAssembly (web/gen/gpt_core.mjs
// + .wasm, a module of its own so that the stepper's page does not load it). The core's GptSession
// (src/api/gpt_session.h) speaks JSON text and float arrays; this file sends JS values as that
// JSON, turns the answers into plain objects and typed arrays, and the core's {"ok":false,…}
// answers into a thrown GptError. It adds no maths: the numbers come from the same C++ code as the
// native `gpt` CLI, and in the reference kernel tier from the same bits (tests/wasm/gpt_agreement).
//
//   import { loadGpt } from './attention.js';
//   const gpt = await loadGpt();
//   const run = gpt.create({ task: 'copy', preset: 'tiny', seed: 1 });
//   const { losses } = run.train(20);         // Float32Array(20)
//   run.sample({ prompt: 'abc=', greedy: true }).new_text
//   const bytes = run.save();                 // Uint8Array: a .safetensors file
//   run.free();
//
// Conventions (docs/api.md "GPT" has the reference, web/gpt.d.ts the types):
//   - JSON keys stay snake_case as the core writes them (new_text, val_loss, max_abs_diff, …);
//     methods are camelCase. One name per concept in C++, JS and the page.
//   - Anything large comes back as a typed array copied out of the wasm heap (logits, attention
//     weights, the KV cache, losses, checkpoint bytes): safe to keep, never detached by memory
//     growth. Small things are plain JSON values; the core's "nan"/"inf"/"-inf" become numbers.
//   - Every call is synchronous once loadGpt() has resolved; a training call blocks for as long as
//     its steps take, so pages run it in a Web Worker. Errors throw GptError with .field (the
//     spec key, "text", "prompt", "checkpoint", a tensor's name, …).
//   - A run holds wasm memory until run.free(); a freed run throws GptError (field "run"). A run
//     that is garbage-collected without free() is freed then, but do not count on it.
// Limits (the core's): n_layer ≤ 32, n_embd ≤ 1024, n_head ≤ 64, block_size ≤ 1024, batch_size
// ≤ 1024, vocabulary ≤ 8192 characters, text ≤ 64 MiB, 100,000 steps per train() call, 65,536 new
// tokens per sample, the model's memory ≤ 1 GiB (memoryEstimate(spec) tells before a run is made).
// An opened model (openModel): up to GPT-2's sizes, its memory within the 4 GB the module can
// address (the model file under 2 GiB: one allocation's limit in wasm32).
// The module needs WebAssembly SIMD128.

import { GptError } from './common/gpt-error.js';
import { readAnswer } from './common/non-finite.js';
import { isNode, fullModule } from './gpt-full.js';

export { GptError };

// Scalars of the GPT's answers that may be non-finite (the arrays' elements always may).
const NUMERIC_FIELDS = new Set(['val_loss', 'max_abs_diff']);

/** Parses an answer of the core, drops its "ok", throws GptError for {"ok":false,…}. */
function answer(text) {
  const r = readAnswer(text, {
    core: 'GPT core',
    numericFields: NUMERIC_FIELDS,
    failure: (e) => new GptError(e && typeof e.error === 'string' ? e.error : 'GPT core failed', { field: e?.field ?? '' }),
  });
  delete r.ok;
  return r;
}

// The index of the first lone UTF-16 surrogate of s, or -1. A JS string that has one is not
// Unicode text and has no UTF-8 form: sending it would change it silently.
function loneSurrogate(s) {
  if (typeof s.isWellFormed === 'function' && s.isWellFormed()) return -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
      else return i;
    } else if (c >= 0xdc00 && c <= 0xdfff) return i;
  }
  return -1;
}

function checkUnicode(s, field) {
  const i = loneSurrogate(s);
  if (i >= 0) {
    const hex = s.charCodeAt(i).toString(16).toUpperCase();
    throw new GptError(
      `${field} has a lone UTF-16 surrogate (U+${hex}) at character ${i} (counting from 0): that is not Unicode text, so it has no UTF-8 form`,
      { field },
    );
  }
  return s;
}

function isBytes(v) {
  return v instanceof Uint8Array || v instanceof ArrayBuffer;
}

// A text as the core takes it: a string (checked for lone surrogates) or bytes (UTF-8, checked by
// the core, which names an invalid byte by its offset).
function toText(text, field) {
  if (typeof text === 'string') return checkUnicode(text, field);
  if (text instanceof ArrayBuffer) return new Uint8Array(text);
  if (text instanceof Uint8Array) return text;
  throw new TypeError(`${field} must be a string or a Uint8Array of UTF-8 bytes`);
}

// A spec object → JSON text. Non-finite numbers are sent as the core's "nan"/"inf"/"-inf" so that
// the core refuses them by key (JSON.stringify would turn them into null, read as "absent").
function toSpecText(spec, what) {
  if (typeof spec === 'string') return checkUnicode(spec, 'spec'); // already JSON text
  if (spec == null || typeof spec !== 'object' || Array.isArray(spec)) {
    throw new TypeError(`${what}: the spec must be an object (or JSON text)`);
  }
  const out = {};
  for (const [k, v] of Object.entries(spec)) {
    if (typeof v === 'number' && !Number.isFinite(v)) out[k] = Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf';
    else if (typeof v === 'string') out[k] = checkUnicode(v, k);
    else out[k] = v;
  }
  return JSON.stringify(out);
}

// A whole number that fits the core's int, or a GptError naming the field.
function int32(v, field, what) {
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw new GptError(`${what} must be a whole number, got ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`, { field });
  }
  if (v > 0x7fffffff || v < -0x80000000) throw new GptError(`${what} is out of range: ${v}`, { field });
  return v;
}

function floats(list) {
  return Float32Array.from(list);
}

/** train()'s answer with its lists as Float32Array. */
function stepsOf(r) {
  return {
    step: r.step,
    losses: floats(r.losses),
    lrs: floats(r.lrs),
    grad_norms: floats(r.grad_norms),
    diverged: r.diverged,
    divergence: r.divergence,
    ...(r.head_scores ? { head_scores: r.head_scores } : {}),
  };
}

/** A Float32Array or Int32Array (else GptError naming field), for a copy into the heap. */
function wordsOf(a, field) {
  if (!(a instanceof Float32Array || a instanceof Int32Array)) {
    throw new GptError(`${field} must be a Float32Array or Int32Array`, { field });
  }
  return a;
}

/**
 * stepBegin's and evalBegin's parameters: copied into each Float32Array of into (n_params: one per
 * worker, reused, no new buffer per step), or else a new array in r.params → r.
 */
function paramsFor(s, r, into, what) {
  if (!into) {
    r.params = s.step_params();
    return r;
  }
  const v = s.step_params_view();
  for (const a of into) {
    if (!(a instanceof Float32Array) || a.length !== v.length) {
      throw new GptError(`${what}'s into must hold Float32Arrays of the model's ${v.length} parameters`, { field: 'params' });
    }
    a.set(v);
  }
  return r;
}

/** a into the session's staging area stage (stage_floats, …): one typed-array copy, no allocation. */
function staged(s, stage, a, field) {
  wordsOf(a, field);
  const v = s[stage](a.length); // a view of the heap: made after the area, used at once
  if (a instanceof Float32Array === v instanceof Float32Array) v.set(a);
  else v.set(a instanceof Float32Array ? new Int32Array(a.buffer, a.byteOffset, a.length) : new Float32Array(a.buffer, a.byteOffset, a.length));
}

/**
 * The core's table of calls (src/api/gpt_calls.h, the module's gpt_calls()): {rows: Map name →
 * {name, role, args: [{key, kind}], results, api, full?, returns?}, results: Map name → {type}}.
 */
function tableOf(M) {
  const t = answer(M.gpt_calls());
  return { rows: new Map(t.calls.map((c) => [c.name, c])), results: new Map(t.results.map((r) => [r.name, r])) };
}

/** One argument of a call as its wasm method takes it, by the row's kind (src/api/gpt_calls.h's ArgKind). */
function argOf(v, arg, what) {
  switch (arg.kind) {
    case 'spec': return toSpecText(v, what);
    case 'json': return typeof v === 'string' ? checkUnicode(v, arg.key) : JSON.stringify(v);
    case 'text': return toText(v, arg.key);
    case 'bytes':
      if (v instanceof Float32Array || v instanceof Int32Array) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
      return toText(v ?? '', arg.key);
    case 'whole': return int32(v, arg.key, `${what}: ${arg.key}`);
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v)) throw new GptError(`${what}: ${arg.key} must be a number`, { field: arg.key });
      return v;
    default: throw new GptError(`${what}: ${arg.key} is not an argument of the wasm method`, { field: arg.key });
  }
}

/**
 * Calls row `name` of the table on session s with args (in the row's order, as JS values) → the
 * answer with the typed arrays the call leaves (copies) under their names; a returns-bytes call
 * (save) → its Uint8Array. on(session, f) picks the session a full-module predicting call runs on (the
 * walk); what names the call in JS's messages.
 */
function callRow(table, s, name, args, on = (x, f) => f(x), what = `call('${name}')`) {
  const row = table.rows.get(name);
  if (!row || row.role === 'module') {
    throw new GptError(`unknown call "${name}": the calls are ${[...table.rows.values()].filter((c) => c.role !== 'module').map((c) => c.name).join(', ')}`, { field: 'call' });
  }
  const given = row.args.filter((a) => a.kind !== 'out');
  if (args.length > given.length) throw new TypeError(`${what} takes ${given.length} arguments (${given.map((a) => a.key).join(', ')}), got ${args.length}`);
  const values = given.map((a, i) => argOf(args[i], a, what));
  const run = (w) => {
    if (row.returns === 'bytes') {
      const bytes = w[name](...values);
      if (bytes === null) throw new GptError(w.last_error() || `${name} failed`, { field: 'checkpoint' });
      return bytes;
    }
    const r = answer(w[name](...values));
    for (const res of row.results) r[res] = w[res]();
    return r;
  };
  return row.full && row.role === 'predict' ? on(s, run) : run(s);
}

/**
 * The rows whose methods are written by hand below (a run's, or loadGpt's API's for role "module",
 * some under another name: memory → memoryEstimate, kernels → setKernels, threads → setThreads):
 * they reshape answers, move typed arrays or start runs. Every other row that `gpt api` takes is a
 * method of its own, its name in camelCase (run_memory → run.runMemory()), made from the table by
 * derivedMethods: a call added to the table needs no code here.
 */
export const HAND_WRITTEN = new Set([
  'create', 'load', 'info', 'vocab', 'train', 'evaluate', 'sample', 'run_prompt', 'head_spec', 'attention_summary',
  'save', 'threads', 'encode', 'decode', 'finetune', 'finetune_memory', 'tasks', 'kernels', 'memory', 'calls',
]);

/** A row's name as its JS method's: snake_case → camelCase. */
export const camelName = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

/** The table's rows that are methods made from it: [{method, row, what}] (what: how messages name it). */
export function derivedMethods(calls) {
  return calls.filter((c) => c.api && !HAND_WRITTEN.has(c.name)).map((row) => {
    const method = camelName(row.name);
    return { method, row, what: `${method}(${row.args.filter((a) => a.kind !== 'out').map((a) => a.key).join(', ')})` };
  });
}

/** SharedArrayBuffer and Atomics.wait work here: a cross-origin isolated page or worker (or Node). */
export function threadsAvailable() {
  return typeof SharedArrayBuffer === 'function' && (globalThis.crossOriginIsolated === true || typeof process === 'object');
}

// loadGpt's threads: a whole number from 1 to MAX_THREADS; above 1 only where threads can run.
const MAX_THREADS = 16;
function threadCount(n) {
  if (!Number.isInteger(n) || n < 1 || n > MAX_THREADS) {
    throw new GptError(`threads is ${String(n)}: it must be a whole number from 1 to ${MAX_THREADS}`, { field: 'threads' });
  }
  if (n > 1 && !threadsAvailable()) {
    throw new GptError(`threads is ${n}: threads need a cross-origin isolated page (COOP and COEP headers); this one is not, so use workers`, { field: 'threads' });
  }
  return n;
}

/** What to pass in Node, where the web build cannot fetch its .wasm: the file's own path in it. */
function nodeWithoutBytes(threads) {
  const file = decodeURIComponent(new URL(`./gen/${threads > 1 ? 'gpt_core_mt' : 'gpt_core'}.wasm`, import.meta.url).pathname);
  return `loadGpt() in Node needs the core's bytes: pass { wasmBinary }, e.g. ` +
    `loadGpt({ wasmBinary: await readFile('${file}') }) with readFile from 'node:fs/promises' ` +
    `(the file is built by scripts/build wasm)`;
}

/**
 * Loads the GPT's wasm module and returns the API. Call once and keep the result.
 * @param {{threads?: number, wasmBinary?: ArrayBuffer|Uint8Array, locateFile?: (path: string, prefix: string) => string}} [options]
 *   threads (1 … 16, default 1): above 1 loads the threaded module instead (web/gen/gpt_core_mt.*,
 *   Emscripten pthreads on a SharedArrayBuffer: a cross-origin isolated page only, else GptError
 *   field "threads") with threads − 1 workers started beside it, for run.setThreads. The rest is
 *   passed to the Emscripten factory. In Node give wasmBinary (the bytes of web/gen/gpt_core.wasm):
 *   the web build cannot fetch files there; without it (nor instantiateWasm) Node gets a GptError
 *   (field 'wasmBinary') saying what to pass.
 */
export async function loadGpt(options = {}) {
  const { threads: wanted = 1, ...factory } = options;
  const threads = threadCount(wanted);
  if (isNode() && !factory.wasmBinary && !factory.instantiateWasm) throw new GptError(nodeWithoutBytes(threads), { field: 'wasmBinary' });
  // One module or the other: the threaded build only where threads are asked for (and can run).
  const { default: createModule } = await (threads > 1 ? import('./gen/gpt_core_mt.mjs') : import('./gen/gpt_core.mjs'));
  const M = await createModule(threads > 1 ? { ...factory, pthreadPoolSize: threads - 1 } : { ...factory });
  // A run dropped without free() is freed when collected (a safety net, not a promise).
  const registry =
    typeof FinalizationRegistry === 'function'
      ? new FinalizationRegistry((session) => {
          if (!session.isDeleted()) session.delete();
        })
      : null;

  // The full module (gpt_core_full, gpt-full.js): on the first opening or walk; in Node at once.
  const full = fullModule(M, factory, answer);
  if (isNode()) await full.load();
  const withWalk = full.withWalk;
  const table = tableOf(M);
  GptRun.derive(table);

  // A new session started by start(session) → answer text; on failure it is deleted at once.
  function newRun(start) {
    const session = new M.GptSession();
    try {
      answer(start(session));
    } catch (e) {
      session.delete();
      throw e;
    }
    const run = new GptRun(session, registry, threads, withWalk, table);
    registry?.register(run, session, run);
    return run;
  }

  const api = {
    /**
     * The core's table of calls (src/api/gpt_calls.h): [{name, role ("run" | "predict" | "open" |
     * "shards" | "module"), args: [{key, kind}] (in the order run.call takes them), results (the
     * typed arrays it leaves), api (a gpt api call too), example (gpt api's help), doc (one line of
     * Markdown), full (in the full module only), returns?}].
     */
    calls() {
      return [...table.rows.values()];
    },

    /** The built-in tasks: [{name, description, example, attention, alphabet, loss_floor}]. */
    tasks() {
      return answer(M.gpt_tasks()).tasks;
    },

    /**
     * Chooses the kernel tier for every run: 'reference' (scalar, the same bits natively and in
     * wasm) or 'fast' (SIMD128). Returns the tier now in use: "reference" or the fast tier's name.
     */
    setKernels(tier) {
      if (typeof tier !== 'string') throw new GptError(`kernels must be "reference" or "fast", got ${String(tier)}`, { field: 'kernels' });
      const chosen = answer(M.gpt_kernels(tier)).kernels;
      full.setKernels(tier);
      return chosen;
    },

    /**
     * The memory a run of this spec would take, as the core counts it (parameters, gradients,
     * AdamW's moments, the activations of batch_size × block_size, the KV cache), and the core's
     * limit: {bytes, limit}. Past the limit, or for a bad spec, throws the GptError create(spec)
     * would (field "n_embd" for the model alone, "batch_size" for the batch). No run is made; the
     * text, if any, must be a string.
     */
    memoryEstimate(spec = {}) {
      if (spec !== null && typeof spec === 'object' && isBytes(spec.text)) {
        throw new TypeError('memoryEstimate(spec): give the text as a string');
      }
      const { bytes, limit } = answer(M.gpt_memory(toSpecText(spec, 'memoryEstimate(spec)')));
      return { bytes, limit };
    },

    /**
     * A new run from a run spec (docs/api.md "The run spec"); spec.text may be a string or the
     * bytes of a UTF-8 file. Throws GptError naming the key at fault.
     */
    create(spec = {}) {
      if (spec !== null && typeof spec === 'object' && !Array.isArray(spec) && 'text' in spec &&
          (typeof spec.text === 'string' || isBytes(spec.text))) {
        const { text, ...rest } = spec;
        const bytes = toText(text, 'text');
        const specText = toSpecText(rest, 'create(spec)');
        return newRun((s) => s.create_with_text(specText, bytes));
      }
      const specText = toSpecText(spec, 'create(spec)');
      return newRun((s) => s.create(specText));
    },

    /**
     * A run from checkpoint bytes (a .safetensors file from run.save() or the CLI). A run trained
     * on the user's text needs that text again to train on; a task run regenerates its own.
     * Throws GptError naming the byte, tensor or metadata key at fault.
     */
    load(bytes, text) {
      if (!isBytes(bytes)) throw new TypeError('load(bytes): bytes must be a Uint8Array (or ArrayBuffer) of a .safetensors file');
      const data = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes;
      const t = text === undefined || text === null ? '' : toText(text, 'text');
      return newRun((s) => s.load(data, t));
    },

    /**
     * Opens a model trained elsewhere, or a .safetensors of this project: files is a list of File
     * or Blob objects with names, or {name, data: Uint8Array|Blob}: the model file (nanoGPT's
     * ckpt.pt, a Hugging Face model.safetensors, or ours) and beside it meta.pkl, config.json and
     * the tokenizer's files. The model file is never held whole: its headers first (the ranges the
     * core asks for), then each tensor's bytes in slices of options.chunkBytes (16 MiB) through one
     * buffer the core made, converted into the model as they come. options.onProgress({loaded,
     * total, name}) after each slice of the weights (total: the weights' bytes). Resolves to the run, whose info() has "opened" ({name, format,
     * notes}), "tokenizer" ("characters" | "token_ids") and "source". Rejects with GptError naming
     * the file (field: its name, "memory" for one that will not fit, refused before it is read).
     */
    openModel(files, options = {}) {
      return full.openModel(files, options, (session, opened) => {
        const run = new GptRun(session, registry, threads, withWalk, table);
        registry?.register(run, session, run);
        run.opened = opened;
        return run;
      });
    },

    /**
     * Loads the full module (web/gen/gpt_core_full.wasm: opening models trained elsewhere,
     * and the walk through the block) if it is not in yet; openModel does it itself, the walk
     * (run.blockTrace, run.weightRow) needs it done first. In Node loadGpt has done it already; the
     * threads build has that code linked in. Resolves once the piece is in; rejects with GptError
     * (field "piece") if it cannot be fetched.
     */
    loadFull: () => full.load(),

    /**
     * Memory for opening a model, in bytes: {left, max, size}: what is left and the most there can
     * be (in wasm, of the 4 GB it can address), and the module's memory now (its peak so far: wasm
     * memory never shrinks).
     */
    openMemory: () => full.openMemory(),

    /**
     * A worker's share of data-parallel training: a model of this config (a run's info().config)
     * that computes one share's gradients with the parameters it is given. free() when done.
     */
    shard(config) {
      const session = new M.GptSession();
      try {
        answer(session.shard_model(JSON.stringify(config)));
      } catch (e) {
        session.delete();
        throw e;
      }
      return new GptShard(session);
    },

    /**
     * The threads a run of this module may use (run.setThreads): loadGpt's threads, 1 for the
     * single-threaded module.
     */
    threads,

    /** The Emscripten module: GptSession, gpt_tasks, gpt_kernels, gpt_memory, heap_bytes_in_use. For tests and tools. */
    module: M,

    /**
     * The Emscripten module models are opened and walked in: the full module (gpt_core_full) once
     * loadFull() has resolved (at once in Node), the module itself in the threads build; null
     * before. For tests and tools.
     */
    get openingModule() {
      return full.module;
    },
  };
  return withModuleMethods(api, M, table);
}

/** api with a method for each of the module's rows without a hand-written one (derivedMethods). */
function withModuleMethods(api, M, table) {
  for (const { method, row, what } of derivedMethods([...table.rows.values()].filter((c) => c.role === 'module'))) {
    api[method] = (...args) => answer(M[`gpt_${row.name}`](...row.args.filter((a) => a.kind !== 'out').map((a, i) => argOf(args[i], a, what))));
  }
  return api;
}

/** One model with its data and optimiser state, in wasm memory until free(). */
class GptRun {
  #session;
  #registry;
  #threads; // the most setThreads takes: the module's (loadGpt's threads)
  #vocab = null; // the whole vocabulary, fetched once (a run's tokenizer never changes)
  #withWalk; // (session, f) → f(the session the walk runs on) (loadGpt's withWalk)

  #table; // the core's table of calls (tableOf)

  constructor(session, registry, threads, withWalk, table) {
    this.#session = session;
    this.#registry = registry;
    this.#threads = threads;
    this.#withWalk = withWalk;
    this.#table = table;
  }

  /**
   * Any call of the core's table on this run (gpt.calls(): the rows of a role other than
   * "module"), its arguments in the row's order as JS values: a spec as an object (or JSON text),
   * a text as a string or UTF-8 bytes, bytes as a Uint8Array (or a Float32Array / Int32Array: its
   * bytes), whole numbers and numbers as numbers → the answer, with the typed arrays the call
   * leaves (copies) under their names; save → its bytes. A new row of the table is reached here
   * (and through the worker's call op) without a method of its own. Throws GptError as the
   * methods do (field "call" for a name not in the table).
   */
  call(name, ...args) {
    return callRow(this.#table, this.#s(), name, args, this.#withWalk);
  }

  // A method that is one row of the table: what names it in JS's messages.
  #row(name, what, ...args) {
    return callRow(this.#table, this.#s(), name, args, this.#withWalk, what);
  }

  /**
   * The methods of the table's rows without a hand-written one (derivedMethods): generateStart,
   * generateNext, nextToken, surprisal, blockTrace, weightRow, runMemory, attentionMaps, result, … each
   * run.call(row) with its arguments in the row's order. Made once (every module has one table).
   */
  static derive(table) {
    for (const { method, row, what } of derivedMethods([...table.rows.values()].filter((c) => c.role !== 'module'))) {
      if (Object.hasOwn(GptRun.prototype, method)) continue;
      Object.defineProperty(GptRun.prototype, method, {
        value(...args) {
          return this.#row(row.name, what, ...args);
        },
        writable: true,
        configurable: true,
      });
    }
  }

  #s() {
    if (!this.#session) throw new GptError('this run was freed (run.free()): create or load another', { field: 'run' });
    return this.#session;
  }

  /** True once free() has been called. */
  get freed() {
    return this.#session === null;
  }

  /**
   * {config, train, seed, data, vocab, tokenizer, source, n_params, step, steps, tokens_per_step,
   * val_loss, diverged, divergence, kernels}. vocab is vocab(): fetched from the core once per run
   * and the same frozen array after (GPT-2's 50,257 pieces are not rebuilt on every call).
   */
  info() {
    const info = answer(this.#s().info());
    if (info.tokenizer === 'gpt2-bpe') info.vocab = this.vocab();
    return info;
  }

  /**
   * The tokens' texts by id: the whole vocabulary (a frozen array, fetched once and kept), or
   * count of them from id `from`. [] for a model that reads token ids.
   */
  vocab(from, count) {
    const s = this.#s();
    if (from === undefined && count === undefined) {
      this.#vocab ??= Object.freeze(answer(s.vocab('{}')).vocab);
      return this.#vocab;
    }
    const f = int32(from ?? 0, 'from', 'vocab(from, count): from');
    const spec = count === undefined ? { from: f } : { from: f, count: int32(count, 'count', 'vocab(from, count): count') };
    return answer(s.vocab(JSON.stringify(spec))).vocab;
  }

  /**
   * Up to n training steps (1 … 100,000), fewer if the run diverges: {step, losses, lrs,
   * grad_norms, diverged, divergence}. losses has one entry per step tried (the diverging one's is
   * not finite); lrs and grad_norms one per step done.
   */
  train(n) {
    const s = this.#s();
    return stepsOf(answer(s.train(int32(n, 'steps', 'train(n): n'))));
  }

  /**
   * Data-parallel training across workers (the training page's): the next step's batch split
   * `shares` ways (1 … batch_size) → {step, shares, T, rows (shares + 1 bounds: share k is rows
   * rows[k] … rows[k+1]), ids, targets (Int32Array, batch_size · T), params (Float32Array: the
   * parameters every share uses)}. The batch is the same for a seed and step whatever the split.
   * Then stepOwn() computes share 0 here while each worker's shard(config).gradients(…) computes
   * its own; stepAdd(grads, losses) adds shares 1 … shares − 1 in order; stepFinish() clips, applies
   * AdamW and answers as train(1). With {into: [Float32Array, …]} the parameters are copied into
   * those arrays (each n_params; one per worker, reused step after step) and params is not made.
   */
  stepBegin(shares, { into, mirror = false } = {}) {
    const s = this.#s();
    const r = answer(s.step_begin(int32(shares, 'shares', 'stepBegin(shares): shares')));
    this.#rows = { rows: r.rows, T: r.T };
    if (mirror) return r; // a mirror samples the same batch itself and has the parameters
    r.ids = s.batch_ids();
    r.targets = s.batch_targets();
    return paramsFor(s, r, into, 'stepBegin');
  }

  /**
   * Share 0's forward and backward in this run: {loss} (the share's mean). With {grads: a
   * Float32Array of n_params} also its gradients copied there and its per-token losses (a new
   * Float32Array): what a mirror's stepAdd takes as share 0 (stepShare).
   */
  stepOwn({ grads } = {}) {
    const s = this.#s();
    const r = answer(s.step_own());
    if (grads) this.#shareOut(r, 0, s.step_grads_view(), grads);
    return r;
  }

  /**
   * A mirror's share k (1 … shares − 1) of the step begun by stepBegin: this run loaded from the
   * leader's save() and stepping with it, so that only gradients travel (the training page's
   * helpers) → {loss, grads (copied into the Float32Array given, n_params), losses (Float32Array,
   * the share's per token)}. Then stepAdd takes the other shares 0 … shares − 1 in order (share 0:
   * the leader's stepOwn gradients) and stepFinish applies the leader's clip and AdamW: the
   * parameters stay the leader's, bit for bit.
   */
  stepShare(k, { grads }) {
    const s = this.#s();
    const r = answer(s.step_share(int32(k, 'shares', 'stepShare(k): k')));
    this.#shareOut(r, k, s.step_share_grads_view(), grads);
    return r;
  }

  #rows = null;

  #shareOut(r, k, view, grads) {
    if (!(grads instanceof Float32Array) || grads.length !== view.length) {
      throw new GptError(`grads must be a Float32Array of the model's ${view.length} parameters`, { field: 'grads' });
    }
    grads.set(view);
    r.grads = grads;
    const { rows, T } = this.#rows;
    r.losses = this.#s().step_losses_view().slice(rows[k] * T, rows[k + 1] * T);
  }

  /** Adds the next share's gradients (Float32Array, n_params) and per-token losses (Float32Array, its rows · T). */
  stepAdd(grads, losses) {
    const s = this.#s();
    staged(s, 'stage_floats', grads, 'gradients');
    staged(s, 'stage_losses', losses, 'losses');
    answer(s.step_add_staged());
  }

  /** Ends the step begun by stepBegin: train(1)'s answer. */
  stepFinish() {
    return stepsOf(answer(this.#s().step_finish()));
  }

  /**
   * The threads sharing each training step of this run (1 … gpt.threads): data-parallel over the
   * batch as `gpt train --threads n`; the same n gives the same numbers every time, another n
   * agrees within the fast tier's tolerance. → {threads, cores}.
   */
  setThreads(n) {
    const s = this.#s();
    int32(n, 'threads', 'setThreads(n): n');
    if (n > this.#threads && n <= MAX_THREADS) {
      throw new GptError(`threads is ${n}: this module was loaded with ${this.#threads} (loadGpt({threads}))`, { field: 'threads' });
    }
    return answer(s.threads(n));
  }

  /** The mean loss over the validation windows: {step, val_loss}. */
  evaluate() {
    const { step, val_loss } = answer(this.#s().evaluate());
    return { step, val_loss };
  }

  /**
   * evaluate() across workers, as stepBegin … stepFinish: the validation batches split `shares`
   * ways (at least 1; at most the batches: the answer's shares) by whole batches → {step, shares,
   * batches, B, T, bounds (shares + 1: share k is batches bounds[k] … bounds[k+1]), ids, targets
   * (Int32Array, batches · B · T), params (or copied into `into`, as stepBegin)}. Then evalOwn()
   * computes share 0 here while each worker's shard(config).evaluate(params, its batches' ids and
   * targets, B, T) computes its own; evalAdd(losses) adds shares 1 … shares − 1 in order;
   * evalFinish() answers as evaluate(), the same bits whatever the split (each batch's loss is the
   * same forward pass wherever it runs).
   */
  evalBegin(shares, { into } = {}) {
    const s = this.#s();
    const r = answer(s.eval_begin(int32(shares, 'shares', 'evalBegin(shares): shares')));
    r.ids = s.eval_ids_view().slice();
    r.targets = s.eval_targets_view().slice();
    return paramsFor(s, r, into, 'evalBegin');
  }

  /** Share 0's validation batches in this run. */
  evalOwn() {
    answer(this.#s().eval_own());
  }

  /** Adds the next share's batch losses (Float32Array, one per batch of the share). */
  evalAdd(losses) {
    const s = this.#s();
    staged(s, 'stage_losses', losses, 'losses');
    answer(s.eval_add_staged());
  }

  /** Ends the evaluation begun by evalBegin: evaluate()'s answer. */
  evalFinish() {
    const { step, val_loss } = answer(this.#s().eval_finish());
    return { step, val_loss };
  }

  /** Text from a prompt: spec {prompt, max_new_tokens, temperature, top_k, top_p, greedy, seed} → {text, new_text, tokens}. */
  sample(spec) {
    const s = this.#s();
    const { text, new_text, tokens } = answer(s.sample(toSpecText(spec, 'sample(spec)')));
    return { text, new_text, tokens };
  }

  /** One forward pass over the prompt (its last block_size characters): {tokens, T, n_layer, n_head, weights (L, NH, T, T)}. */
  runPrompt(prompt) {
    const s = this.#s();
    if (typeof prompt !== 'string') throw new TypeError('runPrompt(prompt): prompt must be a string');
    const r = answer(s.run_prompt(checkUnicode(prompt, 'prompt')));
    r.weights = s.attention_weights();
    return r;
  }

  /**
   * The last runPrompt's maps summed up by the core (reference order): {tokens, T, n_layer,
   * head_mean (L, T, T): each layer's heads averaged, rollout (L, T, T): attention rollout up to
   * each layer (Abnar and Zuidema 2020, the residual as ½·I)}.
   */
  attentionSummary() {
    const s = this.#s();
    const r = answer(s.attention_summary());
    return { tokens: r.tokens, T: r.T, n_layer: r.n_layer, head_mean: s.attention_mean(), rollout: s.attention_rollout() };
  }

  /** The model's token ids of a text: {ids, tokens} (tokens: each token's text, such as GPT-2's " the"). */
  encode(text) {
    const s = this.#s();
    if (typeof text !== 'string') throw new TypeError('encode(text): text must be a string');
    return answer(s.encode(checkUnicode(text, 'text')));
  }

  /** The text of token ids: {text, tokens}. */
  decode(ids) {
    const s = this.#s();
    if (!Array.isArray(ids) && !ArrayBuffer.isView(ids)) throw new TypeError('decode(ids): ids must be an array of token ids');
    return answer(s.decode(JSON.stringify(Array.from(ids))));
  }

  /** The stepper spec of one head for the last runPrompt: {Q, K, V, n_head: 1, causal: true, mask, softmax}. */
  headSpec(layer, head) {
    const s = this.#s();
    return answer(s.head_spec(int32(layer, 'layer', 'headSpec(layer, head): layer'), int32(head, 'head', 'headSpec(layer, head): head'))).spec;
  }

  /** finetune's memory check (the table's finetune_memory; gpt.d.ts has the answer), spec {} by default. */
  finetuneMemory(spec = {}) {
    return this.#row('finetune_memory', 'finetuneMemory(spec)', spec);
  }

  /**
   * Fine-tunes this opened model on a text: spec {context, batch_size, steps, lr, min_lr,
   * warmup_steps, weight_decay, beta1, beta2, grad_clip, eval_interval, eval_batches, seed,
   * text_name} (docs/api.md), text a string or the bytes of a UTF-8 file, read with the model's own
   * tokenizer. The model becomes a run on the text with fresh AdamW state, trained by train(n),
   * evaluated and saved as any run. → info(), with "base": where the model came from. Refused
   * (GptError naming "context", "batch_size", "model", "text" or a spec key) before anything is
   * allocated, and then the model is as it was.
   */
  finetune(spec, text) {
    const s = this.#s();
    const specText = toSpecText(spec ?? {}, 'finetune(spec, text)');
    const info = answer(s.finetune(specText, toText(text, 'text')));
    if (info.tokenizer === 'gpt2-bpe') info.vocab = this.vocab();
    return info;
  }

  /** The checkpoint: the bytes of a .safetensors file (model, AdamW moments, vocabulary, config, step). */
  save() {
    const s = this.#s();
    const bytes = s.save();
    if (bytes === null) throw new GptError(s.last_error() || 'saving failed', { field: 'checkpoint' });
    return bytes;
  }

  /** Frees the run's wasm memory. The run is dead after (its methods throw); a second free() does nothing. */
  free() {
    if (!this.#session) return;
    this.#registry?.unregister(this);
    if (!this.#session.isDeleted()) this.#session.delete();
    this.#session = null;
  }
}

/** One worker's share of a data-parallel step (gpt.shard(config)): wasm memory until free(). */
class GptShard {
  #session;

  constructor(session) {
    this.#session = session;
  }

  /**
   * Forward and backward of rows of the batch (ids, targets: Int32Array of whole rows of
   * block_size) with these parameters (Float32Array, n_params), scaled to the whole batch's mean
   * (batchRows rows) → {loss (the share's mean), rows, grads (Float32Array, n_params), losses
   * (Float32Array, per token)}. With {grads: a Float32Array of n_params} the gradients are written
   * there (it may be params itself) rather than into a new array.
   */
  gradients(params, ids, targets, batchRows, { grads } = {}) {
    const s = this.#session;
    if (!s) throw new GptError('this shard was freed', { field: 'run' });
    const rows = int32(batchRows, 'batch_rows', 'gradients(…, batchRows): batchRows');
    if (grads !== undefined && !(grads instanceof Float32Array)) throw new GptError('grads must be a Float32Array', { field: 'grads' });
    staged(s, 'stage_floats', params, 'params');
    staged(s, 'stage_ids', ids, 'ids');
    staged(s, 'stage_targets', targets, 'targets');
    const r = answer(s.shard_gradients_staged(rows));
    if (grads) {
      // into the caller's array (it may be the params array it gave: they are in the model now)
      const v = s.shard_grads_view();
      if (grads.length !== v.length) throw new GptError(`grads holds ${grads.length} floats: the model has ${v.length} parameters`, { field: 'grads' });
      grads.set(v);
      r.grads = grads;
    } else r.grads = s.shard_grads();
    r.losses = s.shard_losses();
    return r;
  }

  /**
   * The validation loss of whole batches (ids, targets: Int32Array of batches of B rows of T
   * tokens, T ≤ block_size) with these parameters (Float32Array, n_params) → {batches, losses
   * (Float32Array, one per batch: what evalAdd takes)}.
   */
  evaluate(params, ids, targets, B, T) {
    const s = this.#session;
    if (!s) throw new GptError('this shard was freed', { field: 'run' });
    const rows = int32(B, 'B', 'evaluate(…, B): B');
    const len = int32(T, 'T', 'evaluate(…, T): T');
    staged(s, 'stage_floats', params, 'params');
    staged(s, 'stage_ids', ids, 'ids');
    staged(s, 'stage_targets', targets, 'targets');
    const r = answer(s.shard_evaluate_staged(rows, len));
    r.losses = s.shard_losses();
    return r;
  }

  free() {
    if (this.#session && !this.#session.isDeleted()) this.#session.delete();
    this.#session = null;
  }
}
