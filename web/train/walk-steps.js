// walk-steps.js — the steps of "the whole block, step by step" from the core's trace (gpt.js
// blockTrace), ending with the sampled token (the core's seeded draw, as generation's): for each step its title, its formula and its vectors, and for any number of a
// vector the lines of its arithmetic, in the stepper's notation (common/explain-lines.js, turned
// into MathML by common/explain-math.js). The numbers are the core's: a line of terms shows the
// operands the core used and the result line shows the core's value; nothing here is the source
// of a number on screen, except a product or a difference written out as a term.
//
// A matmul output's terms need that output's row of weights, which the trace does not carry: its
// explanation asks `row({weight, layer, row})` (the worker's weight_row) and is async.
//
// The variants (gpt.h) have steps of their own: RMSNorm's (the mean square, no mean or β), the
// rotation step of RoPE (each pair of q and k turned by the position's angle), ALiBi's bias in a
// score, the keys a window and its sinks hide (score −∞, weight 0), which key/value head a query
// head reads (grouped-query), SwiGLU's gate (silu(gate) ⊙ up), and Qwen3's q/k norm (each q and k
// head through its RMSNorm, before the rotation); heads may be wider or narrower than
// n_embd/n_head (head_size); without learned positions the embedding is wte's row alone.
//
// Limits: a sum of C terms is shown cut in the middle (sumLine, at most 8 terms), as the stepper
// does; a score's q·k terms and a context's Σ a·v need the keys and values, which the trace
// carries only for models small enough; for larger ones `kv(layer)` (the worker's walk_kv: the
// same trace asked for that layer's keys and values) fetches them when such a number is opened.
import { lineBuilder, sumLine } from '../common/explain-lines.js';
import { formatNumber as f, term } from '../common/format.js';

const slice = (v, a, n) => v.slice(a, a + n);
/** A head's width: head_size, or n_embd/n_head. */
const headSize = (cfg) => cfg.head_size || cfg.n_embd / cfg.n_head;

/** Lines of c_attn's output i (q's columns, then k's), the matmul of ln_1 with the row's weights. */
async function cattnLines(t, row, Ly, l, i, name, out) {
  const r = await row({ weight: 'c_attn', layer: l, row: i });
  return matmulLines(t, name, 'ln_1', i, Ly.ln_1.out, r.w, r.bias, out);
}

/**
 * Qwen3's q/k norm of layer l: c_attn's q and k (q_lin, k_lin), each head's numbers divided by
 * their root mean square and scaled by the norm's weight (q_norm_w, k_norm_w); the normed values
 * are what RoPE turns (q₀, k₀) or, without RoPE, q and k themselves.
 */
function qkNormStep(t, tr, l, row) {
  const Ly = tr.layers[l];
  const hs = headSize(tr.config);
  const A = tr.config.n_head * hs;
  const qn = Ly.q_raw ?? Ly.q, kn = Ly.k_raw ?? Ly.k;
  const normed = (lin, out, rstd, w, name, linName) => (i) => {
    const h = Math.floor(i / hs), d = i % hs;
    const L = lineBuilder();
    L.F(`${name}[${i + 1}] = ${linName}[${i + 1}]·rstd_${h + 1}·γ[${d + 1}]`);
    L.T(`= ${term(lin[i])}·${f(rstd[h])}·${f(w[d])}`);
    L.R(out[i]);
    L.N(t('walk.ex.qkNorm', { h: h + 1, n: hs }));
    return L.lines;
  };
  const q0 = Ly.q_raw ? 'q₀' : 'q', k0 = Ly.k_raw ? 'k₀' : 'k';
  return {
    id: `l${l}-qknorm`, layer: l, title: t('walk.step.qkNorm', { l: l + 1 }),
    formula: [`${q0}_h = qₗ_h / √(mean(qₗ_h²) + ε) ⊙ γ_q`, `${k0}_h = kₗ_h / √(mean(kₗ_h²) + ε) ⊙ γ_k`],
    facts: t('walk.qkNormFacts', { hs }),
    vectors: [
      { name: 'qₗ', values: Ly.q_lin, explain: (i) => cattnLines(t, row, Ly, l, i, 'qₗ', Ly.q_lin[i]) },
      { name: q0, values: qn, explain: normed(Ly.q_lin, qn, Ly.q_rstd, Ly.q_norm_w, q0, 'qₗ') },
      { name: 'kₗ', values: Ly.k_lin, explain: (i) => cattnLines(t, row, Ly, l, A + i, 'kₗ', Ly.k_lin[i]) },
      { name: k0, values: kn, explain: normed(Ly.k_lin, kn, Ly.k_rstd, Ly.k_norm_w, k0, 'kₗ') },
    ],
  };
}
const keyRow = (flat, j, C) => flat.slice(j * C, (j + 1) * C);

