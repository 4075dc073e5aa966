// bench_gpt.cpp — the tiny GPT (gpt.h) on the workloads W3 and W4 (bench/README.md), one
// thread (W3t: several), float32, printing the same figures as the peers (bench/peers/torch_peer.py). A
// benchmark, not a test: it prints numbers and never fails on them.
//
//   W3  a training step (forward + backward + AdamW), char-level, vocab 65, batch 16: tiny (2
//       layers, n_embd 64, 4 heads, block 64) and small (4, 128, 4, 128). 5 warm-up steps, then
//       30 (tiny) / 15 (small) timed steps: "W3_train_tiny params=… step_ms_min=… step_ms_med=…
//       tok/s_med=… tok/s_best=…", tokens/s = 16·block / step.
//   W7  W3's training step with the modern variants (gpt.h), same batch, steps and timing: tiny and
//       small with RoPE, RMSNorm, SwiGLU and n_kv_head 2 ("W7_train_tiny_llama", "…_small_llama",
//       the target rows), and tiny with ALiBi ("W7_train_tiny_alibi") and with a sliding
//       window of 16 ("W7_train_tiny_window"), so that each variant's kernels are timed once.
//       PyTorch's twin: torch_peer.py --only w7 (peers/variants_model.py).
//   W4  greedy generation of 256 tokens with the tiny model: without a cache (nanoGPT: the context
//       cropped to the last 64 tokens, a full forward per token) and with the KV cache (block 257).
//       "W4_gen256_… min_us=… med_us=… tok/s_med=…".
//   W5  the next-token panel's slider: one control change → the distribution the page shows
//       (next_token_distribution over logits whose order is already sorted, the 16 most likely
//       listed), for the tiny model's 65 tokens (its own logits) and for GPT-2's 50,257 (N(0, 3²)
//       logits), over a sweep of 200 changes (temperature 0.05 … 3 in top-k 40 mode, then top-p
//       0.05 … 1): "W5_next_token_V… first_us=… med_us=… max_us=… per_frame_60Hz=…%" —
//       first_us includes sorting the logits (a new prompt), per_frame is the median's share of a
//       16.7 ms frame. The JSON of 16 entries and the worker's message are not included.
//   W3t data-parallel training (train.h's threads, natively; --only w3t): the Trainer's step on
//       the same two models over a random 65-character text, batch 16, with 1 thread and with
//       --threads N (default: the cores there are), 3 warm-up steps, then 20 (tiny) / 10 (small):
//       "W3t_train_tiny_t1 … step_ms_med=… cpu_ms_med=…", the same for tN, then
//       "W3t_train_tiny speedup_tN=… (wall medians) cpu_ratio=…" — cpu_ms is this process's CPU
//       time per step over all its threads, so on a loaded machine the wall ratio is only
//       indicative and cpu_ratio (tN's CPU per step over t1's, ≥ 1: the price of splitting)
//       bounds what a quiet machine can give: at most N / cpu_ratio.
// Each on the fast tier (the CPU's best instruction set, or AP_FAST_ISA's) and, with --reference,
// also on the reference tier (names suffixed _ref).
//   W6  GPT-2 small's shape (bench/README.md): --only w6 (prompt and generation), w6p (the prompt
//       alone), w6t (the prompt on 1 thread, then on --threads N: GPT::set_threads, its of_peak
//       against one core's peak, and whether its logits kept the bits of 1 thread), w6g (the generation alone), w6k (the prompt's matrix products), w6s (a generation
//       step's parts); w6, w6p and w6g run on one thread, or on --threads N when it is given
//       (GPT::set_threads; names suffixed _tN), so `--only w6 --threads 1` and `--threads 2` are an A/B.
//       (w6s: the whole step, its one-row matrix products, the lm_head).
//   W8  SmolLM2-135M's shape (smollm.h), weights kept BF16 (--only w8), Q8_0 (w8q), Q4_0 (w8q4), Q4_K
//       (w8k4) or Q6_K (w8k6): the
//       128-token prompt's forward and 64 generated tokens (w8_bench; w8p: BF16's prompt alone); --threads N runs it on N threads.
//   W9  GPT-2 small's shape: activation patching's residual sweep, 16 tokens (--only w9; see
//       w9_patch_bench).
//   build/ap_bench_gpt [--quick] [--only w3,w4,w5,w3t,w6,w7,w8,w8q,w8q4,w8k4,w8k6,w9… (default w3,w4)] [--reference] [--threads N]
//   (wasm: build-wasm/ap_bench_gpt.cjs; AP_BENCH_CPU_TIME=1: CPU time instead of wall time, natively)
#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "bench_clock.h"
#include "gpt2s.h"
#include "smollm.h"
#include "machine_limits.h"
#include "core/interp/interp.h"
#include "core/model/gpt.h"
#include "core/kernels/bf16_gemm.h"
#include "core/kernels/kernels.h"
#include "core/model/next_token.h"
#include "core/model/optim.h"
#include "core/base/rng.h"
#include "core/model/train.h"

