// llama_weights_test_util.h — LlamaWeights of seeded random values for the C++ tests of the Llama
// loader and of typed weights: every tensor hf_expected_tensors(c) lists, each 2-D matrix stored in
// the type type_of(k) gives the k-th of them (F32, F16, BF16, Q8_0 or Q4_0, written with quant.h's
// own quantizers), norms and biases F32; the bytes kept alive in w.owned; and the small configs
// those tests build them for (small_hf_config). Test-only.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/base/rng.h"
#include "core/kernels/quant.h"
#include "formats/hf_folder.h"
#include "formats/llama_weights.h"

namespace ap_test {

// A small config of the Llama family: model_type ("llama", "qwen2", …) with SiLU, 2 layers of 4
// query heads sharing 2 key/value heads, the vocabulary, hidden size, MLP width, head width and
// positions given; the rest HfConfig's defaults (a test sets its biases, tying or qk_norm itself).
inline ap::HfConfig small_hf_config(const char* model_type, int vocab, int hidden, int intermediate, int head_dim,
                                    int positions) {
  ap::HfConfig c;
  c.model_type = model_type;
  c.hidden_act = "silu";
  c.vocab_size = vocab;
  c.hidden_size = hidden;
  c.intermediate_size = intermediate;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = head_dim;
  c.max_position_embeddings = positions;
  return c;
}

// Values scale · N(0, 1) drawn from Rng(seed), row after row, tensor after tensor.
template <class F>
ap::LlamaWeights random_llama_weights(const ap::HfConfig& c, uint64_t seed, float scale, F type_of) {
  using ap::quant::Type;
  ap::LlamaWeights w;
  w.config = c;
  ap::Rng rng(seed);
  int k = 0;
  for (const auto& [name, shape] : ap::hf_expected_tensors(c)) {
    const uint64_t in = shape.back(), rows = shape.size() == 2 ? shape[0] : 1;
    const Type t = shape.size() == 2 ? type_of(k++) : Type::F32;
    std::vector<float> x(in);
    const uint64_t rb = ap::quant::row_bytes(t, in);
    std::string bytes(rb * rows, '\0');
    for (uint64_t r = 0; r < rows; ++r) {
      for (float& v : x) v = scale * rng.normal();
      char* out = &bytes[r * rb];
      if (t == Type::Q8_0) ap::quant::quantize_row_q8_0(x.data(), out, static_cast<int64_t>(in));
      else if (t == Type::Q4_0) ap::quant::quantize_row_q4_0(x.data(), out, static_cast<int64_t>(in));
      for (uint64_t i = 0; i < in; ++i) {
        if (t == Type::F32) std::memcpy(out + 4 * i, &x[i], 4);
        const uint16_t h = t == Type::F16 ? ap::quant::f32_to_f16(x[i]) : ap::quant::f32_to_bf16(x[i]);
        if (t == Type::F16 || t == Type::BF16) std::memcpy(out + 2 * i, &h, 2);
      }
    }
    w.owned.push_back(std::move(bytes));
    w.tensors.push_back({name, shape, t, w.owned.back().data(), w.owned.back().size()});
  }
  return w;
}

}  // namespace ap_test
