// test_gpt_open_files.cpp — the session's opening of a Llama-family model of several files
// (gpt_opening.h: open_files, open_files_piece, open_files_plan, then open_buffer / open_feed /
// open_finish), natively, driven as the page drives it: a Hugging Face folder of two shards with its
// index, built here in bytes (safetensors.h's writer), its headers given as the plan asks, its weights
// fed a few bytes at a time, gives the model the whole-folder reader gives (hf_folder.h, then
// llama_load.h's load_llama: the same parameters, bit for bit); a shard the index lists but not given,
// no config.json and a truncated shard are refused by name, and the session's model stays.
// Logits against PyTorch: tests/wasm/gpt_open_files.test.mjs and tests/e2e/open-llama.spec.mjs.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "api/gpt_interp.h"
#include "api/gpt_session.h"
#include "core/base/half_float.h"
#include "core/base/rng.h"
#include "core/kernels/kernels.h"
#include "formats/hf_folder.h"
#include "formats/json.h"
#include "formats/llama_load.h"
#include "formats/safetensors.h"

namespace {

using ap::json::Value;

const char* kConfig = R"({"model_type":"llama","hidden_act":"silu","vocab_size":40,"hidden_size":32,
  "intermediate_size":48,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,
  "max_position_embeddings":32,"rms_norm_eps":1e-6,"rope_theta":10000.0,"tie_word_embeddings":true})";

// The folder: file name → bytes (config.json, the index, two shards), its tensors in F32 or BF16
// (rounded: F32 tensors holding the BF16 folder's values, the model it converts to).
std::map<std::string, std::string> folder(bool bf16 = false, bool rounded = false) {
  const ap::HfConfig c = ap::read_hf_config(kConfig);
  ap::Rng rng(3);
  std::vector<std::vector<float>> values;
  std::vector<std::vector<uint16_t>> halves;
  std::vector<ap::safetensors::TensorData> shard[2];
  Value map = Value::object();
  int k = 0;
  const auto expected = ap::hf_expected_tensors(c);
  values.reserve(expected.size());
  halves.reserve(expected.size());
  for (const auto& [name, shape] : expected) {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    values.emplace_back(n);
    for (float& v : values.back()) v = 0.3f * rng.normal();
    if (rounded)
      for (float& v : values.back()) v = ap::bf16_to_float(ap::float_to_bf16(v));
    const std::string file = k % 2 ? "model-00002-of-00002.safetensors" : "model-00001-of-00002.safetensors";
    if (bf16) {
      halves.emplace_back();
      for (float v : values.back()) halves.back().push_back(ap::float_to_bf16(v));
      shard[k % 2].push_back({name, "BF16", shape, nullptr, reinterpret_cast<const unsigned char*>(halves.back().data())});
    } else {
      shard[k % 2].push_back({name, "F32", shape, values.back().data(), nullptr});
    }
    map.set(name, file);
    ++k;
  }
  const ap::safetensors::Limits limits{ap::kMaxHfShardHeader, ap::kMaxHfShardBytes, "shard"};
  Value index = Value::object();
  index.set("metadata", Value::object());
  index.set("weight_map", std::move(map));
  return {{"config.json", kConfig},
          {ap::kHfIndexFile, index.dump()},
          {"model-00001-of-00002.safetensors", ap::safetensors::write_file(Value(), shard[0], limits)},
          {"model-00002-of-00002.safetensors", ap::safetensors::write_file(Value(), shard[1], limits)}};
}

std::string spec_of(const std::map<std::string, std::string>& files) {
  Value list = Value::array();
  for (const auto& [name, bytes] : files) {
    if (name.find(".safetensors") == std::string::npos || name == ap::kHfIndexFile) continue;
    Value& f = list.push(Value::object());
    f.set("name", name);
    f.set("size", static_cast<long long>(bytes.size()));
  }
  Value spec = Value::object();
  spec.set("name", "tiny");
  spec.set("files", std::move(list));
  return spec.dump();
}

const Value* ok(const std::string& answer, Value& v) {
  v = ap::json::parse(answer);
  INFO(answer);
  REQUIRE(v.find("ok")->as_bool());
  return &v;
}

