// kernels_ref.cpp — the reference tier of kernels.h (the table kernels::reference): scalar, fixed
// summation order, the core's own exp/log/erf, so the same bits natively and in wasm. The row
// arithmetic of attention is the stepper's (attention.cpp): scores summed over the head dimension
// in order, times 1/√hs, the softmax of ops.h over the visible keys (hidden keys would add exact
// zeros), context summed over keys in order. A head's weights are therefore bit-identical to the
// trace of its q, k, v.
#include <cmath>
#include <cstring>

#include "core/kernels/kernels.h"
#include "core/tensor/ops.h"

namespace ap::kernels {

namespace {

inline size_t idx(size_t a, size_t b) { return a * b; }

float head_scale(int hs) { return 1.0f / std::sqrt(static_cast<float>(hs)); }

// One query row of one head at position p: att (T_total) from q (hs) and the key rows k (stride
// ld); the keys [0, rk.sink) ∪ [rk.lo, n) are visible: scaled scores (plus ALiBi's −slope·(p − j)
// when slope is not 0), their softmax (the sinks' scores moved beside the window's, sink_gather),
// zeros elsewhere; out (hs) = Σ_j att[j]·v_j.
void attend_row(float* out, float* att, const float* q, const float* k, const float* v, int ld, RowKeys rk, int n,
                int T_total, int hs, float scale, bool stable, float slope, int p) {
  const int lo = rk.lo;
  auto score = [&](int j) {
    const float* kj = k + idx(j, ld);
    float s = 0.0f;
    for (int i = 0; i < hs; ++i) s += q[i] * kj[i];
    att[j] = s * scale;
    if (slope != 0.0f) att[j] = att[j] + -slope * static_cast<float>(p - j);
  };
  for (int j = 0; j < lo; ++j) att[j] = 0.0f;
  for (int j = 0; j < rk.sink; ++j) score(j);
  for (int j = lo; j < n; ++j) score(j);
  sink_gather(att, rk);
  if (stable)
    softmax_rows_forward(att + lo - rk.sink, nullptr, att + lo - rk.sink, 1, n - lo + rk.sink);
  else
    softmax_rows_naive_forward(att + lo - rk.sink, nullptr, att + lo - rk.sink, 1, n - lo + rk.sink);
  sink_scatter(att, rk);
  for (int j = n; j < T_total; ++j) att[j] = 0.0f;
  for (int i = 0; i < hs; ++i) out[i] = 0.0f;
  auto add = [&](int j) {
    const float a = att[j];
    const float* vj = v + idx(j, ld);
    for (int i = 0; i < hs; ++i) out[i] += a * vj[i];
  };
  for (int j = 0; j < rk.sink; ++j) add(j);
  for (int j = lo; j < n; ++j) add(j);
}

void encoder_forward(float* out, const int* ids, const float* wte, const float* wpe, int B, int T, int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      float* o = out + idx(b * T + t, C);
      const float* e = wte + idx(ids[b * T + t], C);
      if (!wpe) {
        for (int c = 0; c < C; ++c) o[c] = e[c];
        continue;
      }
      const float* p = wpe + idx(t, C);
      for (int c = 0; c < C; ++c) o[c] = e[c] + p[c];
    }
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* ids, int B, int T, int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const float* d = dout + idx(b * T + t, C);
      if (dwte) {
        float* e = dwte + idx(ids[b * T + t], C);
        for (int c = 0; c < C; ++c) e[c] += d[c];
      }
      if (dwpe) {
        float* p = dwpe + idx(t, C);
        for (int c = 0; c < C; ++c) p[c] += d[c];
      }
    }
}

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N,
                       int C, float eps) {
  ap::layernorm_forward(out, mean, rstd, inp, w, b, N, C, eps);
}

void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                        const float* mean, const float* rstd, int N, int C) {
  ap::layernorm_backward(dinp, dw, db, dout, inp, w, mean, rstd, N, C);
}

void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* w, int N, int C, float eps) {
  for (int n = 0; n < N; ++n) {
    const float* x = inp + idx(n, C);
    float* o = out + idx(n, C);
    float ss = 0.0f;
    for (int c = 0; c < C; ++c) ss += x[c] * x[c];
    const float r = 1.0f / std::sqrt(ss / static_cast<float>(C) + eps);
    for (int c = 0; c < C; ++c) o[c] = x[c] * r * w[c];
    rstd[n] = r;
  }
}

