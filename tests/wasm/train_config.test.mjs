// train_config.test.mjs — the training page's plain-data modules in Node: per-field validation
// (web/train/config.js), the permalink (encode ⇄ decode, junk never throws, bad values kept as
// typed), the run spec the page sends to the core, and the experiment sentence
// (web/train/experiments.js), which must quote the runs' own numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  defaultState, validate, readField, runSpec, paramCount, encodeHash, decodeHash, applyPreset, presetOf, memorySpec, withMemory, utf8Bytes,
  codePoints,
} from '../../web/train/config.js';
import { experimentSentence, compareTrain, lastCommonVal } from '../../web/train/experiments.js';

const t = (k, p = {}) => `${k}${Object.keys(p).length ? ` ${JSON.stringify(p)}` : ''}`;

test('defaults are valid and make the tiny preset on the copy task', () => {
  const s = defaultState();
  const v = validate(s);
  assert.equal(v.ok, true, JSON.stringify(v.errors));
  const spec = runSpec(s, v.values);
  assert.deepEqual({ n_layer: spec.n_layer, n_head: spec.n_head, n_embd: spec.n_embd, block_size: spec.block_size }, { n_layer: 2, n_head: 4, n_embd: 64, block_size: 64 });
  assert.equal(spec.task, 'copy');
  assert.equal(spec.mask, 'strict');
  assert.equal(spec.softmax, 'stable');
  assert.equal(presetOf(s.fields), 'tiny');
  assert.equal(encodeHash(s), '');
});

test('each field: empty, not a number, not whole, out of range — with the range in the message', () => {
  assert.equal(readField('n_layer', '').error.key, 'err.empty');
  assert.equal(readField('n_layer', 'two').error.key, 'err.notNumber');
  assert.equal(readField('n_layer', '0x10').error.key, 'err.notNumber');
  assert.equal(readField('n_layer', 'Infinity').error.key, 'err.notNumber');
  assert.equal(readField('n_layer', '1.5').error.key, 'err.int');
  assert.deepEqual(readField('n_layer', '9').error, { key: 'err.range', params: { min: '1', max: '8' } });
  assert.deepEqual(readField('lr', '3e-4'), { value: 3e-4 });
  assert.deepEqual(readField('lr', ' .5 '), { value: 0.5 });
  assert.equal(readField('lr', '0').error.key, 'err.range');
  assert.equal(readField('seed', String(2 ** 53 + 2)).error.key, 'err.range');
  assert.deepEqual(readField('sample_every', '0'), { value: 0 });
});

test('cross-field rules: n_head divides n_embd; the text is long enough', () => {
  const s = defaultState();
  s.fields.n_head = '5';
  assert.deepEqual(validate(s).errors.n_head, { key: 'err.divides', params: { n_head: 5, n_embd: 64 } });
  const txt = { ...defaultState(), task: 'text', text: '' };
  assert.equal(validate(txt).errors.text.key, 'err.textEmpty');
  txt.text = 'x'.repeat(129);
  assert.deepEqual(validate(txt).errors.text, { key: 'err.textShort', params: { n: 129, need: 130, block_size: 64 } });
  txt.text = 'x'.repeat(130);
  assert.equal(validate(txt).ok, true);
  // characters are code points, as the tokenizer counts them
  txt.text = '😀'.repeat(129);
  assert.equal(validate(txt).errors.text.params.n, 129);
  txt.text = 'é'.repeat(600_000); // 1.2 MB of UTF-8
  assert.equal(validate(txt).errors.text.key, 'err.textBig');
  assert.equal(utf8Bytes('aé注😀'), 1 + 2 + 3 + 4);
  assert.equal(codePoints('a😀b'), 3);
});

