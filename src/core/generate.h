// generate.h — text from the GPT, one token at a time through its KV cache: greedy, temperature
// and top-k sampling, seeded.
//
// A Generator first runs the prompt through the cache (cache_step per token; base = 0, 1, 2, …),
// then each next() picks a token from the current logits, appends it, and runs it at the next
// position. The cache holds at most block_size positions. Past that the context is cropped as
// nanoGPT's generate() does (idx[:, -block_size:]): the next token is predicted from the last
// block_size tokens only, at positions 0 … block_size−1. Since the learned position embeddings
// then shift by one, every cached key and value changes, so the cache is rebuilt from those
// block_size tokens (rebuilt() says so): the logits always equal a full forward pass over the
// cropped context, and a step past block_size costs as much as one without a cache.
//
// Sampling (sample_token): greedy takes the argmax (the lowest id among ties); otherwise the
// logits are divided by the temperature, all but the top_k largest are dropped (top_k 0: none),
// and a token is drawn from their softmax with one uniform number from the Rng, scanning ids in
// order. The same seed gives the same text on one build.
// Errors: InputError naming the field ("prompt", "temperature", "top_k", "max_new_tokens").
#pragma once

#include <cstdint>
#include <vector>

#include "gpt.h"
#include "rng.h"

namespace ap {

constexpr int kMaxNewTokens = 65536;

struct SampleOptions {
  int max_new_tokens = 200;
  float temperature = 1.0f;  // > 0; ignored when greedy
  int top_k = 0;             // keep the k most likely tokens; 0: keep all
  bool greedy = false;
  uint64_t seed = 1;
  void validate(int vocab_size) const;
};

// The next token from logits (V). scratch: V floats. Throws InputError (field "logits") when the
// logits are not finite (a diverged model).
int sample_token(const float* logits, int V, const SampleOptions& opt, Rng& rng, float* scratch);

class Generator {
 public:
  // Runs the prompt (at least one token; the last block_size of a longer one) through the cache.
  Generator(GPT& model, const std::vector<int>& prompt, const SampleOptions& opt);
  // Samples the next token, appends it and runs it; returns it.
  int next();
  // The logits (V) that predict the next token: those of the last position run.
  const float* logits() const { return logits_; }
  // Every token so far: the prompt (whole), then the generated ones.
  const std::vector<int>& tokens() const { return tokens_; }
  // The tokens in the model's context now: the last cache_length() of tokens().
  std::vector<int> context() const;
  // The base of the last position run: the number of cached positions it attended over, besides itself.
  int base() const { return model_.cache_length() - 1; }
  // Whether the last next() had to rebuild the cache (the context passed block_size).
  bool rebuilt() const { return rebuilt_; }
  int generated() const { return generated_; }

 private:
  void run(const int* ids, int n);

  GPT& model_;
  SampleOptions opt_;
  Rng rng_;
  std::vector<int> tokens_;
  std::vector<float> scratch_;
  const float* logits_ = nullptr;
  bool rebuilt_ = false;
  int generated_ = 0;
};

// prompt → prompt + max_new_tokens tokens.
std::vector<int> generate(GPT& model, const std::vector<int>& prompt, const SampleOptions& opt);

}  // namespace ap
