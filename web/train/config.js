// config.js — the training page's STATE: what the learner chose (task, model, training,
// prompts, language), its per-field validation, the run spec it makes for the core, and the
// permalink that carries it. No DOM here; everything is plain data, so Node can test it too.
//
// The state keeps every field as the TEXT the learner typed (fields.n_embd = '64'), so a bad
// value stays on screen with its message, as in the stepper; validate(state) turns the texts into
// numbers and a message per field. The model's memory is the core's to say (GPT::memory_bytes and
// its limit, in the worker): memorySpec(state, v) is what to ask it, and withMemory(v, spec,
// answer) adds its answer to the validation. Nothing starts until that has no errors.
//
// Permalink:  #task=copy&preset=tiny&steps=300&seed=7&mask=inclusive&lang=zh …
//   readable key=value pairs (course authors write them by hand); only values that differ from
//   the defaults are written; unknown keys are ignored; a bad value is kept as typed and shown
//   with its message. The weights are never in the link (download a checkpoint for that). The
//   user's own text is carried only while it is short (MAX_LINK_TEXT characters).
//
// Limits (the page's, within the core's): see FIELDS; text ≤ MAX_TEXT_BYTES of UTF-8; the model's
// memory: the core's limit (kMaxModelBytes, 1 GiB), with the core's message past it.

export const TASKS = ['copy', 'reverse', 'sort', 'induction', 'sums', 'grammar'];

// The model's variants (gpt.h; the run spec's keys), each a choice whose first value is the
// default: positions, the norm, the MLP, key/value heads ('all': n_head), a sliding window and its
// attention sinks (the core refuses sinks without a window, naming 'sink': the form shows that).
export const VARIANTS = {
  pos: ['learned', 'rope', 'alibi', 'none'],
  norm: ['layernorm', 'rmsnorm'],
  mlp: ['gelu', 'swiglu'],
  n_kv_head: ['all', '2', '1'],
  window: ['none', '8', '16'],
  sink: ['none', '1', '4'],
};

/**
 * The parameters of a run's model (gpt.h's layout: GPTConfig::num_parameters) for the dimensions
 * `vals`, the state's variants and a vocabulary of V (0: without the embedding), biases on.
 */
export function paramCount(vals, state, V) {
  const { n_layer: L, n_head: NH, n_embd: C, block_size: T } = vals;
  const hs = C / NH, H = 4 * C;
  const kv = state.n_kv_head === 'all' || !VARIANTS.n_kv_head.includes(state.n_kv_head) ? NH : Number(state.n_kv_head);
  const W = C + 2 * kv * hs;
  const norm = state.norm === 'rmsnorm' ? C : 2 * C;  // RMSNorm: a weight, no bias
  const mlp = state.mlp === 'swiglu' ? 2 * H * C + 2 * H + C * H + C : H * C + H + C * H + C;
  const block = 2 * norm + W * C + W + C * C + C + mlp;
  return V * C + (state.pos === 'learned' || state.pos === undefined ? T * C : 0) + L * block + norm;
}

/** The run spec's keys for the variants that are not the default. */
export function variantSpec(state) {
  const out = {};
  for (const [k, vals] of Object.entries(VARIANTS)) {
    const v = state[k];
    if (v === vals[0] || !vals.includes(v)) continue;
    out[k] = /^\d+$/.test(v) ? Number(v) : v;
  }
  return out;
}
export const SOURCES = [...TASKS, 'text'];
export const PRESETS = {
  tiny: { n_layer: 2, n_head: 4, n_embd: 64, block_size: 64 },
  small: { n_layer: 4, n_head: 4, n_embd: 128, block_size: 128 },
};
export const MAX_TEXT_BYTES = 1_000_000;
export const MAX_LINK_TEXT = 2000;
/** The stepper's own limit on a matrix's rows (web/common/state.js MAX_DIM): maps' prompts stay within it. */
export const STEPPER_MAX_ROWS = 64;

