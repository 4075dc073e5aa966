// block_trace.cpp — one position through the whole model, in the reference tier (see block_trace.h).
#include "core/model/block_trace.h"

#include <cmath>
#include <cstring>

#include "core/kernels/kernels.h"
#include "core/tensor/ops.h"

namespace ap {

BlockMath block_math(const GPTConfig& config) { return BlockMath{config.ln_eps, config.activation}; }

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

// LayerNorm over every row of x (N, C) into out, as the reference kernel, and row p's trace.
void layernorm(float* out, LayerNormTrace& tr, const float* x, const float* w, const float* b, int N, int C, int p,
               float eps) {
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

// Row p of one head as the reference kernel's attend_row computes it.
HeadTrace head_row(const float* qkv, int p, int n, int C, int h, int hs, float scale, bool stable) {
  const int C3 = 3 * C;
  const float* q = qkv + static_cast<size_t>(p) * C3 + h * hs;
  HeadTrace t;
  t.dots.resize(static_cast<size_t>(n));
  t.scores.resize(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) {
    const float* kj = qkv + static_cast<size_t>(j) * C3 + C + h * hs;
    float s = 0.0f;
    for (int i = 0; i < hs; ++i) s += q[i] * kj[i];
    t.dots[static_cast<size_t>(j)] = s;
    t.scores[static_cast<size_t>(j)] = s * scale;
  }
  t.weights.resize(static_cast<size_t>(n));
  if (stable)
    softmax_rows_forward(t.weights.data(), nullptr, t.scores.data(), 1, n);
  else
    softmax_rows_naive_forward(t.weights.data(), nullptr, t.scores.data(), 1, n);
  t.context.assign(static_cast<size_t>(hs), 0.0f);
  for (int j = 0; j < n; ++j) {
    const float a = t.weights[static_cast<size_t>(j)];
    const float* vj = qkv + static_cast<size_t>(j) * C3 + 2 * C + h * hs;
    for (int i = 0; i < hs; ++i) t.context[static_cast<size_t>(i)] += a * vj[i];
  }
  return t;
}

}  // namespace

BlockTrace block_trace(const GPT& model, const int* ids, int T, int position, int kv_layer) {
  const GPTConfig& cfg = model.config();
  if (!cfg.gpt2_block())
    throw InputError("the block walk shows the GPT-2 block (learned positions, LayerNorm, the GELU MLP, every head "
                     "its own keys, no window); this model's variants are not in it yet",
                     "model");
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
  const int C = cfg.n_embd, NH = cfg.n_head, hs = C / NH, V = cfg.vocab_size, N = position + 1, p = position;
  const kernels::AttnOptions opt{cfg.mask, cfg.stable_softmax};
  const GPTParams& w = model.p();
  BlockTrace tr;
  tr.math = block_math(cfg);
  tr.position = p;
  tr.token = ids[p];
  tr.T = T;
  tr.visible = kernels::visible_keys(p, cfg.mask);
  tr.scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const bool keep_kv = static_cast<long long>(tr.visible) * C * cfg.n_layer <= kMaxTraceKV;

  const size_t NC = static_cast<size_t>(N) * C;
  Vec x(NC), ln(NC), qkv(3 * NC), atty(NC), proj(NC), fc(4 * NC), act(4 * NC), scratch(static_cast<size_t>(N) + 1);
  k.encoder_forward(x.data(), ids, w.wte, w.wpe, 1, N, C);  // (N, C)
  tr.wte = row(w.wte, ids[p], C);
  tr.wpe = row(w.wpe, p, C);
  tr.encoded = row(x.data(), p, C);
  for (int l = 0; l < cfg.n_layer; ++l) {
    const BlockParams& b = w.h[static_cast<size_t>(l)];
    LayerTrace lt;
    layernorm(ln.data(), lt.ln_1, x.data(), b.ln_1_w, b.ln_1_b, N, C, p, tr.math.ln_eps);
    k.matmul_forward(qkv.data(), ln.data(), b.c_attn_w, b.c_attn_b, N, C, 3 * C);  // (N, 3C)
    const float* qp = qkv.data() + static_cast<size_t>(p) * 3 * C;
    lt.q.assign(qp, qp + C);
    lt.k.assign(qp + C, qp + 2 * C);
    lt.v.assign(qp + 2 * C, qp + 3 * C);
    if (keep_kv || l == kv_layer)
      for (int j = 0; j < tr.visible; ++j) {
        const float* r = qkv.data() + static_cast<size_t>(j) * 3 * C;
        lt.keys.insert(lt.keys.end(), r + C, r + 2 * C);
        lt.values.insert(lt.values.end(), r + 2 * C, r + 3 * C);
      }
    k.attention_forward_infer(atty.data(), scratch.data(), qkv.data(), 1, N, C, NH, opt);  // (N, C)
    for (int h = 0; h < NH; ++h) lt.heads.push_back(head_row(qkv.data(), p, tr.visible, C, h, hs, tr.scale, opt.stable_softmax));
    lt.atty = row(atty.data(), p, C);
    k.matmul_forward(proj.data(), atty.data(), b.attn_c_proj_w, b.attn_c_proj_b, N, C, C);
    lt.attn_proj = row(proj.data(), p, C);
    k.residual_forward(x.data(), x.data(), proj.data(), static_cast<int>(NC));  // x + attn(…)
    lt.residual2 = row(x.data(), p, C);
    layernorm(ln.data(), lt.ln_2, x.data(), b.ln_2_w, b.ln_2_b, N, C, p, tr.math.ln_eps);
    k.matmul_forward(fc.data(), ln.data(), b.c_fc_w, b.c_fc_b, N, C, 4 * C);  // (N, 4C)
    lt.fc = row(fc.data(), p, 4 * C);
    activation_forward(act.data(), fc.data(), static_cast<int>(4 * NC), tr.math.activation);
    lt.act = row(act.data(), p, 4 * C);
    k.matmul_forward(proj.data(), act.data(), b.mlp_c_proj_w, b.mlp_c_proj_b, N, 4 * C, C);
    lt.mlp_proj = row(proj.data(), p, C);
    k.residual_forward(x.data(), x.data(), proj.data(), static_cast<int>(NC));  // x + mlp(…)
    lt.residual3 = row(x.data(), p, C);
    tr.layers.push_back(std::move(lt));
  }
  // ln_f and the head on this position alone (every kernel here works row by row)
  const float* xp = x.data() + static_cast<size_t>(p) * C;
  Vec lnf(static_cast<size_t>(C));
  layernorm(lnf.data(), tr.ln_f, xp, w.ln_f_w, w.ln_f_b, 1, C, 0, tr.math.ln_eps);
  tr.logits.resize(static_cast<size_t>(V));
  k.matmul_forward(tr.logits.data(), lnf.data(), w.wte, nullptr, 1, C, V);
  tr.probs.resize(static_cast<size_t>(V));
  softmax_rows_forward(tr.probs.data(), nullptr, tr.logits.data(), 1, V);
  return tr;
}

}  // namespace ap
