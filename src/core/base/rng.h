// rng.h — seeded, portable random numbers: the same seed gives the same floats natively and in wasm.
//
// SplitMix64 (integer arithmetic only, so no platform difference); floats are built from the top
// 24 bits, so every value is exact in float32. Not for cryptography.
#pragma once

#include <cstdint>

#include "core/tensor/tensor.h"

namespace ap {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next_u64();
  // Uniform in [0, 1), a multiple of 2^-24.
  float uniform01();
  // Uniform in [-bound, bound).
  float uniform(float bound);
  // Standard normal (mean 0, standard deviation 1): Marsaglia's polar method with the core's own
  // log_f32, so the same seed gives the same bits natively and in wasm. Uses ≥ 2 draws.
  float normal();
  // The whole state: Rng r2(r.state()) continues exactly where r is (for checkpoints).
  uint64_t state() const { return state_; }

 private:
  uint64_t state_;
};

// A rows×cols matrix, uniform in [-bound, bound), from Rng(seed).
Tensor random_uniform(int rows, int cols, float bound, uint64_t seed);
// The seed of the stream for one named use (e.g. W_k is stream 2 of a spec's seed), so that
// adding a matrix does not shift the numbers of the others.
uint64_t derive_seed(uint64_t seed, uint64_t stream);

}  // namespace ap
