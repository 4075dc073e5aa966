// quant_fast_blocks.h — a block's quants as floats in simd.h's vector lanes, for quant_fast_impl.h's
// direct products: the integers themselves, not yet scaled. Q8_0's qs[i] and Q4_0's nibble − 8 (a
// block's dot product Σ x·q is taken in floats and scaled once); Q4_K's nibbles, 32 bytes at a time
// (q4k_32: the low nibbles are one sub-block of 32, the high nibbles the next); Q6_K's 6-bit quants
// − 32, 16 positions of one half of a super-block at a time (q6k_16: ql's bytes l and l + 32 and
// qh's byte l give the values l, l + 32, l + 64 and l + 96 of the half, quant_blocks.inc's order).
// Every quant is a small integer, exact in float. Written once per instruction set
// (AVX-512F, AVX2, SSE2, WebAssembly SIMD128, scalar), chosen by the AP_SIMD_* of the unit that
// includes it (simd.h). Internal to quant_fast_impl.h.
// Limits: q points at a block's quants (any alignment); out receives 32 / V::W vectors (q4k_32: 32 /
// V::W in lo and in hi; q6k_16: 4 runs of 16 / V::W, run r's vectors at out[r · 16 / V::W]), lanes in
// the block's order, or, where kTransposed, each half of 16 as a 4×4 transpose (vector
// j, lane i: quant 16h + 4i + j), so that x must be read in that order too (transpose_x).
#pragma once

#include <cstdint>

#include "core/kernels/simd.h"

namespace ap::quant::fast::AP_FAST_NS {

using BV = simd::V;
constexpr int kBlockVecs = 32 / BV::W;  // vectors in a block of 32

#if defined(AP_SIMD_AVX512) || defined(AP_SIMD_AVX2) || defined(AP_SIMD_SCALAR)
constexpr bool kTransposed = false;  // the lanes in the block's order
#endif

#if defined(AP_SIMD_AVX512)
static inline void q8_block(const int8_t* q, BV::T* out) {
  out[0] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q))));
  out[1] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16))));
}
// Q4_0: byte j holds quant j (low nibble) and quant j + 16 (high nibble).
static inline void q4_block(const uint8_t* q, BV::T* out) {
  const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
  const __m512i eight = _mm512_set1_epi32(8);
  out[0] = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_and_si512(v, _mm512_set1_epi32(15)), eight));
  out[1] = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(v, 4), eight));
}

// Q4_K: 32 bytes, two sub-blocks: lo the low nibbles (values 0 … 31), hi the high (32 … 63).
static inline void q4k_32(const uint8_t* q, BV::T* lo, BV::T* hi) {
  for (int h = 0; h < 2; ++h) {
    const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * h)));
    lo[h] = _mm512_cvtepi32_ps(_mm512_and_si512(v, _mm512_set1_epi32(15)));
    hi[h] = _mm512_cvtepi32_ps(_mm512_srli_epi32(v, 4));
  }
}
// Q6_K: run r's quant is ql's nibble (low: r = 0, 1; high: r = 2, 3; of byte l for even r, l + 32
// for odd) | qh's bit pair r (bits 2r, 2r + 1) << 4, minus 32.
static inline void q6k_16(const uint8_t* ql, const uint8_t* qh, BV::T* out) {
  const __m512i a = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ql)));
  const __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ql + 32)));
  const __m512i h = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qh)));
  const __m512i m15 = _mm512_set1_epi32(15), m48 = _mm512_set1_epi32(48), c32 = _mm512_set1_epi32(32);
  const __m512i lo4[4] = {_mm512_and_si512(a, m15), _mm512_and_si512(b, m15), _mm512_srli_epi32(a, 4), _mm512_srli_epi32(b, 4)};
  const __m512i hi2[4] = {_mm512_slli_epi32(h, 4), _mm512_slli_epi32(h, 2), h, _mm512_srli_epi32(h, 2)};
  for (int r = 0; r < 4; ++r)
    out[r] = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_or_si512(lo4[r], _mm512_and_si512(hi2[r], m48)), c32));
}

#elif defined(AP_SIMD_AVX2)
static inline __m256 i8x8(const void* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(static_cast<const __m128i*>(p))));
}
static inline void q8_block(const int8_t* q, BV::T* out) {
  for (int j = 0; j < 4; ++j) out[j] = i8x8(q + 8 * j);
}
static inline void q4_block(const uint8_t* q, BV::T* out) {
  const __m256i m = _mm256_set1_epi32(15), eight = _mm256_set1_epi32(8);
  for (int h = 0; h < 2; ++h) {  // bytes 8h … 8h+7: quants 8h … and 16 + 8h …
    const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + 8 * h)));
    out[h] = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_and_si256(v, m), eight));
    out[2 + h] = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(v, 4), eight));
  }
}

