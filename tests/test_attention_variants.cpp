// test_attention_variants.cpp — the modern variants of the traced attention (attention.h: RoPE, ALiBi, GQA,
// sliding window): their defining properties, a finite-difference check of attention_trace_backward under
// each variant, and their input errors. The numbers themselves are checked against the float64
// NumPy reference in test_golden.cpp / test_golden_grad.cpp (tests/golden/make_golden.py).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/attention/attention.h"
#include "input_error_util.h"

namespace {

using ap::AttentionInput;
using ap::AttentionOptions;
using ap::Tensor;

Tensor rnd(ap::Shape shape, std::mt19937& gen) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tensor t(shape);
  for (float& v : t.data) v = u(gen);
  return t;
}

// L = Σ d_out ⊙ out, summed in double.
double loss(const AttentionInput& in, const AttentionOptions& opt, const Tensor& d_out) {
  const Tensor out = ap::attention_trace(in, opt).out;
  double L = 0;
  for (int64_t i = 0; i < out.numel(); ++i) L += static_cast<double>(d_out.data[i]) * out.data[i];
  return L;
}

// Every entry of every given input: the analytic gradient against central differences (eps 1e-2
// on float32 forward passes; the tolerance is test_golden_grad.cpp's for the same reason).
void fd_check(const std::string& name, const AttentionInput& in, const AttentionOptions& opt, std::mt19937& gen) {
  const ap::AttentionTrace tr = ap::attention_trace(in, opt);
  const Tensor d_out = rnd(tr.out.shape, gen);
  const ap::AttentionGrads g = ap::attention_trace_backward(tr, d_out);
  AttentionInput probe = in;
  const std::pair<Tensor*, const Tensor*> pairs[] = {
      {&probe.x, &g.d_x}, {&probe.W_q, &g.d_W_q}, {&probe.W_k, &g.d_W_k}, {&probe.W_v, &g.d_W_v},
      {&probe.b_q, &g.d_b_q}, {&probe.W_o, &g.d_W_o}, {&probe.Q, &g.d_Q}, {&probe.K, &g.d_K}, {&probe.V, &g.d_V}};
  int checked = 0;
  for (const auto& [t, grad] : pairs) {
    if (t->empty()) continue;
    REQUIRE(grad->shape == t->shape);
    for (int64_t i = 0; i < t->numel(); ++i) {
      const float original = t->data[i];
      t->data[i] = original + 1e-2f;
      const double up = loss(probe, opt, d_out);
      t->data[i] = original - 1e-2f;
      const double down = loss(probe, opt, d_out);
      const double step = static_cast<double>(original + 1e-2f) - static_cast<double>(original - 1e-2f);
      t->data[i] = original;
      const double numeric = (up - down) / step, analytic = grad->data[i];
      INFO(name << ": entry " << i << " analytic " << analytic << " numeric " << numeric);
      REQUIRE(std::fabs(analytic - numeric) <= 2e-3 * (1.0 + std::fabs(analytic)));
      ++checked;
    }
  }
  CHECK(checked > 0);
}

AttentionInput x_input(std::mt19937& gen, int T_total, int d_model, int q_cols, int kv_cols, int v_cols) {
  AttentionInput in;
  in.x = rnd({T_total, d_model}, gen);
  in.W_q = rnd({d_model, q_cols}, gen);
  in.W_k = rnd({d_model, kv_cols}, gen);
  in.W_v = rnd({d_model, v_cols}, gen);
  return in;
}

}  // namespace

