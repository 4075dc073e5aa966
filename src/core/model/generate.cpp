// generate.cpp — sampling and the cached generation loop (see generate.h).
#include "core/model/generate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/tensor/ops.h"

namespace ap {

namespace {

std::string num(long long v) { return std::to_string(v); }

// The sampler's Rng stream of a seed: Generator's draws and first_draw.
uint64_t sampler_seed(uint64_t seed) { return derive_seed(seed, 7); }

}  // namespace

void SampleOptions::validate(int vocab_size) const {
  if (max_new_tokens < 0 || max_new_tokens > kMaxNewTokens)
    throw InputError("max_new_tokens is " + num(max_new_tokens) + ": it must be between 0 and " + num(kMaxNewTokens),
                     "max_new_tokens");
  NextTokenOptions::validate(vocab_size);
}

int sample_token(const float* logits, int V, const NextTokenOptions& opt, Rng& rng, NextTokenDraw* draw) {
  NextTokenLogits l;
  l.set(logits, V);
  KeptWeights w;
  kept_weights(w, l, opt);
  const NextTokenDraw d = draw_token(w, opt.greedy, rng);
  if (draw) *draw = d;
  return d.token;
}

NextTokenDraw first_draw(const NextTokenLogits& l, const SampleOptions& opt) {
  Rng rng(sampler_seed(opt.seed));
  KeptWeights w;
  kept_weights(w, l, opt);
  return draw_token(w, opt.greedy, rng);
}

Generator::Generator(GPT& model, const std::vector<int>& prompt, const SampleOptions& opt)
    : model_(model), opt_(opt), rng_(sampler_seed(opt.seed)) {
  opt_.validate(model.config().vocab_size);
  if (prompt.empty()) throw InputError("the prompt is empty: give at least one character to start from", "prompt");
  tokens_ = prompt;
  const int S = model.config().block_size;
  const int n = static_cast<int>(prompt.size());
  const int from = n > S ? n - S : 0;
  run(prompt.data() + from, n - from);
}

void Generator::run(const int* ids, int n) {
  model_.cache_reset();
  for (int i = 0; i < n; ++i) logits_ = model_.cache_step(ids[i]);
}

int Generator::next() {
  const int V = model_.config().vocab_size, S = model_.config().block_size;
  drawn_from_.set(logits_, V);
  kept_weights(weights_, drawn_from_, opt_);
  draw_ = draw_token(weights_, opt_.greedy, rng_);
  const int tok = draw_.token;
  tokens_.push_back(tok);
  ++generated_;
  rebuilt_ = model_.cache_length() >= S;
  if (rebuilt_)
    run(tokens_.data() + (tokens_.size() - static_cast<size_t>(S)), S);
  else
    logits_ = model_.cache_step(tok);
  return tok;
}

void Generator::set_options(const NextTokenOptions& o) {
  o.validate(model_.config().vocab_size);
  static_cast<NextTokenOptions&>(opt_) = o;
}

std::vector<int> Generator::context() const {
  const size_t n = static_cast<size_t>(model_.cache_length());
  return std::vector<int>(tokens_.end() - static_cast<std::ptrdiff_t>(n), tokens_.end());
}

std::vector<int> generate(GPT& model, const std::vector<int>& prompt, const SampleOptions& opt) {
  Generator g(model, prompt, opt);
  for (int i = 0; i < opt.max_new_tokens; ++i) g.next();
  return g.tokens();
}

}  // namespace ap
