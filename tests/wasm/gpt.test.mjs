// gpt.test.mjs — the tiny GPT's JS API (web/gpt.js over web/gen/gpt_core.wasm) as the training page
// uses it: every method, every typed array's shape, the KV cache's agreement with a full forward
// pass (max_abs_diff ≤ 1e-5), a head's stepper spec reproducing its weights in the attention
// module, a prompt longer than the block read by its tail, checkpoints (save, load, corrupted
// bytes), and every error path: the field named, the message saying what is wrong, and the run
// usable afterwards. (That train()'s arrays hold the core's values under the right names:
// gpt_train_arrays.test.mjs.)
// Models here are small (one or two layers, n_embd 16–32) so the file runs in seconds; the tiny
// preset itself is trained in gpt_agreement.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadApi, loadGptApi } from './load.mjs';
import { GptError, loadGpt } from '../../web/attention.js';
import { GptError as GptErrorDirect, loadGpt as loadGptDirect } from '../../web/gpt.js';

const gpt = await loadGptApi();

// A quick model on the copy task.
const SMALL = { n_layer: 2, n_embd: 16, n_head: 2, block_size: 8, batch_size: 4, eval_batches: 2, n_chars: 2000, seed: 3, lr: 3e-3, steps: 200 };
const TEXT = 'the quick brown fox jumps over the lazy dog. 敏捷的棕色狐狸跳过了懒狗。 the dog sleeps.\n';

function throwsGpt(fn, field, message) {
  let caught;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught, `expected a GptError (field ${field}), nothing was thrown`);
  assert.ok(caught instanceof GptError, `expected a GptError, got ${caught?.name}: ${caught?.message}`);
  assert.equal(caught.field, field, `field of: ${caught.message}`);
  if (message) assert.match(caught.message, message);
  return caught;
}

function withRun(spec, body) {
  const run = gpt.create(spec);
  try {
    return body(run);
  } finally {
    run.free();
  }
}

// 64-bit FNV-1a of bytes as 16 hex digits, written here independently of the core.
function fnv1a64(bytes) {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}

test('loadGpt and GptError are exported by attention.js too (the same class as gpt.js\'s)', () => {
  assert.equal(typeof loadGpt, 'function');
  assert.equal(typeof loadGptDirect, 'function');
  assert.equal(GptError, GptErrorDirect);
  assert.ok(gpt.create && gpt.load && gpt.tasks && gpt.setKernels);
  const e = new GptError('m', { field: 'f' });
  assert.ok(e instanceof Error);
  assert.equal(e.name, 'GptError');
  assert.equal(e.field, 'f');
});

test('tasks(): the built-in tasks with their descriptions and loss floors', () => {
  const tasks = gpt.tasks();
  assert.deepEqual(tasks.map((t) => t.name), ['copy', 'reverse', 'sort', 'induction', 'sums', 'grammar']);
  for (const t of tasks) {
    for (const k of ['description', 'example', 'attention', 'alphabet']) assert.ok(typeof t[k] === 'string' && t[k].length > 0, `${t.name}.${k}`);
    assert.ok(t.loss_floor > 0 && t.loss_floor < 3, `${t.name}.loss_floor ${t.loss_floor}`);
    for (const ch of t.example) assert.ok(t.alphabet.includes(ch), `${t.name}: example character ${JSON.stringify(ch)} is in the alphabet`);
  }
});

test('setKernels: reference and fast, and a bad tier named', () => {
  assert.equal(gpt.setKernels('reference'), 'reference');
  const fast = gpt.setKernels('fast');
  assert.equal(typeof fast, 'string');
  assert.notEqual(fast, 'reference');
  withRun(SMALL, (run) => assert.equal(run.info().kernels, fast));
  throwsGpt(() => gpt.setKernels('turbo'), 'kernels', /"reference" or "fast"/);
  throwsGpt(() => gpt.setKernels(1), 'kernels');
  assert.equal(gpt.setKernels('fast'), fast, 'a refused tier changes nothing');
});

test('create + info: the config, the data, the vocabulary and the parameter count', () => {
  withRun(SMALL, (run) => {
    const info = run.info();
    assert.deepEqual(info.config, { vocab_size: 12, block_size: 8, n_layer: 2, n_head: 2, n_embd: 16, mask: 'strict', softmax: 'stable' });
    assert.equal(info.train.batch_size, 4);
    assert.equal(info.train.lr, 0.003);
    assert.equal(info.seed, '3');
    assert.equal(info.data.task, 'copy');
    assert.equal(info.data.n_chars, 2000);
    assert.equal(info.vocab.length, 12);
    assert.equal(info.vocab.join(''), '\n=abcdefghij');
    assert.equal(info.step, 0);
    assert.equal(info.tokens_per_step, 32);
    assert.equal(info.val_loss, null);
    assert.equal(info.diverged, false);
    assert.equal(info.divergence, '');
  });
  // The tiny preset at vocabulary 65 has 108,352 parameters (W3's model, bench/README.md).
  let text = '';
  for (let i = 0; i < 65; i++) text += String.fromCharCode(48 + i);
  withRun({ preset: 'tiny', text: text.repeat(3), text_name: 'sixty-five.txt' }, (run) => {
    const info = run.info();
    assert.equal(info.config.vocab_size, 65);
    assert.equal(info.n_params, 108352);
    assert.deepEqual(info.data, { text_name: 'sixty-five.txt', text_fingerprint: fnv1a64(new TextEncoder().encode(text.repeat(3))) });
  });
});

