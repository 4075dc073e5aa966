// gpt_calls.test.mjs — the one table of the GPT's calls (src/api/gpt_calls.h, kGptCalls) against
// everything that names them:
//  - the wasm module registers the table and nothing else: GptSession's methods are the calls (role
//    "module": functions gpt_<name>), each result as NAME() and NAME_view(), the stages, and the
//    fixed few (open_view, last_error, call_json); the module's functions likewise;
//  - each method takes the row's positional arguments (Embind refuses another count);
//  - web/gpt.d.ts types each of them (GptSessionHandle, GptCoreModule) and nothing else;
//  - every row has its one-line doc, docs/api.md a line for each call and result, and the regions
//    of web/gpt.d.ts and docs/api.md that scripts/gen-gpt-api.mjs writes from the table are current
//    (a stale one is named by its calls);
//  - `gpt api --help` (when build/gpt exists) lists the rows that are gpt api calls, in order.
// The table is read through the calls call itself (M.gpt_calls()), so the test follows the table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadGptApi, ROOT } from './load.mjs';
import { FILES, regions, rewrite, staleCalls } from '../../scripts/gen-gpt-api.mjs';
import { derivedMethods, HAND_WRITTEN } from '../../web/gpt.js';

const gpt = await loadGptApi();
const M = gpt.module;
const table = JSON.parse(M.gpt_calls());
const EMBIND = new Set(['constructor', 'clone', 'delete', 'deleteLater', 'isAliasOf', 'isDeleted']);
const SESSION_FIXED = ['open_view', 'last_error', 'call_json'];
const MODULE_FIXED = ['heap_bytes_in_use', 'open_memory', 'full_loaded'];

const sessionCalls = table.calls.filter((c) => c.role !== 'module');
const moduleCalls = table.calls.filter((c) => c.role === 'module');
const expectedSession = [
  ...sessionCalls.map((c) => c.name),
  ...table.results.flatMap((r) => [r.name, `${r.name}_view`]),
  ...table.stages.map((s) => s.name),
  ...SESSION_FIXED,
].sort();
const expectedModule = [...moduleCalls.map((c) => `gpt_${c.name}`), ...MODULE_FIXED].sort();

