// test_infer_threads.cpp — a prompt's forward and generation on threads (GPT::set_threads): the
// Linear layers' output columns, the norms' and activation's rows, the residual adds' floats and
// attention's heads split across the threads, so the logits have the same bits for 1, 2 and 3
// threads, on every instruction set of the fast tier and on the reference tier, at a prompt's
// sizes (the few-row product), at one and three rows, and past 256 rows (the packed GEMM), in a
// model small enough to keep its small layers on one thread and in one wide enough to split all;
// cache_step (generation) likewise, its one-row products across the 1 MB at which the product
// streams; an opened model's typed products, in generation (BF16, F16, Q8_0, Q4_0) and in a
// prompt's forward (those and the five types mixed; one row, 3, 5 and 20 rows); a session's opened
// model takes the session's threads (set_threads, before or after opening), with the same logits,
// and a model made trainable goes back to one; bad counts are refused by name.
#include <catch2/catch.hpp>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "api/checkpoint.h"
#include "api/gpt_session.h"
#include "core/kernels/quant.h"
#include "core/model/gpt.h"
#include "core/model/train.h"
#include "formats/llama_load.h"
#include "input_error_util.h"
#include "kernels_test_util.h"
#include "llama_weights_test_util.h"

namespace {

// GPT-2's block in small (gelu_new, biases), a vocabulary whose head is not a multiple of 16.
ap::GPTConfig small_gpt2() {
  ap::GPTConfig c = ap::GPTConfig::gpt2_small();
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 64;
  c.vocab_size = 301;
  c.block_size = 320;
  return c;
}

// Wide enough that every layer splits (gpt.cpp's kMinSplit) at 300 rows, and one MLP matrix of
// 1 MB (c_fc: 1024 × 256), whose one-row product streams while its parts do not.
ap::GPTConfig wide_gpt2() {
  ap::GPTConfig c = small_gpt2();
  c.n_embd = 256;
  return c;
}

std::vector<float> logits_with(ap::GPT& m, int threads, const std::vector<int>& ids, int B, int T) {
  std::vector<int> other(ids);  // another prompt first, on one thread: what a split leaves unwritten shows
  for (int& id : other) id = (id + 1) % m.config().vocab_size;
  m.set_threads(1);
  m.forward(other.data(), nullptr, B, T);
  m.set_threads(threads);
  REQUIRE(m.threads() == threads);
  m.forward(ids.data(), nullptr, B, T);
  const size_t n = size_t(B) * size_t(T) * size_t(m.config().vocab_size);
  return std::vector<float>(m.logits(), m.logits() + n);
}

// The logits of n tokens through the KV cache, from an empty cache, on `threads` threads.
std::vector<float> generated_with(ap::GPT& m, int threads, int n) {
  m.set_threads(threads);
  m.cache_reset();
  const int V = m.config().vocab_size;
  std::vector<float> out;
  for (int i = 0; i < n; ++i) {
    const float* l = m.cache_step((i * 53 + 7) % V);
    out.insert(out.end(), l, l + V);
  }
  return out;
}

// check(tier) on every instruction set of the fast tier, then on the reference tier; the fast
// tier and m's one thread after.
template <class F>
void for_each_tier(ap::GPT& m, F check) {
  for_each_isa([&](const K::Kernels&, const std::string& isa) { check(isa); });
  K::set_tier(K::Tier::reference);
  check("reference");
  K::set_tier(K::Tier::fast);
  m.set_threads(1);
}

// The logits of each prompt size on 2 and 3 threads are those of 1 thread, bit for bit, on every
// tier (for_each_tier); `what` names the model in a failure.
struct Size {
  int B, T;
};
void check_prompt_bits(ap::GPT& m, std::initializer_list<Size> sizes, const std::string& what) {
  for_each_tier(m, [&](const std::string& tier) {
    for (const Size s : sizes) {
      std::vector<int> ids(size_t(s.B) * size_t(s.T));
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = int((i * 37 + 5) % 301);
      const std::vector<float> one = logits_with(m, 1, ids, s.B, s.T);
      for (int n : {2, 3}) {
        INFO(what << " " << tier << " B=" << s.B << " T=" << s.T << " threads " << n);
        const std::vector<float> many = logits_with(m, n, ids, s.B, s.T);
        CHECK(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)) == 0);
      }
    }
  });
}

// cache_step's logits of n tokens on 2 and 3 threads are those of 1 thread, bit for bit, on every
// tier (for_each_tier); `what` names the model in a failure.
void check_generation_bits(ap::GPT& m, int n, const std::string& what) {
  for_each_tier(m, [&](const std::string& tier) {
    const std::vector<float> one = generated_with(m, 1, n);
    for (int threads : {2, 3}) {
      INFO(what << " " << tier << " threads " << threads);
      const std::vector<float> many = generated_with(m, threads, n);
      CHECK(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)) == 0);
    }
  });
}

