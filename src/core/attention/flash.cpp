// flash.cpp — FlashAttention's tiled forward and its backward's recomputation, for the traced
// attention (semantics, loop order and the bound in flash.h).
#include "core/attention/flash.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ap {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^−24

int blocks(int n, int size) { return (n + size - 1) / size; }

float max_abs(const Tensor& t) {
  float m = 0.0f;
  for (float v : t.data) m = std::max(m, std::fabs(v));
  return m;
}

float max_abs_diff(const Tensor& a, const Tensor& b) {
  float m = 0.0f;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::fabs(a.data[i] - b.data[i]));
  return m;
}

}  // namespace

void check_flash_options(const AttentionOptions& opt, int T, int T_total) {
  if (opt.flash_block_q == 0 && opt.flash_block_k == 0) return;
  for (const auto& [size, name] : {std::pair<int, const char*>{opt.flash_block_q, "flash_block_q"},
                                   std::pair<int, const char*>{opt.flash_block_k, "flash_block_k"}})
    if (size < 1)
      throw InputError(std::string(name) + " must be 1 or more (FlashAttention needs both block sizes), got " +
                           std::to_string(size),
                       name);
  if (!opt.stable_softmax)
    throw InputError("FlashAttention's online softmax is the stable one (it subtracts the running maximum): "
                     "set softmax to stable",
                     "flash_block_q");
  const long long steps = static_cast<long long>(opt.n_head) * blocks(T, opt.flash_block_q) *
                          blocks(T_total, opt.flash_block_k);
  if (steps > kMaxFlashSteps)
    throw InputError("FlashAttention would take " + std::to_string(steps) + " tile steps (n_head · query blocks · "
                         "key blocks), more than the limit of " + std::to_string(kMaxFlashSteps) +
                         ": take larger blocks",
                     "flash_block_q");
}

void flash_forward(AttentionTrace& tr) {
  const AttentionOptions& opt = tr.options;
  FlashTrace& f = tr.flash;
  const int H = opt.n_head, T = tr.T, Tt = tr.T_total, dv = tr.d_v;
  f.block_q = opt.flash_block_q;
  f.block_k = opt.flash_block_k;
  f.n_q_blocks = blocks(T, f.block_q);
  f.n_k_blocks = blocks(Tt, f.block_k);
  f.m = Tensor({H, T});
  f.l = Tensor({H, T});
  f.lse = Tensor({H, T});
  f.context = Tensor({H, T, dv});
  for (int h = 0; h < H; ++h)
    for (int qb = 0; qb < f.n_q_blocks; ++qb) {
      const int r0 = qb * f.block_q, rows = std::min(f.block_q, T - r0);
      Tensor m({rows}, kNegInf), l({rows}), o({rows, dv});
      for (int kb = 0; kb < f.n_k_blocks; ++kb) {
        const int c0 = kb * f.block_k;
        FlashStep s{h, qb, kb, r0, rows, c0, std::min(f.block_k, Tt - c0)};  // the tile's place and size
        s.alpha = Tensor({rows}, 1.0f);
        s.p = Tensor({rows, s.cols});
        s.skipped = true;
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < s.cols; ++c)
            if (tr.masked(h, r0 + r, s.c0 + c) != kNegInf) s.skipped = false;
        if (!s.skipped)
          for (int r = 0; r < rows; ++r) {
            const float* S = tr.masked.ptr() + (static_cast<size_t>(h) * T + r0 + r) * Tt + s.c0;
            float m_new = m.data[r];
            for (int c = 0; c < s.cols; ++c) m_new = std::max(m_new, S[c]);
            if (m_new == kNegInf) continue;  // this row has seen no key yet: nothing changes
            // e^(m_old − m_new): 1 when the maximum stayed, 0 when m_old was −∞ (exp_f32(−∞) = 0)
            const float alpha = exp_f32(m.data[r] - m_new);
            float row_sum = 0.0f;
            float* p = s.p.ptr() + static_cast<size_t>(r) * s.cols;
            for (int c = 0; c < s.cols; ++c) {
              p[c] = exp_f32(S[c] - m_new);
              row_sum += p[c];
            }
            s.alpha.data[r] = alpha;
            l.data[r] = alpha * l.data[r] + row_sum;
            for (int d = 0; d < dv; ++d) {
              float pv = 0.0f;
              for (int c = 0; c < s.cols; ++c) pv += p[c] * tr.v(h, s.c0 + c, d);
              o(r, d) = alpha * o(r, d) + pv;
            }
            m.data[r] = m_new;
          }
        s.m = m;
        s.l = l;
        s.o = o;
        f.steps.push_back(std::move(s));
      }
      for (int r = 0; r < rows; ++r) {
        const int i = r0 + r;
        f.m(h, i) = m.data[r];
        f.l(h, i) = l.data[r];
        const bool empty = !(l.data[r] > 0.0f);
        f.lse(h, i) = empty ? kNegInf : m.data[r] + log_f32(l.data[r]);
        for (int d = 0; d < dv; ++d) f.context(h, i, d) = empty ? 0.0f : o(r, d) / l.data[r];
      }
    }
  f.concat = concat_heads(f.context);
  const AttentionInput& in = tr.input;
  f.out = f.concat;
  float colsum = 1.0f;
  if (!in.W_o.empty()) {
    f.out = matmul(f.concat, in.W_o);
    if (!in.b_o.empty()) f.out = add(f.out, reshape(in.b_o, {in.W_o.shape[1]}));
    colsum = 0.0f;
    for (int c = 0; c < in.W_o.shape[1]; ++c) {
      float s = 0.0f;
      for (int r = 0; r < in.W_o.shape[0]; ++r) s += std::fabs(in.W_o(r, c));
      colsum = std::max(colsum, s);
    }
  }
  f.max_diff_context = max_abs_diff(f.context, tr.context);
  f.max_diff_out = max_abs_diff(f.out, tr.out);
  const double u = kUnitRoundoff;
  const double bc = (4.0 * Tt + 8.0 * f.n_k_blocks + 16.0) * u * max_abs(tr.v);
  f.bound_context = static_cast<float>(bc);
  f.bound_out = in.W_o.empty()
                    ? f.bound_context
                    : static_cast<float>((bc + 2.0 * (H * dv + 2.0) * u * max_abs(tr.context)) * colsum);
}