void rmsnorm_backward(float* dinp, float* dw, const float* dout, const float* inp, const float* w, const float* rstd,
                      int N, int C) {
  for (int n = 0; n < N; ++n) {
    const float* x = inp + idx(n, C);
    const float* d = dout + idx(n, C);
    const float r = rstd[n];
    // y = x·r·w, r = (mean(x²) + eps)^(−½): ∂r/∂x_c = −r³·x_c/C
    float dot = 0.0f;
    for (int c = 0; c < C; ++c) dot += d[c] * w[c] * x[c];
    const float k = dot * r * r * r / static_cast<float>(C);
    float* dx = dinp + idx(n, C);
    for (int c = 0; c < C; ++c) {
      dx[c] += r * (d[c] * w[c]) - k * x[c];
      if (dw) dw[c] += d[c] * x[c] * r;
    }
  }
}

// Turns the heads' pairs of each row by its position's angles; sign −1 turns back (Rᵀ).
void rope_turn(float* x, int B, int T, int ld, int n_heads, int hs, int pos0, const RopeTable& r, float sign) {
  const int pairs = r.d_rot / 2;
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      float* row = x + idx(b * T + t, ld);
      const float* cs = r.cos + idx(pos0 + t, pairs);
      const float* sn = r.sin + idx(pos0 + t, pairs);
      for (int h = 0; h < n_heads; ++h) {
        float* xh = row + idx(h, hs);
        for (int i = 0; i < pairs; ++i) {
          const int ia = r.halves ? i : 2 * i, ib = r.halves ? i + pairs : 2 * i + 1;
          const float c = cs[i], s = sign * sn[i];
          const float a = xh[ia], bb = xh[ib];
          xh[ia] = a * c - bb * s;
          xh[ib] = a * s + bb * c;
        }
      }
    }
}

void rope_forward(float* x, int B, int T, int ld, int n_heads, int hs, int pos0, RopeTable r) {
  rope_turn(x, B, T, ld, n_heads, hs, pos0, r, 1.0f);
}

void rope_backward(float* dx, int B, int T, int ld, int n_heads, int hs, int pos0, RopeTable r) {
  rope_turn(dx, B, T, ld, n_heads, hs, pos0, r, -1.0f);
}

void matmul_forward_into(float* out, int ldo, const float* inp, const float* weight, const float* bias, int N, int C,
                         int OC) {
  // The sum first, then the bias: the order of autograd's matmul(x, Wᵀ) + b.
  for (int n = 0; n < N; ++n) {
    const float* x = inp + idx(n, C);
    float* o = out + idx(n, ldo);
    for (int oc = 0; oc < OC; ++oc) {
      const float* w = weight + idx(oc, C);
      float s = 0.0f;
      for (int c = 0; c < C; ++c) s += x[c] * w[c];
      o[oc] = bias ? s + bias[oc] : s;
    }
  }
}

void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C, int OC) {
  matmul_forward_into(out, OC, inp, weight, bias, N, C, OC);
}

void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC) {
  for (int n = 0; n < N; ++n) {
    const float* d = dout + idx(n, OC);
    const float* x = inp + idx(n, C);
    float* dx = dinp ? dinp + idx(n, C) : nullptr;
    for (int oc = 0; oc < OC; ++oc) {
      const float g = d[oc];
      const float* w = weight + idx(oc, C);
      if (dx)
        for (int c = 0; c < C; ++c) dx[c] += g * w[c];
      if (dweight) {
        float* dw = dweight + idx(oc, C);
        for (int c = 0; c < C; ++c) dw[c] += g * x[c];
      }
      if (dbias) dbias[oc] += g;
    }
  }
}