/** Lines of a dot product x·w (+ b) whose result is `out`. */
function matmulLines(t, name, inName, i, x, w, bias, out) {
  const L = lineBuilder();
  L.F(`${name}[${i + 1}] = Σ_j ${inName}[j]·W[${i + 1},j]${bias == null ? '' : ` + b[${i + 1}]`}`);
  L.dot(x, w);
  if (bias != null) L.T(`= ${sumLine([term(out - bias), term(bias)])}`);
  L.R(out);
  L.N(t('walk.ex.terms', { n: x.length }));
  return L.lines;
}

/** A LayerNorm's scalar lines: the mean and the variance of its input x (RMSNorm: the mean square). */
function lnStats(L, x, ln, eps, rms = false) {
  if (rms) {
    L.F('ms = Σ_c x[c]² / C');
    L.T(`= (${sumLine(x.map((v) => `${term(v)}²`))}) / ${x.length}`);
    L.R(ln.var);
    L.F('rstd = 1 / √(ms + ε)');
    L.T(`= 1 / √(${f(ln.var)} + ${f(eps)})`);
    L.R(ln.rstd);
    return;
  }
  L.F('mean = Σ_c x[c] / C');
  L.T(`= (${sumLine(x.map(term))}) / ${x.length}`);
  L.R(ln.mean);
  L.F('var = Σ_c (x[c] − mean)² / C');
  L.T(`= (${sumLine(x.map((v) => `${term(v - ln.mean)}²`))}) / ${x.length}`);
  L.R(ln.var);
  L.F('rstd = 1 / √(var + ε)');
  L.T(`= 1 / √(${f(ln.var)} + ${f(eps)})`);
  L.R(ln.rstd);
}

/** A LayerNorm (or RMSNorm, rms) step over x: x̂ and out, each number explained. */
function lnStep(t, id, title, x, ln, eps, next, rms = false) {
  const xhat = (i) => {
    const L = lineBuilder();
    lnStats(L, x, ln, eps, rms);
    if (rms) {
      L.F(`x̂[${i + 1}] = x[${i + 1}]·rstd`);
      L.T(`= ${term(x[i])}·${f(ln.rstd)}`);
    } else {
      L.F(`x̂[${i + 1}] = (x[${i + 1}] − mean)·rstd`);
      L.T(`= (${f(x[i])} − ${term(ln.mean)})·${f(ln.rstd)}`);
    }
    L.R(ln.xhat[i]);
    return L.lines;
  };
  const out = (i) => {
    const L = lineBuilder();
    const b = ln.beta ? ln.beta[i] : null;
    L.F(`${next}[${i + 1}] = x̂[${i + 1}]·γ[${i + 1}]${b == null ? '' : ` + β[${i + 1}]`}`);
    L.T(`= ${term(ln.xhat[i])}·${term(ln.gamma[i])}${b == null ? '' : ` + ${term(b)}`}`);
    L.R(ln.out[i]);
    if (b == null) L.N(t('walk.ex.noBias'));
    return L.lines;
  };
  return {
    id, title,
    formula: [rms ? `${next} = x / √(mean(x²) + ε) · γ` : `${next} = (x − mean) / √(var + ε) · γ${ln.beta ? ' + β' : ''}`],
    facts: rms ? t('walk.rmsFacts', { ms: f(ln.var), rstd: f(ln.rstd), eps: f(eps) })
      : t('walk.lnFacts', { mean: f(ln.mean), v: f(ln.var), rstd: f(ln.rstd), eps: f(eps) }),
    vectors: [
      { name: 'x', values: x, explain: null },
      { name: 'x̂', values: ln.xhat, explain: xhat },
      { name: next, values: ln.out, explain: out },
    ],
  };
}

/**
 * RoPE's rotation step of layer l: q and k before and after the turn; pair i of every head turns
 * by the angle p·θ_i (cos and sin from the core), halves pairing (i, i + d/2) or interleaved (2i, 2i+1).
 */
