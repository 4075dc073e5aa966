// mla.h — multi-head latent attention (DeepSeek-V2, section 2.1) as a mode of the traced attention:
// keys and values come from a low-rank latent, the position is carried by a decoupled rotary part,
// and the absorbed form scores the queries against the latent directly. Limits: the query is
// x·W_q (DeepSeek-V2 also compresses it through its own latent c_Q; left out here); a teaching
// trace, scalar and unoptimised, as attention.h's.
//
// With x (T_total, d_model), n_head heads, the latent width d_c, d_nope (the "content" part of a
// head's query and key), d_rope (the decoupled rotary part, 0 without W_kr) and d_v:
//   c     = x·W_dkv                (T_total, d_c)       the latent: with k_R, all the KV cache holds
//   k_C   = c·W_uk                 (T_total, n_head·d_nope)   up-projected keys
//   v     = c·W_uv                 (T_total, n_head·d_v)      up-projected values
//   k_R   = RoPE(x·W_kr)           (T_total, d_rope)    one rotated key part, shared by every head
//   q_C   = x[base:]·W_q           (T, n_head·d_nope)
//   q_R   = RoPE(x[base:]·W_qr)    (T, n_head·d_rope)   a rotated query part per head
// Head h then attends (attention.h, every option but n_kv_head and rope_dims) with
//   q_h = [q_R,h | q_C,h],  k_h = [k_R | k_C,h]  (head_dim = d_rope + d_nope, scale 1/√head_dim),
// the rotary part first so that RoPE's partial rotation (rope_dims = d_rope) turns exactly it; the
// order inside a head changes no score. RoPE (rope = interleaved | halves) is needed with W_kr and
// W_qr and refused without them: rotating k_C would tie the keys to positions and break the
// absorption below, which is why DeepSeek-V2 decouples the rotary part.
//
// The absorbed form, per head: q_C,h·k_C,jᵀ = q_C,h·(c_j·W_uk,h)ᵀ = (q_C,h·W_uk,hᵀ)·c_jᵀ, so
//   q_lat,h = q_C,h·W_uk,hᵀ (T, d_c),  scores_latent = q_lat,h·cᵀ,  scores_rope = q_R,rot·k_R,rotᵀ,
//   scores_absorbed = scores_latent + scores_rope   (equal to the trace's scores up to rounding)
// and on the value side context_h = weights·(c·W_uv,h) = (weights·c)·W_uv,h:
//   context_latent = weights·c (T, d_c),  context_absorbed = context_latent·W_uv,h.
// The trace keeps both forms and their largest differences.
#pragma once

#include "core/attention/attention.h"

namespace ap {

struct MlaInput {
  Tensor x;             // (T_total, d_model)
  Tensor W_q;           // (d_model, n_head·d_nope)
  Tensor W_dkv;         // (d_model, d_c)
  Tensor W_uk;          // (d_c, n_head·d_nope)
  Tensor W_uv;          // (d_c, n_head·d_v)
  Tensor W_kr, W_qr;    // (d_model, d_rope), (d_model, n_head·d_rope): both or neither
  Tensor W_o, b_o;      // (n_head·d_v, d_out), (d_out), optional
};

struct MlaTrace {
  MlaInput input;
  int d_c = 0, d_nope = 0, d_rope = 0, d_v = 0;
  Tensor c;                  // (T_total, d_c)
  Tensor k_C, k_R;           // (T_total, n_head·d_nope), (T_total, d_rope) before the rotation
  Tensor q_C, q_R;           // (T, n_head·d_nope), (T, n_head·d_rope) before the rotation
  AttentionTrace attn;       // the attention over Q = [q_R,h | q_C,h], K = [k_R | k_C,h], V = c·W_uv
  Tensor q_latent;           // (n_head, T, d_c) = q_C,h·W_uk,hᵀ
  Tensor scores_latent;      // (n_head, T, T_total) = q_latent·cᵀ
  Tensor scores_rope;        // (n_head, T, T_total) = q_R,rot·k_R,rotᵀ (empty without W_kr)
  Tensor scores_absorbed;    // (n_head, T, T_total) = scores_latent + scores_rope
  Tensor context_latent;     // (n_head, T, d_c) = weights·c
  Tensor context_absorbed;   // (n_head, T, d_v) = context_latent·W_uv,h
  float max_diff_scores = 0, max_diff_context = 0;  // absorbed against attn.scores, attn.context
  double cache_floats = 0;      // T_total·(d_c + d_rope): what MLA's KV cache holds
  double cache_floats_mha = 0;  // T_total·n_head·(head_dim + d_v): multi-head attention's K and V
};

// Checks the input (InputError naming the matrix or option), then computes every step.
MlaTrace mla_trace(const MlaInput& input, const AttentionOptions& options);

struct MlaGrads {
  AttentionGrads attn;       // through the attention, down to d_Q, d_K, d_V
  Tensor d_c, d_k_R, d_q_R;  // the latent, the shared key part and the query part (before RoPE)
  Tensor d_x, d_W_q, d_W_dkv, d_W_uk, d_W_uv, d_W_kr, d_W_qr;  // the leaves (W_kr, W_qr if given)
};

// The backward pass of an MLA trace for d_out = ∂L/∂out (InputError "d_out" on a bad shape):
// d_k_R sums every head's gradient of its rotary key part; d_c gathers k_C's and v's.
MlaGrads mla_trace_backward(const MlaTrace& trace, const Tensor& d_out);

}  // namespace ap
