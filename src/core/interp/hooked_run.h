// hooked_run.h — one sequence through a GPT with every activation the interpretability tools read
// kept, and hooks that may change them (TransformerLens' hook points, for this model's layout).
//
//   resid[0]   = wte[ids] (+ wpe with learned positions)                 hook: Site::resid, layer 0
//   per layer l:
//     z        = attention(rope?(qk_norm?(c_attn(norm_1(resid[l])))))  (T, A = n_head·head_size),
//                query head h in columns h·hs…                                hook: Site::z
//     mid[l]   = resid[l] + attn.c_proj(z)     attn.c_proj (C, A)    (TransformerLens' resid_mid)
//     mlp[l]   = mlp.c_proj(act(c_fc(norm_2(mid[l]))))  (SwiGLU: down_proj(silu(gate) ⊙ up))  hook: Site::mlp
//     resid[l+1] = mid[l] + mlp[l]                                  hook: Site::resid, layer l+1
//   logits     = norm_f(resid[L]) · Uᵀ    U = wte, or lm_head when untied    (T, V)
//
// Every variant of gpt.h: the norm is LayerNorm or RMSNorm, positions learned, RoPE (either
// pairing, partial, Llama 3's scaling), ALiBi or none, grouped-query attention (z holds each query
// head's own output; its key/value head is shared with its group), the GELU or SwiGLU MLP of any
// width, with or without biases, a sliding window, and the Llama family's options: heads wider or
// narrower than n_embd/n_head (z is A = n_head·head_size wide), Qwen2's q/k/v biases, Qwen3's
// RMSNorm of each q and k head, and an untied lm_head (the unembedding U).
//
// The forward is GPT::forward's, kernel for kernel (the model's own block pieces, gpt.h, and the
// tier in use, B = 1; a typed model's typed products through GPT::matrix_forward, without
// converting it), so an unhooked run's logits are the model's, bit for bit. A run may start
// at layer s from another run's cache: the layers before s are that run's (activation patching
// forwards only from the patched layer on, and unembeds only the position its metric reads).
// The backward (reference tier) gives ∂m/∂(resid, mid, z) for m = logit[a] − logit[b] (b < 0: the
// logit of a alone) at one position: what attribution patching multiplies.
#pragma once

#include <functional>
#include <vector>

#include "core/model/gpt.h"

namespace ap::interp {

// Where a hook sees an activation: the residual stream entering layer `layer` (layer L: the final
// one, before ln_f), the heads' contexts z of a layer, or an MLP's output (with its bias).
enum class Site { resid, z, mlp };
// A hook may change act in place: (T, C), or (T, A) for Site::z (site_width).
using Hook = std::function<void(Site site, int layer, float* act)>;

// Every activation of one run over T tokens (row-major).
struct RunCache {
  int T = 0;
  std::vector<int> ids;       // (T)
  std::vector<float> resid;   // (L + 1, T, C): entering each layer; resid[L] the last
  std::vector<float> mid;     // (L, T, C): after attention
  std::vector<float> z;       // (L, T, A): the heads' contexts, before attn.c_proj
  std::vector<float> att;     // (L, NH, T, T): the attention weights, 0 where masked
  std::vector<float> mlp;     // (L, T, C): each MLP's output (with mlp.c_proj's bias)
  std::vector<float> ln_f_mean, ln_f_rstd;  // (T): the final norm's statistics (RMSNorm: rstd only)
  std::vector<float> logits;  // (T, V)
  // what the backward reads
  std::vector<float> ln1, ln2;                          // (L, T, C): ln_1's and ln_2's outputs
  std::vector<float> ln1_mean, ln1_rstd, ln2_mean, ln2_rstd;  // (L, T) (RMSNorm: rstd only)
  std::vector<float> qkv;      // (L, T, qkv_width): q | k | v (qk_norm: q, k normed; RoPE: then turned)
  std::vector<float> qk_in, qk_rstd;  // qk_norm: (L, T, (NH + KV)·hs) q | k before it, (L, T, NH + KV) 1/rms
  std::vector<float> fch;      // (L, T, fc_width): c_fc's output (SwiGLU: gate | up)
  std::vector<float> fch_act;  // (L, T, inner): after the activation
  const float* resid_at(int layer, int C) const { return resid.data() + size_t(layer) * T * C; }
};

// A site's row width: A = n_head·head_size for Site::z, n_embd for the others.
int site_width(const GPTConfig& g, Site site);

// Throws InputError when ids are bad (field "ids": empty, longer than block_size, a token outside
// the vocabulary).
void check_run(const GPT& model, const std::vector<int>& ids);

// Runs ids through the model into out. From layer `start` > 0, `from` (a run of the same length)
// gives resid[0 … start] and every activation of the layers before start; the hooks see only the
// sites from layer `start` on (resid[start] included). only_row ≥ 0: the final norm and the logits
// of that position alone (the other rows of logits, ln_f_mean and ln_f_rstd keep what they held).
void run(const GPT& model, const std::vector<int>& ids, RunCache& out, const Hook& hook = nullptr, int start = 0,
         const RunCache* from = nullptr, int only_row = -1);

// ∂m/∂ activations of the run `c`, for m = logits[pos][a] − logits[pos][b] (b < 0: logits[pos][a]).
struct RunGrads {
  std::vector<float> resid;  // (L + 1, T, C)
  std::vector<float> mid;    // (L, T, C)
  std::vector<float> z;      // (L, T, A)
};
void backward(const GPT& model, const RunCache& c, int pos, int a, int b, RunGrads& out);

// The mean cross-entropy (nats, double) of the run's predictions of ids[1 …] (T ≥ 2).
double run_loss(const RunCache& c, int V);
// logits[pos][a] − logits[pos][b] (b < 0: logits[pos][a]).
double metric(const RunCache& c, int V, int pos, int a, int b);

}  // namespace ap::interp
