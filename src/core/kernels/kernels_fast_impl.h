// kernels_fast_impl.h — the fast kernels, written once against simd.h's vector type V and compiled
// once per instruction set (kernels_fast_{avx512,avx2,sse2,simd128,scalar}.cpp), each in its own
// namespace ap::kernels::fast::AP_FAST_NS with its own table of them (`table`, a kernels::Kernels
// named AP_FAST_NAME). Internal: included only by those files.
//
// What is in it:
//  - exp_v: Cephes' expf (the reference exp_f32's polynomial) on vectors; erf_v: a rational
//    approximation on [-4, 4] (|error| ≤ 4e-7, relative ≤ 4 ulp near 0), for the exact GELU.
//  - tile<MR, NV>: the register-blocked micro-kernel, an MR×(NV·W) block of C from a k-loop of
//    broadcast-times-vector fmadds; A read packed, by rows or by columns; B by rows.
//  - gemm: BLIS-style packed matmul (KC×NC panels of B, MC×KC blocks of A, packed into the fixed
//    workspace of kernels_fast.h), used by matmul_backward and matmul_forward's many rows (in
//    wasm, up to MC rows: B packed a panel at a time, A packed).
//  - matmul_forward, matmul_backward (in kernels_fast_matmul.inc, a part of this file): a
//    prompt's 4–256 rows (4–16 in wasm) take the GEMM's transpose (matmul_forward_short: weight
//    rows broadcast in place, the inputs packed as Xᵀ, so no weight is copied); in wasm 17–64 rows
//    take dot products of input and weight rows where they lie (matmul_forward_dots); for fewer
//    than 4 rows (generation) the weight rows are streamed: a dot product per row, and for a
//    matrix of 1 MB or more one load from each 4 KB page just ahead of the row (its values
//    unused) so the memory's streaming does not stall at page ends.
//  - attention: per head, rows in blocks of MR: scores by the micro-kernel against a packed Kᵀ,
//    only over the keys the block's last row sees (the masked half is skipped), then a
//    vectorised softmax in place, then A·V by the micro-kernel; backward likewise by blocks.
//  - layernorm, gelu, crossentropy, adamw, sum_squares, … vectorised along the row: in
//    kernels_fast_rows.inc, a part of this file (included at its end, in the same namespace).
// Limits: no threads; every order of summation is fixed by the sizes, so results are deterministic
// for a build and an ISA. Never allocates: packing uses the fixed workspace (kWorkspaceFloats);
// attention whose packed Kᵀ would not fit (hs·T > the workspace, T > 8192 at hs = 64) runs the
// reference kernel instead.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/kernels/kernels_fast.h"
#include "core/tensor/ops.h"
#include "core/kernels/simd.h"

#ifndef AP_FAST_NS
#error "define AP_FAST_NS (the ISA's namespace) before including kernels_fast_impl.h"
#endif

#define AP_INLINE inline __attribute__((always_inline))