test('create: a text as a string and as UTF-8 bytes give the same run (Chinese included)', () => {
  const spec = { n_layer: 1, n_embd: 16, n_head: 2, block_size: 8, batch_size: 2, seed: 5 };
  const a = gpt.create({ ...spec, text: TEXT });
  const b = gpt.create({ ...spec, text: new TextEncoder().encode(TEXT) });
  const c = gpt.create(JSON.stringify({ ...spec, text: TEXT }));
  try {
    assert.deepEqual(a.info(), b.info());
    assert.deepEqual(a.info(), c.info());
    assert.ok(a.info().vocab.includes('狐'));
    const losses = a.train(3);
    assert.deepEqual(b.train(3), losses);
    assert.deepEqual(c.train(3), losses);
    const greedy = { prompt: '懒狗', greedy: true, max_new_tokens: 10 };
    assert.deepEqual(a.sample(greedy), c.sample(greedy));
  } finally {
    a.free();
    b.free();
    c.free();
  }
});

test('train(n) and evaluate(): typed arrays, one entry per step, same seed same numbers', () => {
  const a = gpt.create(SMALL);
  const b = gpt.create(SMALL);
  try {
    const r = a.train(5);
    assert.equal(r.step, 5);
    for (const k of ['losses', 'lrs', 'grad_norms']) {
      assert.ok(r[k] instanceof Float32Array, `${k} is a Float32Array`);
      assert.equal(r[k].length, 5, k);
      assert.ok(r[k].every(Number.isFinite), `${k} finite`);
    }
    assert.equal(r.diverged, false);
    assert.equal(r.divergence, '');
    assert.ok(r.losses[0] > 2 && r.losses[0] < 3, `first loss ${r.losses[0]} near ln 12 = 2.48`);
    assert.deepEqual(b.train(5), r, 'same seed, same losses, lrs and norms, bit for bit');
    const more = a.train(15);
    assert.equal(more.step, 20);
    assert.equal(a.info().step, 20);
    // evaluate: a finite validation loss, kept in info.
    const e = a.evaluate();
    assert.equal(e.step, 20);
    assert.ok(Number.isFinite(e.val_loss) && e.val_loss > 0);
    assert.equal(a.info().val_loss, e.val_loss);
    assert.deepEqual(a.evaluate(), e, 'evaluate is deterministic');
  } finally {
    a.free();
    b.free();
  }
});

test('train(n): the loss falls (the grammar task, 100 steps)', () => {
  withRun({ ...SMALL, task: 'grammar', lr: 1e-2, batch_size: 8 }, (run) => {
    const r = run.train(100);
    const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const first = mean([...r.losses.slice(0, 5)]);
    const last = mean([...r.losses.slice(-10)]);
    assert.ok(last < first - 0.5, `first 5 steps ${first}, last 10 ${last}`);
    assert.ok(run.evaluate().val_loss < first - 0.5);
  });
});

test('train(n): a diverging run stops at a named step, keeps its last good weights and refuses to go on', () => {
  withRun({ ...SMALL, softmax: 'naive', lr: 10, grad_clip: 0 }, (run) => {
    const r = run.train(200);
    assert.equal(r.diverged, true);
    assert.ok(r.step < 200, `stopped at ${r.step}`);
    assert.equal(r.losses.length, r.step + 1, 'the diverging step has its loss');
    assert.equal(r.lrs.length, r.step);
    assert.ok(!Number.isFinite(r.losses[r.losses.length - 1]), 'the last loss is not finite');
    // r.step counts the steps done; the one that diverged is the next (steps count from 1)
    assert.match(r.divergence, new RegExp(`at step ${r.step + 1}\\b.*${r.step ? `after step ${r.step}\\b` : 'the initial ones'}`));
    assert.match(r.divergence, /naive softmax/);
    const info = run.info();
    assert.equal(info.diverged, true);
    assert.equal(info.divergence, r.divergence);
    throwsGpt(() => run.train(1), 'steps', /training stopped/);
    // The weights are the last good step's; the naive softmax may overflow on them too, and then
    // generation says so instead of printing garbage.
    try {
      assert.equal(typeof run.sample({ prompt: 'ab', greedy: true, max_new_tokens: 5 }).new_text, 'string');
    } catch (e) {
      assert.ok(e instanceof GptError, String(e));
      assert.match(e.message, /not finite.*diverged/);
    }
  });
});

