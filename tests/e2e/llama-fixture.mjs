// llama-fixture.mjs — the files of tests/open_llama_fixture.py (a sharded Llama folder, GGUFs, a BF16
// folder) and the numbers our own PyTorch model expects of them, written once per spec file under
// its test output: writeLlamaFixture(testInfo) → { dir, want } (want: expected.json).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';

export const LLAMA_FOLDER = 'TinyLlama-test';

export function writeLlamaFixture(testInfo) {
  const dir = testInfo.outputPath('fixture');
  mkdirSync(dir, { recursive: true });
  const out = execFileSync('/usr/bin/python3', ['tests/open_llama_fixture.py', dir], { encoding: 'utf8' });
  return { dir, want: JSON.parse(readFileSync(out.trim(), 'utf8')) };
}
