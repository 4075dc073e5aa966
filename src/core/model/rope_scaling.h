// rope_scaling.h — RoPE's inverse frequencies θ_i = base^(−2i/d) for i < d/2, with Llama 3's
// scaling ("rope_type": "llama3" in a Hugging Face config.json) when its factor is set: the rule of
// transformers' _compute_llama3_parameters, in double. The one copy of the rule: the model's tables
// (gpt.cpp) and the config reader (formats/hf_config.cpp) both call it.
//
// Llama 3: with wavelength λ_i = 2π/θ_i, old = original_max_position_embeddings,
//   λ_i > old/low_freq_factor   → θ_i / factor                      (long waves slowed)
//   λ_i < old/high_freq_factor  → θ_i                                (short waves kept)
//   between                     → (1 − s)·θ_i/factor + s·θ_i, s = (old/λ_i − low)/(high − low)
// Limits: no check here (the config's validate() checks factor, the order of the two factors).
#pragma once

#include <cmath>
#include <vector>

namespace ap {

struct RopeScaling {
  double factor = 0;  // 0: no scaling; else Llama 3's rule with the three fields below
  double low_freq_factor = 1, high_freq_factor = 4;
  long long original_max_position_embeddings = 0;
  bool on() const { return factor > 0; }
  bool operator==(const RopeScaling& o) const {
    return factor == o.factor && low_freq_factor == o.low_freq_factor && high_freq_factor == o.high_freq_factor &&
           original_max_position_embeddings == o.original_max_position_embeddings;
  }
};

// The d/2 inverse frequencies of a head's d rotated dimensions, scaled as s says.
inline std::vector<double> rope_inverse_frequencies(double base, long long d, const RopeScaling& s) {
  std::vector<double> f(static_cast<size_t>(d / 2));
  const double pi = 3.14159265358979323846;
  for (long long i = 0; i < d / 2; ++i) {
    double inv = 1.0 / std::pow(base, static_cast<double>(2 * i) / static_cast<double>(d));
    if (s.on()) {
      const double old_len = static_cast<double>(s.original_max_position_embeddings);
      const double low_wavelen = old_len / s.low_freq_factor, high_wavelen = old_len / s.high_freq_factor;
      const double wavelen = 2 * pi / inv;
      if (wavelen > low_wavelen) {
        inv /= s.factor;
      } else if (!(wavelen < high_wavelen)) {
        const double smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        inv = (1 - smooth) * inv / s.factor + smooth * inv;
      }
    }
    f[static_cast<size_t>(i)] = inv;
  }
  return f;
}

}  // namespace ap
