// gpt-open.js — opening a model trained elsewhere through the GPT core's opening protocol: the
// file set's roles, then open_begin / open_tokenizer / open_plan + open_piece / open_view +
// open_feed / open_finish (src/api/gpt_session.h), and the reading of the files. web/gpt-full.js
// loads this module on the first openModel() (after the core's full module, gpt_core_full, which
// holds the opening's C++), so a page that never opens a model downloads neither.
//
// Everything it needs comes in as arguments (openModel's `core`): a new GptSession, the run that
// adopts it, and the parser of the core's answers. It holds no state between openings. Each
// opening leaves its phases' times on the user-timing timeline (phases(), below).
// A Llama-family model (a Hugging Face folder: config.json, model.safetensors or the index and its
// shards, tokenizer.json; or one GGUF file) goes through open_files instead (openFiles, below): the
// headers of each file as the core asks for them, then each tensor range's bytes written straight
// into the core's buffer for it, so the weights are in memory once (as the files hold them) until
// the model is made from them.
// Limits: the small files (meta.pkl, config.json, the tokenizer's) are read whole, up to 64 MiB
// each; the model file never is (its headers as the core asks for them, then its weights in slices
// through one reused buffer: slices(), below).

import { GptError } from './common/gpt-error.js';

const MODEL_FILE = /\.(pt|pth|ckpt|safetensors)$/i;
const TOKENIZER_FILES = new Set(['vocab.json', 'merges.txt', 'tokenizer.json']);
const SMALL_LIMIT = 64 << 20;
// Node's byte streams of a Blob come in small pieces, each a promise: there slices are faster
// (bench/open_bench.mjs, docs/performance-journal.md); browsers read a BYOB stream fastest.
const BYOB = !(typeof process === 'object' && typeof process.versions?.node === 'string');

function isBytes(v) {
  return v instanceof Uint8Array || v instanceof ArrayBuffer;
}

/** The files as {name, blob} (a File's own name: a folder's files come without their folder). */
function fileList(files) {
  return Array.from(files ?? [], (f) => {
    const name = String(f?.name ?? '');
    const data = f instanceof Blob ? f : f?.data;
    const blob = data instanceof Blob ? data : isBytes(data) ? new Blob([data]) : null;
    if (!name || !blob) throw new TypeError('openModel(files): each file must be a File, or {name, data: Uint8Array|Blob}');
    return { name, blob, path: String(f?.webkitRelativePath || name) };
  });
}

/** The files by role: {model, meta, config, tokenizer: [], other: []}, each {name, blob}. */
export function classifyFiles(files) {
  const list = fileList(files);
  const set = { model: null, meta: null, config: null, tokenizer: [], other: [] };
  for (const f of list) {
    const base = f.name.toLowerCase();
    if (MODEL_FILE.test(base)) {
      if (set.model) throw new GptError(`two model files: ${set.model.name} and ${f.name}; open one at a time`, { field: f.name });
      set.model = f;
    } else if (base.endsWith('.pkl')) set.meta = f;
    else if (base === 'config.json') set.config = f;
    else if (TOKENIZER_FILES.has(base)) set.tokenizer.push(f);
    else set.other.push(f);
  }
  if (!set.model) {
    const names = list.map((f) => f.name).join(', ');
    throw new GptError(`no model file among ${names || 'the files'}: give a ckpt.pt, a model.safetensors or a .safetensors of this playground`, { field: 'model' });
  }
  return set;
}

async function readSmall(f) {
  if (!f) return new Uint8Array(0);
  if (f.blob.size > SMALL_LIMIT) throw new GptError(`${f.name} is ${f.blob.size} bytes: too large for this file`, { field: f.name });
  return new Uint8Array(await f.blob.arrayBuffer());
}

