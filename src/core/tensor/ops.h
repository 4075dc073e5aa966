// ops.h — the tensor ops that attention is made of, in two layers.
//
// 1. Kernels: plain functions on raw float pointers, outputs first, sizes last, a shape comment
//    on each argument (llm.c style). They check nothing and allocate nothing; they are what a
//    faster backend replaces and what the backward pass will mirror.
// 2. Checked ops on Tensor: validate shapes (ShapeError naming the shapes), allocate the result,
//    call a kernel.
//
// Numerics: float32 throughout, sums in a fixed left-to-right order, our own exp (exp_f32), and
// the build disables FMA contraction, so the native and the wasm builds give the same bits.
// Softmax conventions (documented in docs/api.md):
//  - stable: subtracts the row max before exp; a row whose entries are all −∞ (every key masked)
//    becomes all zeros and is reported as empty instead of turning into NaN.
//  - naive: exp without the shift, as the tutorials' exercise; exp overflows to +∞ above ~88.72,
//    and +∞/+∞ gives NaN — which is the lesson, so it is kept and reported as overflow.
#pragma once

#include <vector>

#include "core/tensor/tensor.h"

namespace ap {

// ---------------------------------------------------------------- scalar helpers

// e^x in float32, within 2 ulp of the exact value over the whole float range (tests/test_softmax.cpp
// checks it); +∞ above 88.7228, 0 below -103.97, NaN for NaN. Deterministic on every platform.
float exp_f32(float x);
// ln x in float32, within 2 ulp over the whole float range (Cephes' logf, subnormals included);
// −∞ for ±0, NaN for x < 0 and NaN, +∞ for +∞. Deterministic on every platform (std::log's last
// bit may differ between glibc and musl, so the cross-entropy and the normal sampler use this).
float log_f32(float x);

// ---------------------------------------------------------------- kernels

// out (M,N) = a (M,K) · b (K,N)
void matmul_forward(float* out, const float* a, const float* b, int M, int K, int N);
// out (M,N) = a (M,K) · bᵀ where b is (N,K)
void matmul_bt_forward(float* out, const float* a, const float* b, int M, int K, int N);
// out (N) = x (N) * s
void scale_forward(float* out, const float* x, float s, int N);

// What a softmax found in one row.
enum class RowStatus : unsigned char {
  ok = 0,
  empty = 1,     // every entry was −∞: the row is set to all zeros
  overflow = 2,  // a non-finite result: naive exp overflowed (or its sum underflowed), or +∞/NaN input
};

// out (rows,cols) = softmax of each row of x (rows,cols). status (rows) may be null.
void softmax_rows_forward(float* out, RowStatus* status, const float* x, int rows, int cols);
// Same, without subtracting the row max (overflows for entries above ~88.72).
void softmax_rows_naive_forward(float* out, RowStatus* status, const float* x, int rows, int cols);

// ---------------------------------------------------------------- backward kernels
// Each mirrors a forward kernel, reads what the forward kept, and ADDS (+=) into the gradients
// of its inputs, so a value used twice collects both contributions; a null gradient pointer
// means "not needed".

// out = a·b: da (M,K) += dout (M,N)·bᵀ, db (K,N) += aᵀ·dout
void matmul_backward(float* da, float* db, const float* dout, const float* a, const float* b, int M, int K, int N);
// out = a·bᵀ with b (N,K): da (M,K) += dout·b, db (N,K) += doutᵀ·a
void matmul_bt_backward(float* da, float* db, const float* dout, const float* a, const float* b, int M, int K,
                        int N);
// y = softmax_rows(x): dx (rows,cols) += y ⊙ (dy − Σ_j dy_j·y_j), row by row (y from the forward)
void softmax_rows_backward(float* dx, const float* dy, const float* y, int rows, int cols);

// ---------------------------------------------------------------- layers (for the GPT)

// out (N,C) = (x − mean)·rstd·w + b over each row of x (N,C); keeps mean (N) and rstd (N).
// b may be null (a LayerNorm without bias, nanoGPT's bias=False).
void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b, int N,
                       int C, float eps);
void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                        const float* mean, const float* rstd, int N, int C);
// Exact GELU: out = x·Φ(x) = ½x(1 + erf(x/√2)), with the core's own erf (erf_f32).
void gelu_forward(float* out, const float* x, int N);
void gelu_backward(float* dx, const float* x, const float* dout, int N);
// GPT-2's GELU, the tanh approximation ("gelu_new"): out = ½x(1 + tanh(u)), u = √(2/π)(x + 0.044715x³),
// computed as x·σ(2u) = x / (1 + e^(−2u)) with the core's own exp (exp_f32): no cancellation for
// either sign of x.
void gelu_new_forward(float* out, const float* x, int N);
void gelu_new_backward(float* dx, const float* x, const float* dout, int N);
// out (N,C) = table[ids[n]] for table (V,C); ids must be in [0, V) (checked by the caller).
void embedding_forward(float* out, const int* ids, const float* table, int N, int C);
void embedding_backward(float* dtable, const float* dout, const int* ids, int N, int C);
// losses (N) = −log softmax(logits (N,V))[targets[n]]; probs (N,V) kept for the backward.
void crossentropy_forward(float* losses, float* probs, const float* logits, const int* targets, int N, int V);
// dlogits (N,V) += dlosses[n]·(probs − onehot(targets[n]))
void crossentropy_backward(float* dlogits, const float* dlosses, const float* probs, const int* targets, int N, int V);

// erf in float32, within one ulp (a double-precision series rounded once); deterministic on
// every platform, like exp_f32. Slow-ish (up to ~60 terms near |x| = 4): fine for now.
float erf_f32(float x);

// ---------------------------------------------------------------- checked ops

// 2-D: (M,K)·(K,N) → (M,N). Batched: (B,M,K)·(B,K,N) → (B,M,N); (B,M,K)·(K,N) broadcasts b.
Tensor matmul(const Tensor& a, const Tensor& b);
// Swaps dimensions d0 and d1 (negative counts from the end); default: the last two.
Tensor transpose(const Tensor& a, int d0 = -2, int d1 = -1);
// out.shape[i] = a.shape[perm[i]]; perm is a permutation of 0..dim-1.
Tensor permute(const Tensor& a, const std::vector<int>& perm);
// Same numbers, new shape with the same element count; one entry may be -1 (inferred).
Tensor reshape(const Tensor& a, Shape shape);
// Elementwise a + b with NumPy broadcasting (shapes aligned at the end; a size-1 dim stretches),
// e.g. a [T, T_total] mask added to [H, T, T_total] scores.
Tensor add(const Tensor& a, const Tensor& b);
// The broadcast shape of a and b, or ShapeError.
Shape broadcast_shape(const Shape& a, const Shape& b);
Tensor scale(const Tensor& a, float s);       // a * s
Tensor add_scalar(const Tensor& a, float s);  // a + s
// Softmax over the last dimension. status, if given, receives one RowStatus per row.
Tensor softmax_rows(const Tensor& a, std::vector<RowStatus>* status = nullptr);
Tensor softmax_rows_naive(const Tensor& a, std::vector<RowStatus>* status = nullptr);

}  // namespace ap
