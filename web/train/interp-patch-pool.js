// interp-patch-pool.js — activation patching's sweep split over the page's workers: the core's
// cells (core/interp/interp.h patch_cells: the residual entering each layer at each position, then
// each head, then each MLP) handed out in parts to every worker (each holds a copy of the model),
// the answers' cells put back into one answer, with the progress counted in cells. Each cell is
// its own forward over the same clean and corrupted runs, so any split gives the numbers of one
// worker doing them all, bit for bit (tests/wasm/interp_patch_pool.test.mjs; natively
// tests/test_interp.cpp).
//
// Limits: every part starts again with the clean and the corrupted runs (two forwards); parts of
// about cells / (8 · workers) keep that under an eighth of the sweep for a model of a few
// layers, and let the bar move 8 times per worker at least. Cancelling is ending the workers
// (the caller's: each part is one call of the core).

/** Where cell i of the core's order lands in an answer: [key, row, column] (mlps: row only). */
export function cellAt(i, L, T, NH) {
  if (i < (L + 1) * T) return ['resid', Math.floor(i / T), i % T];
  const j = i - (L + 1) * T;
  if (j < L * NH) return ['heads', Math.floor(j / NH), j % NH];
  return ['mlps', j - L * NH, null];
}

/** A part's size for `cells` over `n` workers. */
export const partSize = (cells, n) => Math.max(1, Math.ceil(cells / (8 * n)));

/**
 * The whole sweep of `spec` (the core's patch spec: clean, corrupted, token, other, position) on
 * `workers` (client.js workers holding the model as run `run`), the parts taken in turn by
 * whichever worker is free. onProgress(done, cells) after each part. The answer is the core's
 * patch answer for every cell (first 0, count cells).
 */
export async function patchSweep(workers, spec, { run = 'main', onProgress = null, part = 0 } = {}) {
  const ask = (w, first, count) => w.call('interp', { run, call: 'patch', spec: { ...spec, first, count } });
  const out = await ask(workers[0], 0, 0); // the metrics, the tokens and the number of cells
  const { cells } = out;
  const L = out.heads.length, T = out.resid[0].length, NH = L ? out.heads[0].length : 0;
  const size = part || partSize(cells, workers.length);
  let next = 0, done = 0;
  onProgress?.(0, cells);
  const put = (a) => {
    for (let i = a.first; i < a.first + a.count; i++) {
      const [key, r, c] = cellAt(i, L, T, NH);
      if (c === null) out[key][r] = a[key][r]; else out[key][r][c] = a[key][r][c];
    }
  };
  await Promise.all(workers.map(async (w) => {
    while (next < cells) {
      const first = next;
      next += size;
      const a = await ask(w, first, size);
      put(a);
      done += a.count;
      onProgress?.(done, cells);
    }
  }));
  out.first = 0;
  out.count = cells;
  return out;
}
