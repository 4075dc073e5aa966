#!/usr/bin/env node
// train_bench.mjs — what the training page (web/train/) weighs and how it runs in Chromium.
// A benchmark, not a test: it prints numbers and never fails on them.
//
//   npm run bench:train                    # 100 steps of the tiny preset on copy, batch 16
//   node bench/train_bench.mjs --steps 300 --batch 8 --workers 1,2
//
// What it does:
//   1. starts its own static server (http-server from node_modules) on 127.0.0.1, a free port;
//   2. transfer size: opens the page in Debian's Chromium, waits until its worker has loaded the
//      GPT core, and sums gzip -9 of every file the page and its worker fetched (html, js, css,
//      wasm): what a static host with gzip serves. The stepper's page is measured beside it, to
//      show that it does not grow (the GPT is a module of its own);
//   3. training: runs the tiny preset on the copy task in the page (its worker), once per count of
//      --workers (the page's Workers field; default 1 and 2), and prints two figures: the whole
//      run's tokens/s as the page reports it (its training time in the worker, so the run's fixed
//      costs are in it: the evaluations, the samples, the chunks' ends, the first steps) and W3's
//      (bench/README.md): a step's median time after 5 warm-up steps, each step timed on its own in
//      the worker (from its step trace, on for every run: on one share train(1) per call, on
//      several stepBegin to stepFinish's end), and with several counts the speed-up of those
//      medians; then the wall time, and the page thread's long tasks (> 50 ms,
//      Long Tasks API) and long animation frames while it trains: for each frame, the time of
//      the page's own scripts (Long Animation Frames attribution: function@file) and of its
//      style/layout/paint;
//   4. the same while the learner uses the page (types two fields, asks for the attention maps,
//      scrolls and points at a map): the page's own script time per frame, frame by frame. A
//      learner should never wait on the page's thread: its scripts should stay well under 50 ms
//      in any frame. That depends on the machine and on what else it runs, so it is measured
//      and printed here, and no test asserts it;
//   5. stops the browser and the server.
//
//   --path workers,threads   the page as a static host serves it (plain workers, the default) and/or
//                            cross-origin isolated (/isolated/train/: wasm threads); each path × count
//   --quick                  only the training runs (no transfer sizes, no learner's use)
//   --weight                 only what the pages weigh (step 2)
//   --web DIR                serve another checkout's web/ (e.g. /work/baseline/web: the old page)
//   --default-run            train the page's default run (its own settings, no link hash; with
//                            --steps, only the step count changed)
//   --preset small           the small preset (4 layers, 128 wide, block 128) instead of tiny
//   --rounds N               every run above N times, alternated (path × count, then again), then
//                            each one's median tokens/s and W3 step time, and the ratios of the medians
//   --trace                  the workers path's step trace (worker.js op 'trace': marks on one clock
//                            from the training worker and its helpers): per data-parallel step, the
//                            pieces' medians and means — the leader's stepBegin and posts, its
//                            share, its wait for the helpers, the adds, stepFinish (clip, AdamW),
//                            the gap to the next step; each helper's message latency out, its share
//                            (parameters in, gradients out), the latency back, its idle time
// Beside the wall and worker times it prints the CPU seconds the browser's processes used during
// each run (from /proc: every process under this one), so a loaded machine's runs can be compared,
// and each Web Worker thread's CPU per step (/proc/PID/task: the training worker and its helpers,
// busiest first) beside the worker's wall time per step: the gap is waiting (for a helper, a core).
//
// A quiet sitting (nothing else running; say the load average; 3 rounds, alternated):
//   node bench/train_bench.mjs --quick --path workers,threads --workers 1,2 --rounds 3   # tiny, 100 steps
//   node bench/train_bench.mjs --quick --path workers,threads --workers 1,2 --rounds 3 --preset small --steps 20
//       → each path's 2 ÷ 1 ratios ("Medians of 3 rounds": the whole run's tokens/s, and W3's
//         speed-up: one worker's median step ÷ two workers')
//   node bench/train_bench.mjs --quick --default-run --workers 1 --rounds 3 --web OLD/web   # the old page
//   node bench/train_bench.mjs --quick --default-run --workers 1,2 --path workers,threads --rounds 3
//       → the default 2,000-step run's time ("training time in the worker"), old page against this
//         one (its default: 1 worker on the workers path, the cores on the threads path)
//   AP_BENCH_CPU_TIME=1 /usr/bin/python3 bench/peers/torch_peer.py --only w3 --threads 1
//   AP_BENCH_CPU_TIME=1 /usr/bin/python3 bench/peers/torch_peer.py --only w3 --threads 2
//       → PyTorch's W3 tiny and small at 1 and 2 threads (drop AP_BENCH_CPU_TIME=1 on a quiet
//         machine for wall time; bench/run_peers.sh sets LD_LIBRARY_PATH to Debian's OpenBLAS)
import { readFileSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { runPageBench, transfer } from './web_server.mjs';

const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : dflt; };
const STEPS = arg('steps', 100);
const BATCH = arg('batch', 16);
const list = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1].split(',') : dflt; };
const WORKERS = list('workers', ['1', '2']).map(Number);
const PATHS = list('path', ['workers']);
const QUICK = process.argv.includes('--quick');
const WEIGHT_ONLY = process.argv.includes('--weight');
/** The training page's pieces loaded by dynamic import() on first use, and when. */
const LAZY = [
  ['/gen/vendor/uplot.mjs', 'the first point of a loss chart (chart.js)'],
  ['/train/kv.js', 'the first generation (section-generation.js)'],
  ['/train/model-view.js', 'the first model view (section-maps.js)'],
  ['/common/figures.js', 'the first PNG/SVG export (chart.js, model-view.js, section-next-token.js)'],
  ['/train/walk-view.js', 'the first walk through the block (section-walk.js)'],
  ['/train/walk-steps.js', 'the first walk through the block (walk-view.js)'],
  ['/train/walk-figure.js', 'the first walk through the block (walk-view.js)'],
  ['/train/maps.js', 'the first model view or walk (model-view.js, walk-view.js)'],
  ['/common/permalink.js', 'the first model view or walk (maps.js: the heads\' links into the stepper)'],
  ['/train/i18n-zh.js', 'Chinese: chosen, remembered or in the link (i18n.js)'],
  ['/gen/gpt_core_full.wasm', 'the first model opened or walk (gpt.js loadFull: the core with the opening and the walk)'],
  ['/gen/gpt_core_full.mjs', 'the first model opened or walk (gpt.js loadFull)'],
  ['/gpt-open.js', 'the first model opened (gpt.js openModel)'],
  ['/train/finetune-panel.js', 'the first model opened (section-open.js: "Fine-tune it on your text")'],
];
const WEB = list('web', ['web'])[0];
const PRESET = list('preset', ['tiny'])[0] === 'small' ? '&preset=small' : '';
const ROUNDS = Math.max(1, arg('rounds', 1)); // the whole set of runs this many times, alternated, then the medians
const TRACE = process.argv.includes('--trace');
const DEFAULT_RUN = process.argv.includes('--default-run'); // the page's own settings (its default run), not --steps / --batch

