// simd.h — the one vector type each fast-kernel translation unit is compiled with (internal).
//
// A kernels_fast_<isa>.cpp file defines AP_SIMD_<ISA> and includes kernels_fast_impl.h, which
// includes this header: `V` is then the vector of that instruction set, with W float lanes and a
// small set of static operations (loads, stores, arithmetic, fmadd, reductions, compares and a
// select), enough for the GEMM micro-kernel, the softmax, exp and erf. One ISA per translation
// unit, so every function compiled with wide-ISA flags lives in its own namespace and file.
//   AP_SIMD_AVX512  16 lanes, AVX-512F with FMA (x86-64, chosen at run time)
//   AP_SIMD_AVX2    8 lanes, AVX2 + FMA (x86-64, chosen at run time)
//   AP_SIMD_SSE2    4 lanes, SSE2 mul + add (every x86-64)
//   AP_SIMD_WASM    4 lanes, WebAssembly SIMD128 mul + add (-msimd128)
//   AP_SIMD_SCALAR  1 lane, plain C++ (any other target; also built natively so it is tested)
// max(a, b) = a > b ? a : b and min(a, b) = a < b ? a : b on every ISA (x86 semantics: b when
// either is NaN), so max(x, acc) skips a NaN x.
// fmadd(a, b, c) = a·b + c is fused (one rounding) where the ISA has FMA, two roundings elsewhere.
// load_partial / store_partial touch only the first n < W lanes' memory.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(AP_SIMD_AVX512) || defined(AP_SIMD_AVX2) || defined(AP_SIMD_SSE2)
#include <immintrin.h>
#elif defined(AP_SIMD_WASM)
#include <wasm_simd128.h>
#elif !defined(AP_SIMD_SCALAR)
#error "define one AP_SIMD_* before including simd.h"
#endif

#if defined(AP_SIMD_AVX512) || defined(AP_SIMD_AVX2) || defined(AP_SIMD_SSE2)
// What the three x86 widths spell alike, P##_<op>_ps with P = _mm, _mm256 or _mm512 and BITS the
// register's width (its type __m##BITS, its BITS / 32 lanes, the integer casts), MASK the type of a
// compare's answer: written once, expanded in each width's V below.
// reduce128_add / reduce128_max end every reduce_add / reduce_max: the four lanes of a __m128 in
// the order (0 + 2) + (1 + 3).
#define AP_SIMD_X86_REDUCE128(OP)                                               \
  static float reduce128_##OP(__m128 q) {                                       \
    q = _mm_##OP##_ps(q, _mm_movehl_ps(q, q));                                  \
    q = _mm_##OP##_ss(q, _mm_shuffle_ps(q, q, 1));                              \
    return _mm_cvtss_f32(q);                                                    \
  }