namespace {

double seconds_since(double t0) { return bench::now() - t0; }

volatile int g_sink;

// ---------------------------------------------------------------- each figure against its limit
// The machine's limits (machine_limits.h), measured once when a workload first asks, or given:
// AP_PEAK_GFLOPS (the FMA peak of the fast tier's instruction set) and AP_BW_GBS (the memory's
// streaming read rate) natively. Printed once: "limits: fma_peak=… GFLOP/s (…) mem_read=… GB/s".
double env_number(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atof(v) : 0.0;
}
double fma_peak_gflops() {
  static const double peak = [] {
    const double given = env_number("AP_PEAK_GFLOPS");
    const double p = given > 0 ? given : bench::limits::fma_peak(ap::kernels::tier_name()).median;
    std::printf("limits: fma_peak=%.1f GFLOP/s (%s, %s)\n", p, ap::kernels::tier_name(), given > 0 ? "given" : "measured, median");
    return p;
  }();
  return peak;
}
// The read probe on as many threads as the generation it is the limit of (measured once per count).
double read_gbs(int threads = 1) {
  static std::map<int, double> bw;
  auto it = bw.find(threads);
  if (it != bw.end()) return it->second;
  const double given = env_number("AP_BW_GBS");
  const double b = given > 0 ? given
                             : bench::limits::read_bandwidth(5, bench::limits::bandwidth_buffer_bytes(), threads).median;
  std::printf("limits: mem_read=%.2f GB/s (%s, %d thread%s)\n", b, given > 0 ? "given" : "measured, median", threads,
              threads == 1 ? "" : "s");
  return bw[threads] = b;
}

// Floating-point operations of a forward over B·T tokens (the multiply-adds as 2): the Linear
// layers' weights once per token (attention's q, k, v, its projection, the MLP, the head), and
// attention's scores and contexts over the causal half (keys j ≤ t), 2·2·hs a pair a head.
double forward_flops(const ap::GPTConfig& c, int B, int T) {
  const double C = c.n_embd, A = c.attn_width(), per_token_weights =
      c.n_layer * (C * c.qkv_width() + A * C + C * c.fc_width() + c.inner() * C) + C * c.vocab_size;
  const double pairs = 0.5 * T * (T + 1.0);
  return 2.0 * B * T * per_token_weights + 4.0 * B * c.n_layer * A * pairs;
}
// Bytes of weights a generated token reads: every parameter but the position table's other rows.
double weight_bytes_per_token(const ap::GPT& m) {
  if (m.typed()) return double(m.weight_bytes());  // BF16 / quantized blocks, norms in float32 (W8's head is wte)
  const ap::GPTConfig& c = m.config();
  const double wpe = c.pos == ap::Positions::learned ? double(c.block_size - 1) * c.n_embd : 0.0;
  return (double(m.num_parameters()) - wpe) * sizeof(float);
}
// " gflops=… of_peak=…%" for `flops` in `seconds`.
std::string peak_share(double flops, double seconds) {
  char b[80];
  const double g = flops / seconds * 1e-9;
  std::snprintf(b, sizeof b, " gflops=%.1f of_peak=%.0f%%", g, 100.0 * g / fma_peak_gflops());
  return b;
}

void train_bench(const std::string& name, const ap::GPTConfig& cfg, int B, int steps, int warmup) {
  ap::GPT model(cfg);
  model.init_weights(0);
  const int T = cfg.block_size;
  model.reserve(B, T);
  ap::AdamWConfig oc;
  oc.lr = 1e-3f;
  oc.weight_decay = 0.1f;
  ap::AdamW opt(model.tensors(), model.num_parameters(), oc);
  ap::Rng rng(1);
  std::vector<int> data(static_cast<size_t>(steps + warmup) * B * (T + 1));
  for (int& t : data) t = static_cast<int>(rng.next_u64() % static_cast<uint64_t>(cfg.vocab_size));
  std::vector<int> x(static_cast<size_t>(B) * T), y(x.size());
  float loss = 0.0f;
  auto step = [&](int i) {
    const int* d = data.data() + static_cast<size_t>(i) * B * (T + 1);
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t) {
        x[static_cast<size_t>(b) * T + t] = d[static_cast<size_t>(b) * (T + 1) + t];
        y[static_cast<size_t>(b) * T + t] = d[static_cast<size_t>(b) * (T + 1) + t + 1];
      }
    loss = model.forward(x.data(), y.data(), B, T);
    model.zero_grad();
    model.backward();
    opt.step(model.params(), model.grads(), oc.lr);
  };
  for (int i = 0; i < warmup; ++i) step(i);
  std::vector<double> ts;
  for (int i = 0; i < steps; ++i) {
    const double t0 = bench::now();
    step(warmup + i);
    ts.push_back(seconds_since(t0));
  }
  std::sort(ts.begin(), ts.end());
  const double mn = ts.front(), md = ts[ts.size() / 2];
  const std::string share = peak_share(3.0 * forward_flops(cfg, B, T), md);  // backward: twice the forward's
  std::printf("%-28s params=%lld step_ms_min=%8.2f step_ms_med=%8.2f tok/s_med=%9.0f tok/s_best=%9.0f%s (steps=%d, loss %.3f)\n",
              name.c_str(), static_cast<long long>(model.num_parameters()), mn * 1e3, md * 1e3, B * T / md,
              B * T / mn, share.c_str(), steps, loss);
  std::fflush(stdout);
}

