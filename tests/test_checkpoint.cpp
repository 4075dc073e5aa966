// test_checkpoint.cpp — the safetensors checkpoint (checkpoint.h) as a user meets it:
//  - the round trip is bit-exact (every tensor, both moments, the metadata), for a task run and
//    for a text run whose vocabulary holds Chinese characters; the same state gives the same bytes;
//  - the file is safetensors: the header length, the padded JSON header, nanoGPT's names in order,
//    little-endian data;
//  - resuming through the bytes continues bit for bit: N steps, save, load, M steps gives the
//    losses of an uninterrupted N + M run of the same seed;
//  - writes are atomic: a failing write or rename leaves the old file whole and no temporary file
//    (file_io.h, whose bounded read is tested here too);
//  - every corruption gets an error that names the byte, the tensor or the metadata key, and a
//    failed load overwrites nothing.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "api/checkpoint.h"
#include "formats/file_io.h"
#include "api/gpt_session.h"
#include "formats/json.h"
#include "gpt_test_util.h"
#include "input_error_util.h"

using input_error_util::Error;
using input_error_util::error_of;
using gpt_test_util::quick_train;

namespace {

// Small enough to be quick under ASan, with every kind of tensor (2 layers, 2 heads).
ap::GPTConfig small_model() {
  ap::GPTConfig c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 8;
  c.block_size = 8;
  return c;
}

ap::DataSpec copy_task() {
  ap::DataSpec d;
  d.task = "copy";
  d.n_chars = 2000;
  return d;
}

std::string chinese_text() {
  std::string text;
  for (int i = 0; i < 12; ++i) text += "注意力就是你所需要的。attention is all you need.\n";
  return text;
}

ap::DataSpec chinese_data() {
  ap::DataSpec d;
  d.text = chinese_text();
  d.name = "诗.txt";
  return d;
}

// A fresh directory for one test, removed at the end.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ap_checkpoint_XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void check_same_state(const ap::TrainState& a, const ap::TrainState& b) {
  CHECK(a.model == b.model);
  CHECK(a.train.batch_size == b.train.batch_size);
  CHECK(a.train.steps == b.train.steps);
  CHECK(same_bits(a.train.lr, b.train.lr));
  CHECK(same_bits(a.train.min_lr, b.train.min_lr));
  CHECK(a.train.warmup_steps == b.train.warmup_steps);
  CHECK(same_bits(a.train.weight_decay, b.train.weight_decay));
  CHECK(same_bits(a.train.beta1, b.train.beta1));
  CHECK(same_bits(a.train.beta2, b.train.beta2));
  CHECK(same_bits(a.train.grad_clip, b.train.grad_clip));
  CHECK(a.train.eval_interval == b.train.eval_interval);
  CHECK(a.train.eval_batches == b.train.eval_batches);
  CHECK(a.train.seed == b.train.seed);
  CHECK(a.task == b.task);
  CHECK(a.n_chars == b.n_chars);
  CHECK(a.text_name == b.text_name);
  CHECK(a.text_fingerprint == b.text_fingerprint);
  CHECK(a.vocab == b.vocab);
  CHECK(a.step == b.step);
  CHECK(a.sampler_state == b.sampler_state);
  CHECK(a.adam_t == b.adam_t);
  CHECK(same_bits(a.params, b.params));
  CHECK(same_bits(a.m, b.m));
  CHECK(same_bits(a.v, b.v));
  CHECK(same_bits(a.last_val_loss, b.last_val_loss));
}

}  // namespace

TEST_CASE("Checkpoint: the round trip is bit-exact, and the same state gives the same bytes", "[checkpoint]") {
  SECTION("a task run") {
    ap::Trainer tr(small_model(), quick_train(20, 4), copy_task());
    for (int i = 0; i < 3; ++i) tr.step();
    tr.evaluate();
    const ap::TrainState s = tr.state();
    REQUIRE(s.last_val_loss > 0.0f);
    const std::string bytes = ap::save_checkpoint(s);
    CHECK(ap::save_checkpoint(s) == bytes);
    const ap::TrainState back = ap::load_checkpoint(bytes);
    check_same_state(s, back);
    CHECK(ap::save_checkpoint(back) == bytes);
  }
  SECTION("a text run with Chinese characters in its vocabulary, never evaluated") {
    ap::Trainer tr(small_model(), quick_train(20, 4), chinese_data());
    for (int i = 0; i < 2; ++i) tr.step();
    const ap::TrainState s = tr.state();
    REQUIRE(s.last_val_loss == -1.0f);
    REQUIRE(std::find(s.vocab.begin(), s.vocab.end(), U'注') != s.vocab.end());
    const std::string bytes = ap::save_checkpoint(s);
    const ap::TrainState back = ap::load_checkpoint(bytes);
    check_same_state(s, back);
    CHECK(back.text_name == "诗.txt");
    CHECK(ap::save_checkpoint(back) == bytes);
  }
}

TEST_CASE("Checkpoint: resuming from the bytes continues bit for bit", "[checkpoint]") {
  constexpr int N = 4, M = 4;
  SECTION("a task run") {
    ap::Trainer whole(small_model(), quick_train(N + M, 4), copy_task());
    std::vector<float> expected;
    for (int i = 0; i < N + M; ++i) expected.push_back(whole.step().loss);

    ap::Trainer first(small_model(), quick_train(N + M, 4), copy_task());
    for (int i = 0; i < N; ++i) REQUIRE(first.step().loss == expected[static_cast<size_t>(i)]);
    TempDir dir;  // through a file, as the CLI resumes
    const std::string path = (dir.path / "run.safetensors").string();
    ap::write_checkpoint_file(path, ap::save_checkpoint(first.state()));
    ap::Trainer resumed(ap::load_checkpoint(ap::read_checkpoint_file(path)));
    CHECK(resumed.steps_done() == N);
    for (int i = N; i < N + M; ++i) {
      const float loss = resumed.step().loss;
      INFO("step " << i);
      REQUIRE(same_bits(loss, expected[static_cast<size_t>(i)]));
    }
    CHECK(same_bits(resumed.evaluate(), whole.evaluate()));
    CHECK(same_bits(resumed.state().params, whole.state().params));
  }
  SECTION("a text run") {
    ap::Trainer whole(small_model(), quick_train(N + M, 4), chinese_data());
    std::vector<float> expected;
    for (int i = 0; i < N + M; ++i) expected.push_back(whole.step().loss);
    ap::Trainer first(small_model(), quick_train(N + M, 4), chinese_data());
    for (int i = 0; i < N; ++i) first.step();
    ap::Trainer resumed(ap::load_checkpoint(ap::save_checkpoint(first.state())), chinese_text());
    for (int i = N; i < N + M; ++i) REQUIRE(same_bits(resumed.step().loss, expected[static_cast<size_t>(i)]));
  }
}

