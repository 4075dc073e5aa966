// tokens.test.mjs — how tokens reach the page as text: the session's encode/decode (web/gpt.js over
// the wasm module) and the one display convention, tokenLabel (web/train/maps.js), which every
// part of the training page that shows a token goes through (maps, generation, next-token bars,
// surprisal). tokenLabel is checked against tests/golden/token_labels.json, the same table
// tests/test_bpe.cpp holds the CLI's visible_token (core/tokenizers/bpe.h) to. A GPT-2 BPE model reaches a
// session only through an opened model (model-only files); its pieces are tested natively
// (tests/test_bpe.cpp, tests/import_torch_test.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadGptApi } from './load.mjs';
import { GptError } from '../../web/gpt.js';
import { tokenLabel } from '../../web/train/maps.js';

const table = JSON.parse(readFileSync(new URL('../golden/token_labels.json', import.meta.url), 'utf8'));

test('tokenLabel shows every space, newline and tab, as the CLI does', () => {
  assert.ok(table.cases.length >= 10);
  for (const [text, shown] of table.cases) assert.equal(tokenLabel(text), shown, JSON.stringify(text));
});

test('encode and decode through a run: ids, token texts, and refusals naming the field', async () => {
  const gpt = await loadGptApi();
  const text = 'the cat sat. 猫坐着。\n'.repeat(10);
  const run = gpt.create({ text, n_layer: 1, n_embd: 16, n_head: 2, block_size: 8, batch_size: 2, eval_batches: 1, steps: 1 });
  try {
    assert.equal(run.info().tokenizer, 'characters');
    const e = run.encode('cat 猫\n');
    assert.equal(e.ids.length, 6);
    assert.deepEqual(e.tokens, ['c', 'a', 't', ' ', '猫', '\n']);
    assert.deepEqual(e.tokens.map(tokenLabel), ['c', 'a', 't', '␣', '猫', '↵']);
    const d = run.decode(e.ids);
    assert.equal(d.text, 'cat 猫\n');
    assert.deepEqual(d.tokens, e.tokens);
    assert.deepEqual(run.decode(new Int32Array(e.ids)).text, 'cat 猫\n');
    assert.throws(() => run.decode([0, 999]), (err) => err instanceof GptError && err.field === 'ids' && /token id 999 at position 1/.test(err.message));
    assert.throws(() => run.decode([1.5]), (err) => err instanceof GptError && err.field === 'ids');
    assert.throws(() => run.encode('dog'), (err) => err instanceof GptError && err.field === 'text' && /"d" \(U\+0064\)/.test(err.message));
    assert.equal(run.encode('cat').ids.length, 3, 'the run is usable after the errors');
  } finally {
    run.free();
  }
});
