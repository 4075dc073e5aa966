// test_llama_load.cpp — formats/llama_load.h: LlamaWeights (as the Hugging Face and GGUF readers
// make them) into the GPT's parameters. Each tensor's values are those of its storage type's own
// conversion (quant.h's dequantize_row: F32, F16, BF16, Q8_0, Q4_0) at the place gpt.h's layout
// gives it — q/k/v stacked into c_attn, gate/up into the MLP — for a config of grouped heads and
// heads wider than hidden/heads; a missing tensor, a tensor of the wrong size and a non-finite value
// are refused by name (by load_llama, and by open_llama for F32, F16 and BF16 from their bits). Logits against PyTorch: tests/llama_torch_test.py.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/kernels/quant.h"
#include "formats/hf_folder.h"
#include "formats/llama_load.h"
#include "llama_weights_test_util.h"

namespace {

using ap::quant::Type;

// 4 heads of 16: q is 64 wide in a hidden size of 32.
ap::HfConfig small_llama() { return ap_test::small_hf_config("llama", 40, 32, 64, 16, 64); }

// Tensors with bytes of several types (the k-th matrix in Q8_0, F16, BF16, F32, Q4_0 in turn),
// values N(0, 1) from Rng(7).
ap::LlamaWeights make_weights(const ap::HfConfig& c) {
  const Type types[] = {Type::Q8_0, Type::F16, Type::BF16, Type::F32, Type::Q4_0};
  return ap_test::random_llama_weights(c, 7, 1.0f, [&](int k) { return types[k % 5]; });
}

// The float32 values of one tensor as its type defines them.
std::vector<float> values_of(const ap::LlamaTensor& t) {
  const uint64_t in = t.shape.back(), rows = t.shape.size() == 2 ? t.shape[0] : 1;
  std::vector<float> out(in * rows);
  for (uint64_t r = 0; r < rows; ++r)
    ap::quant::dequantize_row(t.type, t.data + r * ap::quant::row_bytes(t.type, in), out.data() + r * in,
                              static_cast<int64_t>(in));
  return out;
}

}  // namespace

TEST_CASE("llama_load: every tensor converted from its type and placed by gpt.h's layout", "[llama]") {
  const ap::HfConfig hc = small_llama();
  const ap::LlamaWeights w = make_weights(hc);
  const ap::LlamaModel m = ap::load_llama(w, "test");
  const ap::GPTConfig& g = m.config;
  CHECK(g.head_dim() == 16);
  CHECK(g.attn_width() == 64);
  CHECK(g.kv_head() == 2);
  CHECK(!g.tie_embeddings);
  CHECK(g.rope == ap::RopePairing::halves);
  std::map<std::string, const ap::ParamTensor*> ours;
  const auto tensors = ap::param_tensors(g);
  for (const auto& t : tensors) ours[t.name] = &t;
  // transformers' name → ours and the first row, written here from the two models' definitions
  const int64_t A = 64, KC = 32;
  const std::map<std::string, std::pair<std::string, int64_t>> rename = {
      {"input_layernorm.weight", {"ln_1.weight", 0}},
      {"post_attention_layernorm.weight", {"ln_2.weight", 0}},
      {"self_attn.q_proj.weight", {"attn.c_attn.weight", 0}},
      {"self_attn.k_proj.weight", {"attn.c_attn.weight", A}},
      {"self_attn.v_proj.weight", {"attn.c_attn.weight", A + KC}},
      {"self_attn.o_proj.weight", {"attn.c_proj.weight", 0}},
      {"mlp.gate_proj.weight", {"mlp.gate_proj.weight", 0}},
      {"mlp.up_proj.weight", {"mlp.up_proj.weight", 0}},
      {"mlp.down_proj.weight", {"mlp.down_proj.weight", 0}}};
  int checked = 0;
  for (const ap::LlamaTensor& t : w.tensors) {
    std::string name;
    int64_t row = 0;
    if (t.name == "model.embed_tokens.weight") name = "transformer.wte.weight";
    else if (t.name == "model.norm.weight") name = "transformer.ln_f.weight";
    else if (t.name == "lm_head.weight") name = "lm_head.weight";
    else {
      const size_t dot = t.name.find('.', 13);
      const auto& r = rename.at(t.name.substr(dot + 1));
      name = "transformer.h." + t.name.substr(13, dot - 13) + "." + r.first;
      row = r.second;
    }
    INFO(t.name << " → " << name);
    const ap::ParamTensor& p = *ours.at(name);
    const int64_t cols = p.shape.size() == 2 ? p.shape[1] : 1;
    const std::vector<float> want = values_of(t);
    bool same = true;
    for (size_t i = 0; i < want.size(); ++i) same = same && m.params[p.offset + row * cols + i] == want[i];
    CHECK(same);
    ++checked;
  }
  CHECK(checked == static_cast<int>(w.tensors.size()));
  CHECK(static_cast<int64_t>(m.params.size()) == g.num_parameters());
}