// ---------------------------------------------------------------- the file's layout

namespace {

Error load_error(const std::string& bytes, const ap::GPTConfig* expected = nullptr) {
  return error_of([&] { ap::load_checkpoint(bytes, expected); });
}

uint64_t header_length(const std::string& bytes) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  return n;
}

std::string le64(uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xFF);
  return out;
}

ap::json::Value header_of(const std::string& bytes) { return ap::json::parse(bytes.substr(8, header_length(bytes))); }
std::string data_of(const std::string& bytes) { return bytes.substr(8 + header_length(bytes)); }
uint64_t data_start(const std::string& bytes) { return 8 + header_length(bytes); }

// A file with this header (written as given, not padded) and data.
std::string assemble(const std::string& header_text, const std::string& data) {
  return le64(header_text.size()) + header_text + data;
}

std::string edit_header(const std::string& bytes, const std::function<void(ap::json::Value&)>& edit) {
  ap::json::Value h = header_of(bytes);
  edit(h);
  return assemble(h.dump(), data_of(bytes));
}

ap::json::Value without(const ap::json::Value& object, const std::string& key) {
  ap::json::Value out = ap::json::Value::object();
  for (const auto& m : object.members())
    if (m.first != key) out.set(m.first, m.second);
  return out;
}

std::string with_meta(const std::string& bytes, const std::string& key, const std::string& value) {
  return edit_header(bytes, [&](ap::json::Value& h) {
    ap::json::Value meta = *h.find("__metadata__");
    meta.set(key, value);
    h.set("__metadata__", meta);
  });
}

std::string without_meta(const std::string& bytes, const std::string& key) {
  return edit_header(bytes, [&](ap::json::Value& h) { h.set("__metadata__", without(*h.find("__metadata__"), key)); });
}

// A tensor's header entry, edited.
std::string with_entry(const std::string& bytes, const std::string& name, const std::string& key,
                       const ap::json::Value& value) {
  return edit_header(bytes, [&](ap::json::Value& h) {
    ap::json::Value e = *h.find(name);
    e.set(key, value);
    h.set(name, e);
  });
}

ap::json::Value pair(long long a, long long b) {
  ap::json::Value v = ap::json::Value::array();
  v.push(a);
  v.push(b);
  return v;
}

std::pair<uint64_t, uint64_t> offsets_of(const std::string& bytes, const std::string& name) {
  const ap::json::Value header = header_of(bytes);
  const ap::json::Value& o = *header.find(name)->find("data_offsets");
  return {static_cast<uint64_t>(o[0].as_number()), static_cast<uint64_t>(o[1].as_number())};
}

// The file byte of element i of a tensor.
uint64_t byte_of(const std::string& bytes, const std::string& name, uint64_t i) {
  return data_start(bytes) + offsets_of(bytes, name).first + 4 * i;
}

std::string with_float(std::string bytes, uint64_t at, float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  for (int i = 0; i < 4; ++i) bytes[at + static_cast<uint64_t>(i)] = static_cast<char>((u >> (8 * i)) & 0xFF);
  return bytes;
}

// A small trained checkpoint: 2 layers, n_embd 8, the copy task, 2 steps, evaluated.
const std::string& good_checkpoint() {
  static const std::string bytes = [] {
    ap::Trainer tr(small_model(), quick_train(20, 4), copy_task());
    tr.step();
    tr.step();
    tr.evaluate();
    return ap::save_checkpoint(tr.state());
  }();
  return bytes;
}

}  // namespace