#define AP_SIMD_X86_COMMON(P, BITS, MASK)                                       \
  using T = __m##BITS;                                                          \
  using Mask = MASK;                                                            \
  static constexpr int W = BITS / 32;                                           \
  static T zero() { return P##_setzero_ps(); }                                  \
  static T set1(float x) { return P##_set1_ps(x); }                             \
  static T load(const float* p) { return P##_loadu_ps(p); }                     \
  static void store(float* p, T v) { P##_storeu_ps(p, v); }                     \
  static T add(T a, T b) { return P##_add_ps(a, b); }                           \
  static T sub(T a, T b) { return P##_sub_ps(a, b); }                           \
  static T mul(T a, T b) { return P##_mul_ps(a, b); }                           \
  static T div(T a, T b) { return P##_div_ps(a, b); }                           \
  static T max(T a, T b) { return P##_max_ps(a, b); }                           \
  static T min(T a, T b) { return P##_min_ps(a, b); }                           \
  static T sqrt(T a) { return P##_sqrt_ps(a); }                                 \
  /* 2^n for integral n in [-126, 127] held as floats */                        \
  static T exp2i(T n) {                                                         \
    const auto e = P##_add_epi32(P##_cvttps_epi32(n), P##_set1_epi32(127));     \
    return P##_castsi##BITS##_ps(P##_slli_epi32(e, 23));                        \
  }                                                                             \
  AP_SIMD_X86_REDUCE128(add)                                                    \
  AP_SIMD_X86_REDUCE128(max)
#endif

// Each ISA's V lives in its own namespace (ap::simd::avx512::V, …): the static members of V have
// the same names and parameters in every ISA (set1(float), zero(), …), and the return type is not
// part of a mangled name, so one shared name would be an ODR violation — the linker keeps one
// out-of-line copy (at -O0, or whenever GCC does not inline) and the other ISAs call it.
namespace ap::simd {

#if defined(AP_SIMD_AVX512)
namespace avx512 {
struct V {
  AP_SIMD_X86_COMMON(_mm512, 512, __mmask16)
  static Mask first(int n) { return static_cast<Mask>((1u << n) - 1u); }
  static T load_partial(const float* p, int n) { return _mm512_maskz_loadu_ps(first(n), p); }
  static void store_partial(float* p, T v, int n) { _mm512_mask_storeu_ps(p, first(n), v); }
  static T fmadd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  // The high and the low 256 bits, then 128, then reduce128_*.
  static __m256 high256(T a) { return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)); }
  static float reduce_add(T a) {
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(a), high256(a));
    return reduce128_add(_mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
  }
  static float reduce_max(T a) {
    const __m256 h = _mm256_max_ps(_mm512_castps512_ps256(a), high256(a));
    return reduce128_max(_mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
  }
  static Mask gt(T a, T b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static Mask lt(T a, T b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static T select(Mask m, T a, T b) { return _mm512_mask_blend_ps(m, b, a); }  // m ? a : b
};
// VS, the vector a weight stream is read in (the one-row product's dot_row): on AVX-512 the
// 256-bit half. Streaming a matrix from memory with 512-bit loads ran at 0.6–0.7× the rate of
// 256-bit ones on this Zen 5 (one row of 768 or 3,072 floats at a time: 17 against 25–28 GB/s;
// a plain read 24 against 31–43), while the arithmetic keeps its 512-bit rate.
struct VS {
  AP_SIMD_X86_COMMON(_mm256, 256, __m256)
  static T fmadd(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static float reduce_add(T a) {
    return reduce128_add(_mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1)));
  }
};
}  // namespace avx512
using avx512::V;
using avx512::VS;

#elif defined(AP_SIMD_AVX2)
namespace avx2 {
struct V {
  AP_SIMD_X86_COMMON(_mm256, 256, __m256)
  static __m256i first(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static T load_partial(const float* p, int n) { return _mm256_maskload_ps(p, first(n)); }
  static void store_partial(float* p, T v, int n) { _mm256_maskstore_ps(p, first(n), v); }
  static T fmadd(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static float reduce_add(T a) {
    return reduce128_add(_mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1)));
  }
  static float reduce_max(T a) {
    return reduce128_max(_mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1)));
  }
  static Mask gt(T a, T b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static Mask lt(T a, T b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static T select(Mask m, T a, T b) { return _mm256_blendv_ps(b, a, m); }
};
}  // namespace avx2
using avx2::V;
using VS = avx2::V;  // see avx512::VS

#elif defined(AP_SIMD_SSE2)
namespace sse2 {
struct V {
  AP_SIMD_X86_COMMON(_mm, 128, __m128)
  static T load_partial(const float* p, int n) {
    float b[4] = {0, 0, 0, 0};
    std::memcpy(b, p, sizeof(float) * n);
    return _mm_loadu_ps(b);
  }
  static void store_partial(float* p, T v, int n) {
    float b[4];
    _mm_storeu_ps(b, v);
    std::memcpy(p, b, sizeof(float) * n);
  }
  static T fmadd(T a, T b, T c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
  static float reduce_add(T a) { return reduce128_add(a); }
  static float reduce_max(T a) { return reduce128_max(a); }
  static Mask gt(T a, T b) { return _mm_cmpgt_ps(a, b); }
  static Mask lt(T a, T b) { return _mm_cmplt_ps(a, b); }
  static T select(Mask m, T a, T b) { return _mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b)); }
};
}  // namespace sse2
using sse2::V;
using VS = sse2::V;  // see avx512::VS

#elif defined(AP_SIMD_WASM)
namespace simd128 {
struct V {
  using T = v128_t;
  using Mask = v128_t;
  static constexpr int W = 4;
  static T zero() { return wasm_f32x4_splat(0.0f); }
  static T set1(float x) { return wasm_f32x4_splat(x); }
  static T load(const float* p) { return wasm_v128_load(p); }
  static void store(float* p, T v) { wasm_v128_store(p, v); }
  static T load_partial(const float* p, int n) {
    T v = wasm_f32x4_splat(0.0f);
    v = wasm_v128_load32_lane(p, v, 0);
    if (n > 1) v = wasm_v128_load32_lane(p + 1, v, 1);
    if (n > 2) v = wasm_v128_load32_lane(p + 2, v, 2);
    return v;
  }
  static void store_partial(float* p, T v, int n) {
    wasm_v128_store32_lane(p, v, 0);
    if (n > 1) wasm_v128_store32_lane(p + 1, v, 1);
    if (n > 2) wasm_v128_store32_lane(p + 2, v, 2);
  }
  static T add(T a, T b) { return wasm_f32x4_add(a, b); }
  static T sub(T a, T b) { return wasm_f32x4_sub(a, b); }
  static T mul(T a, T b) { return wasm_f32x4_mul(a, b); }
  static T div(T a, T b) { return wasm_f32x4_div(a, b); }
  static T fmadd(T a, T b, T c) { return wasm_f32x4_add(wasm_f32x4_mul(a, b), c); }
  // x86's maxps/minps semantics (a > b ? a : b, so b when either is NaN), one instruction in V8:
  // pmax(b, a) = b < a ? a : b.
  static T max(T a, T b) { return wasm_f32x4_pmax(b, a); }
  static T min(T a, T b) { return wasm_f32x4_pmin(b, a); }
  static T sqrt(T a) { return wasm_f32x4_sqrt(a); }
  static float reduce_add(T a) {
    const T q = wasm_f32x4_add(a, wasm_i32x4_shuffle(a, a, 2, 3, 2, 3));
    return wasm_f32x4_extract_lane(q, 0) + wasm_f32x4_extract_lane(q, 1);
  }
  static float reduce_max(T a) {
    const T q = wasm_f32x4_pmax(a, wasm_i32x4_shuffle(a, a, 2, 3, 2, 3));
    const float x = wasm_f32x4_extract_lane(q, 0), y = wasm_f32x4_extract_lane(q, 1);
    return y > x ? y : x;
  }
  static Mask gt(T a, T b) { return wasm_f32x4_gt(a, b); }
  static Mask lt(T a, T b) { return wasm_f32x4_lt(a, b); }
  static T select(Mask m, T a, T b) { return wasm_v128_bitselect(a, b, m); }
  // n integral in [-126, 127]: n + 1.5·2²³ holds n in its low mantissa bits (0x4B400000 + n), and the
  // shift drops the 0x4B4 part, so no float-to-int conversion (i32x4.trunc_sat is ~8 instructions in
  // V8 on x86, cvttps2dq and its fix-ups; an f32 add, an i32 add and a shift here). Same bits.
  static T exp2i(T n) {
    const T e = wasm_i32x4_add(wasm_f32x4_add(n, wasm_f32x4_splat(12582912.0f)), wasm_i32x4_splat(127));
    return wasm_i32x4_shl(e, 23);
  }
};
}  // namespace simd128
using simd128::V;
using VS = simd128::V;  // see avx512::VS

#else  // AP_SIMD_SCALAR
namespace scalar {
struct V {
  using T = float;
  using Mask = bool;
  static constexpr int W = 1;
  static T zero() { return 0.0f; }
  static T set1(float x) { return x; }
  static T load(const float* p) { return *p; }
  static void store(float* p, T v) { *p = v; }
  static T load_partial(const float* p, int) { return *p; }  // never called with W = 1
  static void store_partial(float* p, T v, int) { *p = v; }
  static T add(T a, T b) { return a + b; }
  static T sub(T a, T b) { return a - b; }
  static T mul(T a, T b) { return a * b; }
  static T div(T a, T b) { return a / b; }
  static T fmadd(T a, T b, T c) { return a * b + c; }  // two roundings: -ffp-contract=off
  static T max(T a, T b) { return a > b ? a : b; }  // b if either is NaN, as maxps
  static T min(T a, T b) { return a < b ? a : b; }
  static T sqrt(T a) { return __builtin_sqrtf(a); }
  static float reduce_add(T a) { return a; }
  static float reduce_max(T a) { return a; }
  static Mask gt(T a, T b) { return a > b; }
  static Mask lt(T a, T b) { return a < b; }
  static T select(Mask m, T a, T b) { return m ? a : b; }
  static T exp2i(T n) {
    const uint32_t bits = static_cast<uint32_t>(static_cast<int>(n) + 127) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
};
}  // namespace scalar
using scalar::V;
using VS = scalar::V;  // see avx512::VS

#endif

}  // namespace ap::simd

#undef AP_SIMD_X86_COMMON
#undef AP_SIMD_X86_REDUCE128