/** Numeric fields: kind, range, default. */
export const FIELDS = {
  n_layer: { kind: 'int', min: 1, max: 8, group: 'model' },
  n_head: { kind: 'int', min: 1, max: 16, group: 'model' },
  n_embd: { kind: 'int', min: 4, max: 256, group: 'model' },
  block_size: { kind: 'int', min: 4, max: 128, group: 'model' },
  lr: { kind: 'float', min: 1e-6, max: 10, group: 'train' },
  batch_size: { kind: 'int', min: 1, max: 64, group: 'train' },
  steps: { kind: 'int', min: 1, max: 20000, group: 'train' },
  seed: { kind: 'int', min: 0, max: 2 ** 53, group: 'train' },
  eval_interval: { kind: 'int', min: 1, max: 20000, group: 'train' },
  sample_every: { kind: 'int', min: 0, max: 20000, group: 'train' },
  // attention maps and generation
  gen_temperature: { kind: 'float', min: 0.01, max: 10, group: 'gen' },
  gen_top_k: { kind: 'int', min: 0, max: 8192, group: 'gen' },
  gen_top_p: { kind: 'float', min: 0.01, max: 1, group: 'gen' },
  gen_seed: { kind: 'int', min: 0, max: 2 ** 53, group: 'gen' },
  gen_max: { kind: 'int', min: 1, max: 1000, group: 'gen' },
};
export const MODEL_FIELDS = ['n_layer', 'n_head', 'n_embd', 'block_size'];
export const TRAIN_FIELDS = ['lr', 'batch_size', 'steps', 'seed', 'eval_interval', 'sample_every'];
export const GEN_FIELDS = ['gen_temperature', 'gen_top_k', 'gen_top_p', 'gen_seed', 'gen_max'];

const DEFAULT_FIELDS = {
  ...Object.fromEntries(Object.entries(PRESETS.tiny).map(([k, v]) => [k, String(v)])),
  lr: '0.003', batch_size: '16', steps: '2000', seed: '1337', eval_interval: '25', sample_every: '50',
  gen_temperature: '1', gen_top_k: '0', gen_top_p: '1', gen_seed: '1', gen_max: '24',
};

export function defaultState() {
  return {
    task: 'copy',
    text: '',
    text_name: 'text',
    preset: 'tiny',
    mask: 'strict',
    softmax: 'stable',
    ...Object.fromEntries(Object.entries(VARIANTS).map(([k, vals]) => [k, vals[0]])),
    fields: { ...DEFAULT_FIELDS },
    prompt: '', // attention maps ('' = the task's example)
    gen_prompt: '', // generation ('' = the task's example up to its '=')
    next_prompt: '', // the next-token panel ('' = the generation's prompt)
    gen_greedy: true,
    head_scores: false, // record every head's induction and previous-token scores at each evaluation
    lang: 'en',
  };
}

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A clean state from anything (a link, a stored object): unknown keys dropped, never throws. */
export function cleanState(obj) {
  const s = defaultState();
  if (!isObj(obj)) return s;
  if (SOURCES.includes(obj.task)) s.task = obj.task;
  if (typeof obj.text === 'string' && obj.text.length <= MAX_TEXT_BYTES * 4) s.text = obj.text;
  if (typeof obj.text_name === 'string' && obj.text_name.length <= 200) s.text_name = obj.text_name;
  if (['tiny', 'small', 'custom'].includes(obj.preset)) s.preset = obj.preset;
  if (['strict', 'inclusive'].includes(obj.mask)) s.mask = obj.mask;
  if (['stable', 'naive'].includes(obj.softmax)) s.softmax = obj.softmax;
  for (const [k, vals] of Object.entries(VARIANTS)) if (vals.includes(obj[k])) s[k] = obj[k];
  if (isObj(obj.fields)) {
    for (const k of Object.keys(FIELDS)) {
      const v = obj.fields[k];
      if (typeof v === 'string' && v.length <= 40) s.fields[k] = v;
      else if (typeof v === 'number' && Number.isFinite(v)) s.fields[k] = String(v);
    }
  }
  for (const k of ['prompt', 'gen_prompt', 'next_prompt']) if (typeof obj[k] === 'string' && obj[k].length <= 1000) s[k] = obj[k];
  if (typeof obj.gen_greedy === 'boolean') s.gen_greedy = obj.gen_greedy;
  if (typeof obj.head_scores === 'boolean') s.head_scores = obj.head_scores;
  if (['en', 'zh'].includes(obj.lang)) s.lang = obj.lang;
  return s;
}

/** The preset whose four dimensions the fields hold, or 'custom'. */
export function presetOf(fields) {
  for (const [name, p] of Object.entries(PRESETS)) {
    if (MODEL_FIELDS.every((k) => fields[k].trim() === String(p[k]))) return name;
  }
  return 'custom';
}

/** Sets the four dimensions of a preset. */
export function applyPreset(state, name) {
  const p = PRESETS[name];
  if (!p) return state;
  const fields = { ...state.fields };
  for (const k of MODEL_FIELDS) fields[k] = String(p[k]);
  return { ...state, preset: name, fields };
}

/**
 * Reads one field's text. Returns {value} or {error: {key, params}} (an i18n key and its
 * parameters, so the page says it in the learner's language).
 */
