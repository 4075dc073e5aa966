// quant_fast_impl.h — quant.h's fast tier, written once against simd.h's vector type V and compiled
// once per instruction set: included at the end of each kernels_fast_<isa>.cpp (after
// kernels_fast_impl.h, with its AP_SIMD_*, AP_FAST_NS and AP_FAST_NAME), into its own namespace
// ap::quant::fast::AP_FAST_NS with its own table (`table`, a quant::FastTable).
//
// y = x·Wᵀ. Q8_0, Q4_0, Q4_K and Q6_K (on every tier with vectors) are read in place, one row of W
// at a time, block by block (matmul_blocks below): generation's matrix-vector product streams the
// weights' 1.06, 0.56, 0.56 or 0.82 bytes a value once, with a few vector operations per block.
// The K-quants' weights are made in lanes by the reference's own operations (quant_blocks.inc:
// Q4_K's d·sc·q − dmin·m, Q6_K's d·sc·q, each product of integers and halves exact in float), so
// they are the reference's values, bit for bit; `dequantize` writes them out (a prompt's product,
// typed_matmul.h, dequantizes its rows through it in the fast tier). In WebAssembly BF16 is read in
// place too (matmul_bf16: two integer operations turn eight values into floats), and Q8_0 sums in
// integers on x rounded to 16 bits (matmul_q8_int). The other types: the
// rows of W four at a time, each dequantized once (quant_blocks.inc, the reference's own
// arithmetic, so the same values) into the calling thread's packing workspace (kernels_fast.h),
// then their dot products with each row of x in vector lanes, fused multiply-adds, x's vectors loaded
// once for the four (F32 rows are read in place); the last N mod 4 rows one at a time, with four
// accumulators. For M ≥ 2 the dequantization is paid once per row of W, not once per output.
// Limits: rows of more than kWorkspaceFloats / 4 values (Q8_0, Q4_0, Q4_K, Q6_K: kWorkspaceFloats)
// run the reference; no threads; deterministic for a build and an instruction set (the order of summation
// is fixed by K).
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

// Q8_0 and Q4_0 read in place: a block's quants become floats in vector lanes (quant_fast_blocks.h),
// their dot product with x's 32 values is taken in floats (a multiply, then fused multiply-adds),
// and that sum times the block's scale d is added to the row's accumulator: Σ_b d_b·(Σ_{k∈b} x_k·q_k),
// the same real number as the reference's Σ_k x_k·(q_k·d_b) (q·d is exact in float), rounded in
// another order (quant.h's bound holds: test_quant.cpp). One row at a time: four rows interleaved
// block by block (x's vectors shared) measured 2–3× slower from memory than one row streamed.
template <Type T>
static inline QV::T block_sum(const float* x, const void* block) {
  using Block = typename std::conditional<T == Type::Q8_0, BlockQ8_0, BlockQ4_0>::type;
  constexpr int P = kBlockVecs, W = QV::W;
  const Block* blk = static_cast<const Block*>(block);
  QV::T q[P];
  if constexpr (T == Type::Q8_0) q8_block(blk->qs, q);
  else q4_block(blk->qs, q);
  QV::T s = QV::mul(QV::load(x), q[0]);
  for (int j = 1; j < P; ++j) s = QV::fmadd(QV::load(x + j * W), q[j], s);
  return QV::mul(s, QV::set1(blocks::f16(blk->d)));
}

// One row of W: blocks two at a time into two accumulators (even and odd blocks), added at the end.
template <Type T>
static inline float row_dot(const float* x, const char* w, int nb) {
  using Block = typename std::conditional<T == Type::Q8_0, BlockQ8_0, BlockQ4_0>::type;
  const Block* blk = reinterpret_cast<const Block*>(w);
  QV::T a0 = QV::zero(), a1 = QV::zero();
  int b = 0;
  for (; b + 2 <= nb; b += 2) {
    a0 = QV::add(a0, block_sum<T>(x + 32 * b, blk + b));
    a1 = QV::add(a1, block_sum<T>(x + 32 * (b + 1), blk + b + 1));
  }
  if (b < nb) a0 = QV::add(a0, block_sum<T>(x + 32 * b, blk + b));
  return QV::reduce_add(QV::add(a0, a1));
}

