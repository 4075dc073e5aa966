// test_checkpoint.cpp — the safetensors checkpoint (checkpoint.h) as a user meets it:
//  - the round trip is bit-exact (every tensor, both moments, the metadata), for a task run and
//    for a text run whose vocabulary holds Chinese characters; the same state gives the same bytes;
//  - the file is safetensors: the header length, the padded JSON header, nanoGPT's names in order,
//    little-endian data;
//  - resuming through the bytes continues bit for bit: N steps, save, load, M steps gives the
//    losses of an uninterrupted N + M run of the same seed;
//  - writes are atomic: a failing write or rename leaves the old file whole and no temporary file;
//  - every corruption gets an error that names the byte, the tensor or the metadata key, and a
//    failed load overwrites nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "api/checkpoint.h"
#include "api/json.h"

namespace {

ap::TrainConfig quick_train(int steps) {
  ap::TrainConfig t;
  t.batch_size = 4;
  t.steps = steps;
  t.warmup_steps = 2;
  t.lr = 3e-3f;
  t.min_lr = 3e-4f;
  t.eval_batches = 2;
  t.seed = 11;
  return t;
}

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
    ap::Trainer tr(small_model(), quick_train(20), copy_task());
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
    ap::Trainer tr(small_model(), quick_train(20), chinese_data());
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
    ap::Trainer whole(small_model(), quick_train(N + M), copy_task());
    std::vector<float> expected;
    for (int i = 0; i < N + M; ++i) expected.push_back(whole.step().loss);

    ap::Trainer first(small_model(), quick_train(N + M), copy_task());
    for (int i = 0; i < N; ++i) REQUIRE(first.step().loss == expected[static_cast<size_t>(i)]);
    const std::string bytes = ap::save_checkpoint(first.state());
    ap::Trainer resumed(ap::load_checkpoint(bytes));
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
    ap::Trainer whole(small_model(), quick_train(N + M), chinese_data());
    std::vector<float> expected;
    for (int i = 0; i < N + M; ++i) expected.push_back(whole.step().loss);
    ap::Trainer first(small_model(), quick_train(N + M), chinese_data());
    for (int i = 0; i < N; ++i) first.step();
    ap::Trainer resumed(ap::load_checkpoint(ap::save_checkpoint(first.state())), chinese_text());
    for (int i = N; i < N + M; ++i) REQUIRE(same_bits(resumed.step().loss, expected[static_cast<size_t>(i)]));
  }
}
