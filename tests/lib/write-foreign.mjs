// write-foreign.mjs — writes a model "trained elsewhere" in nanoGPT's layout for the `gpt` CLI's
// tests (tests/gpt_cli_test.cmake, part "foreign"), with the float64 answers they check against:
//
//   node tests/lib/write-foreign.mjs DIR
//
// DIR/out/ckpt.pt          nanoGPT's checkpoint (2 layers × 2 heads, n_embd 16, 26 characters),
//                          its config's dataset "tiny_chars", iter_num 5000
// DIR/data/tiny_chars/meta.pkl   its characters, where nanoGPT's layout keeps them (../data/<dataset>/)
// DIR/alone/ckpt.pt        the same model, dataset "elsewhere": no meta.pkl can be found for it
// DIR/chars/meta.pkl       the characters again, to be named after alone/ckpt.pt
// DIR/renamed.pt           a text file named .pt
// DIR/surprisal.json       {"losses": [...]}: −log p of every token of SURPRISAL_TEXT after the first,
//                          from an independent float64 nanoGPT (gpt-ref.mjs)
// Limits: the files of foreign-files.mjs (float32 storages, no zip64).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nanoGptCkpt, nanoGptTensors, metaPkl } from './foreign-files.mjs';
import { refSurprisal } from './gpt-ref.mjs';

const CHARS = [...'\n !,:;ERMOTabdehilmnorstuw'].sort();
const CFG = { n_layer: 2, n_head: 2, n_embd: 16, block_size: 16, vocab_size: CHARS.length };
const SEED = 5;
export const SURPRISAL_TEXT = 'ROMEO: To be';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node tests/lib/write-foreign.mjs DIR');
  process.exit(2);
}
const put = (path, bytes) => {
  const full = join(dir, path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, bytes);
};
put('out/ckpt.pt', nanoGptCkpt(CFG, SEED, { dataset: 'tiny_chars' }));
put('data/tiny_chars/meta.pkl', metaPkl(CHARS));
put('alone/ckpt.pt', nanoGptCkpt(CFG, SEED, { dataset: 'elsewhere' }));
put('chars/meta.pkl', metaPkl(CHARS));
put('renamed.pt', new TextEncoder().encode('ROMEO: this is a play, not a model.\n'));
const ids = [...SURPRISAL_TEXT].map((c) => CHARS.indexOf(c));
put('surprisal.json', JSON.stringify({ losses: refSurprisal(CFG, nanoGptTensors(CFG, SEED), ids) }));