function ropeStep(t, tr, l, row) {
  const Ly = tr.layers[l];
  const hs = headSize(tr.config);
  const pairs = tr.rope_cos.length;
  const halves = (tr.config.rope ?? 'halves') === 'halves';
  const partner = (d) => {  // within a head: the pair's index, its other member, and the sign of the sin term
    if (halves) return d < pairs ? [d, d + pairs, -1] : d < 2 * pairs ? [d - pairs, d - pairs, 1] : null;
    return d < 2 * pairs ? [d >> 1, d ^ 1, d % 2 ? 1 : -1] : null;
  };
  const turned = (raw, out, name) => (i) => {
    const o = i - (i % hs);
    const pr = partner(i % hs);
    const L = lineBuilder();
    if (!pr) {
      L.F(`${name}[${i + 1}] = ${name}₀[${i + 1}]`);
      L.R(out[i]);
      L.N(t('walk.ex.ropePass', { d: pairs * 2 }));
      return L.lines;
    }
    const [k, j, sg] = pr;
    const c = tr.rope_cos[k], sn = tr.rope_sin[k];
    L.F(sg < 0 ? `${name}[${i + 1}] = ${name}₀[${i + 1}]·cos θ − ${name}₀[${o + j + 1}]·sin θ`
      : `${name}[${i + 1}] = ${name}₀[${o + j + 1}]·sin θ + ${name}₀[${i + 1}]·cos θ`);
    L.T(sg < 0 ? `= ${term(raw[i])}·${f(c)} − ${term(raw[o + j])}·${f(sn)}` : `= ${term(raw[o + j])}·${f(sn)} + ${term(raw[i])}·${f(c)}`);
    L.R(out[i]);
    L.N(t('walk.ex.rope', { k: k + 1, p: tr.position }));
    return L.lines;
  };
  const qRaw = async (i) => {
    if (Ly.q_lin) return qkNormStep(t, tr, l, row).vectors[1].explain(i);  // q₀ is the normed q
    return cattnLines(t, row, Ly, l, i, 'q₀', Ly.q_raw[i]);
  };
  const angles = tr.rope_cos.map((c, k) => Math.atan2(tr.rope_sin[k], c));
  return {
    id: `l${l}-rope`, layer: l, title: t('walk.step.rope', { l: l + 1 }),
    formula: ['θ_i = p·base^(−2i/d)', '(a, b) → (a·cos θ_i − b·sin θ_i, a·sin θ_i + b·cos θ_i)'],
    facts: t('walk.ropeFacts', { p: tr.position, n: pairs, hs, pairing: halves ? '(i, i + d/2)' : '(2i, 2i + 1)' }),
    vectors: [
      { name: t('walk.angles'), values: angles, explain: null },
      { name: 'q₀', values: Ly.q_raw, explain: qRaw },
      { name: 'q', values: Ly.q, explain: turned(Ly.q_raw, Ly.q, 'q') },
      { name: 'k₀', values: Ly.k_raw, explain: null },
      { name: 'k', values: Ly.k, explain: turned(Ly.k_raw, Ly.k, 'k') },
    ],
  };
}

