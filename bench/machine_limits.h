// machine_limits.h — the machine's two physical limits that the benchmarks print their figures
// against: the FMA peak of one core (GFLOP/s, independent chains of the vector FMA, so the units'
// throughput, not memory's) and the memory's streaming read rate (GB/s: a buffer much larger than
// the last-level cache read once per pass with vector loads). Used by peak.cpp (which prints them) and by
// bench_gpt.cpp (which prints each figure's fraction of its limit). Header-only, no core code.
// Limits: one thread, timed on its CPU clock natively (wall time in wasm; the read probe can also
// read on several threads natively, timed on the steady clock); a loaded machine still
// lowers both (a busy sibling core shares the FMA units and the memory): take the median of a quiet
// sitting, or give them to bench_gpt (AP_PEAK_GFLOPS=…, AP_BW_GBS=… replace its probes).
// Natively on x86-64 each kernel is compiled for its instruction set (target attributes), so the
// binary runs on any x86-64; in wasm (SIMD128, no FMA) the FMA probe is SIMD128's mul + add.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>
#ifdef __wasm__
#include <unistd.h>
#include <wasm_simd128.h>
#else
#include <immintrin.h>
#include <unistd.h>

#include <thread>
#endif

namespace bench::limits {

// The probes' clock: natively this thread's CPU time (a loaded machine's waits for a core are not
// counted, as in the GEMM's A/B), in wasm wall time.
inline double wall() {
#ifndef __wasm__
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
#else
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
}

// Read through volatiles so that the compiler can neither fold the chains nor merge them.
inline volatile float g_one = 1.0f, g_eps = 1e-7f;
inline volatile float g_init[12] = {1e-7f, 2e-7f, 3e-7f, 4e-7f, 5e-7f, 6e-7f, 7e-7f, 8e-7f, 9e-7f, 1e-6f, 1.1e-6f, 1.2e-6f};
inline volatile float g_sink;

// Each FMA kernel runs `iters` rounds of its chains and returns the flops done.
#ifdef __wasm__
// 6 chains of multiplies and 6 of adds, 4 lanes each.
__attribute__((noinline, target("simd128"))) inline double simd128_muladd(long iters) {
  const v128_t m = wasm_f32x4_splat(g_one), a = wasm_f32x4_splat(g_eps);
  v128_t p[6], s[6];
  for (int j = 0; j < 6; ++j) p[j] = wasm_f32x4_splat(g_init[j]), s[j] = wasm_f32x4_splat(g_init[6 + j]);
  for (long i = 0; i < iters; ++i) {
#pragma clang loop unroll(full)
    for (int j = 0; j < 6; ++j) p[j] = wasm_f32x4_mul(p[j], m), s[j] = wasm_f32x4_add(s[j], a);
  }
  v128_t r = wasm_f32x4_add(p[0], s[0]);
  for (int j = 1; j < 6; ++j) r = wasm_f32x4_add(r, wasm_f32x4_add(p[j], s[j]));
  g_sink = wasm_f32x4_extract_lane(r, 0);
  return double(iters) * 12 * 4;
}
#else
// BENCH_UNROLL(n): `#pragma GCC unroll n` inside a macro.
#define BENCH_PRAGMA(x) _Pragma(#x)
#define BENCH_UNROLL(n) BENCH_PRAGMA(GCC unroll n)
// CHAINS FMA chains of one x86 vector width, 2 flops a lane: V the register type, P its
// intrinsics' prefix (_mm512_…), LANES its floats; written once, expanded for each width below.
#define BENCH_FMA_CHAINS(NAME, TARGET, V, P, CHAINS, LANES)                         \
  __attribute__((noinline, target(TARGET))) inline double NAME(long iters) {       \
    const V m = P##_set1_ps(g_one), a = P##_set1_ps(g_eps);                        \
    V c[CHAINS];                                                                   \
    for (int j = 0; j < CHAINS; ++j) c[j] = P##_set1_ps(g_init[j]);                \
    for (long i = 0; i < iters; ++i)                                               \
      BENCH_UNROLL(CHAINS)                                                         \
      for (int j = 0; j < CHAINS; ++j) c[j] = P##_fmadd_ps(c[j], m, a);            \
    V r = c[0];                                                                    \
    for (int j = 1; j < CHAINS; ++j) r = P##_add_ps(r, c[j]);                      \
    g_sink = P##_cvtss_f32(r);                                                     \
    return double(iters) * CHAINS * LANES * 2;                                     \
  }
// 12 chains of 16 lanes (AVX-512), 10 of 8 (AVX2).
BENCH_FMA_CHAINS(avx512_fma, "avx512f", __m512, _mm512, 12, 16)
BENCH_FMA_CHAINS(avx2_fma, "avx2,fma", __m256, _mm256, 10, 8)
#endif

// {best, median} of kernel(iters) over `trials` runs after a warm-up of a tenth, in GFLOP/s, timed
// by `clock` (wall's, or peak.cpp's wall time).
struct Rate {
  double best = 0, median = 0;
};
inline Rate flops_rate(double (*kernel)(long), long iters, int trials, double (*clock)() = wall) {
  kernel(iters / 10);
  std::vector<double> g;
  for (int t = 0; t < trials; ++t) {
    const double t0 = clock();
    const double flops = kernel(iters);
    g.push_back(flops / (clock() - t0) * 1e-9);
  }
  std::sort(g.begin(), g.end());
  return {g.back(), g[g.size() / 2]};
}

// The FMA peak of the vector unit an instruction set's kernels use ("avx512", "avx2"; anything
// else natively: AVX2's; in wasm: SIMD128's mul + add), median GFLOP/s of `trials` runs of
// `iters` rounds (each run 0.1–0.4 s at the default).
inline Rate fma_peak(const char* isa, int trials = 5, long iters = 200000000L) {
#ifdef __wasm__
  (void)isa;
  return flops_rate(simd128_muladd, iters, trials);
#else
  if (std::strcmp(isa, "avx512") == 0 && __builtin_cpu_supports("avx512f")) return flops_rate(avx512_fma, iters / 2, trials);
  return flops_rate(avx2_fma, iters, trials);
#endif
}

// The last-level cache's size in bytes where the system says (natively), else 0.
inline size_t llc_bytes() {
#if defined(_SC_LEVEL3_CACHE_SIZE) && !defined(__wasm__)
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) return static_cast<size_t>(l3);
#endif
#if defined(_SC_LEVEL2_CACHE_SIZE) && !defined(__wasm__)
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 > 0) return static_cast<size_t>(l2);
#endif
  return 0;
}

