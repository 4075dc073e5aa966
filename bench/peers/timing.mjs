// timing.mjs — the clock and the timing loop of the JS peers (ort_peer.mjs, tfjs_peer.mjs), the
// same as torch_peer.py's and ours (bench/bench_core.cpp): the call repeated, doubling, until one
// trial takes ≥ 40 ms, then `trials` trials; min and median per call, printed as the line
// bench/peers_table.py reads ("<tag> <workload> min_us=… med_us=… [GFLOPs_min=… GFLOPs_med=…]").
// The clock is wall time (process.hrtime), or with AP_BENCH_CPU_TIME=1 this process's user CPU time
// (process.cpuUsage), as ours in Node: the peers run one wasm thread and V8's background threads
// are idle in steady state, so CPU time is the time the work took on a core. Node only.

const cpuTime = process.env.AP_BENCH_CPU_TIME === '1';

/** Seconds on the benchmarks' clock. */
export const now = cpuTime
  ? () => process.cpuUsage().user / 1e6
  : () => Number(process.hrtime.bigint()) / 1e9;

/**
 * Times `await fn()` per call and prints the workload's line; resolves to [min, median] seconds.
 * flops: counted per call (0: no GFLOP/s); minTrial: seconds one trial must reach (0: one call).
 */
export async function bench(tag, name, fn, { flops = 0, trials = 9, minTrial = 0.04 } = {}) {
  await fn();
  let reps = 1;
  for (;;) {
    const t0 = now();
    for (let r = 0; r < reps; r++) await fn();
    if (now() - t0 > minTrial || reps >= (1 << 20)) break;
    reps *= 2;
  }
  const ts = [];
  for (let t = 0; t < trials; t++) {
    const t0 = now();
    for (let r = 0; r < reps; r++) await fn();
    ts.push((now() - t0) / reps);
  }
  ts.sort((a, b) => a - b);
  const [mn, md] = [ts[0], ts[ts.length >> 1]];
  const g = flops ? ` GFLOPs_min=${(flops / mn * 1e-9).toFixed(2).padStart(7)} GFLOPs_med=${(flops / md * 1e-9).toFixed(2).padStart(7)}` : '';
  console.log(`${tag} ${name.padEnd(24)} min_us=${(mn * 1e6).toFixed(2).padStart(10)} med_us=${(md * 1e6).toFixed(2).padStart(10)}${g} (reps=${reps} trials=${trials})`);
  return [mn, md];
}

/** Greedy generation's figure: "<tag>   -> tok/s_med=…" from the median time of `tokens` tokens. */
export function tokensLine(tag, tokens, median) {
  console.log(`${tag}   -> tok/s_med=${(tokens / median).toFixed(0)}`);
}

/** n floats uniform in [−0.5, 0.5) (the values do not matter, only that they are ordinary numbers). */
export function uniform(n) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = Math.random() - 0.5;
  return a;
}

/**
 * The command line shared by the JS peers: [trials] [workloads] [--quick]. --quick: 3 trials and
 * fewer training steps, to prove that a runner works (it measures nothing).
 */
export function peerArgs(argv = process.argv.slice(2)) {
  const quick = argv.includes('--quick');
  const rest = argv.filter((a) => a !== '--quick');
  return { trials: quick ? 3 : Number(rest[0] || 9), only: new Set((rest[1] || 'w1,w2,w3,w4').split(',')), quick };
}

/**
 * W6's timing (as ours and torch_peer.py's): `await run()` timed `trials` times after `warmup`
 * calls, `await prepare()` before each, untimed; prints "<tag> <name> ms_min=… ms_med=… cpu_ms_med=…
 * [ms/tok_med=…] tok/s_med=…" for `tokens` tokens a call (CPU: this process's user time).
 */
export async function timeSteps(tag, name, tokens, { trials, warmup, prepare = async () => {}, run }) {
  for (let i = 0; i < warmup; i++) {
    await prepare();
    await run();
  }
  const ts = [], cpu = [];
  for (let t = 0; t < trials; t++) {
    await prepare();
    const c0 = process.cpuUsage().user, t0 = now();
    await run();
    ts.push(now() - t0);
    cpu.push((process.cpuUsage().user - c0) / 1e6);
  }
  const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  const md = med(ts);
  const per = name.includes('gen') ? ` ms/tok_med=${(md * 1e3 / tokens).toFixed(2)}` : '';
  console.log(`${tag} ${name.padEnd(24)} ms_min=${(Math.min(...ts) * 1e3).toFixed(1).padStart(9)} ms_med=${(md * 1e3).toFixed(1).padStart(9)} ` +
    `cpu_ms_med=${(med(cpu) * 1e3).toFixed(1)}${per} tok/s_med=${(tokens / md).toFixed(2).padStart(8)} (trials=${trials})`);
}
