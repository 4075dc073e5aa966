// attention.h — scaled dot-product attention with a full trace of every step.
//
// Two ways in:
//   from x:       Q = x[base:]·W_q + b_q,  K = x·W_k + b_k,  V = x·W_v + b_v   (the Linear layers
//                 c_q, c_k, c_v of the tutorials; biases optional)
//   from Q, K, V: given directly.
// Then, for each head h (columns h·head_dim … of Q and K, h·d_v … of V):
//   scores  = q·kᵀ                       (T, T_total)
//   scaled  = scores / √head_dim         (or scores, when scaling is off)
//   masked  = scaled + mask              (mask: 0 or −∞, see causal_mask)
//   weights = softmax_rows(masked)       ("attn" in the tutorials; stable or naive)
//   context = weights·v                  (T, d_v)
// concat = the heads' contexts side by side (T, n_head·d_v); out = concat·W_o + b_o, or concat.
//
// Modern variants (each off by default; off, the trace is the plain one above, bit for bit):
//   RoPE (rope = interleaved | halves): before the scores, q and k are rotated pair by pair:
//                 q_rot = R(position)·q, k_rot = R(position)·k, scores = q_rot·k_rotᵀ. Query i
//                 sits at position base + i, key j at position j. The first d_rot = rope_dims
//                 dimensions (default head_dim; even) form d_rot/2 pairs, pair i turning by the
//                 angle position·θ_i, θ_i = rope_base^(−2i/d_rot) (rope_base 10000 by default):
//                 (a, b) → (a·cos − b·sin, a·sin + b·cos). Pairs are (2i, 2i+1) when interleaved
//                 (the RoPE paper) and (i, i + d_rot/2) when halves (GPT-NeoX, Llama); the
//                 dimensions from d_rot on pass unrotated (partial rotation, GPT-NeoX and Phi).
//                 Angles are computed in double and kept as float; the rotation is float.
//   ALiBi (alibi): head h adds the bias −m_h·(position_i − j) to its scaled scores before the
//                 mask: masked = scaled + bias + mask, query i at position base + i, key j at j.
//                 The slopes m_h are the paper's geometric sequence 2^(−8h/n_head), h = 1 …
//                 n_head (computed in double, kept as float), or alibi_slopes, one per head.
//   Grouped-query (n_kv_head, dividing n_head; 1 is multi-query): K and V (or W_k, W_v) have
//                 n_kv_head·head_dim and n_kv_head·d_v columns; query head h reads key/value head
//                 h / (n_head/n_kv_head). The trace's k and v are per query head (its group's,
//                 repeated, as Llama's repeat_kv); the gradients of K and V sum over the group.
//   Sliding window (window w ≥ 1, with causal): the query at position p = base + i also loses the
//                 keys j ≤ p − w, so it sees p − w + 1 … p (strict; … p − 1 inclusive), as Mistral;
//                 with sinks s the first s keys stay visible whatever the window (StreamingLLM).
//   FlashAttention's tiles (flash_block_q, flash_block_k ≥ 1; flash.h): the same context computed
//                 block by block with an online softmax, kept in AttentionTrace::flash beside the
//                 plain path (whose weights, context and out stay the ones above), with the largest
//                 difference between the two and its bound. Needs the stable softmax.
//
// KV cache: the T queries are the last T of T_total = T + base positions; query i sits at
// position base + i and may look at keys j ≤ base + i (mask j > i + base, the standard one) or
// j < base + i (mask j ≥ i + base, the tutorials' exercise, where row 0 of the first step sees
// nothing). A row whose every key is masked gets all-zero weights and context and is listed in
// AttentionTrace::empty_rows with a warning, never NaN. A naive softmax that overflows keeps its
// NaN (that is the lesson it teaches) and is listed in overflow_rows with a warning.
//
// Errors: InputError (a std::invalid_argument) whose message names the matrix and the shapes,
// e.g. "K has 3 columns but Q has 4", with `field` set to the matrix at fault and row/column
// (1-based) for a bad value. Limits: each dimension ≤ kMaxDim, n_head·T·T_total ≤ kMaxScores.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "core/base/input_error.h"
#include "core/tensor/ops.h"
#include "core/tensor/tensor.h"

