// flash.h — FlashAttention's tiles for the traced attention (attention.h): the forward's online
// softmax block by block (FlashAttention-2's loop order), and the backward's recomputation of P
// per tile from the stored logsumexp. Limits: scalar, fixed order, the core's own exp and log
// (exp_f32, log_f32), so the same bits natively and in wasm; a teaching trace, not a fast kernel.
//
// Forward, for each head and each query block (rows r0 … r0 + block_q − 1), with per row m = −∞,
// l = 0, o = 0, and then for each key block (columns c0 … c0 + block_k − 1) the tile S = masked
// (the plain path's scaled scores + ALiBi bias + mask, the same numbers FlashAttention computes
// from q·kᵀ, so mask, base, window, sinks, ALiBi, RoPE and GQA compose):
//   m_new = max(m, rowmax S);  alpha = e^(m − m_new);  p = e^(S − m_new)
//   l = alpha·l + rowsum p;    o = alpha·o + p·v_tile;  m = m_new
// A tile whose every entry is masked is skipped (it would change nothing). At the end,
// context = o / l and the logsumexp L = m + log l; a row that never saw a key (l = 0) is an
// empty row: context 0, L = −∞, as the plain path.
//
// The bound. u = 2^−24 (float32's unit roundoff). Both paths compute each weight from e^x values
// with ≤ 2 ulp each and round their arguments; the flash path multiplies in one alpha per key
// block, and both sum T_total terms in float. Each weight's relative error is then at most about
// (2·T_total + 4·n_k_blocks + 8)·u (the argument roundings weigh e^x·|x| ≤ 1/e per entry), and the
// context is a weighted mean of the rows of v, so
//   |flash context − plain context| ≤ bound_context = (4·T_total + 8·n_k_blocks + 16)·u·max|v|,
// twice the first-order estimate. out = concat·W_o + b_o adds the two products' own rounding:
//   bound_out = (bound_context + 2·(n_head·d_v + 2)·u·max|context|)·max_c Σ_r |W_o(r, c)|
// (bound_out = bound_context without W_o). The tests check it on scores spread over ±60.
//
// Backward (FlashAttention-2, Algorithm 2), from d_context = dO and the flash context O:
//   D = rowsum(dO ⊙ O); for each key block, for each query block: P = e^(S − L) (recomputed, no
//   stored weights), dV += Pᵀ·dO, dP = dO·vᵀ, dS = P ⊙ (dP − D). dS is the gradient of masked
//   (and scaled), so dQ = dS·k·scale and dK = dSᵀ·q·scale follow as in the plain backward. The
//   trace (AttentionGrads::flash_steps) keeps after each tile the key block's dV and dK and the
//   query block's dQ so far, accumulated tile by tile as FlashAttention-2 does; the gradients the
//   chain goes on with are taken from dS, as the plain backward's.
#pragma once

#include "core/attention/attention.h"

namespace ap {

// Throws InputError (field "flash_block_q" or "flash_block_k") for bad block sizes, the naive
// softmax, or more than kMaxFlashSteps steps.
void check_flash_options(const AttentionOptions& opt, int T, int T_total);
constexpr long long kMaxFlashSteps = 4096;  // n_head · n_q_blocks · n_k_blocks

// Fills tr.flash from tr.masked, tr.v and W_o, b_o, and the differences from tr.context, tr.out.
void flash_forward(AttentionTrace& tr);

// From g.d_context: fills g.flash_D, g.flash_P, g.d_weights (dP), g.d_v (dV summed over query
// blocks), g.d_scaled (dS) and g.flash_steps, tile by tile.
void flash_backward(const AttentionTrace& tr, AttentionGrads& g);

}  // namespace ap
