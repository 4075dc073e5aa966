// gpt2s.h — W6's model (bench/README.md): GPT-2 small's shape (12 layers, 12 heads, n_embd 768,
// vocabulary 50,257, block_size 1,024, gelu_new, biases, ε 1e-5, lm_head tied to wte: 124,439,808
// parameters) with seeded random weights, made exactly as bench/peers/gpt2s.py makes them for the
// PyTorch peer and the ONNX exporter, so that every runner times the same weights without a file:
// element i of the tensor `name` (nanoGPT's state-dict name) is
//   z = splitmix64(fnv1a64(name) + (i + 1)·0x9E3779B97F4A7C15),  r = 2·((z >> 40)·2⁻²⁴) − 1,
//   LayerNorm weights 1 + 0.1·r, biases 0.02·r, the other tensors (0.02·√3)·r, in float32.
// Also the prompt and what the runners compare (gpt2s.py's CHECK_IDS, CHECK_TOKENS).
// Limits: random weights; the logits agree with the peers' to float32 rounding, not bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/gpt.h"

namespace gpt2s {

constexpr int kPromptLen = 64, kGenTokens = 100, kCheckTokens = 16, kCheckStride = 4096, kCheckFirst = 17;

inline ap::GPTConfig config() { return ap::GPTConfig::gpt2_small(); }

inline std::vector<int> prompt() {
  std::vector<int> p(kPromptLen);
  for (int i = 0; i < kPromptLen; ++i) p[static_cast<size_t>(i)] = (i * 3083 + 11) % 50257;
  return p;
}

inline uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char b : s) h = (h ^ b) * 0x100000001B3ull;
  return h;
}

// r of value i (the formula above) of the tensor whose name hashes to seed: in [-1, 1).
inline float uniform(uint64_t seed, int64_t i) {
  uint64_t z = seed + static_cast<uint64_t>(i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
  return u * 2.0f - 1.0f;
}

// Fills out (n floats) with the tensor `name`'s values.
inline void fill(float* out, const std::string& name, int64_t n) {
  const uint64_t seed = fnv1a64(name);
  const bool bias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
  const bool ln = !bias && name.find(".ln_") != std::string::npos;
  const float scale = bias ? 0.02f : ln ? 0.1f : static_cast<float>(0.02 * 1.7320508075688772);
  for (int64_t i = 0; i < n; ++i) {
    const float v = uniform(seed, i) * scale;
    out[i] = ln ? 1.0f + v : v;
  }
}

// Every parameter of `m` (a model of config()) set by name.
inline void fill_weights(ap::GPT& m) {
  for (const ap::ParamTensor& t : m.tensors()) fill(m.params() + t.offset, t.name, t.numel);
}

}  // namespace gpt2s