TEST_CASE("llama_load: a missing tensor, a wrong size, a non-finite value are refused by name", "[llama]") {
  const ap::HfConfig hc = small_llama();
  {
    ap::LlamaWeights w = make_weights(hc);
    w.tensors.erase(w.tensors.begin() + 3);  // layer 0's k_proj
    CHECK_THROWS_WITH(ap::load_llama(w, "m"), Catch::Contains("attn.c_attn.weight") && Catch::Contains("missing"));
  }
  {
    ap::LlamaWeights w = make_weights(hc);
    w.tensors[1].bytes -= 4;  // layer 0's input_layernorm, F32
    CHECK_THROWS_WITH(ap::load_llama(w, "m"), Catch::Contains("model.layers.0.input_layernorm.weight"));
  }
  {
    ap::LlamaWeights w = make_weights(hc);
    std::string& b = w.owned[1];
    const float inf = INFINITY;
    std::memcpy(&b[8], &inf, 4);
    CHECK_THROWS_WITH(ap::load_llama(w, "m"), Catch::Contains("input_layernorm") && Catch::Contains("finite"));
  }
  // open_llama (typed, its matrices kept) tells F32, F16 and BF16 values finite from their bits:
  // one that is not is still named with its place
  for (const auto& [type, bits] : {std::pair<Type, uint32_t>{Type::F32, 0xFF800000u}, {Type::F16, 0x7C00u}, {Type::BF16, 0x7FC0u}}) {
    ap::LlamaWeights w = make_weights(hc);
    ap::LlamaTensor* t = nullptr;
    for (ap::LlamaTensor& x : w.tensors)
      if (!t && x.type == type && x.shape.size() == 2) t = &x;
    REQUIRE(t != nullptr);
    CHECK_NOTHROW(ap::open_llama(w, "m"));
    const uint64_t in = t->shape[1], size = type == Type::F32 ? 4 : 2;
    std::memcpy(const_cast<char*>(t->data) + (in + 2) * size, &bits, size);  // [1, 2] (little-endian)
    CHECK_THROWS_WITH(ap::open_llama(w, "m"), Catch::Contains(t->name) && Catch::Contains("at [1, 2]") && Catch::Contains("finite"));
  }
  {
    ap::HfConfig big = hc;
    big.hidden_size = 4096;
    big.intermediate_size = 14336;
    big.num_hidden_layers = 64;
    big.vocab_size = 152064;
    big.head_dim = 128;
    big.num_attention_heads = 32;
    big.num_key_value_heads = 8;
    // 64 layers of Llama 3 8B's width with Qwen's vocabulary: 15 billion parameters, refused in figures
    CHECK_THROWS_WITH(ap::check_llama_memory(ap::llama_gpt_config(big)), Catch::Contains("MiB, more than the limit"));
#ifndef __EMSCRIPTEN__
    big.num_hidden_layers = 16;  // 3.8 billion: within the native 32 GiB
    CHECK_NOTHROW(ap::check_llama_memory(ap::llama_gpt_config(big)));
#endif
    big.intermediate_size = 28672;
    CHECK_THROWS_WITH(ap::llama_gpt_config(big), Catch::Contains("intermediate_size"));  // past kMaxInner
  }
}