TEST_CASE("Checkpoint: the file is safetensors with nanoGPT's names, little-endian", "[checkpoint]") {
  ap::Trainer tr(small_model(), quick_train(20, 4), copy_task());
  tr.step();
  const ap::TrainState s = tr.state();
  const std::string bytes = ap::save_checkpoint(s);
  const uint64_t n = header_length(bytes);
  CHECK(n % 8 == 0);
  const std::string text = bytes.substr(8, n);
  CHECK(text.front() == '{');
  const size_t close = text.find_last_of('}');
  CHECK(text.substr(close + 1) == std::string(n - close - 1, ' '));  // padded with spaces
  CHECK(n - close - 1 < 8);

  const ap::json::Value h = ap::json::parse(text);
  std::vector<std::string> names;
  for (const auto& m : h.members()) names.push_back(m.first);
  std::vector<std::string> expected = {"__metadata__"};
  for (const ap::ParamTensor& p : ap::param_tensors(s.model)) expected.push_back(p.name);
  expected.push_back("lm_head.weight");
  for (const char* kind : {"optimizer.exp_avg.", "optimizer.exp_avg_sq."})
    for (const ap::ParamTensor& p : ap::param_tensors(s.model)) expected.push_back(kind + p.name);
  CHECK(names == expected);
  CHECK(h.find("transformer.h.1.attn.c_attn.weight")->dump() ==
        R"({"dtype":"F32","shape":[24,8],"data_offsets":[)" +
            std::to_string(4 * ap::param_tensors(s.model)[2 + 12 + 2].offset) + "," +
            std::to_string(4 * (ap::param_tensors(s.model)[2 + 12 + 2].offset + 24 * 8)) + "]}");
  CHECK(h.find("lm_head.weight")->find("shape")->dump() == "[12,8]");
  CHECK(h.find("optimizer.exp_avg_sq.transformer.ln_f.bias")->find("data_offsets")->dump() ==
        "[" + std::to_string(4 * (3 * s.params.size() + 12 * 8) - 32) + "," +
            std::to_string(4 * (3 * s.params.size() + 12 * 8)) + "]");
  const ap::json::Value& meta = *h.find("__metadata__");
  CHECK(meta.find("format")->as_string() == "attention-playground-gpt");
  CHECK(meta.find("format_version")->as_string() == "1");
  CHECK(meta.find("config")->as_string() ==
        R"({"vocab_size":12,"block_size":8,"n_layer":2,"n_head":2,"n_embd":8,"mask":"strict","softmax":"stable"})");
  CHECK(meta.find("vocab")->as_string() == R"(["\n","=","a","b","c","d","e","f","g","h","i","j"])");
  CHECK(meta.find("data")->as_string() == R"({"task":"copy","n_chars":2000})");
  CHECK(meta.find("step")->as_string() == "1");
  CHECK(meta.find("seed")->as_string() == "11");
  CHECK(meta.find("rng_state")->as_string() == std::to_string(s.sampler_state));
  CHECK(meta.find("adam_t")->as_string() == "1");
  CHECK(meta.find("val_loss")->as_string() == "");

  // Little-endian whatever the host: the bytes of wte[0][1] and of v's last element, by hand.
  auto le_bytes = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    std::string out;
    for (int i = 0; i < 4; ++i) out += static_cast<char>((u >> (8 * i)) & 0xFF);
    return out;
  };
  CHECK(bytes.substr(8 + n + 4, 4) == le_bytes(s.params[1]));
  CHECK(bytes.substr(bytes.size() - 4) == le_bytes(s.v.back()));
  CHECK(bytes.size() == 8 + n + 4 * (3 * s.params.size() + 12 * 8));
  // lm_head is wte stored again.
  const auto lm = offsets_of(bytes, "lm_head.weight");
  CHECK(bytes.substr(8 + n + lm.first, lm.second - lm.first) == bytes.substr(8 + n, 12 * 8 * 4));
}

TEST_CASE("Checkpoint: a truncated file or a bad header length names the byte", "[checkpoint][corrupt]") {
  const std::string& good = good_checkpoint();
  const uint64_t n = header_length(good);
  Error e = load_error("");
  CHECK(e.field == "checkpoint");
  CHECK_THAT(e.message, Catch::Contains("ends at byte 0") && Catch::Contains("header length"));
  e = load_error(good.substr(0, 5));
  CHECK_THAT(e.message, Catch::Contains("ends at byte 5") && Catch::Contains("truncated"));
  e = load_error(good.substr(0, 8 + n / 2));  // inside the header
  CHECK(e.field == "checkpoint");
  CHECK_THAT(e.message, Catch::Contains("bytes 8 to " + std::to_string(8 + n - 1)) &&
                            Catch::Contains("ends at byte " + std::to_string(8 + n / 2)));
  e = load_error(le64(uint64_t(1) << 40) + good.substr(8));
  CHECK(e.field == "checkpoint");
  CHECK_THAT(e.message, Catch::Contains("bytes 0 to 7") && Catch::Contains("1099511627776") &&
                            Catch::Contains("more than the limit of 16777216"));
  e = load_error(le64(ap::kMaxCheckpointHeader + 1) + good.substr(8));
  CHECK_THAT(e.message, Catch::Contains("more than the limit"));
  e = load_error(le64(1) + "{");
  CHECK_THAT(e.message, Catch::Contains("too short"));
  // Truncated in the data: the tensor that runs past the end is named, with the file's last byte.
  const std::string cut = good.substr(0, good.size() - 10);
  e = load_error(cut);
  CHECK(e.field == "optimizer.exp_avg_sq.transformer.ln_f.bias");
  CHECK_THAT(e.message, Catch::Contains("but the file ends at byte " + std::to_string(cut.size())) &&
                            Catch::Contains("truncated"));
  e = load_error(good.substr(0, 8 + n));  // the header alone
  CHECK(e.field == "transformer.wte.weight");
  CHECK_THAT(e.message, Catch::Contains("truncated"));
  // One byte too many.
  e = load_error(good + "x");
  CHECK(e.field == "checkpoint");
  CHECK_THAT(e.message, Catch::Contains("1 bytes after the last tensor") &&
                            Catch::Contains("bytes " + std::to_string(good.size())) && Catch::Contains("trailing"));
}

TEST_CASE("Checkpoint: a header that is not a JSON object of tensors is refused with its byte", "[checkpoint][corrupt]") {
  const std::string& good = good_checkpoint();
  const std::string data = data_of(good);
  Error e = load_error(assemble(R"({"__metadata__": {"format": x}})", data));
  CHECK(e.field == "checkpoint");
  CHECK_THAT(e.message, Catch::Contains("not valid JSON, at byte 36") && Catch::Contains("unexpected character"));
  e = load_error(assemble("[1, 2]  ", data));
  CHECK_THAT(e.message, Catch::Contains("not an object"));
  std::string bad_utf8 = R"({"__metadata__":{"format":"caf)";
  bad_utf8 += "\xC3\x28\"}}";
  e = load_error(assemble(bad_utf8, data));
  CHECK_THAT(e.message, Catch::Contains("at byte 38") && Catch::Contains("invalid UTF-8"));
  // A tensor given twice is refused by the JSON reader, naming it.
  const std::string text = good.substr(8, header_length(good));
  const size_t close = text.find_last_of('}');
  const std::string twice = text.substr(0, close) + R"(,"lm_head.weight":{"dtype":"F32","shape":[12,8],"data_offsets":[0,384]}})";
  e = load_error(assemble(twice, data));
  CHECK_THAT(e.message, Catch::Contains("repeated key \"lm_head.weight\""));
  e = load_error(edit_header(good, [](ap::json::Value& h) { h = without(h, "__metadata__"); }));
  CHECK(e.field == "__metadata__");
  CHECK_THAT(e.message, Catch::Contains("not an Attention Playground checkpoint"));
}

