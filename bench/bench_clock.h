// bench_clock.h — the benchmarks' clock: wall time (steady_clock) by default; with the environment
// variable AP_BENCH_CPU_TIME=1, this process's CPU time (CLOCK_PROCESS_CPUTIME_ID, native only), so
// that on a shared, overloaded machine time spent waiting for a core is not counted. One thread
// everywhere, so CPU time is the time the work took on a core.
#pragma once

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace bench {

inline bool cpu_time() {
#if defined(__EMSCRIPTEN__)
  return false;  // no process CPU clock in wasm
#else
  static const bool on = [] {
    const char* v = std::getenv("AP_BENCH_CPU_TIME");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
#endif
}

inline const char* clock_name() { return cpu_time() ? "CPU time" : "wall time"; }

// Seconds from an arbitrary origin.
inline double now() {
#if !defined(__EMSCRIPTEN__)
  if (cpu_time()) {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
  }
#endif
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace bench
