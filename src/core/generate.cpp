// generate.cpp — sampling and the cached generation loop (see generate.h).
#include "generate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "ops.h"

namespace ap {

namespace {

std::string num(long long v) { return std::to_string(v); }

}  // namespace

void SampleOptions::validate(int vocab_size) const {
  if (max_new_tokens < 0 || max_new_tokens > kMaxNewTokens)
    throw InputError("max_new_tokens is " + num(max_new_tokens) + ": it must be between 0 and " + num(kMaxNewTokens),
                     "max_new_tokens");
  if (!greedy && !(std::isfinite(temperature) && temperature > 0.0f && temperature <= 100.0f)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", temperature);
    throw InputError(std::string("temperature is ") + buf + ": it must be above 0 and at most 100 (or sample greedily)",
                     "temperature");
  }
  if (top_k < 0 || top_k > vocab_size)
    throw InputError("top_k is " + num(top_k) + ": it must be between 0 (all tokens) and the vocabulary size " +
                         num(vocab_size),
                     "top_k");
}

int sample_token(const float* logits, int V, const SampleOptions& opt, Rng& rng, float* scratch) {
  for (int v = 0; v < V; ++v)
    if (!std::isfinite(logits[v]))
      throw InputError("the logits are not finite (logit " + num(v) +
                           " is not a number or infinite): the model has diverged",
                       "logits");
  if (opt.greedy) return static_cast<int>(std::max_element(logits, logits + V) - logits);
  const float inv_t = 1.0f / opt.temperature;
  float threshold = -INFINITY;
  if (opt.top_k > 0 && opt.top_k < V) {
    std::copy(logits, logits + V, scratch);
    std::nth_element(scratch, scratch + (opt.top_k - 1), scratch + V, std::greater<float>());
    threshold = scratch[opt.top_k - 1];  // the k-th largest logit: keep those ≥ it
  }
  float maxv = -INFINITY;
  for (int v = 0; v < V; ++v)
    if (logits[v] >= threshold) maxv = std::max(maxv, logits[v]);
  float sum = 0.0f;
  for (int v = 0; v < V; ++v) {
    scratch[v] = logits[v] >= threshold ? exp_f32((logits[v] - maxv) * inv_t) : 0.0f;
    sum += scratch[v];
  }
  const float coin = rng.uniform01() * sum;
  float cdf = 0.0f;
  int last = 0;
  for (int v = 0; v < V; ++v) {
    if (scratch[v] == 0.0f) continue;
    cdf += scratch[v];
    last = v;
    if (coin < cdf) return v;
  }
  return last;  // rounding: coin landed at the very top
}

Generator::Generator(GPT& model, const std::vector<int>& prompt, const SampleOptions& opt)
    : model_(model), opt_(opt), rng_(derive_seed(opt.seed, 7)) {
  opt_.validate(model.config().vocab_size);
  if (prompt.empty()) throw InputError("the prompt is empty: give at least one character to start from", "prompt");
  tokens_ = prompt;
  scratch_.assign(static_cast<size_t>(model.config().vocab_size), 0.0f);
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
  const int tok = sample_token(logits_, V, opt_, rng_, scratch_.data());
  tokens_.push_back(tok);
  ++generated_;
  rebuilt_ = model_.cache_length() >= S;
  if (rebuilt_)
    run(tokens_.data() + (tokens_.size() - static_cast<size_t>(S)), S);
  else
    logits_ = model_.cache_step(tok);
  return tok;
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