TEST_CASE("Checkpoint: bad metadata is refused naming its key", "[checkpoint][corrupt]") {
  const std::string& good = good_checkpoint();
  struct Case {
    std::string key, value, field, says;
  };
  const std::vector<Case> cases = {
      {"format", "safetensors-llama", "__metadata__.format", "not an Attention Playground checkpoint"},
      {"format_version", "2", "__metadata__.format_version", "newer version"},
      {"format_version", "one", "__metadata__.format_version", "reads version 1"},
      {"config", "{\"vocab_size\":12", "__metadata__.config", "not valid JSON"},
      {"config", R"({"vocab_size":12,"block_size":8,"n_layer":2,"n_head":3,"n_embd":8,"mask":"strict","softmax":"stable"})",
       "__metadata__.config.n_head", "n_head must divide n_embd"},
      {"config", R"({"vocab_size":12,"block_size":8,"n_layer":2,"n_head":2,"n_embd":8,"mask":"strict"})",
       "__metadata__.config.softmax", "has no \"softmax\""},
      {"config", R"({"vocab_size":12,"block_size":8,"n_layer":2,"n_head":2,"n_embd":8,"mask":"strict","softmax":"stable","dropout":0})",
       "__metadata__.config.dropout", "unknown key \"dropout\""},
      {"config", R"({"vocab_size":12,"block_size":8,"n_layer":2,"n_head":2,"n_embd":8,"mask":"strict","softmax":"stable","activation":"relu"})",
       "__metadata__.config.activation", "relu"},
      {"config", R"({"vocab_size":13,"block_size":8,"n_layer":2,"n_head":2,"n_embd":8,"mask":"strict","softmax":"stable"})",
       "__metadata__.vocab", "12 characters but __metadata__.config has vocab_size 13"},
      {"train", R"({"batch_size":4})", "__metadata__.train.steps", "has no \"steps\""},
      {"vocab", R"(["\n","=","b","a","c","d","e","f","g","h","i","j"])", "__metadata__.vocab", "not sorted"},
      {"vocab", R"(["\n","=","ab","c","d","e","f","g","h","i","j","k"])", "__metadata__.vocab",
       "entry 2 (counting from 0) is \"ab\""},
      {"vocab", R"(["\n","=","a","b","c","d","e","f","g","h","i","k"])", "__metadata__.vocab", "not the alphabet of the task \"copy\""},
      {"data", R"({"task":"poetry","n_chars":2000})", "__metadata__.data.task", "poetry"},
      {"data", R"({"task":"copy","n_chars":-5})", "__metadata__.data.n_chars", "n_chars"},
      {"data", R"({"text_name":"a.txt","text_fingerprint":"xyz"})", "__metadata__.data.text_fingerprint", "16 lowercase hex"},
      {"step", "-1", "__metadata__.step", "decimal integer"},
      {"step", "01", "__metadata__.step", "decimal integer"},
      {"step", "18446744073709551616", "__metadata__.step", "decimal integer"},
      {"step", "2000000", "__metadata__.step", "more than the limit"},
      {"seed", "1e3", "__metadata__.seed", "decimal integer"},
      {"rng_state", "", "__metadata__.rng_state", "decimal integer"},
      {"adam_t", "3", "__metadata__.adam_t", "more updates than the 2 steps"},
      {"val_loss", "-0.5", "__metadata__.val_loss", "a number ≥ 0"},
      {"val_loss", "low", "__metadata__.val_loss", "a number ≥ 0"},
  };
  for (const Case& c : cases) {
    const Error e = load_error(with_meta(good, c.key, c.value));
    INFO(c.key << " = " << c.value << " → " << e.field << ": " << e.message);
    CHECK(e.field == c.field);
    CHECK_THAT(e.message, Catch::Contains(c.says));
    CHECK_THAT(e.message, Catch::Contains(c.field.substr(0, c.field.find('.', 13))));
  }
  // A safetensors file from elsewhere (transformers writes {"format":"pt"}) is told so first.
  Error e = load_error(edit_header(good, [](ap::json::Value& h) {
    ap::json::Value meta = ap::json::Value::object();
    meta.set("format", "pt");
    meta.set("modelspec.title", "x");
    h.set("__metadata__", meta);
  }));
  CHECK(e.field == "__metadata__.format");
  CHECK_THAT(e.message, Catch::Contains("\"pt\", not \"attention-playground-gpt\": this safetensors file is not"));
  e = load_error(without_meta(good, "rng_state"));
  CHECK(e.field == "__metadata__.rng_state");
  CHECK_THAT(e.message, Catch::Contains("has no \"rng_state\""));
  e = load_error(with_meta(good, "author", "me"));
  CHECK(e.field == "__metadata__");
  CHECK_THAT(e.message, Catch::Contains("unknown key \"author\""));
  e = load_error(edit_header(good, [](ap::json::Value& h) {
    ap::json::Value meta = *h.find("__metadata__");
    meta.set("step", 2);
    h.set("__metadata__", meta);
  }));
  CHECK(e.field == "__metadata__.step");
  CHECK_THAT(e.message, Catch::Contains("must be a string"));
  // Large 64-bit values that JSON numbers could not hold exactly read back exactly.
  const ap::TrainState s = ap::load_checkpoint(with_meta(with_meta(good, "seed", "18446744073709551615"), "rng_state",
                                                         "9007199254740993"));
  CHECK(s.train.seed == UINT64_MAX);
  CHECK(s.sampler_state == 9007199254740993ull);
}