/** The attention step of layer l: q, each head's weights over the visible keys, the heads' contexts. */
function attentionStep(t, tr, l, row, kv) {
  const Ly = tr.layers[l];
  const NH = tr.config.n_head;
  const hs = headSize(tr.config);
  const n = tr.visible;
  const KC = (tr.n_kv_head ?? NH) * hs;  // a key's or value's width: n_kv_head heads
  const seen = tr.seen ?? Array(n).fill(1);
  const rope = !!Ly.q_raw;
  const qExplain = async (i) => {
    if (rope) return ropeStep(t, tr, l, row).vectors[2].explain(i);
    if (Ly.q_lin) return qkNormStep(t, tr, l, row).vectors[1].explain(i);
    return cattnLines(t, row, Ly, l, i, 'q', Ly.q[i]);
  };
  const headVec = (h) => ({
    name: `a (${t('walk.head', { h: h + 1 })})`, head: h, values: Ly.heads[h].weights, labels: tr.tokens.slice(0, n),
    explain: async (j) => {
      const H = Ly.heads[h];
      const g = H.kv_head ?? h;
      const L = lineBuilder();
      const q = slice(Ly.q, h * hs, hs);
      const keys = Ly.keys ?? (kv ? (await kv(l)).keys : null);
      if (!seen[j]) {  // the window hides this key (and it is not a sink)
        L.F(`s[${j + 1}] = −∞`);
        L.F(`a[${j + 1}] = 0`);
        L.N(t('walk.ex.hidden', { k: j + 1, w: tr.config.window, s: tr.config.sink ?? 0 }));
        return L.lines;
      }
      L.F(H.bias ? `s[${j + 1}] = q·k[${j + 1}] / √d − m·(p − ${j})` : `s[${j + 1}] = q·k[${j + 1}] / √d`);
      if (keys) L.dot(q, slice(keyRow(keys, j, KC), g * hs, hs));
      L.T(H.bias ? `= ${term(H.dots[j])}·${f(tr.scale)} + ${term(H.bias[j])}` : `= ${term(H.dots[j])}·${f(tr.scale)}`);
      L.R(H.scores[j]);
      const shown = H.scores.filter((_, k) => seen[k]);
      const mx = Math.max(...shown);
      L.F(`a[${j + 1}] = e^(s[${j + 1}] − max) / Σ_k e^(s[k] − max)`);
      L.T(`= e^(${f(H.scores[j])} − ${term(mx)}) / (${sumLine(shown.map((s) => `e^(${f(s - mx)})`))})`);
      L.R(H.weights[j]);
      L.N(t('walk.ex.key', { k: j + 1, tok: tr.tokens[j] ?? '' }));
      if (H.bias) L.N(t('walk.ex.alibi', { m: f(H.slope), d: tr.position - j }));
      if (g !== h) L.N(t('walk.ex.gqa', { h: h + 1, g: g + 1 }));
      if (keys) L.N(t('walk.ex.terms', { n: hs }));
      return L.lines;
    },
  });
  const ctxExplain = async (i) => {
    const h = Math.floor(i / hs);
    const d = i % hs;
    const H = Ly.heads[h];
    const L = lineBuilder();
    const values = Ly.values ?? (kv ? (await kv(l)).values : null);
    const g = H.kv_head ?? h;
    L.F(`y[${i + 1}] = Σ_j a[j]·v[j,${d + 1}]`);
    if (values) L.dot(H.weights, H.weights.map((_, j) => values[j * KC + g * hs + d]));
    L.R(Ly.atty[i]);
    L.N(t('walk.ex.ctx', { h: h + 1, d: d + 1 }));
    if (values) L.N(t('walk.ex.terms', { n: H.weights.length }));
    return L.lines;
  };
  const vectors = [{ name: 'q', values: Ly.q, explain: qExplain }];
  for (let h = 0; h < NH; h++) vectors.push(headVec(h));
  vectors.push({ name: 'y', values: Ly.atty, explain: ctxExplain });
  const facts = [t('walk.attnFacts', { n, NH, hs, scale: f(tr.scale) })];
  const NKV = tr.n_kv_head ?? NH;
  if (NKV !== NH) facts.push(t('walk.gqaFacts', { NKV, group: NH / NKV, map: Ly.heads.map((H, h) => `${h + 1}→${H.kv_head + 1}`).join(', ') }));
  if (Ly.heads[0]?.bias) facts.push(t('walk.alibiFacts', { slopes: Ly.heads.map((H) => f(H.slope)).join(', ') }));
  const hidden = seen.filter((x) => !x).length;
  if (tr.config.window) facts.push(t('walk.windowFacts', { w: tr.config.window, s: tr.config.sink ?? 0, hidden, n }));
  return {
    id: `l${l}-attn`, layer: l, title: t('walk.step.attn', { l: l + 1 }),
    formula: [rope ? 'q, k = RoPE(q₀, k₀)' : 'q, k, v = ln_1·W_attn + b',
      Ly.heads[0]?.bias ? 'a = softmax(q·kᵀ / √d − m·(p − j))' : 'a = softmax(q·kᵀ / √d)', 'y = a·v'],
    facts: facts.join(' '),
    vectors, heads: true,
  };
}

/** The residual sum r = x + y, each number explained. */
const residualExplain = (x, y, r, xn, yn, rn = 'r', head = (i) => `${rn}[${i + 1}] = ${xn}[${i + 1}] + ${yn}[${i + 1}]`) => (i) => {
  const L = lineBuilder();
  L.F(head(i));
  L.T(`= ${term(x[i])} + ${term(y[i])}`);
  L.R(r[i]);
  return L.lines;
};

