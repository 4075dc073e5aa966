// kernels.h — the GPT's layer kernels (llm.c style), in two tiers behind one interface: the table
// Kernels below, declared once, one table per tier (kernels::reference, and one per instruction
// set of the fast tier), the model calling through the tier in use's (kernels::active()).
//
// Every kernel is a plain function on raw float pointers: outputs first, then inputs, sizes last,
// with the shape of each argument in a comment. Kernels check nothing; the model (gpt.h) sizes
// every buffer. Backward kernels ADD (+=) into the gradients they produce, so a value used twice
// (the tied wte, a residual stream) collects both contributions; a null gradient pointer means
// "not needed". No kernel allocates: scratch memory is passed in. The elementwise kernels
// (residual_forward, gelu_forward) may write in place (out == an input); no other kernel may alias.
//
// Two tiers:
//  - reference: scalar C++ in a fixed summation order, FMA contraction off, the core's own exp,
//    log and erf. The same bits natively and in wasm, and the same arithmetic as the stepper's
//    trace (attention.h): a head's weights equal the stepper's weights for its q, k, v bit for bit.
//  - fast: vectorised and blocked (AVX2/AVX-512 with FMA natively, chosen at run time; SIMD128 in
//    wasm). Each fast kernel is tested against its reference kernel within a stated tolerance
//    (tests/test_kernels.cpp); results may differ from the reference in the last bits, and between
//    native and wasm builds, but a given build is deterministic.
// set_tier() picks the tier for every call on the calling thread's program (a global); the build
// option AP_REFERENCE_KERNELS forces the reference tier everywhere, for debugging. The model takes
// the table once per pass (const Kernels& k = kernels::active(); k.matmul_forward(…)): one
// indirect call per kernel call.
//
// The fast tier's tolerance (u = 2⁻²⁴, float32's unit roundoff; tests/test_kernels.cpp checks it
// for every kernel on every instruction set the machine runs, and in wasm):
//  - bit-identical to the reference: encoder, residual, scale_inplace, adamw_update,
//    crossentropy_backward, layernorm_backward's dbias (the same IEEE operations in the same order).
//  - a sum of K products in another order (blocked, several lanes, FMA): |fast − ref| ≤
//    2·(K+8)·u·Σ|terms| — each order is within (K−1)·u·Σ|terms| of the exact sum. matmul (K = C,
//    OC or N), layernorm (K = C, twice that for the normalised output and dinp), attention scores
//    (K = hs) and contexts (K = the visible keys).
//  - exp within 4 ulp of exp_f32 (both within 2 ulp of e^x); erf within 5e-7 of erf_f32 (a
//    rational approximation, as PyTorch's vectorised erf), so GELU within 2.6e-7·|x| + 4u·|gelu|;
//    gelu_new (x / (1 + e^(−2u)), the same formula as the reference) within 16u·(1 + |u|)·|gelu_new|
//    (exp's error grows with |2u|), and its backward within 32u·(1 + |u|) of its magnitude.
//  - softmax weights: relative error ≤ 2·δs + 4·(n+8)·u, δs the scores' bound above; exact zeros
//    where masked and on empty rows, NaN where the naive softmax overflows, as the reference.
//    With ALiBi the bias counts in the scores' magnitude; exact zeros outside the window too.
//  - the variants' kernels (tests/test_kernels_variants.cpp): RMSNorm as layernorm (K = C);
//    RoPE within 4u·(|a| + |b|) of its pair; SwiGLU within 16u·|out|, its backward within
//    32u·(1 + |g|)·|dout·up| + 16u·|dout·silu(g)|.
// Results can differ between instruction sets (and so between native and wasm builds) within
// these bounds; one build on one instruction set gives the same bits every time.
//
// Attention conventions (the stepper's): scores are q·k summed over the head dimension in order,
// then multiplied by scale = 1/√hs; query t sees keys j ≤ t (mask strict, j > i + base hidden) or
// j < t (mask inclusive, the tutorials' exercise j ≥ i + base). A row that sees no key gets weights
// and context 0, not NaN. The naive softmax (no max subtracted) keeps its overflow NaN: training
// reports it as divergence. The stepper's variants (attention.h), as AttnOptions fields:
//  - grouped-query (n_kv_head, dividing NH): qkv rows are q (C), k (KC), v (KC) with KC =
//    n_kv_head·hs, width C + 2·KC (qkv_width); query head h reads key/value head h/(NH/n_kv_head);
//  - sliding window w: the query at position p also loses the keys j ≤ p − w;
//  - attention sinks s (with a window, StreamingLLM's): the keys j < s stay visible whatever the
//    window, so a row sees [0, s) ∪ [p − w + 1, p] (row_keys); the softmax runs over both parts;
//  - ALiBi: slopes (NH) or null; the scaled score gets −m_h·(p − j) added before the softmax.
// RoPE is a kernel of its own (rope_forward), run on q and k before attention.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/attention/attention.h"  // MaskVariant

