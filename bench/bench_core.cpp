// bench_core.cpp — the core's kernels on the workloads W1 and W2 (bench/README.md), one
// thread, float32. A benchmark, not a test: it prints numbers and never fails on them.
//
//   W1  attention forward, one head: Q, K, V of shape [T, 64], causal;
//       out = softmax(QKᵀ/√d + mask)·V — as kernels (what a fast path would run) and through
//       attention_trace (what the stepper runs: it keeps every step).  GFLOP/s at 4·T²·d.
//       Then the GPT's kernels (kernels.h) on the same head: W1_attn_ref (reference tier, weights
//       kept), W1_attn_fast (fast tier, weights kept: what training runs) and W1_attn_fastinfer
//       (fast tier, fused, weights not kept: what inference runs). Q, K, V are the columns of one
//       (T, 3·64) qkv buffer, the layout the model's c_attn produces.
//   W2  matmul [n,n]×[n,n].  GFLOP/s at 2n³.  W2_matmul: the old ops.h kernel; W2_matmul_ref /
//       W2_matmul_fast: kernels.h's matmul_forward (a Linear layer: out = a·bᵀ, packing included).
//
// The fast tier runs the best instruction set of the CPU, or AP_FAST_ISA's (avx512, avx2, sse2,
// scalar); the header line names it.
//
// Each figure: repetitions are doubled until one trial takes ≥ 40 ms, then 9 trials; the median
// and the minimum per call are printed. Output lines: "<workload> med_us=… min_us=… GFLOPs_med=…".
// Run: cmake --build build --target bench   (or build/ap_bench [--quick]; AP_BENCH_CPU_TIME=1: CPU time)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_clock.h"
#include "core/attention/attention.h"
#include "core/kernels/kernels.h"
#include "core/kernels/kernels_fast.h"
#include "core/tensor/ops.h"
#include "core/base/rng.h"

namespace {


struct Timing {
  double med_us, min_us;
};

Timing time_it(const std::function<void()>& fn, int trials, double min_trial_s) {
  fn();
  long reps = 1;
  for (;;) {
    const double t0 = bench::now();
    for (long r = 0; r < reps; ++r) fn();
    const double s = bench::now() - t0;
    if (s >= min_trial_s || reps >= (1L << 24)) break;
    reps *= 2;
  }
  std::vector<double> per_call;
  for (int t = 0; t < trials; ++t) {
    const double t0 = bench::now();
    for (long r = 0; r < reps; ++r) fn();
    per_call.push_back((bench::now() - t0) / reps);
  }
  std::sort(per_call.begin(), per_call.end());
  return {per_call[per_call.size() / 2] * 1e6, per_call.front() * 1e6};
}

void report(const std::string& name, const Timing& t, double flops) {
  std::printf("%-28s med_us=%10.2f min_us=%10.2f GFLOPs_med=%7.2f GFLOPs_max=%7.2f\n", name.c_str(), t.med_us,
              t.min_us, flops / t.med_us * 1e-3, flops / t.min_us * 1e-3);
  std::fflush(stdout);
}

// volatile sink so the optimiser keeps the work
volatile float g_sink;

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  const int trials = quick ? 3 : 9;
  const double min_trial_s = quick ? 0.01 : 0.04;
  std::printf("ap_bench: core kernels, float32, one thread (%s, %s), fast tier: %s\n", quick ? "quick" : "9 trials",
              bench::clock_name(), ap::kernels::fast::isa_name());
  namespace K = ap::kernels;
  const K::Kernels& F = K::fast::current();  // the fast tier's table (the CPU's best ISA, or AP_FAST_ISA's)

