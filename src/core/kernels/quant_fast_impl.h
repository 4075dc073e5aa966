// quant_fast_impl.h — quant.h's fast tier, written once against simd.h's vector type V and compiled
// once per instruction set: included at the end of each kernels_fast_<isa>.cpp (after
// kernels_fast_impl.h, with its AP_SIMD_*, AP_FAST_NS and AP_FAST_NAME), into its own namespace
// ap::quant::fast::AP_FAST_NS with its own table (`table`, a quant::FastTable).
//
// y = x·Wᵀ: the rows of W four at a time, each dequantized once (quant_blocks.inc, the reference's
// own arithmetic, so the same values) into the calling thread's packing workspace (kernels_fast.h),
// then their dot products with each row of x in vector lanes, fused multiply-adds, x's vectors loaded
// once for the four (F32 rows are read in place); the last N mod 4 rows one at a time, with four
// accumulators. For M ≥ 2 the dequantization is paid once per row of W, not once per output.
// Limits: rows of more than kWorkspaceFloats / 4 values run the reference; no threads; deterministic for
// a build and an instruction set (the order of summation is fixed by K).
#pragma once

#include <type_traits>

#include "core/kernels/kernels_fast.h"
#include "core/kernels/quant.h"
#include "core/kernels/quant_blocks.inc"
#include "core/kernels/quant_fast_blocks.h"
#include "core/kernels/simd.h"

#ifndef AP_FAST_NS
#error "define AP_FAST_NS (the ISA's namespace) before including quant_fast_impl.h"
#endif

