// test_gguf.cpp — formats/gguf.h on tests/gguf_writer.py's sample file (the fuzz target's seed,
// tests/fuzz/corpus/gguf/every_type.gguf, whose values the writer states): read whole and read in
// parts (a PartialSource fed what it asks for, as the page's opening does) alike; the model's config
// and the tokenizer's data as written; and their refusals, each naming the key at fault. The header
// against an independent parser is tests/gguf_reference_test.mjs's; damaged files, gguf_test.py's.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "core/base/input_error.h"
#include "formats/gguf.h"
#include "input_error_util.h"

namespace {

namespace G = ap::gguf;

std::string sample_bytes() {
  std::ifstream in(std::string(AP_GOLDEN_DIR) + "/../fuzz/corpus/gguf/every_type.gguf", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  REQUIRE(ss.str().size() > 1000);
  return ss.str();
}

G::Value* find(G::File& f, const std::string& key) {
  for (auto& kv : f.metadata)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

void erase(G::File& f, const std::string& key) {
  for (auto it = f.metadata.begin(); it != f.metadata.end(); ++it)
    if (it->first == key) {
      f.metadata.erase(it);
      return;
    }
}

}  // namespace

TEST_CASE("gguf: a file read whole and read in parts alike", "[gguf]") {
  const std::string bytes = sample_bytes();
  const ap::StringSource whole(bytes);
  const G::File a = G::read_file(whole, "every_type.gguf");
  ap::PartialSource part(bytes.size());
  G::File b;
  int rounds = 0;
  for (;; ++rounds) {
    REQUIRE(rounds < 100);
    try {
      b = G::read_file(part, "every_type.gguf");
      break;
    } catch (const ap::NeedBytes& need) {
      for (const ap::ByteRange& r : need.ranges) part.add(r.first, bytes.substr(r.first, r.second));
    }
  }
  CHECK(rounds >= 1);
  CHECK(rounds <= 2);  // the magic, then one window of 64 KiB (the whole of this small file)
  REQUIRE(a.metadata.size() == b.metadata.size());
  REQUIRE(a.tensors.size() == b.tensors.size());
  CHECK(a.data_start == b.data_start);
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    CHECK(a.tensors[i].name == b.tensors[i].name);
    CHECK(a.tensors[i].offset == b.tensors[i].offset);
  }
  CHECK(a.version == 3);
  CHECK(a.alignment == 32);
  CHECK(a.data_start % 32 == 0);
  CHECK(G::value_text(*a.find("test.array_nested")) == "[[\"a\", \"bc\"], [], [\"日本\"]]");
  CHECK(a.find("test.i64")->i == -(int64_t(1) << 40));
  CHECK(a.find("test.u64")->u == uint64_t(1) << 53);
  const G::TensorInfo* q6 = a.tensor("w.q6_k");
  REQUIRE(q6);
  CHECK(std::string(q6->type_name) == "Q6_K");
  CHECK(q6->dims == std::vector<uint64_t>{512, 5});
  CHECK(q6->bytes == 2 * 5 * 210);
  CHECK(G::runnable(*q6));
  CHECK_FALSE(G::runnable(*a.tensor("w.q5_k")));
  CHECK_THROWS_WITH(G::check_runnable(*a.tensor("w.q5_k"), "m.gguf"),
                    "m.gguf: tensor 'w.q5_k' is Q5_K, a type we do not run (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K)");
}

TEST_CASE("gguf: the model's config and the tokenizer's data", "[gguf]") {
  const std::string bytes = sample_bytes();
  const ap::StringSource whole(bytes);
  const G::File f = G::read_file(whole, "every_type.gguf");
  const G::ModelConfig c = G::read_model_config(f, "every_type.gguf");
  CHECK(c.architecture == "llama");
  CHECK(c.name == "tiny test llama");
  CHECK(c.context_length == 128);
  CHECK(c.embedding_length == 64);
  CHECK(c.block_count == 2);
  CHECK(c.feed_forward_length == 160);
  CHECK(c.head_count == 4);
  CHECK(c.head_count_kv == 2);
  CHECK(c.key_length == 16);
  CHECK(c.value_length == 16);
  CHECK(c.rope_dimension_count == 16);
  CHECK(c.sliding_window == 32);
  CHECK(c.rope_freq_base == 500000.0);
  CHECK(c.rms_epsilon == static_cast<double>(1e-5f));
  CHECK(c.vocab_size == 6);
  CHECK(c.rope_adjacent_pairs);
  const G::TensorInfo& w = G::expect_tensor(f, "w.q8_0", {96, 5}, "m.gguf");
  CHECK(G::tensor_data(whole, f, w) == bytes.data() + f.data_start + w.offset);
  CHECK(input_error_util::described([&] { G::expect_tensor(f, "w.q8_0", {96, 4}, "m.gguf"); }) ==
        "w.q8_0: m.gguf: tensor 'w.q8_0' has shape [96, 5] (ne[0] first), but the model's config gives [96, 4]");
  CHECK(input_error_util::described([&] { G::expect_tensor(f, "blk.0.attn_q.weight", {64, 64}, "m.gguf"); }) ==
        "blk.0.attn_q.weight: m.gguf: there is no tensor 'blk.0.attn_q.weight'");
  CHECK(input_error_util::described([&] { G::expect_tensor(f, "w.q5_k", {256, 2}, "m.gguf"); }) ==
        "w.q5_k: m.gguf: tensor 'w.q5_k' is Q5_K, a type we do not run (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K)");
  const G::TokenizerData t = G::read_tokenizer(f, "every_type.gguf");
  CHECK(t.model == "gpt2");
  CHECK(t.pre == "smollm");
  CHECK(t.tokens == std::vector<std::string>{"<s>", "</s>", "a", "b", "ab", "\xC4\xA0the"});
  CHECK(t.scores == std::vector<float>{0, 0, -1, -2, -3, -4.5f});
  CHECK(t.token_type == std::vector<int32_t>{3, 3, 1, 1, 1, 1});
  CHECK(t.merges == std::vector<std::string>{"a b"});
  CHECK(t.bos_id == 0);
  CHECK(t.eos_id == 1);
  CHECK(t.unk_id == -1);
  CHECK(t.add_bos == 0);
  CHECK(t.add_eos == -1);
}

TEST_CASE("gguf: the config's and the tokenizer's refusals name the key", "[gguf]") {
  const std::string bytes = sample_bytes();
  const ap::StringSource whole(bytes);
  const G::File base = G::read_file(whole, "m.gguf");
  auto config_error = [&](auto edit, const std::string& field, const std::string& message) {
    G::File f = base;
    edit(f);
    CHECK(input_error_util::described([&] { G::read_model_config(f, "m.gguf"); }) == field + ": " + message);
  };
  config_error([](G::File& f) { find(f, "general.architecture")->s = "gemma2"; }, "general.architecture",
               "m.gguf: architecture 'gemma2' is not one we run (llama, qwen2, qwen3)");
  config_error([](G::File& f) { erase(f, "llama.block_count"); }, "llama.block_count", "m.gguf: llama.block_count is missing");
  config_error([](G::File& f) { find(f, "llama.attention.head_count_kv")->u = 3; }, "llama.attention.head_count_kv",
               "m.gguf: llama.attention.head_count_kv is 3, which does not divide the 4 heads");
  config_error([](G::File& f) { find(f, "llama.embedding_length")->u = 0; }, "llama.embedding_length",
               "m.gguf: llama.embedding_length is 0, outside [1, 16777216]");
  config_error([](G::File& f) { *find(f, "llama.rope.freq_base") = *find(f, "test.string"); }, "llama.rope.freq_base",
               "m.gguf: llama.rope.freq_base is STRING, not FLOAT32 or FLOAT64");
  config_error([](G::File& f) { find(f, "llama.attention.layer_norm_rms_epsilon")->f = -1; },
               "llama.attention.layer_norm_rms_epsilon", "m.gguf: llama.attention.layer_norm_rms_epsilon is -1, not a positive number");
  config_error([](G::File& f) { *find(f, "llama.attention.head_count_kv") = *find(f, "test.array_u8"); },
               "llama.attention.head_count_kv", "m.gguf: llama.attention.head_count_kv is an array (one value per layer), which we do not run");
  auto tokenizer_error = [&](auto edit, const std::string& field, const std::string& message) {
    G::File f = base;
    edit(f);
    CHECK(input_error_util::described([&] { G::read_tokenizer(f, "m.gguf"); }) == field + ": " + message);
  };
  tokenizer_error([](G::File& f) { find(f, "tokenizer.ggml.model")->s = "bert"; }, "tokenizer.ggml.model",
                  "m.gguf: tokenizer.ggml.model is 'bert', not one we read (gpt2, llama)");
  tokenizer_error([](G::File& f) { find(f, "tokenizer.ggml.scores")->count = 5; }, "tokenizer.ggml.scores",
                  "m.gguf: tokenizer.ggml.scores is not an array of 6 floats, one per token");
  tokenizer_error([](G::File& f) { find(f, "tokenizer.ggml.eos_token_id")->u = 6; }, "tokenizer.ggml.eos_token_id",
                  "m.gguf: tokenizer.ggml.eos_token_id is 6, not a token of the 6 in the vocabulary");
  tokenizer_error([](G::File& f) { erase(f, "tokenizer.ggml.tokens"); }, "tokenizer.ggml.tokens",
                  "m.gguf: tokenizer.ggml.tokens is missing");
}
