// mla.cpp — multi-head latent attention's input checks, forward (both forms) and backward
// (semantics in mla.h).
#include "core/attention/mla.h"

#include <algorithm>
#include <cmath>

namespace ap {

namespace {

std::string num(long long n) { return std::to_string(n); }

// A given weight: 2-D, finite, within the limits, `rows` rows when rows > 0 (`rows_what` says why).
void check_weight(const Tensor& t, const std::string& name, int rows, const std::string& rows_what) {
  if (t.empty()) throw InputError(name + " is missing (multi-head latent attention needs it)", name);
  if (t.dim() != 2 || t.shape[0] == 0 || t.shape[1] == 0)
    throw InputError(name + " must be a non-empty matrix, got shape " + shape_str(t.shape), name);
  if (t.shape[0] > kMaxDim || t.shape[1] > kMaxDim)
    throw InputError(name + " is " + shape_str(t.shape) + ", larger than the limit of " + num(kMaxDim), name);
  if (rows > 0 && t.shape[0] != rows)
    throw InputError(name + " has " + num(t.shape[0]) + " rows but " + rows_what + " " + num(rows), name);
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(t.data[i])) {
      const int r = static_cast<int>(i / t.shape[1]) + 1, col = static_cast<int>(i % t.shape[1]) + 1;
      throw InputError(name + ", row " + num(r) + ", column " + num(col) + ": a non-finite number is not allowed",
                       name, r, col);
    }
}

// Columns of W split over n_head heads: the width of one head, or InputError naming W.
int per_head_width(const Tensor& W, const std::string& name, int H, const std::string& what) {
  if (W.shape[1] % H != 0)
    throw InputError(name + " has " + num(W.shape[1]) + " columns, which " + num(H) + " heads cannot share (" + what +
                         " per head)",
                     name);
  return W.shape[1] / H;
}

void check_mla(const MlaInput& in, const AttentionOptions& opt) {
  const int H = opt.n_head;
  if (H < 1) throw InputError("n_head must be at least 1, got " + num(H), "n_head");
  check_weight(in.x, "x", 0, "");
  const int d_model = in.x.shape[1];
  check_weight(in.W_dkv, "W_dkv", d_model, "x has columns (d_model):");
  const int d_c = in.W_dkv.shape[1];
  check_weight(in.W_uk, "W_uk", d_c, "the latent c = x·W_dkv has columns (d_c):");
  check_weight(in.W_uv, "W_uv", d_c, "the latent c = x·W_dkv has columns (d_c):");
  const int d_nope = per_head_width(in.W_uk, "W_uk", H, "d_nope");
  per_head_width(in.W_uv, "W_uv", H, "d_v");
  check_weight(in.W_q, "W_q", d_model, "x has columns (d_model):");
  if (in.W_q.shape[1] != H * d_nope)
    throw InputError("W_q has " + num(in.W_q.shape[1]) + " columns but W_uk has " + num(H * d_nope) +
                         " (n_head·d_nope: a query's content part meets a key's)",
                     "W_q");
  if (in.W_kr.empty() != in.W_qr.empty())
    throw InputError(std::string(in.W_kr.empty() ? "W_kr" : "W_qr") +
                         " is missing: the decoupled rotary part needs both W_kr (the shared key part) and W_qr "
                         "(the query's)",
                     in.W_kr.empty() ? "W_kr" : "W_qr");
  if (!in.W_kr.empty()) {
    check_weight(in.W_kr, "W_kr", d_model, "x has columns (d_model):");
    check_weight(in.W_qr, "W_qr", d_model, "x has columns (d_model):");
    const int d_rope = in.W_kr.shape[1];
    if (d_rope % 2 != 0)
      throw InputError("W_kr has " + num(d_rope) + " columns (d_rope), which RoPE cannot pair: give an even number",
                       "W_kr");
    if (in.W_qr.shape[1] != H * d_rope)
      throw InputError("W_qr has " + num(in.W_qr.shape[1]) + " columns but n_head·d_rope is " + num(H * d_rope) +
                           " (each head's rotary query part meets the shared key part of W_kr)",
                       "W_qr");
    if (opt.rope == RopePairing::none)
      throw InputError("W_kr and W_qr are the decoupled rotary part: set rope to interleaved or halves", "rope");
  } else if (opt.rope != RopePairing::none) {
    throw InputError("rope in multi-head latent attention turns only the decoupled part: give W_kr and W_qr "
                     "(rotating the keys made from the latent would break the absorbed form)",
                     "rope");
  }
  if (opt.rope_dims != 0) throw InputError("rope_dims is set by W_kr's width in multi-head latent attention", "rope_dims");
  if (opt.n_kv_head != 0)
    throw InputError("n_kv_head does not apply to multi-head latent attention: every head reads the latent",
                     "n_kv_head");
  if (opt.base < 0 || opt.base >= in.x.shape[0])
    throw InputError("base must be from 0 to " + num(in.x.shape[0] - 1) + " (x's rows less one query), got " +
                         num(opt.base),
                     "base");
  if (in.W_o.empty() && !in.b_o.empty()) throw InputError("b_o is given without W_o", "b_o");
}

// Rows [from, from + count) of a matrix.
Tensor rows_of(const Tensor& m, int from, int count) {
  const size_t w = static_cast<size_t>(m.shape[1]);
  return Tensor({count, m.shape[1]}, std::vector<float>(m.data.begin() + from * w, m.data.begin() + (from + count) * w));
}

// Per head h, [a_h | b_h] side by side: a (rows, H·da), b (rows, H·db) → (rows, H·(da + db)).
Tensor interleave_heads(const Tensor& a, int da, const Tensor& b, int db, int H) {
  const int rows = b.shape[0];
  Tensor out({rows, H * (da + db)});
  for (int r = 0; r < rows; ++r)
    for (int h = 0; h < H; ++h) {
      for (int i = 0; i < da; ++i) out(r, h * (da + db) + i) = a(r, h * da + i);
      for (int i = 0; i < db; ++i) out(r, h * (da + db) + da + i) = b(r, h * db + i);
    }
  return out;
}

// Columns [c0, c0 + w) of each head's block of width hw in m (rows, H·hw) → (rows, H·w).
Tensor head_columns(const Tensor& m, int H, int hw, int c0, int w) {
  Tensor out({m.shape[0], H * w});
  for (int r = 0; r < m.shape[0]; ++r)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < w; ++i) out(r, h * w + i) = m(r, h * hw + c0 + i);
  return out;
}

