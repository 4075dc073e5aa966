#!/usr/bin/env node
// open_bench.mjs — how long opening a large model file takes in Chromium, and the wasm memory it
// peaks at. A benchmark, not a test: it prints numbers and never fails on them.
//
//   node bench/open_bench.mjs [--layers 12] [--embd 768] [--twice]
//
// What it does: writes a GPT-2-small-shaped Hugging Face model.safetensors (12 layers, n_embd
// 768, 12 heads, block_size 1024, vocab 50,257: 124,439,808 parameters, 498 MB of F32; random
// weights from tests/lib/foreign-files.mjs) and its config.json into a temporary folder, serves
// web/, and in a page of Chromium loads web/gpt.js and opens the files as the training page does
// (gpt.openModel over File objects: the model file read in 16 MiB slices into the buffer the core
// made for it). Prints the time from the call to the run (reading, converting the Conv1D weights,
// making the model), wall and the renderer process's CPU time (utime + stime from /proc: honest
// when other work loads the machine), and the peak memory as multiples of the file: the module's
// memory after it (wasm memory never shrinks: its peak), and the renderer process's peak resident
// set (VmHWM from /proc) above what it held before the call (its JS heap's copies of the slices
// included). Then one next-token forward pass of "Hello, world" (GPT-2's ids), to show the model
// works. With --twice it opens the file a second time while the first run is kept: that
// buffer lies above 2 GiB, and both runs' logits must agree (addresses past 2 GiB through Embind).
import { mkdtempSync, writeFileSync, rmSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { runPageBench } from './web_server.mjs';
import { hfGpt2Files } from '../tests/lib/foreign-files.mjs';

const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : dflt; };
const twice = process.argv.includes('--twice');
const cfg = { n_layer: arg('layers', 12), n_head: 12, n_embd: arg('embd', 768), block_size: 1024, vocab_size: 50257 };

// Chromium's renderer processes (by their command line) and a process's figures from /proc.
function renderers() {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (/chrom/.test(cmd) && cmd.includes('--type=renderer')) out.push(Number(d));
    } catch { /* gone */ }
  }
  return out;
}
function parent(pid) {
  try { return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]); } catch { return 0; }
}
function descends(pid, root) {
  for (let p = pid; p > 1; p = parent(p)) if (p === root) return true;
  return false;
}
function procStatus(pid) {
  try { return procStatusOf(pid); } catch { return null; } // gone
}
function procStatusOf(pid) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number((s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm')) ?? [0, 0])[1]) * 1024;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const cpu = (Number(stat[11]) + Number(stat[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  return { rss: kb('VmRSS'), hwm: kb('VmHWM'), cpu };
}

// CPU time (s) of every process under `root` (Chromium's browser process, its renderers and
// utilities: the file's slices are read by the browser process, not the renderer).
function chromiumCpu(root) {
  let cpu = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === root || !descends(Number(d), root)) continue;
    cpu += procStatus(Number(d))?.cpu ?? 0;
  }
  return cpu;
}

const dir = mkdtempSync(join(tmpdir(), 'ap-open-'));
const t0 = Date.now();
const { model, config } = hfGpt2Files(cfg, 1);
writeFileSync(join(dir, 'model.safetensors'), model);
writeFileSync(join(dir, 'config.json'), config);
const size = model.length;
console.log(`wrote model.safetensors: ${(size / 1e6).toFixed(1)} MB (${cfg.n_layer} layers, n_embd ${cfg.n_embd}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

await runPageBench('web', async ({ browser, url }) => {
  const page = await browser.newPage();
  await page.goto(`${url}/train/`);
  await page.evaluate(() => {
    const input = document.createElement('input');
    input.type = 'file';
    input.multiple = true;
    input.id = 'bench-files';
    document.body.append(input);
  });
  await page.locator('#bench-files').setInputFiles([join(dir, 'model.safetensors'), join(dir, 'config.json')]);
  const load = loadavg()[0];
  // the page's renderer: the one whose memory grows when the module loads
  await page.evaluate(async () => { const { loadGpt } = await import('/gpt.js'); window.__gpt = await loadGpt({ locateFile: (p) => `/gen/${p}` }); });
  const root = process.pid; // Chromium runs under this process (playwright-core launches it)
  const pids = renderers().filter((p) => !root || descends(p, root)); // this bench's browser's only
  const before = Object.fromEntries(pids.map((p) => [p, procStatus(p)]).filter(([, v]) => v));
  const allBefore = chromiumCpu(root);
  const r = await page.evaluate(async () => {
    const gpt = window.__gpt;
    const files = [...document.getElementById('bench-files').files];
    await gpt.loadCold(); // the second module, where models are opened, before its memory is read
    const before = gpt.openMemory().size;
    const t0 = performance.now();
    window.__run = await gpt.openModel(files);
    const ms = performance.now() - t0;
    const mem = gpt.openMemory();
    return { ms, before, after: mem.size, left: mem.left, max: mem.max };
  });
  const opened = Object.fromEntries(pids.map((p) => [p, procStatus(p)]));
  const allAfter = chromiumCpu(root);
  Object.assign(r, await page.evaluate(async (twice) => {
    const gpt = window.__gpt;
    const run = window.__run;
    const files = [...document.getElementById('bench-files').files];
    const t1 = performance.now();
    const next = run.nextToken({ prompt: '[15496][11][995]', show: 3 });
    const out = { fwd: performance.now() - t1, top: next.top.map((x) => [x.id, x.logit]) };
    if (twice) {
      const t2 = performance.now();
      const second = await gpt.openModel(files);
      out.ms2 = performance.now() - t2;
      out.after2 = gpt.openMemory().size;
      out.top2 = second.nextToken({ prompt: '[15496][11][995]', show: 3 }).top.map((x) => [x.id, x.logit]);
      second.free();
    }
    run.free();
    return out;
  }, twice));
  // the renderer that grew most is the page's
  const after = pids.filter((p) => before[p] && opened[p]).map((p) => ({ p, a: opened[p], b: before[p] })).sort((x, y) => (y.a.hwm - y.b.rss) - (x.a.hwm - x.b.rss))[0];
  const mb = (b) => `${(b / 1e6).toFixed(0)} MB`;
  console.log(`open (gpt.openModel): ${(r.ms / 1000).toFixed(2)} s wall, renderer CPU ${(after.a.cpu - after.b.cpu).toFixed(2)} s, load average ${load.toFixed(1)} at the start`);
  console.log(`all of Chromium's processes (the browser's file reading included): CPU ${(allAfter - allBefore).toFixed(2)} s`);
  console.log(`wasm memory: ${mb(r.before)} before, ${mb(r.after)} after = ${(r.after / size).toFixed(2)}× the file (${mb(size)}); left ${mb(r.left)} of ${mb(r.max)}`);
  console.log(`renderer resident set: ${mb(after.b.rss)} before, peak ${mb(after.a.hwm)}: ${((after.a.hwm - after.b.rss) / size).toFixed(2)}× the file above what it held before`);
  console.log(`one forward pass of 3 tokens: ${r.fwd.toFixed(0)} ms; top ids ${JSON.stringify(r.top)}`);
  if (twice) {
    const same = JSON.stringify(r.top) === JSON.stringify(r.top2);
    console.log(`opened again with the first kept: ${(r.ms2 / 1000).toFixed(2)} s, wasm memory ${mb(r.after2)}; same logits: ${same}`);
  }
});
rmSync(dir, { recursive: true, force: true });