/** GELU, exact (erf) or GPT-2's tanh form, as the model uses. */
function geluExplain(t, tr, Ly) {
  return (i) => {
    const x = Ly.fc[i];
    const L = lineBuilder();
    if (tr.activation === 'gelu_new') {
      const u = Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x);
      L.F(`g[${i + 1}] = 0.5·h·(1 + tanh(√(2/π)·(h + 0.044715·h³)))`);
      L.T(`= 0.5·${term(x)}·(1 + tanh(${f(u)}))`);
      L.R(Ly.act[i]);
      L.N(t('walk.ex.geluNew'));
    } else {
      L.F(`g[${i + 1}] = 0.5·h·(1 + erf(h / √2))`);
      L.T(`= 0.5·${term(x)}·(1 + erf(${f(x / Math.SQRT2)}))`);
      L.R(Ly.act[i]);
      L.N(t('walk.ex.gelu'));
    }
    return L.lines;
  };
}

/** One layer's steps after attention: c_proj and the residual; ln_2; the MLP and its residual. */
function layerRest(t, tr, l, row, xIn) {
  const Ly = tr.layers[l];
  const proj = async (i) => {
    const r = await row({ weight: 'attn.c_proj', layer: l, row: i });
    return matmulLines(t, 'o', 'y', i, Ly.atty, r.w, r.bias, Ly.attn_proj[i]);
  };
  const fc = async (i) => {
    const r = await row({ weight: 'c_fc', layer: l, row: i });
    return matmulLines(t, 'h', 'ln_2', i, Ly.ln_2.out, r.w, r.bias, Ly.fc[i]);
  };
  const mproj = async (i) => {
    const r = await row({ weight: 'mlp.c_proj', layer: l, row: i });
    return matmulLines(t, 'm', 'g', i, Ly.act, r.w, r.bias, Ly.mlp_proj[i]);
  };
  const rms = tr.config.norm === 'rmsnorm';
  const swiglu = !!Ly.silu;
  const H = Ly.act.length;
  const siluExplain = (i) => {
    const L = lineBuilder();
    const g = Ly.fc[i];
    L.F(`silu[${i + 1}] = gate[${i + 1}]·σ(gate[${i + 1}]) = gate / (1 + e^(−gate))`);
    L.T(`= ${term(g)} / (1 + e^(${f(-g)}))`);
    L.R(Ly.silu[i]);
    return L.lines;
  };
  const gluExplain = (i) => {
    const L = lineBuilder();
    L.F(`g[${i + 1}] = silu[${i + 1}]·up[${i + 1}]`);
    L.T(`= ${term(Ly.silu[i])}·${term(Ly.fc[H + i])}`);
    L.R(Ly.act[i]);
    L.N(t('walk.ex.swiglu'));
    return L.lines;
  };
  const mlpStep = swiglu ? {
    id: `l${l}-mlp`, layer: l, title: t('walk.step.swiglu', { l: l + 1 }),
    formula: ['gate, up = ln_2·W_gate, ln_2·W_up', 'g = silu(gate) ⊙ up', 'm = g·W_down', 'x′ = r + m'],
    facts: t('walk.swigluFacts', { n: H }),
    vectors: [
      { name: 'gate', values: Ly.fc.slice(0, H), explain: fc },
      { name: 'up', values: Ly.fc.slice(H), explain: async (i) => fc(H + i) },
      { name: 'silu(gate)', values: Ly.silu, explain: siluExplain },
      { name: 'g', values: Ly.act, explain: gluExplain },
      { name: 'm', values: Ly.mlp_proj, explain: mproj },
      { name: 'x′', values: Ly.residual3, explain: residualExplain(Ly.residual2, Ly.mlp_proj, Ly.residual3, 'r', 'm', 'x′') },
    ],
  } : null;
  return [
    {
      id: `l${l}-proj`, layer: l, title: t('walk.step.proj', { l: l + 1 }),
      formula: ['o = y·W_proj + b', 'r = x + o'],
      vectors: [
        { name: 'o', values: Ly.attn_proj, explain: proj },
        { name: 'x', values: xIn, explain: null },
        { name: 'r', values: Ly.residual2, explain: residualExplain(xIn, Ly.attn_proj, Ly.residual2, 'x', 'o') },
      ],
    },
    lnStep(t, `l${l}-ln_2`, t(rms ? 'walk.step.rms' : 'walk.step.ln', { l: l + 1, name: 'ln_2' }), Ly.residual2, Ly.ln_2, tr.ln_eps, 'ln_2', rms),
    mlpStep ?? {
      id: `l${l}-mlp`, layer: l, title: t('walk.step.mlp', { l: l + 1 }),
      formula: ['h = ln_2·W_fc + b', tr.activation === 'gelu_new' ? 'g = GELU_tanh(h)' : 'g = GELU(h)', 'm = g·W_proj + b', 'x′ = r + m'],
      facts: t(tr.activation === 'gelu_new' ? 'walk.mlpFactsNew' : 'walk.mlpFacts', { n: Ly.fc.length }),
      vectors: [
        { name: 'h', values: Ly.fc, explain: fc },
        { name: 'g', values: Ly.act, explain: geluExplain(t, tr, Ly) },
        { name: 'm', values: Ly.mlp_proj, explain: mproj },
        { name: 'x′', values: Ly.residual3, explain: residualExplain(Ly.residual2, Ly.mlp_proj, Ly.residual3, 'r', 'm', 'x′') },
      ],
    },
  ];
}

