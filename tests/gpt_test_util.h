// gpt_test_util.h — what the tiny GPT's C++ tests (test_gpt.cpp, test_gpt_variants.cpp) share: a
// guard that picks a kernel tier for a test and restores the fast one, seeded random token ids, and
// seeded random weights larger than nanoGPT's init. Test-only; each test file includes it once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/rng.h"
#include "core/kernels/kernels.h"
#include "core/model/gpt.h"

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

}  // namespace gpt_test_util
