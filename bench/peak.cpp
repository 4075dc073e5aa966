// peak.cpp — the compute ceiling of one core, the "% of peak" of bench/peers_table.py. Natively:
// AVX-512 FMA (512-bit, if the CPU has it), AVX2 FMA (256-bit), AVX mul + add (256-bit, no FMA)
// and SSE mul + add (128-bit: what wasm SIMD128, which has no FMA, maps to); each kernel is
// compiled for its instruction set (target attributes) and the binary runs on any x86-64. Built
// for wasm (em++ -msimd128) it runs the SIMD128 mul + add kernel instead.
// Each kernel is 10–12 independent chains of the vector op over registers, so the figure is the
// throughput of the units, not of memory. Output, one line a kernel, read by peers_table.py:
//   "avx512_fma512 GFLOPs_max=… GFLOPs_med=…"  (also avx2_fma256, avx_mul+add256,
//   sse_mul+add128, wasm_simd128_mul+add)
// Limits: a ceiling, not a target: a GEMM whose multiplies and adds are independent can pass the
// SIMD128 mul + add figure (its chains are dependent); wall time, so a loaded machine lowers it
// (peers_table.py takes the best round; PEAK_NATIVE / PEAK_WASM give quiet figures). A benchmark:
// it never fails.
//   g++ -O2 bench/peak.cpp -o peak && ./peak [trials]            (default 7)
//   em++ -O3 -msimd128 bench/peak.cpp -sENVIRONMENT=node -o peak.cjs && node --no-liftoff peak.cjs
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#ifdef __wasm__
#include <wasm_simd128.h>
#else
#include <immintrin.h>
#endif

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Read through volatiles so that the compiler can neither fold the chains nor merge them.
volatile float g_one = 1.0f, g_eps = 1e-7f;
volatile float g_init[12] = {1e-7f, 2e-7f, 3e-7f, 4e-7f, 5e-7f, 6e-7f, 7e-7f, 8e-7f, 9e-7f, 1e-6f, 1.1e-6f, 1.2e-6f};
volatile float sink;

// Each kernel runs `iters` rounds of its chains and returns the flops done.
#ifdef __wasm__
// 6 chains of multiplies and 6 of adds, 4 lanes each.
__attribute__((noinline)) double simd128_muladd(long iters) {
  const v128_t m = wasm_f32x4_splat(g_one), a = wasm_f32x4_splat(g_eps);
  v128_t p[6], s[6];
  for (int j = 0; j < 6; ++j) p[j] = wasm_f32x4_splat(g_init[j]), s[j] = wasm_f32x4_splat(g_init[6 + j]);
  for (long i = 0; i < iters; ++i) {
#pragma clang loop unroll(full)
    for (int j = 0; j < 6; ++j) p[j] = wasm_f32x4_mul(p[j], m), s[j] = wasm_f32x4_add(s[j], a);
  }
  v128_t r = wasm_f32x4_add(p[0], s[0]);
  for (int j = 1; j < 6; ++j) r = wasm_f32x4_add(r, wasm_f32x4_add(p[j], s[j]));
  sink = wasm_f32x4_extract_lane(r, 0);
  return double(iters) * 12 * 4;
}
#else
// 12 FMA chains, 16 lanes each, 2 flops a lane.
__attribute__((noinline, target("avx512f"))) double avx512_fma(long iters) {
  const __m512 m = _mm512_set1_ps(g_one), a = _mm512_set1_ps(g_eps);
  __m512 c[12];
  for (int j = 0; j < 12; ++j) c[j] = _mm512_set1_ps(g_init[j]);
  for (long i = 0; i < iters; ++i)
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) c[j] = _mm512_fmadd_ps(c[j], m, a);
  __m512 r = c[0];
  for (int j = 1; j < 12; ++j) r = _mm512_add_ps(r, c[j]);
  float lanes[16];
  _mm512_storeu_ps(lanes, r);
  sink = lanes[0];
  return double(iters) * 12 * 16 * 2;
}