TEST_CASE("RoPE: scores depend only on the distance between query and key", "[attention][rope]") {
  // One query q and keys all equal to k: with the query at position base, the score of key j is
  // a function of base − j alone, whatever base is.
  std::mt19937 gen(33);
  const Tensor q = rnd({1, 6}, gen), k = rnd({1, 6}, gen);
  for (ap::RopePairing pairing : {ap::RopePairing::interleaved, ap::RopePairing::halves}) {
    auto scores_at = [&](int base) {
      AttentionInput in;
      in.Q = q;
      in.K = Tensor({base + 1, 6});
      for (int j = 0; j <= base; ++j)
        for (int c = 0; c < 6; ++c) in.K(j, c) = k(0, c);
      in.V = Tensor({base + 1, 1}, 1.0f);
      AttentionOptions o;
      o.base = base;
      o.rope = pairing;
      return ap::attention_trace(in, o).scores;
    };
    const Tensor near = scores_at(2), far = scores_at(7);
    for (int d = 0; d <= 2; ++d) CHECK(near.data[2 - d] == Approx(far.data[7 - d]).margin(1e-5));
    // Without RoPE every score would be q·k; with it the distance shows.
    CHECK(std::fabs(near.data[0] - near.data[2]) > 1e-3);
  }
}

TEST_CASE("RoPE: partial rotation leaves the dimensions from rope_dims on untouched", "[attention][rope]") {
  std::mt19937 gen(34);
  AttentionInput in;
  in.Q = rnd({3, 8}, gen);
  in.K = rnd({3, 8}, gen);
  in.V = rnd({3, 2}, gen);
  AttentionOptions o;
  o.rope = ap::RopePairing::halves;
  o.rope_dims = 4;
  const ap::AttentionTrace tr = ap::attention_trace(in, o);
  REQUIRE(tr.rope_dims == 4);
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 8; ++c) {
      if (c >= 4) CHECK(tr.q_rot(0, i, c) == tr.q(0, i, c));
      const float norm_q = tr.q(0, i, 0) * tr.q(0, i, 0) + tr.q(0, i, 2) * tr.q(0, i, 2);
      const float norm_r = tr.q_rot(0, i, 0) * tr.q_rot(0, i, 0) + tr.q_rot(0, i, 2) * tr.q_rot(0, i, 2);
      CHECK(norm_r == Approx(norm_q).margin(1e-6));  // halves: pair (0, 2) turns, keeping its length
    }
  // Position 0 does not turn at all.
  for (int c = 0; c < 8; ++c) CHECK(tr.q_rot(0, 0, c) == tr.q(0, 0, c));
}

TEST_CASE("RoPE: backward agrees with finite differences", "[attention][rope][fd]") {
  std::mt19937 gen(35);
  AttentionOptions o;
  o.n_head = 2;
  o.causal = true;
  o.base = 2;
  o.rope = ap::RopePairing::interleaved;
  AttentionInput in = x_input(gen, 5, 3, 8, 8, 4);
  in.W_o = rnd({4, 3}, gen);
  fd_check("rope interleaved, x mode", in, o, gen);
  o.rope = ap::RopePairing::halves;
  o.rope_dims = 2;
  o.rope_base = 50;
  fd_check("rope halves partial, x mode", in, o, gen);
}

TEST_CASE("RoPE: input errors name the option", "[attention][rope][errors]") {
  using input_error_util::error_of;
  AttentionInput in;
  in.Q = Tensor({1, 6}, 1.0f);
  in.K = Tensor({1, 6}, 1.0f);
  in.V = Tensor({1, 2}, 1.0f);
  AttentionOptions o;
  o.rope_dims = 4;
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "rope_dims");  // rope off
  o.rope = ap::RopePairing::halves;
  o.rope_dims = 8;
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "rope_dims");  // > head_dim
  o.rope_dims = 0;
  o.rope_base = 1.0;
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "rope_base");
  o.rope_base = 10000;
  o.n_head = 2;  // head_dim 3, odd
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "rope");
}