// W7's configurations (bench/README.md), in the order they print: {name, config}.
std::vector<std::pair<std::string, ap::GPTConfig>> w7_configs() {
  auto llama = [](ap::GPTConfig c) {
    c.pos = ap::Positions::rope;
    c.norm = ap::Norm::rmsnorm;
    c.mlp = ap::Mlp::swiglu;
    c.n_kv_head = 2;
    return c;
  };
  ap::GPTConfig alibi = ap::GPTConfig::tiny(65), window = ap::GPTConfig::tiny(65);
  alibi.pos = ap::Positions::alibi;
  window.window = 16;
  return {{"W7_train_tiny_llama", llama(ap::GPTConfig::tiny(65))},
          {"W7_train_small_llama", llama(ap::GPTConfig::small(65))},
          {"W7_train_tiny_alibi", alibi},
          {"W7_train_tiny_window", window}};
}

// This process's CPU time over all its threads, in seconds (natively; wall time in wasm).
double process_cpu() {
#if defined(__EMSCRIPTEN__)
  return bench::now();
#else
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
#endif
}

// The Trainer's step with `threads` threads: {wall median, CPU median} in ms, printed.
std::pair<double, double> trainer_bench(const std::string& name, const ap::GPTConfig& cfg, int threads, int steps) {
  ap::Rng rng(3);
  ap::DataSpec data;
  data.text.resize(200000);
  for (char& c : data.text) c = static_cast<char>(' ' + rng.next_u64() % 65);
  ap::TrainConfig tc;
  tc.batch_size = 16;
  tc.steps = 1000;
  ap::Trainer t(cfg, tc, data);
  t.set_threads(threads);
  for (int i = 0; i < 3; ++i) t.step();
  std::vector<double> wall, cpu;
  for (int i = 0; i < steps; ++i) {
    const double w0 = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    const double c0 = process_cpu();
    t.step();
    cpu.push_back(process_cpu() - c0);
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() - w0);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  const double wm = wall[wall.size() / 2] * 1e3, cm = cpu[cpu.size() / 2] * 1e3;
  std::printf("%-28s params=%lld step_ms_min=%8.2f step_ms_med=%8.2f cpu_ms_med=%8.2f tok/s_med=%9.0f (steps=%d)\n",
              name.c_str(), static_cast<long long>(t.model().num_parameters()), wall.front() * 1e3, wm, cm,
              16.0 * cfg.block_size / (wm / 1e3), steps);
  std::fflush(stdout);
  return {wm, cm};
}

[[maybe_unused]] void threads_bench(const std::string& name, const ap::GPTConfig& cfg, int threads, int steps) {
  const auto one = trainer_bench(name + "_t1", cfg, 1, steps);
  const auto many = trainer_bench(name + "_t" + std::to_string(threads), cfg, threads, steps);
  std::printf("%-28s speedup_t%d=%5.2f (wall medians) cpu_ratio=%5.2f\n", name.c_str(), threads, one.first / many.first,
              many.second / one.second);
  std::fflush(stdout);
}