/** The methods of `export interface NAME { … }` in web/gpt.d.ts. */
function dtsMethods(name) {
  const dts = readFileSync(join(ROOT, 'web', 'gpt.d.ts'), 'utf8');
  const start = dts.indexOf(`export interface ${name} {`);
  assert.ok(start >= 0, `gpt.d.ts has no interface ${name}`);
  const body = dts.slice(start, dts.indexOf('\n}', start));
  return [...body.matchAll(/^ {2}(\w+)(?:\(|:)/gm)].map((m) => m[1]);
}

test('the table is well formed: unique names, known kinds, results that exist', () => {
  const names = table.calls.map((c) => c.name);
  assert.equal(new Set(names).size, names.length, 'a call is declared twice');
  const results = new Set(table.results.map((r) => r.name));
  for (const c of table.calls) {
    for (const a of c.args) assert.ok(['spec', 'json', 'text', 'bytes', 'whole', 'number', 'out'].includes(a.kind), `${c.name}.${a.key}`);
    for (const r of c.results) assert.ok(results.has(r), `${c.name} leaves ${r}, which is not a result`);
    if (!c.api) assert.ok(c.args.every((a) => a.kind !== 'out'), `${c.name}: out is gpt api's`);
  }
});

test('the wasm module registers the table and nothing else', () => {
  const session = Object.getOwnPropertyNames(M.GptSession.prototype).filter((n) => !EMBIND.has(n)).sort();
  assert.deepEqual(session, expectedSession);
  const registered = Object.keys(M).filter((k) => typeof M[k] === 'function' && (k.startsWith('gpt_') || MODULE_FIXED.includes(k)));
  assert.deepEqual(registered.sort(), expectedModule);
});

test("each method takes its row's positional arguments", () => {
  const s = new M.GptSession();
  try {
    for (const c of sessionCalls) {
      const n = c.args.filter((a) => a.kind !== 'out').length;
      const tooMany = Array.from({ length: n + 1 }, () => 0);
      assert.throws(() => s[c.name](...tooMany), /expected|arguments/, `${c.name} takes ${n}`);
    }
    // with the right count each answers (refusing: no model yet)
    assert.equal(JSON.parse(s.info()).field, 'model');
    assert.equal(JSON.parse(s.train(3)).field, 'model');
    assert.equal(s.save(), null);
  } finally {
    s.delete();
  }
});

test('web/gpt.d.ts types every registered method, and no other', () => {
  assert.deepEqual(dtsMethods('GptSessionHandle').filter((n) => !EMBIND.has(n)).sort(), expectedSession);
  assert.deepEqual(dtsMethods('GptCoreModule').filter((n) => n !== 'GptSession').sort(), expectedModule);
});

test('every call has its doc, and docs/api.md a line for every call and result', () => {
  for (const c of table.calls) assert.ok(c.doc && !c.doc.includes('\n'), `kGptCalls' row ${c.name} has no one-line doc`);
  const doc = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8');
  for (const c of table.calls) {
    const wasm = c.role === 'module' ? `gpt_${c.name}(` : `${c.name}(`;
    assert.ok(doc.includes('`' + wasm) || doc.includes(`"call":"${c.name}"`), `docs/api.md does not name ${c.name}`);
  }
  for (const r of table.results) assert.ok(doc.includes('`' + r.name + '('), `docs/api.md does not name the result ${r.name}`);
});

test("the generated regions of gpt.d.ts and api.md are the table's (node scripts/gen-gpt-api.mjs)", () => {
  const want = regions(table);
  for (const [file, path] of Object.entries(FILES)) {
    const text = readFileSync(path, 'utf8');
    const stale = staleCalls(text, want[file], table);
    assert.deepEqual(stale, [], `${path} is stale for ${stale.join(', ')}: run node scripts/gen-gpt-api.mjs`);
    assert.equal(rewrite(text, want[file]), text, `${path}'s generated regions are stale: run node scripts/gen-gpt-api.mjs`);
  }
});

const GPT = join(ROOT, 'build', 'gpt');
test('gpt api --help lists the gpt api calls in order', { skip: !existsSync(GPT) && 'build/gpt is not built' }, () => {
  const help = execFileSync(GPT, ['api', '--help'], { encoding: 'utf8' });
  const api = table.calls.filter((c) => c.api).map((c) => c.name);
  let at = 0;
  for (const name of api) {
    const i = help.indexOf(name, at);
    assert.ok(i >= 0, `gpt api --help does not list ${name} after position ${at}`);
    at = i;
  }
  assert.equal(JSON.parse(execFileSync(GPT, ['api'], { input: '{"call":"calls"}\n', encoding: 'utf8' })).calls.length, table.calls.length);
});

test('web/gpt.js: every gpt api row is a method (written by hand or made from the table), answering as the row', () => {
  const run = gpt.create({ task: 'copy', n_layer: 1, n_embd: 16, n_head: 2, block_size: 8, batch_size: 2, seed: 1 });
  try {
    for (const { method, row } of derivedMethods(table.calls)) {
      const owner = row.role === 'module' ? gpt : run;
      assert.equal(typeof owner[method], 'function', `${row.name} has no method ${method}`);
    }
    for (const name of HAND_WRITTEN) assert.ok(table.calls.some((c) => c.name === name), `HAND_WRITTEN names ${name}, not in the table`);
    // a derived method is the row: runMemory() answers as gpt api's run_memory does
    const line = run.call('run_memory');
    assert.deepEqual(run.runMemory(), line);
    assert.equal(line.parameters, 4 * run.info().n_params);
    assert.throws(() => run.runMemory(1), TypeError);
  } finally {
    run.free();
  }
});