/** CPU seconds (user + system) of every process below this one: the browser and the server. */
function childCpuSeconds() {
  const tick = 100; // USER_HZ on Linux
  const procs = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(d), { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / tick });
    } catch { /* gone */ }
  }
  const below = new Set([process.pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, p] of procs) if (!below.has(pid) && below.has(p.ppid)) { below.add(pid); grew = true; }
  }
  let sum = 0;
  for (const pid of below) if (pid !== process.pid) sum += procs.get(pid)?.cpu ?? 0;
  return sum;
}

/**
 * CPU seconds of each thread of the browser's processes, by thread id → {name, cpu} (/proc/PID/task:
 * Chromium names a Web Worker's thread "DedicatedWorker"): where a run's CPU time goes, worker by
 * worker.
 */
function threadCpuSeconds() {
  const tick = 100;
  const out = new Map();
  const ppid = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      ppid.set(Number(d), Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]));
    } catch { /* gone */ }
  }
  const below = new Set([process.pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, pp] of ppid) if (!below.has(pid) && below.has(pp)) { below.add(pid); grew = true; }
  }
  for (const pid of below) {
    if (pid === process.pid) continue;
    let tasks = [];
    try { tasks = readdirSync(`/proc/${pid}/task`); } catch { continue; }
    // the process's kind (--type=renderer, gpu-process, utility; none: the browser), so that
    // "chromium" (each process's main thread) says whose: the page's thread is the renderer's
    let kind = 'browser';
    try { kind = readFileSync(`/proc/${pid}/cmdline`, 'utf8').match(/--type=([\w-]+)/)?.[1] ?? kind; } catch { /* gone */ }
    for (const tid of tasks) {
      try {
        const st = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const thread = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
        const name = /Worker/i.test(thread) ? thread : `${thread} (${kind})`;
        const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
        out.set(`${pid}/${tid}`, { name, cpu: (Number(f[11]) + Number(f[12])) / tick });
      } catch { /* gone */ }
    }
  }
  return out;
}

