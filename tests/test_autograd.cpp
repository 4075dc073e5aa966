// test_autograd.cpp — gradients: a central finite-difference check for every autograd op on random
// shapes, and for whole attention layers, reducing outputs with random weights (L = Σ r_i·y_i: a
// plain sum would hide softmax and LayerNorm bugs, whose gradients sum to zero along a row);
// the explicit attention_trace_backward against the autograd graph; tied weights; zero_grad; masked
// positions get exactly zero gradient; naive and stable softmax agree where both are finite.
//
// Tolerance for float32: with eps = 1e-2 and values of order 1, the central difference's
// truncation error is ~eps²·|f'''|/6 ≈ 2e-5, and its rounding error is ~(n ulp of L)/(2·eps)
// ≈ 1e-7·√n·|r|/2e-2 ≈ 1e-4 for n ≤ 400 outputs (L is accumulated in double from the float32
// outputs). We require |numeric − analytic| ≤ 2e-3·(1 + |analytic|): ten times that noise, and a
// hundred times smaller than the error of any real bug seen (a dropped term, a wrong sign, a
// transposed operand all give errors of order 0.1–1).
#include <catch2/catch.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/attention/attention.h"
#include "core/tensor/autograd.h"

namespace {

using Build = std::function<ap::Var(const std::vector<ap::Var>&)>;

ap::Tensor random_tensor(std::mt19937& gen, ap::Shape shape, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> u(lo, hi);
  ap::Tensor t(shape);
  for (float& v : t.data) v = u(gen);
  return t;
}

double weighted(const ap::Tensor& y, const ap::Tensor& r) {
  double L = 0;
  for (int64_t i = 0; i < y.numel(); ++i) L += static_cast<double>(r.data[i]) * y.data[i];
  return L;
}

// Checks ∂L/∂input for every element of every input that needs a gradient (at most `per_input`
// random elements each), L = Σ r·build(inputs).
void fd_check(const std::string& name, const Build& build, std::vector<ap::Tensor> inputs, std::mt19937& gen,
              std::vector<bool> needs_grad = {}, int per_input = 40, float eps = 1e-2f) {
  if (needs_grad.empty()) needs_grad.assign(inputs.size(), true);
  std::vector<ap::Var> leaves;
  for (size_t i = 0; i < inputs.size(); ++i) leaves.push_back(ap::leaf(inputs[i], needs_grad[i]));
  ap::Var y = build(leaves);
  const ap::Tensor r = random_tensor(gen, y->value.shape);
  ap::backward(ap::weighted_sum(y, r));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!needs_grad[i]) continue;
    const ap::Tensor analytic = leaves[i]->grad;
    REQUIRE(analytic.shape == inputs[i].shape);
    std::uniform_int_distribution<int64_t> pick(0, inputs[i].numel() - 1);
    const int64_t n = std::min<int64_t>(per_input, inputs[i].numel());
    for (int64_t s = 0; s < n; ++s) {
      const int64_t j = inputs[i].numel() <= per_input ? s : pick(gen);
      auto eval = [&](float delta) {
        std::vector<ap::Tensor> in = inputs;
        in[i].data[j] += delta;
        std::vector<ap::Var> lv;
        for (const ap::Tensor& t : in) lv.push_back(ap::constant(t));
        return weighted(build(lv)->value, r);
      };
      const double numeric = (eval(eps) - eval(-eps)) / (2.0 * eps);
      const double a = analytic.data[j];
      INFO(name << ": input " << i << " element " << j << " analytic " << a << " numeric " << numeric);
      REQUIRE(std::fabs(numeric - a) <= 2e-3 * (1.0 + std::fabs(a)));
    }
  }
}

int rand_int(std::mt19937& gen, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); }

}  // namespace

TEST_CASE("finite differences: matmul 2-D, batched, and broadcast", "[autograd][fd]") {
  std::mt19937 gen(1);
  for (int trial = 0; trial < 5; ++trial) {
    const int B = rand_int(gen, 1, 3), M = rand_int(gen, 1, 5), K = rand_int(gen, 1, 5), N = rand_int(gen, 1, 5);
    fd_check("matmul 2-D", [](auto& v) { return ap::matmul(v[0], v[1]); },
             {random_tensor(gen, {M, K}), random_tensor(gen, {K, N})}, gen);
    fd_check("matmul 3-D", [](auto& v) { return ap::matmul(v[0], v[1]); },
             {random_tensor(gen, {B, M, K}), random_tensor(gen, {B, K, N})}, gen);
    fd_check("matmul 3-D x 2-D", [](auto& v) { return ap::matmul(v[0], v[1]); },
             {random_tensor(gen, {B, M, K}), random_tensor(gen, {K, N})}, gen);
  }
}

