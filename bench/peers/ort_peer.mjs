// ort_peer.mjs — onnxruntime-web (its wasm execution provider, SIMD, one thread) in Node, running
// the workloads of bench/README.md that it can: W1 (attention, T = 64, 256, 1024), W2 (matmul,
// n = 64, 256, 512) and W4 without a cache (greedy generation of 256 tokens with the tiny GPT, the
// context cropped to the last 64 tokens, one session.run per token). onnxruntime-web does not
// train (no W3), and the exported tiny GPT has no KV cache. W6 (GPT-2 small's shape, gpt2s.onnx):
// the 64-token prompt's forward (one session.run, the past empty, every position's logits), then
// 100 greedy tokens through the KV cache after the prompt: per token one session.run with idx
// (1, 1) and the 24 past tensors, which are the previous run's present outputs fed back as they
// are (onnxruntime-web copies them into wasm memory and the presents and logits out of it each
// run, as a page's generation loop does), then the argmax in JS; the prompt's run refills the
// past before each trial, untimed. W8 (SmolLM2-135M's shape, smollm.onnx, float32 weights) the same
// way: its 128-token prompt, then 64 greedy tokens. Before timing it compares its logits and greedy tokens with
// PyTorch's (gpt2s_check.json, written by export_onnx.py) and is not timed if they differ. A benchmark: it prints numbers and never
// fails on them; the lines are timing.mjs's, read by bench/peers_table.py.
// What is timed: session.run(feeds) with the input tensors made once (W1, W2), so each call
// includes onnxruntime's copy of the inputs into wasm memory and of the output out of it, as a
// page's call would; W4: the whole loop of 256 runs and the argmax in JS.
// Limits: the graphs are bench/peers/export_onnx.py's (graphOptimizationLevel 'all'); Node, not a
// browser (the same wasm); numThreads 1 (threads would need cross-origin isolation in a page).
//
//   /usr/bin/python3 bench/peers/export_onnx.py bench/out/onnx    (once)
//   node bench/peers/ort_peer.mjs [trials] [w1,w2,w4,w6,w8] [--quick]   (ONNX_DIR: default bench/out/onnx)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';
import { bench, peerArgs, timeSteps, tokensLine, uniform } from './timing.mjs';

const { trials, only, quick } = peerArgs();
const dir = process.env.ONNX_DIR || 'bench/out/onnx';
ort.env.wasm.numThreads = 1;
const tag = `ort-web${ort.env.versions?.web ?? ''}`;
const options = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
const load = (file) => ort.InferenceSession.create(readFileSync(join(dir, file)), options);
const matrix = (rows, cols) => new ort.Tensor('float32', uniform(rows * cols), [rows, cols]);

async function main() {
  if (only.has('w1')) {
    for (const T of [64, 256, 1024]) {
      const s = await load(`attn_T${T}.onnx`);
      const feeds = { q: matrix(T, 64), k: matrix(T, 64), v: matrix(T, 64) };
      await bench(tag, `W1_attn_T${T}`, () => s.run(feeds), { flops: 4 * T * T * 64, trials });
    }
  }
  if (only.has('w2')) {
    for (const n of [64, 256, 512]) {
      const s = await load(`mm_n${n}.onnx`);
      const feeds = { a: matrix(n, n), b: matrix(n, n) };
      await bench(tag, `W2_mm_n${n}`, () => s.run(feeds), { flops: 2 * n * n * n, trials });
    }
  }
  if (only.has('w4')) {
    const gpt = await load('gpt_tiny.onnx');
    const generate = async () => {
      const idx = [0];
      for (let i = 0; i < 256; i++) {
        const ctx = idx.slice(-64);
        const out = await gpt.run({ idx: new ort.Tensor('int64', BigInt64Array.from(ctx, BigInt), [1, ctx.length]) });
        const l = out.logits.data;
        let best = 0;
        for (let j = 1; j < l.length; j++) if (l[j] > l[best]) best = j;
        idx.push(best);
      }
      return idx;
    };
    const [, md] = await bench(tag, 'W4_gen256_nocache_blk64', generate, { trials: Math.max(quick ? 2 : 5, trials >> 1), minTrial: 0 });
    tokensLine(tag, 256, md);
  }
  for (const w of ['w6', 'w8']) if (only.has(w)) await cached(CACHED[w]);
}

