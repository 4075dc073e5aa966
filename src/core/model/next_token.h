// next_token.h — what the model predicts next, as the learner sees it and as the sampler draws it:
// one distribution, computed one way for both.
//
//   logits (V) → ÷ temperature → keep the top k → keep the top p → renormalise → draw
//
//  - e_v = e^((logit_v − max)/T) for every token (exp_f32, the core's own exp: the same bits
//    natively and in wasm); the full distribution is e_v / Z, Z = Σ_v e_v summed in id order.
//  - top-k (k > 0): keep the tokens whose logit is at least the k-th largest (ties with the k-th
//    are kept too, so more than k may stay).
//  - top-p (p < 1): of those, keep the smallest set of the most likely whose probabilities sum to
//    at least p: the tokens in the order of their logits (largest first; the lower id first among
//    equal logits), as many as it takes for Σ e ≥ p · Σ_kept-by-k e. At least one token stays.
//  - greedy: only the most likely token (the lowest id among ties), probability 1.
//  - The draw: S = Σ e over the kept tokens in id order; coin = u · S with u = Rng::uniform01();
//    the kept tokens are laid end to end in id order and the one whose segment holds the coin is
//    drawn. Greedy draws no number.
// The temperature, top-k and greedy draws are those the sampler has always made (generate.h):
// the same kept set, the same e_v and the same sum in the same order, so the same seed gives the
// same tokens as before top-p existed.
//
// NextTokenLogits keeps one position's logits with their order sorted once (the order of the
// logits does not depend on the temperature, top-k or top-p), so that moving a slider costs one
// pass over the vocabulary (the exponentials and their sum) plus the kept prefix: at 50,257 tokens
// well under a frame (bench/bench_gpt.cpp, W5).
//
// Errors: InputError naming the field ("temperature", "top_k", "top_p", "logits").
#pragma once

#include <cstdint>
#include <vector>

#include "core/base/rng.h"

namespace ap {

struct NextTokenOptions {
  float temperature = 1.0f;  // > 0, at most 100; ignored when greedy
  int top_k = 0;             // keep the k most likely; 0: all
  float top_p = 1.0f;        // keep the smallest set whose probability reaches p, in (0, 1]; 1: all
  bool greedy = false;
  // Throws InputError naming the field of a value out of range for a vocabulary of V tokens.
  void validate(int vocab_size) const;
};

// One position's logits, their order (largest first, lower id first among equal logits) and each
// token's rank in it. The order is sorted on first use (order(), or a distribution that needs it).
class NextTokenLogits {
 public:
  NextTokenLogits() = default;
  // Copies V logits. Throws InputError (field "logits") when one is not finite (a diverged model).
  void set(const float* logits, int V);
  bool empty() const { return logits_.empty(); }
  int vocab_size() const { return static_cast<int>(logits_.size()); }
  const std::vector<float>& logits() const { return logits_; }
  const std::vector<int>& order() const;  // token ids, most likely first
  const std::vector<int>& rank() const;   // rank()[id]: its place in order()
  // The number of tokens top-k keeps: k, plus those tied with the k-th logit (V for k = 0 or ≥ V).
  int top_k_count(int k) const;

 private:
  void sort() const;
  std::vector<float> logits_;
  mutable std::vector<int> order_, rank_;
  mutable bool sorted_ = false;
};

// The kept tokens' weights: what a draw and a distribution share.
struct KeptWeights {
  std::vector<float> e;             // (V): e^((logit − max)/T) for every token (greedy: T = 1)
  std::vector<unsigned char> keep;  // (V): 1 for a token that may be drawn
  int kept = 0;          // how many tokens stay: the first `kept` of the order
  float sum = 0.0f;      // S: Σ e over the kept tokens, in id order
  double z = 0.0;        // Z: Σ e over every token (for the full distribution), in double
  float max_logit = 0.0f;
};

// Fills w for these logits and options (w.e is resized to V). Sorts the logits' order only when
// top-p needs it.
void kept_weights(KeptWeights& w, const NextTokenLogits& l, const NextTokenOptions& o);

struct NextTokenEntry {
  int id;
  float logit;
  float p;       // the probability it is drawn with: e / S if kept, else 0
  float p_full;  // its probability before top-k and top-p: e / Z (after the temperature)
  bool kept;
};

struct NextTokenDistribution {
  std::vector<NextTokenEntry> top;  // the first `show` tokens of the order, kept or not
  int kept = 0;                     // tokens that may be drawn
  float kept_mass = 0.0f;           // Σ p_full over them
  float dropped_mass = 0.0f;        // Σ p_full over the others: what top-k and top-p took away
  float entropy = 0.0f;             // of the distribution drawn from, in nats
  float entropy_full = 0.0f;        // of the full distribution (after the temperature), in nats
  float max_logit = 0.0f;
};

// The distribution for these options, with the first `show` tokens of the order (0 … V).
NextTokenDistribution next_token_distribution(const NextTokenLogits& l, const NextTokenOptions& o, int show);

// One draw and what it was made of (for "which random number picked this token").
struct NextTokenDraw {
  int token = 0;
  float p = 0.0f;       // the drawn token's probability when drawn: e / S
  float u = 0.0f;       // the uniform number in [0, 1) (0 for greedy: no number drawn)
  float coin = 0.0f;    // u · S
  float sum = 0.0f;     // S
  float from = 0.0f;    // the drawn token's segment [from, to) of [0, S), in id order
  float to = 0.0f;
  int kept = 0;
  bool greedy = false;
};

// Draws from kept weights with one number of rng (none for greedy).
NextTokenDraw draw_token(const KeptWeights& w, bool greedy, Rng& rng);

}  // namespace ap