test('nextToken: the distribution of a prompt, reshaped by temperature, top-k and top-p without running the model again', () => {
  withRun(SMALL, (run) => {
    run.train(20);
    const full = run.nextToken({ prompt: 'abc=', show: 100 });
    const V = full.vocab_size;
    assert.equal(full.top.length, V);
    assert.deepEqual(full.tokens, ['a', 'b', 'c', '=']);
    const sum = full.top.reduce((s, t) => s + t.p, 0);
    assert.ok(Math.abs(sum - 1) < 1e-5, `probabilities sum to ${sum}`);
    for (let i = 1; i < V; i++) assert.ok(full.top[i].p <= full.top[i - 1].p);
    assert.equal(full.dropped_mass, 0);
    assert.equal(full.kept, V);
    // The probabilities are the softmax of the logits (float64 here, float32 in the core).
    const z = full.top.reduce((s, t) => s + Math.exp(t.logit - full.max_logit), 0);
    for (const t of full.top) assert.ok(Math.abs(t.p - Math.exp(t.logit - full.max_logit) / z) < 1e-5);
    // A hotter temperature flattens: more entropy. Reshaping needs no prompt and equals asking again with it.
    const hot = run.nextToken({ temperature: 3, show: 5 });
    assert.ok(hot.entropy > full.entropy);
    assert.deepEqual(run.nextToken({ prompt: 'abc=', temperature: 3, show: 5 }), hot);
    // top-k 2: two tokens (or more on a tie) carry everything; the rest is the dropped mass.
    const k2 = run.nextToken({ top_k: 2, show: V });
    const kept = k2.top.filter((t) => t.kept);
    assert.equal(kept.length, k2.kept);
    assert.ok(k2.kept >= 2);
    assert.ok(Math.abs(kept.reduce((s, t) => s + t.p, 0) - 1) < 1e-5);
    assert.ok(Math.abs(k2.kept_mass + k2.dropped_mass - 1) < 1e-5);
    assert.ok(Math.abs(k2.dropped_mass - k2.top.filter((t) => !t.kept).reduce((s, t) => s + t.p_full, 0)) < 1e-5);
    // top-p: the smallest prefix whose mass reaches p.
    const p = run.nextToken({ top_p: 0.5, show: V });
    const prefix = p.top.slice(0, p.kept);
    assert.ok(prefix.reduce((s, t) => s + t.p_full, 0) >= 0.5 - 1e-6);
    assert.ok(prefix.slice(0, -1).reduce((s, t) => s + t.p_full, 0) < 0.5);
    assert.throws(() => run.nextToken({ top_p: 0 }), (e) => e.field === 'top_p');
    assert.throws(() => run.nextToken({ prompt: '' }), (e) => e.field === 'prompt');
    // Training changes the weights: the prompt must be given again.
    run.train(1);
    assert.throws(() => run.nextToken({}), (e) => e.field === 'prompt');
  });
});

test('nextToken: a prompt longer than block_size is read by its last block_size tokens, and shows them', () => {
  withRun(SMALL, (run) => {
    run.train(20);
    // 14 characters, block_size 8: the model sees the last 8, as sample() crops its context
    const whole = run.nextToken({ prompt: 'jihgfedcba=abc', show: 100 });
    assert.deepEqual(whole.tokens, ['d', 'c', 'b', 'a', '=', 'a', 'b', 'c']);
    assert.deepEqual(whole, run.nextToken({ prompt: 'dcba=abc', show: 100 }));
    // the first 8 give another distribution: the comparison above tells the two crops apart
    assert.notDeepEqual(run.nextToken({ prompt: 'jihgfedc', show: 100 }).top, whole.top);
  });
});

test('surprisal: the validation windows average to the validation loss; a text is scored token by token', () => {
  withRun(SMALL, (run) => {
    run.train(10);
    const v = run.surprisal({ validation: true });
    assert.equal(v.mean, run.evaluate().val_loss);
    const t = run.surprisal({ text: 'abc=abc\ncab=cab' });
    assert.equal(t.count, 14);
    const all = t.windows.flatMap((w) => w.losses);
    assert.ok(Math.abs(all.reduce((a, b) => a + b, 0) / all.length - t.mean) < 1e-5);
    assert.throws(() => run.surprisal({ text: 'a' }), (e) => e.field === 'text');
    assert.throws(() => run.surprisal({ text: 'a\ud800' }), (e) => e.field === 'text');
  });
});

test('sample with top_p: seeded draws repeat, and p near 0 gives the greedy text', () => {
  withRun(SMALL, (run) => {
    run.train(20);
    const a = run.sample({ prompt: 'abc=', temperature: 1.5, top_p: 0.7, seed: 9, max_new_tokens: 30 });
    assert.deepEqual(run.sample({ prompt: 'abc=', temperature: 1.5, top_p: 0.7, seed: 9, max_new_tokens: 30 }), a);
    const tiny = run.sample({ prompt: 'abc=', temperature: 1.5, top_p: 1e-9, seed: 9, max_new_tokens: 30 });
    assert.equal(tiny.text, run.sample({ prompt: 'abc=', greedy: true, max_new_tokens: 30 }).text);
    assert.throws(() => run.sample({ prompt: 'ab', top_p: 2 }), (e) => e.field === 'top_p');
  });
});

test('blockTrace\'s sampled token is generation\'s first for the same prompt, seed and settings (top-p too)', () => {
  withRun(SMALL, (run) => {
    run.train(5); // barely trained: the draws spread over many tokens
    const prompt = 'abca=a';
    const seen = new Set();
    for (const o of [{ greedy: true }, { temperature: 1 }, { temperature: 0.7, top_k: 3 }, { temperature: 1.4, top_p: 0.6 }, { temperature: 1, top_k: 5, top_p: 0.8 }]) {
      for (const seed of [1, 2, 9]) {
        const sample = { ...o, seed };
        const tr = run.blockTrace({ prompt, sample });
        run.generateStart({ prompt, max_new_tokens: 1, ...sample });
        const g = run.generateNext();
        assert.equal(tr.sample.draw.token, g.token, JSON.stringify(sample));
        assert.equal(tr.sample.draw.text, g.text);
        assert.equal(tr.sample.draw.u, g.draw.u);
        assert.equal(tr.sample.seed, seed);
        if (!o.greedy) assert.ok(tr.sample.draw.cum_from <= tr.sample.draw.u && tr.sample.draw.u < tr.sample.draw.cum_to, JSON.stringify(tr.sample.draw));
        seen.add(g.token);
      }
    }
    assert.ok(seen.size > 2, `the draws picked ${[...seen]}`);
    throwsGpt(() => run.blockTrace({ prompt, sample: { top_p: 0 } }), 'top_p');
  });
});