namespace ap::kernels {

struct AttnOptions {
  MaskVariant mask = MaskVariant::strict;
  bool stable_softmax = true;
  int n_kv_head = 0;                  // key/value heads; 0 means NH
  int window = 0;                     // sliding window; 0 means none
  const float* alibi_slopes = nullptr;  // (NH) ALiBi's slopes, or null (no bias)
  int sink = 0;                       // attention sinks: the first keys, visible under the window
  // attention_forward and attention_forward_infer only: the query heads [head_lo, head_hi) alone
  // (head_hi 0: all NH), their columns of out and their (T,T) blocks of att; the rest untouched.
  // Each head is computed as in the whole call (GPT::set_threads splits the heads this way).
  int head_lo = 0, head_hi = 0;
};
// The heads an attention_forward call covers: [head_lo, head_hi), or [0, NH) when head_hi is 0.
inline int heads_from(const AttnOptions& o) { return o.head_hi > 0 ? o.head_lo : 0; }
inline int heads_to(int NH, const AttnOptions& o) { return o.head_hi > 0 ? o.head_hi : NH; }

// Number of keys query t (0-based position) may see under the mask: t + 1 (strict) or t (inclusive).
inline int visible_keys(int t, MaskVariant mask) { return mask == MaskVariant::strict ? t + 1 : t; }
// The first key the query at position p sees (the sliding window's start; 0 without a window).
inline int first_key(int p, int window) { return window > 0 && p - window + 1 > 0 ? p - window + 1 : 0; }
// The keys the query at position p sees before the mask's end n: [0, sink) ∪ [lo, n). sink is 0
// when the window leaves nothing out before the sinks' end (then the row is [lo, n) as without sinks).
struct RowKeys {
  int sink, lo;
};
inline RowKeys row_keys(int p, int n, const AttnOptions& o) {
  int lo = first_key(p, o.window);
  if (lo > n) lo = n;
  if (o.sink <= 0) return {0, lo};
  if (o.sink >= lo) return {0, 0};
  return {o.sink, lo};
}
// A row's sink scores [0, s) moved beside its window's [lo, n) (to [lo − s, lo), inside the gap
// [s, lo) the window hides), so one softmax runs on [lo − s, n); sink_scatter puts them back and
// zeroes the gap. Nothing happens when s is 0.
inline void sink_gather(float* row, RowKeys r) {
  for (int j = r.sink - 1; j >= 0; --j) row[r.lo - r.sink + j] = row[j];
}
inline void sink_scatter(float* row, RowKeys r) {
  for (int j = 0; j < r.sink; ++j) row[j] = row[r.lo - r.sink + j];
  for (int j = r.sink; j < r.lo && r.sink > 0; ++j) row[j] = 0.0f;
}
// Key/value heads, and the floats of one qkv row: C + 2·n_kv_head·hs.
inline int kv_heads(int NH, const AttnOptions& o) { return o.n_kv_head > 0 ? o.n_kv_head : NH; }
inline int qkv_width(int C, int NH, const AttnOptions& o) { return C + 2 * (C / NH) * kv_heads(NH, o); }

// RoPE's tables and pairing (rope_forward): cos and sin (positions, d_rot/2) of the angles
// position·θ_i, θ_i = rope_base^(−2i/d_rot), computed as the stepper does (attention.h).
struct RopeTable {
  const float* cos = nullptr;
  const float* sin = nullptr;
  int d_rot = 0;        // rotated dimensions of each head (even, ≤ hs)
  bool halves = true;   // pairs (i, i + d_rot/2) (GPT-NeoX, Llama); false: (2i, 2i+1) (the RoPE paper)
};

// One tier's kernels. Every tier fills every field (by name, from AP_KERNEL_NAMES below).
struct Kernels {
  // "reference", or the fast tier's instruction set: "avx512", "avx2", "sse2", "simd128", "scalar"
  const char* name;

