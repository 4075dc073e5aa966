// gemm_baseline_avx512.cpp — the baseline tree's fast kernels for AVX512 (its kernels_fast_impl.h,
// found first on the include path that AP_GEMM_BASELINE gives), under the namespace
// ap::kernels::fast::baseline_avx512, for gemm_bench.cpp's A/B. Built only when AP_GEMM_BASELINE is set.
#define AP_SIMD_AVX512 1
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define AP_FAST_NS baseline_avx512
#define AP_FAST_NAME "baseline_avx512"
#include "core/kernels/kernels_fast_impl.h"
