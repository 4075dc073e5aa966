// test_next_token.cpp — the next-token distribution and its draw (next_token.h), and the sampler
// built on them (generate.h):
//  - the greedy, temperature and top-k draws give the tokens they gave before top-p existed: the
//    sequences below were recorded from the sampler of that time (the same logits, options and
//    seeds; the model's in the reference tier, so the same natively and in wasm);
//  - the distribution against a float64 computation written here: probabilities, the kept set of
//    top-k (ties kept) and top-p (the smallest set reaching p), the kept and dropped mass, both
//    entropies;
//  - a draw agrees with the distribution: the drawn token's probability, its segment, the coin;
//    top-p draws only kept tokens, with the frequencies of the renormalised distribution;
//  - bad options are refused by name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <vector>

#include "input_error_util.h"
#include "core/model/generate.h"
#include "core/kernels/kernels.h"
#include "core/model/next_token.h"

namespace {

std::vector<float> test_logits() {
  const int V = 40;
  std::vector<float> l(V);
  for (int v = 0; v < V; ++v) l[v] = std::sin(0.7f * v) * 3.0f + (v % 5 == 0 ? 1.0f : 0.0f);
  l[7] = l[3];  // a tie
  return l;
}

std::string error_of(const std::function<void()>& f) { return input_error_util::described(f); }

// float64 softmax of l / T
std::vector<double> softmax64(const std::vector<float>& l, double T) {
  double mx = *std::max_element(l.begin(), l.end());
  std::vector<double> p(l.size());
  double z = 0.0;
  for (size_t i = 0; i < l.size(); ++i) z += (p[i] = std::exp((l[i] - mx) / T));
  for (double& x : p) x /= z;
  return p;
}

}  // namespace

TEST_CASE("The sampler draws the tokens it drew before top-p", "[generate][next_token]") {
  struct Case {
    float t;
    int k;
    bool greedy;
    uint64_t seed;
    std::vector<int> tokens;
  };
  // Recorded from the sampler before top-p (sample_token over these logits, 24 draws per seed).
  const std::vector<Case> cases = {
      {1, 0, false, 1, {20, 30, 39, 20, 20, 30, 37, 20, 11, 30, 19, 21, 20, 20, 20, 7, 27, 30, 29, 37, 2, 2, 20, 3}},
      {0.7f, 0, false, 2, {20, 30, 20, 30, 12, 19, 29, 29, 11, 29, 19, 20, 20, 20, 38, 10, 10, 20, 20, 10, 2, 20, 20, 14}},
      {1.5f, 5, false, 3, {10, 30, 29, 10, 20, 30, 10, 38, 29, 38, 30, 30, 29, 20, 30, 30, 20, 10, 20, 29, 30, 38, 30, 20}},
      {1, 1, false, 4, {20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20}},
      {2, 12, false, 5, {12, 30, 10, 3, 7, 11, 39, 20, 12, 21, 12, 3, 38, 12, 39, 39, 30, 20, 7, 20, 3, 39, 7, 38}},
      {1, 0, true, 6, {20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20}},
  };
  const std::vector<float> logits = test_logits();
  for (const Case& c : cases) {
    ap::NextTokenOptions o;
    o.temperature = c.t;
    o.top_k = c.k;
    o.greedy = c.greedy;
    ap::Rng rng(c.seed);
    std::vector<int> got;
    for (int i = 0; i < 24; ++i) got.push_back(ap::sample_token(logits.data(), 40, o, rng));
    CHECK(got == c.tokens);
  }
  // The generation loop over a model (reference tier), past block_size (16) too.
  ap::kernels::set_tier(ap::kernels::Tier::reference);
  ap::GPTConfig cfg = ap::GPTConfig::tiny(12);
  cfg.block_size = 16;
  ap::GPT m(cfg);
  m.init_weights(7);
  struct ModelCase {
    float t;
    int k;
    bool greedy;
    uint64_t seed;
    std::vector<int> tokens;
  };
  for (const ModelCase& c : std::vector<ModelCase>{
           {1, 0, false, 1, {1, 2, 3, 2, 4, 1, 2, 1, 8, 7, 4, 2, 1, 5, 5, 1, 10, 5, 10, 9, 1, 3, 4, 6, 8, 2, 8, 0, 7, 10, 9, 2, 10}},
           {0.8f, 5, false, 9, {1, 2, 3, 3, 5, 3, 6, 5, 1, 1, 2, 2, 2, 2, 1, 2, 6, 10, 6, 6, 6, 4, 6, 0, 8, 0, 1, 2, 5, 1, 1, 1, 1}},
           {1, 0, true, 1, {1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}}}) {
    ap::SampleOptions o;
    o.temperature = c.t;
    o.top_k = c.k;
    o.greedy = c.greedy;
    o.seed = c.seed;
    o.max_new_tokens = 30;
    CHECK(ap::generate(m, {1, 2, 3}, o) == c.tokens);
  }
  ap::kernels::set_tier(ap::kernels::Tier::fast);
}

