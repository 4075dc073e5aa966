#!/usr/bin/env node
// open_bench.mjs — how long opening a large model file takes in Chromium, and the wasm memory it
// peaks at. A benchmark, not a test: it prints numbers and never fails on them.
//
//   node bench/open_bench.mjs [--layers 12] [--embd 768] [--twice] [--in worker|page] [--web DIR]
//                             [--keep DIR]
//
// --in worker (the default) opens as the training page does: in its Web Worker (web/train/
// worker.js, its "open" request, the File objects posted to it); --in page opens on the page's
// thread. --web DIR serves another copy of web/ (with its gen/: an older commit's, to compare in
// one sitting). --keep DIR writes the model file there once and reuses it (writing it costs more
// than opening it). The phases of the opening (gpt-open.js leaves one user-timing measure per
// phase: head, tokenizer, plan, read, copy, convert, finish) are printed when the web/ served has
// them.
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
// included). Then the floor: the file's size of new wasm memory written once (its first touch)
// and again (a memcpy), and one next-token forward pass of "Hello, world" (GPT-2's ids), to show
// the model works. With --twice it opens the file a second time while the first run is kept: that
// buffer lies above 2 GiB, and both runs' logits must agree (addresses past 2 GiB through Embind).
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, readFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { runPageBench } from './web_server.mjs';
import { hfGpt2Files } from '../tests/lib/foreign-files.mjs';

const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : dflt; };
const text = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : dflt; };
const twice = process.argv.includes('--twice');
const where = text('in', 'worker');
const webDir = text('web', 'web');
const keep = text('keep', null);
if (!['worker', 'page'].includes(where)) throw new Error(`--in ${where}: worker or page`);
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

