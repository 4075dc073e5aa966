// kernels_fast_simd128.cpp — the fast kernels (kernels_fast_impl.h; quant_fast_impl.h's products of quantized weights) for WebAssembly SIMD128 (-msimd128).
#define AP_SIMD_WASM 1
#define AP_FAST_NS simd128
#define AP_FAST_NAME "simd128"
#include "core/kernels/kernels_fast_impl.h"
#include "core/kernels/quant_fast_impl.h"