TEST_CASE("Checkpoint: a wrong tensor is refused by name", "[checkpoint][corrupt]") {
  const std::string& good = good_checkpoint();
  const std::string wpe = "transformer.wpe.weight";
  Error e = load_error(with_entry(good, wpe, "dtype", "F16"));
  CHECK(e.field == wpe);
  CHECK_THAT(e.message, Catch::Contains("dtype \"F16\"") && Catch::Contains("F32 only"));
  e = load_error(with_entry(good, wpe, "dtype", 32));
  CHECK_THAT(e.message, Catch::Contains("dtype 32"));
  ap::json::Value shape = ap::json::Value::array();
  shape.push(8);
  shape.push(4);
  shape.push(2);
  e = load_error(with_entry(good, wpe, "shape", shape));
  CHECK(e.field == wpe);
  CHECK_THAT(e.message, Catch::Contains("shape [8, 4, 2]") && Catch::Contains("needs [8, 8] = [block_size, n_embd]"));
  shape = ap::json::Value::array();
  shape.push(8);
  shape.push(-8);
  e = load_error(with_entry(good, wpe, "shape", shape));
  CHECK(e.field == wpe);
  CHECK_THAT(e.message, Catch::Contains("whole numbers ≥ 0, got -8"));
  e = load_error(with_entry(good, wpe, "bias", true));
  CHECK_THAT(e.message, Catch::Contains("unknown key \"bias\""));
  e = load_error(edit_header(good, [&](ap::json::Value& h) { h.set(wpe, without(*h.find(wpe), "dtype")); }));
  CHECK(e.field == wpe);
  CHECK_THAT(e.message, Catch::Contains("no \"dtype\""));
  e = load_error(edit_header(good, [&](ap::json::Value& h) { h.set(wpe, "F32"); }));
  CHECK(e.field == wpe);

  // The config disagrees with the tensors: a wider n_embd, one layer more, one layer less.
  e = load_error(with_meta(good, "config",
                           R"({"vocab_size":12,"block_size":8,"n_layer":2,"n_head":2,"n_embd":16,"mask":"strict","softmax":"stable"})"));
  CHECK(e.field == "transformer.wte.weight");
  CHECK_THAT(e.message, Catch::Contains("shape [12, 8]") && Catch::Contains("n_embd 16") &&
                            Catch::Contains("needs [12, 16] = [vocab_size, n_embd]"));
  e = load_error(with_meta(good, "config",
                           R"({"vocab_size":12,"block_size":8,"n_layer":3,"n_head":2,"n_embd":8,"mask":"strict","softmax":"stable"})"));
  CHECK(e.field == "transformer.h.2.ln_1.weight");
  CHECK_THAT(e.message, Catch::Contains("has no tensor \"transformer.h.2.ln_1.weight\"") && Catch::Contains("n_layer 3"));
  e = load_error(with_meta(good, "config",
                           R"({"vocab_size":12,"block_size":8,"n_layer":1,"n_head":2,"n_embd":8,"mask":"strict","softmax":"stable"})"));
  CHECK(e.field == "transformer.h.1.ln_1.weight");
  CHECK_THAT(e.message, Catch::Contains("unknown tensor \"transformer.h.1.ln_1.weight\"") &&
                            Catch::Contains("layers are 0 to 0"));

  // A missing tensor: the last one, with its data.
  const std::string last = "optimizer.exp_avg_sq.transformer.ln_f.bias";
  std::string missing = edit_header(good, [&](ap::json::Value& h) { h = without(h, last); });
  missing.resize(missing.size() - 8 * 4);
  e = load_error(missing);
  CHECK(e.field == last);
  CHECK_THAT(e.message, Catch::Contains("has no tensor \"" + last + "\" ([8])"));
  // An unknown tensor, with its data.
  ap::json::Value extra = ap::json::Value::object();
  extra.set("dtype", "F32");
  extra.set("shape", ap::json::Value::array());
  const uint64_t end = good.size() - data_start(good);
  extra.set("data_offsets", pair(static_cast<long long>(end), static_cast<long long>(end + 4)));
  e = load_error(edit_header(good, [&](ap::json::Value& h) { h.set("optimizer.step", extra); }) + std::string(4, '\0'));
  CHECK(e.field == "optimizer.step");
  CHECK_THAT(e.message, Catch::Contains("unknown tensor \"optimizer.step\""));
}

TEST_CASE("Checkpoint: data_offsets that overlap, leave gaps, run backwards or past the end", "[checkpoint][corrupt]") {
  const std::string& good = good_checkpoint();
  const std::string a = "transformer.h.0.ln_1.weight", b = "transformer.h.0.ln_1.bias";
  const auto [wb, we] = offsets_of(good, "transformer.wpe.weight");
  const auto [ab, ae] = offsets_of(good, a);
  const auto [bb, be] = offsets_of(good, b);
  REQUIRE(ae == bb);
  auto ll = [](uint64_t x) { return static_cast<long long>(x); };
  Error e = load_error(with_entry(good, b, "data_offsets", pair(ll(bb + 4), ll(be + 4))));
  CHECK(e.field == b);
  CHECK_THAT(e.message, Catch::Contains("gap of 4 bytes after the previous tensor \"" + a + "\""));
  e = load_error(with_entry(good, b, "data_offsets", pair(ll(bb - 4), ll(be - 4))));
  CHECK(e.field == b);
  CHECK_THAT(e.message, Catch::Contains("overlap the previous tensor \"" + a + "\""));
  e = load_error(with_entry(good, b, "data_offsets", pair(ll(wb), ll(wb + (be - bb)))));
  CHECK(e.field == b);
  CHECK_THAT(e.message, Catch::Contains("out of order"));
  e = load_error(with_entry(good, b, "data_offsets", pair(ll(be), ll(bb))));
  CHECK_THAT(e.message, Catch::Contains("end before they begin"));
  e = load_error(with_entry(good, b, "data_offsets", pair(ll(bb), ll(be + 4))));
  CHECK_THAT(e.message, Catch::Contains("hold 36 bytes, but F32 [8] needs 32"));
  e = load_error(with_entry(good, b, "data_offsets", pair(ll(bb), 1LL << 60)));
  CHECK_THAT(e.message, Catch::Contains("whole numbers ≥ 0"));
  ap::json::Value three = pair(0, 4);
  three.push(8);
  e = load_error(with_entry(good, b, "data_offsets", three));
  CHECK_THAT(e.message, Catch::Contains("must be [begin, end]"));
  // The first tensor must start the data.
  e = load_error(with_entry(good, "transformer.wte.weight", "data_offsets", pair(4, 4 + 12 * 8 * 4)));
  CHECK(e.field == "transformer.wte.weight");
  CHECK_THAT(e.message, Catch::Contains("gap of 4 bytes after the data"));
  (void)ab;
  (void)we;
}

