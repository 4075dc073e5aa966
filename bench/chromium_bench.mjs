// chromium_bench.mjs — the core's benchmark (bench/bench_core.cpp built for the web:
// build-wasm/ap_bench_web.js) in Debian's Chromium, where users run the core. A benchmark: it prints
// the same lines as ap_bench natively and in Node, and never fails on a number.
// Chromium compiles wasm with Liftoff first and tiers hot functions up to TurboFan, so it runs the
// whole benchmark once quickly (--quick) to warm up, then the measured run.
//   node bench/chromium_bench.mjs [--gpt] [ap_bench arguments…]   (CHROMIUM_PATH, default /usr/bin/chromium)
// --gpt runs W3/W4 (bench/bench_gpt.cpp: build-wasm/ap_bench_gpt_web.js) instead of W1/W2.
// With --gpt and w9 asked for (--only w9, or every workload), W9's sweep also runs the page's
// way, split over the page's workers (web/train/interp-patch-pool.js on web/train/worker.js:
// W9w below), after the single-thread lines.
import { chromium } from 'playwright-core';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { LAUNCH, runPageBench } from './web_server.mjs';

const gpt = process.argv[2] === '--gpt';
const JS = fileURLToPath(new URL(`../build-wasm/${gpt ? 'ap_bench_gpt_web' : 'ap_bench_web'}.js`, import.meta.url));
const args = process.argv.slice(gpt ? 3 : 2);

let source;
try {
  source = await readFile(JS, 'utf8');
} catch {
  console.error(`chromium_bench: ${JS} is missing (cmake --build build-wasm --target ap_bench_web ap_bench_gpt_web)`);
  process.exit(1);
}
const browser = await chromium.launch(LAUNCH);
try {
  const page = await browser.newPage();
  await page.goto('about:blank');
  await page.addScriptTag({ content: source });
  const version = browser.version();
  const lines = await page.evaluate(async (argv) => {
    const out = [];
    // eslint-disable-next-line no-undef
    const M = await createApBench({ print: (s) => out.push(s), printErr: (s) => out.push(s) });
    M.callMain(['--quick']);  // warm-up: every kernel runs hot enough to be tiered up
    out.length = 0;
    M.callMain(argv);
    return out;
  }, args);
  for (const line of lines) console.log(line.replace(/^(ap_bench\w*): /, `$1 (Chromium ${version}): `));
} finally {
  await browser.close();
}

// W9w — the patching sweep the page's way: the page's workers (web/train/client.js startWorker →
// worker.js), each holding the same run (made from one spec and seed: the same weights), the
// cells handed out by interp-patch-pool.js's patchSweep, as "Take it apart" does. GPT-2 small's
// depth and heads (12 layers × 12 heads) at the width a run made in the page may have for
// training memory (n_embd 384, heads of 32; a run of GPT-2 small's 768 would pass the page's
// 1 GiB training limit), on a 16-token prompt and the same with token 7 changed: every cell of the
// sweep (the residual at 13 × 16 points, 144 heads, 12 MLPs). Timed on 1 worker, then on each
// count up to the cores (at most 4): "W9w_patch_sweep workers=N cells=… ms_med=… speedup=…"
// (over 1 worker; 1 + 3 trials each). The answers of every count must be the 1-worker answer,
// cell for cell, else the line says so.
const wantsW9 = gpt && (!args.includes('--only') || args[args.indexOf('--only') + 1]?.split(',').includes('w9'));
if (wantsW9 && !args.includes('--quick')) {
  await runPageBench('web', async ({ browser, url }) => {
    const page = await browser.newPage();
    await page.goto(`${url}/train/`);
    await page.waitForFunction(() => document.getElementById('app')?.dataset.status === 'ready', null, { timeout: 120000 });
    const lines = await page.evaluate(async () => {
      const { startWorker } = await import('/train/client.js');
      const { patchSweep } = await import('/train/interp-patch-pool.js');
      const spec = { task: 'grammar', n_layer: 12, n_head: 12, n_embd: 384, block_size: 16, batch_size: 1, steps: 1, seed: 1 };
      const cores = Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1));
      const ws = [];
      for (let i = 0; i < cores; i++) {
        const w = startWorker();
        await w.call('create', { run: 'main', spec });
        ws.push(w);
      }
      const clean = 'the cat sees a dog'.slice(0, 16);
      const other = [...clean].find((c) => c !== clean[7]); // a letter of the task's vocabulary
      const corrupted = `${clean.slice(0, 7)}${other}${clean.slice(8)}`;
      const job = { clean, corrupted, token: 0, other: 1 };
      const out = [];
      let one = null, base = 0;
      for (let n = 1; n <= cores; n++) {
        const ts = [];
        let answer = null;
        for (let k = 0; k < 4; k++) {
          const t0 = performance.now();
          answer = await patchSweep(ws.slice(0, n), job);
          if (k > 0) ts.push(performance.now() - t0);  // the first: warm-up
        }
        ts.sort((a, b) => a - b);
        const med = ts[1];
        if (n === 1) { one = answer; base = med; }
        const same = JSON.stringify([answer.resid, answer.heads, answer.mlps]) === JSON.stringify([one.resid, one.heads, one.mlps]);
        out.push(`W9w_patch_sweep workers=${n} cells=${answer.cells} ms_min=${ts[0].toFixed(1)} ms_med=${med.toFixed(1)} `
          + `speedup=${(base / med).toFixed(2)} (trials=3)${same ? '' : ' ANSWER DIFFERS FROM 1 WORKER'}`);
      }
      for (const w of ws) w.terminate();
      return out;
    });
    for (const line of lines) console.log(`ap_bench_gpt (Chromium ${browser.version()}, page workers): ${line}`);
  });
}
