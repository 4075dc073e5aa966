#!/usr/bin/env node
// train_bench.mjs — what the training page (web/train/) weighs and how it runs in Chromium.
// A benchmark, not a test: it prints numbers and never fails on them.
//
//   npm run bench:train                    # 100 steps of the tiny preset on copy, batch 16
//   node bench/train_bench.mjs --steps 300 --batch 8
//
// What it does:
//   1. starts its own static server (http-server from node_modules) on 127.0.0.1, a free port;
//   2. transfer size: opens the page in Debian's Chromium, waits until its worker has loaded the
//      GPT core, and sums gzip -9 of every file the page and its worker fetched (html, js, css,
//      wasm): what a static host with gzip serves. The stepper's page is measured beside it, to
//      show that it does not grow (the GPT is a module of its own);
//   3. training: runs the tiny preset on the copy task in the page (its worker) and prints the
//      tokens/s the page reports, the wall time, and the page thread's long tasks (> 50 ms,
//      Long Tasks API) and long animation frames with our scripts' share (LoAF) while it trains;
//   4. stops the browser and the server.
import { runPageBench, transfer } from './web_server.mjs';

const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : dflt; };
const STEPS = arg('steps', 100);
const BATCH = arg('batch', 16);

async function main({ browser, url }) {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  console.log(`\nTraining page — Chromium ${browser.version()}, headless\n`);
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
  for (const [name, files] of lists) {
    console.log(`\n${name}, files by gzip size:`);
    for (const [u, f] of [...files.entries()].sort((a, b) => b[1].gz - a[1].gz)) {
      console.log(`  ${new URL(u).pathname.padEnd(34)}${(f.raw / 1024).toFixed(1).padStart(8)} kB raw${(f.gz / 1024).toFixed(1).padStart(8)} kB gzip`);
    }
  }

  // training in the page
  const page = await context.newPage();
  await page.addInitScript(() => {
    window.__long = [];
    window.__loaf = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push({ start: e.startTime, duration: e.duration }); }).observe({ type: 'longtask', buffered: true });
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) {
        window.__loaf.push({ start: e.startTime, duration: e.duration, render: e.renderStart ? e.startTime + e.duration - e.renderStart : 0,
          script: e.scripts.filter((x) => /\/(train|gen|stepper)\//.test(x.sourceURL)).reduce((a, x) => a + x.duration, 0) });
      }
    }).observe({ type: 'long-animation-frame', buffered: true });
  });
  await page.goto(`${url}/train/#steps=${STEPS}&batch_size=${BATCH}&eval_interval=25&sample_every=50`);
  await page.waitForFunction(() => document.getElementById('app').dataset.status === 'ready', null, { timeout: 60_000 });
  const t0 = await page.evaluate(() => performance.now());
  const w0 = Date.now();
  await page.locator('#tr-start').click();
  await page.waitForFunction(() => /done|diverged/.test(document.getElementById('app').dataset.train), null, { timeout: 3_600_000 });
  const wall = (Date.now() - w0) / 1000;
  const r = await page.evaluate((t) => {
    const rt = window.trainPage.runtime;
    return {
      tps: rt.tps, elapsed: rt.elapsed, val: rt.series.val, steps: rt.step,
      long: window.__long.filter((e) => e.start >= t).map((e) => e.duration),
      loaf: window.__loaf.filter((e) => e.start >= t),
    };
  }, t0);
  console.log(`\nTraining in the page: tiny preset, copy task, batch ${BATCH}, ${r.steps} steps (block_size 64: ${BATCH * 64} tokens a step)`);
  console.log(`  tokens/s (the page's figure: training time in the worker)  ${Math.round(r.tps).toLocaleString('en-US')}`);
  console.log(`  training time in the worker                              ${(r.elapsed / 1000).toFixed(1)} s`);
  console.log(`  wall time from Start to done                             ${wall.toFixed(1)} s`);
  console.log(`  validation loss                                          ${r.val.map((v) => v.toFixed(3)).join(' → ')}`);
  console.log(`  page-thread long tasks (> 50 ms) while training          ${r.long.length}${r.long.length ? ` (${r.long.map((d) => Math.round(d)).join(', ')} ms)` : ''}`);
  const worst = r.loaf.reduce((a, f) => Math.max(a, f.script), 0);
  const worstRender = r.loaf.reduce((a, f) => Math.max(a, f.render), 0);
  console.log(`  long animation frames                                    ${r.loaf.length}; our scripts' longest share ${worst.toFixed(0)} ms, longest style/layout/paint ${worstRender.toFixed(0)} ms`);
  console.log('');
}

runPageBench('web', main);