namespace ap::kernels::fast::AP_FAST_NS {

using simd::V;
using simd::VS;
using VT = V::T;
constexpr int W = V::W;

// ---------------------------------------------------------------- blocking per ISA
#if defined(AP_FAST_MR) && defined(AP_FAST_NV)  // experiments: -DAP_FAST_MR=… -DAP_FAST_NV=…
constexpr int MR = AP_FAST_MR, NV = AP_FAST_NV;
#elif defined(AP_SIMD_AVX512)
constexpr int MR = 6, NV = 4;  // 6×64 tile: 24 zmm accumulators
#elif defined(AP_SIMD_SCALAR)
constexpr int MR = 4, NV = 4;  // 4×4 scalars
#elif defined(AP_SIMD_WASM)
// 2×16: 8 accumulators. V8 keeps them in registers; 6×8 (12) spills and ran at half the speed
// (measured in Node, W2 n = 256: 2×16 ≈ 4×8 ≈ 55 GFLOP/s, 6×8 ≈ 25–30, 8×8 ≈ 22).
constexpr int MR = 2, NV = 4;
#else
constexpr int MR = 6, NV = 2;  // 6×16 (AVX2) or 6×8 (SSE2, SIMD128): 12 accumulators
#endif
constexpr int NR = NV * W;
constexpr int KC = 256;
constexpr int MC = (192 / MR) * MR;
constexpr int NC = ((static_cast<int>(kWorkspaceFloats) - MC * KC) / KC / 64) * 64;
static_assert(NC >= 256, "workspace too small for the GEMM blocking");
// Attention backward: query rows per block (dS block of RB × T floats in the caller's scratch).
constexpr int RB = 16;

// Nothing shared with other translation units may be compiled here (one ISA's flags would leak into
// another's callers through the linker's choice of an out-of-line copy): own helpers, no std::
// templates or <cmath> wrappers (__builtin_sqrtf, __builtin_inff), kernels.h's visible_keys re-stated.
constexpr float kInfF = __builtin_inff();
AP_INLINE int visible(int t, MaskVariant mask) { return mask == MaskVariant::strict ? t + 1 : t; }
AP_INLINE int imin(int a, int b) { return a < b ? a : b; }
AP_INLINE int imax(int a, int b) { return a > b ? a : b; }
AP_INLINE size_t zu(long long x) { return static_cast<size_t>(x); }
AP_INLINE uintptr_t imin_u(uintptr_t a, uintptr_t b) { return a < b ? a : b; }
AP_INLINE int round_up_w(int x) { return (x + W - 1) / W * W; }

// ---------------------------------------------------------------- exp, erf

// round to nearest (even) for |x| < 2^22, NaN stays NaN: (x + 1.5·2^23) − 1.5·2^23
AP_INLINE VT rint_v(VT x) {
  const VT magic = V::set1(12582912.0f);
  return V::sub(V::add(x, magic), magic);
}

// e^x: x = n·ln2 + r, |r| ≤ ln2/2, Cephes' degree-7 polynomial (as exp_f32), scaled by 2^n in two
// exact steps; +∞ above 88.7228, 0 below −104, NaN for NaN. Within 2 ulp of exp_f32.
AP_INLINE VT exp_v(VT x) {
  VT n = rint_v(V::mul(x, V::set1(1.44269504088896341f)));
  n = V::min(V::max(n, V::set1(-150.0f)), V::set1(128.0f));  // NaN → −150 (r stays NaN)
  VT r = V::fmadd(n, V::set1(-0.693359375f), x);                // exact product
  r = V::fmadd(n, V::set1(2.12194440e-4f), r);
  const VT z = V::mul(r, r);
  VT p = V::set1(1.9875691500e-4f);
  p = V::fmadd(p, r, V::set1(1.3981999507e-3f));
  p = V::fmadd(p, r, V::set1(8.3334519073e-3f));
  p = V::fmadd(p, r, V::set1(4.1665795894e-2f));
  p = V::fmadd(p, r, V::set1(1.6666665459e-1f));
  p = V::fmadd(p, r, V::set1(5.0000001201e-1f));
  p = V::add(V::fmadd(p, z, r), V::set1(1.0f));
  const VT n1 = rint_v(V::mul(n, V::set1(0.5f)));
  const VT n2 = V::sub(n, n1);  // n1, n2 in [-75, 64]
  VT e = V::mul(V::mul(p, V::exp2i(n1)), V::exp2i(n2));
  e = V::select(V::gt(x, V::set1(88.72283172607421875f)), V::set1(kInfF), e);
  return V::select(V::lt(x, V::set1(-104.0f)), V::zero(), e);
}

// erf(x) for float: x·P(x²)/Q(x²) on x clamped to [-4, 4] (erf is ±1 in float32 beyond).
// Absolute error ≤ 4e-7 over the line, relative ≤ 4 ulp for |x| < 0.5 (tests/test_kernels.cpp).
AP_INLINE VT erf_v(VT x) {
  x = V::min(V::max(x, V::set1(-4.0f)), V::set1(4.0f));
  const VT x2 = V::mul(x, x);
  VT p = V::set1(-2.72614225801306e-10f);
  p = V::fmadd(p, x2, V::set1(2.77068142495902e-08f));
  p = V::fmadd(p, x2, V::set1(-2.10102402082508e-06f));
  p = V::fmadd(p, x2, V::set1(-5.69250639462346e-05f));
  p = V::fmadd(p, x2, V::set1(-7.34990630326855e-04f));
  p = V::fmadd(p, x2, V::set1(-2.95459980854025e-03f));
  p = V::fmadd(p, x2, V::set1(-1.60960333262415e-02f));
  p = V::mul(p, x);
  VT q = V::set1(-1.45660718464996e-05f);
  q = V::fmadd(q, x2, V::set1(-2.13374055278905e-04f));
  q = V::fmadd(q, x2, V::set1(-1.68282697438203e-03f));
  q = V::fmadd(q, x2, V::set1(-7.37332916720468e-03f));
  q = V::fmadd(q, x2, V::set1(-1.42647390514189e-02f));
  return V::div(p, q);
}

// Sum of the first n (< W) lanes, in lane order.
AP_INLINE float sum_first(VT v, int n) {
  float b[W];
  V::store(b, v);
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += b[i];
  return s;
}

// ---------------------------------------------------------------- the micro-kernel
// C (m ≤ MR, n ≤ nv·W) = alpha·Σ_k a(r,k)·B[k][·] (+ C if accum) (+ bias[·] if bias), k < kc.
// A kinds: packed a(r,k) = A[k·MR + r] (zero-padded rows); rows a(r,k) = A[r·lda + k];
// cols a(r,k) = A[k·lda + r]. Rows r ≥ m of a direct A repeat row m−1 (results discarded).
// B[k] = B + k·ldb, nv full vectors, the last one partial (n − (nv−1)·W lanes) when TAIL.
enum class AK { packed, rows, cols };

template <int TMR, int TNV, AK ak, bool TAIL>
__attribute__((noinline)) void tile(int kc, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                                    int m, int n, float alpha, bool accum, const float* bias) {
  VT acc[TMR][TNV];
#pragma GCC unroll 32
  for (int r = 0; r < TMR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < TNV; ++v) acc[r][v] = V::zero();
  const int nt = n - (TNV - 1) * W;  // lanes of the last vector
  const float* ap[TMR] = {};
  int off[TMR] = {};
#pragma GCC unroll 32
  for (int r = 0; r < TMR; ++r) {
    if constexpr (ak == AK::rows) ap[r] = A + zu(imin(r, m - 1)) * lda;
    if constexpr (ak == AK::cols) off[r] = imin(r, m - 1);
  }
  for (int k = 0; k < kc; ++k) {
    VT b[TNV];
#pragma GCC unroll 8
    for (int v = 0; v < TNV; ++v)
      b[v] = (TAIL && v == TNV - 1) ? V::load_partial(B + v * W, nt) : V::load(B + v * W);
#pragma GCC unroll 32
    for (int r = 0; r < TMR; ++r) {
      float a;
      if constexpr (ak == AK::packed) a = A[r];
      else if constexpr (ak == AK::rows) a = ap[r][k];
      else a = A[off[r]];
      const VT av = V::set1(a);
#pragma GCC unroll 8
      for (int v = 0; v < TNV; ++v) acc[r][v] = V::fmadd(av, b[v], acc[r][v]);
    }
    B += ldb;
    if constexpr (ak == AK::packed) A += TMR;
    if constexpr (ak == AK::cols) A += lda;
  }
  const VT al = V::set1(alpha);
  const bool scaled = alpha != 1.0f;
#pragma GCC unroll 32
  for (int r = 0; r < TMR; ++r) {
    if (r >= m) break;
    float* c = C + zu(r) * ldc;
#pragma GCC unroll 8
    for (int v = 0; v < TNV; ++v) {
      const int cnt = n - v * W;
      if (cnt <= 0) break;
      VT x = acc[r][v];
      if (scaled) x = V::mul(x, al);
      if (cnt >= W) {
        if (accum) x = V::add(V::load(c + v * W), x);
        if (bias) x = V::add(x, V::load(bias + v * W));
        V::store(c + v * W, x);
      } else {
        if (accum) x = V::add(V::load_partial(c + v * W, cnt), x);
        if (bias) x = V::add(x, V::load_partial(bias + v * W, cnt));
        V::store_partial(c + v * W, x, cnt);
      }
    }
  }
}

// tile with the vector count and tail chosen from n (1 ≤ n ≤ NR), rows m ≤ TMR.
template <AK ak, int TMR = MR>
void tile_n(int kc, const float* A, int lda, const float* B, int ldb, float* C, int ldc, int m, int n, float alpha,
            bool accum, const float* bias) {
  const int nv = (n + W - 1) / W;
  const bool tail = n % W != 0;
#define AP_TILE(k)                                                                             \
  case k:                                                                                      \
    if constexpr (k <= NV) {                                                                   \
      if (tail) tile<TMR, k, ak, true>(kc, A, lda, B, ldb, C, ldc, m, n, alpha, accum, bias);  \
      else tile<TMR, k, ak, false>(kc, A, lda, B, ldb, C, ldc, m, n, alpha, accum, bias);      \
    }                                                                                          \
    break;
  switch (nv) {
    AP_TILE(1)
    AP_TILE(2)
    AP_TILE(3)
    AP_TILE(4)
    default: break;
  }
#undef AP_TILE
}

// C (M,N) [+]= alpha·A (M,K)·B (K,N) with the micro-kernel over direct (unpacked) operands: A by
// rows (lda) or by columns, B by rows (ldb), any N (column chunks of NR).
template <AK ak>
void gemm_direct(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                 float alpha, bool accum) {
  for (int j0 = 0; j0 < N; j0 += NR) {
    const int n = imin(NR, N - j0);
    for (int i0 = 0; i0 < M; i0 += MR) {
      const float* a = ak == AK::rows ? A + zu(i0) * lda : A + i0;
      tile_n<ak>(K, a, lda, B + j0, ldb, C + zu(i0) * ldc + j0, ldc, imin(MR, M - i0), n, alpha, accum, nullptr);
    }
  }
}

// ---------------------------------------------------------------- packed GEMM
// op(A)(m,k) = transA ? A[k·lda + m] : A[m·lda + k];  op(B)(k,n) = transB ? B[n·ldb + k] : B[k·ldb + n]

// MR-row panels of op(A) rows [i0, i0+mc), columns [p0, p0+kc): dst[panel][k·MR + r], zero-padded.
void pack_a(float* dst, const float* A, int lda, bool transA, int i0, int mc, int p0, int kc) {
  for (int ir = 0; ir < mc; ir += MR) {
    const int m = imin(MR, mc - ir);
    float* d = dst + zu(ir) * kc;
    if (transA) {
      for (int k = 0; k < kc; ++k) {
        const float* s = A + zu(p0 + k) * lda + i0 + ir;
        for (int r = 0; r < m; ++r) d[k * MR + r] = s[r];
        for (int r = m; r < MR; ++r) d[k * MR + r] = 0.0f;
      }
    } else {
      for (int r = 0; r < m; ++r) {
        const float* s = A + zu(i0 + ir + r) * lda + p0;
        for (int k = 0; k < kc; ++k) d[k * MR + r] = s[k];
      }
      for (int r = m; r < MR; ++r)
        for (int k = 0; k < kc; ++k) d[k * MR + r] = 0.0f;
    }
  }
}

#include "core/kernels/kernels_fast_pack.inc"  // pack_b_trans_vec
// NR-column panels of op(B) rows [p0, p0+kc), columns [j0, j0+nc): dst[panel][k·NR + j], zero-padded.
void pack_b(float* dst, const float* B, int ldb, bool transB, int p0, int kc, int j0, int nc) {
  for (int jr = 0; jr < nc; jr += NR) {
    const int n = imin(NR, nc - jr);
    float* d = dst + zu(jr) * kc;
    if (transB) {
      const int j0v = pack_b_trans_vec(d, B, ldb, p0, kc, j0 + jr, n);  // columns packed by vectors
      for (int j = j0v; j < n; ++j) {
        const float* s = B + zu(j0 + jr + j) * ldb + p0;
        for (int k = 0; k < kc; ++k) d[k * NR + j] = s[k];
      }
      for (int k = 0; k < kc; ++k)
        for (int j = n; j < NR; ++j) d[k * NR + j] = 0.0f;
    } else if (n == NR) {  // whole rows of the panel: vector copies (no memcpy call per row in wasm)
      for (int k = 0; k < kc; ++k) {
        const float* s = B + zu(p0 + k) * ldb + j0 + jr;
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) V::store(d + k * NR + v * W, V::load(s + v * W));
      }
    } else {
      for (int k = 0; k < kc; ++k) {
        const float* s = B + zu(p0 + k) * ldb + j0 + jr;
        std::memcpy(d + k * NR, s, sizeof(float) * n);
        for (int j = n; j < NR; ++j) d[k * NR + j] = 0.0f;
      }
    }
  }
}