test('sample: greedy is deterministic, seeded sampling repeats, and greedy equals the cache steps', () => {
  withRun(SMALL, (run) => {
    run.train(40);
    const g = run.sample({ prompt: 'abc=', greedy: true, max_new_tokens: 12 });
    assert.equal(g.text, 'abc=' + g.new_text);
    assert.equal([...g.new_text].length, 12);
    assert.deepEqual(g.tokens, [...g.text]);
    assert.deepEqual(run.sample({ prompt: 'abc=', greedy: true, max_new_tokens: 12 }), g);
    const s1 = run.sample({ prompt: 'abc=', temperature: 1.5, top_k: 5, seed: 9, max_new_tokens: 30 });
    assert.deepEqual(run.sample({ prompt: 'abc=', temperature: 1.5, top_k: 5, seed: 9, max_new_tokens: 30 }), s1);
    assert.equal(run.sample({ prompt: 'abc=', max_new_tokens: 0 }).new_text, '');
    // The same greedy text, one token at a time through the cache.
    let step = run.generateStart({ prompt: 'abc=', greedy: true });
    let text = 'abc=';
    for (let i = 0; i < 12; i++) {
      step = run.generateNext();
      text += step.text;
    }
    assert.equal(text, g.text);
  });
});

function checkStep(step, info, label) {
  const { vocab_size: V, n_layer: L, n_head: NH, n_embd: C, block_size } = info.config;
  const n = step.cache_length;
  assert.ok(n >= 1 && n <= block_size, `${label}: cache_length ${n}`);
  assert.equal(step.base, n - 1, `${label}: base = cache_length − 1`);
  assert.deepEqual(step.tokens.length, n, `${label}: the context has cache_length tokens`);
  assert.equal(step.text, step.tokens[n - 1]);
  assert.equal(info.vocab[step.token], step.text);
  for (const [k, len] of [['logits', V], ['full_logits', V], ['cache_attention', L * NH * n], ['cache_keys', L * n * C], ['cache_values', L * n * C]]) {
    assert.ok(step[k] instanceof Float32Array, `${label}: ${k} is a Float32Array`);
    assert.equal(step[k].length, len, `${label}: ${k} length`);
  }
  let diff = 0;
  for (let v = 0; v < V; v++) diff = Math.max(diff, Math.abs(step.logits[v] - step.full_logits[v]));
  // (the JSON has float32's shortest digits, which read back as a nearby double: compare as float32)
  assert.equal(Math.fround(step.max_abs_diff), Math.fround(diff), `${label}: max_abs_diff is max |logits − full_logits|`);
  assert.ok(step.max_abs_diff <= 1e-5, `${label}: the cache's logits equal a full forward pass (diff ${step.max_abs_diff})`);
  // Each layer's and head's one query row: the weights over the visible keys sum to 1.
  const visible = info.config.mask === 'strict' ? n : n - 1;
  for (let r = 0; r < L * NH; r++) {
    const row = step.cache_attention.subarray(r * n, (r + 1) * n);
    const sum = row.reduce((s, x) => s + x, 0);
    if (visible === 0) assert.equal(sum, 0, `${label}: the inclusive mask's first position sees nothing`);
    else assert.ok(Math.abs(sum - 1) < 1e-5, `${label}: row ${r} sums to ${sum}`);
    if (info.config.mask === 'inclusive') assert.equal(row[n - 1], 0, `${label}: inclusive hides the diagonal`);
  }
}

for (const tier of ['reference', 'fast']) {
  for (const mask of ['strict', 'inclusive']) {
    test(`generateStart/generateNext (${tier}, ${mask}): the KV cache grows, base counts, and past block_size it is rebuilt; max_abs_diff ≤ 1e-5`, () => {
      gpt.setKernels(tier);
      try {
        withRun({ ...SMALL, mask }, (run) => {
          run.train(10);
          const info = run.info();
          let step = run.generateStart({ prompt: 'ab', temperature: 1, seed: 4 });
          checkStep(step, info, 'start');
          assert.equal(step.cache_length, 2);
          assert.equal(step.generated, 0);
          assert.equal(step.rebuilt, false);
          let rebuilt = 0;
          for (let i = 1; i <= 14; i++) {
            step = run.generateNext();
            checkStep(step, info, `step ${i}`);
            assert.equal(step.generated, i);
            assert.equal(step.cache_length, Math.min(2 + i, 8));
            if (2 + i > 8) {
              assert.equal(step.rebuilt, true, `step ${i} passes block_size`);
              rebuilt++;
            } else assert.equal(step.rebuilt, false);
          }
          assert.equal(rebuilt, 8);
          // A long prompt starts cropped to its last block_size characters.
          step = run.generateStart({ prompt: 'abcdefghijabc', greedy: true });
          checkStep(step, info, 'long prompt');
          assert.deepEqual(step.tokens, [...'defghijabc'.slice(-8)]);
        });
      } finally {
        gpt.setKernels('fast');
      }
    });
  }
}

