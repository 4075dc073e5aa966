// bench_clock.h — the benchmarks' clock: wall time (steady_clock) by default; with the environment
// variable AP_BENCH_CPU_TIME=1, this process's CPU time (natively CLOCK_PROCESS_CPUTIME_ID; in wasm
// under Node, process.cpuUsage().user — the browser has none), so that on a shared, overloaded
// machine time spent waiting for a core is not counted. One thread everywhere, so CPU time is the
// time the work took on a core (in Node, plus V8's background threads, idle in steady state).
#pragma once

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>

#if defined(__EMSCRIPTEN__)
#include <emscripten.h>
// Node's process CPU time in seconds, or −1 outside Node; whether AP_BENCH_CPU_TIME=1 in Node.
EM_JS(double, ap_bench_node_cpu_seconds, (), {
  return (typeof process !== 'undefined' && process.cpuUsage) ? process.cpuUsage().user / 1e6 : -1;
});
EM_JS(int, ap_bench_node_cpu_wanted, (), {
  return (typeof process !== 'undefined' && process.env && process.env.AP_BENCH_CPU_TIME === '1') ? 1 : 0;
});
#endif

namespace bench {

inline bool cpu_time() {
#if defined(__EMSCRIPTEN__)
  static const bool on = ap_bench_node_cpu_wanted() == 1 && ap_bench_node_cpu_seconds() >= 0;
  return on;
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
#if defined(__EMSCRIPTEN__)
  if (cpu_time()) return ap_bench_node_cpu_seconds();
#else
  if (cpu_time()) {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
  }
#endif
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace bench