// A is read in place by the micro-kernel (its MR rows, or MR columns, broadcast one float at a
// time), not packed: at the GPT's sizes (K ≤ 256 per block, rows in L1/L2) packing A cost 14% of a
// training step natively and bought nothing. kPackA = true restores BLIS's packed A.
#ifdef AP_FAST_PACK_A
constexpr bool kPackA = true;
#else
constexpr bool kPackA = false;
#endif

// Few rows (M ≤ MC: one block of A) in wasm — the backward's few-row products and a forward of 65
// to MC rows (17–64 take matmul_forward_dots): B packed one NR-column panel at a time, just before
// the tiles that use it (kc × NR floats, in L1), instead of a KC × NC block (1.9 MB, past L2)
// packed whole and read back by each tile from L2; and A packed (its MR-row panels of each k
// block, once per block: at 64 rows 64 KB for the 50,257 columns of GPT-2's head), so that the
// tile reads its MR floats per k side by side at one pointer (AK::packed). Measured in Node at
// W6's 64-row shapes (CPU-time A/B under load, docs/performance-journal.md): GPT-2's head 0.92×
// the packed GEMM's time, the layers' products even.
// gemm below does it (`panels`): the same loops, only where B is packed and that A is, so each
// output's order of summation is the whole-block path's and the bits are the same.
#if defined(AP_SIMD_WASM) && !defined(AP_FAST_NO_PANEL_PACK)  // -DAP_FAST_NO_PANEL_PACK: the A/B
constexpr bool kPanelPack = true;
#else
constexpr bool kPanelPack = false;
#endif