// Head h's columns of W (rows, H·w) → (rows, w).
Tensor head_block(const Tensor& W, int h, int w) { return head_columns(W, 1, W.shape[1], h * w, w); }

float max_abs_diff(const Tensor& a, const Tensor& b) {
  float m = 0.0f;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::fabs(a.data[i] - b.data[i]));
  return m;
}

}  // namespace

MlaTrace mla_trace(const MlaInput& in, const AttentionOptions& opt) {
  check_mla(in, opt);
  MlaTrace tr;
  tr.input = in;
  const int H = opt.n_head, Tt = in.x.shape[0], T = Tt - opt.base;
  tr.d_c = in.W_dkv.shape[1];
  tr.d_nope = in.W_uk.shape[1] / H;
  tr.d_v = in.W_uv.shape[1] / H;
  tr.d_rope = in.W_kr.empty() ? 0 : in.W_kr.shape[1];
  const Tensor xq = rows_of(in.x, opt.base, T);  // the queries' rows, x[base:]
  tr.c = matmul(in.x, in.W_dkv);
  tr.k_C = matmul(tr.c, in.W_uk);
  tr.q_C = matmul(xq, in.W_q);
  AttentionInput a;
  a.V = matmul(tr.c, in.W_uv);
  a.W_o = in.W_o;
  a.b_o = in.b_o;
  AttentionOptions o = opt;
  if (tr.d_rope) {
    tr.k_R = matmul(in.x, in.W_kr);
    tr.q_R = matmul(xq, in.W_qr);
    Tensor k_R_heads({Tt, H * tr.d_rope});  // the shared part, once per head
    for (int j = 0; j < Tt; ++j)
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < tr.d_rope; ++i) k_R_heads(j, h * tr.d_rope + i) = tr.k_R(j, i);
    a.Q = interleave_heads(tr.q_R, tr.d_rope, tr.q_C, tr.d_nope, H);
    a.K = interleave_heads(k_R_heads, tr.d_rope, tr.k_C, tr.d_nope, H);
    o.rope_dims = tr.d_rope;
  } else {
    a.Q = tr.q_C;
    a.K = tr.k_C;
  }
  tr.attn = attention_trace(a, o);

  // The absorbed form, head by head.
  const AttentionTrace& at = tr.attn;
  tr.q_latent = Tensor({H, T, tr.d_c});
  tr.scores_latent = Tensor({H, T, Tt});
  tr.context_latent = matmul(at.weights, tr.c);  // (H, T, T_total)·(T_total, d_c)
  tr.context_absorbed = Tensor({H, T, tr.d_v});
  if (tr.d_rope) tr.scores_rope = Tensor({H, T, Tt});
  const int hd = tr.d_rope + tr.d_nope;
  for (int h = 0; h < H; ++h) {
    const Tensor q_lat = matmul(head_block(tr.q_C, h, tr.d_nope), transpose(head_block(in.W_uk, h, tr.d_nope)));
    std::copy(q_lat.data.begin(), q_lat.data.end(), tr.q_latent.data.begin() + static_cast<size_t>(h) * T * tr.d_c);
    matmul_bt_forward(tr.scores_latent.ptr() + static_cast<size_t>(h) * T * Tt, q_lat.ptr(), tr.c.ptr(), T, tr.d_c, Tt);
    if (tr.d_rope)
      for (int i = 0; i < T; ++i)
        for (int j = 0; j < Tt; ++j) {
          float s = 0.0f;
          for (int d = 0; d < tr.d_rope; ++d) s += at.q_rot(h, i, d) * at.k_rot(h, j, d);
          tr.scores_rope(h, i, j) = s;
        }
    const Tensor ctx = matmul(tr.context_latent.slice0(h), head_block(in.W_uv, h, tr.d_v));
    std::copy(ctx.data.begin(), ctx.data.end(), tr.context_absorbed.data.begin() + static_cast<size_t>(h) * T * tr.d_v);
  }
  tr.scores_absorbed = tr.d_rope ? add(tr.scores_latent, tr.scores_rope) : tr.scores_latent;
  tr.max_diff_scores = max_abs_diff(tr.scores_absorbed, at.scores);
  tr.max_diff_context = max_abs_diff(tr.context_absorbed, at.context);
  tr.cache_floats = static_cast<double>(Tt) * (tr.d_c + tr.d_rope);
  tr.cache_floats_mha = static_cast<double>(Tt) * H * (hd + tr.d_v);
  return tr;
}

