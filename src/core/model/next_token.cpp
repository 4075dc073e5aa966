// next_token.cpp — the next-token distribution and its draw (see next_token.h).
#include "core/model/next_token.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <string>

#include "core/base/input_error.h"
#include "core/tensor/ops.h"        // exp_f32, log_f32

namespace ap {

namespace {

std::string num(long long v) { return std::to_string(v); }

std::string fnum(float v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

}  // namespace

void NextTokenOptions::validate(int vocab_size) const {
  if (!greedy && !(std::isfinite(temperature) && temperature > 0.0f && temperature <= 100.0f))
    throw InputError("temperature is " + fnum(temperature) + ": it must be above 0 and at most 100 (or sample greedily)",
                     "temperature");
  if (top_k < 0 || top_k > vocab_size)
    throw InputError("top_k is " + num(top_k) + ": it must be between 0 (all tokens) and the vocabulary size " +
                         num(vocab_size),
                     "top_k");
  if (!(std::isfinite(top_p) && top_p > 0.0f && top_p <= 1.0f))
    throw InputError("top_p is " + fnum(top_p) + ": it must be above 0 and at most 1 (1 keeps every token)", "top_p");
}

// ---------------------------------------------------------------- the logits

void NextTokenLogits::set(const float* logits, int V) {
  for (int v = 0; v < V; ++v)
    if (!std::isfinite(logits[v]))
      throw InputError("the logits are not finite (logit " + num(v) +
                           " is not a number or infinite): the model has diverged",
                       "logits");
  logits_.assign(logits, logits + V);
  sorted_ = false;
}

void NextTokenLogits::sort() const {
  const int V = vocab_size();
  order_.resize(static_cast<size_t>(V));
  std::iota(order_.begin(), order_.end(), 0);
  const float* l = logits_.data();
  std::sort(order_.begin(), order_.end(), [l](int a, int b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
  rank_.resize(static_cast<size_t>(V));
  for (int i = 0; i < V; ++i) rank_[static_cast<size_t>(order_[static_cast<size_t>(i)])] = i;
  sorted_ = true;
}

const std::vector<int>& NextTokenLogits::order() const {
  if (!sorted_) sort();
  return order_;
}

const std::vector<int>& NextTokenLogits::rank() const {
  if (!sorted_) sort();
  return rank_;
}

int NextTokenLogits::top_k_count(int k) const {
  const int V = vocab_size();
  if (k <= 0 || k >= V) return V;
  const std::vector<int>& o = order();
  const float kth = logits_[static_cast<size_t>(o[static_cast<size_t>(k - 1)])];
  int n = k;
  while (n < V && logits_[static_cast<size_t>(o[static_cast<size_t>(n)])] == kth) ++n;
  return n;
}

// ---------------------------------------------------------------- the kept weights

void kept_weights(KeptWeights& w, const NextTokenLogits& l, const NextTokenOptions& o) {
  const int V = l.vocab_size();
  if (V < 1) throw InputError("no logits yet: run a prompt first", "logits");
  const float* x = l.logits().data();
  w.e.resize(static_cast<size_t>(V));
  w.keep.assign(static_cast<size_t>(V), 0);
  const float maxv = *std::max_element(x, x + V);
  w.max_logit = maxv;
  // The sampler's arithmetic, as it has always been: inv_t in float, e^((l − max)·inv_t).
  const float inv_t = o.greedy ? 1.0f : 1.0f / o.temperature;
  double z = 0.0;
  for (int v = 0; v < V; ++v) {
    w.e[static_cast<size_t>(v)] = exp_f32((x[v] - maxv) * inv_t);
    z += w.e[static_cast<size_t>(v)];
  }
  w.z = z;
  if (o.greedy) {
    const int best = static_cast<int>(std::max_element(x, x + V) - x);  // the lowest id among ties
    w.keep[static_cast<size_t>(best)] = 1;
    w.kept = 1;
    w.sum = w.e[static_cast<size_t>(best)];
    return;
  }
  // top-k: the logits at least the k-th largest
  float threshold = -INFINITY;
  if (o.top_k > 0 && o.top_k < V) {
    std::vector<float> copy(x, x + V);
    std::nth_element(copy.begin(), copy.begin() + (o.top_k - 1), copy.end(), std::greater<float>());
    threshold = copy[static_cast<size_t>(o.top_k - 1)];
  }
  float sum = 0.0f;
  int kept = 0;
  for (int v = 0; v < V; ++v)
    if (x[v] >= threshold) {
      w.keep[static_cast<size_t>(v)] = 1;
      sum += w.e[static_cast<size_t>(v)];
      ++kept;
    }
  // top-p: the smallest prefix of the order (within top-k's) whose weights reach p of theirs
  if (o.top_p < 1.0f) {
    const std::vector<int>& order = l.order();
    const float goal = o.top_p * sum;
    float cum = 0.0f;
    int m = kept;
    for (int i = 0; i < kept; ++i) {
      cum += w.e[static_cast<size_t>(order[static_cast<size_t>(i)])];
      if (cum >= goal) {
        m = i + 1;
        break;
      }
    }
    if (m < kept) {
      for (int i = m; i < kept; ++i) w.keep[static_cast<size_t>(order[static_cast<size_t>(i)])] = 0;
      kept = m;
      sum = 0.0f;
      for (int v = 0; v < V; ++v)
        if (w.keep[static_cast<size_t>(v)]) sum += w.e[static_cast<size_t>(v)];
    }
  }
  w.kept = kept;
  w.sum = sum;
}

// ---------------------------------------------------------------- the distribution

NextTokenDistribution next_token_distribution(const NextTokenLogits& l, const NextTokenOptions& o, int show) {
  const int V = l.vocab_size();
  o.validate(V);
  KeptWeights w;
  kept_weights(w, l, o);
  NextTokenDistribution d;
  d.kept = w.kept;
  d.max_logit = w.max_logit;
  const float* x = l.logits().data();
  // Entropies from H = ln S − Σ e·a / S with a = ln e = (l − max)/T, in double, one log each.
  const double inv_t = o.greedy ? 1.0 : 1.0 / static_cast<double>(o.temperature);
  double kept_e = 0.0, dropped_e = 0.0, ea_kept = 0.0, ea_all = 0.0, s = 0.0;
  for (int v = 0; v < V; ++v) {
    const double e = w.e[static_cast<size_t>(v)];
    const double ea = e == 0.0 ? 0.0 : e * ((static_cast<double>(x[v]) - w.max_logit) * inv_t);
    ea_all += ea;
    if (w.keep[static_cast<size_t>(v)]) {
      kept_e += e;
      ea_kept += ea;
    } else {
      dropped_e += e;
    }
  }
  s = kept_e;
  d.kept_mass = static_cast<float>(kept_e / w.z);
  d.dropped_mass = static_cast<float>(dropped_e / w.z);
  d.entropy_full = static_cast<float>(static_cast<double>(log_f32(static_cast<float>(w.z))) - ea_all / w.z);
  d.entropy = o.greedy || w.kept == 1
                  ? 0.0f
                  : static_cast<float>(static_cast<double>(log_f32(static_cast<float>(s))) - ea_kept / s);
  if (d.entropy < 0.0f) d.entropy = 0.0f;  // rounding near a one-token distribution
  if (d.entropy_full < 0.0f) d.entropy_full = 0.0f;
  const std::vector<int>& order = l.order();
  const int n = std::max(0, std::min(show, V));
  d.top.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const int id = order[static_cast<size_t>(i)];
    const float e = w.e[static_cast<size_t>(id)];
    const bool kept = w.keep[static_cast<size_t>(id)] != 0;
    d.top.push_back({id, x[id], kept ? (o.greedy ? 1.0f : e / w.sum) : 0.0f,
                     static_cast<float>(static_cast<double>(e) / w.z), kept});
  }
  return d;
}

// ---------------------------------------------------------------- the draw

NextTokenDraw draw_token(const KeptWeights& w, bool greedy, Rng& rng) {
  NextTokenDraw d;
  d.kept = w.kept;
  d.greedy = greedy;
  d.sum = w.sum;
  const int V = static_cast<int>(w.e.size());
  if (greedy) {
    for (int v = 0; v < V; ++v)
      if (w.keep[static_cast<size_t>(v)]) {
        d.token = v;
        d.p = 1.0f;
        d.from = 0.0f;
        d.to = w.sum;
        return d;
      }
  }
  d.u = rng.uniform01();
  d.coin = d.u * w.sum;
  float cdf = 0.0f, before = 0.0f;
  int last = 0;
  float last_from = 0.0f;
  for (int v = 0; v < V; ++v) {
    const float e = w.e[static_cast<size_t>(v)];
    if (!w.keep[static_cast<size_t>(v)] || e == 0.0f) continue;
    before = cdf;
    cdf += e;
    last = v;
    last_from = before;
    if (d.coin < cdf) {
      d.token = v;
      d.from = before;
      d.to = cdf;
      d.p = e / w.sum;
      return d;
    }
  }
  // rounding: the coin landed at the very top
  d.token = last;
  d.from = last_from;
  d.to = cdf;
  d.p = w.e[static_cast<size_t>(last)] / w.sum;
  return d;
}

}  // namespace ap