// C (M,N) = op(A)·op(B) (+ C if accum) (+ bias (N) if bias), row stride ldc.
void gemm(int M, int N, int K, const float* A, int lda, bool transA, const float* B, int ldb, bool transB, float* C,
          int ldc, bool accum, const float* bias) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {  // an empty sum: C = 0 (+ C) (+ bias)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        float& c = C[zu(i) * ldc + j];
        const float x = accum ? c : 0.0f;
        c = bias ? x + bias[j] : x;
      }
    return;
  }
  float* const ap = workspace();
  float* const bp = ap + MC * KC;
  const bool panels = kPanelPack && M <= MC;  // B packed a panel at a time, A packed (above)
  const bool pack_a_ = kPackA || panels;
  for (int jc = 0; jc < N; jc += NC) {
    const int nc = imin(NC, N - jc);
    for (int pc = 0; pc < K; pc += KC) {
      const int kc = imin(KC, K - pc);
      if (!panels) pack_b(bp, B, ldb, transB, pc, kc, jc, nc);
      const bool acc = accum || pc > 0;
      const float* bi = (bias && pc + kc == K) ? bias + jc : nullptr;
      for (int ic = 0; ic < M; ic += MC) {
        const int mc = imin(MC, M - ic);
        if (pack_a_) pack_a(ap, A, lda, transA, ic, mc, pc, kc);
        for (int jr = 0; jr < nc; jr += NR) {
          const int n = imin(NR, nc - jr);
          if (panels) pack_b(bp, B, ldb, transB, pc, kc, jc + jr, n);
          const float* b = panels ? bp : bp + zu(jr) * kc;
          float* c = C + zu(ic) * ldc + jc + jr;
          const float* bj = bi ? bi + jr : nullptr;
          for (int ir = 0; ir < mc; ir += MR) {
            const int m = imin(MR, mc - ir);
            if (pack_a_)
              tile<MR, NV, AK::packed, false>(kc, ap + zu(ir) * kc, 0, b, NR, c + zu(ir) * ldc, ldc, m, n, 1.0f, acc, bj);
            else if (transA)  // op(A) rows are columns of A: MR contiguous floats per k
              tile<MR, NV, AK::cols, false>(kc, A + zu(pc) * lda + ic + ir, lda, b, NR, c + zu(ir) * ldc, ldc, m, n,
                                            1.0f, acc, bj);
            else
              tile<MR, NV, AK::rows, false>(kc, A + zu(ic + ir) * lda + pc, lda, b, NR, c + zu(ir) * ldc, ldc, m, n,
                                            1.0f, acc, bj);
          }
        }
      }
    }
  }
}