TEST_CASE("Checkpoint: non-finite weights, a negative second moment and an untied lm_head", "[checkpoint][corrupt]") {
  const std::string& good = good_checkpoint();
  const std::string ln = "transformer.h.1.ln_2.weight";
  uint64_t at = byte_of(good, ln, 3);
  Error e = load_error(with_float(good, at, std::numeric_limits<float>::quiet_NaN()));
  CHECK(e.field == ln);
  CHECK_THAT(e.message, Catch::Contains("holds nan at element [3] (byte " + std::to_string(at) + ")") &&
                            Catch::Contains("must be finite"));
  const std::string fc = "optimizer.exp_avg.transformer.h.0.mlp.c_fc.weight";
  at = byte_of(good, fc, 8 * 5 + 2);
  e = load_error(with_float(good, at, -std::numeric_limits<float>::infinity()));
  CHECK(e.field == fc);
  CHECK_THAT(e.message, Catch::Contains("holds -inf at element [5, 2] (byte " + std::to_string(at) + ")"));
  const std::string sq = "optimizer.exp_avg_sq.transformer.wpe.weight";
  at = byte_of(good, sq, 9);
  e = load_error(with_float(good, at, -1e-9f));
  CHECK(e.field == sq);
  CHECK_THAT(e.message, Catch::Contains("element [1, 1] (byte " + std::to_string(at) + ")") &&
                            Catch::Contains("cannot be negative"));
  at = byte_of(good, "lm_head.weight", 8 * 7 + 6);
  e = load_error(with_float(good, at, 0.5f));
  CHECK(e.field == "lm_head.weight");
  CHECK_THAT(e.message, Catch::Contains("differs from \"transformer.wte.weight\" at element [7, 6] (byte " +
                                        std::to_string(at) + "): 0.5 vs"));
  // The tie is bitwise: −0 is not +0.
  ap::TrainState s = ap::load_checkpoint(good);
  s.params[0] = 0.0f;
  const std::string zero = ap::save_checkpoint(s);
  e = load_error(with_float(zero, byte_of(zero, "lm_head.weight", 0), -0.0f));
  CHECK(e.field == "lm_head.weight");
  // The writer refuses what the reader would refuse, so every file it writes can be read.
  s.m[5] = std::numeric_limits<float>::infinity();
  e = error_of([&] { ap::save_checkpoint(s); });
  CHECK(e.field == "optimizer.exp_avg.transformer.wte.weight");
  CHECK_THAT(e.message, Catch::Contains("holds inf at element [0, 5]") && Catch::Contains("not saved"));
}

TEST_CASE("Checkpoint: another config than the one expected is refused with both", "[checkpoint]") {
  const std::string& good = good_checkpoint();
  ap::GPTConfig same = small_model();
  same.vocab_size = 12;
  CHECK_NOTHROW(ap::load_checkpoint(good, &same));
  ap::GPTConfig other = same;
  other.n_embd = 16;
  other.mask = ap::MaskVariant::inclusive;
  const Error e = load_error(good, &other);
  CHECK(e.field == "__metadata__.config");
  CHECK_THAT(e.message,
             Catch::Contains(R"({"vocab_size":12,"block_size":8,"n_layer":2,"n_head":2,"n_embd":8,"mask":"strict","softmax":"stable"})") &&
                 Catch::Contains(R"("n_embd":16,"mask":"inclusive")") &&
                 Catch::Contains("n_embd 8 vs 16, mask strict vs inclusive"));
}

TEST_CASE("Checkpoint: a model-only file (an imported model) round-trips, training keys and resuming are refused",
          "[checkpoint]") {
  ap::TrainState s = ap::load_checkpoint(good_checkpoint());
  s.model.activation = ap::Activation::gelu_new;  // what a model from elsewhere may hold
  s.model.bias = false;
  s.model.ln_eps = 1e-6f;
  s.params.assign(static_cast<size_t>(s.model.num_parameters()), 0.25f);
  s.m.clear();
  s.v.clear();
  s.source = "nanoGPT out/ckpt.pt, iter 5";
  const std::string bytes = ap::save_checkpoint(s);
  CHECK(ap::save_checkpoint(ap::load_checkpoint(bytes)) == bytes);
  const ap::TrainState back = ap::load_checkpoint(bytes);
  CHECK(back.model_only());
  CHECK(back.source == s.source);
  CHECK(back.model == s.model);
  CHECK(same_bits(back.params, s.params));
  CHECK(back.m.empty());
  CHECK(bytes.find("optimizer.") == std::string::npos);
  CHECK(bytes.find("\\\"activation\\\":\\\"gelu_new\\\"") != std::string::npos);
  // a training key in a model-only file, a model-only file without its source's text
  Error e = load_error(with_meta(bytes, "step", "3"));
  CHECK(e.field == "__metadata__");
  CHECK_THAT(e.message, Catch::Contains("unknown key \"step\"") && Catch::Contains("model-only"));
  e = load_error(with_meta(bytes, "source", ""));
  CHECK(e.field == "__metadata__.source");
  CHECK_THROWS_WITH(ap::Trainer(back), Catch::Contains("holds a model only (nanoGPT out/ckpt.pt, iter 5)"));
}

// ---------------------------------------------------------------- files