/** The last step: ln_f, the logits of the most likely tokens, their probabilities, the choice. */
function headStep(t, tr, row, x) {
  const ln = lnStep(t, 'ln_f', '', x, tr.ln_f, tr.ln_eps, 'ln_f', tr.config.norm === 'rmsnorm');
  const ids = tr.top.map((e) => e.id);
  const labels = tr.top.map((e) => e.text);
  const logitExplain = async (k) => {
    const r = await row({ weight: 'lm_head', row: ids[k] });
    const L = lineBuilder();
    L.F(`z[${ids[k]}] = Σ_j ln_f[j]·wte[${ids[k]},j]`);
    L.dot(tr.ln_f.out, r.w);
    L.R(tr.top[k].logit);
    L.N(t('walk.ex.tied'));
    return L.lines;
  };
  const pExplain = (k) => {
    const L = lineBuilder();
    L.F(`p[${ids[k]}] = e^(z[${ids[k]}] − max) / Σ_v e^(z[v] − max)`);
    L.T(`= e^(${f(tr.top[k].logit)} − ${term(tr.max_logit)}) / ${f(tr.sum_exp)}`);
    L.R(tr.top[k].p);
    L.N(t('walk.ex.softmax', { V: tr.vocab_size }));
    return L.lines;
  };
  return {
    id: 'head', title: t('walk.step.head'),
    formula: [ln.formula[0], 'z = ln_f·wteᵀ', 'p = softmax(z)'],
    facts: `${ln.facts} ${t('walk.headFacts', { tok: tr.top[0].text, p: f(tr.top[0].p), V: tr.vocab_size })}`,
    vectors: [
      ...ln.vectors,
      { name: 'z', values: tr.top.map((e) => e.logit), labels, explain: logitExplain },
      { name: 'p', values: tr.top.map((e) => e.p), labels, explain: pExplain },
    ],
  };
}

/**
 * The sampled token: the position's logits reshaped by the temperature, top-k and top-p, and the
 * seeded draw that picked the next token (the core's, as generation draws its first token);
 * greedy draws no number and takes the most likely token.
 */
