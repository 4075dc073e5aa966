// worker-trace.js — the training worker's step trace (worker.js's op 'trace'; off unless asked, for
// bench/train_bench.mjs --trace), shared by worker.js and worker-shards.js. Limits: one trace per
// worker; the marks are kept until the next trace op takes them.

/**
 * The step trace (op 'trace'; off unless asked, for bench/train_bench.mjs --trace): [what, time,
 * step, extra] marks on one clock across the workers (performance.timeOrigin + now(), ms), the
 * helpers' own marks carried back in their answers. Off, it costs one test per mark.
 */
let marks = null;
export const clock = () => performance.timeOrigin + performance.now();
export const mark = (what, step = -1, extra = null) => { if (marks) marks.push([what, clock(), step, extra]); };
/** Whether the trace is on. */
export const tracing = () => marks !== null;
/** The marks since the trace was turned on (or []); from now on kept when on, none when off. */
export function takeTrace(on) {
  const out = marks ?? [];
  marks = on ? [] : null;
  return out;
}