test('the memory is the core\'s: what to ask it, and its answer in the validation', () => {
  const s = defaultState();
  const v = validate(s);
  const spec = memorySpec(s, v);
  assert.deepEqual(spec, { preset: 'tiny', n_layer: 2, n_head: 4, n_embd: 64, block_size: 64, batch_size: 16, task: 'copy' });
  // nothing to ask while a field the memory depends on is wrong; other fields do not matter
  assert.equal(memorySpec(s, validate({ ...s, fields: { ...s.fields, n_head: '5' } })), null);
  assert.equal(memorySpec(s, validate({ ...s, fields: { ...s.fields, batch_size: '' } })), null);
  assert.deepEqual(memorySpec(s, validate({ ...s, fields: { ...s.fields, lr: 'fast' } })), spec);
  const txt = { ...defaultState(), task: 'text', text: 'x'.repeat(130), text_name: 'x.txt' };
  const { task, ...model } = spec;
  assert.equal(task, 'copy');
  assert.deepEqual(memorySpec(txt, validate(txt)), { ...model, text: txt.text, text_name: 'x.txt' });
  // unanswered: pending, not ok; answered: ok, or the core's message beside the model (or the text)
  assert.deepEqual(withMemory(v, null, undefined), v);
  const pending = withMemory(v, spec, undefined);
  assert.equal(pending.ok, false);
  assert.equal(pending.memory, 'pending');
  assert.deepEqual(Object.keys(pending.errors), []);
  assert.equal(withMemory(v, spec, { bytes: 16634680, limit: 2 ** 30 }).ok, true);
  const message = 'a batch of 64 sequences of 128 tokens needs 1381 MiB for this model, more than the limit of 1024 MiB: use a smaller batch_size or block_size';
  const big = withMemory(v, spec, { error: { message, field: 'batch_size' } });
  assert.equal(big.ok, false);
  assert.deepEqual(big.errors.model, { key: 'err.core', params: { message } });
  assert.equal(withMemory(v, spec, { error: { message: 'the text has 9000 distinct characters', field: 'text' } }).errors.text.key, 'err.core');
});

test('the permalink: only what differs, round trips, keeps bad values as typed, never throws', () => {
  let s = applyPreset(defaultState(), 'small');
  s = { ...s, task: 'induction', mask: 'inclusive', fields: { ...s.fields, steps: '250', lr: '1e-3' }, prompt: 'a=b&c', lang: 'zh', gen_greedy: false };
  const h = encodeHash(s);
  assert.equal(h, '#task=induction&mask=inclusive&preset=small&lr=1e-3&steps=250&prompt=a%3Db%26c&gen_greedy=false&lang=zh');
  const back = decodeHash(h);
  assert.equal(back.task, 'induction');
  assert.equal(back.mask, 'inclusive');
  assert.equal(back.fields.n_embd, '128');
  assert.equal(back.fields.lr, '1e-3');
  assert.equal(back.prompt, 'a=b&c');
  assert.equal(back.lang, 'zh');
  assert.equal(back.gen_greedy, false);
  assert.equal(back.preset, 'small');
  assert.equal(encodeHash(back), h);
  // a bad value stays, so the page can show it with its message
  const bad = decodeHash('#n_embd=65&lr=fast&task=nonsense&mask=diagonal');
  assert.equal(bad.fields.n_embd, '65');
  assert.equal(bad.fields.lr, 'fast');
  assert.equal(bad.task, 'copy');
  assert.equal(bad.mask, 'strict');
  assert.equal(validate(bad).ok, false);
  for (const junk of ['', '#', '#s=1.abc', '#%E0%A4%A', '#=&=&', `#prompt=${'x'.repeat(200_000)}`, null, undefined, 42]) {
    const r = decodeHash(junk);
    assert.ok(r === null || typeof r === 'object');
  }
  // a short own text travels in the link; a long one does not
  const txt = { ...defaultState(), task: 'text', text: 'to be or not to be', text_name: 'hamlet.txt' };
  assert.equal(decodeHash(encodeHash(txt)).text, 'to be or not to be');
  assert.equal(decodeHash(encodeHash(txt)).text_name, 'hamlet.txt');
  assert.ok(!encodeHash({ ...txt, text: 'x'.repeat(5000) }).includes('text='));
});

test('the run spec: a text run sends the text and its name, not a task; experiments override one option', () => {
  const s = { ...defaultState(), task: 'text', text: 'abc'.repeat(100), text_name: 'abc.txt' };
  const v = validate(s);
  const spec = runSpec(s, v.values, { mask: 'inclusive' });
  assert.equal(spec.task, undefined);
  assert.equal(spec.text_name, 'abc.txt');
  assert.equal(spec.mask, 'inclusive');
  assert.equal(spec.seed, 1337);
});

const series = (train, val, valSteps = [0, 10]) => ({ steps: train.map((_, i) => i + 1), train, valSteps, val, divergedAt: null });