int argmax(const float* v, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

// Greedy, no cache: the last `block` tokens through a full forward for each new token.
int gen_nocache(ap::GPT& m, int n_new) {
  const int block = m.config().block_size, V = m.config().vocab_size;
  std::vector<int> idx = {0};
  for (int i = 0; i < n_new; ++i) {
    const int len = std::min<int>(static_cast<int>(idx.size()), block);
    m.forward(idx.data() + idx.size() - len, nullptr, 1, len);
    idx.push_back(argmax(m.logits() + static_cast<size_t>(len - 1) * V, V));
  }
  return idx.back();
}

// Greedy with the KV cache: one cache_step per token.
int gen_kvcache(ap::GPT& m, int n_new) {
  const int V = m.config().vocab_size;
  m.cache_reset();
  int tok = 0;
  for (int i = 0; i < n_new; ++i) tok = argmax(m.cache_step(tok), V);
  return tok;
}

template <class F>
void gen_bench(const std::string& name, int n_new, int trials, F run) {
  run();  // warm-up
  std::vector<double> ts;
  for (int t = 0; t < trials; ++t) {
    const double t0 = bench::now();
    g_sink = run();
    ts.push_back(seconds_since(t0));
  }
  std::sort(ts.begin(), ts.end());
  const double mn = ts.front(), md = ts[ts.size() / 2];
  std::printf("%-28s min_us=%10.2f med_us=%10.2f tok/s_med=%9.0f tok/s_best=%9.0f (trials=%d)\n", name.c_str(),
              mn * 1e6, md * 1e6, n_new / md, n_new / mn, trials);
  std::fflush(stdout);
}

// A sweep of slider positions over logits (V) whose order is sorted first (a new prompt).
void next_token_bench(const std::string& name, const std::vector<float>& logits) {
  const int V = static_cast<int>(logits.size()), changes = 200;
  std::vector<ap::NextTokenOptions> sweep(changes);
  for (int i = 0; i < changes; ++i) {
    ap::NextTokenOptions& o = sweep[static_cast<size_t>(i)];
    if (i < changes / 2) {
      o.temperature = 0.05f + 2.95f * static_cast<float>(i) / (changes / 2 - 1);
      o.top_k = std::min(40, V);
    } else {
      o.temperature = 1.0f;
      o.top_p = 0.05f + 0.95f * static_cast<float>(i - changes / 2) / (changes / 2 - 1);
    }
  }
  ap::NextTokenLogits l;
  const double t0 = bench::now();
  l.set(logits.data(), V);
  ap::NextTokenDistribution d = ap::next_token_distribution(l, sweep[0], 16);
  const double first = seconds_since(t0);
  std::vector<double> ts;
  for (int rep = 0; rep < 3; ++rep)
    for (const ap::NextTokenOptions& o : sweep) {
      const double t1 = bench::now();
      d = ap::next_token_distribution(l, o, 16);
      ts.push_back(seconds_since(t1));
      g_sink = d.kept;
    }
  std::sort(ts.begin(), ts.end());
  const double md = ts[ts.size() / 2];
  std::printf("%-28s first_us=%10.2f med_us=%10.2f max_us=%10.2f per_frame_60Hz=%6.2f%% (changes=%zu)\n", name.c_str(),
              first * 1e6, md * 1e6, ts.back() * 1e6, md / (1.0 / 60.0) * 100.0, ts.size());
  std::fflush(stdout);
}


// ---------------------------------------------------------------- W6: GPT-2 small's shape

// This process's CPU time in seconds where there is one (natively; Node), else −1 (a browser).
double cpu_seconds() {
#if defined(__EMSCRIPTEN__)
  return ap_bench_node_cpu_seconds();
#else
  return process_cpu();
#endif
}

// Times run() `trials` times after `warmup` calls (prepare() before each, untimed); prints
// "name ms_min=… ms_med=… cpu_ms_med=… [ms/tok_med=…] tok/s_med=…" for `tokens` tokens a call.
// `limit(median seconds)` gives the figure's share of its limit, printed after tok/s.
template <class P, class F, class L>
void w6_time(const std::string& name, int tokens, int trials, int warmup, P prepare, F run, L limit) {
  for (int i = 0; i < warmup; ++i) {
    prepare();
    run();
  }
  std::vector<double> ts, cpu;
  for (int t = 0; t < trials; ++t) {
    prepare();
    const double c0 = cpu_seconds(), t0 = bench::now();
    run();
    ts.push_back(seconds_since(t0));
    cpu.push_back(cpu_seconds() - c0);
  }
  std::sort(ts.begin(), ts.end());
  std::sort(cpu.begin(), cpu.end());
  const double md = ts[ts.size() / 2];
  char c[32] = "n/a";
  if (cpu_seconds() >= 0) std::snprintf(c, sizeof c, "%.1f", cpu[cpu.size() / 2] * 1e3);
  char per[48] = "";
  if (tokens > 1 && name.find("gen") != std::string::npos) std::snprintf(per, sizeof per, " ms/tok_med=%.2f", md * 1e3 / tokens);
  const std::string share = limit(md);
  std::printf("%-28s ms_min=%9.1f ms_med=%9.1f cpu_ms_med=%s%s tok/s_med=%8.2f%s (trials=%d)\n", name.c_str(),
              ts.front() * 1e3, md * 1e3, c, per, tokens / md, share.c_str(), trials);
  std::fflush(stdout);
}

// W6: the 64-token prompt's forward (logits of every position), then 100 greedy tokens through
// the KV cache after the prompt (the cache filled with the prompt, untimed, before each trial).
// First the check line the runners are compared by (bench/peers/gpt2s.py): the last prompt
// position's logits at every 4,096th id from 17, its argmax, and 16 greedy tokens.
void gpt2s_bench(const std::string& sfx0, bool quick, bool gen = true, bool prefill = true, int threads = 1,
                 int run_threads = 1) {
  ap::GPT m(gpt2s::config(), ap::ModelUse::infer);
  gpt2s::fill_weights(m);
  m.set_threads(run_threads);
  const std::string sfx = (run_threads > 1 ? "_t" + std::to_string(run_threads) : std::string()) + sfx0;
  const std::vector<int> prompt = gpt2s::prompt();
  const int V = m.config().vocab_size, P = gpt2s::kPromptLen;
  m.forward(prompt.data(), nullptr, 1, P);
  const float* last = m.logits() + static_cast<size_t>(P - 1) * V;
  std::printf("W6_gpt2s_check%s params=%lld argmax=%d logits=", sfx.c_str(), static_cast<long long>(m.num_parameters()),
              argmax(last, V));
  for (int j = gpt2s::kCheckFirst; j < V; j += gpt2s::kCheckStride)
    std::printf("%s%.6f", j == gpt2s::kCheckFirst ? "" : ",", static_cast<double>(last[j]));
  auto fill_cache = [&] {
    m.cache_reset();
    for (int t : prompt) m.cache_step(t);
  };
  fill_cache();
  std::printf(" greedy=");
  int tok = argmax(last, V);
  for (int i = 0; i < gpt2s::kCheckTokens; ++i) {
    std::printf("%s%d", i ? "," : "", tok);
    tok = argmax(m.cache_step(tok), V);
  }
  std::printf("\n");
  std::fflush(stdout);
  if (prefill)
    w6_time("W6_gpt2s_prefill64" + sfx, P, quick ? 2 : 5, 1, [] {}, [&] { m.forward(prompt.data(), nullptr, 1, P); },
            [&](double sec) { return peak_share(forward_flops(m.config(), 1, P), sec); });
  if (prefill && threads > 1) {  // the same forward split across threads (GPT::set_threads): the same bits
    const std::vector<float> one(m.logits(), m.logits() + static_cast<size_t>(P) * V);
    m.set_threads(threads);
    m.forward(prompt.data(), nullptr, 1, P);
    const bool same = std::equal(one.begin(), one.end(), m.logits());
    w6_time("W6_gpt2s_prefill64_t" + std::to_string(threads) + sfx, P, quick ? 2 : 5, 1, [] {},
            [&] { m.forward(prompt.data(), nullptr, 1, P); },
            [&](double sec) {
              return peak_share(forward_flops(m.config(), 1, P), sec) + (same ? " logits=same_bits" : " logits=DIFFER");
            });
    m.set_threads(run_threads);
  }
  if (!gen) return;
  // The first generated token is the prompt's argmax; each step feeds the last token back.
  m.forward(prompt.data(), nullptr, 1, P);
  const int first = argmax(m.logits() + static_cast<size_t>(P - 1) * V, V);
  const int n = gpt2s::kGenTokens;
  w6_time("W6_gpt2s_gen100" + sfx, n, quick ? 1 : 3, quick ? 0 : 1, fill_cache, [&] {
    int t = first;
    for (int i = 0; i < n; ++i) t = argmax(m.cache_step(t), V);
    g_sink = t;
  }, [&](double sec) {
    char b[96];
    const double gbs = weight_bytes_per_token(m) * n / sec * 1e-9;
    std::snprintf(b, sizeof b, " weights_MB/tok=%.0f GB/s=%.2f of_bandwidth=%.0f%%", weight_bytes_per_token(m) / 1e6, gbs,
                  100.0 * gbs / read_gbs(m.threads()));
    return std::string(b);
  });
}

// W8: SmolLM2-135M's shape with BF16 (or Q8_0) weights kept typed (smollm.h): the 128-token
// prompt's forward, then 64 greedy tokens through the KV cache after the prompt (the cache filled
// with the prompt, untimed, before each trial). First the check line compared with the PyTorch peer
// (bench/peers/smollm.py): the weights' bytes, the last prompt position's logits at every 4,096th
// id from 17, its argmax and 8 greedy tokens.
// With --threads N (N > 1) the model runs on N threads (GPT::set_threads), the lines named …_tN.
// In BF16 where the prompt's product is bf16_gemm.h's (activations rounded to bf16), a line
// W8_smollm_bf16_vs_f32act compares all the prompt's logits with the float path's (set_enabled(false)).
void w8_bench(ap::quant::Type type, std::string sfx, bool quick, int threads, bool gen = true) {
  std::unique_ptr<ap::GPT> m = smollm::model(type);
  if (threads > 1) {
    m->set_threads(threads);
    sfx = "_t" + std::to_string(threads) + sfx;
  }
  std::string name = ap::quant::type_info(type).name;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string tag = "W8_smollm_" + name;
  const std::vector<int> prompt = smollm::prompt();
  const int V = m->config().vocab_size, P = smollm::kPromptLen;
  if (ap::kernels::bf16::enabled() && type == ap::quant::Type::BF16) {
    m->forward(prompt.data(), nullptr, 1, P);
    const std::vector<float> fast(m->logits(), m->logits() + static_cast<size_t>(P) * V);
    ap::kernels::bf16::set_enabled(false);
    m->forward(prompt.data(), nullptr, 1, P);
    ap::kernels::bf16::set_enabled(true);
    double worst = 0.0, top = 0.0;
    for (size_t i = 0; i < fast.size(); ++i) {
      worst = std::max(worst, std::fabs(double(fast[i]) - m->logits()[i]));
      top = std::max(top, std::fabs(double(m->logits()[i])));
    }
    std::printf("%s_vs_f32act%s max_abs_diff=%.3g max_abs_logit=%.3g ratio=%.3g\n", tag.c_str(), sfx.c_str(), worst,
                top, worst / top);
  }
  m->forward(prompt.data(), nullptr, 1, P);
  const float* last = m->logits() + static_cast<size_t>(P - 1) * V;
  std::printf("%s_check%s params=%lld weight_bytes=%lld argmax=%d logits=", tag.c_str(), sfx.c_str(),
              static_cast<long long>(m->num_parameters()), static_cast<long long>(m->weight_bytes()), argmax(last, V));
  for (int j = smollm::kCheckFirst; j < V; j += smollm::kCheckStride)
    std::printf("%s%.6f", j == smollm::kCheckFirst ? "" : ",", static_cast<double>(last[j]));
  auto fill_cache = [&] {
    m->cache_reset();
    for (int t : prompt) m->cache_step(t);
  };
  const int first = argmax(last, V);
  int tok = first;
  if (gen) {
    fill_cache();
    std::printf(" greedy=");
  }
  for (int i = 0; gen && i < smollm::kCheckTokens; ++i) {
    std::printf("%s%d", i ? "," : "", tok);
    tok = argmax(m->cache_step(tok), V);
  }
  std::printf("\n");
  std::fflush(stdout);
  w6_time(tag + "_prefill128" + sfx, P, quick ? 1 : 5, quick ? 0 : 1, [] {}, [&] { m->forward(prompt.data(), nullptr, 1, P); },
          [&](double sec) { return peak_share(forward_flops(m->config(), 1, P), sec); });
  if (!gen) return;
  const int n = smollm::kGenTokens;
  w6_time(tag + "_gen64" + sfx, n, quick ? 1 : 3, quick ? 0 : 1, fill_cache, [&] {
    int t = first;
    for (int i = 0; i < n; ++i) t = argmax(m->cache_step(t), V);
    g_sink = t;
  }, [&](double sec) {
    char b[96];
    const double gbs = weight_bytes_per_token(*m) * n / sec * 1e-9;
    std::snprintf(b, sizeof b, " weights_MB/tok=%.0f GB/s=%.2f of_bandwidth=%.0f%%", weight_bytes_per_token(*m) / 1e6, gbs,
                  100.0 * gbs / read_gbs(m->threads()));
    return std::string(b);
  });
}

// Where a W6 generation step's time goes (`--only w6s`): the cache filled with the prompt and
// 100 tokens (the end of W6's generation), then per round, alternated: one cache_step (positions
// 164, 165, … one a round) and its argmax, the step's 49 one-row matrix products alone on
// the model's own weights (c_attn, attn.c_proj, c_fc, mlp.c_proj per layer, then the lm_head) and
// the lm_head alone. Medians of 15 rounds on the bench's clock, ms a token: "W6s_step ms_med=…",
// "W6s_matvecs …", "W6s_lm_head …" and the rest (step − products).
void gpt2s_step_profile() {
  ap::GPT m(gpt2s::config(), ap::ModelUse::infer);
  gpt2s::fill_weights(m);
  const std::vector<int> prompt = gpt2s::prompt();
  const ap::GPTConfig& cf = m.config();
  const int C = cf.n_embd, V = cf.vocab_size, L = cf.n_layer;
  m.cache_reset();
  for (int t : prompt) m.cache_step(t);
  int tok = argmax(m.cache_step(prompt.back()), V);
  for (int i = 1; i < gpt2s::kGenTokens; ++i) tok = argmax(m.cache_step(tok), V);
  const ap::kernels::Kernels& k = ap::kernels::active();
  const ap::GPTParams& p = m.p();
  std::vector<float> x(4 * static_cast<size_t>(C)), out(static_cast<size_t>(V));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) * 0.01f - 0.06f;
  auto matvecs = [&] {
    for (int l = 0; l < L; ++l) {
      const ap::BlockParams& w = p.h[static_cast<size_t>(l)];
      k.matmul_forward(out.data(), x.data(), w.c_attn_w, w.c_attn_b, 1, C, 3 * C);
      k.matmul_forward(out.data(), x.data(), w.attn_c_proj_w, w.attn_c_proj_b, 1, C, C);
      k.matmul_forward(out.data(), x.data(), w.c_fc_w, w.c_fc_b, 1, C, 4 * C);
      k.matmul_forward(out.data(), x.data(), w.mlp_c_proj_w, w.mlp_c_proj_b, 1, 4 * C, C);
    }
    k.matmul_forward(out.data(), x.data(), p.wte, nullptr, 1, C, V);
  };
  auto lm_head = [&] { k.matmul_forward(out.data(), x.data(), p.wte, nullptr, 1, C, V); };
  const int at = m.cache_length();
  int t_in = tok;
  auto step = [&] { t_in = argmax(m.cache_step(t_in), V); };
  std::vector<double> ts[3];
  const char* names[3] = {"W6s_step", "W6s_matvecs", "W6s_lm_head"};
  for (int r = 0; r < 16; ++r) {
    for (int v = 0; v < 3; ++v) {
      const double t0 = bench::now();
      if (v == 0) step();
      else if (v == 1) matvecs();
      else lm_head();
      if (r > 0) ts[v].push_back((bench::now() - t0) * 1e3);
    }
  }
  double med[3];
  for (int v = 0; v < 3; ++v) {
    std::sort(ts[v].begin(), ts[v].end());
    med[v] = ts[v][ts[v].size() / 2];
    std::printf("%-14s ms_min=%7.2f ms_med=%7.2f (positions %d-%d, %s)\n", names[v], ts[v].front(), med[v], at,
                at + 15, bench::clock_name());
  }
  std::printf("W6s_rest       ms_med=%7.2f (step - matvecs: attention, layernorms, GELU, argmax, copies)\n",
              med[0] - med[1]);
  g_sink = t_in;
  std::fflush(stdout);
}

