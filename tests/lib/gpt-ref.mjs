// gpt-ref.mjs — an independent nanoGPT forward pass in float64 JavaScript, for tests that check the
// core's numbers on a model "trained elsewhere" without PyTorch (CI has none): token and position
// embeddings, n_layer pre-LayerNorm blocks (causal multi-head attention, an MLP with the exact
// GELU, nn.GELU()), the final LayerNorm and the tied head, as nanoGPT's model.py computes them.
// It reads the tensors tests/lib/foreign-files.mjs writes (nanoGptTensors: nanoGPT's names, Linear
// weights out × in). Written from the model's definition, not from the core's code; slow (plain
// loops) and meant for tiny models only.

/** erf in float64 (series below 3, continued fraction above): |error| < 1e-13 on the real line. */
function erf(x) {
  const a = Math.abs(x);
  let r;
  if (a < 3) {
    let term = a;
    let sum = a;
    for (let n = 1; n < 200; n++) {
      term *= -a * a / n;
      const d = term / (2 * n + 1);
      sum += d;
      if (Math.abs(d) < 1e-17 * Math.abs(sum)) break;
    }
    r = (2 / Math.sqrt(Math.PI)) * sum;
  } else {
    // erfc(a) = e^(−a²)/√π · 1/(a + 1/2/(a + 1/(a + 3/2/(a + …))))
    let f = a;
    for (let n = 60; n >= 1; n--) f = a + (n / 2) / f;
    r = 1 - Math.exp(-a * a) / Math.sqrt(Math.PI) / f;
  }
  return x < 0 ? -r : r;
}

const gelu = (x) => 0.5 * x * (1 + erf(x / Math.SQRT2));

function layerNorm(x, w, b, eps = 1e-5) {
  const n = x.length;
  const mean = x.reduce((s, v) => s + v, 0) / n;
  const variance = x.reduce((s, v) => s + (v - mean) ** 2, 0) / n;
  const r = 1 / Math.sqrt(variance + eps);
  return x.map((v, i) => (v - mean) * r * w[i] + (b ? b[i] : 0));
}

/** y = x·Wᵀ + b for a Linear weight W of out × in (flat, row-major). */
function linear(x, W, b, out) {
  const inn = x.length;
  const y = new Array(out);
  for (let o = 0; o < out; o++) {
    let s = b ? b[o] : 0;
    for (let i = 0; i < inn; i++) s += x[i] * W[o * inn + i];
    y[o] = s;
  }
  return y;
}

/**
 * The logits (T rows of vocab_size) of ids under the nanoGPT model {cfg, tensors} (tensors: the
 * list nanoGptTensors gives, names without "_orig_mod.").
 */
export function refLogits(cfg, tensors, ids) {
  const P = Object.fromEntries(tensors.map((t) => [t.name, Array.from(t.data)]));
  const C = cfg.n_embd;
  const NH = cfg.n_head;
  const hd = C / NH;
  const T = ids.length;
  let x = ids.map((id, t) => Array.from({ length: C }, (_, c) => P['transformer.wte.weight'][id * C + c] + P['transformer.wpe.weight'][t * C + c]));
  for (let l = 0; l < cfg.n_layer; l++) {
    const p = (n) => P[`transformer.h.${l}.${n}`];
    const h1 = x.map((r) => layerNorm(r, p('ln_1.weight'), p('ln_1.bias')));
    const qkv = h1.map((r) => linear(r, p('attn.c_attn.weight'), p('attn.c_attn.bias'), 3 * C));
    const y = x.map(() => new Array(C).fill(0));
    for (let h = 0; h < NH; h++) {
      for (let i = 0; i < T; i++) {
        const sc = [];
        for (let j = 0; j <= i; j++) {
          let s = 0;
          for (let d = 0; d < hd; d++) s += qkv[i][h * hd + d] * qkv[j][C + h * hd + d];
          sc.push(s / Math.sqrt(hd));
        }
        const m = Math.max(...sc);
        const e = sc.map((s) => Math.exp(s - m));
        const z = e.reduce((a, b) => a + b, 0);
        for (let j = 0; j <= i; j++) for (let d = 0; d < hd; d++) y[i][h * hd + d] += (e[j] / z) * qkv[j][2 * C + h * hd + d];
      }
    }
    x = x.map((r, t) => linear(y[t], p('attn.c_proj.weight'), p('attn.c_proj.bias'), C).map((v, c) => r[c] + v));
    const h2 = x.map((r) => layerNorm(r, p('ln_2.weight'), p('ln_2.bias')));
    x = x.map((r, t) => {
      const f = linear(h2[t], p('mlp.c_fc.weight'), p('mlp.c_fc.bias'), 4 * C).map(gelu);
      return linear(f, p('mlp.c_proj.weight'), p('mlp.c_proj.bias'), C).map((v, c) => r[c] + v);
    });
  }
  const V = cfg.vocab_size;
  return x.map((r) => linear(layerNorm(r, P['transformer.ln_f.weight'], P['transformer.ln_f.bias']), P['transformer.wte.weight'], null, V));
}

/** −log p of ids[1…] each from the tokens before it (nats), in one window (ids.length ≤ block_size + 1). */
export function refSurprisal(cfg, tensors, ids) {
  const logits = refLogits(cfg, tensors, ids.slice(0, -1));
  return logits.map((row, t) => {
    const m = Math.max(...row);
    const lse = m + Math.log(row.reduce((s, v) => s + Math.exp(v - m), 0));
    return lse - row[ids[t + 1]];
  });
}