TEST_CASE("finite differences: transpose, permute, reshape", "[autograd][fd]") {
  std::mt19937 gen(2);
  for (int trial = 0; trial < 4; ++trial) {
    const int a = rand_int(gen, 1, 4), b = rand_int(gen, 1, 4), c = rand_int(gen, 1, 4), d = rand_int(gen, 1, 3);
    // Each reshuffle is followed by a matmul with a fixed random matrix so that position matters.
    const ap::Tensor w = random_tensor(gen, {a, 3});  // transpose: (a,b)ᵀ = (b,a) · (a,3)
    fd_check("transpose", [&](auto& v) { return ap::matmul(ap::transpose(v[0]), ap::constant(w)); },
             {random_tensor(gen, {a, b})}, gen);
    const ap::Tensor w4 = random_tensor(gen, {b, 2});
    fd_check("permute", [&](auto& v) { return ap::matmul(ap::reshape(ap::permute(v[0], {2, 0, 3, 1}), {-1, b}), ap::constant(w4)); },
             {random_tensor(gen, {a, b, c, d})}, gen);
    fd_check("reshape", [&](auto& v) { return ap::matmul(ap::reshape(v[0], {c * b, a}), ap::constant(w)); },
             {random_tensor(gen, {a, b, c})}, gen);
  }
}

TEST_CASE("finite differences: add with broadcasting reduces over broadcast axes", "[autograd][fd]") {
  std::mt19937 gen(3);
  const std::vector<std::pair<ap::Shape, ap::Shape>> pairs = {
      {{3, 4}, {3, 4}}, {{2, 3, 4}, {3, 4}}, {{3, 1}, {1, 4}}, {{2, 3, 4}, {4}}, {{2, 1, 4}, {2, 3, 1}}, {{3, 4}, {}}};
  for (const auto& [sa, sb] : pairs)
    fd_check("add " + ap::shape_str(sa) + " + " + ap::shape_str(sb), [](auto& v) { return ap::add(v[0], v[1]); },
             {random_tensor(gen, sa), random_tensor(gen, sb)}, gen);
}

TEST_CASE("finite differences: scale, add_scalar, sum", "[autograd][fd]") {
  std::mt19937 gen(4);
  fd_check("scale", [](auto& v) { return ap::scale(v[0], -0.7f); }, {random_tensor(gen, {3, 5})}, gen);
  fd_check("add_scalar", [](auto& v) { return ap::add_scalar(v[0], 2.5f); }, {random_tensor(gen, {4, 2})}, gen);
  fd_check("sum", [](auto& v) { return ap::sum(v[0]); }, {random_tensor(gen, {2, 3})}, gen);
}

TEST_CASE("finite differences: softmax, stable and naive, with a mask", "[autograd][fd]") {
  std::mt19937 gen(5);
  for (int trial = 0; trial < 4; ++trial) {
    const int H = rand_int(gen, 1, 3), T = rand_int(gen, 1, 5), C = rand_int(gen, 1, 6);
    fd_check("softmax stable", [](auto& v) { return ap::softmax_rows(v[0], true); },
             {random_tensor(gen, {H, T, C}, -3, 3)}, gen);
    fd_check("softmax naive", [](auto& v) { return ap::softmax_rows(v[0], false); },
             {random_tensor(gen, {T, C}, -3, 3)}, gen);
    const ap::Tensor mask = ap::causal_mask(T, T, 0, ap::MaskVariant::strict);
    fd_check("softmax of masked scores", [&](auto& v) { return ap::softmax_rows(ap::add(v[0], ap::constant(mask))); },
             {random_tensor(gen, {H, T, T}, -3, 3)}, gen);
  }
}

