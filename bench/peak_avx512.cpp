// peak_avx512.cpp — the AVX-512 FMA ceiling of one core (../shared/bench/peers/cpp/peak.cpp measures
// AVX2 FMA, AVX and SSE; this adds the 512-bit FMA the fast kernels' avx512 path uses). Prints
// "avx512_fma512 GFLOPs_max=… GFLOPs_med=…" as peak.cpp does. A benchmark: never fails.
//   g++ -O2 -mavx512f -mfma bench/peak_avx512.cpp -o peak_avx512 && ./peak_avx512 [trials]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

static volatile float g_one = 1.0f, g_eps = 1e-7f;
static volatile float sink;

__attribute__((noinline)) static double k512_fma(long iters) {
  const __m512 m = _mm512_set1_ps(g_one), a = _mm512_set1_ps(g_eps);
  __m512 c[12];
  for (int i = 0; i < 12; ++i) c[i] = _mm512_set1_ps(g_eps * float(i + 1));
  for (long i = 0; i < iters; ++i)
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) c[j] = _mm512_fmadd_ps(c[j], m, a);
  __m512 r = c[0];
  for (int j = 1; j < 12; ++j) r = _mm512_add_ps(r, c[j]);
  sink = _mm512_reduce_add_ps(r);
  return double(iters) * 12 * 16 * 2;
}

int main(int argc, char** argv) {
  if (!__builtin_cpu_supports("avx512f")) {
    std::printf("avx512_fma512 (no AVX-512 on this CPU)\n");
    return 0;
  }
  const int trials = argc > 1 ? std::atoi(argv[1]) : 7;
  const long iters = 100000000L;
  k512_fma(iters / 10);
  std::vector<double> g;
  for (int t = 0; t < trials; ++t) {
    const auto t0 = std::chrono::steady_clock::now();
    const double fl = k512_fma(iters);
    g.push_back(fl / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e-9);
  }
  std::sort(g.begin(), g.end());
  std::printf("%-28s GFLOPs_max=%7.2f GFLOPs_med=%7.2f\n", "avx512_fma512", g.back(), g[g.size() / 2]);
  return 0;
}