// W6's matrix products alone (`--only w6k`): matmul_forward of the fast tier at the prompt's
// shapes (64 rows: c_attn, attn.c_proj, c_fc, mlp.c_proj, the lm_head), at one row (a
// generated token's lm_head) and at 32, 128 and 192 rows (c_attn, mlp.c_proj), weights of a
// fixed pattern; per shape the CPU time's median of 7 calls after one, and GFLOP/s. Prints "W6k_matmul_N…_C…_OC… cpu_ms_med=… gflops=… of_peak=…%".
void w6_matmul_bench() {
  const ap::kernels::Kernels& k = ap::kernels::active();
  struct Shape {
    int N, C, OC;
  };
  for (const Shape s : {Shape{64, 768, 2304}, Shape{64, 768, 768}, Shape{64, 768, 3072}, Shape{64, 3072, 768},
                        Shape{64, 768, 50257}, Shape{1, 768, 50257}, Shape{32, 768, 2304}, Shape{32, 3072, 768},
                        Shape{128, 768, 2304}, Shape{128, 3072, 768}, Shape{192, 768, 2304}, Shape{192, 3072, 768}}) {
    std::vector<float> x(static_cast<size_t>(s.N) * s.C), w(static_cast<size_t>(s.OC) * s.C), b(static_cast<size_t>(s.OC)),
        out(static_cast<size_t>(s.N) * s.OC);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) * 0.01f - 0.06f;
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 97) * 0.001f - 0.048f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 7) * 0.01f;
    std::vector<double> ts;
    for (int t = 0; t < 8; ++t) {
      const double c0 = cpu_seconds() >= 0 ? cpu_seconds() : bench::now();
      k.matmul_forward(out.data(), x.data(), w.data(), b.data(), s.N, s.C, s.OC);
      const double c1 = cpu_seconds() >= 0 ? cpu_seconds() : bench::now();
      if (t > 0) ts.push_back(c1 - c0);
    }
    std::sort(ts.begin(), ts.end());
    const double md = ts[ts.size() / 2];
    std::printf("W6k_matmul_N%d_C%d_OC%d cpu_ms_med=%.2f%s\n", s.N, s.C, s.OC, md * 1e3,
                peak_share(2.0 * s.N * s.C * s.OC, md).c_str());
    std::fflush(stdout);
  }
}

