// kernels_fast_avx512.cpp — the fast kernels (kernels_fast_impl.h; quant_fast_impl.h's products of quantized weights) for AVX-512F with FMA: compiled with -mavx512f -mfma, run only where the CPU has them.
#define AP_SIMD_AVX512 1
// GCC 12 warns falsely on its own AVX-512 headers (the _mm512_undefined_* placeholders); clang
// (the fuzz build) has no such warning and would warn about the unknown name.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#define AP_FAST_NS avx512
#define AP_FAST_NAME "avx512"
#include "core/kernels/kernels_fast_impl.h"
#include "core/kernels/quant_fast_impl.h"
