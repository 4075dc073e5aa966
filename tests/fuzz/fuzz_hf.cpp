// fuzz_hf.cpp — libFuzzer target for Hugging Face folders and tokenizers (formats/hf_config.h,
// hf_folder.h, hf_tokenizer_json.h): any bytes, read as config.json, as model.safetensors.index.json,
// as tokenizer.json, and (split at the first NUL) as a config.json + index pair planned against a
// fixed one-layer shard, must give a result or an InputError naming the file or tensor — never
// crash, hang, leak, or throw anything else. A tokenizer that reads encodes the bytes and decodes
// them again (byte-level ones give the bytes back exactly).
// Seed corpus: tests/fuzz/corpus/hf (configs of each model type, an index, small byte-level and
// SentencePiece-style tokenizer.json files, a config + index pair). Run with -max_len=8192.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/base/input_error.h"
#include "formats/hf_folder.h"
#include "formats/hf_tokenizer_json.h"

namespace {

void expect_named(const ap::InputError& e, const char* a, const char* b = nullptr) {
  if (std::string(e.what()).empty() || (e.field.rfind(a, 0) != 0 && (!b || e.field.rfind(b, 0) != 0))) std::abort();
}

// One shard holding the tensors of a one-layer llama (vocab 4, width 2), all zeros.
const ap::HfShard& fixed_shard() {
  static const std::string bytes = [] {
    ap::HfConfig c;
    c.model_type = "llama";
    c.vocab_size = 4, c.hidden_size = 2, c.intermediate_size = 2, c.num_hidden_layers = 1;
    c.num_attention_heads = 1, c.num_key_value_heads = 1, c.head_dim = 2, c.max_position_embeddings = 8;
    static std::vector<float> zeros(64, 0.0f);
    std::vector<ap::safetensors::TensorData> ts;
    for (const auto& [name, shape] : ap::hf_expected_tensors(c)) ts.push_back({name, "F32", shape, zeros.data(), nullptr});
    return ap::safetensors::write_file(nullptr, ts, {1 << 20, 1 << 20, "fuzz"});
  }();
  static const ap::HfShard shard = ap::read_hf_shard(ap::StringSource(bytes), "model-00001-of-00001.safetensors");
  return shard;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const ap::HfConfig c = ap::read_hf_config(bytes);
    if (ap::rope_inverse_frequencies(c).size() != static_cast<size_t>(c.head_dim / 2)) std::abort();
  } catch (const ap::InputError& e) {
    expect_named(e, "config.json");
  }
  try {
    ap::read_hf_index(bytes);
  } catch (const ap::InputError& e) {
    expect_named(e, ap::kHfIndexFile);
  }
  try {
    const ap::HfTokenizerFiles t = ap::load_hf_tokenizer(bytes);
    const std::vector<int> ids = t.tokenizer->encode(bytes, true);
    const std::string back = t.tokenizer->decode(t.tokenizer->encode(bytes, false));
    if (t.tokenizer->spec().model == ap::HfBpeSpec::Model::byte_level && t.tokenizer->spec().added.empty() && back != bytes)
      std::abort();
    (void)ids;
  } catch (const ap::InputError& e) {
    expect_named(e, "tokenizer.json", "tokenizer_config.json");
  }
  const size_t nul = bytes.find('\0');
  if (nul != std::string::npos) {
    try {
      const ap::HfConfig c = ap::read_hf_config(bytes.substr(0, nul));
      if (c.num_hidden_layers > 4 || c.hidden_size > 64) return 0;  // the plan of a huge model: slow, not deeper
      const ap::HfIndex index = ap::read_hf_index(bytes.substr(nul + 1));
      ap::plan_hf_tensors(c, {fixed_shard()}, &index);
    } catch (const ap::InputError& e) {
      if (std::string(e.what()).empty()) std::abort();
    }
  }
  return 0;
}