// Opens the files as gpt-open.js does; the last answer (open_finish's, or a refusal's).
std::string open(ap::GptSession& s, const std::map<std::string, std::string>& files, size_t piece) {
  auto get = [&](const std::string& n) { return files.count(n) ? files.at(n) : std::string(); };
  Value v = ap::json::parse(s.open_files(spec_of(files), get("config.json"), get(ap::kHfIndexFile), "", ""));
  if (!v.find("ok")->as_bool()) return v.dump();
  std::vector<std::string> names;
  for (const Value& n : v.find("files")->items()) names.push_back(n.as_string());
  for (int round = 0;; ++round) {
    REQUIRE(round < 16);
    v = ap::json::parse(s.open_files_plan());
    if (!v.find("ok")->as_bool() || !v.find("need")) break;
    for (const Value& r : v.find("need")->items()) {
      const size_t i = static_cast<size_t>(r.items()[0].as_number());
      const size_t at = static_cast<size_t>(r.items()[1].as_number()), n = static_cast<size_t>(r.items()[2].as_number());
      Value x;
      ok(s.open_files_piece(static_cast<double>(i), static_cast<double>(at), files.at(names[i]).substr(at, n)), x);
    }
  }
  if (!v.find("ok")->as_bool()) return v.dump();
  for (const Value& r : v.find("read")->items()) {
    const std::string& bytes = files.at(names[static_cast<size_t>(r.items()[0].as_number())]);
    const size_t at = static_cast<size_t>(r.items()[1].as_number()), n = static_cast<size_t>(r.items()[2].as_number());
    for (size_t off = 0; off < n; off += piece) {
      const size_t m = std::min(piece, n - off);
      REQUIRE(s.open_size() >= m);
      std::memcpy(s.open_buffer(), bytes.data() + at + off, m);
      Value x;
      ok(s.open_feed(static_cast<double>(m)), x);
    }
  }
  return s.open_finish();
}

}  // namespace

TEST_CASE("open_files: a sharded folder fed in pieces is the model the whole-folder reader makes", "[gpt][open]") {
  const auto files = folder();
  ap::GptSession s;
  Value v;
  ok(open(s, files, 100), v);
  CHECK(v.find("opened")->find("format")->as_string() == "hf-folder");
  CHECK(v.find("opened")->find("name")->as_string() == "tiny");
  CHECK(v.find("config")->find("n_kv_head")->as_number() == 2);
  // the reference: the folder read whole (hf_folder.h) and loaded (llama_load.h)
  const ap::HfFolder f = ap::read_hf_folder(files);
  ap::LlamaWeights w;
  w.config = f.config;
  for (const ap::HfTensor& t : f.tensors)
    w.tensors.push_back({t.name, t.shape, ap::quant::Type::F32, files.at(t.file).data() + t.offset, t.bytes});
  const ap::LlamaModel m = ap::load_llama(w, "tiny");
  const ap::GPT& model = s.trainer()->model();
  REQUIRE(model.num_parameters() == static_cast<int64_t>(m.params.size()));
  CHECK(std::memcmp(model.params(), m.params.data(), m.params.size() * sizeof(float)) == 0);
}

TEST_CASE("open_files: a missing shard, no config.json and a truncated shard are refused by name", "[gpt][open]") {
  const auto files = folder();
  ap::GptSession s;
  Value v;
  ok(open(s, files, 1 << 20), v);
  const int64_t n = s.trainer()->model().num_parameters();
  auto without = files;
  without.erase("model-00002-of-00002.safetensors");
  v = ap::json::parse(open(s, without, 1 << 20));
  CHECK(v.find("error")->as_string().rfind("model-00002-of-00002.safetensors is listed in model.safetensors.index.json but was not given", 0) == 0);
  CHECK(v.find("field")->as_string() == "model-00002-of-00002.safetensors");
  without = files;
  without.erase("config.json");
  v = ap::json::parse(open(s, without, 1 << 20));
  CHECK(v.find("field")->as_string() == "config.json");
  auto cut = files;
  std::string& shard = cut["model-00001-of-00002.safetensors"];
  shard.resize(shard.size() - 8);
  v = ap::json::parse(open(s, cut, 1 << 20));
  INFO(v.dump());
  CHECK(v.find("error")->as_string().rfind("model-00001-of-00002.safetensors: tensor", 0) == 0);
  CHECK(v.find("error")->as_string().find("(truncated)") != std::string::npos);
  // the model opened first is still the session's
  REQUIRE(s.trainer());
  CHECK(s.trainer()->model().num_parameters() == n);
}