// A Llama of 301 tokens (a head not a multiple of 16 columns), hidden 256, MLP 320, heads of 64,
// tied: its matrices wide enough that every typed product splits, at one row and at a prompt's.
ap::HfConfig typed_llama() {
  ap::HfConfig c = ap_test::small_hf_config("llama", 301, 256, 320, 64, 64);
  c.tie_word_embeddings = true;
  return c;
}

}  // namespace

TEST_CASE("prompt forward on threads: the same logits, bit for bit, for 1, 2 and 3 threads", "[gpt][threads]") {
  for (const ap::GPTConfig& cfg : {small_gpt2(), wide_gpt2()}) {
    ap::GPT m(cfg, ap::ModelUse::infer);
    m.init_weights(5);
    check_prompt_bits(m, {{1, 64}, {1, 17}, {1, 1}, {1, 3}, {2, 150}}, "n_embd " + std::to_string(cfg.n_embd));
  }
}

TEST_CASE("prompt forward on threads: an opened model's typed weights, bit for bit, for 1, 2 and 3 threads",
          "[gpt][threads][typed]") {
  using ap::quant::Type;
  // One type throughout, and the five in turn (q, k and v of different types: c_attn of several
  // parts, each thread's rows cut across them); prompts of one row, of 3 (on one thread), 5 (the
  // few-row product, row by row in place) and 20 rows (the chunked product).
  const Type one[] = {Type::Q8_0, Type::F16, Type::BF16, Type::Q4_0};
  const Type mix[] = {Type::Q8_0, Type::F16, Type::BF16, Type::F32, Type::Q4_0};
  for (int which = 0; which < 5; ++which) {
    auto type_of = [&](int k) { return which < 4 ? one[which] : mix[k % 5]; };
    const ap::LlamaWeights w = ap_test::random_llama_weights(typed_llama(), 23, 0.2f, type_of);
    std::unique_ptr<ap::GPT> m = ap::open_llama(w, "test");
    const std::string what = which < 4 ? ap::quant::type_info(one[which]).name : "mixed";
    check_prompt_bits(*m, {{1, 1}, {1, 3}, {1, 5}, {1, 20}}, what);
  }
}

TEST_CASE("generation on threads: cache_step's logits, bit for bit, for 1, 2 and 3 threads", "[gpt][threads]") {
  ap::GPT m(wide_gpt2(), ap::ModelUse::infer);
  m.init_weights(6);
  check_generation_bits(m, 12, "float32");
}

TEST_CASE("generation on threads: an opened model's typed weights, bit for bit, for 1, 2 and 3 threads", "[gpt][threads][typed]") {
  using ap::quant::Type;
  for (Type t : {Type::BF16, Type::F16, Type::Q8_0, Type::Q4_0}) {
    const ap::LlamaWeights w = ap_test::random_llama_weights(typed_llama(), 21, 0.2f, [t](int) { return t; });
    std::unique_ptr<ap::GPT> m = ap::open_llama(w, "test");
    check_generation_bits(*m, 10, ap::quant::type_info(t).name);
  }
}

TEST_CASE("prompt forward on threads: bad counts are refused by name", "[gpt][threads][errors]") {
  ap::GPT m(small_gpt2(), ap::ModelUse::infer);
  CHECK(input_error_util::error_of([&] { m.set_threads(0); }).field == "threads");
  CHECK(input_error_util::error_of([&] { m.set_threads(ap::kMaxThreads + 1); }).field == "threads");
  CHECK(m.threads() == 1);
}

TEST_CASE("prompt forward on threads: an opened model runs on the session's threads", "[gpt][threads]") {
  ap::TrainState st;  // a model-only state, as `gpt import` writes one
  st.source = "a test model";
  st.model = ap::GPTConfig::tiny(1);
  st.model.block_size = 16;
  for (char32_t c : std::u32string(U" .acehmnost")) st.vocab.push_back(c);
  st.model.vocab_size = static_cast<int>(st.vocab.size());
  ap::GPT g(st.model);
  g.init_weights(3);
  st.params.assign(g.params(), g.params() + g.num_parameters());
  const std::string file = ap::save_checkpoint(st);
  auto logits = [](ap::GptSession& s) {
    s.run_prompt("the cat sat on the mat");
    const ap::GPT& m = s.trainer()->model();
    return std::vector<float>(m.logits(), m.logits() + size_t(16) * size_t(m.config().vocab_size));
  };
  ap::GptSession one, two, later;
  one.load(file, "");
  two.set_threads(2);  // before opening
  two.load(file, "");
  later.load(file, "");
  later.set_threads(2);  // after
  CHECK(one.trainer()->model().threads() == 1);
  CHECK(two.trainer()->model().threads() == 2);
  CHECK(later.trainer()->model().threads() == 2);
  const std::vector<float> a = logits(one), b = logits(two), c = logits(later);
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(a.data(), c.data(), a.size() * sizeof(float)) == 0);
  two.trainer()->model().make_trainable(2, 16);
  CHECK(two.trainer()->model().threads() == 1);
}