MlaGrads mla_trace_backward(const MlaTrace& tr, const Tensor& d_out) {
  MlaGrads g;
  g.attn = attention_trace_backward(tr.attn, d_out);
  const MlaInput& in = tr.input;
  const int H = tr.attn.options.n_head, Tt = tr.attn.T_total, T = tr.attn.T, base = tr.attn.options.base;
  const int d_model = in.x.shape[1], hd = tr.d_rope + tr.d_nope;
  // Q = [q_R,h | q_C,h], K = [k_R | k_C,h]: split the gradients back; k_R's sums every head's.
  const Tensor d_q_C = head_columns(g.attn.d_Q, H, hd, tr.d_rope, tr.d_nope);
  const Tensor d_k_C = head_columns(g.attn.d_K, H, hd, tr.d_rope, tr.d_nope);
  g.d_c = Tensor(tr.c.shape);
  g.d_x = Tensor(in.x.shape);
  g.d_W_uk = Tensor(in.W_uk.shape);
  g.d_W_uv = Tensor(in.W_uv.shape);
  g.d_W_dkv = Tensor(in.W_dkv.shape);
  g.d_W_q = Tensor(in.W_q.shape);
  // k_C = c·W_uk, v = c·W_uv
  matmul_backward(g.d_c.ptr(), g.d_W_uk.ptr(), d_k_C.ptr(), tr.c.ptr(), in.W_uk.ptr(), Tt, tr.d_c, H * tr.d_nope);
  matmul_backward(g.d_c.ptr(), g.d_W_uv.ptr(), g.attn.d_V.ptr(), tr.c.ptr(), in.W_uv.ptr(), Tt, tr.d_c, H * tr.d_v);
  // c = x·W_dkv
  matmul_backward(g.d_x.ptr(), g.d_W_dkv.ptr(), g.d_c.ptr(), in.x.ptr(), in.W_dkv.ptr(), Tt, d_model, tr.d_c);
  // q_C = x[base:]·W_q
  const size_t q_rows = static_cast<size_t>(base) * d_model;
  matmul_backward(g.d_x.ptr() + q_rows, g.d_W_q.ptr(), d_q_C.ptr(), in.x.ptr() + q_rows, in.W_q.ptr(), T, d_model,
                  H * tr.d_nope);
  if (tr.d_rope) {
    // attn's d_Q, d_K are already turned back through RoPE (Rᵀ): they are d(x·W) here.
    g.d_q_R = head_columns(g.attn.d_Q, H, hd, 0, tr.d_rope);
    const Tensor d_k_R_heads = head_columns(g.attn.d_K, H, hd, 0, tr.d_rope);
    g.d_k_R = Tensor({Tt, tr.d_rope});
    for (int j = 0; j < Tt; ++j)
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < tr.d_rope; ++i) g.d_k_R(j, i) += d_k_R_heads(j, h * tr.d_rope + i);
    g.d_W_kr = Tensor(in.W_kr.shape);
    g.d_W_qr = Tensor(in.W_qr.shape);
    matmul_backward(g.d_x.ptr(), g.d_W_kr.ptr(), g.d_k_R.ptr(), in.x.ptr(), in.W_kr.ptr(), Tt, d_model, tr.d_rope);
    matmul_backward(g.d_x.ptr() + q_rows, g.d_W_qr.ptr(), g.d_q_R.ptr(), in.x.ptr() + q_rows, in.W_qr.ptr(), T,
                    d_model, H * tr.d_rope);
  }
  return g;
}

}  // namespace ap