export function readField(key, text) {
  const f = FIELDS[key];
  const s = String(text ?? '').trim();
  if (s === '') return { error: { key: 'err.empty', params: { min: fmtLimit(f.min), max: fmtLimit(f.max) } } };
  // plain decimal or exponent notation; no hex, no "1e", no "Infinity"
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return { error: { key: 'err.notNumber', params: { text: s.slice(0, 20) } } };
  const v = Number(s);
  if (!Number.isFinite(v)) return { error: { key: 'err.notNumber', params: { text: s.slice(0, 20) } } };
  if (f.kind === 'int' && !Number.isInteger(v)) return { error: { key: 'err.int', params: { min: fmtLimit(f.min), max: fmtLimit(f.max) } } };
  if (v < f.min || v > f.max) return { error: { key: 'err.range', params: { min: fmtLimit(f.min), max: fmtLimit(f.max) } } };
  return { value: v };
}

function fmtLimit(v) {
  if (v === 2 ** 53) return '2⁵³';
  if (v !== 0 && Math.abs(v) < 1e-3) return v.toExponential(0).replace('e-', '·10⁻').replace(/\d+$/, (d) => [...d].map((c) => '⁰¹²³⁴⁵⁶⁷⁸⁹'[c]).join(''));
  return v.toLocaleString('en-US');
}

/** UTF-8 byte length of a string. */
export function utf8Bytes(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) { n += 4; i++; } else n += 3;
  }
  return n;
}

/** Code points (the tokenizer's characters) of a string, up to `cap`. */
export function codePoints(s, cap = Infinity) {
  let n = 0;
  for (const _ of s) { if (++n >= cap) break; } // eslint-disable-line no-unused-vars
  return n;
}

/**
 * Validates a state. Returns {ok, errors: {field: {key, params}}, values: {field: number}}.
 * Fields: the FIELDS keys, plus 'text' (the user's text); 'model' (the memory) comes from the core
 * (withMemory).
 */
export function validate(state) {
  const errors = {};
  const values = {};
  for (const k of Object.keys(FIELDS)) {
    const r = readField(k, state.fields[k]);
    if (r.error) errors[k] = r.error; else values[k] = r.value;
  }
  if (values.n_embd !== undefined && values.n_head !== undefined && values.n_embd % values.n_head !== 0) {
    errors.n_head = { key: 'err.divides', params: { n_head: values.n_head, n_embd: values.n_embd } };
  }
  if (state.task === 'text') {
    const bytes = utf8Bytes(state.text);
    if (state.text.length === 0) errors.text = { key: 'err.textEmpty', params: {} };
    else if (bytes > MAX_TEXT_BYTES) errors.text = { key: 'err.textBig', params: { bytes: bytes.toLocaleString('en-US'), max: MAX_TEXT_BYTES.toLocaleString('en-US') } };
    else if (values.block_size !== undefined) {
      const need = 2 * (values.block_size + 1); // data.h split_dataset: a window for training and one for validation
      const n = codePoints(state.text, need + 1);
      if (n < need) errors.text = { key: 'err.textShort', params: { n, need, block_size: values.block_size } };
    }
  }
  return { ok: Object.keys(errors).length === 0, errors, values };
}

/**
 * What to ask the core about the memory of a validated state (the worker's 'memory' request: the
 * run spec's model, batch and data, which are what the memory depends on), or null while one of
 * those fields has an error.
 */
export function memorySpec(state, v) {
  if ([...MODEL_FIELDS, 'batch_size', 'text'].some((k) => v.errors[k])) return null;
  const { n_layer, n_head, n_embd, block_size, batch_size } = v.values;
  const spec = { preset: 'tiny', n_layer, n_head, n_embd, block_size, batch_size, ...variantSpec(state) };
  if (state.task === 'text') { spec.text = state.text; spec.text_name = state.text_name || 'text'; } else spec.task = state.task;
  return spec;
}

/**
 * The validation v with the core's answer about memorySpec's memory: undefined while unanswered
 * (then not ok, memory 'pending': nothing may start yet), {bytes, limit}, or {error: {message,
 * field}}: the core's message, beside the text when the core names it, else beside the model
 * ('model', error key 'err.core'). Without a spec (null), v as it is.
 */
export function withMemory(v, spec, answer) {
  if (!spec) return v;
  if (answer === undefined) return { ...v, ok: false, memory: 'pending' };
  if (!answer.error) return { ...v, memory: 'ok' };
  const at = answer.error.field === 'text' ? 'text' : 'model';
  const errors = { ...v.errors, [at]: { key: 'err.core', params: { message: answer.error.message } } };
  return { ...v, ok: false, memory: 'error', errors };
}

