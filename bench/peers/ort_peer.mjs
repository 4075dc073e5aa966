// ort_peer.mjs — onnxruntime-web (its wasm execution provider, SIMD, one thread) in Node, running
// the workloads of bench/README.md that it can: W1 (attention, T = 64, 256, 1024), W2 (matmul,
// n = 64, 256, 512) and W4 without a cache (greedy generation of 256 tokens with the tiny GPT, the
// context cropped to the last 64 tokens, one session.run per token). onnxruntime-web does not
// train (no W3), and the exported GPT has no KV cache. A benchmark: it prints numbers and never
// fails on them; the lines are timing.mjs's, read by bench/peers_table.py.
// What is timed: session.run(feeds) with the input tensors made once (W1, W2), so each call
// includes onnxruntime's copy of the inputs into wasm memory and of the output out of it, as a
// page's call would; W4: the whole loop of 256 runs and the argmax in JS.
// Limits: the graphs are bench/peers/export_onnx.py's (graphOptimizationLevel 'all'); Node, not a
// browser (the same wasm); numThreads 1 (threads would need cross-origin isolation in a page).
//
//   /usr/bin/python3 bench/peers/export_onnx.py bench/out/onnx    (once)
//   node bench/peers/ort_peer.mjs [trials] [w1,w2,w4] [--quick]   (ONNX_DIR: default bench/out/onnx)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';
import { bench, peerArgs, tokensLine, uniform } from './timing.mjs';

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
}

main().catch((e) => {
  console.error('ort_peer failed:', e);
  process.exitCode = 1;
});