// Every query row of every head through attend_row. keep: the weights go to att (B,NH,T,T);
// otherwise att is one row (T), reused (attention_forward_infer's scratch).
void attention_rows(float* out, float* att, bool keep, const float* qkv, int B, int T, int C, int NH,
                    AttnOptions opt) {
  const int hs = C / NH, W = qkv_width(C, NH, opt), KC = (W - C) / 2, group = NH / kv_heads(NH, opt);
  const float scale = head_scale(hs);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int h = heads_from(opt); h < heads_to(NH, opt); ++h) {
        const float* base = qkv + idx(b, static_cast<size_t>(T) * W);
        const float* q = base + idx(t, W) + h * hs;
        const int kv = (h / group) * hs;
        float* a = keep ? att + ((static_cast<size_t>(b) * NH + h) * T + t) * T : att;
        attend_row(out + idx(b * T + t, C) + h * hs, a, q, base + C + kv, base + C + KC + kv, W,
                   row_keys(t, visible_keys(t, opt.mask), opt), visible_keys(t, opt.mask), T, hs, scale, opt.stable_softmax,
                   opt.alibi_slopes ? opt.alibi_slopes[h] : 0.0f, t);
      }
}

void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH, AttnOptions opt) {
  attention_rows(out, att, true, qkv, B, T, C, NH, opt);
}

size_t attention_forward_infer_scratch(int, int T, int, int) { return static_cast<size_t>(T); }

void attention_forward_infer(float* out, float* scratch, const float* qkv, int B, int T, int C, int NH,
                             AttnOptions opt) {
  attention_rows(out, scratch, false, qkv, B, T, C, NH, opt);
}

size_t attention_backward_scratch(int, int T, int, int) { return static_cast<size_t>(T); }

void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                        int T, int C, int NH, AttnOptions opt) {
  const int hs = C / NH, W = qkv_width(C, NH, opt), KC = (W - C) / 2, group = NH / kv_heads(NH, opt);
  const float scale = head_scale(hs);
  float* datt = scratch;  // (T): ∂L/∂att for one row, then ∂L/∂preatt in place
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < NH; ++h) {
        const size_t bo = idx(b, static_cast<size_t>(T) * W);
        const int ko = C + (h / group) * hs, vo = ko + KC;
        const float* q = qkv + bo + idx(t, W) + h * hs;
        float* dq = dqkv + bo + idx(t, W) + h * hs;
        const float* a = att + ((static_cast<size_t>(b) * NH + h) * T + t) * T;
        const float* d = dout + idx(b * T + t, C) + h * hs;
        const int n = visible_keys(t, opt.mask);
        // the sinks' keys too (a row with sinks runs from 0; the hidden gap's weights are 0, adding nothing)
        const RowKeys rk = row_keys(t, n, opt);
        const int lo = rk.sink > 0 ? 0 : rk.lo;
        // out = Σ_j a_j·v_j: datt_j = d·v_j, dv_j += a_j·d
        for (int j = lo; j < n; ++j) {
          const float* vj = qkv + bo + idx(j, W) + vo;
          float* dvj = dqkv + bo + idx(j, W) + vo;
          float s = 0.0f;
          for (int i = 0; i < hs; ++i) s += d[i] * vj[i];
          datt[j] = s;
          for (int i = 0; i < hs; ++i) dvj[i] += a[j] * d[i];
        }
        // softmax: dpre_j = a_j·(datt_j − Σ_k datt_k·a_k) (ALiBi's bias is a constant: no gradient)
        float dot = 0.0f;
        for (int j = lo; j < n; ++j) dot += datt[j] * a[j];
        for (int j = lo; j < n; ++j) datt[j] = a[j] * (datt[j] - dot);
        // pre_j = scale·q·k_j: dq += scale·dpre_j·k_j, dk_j += scale·dpre_j·q
        for (int j = lo; j < n; ++j) {
          const float g = datt[j] * scale;
          const float* kj = qkv + bo + idx(j, W) + ko;
          float* dkj = dqkv + bo + idx(j, W) + ko;
          for (int i = 0; i < hs; ++i) {
            dq[i] += g * kj[i];
            dkj[i] += g * q[i];
          }
        }
      }
}