TEST_CASE("Checkpoint files: written atomically, read back, errors name the path", "[checkpoint][file]") {
  TempDir dir;
  const std::string path = (dir.path / "run.safetensors").string();
  const std::string& old_bytes = good_checkpoint();
  ap::write_checkpoint_file(path, old_bytes);
  CHECK(ap::read_checkpoint_file(path) == old_bytes);
  CHECK(dir.names() == std::vector<std::string>{"run.safetensors"});

  ap::TrainState s = ap::load_checkpoint(old_bytes);
  s.step = 2;  // any change
  s.params[0] += 1.0f;
  const std::string new_bytes = ap::save_checkpoint(s);
  REQUIRE(new_bytes != old_bytes);

  SECTION("a successful write replaces the file, keeps its permissions and leaves nothing else") {
    REQUIRE(::chmod(path.c_str(), 0600) == 0);
    ap::write_checkpoint_file(path, new_bytes);
    CHECK(ap::read_checkpoint_file(path) == new_bytes);
    CHECK(dir.names() == std::vector<std::string>{"run.safetensors"});
    struct stat st;
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
  }
  SECTION("a write that fails half way (the file-size limit) leaves the old file whole and no temporary file") {
    struct rlimit saved;
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
    struct rlimit low = saved;
    low.rlim_cur = static_cast<rlim_t>(new_bytes.size() / 2);
    auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &low) == 0);
    const Error e = error_of([&] { ap::write_checkpoint_file(path, new_bytes); });
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, old_handler);
    CHECK(e.field == "path");
    CHECK_THAT(e.message, Catch::Contains("cannot write " + path + ".tmp-") &&
                              Catch::Contains(path + " is unchanged"));
    CHECK(slurp(path) == old_bytes);
    CHECK(dir.names() == std::vector<std::string>{"run.safetensors"});
  }
  SECTION("a rename that fails (the target is a directory) leaves it and no temporary file") {
    const std::string target = (dir.path / "taken").string();
    std::filesystem::create_directory(target);
    std::ofstream(dir.path / "taken" / "keep.txt") << "mine";
    const Error e = error_of([&] { ap::write_checkpoint_file(target, new_bytes); });
    CHECK(e.field == "path");
    CHECK_THAT(e.message, Catch::Contains("cannot replace " + target) && Catch::Contains("unchanged"));
    CHECK(slurp(dir.path / "taken" / "keep.txt") == "mine");
    CHECK(dir.names() == std::vector<std::string>{"run.safetensors", "taken"});
  }
  SECTION("a directory that does not exist, a file that does not exist, a directory to read") {
    const std::string nowhere = (dir.path / "no" / "such" / "dir" / "x.safetensors").string();
    Error e = error_of([&] { ap::write_checkpoint_file(nowhere, new_bytes); });
    CHECK(e.field == "path");
    CHECK_THAT(e.message, Catch::Contains(nowhere) && Catch::Contains("No such file or directory"));
    e = error_of([&] { ap::read_checkpoint_file(nowhere); });
    CHECK(e.field == "path");
    CHECK_THAT(e.message, Catch::Contains("cannot open " + nowhere) && Catch::Contains("No such file or directory"));
    e = error_of([&] { ap::read_checkpoint_file(dir.path.string()); });
    CHECK_THAT(e.message, Catch::Contains(dir.path.string()) && Catch::Contains("not a regular file"));
    e = error_of([&] { ap::write_checkpoint_file("", new_bytes); });
    CHECK(e.field == "path");
  }
  SECTION("a corrupted file fails to load and stays as it was") {
    const std::string bad = with_float(old_bytes, byte_of(old_bytes, "transformer.ln_f.weight", 1), std::numeric_limits<float>::infinity());
    ap::write_checkpoint_file(path, bad);
    const Error e = error_of([&] { ap::load_checkpoint(ap::read_checkpoint_file(path)); });
    CHECK(e.field == "transformer.ln_f.weight");
    CHECK(slurp(path) == bad);
    CHECK(dir.names() == std::vector<std::string>{"run.safetensors"});
  }
}

TEST_CASE("file_io: a bounded read, an atomic write, the parent folder", "[file]") {
  // Beyond what the checkpoint files above show: the read's limit and what it refuses, an empty path.
  TempDir dir;
  const std::string path = (dir.path / "f.bin").string(), folder = dir.path.string();
  ap::write_file_atomic(path, std::string("ab\0c", 4));
  CHECK(ap::read_file(path, 4, "a test") == std::string("ab\0c", 4));
  Error e = error_of([&] { ap::read_file(path, 3, "a test"); });
  CHECK(e.field == "path");
  CHECK(e.message == path + " is 4 bytes, more than the limit of 3 for a test");
  e = error_of([&] { ap::read_file(folder, 100, "a test"); });
  CHECK(e.message == "cannot read " + folder + ": not a regular file");
  e = error_of([&] { ap::write_file_atomic("", "x"); });
  CHECK(e.field == "path");
  CHECK(e.message == "no file name given");
  ap::write_file_atomic(path, "");
  CHECK(ap::read_file(path, 0, "a test").empty());
  CHECK(dir.names() == std::vector<std::string>{"f.bin"});
  CHECK(ap::parent_dir("x.bin") == ".");
  CHECK(ap::parent_dir("/x.bin") == "/");
  CHECK(ap::parent_dir("a/b/x.bin") == "a/b");
}

TEST_CASE("Checkpoint: a session that fails to load keeps the run it had", "[checkpoint]") {
  ap::GptSession session;
  REQUIRE_THAT(session.create(R"({"preset":"tiny","n_layer":1,"n_embd":8,"n_head":2,"block_size":8,"task":"copy",
                                  "n_chars":2000,"batch_size":2,"steps":10,"seed":3})"),
               Catch::StartsWith("{\"ok\":true"));
  REQUIRE_THAT(session.train(2), Catch::StartsWith("{\"ok\":true"));
  const std::string before = session.info();
  const std::string saved = session.save();
  REQUIRE_FALSE(saved.empty());
  const std::string bad = with_meta(saved, "vocab", R"(["a"])");
  const std::string answer = session.load(bad, "");
  CHECK_THAT(answer, Catch::StartsWith("{\"ok\":false") && Catch::Contains("\"field\":\"__metadata__.vocab\""));
  CHECK(session.info() == before);
  CHECK(session.save() == saved);
  // And a good load replaces it.
  CHECK_THAT(session.load(good_checkpoint(), ""), Catch::StartsWith("{\"ok\":true"));
  CHECK(session.info() != before);
}