// Dot product of n floats (vector lanes, then the lanes in order).
AP_INLINE float dot(const float* a, const float* b, int n) {
  VT s0 = V::zero(), s1 = V::zero();
  int i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    s0 = V::fmadd(V::load(a + i), V::load(b + i), s0);
    s1 = V::fmadd(V::load(a + i + W), V::load(b + i + W), s1);
  }
  for (; i + W <= n; i += W) s0 = V::fmadd(V::load(a + i), V::load(b + i), s0);
  float s = V::reduce_add(V::add(s0, s1));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

#include "core/kernels/kernels_fast_matmul.inc"  // matmul_forward (by row count), matmul_backward

// ---------------------------------------------------------------- softmax rows

// In place over p[0, n): the stable (max subtracted) or naive softmax, as ops.h's softmax row: a
// row with no finite-or-NaN entry (all −∞, or n = 0) becomes 0; NaN inputs give NaN; the naive
// form's overflow gives NaN where e^x = +∞ (+∞·(1/+∞)).
void softmax_inplace(float* p, int n, bool stable) {
  if (n <= 0) return;
  const float ninf = -kInfF;
  VT mv = V::set1(ninf);
  int j = 0;
  for (; j + W <= n; j += W) mv = V::max(V::load(p + j), mv);  // skips NaN
  float m = V::reduce_max(mv);
  for (; j < n; ++j) m = p[j] > m ? p[j] : m;
  if (m == ninf) {
    bool has_nan = false;
    for (int i = 0; i < n; ++i) has_nan |= p[i] != p[i];
    if (!has_nan) {
      for (int i = 0; i < n; ++i) p[i] = 0.0f;
      return;
    }
  }
  const VT mm = V::set1(stable ? m : 0.0f);
  VT s0 = V::zero(), s1 = V::zero();
  j = 0;
  for (; j + 2 * W <= n; j += 2 * W) {
    const VT e0 = exp_v(V::sub(V::load(p + j), mm)), e1 = exp_v(V::sub(V::load(p + j + W), mm));
    V::store(p + j, e0);
    V::store(p + j + W, e1);
    s0 = V::add(s0, e0);
    s1 = V::add(s1, e1);
  }
  for (; j + W <= n; j += W) {
    const VT e = exp_v(V::sub(V::load(p + j), mm));
    V::store(p + j, e);
    s0 = V::add(s0, e);
  }
  float sum = V::reduce_add(V::add(s0, s1));
  if (j < n) {
    const VT e = exp_v(V::sub(V::load_partial(p + j, n - j), mm));
    V::store_partial(p + j, e, n - j);
    sum += sum_first(e, n - j);
  }
  const VT inv = V::set1(1.0f / sum);
  j = 0;
  for (; j + W <= n; j += W) V::store(p + j, V::mul(V::load(p + j), inv));
  if (j < n) V::store_partial(p + j, V::mul(V::load_partial(p + j, n - j), inv), n - j);
}

