// tfjs_peer.mjs — TensorFlow.js with its wasm backend (@tensorflow/tfjs and
// @tensorflow/tfjs-backend-wasm: XNNPACK, SIMD, one thread) in Node, running the workloads of
// bench/README.md: W1 (attention, T = 64, 256, 1024), W2 (matmul, n = 64, 256, 512), W3 (a
// training step of the tiny and the small GPT) and W4 without a cache (greedy generation of 256
// tokens with the tiny GPT, the context cropped to the last 64 tokens). A benchmark: it prints
// numbers and never fails on them; the lines are timing.mjs's, read by bench/peers_table.py.
// What is timed: each call ends with dataSync() (the result read back, as a page would) and
// disposes what it made. W1 twice: with matMul(q, k, false, true), as one writes it (tfjs-wasm
// 4.22 takes a slow path for transposeB, ~10×), and with k transposed explicitly inside the call
// (the fast path; the table quotes this one). The GPT is nanoGPT's in tfjs ops (LayerNorm, exact
// erf GELU, MLP 4×, tied head, AdamW as Adam plus decoupled weight decay), tokens one-hot.
// Limits: W3 takes minutes a round (run_peers.sh leaves it out unless TFJS_ONLY names it); Node,
// not a browser (the same wasm); no KV cache.
//
//   node bench/peers/tfjs_peer.mjs [trials] [w1,w2,w3,w4] [--quick]
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { bench, now, peerArgs, tokensLine, uniform } from './timing.mjs';

// tfjs's ESM builds import files without extensions, which Node's ESM loader refuses: its
// CommonJS builds load instead.
const require = createRequire(import.meta.url);
const tf = require('@tensorflow/tfjs');
const wasm = require('@tensorflow/tfjs-backend-wasm');

const { trials, only, quick } = peerArgs();
const V = 65;

/** The causal mask as an additive (T, T) tensor: 0 on and below the diagonal, −1e9 above. */
const causalMask = (T) => tf.tidy(() => tf.mul(tf.sub(tf.linalg.bandPart(tf.ones([T, T]), -1, 0), 1), 1e9));

async function attentionAndMatmul(tag) {
  if (only.has('w1')) {
    for (const T of [64, 256, 1024]) {
      const [q, k, v] = [0, 1, 2].map(() => tf.tensor2d(uniform(T * 64), [T, 64]));
      const mask = causalMask(T);
      const transB = () => { const o = tf.tidy(() => tf.matMul(tf.softmax(tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / 8), mask)), v)); o.dataSync(); o.dispose(); };
      await bench(tag, `W1_attn_T${T}_transB`, transB, { flops: 4 * T * T * 64, trials });
      const explicitT = () => { const o = tf.tidy(() => tf.matMul(tf.softmax(tf.add(tf.mul(tf.matMul(q, tf.transpose(k)), 1 / 8), mask)), v)); o.dataSync(); o.dispose(); };
      await bench(tag, `W1_attn_T${T}_explicitT`, explicitT, { flops: 4 * T * T * 64, trials });
    }
  }
  if (only.has('w2')) {
    for (const n of [64, 256, 512]) {
      const a = tf.tensor2d(uniform(n * n), [n, n]);
      const b = tf.tensor2d(uniform(n * n), [n, n]);
      await bench(tag, `W2_mm_n${n}`, () => { const c = tf.matMul(a, b); c.dataSync(); c.dispose(); }, { flops: 2 * n * n * n, trials });
    }
  }
}

/** nanoGPT in tfjs ops: {vars, forward(idxOneHot (B·T, V), B, T) → logits (B·T, V), nparam}. */
function makeGPT({ block, L, C, H }) {
  const randn = (s, std = 0.02) => tf.variable(tf.randomNormal(s, 0, std));
  const zeros = (s) => tf.variable(tf.zeros(s));
  const ones = (s) => tf.variable(tf.ones(s));
  const P = { wte: randn([V, C]), wpe: randn([block, C]), lnf_g: ones([C]), lnf_b: zeros([C]), layers: [] };
  for (let l = 0; l < L; l++) {
    P.layers.push({
      ln1_g: ones([C]), ln1_b: zeros([C]), Wqkv: randn([C, 3 * C]), bqkv: zeros([3 * C]), Wo: randn([C, C]), bo: zeros([C]),
      ln2_g: ones([C]), ln2_b: zeros([C]), W1: randn([C, 4 * C]), b1: zeros([4 * C]), W2: randn([4 * C, C]), b2: zeros([C]),
    });
  }
  const vars = [P.wte, P.wpe, P.lnf_g, P.lnf_b, ...P.layers.flatMap(Object.values)];
  const masks = {};
  const maskFor = (T) => masks[T] || (masks[T] = tf.keep(causalMask(T)));
  const layerNorm = (x, g, b) => {
    const { mean, variance } = tf.moments(x, -1, true);
    return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, 1e-5))), g), b);
  };
  const gelu = (x) => tf.mul(tf.mul(x, 0.5), tf.add(tf.erf(tf.mul(x, Math.SQRT1_2)), 1));
  function forward(idxOneHot, B, T) {
    const hs = C / H;
    let x = tf.reshape(tf.add(tf.reshape(tf.matMul(idxOneHot, P.wte), [B, T, C]), tf.slice(P.wpe, [0, 0], [T, C])), [B * T, C]);
    for (const p of P.layers) {
      const qkv = tf.add(tf.matMul(layerNorm(x, p.ln1_g, p.ln1_b), p.Wqkv), p.bqkv);
      const [q, k, v] = tf.split(qkv, 3, 1).map((t) => tf.transpose(tf.reshape(t, [B, T, H, hs]), [0, 2, 1, 3]));
      // k transposed explicitly: matMul's transposeB is the slow path in tfjs-wasm
      const att = tf.softmax(tf.add(tf.mul(tf.matMul(q, tf.transpose(k, [0, 1, 3, 2])), 1 / Math.sqrt(hs)), maskFor(T)));
      const y = tf.reshape(tf.transpose(tf.matMul(att, v), [0, 2, 1, 3]), [B * T, C]);
      x = tf.add(x, tf.add(tf.matMul(y, p.Wo), p.bo));
      const h = gelu(tf.add(tf.matMul(layerNorm(x, p.ln2_g, p.ln2_b), p.W1), p.b1));
      x = tf.add(x, tf.add(tf.matMul(h, p.W2), p.b2));
    }
    return tf.matMul(layerNorm(x, P.lnf_g, P.lnf_b), tf.transpose(P.wte)); // tied head
  }
  return { vars, forward, nparam: vars.reduce((s, v) => s + v.size, 0) };
}