const dir = keep ?? mkdtempSync(join(tmpdir(), 'ap-open-'));
const tag = `${cfg.n_layer}x${cfg.n_embd}`; // a kept file is reused for its shape only
const modelPath = join(dir, keep ? `model-${tag}.safetensors` : 'model.safetensors');
const configPath = join(dir, keep ? `config-${tag}` : '', 'config.json');
if (!keep || !existsSync(modelPath) || !existsSync(configPath)) {
  const t0 = Date.now();
  const { model, config } = hfGpt2Files(cfg, 1);
  mkdirSync(join(configPath, '..'), { recursive: true });
  writeFileSync(modelPath, model);
  writeFileSync(configPath, config);
  console.log(`wrote ${modelPath}: ${(model.length / 1e6).toFixed(1)} MB (${cfg.n_layer} layers, n_embd ${cfg.n_embd}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
const size = statSync(modelPath).size;
console.log(`web: ${webDir}; opened in the ${where === 'worker' ? "training page's worker" : "page's thread"}`);

// In the worker: the training page's own worker.js, started from a blob that imports it and
// answers one more request, "bench_measures" (the opening's phases on the worker's timeline).
// The page is one without a CSP (a script file shown as text), so that the blob worker may start.
const WORKER = (origin) => `
const measures = () => performance.getEntriesByType('measure').filter((m) => m.name.startsWith('openModel '))
  .map((m) => ({ name: m.name, duration: m.duration, count: m.detail?.count ?? 0 }));
await import('${origin}/train/worker.js');
const handle = self.onmessage;
self.onmessage = (e) => {
  if (e.data?.op === 'bench_measures') { self.postMessage({ id: e.data.id, ok: true, result: measures() }); performance.clearMeasures(); return; }
  return handle(e);
};
self.postMessage({ ready: true });
`;

await runPageBench(webDir, async ({ browser, url }) => {
  const page = await browser.newPage();
  await page.goto(where === 'worker' ? `${url}/gpt.js` : `${url}/train/`);
  await page.evaluate(() => {
    const input = document.createElement('input');
    input.type = 'file';
    input.multiple = true;
    input.id = 'bench-files';
    document.body.append(input);
  });
  await page.locator('#bench-files').setInputFiles([modelPath, configPath]);
  const load = loadavg()[0];
  // the module, and the full module where models are opened, loaded before the figures are read
  if (where === 'worker') {
    await page.evaluate(async (src) => {
      const w = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })), { type: 'module' });
      await new Promise((resolve, reject) => {
        w.onerror = (e) => reject(new Error(e.message));
        w.onmessage = (e) => { if (e.data?.ready) resolve(); };
      });
      let id = 0;
      const pending = new Map();
      w.onmessage = (e) => {
        const p = pending.get(e.data?.id);
        if (!p) return;
        pending.delete(e.data.id);
        if (e.data.ok) p.resolve(e.data.result); else p.reject(new Error(e.data.error.message));
      };
      window.__ask = (op, args = {}, transfer = []) => new Promise((resolve, reject) => {
        pending.set(++id, { resolve, reject });
        w.postMessage({ id, op, ...args }, transfer);
      });
      await window.__ask('init');
      await window.__ask('weight_row', { run: 'none', spec: {} }).catch(() => {}); // loadFull first: no run of that name
    }, WORKER(url));
  } else {
    await page.evaluate(async () => {
      const { loadGpt } = await import('/gpt.js');
      window.__gpt = await loadGpt({ locateFile: (p) => `/gen/${p}` });
      await window.__gpt.loadFull();
    });
  }
  const root = process.pid; // Chromium runs under this process (playwright-core launches it)
  const pids = renderers().filter((p) => !root || descends(p, root)); // this bench's browser's only
  const before = Object.fromEntries(pids.map((p) => [p, procStatus(p)]).filter(([, v]) => v));
  const allBefore = chromiumCpu(root);
  const r = await page.evaluate(async (where) => {
    const files = [...document.getElementById('bench-files').files];
    const t0 = performance.now();
    if (where === 'worker') await window.__ask('open', { run: 'bench', files });
    else window.__run = await window.__gpt.openModel(files);
    return { ms: performance.now() - t0 };
  }, where);
  const opened = Object.fromEntries(pids.map((p) => [p, procStatus(p)]));
  const allAfter = chromiumCpu(root);
  Object.assign(r, await page.evaluate(async ({ where, twice }) => {
    const spec = { prompt: '[15496][11][995]', show: 3 };
    const top = (next) => next.top.map((x) => [x.id, x.logit]);
    const files = [...document.getElementById('bench-files').files];
    if (where === 'worker') {
      const out = { phases: await window.__ask('bench_measures') };
      const t1 = performance.now();
      out.top = top(await window.__ask('next_token', { run: 'bench', spec }));
      out.fwd = performance.now() - t1;
      if (twice) {
        const t2 = performance.now();
        await window.__ask('open', { run: 'bench2', files });
        out.ms2 = performance.now() - t2;
        out.top2 = top(await window.__ask('next_token', { run: 'bench2', spec }));
      }
      return out;
    }
    const gpt = window.__gpt;
    const run = window.__run;
    const mem = gpt.openMemory();
    const out = { phases: performance.getEntriesByType('measure').filter((m) => m.name.startsWith('openModel '))
      .map((m) => ({ name: m.name, duration: m.duration, count: m.detail?.count ?? 0 })), after: mem.size, left: mem.left, max: mem.max };
    performance.clearMeasures();
    const t1 = performance.now();
    out.top = top(run.nextToken(spec));
    out.fwd = performance.now() - t1;
    if (twice) {
      const t2 = performance.now();
      const second = await gpt.openModel(files);
      out.ms2 = performance.now() - t2;
      out.after2 = gpt.openMemory().size;
      out.top2 = top(second.nextToken(spec));
      second.free();
    }
    run.free();
    return out;
  }, { where, twice }));
  // The floor, in the same renderer: a new wasm memory of the file's size written once (its
  // first touch: page faults, which the model's own memory pays too) and again (a memcpy's cost).
  const floor = await page.evaluate((size) => {
    const pages = Math.ceil(size / 65536);
    const mem = new WebAssembly.Memory({ initial: 1, maximum: pages + 1 });
    mem.grow(pages);
    const bytes = new Uint8Array(mem.buffer, 0, size);
    const t0 = performance.now();
    bytes.fill(1);
    const t1 = performance.now();
    bytes.fill(2);
    return { first: t1 - t0, again: performance.now() - t1 };
  }, size);
  // the renderer that grew most is the page's
  const after = pids.filter((p) => before[p] && opened[p]).map((p) => ({ p, a: opened[p], b: before[p] })).sort((x, y) => (y.a.hwm - y.b.rss) - (x.a.hwm - x.b.rss))[0];
  const mb = (b) => `${(b / 1e6).toFixed(0)} MB`;
  console.log(`open (gpt.openModel): ${(r.ms / 1000).toFixed(2)} s wall, renderer CPU ${(after.a.cpu - after.b.cpu).toFixed(2)} s, load average ${load.toFixed(1)} at the start`);
  console.log(`all of Chromium's processes (the browser's file reading included): CPU ${(allAfter - allBefore).toFixed(2)} s`);
  if (r.phases.length) {
    const sum = r.phases.reduce((a, m) => a + m.duration, 0);
    console.log(`phases (wall, in the ${where === 'worker' ? 'worker' : "page's thread"}; ${(sum / 1000).toFixed(2)} s in all): ` +
      r.phases.map((m) => `${m.name.slice(10)} ${(m.duration / 1000).toFixed(2)} s${m.count > 1 ? ` (×${m.count})` : ''}`).join(', '));
  } else {
    console.log('phases: none (this web/ leaves no openModel measures)');
  }
  if (r.after) console.log(`wasm memory: ${mb(r.after)} after = ${(r.after / size).toFixed(2)}× the file (${mb(size)}); left ${mb(r.left)} of ${mb(r.max)}`);
  console.log(`renderer resident set: ${mb(after.b.rss)} before, peak ${mb(after.a.hwm)}: ${((after.a.hwm - after.b.rss) / size).toFixed(2)}× the file above what it held before`);
  console.log(`floor: writing ${mb(size)} of new wasm memory ${(floor.first / 1000).toFixed(2)} s the first time (page faults), ${(floor.again / 1000).toFixed(2)} s again (a memcpy)`);
  console.log(`one forward pass of 3 tokens: ${r.fwd.toFixed(0)} ms; top ids ${JSON.stringify(r.top)}`);
  if (twice) {
    const same = JSON.stringify(r.top) === JSON.stringify(r.top2);
    console.log(`opened again with the first kept: ${(r.ms2 / 1000).toFixed(2)} s${r.after2 ? `, wasm memory ${mb(r.after2)}` : ''}; same logits: ${same}`);
  }
});
if (!keep) rmSync(dir, { recursive: true, force: true });