AP_INLINE void fill_zero(float* p, int n) {
  if (n > 0) std::memset(p, 0, sizeof(float) * zu(n));
}

// ---------------------------------------------------------------- attention

AP_INLINE float head_scale(int hs) { return 1.0f / __builtin_sqrtf(static_cast<float>(hs)); }
AP_INLINE int round_up(int x, int m) { return (x + m - 1) / m * m; }

// dst (hs, ldt) = src rows (T, stride ld)ᵀ: dst[c·ldt + j] = src[j·ld + c], zero for j in [T, ldt).
void pack_transposed(float* dst, int ldt, const float* src, int ld, int T, int hs) {
  constexpr int JB = 8;
  int j = 0;
  for (; j + JB <= T; j += JB)
    for (int c = 0; c < hs; ++c) {
      float* d = dst + zu(c) * ldt + j;
#pragma GCC unroll 8
      for (int jj = 0; jj < JB; ++jj) d[jj] = src[zu(j + jj) * ld + c];
    }
  for (; j < T; ++j)
    for (int c = 0; c < hs; ++c) dst[zu(c) * ldt + j] = src[zu(j) * ld + c];
  for (int c = 0; c < hs; ++c) fill_zero(dst + zu(c) * ldt + T, ldt - T);
}

// Whether one head's packed Kᵀ (hs × T rounded up to NR) fits in the workspace.
AP_INLINE bool head_fits(int T, int hs) {
  return static_cast<size_t>(hs) * zu(round_up(T, NR)) <= kWorkspaceFloats;
}

// The first key query row t sees (0 with attention sinks: the sinks come first), and ALiBi's bias
// added to the row's scaled scores [lo, n).
AP_INLINE int row_start(int t, const AttnOptions& opt) { return opt.sink > 0 ? 0 : first_key(t, opt.window); }
void add_alibi(float* row, int lo, int n, float slope, int p) {
  for (int j = lo; j < n; ++j) row[j] = row[j] + -slope * static_cast<float>(p - j);
}
// One row's softmax over its keys [0, rk.sink) ∪ [rk.lo, n) (ALiBi's bias first when slope is not
// 0), zeros before them and in the gap; the zeros after n are the caller's.
void softmax_keys(float* row, RowKeys rk, int n, bool stable, float slope, int p) {
  if (slope != 0.0f) {
    add_alibi(row, 0, rk.sink, slope, p);
    add_alibi(row, rk.lo, n, slope, p);
  }
  sink_gather(row, rk);
  softmax_inplace(row + rk.lo - rk.sink, n - rk.lo + rk.sink, stable);
  sink_scatter(row, rk);
  fill_zero(row, rk.sink > 0 ? 0 : rk.lo);
}