function sampleStep(t, tr) {
  const S = tr.sample;
  const d = S.draw;
  const labels = S.top.map((e) => e.text);
  const nice = (x) => String(+x.toPrecision(4)); // a setting as typed (0.8, not 0.8000)
  const T = nice(S.temperature);
  const pExplain = (k) => {
    const e = S.top[k];
    const L = lineBuilder();
    if (S.greedy) {
      L.F(`p′[${e.id}] = ${e.id === d.token ? 1 : 0}`);
      L.N(t(e.id === d.token ? 'walk.ex.greedyPick' : 'walk.ex.greedyDrop'));
      return L.lines;
    }
    if (!e.kept) {
      L.F(`p′[${e.id}] = 0`);
      L.N(t('walk.ex.dropped', { p: f(e.p_full) }));
      return L.lines;
    }
    L.F(`p′[${e.id}] = e^((z[${e.id}] − max) / T) / S`);
    L.T(`= e^((${f(e.logit)} − ${term(S.max_logit)}) / ${T}) / ${f(d.sum)}`);
    L.R(e.p);
    L.N(t('walk.ex.kept', { kept: S.kept, p: f(e.p_full) }));
    return L.lines;
  };
  const drawExplain = () => {
    const L = lineBuilder();
    if (S.greedy) {
      L.F(`t = argmax_v z[v]`);
      L.N(t('walk.ex.greedy', { tok: d.text }));
      return L.lines;
    }
    L.F('coin = u·S');
    L.T(`= ${f(d.u)}·${f(d.sum)}`);
    L.R(d.coin);
    L.F(`${f(d.from)} ≤ coin < ${f(d.to)}`);
    L.F(`u ∈ [${f(d.from)} / S, ${f(d.to)} / S)`);
    L.T(`= [${f(d.cum_from)}, ${f(d.cum_to)})`);
    L.N(t('walk.ex.draw', { tok: d.text, kept: d.kept }));
    return L.lines;
  };
  const formula = S.greedy
    ? ['t = argmax_v z[v]']
    : ['p′[v] = e^((z[v] − max) / T) / S', 'S = Σ_v e^((z[v] − max) / T) ⟨ over the kept tokens⟩', 'coin = u·S ⟨, u uniform in [0, 1)⟩'];
  const facts = S.greedy
    ? t('walk.sampleFactsGreedy', { seed: S.seed })
    : t('walk.sampleFacts', { T, k: S.top_k || '—', pp: S.top_p < 1 ? nice(S.top_p) : '—', seed: S.seed, kept: S.kept, V: tr.vocab_size, dropped: f(S.dropped_mass) });
  return {
    id: 'sample', title: t('walk.step.sample'),
    formula,
    facts,
    vectors: [
      { name: 'p′', values: S.top.map((e) => e.p), labels, explain: pExplain, mark: S.top.findIndex((e) => e.id === d.token) },
      { name: S.greedy ? t('walk.pick') : 'u', values: [S.greedy ? S.drawn.p : d.u], labels: S.greedy ? [d.text] : null, explain: drawExplain },
    ],
    draw: { ...d, greedy: S.greedy, rank: S.drawn.rank },
  };
}

/**
 * The steps of a trace, in order. row(spec) → a promise of {w, bias} (the worker's weight_row).
 * Each step: {id, title, formula: [lines], facts?, vectors: [{name, values, labels?, head?,
 * explain(i) → lines or a promise of them, or null for a repeated input}], layer?, heads?, draw?}
 * (draw: the sampled token's draw, on the last step).
 */
export function walkSteps(t, tr, row, kv) {
  const tok = tr.tokens[tr.position];
  const rms = tr.config.norm === 'rmsnorm';
  const steps = [tr.wpe == null ? {
    id: 'embed', title: t('walk.step.embedTok'),
    formula: ['x = wte[t]'],
    facts: t('walk.embedFactsTok', { tok, id: tr.token, p: tr.position, pos: tr.config.pos }),
    vectors: [{ name: 'x', values: tr.encoded, explain: null }],
  } : {
    id: 'embed', title: t('walk.step.embed'),
    formula: ['x = wte[t] + wpe[p]'],
    facts: t('walk.embedFacts', { tok, id: tr.token, p: tr.position }),
    vectors: [
      { name: 'wte[t]', values: tr.wte, explain: null },
      { name: 'wpe[p]', values: tr.wpe, explain: null },
      { name: 'x', values: tr.encoded, explain: residualExplain(tr.wte, tr.wpe, tr.encoded, '', '', 'x', (i) => `x[${i + 1}] = wte[t,${i + 1}] + wpe[p,${i + 1}]`) },
    ],
  }];
  let x = tr.encoded;
  tr.layers.forEach((Ly, l) => {
    steps.push({ ...lnStep(t, `l${l}-ln_1`, t(rms ? 'walk.step.rms' : 'walk.step.ln', { l: l + 1, name: 'ln_1' }), x, Ly.ln_1, tr.ln_eps, 'ln_1', rms), layer: l });
    if (Ly.q_lin) steps.push(qkNormStep(t, tr, l, row));
    if (Ly.q_raw) steps.push(ropeStep(t, tr, l, row));
    steps.push(attentionStep(t, tr, l, row, kv));
    steps.push(...layerRest(t, tr, l, row, x));
    x = Ly.residual3;
  });
  steps.push(headStep(t, tr, row, x));
  if (tr.sample) steps.push(sampleStep(t, tr));
  return steps;
}
