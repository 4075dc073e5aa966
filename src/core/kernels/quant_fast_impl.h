// quant_fast_impl.h — quant.h's fast tier, written once against simd.h's vector type V and compiled
// once per instruction set: included at the end of each kernels_fast_<isa>.cpp (after
// kernels_fast_impl.h, with its AP_SIMD_*, AP_FAST_NS and AP_FAST_NAME), into its own namespace
// ap::quant::fast::AP_FAST_NS with its own table (`table`, a quant::FastTable).
//
// y = x·Wᵀ: each row of W dequantized once (quant_blocks.inc, the reference's own arithmetic, so the
// same values) into the calling thread's packing workspace (kernels_fast.h), then its dot product with
// each row of x in vector lanes with four accumulators and fused multiply-adds (F32 rows are read in
// place). For M ≥ 2 the dequantization is paid once per row of W, not once per output.
// Limits: a row of more than kWorkspaceFloats values runs the reference; no threads; deterministic for
// a build and an instruction set (the order of summation is fixed by K).
#pragma once

#include "core/kernels/kernels_fast.h"
#include "core/kernels/quant.h"
#include "core/kernels/quant_blocks.inc"
#include "core/kernels/simd.h"

#ifndef AP_FAST_NS
#error "define AP_FAST_NS (the ISA's namespace) before including quant_fast_impl.h"
#endif

namespace ap::quant::fast::AP_FAST_NS {

using QV = simd::V;

// Σ a[k]·b[k], in 4·W lanes then the tail.
static inline float dot(const float* a, const float* b, int K) {
  constexpr int W = QV::W;
  QV::T s0 = QV::zero(), s1 = QV::zero(), s2 = QV::zero(), s3 = QV::zero();
  int k = 0;
  for (; k + 4 * W <= K; k += 4 * W) {
    s0 = QV::fmadd(QV::load(a + k), QV::load(b + k), s0);
    s1 = QV::fmadd(QV::load(a + k + W), QV::load(b + k + W), s1);
    s2 = QV::fmadd(QV::load(a + k + 2 * W), QV::load(b + k + 2 * W), s2);
    s3 = QV::fmadd(QV::load(a + k + 3 * W), QV::load(b + k + 3 * W), s3);
  }
  for (; k + W <= K; k += W) s0 = QV::fmadd(QV::load(a + k), QV::load(b + k), s0);
  if (k < K) s1 = QV::fmadd(QV::load_partial(a + k, K - k), QV::load_partial(b + k, K - k), s1);
  return QV::reduce_add(QV::add(QV::add(s0, s1), QV::add(s2, s3)));
}

static void matmul(float* y, const float* x, const void* w, Type t, int M, int N, int K) {
  if (t != Type::F32 && static_cast<size_t>(K) > kernels::fast::kWorkspaceFloats) {
    matmul_ref(y, x, w, t, M, N, K);
    return;
  }
  float* buf = kernels::fast::workspace();
  const size_t rb = static_cast<size_t>(row_bytes(t, static_cast<uint64_t>(K)));
  const size_t k = static_cast<size_t>(K), n_out = static_cast<size_t>(N);
  for (int n = 0; n < N; ++n) {
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