TEST_CASE("ALiBi: with zero queries the weights are the bias alone, e^(−m·distance) normalised",
          "[attention][alibi]") {
  // Q = 0 makes every score 0, so row i's weights are softmax_j(−m·(base + i − j)) over the keys
  // the causal mask leaves: a geometric sequence of ratio e^(−m), worked out here by hand.
  AttentionInput in;
  in.Q = Tensor({2, 4});
  in.K = Tensor({5, 4}, 1.0f);
  in.V = Tensor({5, 2}, 1.0f);
  AttentionOptions o;
  o.n_head = 2;
  o.base = 3;
  o.causal = true;
  o.alibi = true;
  const ap::AttentionTrace tr = ap::attention_trace(in, o);
  REQUIRE(tr.alibi_slopes.data == std::vector<float>{0.0625f, 0.00390625f});  // 2^(−8·1/2), 2^(−8·2/2)
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 2; ++i) {
      const double m = tr.alibi_slopes.data[h];
      double sum = 0;
      for (int j = 0; j <= 3 + i; ++j) sum += std::exp(-m * (3 + i - j));
      for (int j = 0; j < 5; ++j) {
        const double want = j <= 3 + i ? std::exp(-m * (3 + i - j)) / sum : 0.0;
        CHECK(tr.bias(h, i, j) == static_cast<float>(-m * (3 + i - j)));
        CHECK(tr.weights(h, i, j) == Approx(want).margin(1e-6));
      }
    }
}

TEST_CASE("ALiBi: backward agrees with finite differences", "[attention][alibi][fd]") {
  std::mt19937 gen(36);
  AttentionOptions o;
  o.n_head = 2;
  o.causal = true;
  o.base = 1;
  o.alibi = true;
  AttentionInput in = x_input(gen, 4, 3, 4, 4, 4);
  fd_check("alibi geometric", in, o, gen);
  o.alibi_slopes = {0.75f, -0.5f};
  o.rope = ap::RopePairing::halves;
  fd_check("alibi own slopes with rope", in, o, gen);
}

TEST_CASE("ALiBi: input errors name the option", "[attention][alibi][errors]") {
  using input_error_util::error_of;
  AttentionInput in;
  in.Q = Tensor({1, 2}, 1.0f);
  in.K = Tensor({1, 2}, 1.0f);
  in.V = Tensor({1, 2}, 1.0f);
  AttentionOptions o;
  o.alibi_slopes = {0.5f};
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "alibi_slopes");  // alibi off
  o.alibi = true;
  o.n_head = 2;
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "alibi_slopes");  // 1 slope, 2 heads
  o.alibi_slopes = {0.5f, std::nanf("")};
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "alibi_slopes");
}

TEST_CASE("GQA: equals multi-head attention on K and V with each kv head repeated for its group",
          "[attention][gqa]") {
  std::mt19937 gen(37);
  const int H = 4, KV = 2, hd = 2, dv = 3, T = 3;
  AttentionInput gqa;
  gqa.Q = rnd({T, H * hd}, gen);
  gqa.K = rnd({T, KV * hd}, gen);
  gqa.V = rnd({T, KV * dv}, gen);
  AttentionInput mha = gqa;  // K, V widened: query head h gets kv head h / 2's columns
  mha.K = Tensor({T, H * hd});
  mha.V = Tensor({T, H * dv});
  for (int i = 0; i < T; ++i)
    for (int h = 0; h < H; ++h) {
      for (int c = 0; c < hd; ++c) mha.K(i, h * hd + c) = gqa.K(i, (h / 2) * hd + c);
      for (int c = 0; c < dv; ++c) mha.V(i, h * dv + c) = gqa.V(i, (h / 2) * dv + c);
    }
  AttentionOptions o;
  o.n_head = H;
  o.causal = true;
  const ap::AttentionTrace plain = ap::attention_trace(mha, o);
  o.n_kv_head = KV;
  const ap::AttentionTrace grouped = ap::attention_trace(gqa, o);
  CHECK(grouped.kv_head == std::vector<int>{0, 0, 1, 1});
  CHECK(grouped.out.data == plain.out.data);  // the same arithmetic, bit for bit
  const Tensor d_out = rnd(plain.out.shape, gen);
  const ap::AttentionGrads gp = ap::attention_trace_backward(plain, d_out);
  const ap::AttentionGrads gg = ap::attention_trace_backward(grouped, d_out);
  REQUIRE(gg.d_K.shape == gqa.K.shape);
  for (int i = 0; i < T; ++i)
    for (int kv = 0; kv < KV; ++kv)
      for (int c = 0; c < hd; ++c)
        CHECK(gg.d_K(i, kv * hd + c) ==
              Approx(gp.d_K(i, 2 * kv * hd + c) + gp.d_K(i, (2 * kv + 1) * hd + c)).margin(1e-6));
}

