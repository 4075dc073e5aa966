// quant_fast_blocks.h — a Q8_0 or Q4_0 block's 32 quants as floats in simd.h's vector lanes, for
// quant_fast_impl.h's direct products: the integers themselves (Q8_0's qs[i]; Q4_0's nibble − 8),
// not yet times the block's scale d, so that a block's dot product Σ x·q is taken in floats and
// scaled once. Every quant is a small integer, exact in float. Written once per instruction set
// (AVX-512F, AVX2, SSE2, WebAssembly SIMD128, scalar), chosen by the AP_SIMD_* of the unit that
// includes it (simd.h). Internal to quant_fast_impl.h.
// Limits: q points at a block's quants (any alignment); out receives 32 / V::W vectors, lanes in
// the block's order k = 0 … 31.
#pragma once

#include <cstdint>

#include "core/kernels/simd.h"

namespace ap::quant::fast::AP_FAST_NS {

using BV = simd::V;
constexpr int kBlockVecs = 32 / BV::W;  // vectors in a block of 32

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

#elif defined(AP_SIMD_SSE2)
// Sixteen signed bytes to four vectors of floats: each byte doubled into a 16-bit lane and shifted
// right arithmetically (sign extension without SSE4.1), then the same from 16 to 32 bits.
static inline void i8x16(__m128i v, BV::T* out) {
  const __m128i lo = _mm_srai_epi16(_mm_unpacklo_epi8(v, v), 8), hi = _mm_srai_epi16(_mm_unpackhi_epi8(v, v), 8);
  out[0] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(lo, lo), 16));
  out[1] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(lo, lo), 16));
  out[2] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(hi, hi), 16));
  out[3] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(hi, hi), 16));
}
static inline void q8_block(const int8_t* q, BV::T* out) {
  i8x16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)), out);
  i8x16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16)), out + 4);
}
static inline void q4_block(const uint8_t* q, BV::T* out) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  const __m128i m = _mm_set1_epi8(15), eight = _mm_set1_epi8(8);
  i8x16(_mm_sub_epi8(_mm_and_si128(v, m), eight), out);
  i8x16(_mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(v, 4), m), eight), out + 4);
}

#elif defined(AP_SIMD_WASM)
static inline void i8x16(v128_t v, BV::T* out) {
  const v128_t lo = wasm_i16x8_extend_low_i8x16(v), hi = wasm_i16x8_extend_high_i8x16(v);
  out[0] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(lo));
  out[1] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(lo));
  out[2] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(hi));
  out[3] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(hi));
}
static inline void q8_block(const int8_t* q, BV::T* out) {
  i8x16(wasm_v128_load(q), out);
  i8x16(wasm_v128_load(q + 16), out + 4);
}
static inline void q4_block(const uint8_t* q, BV::T* out) {
  const v128_t v = wasm_v128_load(q), m = wasm_i8x16_splat(15), eight = wasm_i8x16_splat(8);
  i8x16(wasm_i8x16_sub(wasm_v128_and(v, m), eight), out);
  i8x16(wasm_i8x16_sub(wasm_u8x16_shr(v, 4), eight), out + 4);
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
#endif

}  // namespace ap::quant::fast::AP_FAST_NS