// Q4_K: per pair of sub-blocks (32 bytes of qs), the weights w = d·sc·q − dmin·m in lanes: one fused
// multiply-add of the exact d·sc·q and −dmin·m, a single rounding, as the reference's d·sc·q − dmin·m
// (exact product, one subtraction). Low nibbles into one accumulator, high into the other.
static inline float row_dot_q4_K(const float* x, const BlockQ4_K* blk, int nb) {
  constexpr int P = kBlockVecs, W = QV::W;
  QV::T a0 = QV::zero(), a1 = QV::zero();
  for (int b = 0; b < nb; ++b, x += kQK_K) {
    const float d = blocks::f16(blk[b].d), dmin = blocks::f16(blk[b].dmin);
    for (int i = 0; i < 4; ++i) {
      int sc, m;
      blocks::scale_min_k4(2 * i, blk[b].scales, &sc, &m);
      const QV::T d1 = QV::set1(d * static_cast<float>(sc)), m1 = QV::set1(-(dmin * static_cast<float>(m)));
      blocks::scale_min_k4(2 * i + 1, blk[b].scales, &sc, &m);
      const QV::T d2 = QV::set1(d * static_cast<float>(sc)), m2 = QV::set1(-(dmin * static_cast<float>(m)));
      QV::T lo[P], hi[P];
      q4k_32(blk[b].qs + 32 * i, lo, hi);
      const float* xs = x + 64 * i;
      for (int j = 0; j < P; ++j) a0 = QV::fmadd(QV::load(xs + j * W), QV::fmadd(lo[j], d1, m1), a0);
      for (int j = 0; j < P; ++j) a1 = QV::fmadd(QV::load(xs + 32 + j * W), QV::fmadd(hi[j], d2, m2), a1);
    }
  }
  return QV::reduce_add(QV::add(a0, a1));
}

// Q6_K: per 16 positions of a half, four runs of 16 weights w = (d·sc)·q in lanes (the reference's
// product, exact), into two accumulators (even and odd runs).
static inline float row_dot_q6_K(const float* x, const BlockQ6_K* blk, int nb) {
  constexpr int G = 16 / QV::W, W = QV::W;
  QV::T acc[2] = {QV::zero(), QV::zero()};
  for (int b = 0; b < nb; ++b, x += kQK_K) {
    const float d = blocks::f16(blk[b].d);
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = blk[b].ql + 64 * half;
      const uint8_t* qh = blk[b].qh + 32 * half;
      const int8_t* sc = blk[b].scales + 8 * half;
      for (int g = 0; g < 2; ++g) {
        QV::T q[4 * G];
        q6k_16(ql + 16 * g, qh + 16 * g, q);
        for (int r = 0; r < 4; ++r) {
          const QV::T s = QV::set1(d * static_cast<float>(sc[g + 2 * r]));
          const float* xs = x + 128 * half + 32 * r + 16 * g;
          for (int j = 0; j < G; ++j) acc[r & 1] = QV::fmadd(QV::load(xs + j * W), QV::mul(s, q[G * r + j]), acc[r & 1]);
        }
      }
    }
  }
  return QV::reduce_add(QV::add(acc[0], acc[1]));
}

// One row of W of type T (K values).
template <Type T>
static inline float row_dot_any(const float* x, const char* w, int K) {
  if constexpr (T == Type::Q4_K) return row_dot_q4_K(x, reinterpret_cast<const BlockQ4_K*>(w), K / kQK_K);
  else if constexpr (T == Type::Q6_K) return row_dot_q6_K(x, reinterpret_cast<const BlockQ6_K*>(w), K / kQK_K);
  else return row_dot<T>(x, w, K / 32);
}