// One head's forward over its T query rows: q, k, v rows with stride ld, out rows with stride ldo.
// Weights go to P rows: att + t·T (keep = true: the (T,T) weights, zeros where masked) or, for
// inference, a scratch of MR rows × T reused per block (keep = false). slope: ALiBi's, or 0.
void attention_head(float* out, int ldo, float* att, bool keep, const float* q, const float* k, const float* v,
                    int ld, int T, int hs, float scale, const AttnOptions& opt, float slope) {
  const int Tp = round_up(T, NR);
  float* kt = workspace();  // (hs, Tp): Kᵀ
  pack_transposed(kt, Tp, k, ld, T, hs);
  const bool stable = opt.stable_softmax;
  for (int i0 = 0; i0 < T; i0 += MR) {
    const int m = imin(MR, T - i0);
    const int nmax = visible(i0 + m - 1, opt.mask);
    const int jlo = row_start(i0, opt) / NR * NR;  // the block's first tile of visible keys
    float* P = keep ? att + zu(i0) * T : att;  // rows of the block, stride T
    // scores = scale·q·kᵀ over the keys the block sees
    for (int j0 = jlo; j0 < nmax; j0 += NR)
      tile<MR, NV, AK::rows, false>(hs, q + zu(i0) * ld, ld, kt + j0, Tp, P + j0, T, m, imin(NR, nmax - j0), scale,
                                    false, nullptr);
    for (int r = 0; r < m; ++r) {
      const int n = visible(i0 + r, opt.mask), lo = imin(first_key(i0 + r, opt.window), imax(n, 0));
      float* row = P + zu(r) * T;
      softmax_keys(row, row_keys(i0 + r, imax(n, 0), opt), imax(n, 0), stable, slope, i0 + r);
      fill_zero(row + imax(n, lo), (keep ? T : nmax) - imax(n, lo));
    }
    // context = weights·v
    if (nmax > 0) gemm_direct<AK::rows>(m, hs, nmax, P, T, v, ld, out + zu(i0) * ldo, ldo, 1.0f, false);
    else
      for (int r = 0; r < m; ++r) fill_zero(out + zu(i0 + r) * ldo, hs);
  }
}

// Head h's q, k and v offsets in a qkv row (grouped-query: its group's key/value head).
struct HeadCols {
  int q, k, v;
};
AP_INLINE HeadCols head_cols(int h, int C, int NH, int hs, const AttnOptions& opt) {
  const int nkv = kv_heads(NH, opt), kv = h / (NH / nkv) * hs;
  return {h * hs, C + kv, C + nkv * hs + kv};
}

// Every batch row's every head: keep, the weights of head h of row b to att's (b, h) T×T block
// (attention_forward); else att is the scratch of one head at a time (attention_forward_infer).
void attention_heads(float* out, float* att, bool keep, const float* qkv, int B, int T, int C, int NH,
                     const AttnOptions& opt) {
  const int hs = C / NH, C3 = qkv_width(C, NH, opt);
  const float scale = head_scale(hs);
  for (int b = 0; b < B; ++b)
    for (int h = heads_from(opt); h < heads_to(NH, opt); ++h) {
      const float* row = qkv + zu(b) * T * C3;
      const HeadCols hc = head_cols(h, C, NH, hs, opt);
      attention_head(out + zu(b) * T * C + h * hs, C, keep ? att + (zu(b) * NH + h) * T * T : att, keep, row + hc.q,
                     row + hc.k, row + hc.v, C3, T, hs, scale, opt, opt.alibi_slopes ? opt.alibi_slopes[h] : 0.0f);
    }
}

void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH, AttnOptions opt) {
  if (!head_fits(T, C / NH)) return kernels::reference.attention_forward(out, att, qkv, B, T, C, NH, opt);
  attention_heads(out, att, true, qkv, B, T, C, NH, opt);
}

size_t attention_forward_infer_scratch(int, int T, int, int) { return zu(MR) * T; }

void attention_forward_infer(float* out, float* scratch, const float* qkv, int B, int T, int C, int NH,
                             AttnOptions opt) {
  if (!head_fits(T, C / NH)) return kernels::reference.attention_forward_infer(out, scratch, qkv, B, T, C, NH, opt);
  attention_heads(out, scratch, false, qkv, B, T, C, NH, opt);
}

size_t attention_backward_scratch(int, int T, int, int) { return zu(RB) * T; }

