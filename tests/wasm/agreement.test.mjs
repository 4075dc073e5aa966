// agreement.test.mjs — the native CLI and the wasm module give the same bytes for every golden
// case. Both call ap::trace_json (src/api/api.h); the CLI prints its result, so equal text means
// the two builds agree bit for bit on every number (numbers are written as the shortest text that
// reads back to the same float32).
//
// CLI: build/attention (or $AP_CLI) `trace <specfile>`: exit 0 on ok, non-zero with the same JSON
// on error. Without a CLI the test is skipped, except in CI (CI set), where it fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after } from 'node:test';
import { loadApi, loadGolden, ROOT } from './load.mjs';

const CLI = process.env.AP_CLI ? resolve(process.env.AP_CLI) : join(ROOT, 'build', 'attention');
const haveCli = existsSync(CLI);
const M = (await loadApi()).module;
const golden = await loadGolden();
const dir = mkdtempSync(join(tmpdir(), 'ap-agreement-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function runCli(specText, file) {
  writeFileSync(file, specText);
  try {
    return { code: 0, stdout: execFileSync(CLI, ['trace', file], { encoding: 'utf8', maxBuffer: 256 << 20 }) };
  } catch (e) {
    if (typeof e.status !== 'number') throw e; // could not run at all
    return { code: e.status, stdout: e.stdout };
  }
}

if (!haveCli && process.env.CI) {
  test('native CLI is present', () => assert.fail(`${CLI} not found: build the native CLI or set AP_CLI`));
}

golden.cases.forEach((c, i) => {
  test(`agreement: ${c.name}`, { skip: haveCli ? false : `no native CLI at ${CLI} (set AP_CLI)` }, () => {
    const specText = JSON.stringify(c.spec);
    const wasm = M.trace_json(specText);
    const cli = runCli(specText, join(dir, `case-${i}.json`));
    assert.equal(cli.stdout.replace(/\r?\n$/, ''), wasm, 'CLI stdout differs from the wasm trace_json text');
    const ok = JSON.parse(wasm).ok === true;
    assert.equal(cli.code === 0, ok, `CLI exit code ${cli.code} for ok=${ok}`);
  });
});

// Failing specs too: same JSON text, and a non-zero exit status.
const FAILING = {
  'bad shapes': '{"Q":[[1,0,0,0]],"K":[[1,0,0]],"V":[[1]]}',
  'bad matrix text': '{"Q":"1 0; 0 1","K":"1 0; 0 zz","V":"1 0; 0 1"}',
  'non-finite cell': '{"Q":[[1,0],["nan",1]],"K":"1 0; 0 1","V":"1 0; 0 1"}',
  'unknown key': '{"Q":"1","K":"1","V":"1","colour":1}',
  'not JSON': '{"Q":"1 0; 0 1"',
  'limit': '{"Q":"1","K":"1","V":"1","n_head":2000}',
};
Object.entries(FAILING).forEach(([name, specText], i) => {
  test(`agreement (error): ${name}`, { skip: haveCli ? false : `no native CLI at ${CLI}` }, () => {
    const wasm = M.trace_json(specText);
    assert.equal(JSON.parse(wasm).ok, false);
    const cli = runCli(specText, join(dir, `fail-${i}.json`));
    assert.equal(cli.stdout.replace(/\r?\n$/, ''), wasm);
    assert.notEqual(cli.code, 0);
  });
});

test('agreement: the CLI reads a spec from stdin with "-"', { skip: haveCli ? false : `no native CLI at ${CLI}` }, () => {
  const specText = JSON.stringify({ Q: [[1, 0], [0, 1]], K: [[1, 0], [0, 1]], V: [[1, 0], [0, 1]] });
  const out = execFileSync(CLI, ['trace', '-'], { input: specText, encoding: 'utf8' });
  assert.equal(out.replace(/\r?\n$/, ''), M.trace_json(specText));
});

// Seeded random numbers: the same seed gives the same bits natively and in wasm.
test('agreement: seeded random matrices and seeded weights', { skip: haveCli ? false : `no native CLI at ${CLI}` }, () => {
  for (const [rows, cols, seed] of [[3, 4, 42], [16, 16, 7], [1, 64, 123456789]]) {
    const cli = execFileSync(CLI, ['random', String(rows), String(cols), String(seed)], { encoding: 'utf8' });
    assert.equal(cli.replace(/\r?\n$/, ''), M.random_matrix_json(JSON.stringify({ rows, cols, seed })));
  }
  const specText = JSON.stringify({ x: '1 2 3 4; 5 6 7 8; -1 0 1 2', seed: 99, n_head: 2, causal: true });
  const out = execFileSync(CLI, ['trace', '-'], { input: specText, encoding: 'utf8' });
  assert.equal(out.replace(/\r?\n$/, ''), M.trace_json(specText));
  assert.ok(JSON.parse(out).trace.inputs.W_q.length === 4, 'the seed filled W_q');
});