namespace ap {

constexpr int kMaxDim = 1024;
// n_head · T · T_total, the size of one step of the trace: e.g. 16 heads of 128×128, or one head
// of 512×512. A trace is for looking at; its JSON holds ~9 such steps.
constexpr long long kMaxScores = 1 << 18;

enum class MaskVariant {
  strict,     // masked where j > i + base: each query sees itself and the past (standard)
  inclusive,  // masked where j >= i + base: the tutorials' exercise; queries lose themselves
};

enum class RopePairing {
  none,         // no rotary position embedding
  interleaved,  // pairs (2i, 2i+1), the RoPE paper
  halves,       // pairs (i, i + d_rot/2), GPT-NeoX and Llama
};

struct AttentionOptions {
  int n_head = 1;
  bool causal = false;
  MaskVariant mask = MaskVariant::strict;
  int base = 0;          // KV-cache offset: number of cached positions before the T queries
  bool scale = true;     // divide scores by √head_dim
  bool stable_softmax = true;
  RopePairing rope = RopePairing::none;
  double rope_base = 10000.0;  // θ_i = rope_base^(−2i/d_rot); must be > 1
  int rope_dims = 0;           // d_rot, the rotated dimensions of each head; 0 means head_dim
  int n_kv_head = 0;  // key/value heads; 0 means n_head (plain multi-head attention)
  int window = 0;     // sliding window w (needs causal); 0 means none
  int sinks = 0;      // attention sinks: the first keys, always visible (needs window)
  bool alibi = false;
  std::vector<float> alibi_slopes;  // one per head; empty means 2^(−8h/n_head)
  int flash_block_q = 0;  // FlashAttention: query rows per tile (0: off; both or neither)
  int flash_block_k = 0;  // FlashAttention: key columns per tile
};

// One step of FlashAttention's forward for one head: query block qb (rows r0 … r0 + rows − 1)
// meets key block kb (columns c0 … c0 + cols − 1). The state after the step, per row of the block:
// m = max(m_old, the tile's row max), alpha = e^(m_old − m) (the rescale of the old sums; 1 when
// the maximum stayed, 0 before any key was seen), l = alpha·l_old + Σ_j p, o = alpha·o_old + p·v.
struct FlashStep {
  int head = 0, q_block = 0, k_block = 0, r0 = 0, rows = 0, c0 = 0, cols = 0;
  bool skipped = false;  // every entry of the tile is masked: m, l, o carry over unchanged
  Tensor m{}, l{}, alpha{};  // (rows)
  Tensor p{};                // (rows, cols) = e^(masked − m), 0 at masked entries
  Tensor o{};                // (rows, d_v): the unnormalised partial output
};

// FlashAttention's forward (FlashAttention-2's loop order: for each query block, every key block).
struct FlashTrace {
  int block_q = 0, block_k = 0, n_q_blocks = 0, n_k_blocks = 0;
  std::vector<FlashStep> steps;  // head-major, then query block, then key block
  Tensor m, l;        // (n_head, T): the final row maximum and sum
  Tensor lse;         // (n_head, T): L = m + log l, the logsumexp the backward recomputes P from
                      // (−∞ for an empty row)
  Tensor context;     // (n_head, T, d_v) = o / l (0 for an empty row)
  Tensor concat, out; // as the plain path's, from this context
  // Largest |flash − plain| over the context and out, and the bounds they must stay within
  // (flash.h states them).
  float max_diff_context = 0, max_diff_out = 0, bound_context = 0, bound_out = 0;
};

// Leave a tensor empty (default-constructed) to say it is absent.
struct AttentionInput {
  Tensor x;                    // (T_total, d_model)
  Tensor W_q, W_k, W_v;        // (d_model, n_head·head_dim), (d_model, n_head·head_dim), (d_model, n_head·d_v)
  Tensor b_q{}, b_k{}, b_v{};  // (n_head·head_dim), …, optional
  Tensor W_o{}, b_o{};         // (n_head·d_v, d_out), (d_out), optional
  Tensor Q{}, K{}, V{};        // (T, n_head·head_dim), (T_total, n_head·head_dim), (T_total, n_head·d_v)
  bool from_x() const { return !x.empty(); }
};

struct EmptyRow {
  int head;
  int row;
};

// Everything the forward pass computed, under the names the page shows; the backward pass reads it.
// This is the tutorials' AttentionCache (x, q, k, v, scores, attn, context), grown.
struct AttentionTrace {
  AttentionOptions options;
  int T = 0, T_total = 0, d_model = 0, head_dim = 0, d_v = 0, d_out = 0;
  float scale_factor = 1.0f;  // 1/√head_dim, or 1 when scaling is off
  AttentionInput input;       // as used (random weights filled in, if any)
  Tensor q;        // (n_head, T, head_dim)
  Tensor k;        // (n_head, T_total, head_dim): query head h's keys (kv head kv_head[h]'s)
  Tensor v;        // (n_head, T_total, d_v)
  std::vector<int> kv_head;  // (n_head): the key/value head each query head reads
  // RoPE (empty when off): d_rot as used, θ_i, the positions, the angles position·θ_i, and the
  // rotated q and k the scores are taken from.
  int rope_dims = 0;
  Tensor rope_theta;   // (d_rot/2)
  Tensor q_positions;  // (T): base + i
  Tensor k_positions;  // (T_total): j
  Tensor q_angles;     // (T, d_rot/2)
  Tensor k_angles;     // (T_total, d_rot/2)
  Tensor q_rot;        // (n_head, T, head_dim)
  Tensor k_rot;        // (n_head, T_total, head_dim)
  Tensor scores;   // (n_head, T, T_total) = q·kᵀ (q_rot·k_rotᵀ with RoPE)
  Tensor scaled;   // (n_head, T, T_total) = scores · scale_factor
  Tensor alibi_slopes;  // ALiBi (empty when off): (n_head) m_h
  Tensor bias;          // (n_head, T, T_total) = −m_h·(base + i − j)
  Tensor mask;     // (T, T_total), 0 or −∞ (all 0 when causal is off)
  Tensor masked;   // (n_head, T, T_total) = scaled + mask (scaled + bias + mask with ALiBi)
  Tensor weights;  // (n_head, T, T_total) = softmax_rows(masked)
  Tensor weight_row_sums;  // (n_head, T): Σ_j weights — 1, or 0 for an empty row
  Tensor context;  // (n_head, T, d_v) = weights·v
  Tensor concat;   // (T, n_head·d_v)
  Tensor out;      // (T, d_out) = concat·W_o + b_o, or concat when there is no W_o
  FlashTrace flash;  // FlashAttention's tiles (empty when off)
  std::vector<EmptyRow> empty_rows;     // rows whose every key is masked
  std::vector<EmptyRow> overflow_rows;  // rows where the softmax met a non-finite value
  std::vector<std::string> warnings;    // plain-language notes on the above
};

// The causal mask (T, T_total): 0 where query i may look at key j, −∞ where it may not.
Tensor causal_mask(int T, int T_total, int base, MaskVariant variant);

// The traced forward pass (the stepper's; the GPT's layer kernels are kernels.h's): checks the
// input against the options (shapes, finite values, limits), then computes and keeps every step.
// Throws InputError.
AttentionTrace attention_trace(const AttentionInput& input, const AttentionOptions& options);

// The tutorials' single-head attention: returns (out, attn) for x with W_q, W_k, W_v, W_o.
struct OutAndWeights {
  Tensor out;
  Tensor attn;
};
OutAndWeights single_head_attention(const Tensor& x, const Tensor& W_q, const Tensor& W_k,
                                    const Tensor& W_v, const Tensor& W_o, bool causal = false);

// The gradients of attention for an upstream gradient d_out = ∂L/∂out, computed from the cached
// forward values of a trace (llm.c style: each step's backward reads what its forward kept).
// Names are "d_" + the forward name. Masked positions get exactly 0 in d_scaled and d_scores
// (their weights are 0); an empty row gets 0 throughout. Gradients of absent inputs stay empty.
struct AttentionGrads {
  Tensor d_out;                  // (T, d_out), as given
  Tensor d_W_o, d_b_o;           // (n_head·d_v, d_out), (d_out)
  Tensor d_concat;               // (T, n_head·d_v)
  Tensor d_context;              // (n_head, T, d_v)
  Tensor d_weights;              // (n_head, T, T_total) = d_context·vᵀ
  Tensor d_v;                    // (n_head, T_total, d_v) = weightsᵀ·d_context
  Tensor d_scaled;               // (n_head, T, T_total): softmax backward, A ⊙ (G − rowsum(G ⊙ A))
  Tensor d_scores;               // (n_head, T, T_total) = d_scaled · scale_factor
  Tensor d_q_rot, d_k_rot;       // RoPE: d_scores·k_rot, d_scoresᵀ·q_rot (empty when off)
  Tensor d_q;                    // (n_head, T, head_dim) = d_scores·k (RoPE: R(position)ᵀ·d_q_rot)
  Tensor d_k;                    // (n_head, T_total, head_dim) = d_scoresᵀ·q (RoPE: R(position)ᵀ·d_k_rot)
                                 // (per query head; d_K sums each group's, with n_kv_head)
  Tensor d_Q, d_K, d_V;          // the heads side by side, as Q, K, V
  Tensor d_x;                    // (T_total, d_model), x mode
  Tensor d_W_q, d_W_k, d_W_v;    // x mode
  Tensor d_b_q, d_b_k, d_b_v;    // when the bias was given
  // FlashAttention-2's backward (flash on; flash.h): D = rowsum(d_context ⊙ flash context), and
  // P recomputed tile by tile from the stored logsumexp, P = e^(masked − L). d_weights (dP),
  // d_v and d_scaled (dS = P ⊙ (dP − D)) are then computed tile by tile from these.
  Tensor flash_D;  // (n_head, T)
  Tensor flash_P;  // (n_head, T, T_total)
  // The state after each tile of the backward (head-major, then key block, then query block): the
  // key block's dV and dK so far (dK of the rotated keys with RoPE) and the query block's dQ so
  // far (of the rotated queries), as FlashAttention-2 accumulates them.
  struct FlashBackStep {
    int head = 0, k_block = 0, q_block = 0, r0 = 0, rows = 0, c0 = 0, cols = 0;
    Tensor dv, dk;  // (cols, d_v), (cols, head_dim)
    Tensor dq;      // (rows, head_dim)
  };
  std::vector<FlashBackStep> flash_steps;
};

// The backward pass of a trace. Throws InputError (field "d_out") if d_out's shape is not out's.
AttentionGrads attention_trace_backward(const AttentionTrace& trace, const Tensor& d_out);

// Split (T, n_head·d) into (n_head, T, d), and back.
Tensor split_heads(const Tensor& a, int n_head);
Tensor concat_heads(const Tensor& a);

}  // namespace ap