/** The threads that used over 0.2 s of CPU between two threadCpuSeconds() readings, most first. */
function threadsBetween(a, b) {
  const d = [];
  for (const [k, t] of b) {
    const used = t.cpu - (a.get(k)?.cpu ?? 0);
    if (used > 0.2) d.push({ name: t.name, cpu: used });
  }
  return d.sort((x, y) => y.cpu - x.cpu);
}

/**
 * In the page, before its scripts: the long tasks (> 50 ms, Long Tasks API) and the long animation
 * frames (Long Animation Frames API) with their attribution: each script's file, function and
 * time, and the frame's style/layout/paint.
 */
function observeFrames() {
  window.__long = [];
  window.__loaf = [];
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push({ start: e.startTime, duration: e.duration }); })
    .observe({ type: 'longtask', buffered: true });
  new PerformanceObserver((l) => {
    for (const e of l.getEntries()) {
      window.__loaf.push({
        start: e.startTime, duration: e.duration, render: e.renderStart ? e.startTime + e.duration - e.renderStart : 0,
        scripts: e.scripts.map((x) => ({ url: x.sourceURL, fn: x.sourceFunctionName, invoker: x.invoker, duration: x.duration })),
      });
    }
  }).observe({ type: 'long-animation-frame', buffered: true });
}