namespace ap::quant::fast::AP_FAST_NS {

using QV = simd::V;

// Σ a[k]·b[k]: the float kernels' own four-accumulator dot product (kernels_fast_impl.h).
static inline float dot(const float* a, const float* b, int K) { return kernels::fast::AP_FAST_NS::dot_row(a, b, K); }

// Σ a[k]·b_r[k] for four rows b_r at once: a's vectors loaded once for the four (one accumulator each).
static inline void dot4(const float* a, const float* const* b, int K, float* out) {
  constexpr int W = QV::W;
  QV::T s0 = QV::zero(), s1 = QV::zero(), s2 = QV::zero(), s3 = QV::zero();
  int k = 0;
  for (; k + W <= K; k += W) {
    const QV::T v = QV::load(a + k);
    s0 = QV::fmadd(v, QV::load(b[0] + k), s0);
    s1 = QV::fmadd(v, QV::load(b[1] + k), s1);
    s2 = QV::fmadd(v, QV::load(b[2] + k), s2);
    s3 = QV::fmadd(v, QV::load(b[3] + k), s3);
  }
  if (k < K) {
    const int n = K - k;
    const QV::T v = QV::load_partial(a + k, n);
    s0 = QV::fmadd(v, QV::load_partial(b[0] + k, n), s0);
    s1 = QV::fmadd(v, QV::load_partial(b[1] + k, n), s1);
    s2 = QV::fmadd(v, QV::load_partial(b[2] + k, n), s2);
    s3 = QV::fmadd(v, QV::load_partial(b[3] + k, n), s3);
  }
  out[0] = QV::reduce_add(s0);
  out[1] = QV::reduce_add(s1);
  out[2] = QV::reduce_add(s2);
  out[3] = QV::reduce_add(s3);
}

// Q8_0 and Q4_0 read in place (no workspace): R rows of W (R ≤ 4) at once against one row of x,
// block by block. A block's quants become floats in vector lanes (quant_fast_blocks.h), their dot
// product with x's 32 values is taken in floats (a multiply, then fused multiply-adds), and that
// sum times the block's scale d is added to the row's accumulator: Σ_b d_b·(Σ_{k∈b} x_k·q_k), the
// same real number as the reference's Σ_k x_k·(q_k·d_b) (q·d is exact in float), rounded in
// another order. x's vectors are loaded once for the R rows.
template <Type T, int R>
static inline void blocks_dot(const float* x, const char* w, size_t rb, int nb, float* out) {
  using Block = typename std::conditional<T == Type::Q8_0, BlockQ8_0, BlockQ4_0>::type;
  constexpr int P = kBlockVecs, W = QV::W;
  QV::T acc[R];
  for (int r = 0; r < R; ++r) acc[r] = QV::zero();
  for (int b = 0; b < nb; ++b, x += 32) {
    QV::T xv[P];
    for (int j = 0; j < P; ++j) xv[j] = QV::load(x + j * W);
    for (int r = 0; r < R; ++r) {
      const Block* blk = reinterpret_cast<const Block*>(w + rb * static_cast<size_t>(r)) + b;
      QV::T q[P];
      if constexpr (T == Type::Q8_0) q8_block(blk->qs, q);
      else q4_block(blk->qs, q);
      QV::T s = QV::mul(xv[0], q[0]);
      for (int j = 1; j < P; ++j) s = QV::fmadd(xv[j], q[j], s);
      acc[r] = QV::fmadd(s, QV::set1(blocks::f16(blk->d)), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = QV::reduce_add(acc[r]);
}

template <Type T>
static void matmul_blocks(float* y, const float* x, const void* w, int M, int N, int K) {
  const size_t rb = static_cast<size_t>(row_bytes(T, static_cast<uint64_t>(K)));
  const size_t k = static_cast<size_t>(K), n_out = static_cast<size_t>(N);
  const char* wb = static_cast<const char*>(w);
  const int nb = K / 32;
  float out[4];
  for (int m = 0; m < M; ++m) {
    const float* xm = x + static_cast<size_t>(m) * k;
    float* ym = y + static_cast<size_t>(m) * n_out;
    int n = 0;
    for (; n + 4 <= N; n += 4) {
      blocks_dot<T, 4>(xm, wb + rb * static_cast<size_t>(n), rb, nb, out);
      for (int j = 0; j < 4; ++j) ym[n + j] = out[j];
    }
    for (; n < N; ++n) {
      blocks_dot<T, 1>(xm, wb + rb * static_cast<size_t>(n), rb, nb, out);
      ym[n] = out[0];
    }
  }
}

static void matmul(float* y, const float* x, const void* w, Type t, int M, int N, int K) {
  if (t == Type::Q8_0) return matmul_blocks<Type::Q8_0>(y, x, w, M, N, K);
  if (t == Type::Q4_0) return matmul_blocks<Type::Q4_0>(y, x, w, M, N, K);
  if (t != Type::F32 && 4 * static_cast<size_t>(K) > kernels::fast::kWorkspaceFloats) {
    matmul_ref(y, x, w, t, M, N, K);
    return;
  }
  float* buf = kernels::fast::workspace();
  const size_t rb = static_cast<size_t>(row_bytes(t, static_cast<uint64_t>(K)));
  const size_t k = static_cast<size_t>(K), n_out = static_cast<size_t>(N);
  int n = 0;
  for (; n + 4 <= N; n += 4) {  // four rows of W at a time, each dequantized once
    const float* rows[4];
    for (int j = 0; j < 4; ++j) {
      const char* src = static_cast<const char*>(w) + rb * static_cast<size_t>(n + j);
      rows[j] = reinterpret_cast<const float*>(src);
      if (t != Type::F32) {
        blocks::row(t, src, buf + static_cast<size_t>(j) * k, K);
        rows[j] = buf + static_cast<size_t>(j) * k;
      }
    }
    for (int m = 0; m < M; ++m) dot4(x + static_cast<size_t>(m) * k, rows, K, y + static_cast<size_t>(m) * n_out + static_cast<size_t>(n));
  }
  for (; n < N; ++n) {
    const char* src = static_cast<const char*>(w) + rb * static_cast<size_t>(n);
    const float* row = reinterpret_cast<const float*>(src);
    if (t != Type::F32) {
      blocks::row(t, src, buf, K);
      row = buf;
    }
    for (int m = 0; m < M; ++m) y[static_cast<size_t>(m) * n_out + static_cast<size_t>(n)] = dot(x + static_cast<size_t>(m) * k, row, K);
  }
}

extern const FastTable table;
const FastTable table = {AP_FAST_NAME, matmul};

}  // namespace ap::quant::fast::AP_FAST_NS