static inline __m256i u8x8(const uint8_t* p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
// Q4_K: 32 bytes, two sub-blocks: lo the low nibbles (values 0 … 31), hi the high (32 … 63).
static inline void q4k_32(const uint8_t* q, BV::T* lo, BV::T* hi) {
  for (int j = 0; j < 4; ++j) {
    const __m256i v = u8x8(q + 8 * j);
    lo[j] = _mm256_cvtepi32_ps(_mm256_and_si256(v, _mm256_set1_epi32(15)));
    hi[j] = _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4));
  }
}
// Q6_K: run r's quant is ql's nibble (low: r = 0, 1; high: r = 2, 3; of byte l for even r, l + 32
// for odd) | qh's bit pair r (bits 2r, 2r + 1) << 4, minus 32.
static inline void q6k_16(const uint8_t* ql, const uint8_t* qh, BV::T* out) {
  const __m256i m15 = _mm256_set1_epi32(15), m48 = _mm256_set1_epi32(48), c32 = _mm256_set1_epi32(32);
  for (int g = 0; g < 2; ++g) {
    const __m256i a = u8x8(ql + 8 * g), b = u8x8(ql + 32 + 8 * g), h = u8x8(qh + 8 * g);
    const __m256i lo4[4] = {_mm256_and_si256(a, m15), _mm256_and_si256(b, m15), _mm256_srli_epi32(a, 4), _mm256_srli_epi32(b, 4)};
    const __m256i hi2[4] = {_mm256_slli_epi32(h, 4), _mm256_slli_epi32(h, 2), h, _mm256_srli_epi32(h, 2)};
    for (int r = 0; r < 4; ++r)
      out[2 * r + g] = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_or_si256(lo4[r], _mm256_and_si256(hi2[r], m48)), c32));
  }
}

