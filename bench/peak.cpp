// peak.cpp — the compute ceiling of one core, the "% of peak" of bench/peers_table.py. Natively:
// AVX-512 FMA (512-bit, if the CPU has it), AVX2 FMA (256-bit), AVX mul + add (256-bit, no FMA)
// and SSE mul + add (128-bit: what wasm SIMD128, which has no FMA, maps to); each kernel is
// compiled for its instruction set (target attributes) and the binary runs on any x86-64. Built
// for wasm (em++ -msimd128) it runs the SIMD128 mul + add kernel instead.
// Each kernel is 10–12 independent chains of the vector op over registers, so the figure is the
// throughput of the units, not of memory. Output, one line a kernel, read by peers_table.py:
//   "avx512_fma512 GFLOPs_max=… GFLOPs_med=…"  (also avx2_fma256, avx_mul+add256,
//   sse_mul+add128, wasm_simd128_mul+add), then the memory's streaming read rate
//   (machine_limits.h: a buffer of twice the last-level cache, at least 256 MB, read with vector loads):
//   "mem_read GBs_max=… GBs_med=… (… MB read … times, LLC … MB)" — generation's limit.
//   "mem_read_all_cores GBs_max=… GBs_med=… (N threads)" — the same read split over every core.
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

#include "machine_limits.h"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

using bench::limits::g_eps;
using bench::limits::g_init;
using bench::limits::g_one;
volatile float& sink = bench::limits::g_sink;

// Each kernel runs `iters` rounds of its chains and returns the flops done (the FMA ones, and
// SIMD128's, are machine_limits.h's: bench_gpt measures its limits with the same code).
#ifndef __wasm__
// 6 chains of multiplies and 6 of adds of one x86 vector width (as BENCH_FMA_CHAINS).
#define PEAK_MULADD_CHAINS(NAME, TARGET, V, P, LANES)                                            \
  __attribute__((noinline, target(TARGET))) double NAME(long iters) {                           \
    const V m = P##_set1_ps(g_one), a = P##_set1_ps(g_eps);                                     \
    V p[6], s[6];                                                                               \
    for (int j = 0; j < 6; ++j) p[j] = P##_set1_ps(g_init[j]), s[j] = P##_set1_ps(g_init[6 + j]); \
    for (long i = 0; i < iters; ++i)                                                            \
      BENCH_UNROLL(6)                                                                           \
      for (int j = 0; j < 6; ++j) p[j] = P##_mul_ps(p[j], m), s[j] = P##_add_ps(s[j], a);       \
    V r = P##_add_ps(p[0], s[0]);                                                               \
    for (int j = 1; j < 6; ++j) r = P##_add_ps(r, P##_add_ps(p[j], s[j]));                      \
    sink = P##_cvtss_f32(r);                                                                    \
    return double(iters) * 12 * LANES;                                                          \
  }
// 8 lanes (AVX); 4 lanes (SSE, every x86-64 has it).
PEAK_MULADD_CHAINS(avx_muladd, "avx", __m256, _mm256, 8)
PEAK_MULADD_CHAINS(sse_muladd, "sse2", __m128, _mm, 4)
#endif

// One warm-up of a tenth, then `trials` timed runs: the best and the median GFLOP/s.
void run(const char* name, double (*kernel)(long), long iters, int trials) {
  const bench::limits::Rate r = bench::limits::flops_rate(kernel, iters, trials, now);
  std::printf("%-28s GFLOPs_max=%7.2f GFLOPs_med=%7.2f\n", name, r.best, r.median);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  const long iters = 200000000L;  // 0.1–0.4 s a trial
#ifdef __wasm__
  run("wasm_simd128_mul+add", bench::limits::simd128_muladd, iters, trials);
#else
  if (__builtin_cpu_supports("avx512f")) run("avx512_fma512", bench::limits::avx512_fma, iters / 2, trials);
  else std::printf("avx512_fma512 (no AVX-512 on this CPU)\n");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    run("avx2_fma256", bench::limits::avx2_fma, iters, trials);
  if (__builtin_cpu_supports("avx")) run("avx_mul+add256", avx_muladd, iters, trials);
  run("sse_mul+add128", sse_muladd, iters, trials);
#endif
  const size_t bytes = bench::limits::bandwidth_buffer_bytes();
  const bench::limits::Rate bw = bench::limits::read_bandwidth(trials, bytes);
  std::printf("%-28s GBs_max=%7.2f GBs_med=%7.2f (%zu MB read %d times, LLC %zu MB)\n", "mem_read", bw.best, bw.median,
              bytes >> 20, trials, bench::limits::llc_bytes() >> 20);
#ifndef __wasm__
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (cores > 1) {  // as a product split over every core reads
    const bench::limits::Rate all = bench::limits::read_bandwidth(trials, bytes, cores);
    std::printf("%-28s GBs_max=%7.2f GBs_med=%7.2f (%d threads)\n", "mem_read_all_cores", all.best, all.median, cores);
  }
#endif
  return 0;
}