void flash_backward(const AttentionTrace& tr, AttentionGrads& g) {
  const FlashTrace& f = tr.flash;
  const int H = tr.options.n_head, T = tr.T, Tt = tr.T_total, dv = tr.d_v;
  g.flash_D = Tensor({H, T});
  g.flash_P = Tensor({H, T, Tt});
  g.d_weights = Tensor({H, T, Tt});
  g.d_v = Tensor({H, Tt, dv});
  g.d_scaled = Tensor({H, T, Tt});
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < T; ++i) {  // D = rowsum(dO ⊙ O)
      float s = 0.0f;
      for (int d = 0; d < dv; ++d) s += g.d_context(h, i, d) * f.context(h, i, d);
      g.flash_D(h, i) = s;
    }
  // FlashAttention-2's backward: the outer loop over key blocks (dK, dV stay in fast memory), the
  // inner over query blocks. The trace's dK and dQ (flash_steps) are kept beside the chain, which
  // takes d_scaled on as the plain backward does.
  const int hd = tr.head_dim;
  const Tensor& q_used = tr.q_rot.empty() ? tr.q : tr.q_rot;
  const Tensor& k_used = tr.k_rot.empty() ? tr.k : tr.k_rot;
  Tensor dq({H, T, hd});
  for (int h = 0; h < H; ++h)
    for (int kb = 0; kb < f.n_k_blocks; ++kb) {
      const int c0 = kb * f.block_k, cols = std::min(f.block_k, Tt - c0);
      Tensor dk({cols, hd});
      for (int qb = 0; qb < f.n_q_blocks; ++qb) {
        const int r0 = qb * f.block_q, rows = std::min(f.block_q, T - r0);
        for (int r = 0; r < rows; ++r) {
          const int i = r0 + r;
          const float L = f.lse(h, i);
          for (int c = 0; c < cols; ++c) {
            const int j = c0 + c;
            const float S = tr.masked(h, i, j);
            // masked, or an empty row (L = −∞): P = 0 (dP is still dO·vᵀ, as the plain path's)
            if (S == kNegInf || L == kNegInf) continue;
            const float P = exp_f32(S - L);
            g.flash_P(h, i, j) = P;
            for (int d = 0; d < dv; ++d) g.d_v(h, j, d) += P * g.d_context(h, i, d);
          }
          for (int c = 0; c < cols; ++c) {
            const int j = c0 + c;
            float dP = 0.0f;
            for (int d = 0; d < dv; ++d) dP += g.d_context(h, i, d) * tr.v(h, j, d);
            g.d_weights(h, i, j) = dP;
            const float dS = g.flash_P(h, i, j) * (dP - g.flash_D(h, i));
            g.d_scaled(h, i, j) = dS;
            for (int d = 0; d < hd; ++d) {  // dQ += dS·k·scale, dK += dSᵀ·q·scale
              dq(h, i, d) += dS * k_used(h, j, d) * tr.scale_factor;
              dk(c, d) += dS * q_used(h, i, d) * tr.scale_factor;
            }
          }
        }
        AttentionGrads::FlashBackStep st;
        st.head = h;
        st.k_block = kb;
        st.q_block = qb;
        st.r0 = r0;
        st.rows = rows;
        st.c0 = c0;
        st.cols = cols;
        st.dv = Tensor({cols, dv});
        for (int c = 0; c < cols; ++c)
          for (int d = 0; d < dv; ++d) st.dv(c, d) = g.d_v(h, c0 + c, d);
        st.dk = dk;
        st.dq = Tensor({rows, hd});
        for (int r = 0; r < rows; ++r)
          for (int d = 0; d < hd; ++d) st.dq(r, d) = dq(h, r0 + r, d);
        g.flash_steps.push_back(std::move(st));
      }
    }
}

}  // namespace ap
