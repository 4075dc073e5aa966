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
// The module needs WebAssembly SIMD128.

import { GptError } from './gpt-error.js';
import { readAnswer } from './non-finite.js';

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

/**
 * Loads the GPT's wasm module and returns the API. Call once and keep the result.
 * @param {{wasmBinary?: ArrayBuffer|Uint8Array, locateFile?: (path: string, prefix: string) => string}} [options]
 *   passed to the Emscripten factory. In Node give wasmBinary (the bytes of web/gen/gpt_core.wasm):
 *   the web build cannot fetch files there.
 */
export async function loadGpt(options = {}) {
  const { default: createModule } = await import('./gen/gpt_core.mjs');
  const M = await createModule({ ...options });
  // A run dropped without free() is freed when collected (a safety net, not a promise).
  const registry =
    typeof FinalizationRegistry === 'function'
      ? new FinalizationRegistry((session) => {
          if (!session.isDeleted()) session.delete();
        })
      : null;

  // A new session started by start(session) → answer text; on failure it is deleted at once.
  function newRun(start) {
    const session = new M.GptSession();
    try {
      answer(start(session));
    } catch (e) {
      session.delete();
      throw e;
    }
    const run = new GptRun(session, registry);
    registry?.register(run, session, run);
    return run;
  }

  return {
    /** The built-in tasks: [{name, description, example, attention, alphabet, loss_floor}]. */
    tasks() {
      return answer(M.gpt_tasks_json()).tasks;
    },

    /**
     * Chooses the kernel tier for every run: 'reference' (scalar, the same bits natively and in
     * wasm) or 'fast' (SIMD128). Returns the tier now in use: "reference" or the fast tier's name.
     */
    setKernels(tier) {
      if (typeof tier !== 'string') throw new GptError(`kernels must be "reference" or "fast", got ${String(tier)}`, { field: 'kernels' });
      return answer(M.gpt_set_kernels(tier)).kernels;
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
      const { bytes, limit } = answer(M.gpt_memory_json(toSpecText(spec, 'memoryEstimate(spec)')));
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

    /** The Emscripten module: GptSession, gpt_tasks_json, gpt_set_kernels, gpt_memory_json, heap_bytes_in_use. For tests and tools. */
    module: M,
  };
}

/** One model with its data and optimiser state, in wasm memory until free(). */
class GptRun {
  #session;
  #registry;

  constructor(session, registry) {
    this.#session = session;
    this.#registry = registry;
  }

  #s() {
    if (!this.#session) throw new GptError('this run was freed (run.free()): create or load another', { field: 'run' });
    return this.#session;
  }

  /** True once free() has been called. */
  get freed() {
    return this.#session === null;
  }

  /** {config, train, seed, data, vocab, n_params, step, steps, tokens_per_step, val_loss, diverged, divergence, kernels}. */
  info() {
    return answer(this.#s().info());
  }

  /**
   * Up to n training steps (1 … 100,000), fewer if the run diverges: {step, losses, lrs,
   * grad_norms, diverged, divergence}. losses has one entry per step tried (the diverging one's is
   * not finite); lrs and grad_norms one per step done.
   */
  train(n) {
    const s = this.#s();
    const r = answer(s.train(int32(n, 'steps', 'train(n): n')));
    return {
      step: r.step,
      losses: floats(r.losses),
      lrs: floats(r.lrs),
      grad_norms: floats(r.grad_norms),
      diverged: r.diverged,
      divergence: r.divergence,
    };
  }

  /** The mean loss over the validation windows: {step, val_loss}. */
  evaluate() {
    const { step, val_loss } = answer(this.#s().evaluate());
    return { step, val_loss };
  }

  /** Text from a prompt: spec {prompt, max_new_tokens, temperature, top_k, top_p, greedy, seed} → {text, new_text, tokens}. */
  sample(spec) {
    const s = this.#s();
    const { text, new_text, tokens } = answer(s.sample(toSpecText(spec, 'sample(spec)')));
    return { text, new_text, tokens };
  }

  /** Runs the prompt through the KV cache (spec as sample's); returns the first step (see generateNext). */
  generateStart(spec) {
    const s = this.#s();
    return this.#step(answer(s.generate_start(toSpecText(spec, 'generateStart(spec)'))));
  }

  /**
   * One more token through the cache: {token, text, base, cache_length, rebuilt, generated,
   * tokens, max_abs_diff, logits, full_logits, cache_attention, cache_keys, cache_values}.
   */
  generateNext() {
    const s = this.#s();
    return this.#step(answer(s.generate_next()));
  }

  #step(r) {
    const s = this.#session;
    r.logits = s.logits();
    r.full_logits = s.full_logits();
    r.cache_attention = s.cache_attention();
    r.cache_keys = s.cache_keys();
    r.cache_values = s.cache_values();
    return r;
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
   * The next-token distribution: spec {prompt?, temperature, top_k, top_p, greedy, show} →
   * {tokens, vocab_size, temperature, top_k, top_p, greedy, kept, kept_mass, dropped_mass, entropy,
   * entropy_full, max_logit, top: [{id, text, logit, p, p_full, kept}]}. With a prompt the model
   * runs over it once; without one the last prompt's logits are reshaped (what a slider costs).
   */
  nextToken(spec) {
    const s = this.#s();
    return answer(s.next_token(toSpecText(spec, 'nextToken(spec)')));
  }

  /**
   * −log p of every token of a text, or of the validation windows: spec {text} or {validation: true}
   * → {windows: [{offset, tokens, losses, mean}], count, mean, step}. For the validation windows,
   * mean is the validation loss evaluate() gives.
   */
  surprisal(spec) {
    const s = this.#s();
    if (spec && typeof spec === 'object' && typeof spec.text === 'string') checkUnicode(spec.text, 'text');
    return answer(s.surprisal(toSpecText(spec, 'surprisal(spec)')));
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
