// foreign-files.mjs — writes models "trained elsewhere" in their own layouts, from Node, for the
// tests of the page's "Open a model" and of gpt.js's openModel (CI has no network, no real weights
// and no PyTorch in Node): nanoGPT's ckpt.pt (a stored zip of archive/data.pkl, a pickle of
// {"model": OrderedDict of tensors, "model_args", "iter_num", "config"}, and one record per
// storage, as torch.save lays it out) with its meta.pkl ({"vocab_size","itos","stoi"}), and a
// Hugging Face GPT-2 model.safetensors (HF's names, Conv1D weights in × out) with its config.json.
// The layouts are those tests/import_torch_test.py writes with PyTorch itself; the weights are
// seeded pseudo-random numbers, the same for the same seed. Limits: float32 and bfloat16 storages,
// pickle protocol 2, zips without zip64 (files under 4 GiB).

import { zip } from '../../web/common/zip.js'; // the SCORM package's writer: stored entries, as torch.save writes them

// ------------------------------------------------------------------ the weights
/** nanoGPT's tensors of a config {n_layer, n_head, n_embd, block_size, vocab_size, bias}, in its order. */
/** nanoGPT's state dict names and shapes for a config: [[name, shape]]. */
export function nanoGptShapes(cfg) {
  const C = cfg.n_embd;
  const bias = cfg.bias !== false;
  const shapes = [['transformer.wte.weight', [cfg.vocab_size, C]], ['transformer.wpe.weight', [cfg.block_size, C]]];
  for (let l = 0; l < cfg.n_layer; l++) {
    const h = `transformer.h.${l}.`;
    const layer = [
      ['ln_1.weight', [C]], ['ln_1.bias', [C]],
      ['attn.c_attn.weight', [3 * C, C]], ['attn.c_attn.bias', [3 * C]],
      ['attn.c_proj.weight', [C, C]], ['attn.c_proj.bias', [C]],
      ['ln_2.weight', [C]], ['ln_2.bias', [C]],
      ['mlp.c_fc.weight', [4 * C, C]], ['mlp.c_fc.bias', [4 * C]],
      ['mlp.c_proj.weight', [C, 4 * C]], ['mlp.c_proj.bias', [C]],
    ];
    for (const [n, s] of layer) if (bias || !n.endsWith('.bias')) shapes.push([h + n, s]);
  }
  shapes.push(['transformer.ln_f.weight', [C]]);
  if (bias) shapes.push(['transformer.ln_f.bias', [C]]);
  return shapes;
}

export function nanoGptTensors(cfg, seed = 1) {
  const shapes = nanoGptShapes(cfg);
  let state = (seed >>> 0) || 1;
  const next = () => {  // xorshift32 → [-1, 1)
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return state / 2 ** 31 - 1;
  };
  return shapes.map(([name, shape]) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    const ln = /ln_\d\.weight$|ln_f\.weight$/.test(name);
    const scale = name.includes('wte') || name.includes('wpe') ? 0.5 : 0.08;
    for (let i = 0; i < n; i++) data[i] = ln ? 1 + 0.1 * next() : scale * next();
    return { name, shape, data };
  });
}

// ------------------------------------------------------------------ safetensors (Hugging Face)
function transpose(data, rows, cols) {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c];
  return out;
}

/** Bytes of a safetensors file of [{name, shape, data: Float32Array}] (F32) with string metadata. */
export function safetensorsBytes(tensors, metadata = null) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + t.data.length * 4] };
    offset += t.data.length * 4;
  }
  let json = JSON.stringify(header);
  while ((8 + json.length) % 8) json += ' ';
  const head = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + head.length + offset);
  new DataView(out.buffer).setUint32(0, head.length, true);
  out.set(head, 8);
  let at = 8 + head.length;
  for (const t of tensors) {
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.length * 4), at);
    at += t.data.length * 4;
  }
  return out;
}