test('runPrompt: every head\'s weights (L, NH, T, T), causal rows that sum to 1, and the inclusive mask', () => {
  for (const mask of ['strict', 'inclusive']) {
    withRun({ ...SMALL, mask }, (run) => {
      run.train(5);
      const m = run.runPrompt('xabcde=abcde'.slice(1)); // 11 characters: cropped to 8
      assert.deepEqual(m.tokens, [...'cde=abcde'.slice(-8)]);
      assert.equal(m.T, 8);
      assert.equal(m.n_layer, 2);
      assert.equal(m.n_head, 2);
      assert.ok(m.weights instanceof Float32Array);
      const T = m.T;
      assert.equal(m.weights.length, 2 * 2 * T * T);
      for (let lh = 0; lh < 4; lh++) {
        for (let i = 0; i < T; i++) {
          const row = m.weights.subarray((lh * T + i) * T, (lh * T + i + 1) * T);
          const last = mask === 'strict' ? i : i - 1; // the last visible key
          for (let j = last + 1; j < T; j++) assert.equal(row[j], 0, `${mask}: weight (${i}, ${j}) is masked`);
          const sum = row.reduce((s, x) => s + x, 0);
          if (last < 0) assert.equal(sum, 0, 'inclusive row 0 sees nothing: zeros, not NaN');
          else assert.ok(Math.abs(sum - 1) < 1e-5, `row ${i} sums to ${sum}`);
        }
      }
    });
  }
});

test('headSpec: the stepper, given a head\'s Q, K, V, computes that head\'s weights bit for bit (reference kernels)', async () => {
  const attention = await loadApi();
  gpt.setKernels('reference');
  try {
    for (const mask of ['strict', 'inclusive']) {
      withRun({ ...SMALL, mask, n_head: 4 }, (run) => {
        run.train(5);
        const m = run.runPrompt('abcd=abcd');
        const T = m.T;
        for (const [l, h] of [[0, 0], [1, 3], [0, 2]]) {
          const spec = run.headSpec(l, h);
          assert.deepEqual(Object.keys(spec), ['Q', 'K', 'V', 'n_head', 'causal', 'mask', 'softmax']);
          assert.equal(spec.mask, mask);
          assert.equal(spec.Q.length, T);
          assert.equal(spec.Q[0].length, 4, 'head_dim = 16 / 4');
          const trace = attention.trace(spec);
          const expect = m.weights.subarray(((l * 4 + h) * T) * T, ((l * 4 + h + 1) * T) * T);
          const got = Float32Array.from(trace.heads[0].weights.flat());
          assert.deepEqual(got, expect, `layer ${l} head ${h}`);
        }
        // headSpec reads runPrompt's prompt even after other calls ran the model.
        const before = run.headSpec(1, 1);
        run.sample({ prompt: 'ab', max_new_tokens: 3 });
        run.generateStart({ prompt: 'a', greedy: true });
        assert.deepEqual(run.headSpec(1, 1), before);
      });
    }
  } finally {
    gpt.setKernels('fast');
  }
});

test('bad specs: each refused with the key at fault', () => {
  const cases = [
    [{ colour: 1 }, 'colour', /unknown key "colour"/],
    [{ n_head: 3, n_embd: 16 }, 'n_head', /n_head must divide n_embd/],
    [{ n_layer: 0 }, 'n_layer', /between 1 and 32/],
    [{ n_embd: 4096 }, 'n_embd', /between 1 and 1024/],
    [{ block_size: 5000 }, 'block_size', /between 1 and 1024/],
    [{ n_head: 0 }, 'n_head'],
    [{ preset: 'huge' }, 'preset', /"tiny", "small"/],
    [{ mask: 'sideways' }, 'mask'],
    [{ softmax: 'fast' }, 'softmax'],
    [{ task: 'poetry' }, 'task'],
    [{ task: 'copy', text: 'hello world, hello world' }, 'task', /either "task" or "text"/],
    [{ n_chars: 10 }, 'n_chars', /between 256/],
    [{ text: 'hello world, hello world, hello world, hello world, hello world, hello world', n_chars: 300 }, 'n_chars'],
    [{ text_name: 'a.txt' }, 'text_name'],
    [{ lr: NaN }, 'lr', /"nan"/],
    [{ lr: -Infinity }, 'lr', /"-inf"/],
    [{ lr: 'big' }, 'lr'],
    [{ lr: 100 }, 'lr'],
    [{ steps: 0 }, 'steps'],
    [{ batch_size: 5000 }, 'batch_size'],
    [{ seed: -1 }, 'seed'],
    [{ seed: 1.5 }, 'seed', /whole number/],
    [{ beta2: 1 }, 'beta2'],
    [{ text: 5 }, 'text'],
  ];
  for (const [spec, field, message] of cases) throwsGpt(() => gpt.create(spec), field, message);
  throwsGpt(() => gpt.create('{"lr":0.1,"lr":0.2}'), 'spec', /repeated key "lr"/);
  throwsGpt(() => gpt.create('{"lr":'), 'spec', /line 1, column 7/);
  throwsGpt(() => gpt.create('[1, 2]'), '', /must be a JSON object/);
  assert.throws(() => gpt.create([1, 2]), TypeError);
  assert.throws(() => gpt.create(42), TypeError);
});

