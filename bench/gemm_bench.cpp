// gemm_bench.cpp — the fast tier's matmul_forward / matmul_backward at the shapes of W6's prompt
// (64 rows: c_attn, attn.c_proj, c_fc, mlp.c_proj, the 50,257-wide head; and the c_attn shape at
// 16, 128 and 256 rows) and of W3's training step (tiny and small: forward and backward), per
// instruction set, in GFLOP/s and as a fraction of the FMA peak (machine_limits.h). A benchmark:
// it prints and never fails.
//
// A/B in one process: configured with -DAP_GEMM_BASELINE=<a src/ tree> (for instance
// `git archive <commit> src | tar -x -C /tmp/base`, then -DAP_GEMM_BASELINE=/tmp/base/src), the
// build compiles that tree's fast kernels too (gemm_baseline_<isa>.cpp), and each shape alternates
// the baseline's call and ours, `--rounds` times (the order swapped every round), timing each on
// this thread's CPU clock; it prints both medians and "new/old=…", the speed ratio (old median ÷
// new median: above 1 ours is faster). On a loaded machine only the ratio means something.
//   build/ap_bench_gemm [--isa avx512,avx2] [--rounds 15] [--only w6,w6n,w3]
// Lines: "avx512 fwd N64_C768_OC2304 new_ms=… gflops=… of_peak=…% [old_ms=… new/old=…]".
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/kernels/kernels_fast.h"
#include "machine_limits.h"

#ifdef AP_GEMM_BASELINE
// The baseline tree's kernels, compiled under their own namespaces (gemm_baseline_<isa>.cpp).
#define AP_BASELINE_DECL(ns)                                                                                  \
  namespace ap::kernels::fast::ns {                                                                          \
  void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C, int OC); \
  void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,          \
                       const float* weight, int N, int C, int OC);                                             \
  }
AP_BASELINE_DECL(baseline_avx512)
AP_BASELINE_DECL(baseline_avx2)
#undef AP_BASELINE_DECL
#endif

namespace {

namespace F = ap::kernels::fast;

double thread_cpu() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

struct Shape {
  const char* set;  // w6, w6n, w3
  bool backward;
  int N, C, OC;
};

std::vector<Shape> shapes() {
  std::vector<Shape> s;
  for (int oc_c : {0, 1, 2, 3, 4}) {
    const int C[] = {768, 768, 768, 3072, 768}, OC[] = {2304, 768, 3072, 768, 50257};
    s.push_back({"w6", false, 64, C[oc_c], OC[oc_c]});
  }
  for (int n : {16, 128, 256}) s.push_back({"w6n", false, n, 768, 2304});
  // W3: tiny (B·T = 1,024 rows, n_embd 64) and small (2,048, 128): c_attn, attn.c_proj, c_fc,
  // mlp.c_proj, the head (vocabulary 65); forward and backward
  for (int small = 0; small < 2; ++small) {
    const int N = small ? 2048 : 1024, C = small ? 128 : 64;
    const int KC[5][2] = {{C, 3 * C}, {C, C}, {C, 4 * C}, {4 * C, C}, {C, 65}};
    for (bool bwd : {false, true})
      for (const auto& p : KC) s.push_back({"w3", bwd, N, p[0], p[1]});
  }
  return s;
}

struct Ops {
  void (*fwd)(float*, const float*, const float*, const float*, int, int, int);
  void (*bwd)(float*, float*, float*, const float*, const float*, const float*, int, int, int);
};

// The median seconds of each of a and b over `rounds` alternated calls (one warm-up each).
std::pair<double, double> alternate(const std::function<void()>& a, const std::function<void()>& b, int rounds) {
  a();
  if (b) b();
  std::vector<double> ta, tb;
  for (int r = 0; r < rounds; ++r)
    for (int side = 0; side < 2; ++side) {
      const bool first = (side == 0) == (r % 2 == 0);
      const std::function<void()>& f = first ? a : b;
      if (!f) continue;
      const double t0 = thread_cpu();
      f();
      (first ? ta : tb).push_back(thread_cpu() - t0);
    }
  std::sort(ta.begin(), ta.end());
  std::sort(tb.begin(), tb.end());
  return {ta[ta.size() / 2], tb.empty() ? 0.0 : tb[tb.size() / 2]};
}

void run_isa(const std::string& isa, int rounds, const std::string& only) {
  if (!F::set_isa(isa.c_str())) {
    std::printf("%s: not available on this CPU\n", isa.c_str());
    return;
  }
  const ap::kernels::Kernels& k = F::current();
  const Ops now{k.matmul_forward, k.matmul_backward};
  Ops old{nullptr, nullptr};
#ifdef AP_GEMM_BASELINE
  if (isa == "avx512") old = {F::baseline_avx512::matmul_forward, F::baseline_avx512::matmul_backward};
  if (isa == "avx2") old = {F::baseline_avx2::matmul_forward, F::baseline_avx2::matmul_backward};
#endif
  const double peak = bench::limits::fma_peak(isa.c_str()).median;
  std::printf("%s: fma_peak=%.1f GFLOP/s (median, thread CPU time)%s\n", isa.c_str(), peak,
              old.fwd ? ", against the baseline tree's kernels" : "");
  std::mt19937 g(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const Shape& s : shapes()) {
    if (("," + only + ",").find("," + std::string(s.set) + ",") == std::string::npos) continue;
    const size_t N = size_t(s.N), C = size_t(s.C), OC = size_t(s.OC);
    std::vector<float> x(N * C), w(OC * C), b(OC), out(N * OC), dout(N * OC), dx(N * C), dw(OC * C), db(OC);
    for (auto* v : {&x, &w, &b, &dout}) for (float& f : *v) f = u(g);
    std::function<void()> fa, fb;
    if (!s.backward) {
      fa = [&] { now.fwd(out.data(), x.data(), w.data(), b.data(), s.N, s.C, s.OC); };
      if (old.fwd) fb = [&] { old.fwd(out.data(), x.data(), w.data(), b.data(), s.N, s.C, s.OC); };
    } else {
      fa = [&] { now.bwd(dx.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(), s.N, s.C, s.OC); };
      if (old.bwd) fb = [&] { old.bwd(dx.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(), s.N, s.C, s.OC); };
    }
    const auto [tn, to] = alternate(fa, fb, rounds);
    const double flops = 2.0 * double(N) * double(C) * double(OC) * (s.backward ? 2 : 1);
    char ab[64] = "";
    if (fb) std::snprintf(ab, sizeof ab, " old_ms=%.3f new/old=%.3f", to * 1e3, to / tn);
    std::printf("%-7s %s N%d_C%d_OC%d new_ms=%.3f gflops=%.1f of_peak=%.0f%%%s\n", isa.c_str(),
                s.backward ? "bwd" : "fwd", s.N, s.C, s.OC, tn * 1e3, flops / tn * 1e-9, 100.0 * flops / tn * 1e-9 / peak,
                ab);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string isas = "avx512,avx2", only = "w6,w6n,w3";
  int rounds = 15;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--isa") isas = argv[i + 1];
    else if (a == "--rounds") rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--only") only = argv[i + 1];
  }
  size_t p = 0;
  while (p <= isas.size()) {
    const size_t q = std::min(isas.find(',', p), isas.size());
    run_isa(isas.substr(p, q - p), rounds, only);
    p = q + 1;
  }
  return 0;
}
