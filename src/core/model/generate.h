// generate.h — text from the GPT, one token at a time through its KV cache: greedy, temperature,
// top-k and top-p sampling, seeded.
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
// Sampling (sample_token, next_token.h): greedy takes the argmax (the lowest id among ties);
// otherwise the logits are divided by the temperature, all but the top_k largest are dropped
// (top_k 0: none), then all but the smallest set of the most likely whose probabilities reach
// top_p (1: none), and a token is drawn from what is left with one uniform number from the Rng,
// scanning ids in order. The same seed gives the same text on one build; without top-p, the same
// text as before top-p existed. The options may change between two tokens (set_options): each
// draw is made with those of its moment, and last_draw() tells what it was made of.
// Errors: InputError naming the field ("prompt", "temperature", "top_k", "top_p",
// "max_new_tokens").
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/gpt.h"
#include "core/model/next_token.h"
#include "core/base/rng.h"

namespace ap {

constexpr int kMaxNewTokens = 65536;

// temperature, top_k, top_p and greedy (NextTokenOptions), and how much and from which seed.
struct SampleOptions : NextTokenOptions {
  int max_new_tokens = 200;
  uint64_t seed = 1;
  void validate(int vocab_size) const;
};

// The next token from logits (V); draw (if given) gets what the draw was made of. Throws
// InputError (field "logits") when the logits are not finite (a diverged model).
int sample_token(const float* logits, int V, const NextTokenOptions& opt, Rng& rng, NextTokenDraw* draw = nullptr);

// The draw a Generator with these options makes first when the prompt's last position has these
// logits: the same Rng stream of opt.seed, the same kept weights, one number (none for greedy).
// The block walk's sampled token (api/gpt_walk.cpp) is this draw.
NextTokenDraw first_draw(const NextTokenLogits& l, const SampleOptions& opt);

class Generator {
 public:
  // Runs the prompt (at least one token; the last block_size of a longer one) through the cache.
  Generator(GPT& model, const std::vector<int>& prompt, const SampleOptions& opt);
  // Samples the next token, appends it and runs it; returns it.
  int next();
  // The sampling options of the next draws (max_new_tokens and seed stay). Throws InputError.
  void set_options(const NextTokenOptions& o);
  const SampleOptions& options() const { return opt_; }
  // What the last next() drew from: the logits it read (V), and the draw.
  const NextTokenLogits& last_logits() const { return drawn_from_; }
  const NextTokenDraw& last_draw() const { return draw_; }
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
  NextTokenLogits drawn_from_;
  KeptWeights weights_;
  NextTokenDraw draw_;
  const float* logits_ = nullptr;
  bool rebuilt_ = false;
  int generated_ = 0;
};

// prompt → prompt + max_new_tokens tokens.
std::vector<int> generate(GPT& model, const std::vector<int>& prompt, const SampleOptions& opt);

}  // namespace ap
