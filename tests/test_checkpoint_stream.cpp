// test_checkpoint_stream.cpp — the model-only checkpoint written piece by piece (checkpoint.h's
// streaming save_checkpoint, what `gpt import` uses on a Llama folder) against the whole-file
// writer: the same bytes, the same refusal of a value that is not finite, pieces of at most 1M
// floats; and checkpoint_layout against the header read back from the whole file.
// Limits: a character-vocabulary model of 8,000 tokens, n_embd 192 (its wte: 1.536M floats, two pieces).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "api/checkpoint.h"
#include "core/model/gpt.h"
#include "core/model/train.h"
#include "formats/safetensors.h"

namespace {

constexpr int kVocab = 8000;

ap::TrainState model_only_state() {
  ap::TrainState s;
  s.model = ap::GPTConfig::tiny(kVocab);
  s.model.n_embd = 192;  // wte: 1.536M floats, two pieces
  s.model.tie_embeddings = true;
  for (int i = 0; i < kVocab; ++i) s.vocab.push_back(static_cast<char32_t>(0x4E00 + i));
  std::mt19937 g(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  s.params.resize(static_cast<size_t>(s.model.num_parameters()));
  for (float& x : s.params) x = u(g);
  s.source = "a test's random model";
  return s;
}

struct Streamed {
  std::string bytes;
  int64_t largest_piece = 0;  // floats asked for at once
};

// The streaming writer on s's parameters, given back row by row from a copy.
Streamed stream(const ap::TrainState& full) {
  ap::TrainState s = full;
  s.params.clear();
  Streamed out;
  const auto fill = [&](const ap::ParamTensor& p, int64_t begin, int64_t end, float* values) {
    const int64_t cols = p.shape.size() == 2 ? p.shape[1] : p.numel;
    out.largest_piece = std::max(out.largest_piece, (end - begin) * cols);
    std::memcpy(values, full.params.data() + p.offset + begin * cols, static_cast<size_t>((end - begin) * cols) * 4);
  };
  ap::save_checkpoint(s, fill, [&](const char* data, size_t n) { out.bytes.append(data, n); });
  return out;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ap::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("Checkpoint streamed: the same bytes as the whole file, in pieces of at most 1M floats",
          "[checkpoint]") {
  const ap::TrainState s = model_only_state();
  REQUIRE(s.model_only());
  const std::string whole = ap::save_checkpoint(s);
  const Streamed piecewise = stream(s);
  CHECK(piecewise.bytes.size() == whole.size());
  CHECK(piecewise.bytes == whole);
  CHECK(piecewise.largest_piece <= (int64_t(1) << 20));
  CHECK(piecewise.largest_piece > 0);
  // the file reads back as the state it was made from
  const ap::TrainState back = ap::load_checkpoint(piecewise.bytes);
  CHECK(std::memcmp(back.params.data(), s.params.data(), s.params.size() * 4) == 0);
}

TEST_CASE("Checkpoint streamed: a value that is not finite is refused in the whole writer's words", "[checkpoint]") {
  ap::TrainState s = model_only_state();
  // in wte's second piece (row 7,000 of 8,000), and in a later tensor
  for (const int64_t at : {int64_t(7000) * s.model.n_embd + 5, s.model.num_parameters() - 3}) {
    ap::TrainState bad = s;
    bad.params[static_cast<size_t>(at)] = std::nanf("");
    const std::string whole = message_of([&] { ap::save_checkpoint(bad); });
    CHECK_THAT(whole, Catch::Contains("holds nan at element [") && Catch::Contains("not saved"));
    CHECK(message_of([&] { stream(bad); }) == whole);
  }
  // a state that still holds its parameters is not one to stream
  CHECK_THAT(message_of([&] { ap::save_checkpoint(s, {}, {}); }), Catch::Contains("piece by piece"));
}

TEST_CASE("Checkpoint layout: the header of the file save_checkpoint would write, without writing it", "[checkpoint]") {
  const ap::TrainState s = model_only_state();
  const ap::safetensors::File want =
      ap::safetensors::read_file(ap::save_checkpoint(s), {ap::kMaxCheckpointHeader, ap::kMaxCheckpointBytes, "checkpoint"});
  ap::TrainState without = s;
  without.params.clear();
  const ap::safetensors::File got = ap::checkpoint_layout(without);
  CHECK(got.metadata == want.metadata);
  REQUIRE(got.tensors.size() == want.tensors.size());
  for (size_t i = 0; i < got.tensors.size(); ++i) {
    CHECK(got.tensors[i].name == want.tensors[i].name);
    CHECK(got.tensors[i].dtype == want.tensors[i].dtype);
    CHECK(got.tensors[i].shape == want.tensors[i].shape);
    CHECK(got.tensors[i].begin == want.tensors[i].begin);
    CHECK(got.tensors[i].end == want.tensors[i].end);
  }
}
