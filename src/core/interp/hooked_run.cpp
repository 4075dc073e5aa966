// hooked_run.cpp — the hooked single-sequence forward and its backward (see hooked_run.h).
#include "core/interp/hooked_run.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/base/input_error.h"
#include "core/kernels/kernels.h"

namespace ap::interp {

namespace {

size_t sz(long long v) { return static_cast<size_t>(v); }

// Sizes every buffer of c for the model and T (views stay unset: run fills them).
void size_cache(RunCache& c, const GPTConfig& g, int T) {
  const size_t L = sz(g.n_layer), C = sz(g.n_embd), NH = sz(g.n_head), V = sz(g.vocab_size), t = sz(T);
  const size_t A = sz(g.attn_width()), NR = g.qk_norm ? NH + sz(g.kv_head()) : 0;
  c.T = T;
  c.resid.resize((L + 1) * t * C);
  for (auto* v : {&c.mid, &c.mlp, &c.ln1, &c.ln2}) v->resize(L * t * C);
  c.z.resize(L * t * A);
  c.qk_in.resize(L * t * NR * sz(g.head_dim()));
  c.qk_rstd.resize(L * t * NR);
  for (auto* v : {&c.ln1_mean, &c.ln1_rstd, &c.ln2_mean, &c.ln2_rstd}) v->resize(L * t);
  c.att.resize(L * NH * t * t);
  c.qkv.resize(L * t * sz(g.qkv_width()));
  c.fch.resize(L * t * sz(g.fc_width()));
  c.fch_act.resize(L * t * sz(g.inner()));
  c.ln_f_mean.resize(t);
  c.ln_f_rstd.resize(t);
  c.logits.resize(t * V);
}

// The rows of T whose logits a run computes: all, or one.
void logits_rows(int T, int only, int& first, int& n) {
  first = only >= 0 && only < T ? only : 0;
  n = only >= 0 && only < T ? 1 : T;
}

}  // namespace

int site_width(const GPTConfig& g, Site site) { return site == Site::z ? g.attn_width() : g.n_embd; }

void check_run(const GPT& model, const std::vector<int>& ids) {
  const GPTConfig& g = model.config();
  if (ids.empty()) throw InputError("the prompt has no tokens", "ids");
  if (ids.size() > sz(g.block_size))
    throw InputError("the prompt has " + std::to_string(ids.size()) + " tokens, more than the model's context of " +
                         std::to_string(g.block_size),
                     "ids");
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= g.vocab_size)
      throw InputError("token " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                           " is outside the vocabulary of " + std::to_string(g.vocab_size),
                       "ids");
}

