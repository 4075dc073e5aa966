// chromium_bench.mjs — the core's benchmark (bench/bench_core.cpp built for the web:
// build-wasm/ap_bench_web.js) in Debian's Chromium, where users run the core. A benchmark: it prints
// the same lines as ap_bench natively and in Node, and never fails on a number.
// Chromium compiles wasm with Liftoff first and tiers hot functions up to TurboFan, so it runs the
// whole benchmark once quickly (--quick) to warm up, then the measured run.
//   node bench/chromium_bench.mjs [--gpt] [ap_bench arguments…]   (CHROMIUM_PATH, default /usr/bin/chromium)
// --gpt runs W3/W4 (bench/bench_gpt.cpp: build-wasm/ap_bench_gpt_web.js) instead of W1/W2.
// With --gpt and w9 asked for (--only w9, or every workload), W9's sweep also runs the page's
// way, on GPT-2 small's shape over the page's workers (bench/patch_bench.mjs: W9w), after the
// single-thread lines.
// --open [N] [--web DIR] times the training page's "Open a model" (N openings, default 3; DIR another
// copy of web/ with its pages written, to compare two versions) on a SmolLM2-135M-shaped Hugging
// Face folder in BF16 with random weights (about 270 MB, written once under the system's temporary
// folder: openBench below) and prints the wasm memory after opening over the files' bytes and the
// opening's phases as the page's worker measured them.
// --prompt-threads [N] times W6's 64-token prompt forward on 1 and 2 wasm threads on the isolated
// page, alternated N rounds (default 5): medians, ratio, same bits (bench/prompt_threads_bench.mjs).
import { chromium } from 'playwright-core';
import { existsSync, mkdirSync, openSync, writeSync, closeSync, statSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LAUNCH, runPageBench } from './web_server.mjs';

if (process.argv[2] === '--open') {
  const web = process.argv.indexOf('--web');
  await openBench(Number(process.argv[3] ?? 3), web > 0 ? process.argv[web + 1] : 'web');
  process.exit(process.exitCode ?? 0);
}

if (process.argv[2] === '--prompt-threads') {
  const { promptThreadsBench } = await import('./prompt_threads_bench.mjs');
  await promptThreadsBench(Number(process.argv[3] ?? 5));
  process.exit(process.exitCode ?? 0);
}

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

// W9w — the patching sweep the page's way, on a model of GPT-2 small's exact shape opened as a
// learner opens one, over the page's workers: bench/patch_bench.mjs (its lines; 1 and 2 workers).
const wantsW9 = gpt && (!args.includes('--only') || args[args.indexOf('--only') + 1]?.split(',').includes('w9'));
if (wantsW9 && !args.includes('--quick')) {
  const { w9w } = await import('./patch_bench.mjs');
  await w9w({ log: (line) => console.log(`ap_bench_gpt (Chromium, page workers): ${line}`) });
}

// ---- --open: the page's opening of a 270 MB BF16 folder ----

// SmolLM2-135M's shape (bench/smollm.h): 30 layers, hidden 576, 9 heads, 3 key/value heads,
// SwiGLU of 1,536, vocabulary 49,152, embeddings tied; every tensor BF16, as its Hugging Face
// folder stores it. No tokenizer.json: the page then takes token ids.
function smollm() {
  return { model_type: 'llama', architectures: ['LlamaForCausalLM'], hidden_size: 576, intermediate_size: 1536,
    num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3, vocab_size: 49152,
    max_position_embeddings: 8192, rms_norm_eps: 1e-5, rope_theta: 100000, tie_word_embeddings: true,
    hidden_act: 'silu', torch_dtype: 'bfloat16', bos_token_id: 1, eos_token_id: 2 };
}

function smollmTensors(c) {
  const H = c.hidden_size, I = c.intermediate_size, hd = H / c.num_attention_heads, kv = c.num_key_value_heads * hd;
  const out = [['model.embed_tokens.weight', [c.vocab_size, H]]];
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    out.push([`${p}input_layernorm.weight`, [H]], [`${p}self_attn.q_proj.weight`, [H, H]], [`${p}self_attn.k_proj.weight`, [kv, H]],
      [`${p}self_attn.v_proj.weight`, [kv, H]], [`${p}self_attn.o_proj.weight`, [H, H]], [`${p}post_attention_layernorm.weight`, [H]],
      [`${p}mlp.gate_proj.weight`, [I, H]], [`${p}mlp.up_proj.weight`, [I, H]], [`${p}mlp.down_proj.weight`, [H, I]]);
  }
  out.push(['model.norm.weight', [H]]);
  return out;
}

