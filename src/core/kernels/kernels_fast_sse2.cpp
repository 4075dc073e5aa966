// kernels_fast_sse2.cpp — the fast kernels (kernels_fast_impl.h; quant_fast_impl.h's products of quantized weights) for SSE2 (every x86-64).
#define AP_SIMD_SSE2 1
#define AP_FAST_NS sse2
#define AP_FAST_NAME "sse2"
#include "core/kernels/kernels_fast_impl.h"
#include "core/kernels/quant_fast_impl.h"