void attention_decode(float* out, float* att, const float* q, const float* k_cache, const float* v_cache, int base,
                      int C, int NH, AttnOptions opt) {
  const int hs = C / NH, T_total = base + 1, KC = kv_heads(NH, opt) * hs, group = NH / kv_heads(NH, opt);
  const float scale = head_scale(hs);
  for (int h = 0; h < NH; ++h)
    attend_row(out + h * hs, att + idx(h, T_total), q + h * hs, k_cache + (h / group) * hs,
               v_cache + (h / group) * hs, KC, row_keys(base, visible_keys(base, opt.mask), opt),
               visible_keys(base, opt.mask), T_total, hs,
               scale, opt.stable_softmax, opt.alibi_slopes ? opt.alibi_slopes[h] : 0.0f, base);
}

void gelu_forward(float* out, const float* inp, int N) { ap::gelu_forward(out, inp, N); }

void gelu_backward(float* dinp, const float* inp, const float* dout, int N) { ap::gelu_backward(dinp, inp, dout, N); }

void gelu_new_forward(float* out, const float* inp, int N) { ap::gelu_new_forward(out, inp, N); }

void gelu_new_backward(float* dinp, const float* inp, const float* dout, int N) {
  ap::gelu_new_backward(dinp, inp, dout, N);
}

// σ(g) with the core's exp: 1 / (1 + e^(−g))
inline float sigmoid(float g) { return 1.0f / (1.0f + exp_f32(-g)); }

void swiglu_forward(float* out, const float* inp, int N, int H) {
  for (int n = 0; n < N; ++n) {
    const float* g = inp + idx(n, 2 * H);
    const float* u = g + H;
    float* o = out + idx(n, H);
    for (int i = 0; i < H; ++i) {
      const float gi = g[i], ui = u[i];
      o[i] = gi * sigmoid(gi) * ui;
    }
  }
}

void swiglu_backward(float* dinp, const float* inp, const float* dout, int N, int H) {
  for (int n = 0; n < N; ++n) {
    const float* g = inp + idx(n, 2 * H);
    const float* u = g + H;
    const float* d = dout + idx(n, H);
    float* dg = dinp + idx(n, 2 * H);
    float* du = dg + H;
    for (int i = 0; i < H; ++i) {
      const float s = sigmoid(g[i]);
      const float silu = g[i] * s;
      dg[i] += d[i] * u[i] * (s * (1.0f + g[i] * (1.0f - s)));
      du[i] += d[i] * silu;
    }
  }
}

void residual_forward(float* out, const float* a, const float* b, int N) {
  for (int i = 0; i < N; ++i) out[i] = a[i] + b[i];
}

void residual_backward(float* da, float* db, const float* dout, int N) {
  for (int i = 0; i < N; ++i) {
    da[i] += dout[i];
    db[i] += dout[i];
  }
}

void crossentropy_forward(float* losses, float* probs, const float* logits, const int* targets, int N, int V) {
  ap::crossentropy_forward(losses, probs, logits, targets, N, V);
}

void crossentropy_backward(float* dlogits, const float* probs, const int* targets, float dloss, int N, int V) {
  for (int n = 0; n < N; ++n) {
    const float* p = probs + idx(n, V);
    float* d = dlogits + idx(n, V);
    for (int v = 0; v < V; ++v) d[v] += (p[v] - (v == targets[n] ? 1.0f : 0.0f)) * dloss;
  }
}

double sum_squares(const float* x, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  return s;
}

void scale_inplace(float* x, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

void adamw_update(float* params, float* m, float* v, const float* grads, int64_t n, float lr, float beta1,
                  float beta2, float eps, float weight_decay, float bias1, float bias2) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = grads[i];
    const float mi = beta1 * m[i] + (1.0f - beta1) * g;
    const float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    const float mhat = mi / bias1, vhat = vi / bias2;
    params[i] -= lr * (mhat / (std::sqrt(vhat) + eps) + weight_decay * params[i]);
  }
}

void exp_n(float* out, const float* x, int n) {
  for (int i = 0; i < n; ++i) out[i] = exp_f32(x[i]);
}

void erf_n(float* out, const float* x, int n) {
  for (int i = 0; i < n; ++i) out[i] = erf_f32(x[i]);
}

constexpr Kernels make_table() {
  Kernels t{};
  t.name = "reference";
#define AP_SET(f) t.f = f;
  AP_KERNEL_NAMES(AP_SET)
#undef AP_SET
  return t;
}

}  // namespace

const Kernels reference = make_table();

}  // namespace ap::kernels