TEST_CASE("open_files: a BF16 folder's weights stay BF16, in the buffers they were read into", "[gpt][open][typed]") {
  const auto files = folder(true);
  ap::GptSession s;
  Value v;
  ok(open(s, files, 100), v);
  const Value& opened = *v.find("opened");
  REQUIRE(opened.find("weight_types")->items().size() == 1);
  CHECK(opened.find("weight_types")->items()[0].as_string() == "BF16");
  const ap::GPT& model = s.trainer()->model();
  REQUIRE(model.typed());
  // the weights: every tensor's bytes once (the model keeps the buffers they were fed into), and
  // the norms again in float32 — not the 4 bytes a weight of float32
  const ap::HfFolder f = ap::read_hf_folder(files);
  ap::LlamaWeights w;
  w.config = f.config;
  int64_t tensors = 0;
  for (const ap::HfTensor& t : f.tensors) {
    w.tensors.push_back({t.name, t.shape, ap::quant::Type::BF16, files.at(t.file).data() + t.offset, t.bytes});
    tensors += static_cast<int64_t>(t.bytes);
  }
  const ap::GPTConfig g = ap::llama_gpt_config(w.config);
  const int64_t norms = 4 * (2 * g.n_layer + 1) * int64_t(g.n_embd);
  CHECK(model.weight_bytes() == tensors + norms);
  CHECK(static_cast<int64_t>(opened.find("weight_bytes")->as_number()) == tensors + norms);
  // what the memory checks count for it: the weights as stored
  CHECK(ap::GPT::typed_weight_bytes(g, tensors - norms / 2) == tensors + norms / 2);
  CHECK(ap::GPT::memory_bytes(g, 1, 1, ap::ModelUse::infer, 0) + 4 * g.num_parameters() ==
        ap::GPT::memory_bytes(g, 1, 1, ap::ModelUse::infer));
  // the same logits as the model that copies the bytes (open_llama without an owner), bit for bit
  std::unique_ptr<ap::GPT> copy = ap::open_llama(w, "tiny");
  ap::GPT& opened_model = s.trainer()->model();
  const int ids[5] = {3, 1, 4, 1, 5};
  opened_model.forward(ids, nullptr, 1, 5);
  copy->forward(ids, nullptr, 1, 5);
  CHECK(std::memcmp(opened_model.logits(), copy->logits(), 5 * sizeof(float) * g.vocab_size) == 0);
  CHECK(copy->weight_bytes() >= tensors - norms / 2);
}

TEST_CASE("open_files: a model too big is refused in figures, its weights the files' bytes", "[gpt][open]") {
  // Llama 3 8B's shape, its one file said to be 40 GB: refused before anything is read
  Value c = ap::json::parse(kConfig);
  for (const auto& [k, n] : {std::pair<const char*, int>{"hidden_size", 4096}, {"intermediate_size", 14336},
                             {"num_hidden_layers", 32}, {"num_attention_heads", 32}, {"num_key_value_heads", 8}})
    c.set(k, n);
  const double size = 40e9;
  const std::string spec = R"({"name":"big","files":[{"name":"model.safetensors","size":40000000000}]})";
  ap::GptSession s;
  const Value v = ap::json::parse(s.open_files(spec, c.dump(), "", "", ""));
  INFO(v.dump());
  CHECK(v.find("field")->as_string() == "memory");
  char figure[32];
  std::snprintf(figure, sizeof figure, "%.2f GiB", size / double(int64_t(1) << 30));
  // the need: the weights as stored (the file's bytes) with the rest of the model, not 4 bytes a parameter
  const ap::GPTConfig g = ap::llama_gpt_config(ap::read_hf_config(c.dump()));
  const int64_t need = ap::GPT::memory_bytes(g, 1, 1, ap::ModelUse::infer, ap::GPT::typed_weight_bytes(g, int64_t(size)));
  char needs[32];
  std::snprintf(needs, sizeof needs, "%.2f GiB", need / double(int64_t(1) << 30));
  CHECK(v.find("error")->as_string().find(std::string("needs about ") + needs + " (") != std::string::npos);
  CHECK(v.find("error")->as_string().find(std::string("the weights' ") + figure + " as the files hold them") != std::string::npos);
  CHECK(!s.trainer());  // nothing was made
}