TEST_CASE("The distribution: temperature, top-k with ties, top-p, masses and entropies", "[next_token]") {
  const std::vector<float> logits = test_logits();
  ap::NextTokenLogits l;
  l.set(logits.data(), 40);
  // the order: logits descending, the lower id first among ties
  const std::vector<int>& order = l.order();
  for (int i = 1; i < 40; ++i) {
    const float a = logits[order[i - 1]], b = logits[order[i]];
    CHECK((a > b || (a == b && order[i - 1] < order[i])));
  }
  for (int i = 0; i < 40; ++i) CHECK(l.rank()[order[i]] == i);

  for (float T : {0.5f, 1.0f, 2.5f}) {
    const std::vector<double> full = softmax64(logits, T);
    ap::NextTokenOptions o;
    o.temperature = T;
    const ap::NextTokenDistribution d = ap::next_token_distribution(l, o, 40);
    REQUIRE(d.top.size() == 40);
    CHECK(d.kept == 40);
    CHECK(d.dropped_mass == 0.0f);
    CHECK(d.kept_mass == Approx(1.0).epsilon(1e-6));
    double h = 0.0;
    for (double p : full) h -= p > 0 ? p * std::log(p) : 0.0;
    CHECK(d.entropy_full == Approx(h).epsilon(1e-5));
    CHECK(d.entropy == Approx(h).epsilon(1e-5));
    for (const ap::NextTokenEntry& e : d.top) {
      CHECK(e.kept);
      CHECK(e.logit == logits[e.id]);
      CHECK(e.p == Approx(full[e.id]).epsilon(1e-5).margin(1e-9));
      CHECK(e.p_full == Approx(full[e.id]).epsilon(1e-5).margin(1e-9));
    }
  }

  // top-k: ids 3 and 7 tie; the k that cuts between them keeps both
  const int tie_rank = std::min(l.rank()[3], l.rank()[7]);
  REQUIRE(std::abs(l.rank()[3] - l.rank()[7]) == 1);
  ap::NextTokenOptions k;
  k.top_k = tie_rank + 1;
  CHECK(l.top_k_count(k.top_k) == tie_rank + 2);
  {
    const ap::NextTokenDistribution d = ap::next_token_distribution(l, k, 40);
    CHECK(d.kept == tie_rank + 2);
    const std::vector<double> full = softmax64(logits, 1.0);
    double kept = 0.0;
    for (int i = 0; i < d.kept; ++i) kept += full[order[i]];
    CHECK(d.kept_mass == Approx(kept).epsilon(1e-6));
    CHECK(d.dropped_mass == Approx(1.0 - kept).epsilon(1e-5));
    double h = 0.0;
    for (int i = 0; i < d.kept; ++i) {
      const double p = full[order[i]] / kept;
      h -= p * std::log(p);
      CHECK(d.top[i].kept);
      CHECK(d.top[i].p == Approx(p).epsilon(1e-5));
    }
    CHECK(d.entropy == Approx(h).epsilon(1e-5));
    for (int i = d.kept; i < 40; ++i) {
      CHECK_FALSE(d.top[i].kept);
      CHECK(d.top[i].p == 0.0f);
    }
  }

  // top-p: the smallest prefix of the order whose probabilities reach p
  for (float p : {0.05f, 0.3f, 0.5f, 0.9f, 0.999f}) {
    ap::NextTokenOptions o;
    o.temperature = 1.3f;
    o.top_p = p;
    const ap::NextTokenDistribution d = ap::next_token_distribution(l, o, 40);
    const std::vector<double> full = softmax64(logits, 1.3);
    double cum = 0.0;
    int m = 0;
    while (m < 40 && cum < p) cum += full[order[m++]];
    CHECK(d.kept == m);
    CHECK(d.kept_mass == Approx(cum).epsilon(1e-5));
    CHECK(d.kept_mass >= p * (1 - 1e-6));
    CHECK(d.kept_mass - d.top[d.kept - 1].p_full < p);  // one fewer would not reach p
  }

  // greedy: the most likely token, probability 1, entropy 0
  ap::NextTokenOptions g;
  g.greedy = true;
  const ap::NextTokenDistribution d = ap::next_token_distribution(l, g, 3);
  CHECK(d.kept == 1);
  CHECK(d.top.size() == 3);
  CHECK(d.top[0].id == order[0]);
  CHECK(d.top[0].p == 1.0f);
  CHECK(d.entropy == 0.0f);
  CHECK(d.entropy_full > 0.0f);
}