void run(const GPT& model, const std::vector<int>& ids, RunCache& c, const Hook& hook, int start,
         const RunCache* from, int only_row) {
  check_run(model, ids);
  const GPTConfig& g = model.config();
  const GPTParams& p = model.vectors();  // norms and biases: a typed model stays typed
  using M = GPT::Matrix;
  const int T = static_cast<int>(ids.size()), C = g.n_embd, NH = g.n_head, V = g.vocab_size, L = g.n_layer;
  const int W = g.qkv_width(), FC = g.fc_width(), H = g.inner(), hs = g.head_dim(), NR = NH + g.kv_head();
  const int A = g.attn_width(), QK = g.qk_norm ? NR : 0;
  if (start < 0 || start > L) throw InputError("the start layer must be between 0 and n_layer", "layer");
  if (start > 0) {
    if (!from || from->T != T) throw InputError("a run from a later layer needs a cache of the same length", "layer");
    if (&c != from) c = *from;
  } else {
    size_cache(c, g, T);
  }
  c.ids = ids;
  const kernels::Kernels& k = kernels::active();
  const kernels::AttnOptions opt = model.attn_options();
  const size_t TC = sz(T) * sz(C), TA = sz(T) * sz(A);
  if (start == 0) model.embed(k, c.resid.data(), ids.data(), 1, T, 0);  // wte (+ wpe with learned positions)
  if (hook) hook(Site::resid, start, c.resid.data() + sz(start) * TC);
  for (int l = start; l < L; ++l) {
    const BlockParams& w = p.h[sz(l)];
    const size_t at = sz(l) * TC, row = sz(l) * sz(T);
    const float* x = c.resid.data() + at;
    float* ln1 = c.ln1.data() + at;
    float* qkv = c.qkv.data() + row * sz(W);
    float* z = c.z.data() + sz(l) * TA;
    float* mid = c.mid.data() + at;
    model.norm_forward(k, ln1, c.ln1_mean.data() + row, c.ln1_rstd.data() + row, x, w.ln_1_w, w.ln_1_b, T);
    model.matrix_forward(k, qkv, ln1, M::c_attn, l, T);                            // (T, W): q | k | v
    if (g.qk_norm)  // each q and k head through its RMSNorm, before the turn
      model.qk_norm_forward(k, qkv, c.qk_in.data() + row * sz(QK) * sz(hs), c.qk_rstd.data() + row * sz(QK), w, T);
    if (g.pos == Positions::rope) k.rope_forward(qkv, 1, T, W, NR, hs, 0, model.rope_table());  // q, k turned
    k.attention_forward(z, c.att.data() + sz(l) * sz(NH) * sz(T) * sz(T), qkv, 1, T, A, NH, opt);  // (T, A)
    if (hook) hook(Site::z, l, z);
    model.matrix_forward(k, mid, z, M::attn_c_proj, l, T);                          // (T, C)
    k.residual_forward(mid, x, mid, T * C);                                        // resid + attn(…)
    float* ln2 = c.ln2.data() + at;
    float* fch = c.fch.data() + row * sz(FC);
    float* act = c.fch_act.data() + row * sz(H);
    float* mlp = c.mlp.data() + at;
    model.norm_forward(k, ln2, c.ln2_mean.data() + row, c.ln2_rstd.data() + row, mid, w.ln_2_w, w.ln_2_b, T);
    model.matrix_forward(k, fch, ln2, M::c_fc, l, T);                               // (T, FC)
    model.mlp_act_forward(k, act, fch, T);                                         // (T, H)
    model.matrix_forward(k, mlp, act, M::mlp_c_proj, l, T);                         // (T, C)
    if (hook) hook(Site::mlp, l, mlp);
    float* next = c.resid.data() + at + TC;
    k.residual_forward(next, mid, mlp, T * C);                                     // mid + mlp(…)
    if (hook) hook(Site::resid, l + 1, next);
  }
  // The final norm and the unembedding: of every position, or of only_row alone (its logits row
  // set, the others left as they were): a patched run reads one position's.
  int first = 0, n = T;
  logits_rows(T, only_row, first, n);
  std::vector<float> lnf(sz(n) * sz(C));
  model.norm_forward(k, lnf.data(), c.ln_f_mean.data() + first, c.ln_f_rstd.data() + first,
                     c.resid.data() + sz(L) * TC + sz(first) * sz(C), p.ln_f_w, p.ln_f_b, n);
  model.matrix_forward(k, c.logits.data() + sz(first) * sz(V), lnf.data(), M::head, 0, n);  // (n, V)
}

