// gpt_finetune.test.mjs — fine-tuning an opened model through gpt.js (run.finetuneMemory,
// run.finetune) in the wasm module, as the training page does: a nanoGPT ckpt.pt written by the
// tests' own code (tests/lib/foreign-files.mjs) is opened, its memory figures asked, bad settings
// and texts refused by name with the model left as it was (still for inference, the same logits),
// then fine-tuned a few steps on a text: the run trains, its loss falls, and its checkpoint loads
// back with the text and samples; the same seed gives the same bits. The byte-for-byte agreement
// with the native `gpt api finetune` is in gpt_agreement.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadGptApi } from './load.mjs';
import { hfGpt2Files, nanoGptCkpt, metaPkl } from '../lib/foreign-files.mjs';

const CHARS = [...'\n !,:;ERMOTabdehilmnorstuw'].sort();
const CFG = { n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, vocab_size: CHARS.length };
// only the model's characters: "To be, or not to be" in its 26 letters and marks
const FINETUNE_TEXT = Array.from({ length: 24 }, (_, i) =>
  `ROMEO: To be, or not to be; that is the time${'!'.repeat(1 + (i % 3))}\nMERO: a time to ride, tame the wind.\n`.replace(/\./g, ';')).join('');
const PROMPT = 'ROMEO: To';

const logitsOf = (run) => run.nextToken({ prompt: PROMPT, show: CFG.vocab_size }).top.map((x) => [x.id, x.logit]);

async function opened(gpt, cfg = CFG) {
  return gpt.openModel([{ name: 'ckpt.pt', data: nanoGptCkpt(cfg, 5) }, { name: 'meta.pkl', data: metaPkl(CHARS) }]);
}

test('finetuneMemory: the figures before anything is allocated; a bad setting is named', async () => {
  const gpt = await loadGptApi();
  const run = await opened(gpt);
  try {
    const m = run.finetuneMemory({ context: 16, batch_size: 2 });
    assert.equal(m.fits, true);
    assert.equal(m.context, 16);
    assert.equal(m.batch_size, 2);
    assert.ok(m.need > 0 && m.need < m.available, JSON.stringify(m));
    assert.ok(m.available <= 3 * 2 ** 30, 'at most the 3 GiB an opened model may take in wasm');
    assert.ok(run.finetuneMemory({ context: 16, batch_size: 8 }).need > m.need, 'the memory grows with the batch');
    const dflt = run.finetuneMemory();
    assert.deepEqual([dflt.context, dflt.batch_size], [16, 4], 'defaults: min(block_size, 128) × 4');
    assert.throws(() => run.finetuneMemory({ context: 17 }), (e) => e.field === 'context');
    assert.throws(() => run.finetuneMemory({ batch_size: 0 }), (e) => e.field === 'batch_size');
    assert.throws(() => run.finetuneMemory({ stepz: 3 }), (e) => /stepz/.test(e.message));
  } finally {
    run.free();
  }
});

test('a setting that will not fit is refused with both figures, and the model stays as it was', async () => {
  const gpt = await loadGptApi();
  // a GPT-2-sized vocabulary and context on a narrow model: the logits of 16 × 1,024 tokens alone are 3.3 GB
  const hf = hfGpt2Files({ n_layer: 1, n_head: 2, n_embd: 16, block_size: 1024, vocab_size: 50257 }, 3);
  const run = await gpt.openModel([{ name: 'model.safetensors', data: hf.model }, { name: 'config.json', data: hf.config }]);
  try {
    const m = run.finetuneMemory({ context: 1024, batch_size: 16 });
    assert.equal(m.fits, false);
    assert.equal(m.field, 'context');
    assert.ok(m.need > m.available, JSON.stringify(m));
    assert.match(m.error, /^fine-tuning this model \(\d{1,3}(,\d{3})* parameters\) at batch_size 16 × context 1024 needs [\d,]+ bytes = [\d.]+ GiB \(the parameters/);
    assert.match(m.error, /but there are [\d,]+ bytes = [\d.]+ GiB for the model, of the [\d.]+ GiB this page can address: lower context to \d+ or less \([\d,]+ bytes = [\d.]+ GiB\), or batch_size$/);
    assert.doesNotMatch(m.error, /\)\)/);
    // a model of token ids (no tokenizer files) cannot read a text: refused, and nothing changed
    const before = JSON.stringify(run.info());
    assert.throws(() => run.finetune({ context: 8, batch_size: 1 }, 'hello'), (e) => e.field === 'text' && /vocabulary/.test(e.message));
    assert.equal(JSON.stringify(run.info()), before);
    assert.throws(() => run.train(1), (e) => e.field === 'model', 'still for inference');
  } finally {
    run.free();
  }
});