/** A GPT-2-family model.safetensors in HF's layout and its config.json: {model, config} as bytes. */
export function hfGpt2Files(cfg, seed = 1, { prefix = '', activation = 'gelu_new', eps = 1e-5 } = {}) {
  const conv1d = /(c_attn|c_proj|c_fc)\.weight$/;
  const tensors = nanoGptTensors({ ...cfg, bias: true }, seed).map((t) => {
    const name = prefix + t.name.replace(/^transformer\./, '');
    if (!conv1d.test(t.name)) return { ...t, name };
    const [rows, cols] = t.shape;  // nanoGPT's out × in → HF's Conv1D in × out
    return { name, shape: [cols, rows], data: transpose(t.data, rows, cols) };
  });
  const config = {
    model_type: 'gpt2', activation_function: activation, layer_norm_epsilon: eps, n_layer: cfg.n_layer,
    n_head: cfg.n_head, n_embd: cfg.n_embd, n_positions: cfg.block_size, vocab_size: cfg.vocab_size,
  };
  return { model: safetensorsBytes(tensors, { format: 'pt' }), config: new TextEncoder().encode(JSON.stringify(config)) };
}

/**
 * The header alone of a GPT-2-family model.safetensors (F32, HF's names and Conv1D layout) and the
 * size of the whole file it describes: {head, size}, for sizing models too large to write.
 */
export function hfGpt2Header(cfg) {
  const conv1d = /(c_attn|c_proj|c_fc)\.weight$/;
  const header = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, shape] of nanoGptShapes({ ...cfg, bias: true })) {
    const n = shape.reduce((a, b) => a * b, 1) * 4;
    header[name.replace(/^transformer\./, '')] = { dtype: 'F32', shape: conv1d.test(name) ? [shape[1], shape[0]] : shape, data_offsets: [offset, offset + n] };
    offset += n;
  }
  let json = JSON.stringify(header);
  while ((8 + json.length) % 8) json += ' ';
  const body = new TextEncoder().encode(json);
  const head = new Uint8Array(8 + body.length);
  new DataView(head.buffer).setUint32(0, body.length, true);
  head.set(body, 8);
  return { head, size: head.length + offset };
}

// ------------------------------------------------------------------ pickle (protocol 2)
class Pickler {
  constructor() { this.parts = [0x80, 2]; }
  byte(...b) { this.parts.push(...b); }
  u32(n) { this.byte(n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255); }
  str(s) { const b = new TextEncoder().encode(s); this.byte(0x58); this.u32(b.length); this.parts.push(...b); }  // BINUNICODE
  int(n) { if (n >= 0 && n < 256) this.byte(0x4b, n); else { this.byte(0x4a); this.u32(n); } }  // BININT1 / BININT
  bool(v) { this.byte(v ? 0x88 : 0x89); }
  float(x) { const b = new Uint8Array(8); new DataView(b.buffer).setFloat64(0, x, false); this.byte(0x47, ...b); }  // BINFLOAT
  global(mod, name) { this.parts.push(0x63, ...new TextEncoder().encode(`${mod}\n${name}\n`)); }
  value(v) {
    if (typeof v === 'string') this.str(v);
    else if (typeof v === 'boolean') this.bool(v);
    else if (Number.isInteger(v)) this.int(v);
    else if (typeof v === 'number') this.float(v);
    else if (v === null) this.byte(0x4e);
    else if (typeof v === 'function') v(this);
    else if (v instanceof Map || typeof v === 'object') this.dict(v instanceof Map ? [...v] : Object.entries(v));
  }
  dict(entries) {
    this.byte(0x7d);  // EMPTY_DICT
    if (!entries.length) return;
    this.byte(0x28);  // MARK
    for (const [k, v] of entries) { this.value(k); this.value(v); }
    this.byte(0x75);  // SETITEMS
  }
  tuple(items) { this.byte(0x28); for (const v of items) this.value(v); this.byte(0x74); }
  bytes() { this.byte(0x2e); return new Uint8Array(this.parts); }
}