  // -------------------------------------------------------------- encoder
  // out (B,T,C) = wte[ids[b,t]] + wpe[t]; ids (B,T) in [0, V); wpe null: no positions added
  void (*encoder_forward)(float* out, const int* ids, const float* wte, const float* wpe, int B, int T, int C);
  // dwte (V,C) += Σ dout over the positions of each id; dwpe (T,C) += Σ_b dout
  void (*encoder_backward)(float* dwte, float* dwpe, const float* dout, const int* ids, int B, int T, int C);

  // -------------------------------------------------------------- layernorm
  // out (N,C) = (inp − mean)·rstd·w + b per row, rstd = 1/√(var + eps) (PyTorch's and GPT-2's eps:
  // 1e-5); b (C) or null (no bias); mean (N), rstd (N) kept for the backward
  void (*layernorm_forward)(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b,
                            int N, int C, float eps);
  void (*layernorm_backward)(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                             const float* mean, const float* rstd, int N, int C);
  // RMSNorm (Llama's): out (N,C) = inp·rstd·w per row, rstd = 1/√(mean(inp²) + eps); rstd (N) kept
  void (*rmsnorm_forward)(float* out, float* rstd, const float* inp, const float* w, int N, int C, float eps);
  // dinp += rstd·(w⊙dout) − inp·rstd³·Σ(w⊙dout⊙inp)/C;  dw += Σ_n dout⊙inp·rstd
  void (*rmsnorm_backward)(float* dinp, float* dw, const float* dout, const float* inp, const float* w,
                           const float* rstd, int N, int C);

  // -------------------------------------------------------------- RoPE
  // Rotates, in place, the first n_heads heads (hs wide) of each row of x (B,T, stride ld): row
  // (b, t) sits at position pos0 + t, pair i turns by its angle: (a, b) → (a·cos − b·sin,
  // a·sin + b·cos). In qkv the q and k heads are the first NH + n_kv_head heads of a row.
  void (*rope_forward)(float* x, int B, int T, int ld, int n_heads, int hs, int pos0, RopeTable r);
  // The backward: turns dx back by the same angles in place (Rᵀ): ∂L/∂(rotated) → ∂L/∂(unrotated)
  void (*rope_backward)(float* dx, int B, int T, int ld, int n_heads, int hs, int pos0, RopeTable r);

  // -------------------------------------------------------------- matmul (a Linear layer)
  // out (N,OC) = inp (N,C) · weightᵀ + bias, weight (OC,C) in PyTorch's Linear layout, bias (OC) or null
  void (*matmul_forward)(float* out, const float* inp, const float* weight, const float* bias, int N, int C, int OC);
  // The same with out's rows ldo ≥ OC floats apart (a run of columns of a wider output, written in
  // place): the same bits as matmul_forward.
  void (*matmul_forward_into)(float* out, int ldo, const float* inp, const float* weight, const float* bias, int N,
                              int C, int OC);
  // dinp (N,C) += dout (N,OC)·weight;  dweight (OC,C) += doutᵀ·inp;  dbias (OC) += Σ_n dout
  void (*matmul_backward)(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                          const float* weight, int N, int C, int OC);