/** The page's own share of each long frame since t0: its scripts' time (files of train/, gen/, stepper/), the frame's render, and where. */
async function framesSince(page, t0) {
  const { long, loaf } = await page.evaluate((t) => ({
    long: window.__long.filter((e) => e.start >= t).map((e) => e.duration),
    loaf: window.__loaf.filter((e) => e.start >= t),
  }), t0);
  const ours = loaf.map((f) => ({
    script: f.scripts.filter((x) => /\/(train|gen|stepper)\//.test(x.url)).reduce((a, x) => a + x.duration, 0),
    render: f.render,
    where: f.scripts.map((x) => `${x.fn || x.invoker}@${x.url.split('/').pop()}`).join(', '),
  }));
  return { long, ours };
}

function printFrames({ long, ours }) {
  const worst = ours.reduce((a, f) => Math.max(a, f.script), 0);
  const worstRender = ours.reduce((a, f) => Math.max(a, f.render), 0);
  console.log(`  page-thread long tasks (> 50 ms)                         ${long.length}${long.length ? ` (${long.map((d) => Math.round(d)).join(', ')} ms)` : ''}`);
  console.log(`  long animation frames                                    ${ours.length}; the page's scripts: longest ${worst.toFixed(0)} ms in one frame, ${ours.filter((f) => f.script > 50).length} frames over 50 ms; longest style/layout/paint ${worstRender.toFixed(0)} ms`);
  for (const f of ours) console.log(`    script ${Math.round(f.script).toString().padStart(4)} ms + render ${Math.round(f.render).toString().padStart(4)} ms  ${f.where || '(no script)'}`);
}

async function main({ browser, url }) {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  console.log(`\nTraining page — Chromium ${browser.version()}, headless (web: ${WEB}; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})\n`);
  if (!QUICK) await transferSizes(context, url);
  if (WEIGHT_ONLY) return;
  await trainingRuns(context, url);
  if (!QUICK) await learnerUse(context, url);
  console.log('');
}

async function transferSizes(context, url) {
  console.log('Transfer size: every file the page and its worker load, gzip -9');
  const pages = [
    ['training page', '/train/', (p) => p.waitForFunction(() => document.getElementById('app').dataset.status === 'ready', null, { timeout: 60_000 })],
    ['stepper page', '/index.html', (p) => p.waitForFunction(() => document.getElementById('app').dataset.status === 'ready', null, { timeout: 60_000 })],
  ];
  console.log(`${'page'.padEnd(16)}${'path'.padEnd(14)}${'files'.padStart(6)}${'raw kB'.padStart(10)}${'gzip kB'.padStart(10)}`);
  console.log('-'.repeat(56));
  const lists = [];
  for (const [name, path, ready] of pages) {
    const files = await transfer(context, url, path, { ready, settleMs: 500 });
    let raw = 0; let gz = 0;
    for (const f of files.values()) { raw += f.raw; gz += f.gz; }
    console.log(`${name.padEnd(16)}${path.padEnd(14)}${String(files.size).padStart(6)}${(raw / 1024).toFixed(1).padStart(10)}${(gz / 1024).toFixed(1).padStart(10)}`);
    lists.push([name, files]);
  }
  // what the training page loads on first use (dynamic import()), not at start: each file's size
  // and whether the start already fetched it (it should not)
  const start = lists[0][1];
  const startGz = [...start.values()].reduce((a, f) => a + f.gz, 0);
  console.log(`\nTraining page at start: ${(startGz / 1024).toFixed(1)} kB gzip (the budget: 350 kB)`);
  console.log('Loaded on first use (not at start):');
  let lazyGz = 0;
  for (const [path, when] of LAZY) {
    const body = Buffer.from(await (await fetch(`${url}${path}`)).arrayBuffer());
    const gz = gzipSync(body, { level: 9 }).length;
    lazyGz += gz;
    const atStart = start.has(`${url}${path}`) ? '  (fetched at start!)' : '';
    console.log(`  ${path.padEnd(28)}${(body.length / 1024).toFixed(1).padStart(8)} kB raw${(gz / 1024).toFixed(1).padStart(8)} kB gzip  ${when}${atStart}`);
  }
  console.log(`  ${'all of them'.padEnd(28)}${''.padStart(15)}${(lazyGz / 1024).toFixed(1).padStart(8)} kB gzip`);
  for (const [name, files] of lists) {
    console.log(`\n${name}, files by gzip size:`);
    for (const [u, f] of [...files.entries()].sort((a, b) => b[1].gz - a[1].gz)) {
      console.log(`  ${new URL(u).pathname.padEnd(34)}${(f.raw / 1024).toFixed(1).padStart(8)} kB raw${(f.gz / 1024).toFixed(1).padStart(8)} kB gzip`);
    }
  }

}

const median = (xs) => { const a = [...xs].sort((x, y) => x - y); const m = a.length >> 1; return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2; };

// training in the page, alone, on each path with each count of workers; with --rounds N, the whole
// set N times over (alternated: path × count, then again), then each one's median. Two figures per
// run: the page's tokens/s (the whole run: its training time in the worker, evaluations, samples
// and chunks' ends included) and W3's (a step's median after warm-up, each timed on its own)
async function trainingRuns(context, url) {
  const seen = new Map(); // `${path} ${workers}` → [{tps, step} of each round]
  const fmt = (x) => Math.round(x).toLocaleString('en-US');
  for (let round = 1; round <= ROUNDS; round++) {
    if (ROUNDS > 1) console.log(`\n── round ${round} of ${ROUNDS} (load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`);
    for (const path of PATHS) {
      const got = [];
      for (const workers of WORKERS) {
        got.push(await trainingRun(context, url, path, workers));
        seen.set(`${path} ${workers}`, [...(seen.get(`${path} ${workers}`) ?? []), got.at(-1)]);
      }
      if (WORKERS.length > 1) {
        console.log(`\nPath ${path}, workers ${WORKERS.join(' / ')}: whole run tokens/s ${got.map((x) => fmt(x.tps)).join(' / ')}; ` +
          `ratio to ${WORKERS[0]}: ${got.map((x) => (x.tps / got[0].tps).toFixed(2)).join(' / ')}`);
        console.log(`  W3 step ms (median after warm-up) ${got.map((x) => x.step.toFixed(2)).join(' / ')}; ` +
          `speed-up over ${WORKERS[0]} (its step ms ÷ this one's): ${got.map((x) => (got[0].step / x.step).toFixed(2)).join(' / ')}`);
      }
    }
  }
  if (ROUNDS < 2) return;
  console.log(`\nMedians of ${ROUNDS} rounds (the ratios are of the medians):`);
  for (const path of PATHS) {
    const runs = WORKERS.map((w) => seen.get(`${path} ${w}`));
    const med = runs.map((xs) => median(xs.map((x) => x.tps)));
    const step = runs.map((xs) => median(xs.map((x) => x.step)));
    console.log(`  path ${path}, workers ${WORKERS.join(' / ')}:`);
    console.log(`    whole run, the page's tokens/s: ${med.map(fmt).join(' / ')}` +
      `${WORKERS.length > 1 ? `; ratio to ${WORKERS[0]}: ${med.map((x) => (x / med[0]).toFixed(2)).join(' / ')}` : ''}` +
      `  (rounds: ${runs.map((xs) => xs.map((x) => fmt(x.tps)).join(', ')).join(' | ')})`);
    console.log(`    W3, a step's median ms after ${WARMUP} warm-up steps: ${step.map((x) => x.toFixed(2)).join(' / ')}` +
      `${WORKERS.length > 1 ? `; speed-up over ${WORKERS[0]} (step ms ÷ step ms): ${step.map((x) => (step[0] / x).toFixed(2)).join(' / ')}` : ''}` +
      `  (rounds: ${runs.map((xs) => xs.map((x) => x.step.toFixed(2)).join(', ')).join(' | ')})`);
  }
}

async function trainingRun(context, url, path, workers) {
  { // eslint-disable-line no-lone-blocks
    const page = await context.newPage();
    await page.addInitScript(observeFrames);
    const base = path === 'threads' ? '/isolated/train/' : '/train/';
    await page.goto(`${url}${base}${DEFAULT_RUN ? (process.argv.includes('--steps') ? `#steps=${STEPS}` : '') : `#steps=${STEPS}&batch_size=${BATCH}&eval_interval=25&sample_every=50${PRESET}`}`);
    await page.waitForFunction(() => document.getElementById('app').dataset.status === 'ready', null, { timeout: 600_000 });
    // an older page (--web) may have no Workers field: it trains on one worker
    if (await page.locator('#tr-workers').count()) await page.locator('#tr-workers').selectOption(String(workers));
    // the step trace, on for every run (a few marks a step): W3's per-step figure comes from it; an
    // older page (--web) without it gives the whole-run figure only
    const traced = await page.evaluate(() => window.trainPage.worker.call('trace', { on: true }).then(() => true, () => false));
    const t0 = await page.evaluate(() => performance.now());
    const w0 = Date.now();
    const c0 = childCpuSeconds();
    const th0 = threadCpuSeconds();
    await page.locator('#tr-start').click();
    await page.waitForFunction(() => /done|diverged/.test(document.getElementById('app').dataset.train), null, { timeout: 3_600_000 });
    const wall = (Date.now() - w0) / 1000;
    const cpu = childCpuSeconds() - c0;
    const threads = threadsBetween(th0, threadCpuSeconds());
    const isolated = await page.evaluate(() => globalThis.crossOriginIsolated === true);
    const r = await page.evaluate(() => {
      const rt = window.trainPage.runtime;
      return { tps: rt.tps, elapsed: rt.elapsed, val: rt.series.val, steps: rt.step };
    });
    console.log(`\nTraining in the page (${base}, ${isolated ? 'cross-origin isolated: wasm threads' : 'not isolated: workers'}): ${DEFAULT_RUN ? 'its default run' : `${PRESET ? 'small' : 'tiny'} preset, copy task, batch ${BATCH}`}, ${r.steps} steps, ${workers} worker(s)`);
    console.log(`  tokens/s (the page's figure: training time in the worker)  ${Math.round(r.tps).toLocaleString('en-US')}`);
    console.log(`  training time in the worker                              ${(r.elapsed / 1000).toFixed(1)} s`);
    console.log(`  wall time from Start to done                             ${wall.toFixed(1)} s`);
    console.log(`  CPU time of the browser's processes meanwhile            ${cpu.toFixed(1)} s (${((r.tps * r.elapsed) / 1000 / cpu).toFixed(0)} tokens per CPU-second)`);
    const workersCpu = threads.filter((t) => /Worker/i.test(t.name));
    console.log(`  CPU per step in each worker thread (the busiest first)   ${workersCpu.map((t) => `${(1000 * t.cpu / Math.max(1, r.steps)).toFixed(1)} ms`).join(', ') || '—'}` +
      ` (wall ${(r.elapsed / Math.max(1, r.steps)).toFixed(1)} ms a step in the worker)`);
    console.log(`  other threads over 0.2 s                                 ${threads.filter((t) => !/Worker/i.test(t.name)).map((t) => `${t.name} ${t.cpu.toFixed(1)} s`).join(', ') || '—'}`);
    console.log(`  validation loss                                          ${r.val.map((v) => v.toFixed(3)).join(' → ')}`);
    const marks = traced ? await page.evaluate(() => window.trainPage.worker.call('trace', { on: false })) : [];
    const w3 = stepTimes(marks);
    console.log(`  W3: a step's median after ${WARMUP} warm-up steps, each timed on its own in the worker   ` +
      (w3.length ? `${median(w3).toFixed(2)} ms (${w3.length} steps; ${Math.round((r.tps * r.elapsed) / 1000 / Math.max(1, r.steps) / median(w3) * 1000).toLocaleString('en-US')} tokens/s)` : '— (this page has no step trace)'));
    if (TRACE) printTrace(marks);
    if (!QUICK) printFrames(await framesSince(page, t0));
    await page.close();
    return { tps: r.tps, step: w3.length ? median(w3) : NaN };
  }
}

/** Steps timed on their own before W3's median are its warm-up (W3: ours 5). */
const WARMUP = 5;

/**
 * Each step's own time from the trace's marks, the first WARMUP steps of the run left out: on one
 * share, the worker's train(1) ('one' marks); on several, stepBegin to stepFinish's end ('begin' to
 * 'finish': the batch, the posts, the shares, the adds, clip and AdamW). Neither holds what lies
 * between steps: the evaluations, the samples, the chunks' ends (the whole-run figure holds them).
 */
function stepTimes(marks) {
  const out = [];
  let begin = null;
  for (const [what, t, step, extra] of marks) {
    if (what === 'one' && step >= WARMUP) out.push(extra);
    else if (what === 'begin') begin = step >= WARMUP ? t : null;
    else if (what === 'finish' && begin !== null) { out.push(t - begin); begin = null; }
  }
  return out;
}

/**
 * The data-parallel steps of a --trace run, from worker.js's marks ([what, ms, step, extra]): each
 * step's pieces on the leader and on each helper, their medians and means, and each worker's idle
 * time per step (the leader's wait for the helpers; a helper's time between its answer and its
 * next share). "Inside a chunk": steps followed directly by the next; the steps at a chunk's end
 * (progress message, evaluation, sample, the event loop) are counted apart.
 */
function printTrace(marks) {
  const steps = [];
  let cur = null;
  for (const [what, t, step, extra] of marks) {
    if (what === 'begin') { cur = { step, begin: t, helpers: [], after: [] }; steps.push(cur); continue; }
    if (!cur) continue;
    if (what === 'recv') { if (cur.all === undefined && cur.sent !== undefined) cur.helpers[extra.k] = { recv: extra.t[0], done: extra.t[1], back: t }; continue; }
    if (cur.finish === undefined) cur[what] = t;
    else cur.after.push([what, t]);
  }
  if (steps.length < 3) { console.log('  (no data-parallel steps traced: 1 worker, or the threads path)'); return; }
  const rows = new Map();
  const add = (name, v) => { if (Number.isFinite(v)) rows.set(name, [...(rows.get(name) ?? []), v]); };
  for (let i = 0; i + 1 < steps.length; i++) {
    const s = steps[i];
    const next = steps[i + 1];
    const inside = s.after.length === 0;
    const tag = inside ? '' : ' (chunk ends)';
    add(`step's wall time, begin to next begin${tag}`, next.begin - s.begin);
    const mirrored = s.posted !== undefined; // the helpers' mirrors step with the leader
    add(mirrored ? 'leader: stepBegin (the batch)' : 'leader: stepBegin, slices, posts', s.sent - s.begin);
    add('leader: its share (stepOwn)', s.own - s.sent);
    if (mirrored) add('leader: its gradients out to the mirrors', s.posted - s.own);
    add('leader: idle, waiting for the helpers', s.all - (mirrored ? s.posted : s.own));
    add('leader: stepAdd (the helpers\' gradients)', s.added - s.all);
    add('leader: stepFinish (loss, norm, clip, AdamW)', s.finish - s.added);
    add(`leader: finish to the next begin${tag}`, next.begin - s.finish);
    const at = (w) => s.after.find(([x]) => x === w)?.[1];
    if (at('evaled') !== undefined) add('leader: the evaluation (split over the workers)', at('evaled') - at('eval'));
    if (at('chunk') !== undefined) add('leader: the chunk\'s end: sample, progress, event loop, next chunk', next.begin - s.finish - (at('evaled') !== undefined ? at('evaled') - at('eval') : 0));
    s.helpers.forEach((h, k) => {
      if (!h) return;
      if (!mirrored) add(`helper ${k + 1}: message out (posted → received)`, h.recv - s.sent);
      add(mirrored ? `helper ${k + 1}: its stepBegin and share (gradients out)` : `helper ${k + 1}: its share (params in, gradients out)`, h.done - h.recv);
      add(`helper ${k + 1}: message back (done → leader has it)`, h.back - h.done);
      const nh = next.helpers[k];
      if (nh) add(mirrored ? `helper ${k + 1}: its share sent to its next step begun (waits, adds, AdamW)${tag}` : `helper ${k + 1}: idle, its answer to its next share${tag}`, nh.recv - h.done);
      add(`helper ${k + 1}: share − leader's share`, (h.done - h.recv) - (s.own - s.sent));
    });
  }
  const med = (xs) => { const a = [...xs].sort((x, y) => x - y); const m = a.length >> 1; return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2; };
  const first = steps.slice(0, 5).map((s) => `${(s.own - s.sent).toFixed(1)} / ${s.helpers.map((h) => (h ? (h.done - h.recv).toFixed(1) : '—')).join(', ')}`);
  console.log(`  the first steps' shares, leader / helpers, ms: ${first.join('; ')}`);
  console.log(`  step trace: ${steps.length} data-parallel steps, ms (median / mean / count)`);
  for (const [name, xs] of rows) {
    console.log(`    ${name.padEnd(58)}${med(xs).toFixed(2).padStart(8)}${(xs.reduce((a, x) => a + x, 0) / xs.length).toFixed(2).padStart(8)}${String(xs.length).padStart(6)}`);
  }
  // the whole run per step, its evaluations left out: wall time, and each worker's busy and idle time
  const done = steps.filter((s) => s.finish !== undefined);
  const sum = (xs) => xs.reduce((a, x) => a + x, 0);
  const evals = sum(done.map((s) => { const e = s.after.find(([x]) => x === 'eval'); const d = s.after.find(([x]) => x === 'evaled'); return e && d ? d[1] - e[1] : 0; }));
  const n = done.length;
  const wall = (done.at(-1).finish - done[0].begin - evals) / n;
  const leader = sum(done.map((s) => (s.posted ?? s.own) - s.begin + (s.finish - s.all))) / n;
  const helper = sum(done.map((s) => sum(s.helpers.map((h) => (h ? h.done - h.recv : 0))))) / n / Math.max(1, done[0].helpers.length);
  const ends = done.filter((s) => s.after.some(([x]) => x === 'chunk')).length;
  console.log(`  per step over the run, evaluations left out (${(evals / 1000).toFixed(2)} s): wall ${wall.toFixed(2)} ms; leader busy ${leader.toFixed(2)}, idle ${(wall - leader).toFixed(2)}; ` +
    `each helper busy ${helper.toFixed(2)}, idle ${(wall - helper).toFixed(2)}; ${ends} chunk ends in ${n} steps`);
}

async function learnerUse(context, url) {
  // training while the learner uses the page: types two fields, asks for the attention maps,
  // scrolls and points at a map (a run too long to end meanwhile; paused at the end)
  const use = await context.newPage();
  await use.addInitScript(observeFrames);
  await use.goto(`${url}/train/#steps=20000&batch_size=8&eval_interval=10&sample_every=10`);
  await use.waitForFunction(() => document.getElementById('app').dataset.status === 'ready', null, { timeout: 600_000 });
  const u0 = await use.evaluate(() => performance.now());
  await use.locator('#tr-start').click();
  const step = () => use.evaluate(() => window.trainPage.runtime.step);
  const reach = (n) => use.waitForFunction((k) => window.trainPage.runtime.step >= k, n, { polling: 100, timeout: 600_000 });
  await reach(5);
  await use.locator('#tr-f-lr').fill('0.002');
  await use.locator('#tr-f-seed').fill('7');
  await use.locator('#tr-maps').click();
  await use.locator('.tr-map').first().waitFor({ state: 'visible', timeout: 600_000 });
  await use.mouse.wheel(0, 800);
  await use.locator('.tr-map').nth(3).hover();
  await reach((await step()) + 20);
  await use.locator('#tr-pause').click();
  await use.waitForFunction(() => document.getElementById('app').dataset.train === 'paused', null, { timeout: 600_000 });
  console.log(`\nTraining while the learner types, asks for the maps, scrolls and points (batch 8, samples every 10 steps; ${await step()} steps)`);
  printFrames(await framesSince(use, u0));
  await use.close();
}

runPageBench(WEB, main);
