#!/usr/bin/env node
// stepper_bench.mjs — how fast the stepper answers an edit, and how much the page weighs.
// A benchmark, not a test: it prints numbers and never fails on them.
//
//   npm run bench:stepper                 # N = 50 edits
//   node bench/stepper_bench.mjs --n 200  # more edits
//
// What it does:
//   1. starts its own static server (http-server from node_modules) on 127.0.0.1, a free port;
//   2. opens the playground page (web/index.html) in Debian's Chromium (the launch options of
//      playwright.config.mjs) and loads a state with 16 × 16 matrices (x, W_q, W_k, W_v, W_o),
//      4 heads and the causal mask;
//   3. edits one cell of W_q N times the way a user does (the cell's <input>, an 'input' event) and
//      times, in the page:
//        edit → repaint  from the input event to the first requestAnimationFrame after the DOM
//                        shows the new numbers (so the frame with them has been produced);
//        edit → 'trace'  from the input event to the component's 'trace' event (the recompute:
//                        waiting for its frame, the core, updating the DOM);
//        core trace      the wasm core alone on the same spec (api.trace, JSON in and out), on a
//                        second instance of the core in the same page;
//   4. sums gzip -9 of every file each page loads (html, js, css, wasm): the transfer size a
//      static host with gzip serves;
//   5. stops the browser and the server.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const argN = process.argv.indexOf('--n');
const N = argN > 0 ? Number(process.argv[argN + 1]) : 50;
const SIZE = 16;
const HEADS = 4;
const LAUNCH = {
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
};

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startServer() {
  const port = await freePort();
  const bin = fileURLToPath(new URL('../node_modules/http-server/bin/http-server', import.meta.url));
  const child = spawn(process.execPath, [bin, 'web', '-a', '127.0.0.1', '-p', String(port), '-c-1', '-s'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`http-server exited: ${err}`);
    try {
      const r = await fetch(`${url}/`);
      if (r.ok) return { url, stop: () => new Promise((res) => { child.once('exit', res); child.kill('SIGTERM'); }) };
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGTERM');
  throw new Error('http-server did not start');
}

/** A deterministic n × n matrix as text, 2 decimals in ±1. */
function matrixText(n, seed) {
  let s = seed >>> 0;
  const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
  return Array.from({ length: n }, () => Array.from({ length: n }, () => rnd().toFixed(2)).join(' ')).join('\n');
}

function benchState() {
  return {
    version: 1,
    preset: 'custom',
    mode: 'x',
    matrices: {
      x: matrixText(SIZE, 1), W_q: matrixText(SIZE, 2), W_k: matrixText(SIZE, 3), W_v: matrixText(SIZE, 4), W_o: matrixText(SIZE, 5),
      Q: '1 0\n0 1', K: '1 0\n0 1', V: '1 0\n0 1',
    },
    use_W_o: true,
    options: { n_head: HEADS, causal: true, mask: 'strict', base: 0, scale: true, softmax: 'stable' },
    seed: 1, view: 'all', step: 0, head: 0, lang: 'en', focus: null,
  };
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  const i = (s.length - 1) * q;
  const lo = Math.floor(i);
  return s[lo] + (s[Math.ceil(i)] - s[lo]) * (i - lo);
};
const ms = (v) => v.toFixed(2).padStart(8);

async function measureEdits(page, url) {
  await page.goto(`${url}/index.html`);
  await page.waitForFunction(() => window.attentionStepper, null, { timeout: 30_000 });
  await page.evaluate((s) => window.attentionStepper.setState(s), benchState());
  await page.locator('figure[data-panel="scores"] tbody tr').nth(SIZE - 1).waitFor();
  const shape = await page.evaluate(() => ({
    rows: document.querySelectorAll('figure[data-panel="scores"] tbody tr').length,
    heads: window.attentionStepper.getState().options.n_head,
  }));
  if (shape.rows !== SIZE || shape.heads !== HEADS) throw new Error(`the page did not take the 16×16, 4-head state: ${JSON.stringify(shape)}`);
  // open the editor of W_q[0][0] (double-click, as a user does)
  await page.locator('[data-matrix="W_q"] td[data-r="0"][data-c="0"]').dblclick();
  await page.locator('[data-matrix="W_q"] input.aps-cell-input').waitFor();

  return page.evaluate(async ({ N, SIZE }) => {
    const ctl = window.attentionStepper;
    const input = document.querySelector('[data-matrix="W_q"] input.aps-cell-input');
    const fig = document.querySelector('figure[data-panel="scores"]');
    const { loadAttention } = await import('/attention.js');
    const core = await loadAttention(); // a second instance, for the core-alone timing
    const raf = () => new Promise((r) => requestAnimationFrame(r));
    const idle = (t) => new Promise((r) => setTimeout(r, t));
    const rows = { repaint: [], trace: [], core: [], status: [], loafScript: [], loafRender: [] };
    // Long animation frames (> 50 ms) of the edits: the script part and the style/layout/paint part
    let counting = false;
    const loaf = new PerformanceObserver((list) => {
      if (!counting) return;
      for (const e of list.getEntries()) {
        const end = e.startTime + e.duration;
        rows.loafRender.push(e.renderStart ? end - e.renderStart : 0);
        rows.loafScript.push(e.scripts.reduce((a, x) => a + x.duration, 0));
      }
    });
    try { loaf.observe({ type: 'long-animation-frame', buffered: false }); } catch { /* older browser */ }
    for (let i = 0; i < N + 3; i++) { // 3 warm-up edits, not counted
      counting = i >= 3;
      const value = (0.5 + ((i % 40) + 1) * 0.0125).toFixed(4);
      const before = fig.querySelector('td[data-r="0"][data-c="0"]').textContent;
      let tTrace = 0;
      const off = ctl.on('trace', () => { if (!tTrace) tTrace = performance.now(); });
      const shown = new Promise((resolve) => {
        const mo = new MutationObserver(() => {
          mo.disconnect();
          requestAnimationFrame(() => resolve(performance.now()));
        });
        mo.observe(fig, { subtree: true, childList: true, characterData: true });
      });
      input.value = value;
      const t0 = performance.now();
      input.dispatchEvent(new Event('input', { bubbles: true }));
      const t1 = await shown;
      off();
      const after = fig.querySelector('td[data-r="0"][data-c="0"]').textContent;
      if (after === before && i > 0) throw new Error(`edit ${i} did not change the scores`);
      // the core alone on the spec the component just traced (same matrices, same options)
      const s = ctl.getState();
      const spec = { ...s.options, x: s.matrices.x, W_q: s.matrices.W_q, W_k: s.matrices.W_k, W_v: s.matrices.W_v, W_o: s.matrices.W_o };
      const c0 = performance.now();
      const tr = core.trace(spec);
      const c1 = performance.now();
      if (tr.T !== SIZE) throw new Error('core trace has the wrong shape');
      const status = /([\d.]+)\s*ms/.exec(document.querySelector('.aps-root')?.innerText.match(/[^\n]*\d\s*ms[^\n]*/)?.[0] ?? '');
      if (i >= 3) {
        rows.repaint.push(t1 - t0);
        rows.trace.push(tTrace - t0);
        rows.core.push(c1 - c0);
        if (status) rows.status.push(Number(status[1]));
      }
      await raf();
      await idle(30);
    }
    await idle(100);
    loaf.disconnect();
    return rows;
  }, { N, SIZE });
}

async function transfer(browser, url, path) {
  const page = await browser.newPage();
  const files = new Map();
  page.on('response', async (r) => {
    const u = r.url();
    if (!u.startsWith(url)) return;
    try {
      const body = await r.body();
      files.set(u, { raw: body.length, gz: gzipSync(body, { level: 9 }).length });
    } catch { /* redirects have no body */ }
  });
  await page.goto(`${url}${path}`);
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(300);
  await page.close();
  return files;
}

async function main() {
  const server = await startServer();
  const browser = await chromium.launch(LAUNCH);
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const r = await measureEdits(page, server.url);
    await page.close();
    if (errors.length) console.warn(`page errors: ${errors.join('; ')}`);

    console.log(`\nAttention stepper — ${N} edits of one cell of W_q, x and weights ${SIZE} × ${SIZE}, ${HEADS} heads, causal, W_o ${SIZE} × ${SIZE}`);
    console.log(`Chromium ${browser.version()}, headless; ms, median and p90 (3 warm-up edits not counted)\n`);
    const line = (name, xs, note) => console.log(`${name.padEnd(34)}${ms(quantile(xs, 0.5))}${ms(quantile(xs, 0.9))}${ms(Math.min(...xs))}${ms(Math.max(...xs))}   ${note}`);
    console.log(`${'measure'.padEnd(34)}${'median'.padStart(8)}${'p90'.padStart(8)}${'min'.padStart(8)}${'max'.padStart(8)}`);
    console.log('-'.repeat(34 + 32));
    line('edit → repaint', r.repaint, 'input event → rAF after the new numbers are in the DOM');
    line('edit → trace event', r.trace, 'input event → the component\'s \'trace\' (frame wait + core + DOM)');
    line('core trace alone (wasm + JSON)', r.core, 'api.trace on the same spec, second core instance');
    if (r.status.length) line('component compute (its status)', r.status, 'the time the page itself reports (core + DOM update)');
    if (r.loafRender.length) {
      line('long frame: scripts', r.loafScript, `${r.loafRender.length} frames over 50 ms during the ${N} edits (Long Animation Frames API)`);
      line('long frame: style, layout, paint', r.loafRender, 'from the frame\'s renderStart to its end');
    }

    console.log('\nTransfer size: every file the page loads, gzip -9');
    const pages = [['playground', '/index.html'], ['embed', '/embed.html#preset=identity'], ['course example', '/examples/']];
    const all = new Map();
    const totals = [];
    for (const [name, path] of pages) {
      const files = await transfer(browser, server.url, path);
      let raw = 0; let gz = 0;
      for (const [u, f] of files) { raw += f.raw; gz += f.gz; all.set(u, f); }
      totals.push([name, path, files.size, raw, gz]);
    }
    console.log(`${'page'.padEnd(16)}${'path'.padEnd(30)}${'files'.padStart(6)}${'raw kB'.padStart(10)}${'gzip kB'.padStart(10)}`);
    console.log('-'.repeat(72));
    for (const [name, path, n, raw, gz] of totals) console.log(`${name.padEnd(16)}${path.padEnd(30)}${String(n).padStart(6)}${(raw / 1024).toFixed(1).padStart(10)}${(gz / 1024).toFixed(1).padStart(10)}`);
    console.log('\nLargest files (gzip -9):');
    const byGz = [...all.entries()].sort((a, b) => b[1].gz - a[1].gz).slice(0, 8);
    for (const [u, f] of byGz) console.log(`  ${new URL(u).pathname.padEnd(34)}${(f.raw / 1024).toFixed(1).padStart(8)} kB raw${(f.gz / 1024).toFixed(1).padStart(8)} kB gzip`);
    console.log('');
  } finally {
    await browser.close();
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