  // -------------------------------------------------------------- causal self-attention
  // qkv (B,T,3C): q, k, v side by side, each C = NH·hs wide, head h in columns h·hs … (h+1)·hs
  // (grouped-query: k and v n_kv_head·hs wide, rows of qkv_width; see above).
  // out (B,T,C): the heads' contexts side by side; att (B,NH,T,T): the softmax weights, 0 where masked.
  void (*attention_forward)(float* out, float* att, const float* qkv, int B, int T, int C, int NH, AttnOptions opt);
  // Floats of scratch attention_forward_infer needs for these sizes in this tier (see
  // attention_forward_infer_scratch_max for a size good for every tier).
  size_t (*attention_forward_infer_scratch)(int B, int T, int C, int NH);
  // Inference form of attention_forward (no backward follows, e.g. generation without a cache, W1):
  // the same out, without keeping the weights. The fast tier fuses scale, mask, softmax and A·V over
  // a few rows at a time in `scratch`, so the (B,NH,T,T) weights are never written.
  void (*attention_forward_infer)(float* out, float* scratch, const float* qkv, int B, int T, int C, int NH,
                                  AttnOptions opt);
  // Floats of scratch attention_backward needs for these sizes in this tier.
  size_t (*attention_backward_scratch)(int B, int T, int C, int NH);
  // dqkv (B,T,3C) += ∂L/∂qkv for dout (B,T,C), from the forward's qkv and att.
  void (*attention_backward)(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att,
                             int B, int T, int C, int NH, AttnOptions opt);
  // One new query per head at position `base` (the KV cache's length), over the T_total = base + 1
  // cached positions: q (C), k_cache and v_cache (T_total, KC) rows (row stride KC = n_kv_head·hs), out (C),
  // att (NH, T_total) the weights (0 where masked).
  void (*attention_decode)(float* out, float* att, const float* q, const float* k_cache, const float* v_cache,
                           int base, int C, int NH, AttnOptions opt);

  // -------------------------------------------------------------- elementwise
  // Exact GELU, out = x·Φ(x) = ½x(1 + erf(x/√2)), as nn.GELU() (not the tanh approximation)
  void (*gelu_forward)(float* out, const float* inp, int N);
  void (*gelu_backward)(float* dinp, const float* inp, const float* dout, int N);
  // GPT-2's tanh approximation ("gelu_new"), out = ½x(1 + tanh(√(2/π)(x + 0.044715x³))), as
  // x·σ(2u) (ops.h); in place allowed, as gelu_forward
  void (*gelu_new_forward)(float* out, const float* inp, int N);
  void (*gelu_new_backward)(float* dinp, const float* inp, const float* dout, int N);
  // SwiGLU (Llama's MLP): inp (N, 2H) holds gate | up per row; out (N,H) = silu(gate)⊙up,
  // silu(g) = g·σ(g) = g / (1 + e^(−g)). out may be inp (in place: rows go in order).
  void (*swiglu_forward)(float* out, const float* inp, int N, int H);
  // dinp (N, 2H) += (dout⊙up⊙σ(g)(1 + g(1 − σ(g))) | dout⊙silu(g))
  void (*swiglu_backward)(float* dinp, const float* inp, const float* dout, int N, int H);
  // out (N) = a + b
  void (*residual_forward)(float* out, const float* a, const float* b, int N);
  // da (N) += dout; db (N) += dout
  void (*residual_backward)(float* da, float* db, const float* dout, int N);

  // -------------------------------------------------------------- loss
  // probs (N,V) = softmax(logits (N,V)); losses (N) = −log probs[targets[n]] (from log-sum-exp)
  void (*crossentropy_forward)(float* losses, float* probs, const float* logits, const int* targets, int N, int V);
  // dlogits (N,V) += dloss·(probs − onehot(targets)), one dloss for every row (the mean's 1/N)
  void (*crossentropy_backward)(float* dlogits, const float* probs, const int* targets, float dloss, int N, int V);

