// kernels.test.mjs — the fast kernels' Catch2 suite (tests/test_kernels.cpp, and test_quant.cpp's quantized products) built for wasm
// (build-wasm/ap_kernel_tests.cjs, by `scripts/build wasm`), run under Node: every fast kernel on
// SIMD128 and on the scalar path against its reference kernel, within the tolerances kernels.h states.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SUITE = fileURLToPath(new URL('../../build-wasm/ap_kernel_tests.cjs', import.meta.url));

test('fast kernels in wasm (SIMD128 and scalar) match the reference kernels', () => {
  assert.ok(existsSync(SUITE), `${SUITE} is missing: build it first (scripts/build wasm)`);
  const run = spawnSync(process.execPath, [SUITE, '--use-colour', 'no'], { encoding: 'utf8', timeout: 600_000 });
  const out = `${run.stdout}\n${run.stderr}`;
  assert.equal(run.status, 0, `the wasm kernel suite failed:\n${out.slice(-6000)}`);
  assert.match(out, /All tests passed/);
});

test('the wasm build runs the SIMD128 kernels by default', () => {
  const run = spawnSync(process.execPath, [SUITE, '--use-colour', 'no', '-s', 'fast kernels: the dispatcher*'],
    { encoding: 'utf8', timeout: 120_000 });
  assert.equal(run.status, 0, run.stdout + run.stderr);
  // the dispatcher test checks names.front() == "simd128" in this build; it must have run
  assert.match(run.stdout, /names\.front\(\) == "simd128"/);
});