// The first bytes of the model file: a safetensors header (8 bytes of length, then its JSON), by
// which the core sizes the model before the file is read; else the first 64 KiB.
async function modelHead(f) {
  const first = async (n) => new Uint8Array(await f.blob.slice(0, Math.min(n, f.blob.size)).arrayBuffer());
  if (!/\.safetensors$/i.test(f.name) || f.blob.size < 8) return first(64 << 10);
  const len = new DataView((await first(8)).buffer);
  const n = len.getUint32(0, true) + len.getUint32(4, true) * 2 ** 32;
  if (n > SMALL_LIMIT || 8 + n > f.blob.size) return first(64 << 10); // the core names the fault when it reads
  return first(8 + n);
}

const changed = (name, at) => new GptError(`${name} changed while it was read (byte ${at})`, { field: name });

// The bytes [at, at + n) of the blob in slices of `size` (the last one shorter), each a view that
// is good until the next is asked for. In a browser through a byte stream's BYOB reader into one
// buffer used again and again: a new ArrayBuffer per slice costs its memory's first touch every
// time (page faults: seconds for 500 MB on a virtual machine) and the collector's work. In Node
// (see BYOB; byob chooses), or where the blob's stream has no BYOB reader, each slice is read on
// its own. A GptError (field: name) if the blob ends before at + n.
export async function* slices(blob, at, n, size, name, byob = BYOB) {
  const reader = byob ? byobReader(blob.slice(at, at + n)) : null;
  if (!reader) {
    for (let off = 0; off < n; off += size) {
      const want = Math.min(size, n - off);
      const bytes = new Uint8Array(await blob.slice(at + off, at + off + want).arrayBuffer());
      if (bytes.length !== want) throw changed(name, at + off + bytes.length);
      yield bytes;
    }
    return;
  }
  try {
    let buf = new ArrayBuffer(Math.min(size, n));
    for (let off = 0; off < n; off += buf.byteLength) {
      const want = Math.min(buf.byteLength, n - off);
      for (let filled = 0; filled < want;) {
        const { done, value } = await reader.read(new Uint8Array(buf, filled, want - filled));
        if (value) buf = value.buffer; // the read moved the buffer to a new ArrayBuffer: the same memory
        if (done) throw changed(name, at + off + filled);
        filled += value.length;
      }
      yield new Uint8Array(buf, 0, want);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

function byobReader(blob) {
  try {
    return blob.stream().getReader({ mode: 'byob' });
  } catch {
    return null; // not a byte stream
  }
}

/**
 * GPT-2's tokenizer among the files: [tokenizer.json], or [vocab.json, merges.txt] (both needed);
 * null when there is no whole set (the page then says the prompts are token ids).
 */
function tokenizerSet(files) {
  const by = (n) => files.find((f) => f.name.split(/[\\/]/).pop().toLowerCase() === n);
  const json = by('tokenizer.json');
  if (json) return [json];
  const vocab = by('vocab.json');
  const merges = by('merges.txt');
  return vocab && merges ? [vocab, merges] : null;
}

/** GPT-2's vocabulary (50,257 tokens; nanoGPT pads it to 50,304). */
const GPT2_VOCAB = 50257;

// What the page says about the files given: codes with the files they name (and the figures a code's words need).
function openNotes(set, info) {
  const notes = [];
  const { format } = info.opened;
  // without meta.pkl nanoGPT uses GPT-2's tokenizer, but only a vocabulary of GPT-2's size can be
  // GPT-2's: a smaller one is a dataset's own characters, and its meta.pkl is what is missing
  const V = info.config.vocab_size;
  const gpt2Size = V >= GPT2_VOCAB;
  if (format === 'nanogpt' && !set.meta && info.tokenizer !== 'gpt2-bpe') notes.push(gpt2Size ? { code: 'no_meta' } : { code: 'no_meta_own', vocab: V });
  if (format !== 'nanogpt' && set.meta) notes.push({ code: 'unused', file: set.meta.name });
  if (format !== 'huggingface' && set.config) notes.push({ code: 'unused', file: set.config.name });
  // example ids the model has: "Hello, world" in GPT-2's, else its first three
  const ids = gpt2Size ? '[15496][11][995]' : Array.from({ length: Math.min(3, V) }, (_, i) => `[${i}]`).join('');
  const missingMeta = format === 'nanogpt' && !set.meta && !gpt2Size;
  if (info.tokenizer === 'token_ids') notes.push({ code: set.tokenizer.length ? 'tokenizer_unread' : missingMeta ? 'token_ids_until' : 'token_ids', ids, vocab: V });
  const used = info.tokenizer === 'gpt2-bpe' ? tokenizerSet(set.tokenizer) ?? [] : [];
  if (used.length) notes.push({ code: 'gpt2_bpe', file: used.map((f) => f.name).join(' + ') });
  const unused = info.tokenizer === 'token_ids' ? [] : set.tokenizer.filter((f) => !used.includes(f));
  for (const f of [...unused, ...set.other]) notes.push({ code: 'unused', file: f.name });
  if (format === 'playground' && !info.source) notes.push({ code: 'training_checkpoint' });
  return notes;
}

// Where an opening's time goes: each lap() adds the time since the last one to its phase; measure()
// leaves one user-timing entry per phase ("openModel <phase>", its duration the phase's sum, detail
// {count}) on the timeline, where a trace or a benchmark (bench/open_bench.mjs) reads them.
// Phases: head (the small files and the model file's first bytes), tokenizer (open_begin and the
// tokenizer's files), plan (the headers'
// ranges, the plan, the model made), then per slice of the weights read (awaiting its bytes), copy
// (into the core's buffer) and convert (the core: into the parameters), and finish. A Llama-family
// opening (openFiles) has its headers (the rounds of open_files_plan that ask for bytes, and their
// reading) apart from plan (the last round: the buffers for the weights made); per slice read, copy
// (into the tensors' buffers, each part fed) and progress (the event); then build (open_finish: the
// model made on the buffers read) and finish.
function phases() {
  const perf = globalThis.performance;
  const start = perf?.now() ?? 0;
  let last = start;
  const sums = new Map();
  return {
    lap(phase) {
      if (!perf) return;
      const now = perf.now();
      const s = sums.get(phase) ?? { ms: 0, count: 0 };
      s.ms += now - last;
      s.count += 1;
      sums.set(phase, s);
      last = now;
    },
    measure(name) {
      if (typeof perf?.measure !== 'function') return;
      for (const [phase, { ms, count }] of sums) {
        try {
          perf.measure(`openModel ${phase}`, { start, duration: ms, detail: { count, file: name } });
        } catch { /* a timeline without user timing's options: no figures */ }
      }
    },
  };
}

/**
 * Opens a model's files (gpt.js openModel documents files and options) into a new session.
 * core: {newSession() → a GptSession, adopt(session, opened) → the run that owns it from now on,
 * answer(text) → the core's answer parsed (throws GptError on {"ok":false})}. On failure the
 * session is deleted and the GptError thrown.
 */
export async function openModel(core, files, options = {}) {
  if (await isLlamaSet(fileList(files))) return openFiles(core, fileList(files), options);
  const { newSession, adopt, answer } = core;
  const clock = phases();
  const set = classifyFiles(files);
  const chunk = options.chunkBytes ?? 16 << 20;
  const onProgress = options.onProgress ?? (() => {});
  const [meta, config] = await Promise.all([readSmall(set.meta), readSmall(set.config)]);
  const model = set.model.blob;
  const name = set.model.name;
  const slice = async (at, n) => new Uint8Array(await model.slice(at, at + n).arrayBuffer());
  const session = newSession();
  try {
    const head = await modelHead(set.model);
    clock.lap('head');
    answer(session.open_begin(JSON.stringify({ name, size: model.size, slice: chunk, config_name: set.config?.name ?? 'config.json' }), head, config));
    const tok = tokenizerSet(set.tokenizer);
    if (tok) {
      const [first, second] = await Promise.all(tok.map(readSmall));
      answer(session.open_tokenizer(JSON.stringify({ names: tok.map((f) => f.name) }), first, second ?? new Uint8Array(0)));
    }
    clock.lap('tokenizer');
    // the headers: the core asks for the ranges it lacks (a zip's end, directory, local headers,
    // data.pkl) until it can plan; then the model exists and the weights' ranges are known
    const planSpec = JSON.stringify({ meta_name: set.meta?.name ?? 'meta.pkl', config_name: set.config?.name ?? 'config.json' });
    let plan;
    for (let round = 0; ; round++) {
      plan = answer(session.open_plan(planSpec, meta, config));
      if (!plan.need) break;
      if (round === 32) throw new GptError(`${name}: its headers were not read whole after ${round} rounds`, { field: name });
      for (const [at, n] of plan.need) answer(session.open_piece(at, await slice(at, n)));
    }
    clock.lap('plan'); // the headers read and the model made
    let loaded = 0;
    for (const [at, n] of plan.read) {
      for await (const bytes of slices(model, at, n, chunk, name)) {
        clock.lap('read');
        const view = session.open_view(0, bytes.length); // made now: no growth since
        if (view === null) throw new GptError(`${name}: a slice of ${bytes.length} bytes does not fit the core's buffer`, { field: name });
        view.set(bytes);
        clock.lap('copy');
        answer(session.open_feed(bytes.length));
        clock.lap('convert');
        loaded += bytes.length;
        onProgress({ loaded, total: plan.bytes, name });
      }
    }
    const info = answer(session.open_finish());
    return adoptOpened(adopt, session, info, openNotes(set, info), clock, name);
  } catch (e) {
    session.delete();
    throw e;
  }
}

// The opened model with its notes, made the page's run by core.adopt; the clock's last lap and measure.
function adoptOpened(adopt, session, info, notes, clock, name) {
  info.opened.notes = notes;
  const run = adopt(session, info.opened);
  clock.lap('finish');
  clock.measure(name);
  return run;
}

// ---- a Llama-family model of several files: a Hugging Face folder, or one GGUF file ----

const INDEX = 'model.safetensors.index.json';
const LLAMA_SMALL = ['config.json', INDEX, 'tokenizer.json', 'tokenizer_config.json'];
const base = (f) => f.name.split(/[\\/]/).pop();

/**
 * Whether the files are a model open_files opens: a .gguf, an index of shards, several
 * .safetensors, or a config.json whose model_type is not GPT-2's (GPT-2's folder and this project's
 * files go through open_begin).
 */
async function isLlamaSet(list) {
  if (list.some((f) => /\.gguf$/i.test(f.name))) return true;
  if (list.some((f) => base(f) === INDEX)) return true;
  if (list.filter((f) => /\.safetensors$/i.test(f.name)).length > 1) return true;
  const config = list.find((f) => base(f) === 'config.json');
  if (!config || config.blob.size > SMALL_LIMIT) return false;
  try {
    const type = JSON.parse(await config.blob.text())?.model_type;
    return typeof type === 'string' && type !== 'gpt2';
  } catch {
    return false; // the GPT-2 path names the fault
  }
}

/** What the page says about a Llama-family opening: the files not used, a missing tokenizer. */
function filesNotes(list, begun, info) {
  const notes = [];
  const used = new Set([...begun.files, ...LLAMA_SMALL]);
  if (info.tokenizer === 'token_ids') {
    const ids = Array.from({ length: Math.min(3, info.config.vocab_size) }, (_, i) => `[${i}]`).join('');
    notes.push(begun.format === 'gguf'
      ? { code: 'gguf_no_tokenizer', ids, vocab: info.config.vocab_size, file: info.opened.tokenizer_note ?? '' }
      : { code: 'no_tokenizer', ids, vocab: info.config.vocab_size });
  }
  for (const f of list) if (!used.has(base(f))) notes.push({ code: 'unused', file: base(f) });
  return notes;
}

/** The name messages call the model by: its folder (from the picker's paths), else its file. */
function modelName(list) {
  const dir = list.map((f) => f.path.split(/[\\/]/)).find((p) => p.length > 1);
  if (dir) return dir[dir.length - 2];
  const gguf = list.find((f) => /\.gguf$/i.test(f.name));
  return gguf ? base(gguf) : 'the folder';
}

// The plan's ranges ([file, at, n], in the order the core takes them) as runs of one file read in
// one stream: ranges that follow one another in the file, apart by at most SPAN_GAP bytes (a GGUF's
// padding between tensors), read with the gaps. One stream per tensor would cost a stream's start
// each (hundreds for a model), and Chromium's file streams, opened by the hundred, could stall.
const SPAN_GAP = 1 << 16;
function spans(reads) {
  const out = [];
  for (const r of reads) {
    const [file, at, n] = r;
    const last = out[out.length - 1];
    if (last && last.file === file && at >= last.end && at - last.end <= SPAN_GAP) {
      last.ranges.push(r);
      last.end = at + n;
    } else out.push({ file, at, end: at + n, ranges: [r] });
  }
  return out;
}

async function openFiles(core, list, options) {
  const { newSession, adopt, answer } = core;
  const clock = phases();
  const chunk = options.chunkBytes ?? 16 << 20;
  const onProgress = options.onProgress ?? (() => {});
  const by = (n) => list.find((f) => base(f) === n);
  const small = await Promise.all(LLAMA_SMALL.map((n) => readSmall(by(n))));
  const models = list.filter((f) => /\.(safetensors|gguf)$/i.test(f.name));
  const name = options.name ?? modelName(list);
  const session = newSession();
  try {
    clock.lap('head');
    const spec = { name, files: models.map((f) => ({ name: base(f), size: f.blob.size })) };
    const begun = answer(session.open_files(JSON.stringify(spec), ...small));
    const files = begun.files.map((n) => models.find((f) => base(f) === n));
    clock.lap('tokenizer');
    // the headers: the ranges the core asks for, read in pieces of at least 4 MiB (a GGUF's header
    // has no length of its own: its vocabulary makes it megabytes)
    let plan;
    for (let round = 0; ; round++) {
      plan = answer(session.open_files_plan());
      if (!plan.need) break;
      if (round === 256) throw new GptError(`${name}: its headers were not read whole after ${round} rounds`, { field: name });
      clock.lap('headers');
      for (const [i, at, n] of plan.need) {
        const blob = files[i].blob;
        const m = Math.min(blob.size - at, Math.max(n, 4 << 20));
        answer(session.open_files_piece(i, at, new Uint8Array(await blob.slice(at, at + m).arrayBuffer())));
      }
      clock.lap('headers');
    }
    clock.lap('plan'); // the last open_files_plan: the model planned, the buffers for its weights made
    let loaded = 0;
    for (const run of spans(plan.read)) {
      const f = files[run.file];
      let next = 0; // the run's range being fed, and how many of its bytes are in
      let filled = 0;
      let at = run.at; // the file's byte the slice starts at
      for await (const bytes of slices(f.blob, run.at, run.end - run.at, chunk, base(f))) {
        clock.lap('read');
        // the slice's bytes into the ranges it covers (skipping the gaps between them), each range's
        // part written into the core's buffer for it (made now: no growth since) and fed
        for (let p = 0; p < bytes.length && next < run.ranges.length;) {
          const [, start, n] = run.ranges[next];
          if (at + p < start + filled) {
            p = Math.min(bytes.length, start + filled - at);
            continue;
          }
          const k = Math.min(n - filled, bytes.length - p);
          const view = session.open_view(0, k);
          if (view === null) throw new GptError(`${base(f)}: ${k} bytes do not fit the core's buffer`, { field: base(f) });
          view.set(bytes.subarray(p, p + k));
          answer(session.open_feed(k));
          p += k;
          filled += k;
          loaded += k;
          if (filled === n) next += 1, filled = 0;
        }
        at += bytes.length;
        clock.lap('copy');
        onProgress({ loaded, total: plan.bytes, name: base(f) });
        clock.lap('progress');
      }
      for (; next < run.ranges.length && run.ranges[next][2] === 0; next++) answer(session.open_feed(0)); // empty tensors last
    }
    const info = answer(session.open_finish());
    clock.lap('build');
    return adoptOpened(adopt, session, info, filesNotes(list, begun, info), clock, name);
  } catch (e) {
    session.delete();
    throw e;
  }
}