  // -------------------------------------------------------------- optimiser helpers
  // Σ x² over n floats (accumulated in double; fixed order in the reference tier)
  double (*sum_squares)(const float* x, int64_t n);
  // x (n) *= s
  void (*scale_inplace)(float* x, float s, int64_t n);
  // One AdamW step (PyTorch's torch.optim.AdamW, decoupled weight decay) on n parameters:
  //   m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;  m̂ = m/(1−β1ᵗ);  v̂ = v/(1−β2ᵗ)
  //   p −= lr·(m̂/(√v̂ + eps) + weight_decay·p)
  // bias1 = 1−β1ᵗ and bias2 = 1−β2ᵗ are computed by the caller (t = step, from 1).
  void (*adamw_update)(float* params, float* m, float* v, const float* grads, int64_t n, float lr, float beta1,
                       float beta2, float eps, float weight_decay, float bias1, float bias2);

  // -------------------------------------------------------------- for the tests
  // out (n) = e^x and erf(x) as this tier's softmax and GELU compute them (reference: exp_f32, erf_f32)
  void (*exp_n)(float* out, const float* x, int n);
  void (*erf_n)(float* out, const float* x, int n);
};

// Every kernel of Kernels, in its order. A tier fills its table by name from this list:
//   Kernels t{};  t.name = "…";
//   #define AP_SET(f) t.f = f;
//   AP_KERNEL_NAMES(AP_SET)
// and the checks below make sure the list is exactly the struct's fields, in order.
#define AP_KERNEL_NAMES(X)                                                                                   \
  X(encoder_forward) X(encoder_backward) X(layernorm_forward) X(layernorm_backward) X(rmsnorm_forward)       \
  X(rmsnorm_backward) X(rope_forward) X(rope_backward) X(matmul_forward) X(matmul_forward_into)            \
  X(matmul_backward) X(attention_forward) X(attention_forward_infer_scratch) X(attention_forward_infer)     \
  X(attention_backward_scratch) X(attention_backward) X(attention_decode) X(gelu_forward) X(gelu_backward)   \
  X(gelu_new_forward) X(gelu_new_backward) X(swiglu_forward) X(swiglu_backward) X(residual_forward)         \
  X(residual_backward) X(crossentropy_forward) X(crossentropy_backward) X(sum_squares) X(scale_inplace)     \
  X(adamw_update) X(exp_n) X(erf_n)

namespace detail {
#define AP_KERNEL_INDEX(f) f,
enum class KernelIndex : size_t { AP_KERNEL_NAMES(AP_KERNEL_INDEX) count };
#undef AP_KERNEL_INDEX
constexpr size_t kPointer = sizeof(void (*)());
static_assert(sizeof(Kernels) == sizeof(const char*) + static_cast<size_t>(KernelIndex::count) * kPointer,
              "AP_KERNEL_NAMES must list every kernel of Kernels");
#define AP_KERNEL_PLACE(f)                                                                          \
  static_assert(offsetof(Kernels, f) ==                                                             \
                    offsetof(Kernels, encoder_forward) + static_cast<size_t>(KernelIndex::f) * kPointer, \
                "AP_KERNEL_NAMES lists " #f " out of Kernels' order");
AP_KERNEL_NAMES(AP_KERNEL_PLACE)
#undef AP_KERNEL_PLACE
}  // namespace detail

// The reference tier's table (kernels_ref.cpp), callable whatever the tier in use (the fast
// kernels' tests compare with it).
extern const Kernels reference;

enum class Tier { reference, fast };

// The tier in use (fast by default; reference when the build sets AP_REFERENCE_KERNELS).
Tier tier();
// Chooses the tier; returns the tier now in use (reference when forced by the build).
Tier set_tier(Tier t);
// The table of the tier in use: reference, or the fast tier's instruction set (kernels_fast.h).
const Kernels& active();
// active().name: "reference", or the fast tier's instruction set.
const char* tier_name();

// Floats of scratch that attention_forward_infer and attention_backward need in whichever tier and
// instruction set: a buffer sized with these stays valid after set_tier() and fast::set_isa().
size_t attention_forward_infer_scratch_max(int B, int T, int C, int NH);
size_t attention_backward_scratch_max(int B, int T, int C, int NH);

}  // namespace ap::kernels