// x's rows transposed first where the tier's quants come transposed (kTransposed: SSE2, SIMD128),
// into the workspace.
template <Type T>
static void matmul_blocks(float* y, const float* x, const void* w, int M, int N, int K) {
  const size_t rb = static_cast<size_t>(row_bytes(T, static_cast<uint64_t>(K)));
  const size_t k = static_cast<size_t>(K), n_out = static_cast<size_t>(N);
  const char* wb = static_cast<const char*>(w);
  for (int m = 0; m < M; ++m) {
    const float* xm = x + static_cast<size_t>(m) * k;
    if (kTransposed) {
      float* xt = kernels::fast::workspace();
      transpose_x(xm, xt, K);
      xm = xt;
    }
    for (int n = 0; n < N; ++n)
      y[static_cast<size_t>(m) * n_out + static_cast<size_t>(n)] = row_dot_any<T>(xm, wb + rb * static_cast<size_t>(n), K);
  }
}

// One row of k values of type t into floats: the K-quants' weights made in lanes as the direct
// products make them (the reference's bits), the other types by quant_blocks.inc (the reference).
static void dequantize(Type t, const void* src, float* y, int64_t k) {
  if (QV::W == 1 || (t != Type::Q4_K && t != Type::Q6_K)) return blocks::row(t, src, y, k);
  constexpr int P = kBlockVecs, G = 16 / QV::W;
  for (int64_t b = 0; b < k / kQK_K; ++b, y += kQK_K) {
    if (t == Type::Q4_K) {
      const BlockQ4_K& blk = static_cast<const BlockQ4_K*>(src)[b];
      const float d = blocks::f16(blk.d), dmin = blocks::f16(blk.dmin);
      for (int i = 0; i < 8; i += 2) {
        QV::T v[2][P];
        q4k_32(blk.qs + 16 * i, v[0], v[1]);
        for (int h = 0; h < 2; ++h) {
          int sc, m;
          blocks::scale_min_k4(i + h, blk.scales, &sc, &m);
          const QV::T d1 = QV::set1(d * static_cast<float>(sc)), m1 = QV::set1(-(dmin * static_cast<float>(m)));
          for (int j = 0; j < P; ++j) v[h][j] = QV::fmadd(v[h][j], d1, m1);
          store16(y + 32 * (i + h), v[h]);
          store16(y + 32 * (i + h) + 16, v[h] + G);
        }
      }
    } else {
      const BlockQ6_K& blk = static_cast<const BlockQ6_K*>(src)[b];
      const float d = blocks::f16(blk.d);
      for (int half = 0; half < 2; ++half)
        for (int g = 0; g < 2; ++g) {
          QV::T q[4 * G];
          q6k_16(blk.ql + 64 * half + 16 * g, blk.qh + 32 * half + 16 * g, q);
          for (int r = 0; r < 4; ++r) {
            const QV::T s = QV::set1(d * static_cast<float>(blk.scales[8 * half + g + 2 * r]));
            for (int j = 0; j < G; ++j) q[G * r + j] = QV::mul(s, q[G * r + j]);
            store16(y + 128 * half + 32 * r + 16 * g, q + G * r);
          }
        }
    }
  }
}

#if defined(AP_SIMD_WASM)
// BF16 read in place (SIMD128): eight values (16 bytes) are four 32-bit lanes, each holding an even
// value in its low half and the next odd one in its high half; a bfloat16 is a float's top 16 bits,
// so `lane << 16` is the even value as a float and `lane & 0xFFFF0000` the odd one — two integer
// operations for eight exact floats (the same values as bf16_to_float), no conversion. x is
// rearranged once per row into that order (each 8 as its 4 even values, then its 4 odd ones); six
// rows of W at a time share x's loads (six accumulators and x's two vectors fit V8's registers
// without a spill in the loop; four rows ran ~15% slower, eight spill), each row one accumulator
// taking e·x_even + o·x_odd per 8 values. The last N mod 6 rows one at a time, summed the same way,
// so an output's bits do not depend on which rows a call covers (GPT::set_threads). The last K mod 8
// values are added one by one. The same dequantized values as the reference, summed in another
// order: quant.h's bound.
static inline void bf16_split_x(const float* x, float* out, int K8) {
  for (int g = 0; g < K8; g += 8)
    for (int i = 0; i < 4; ++i) {
      out[g + i] = x[g + 2 * i];
      out[g + 4 + i] = x[g + 2 * i + 1];
    }
}