// W9: GPT-2 small's shape, a residual-stream patching sweep (interp::patch's first map): the clean
// run's residual entering each layer (and ln_f) put into the corrupted run at each of 16
// positions, 13 × 16 = 208 cells, each a forward from the patched layer on over the corrupted
// run's cache, unembedding the metric's position alone. Timed through patch()'s progress, which
// cancels it once the residual cells are done (the two whole runs it starts with are in the time).
// Against one full forward of the hooked run per cell (interp::run, unhooked, every position's
// logits: what a sweep without the cache and the one-row unembedding would cost).
// "W9_patch_forward16 ms_med=…", then "W9_patch_resid_sweep cells=208 ms_med=… ms/cell=…
// ratio_vs_full=…" (the sweep over cells × one full forward).
void w9_patch_bench(bool quick) {
  ap::GPT m(gpt2s::config(), ap::ModelUse::infer);
  gpt2s::fill_weights(m);
  const int T = 16, L = m.config().n_layer, V = m.config().vocab_size, cells = (L + 1) * T;
  const std::vector<int> prompt = gpt2s::prompt();
  std::vector<int> clean(prompt.begin(), prompt.begin() + T), bad = clean;
  bad[7] = (bad[7] + 1) % V;  // one token corrupted
  const ap::interp::Metric metric{17, 4113, -1};
  ap::interp::RunCache c;
  double full = 0.0;
  {
    std::vector<double> ts;
    ap::interp::run(m, clean, c);  // warm-up
    for (int t = 0; t < (quick ? 2 : 5); ++t) {
      const double t0 = bench::now();
      ap::interp::run(m, clean, c);
      ts.push_back(seconds_since(t0));
    }
    std::sort(ts.begin(), ts.end());
    full = ts[ts.size() / 2];
    std::printf("%-28s ms_min=%9.1f ms_med=%9.1f (trials=%zu)\n", "W9_patch_forward16", ts.front() * 1e3, full * 1e3,
                ts.size());
  }
  std::vector<double> ts;
  int done_cells = 0;
  for (int t = 0; t < (quick ? 1 : 3); ++t) {
    const double t0 = bench::now();
    const ap::interp::Patching p = ap::interp::patch(m, clean, bad, metric, [&](int done, int) {
      done_cells = done;
      return done < cells;
    });
    ts.push_back(seconds_since(t0));
    if (!p.cancelled) std::printf("W9: the sweep ran past the residual map\n");
  }
  std::sort(ts.begin(), ts.end());
  const double md = ts[ts.size() / 2];
  std::printf("%-28s cells=%d ms_min=%9.1f ms_med=%9.1f ms/cell=%.2f ratio_vs_full=%.3f (trials=%zu)\n",
              "W9_patch_resid_sweep", done_cells, ts.front() * 1e3, md * 1e3, md * 1e3 / cells, md / (cells * full),
              ts.size());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, with_ref = false;
  int threads = ap::hardware_threads() > 1 ? ap::hardware_threads() : 2;
  bool threads_given = false;
  std::string only = "w3,w4";  // W5 only when asked (--only w5): the peers' table reads W3 and W4
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a == "--reference") with_ref = true;
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]), threads_given = true;
  }
  auto wants = [&](const char* w) { return ("," + only + ",").find(std::string(",") + w + ",") != std::string::npos; };
  namespace K = ap::kernels;
  std::printf("ap_bench_gpt: the tiny GPT, float32, one thread (%s, %s), fast tier: %s\n", quick ? "quick" : "full",
              bench::clock_name(),
              K::set_tier(K::Tier::fast) == K::Tier::fast ? K::tier_name() : "reference (forced by the build)");
  std::vector<K::Tier> tiers = {K::Tier::fast};
  if (with_ref) tiers.push_back(K::Tier::reference);
  for (K::Tier tier : tiers) {
    K::set_tier(tier);
    const std::string sfx = tier == K::Tier::reference ? "_ref" : "";
    if (wants("w3")) {
      train_bench("W3_train_tiny" + sfx, ap::GPTConfig::tiny(65), 16, quick ? 5 : 30, quick ? 2 : 5);
      train_bench("W3_train_small" + sfx, ap::GPTConfig::small(65), 16, quick ? 3 : 15, quick ? 1 : 5);
    }
    if (wants("w7"))
      for (const auto& [name, cfg] : w7_configs()) {
        const bool small = cfg.n_layer > 2;  // W3's steps: 30 tiny, 15 small
        train_bench(name + sfx, cfg, 16, quick ? (small ? 3 : 5) : (small ? 15 : 30), quick ? (small ? 1 : 2) : 5);
      }
    if (wants("w3t")) {
#if defined(__EMSCRIPTEN__)
      std::printf("W3t: natively only (the page's workers: bench/train_bench.mjs)\n");
#else
      threads_bench("W3t_train_tiny" + sfx, ap::GPTConfig::tiny(65), threads, quick ? 5 : 20);
      threads_bench("W3t_train_small" + sfx, ap::GPTConfig::small(65), threads, quick ? 3 : 10);
#endif
    }
    if (wants("w4")) {
      const int N = 256, trials = quick ? 3 : 7;
      ap::GPT m64(ap::GPTConfig::tiny(65));
      m64.init_weights(0);
      gen_bench("W4_gen256_nocache_blk64" + sfx, N, trials, [&] { return gen_nocache(m64, N); });
      ap::GPTConfig c257 = ap::GPTConfig::tiny(65);
      c257.block_size = 257;
      ap::GPT m257(c257);
      m257.init_weights(0);
      gen_bench("W4_gen256_kvcache_blk257" + sfx, N, trials, [&] { return gen_kvcache(m257, N); });
    }
    const int w6_threads = threads_given ? threads : 1;  // w6, w6p, w6g, w8: on --threads N when given
    if (wants("w6") && tier == K::Tier::fast) gpt2s_bench(sfx, quick, true, true, 1, w6_threads);  // fast tier only
    if (wants("w6p") && tier == K::Tier::fast) gpt2s_bench(sfx, quick, false, true, 1, w6_threads);  // the prompt alone
    if (wants("w6t") && tier == K::Tier::fast) gpt2s_bench(sfx, quick, false, true, threads);  // and on threads
    if (wants("w6k") && tier == K::Tier::fast) w6_matmul_bench();
    if (wants("w6g") && tier == K::Tier::fast) gpt2s_bench(sfx, quick, true, false, 1, w6_threads);  // generation alone
    if (wants("w6s") && tier == K::Tier::fast) gpt2s_step_profile();
    if (wants("w8") && tier == K::Tier::fast) w8_bench(ap::quant::Type::BF16, sfx, quick, w6_threads);
    if (wants("w8p") && tier == K::Tier::fast) w8_bench(ap::quant::Type::BF16, sfx, quick, w6_threads, false);
    if (wants("w8q") && tier == K::Tier::fast) w8_bench(ap::quant::Type::Q8_0, sfx, quick, w6_threads);
    if (wants("w8q4") && tier == K::Tier::fast) w8_bench(ap::quant::Type::Q4_0, sfx, quick, w6_threads);
    if (wants("w8k4") && tier == K::Tier::fast) w8_bench(ap::quant::Type::Q4_K, sfx, quick, w6_threads);
    if (wants("w8k6") && tier == K::Tier::fast) w8_bench(ap::quant::Type::Q6_K, sfx, quick, w6_threads);
    if (wants("w9") && tier == K::Tier::fast) w9_patch_bench(quick);  // GPT-2's shape: a patching sweep
    if (wants("w5") && tier == K::Tier::fast) {  // no kernel in it: one tier
      ap::GPT m(ap::GPTConfig::tiny(65));
      m.init_weights(0);
      std::vector<int> prompt(32);
      for (int i = 0; i < 32; ++i) prompt[static_cast<size_t>(i)] = (i * 7) % 65;
      m.forward(prompt.data(), nullptr, 1, 32);
      next_token_bench("W5_next_token_V65", std::vector<float>(m.logits() + 31 * 65, m.logits() + 32 * 65));
      ap::Rng rng(5);
      std::vector<float> big(50257);
      for (float& x : big) x = 3.0f * rng.normal();
      next_token_bench("W5_next_token_V50257", big);
    }
  }
  K::set_tier(K::Tier::fast);
  return 0;
}
