// test_typed_weights.cpp — an opened Llama-family model with typed weights (gpt.h "Typed weights",
// llama_load.h's open_llama) against the same model converted to float32 (load_llama): in the
// reference tier the logits of forward() and of the KV cache are the float model's bit for bit (the
// typed products are the float reference kernel on the dequantized rows: test_quant.cpp), in the
// fast tier within 1e-4 (float32 activations: bf16_gemm.h's product off, test_bf16_gemm.cpp's); a
// BF16 model's weights take its file's bytes (weight_bytes, not RSS), the float model's twice;
// to_float32 gives load_llama's parameters exactly; fine-tuning converts first; q/k/v of three
// types stack as three parts. Against PyTorch: tests/llama_torch_test.py and
// tests/gguf_weights_test.py run the CLI, which opens these models typed.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/kernels/bf16_gemm.h"
#include "core/kernels/kernels.h"
#include "core/kernels/quant.h"
#include "formats/hf_folder.h"
#include "formats/llama_load.h"
#include "llama_weights_test_util.h"

namespace {

using ap::quant::Type;

ap::HfConfig small_qwen() {
  ap::HfConfig c = ap_test::small_hf_config("qwen2", 50, 64, 96, 16, 32);
  c.attention_bias = true;  // q/k/v biases: 1-D slices stacked
  c.tie_word_embeddings = true;
  return c;
}

// Every matrix in type_of(k) for the k-th matrix, values 0.3 · N(0, 1) from Rng(11).
template <class F>
ap::LlamaWeights weights(const ap::HfConfig& c, F type_of) {
  return ap_test::random_llama_weights(c, 11, 0.3f, type_of);
}

// The float model load_llama makes.
std::unique_ptr<ap::GPT> float_model(const ap::LlamaWeights& w) {
  ap::LlamaModel m = ap::load_llama(w, "test");
  auto g = std::make_unique<ap::GPT>(m.config, ap::ModelUse::infer);
  std::copy(m.params.begin(), m.params.end(), g->params());
  return g;
}

const std::vector<int> kIds = {3, 17, 42, 0, 9, 49, 5, 23, 11};

// forward's logits and then the KV cache's for each position, one after the other.
std::vector<float> logits_of(ap::GPT& m) {
  const int T = static_cast<int>(kIds.size()), V = m.config().vocab_size;
  m.forward(kIds.data(), nullptr, 1, T);
  std::vector<float> out(m.logits(), m.logits() + int64_t(T) * V);
  m.cache_reset();
  for (int id : kIds) {
    const float* l = m.cache_step(id);
    out.insert(out.end(), l, l + V);
  }
  return out;
}

struct TierGuard {
  ap::kernels::Tier was = ap::kernels::tier();
  ~TierGuard() { ap::kernels::set_tier(was); }
};

}  // namespace

TEST_CASE("typed weights: the logits of the float32 model, bit for bit in the reference tier", "[llama][typed]") {
  const Type mix[] = {Type::Q8_0, Type::F16, Type::BF16, Type::F32, Type::Q4_0};
  const ap::LlamaWeights w = weights(small_qwen(), [&](int k) { return mix[k % 5]; });
  std::unique_ptr<ap::GPT> typed = ap::open_llama(w, "test");
  std::unique_ptr<ap::GPT> plain = float_model(w);
  REQUIRE(typed->typed());
  // layer 0's q, k, v are of three types (the k-th matrix in mix[k % 5]): three parts in c_attn
  std::string want_types, got_types;
  for (const char* t : {"q_proj", "k_proj", "v_proj"})
    for (const ap::LlamaTensor& x : w.tensors)
      if (x.name == std::string("model.layers.0.self_attn.") + t + ".weight")
        want_types += (want_types.empty() ? "" : "+") + std::string(ap::quant::type_info(x.type).name);
  for (const auto& [name, types] : typed->weight_types())
    if (name == "transformer.h.0.attn.c_attn.weight") got_types = types;
  CHECK(got_types == want_types);
  CHECK(got_types.find('+') != got_types.rfind('+'));
  TierGuard guard;
  ap::kernels::set_tier(ap::kernels::Tier::reference);
  const std::vector<float> want = logits_of(*plain), got = logits_of(*typed);
  REQUIRE(got.size() == want.size());
  CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
  CHECK(typed->typed());  // inference kept them typed
  ap::kernels::set_tier(ap::kernels::Tier::fast);
  // float32 activations throughout: a prompt's BF16 parts on bf16_gemm.h's product (activations
  // rounded to bf16) are test_bf16_gemm.cpp's
  ap::kernels::bf16::set_enabled(false);
  const std::vector<float> fast = logits_of(*typed);
  ap::kernels::bf16::set_enabled(true);
  float worst = 0.0f;
  for (size_t i = 0; i < fast.size(); ++i) worst = std::max(worst, std::fabs(fast[i] - want[i]));
  INFO(ap::kernels::tier_name() << ": largest difference " << worst);
  CHECK(worst <= 1e-4f);
}