// The check line (the same as ours and PyTorch's) from logits (1, T, V) and greedy tokens;
// whether they agree with PyTorch's (check: gpt2s_check.json, smollm_check.json) within its tolerance.
function checkLine(name, check, lastRow, greedy) {
  const picked = check.check_ids.map((j) => lastRow[j]);
  const diff = Math.max(...picked.map((x, i) => Math.abs(x - check.logits[i])));
  const same = greedy.every((t, i) => t === check.greedy[i]);
  console.log(`${tag} ${name}_check argmax=${argmax(lastRow)} logits=${picked.map((x) => x.toFixed(6)).join(',')} ` +
    `greedy=${greedy.join(',')} vs_torch_maxdiff=${diff.toExponential(2)} greedy_same=${same}`);
  return diff <= check.tolerance && same;
}

function argmax(l, from = 0, n = l.length - from) {
  let best = 0;
  for (let j = 1; j < n; j++) if (l[from + j] > l[from + best]) best = j;
  return best;
}

// W6 and W8: the prompt's forward, then N greedy tokens through the KV cache (the top of this file).
const CACHED = {
  w6: { name: 'W6_gpt2s', onnx: 'gpt2s.onnx', check: 'gpt2s_check.json', V: 50257, kvHeads: 12, hs: 64, N: 100 },
  w8: { name: 'W8_smollm_f32', onnx: 'smollm.onnx', check: 'smollm_check.json', V: 49152, kvHeads: 3, hs: 64, N: 64 },
};

async function cached({ name, onnx, check: checkFile, V, kvHeads, hs, N }) {
  const check = JSON.parse(readFileSync(join(dir, checkFile), 'utf8'));
  const s = await load(onnx);
  const layers = s.inputNames.filter((n) => n.startsWith('past_key_')).length;
  const P = check.prompt.length;
  const ids = (a) => new ort.Tensor('int64', BigInt64Array.from(a, BigInt), [1, a.length]);
  let past;
  const step = async (tokens) => {  // one run: the logits (1, T, V); past becomes the presents
    const out = await s.run({ idx: ids(tokens), ...past });
    past = {};
    for (let i = 0; i < layers; i++) {
      past[`past_key_${i}`] = out[`present_key_${i}`];
      past[`past_value_${i}`] = out[`present_value_${i}`];
    }
    return out.logits.data;
  };
  const prefill = async () => {
    past = {};
    for (let i = 0; i < layers; i++)
      for (const kind of ['key', 'value']) past[`past_${kind}_${i}`] = new ort.Tensor('float32', new Float32Array(0), [1, kvHeads, 0, hs]);
    return step(check.prompt);
  };
  const logits = await prefill();
  const lastRow = logits.subarray((P - 1) * V, P * V);
  const greedy = [argmax(lastRow)];
  while (greedy.length < check.greedy.length) greedy.push(argmax(await step([greedy[greedy.length - 1]])));
  if (!checkLine(name, check, lastRow, greedy)) {
    console.log(`${tag} ${name}: onnxruntime-web's logits or tokens differ from PyTorch's beyond ${check.tolerance}; not timed`);
    return;
  }
  await timeSteps(tag, `${name}_prefill${P}`, P, { trials: quick ? 2 : 5, warmup: 1, run: prefill });
  await timeSteps(tag, `${name}_gen${N}`, N, {
    trials: quick ? 1 : 3, warmup: quick ? 0 : 1, prepare: prefill,
    run: async () => {
      let t = check.argmax;
      for (let i = 0; i < N; i++) t = argmax(await step([t]));
    },
  });
}

main().catch((e) => {
  console.error('ort_peer failed:', e);
  process.exitCode = 1;
});