#elif defined(AP_SIMD_SSE2) || defined(AP_SIMD_WASM)
// Four lanes: sixteen bytes read as four 32-bit lanes, byte j of each lane moved to its top by a
// shift left and sign-extended (Q8_0) or masked (Q4_0's nibbles) by a shift right: vector j holds
// bytes j, 4 + j, 8 + j, 12 + j — the 4×4 transpose of the block's order, undone by reading x
// transposed (kTransposed). Shifts and one conversion per vector: the widening instructions are
// either missing (SSE2 has no pmovsx) or, in WebAssembly, turned back into scalar conversions by
// LLVM when followed by a conversion to float.
constexpr bool kTransposed = true;
#if defined(AP_SIMD_SSE2)
using BI = __m128i;
static inline BI load16(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
static inline BI shl(BI v, int n) { return _mm_sll_epi32(v, _mm_cvtsi32_si128(n)); }
static inline BI sar(BI v, int n) { return _mm_sra_epi32(v, _mm_cvtsi32_si128(n)); }
static inline BI shr(BI v, int n) { return _mm_srl_epi32(v, _mm_cvtsi32_si128(n)); }
static inline BI and15(BI v) { return _mm_and_si128(v, _mm_set1_epi32(15)); }
static inline BV::T to_f(BI v) { return _mm_cvtepi32_ps(v); }
static inline BI minus8(BI v) { return _mm_sub_epi32(v, _mm_set1_epi32(8)); }
static inline BI q6(BI lo4, BI hi2) {  // (lo4 | hi2 & 48) − 32
  return _mm_sub_epi32(_mm_or_si128(lo4, _mm_and_si128(hi2, _mm_set1_epi32(48))), _mm_set1_epi32(32));
}
static inline void transpose4(BV::T* v) { _MM_TRANSPOSE4_PS(v[0], v[1], v[2], v[3]); }
#else
using BI = v128_t;
static inline BI load16(const void* p) { return wasm_v128_load(p); }
static inline BI shl(BI v, int n) { return wasm_i32x4_shl(v, n); }
static inline BI sar(BI v, int n) { return wasm_i32x4_shr(v, n); }
static inline BI shr(BI v, int n) { return wasm_u32x4_shr(v, n); }
static inline BI and15(BI v) { return wasm_v128_and(v, wasm_i32x4_splat(15)); }
static inline BV::T to_f(BI v) { return wasm_f32x4_convert_i32x4(v); }
static inline BI minus8(BI v) { return wasm_i32x4_sub(v, wasm_i32x4_splat(8)); }
static inline BI q6(BI lo4, BI hi2) {  // (lo4 | hi2 & 48) − 32
  return wasm_i32x4_sub(wasm_v128_or(lo4, wasm_v128_and(hi2, wasm_i32x4_splat(48))), wasm_i32x4_splat(32));
}
static inline void transpose4(BV::T* v) {
  const BI a = wasm_i32x4_shuffle(v[0], v[1], 0, 4, 1, 5), b = wasm_i32x4_shuffle(v[2], v[3], 0, 4, 1, 5);
  const BI c = wasm_i32x4_shuffle(v[0], v[1], 2, 6, 3, 7), d = wasm_i32x4_shuffle(v[2], v[3], 2, 6, 3, 7);
  v[0] = wasm_i32x4_shuffle(a, b, 0, 1, 4, 5);
  v[1] = wasm_i32x4_shuffle(a, b, 2, 3, 6, 7);
  v[2] = wasm_i32x4_shuffle(c, d, 0, 1, 4, 5);
  v[3] = wasm_i32x4_shuffle(c, d, 2, 3, 6, 7);
}
#endif
static inline void i8x16(BI v, BV::T* out) {
  out[0] = to_f(sar(shl(v, 24), 24));
  out[1] = to_f(sar(shl(v, 16), 24));
  out[2] = to_f(sar(shl(v, 8), 24));
  out[3] = to_f(sar(v, 24));
}
static inline void q8_block(const int8_t* q, BV::T* out) {
  i8x16(load16(q), out);
  i8x16(load16(q + 16), out + 4);
}
// Byte b = 4·lane + j holds quant b (low nibble) and quant b + 16 (high nibble).
static inline void q4_block(const uint8_t* q, BV::T* out) {
  const BI v = load16(q);
  for (int j = 0; j < 4; ++j) {
    out[j] = to_f(minus8(and15(shr(v, 8 * j))));
    out[4 + j] = to_f(minus8(and15(shr(v, 8 * j + 4))));
  }
}

// Q4_K: 32 bytes, two sub-blocks: lo the low nibbles (values 0 … 31), hi the high (32 … 63), each
// 16 transposed as Q4_0's.
static inline void q4k_32(const uint8_t* q, BV::T* lo, BV::T* hi) {
  for (int h = 0; h < 2; ++h) {
    const BI v = load16(q + 16 * h);
    for (int j = 0; j < 4; ++j) {
      lo[4 * h + j] = to_f(and15(shr(v, 8 * j)));
      hi[4 * h + j] = to_f(and15(shr(v, 8 * j + 4)));
    }
  }
}
// Q6_K: run r's quant is ql's nibble (low: r = 0, 1; high: r = 2, 3; of byte l for even r, l + 32
// for odd) | qh's bit pair r (bits 2r, 2r + 1) << 4, minus 32; byte j of each lane moved to its
// bottom by a shift right (vector j: bytes j, 4 + j, 8 + j, 12 + j, transposed as above).
static inline void q6k_16(const uint8_t* ql, const uint8_t* qh, BV::T* out) {
  const BI A = load16(ql), B = load16(ql + 32), H = load16(qh);
  for (int j = 0; j < 4; ++j) {
    const BI a = shr(A, 8 * j), b = shr(B, 8 * j);
    out[j] = to_f(q6(and15(a), shl(shr(H, 8 * j), 4)));
    out[4 + j] = to_f(q6(and15(b), shl(shr(H, 8 * j), 2)));
    out[8 + j] = to_f(q6(and15(shr(a, 4)), shr(H, 8 * j)));
    out[12 + j] = to_f(q6(and15(shr(b, 4)), shr(H, 8 * j + 2)));
  }
}

#else  // AP_SIMD_SCALAR
static inline void q8_block(const int8_t* q, BV::T* out) {
  for (int i = 0; i < 32; ++i) out[i] = static_cast<float>(q[i]);
}
static inline void q4_block(const uint8_t* q, BV::T* out) {
  for (int j = 0; j < 16; ++j) {
    out[j] = static_cast<float>((q[j] & 15) - 8);
    out[j + 16] = static_cast<float>((q[j] >> 4) - 8);
  }
}
static inline void q4k_32(const uint8_t* q, BV::T* lo, BV::T* hi) {
  for (int i = 0; i < 32; ++i) {
    lo[i] = static_cast<float>(q[i] & 15);
    hi[i] = static_cast<float>(q[i] >> 4);
  }
}
static inline void q6k_16(const uint8_t* ql, const uint8_t* qh, BV::T* out) {
  for (int l = 0; l < 16; ++l) {
    out[l] = static_cast<float>(((ql[l] & 15) | ((qh[l] & 3) << 4)) - 32);
    out[16 + l] = static_cast<float>(((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32);
    out[32 + l] = static_cast<float>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
    out[48 + l] = static_cast<float>(((ql[l + 32] >> 4) | ((qh[l] >> 6) << 4)) - 32);
  }
}
#endif

// 16 values (16 / V::W vectors in the tier's order) stored at y in the block's order: where
// kTransposed, the 4×4 transpose undone in registers first.
static inline void store16(float* y, BV::T* v) {
#if defined(AP_SIMD_SSE2) || defined(AP_SIMD_WASM)
  transpose4(v);
#endif
  for (int j = 0; j < 16 / BV::W; ++j) BV::store(y + j * BV::W, v[j]);
}

// x's K values in the order the quants come in: each 16 transposed as 4×4 where kTransposed.
static inline void transpose_x(const float* x, float* out, int K) {
  for (int h = 0; h < K; h += 16)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) out[h + 4 * j + i] = x[h + 4 * i + j];
}

}  // namespace ap::quant::fast::AP_FAST_NS
