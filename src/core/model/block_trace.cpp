// block_trace.cpp — one position through the whole model, in the reference tier (see block_trace.h).
#include "core/model/block_trace.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/kernels/kernels.h"
#include "core/tensor/ops.h"

namespace ap {

BlockMath block_math(const GPTConfig& config) {
  return BlockMath{config.ln_eps, config.activation, config.norm, config.mlp};
}

void activation_forward(float* out, const float* inp, int N, Activation a) {
  if (a == Activation::gelu_new) kernels::reference.gelu_new_forward(out, inp, N);
  else kernels::reference.gelu_forward(out, inp, N);
}

namespace {

using Vec = std::vector<float>;

Vec row(const float* base, int r, int width) {
  const float* p = base + static_cast<size_t>(r) * width;
  return Vec(p, p + width);
}

// RMSNorm over every row of x (N, C) into out, as the reference kernel, and row p's trace (var:
// the mean square, in the kernel's order; x̂ = x·rstd, so out = x̂·γ bit for bit).
void rmsnorm(float* out, LayerNormTrace& tr, const float* x, const float* w, int N, int C, int p, float eps) {
  Vec rstd(static_cast<size_t>(N));
  kernels::reference.rmsnorm_forward(out, rstd.data(), x, w, N, C, eps);
  tr.x = row(x, p, C);
  float ss = 0.0f;
  for (int c = 0; c < C; ++c) ss += tr.x[static_cast<size_t>(c)] * tr.x[static_cast<size_t>(c)];
  tr.mean = 0.0f;
  tr.var = ss / static_cast<float>(C);
  tr.rstd = rstd[static_cast<size_t>(p)];
  tr.xhat.resize(static_cast<size_t>(C));
  for (int c = 0; c < C; ++c) tr.xhat[static_cast<size_t>(c)] = tr.x[static_cast<size_t>(c)] * tr.rstd;
  tr.out = row(out, p, C);
}

// LayerNorm (or the block's RMSNorm) over every row of x (N, C) into out, as the reference
// kernel, and row p's trace.
void layernorm(float* out, LayerNormTrace& tr, const float* x, const float* w, const float* b, int N, int C, int p,
               float eps, Norm norm = Norm::layernorm) {
  if (norm == Norm::rmsnorm) return rmsnorm(out, tr, x, w, N, C, p, eps);
  Vec mean(static_cast<size_t>(N)), rstd(static_cast<size_t>(N));
  layernorm_forward(out, mean.data(), rstd.data(), x, w, b, N, C, eps);
  tr.x = row(x, p, C);
  // the kernel's own arithmetic, for what it does not keep: the variance and x̂
  float m = 0.0f;
  for (int c = 0; c < C; ++c) m += tr.x[static_cast<size_t>(c)];
  m /= static_cast<float>(C);
  float v = 0.0f;
  for (int c = 0; c < C; ++c) v += (tr.x[static_cast<size_t>(c)] - m) * (tr.x[static_cast<size_t>(c)] - m);
  v /= static_cast<float>(C);
  tr.mean = mean[static_cast<size_t>(p)];
  tr.var = v;
  tr.rstd = rstd[static_cast<size_t>(p)];
  tr.xhat.resize(static_cast<size_t>(C));
  for (int c = 0; c < C; ++c) tr.xhat[static_cast<size_t>(c)] = (tr.x[static_cast<size_t>(c)] - tr.mean) * tr.rstd;
  tr.out = row(out, p, C);
}

// What a head row reads: the qkv rows (width W, k at column C = A, v at A + KC), the keys the window
// and its sinks leave (seen), the scale and softmax, and ALiBi's slope (0: none).
struct RowIn {
  const float* qkv;
  int W, C, KC, hs;
  const std::vector<int>* seen;
  float scale;
  bool stable;
};

// Row p of head h (reading key/value head kv) as the reference kernel's attend_row computes it:
// the seen keys' scores in order (sinks, then the window) through one softmax.
HeadTrace head_row(const RowIn& in, int p, int h, int kv, float slope) {
  const int n = static_cast<int>(in.seen->size()), hs = in.hs;
  const float* q = in.qkv + static_cast<size_t>(p) * in.W + h * hs;
  HeadTrace t;
  t.kv_head = kv;
  t.slope = slope;
  t.dots.resize(static_cast<size_t>(n));
  t.scores.resize(static_cast<size_t>(n));
  if (slope != 0.0f) t.bias.resize(static_cast<size_t>(n));
  Vec seen_scores;
  for (int j = 0; j < n; ++j) {
    const size_t u = static_cast<size_t>(j);
    const float* kj = in.qkv + u * in.W + in.C + kv * hs;
    float s = 0.0f;
    for (int i = 0; i < hs; ++i) s += q[i] * kj[i];
    t.dots[u] = s;
    float sc = s * in.scale;
    if (slope != 0.0f) {
      t.bias[u] = -slope * static_cast<float>(p - j);
      sc = sc + t.bias[u];
    }
    t.scores[u] = (*in.seen)[u] ? sc : -std::numeric_limits<float>::infinity();
    if ((*in.seen)[u]) seen_scores.push_back(sc);
  }
  Vec w(seen_scores.size());
  const int m = static_cast<int>(w.size());
  if (in.stable)
    softmax_rows_forward(w.data(), nullptr, seen_scores.data(), 1, m);
  else
    softmax_rows_naive_forward(w.data(), nullptr, seen_scores.data(), 1, m);
  t.weights.assign(static_cast<size_t>(n), 0.0f);
  for (int j = 0, r = 0; j < n; ++j)
    if ((*in.seen)[static_cast<size_t>(j)]) t.weights[static_cast<size_t>(j)] = w[static_cast<size_t>(r++)];
  t.context.assign(static_cast<size_t>(hs), 0.0f);
  for (int j = 0; j < n; ++j) {
    if (!(*in.seen)[static_cast<size_t>(j)]) continue;
    const float a = t.weights[static_cast<size_t>(j)];
    const float* vj = in.qkv + static_cast<size_t>(j) * in.W + in.C + in.KC + kv * hs;
    for (int i = 0; i < hs; ++i) t.context[static_cast<size_t>(i)] += a * vj[i];
  }
  return t;
}

}  // namespace

BlockTrace block_trace(const GPT& model, const int* ids, int T, int position, int kv_layer) {
  const GPTConfig& cfg = model.config();
  if (T < 1 || T > cfg.block_size)
    throw InputError("the prompt has " + std::to_string(T) + " tokens: it must have 1 to block_size = " +
                         std::to_string(cfg.block_size),
                     "prompt");
  if (position < 0 || position >= T)
    throw InputError("position is " + std::to_string(position) + ": the prompt's positions are 0 to " +
                         std::to_string(T - 1),
                     "position");
  for (int i = 0; i < T; ++i)
    if (ids[i] < 0 || ids[i] >= cfg.vocab_size)
      throw InputError("ids has " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                           ", outside the vocabulary of " + std::to_string(cfg.vocab_size) + " tokens",
                       "ids");
  const kernels::Kernels& k = kernels::reference;
  const int C = cfg.n_embd, NH = cfg.n_head, hs = cfg.head_dim(), V = cfg.vocab_size, N = position + 1, p = position;
  const int NKV = cfg.kv_head(), KC = NKV * hs, W = cfg.qkv_width(), FC = cfg.fc_width(), H = cfg.inner();
  const int A = cfg.attn_width(), NR = NH + NKV;
  const kernels::AttnOptions opt = model.attention_options();
  const GPTParams& w = model.vectors();  // norms, biases, wpe: a typed model stays typed
  using M = GPT::Matrix;
  BlockTrace tr;
  tr.math = block_math(cfg);
  tr.position = p;
  tr.token = ids[p];
  tr.T = T;
  tr.visible = kernels::visible_keys(p, cfg.mask);
  tr.n_kv_head = NKV;
  const kernels::RowKeys rk = kernels::row_keys(p, tr.visible, opt);
  for (int j = 0; j < tr.visible; ++j) tr.seen.push_back(j < rk.sink || j >= rk.lo ? 1 : 0);
  tr.scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const kernels::RopeTable rope = model.rope_tables();
  if (rope.d_rot > 0) {
    const size_t pairs = static_cast<size_t>(rope.d_rot / 2), at = static_cast<size_t>(p) * pairs;
    tr.rope_cos.assign(rope.cos + at, rope.cos + at + pairs);
    tr.rope_sin.assign(rope.sin + at, rope.sin + at + pairs);
  }
  const bool keep_kv = static_cast<long long>(tr.visible) * C * cfg.n_layer <= kMaxTraceKV;

  const size_t NC = static_cast<size_t>(N) * C, Nz = static_cast<size_t>(N);
  Vec x(NC), ln(NC), qkv(Nz * W), atty(Nz * A), proj(NC), fc(Nz * FC), act(Nz * H), scratch(Nz + 1);
  Vec qk_in(cfg.qk_norm ? Nz * NR * hs : 0), qk_rstd(cfg.qk_norm ? Nz * NR : 0);
  model.embed(k, x.data(), ids, 1, N, 0);  // (N, C)
  tr.wte.resize(static_cast<size_t>(C));
  model.matrix_rows(M::wte, 0, ids[p], 1, tr.wte.data());
  if (w.wpe) tr.wpe = row(w.wpe, p, C);
  tr.encoded = row(x.data(), p, C);
  const RowIn in{qkv.data(), W, A, KC, hs, &tr.seen, tr.scale, opt.stable_softmax};
  for (int l = 0; l < cfg.n_layer; ++l) {
    const BlockParams& b = w.h[static_cast<size_t>(l)];
    LayerTrace lt;
    layernorm(ln.data(), lt.ln_1, x.data(), b.ln_1_w, b.ln_1_b, N, C, p, tr.math.ln_eps, cfg.norm);
    model.matrix_forward(k, qkv.data(), ln.data(), M::c_attn, l, N);  // (N, W): q | k | v
    const float* qp = qkv.data() + static_cast<size_t>(p) * W;
    if (cfg.qk_norm) {  // Qwen3: each q and k head through its RMSNorm, as the forward
      lt.q_lin.assign(qp, qp + A);
      lt.k_lin.assign(qp + A, qp + A + KC);
      model.qk_norm_forward(k, qkv.data(), qk_in.data(), qk_rstd.data(), b, N);
      const float* rs = qk_rstd.data() + static_cast<size_t>(p) * NR;
      lt.q_rstd.assign(rs, rs + NH);
      lt.k_rstd.assign(rs + NH, rs + NR);
    }
    if (rope.d_rot > 0) {
      lt.q_raw.assign(qp, qp + A);
      lt.k_raw.assign(qp + A, qp + A + KC);
      k.rope_forward(qkv.data(), 1, N, W, NR, hs, 0, rope);  // q and k turned, as the forward
    }
    lt.q.assign(qp, qp + A);
    lt.k.assign(qp + A, qp + A + KC);
    lt.v.assign(qp + A + KC, qp + A + 2 * KC);
    if (keep_kv || l == kv_layer)
      for (int j = 0; j < tr.visible; ++j) {
        const float* r = qkv.data() + static_cast<size_t>(j) * W;
        lt.keys.insert(lt.keys.end(), r + A, r + A + KC);
        lt.values.insert(lt.values.end(), r + A + KC, r + A + 2 * KC);
      }
    k.attention_forward_infer(atty.data(), scratch.data(), qkv.data(), 1, N, A, NH, opt);  // (N, A)
    for (int h = 0; h < NH; ++h)
      lt.heads.push_back(head_row(in, p, h, h / (NH / NKV), opt.alibi_slopes ? opt.alibi_slopes[h] : 0.0f));
    lt.atty = row(atty.data(), p, A);
    model.matrix_forward(k, proj.data(), atty.data(), M::attn_c_proj, l, N);  // (N, C)
    lt.attn_proj = row(proj.data(), p, C);
    k.residual_forward(x.data(), x.data(), proj.data(), static_cast<int>(NC));  // x + attn(…)
    lt.residual2 = row(x.data(), p, C);
    layernorm(ln.data(), lt.ln_2, x.data(), b.ln_2_w, b.ln_2_b, N, C, p, tr.math.ln_eps, cfg.norm);
    model.matrix_forward(k, fc.data(), ln.data(), M::c_fc, l, N);  // (N, FC)
    lt.fc = row(fc.data(), p, FC);
    if (cfg.mlp == Mlp::swiglu) {
      k.swiglu_forward(act.data(), fc.data(), N, H);
      lt.silu.resize(static_cast<size_t>(H));  // the kernel's gate·σ(gate), σ(g) = 1/(1 + e^(−g))
      for (int i = 0; i < H; ++i) {
        const float g = lt.fc[static_cast<size_t>(i)];
        lt.silu[static_cast<size_t>(i)] = g * (1.0f / (1.0f + exp_f32(-g)));
      }
    } else {
      activation_forward(act.data(), fc.data(), static_cast<int>(Nz * H), tr.math.activation);
    }
    lt.act = row(act.data(), p, H);
    model.matrix_forward(k, proj.data(), act.data(), M::mlp_c_proj, l, N);  // (N, C)
    lt.mlp_proj = row(proj.data(), p, C);
    k.residual_forward(x.data(), x.data(), proj.data(), static_cast<int>(NC));  // x + mlp(…)
    lt.residual3 = row(x.data(), p, C);
    tr.layers.push_back(std::move(lt));
  }
  // ln_f and the head on this position alone (every kernel here works row by row)
  const float* xp = x.data() + static_cast<size_t>(p) * C;
  Vec lnf(static_cast<size_t>(C));
  layernorm(lnf.data(), tr.ln_f, xp, w.ln_f_w, w.ln_f_b, 1, C, 0, tr.math.ln_eps, cfg.norm);
  tr.logits.resize(static_cast<size_t>(V));
  model.matrix_forward(k, tr.logits.data(), lnf.data(), M::head, 0, 1);  // wte, or an untied lm_head
  tr.probs.resize(static_cast<size_t>(V));
  softmax_rows_forward(tr.probs.data(), nullptr, tr.logits.data(), 1, V);
  return tr;
}

}  // namespace ap