TEST_CASE("finite differences: layernorm, gelu, embedding, cross_entropy", "[autograd][fd]") {
  std::mt19937 gen(6);
  for (int trial = 0; trial < 3; ++trial) {
    const int N = rand_int(gen, 1, 5), C = rand_int(gen, 2, 8), V = rand_int(gen, 2, 7);
    fd_check("layernorm", [](auto& v) { return ap::layernorm(v[0], v[1], v[2]); },
             {random_tensor(gen, {N, C}, -2, 2), random_tensor(gen, {C}, 0.5f, 1.5f), random_tensor(gen, {C})}, gen);
    fd_check("gelu", [](auto& v) { return ap::gelu(v[0]); }, {random_tensor(gen, {N, C}, -4, 4)}, gen);
    std::vector<int> ids(N + 2);
    for (int& id : ids) id = rand_int(gen, 0, V - 1);  // repeated ids: their rows collect every use
    fd_check("embedding", [&](auto& v) { return ap::embedding(v[0], ids); }, {random_tensor(gen, {V, C})}, gen);
    std::vector<int> targets(N);
    for (int& t : targets) t = rand_int(gen, 0, V - 1);
    fd_check("cross_entropy", [&](auto& v) { return ap::cross_entropy(v[0], targets); },
             {random_tensor(gen, {N, V}, -3, 3)}, gen);
  }
}

TEST_CASE("a tied weight gets both contributions and zero_grad clears", "[autograd]") {
  std::mt19937 gen(7);
  const ap::Tensor w = random_tensor(gen, {3, 4});
  // y = w·wᵀ uses w twice.
  fd_check("tied w·wT", [](auto& v) { return ap::matmul(v[0], ap::transpose(v[0])); }, {w}, gen);
  ap::Var a = ap::leaf(w), b = ap::leaf(w);
  ap::Var r = ap::leaf(w);
  const ap::Tensor weights = random_tensor(gen, {3, 3});
  ap::backward(ap::weighted_sum(ap::matmul(a, ap::transpose(b)), weights));
  ap::backward(ap::weighted_sum(ap::matmul(r, ap::transpose(r)), weights));
  for (int64_t i = 0; i < w.numel(); ++i) CHECK(r->grad.data[i] == Approx(a->grad.data[i] + b->grad.data[i]).margin(1e-6));
  // Backward twice accumulates; zero_grad clears.
  ap::Var p = ap::leaf(w);
  ap::Var L = ap::sum(ap::scale(p, 2.0f));
  ap::backward(L);
  ap::backward(L);
  CHECK(p->grad.data[0] == 4.0f);
  ap::zero_grad({p});
  for (float g : p->grad.data) CHECK(g == 0.0f);
  // Constants never get a gradient.
  ap::Var c = ap::constant(w);
  ap::backward(ap::sum(ap::add(c, p)));
  CHECK(c->grad.data.empty());
}

namespace {

// Attention composed from autograd ops: the same computation as attention_trace, so its
// gradients check attention_trace_backward independently.
struct GraphAttention {
  std::vector<ap::Var> leaves;  // x, W_q, W_k, W_v, b_q, b_k, b_v, W_o, b_o (present ones)
  ap::Var out;
};

ap::Var linear(const ap::Var& x, const ap::Var& W, const ap::Var* b) {
  ap::Var y = ap::matmul(x, W);
  return b ? ap::add(y, *b) : y;
}

ap::Var heads(const ap::Var& m, int H) {  // (T, H·d) → (H, T, d)
  const ap::Shape& s = m->value.shape;
  return ap::permute(ap::reshape(m, {s[0], H, s[1] / H}), {1, 0, 2});
}

ap::Var attention_graph(const std::vector<ap::Var>& v, const ap::AttentionOptions& o, bool biases) {
  const ap::Var &x = v[0], &Wq = v[1], &Wk = v[2], &Wv = v[3];
  const int Tt = x->value.shape[0], T = Tt - o.base, d = x->value.shape[1], H = o.n_head;
  // Rows base.. of x as a matmul with a constant selection matrix, so x's gradient flows.
  ap::Tensor select({T, Tt});
  for (int i = 0; i < T; ++i) select(i, o.base + i) = 1.0f;
  const ap::Var xq = ap::matmul(ap::constant(select), x);
  (void)d;
  ap::Var Q = linear(xq, Wq, biases ? &v[4] : nullptr);
  ap::Var K = linear(x, Wk, biases ? &v[5] : nullptr);
  ap::Var V = linear(x, Wv, biases ? &v[6] : nullptr);
  ap::Var q = heads(Q, H), k = heads(K, H), vv = heads(V, H);
  const int hd = q->value.shape[2];
  ap::Var s = ap::matmul(q, ap::transpose(k));
  if (o.scale) s = ap::scale(s, 1.0f / std::sqrt(static_cast<float>(hd)));
  if (o.causal) s = ap::add(s, ap::constant(ap::causal_mask(T, Tt, o.base, o.mask)));
  ap::Var w = ap::softmax_rows(s, o.stable_softmax);
  ap::Var ctx = ap::matmul(w, vv);  // (H, T, dv)
  const int dv = ctx->value.shape[2];
  ap::Var concat = ap::reshape(ap::permute(ctx, {1, 0, 2}), {T, H * dv});
  const size_t n = biases ? 7 : 4;
  return v.size() > n ? linear(concat, v[n], v.size() > n + 1 ? &v[n + 1] : nullptr) : concat;
}

ap::AttentionInput to_input(const std::vector<ap::Tensor>& t, bool biases) {
  ap::AttentionInput in;
  in.x = t[0];
  in.W_q = t[1];
  in.W_k = t[2];
  in.W_v = t[3];
  size_t n = 4;
  if (biases) { in.b_q = t[4]; in.b_k = t[5]; in.b_v = t[6]; n = 7; }
  if (t.size() > n) in.W_o = t[n];
  if (t.size() > n + 1) in.b_o = t[n + 1];
  return in;
}

}  // namespace

