// rng.cpp — SplitMix64 and the uniform initialisers built on it (see rng.h).
#include "core/base/rng.h"

#include <cmath>

#include "core/tensor/ops.h"

namespace ap {

uint64_t Rng::next_u64() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float Rng::uniform01() {
  return static_cast<float>(next_u64() >> 40) * (1.0f / 16777216.0f);  // top 24 bits
}

float Rng::uniform(float bound) { return (2.0f * uniform01() - 1.0f) * bound; }

float Rng::normal() {
  // (u, v) uniform in the unit disc (rejecting the rest and the centre), then
  // u·√(−2 ln s / s) is N(0, 1). The second normal, v·√(…), is dropped so the state stays one word.
  for (;;) {
    const float u = 2.0f * uniform01() - 1.0f;
    const float v = 2.0f * uniform01() - 1.0f;
    const float s = u * u + v * v;
    if (s >= 1.0f || s == 0.0f) continue;
    return u * std::sqrt(-2.0f * log_f32(s) / s);
  }
}

Tensor random_uniform(int rows, int cols, float bound, uint64_t seed) {
  Tensor t({rows, cols});
  Rng rng(seed);
  for (float& v : t.data) v = rng.uniform(bound);
  return t;
}

uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  Rng mix(seed ^ (stream * 0xD1B54A32D192ED03ull));
  return mix.next_u64();
}

}  // namespace ap
