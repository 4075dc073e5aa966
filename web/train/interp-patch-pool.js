// interp-patch-pool.js — activation patching's sweep split over the page's workers: the core's
// cells (core/interp/interp.h patch_cells: the residual entering each layer at each position, then
// each head, then each MLP) handed out to every worker (each holds a copy of the model), one cell
// per request by default, the answers' cells put back into one answer, with the progress moving
// after each finished cell. Each cell is its own forward over the same clean and corrupted runs,
// so any split gives the numbers of one worker doing them all, bit for bit
// (tests/wasm/interp_patch_pool.test.mjs; natively tests/test_interp.cpp).
//
// Limits: a worker's core keeps its last patch call's clean and corrupted runs (two whole
// forwards) for its next call of the same prompts and metric (docs/api.md, patch), so asking cell
// by cell costs each worker those runs once, and a request's round trip per cell (well under a
// millisecond; a cell is a forward from its layer on). Cancelling is ending the workers (the
// caller's: each request is one call of the core).

/** The memory the page lets its patching copies take, together. */
export const PATCH_BUDGET = 2 ** 30;

/**
 * How many copies of the model patch: `want` (the Workers field), as many as fit in `budget`, a
 * copy counted as what the run holds in memory (`mem`: the core's run_memory answer; its
 * allocated buffers, at least its float32 parameters), not its checkpoint file (which may hold
 * AdamW's moments or an untied head): GPT-2 small, 498 MB of parameters, patches on two.
 */
export function patchCopies(want, mem, budget = PATCH_BUDGET) {
  const bytes = Math.max(1, mem?.allocated ?? 0, mem?.parameters ?? 0);
  return Math.max(1, Math.min(Math.max(1, want), Math.floor(budget / bytes)));
}

/** Where cell i of the core's order lands in an answer: [key, row, column] (mlps: row only). */
export function cellAt(i, L, T, NH) {
  if (i < (L + 1) * T) return ['resid', Math.floor(i / T), i % T];
  const j = i - (L + 1) * T;
  if (j < L * NH) return ['heads', Math.floor(j / NH), j % NH];
  return ['mlps', j - L * NH, null];
}

/**
 * The whole sweep of `spec` (the core's patch spec: clean, corrupted, token, other, position) on
 * `workers` (client.js workers holding the model as run `run`), the cells taken in turn by
 * whichever worker is free, `part` cells per request (1: each finished cell reported).
 * onProgress(done, total) after each request. `upto`: the sweep's first cells only (the residual
 * map is the first (L + 1)·T). `stop()`: true ends the sweep before its next request (the cells
 * not asked stay 0). The answer is the core's patch answer for those cells (first 0, count
 * total), the others 0.
 */
export async function patchSweep(workers, spec, { run = 'main', onProgress = null, part = 1, upto = Infinity, stop = null } = {}) {
  const ask = (w, first, count) => w.call('interp', { run, call: 'patch', spec: { ...spec, first, count } });
  const out = await ask(workers[0], 0, 0); // the metrics, the tokens and the number of cells
  const { cells } = out;
  const total = Math.max(0, Math.min(cells, upto));
  const L = out.heads.length, T = out.resid[0].length, NH = L ? out.heads[0].length : 0;
  const size = Math.max(1, part);
  let next = 0, done = 0;
  onProgress?.(0, total);
  const put = (a) => {
    for (let i = a.first; i < a.first + a.count; i++) {
      const [key, r, c] = cellAt(i, L, T, NH);
      if (c === null) out[key][r] = a[key][r]; else out[key][r][c] = a[key][r][c];
    }
  };
  await Promise.all(workers.map(async (w) => {
    while (next < total && !stop?.()) {
      const first = next;
      next = Math.min(total, next + size);
      const a = await ask(w, first, next - first);
      put(a);
      done += a.count;
      onProgress?.(done, total);
    }
  }));
  out.first = 0;
  out.count = total;
  return out;
}
