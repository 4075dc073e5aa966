// gemm_baseline_avx2.cpp — the baseline tree's fast kernels for AVX2 (its kernels_fast_impl.h,
// found first on the include path that AP_GEMM_BASELINE gives), under the namespace
// ap::kernels::fast::baseline_avx2, for gemm_bench.cpp's A/B. Built only when AP_GEMM_BASELINE is set.
#define AP_SIMD_AVX2 1
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define AP_FAST_NS baseline_avx2
#define AP_FAST_NAME "baseline_avx2"
#include "core/kernels/kernels_fast_impl.h"