TEST_CASE("A draw agrees with its distribution, top-p draws only kept tokens", "[next_token]") {
  const std::vector<float> logits = test_logits();
  ap::NextTokenLogits l;
  l.set(logits.data(), 40);
  ap::NextTokenOptions o;
  o.temperature = 0.9f;
  o.top_p = 0.6f;
  const ap::NextTokenDistribution d = ap::next_token_distribution(l, o, 40);
  ap::KeptWeights w;
  ap::kept_weights(w, l, o);
  ap::Rng rng(3);
  std::map<int, int> counts;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const ap::NextTokenDraw x = ap::draw_token(w, false, rng);
    REQUIRE(w.keep[x.token]);
    CHECK(x.from <= x.coin);
    CHECK(x.coin < x.to);
    CHECK(x.p == Approx((x.to - x.from) / x.sum).epsilon(1e-5));
    ++counts[x.token];
  }
  for (const ap::NextTokenEntry& e : d.top) {
    if (!e.kept) {
      CHECK(counts.count(e.id) == 0);
      continue;
    }
    const double f = counts[e.id] / double(n);
    CHECK(std::abs(f - e.p) < 4 * std::sqrt(e.p * (1 - e.p) / n) + 1e-3);
  }
  // the same seed gives the same draws
  ap::Rng a(11), b(11);
  for (int i = 0; i < 50; ++i) CHECK(ap::draw_token(w, false, a).token == ap::draw_token(w, false, b).token);
  // a generation with top-p repeats from its seed, and draws kept tokens only
  ap::GPT m(ap::GPTConfig::tiny(12));
  m.init_weights(2);
  ap::SampleOptions s;
  s.top_p = 0.5f;
  s.seed = 4;
  s.max_new_tokens = 20;
  CHECK(ap::generate(m, {1, 2}, s) == ap::generate(m, {1, 2}, s));
  ap::Generator gen(m, {1, 2}, s);
  for (int i = 0; i < 10; ++i) {
    const int tok = gen.next();
    ap::KeptWeights kw;
    ap::kept_weights(kw, gen.last_logits(), gen.options());
    CHECK(kw.keep[tok]);
    CHECK(gen.last_draw().token == tok);
  }
  // the options may change between two tokens
  ap::NextTokenOptions greedy;
  greedy.greedy = true;
  gen.set_options(greedy);
  const int tok = gen.next();
  CHECK(tok == gen.last_logits().order()[0]);
  CHECK(gen.last_draw().greedy);
  CHECK(gen.last_draw().p == 1.0f);
}

TEST_CASE("Bad next-token options are refused by name", "[next_token]") {
  const std::vector<float> logits = test_logits();
  ap::NextTokenLogits l;
  l.set(logits.data(), 40);
  auto dist = [&](ap::NextTokenOptions o) { return [&l, o] { ap::next_token_distribution(l, o, 5); }; };
  ap::NextTokenOptions o;
  o.top_p = 0.0f;
  CHECK_THAT(error_of(dist(o)), Catch::StartsWith("top_p: top_p is 0: it must be above 0 and at most 1"));
  o.top_p = 1.5f;
  CHECK_THAT(error_of(dist(o)), Catch::StartsWith("top_p:"));
  o.top_p = NAN;
  CHECK_THAT(error_of(dist(o)), Catch::StartsWith("top_p:"));
  o = {};
  o.temperature = 0.0f;
  CHECK_THAT(error_of(dist(o)), Catch::StartsWith("temperature:"));
  o = {};
  o.top_k = 41;
  CHECK_THAT(error_of(dist(o)), Catch::StartsWith("top_k: top_k is 41"));
  std::vector<float> bad = logits;
  bad[5] = NAN;
  CHECK_THAT(error_of([&] { l.set(bad.data(), 40); }), Catch::StartsWith("logits: the logits are not finite (logit 5"));
  ap::NextTokenLogits empty;
  CHECK_THAT(error_of([&] { ap::next_token_distribution(empty, {}, 5); }), Catch::StartsWith("logits: no logits yet"));
}