// 10 FMA chains, 8 lanes each, 2 flops a lane.
__attribute__((noinline, target("avx2,fma"))) double avx2_fma(long iters) {
  const __m256 m = _mm256_set1_ps(g_one), a = _mm256_set1_ps(g_eps);
  __m256 c[10];
  for (int j = 0; j < 10; ++j) c[j] = _mm256_set1_ps(g_init[j]);
  for (long i = 0; i < iters; ++i)
#pragma GCC unroll 10
    for (int j = 0; j < 10; ++j) c[j] = _mm256_fmadd_ps(c[j], m, a);
  __m256 r = c[0];
  for (int j = 1; j < 10; ++j) r = _mm256_add_ps(r, c[j]);
  sink = _mm256_cvtss_f32(r);
  return double(iters) * 10 * 8 * 2;
}

// 6 chains of multiplies and 6 of adds, 8 lanes each.
__attribute__((noinline, target("avx"))) double avx_muladd(long iters) {
  const __m256 m = _mm256_set1_ps(g_one), a = _mm256_set1_ps(g_eps);
  __m256 p[6], s[6];
  for (int j = 0; j < 6; ++j) p[j] = _mm256_set1_ps(g_init[j]), s[j] = _mm256_set1_ps(g_init[6 + j]);
  for (long i = 0; i < iters; ++i)
#pragma GCC unroll 6
    for (int j = 0; j < 6; ++j) p[j] = _mm256_mul_ps(p[j], m), s[j] = _mm256_add_ps(s[j], a);
  __m256 r = _mm256_add_ps(p[0], s[0]);
  for (int j = 1; j < 6; ++j) r = _mm256_add_ps(r, _mm256_add_ps(p[j], s[j]));
  sink = _mm256_cvtss_f32(r);
  return double(iters) * 12 * 8;
}

// 6 chains of multiplies and 6 of adds, 4 lanes each (SSE, every x86-64 has it).
__attribute__((noinline)) double sse_muladd(long iters) {
  const __m128 m = _mm_set1_ps(g_one), a = _mm_set1_ps(g_eps);
  __m128 p[6], s[6];
  for (int j = 0; j < 6; ++j) p[j] = _mm_set1_ps(g_init[j]), s[j] = _mm_set1_ps(g_init[6 + j]);
  for (long i = 0; i < iters; ++i)
#pragma GCC unroll 6
    for (int j = 0; j < 6; ++j) p[j] = _mm_mul_ps(p[j], m), s[j] = _mm_add_ps(s[j], a);
  __m128 r = _mm_add_ps(p[0], s[0]);
  for (int j = 1; j < 6; ++j) r = _mm_add_ps(r, _mm_add_ps(p[j], s[j]));
  sink = _mm_cvtss_f32(r);
  return double(iters) * 12 * 4;
}
#endif

// One warm-up of a tenth, then `trials` timed runs: the best and the median GFLOP/s.
void run(const char* name, double (*kernel)(long), long iters, int trials) {
  kernel(iters / 10);
  std::vector<double> g;
  for (int t = 0; t < trials; ++t) {
    const double t0 = now();
    const double flops = kernel(iters);
    g.push_back(flops / (now() - t0) * 1e-9);
  }
  std::sort(g.begin(), g.end());
  std::printf("%-28s GFLOPs_max=%7.2f GFLOPs_med=%7.2f\n", name, g.back(), g[g.size() / 2]);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  const long iters = 200000000L;  // 0.1–0.4 s a trial
#ifdef __wasm__
  run("wasm_simd128_mul+add", simd128_muladd, iters, trials);
#else
  if (__builtin_cpu_supports("avx512f")) run("avx512_fma512", avx512_fma, iters / 2, trials);
  else std::printf("avx512_fma512 (no AVX-512 on this CPU)\n");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) run("avx2_fma256", avx2_fma, iters, trials);
  if (__builtin_cpu_supports("avx")) run("avx_mul+add256", avx_muladd, iters, trials);
  run("sse_mul+add128", sse_muladd, iters, trials);
#endif
  return 0;
}
