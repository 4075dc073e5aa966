// block_trace.h — one position's vector walked through the whole model, every intermediate kept:
// what the training page's "whole block, step by step" shows, number by number.
//
//   x      = wte[token] + wpe[position]                 (wpe only with learned positions)
//   per layer:  ln_1 (mean, variance, rstd, x̂ = (x − mean)·rstd, out = x̂·γ + β; RMSNorm: the
//               mean square, rstd, x̂ = x·rstd, out = x̂·γ)
//               q, k, v = c_attn(ln_1) (q: n_head·hs, k, v: n_kv_head·hs each; hs = head_size,
//               which need not be n_embd/n_head); qk_norm (Qwen3): each q and k head through its
//               RMSNorm (q, k before it and each head's rstd kept); RoPE: q and k turned by the
//               position's angles (cos, sin kept, q and k before and after); per head (reading its
//               group's key/value head): scores q·k_j over the visible keys, × 1/√hs, plus ALiBi's
//               −m_h·(p − j), the softmax over the keys the window and its sinks leave (−∞ and
//               weight 0 for the others), the context Σ_j a_j·v_j; c_proj of the heads side by
//               side; x += it
//               ln_2; the MLP: c_fc, the activation, c_proj (SwiGLU: c_fc = gate | up, silu(gate),
//               act = silu(gate) ⊙ up, down_proj); x += it
//   ln_f, logits = ln_f · Uᵀ (U = wte, or lm_head when untied), probs = softmax(logits)
//
// The numbers are the model's own in the reference tier: the reference kernels (kernels.h) over
// the prompt's positions 0 … position (attention is causal, so the later ones change nothing),
// with the per-position quantities the kernels do not keep (the variance, x̂, a head's scores and
// c_proj's outputs before the residual sums) worked out with the kernels' own arithmetic. Every
// step equals, bit for bit, the reference forward's value at that position (tests/
// test_block_trace.cpp); the forward itself is checked against PyTorch (tests/gpt_torch_test.py).
//
// An opened model with typed weights (gpt.h) stays typed: the trace reads its matrices through
// GPT::matrix_forward (the reference kernel on rows dequantized a chunk at a time), so its numbers
// are, bit for bit, those of the same model converted to float32 (tests/test_typed_interp.cpp).
//
// The elementwise choices of a block — LayerNorm's ε and the MLP's activation (exact GELU or
// GPT-2's gelu_new) — come from block_math(config), the one place the trace reads them. A model
// without biases (nanoGPT's bias=False) has null β and Linear biases, as in the forward.
//
// Limits: position < T ≤ block_size. The visible keys' k and v rows are kept only while
// (visible keys) · n_embd · n_layer stays under kMaxTraceKV floats (the page's models always);
// beyond it `keys` and `values` are empty and a score's terms cannot be shown (its value can).
#pragma once

#include <string>
#include <vector>

#include "core/model/gpt.h"

namespace ap {

constexpr long long kMaxTraceKV = 1 << 21;

// The block's elementwise choices.
struct BlockMath {
  float ln_eps = 1e-5f;
  Activation activation = Activation::gelu;  // gpt.h's
  Norm norm = Norm::layernorm;
  Mlp mlp = Mlp::gelu;
};
// Read from the model's config here and nowhere else in the trace.
BlockMath block_math(const GPTConfig& config);
// out (N) = the activation of inp (N): the reference kernels' gelu_forward or gelu_new_forward.
void activation_forward(float* out, const float* inp, int N, Activation a);

struct LayerNormTrace {
  std::vector<float> x;     // (C) the input
  float mean = 0.0f;        // Σ x / C (RMSNorm: 0)
  float var = 0.0f;         // Σ (x − mean)² / C (RMSNorm: the mean square Σ x² / C)
  float rstd = 0.0f;        // 1 / √(var + ε)
  std::vector<float> xhat;  // (C) (x − mean)·rstd
  std::vector<float> out;   // (C) x̂·γ + β
};

struct HeadTrace {
  int kv_head = 0;             // the key/value head it reads (grouped-query: h / (n_head/n_kv_head))
  float slope = 0.0f;          // ALiBi's m_h (0 without ALiBi)
  std::vector<float> dots;     // (n) q·k_j, summed over the head's dimensions in order
  std::vector<float> bias;     // (n) ALiBi's −m_h·(p − j) (empty without ALiBi)
  std::vector<float> scores;   // (n) dots × 1/√hs (+ bias); −∞ where the window hides the key
  std::vector<float> weights;  // (n) the softmax of the scores (0 for an empty row)
  std::vector<float> context;  // (hs) Σ_j weights_j · v_j
};

struct LayerTrace {
  LayerNormTrace ln_1;
  std::vector<float> q, k, v;         // (A), (KC), (KC): this position's c_attn output, split (q, k normed, turned)
  std::vector<float> q_lin, k_lin;    // qk_norm: c_attn's q and k before their norms (empty without)
  std::vector<float> q_rstd, k_rstd;  // qk_norm: each q head's (NH) and k head's (KV) 1/rms
  std::vector<float> q_raw, k_raw;    // RoPE: q and k before the turn (after qk_norm; empty without RoPE)
  std::vector<float> keys, values;    // (n, KC): the visible positions' k and v (empty past kMaxTraceKV)
  std::vector<HeadTrace> heads;       // (n_head)
  std::vector<float> atty;            // (A = n_head·hs) the heads' contexts side by side
  std::vector<float> attn_proj;       // (C) attn.c_proj(atty)
  std::vector<float> residual2;       // (C) x + attn_proj
  LayerNormTrace ln_2;
  std::vector<float> fc;              // (4C) mlp.c_fc(ln_2); SwiGLU (2H): gate_proj | up_proj
  std::vector<float> silu;            // SwiGLU (H): silu(gate) = gate·σ(gate) (empty for GELU)
  std::vector<float> act;             // (4C) the activation of fc; SwiGLU (H): silu(gate) ⊙ up
  std::vector<float> mlp_proj;        // (C) mlp.c_proj(act)
  std::vector<float> residual3;       // (C) residual2 + mlp_proj: the block's output
};

struct BlockTrace {
  int position = 0, token = 0, T = 0;
  int visible = 0;  // keys the position attends over (position + 1, or position under the inclusive mask)
  std::vector<int> seen;  // (visible) 1 where the key is in the window or a sink, 0 where the window hides it
  float scale = 0.0f;  // 1/√hs
  int n_kv_head = 0;   // key/value heads (n_head without grouped-query attention)
  std::vector<float> rope_cos, rope_sin;  // RoPE (d_rot/2): cos and sin of position·θ_i (empty without)
  BlockMath math;
  std::vector<float> wte, wpe, encoded;  // (C) each; wpe empty without learned positions
  std::vector<LayerTrace> layers;
  LayerNormTrace ln_f;
  std::vector<float> logits;  // (V)
  std::vector<float> probs;   // (V) softmax(logits)
};

// The trace of `position` for the prompt ids (T tokens), for every variant of gpt.h. Throws
// InputError ("position", "ids").
// kv_layer ≥ 0 keeps that layer's keys and values whatever the limit (the walk asks for one layer's
// when a learner opens a score whose terms the whole trace could not carry).
BlockTrace block_trace(const GPT& model, const int* ids, int T, int position, int kv_layer = -1);

}  // namespace ap