TEST_CASE("attention_trace_backward equals the autograd graph and finite differences", "[autograd][attention][fd]") {
  std::mt19937 gen(8);
  struct Config { int T_total, d_model, H, hd, dv, d_out, base; bool causal, inclusive, scale, biases, W_o, b_o; };
  const Config configs[] = {
      {2, 2, 1, 2, 2, 2, 0, false, false, true, false, true, false},
      {4, 4, 1, 4, 4, 4, 0, true, false, true, false, false, false},
      {5, 6, 2, 3, 2, 5, 2, true, false, true, true, true, true},
      {4, 8, 4, 2, 2, 3, 0, true, true, true, true, true, false},   // inclusive: row 0 empty
      {3, 3, 1, 2, 3, 2, 1, false, false, false, false, true, true},
      {6, 4, 2, 2, 3, 4, 3, true, false, true, true, false, false},
  };
  for (const Config& c : configs) {
    ap::AttentionOptions o;
    o.n_head = c.H;
    o.causal = c.causal;
    o.mask = c.inclusive ? ap::MaskVariant::inclusive : ap::MaskVariant::strict;
    o.base = c.base;
    o.scale = c.scale;
    std::vector<ap::Tensor> t = {random_tensor(gen, {c.T_total, c.d_model}),
                                 random_tensor(gen, {c.d_model, c.H * c.hd}),
                                 random_tensor(gen, {c.d_model, c.H * c.hd}),
                                 random_tensor(gen, {c.d_model, c.H * c.dv})};
    if (c.biases)
      for (int w : {c.H * c.hd, c.H * c.hd, c.H * c.dv}) t.push_back(random_tensor(gen, {w}));
    if (c.W_o) t.push_back(random_tensor(gen, {c.H * c.dv, c.d_out}));
    if (c.W_o && c.b_o) t.push_back(random_tensor(gen, {c.d_out}));
    const std::string name = "attention T_total=" + std::to_string(c.T_total) + " H=" + std::to_string(c.H) +
                             " base=" + std::to_string(c.base);

    // 1. The graph's gradients agree with finite differences.
    fd_check(name, [&](auto& v) { return attention_graph(v, o, c.biases); }, t, gen);

    // 2. attention_trace_backward agrees with the graph, for a random upstream gradient.
    const ap::AttentionTrace tr = ap::attention_trace(to_input(t, c.biases), o);
    const ap::Tensor d_out = random_tensor(gen, tr.out.shape);
    std::vector<ap::Var> leaves;
    for (const ap::Tensor& x : t) leaves.push_back(ap::leaf(x));
    ap::Var out = attention_graph(leaves, o, c.biases);
    for (int64_t i = 0; i < out->value.numel(); ++i) REQUIRE(out->value.data[i] == Approx(tr.out.data[i]).margin(1e-6));
    ap::backward(out, d_out);
    const ap::AttentionGrads g = ap::attention_trace_backward(tr, d_out);
    std::vector<const ap::Tensor*> explicit_grads = {&g.d_x, &g.d_W_q, &g.d_W_k, &g.d_W_v};
    if (c.biases) explicit_grads.insert(explicit_grads.end(), {&g.d_b_q, &g.d_b_k, &g.d_b_v});
    if (c.W_o) explicit_grads.push_back(&g.d_W_o);
    if (c.W_o && c.b_o) explicit_grads.push_back(&g.d_b_o);
    REQUIRE(explicit_grads.size() == leaves.size());
    for (size_t i = 0; i < leaves.size(); ++i) {
      INFO(name << ": gradient " << i);
      REQUIRE(explicit_grads[i]->numel() == leaves[i]->grad.numel());
      for (int64_t j = 0; j < leaves[i]->grad.numel(); ++j)
        REQUIRE(explicit_grads[i]->data[j] == Approx(leaves[i]->grad.data[j]).margin(1e-5).epsilon(1e-4));
    }

    // 3. Masked positions and empty rows get exactly zero gradient.
    if (c.causal) {
      for (int h = 0; h < c.H; ++h)
        for (int i = 0; i < tr.T; ++i)
          for (int j = 0; j < tr.T_total; ++j)
            if (std::isinf(tr.mask(i, j))) {
              REQUIRE(g.d_scaled(h, i, j) == 0.0f);
              REQUIRE(g.d_scores(h, i, j) == 0.0f);
            }
      for (const ap::EmptyRow& e : tr.empty_rows)
        for (int k = 0; k < c.hd; ++k) REQUIRE(g.d_q(e.head, e.row, k) == 0.0f);
    }
  }
}