// The streaming probe's buffer: twice the LLC, at least 256 MB, at most 2 GB (1 GB in wasm, whose
// heap is at most 4 GB); AP_BW_MB=… sets it.
inline size_t bandwidth_buffer_bytes() {
  if (const char* e = std::getenv("AP_BW_MB")) {
    const long mb = std::atol(e);
    if (mb > 0) return static_cast<size_t>(mb) << 20;
  }
#ifdef __wasm__
  const size_t cap = size_t(1) << 30;
#else
  const size_t cap = size_t(2) << 30;
#endif
  return std::min(cap, std::max(size_t(256) << 20, 2 * llc_bytes()));
}

// One pass over n floats with 8 independent vector sums (so the adds' latency never limits the
// loads); returns the sum so that nothing is dropped.
#ifdef __wasm__
__attribute__((noinline, target("simd128"))) inline float read_pass(const float* p, size_t n) {
  v128_t s[8];
  for (auto& v : s) v = wasm_f32x4_splat(0.0f);
  for (size_t i = 0; i + 32 <= n; i += 32)
#pragma clang loop unroll(full)
    for (int j = 0; j < 8; ++j) s[j] = wasm_f32x4_add(s[j], wasm_v128_load(p + i + 4 * j));
  for (int j = 1; j < 8; ++j) s[0] = wasm_f32x4_add(s[0], s[j]);
  return wasm_f32x4_extract_lane(s[0], 0);
}
#else
__attribute__((noinline, target("avx2"))) inline float read_pass(const float* p, size_t n) {
  __m256 s[8];
  for (auto& v : s) v = _mm256_setzero_ps();
  for (size_t i = 0; i + 64 <= n; i += 64)
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) s[j] = _mm256_add_ps(s[j], _mm256_loadu_ps(p + i + 8 * j));
  for (int j = 1; j < 8; ++j) s[0] = _mm256_add_ps(s[0], s[j]);
  return _mm256_cvtss_f32(s[0]);
}
#endif

// The memory's streaming read rate: `passes` timed reads of the whole buffer (after one untimed
// pass that also faults its pages in), {best, median} GB/s (10⁹ bytes a second). threads > 1
// (natively): each pass the buffer read in that many equal slices at once, one a thread, timed
// from before the first starts to after the last ends, as a product split over threads reads.
inline Rate read_bandwidth(int passes = 7, size_t bytes = bandwidth_buffer_bytes(), int threads = 1) {
  const size_t n = bytes / sizeof(float) / 64 * 64;
  std::vector<float> buf(n, 1.0f);
  for (size_t i = 0; i < n; i += 1024) buf[i] = static_cast<float>(i & 7);
  auto pass = [&] {
#ifndef __wasm__
    if (threads > 1) {
      const size_t part = n / size_t(threads) / 64 * 64;
      std::vector<float> sums(static_cast<size_t>(threads));
      std::vector<std::thread> ts;
      for (int i = 0; i < threads; ++i)
        ts.emplace_back([&, i] {
          const size_t lo = part * size_t(i), hi = i + 1 == threads ? n : lo + part;
          sums[size_t(i)] = read_pass(buf.data() + lo, hi - lo);
        });
      for (std::thread& t : ts) t.join();
      return sums[0];
    }
#endif
    return read_pass(buf.data(), n);
  };
  // one thread: its CPU clock (wall() natively); several: the steady clock, as they run at once
  auto clock = [&] {
    return threads > 1 ? std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() : wall();
  };
  g_sink = pass();
  std::vector<double> g;
  for (int t = 0; t < passes; ++t) {
    const double t0 = clock();
    g_sink = pass();
    g.push_back(double(n) * sizeof(float) / (clock() - t0) * 1e-9);
  }
  std::sort(g.begin(), g.end());
  return {g.back(), g[g.size() / 2]};
}

}  // namespace bench::limits