void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                        int T, int C, int NH, AttnOptions opt) {
  const int hs = C / NH, C3 = qkv_width(C, NH, opt);
  if (!head_fits(T, hs)) return kernels::reference.attention_backward(dqkv, scratch, dout, qkv, att, B, T, C, NH, opt);
  const float scale = head_scale(hs);
  const int Tp = round_up(T, NR);
  float* vt = workspace();  // (hs, Tp): Vᵀ
  float* ds = scratch;      // (RB, T): ∂L/∂att, then ∂L/∂scores/scale, for a block of rows
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h) {
      const HeadCols hc = head_cols(h, C, NH, hs, opt);
      const size_t bo = zu(b) * T * C3;
      const float* q = qkv + bo + hc.q;
      const float* k = qkv + bo + hc.k;
      const float* v = qkv + bo + hc.v;
      float* dq = dqkv + bo + hc.q;
      float* dk = dqkv + bo + hc.k;
      float* dv = dqkv + bo + hc.v;
      const float* a = att + (zu(b) * NH + h) * T * T;
      const float* d = dout + zu(b) * T * C + h * hs;
      pack_transposed(vt, Tp, v, C3, T, hs);
      for (int i0 = 0; i0 < T; i0 += RB) {
        const int m = imin(RB, T - i0);
        const int nmax = visible(i0 + m - 1, opt.mask);
        if (nmax <= 0) continue;
        // datt = dout·vᵀ over the keys the block sees
        for (int r0 = 0; r0 < m; r0 += MR)
          for (int j0 = 0; j0 < nmax; j0 += NR)
            tile<MR, NV, AK::rows, false>(hs, d + zu(i0 + r0) * C, C, vt + j0, Tp, ds + zu(r0) * T + j0, T,
                                          imin(MR, m - r0), imin(NR, nmax - j0), 1.0f, false, nullptr);
        // softmax backward: dpre_j = a_j·(datt_j − Σ_k datt_k·a_k) over the row's keys [lo, n), zero elsewhere
        for (int r = 0; r < m; ++r) {
          const int n = visible(i0 + r, opt.mask), lo = imin(row_start(i0 + r, opt), imax(n, 0));
          float* g = ds + zu(r) * T;
          const float* ar = a + zu(i0 + r) * T;
          const float dotv = dot(g + lo, ar + lo, n - lo);
          const VT dv_ = V::set1(dotv);
          int j = lo;
          for (; j + W <= n; j += W) V::store(g + j, V::mul(V::load(ar + j), V::sub(V::load(g + j), dv_)));
          for (; j < n; ++j) g[j] = ar[j] * (g[j] - dotv);
          fill_zero(g, lo);
          fill_zero(g + imax(n, lo), nmax - imax(n, lo));
        }
        // dq += scale·dpre·k;  dk += scale·dpreᵀ·q;  dv += attᵀ·dout
        gemm_direct<AK::rows>(m, hs, nmax, ds, T, k, C3, dq + zu(i0) * C3, C3, scale, true);
        gemm_direct<AK::cols>(nmax, hs, m, ds, T, q + zu(i0) * C3, C3, dk, C3, scale, true);
        gemm_direct<AK::cols>(nmax, hs, m, a + zu(i0) * T, T, d + zu(i0) * C, C, dv, C3, 1.0f, true);
      }
    }
}

void attention_decode(float* out, float* att, const float* q, const float* k_cache, const float* v_cache, int base,
                      int C, int NH, AttnOptions opt) {
  const int hs = C / NH, T_total = base + 1, nkv = kv_heads(NH, opt), KC = nkv * hs;
  const float scale = head_scale(hs);
  const int n = visible(base, opt.mask), lo = imin(first_key(base, opt.window), imax(n, 0));
  const RowKeys rk = row_keys(base, imax(n, 0), opt);
  for (int h = 0; h < NH; ++h) {
    float* a = att + zu(h) * T_total;
    const float* qh = q + h * hs;
    const int kv = h / (NH / nkv) * hs;
    for (int j = 0; j < rk.sink; ++j) a[j] = dot(qh, k_cache + zu(j) * KC + kv, hs) * scale;
    for (int j = rk.lo; j < n; ++j) a[j] = dot(qh, k_cache + zu(j) * KC + kv, hs) * scale;
    softmax_keys(a, rk, imax(n, 0), opt.stable_softmax, opt.alibi_slopes ? opt.alibi_slopes[h] : 0.0f, base);
    fill_zero(a + imax(n, lo), T_total - imax(n, lo));
    // out = Σ_j a_j·v_j, NR columns at a time
    for (int c0 = 0; c0 < hs; c0 += NR) {
      const int nn = imin(NR, hs - c0);
      tile_n<AK::rows, 1>(n, a, 0, v_cache + kv + c0, KC, out + h * hs + c0, 0, 1, nn, 1.0f, false, nullptr);
    }
  }
}

#include "core/kernels/kernels_fast_rows.inc"  // encoder, residual, layernorm, GELU, cross-entropy, optimiser helpers

constexpr Kernels make_table() {
  Kernels t{};
  t.name = AP_FAST_NAME;
#define AP_SET(f) t.f = f;
  AP_KERNEL_NAMES(AP_SET)
#undef AP_SET
  return t;
}

const Kernels table = make_table();

}  // namespace ap::kernels::fast::AP_FAST_NS

#undef AP_INLINE