test('memoryEstimate: the core\'s bytes and limit for a run spec, its message past the limit, no run made', () => {
  const before = gpt.module.heap_bytes_in_use();
  const tiny = gpt.memoryEstimate({ task: 'copy' });
  assert.deepEqual(Object.keys(tiny), ['bytes', 'limit']);
  assert.equal(tiny.limit, 2 ** 30);
  // what create allocates for it: the parameters four times (weights, gradients, AdamW's m and v) and more
  assert.ok(tiny.bytes > 4 * 4 * 108352 && tiny.bytes < 64 * 2 ** 20, String(tiny.bytes));
  assert.equal(gpt.memoryEstimate({ task: 'copy', batch_size: 32 }).bytes > tiny.bytes, true);
  assert.equal(gpt.memoryEstimate(JSON.stringify({ task: 'copy' })).bytes, tiny.bytes);
  assert.ok(gpt.memoryEstimate({ text: '注意力就是你所需要的。', block_size: 8 }).bytes > 0);
  assert.equal(gpt.module.heap_bytes_in_use(), before);
  throwsGpt(() => gpt.memoryEstimate({ n_layer: 8, n_embd: 256, block_size: 128, batch_size: 64 }), 'batch_size',
    /^a batch of 64 sequences of 128 tokens needs \d+ MiB for this model, more than the limit of 1024 MiB: use a smaller batch_size or block_size$/);
  throwsGpt(() => gpt.memoryEstimate({ n_layer: 32, n_embd: 1024, n_head: 16 }), 'n_embd', /^this model has \d+ parameters: .* more than the limit of 1024 MiB$/);
  throwsGpt(() => gpt.memoryEstimate({ n_head: 3 }), 'n_head', /n_head must divide n_embd/);
  throwsGpt(() => gpt.memoryEstimate({ colour: 1 }), 'colour');
  assert.throws(() => gpt.memoryEstimate({ text: new Uint8Array([0x61]) }), TypeError);
  // create refuses the same spec with the same words
  throwsGpt(() => gpt.create({ n_layer: 8, n_embd: 256, block_size: 128, batch_size: 64 }), 'batch_size', /^a batch of 64 sequences/);
});

test('bad text: empty, too short, invalid UTF-8 (with its byte offset), a lone surrogate, too many characters', () => {
  const spec = { n_layer: 1, n_embd: 16, n_head: 2, block_size: 8, batch_size: 2 };
  throwsGpt(() => gpt.create({ ...spec, text: '' }), 'text', /empty/);
  throwsGpt(() => gpt.create({ ...spec, text: new Uint8Array(0) }), 'text', /empty/);
  throwsGpt(() => gpt.create({ ...spec, text: 'abc' }), 'text', /3 characters; a block_size of 8 needs at least 9/);
  throwsGpt(() => gpt.create({ ...spec, text: '狐狸跳过了懒狗' }), 'text', /7 characters/);
  const bytes = new TextEncoder().encode('héllo wörld\nsecond line');
  const bad = Uint8Array.from([...bytes.slice(0, 15), 0xff, ...bytes.slice(15)]);
  throwsGpt(() => gpt.create({ ...spec, text: bad }), 'text', /invalid UTF-8 at byte 15 .*line 2.*0xFF/);
  throwsGpt(() => gpt.create({ ...spec, text: Uint8Array.from([0x61, 0x62, 0xc3, 0x28, ...bytes]) }), 'text', /byte 2 .*0xC3 followed by 0x28/);
  throwsGpt(() => gpt.create({ ...spec, text: bad.buffer }), 'text', /byte 15/);
  throwsGpt(() => gpt.create({ ...spec, text: 'abcdef\uD800ghijklmn' }), 'text', /lone UTF-16 surrogate \(U\+D800\) at character 6/);
  throwsGpt(() => gpt.create({ ...spec, text: 'abcdef\uDC00ghijklmn' }), 'text', /U\+DC00/);
  let many = '';
  for (let i = 0; i < 9000; i++) many += String.fromCodePoint(0x4e00 + i);
  throwsGpt(() => gpt.create({ ...spec, text: many }), 'text', /9000 distinct characters, more than the limit of 8192/);
});