static inline float bf16_tail(const float* x, const uint16_t* w, int k, int K, float s) {
  for (; k < K; ++k) s += x[k] * blocks::bf16(w[k]);
  return s;
}

// Rows r, r + K, …, r + (R−1)·K of W (K values each, K8 of them in whole 8s) against xs (x split)
// and xm (x as given, for the tail): y[0 … R−1].
template <int R>
static inline void bf16_rows(float* y, const float* xs, const float* xm, const uint16_t* r, size_t k, int K8, int K) {
  const v128_t hi = wasm_i32x4_splat(static_cast<int32_t>(0xFFFF0000u));
  v128_t a[R];
  for (int j = 0; j < R; ++j) a[j] = QV::zero();
  const uint16_t* p = r;
  const float* xp = xs;
  for (const uint16_t* end = r + K8; p < end; p += 8, xp += 8) {
    const v128_t xe = wasm_v128_load(xp), xo = wasm_v128_load(xp + 4);
    for (int j = 0; j < R; ++j) {
      const v128_t v = wasm_v128_load(p + static_cast<size_t>(j) * k);
      a[j] = QV::add(a[j], QV::add(QV::mul(wasm_i32x4_shl(v, 16), xe), QV::mul(wasm_v128_and(v, hi), xo)));
    }
  }
  for (int j = 0; j < R; ++j) y[j] = bf16_tail(xm, r + static_cast<size_t>(j) * k, K8, K, QV::reduce_add(a[j]));
}

static void matmul_bf16(float* y, const float* x, const void* w, int M, int N, int K) {
  const int K8 = K & ~7;
  const size_t k = static_cast<size_t>(K), n_out = static_cast<size_t>(N);
  const uint16_t* wb = static_cast<const uint16_t*>(w);
  float* xs = kernels::fast::workspace();
  for (int m = 0; m < M; ++m) {
    const float* xm = x + static_cast<size_t>(m) * k;
    float* ym = y + static_cast<size_t>(m) * n_out;
    bf16_split_x(xm, xs, K8);
    int n = 0;
    for (; n + 6 <= N; n += 6) bf16_rows<6>(ym + n, xs, xm, wb + static_cast<size_t>(n) * k, k, K8, K);
    for (; n < N; ++n) bf16_rows<1>(ym + n, xs, xm, wb + static_cast<size_t>(n) * k, k, K8, K);
  }
}
#endif