TEST_CASE("naive and stable softmax give the same gradients where both are finite", "[autograd][attention]") {
  std::mt19937 gen(9);
  ap::AttentionInput in;
  in.Q = random_tensor(gen, {3, 4});
  in.K = random_tensor(gen, {3, 4});
  in.V = random_tensor(gen, {3, 2});
  ap::AttentionOptions stable, naive;
  stable.causal = naive.causal = true;
  naive.stable_softmax = false;
  const ap::AttentionTrace a = ap::attention_trace(in, stable), b = ap::attention_trace(in, naive);
  const ap::Tensor d_out = random_tensor(gen, a.out.shape);
  const ap::AttentionGrads ga = ap::attention_trace_backward(a, d_out), gb = ap::attention_trace_backward(b, d_out);
  for (const auto& [x, y] : {std::pair{&ga.d_Q, &gb.d_Q}, {&ga.d_K, &gb.d_K}, {&ga.d_V, &gb.d_V}})
    for (int64_t i = 0; i < x->numel(); ++i) CHECK(x->data[i] == Approx(y->data[i]).margin(1e-6));
}

TEST_CASE("attention_trace_backward checks d_out", "[autograd][attention][errors]") {
  ap::AttentionInput in;
  in.Q = ap::Tensor({2, 2}, 1.0f);
  in.K = ap::Tensor({2, 2}, 1.0f);
  in.V = ap::Tensor({2, 3}, 1.0f);
  const ap::AttentionTrace tr = ap::attention_trace(in, {});
  try {
    ap::attention_trace_backward(tr, ap::Tensor({2, 2}));
    FAIL("expected an InputError");
  } catch (const ap::InputError& e) {
    CHECK(e.field == "d_out");
    CHECK_THAT(e.what(), Catch::Contains("[2, 2]") && Catch::Contains("[2, 3]"));
  }
}

TEST_CASE("erf_f32 is within one float32 ulp of erf over -5 to 5 and GELU is x times Phi(x)", "[autograd][ops]") {
  auto ulp_distance = [](float a, float b) {
    int32_t ia, ib;
    std::memcpy(&ia, &a, 4);
    std::memcpy(&ib, &b, 4);
    if (ia < 0) ia = INT32_MIN - ia;
    if (ib < 0) ib = INT32_MIN - ib;
    return std::abs(static_cast<int64_t>(ia) - ib);
  };
  int64_t worst = 0;
  for (float x = -5.0f; x <= 5.0f; x += 1.0f / 4096) {
    const float want = static_cast<float>(std::erf(static_cast<double>(x)));
    worst = std::max(worst, ulp_distance(ap::erf_f32(x), want));
  }
  CHECK(worst <= 1);
  CHECK(ap::erf_f32(0.0f) == 0.0f);
  CHECK(ap::erf_f32(10.0f) == 1.0f);
  CHECK(ap::erf_f32(-10.0f) == -1.0f);
  CHECK(std::isnan(ap::erf_f32(std::nanf(""))));
  const float xs[] = {-3.0f, -1.0f, -0.25f, 0.0f, 0.5f, 2.0f};
  float out[6];
  ap::gelu_forward(out, xs, 6);
  for (int i = 0; i < 6; ++i) {
    const double x = xs[i];
    CHECK(out[i] == Approx(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)))).margin(1e-7));
  }
}