test('bad prompts and calls: unknown characters named, steps, layers and heads out of range, calls out of order', () => {
  withRun(SMALL, (run) => {
    throwsGpt(() => run.sample({ prompt: 'abX' }), 'prompt', /"X" \(U\+0058\) at character 2 .*not in the vocabulary of 12 characters/);
    throwsGpt(() => run.sample({ prompt: 'ab\uD800' }), 'prompt', /lone UTF-16 surrogate/);
    throwsGpt(() => run.sample({}), 'prompt', /needs a "prompt"/);
    throwsGpt(() => run.sample({ prompt: 'ab', temperature: 0 }), 'temperature');
    throwsGpt(() => run.sample({ prompt: 'ab', top_k: -1 }), 'top_k');
    throwsGpt(() => run.sample({ prompt: 'ab', max_new_tokens: 100000 }), 'max_new_tokens');
    throwsGpt(() => run.sample({ prompt: 'ab', nucleus: 0.9 }), 'nucleus', /unknown key/);
    assert.throws(() => run.sample(null), TypeError);
    throwsGpt(() => run.generateNext(), 'generator', /generate_start/);
    throwsGpt(() => run.generateStart({ prompt: '狐' }), 'prompt', /"狐" \(U\+72D0\)/);
    throwsGpt(() => run.runPrompt(''), 'prompt', /empty/);
    throwsGpt(() => run.runPrompt('ab#'), 'prompt', /"#"/);
    assert.throws(() => run.runPrompt(7), TypeError);
    throwsGpt(() => run.headSpec(0, 0), 'prompt', /run a prompt first/);
    run.runPrompt('abc');
    throwsGpt(() => run.headSpec(2, 0), 'layer', /layers 0 to 1/);
    throwsGpt(() => run.headSpec(0, 2), 'head', /heads 0 to 1/);
    throwsGpt(() => run.headSpec(-1, 0), 'layer');
    throwsGpt(() => run.headSpec(0.5, 0), 'layer', /whole number/);
    throwsGpt(() => run.train(0), 'steps', /1 to 100000/);
    throwsGpt(() => run.train(100001), 'steps', /1 to 100000/);
    throwsGpt(() => run.train(2.5), 'steps', /whole number/);
    throwsGpt(() => run.train('3'), 'steps', /whole number/);
    throwsGpt(() => run.train(2 ** 40), 'steps', /out of range/);
    // After all that the run is as it was.
    assert.equal(run.info().step, 0);
    assert.equal(run.train(2).step, 2);
    throwsGpt(() => run.headSpec(1, 1), 'prompt', /run a prompt first/); // training changed the weights
    run.runPrompt('abcd');
    assert.equal(run.headSpec(1, 1).Q.length, 4);
  });
});

test('free(): the memory goes back, a freed run throws a clear GptError, and a second free() does nothing', () => {
  const M = gpt.module;
  const heap0 = M.heap_bytes_in_use();
  const run = gpt.create(SMALL);
  assert.ok(M.heap_bytes_in_use() > heap0 + 10000, 'a run holds memory');
  assert.equal(run.freed, false);
  run.train(1);
  run.free();
  assert.equal(run.freed, true);
  assert.equal(M.heap_bytes_in_use(), heap0);
  const calls = {
    info: () => run.info(),
    train: () => run.train(1),
    evaluate: () => run.evaluate(),
    sample: () => run.sample({ prompt: 'a' }),
    generateStart: () => run.generateStart({ prompt: 'a' }),
    generateNext: () => run.generateNext(),
    runPrompt: () => run.runPrompt('a'),
    headSpec: () => run.headSpec(0, 0),
    save: () => run.save(),
  };
  for (const call of Object.values(calls)) throwsGpt(call, 'run', /this run was freed/);
  run.free();
  assert.equal(M.heap_bytes_in_use(), heap0);
});

// Checkpoints: the safetensors writer and reader (src/api/checkpoint.cpp).
test('load: the argument types', () => {
  assert.throws(() => gpt.load('not bytes'), TypeError);
  assert.throws(() => gpt.load([1, 2, 3]), TypeError);
  assert.throws(() => gpt.load(), TypeError);
});

// The safetensors header of checkpoint bytes, read here independently: {n, header}.
function readHeader(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  return { n, header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) };
}

test('save/load: the bytes are safetensors with nanoGPT\'s names, and a loaded run continues bit for bit', () => {
  withRun(SMALL, (run) => {
    run.train(6);
    run.evaluate();
    const bytes = run.save();
    assert.ok(bytes instanceof Uint8Array);
    const { n, header } = readHeader(bytes);
    assert.equal(n % 8, 0, 'the header is padded to 8 bytes');
    assert.deepEqual(header['transformer.wte.weight'].shape, [12, 16]);
    assert.deepEqual(header['transformer.h.1.attn.c_attn.weight'].shape, [48, 16]);
    assert.deepEqual(header['lm_head.weight'].shape, [12, 16]);
    assert.equal(header.__metadata__.step, '6');
    assert.equal(header.__metadata__.format, 'attention-playground-gpt');
    assert.deepEqual(JSON.parse(header.__metadata__.vocab), run.info().vocab);

    const loaded = gpt.load(bytes);
    try {
      assert.deepEqual(loaded.info(), run.info());
      assert.deepEqual(loaded.train(4), run.train(4), 'resumed: the same losses as the run that went on');
      assert.deepEqual(loaded.sample({ prompt: 'ab', greedy: true }), run.sample({ prompt: 'ab', greedy: true }));
      assert.deepEqual(loaded.save(), run.save());
    } finally {
      loaded.free();
    }
  });
});