  // W1: attention forward, one head, d = 64, causal.
  const int d = 64;
  for (int T : {64, 256, 1024}) {
    const ap::Tensor q = ap::random_uniform(T, d, 1.0f, 1), k = ap::random_uniform(T, d, 1.0f, 2),
                     v = ap::random_uniform(T, d, 1.0f, 3);
    const ap::Tensor mask = ap::causal_mask(T, T, 0, ap::MaskVariant::strict);
    std::vector<float> att(static_cast<size_t>(T) * T), out(static_cast<size_t>(T) * d);
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    auto kernels = [&] {
      ap::matmul_bt_forward(att.data(), q.ptr(), k.ptr(), T, d, T);  // (T,T) = q·kᵀ
      for (size_t i = 0; i < att.size(); ++i) att[i] = att[i] * scale + mask.data[i];
      ap::softmax_rows_forward(att.data(), nullptr, att.data(), T, T);
      ap::matmul_forward(out.data(), att.data(), v.ptr(), T, T, d);  // (T,d) = att·v
      g_sink = out[0];
    };
    report("W1_attn_kernels_T" + std::to_string(T), time_it(kernels, trials, min_trial_s), 4.0 * T * T * d);
    {
      std::vector<float> qkv(static_cast<size_t>(T) * 3 * d);
      for (int t = 0; t < T; ++t)
        for (int c = 0; c < d; ++c) {
          qkv[static_cast<size_t>(t) * 3 * d + c] = q.data[static_cast<size_t>(t) * d + c];
          qkv[static_cast<size_t>(t) * 3 * d + d + c] = k.data[static_cast<size_t>(t) * d + c];
          qkv[static_cast<size_t>(t) * 3 * d + 2 * d + c] = v.data[static_cast<size_t>(t) * d + c];
        }
      const K::AttnOptions opt;  // strict causal mask, stable softmax
      std::vector<float> scratch(K::attention_forward_infer_scratch_max(1, T, d, 1));
      auto ref = [&] {
        K::reference.attention_forward(out.data(), att.data(), qkv.data(), 1, T, d, 1, opt);
        g_sink = out[0];
      };
      auto fast = [&] {
        F.attention_forward(out.data(), att.data(), qkv.data(), 1, T, d, 1, opt);
        g_sink = out[0];
      };
      auto infer = [&] {
        F.attention_forward_infer(out.data(), scratch.data(), qkv.data(), 1, T, d, 1, opt);
        g_sink = out[0];
      };
      report("W1_attn_ref_T" + std::to_string(T), time_it(ref, trials, min_trial_s), 4.0 * T * T * d);
      report("W1_attn_fast_T" + std::to_string(T), time_it(fast, trials, min_trial_s), 4.0 * T * T * d);
      report("W1_attn_fastinfer_T" + std::to_string(T), time_it(infer, trials, min_trial_s), 4.0 * T * T * d);
    }
    if (static_cast<long long>(T) * T > ap::kMaxScores) {
      std::printf("%-28s (above the trace limit n_head·T·T_total ≤ %lld)\n",
                  ("W1_attn_traced_T" + std::to_string(T)).c_str(), ap::kMaxScores);
      continue;
    }
    ap::AttentionInput in;
    in.Q = q;
    in.K = k;
    in.V = v;
    ap::AttentionOptions opt;
    opt.causal = true;
    auto traced = [&] { g_sink = ap::attention_trace(in, opt).out.data[0]; };
    report("W1_attn_traced_T" + std::to_string(T), time_it(traced, trials, min_trial_s), 4.0 * T * T * d);
  }

  // W2: matmul.
  for (int n : {64, 256, 512}) {
    const ap::Tensor a = ap::random_uniform(n, n, 1.0f, 4), b = ap::random_uniform(n, n, 1.0f, 5);
    std::vector<float> c(static_cast<size_t>(n) * n);
    auto mm = [&] {
      ap::matmul_forward(c.data(), a.ptr(), b.ptr(), n, n, n);
      g_sink = c[0];
    };
    report("W2_matmul_n" + std::to_string(n), time_it(mm, trials, min_trial_s), 2.0 * n * n * n);
    auto ref = [&] {
      K::reference.matmul_forward(c.data(), a.ptr(), b.ptr(), nullptr, n, n, n);
      g_sink = c[0];
    };
    auto fast = [&] {
      F.matmul_forward(c.data(), a.ptr(), b.ptr(), nullptr, n, n, n);
      g_sink = c[0];
    };
    report("W2_matmul_ref_n" + std::to_string(n), time_it(ref, trials, min_trial_s), 2.0 * n * n * n);
    report("W2_matmul_fast_n" + std::to_string(n), time_it(fast, trials, min_trial_s), 2.0 * n * n * n);
  }
  return 0;
}