test('fine-tuning is in the full module: a run of the start module is refused, field "piece"', async () => {
  const gpt = await loadGptApi();
  const run = gpt.create({ preset: 'tiny', task: 'copy', seed: 1 });
  try {
    assert.throws(() => run.finetuneMemory({}), (e) => e.field === 'piece' && /full module/.test(e.message));
    assert.throws(() => run.finetune({}, FINETUNE_TEXT), (e) => e.field === 'piece');
    assert.equal(run.train(1).step, 1); // the run goes on
  } finally {
    run.free();
  }
});

test('finetune: refusals leave the opened model; then a few steps train it, the loss falls, the checkpoint reloads', async () => {
  const gpt = await loadGptApi();
  const run = await opened(gpt);
  try {
    const before = logitsOf(run);
    const refused = [
      [{ context: 17 }, FINETUNE_TEXT, 'context'],
      [{ context: 16 }, 'ROMEO: To be', 'text'],
      [{ context: 4 }, 'quiet quiet quiet', 'text'], // 'q' and 'u'… are not in the vocabulary
      [{ lr: -1 }, FINETUNE_TEXT, 'lr'],
    ];
    for (const [spec, text, field] of refused) {
      assert.throws(() => run.finetune(spec, text), (e) => e.field === field, `${JSON.stringify(spec)} → ${field}`);
    }
    assert.throws(() => run.finetune({}, 12), TypeError);
    assert.throws(() => run.finetune({ context: 4 }, new Uint8Array([0x52, 0x4f, 0xff, 0x4d, 0x45, 0x4f])), (e) => e.field === 'text' && /byte/.test(e.message));
    assert.throws(() => run.finetune({}, 'ab\ud800'), (e) => e.field === 'text' && /lone UTF-16 surrogate/.test(e.message));
    assert.throws(() => run.train(1), (e) => e.field === 'model', 'still an opened model, for inference');
    assert.deepEqual(logitsOf(run), before, 'the same logits after the refusals');

    const spec = { context: 16, batch_size: 4, steps: 30, lr: 3e-3, seed: 3, eval_interval: 10, text_name: 'romeo.txt' };
    const info = run.finetune(spec, FINETUNE_TEXT);
    assert.equal(info.base, 'nanoGPT ckpt.pt, iter 5000');
    assert.equal(info.step, 0);
    assert.equal(info.steps, 30);
    assert.equal(info.train.batch_size, 4);
    assert.equal(info.train.context, 16);
    assert.equal(info.data.text_name, 'romeo.txt');
    assert.equal(info.tokenizer, 'characters');
    assert.deepEqual(logitsOf(run), before, 'fine-tuning starts from the opened weights');
    const v0 = run.evaluate().val_loss;
    const r = run.train(30);
    assert.equal(r.step, 30);
    assert.equal(r.diverged, false);
    const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
    assert.ok(mean(r.losses.slice(-5)) < mean(r.losses.slice(0, 5)) - 0.3, `the loss falls: ${r.losses[0]} → ${r.losses[29]}`);
    const v1 = run.evaluate().val_loss;
    assert.ok(v1 < v0, `the validation loss falls: ${v0} → ${v1}`);
    assert.ok(Math.abs(r.lrs[0] - 3e-3) < 1e-9 && Math.abs(r.lrs[29] - 3e-4) < 1e-5, 'no warm-up; cosine to lr/10');
    // the checkpoint: a run on the text, with its base; it loads with the text and trains on alike
    const bytes = run.save();
    const back = gpt.load(bytes, FINETUNE_TEXT);
    try {
      assert.equal(back.info().base, 'nanoGPT ckpt.pt, iter 5000');
      assert.equal(back.info().step, 30);
      assert.deepEqual(logitsOf(back), logitsOf(run));
      assert.equal(back.sample({ prompt: PROMPT, max_new_tokens: 20, greedy: true }).new_text,
        run.sample({ prompt: PROMPT, max_new_tokens: 20, greedy: true }).new_text);
    } finally {
      back.free();
    }
    // the text as the bytes of a UTF-8 file, as the page's file picker may give it: the same run
    const bytesRun = await opened(gpt);
    try {
      bytesRun.finetune(spec, new TextEncoder().encode(FINETUNE_TEXT));
      assert.equal(bytesRun.evaluate().val_loss, v0);
    } finally {
      bytesRun.free();
    }
    // the same seed, the same bits: a second opening fine-tuned alike
    const again = await opened(gpt);
    try {
      again.finetune(spec, FINETUNE_TEXT);
      assert.equal(again.evaluate().val_loss, v0);
      assert.deepEqual(Array.from(again.train(30).losses), Array.from(r.losses));
      assert.equal(again.evaluate().val_loss, v1); // (the last validation loss is in the checkpoint)
      assert.deepEqual(again.save(), bytes);
    } finally {
      again.free();
    }
  } finally {
    run.free();
  }
});
