// kernels_fast_avx2.cpp — the fast kernels (kernels_fast_impl.h; quant_fast_impl.h's products of quantized weights) for AVX2 with FMA: compiled with -mavx2 -mfma, run only where the CPU has them.
#define AP_SIMD_AVX2 1
#define AP_FAST_NS avx2
#define AP_FAST_NAME "avx2"
#include "core/kernels/kernels_fast_impl.h"
#include "core/kernels/quant_fast_impl.h"