void backward(const GPT& model, const RunCache& c, int pos, int a, int b, RunGrads& out) {
  const GPTConfig& g = model.config();
  const GPTParams& p = model.vectors();  // norms: a typed model stays typed
  using M = GPT::Matrix;
  const int T = c.T, C = g.n_embd, NH = g.n_head, L = g.n_layer, V = g.vocab_size;
  const int W = g.qkv_width(), FC = g.fc_width(), H = g.inner(), hs = g.head_dim(), NR = NH + g.kv_head();
  const int A = g.attn_width(), QK = g.qk_norm ? NR : 0;
  if (pos < 0 || pos >= T) throw InputError("the position must be in the prompt", "position");
  if (a < 0 || a >= V || b >= V) throw InputError("the tokens of the metric must be in the vocabulary", "token");
  const kernels::Kernels& k = kernels::reference;
  const kernels::AttnOptions opt = model.attn_options();
  const size_t TC = sz(T) * sz(C), TA = sz(T) * sz(A);
  out.resid.assign((sz(L) + 1) * TC, 0.0f);
  out.mid.assign(sz(L) * TC, 0.0f);
  out.z.assign(sz(L) * TA, 0.0f);
  std::vector<float> dln(TC, 0.0f), dfa(sz(T) * sz(H)), dfc(sz(T) * sz(FC)), dqkv(sz(T) * sz(W));
  std::vector<float> dqk(sz(QK) * sz(hs));
  std::vector<float> scratch(k.attention_backward_scratch(1, T, A, NH));
  // m = logits[pos][a] − logits[pos][b], logits = ln_f(x) · Uᵀ: ∂m/∂ln_f(x)[pos] = U[a] − U[b]
  std::vector<float> ua(sz(C)), ub(sz(C), 0.0f);  // U's rows a and b (U = wte, or lm_head when untied)
  model.matrix_rows(M::head, 0, a, 1, ua.data());
  if (b >= 0) model.matrix_rows(M::head, 0, b, 1, ub.data());
  for (int i = 0; i < C; ++i) dln[sz(pos) * sz(C) + sz(i)] = ua[sz(i)] - (b >= 0 ? ub[sz(i)] : 0.0f);
  std::vector<float> grad(TC, 0.0f);  // ∂m/∂ the residual stream where the walk is
  model.norm_backward(k, grad.data(), nullptr, nullptr, dln.data(), c.resid.data() + sz(L) * TC, p.ln_f_w,
                      c.ln_f_mean.data(), c.ln_f_rstd.data(), T);
  std::copy(grad.begin(), grad.end(), out.resid.begin() + static_cast<long>(sz(L) * TC));
  auto zero = [](std::vector<float>& v) { std::fill(v.begin(), v.end(), 0.0f); };
  for (int l = L - 1; l >= 0; --l) {
    const BlockParams& w = p.h[sz(l)];
    const size_t at = sz(l) * TC, row = sz(l) * sz(T);
    // resid[l+1] = mid + mlp(norm_2(mid))
    const float* fch = c.fch.data() + row * sz(FC);
    zero(dfa);
    model.matrix_backward(k, dfa.data(), grad.data(), c.fch_act.data() + row * sz(H), M::mlp_c_proj, l, T);
    zero(dfc);
    if (g.mlp == Mlp::swiglu) k.swiglu_backward(dfc.data(), fch, dfa.data(), T, H);
    else if (g.activation == Activation::gelu_new) k.gelu_new_backward(dfc.data(), fch, dfa.data(), T * H);
    else k.gelu_backward(dfc.data(), fch, dfa.data(), T * H);
    zero(dln);
    model.matrix_backward(k, dln.data(), dfc.data(), c.ln2.data() + at, M::c_fc, l, T);
    model.norm_backward(k, grad.data(), nullptr, nullptr, dln.data(), c.mid.data() + at, w.ln_2_w,
                        c.ln2_mean.data() + row, c.ln2_rstd.data() + row, T);
    std::copy(grad.begin(), grad.end(), out.mid.begin() + static_cast<long>(at));
    // mid = resid[l] + attn.c_proj(z), z = attention(rope(qk_norm(c_attn(norm_1(resid[l])))))
    float* dz = out.z.data() + sz(l) * TA;
    model.matrix_backward(k, dz, grad.data(), c.z.data() + sz(l) * TA, M::attn_c_proj, l, T);
    zero(dqkv);
    k.attention_backward(dqkv.data(), scratch.data(), dz, c.qkv.data() + row * sz(W),
                         c.att.data() + sz(l) * sz(NH) * sz(T) * sz(T), 1, T, A, NH, opt);
    if (g.pos == Positions::rope) k.rope_backward(dqkv.data(), 1, T, W, NR, hs, 0, model.rope_table());
    if (g.qk_norm)  // ∂m/∂(normed q, k) → ∂m/∂(c_attn's q, k), through each head's RMSNorm (GPT::backward's)
      for (int t = 0; t < T; ++t) {
        float* dq = dqkv.data() + sz(t) * sz(W);
        const size_t r = row + sz(t);
        std::copy(dq, dq + QK * hs, dqk.begin());
        std::fill(dq, dq + QK * hs, 0.0f);
        const float* in = c.qk_in.data() + r * sz(QK) * sz(hs);
        const float* rstd = c.qk_rstd.data() + r * sz(QK);
        k.rmsnorm_backward(dq, nullptr, dqk.data(), in, w.q_norm_w, rstd, NH, hs);
        k.rmsnorm_backward(dq + NH * hs, nullptr, dqk.data() + NH * hs, in + NH * hs, w.k_norm_w, rstd + NH, QK - NH, hs);
      }
    zero(dln);
    model.matrix_backward(k, dln.data(), dqkv.data(), c.ln1.data() + at, M::c_attn, l, T);
    model.norm_backward(k, grad.data(), nullptr, nullptr, dln.data(), c.resid.data() + at, w.ln_1_w,
                        c.ln1_mean.data() + row, c.ln1_rstd.data() + row, T);
    std::copy(grad.begin(), grad.end(), out.resid.begin() + static_cast<long>(at));
  }
}

double run_loss(const RunCache& c, int V) {
  if (c.T < 2) throw InputError("the loss needs at least two tokens", "ids");
  double sum = 0.0;
  for (int t = 0; t + 1 < c.T; ++t) {
    const float* x = c.logits.data() + sz(t) * sz(V);
    const double m = *std::max_element(x, x + V);
    double z = 0.0;
    for (int v = 0; v < V; ++v) z += std::exp(double(x[v]) - m);
    sum += m + std::log(z) - double(x[c.ids[sz(t) + 1]]);
  }
  return sum / (c.T - 1);
}

double metric(const RunCache& c, int V, int pos, int a, int b) {
  const float* x = c.logits.data() + sz(pos) * sz(V);
  return double(x[a]) - (b >= 0 ? double(x[b]) : 0.0);
}

}  // namespace ap::interp