/** The core's run spec (gpt_json.h) for a valid state, with optional overrides (experiments). */
export function runSpec(state, values, over = {}) {
  const spec = {
    preset: 'tiny',
    n_layer: values.n_layer, n_head: values.n_head, n_embd: values.n_embd, block_size: values.block_size,
    mask: state.mask, softmax: state.softmax, ...variantSpec(state),
    batch_size: values.batch_size, steps: values.steps, lr: values.lr,
    eval_interval: values.eval_interval, seed: values.seed,
  };
  if (state.task === 'text') { spec.text = state.text; spec.text_name = state.text_name || 'text'; } else spec.task = state.task;
  if (state.head_scores) spec.head_scores_interval = values.eval_interval; // the core scores the heads at each evaluation
  return { ...spec, ...over };
}

// ───────────────────────────── permalink ─────────────────────────────

const LINK_KEYS = ['task', 'preset', 'mask', 'softmax', ...Object.keys(VARIANTS), ...MODEL_FIELDS, ...TRAIN_FIELDS, 'prompt', 'gen_prompt', 'next_prompt', 'gen_greedy', 'head_scores', ...GEN_FIELDS, 'lang', 'text', 'text_name'];

/** The hash for a state: only what differs from the defaults. */
export function encodeHash(state) {
  const d = defaultState();
  const parts = [];
  const put = (k, v) => parts.push(`${k}=${encodeURIComponent(v)}`);
  if (state.task !== d.task) put('task', state.task);
  if (state.task === 'text' && state.text.length <= MAX_LINK_TEXT) {
    put('text', state.text);
    if (state.text_name && state.text_name !== 'text') put('text_name', state.text_name);
  }
  if (state.mask !== d.mask) put('mask', state.mask);
  if (state.softmax !== d.softmax) put('softmax', state.softmax);
  for (const k of Object.keys(VARIANTS)) if (state[k] !== d[k]) put(k, state[k]);
  const preset = presetOf(state.fields);
  if (preset !== 'custom' && preset !== 'tiny') put('preset', preset);
  for (const k of Object.keys(FIELDS)) {
    if (preset !== 'custom' && MODEL_FIELDS.includes(k)) continue;
    if (state.fields[k] !== d.fields[k]) put(k, state.fields[k]);
  }
  if (state.prompt) put('prompt', state.prompt);
  if (state.gen_prompt) put('gen_prompt', state.gen_prompt);
  if (state.next_prompt) put('next_prompt', state.next_prompt);
  if (state.gen_greedy !== d.gen_greedy) put('gen_greedy', String(state.gen_greedy));
  if (state.head_scores) put('head_scores', '1');
  if (state.lang !== d.lang) put('lang', state.lang);
  return parts.length ? `#${parts.join('&')}` : '';
}

/**
 * The state in a hash ('#task=…&…'); null when the hash holds none of the page's keys. A preset is
 * applied first, then the dimensions given; bad values are kept as text (validate() flags them).
 * Never throws.
 */
export function decodeHash(hash) {
  try {
    const s = String(hash ?? '').replace(/^#/, '');
    if (!s || s.length > 100_000) return null;
    const got = {};
    for (const part of s.split('&')) {
      const eq = part.indexOf('=');
      if (eq <= 0) continue;
      const k = part.slice(0, eq);
      if (!LINK_KEYS.includes(k)) continue;
      let v = part.slice(eq + 1);
      try { v = decodeURIComponent(v.replace(/\+/g, ' ')); } catch { /* keep it raw */ }
      got[k] = v;
    }
    if (Object.keys(got).length === 0) return null;
    let st = defaultState();
    if (got.preset === 'tiny' || got.preset === 'small') st = applyPreset(st, got.preset);
    const obj = { ...st, fields: { ...st.fields } };
    if (SOURCES.includes(got.task)) obj.task = got.task;
    for (const k of ['mask', 'softmax', ...Object.keys(VARIANTS), 'lang', 'prompt', 'gen_prompt', 'next_prompt', 'text', 'text_name']) if (got[k] !== undefined) obj[k] = got[k];
    if (got.gen_greedy !== undefined) obj.gen_greedy = got.gen_greedy !== 'false' && got.gen_greedy !== '0';
    if (got.head_scores !== undefined) obj.head_scores = got.head_scores !== 'false' && got.head_scores !== '0';
    for (const k of Object.keys(FIELDS)) if (got[k] !== undefined) obj.fields[k] = got[k].slice(0, 40);
    const clean = cleanState(obj);
    clean.preset = presetOf(clean.fields);
    return clean;
  } catch {
    return null;
  }
}