// A tensor as torch.save pickles it: _rebuild_tensor_v2(storage, 0, size, stride, False, OrderedDict()).
function tensorPickle(key, storage, t) {
  return (p) => {
    p.global('torch._utils', '_rebuild_tensor_v2');
    p.byte(0x28);  // MARK: the arguments
    p.byte(0x28); p.value('storage'); p.global('torch', storage); p.value(key); p.value('cpu'); p.value(t.data.length); p.byte(0x74);
    p.byte(0x51);  // BINPERSID
    p.int(0);
    p.tuple(t.shape);
    const stride = t.shape.map((_, i) => t.shape.slice(i + 1).reduce((a, b) => a * b, 1));
    p.tuple(stride);
    p.bool(false);
    p.global('collections', 'OrderedDict'); p.byte(0x29, 0x52);  // OrderedDict() : EMPTY_TUPLE, REDUCE
    p.byte(0x74, 0x52);  // TUPLE, REDUCE
  };
}

function orderedDict(entries) {
  return (p) => {
    p.global('collections', 'OrderedDict'); p.byte(0x29, 0x52);
    p.byte(0x28);
    for (const [k, v] of entries) { p.value(k); p.value(v); }
    p.byte(0x75);
  };
}

function storageBytes(t, dtype) {
  if (dtype === 'float32') return new Uint8Array(t.data.buffer.slice(t.data.byteOffset, t.data.byteOffset + t.data.length * 4));
  const u32 = new Uint32Array(t.data.buffer, t.data.byteOffset, t.data.length);
  const out = new Uint8Array(t.data.length * 2);
  for (let i = 0; i < u32.length; i++) {  // bfloat16: the high half, rounded to nearest even
    const b = (u32[i] + 0x7fff + ((u32[i] >>> 16) & 1)) >>> 16;
    out[2 * i] = b & 255;
    out[2 * i + 1] = b >>> 8;
  }
  return out;
}

/**
 * nanoGPT's ckpt.pt of a config {n_layer, n_head, n_embd, block_size, vocab_size, bias}: options
 * origMod (torch.compile's "_orig_mod." prefix), dtype ('float32' | 'bfloat16'), dataset.
 */
export function nanoGptCkpt(cfg, seed = 1, { origMod = false, dtype = 'float32', dataset = 'shakespeare_char' } = {}) {
  const tensors = nanoGptTensors(cfg, seed);
  const storage = dtype === 'bfloat16' ? 'BFloat16Storage' : 'FloatStorage';
  const sd = tensors.map((t, i) => [(origMod ? '_orig_mod.' : '') + t.name, tensorPickle(String(i), storage, t)]);
  const p = new Pickler();
  p.dict([
    ['model', orderedDict(sd)],
    ['model_args', { n_layer: cfg.n_layer, n_head: cfg.n_head, n_embd: cfg.n_embd, block_size: cfg.block_size, bias: cfg.bias !== false, vocab_size: cfg.vocab_size, dropout: 0.0 }],
    ['iter_num', 5000],
    ['best_val_loss', 1.5],
    ['config', { dataset }],
  ]);
  const entries = [['archive/data.pkl', p.bytes()], ['archive/byteorder', new TextEncoder().encode('little')]];
  tensors.forEach((t, i) => entries.push([`archive/data/${i}`, storageBytes(t, dtype)]));
  entries.push(['archive/version', new TextEncoder().encode('3\n')]);
  return zip(entries.map(([path, data]) => ({ path, data }))); // stored: no deflateRaw
}

/** nanoGPT's meta.pkl of a character vocabulary (the characters in code-point order). */
export function metaPkl(chars) {
  const p = new Pickler();
  p.dict([
    ['vocab_size', chars.length],
    ['itos', new Map(chars.map((c, i) => [i, c]))],
    ['stoi', new Map(chars.map((c, i) => [c, i]))],
  ]);
  return p.bytes();
}

