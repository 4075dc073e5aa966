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
// making the model) and the module's memory after it (wasm memory never shrinks: its peak) as a
// multiple of the file. Then one next-token forward pass of "Hello, world" (GPT-2's ids), to show
// the model works. With --twice it opens the file a second time while the first run is kept: that
// buffer lies above 2 GiB, and both runs' logits must agree (addresses past 2 GiB through Embind).
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { runPageBench } from './web_server.mjs';
import { hfGpt2Files } from '../tests/lib/foreign-files.mjs';

const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : dflt; };
const twice = process.argv.includes('--twice');
const cfg = { n_layer: arg('layers', 12), n_head: 12, n_embd: arg('embd', 768), block_size: 1024, vocab_size: 50257 };

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
  const r = await page.evaluate(async (twice) => {
    const { loadGpt } = await import('/gpt.js');
    const gpt = await loadGpt({ locateFile: (p) => `/gen/${p}` });
    const files = [...document.getElementById('bench-files').files];
    const before = gpt.openMemory().size;
    const t0 = performance.now();
    const run = await gpt.openModel(files);
    const ms = performance.now() - t0;
    const mem = gpt.openMemory();
    const t1 = performance.now();
    const next = run.nextToken({ prompt: '[15496][11][995]', show: 3 });
    const fwd = performance.now() - t1;
    const out = { ms, before, after: mem.size, left: mem.left, max: mem.max, fwd, top: next.top.map((x) => [x.id, x.logit]) };
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
  }, twice);
  const mb = (b) => `${(b / 1e6).toFixed(0)} MB`;
  console.log(`open (gpt.openModel, 16 MiB slices): ${(r.ms / 1000).toFixed(2)} s wall, load average ${load.toFixed(1)} at the start`);
  console.log(`wasm memory: ${mb(r.before)} before, ${mb(r.after)} after = ${(r.after / size).toFixed(2)}× the file (${mb(size)}); left ${mb(r.left)} of ${mb(r.max)}`);
  console.log(`one forward pass of 3 tokens: ${r.fwd.toFixed(0)} ms; top ids ${JSON.stringify(r.top)}`);
  if (twice) {
    const same = JSON.stringify(r.top) === JSON.stringify(r.top2);
    console.log(`opened again with the first kept: ${(r.ms2 / 1000).toFixed(2)} s, wasm memory ${mb(r.after2)}; same logits: ${same}`);
  }
});
rmSync(dir, { recursive: true, force: true });
