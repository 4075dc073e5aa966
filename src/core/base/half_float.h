// half_float.h — the two 16-bit float formats of model files, to and from float32, defined once:
//   BF16 (bfloat16): float32's top 16 bits (sign, 8 exponent bits, 7 mantissa bits);
//   F16 (IEEE 754 binary16): sign, 5 exponent bits (bias 15), 10 mantissa bits; subnormals below
//   2^−14, largest finite 65504.
// To float32 both are exact (every value, subnormals, ±inf and NaN payloads widen without loss).
// From float32 both round to nearest, ties to even (as NumPy's astype(float16) and PyTorch's
// .to(torch.bfloat16) do); a NaN stays a NaN (its payload's top bits kept, the quiet bit set),
// a value past the largest finite F16 rounds to ±inf, below half the smallest subnormal to ±0.
// Header-only: kernels convert on the fly.
#pragma once

#include <cstdint>
#include <cstring>

namespace ap {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float bf16_to_float(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

inline uint16_t float_to_bf16(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN: quiet
  const uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);                                      // ties to even
  return static_cast<uint16_t>((u + rounding) >> 16);
}

inline float f16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
  if (exp == 0x1F) return bits_float(sign | 0x7F800000u | (man << 13));  // inf, NaN
  if (exp != 0) return bits_float(sign | ((exp + 112u) << 23) | (man << 13));
  // zero or subnormal: man × 2^−24, exact in float32
  const float v = static_cast<float>(man) * 5.9604644775390625e-8f;
  return sign ? -v : v;
}

inline uint16_t float_to_f16(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x3FFu));  // NaN: quiet
  if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // ≥ 65520 (and inf): inf
  if (a >= 0x38800000u) {                                              // normal in F16 (≥ 2^−14)
    const uint32_t rounded = a + 0xFFFu + ((a >> 13) & 1u);            // ties to even at bit 13
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
  }
  if (a < 0x33000000u) return sign;  // < 2^−25: rounds to zero (2^−25 itself ties to even zero)
  // subnormal: shift the mantissa with its implicit 1 right, rounding ties to even
  const uint32_t exp = a >> 23, man = (a & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126u - exp;  // 14 … 24 + …: value = man × 2^(exp−150), result units 2^−24
  const uint32_t q = man >> shift, rem = man & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  const uint32_t r = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
  return static_cast<uint16_t>(sign | r);
}

}  // namespace ap