#if defined(AP_SIMD_WASM)
// Q8_0 in integers (SIMD128): x's row rounded once to 16-bit integers per block of 32, x̂_k = i_k·e_b
// with e_b = max_{k∈b}|x_k| / 32767 and i_k = nearest(x_k / e_b); then each block of W is
// (Σ q_k·i_k)·(d_b·e_b), the sum exact in 32-bit lanes (|q| ≤ 128, |i| ≤ 32767: 8 products a lane, < 2³¹)
// by i32x4.dot_i16x8_s on the quants widened to 16 bits — half the operations of the float path.
// Beyond quant.h's rounding bound, x's rounding adds at most Σ_k |w_k|·e_{b(k)}/2 (about 1.5·10⁻⁵ of
// each block's largest |x|): quant.h states it, test_quant.cpp checks it. A row of x with a value
// that is not finite takes the float path (matmul_blocks), so NaN and ∞ propagate as there.
static void matmul_q8_int(float* y, const float* x, const void* w, int M, int N, int K) {
  const int nb = K / 32;
  const size_t rb = static_cast<size_t>(row_bytes(Type::Q8_0, static_cast<uint64_t>(K)));
  const char* wb = static_cast<const char*>(w);
  int16_t* xi = reinterpret_cast<int16_t*>(kernels::fast::workspace());
  float* xe = reinterpret_cast<float*>(xi + K);
  for (int m = 0; m < M; ++m) {
    const float* xm = x + static_cast<size_t>(m) * static_cast<size_t>(K);
    float* ym = y + static_cast<size_t>(m) * static_cast<size_t>(N);
    bool finite = true;
    for (int b = 0; b < nb && finite; ++b) {
      v128_t amax = wasm_f32x4_splat(0.0f);
      for (int j = 0; j < 32; j += 4) amax = wasm_f32x4_max(amax, wasm_f32x4_abs(wasm_v128_load(xm + 32 * b + j)));
      if (!wasm_i32x4_all_true(wasm_f32x4_le(amax, wasm_f32x4_splat(3.4028235e38f)))) {  // NaN or ∞
        finite = false;
        break;
      }
      const float a = QV::reduce_max(amax);
      const float e = a / 32767.0f, inv = a > 0.0f ? 32767.0f / a : 0.0f;
      xe[b] = e;
      const v128_t vi = wasm_f32x4_splat(inv);
      for (int j = 0; j < 32; j += 8) {
        const v128_t lo = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_mul(wasm_v128_load(xm + 32 * b + j), vi)));
        const v128_t hi = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_mul(wasm_v128_load(xm + 32 * b + j + 4), vi)));
        wasm_v128_store(xi + 32 * b + j, wasm_i16x8_narrow_i32x4(lo, hi));
      }
    }
    if (!finite) {
      matmul_blocks<Type::Q8_0>(ym, xm, w, 1, N, K);
      continue;
    }
    for (int n = 0; n < N; ++n) {
      const BlockQ8_0* blk = reinterpret_cast<const BlockQ8_0*>(wb + rb * static_cast<size_t>(n));
      v128_t acc0 = QV::zero(), acc1 = QV::zero();
      for (int b = 0; b < nb; ++b) {
        const int16_t* xb = xi + 32 * b;
        const v128_t q0 = wasm_v128_load(blk[b].qs), q1 = wasm_v128_load(blk[b].qs + 16);
        const v128_t s0 = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(q0), wasm_v128_load(xb));
        const v128_t s1 = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(q0), wasm_v128_load(xb + 8));
        const v128_t s2 = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(q1), wasm_v128_load(xb + 16));
        const v128_t s3 = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(q1), wasm_v128_load(xb + 24));
        const v128_t si = wasm_i32x4_add(wasm_i32x4_add(s0, s1), wasm_i32x4_add(s2, s3));
        const v128_t f = QV::mul(wasm_f32x4_convert_i32x4(si), QV::set1(blocks::f16(blk[b].d) * xe[b]));
        if (b & 1) acc1 = QV::add(acc1, f);
        else acc0 = QV::add(acc0, f);
      }
      ym[n] = QV::reduce_add(QV::add(acc0, acc1));
    }
  }
}
#endif

static void matmul(float* y, const float* x, const void* w, Type t, int M, int N, int K) {
  // one lane (the scalar tier): dequantizing the row first is faster (its loop vectorizes)
  const bool direct = QV::W > 1 && static_cast<size_t>(K) <= kernels::fast::kWorkspaceFloats;
#if defined(AP_SIMD_WASM)
  if (direct && t == Type::Q8_0) return matmul_q8_int(y, x, w, M, N, K);
#endif
  if (direct && t == Type::Q8_0) return matmul_blocks<Type::Q8_0>(y, x, w, M, N, K);
  if (direct && t == Type::Q4_0) return matmul_blocks<Type::Q4_0>(y, x, w, M, N, K);
  if (direct && t == Type::Q4_K) return matmul_blocks<Type::Q4_K>(y, x, w, M, N, K);
  if (direct && t == Type::Q6_K) return matmul_blocks<Type::Q6_K>(y, x, w, M, N, K);
#if defined(AP_SIMD_WASM)
  if (direct && t == Type::BF16) return matmul_bf16(y, x, w, M, N, K);
#endif
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
const FastTable table = {AP_FAST_NAME, matmul, dequantize};

}  // namespace ap::quant::fast::AP_FAST_NS
