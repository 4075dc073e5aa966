// bf16_gemm.h — a prompt's product with BF16 weights on AVX512_BF16 (VDPBF16PS: two bf16 products
// added into a float32 lane per instruction, twice the float FMA's rate), as PyTorch's BF16 Linear
// computes it on such a CPU: each activation rounded to bf16 (to nearest, ties to even), the
// products of bf16 pairs summed in float32. typed_matmul.cpp uses it for the BF16 parts of a
// prompt's product (N ≥ kRows) in the fast tier on the avx512 instruction set when the CPU has
// avx512_bf16; everywhere else (wasm, other CPUs, the reference tier) today's float path runs.
//
// Tolerance against the reference (the float product of the same BF16 weights with the float32
// activations, quant::matmul_ref): each activation's rounding moves a term by at most u₈·|a·w|
// (u₈ = 2⁻⁸, bf16's unit roundoff; the products of two bf16 are exact in float32), the float32
// sum in another order by 2·(K+8)·u·Σ|terms| as kernels.h's matmul (u = 2⁻²⁴), and the conversion and
// VDPBF16PS treat subnormal inputs and results as zero (at most 2⁻¹²⁶·(1 + |w_k|) a term). So, for
// an output of K terms,
//   |bf16 − ref| ≤ (u₈ + 2·(K+8)·u·(1 + u₈))·Σ_k |a_k·w_k| + 2⁻¹²⁵·Σ_k (1 + |w_k|).
// Against the exact sum of the bf16-rounded activations times the weights the rounding term
// drops: |bf16 − Σ bf16(a_k)·w_k| ≤ 2·(K+8)·u·Σ|bf16(a_k)·w_k| + 2⁻¹²⁵·Σ_k (1 + |w_k|) (tests/test_bf16_gemm.cpp
// checks both). Each output is summed in the same order (pair by pair along K) whatever rows and
// columns a call covers, so a split across threads gives the same bits.
// Limits: x86-64 natively only (the file is compiled with -mavx512bf16 where the compiler has it:
// AP_BF16_GEMM); a buffer per thread for the activations in bf16 and a packed panel of 64 weight
// rows (grown once); NaN inputs stay NaN, infinities follow IEEE.
#pragma once

#include <cstdint>

namespace ap::kernels::bf16 {

// Rows from which typed_matmul.cpp takes this product (fewer: generation's matrix-vector path).
constexpr int kRows = 8;

// True when this build has the kernel and the CPU runs it (avx512f, avx512bw, avx512_bf16).
bool available();
// Whether typed_matmul.cpp takes this product for a prompt's BF16 parts (fast tier, avx512):
// available() unless the environment variable AP_BF16_GEMM is "0" at the first call, or
// set_enabled(false) (the tests and the benchmark compare both paths; a global, as set_tier).
bool enabled();
void set_enabled(bool on);  // true takes effect only where available()

// out (N rows, stride ldo) columns 0 … OC−1 = bf16(inp) (N, C) · wᵀ, w OC rows of C bf16 values
// (their bits, rows contiguous). Call only when available().
void gemm(float* out, int ldo, const float* inp, const uint16_t* w, int N, int C, int OC);

}  // namespace ap::kernels::bf16