test('load: a text run trains only with its text; without it the model alone samples', () => {
  const spec = { n_layer: 1, n_embd: 16, n_head: 2, block_size: 8, batch_size: 2, seed: 5, text: TEXT, text_name: 'fox.txt' };
  withRun(spec, (run) => {
    run.train(3);
    const bytes = run.save();
    const alone = gpt.load(bytes);
    try {
      assert.equal(alone.info().has_data, false);
      throwsGpt(() => alone.train(1), 'text', /fox\.txt/);
      throwsGpt(() => alone.evaluate(), 'text', /give the same text again/);
      const greedy = { prompt: 'the', max_new_tokens: 8, greedy: true };
      assert.deepEqual(alone.sample(greedy), run.sample(greedy));
    } finally {
      alone.free();
    }
    throwsGpt(() => gpt.load(bytes, TEXT + 'x'), 'text', /not the text/);
    const saved = run.info();
    const next = run.train(2); // what the run did after the save
    for (const text of [TEXT, new TextEncoder().encode(TEXT)]) {
      const loaded = gpt.load(bytes, text);
      try {
        assert.deepEqual(loaded.info(), saved);
        assert.deepEqual(loaded.train(2), next);
      } finally {
        loaded.free();
      }
    }
  });
});

test('load: corrupted bytes are refused by name (byte, tensor, metadata), and the current run stays usable', () => {
  withRun(SMALL, (run) => {
    run.train(2);
    const good = run.save();
    const { n, header } = readHeader(good);
    const data0 = 8 + n;
    const cases = [];
    cases.push(['empty', new Uint8Array(0), 'checkpoint']);
    cases.push(['truncated header length', good.slice(0, 5), 'checkpoint']);
    cases.push(['truncated data', good.slice(0, good.length - 100), 'optimizer.exp_avg_sq.transformer.ln_f.weight', /truncated/]);
    const huge = good.slice();
    new DataView(huge.buffer).setBigUint64(0, 1n << 40n, true);
    cases.push(['oversized header length', huge, 'checkpoint']);
    const notJson = good.slice();
    notJson[8] = 0x21; // '!' where '{' was
    cases.push(['a header that is not JSON', notJson, 'checkpoint']);
    // A NaN in the first element of a named tensor.
    const name = 'transformer.h.0.mlp.c_fc.weight';
    const nan = good.slice();
    new DataView(nan.buffer).setUint32(data0 + header[name].data_offsets[0], 0x7fc00000, true);
    cases.push(['a NaN weight', nan, name]);
    // A wrong dtype and a wrong shape, same header length.
    const text = new TextDecoder().decode(good.subarray(8, 8 + n));
    const swap = (from, to) => {
      assert.equal(from.length, to.length);
      const i = text.indexOf(from);
      assert.ok(i > 0, `${from} is in the header`);
      const b = good.slice();
      b.set(new TextEncoder().encode(to), 8 + i);
      return b;
    };
    const wpe = text.slice(text.indexOf('"transformer.wpe.weight"'));
    const wpeEntry = wpe.slice(0, wpe.indexOf('}') + 1);
    cases.push(['a wrong dtype', swap(wpeEntry, wpeEntry.replace('"F32"', '"F16"')), 'transformer.wpe.weight']);
    cases.push(['a wrong shape', swap(wpeEntry, wpeEntry.replace('[8,16]', '[16,8]')), 'transformer.wpe.weight']);
    cases.push(['a bad step in the metadata', swap('"step":"2"', '"step":"x"'), '__metadata__.step']);
    for (const [label, bytes, field, message] of cases) {
      const e = throwsGpt(() => gpt.load(bytes), field, message);
      if (process.env.AP_SHOW_MESSAGES) console.log(`${label}: [${e.field}] ${e.message}`);
      if (field === 'checkpoint') assert.match(e.message, /byte/, `${label}: the message names the byte: ${e.message}`);
    }
    // Nothing happened to the run that was there.
    assert.equal(run.info().step, 2);
    assert.equal(run.train(1).step, 3);
  });
});

test('the variants (RoPE, RMSNorm, SwiGLU, grouped-query heads, a window) train in wasm; the page counts the core\'s parameters', async () => {
  const { paramCount, defaultState } = await import('../../web/train/config.js');
  const chosen = { pos: 'rope', norm: 'rmsnorm', mlp: 'swiglu', n_kv_head: '2', window: '8' };
  withRun({ ...SMALL, steps: 20, pos: 'rope', norm: 'rmsnorm', mlp: 'swiglu', n_kv_head: 1, window: 4 }, (run) => {
    const info = run.info();
    assert.equal(info.config.pos, 'rope');
    assert.equal(info.config.n_kv_head, 1);
    const r = run.train(20);
    assert.ok(Number.isFinite(r.loss ?? r.losses?.at(-1)), JSON.stringify(r).slice(0, 200));
    const vals = { n_layer: 2, n_head: 2, n_embd: 16, block_size: 8 };
    assert.equal(paramCount(vals, { ...defaultState(), ...chosen, n_kv_head: '1' }, info.config.vocab_size), info.n_params);
  });
  for (const [k, v] of Object.entries(chosen)) {
    const spec = { ...SMALL, steps: 1, [k]: /^\d+$/.test(v) ? Number(v) : v };
    withRun(spec, (run) => {
      const vals = { n_layer: 2, n_head: 2, n_embd: 16, block_size: 8 };
      const state = { ...defaultState(), [k]: v === '2' ? 'all' : v };  // n_head 2: 2 key/value heads is all
      assert.equal(paramCount(vals, state, run.info().config.vocab_size), run.info().n_params, k);
    });
  }
  throwsGpt(() => gpt.create({ ...SMALL, n_head: 4, n_kv_head: 3 }), 'n_kv_head', /does not divide/);
});
