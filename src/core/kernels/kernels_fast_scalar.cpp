// kernels_fast_scalar.cpp — the fast kernels (kernels_fast_impl.h; quant_fast_impl.h's products of quantized weights) for plain C++, one lane (other targets; built natively too, so it is tested).
#define AP_SIMD_SCALAR 1
#define AP_FAST_NS scalar
#define AP_FAST_NAME "scalar"
#include "core/kernels/kernels_fast_impl.h"
#include "core/kernels/quant_fast_impl.h"