// ---------------------------------------------------------------- the fuzz corpus

namespace {

// A checkpoint that needs no training (so its bytes are the same on every machine and ISA): the
// seeded initial weights of a 1-layer model of width 2, with made-up moments and counters.
ap::TrainState corpus_state(bool text) {
  ap::GPTConfig c;
  c.n_layer = 1;
  c.n_head = 1;
  c.n_embd = 2;
  c.block_size = 4;
  ap::TrainConfig t = quick_train(10, 4);
  ap::DataSpec d = copy_task();
  d.n_chars = 300;
  if (text) {
    d = {};
    d.text = "注意力 attention\n注意力 attention\n";
    d.name = "注意.txt";
    c.mask = ap::MaskVariant::inclusive;
  }
  ap::TrainState s = ap::Trainer(c, t, d).state();
  for (size_t i = 0; i < s.m.size(); ++i) {
    s.m[i] = 0.001f * static_cast<float>(static_cast<int>(i % 7) - 3);
    s.v[i] = s.m[i] * s.m[i];
  }
  s.step = s.adam_t = 3;
  s.last_val_loss = text ? -1.0f : 2.5f;
  return s;
}

std::string corpus_dir() { return std::string(AP_GOLDEN_DIR) + "/../fuzz/corpus/checkpoint"; }

}  // namespace

TEST_CASE("Checkpoint: the fuzz corpus's seed checkpoints are today's format, byte for byte", "[checkpoint]") {
  // If the format changes on purpose, regenerate them: build/ap_tests "[.fuzz_corpus]".
  for (bool text : {false, true}) {
    const std::string name = text ? "text.safetensors" : "task.safetensors";
    INFO(name);
    const std::string committed = slurp(corpus_dir() + "/" + name);
    CHECK(committed == ap::save_checkpoint(corpus_state(text)));
    CHECK_NOTHROW(ap::load_checkpoint(committed));
  }
}

TEST_CASE("Checkpoint: write the fuzz corpus", "[.fuzz_corpus]") {
  const std::string task = ap::save_checkpoint(corpus_state(false));
  const std::string text = ap::save_checkpoint(corpus_state(true));
  const std::string d = corpus_dir() + "/";
  ap::write_checkpoint_file(d + "task.safetensors", task);
  ap::write_checkpoint_file(d + "text.safetensors", text);
  // A few mutations, each refused for a different reason, so the fuzzer starts past the first checks.
  ap::write_checkpoint_file(d + "truncated.safetensors", task.substr(0, task.size() - 6));
  ap::write_checkpoint_file(d + "untied.safetensors", with_float(task, byte_of(task, "lm_head.weight", 1), 0.25f));
  ap::write_checkpoint_file(d + "shape.safetensors",
                            with_meta(task, "config",
                                      R"({"vocab_size":12,"block_size":4,"n_layer":1,"n_head":1,"n_embd":4,"mask":"strict","softmax":"naive"})"));
  for (const std::string& bad : {std::string("truncated"), std::string("untied"), std::string("shape")})
    CHECK_THROWS_AS(ap::load_checkpoint(slurp(d + bad + ".safetensors")), ap::InputError);
}

TEST_CASE("file_io: a FileSource reads a file in slices, as the whole file reads", "[file]") {
  TempDir dir;
  const std::string path = (dir.path / "run.safetensors").string();
  const std::string& bytes = good_checkpoint();
  ap::write_file_atomic(path, bytes);
  const ap::FileSource src(path, bytes.size(), "a checkpoint");
  CHECK(src.size() == bytes.size());
  // small reads are kept (a reader may hold them), a larger one until the next larger one
  std::string pattern((size_t(3) << 20), '\0');
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<char>(i * 7 % 251);
  const std::string big_path = (dir.path / "big.bin").string();
  ap::write_file_atomic(big_path, pattern);
  const ap::FileSource big_src(big_path, pattern.size(), "a test");
  const char* head = big_src.read(0, 8);
  const char* inner = big_src.read(2, 4);
  const char* big = big_src.read(8, (size_t(1) << 20) + 1);
  CHECK(std::string(big, 16) == pattern.substr(8, 16));
  CHECK(std::string(big_src.read(8, 5), 5) == pattern.substr(8, 5));
  CHECK(std::string(big_src.read(size_t(2) << 20, size_t(1) << 20), 64) == pattern.substr(size_t(2) << 20, 64));
  CHECK(std::string(head, 8) == pattern.substr(0, 8));
  CHECK(inner == head + 2);
  // a checkpoint read from it: the same state as from its bytes
  const ap::TrainState a = ap::load_checkpoint(bytes), b = ap::load_checkpoint(src);
  CHECK(a.params == b.params);
  CHECK(a.m == b.m);
  CHECK(a.step == b.step);
  // refused: too large, a folder, a file that is not there, a file that shrank while it was read
  Error e = error_of([&] { ap::FileSource(path, 10, "a test"); });
  CHECK(e.field == "path");
  CHECK(e.message == path + " is " + std::to_string(bytes.size()) + " bytes, more than the limit of 10 for a test");
  e = error_of([&] { ap::FileSource(dir.path.string(), 10, "a test"); });
  CHECK(e.message == "cannot read " + dir.path.string() + ": not a regular file");
  e = error_of([&] { ap::FileSource((dir.path / "none").string(), 10, "a test"); });
  CHECK_THAT(e.message, Catch::Contains("cannot open " + (dir.path / "none").string()));
  const std::string shrinks = (dir.path / "shrinks.bin").string();
  ap::write_file_atomic(shrinks, std::string(100, 'x'));
  const ap::FileSource s2(shrinks, 100, "a test");
  REQUIRE(::truncate(shrinks.c_str(), 50) == 0);
  e = error_of([&] { s2.read(40, 20); });
  CHECK(e.field == "path");
  CHECK(e.message == "cannot read " + shrinks + ": it ended at byte 50 while it was read (it was 100 bytes: did it change?)");
}