/** W3: 3 warm-up steps, then `steps` steps timed one by one; prints the training line. */
function train(tag, name, cfg, B, steps) {
  const m = makeGPT(cfg);
  const T = cfg.block;
  const lr = 1e-3;
  const wd = 0.1;
  const opt = tf.train.adam(lr, 0.9, 0.999, 1e-8);
  const batch = () => tf.tidy(() => {
    const d = tf.randomUniform([B, T + 1], 0, V, 'int32');
    const oneHot = (t) => tf.cast(tf.oneHot(tf.reshape(t, [-1]), V), 'float32');
    return [oneHot(tf.slice(d, [0, 0], [B, T])), oneHot(tf.slice(d, [0, 1], [B, T]))];
  });
  const step = () => {
    const [xo, yo] = batch();
    const loss = opt.minimize(() => tf.losses.softmaxCrossEntropy(yo, m.forward(xo, B, T)), true, m.vars);
    tf.tidy(() => { for (const v of m.vars) v.assign(tf.mul(v, 1 - lr * wd)); }); // decoupled weight decay
    const l = loss.dataSync()[0];
    tf.dispose([xo, yo, loss]);
    return l;
  };
  let l0;
  for (let i = 0; i < 3; i++) l0 = step();
  const ts = [];
  for (let i = 0; i < steps; i++) {
    const t0 = now();
    step();
    ts.push(now() - t0);
  }
  ts.sort((a, b) => a - b);
  const [mn, md] = [ts[0], ts[ts.length >> 1]];
  const ms = (s) => (s * 1e3).toFixed(2).padStart(8);
  const tps = (s) => (B * T / s).toFixed(0).padStart(9);
  console.log(`${tag} ${name.padEnd(24)} params=${m.nparam} step_ms_min=${ms(mn)} step_ms_med=${ms(md)} tok/s_med=${tps(md)} tok/s_best=${tps(mn)} (steps=${steps}, loss ${l0.toFixed(3)}, tensors=${tf.memory().numTensors})`);
}

async function generation(tag) {
  const m = makeGPT({ block: 64, L: 2, C: 64, H: 4 });
  const generate = () => {
    const idx = [0];
    for (let i = 0; i < 256; i++) {
      const ctx = idx.slice(-64);
      const next = tf.tidy(() => tf.argMax(tf.slice(m.forward(tf.cast(tf.oneHot(tf.tensor1d(ctx, 'int32'), V), 'float32'), 1, ctx.length),
        [ctx.length - 1, 0], [1, V]), 1));
      idx.push(next.dataSync()[0]);
      next.dispose();
    }
    return idx;
  };
  const [, md] = await bench(tag, 'W4_gen256_nocache_blk64', generate, { trials: Math.max(quick ? 2 : 5, trials >> 1), minTrial: 0 });
  tokensLine(tag, 256, md);
}

async function main() {
  wasm.setWasmPaths(`${dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json'))}/dist/`);
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  tf.env().set('WASM_HAS_SIMD_SUPPORT', true);
  if (!(await tf.setBackend('wasm'))) throw new Error('the wasm backend did not start');
  await tf.ready();
  const tag = `tfjs${tf.version.tfjs}-${tf.getBackend()}`;
  console.log(`${tag} simd=${tf.env().getBool('WASM_HAS_SIMD_SUPPORT')} threads=${tf.env().getBool('WASM_HAS_MULTITHREAD_SUPPORT')}`);
  await attentionAndMatmul(tag);
  if (only.has('w3')) {
    train(tag, 'W3_train_tiny', { block: 64, L: 2, C: 64, H: 4 }, 16, quick ? 3 : 30);
    train(tag, 'W3_train_small', { block: 128, L: 4, C: 128, H: 4 }, 16, quick ? 2 : 15);
  }
  if (only.has('w4')) await generation(tag);
}

main().catch((e) => {
  console.error('tfjs_peer failed:', e);
  process.exitCode = 1;
});