TEST_CASE("GQA: backward agrees with finite differences", "[attention][gqa][fd]") {
  std::mt19937 gen(38);
  AttentionOptions o;
  o.n_head = 4;
  o.n_kv_head = 2;
  o.causal = true;
  o.base = 1;
  AttentionInput in = x_input(gen, 4, 3, 8, 4, 4);
  in.W_o = rnd({8, 3}, gen);
  fd_check("gqa x mode", in, o, gen);
  o.n_kv_head = 1;
  o.rope = ap::RopePairing::interleaved;
  in = x_input(gen, 4, 3, 8, 2, 2);
  fd_check("mqa with rope", in, o, gen);
}

TEST_CASE("GQA: input errors name the option or the matrix", "[attention][gqa][errors]") {
  using input_error_util::error_of;
  AttentionInput in;
  in.Q = Tensor({1, 4}, 1.0f);
  in.K = Tensor({1, 4}, 1.0f);
  in.V = Tensor({1, 4}, 1.0f);
  AttentionOptions o;
  o.n_head = 4;
  o.n_kv_head = 3;
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "n_kv_head");
  o.n_kv_head = 8;
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "n_kv_head");
  o.n_kv_head = 2;  // K must be 2 heads of head_dim 1 wide
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "K");
  in.K = Tensor({1, 2}, 1.0f);
  in.V = Tensor({1, 3}, 1.0f);
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "n_kv_head");  // 3 value columns, 2 heads
  in.V = Tensor({1, 2}, 1.0f);
  CHECK_NOTHROW(ap::attention_trace(in, o));
}

TEST_CASE("Sliding window: the mask keeps the last w keys and the sinks", "[attention][window]") {
  AttentionInput in;
  in.Q = Tensor({3, 2}, 0.5f);
  in.K = Tensor({6, 2}, 0.5f);
  in.V = Tensor({6, 1}, 1.0f);
  AttentionOptions o;
  o.causal = true;
  o.base = 3;  // queries at positions 3, 4, 5
  o.window = 2;
  o.sinks = 1;
  // '.' visible, 'x' hidden; key 0 is the sink, and position p sees p − 1 and p.
  const char* want[3] = {".x..xx", ".xx..x", ".xxx.."};
  const Tensor mask = ap::attention_trace(in, o).mask;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 6; ++j) {
      INFO("row " << i << " key " << j);
      CHECK(std::isinf(mask(i, j)) == (want[i][j] == 'x'));
    }
  o.mask = ap::MaskVariant::inclusive;  // position p sees p − 1 only (and the sink)
  const Tensor inclusive = ap::attention_trace(in, o).mask;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 6; ++j) CHECK(std::isinf(inclusive(i, j)) == !(j == 0 || j == 3 + i - 1));
}

TEST_CASE("Sliding window: backward agrees with finite differences", "[attention][window][fd]") {
  std::mt19937 gen(39);
  AttentionOptions o;
  o.n_head = 2;
  o.causal = true;
  o.base = 1;
  o.window = 2;
  o.sinks = 1;
  o.alibi = true;
  AttentionInput in = x_input(gen, 5, 3, 4, 4, 4);
  fd_check("window with sink and alibi", in, o, gen);
}

TEST_CASE("Sliding window: input errors name the option", "[attention][window][errors]") {
  using input_error_util::error_of;
  AttentionInput in;
  in.Q = Tensor({1, 2}, 1.0f);
  in.K = Tensor({1, 2}, 1.0f);
  in.V = Tensor({1, 2}, 1.0f);
  AttentionOptions o;
  o.window = 2;
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "window");  // not causal
  o.causal = true;
  o.window = -1;
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "window");
  o.window = 0;
  o.sinks = 1;
  CHECK(error_of([&] { ap::attention_trace(in, o); }).field == "sinks");
}