TEST_CASE("typed weights: a BF16 model takes its file's bytes, converted twice them", "[llama][typed]") {
  const ap::LlamaWeights w = weights(small_qwen(), [](int) { return Type::BF16; });
  uint64_t file = 0;
  for (const ap::LlamaTensor& t : w.tensors) file += t.bytes;
  std::unique_ptr<ap::GPT> m = ap::open_llama(w, "test");
  const int64_t typed = m->weight_bytes();
  INFO("file " << file << " bytes, typed model " << typed);
  CHECK(typed >= static_cast<int64_t>(file));
  CHECK(typed <= static_cast<int64_t>(file) + 32 * 16);  // each part aligned to 32 bytes, no more
  const ap::LlamaModel f = ap::load_llama(w, "test");
  // to_float32 (here by p()) gives load_llama's parameters exactly
  const float* p = m->p().wte;
  CHECK(!m->typed());
  CHECK(p == m->params());
  CHECK(std::memcmp(m->params(), f.params.data(), f.params.size() * sizeof(float)) == 0);
  CHECK(m->weight_bytes() == static_cast<int64_t>(4 * f.params.size()));
  CHECK(m->weight_bytes() > 19 * static_cast<int64_t>(file) / 10);
}

TEST_CASE("typed weights: fine-tuning converts to float32 first, and bad slices are refused by name", "[llama][typed]") {
  const ap::LlamaWeights w = weights(small_qwen(), [](int k) { return k % 2 ? Type::Q8_0 : Type::BF16; });
  std::unique_ptr<ap::GPT> m = ap::open_llama(w, "test");
  REQUIRE(m->typed());
  m->make_trainable(1, 8);
  CHECK(!m->typed());
  CHECK(m->use() == ap::ModelUse::train);
  const int ids[] = {1, 2, 3, 4}, targets[] = {2, 3, 4, 5};
  CHECK(std::isfinite(m->forward(ids, targets, 1, 4)));
  const ap::GPTConfig g = ap::llama_gpt_config(w.config);
  const std::vector<float> row(64, 1.0f);
  const char* data = reinterpret_cast<const char*>(row.data());
  std::vector<ap::TypedSlice> s = {{"transformer.h.0.attn.c_proj.weight", 0, Type::F32, data, 1, 64}};
  CHECK_THROWS_WITH(ap::GPT(g, s), Catch::Contains("transformer.wte.weight") && Catch::Contains("rows"));
  s[0].param = "transformer.h.0.attn.c_nope.weight";
  CHECK_THROWS_WITH(ap::GPT(g, s), Catch::Contains("c_nope"));
  s[0] = {"transformer.h.0.attn.c_proj.weight", 64, Type::F32, data, 1, 64};
  CHECK_THROWS_WITH(ap::GPT(g, s), Catch::Contains("do not fit") && Catch::Contains("attn.c_proj"));
}
