// load_node.test.mjs — loadAttention() and loadGpt() in Node without the core's bytes: the web
// build cannot fetch its .wasm there, so web/attention.js and web/gpt.js say what to pass
// (wasmBinary, and the file to read) instead of Emscripten's fetch error; passing what the message
// names loads the core.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { loadAttention, AttentionError } from '../../web/attention.js';
import { loadGpt, GptError } from '../../web/gpt.js';
import { WASM_PATH, GPT_WASM_PATH } from './load.mjs';

test('loadAttention() in Node without wasmBinary names the option and the file', async () => {
  const err = await loadAttention().then(() => null, (e) => e);
  assert.ok(err instanceof AttentionError, `an AttentionError, not ${err}`);
  assert.equal(err.field, 'wasmBinary');
  assert.match(err.message, /wasmBinary/);
  assert.ok(err.message.includes(WASM_PATH), `the message names ${WASM_PATH}: ${err.message}`);
  assert.match(err.message, /scripts\/build wasm/);
  // an empty options object is the same call
  await assert.rejects(loadAttention({}), (e) => e instanceof AttentionError && e.field === 'wasmBinary');
});

test('the file the message names, passed as wasmBinary, loads the core', async () => {
  const err = await loadAttention().then(() => null, (e) => e);
  const file = /readFile\('([^']+)'\)/.exec(err.message)?.[1];
  assert.equal(file, WASM_PATH);
  const api = await loadAttention({ wasmBinary: await readFile(file) });
  assert.match(api.version, /^\d+\.\d+\.\d+$/);
});

test('loadGpt() in Node without wasmBinary names the option and the file, which then loads', async () => {
  const err = await loadGpt().then(() => null, (e) => e);
  assert.ok(err instanceof GptError, `a GptError, not ${err}`);
  assert.equal(err.field, 'wasmBinary');
  assert.match(err.message, /scripts\/build wasm/);
  const file = /readFile\('([^']+)'\)/.exec(err.message)?.[1];
  assert.equal(file, GPT_WASM_PATH);
  await assert.rejects(loadGpt({ threads: 1 }), (e) => e instanceof GptError && e.field === 'wasmBinary');
  const gpt = await loadGpt({ wasmBinary: await readFile(file) });
  assert.ok(gpt.tasks().some((t) => t.name === 'copy'));
});