test('the variants: the run spec and the memory question carry the chosen ones only, the link round trips', () => {
  const s = { ...defaultState(), pos: 'rope', norm: 'rmsnorm', mlp: 'swiglu', n_kv_head: '2', window: '8', sink: '4' };
  const v = validate(s);
  const spec = runSpec(s, v.values);
  assert.deepEqual({ pos: spec.pos, norm: spec.norm, mlp: spec.mlp, n_kv_head: spec.n_kv_head, window: spec.window, sink: spec.sink },
    { pos: 'rope', norm: 'rmsnorm', mlp: 'swiglu', n_kv_head: 2, window: 8, sink: 4 });
  assert.equal(memorySpec(s, v).n_kv_head, 2);
  assert.equal(memorySpec(s, v).sink, 4);
  for (const k of ['pos', 'norm', 'mlp', 'n_kv_head', 'window', 'sink']) assert.equal(k in runSpec(defaultState(), v.values), false, k);
  const hash = encodeHash(s);
  assert.match(hash, /pos=rope/);
  const back = decodeHash(hash);
  for (const k of ['pos', 'norm', 'mlp', 'n_kv_head', 'window', 'sink']) assert.equal(back[k], s[k], k);
  assert.equal(decodeHash('#pos=sideways').pos, 'learned');  // an unknown value: the default
  // the parameter count: the tiny preset's 108,352 at vocabulary 65 (W3's), and the core's count
  // of the Llama-like block (test_gpt_variants' layout: no wpe, RMSNorm weights, c_attn of
  // 64 + 2·2·16 rows, gate | up of 2·256 rows, down_proj)
  assert.equal(paramCount(v.values, defaultState(), 65), 108352);
  const C = 64, H = 256, W = 128;
  assert.equal(paramCount(v.values, { ...s, window: 'none', sink: 'none' }, 65),
    65 * C + 2 * (2 * C + W * C + W + C * C + C + 2 * H * C + 2 * H + C * H + C) + C);
});

test('experiment sentence: identical curves, differing curves and a divergence, quoting the numbers', () => {
  const a = series([2.5, 2.4, 2.3], [2.49, 2.31]);
  const same = experimentSentence({ kind: 'softmax', labels: ['stable', 'naive'], runs: [a, series([2.5, 2.4, 2.3], [2.49, 2.31])], seed: 1 }, t);
  assert.match(same, /^exp\.s\.identical \{"n":3,"seed":1\}/);
  assert.match(same, /exp\.why\.softmaxSame \{"floor":""\}$/);
  const b = series([2.5, 2.45, 2.35], [2.49, 2.4]);
  const c = compareTrain(a, b);
  assert.equal(c.first, 2); // steps count from 1
  assert.ok(Math.abs(c.maxDiff - 0.05) < 1e-12);
  assert.deepEqual(lastCommonVal(a, b), { step: 10, a: 2.31, b: 2.4 });
  const diff = experimentSentence({ kind: 'mask', labels: ['strict', 'inclusive'], runs: [a, b], seed: 1 }, t);
  assert.match(diff, /exp\.s\.val \{"step":10,"a":"strict","b":"inclusive","va":"2.310","vb":"2.400","lower":"strict","by":"0.090"\}/);
  assert.match(diff, /exp\.why\.maskWorse \{"floor":""\}$/);
  // far above the task's floor: neither model has learned the task yet, whatever the difference
  const early = experimentSentence({ kind: 'mask', labels: ['strict', 'inclusive'], runs: [a, b], seed: 1, floor: 1.112 }, t);
  assert.match(early, /exp\.why\.maskEarly \{"floor":"1.11"\}$/);
  const d = { ...series([2.5, 2.4, NaN], [2.49]), divergedAt: 3 };
  const div = experimentSentence({ kind: 'softmax', labels: ['stable', 'naive'], runs: [a, d], seed: 1 }, t);
  assert.match(div, /exp\.s\.diverged \{"run":"naive","step":3,"other":"stable","val":"2.310","ostep":10\}/);
  assert.match(div, /exp\.why\.softmaxDiverged \{"floor":""\}$/);
});

test('every string of the page has its Chinese, with the same placeholders', async () => {
  const { STRINGS, loadStrings, stringsLoaded, createI18n } = await import('../../web/train/i18n.js');
  // the Chinese table is a module of its own, loaded on first use
  assert.equal(STRINGS.zh, undefined, 'the Chinese strings load only when asked for');
  assert.equal(stringsLoaded('zh'), false);
  assert.equal(createI18n('zh').t('app.title'), STRINGS.en['app.title'], 'before the load, the keys show in English');
  await loadStrings('zh');
  assert.equal(stringsLoaded('zh'), true);
  assert.equal(createI18n('zh').t('app.title'), STRINGS.zh['app.title']);
  assert.notEqual(STRINGS.zh['app.title'], STRINGS.en['app.title']);
  const ph = (s) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join(',');
  for (const [k, v] of Object.entries(STRINGS.en)) {
    assert.ok(k in STRINGS.zh, `zh lacks ${k}`);
    assert.equal(ph(STRINGS.zh[k]), ph(v), `placeholders of ${k}`);
  }
  for (const task of ['copy', 'reverse', 'sort', 'induction', 'sums', 'grammar']) {
    assert.ok(STRINGS.zh[`taskd.${task}`] && STRINGS.zh[`taska.${task}`], `zh describes ${task}`);
  }
});