TEST_CASE("open_files: the walk and the interpretability calls leave a BF16 model BF16, with the float model's answers",
          "[gpt][open][typed][walk][interp]") {
  // the same model twice: opened from BF16 files (typed), and from F32 files of the same values
  ap::GptSession typed, plain;
  Value v;
  ok(open(typed, folder(true), 100), v);
  ok(open(plain, folder(false, true), 100), v);
  const ap::GPT& model = typed.trainer()->model();
  REQUIRE(model.typed());
  plain.trainer()->model().to_float32();  // opened F32 files stay typed (F32 parts): the float32 model
  REQUIRE(!plain.trainer()->model().typed());
  const int64_t bytes = model.weight_bytes();
  CHECK(bytes * 19 / 10 < plain.trainer()->model().weight_bytes());
  // the reference tier: every answer the float model's, to the bit (test_typed_interp.cpp)
  const ap::kernels::Tier was = ap::kernels::set_tier(ap::kernels::Tier::reference);
  const std::string prompt = R"("prompt":"[3][1][4][1][5][9][2][6]")";  // token ids: no tokenizer.json
  const std::string pair = R"("clean":"[3][1][4][1][5]","corrupted":"[3][1][2][1][5]")";
  const std::vector<std::pair<std::string, std::function<std::string(ap::GptSession&)>>> calls = {
      {"block_trace", [&](ap::GptSession& s) { return s.block_trace("{" + prompt + ",\"position\":5}"); }},
      {"weight_row c_attn", [](ap::GptSession& s) { return s.weight_row(R"({"weight":"c_attn","layer":1,"row":7})"); }},
      {"weight_row c_fc", [](ap::GptSession& s) { return s.weight_row(R"({"weight":"c_fc","layer":0,"row":60})"); }},
      {"weight_row lm_head", [](ap::GptSession& s) { return s.weight_row(R"({"weight":"lm_head","row":39})"); }},
      {"lens", [&](ap::GptSession& s) { return ap::interp_call(s, "lens", "{" + prompt + "}"); }},
      {"attribute", [&](ap::GptSession& s) { return ap::interp_call(s, "attribute", "{" + prompt + ",\"token\":7}"); }},
      {"patch", [&](ap::GptSession& s) {
         return ap::interp_call(s, "patch", "{" + pair + R"(,"token":7,"other":8})");
       }},
      {"attribution_patch", [&](ap::GptSession& s) {
         return ap::interp_call(s, "attribution_patch", "{" + pair + R"(,"token":7})");
       }}};
  for (const auto& [name, call] : calls) {
    INFO(name);
    const std::string got = call(typed), want = call(plain);
    INFO(got.substr(0, 300));
    CHECK(ap::json::parse(got).find("ok")->as_bool());
    CHECK(got == want);
    if (name.rfind("weight_row", 0) == 0) {  // the row shown is the float32 model's (its p(), not weight_row)
      const Value w = ap::json::parse(got);
      const ap::GPTParams& f = plain.trainer()->model().p();
      const int C = plain.trainer()->model().config().n_embd, row = static_cast<int>(w.find("row")->as_number());
      const float* at = name == "weight_row c_attn" ? f.h[1].c_attn_w : name == "weight_row c_fc" ? f.h[0].c_fc_w : f.wte;
      const auto& shown = w.find("w")->items();
      REQUIRE(shown.size() == static_cast<size_t>(C));
      for (int i = 0; i < C; ++i) CHECK(static_cast<float>(shown[static_cast<size_t>(i)].as_number()) == at[int64_t(row) * C + i]);
    }
    CHECK(model.typed());
    CHECK(model.weight_bytes() == bytes);
  }
  ap::kernels::set_tier(was);
}
