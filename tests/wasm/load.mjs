// load.mjs — loads the web build of the core in Node for the node:test suites.
// The module is built for ENVIRONMENT=web,worker, so it cannot read its .wasm file in Node by
// itself: we read the bytes and hand them over as {wasmBinary} (then it does not fetch).
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { loadAttention, loadGpt } from '../../web/attention.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const WASM_PATH = fileURLToPath(new URL('../../web/gen/attention_core.wasm', import.meta.url));
export const GPT_WASM_PATH = fileURLToPath(new URL('../../web/gen/gpt_core.wasm', import.meta.url));
export const GOLDEN_PATH = fileURLToPath(new URL('../golden/attention_cases.json', import.meta.url));

let cached;

/** The wrapped API (web/attention.js), loaded once per test file. */
export async function loadApi() {
  if (!cached) {
    let wasmBinary;
    try {
      wasmBinary = await readFile(WASM_PATH);
    } catch (e) {
      throw new Error(`${WASM_PATH} is missing: build it first (scripts/build wasm)`, { cause: e });
    }
    cached = loadAttention({ wasmBinary });
  }
  return cached;
}

let cachedGpt;

/** The tiny GPT's API (web/gpt.js through attention.js), loaded once per test file. */
export async function loadGptApi() {
  if (!cachedGpt) {
    let wasmBinary;
    try {
      wasmBinary = await readFile(GPT_WASM_PATH);
    } catch (e) {
      throw new Error(`${GPT_WASM_PATH} is missing: build it first (scripts/build wasm)`, { cause: e });
    }
    cachedGpt = loadGpt({ wasmBinary });
  }
  return cachedGpt;
}

/** The golden cases, {cases: [{name, spec, expect, tolerance}]}; `file` picks another golden file. */
export async function loadGolden(file = GOLDEN_PATH) {
  return JSON.parse(await readFile(file, 'utf8'));
}

export const GRAD_GOLDEN_PATH = fileURLToPath(new URL('../golden/attention_grad_cases.json', import.meta.url));

/** Bytes of the wasm linear memory (grows, never shrinks). */
export function memoryBytes(M) {
  const buf = M.HEAP8?.buffer ?? M.HEAPU8?.buffer ?? M.asm?.memory?.buffer ?? M.wasmMemory?.buffer;
  if (!buf) throw new Error('cannot find the wasm memory on the module (HEAP8 / asm.memory)');
  return buf.byteLength;
}
