// gpt_test_util.h — what the tiny GPT's C++ tests (test_gpt.cpp, test_gpt_variants.cpp) share: a
// guard that picks a kernel tier for a test and restores the fast one, seeded random token ids, and
// seeded random weights larger than nanoGPT's init; and what the training tests (test_train*.cpp,
// test_checkpoint.cpp) share: a short run's settings, a built-in task's data, the tiny preset with
// another block size. Test-only; each test file includes it once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/rng.h"
#include "core/kernels/kernels.h"
#include "core/model/gpt.h"
#include "core/model/train.h"

namespace gpt_test_util {

struct TierGuard {  // restores the fast tier after a test picks one
  explicit TierGuard(ap::kernels::Tier t) { ap::kernels::set_tier(t); }
  ~TierGuard() { ap::kernels::set_tier(ap::kernels::Tier::fast); }
};

// n ids in [0, V) from Rng(seed).
inline std::vector<int> random_tokens(int n, int V, uint64_t seed) {
  ap::Rng r(seed);
  std::vector<int> out(static_cast<size_t>(n));
  for (int& t : out) t = static_cast<int>(r.next_u64() % static_cast<uint64_t>(V));
  return out;
}

// Larger weights than nanoGPT's init make every path of the gradient matter (LayerNorm weights
// away from 1, non-zero biases), so a wrong term cannot hide behind a small number: every
// parameter scale · N(0, 1) from Rng(seed), the norms' weights plus 1.
inline void randomize(ap::GPT& m, uint64_t seed, float scale) {
  ap::Rng r(seed);
  for (int64_t i = 0; i < m.num_parameters(); ++i) m.params()[i] = scale * r.normal();
  for (const auto& t : m.tensors())
    if (t.name.find("ln_") != std::string::npos && t.name.find(".weight") != std::string::npos)
      for (int64_t i = 0; i < t.numel; ++i) m.params()[t.offset + i] += 1.0f;
}

// A short run's settings: `steps` of `batch_size`, a 2-step warm-up, lr 3e-3 down to 3e-4, 2
// evaluation batches, seed 11.
inline ap::TrainConfig quick_train(int steps, int batch_size) {
  ap::TrainConfig t;
  t.batch_size = batch_size;
  t.steps = steps;
  t.warmup_steps = 2;
  t.lr = 3e-3f;
  t.min_lr = 3e-4f;
  t.eval_batches = 2;
  t.seed = 11;
  return t;
}

// The built-in task `name` (data.h: "copy", "sort" …) on n_chars characters.
inline ap::DataSpec task(const std::string& name, long long n_chars = 20000) {
  ap::DataSpec d;
  d.task = name;
  d.n_chars = n_chars;
  return d;
}

// The tiny preset with a context of `block` tokens.
inline ap::GPTConfig tiny_block(int block) {
  ap::GPTConfig c = ap::GPTConfig::tiny();
  c.block_size = block;
  return c;
}

}  // namespace gpt_test_util