// The folder (config.json, model.safetensors) with seeded random BF16 weights: norms 1 + 0.1·r,
// the rest 0.02·r, r uniform in [−1, 1) from xorshift32; written once, then reused.
function writeSmollmFolder(dir) {
  const tensors = smollmTensors(smollm());
  const header = {};
  let at = 0;
  for (const [name, shape] of tensors) {
    const n = shape.reduce((a, b) => a * b, 1) * 2;
    header[name] = { dtype: 'BF16', shape, data_offsets: [at, at + n] };
    at += n;
  }
  let h = JSON.stringify(header);
  h += ' '.repeat((8 - (h.length % 8)) % 8);
  const file = join(dir, 'model.safetensors');
  if (existsSync(file) && statSync(file).size === 8 + h.length + at) return;
  mkdirSync(dir, { recursive: true });
  const fd = openSync(file, 'w');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  writeSync(fd, len);
  writeSync(fd, Buffer.from(h));
  let x = 2463534242;
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  for (const [name, shape] of tensors) {
    const n = shape.reduce((a, b) => a * b, 1);
    const norm = name.endsWith('norm.weight');
    const out = new Uint16Array(n);
    for (let i = 0; i < n; i++) {
      x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
      const r = (x >>> 0) / 2 ** 31 - 1;
      f32[0] = norm ? 1 + 0.1 * r : 0.02 * r;
      out[i] = u32[0] >>> 16; // BF16: the top half (truncated)
    }
    writeSync(fd, new Uint8Array(out.buffer));
  }
  closeSync(fd);
  const cfd = openSync(join(dir, 'config.json'), 'w');
  writeSync(cfd, JSON.stringify(smollm(), null, 1));
  closeSync(cfd);
}

// Opens the folder `rounds` times, each in a new page (a new worker: a new wasm memory), from the
// folder picker's choice to #app's data-open="opened"; prints the median time and the wasm memory
// after opening (the worker's gpt.openMemory().size, on #tr-open-msg) over the files' bytes. A
// round the page has not answered in OPEN_STALL_S seconds (default 180) is said (with where its
// progress stood) and left out, and the run exits 1: a stalled opening is a fault, not a figure.
async function openBench(rounds, webDir) {
  const STALL_MS = Number(process.env.OPEN_STALL_S || 180) * 1000;
  const dir = join(tmpdir(), 'ap-open-bench', 'SmolLM2-135M-bf16');
  writeSmollmFolder(dir);
  const files = readdirSync(dir).reduce((a, f) => a + statSync(join(dir, f)).size, 0);
  await runPageBench(webDir, async ({ browser, url }) => {
    const times = [];
    const ratios = [];
    const phases = [];
    let stalled = 0;
    for (let k = 0; k < rounds; k++) {
      const page = await browser.newPage();
      page.on('pageerror', (e) => console.error(`open_bench: round ${k + 1}: the page threw: ${e.message}`));
      page.on('console', (m) => { if (m.type() === 'error') console.error(`open_bench: round ${k + 1}: ${m.text()}`); });
      await page.goto(`${url}/train/`);
      await page.waitForFunction(() => document.getElementById('app')?.dataset.status === 'ready', null, { timeout: 120000 });
      const t0 = Date.now();
      await page.locator('#tr-open-folder').setInputFiles(dir);
      const state = () => page.evaluate(() => `data-open=${document.getElementById('app')?.dataset.open} `
        + `progress: ${document.querySelector('.tr-open-bar-label')?.textContent ?? ''}`).catch((e) => e.message);
      const watch = setInterval(async () => console.error(`open_bench: round ${k + 1}, ${((Date.now() - t0) / 1000).toFixed(0)} s: ${await state()}`), 20000);
      try {
        await page.waitForFunction(() => ['opened', 'refused'].includes(document.getElementById('app')?.dataset.open), null, { timeout: STALL_MS });
      } catch (e) {
        if (e?.name !== 'TimeoutError') throw e;
        console.error(`open_bench: round ${k + 1} stalled (no answer in ${STALL_MS / 1000} s): ${await state()}`);
        stalled += 1;
        await page.close();
        continue;
      } finally {
        clearInterval(watch);
      }
      times.push(Date.now() - t0);
      phases.push(await openPhases(page));
      const got = await page.evaluate(() => {
        const m = document.getElementById('tr-open-msg');
        return { open: document.getElementById('app').dataset.open, memory: Number(m.dataset.memoryBytes), weights: Number(m.dataset.weightBytes), text: m.textContent };
      });
      if (got.open !== 'opened') throw new Error(`the folder was refused: ${got.text}`);
      ratios.push({ memory: got.memory / files, weights: got.weights / files });
      await page.close();
    }
    if (stalled) process.exitCode = 1;
    if (!times.length) throw new Error(`every opening stalled (${stalled} of ${rounds})`);
    const med = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)];
    const last = ratios[ratios.length - 1];
    console.log(`open_bench (Chromium ${browser.version()}): SmolLM2-135M-shaped BF16 folder, ${(files / 1e6).toFixed(1)} MB: `
      + `open_ms_med=${med} (${times.join(', ')}; ${times.length} openings${stalled ? `, ${stalled} stalled` : ''}) `
      + `wasm_memory/files=${last.memory.toFixed(3)} weights/files=${last.weights.toFixed(3)}`);
    const names = [...new Set(phases.flatMap((p) => Object.keys(p)))];
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(`open_bench phases (the worker's, ms, median of ${times.length}): `
      + names.map((n) => `${n}=${median(phases.map((p) => p[n] ?? 0)).toFixed(0)}`).join(' '));
  });
}

// The opening's phases as the training page's worker measured them: gpt-open.js's user-timing
// measures ("openModel <phase>") and the worker's own ("open <phase>": the full module's load, the
// whole request), read from the worker's timeline ({phase: ms}).
async function openPhases(page) {
  const worker = page.workers().find((w) => /\/train\/worker\.js/.test(w.url()));
  if (!worker) return {};
  const got = await worker.evaluate(() => performance.getEntriesByType('measure')
    .filter((e) => /^open(Model)? /.test(e.name)).map((e) => [e.name, e.duration]));
  return Object.fromEntries(got);
}
