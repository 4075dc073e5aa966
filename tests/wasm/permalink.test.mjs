// permalink.test.mjs — web/common/permalink.js: the state in the URL hash, exact and junk-proof.
import test from 'node:test';
import assert from 'node:assert/strict';
import { encodeState, decodeState, linkFor } from '../../web/common/permalink.js';

const STATE = {
  version: 1,
  preset: 'identity',
  mode: 'x',
  matrices: { x: '1 0; 0 1', W_q: '1 0\n0 1', W_k: '[[1, 0], [0, 1]]', W_v: '1 0; 0 zz ← not a number', W_o: '' },
  use_W_o: true,
  options: { n_head: 1, causal: true, mask: 'inclusive', base: 0, scale: true, softmax: 'naive' },
  seed: 42,
  view: 'step',
  step: 5,
  lang: 'zh',
  focus: 'W_v',
};

test('round trip keeps the exact state, invalid text and Unicode included', () => {
  const hash = encodeState(STATE);
  assert.match(hash, /^#s=1\.[A-Za-z0-9_-]+$/);
  assert.deepEqual(decodeState(hash), STATE);
  assert.deepEqual(decodeState(hash.slice(1)), STATE);          // without '#'
  assert.deepEqual(decodeState(`https://x.test/p/?a=1${hash}`), STATE); // a whole URL
  assert.deepEqual(decodeState(`#lang=zh&${hash.slice(1)}`), STATE);   // among other parameters
  assert.deepEqual(decodeState(hash.slice(3)), STATE);          // the bare payload
  const zh = { ...STATE, matrices: { x: '注意力 😀 \u0000 "quotes" \\ ' } };
  assert.deepEqual(decodeState(encodeState(zh)), zh);
});

test('URL-safe: survives percent-encoding, no characters that need escaping', () => {
  const hash = encodeState(STATE);
  const payload = hash.slice(3);
  assert.equal(encodeURIComponent(payload), payload);
  assert.deepEqual(decodeState(`#s=${encodeURIComponent(hash.slice(3))}`), STATE);
  assert.equal(linkFor(STATE, 'http://h.test/a/b.html#old'), `http://h.test/a/b.html${hash}`);
});

test('a 16×16, 3-matrix state stays a reasonable URL', () => {
  const m = Array.from({ length: 16 }, (_, i) => Array.from({ length: 16 }, (_, j) => ((i * 7 + j * 3) % 11 - 5) / 10).join(' ')).join('\n');
  const s = { ...STATE, matrices: { x: m, W_q: m, W_k: m, W_v: m } };
  const hash = encodeState(s);
  assert.ok(hash.length < 16_000, `${hash.length}`);
  assert.deepEqual(decodeState(hash), s);
});

test('junk never throws and gives null', () => {
  const good = encodeState(STATE);
  const junk = [
    undefined, null, 42, {}, [], '', '#', '#s=', '#s=1.', '#s=2.' + good.slice(5), '#s=1.!!!!', '#s=1.a',
    '#s=1.' + 'A'.repeat(5), good.slice(0, -7), good + '%', '#identity', '#s=1.bnVsbA', // "null"
    '#s=1.WzEsMl0', // "[1,2]"
    '#s=1.eyJ2ZXJzaW9uIjoyfQ', // {"version":2}
    '#s=1.' + Buffer.from([0xff, 0xfe, 0xfd]).toString('base64url'), // not UTF-8
    '#s=1.' + 'A'.repeat(2_000_001),
    '#s=%E0%A4%A',
  ];
  for (const j of junk) assert.equal(decodeState(j), null, `${String(j).slice(0, 40)}`);
});

test('validate: the state module can refuse or normalise a state', () => {
  const hash = encodeState(STATE);
  assert.equal(decodeState(hash, { validate: () => false }), null);
  assert.equal(decodeState(hash, { validate: () => { throw new Error('bad'); } }), null);
  assert.equal(decodeState(hash, { validate: () => ({ ok: false, errors: ['x'] }) }), null);
  assert.equal(decodeState(hash, { validate: () => ['mode is wrong'] }), null);
  assert.deepEqual(decodeState(hash, { validate: () => true }), STATE);
  assert.deepEqual(decodeState(hash, { validate: () => [] }), STATE);
  assert.deepEqual(decodeState(hash, { validate: (s) => ({ ok: true, state: { ...s, step: 0 } }) }), { ...STATE, step: 0 });
  assert.deepEqual(decodeState(hash, { validate: (s) => ({ ...s, view: 'all' }) }), { ...STATE, view: 'all' });
});
