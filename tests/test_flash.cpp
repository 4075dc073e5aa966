// test_flash.cpp — FlashAttention's tiles in the traced attention (flash.h): the tiled context
// equals the plain one within the stated bound under every option it composes with, the online
// softmax's invariants hold at every step, the backward's recomputation gives the plain gradients
// (and finite differences agree), and bad options are named. The numbers of the steps themselves
// are checked against the float64 NumPy reference (tests/golden/make_golden.py, flash_* cases).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>

#include "api/api.h"
#include "core/attention/attention.h"
#include "core/attention/flash.h"
#include "input_error_util.h"
#include "json_test_util.h"

namespace {

using ap::AttentionInput;
using ap::AttentionOptions;
using ap::Tensor;

Tensor rnd(ap::Shape shape, std::mt19937& gen, float spread = 1.0f) {
  std::uniform_real_distribution<float> u(-spread, spread);
  Tensor t(shape);
  for (float& v : t.data) v = u(gen);
  return t;
}

// Options that compose with the tiles, one set per case.
std::vector<std::pair<std::string, AttentionOptions>> option_sets() {
  std::vector<std::pair<std::string, AttentionOptions>> sets;
  AttentionOptions o;
  o.n_head = 2;
  sets.push_back({"plain", o});
  o.causal = true;
  sets.push_back({"causal", o});
  o.base = 3;
  sets.push_back({"causal base 3", o});
  o.mask = ap::MaskVariant::inclusive;
  o.base = 0;
  sets.push_back({"inclusive (an empty row)", o});
  o.mask = ap::MaskVariant::strict;
  o.base = 2;
  o.window = 3;
  o.sinks = 1;
  o.alibi = true;
  sets.push_back({"window, sink, ALiBi", o});
  o.window = 0;
  o.sinks = 0;
  o.alibi = false;
  o.n_kv_head = 1;
  o.rope = ap::RopePairing::halves;
  sets.push_back({"MQA, RoPE", o});
  return sets;
}

AttentionInput qkv(std::mt19937& gen, const AttentionOptions& o, int T, int hd, int dv, float spread) {
  const int kv = o.n_kv_head ? o.n_kv_head : o.n_head;
  AttentionInput in;
  in.Q = rnd({T, o.n_head * hd}, gen, spread);
  in.K = rnd({T + o.base, kv * hd}, gen, spread);
  in.V = rnd({T + o.base, kv * dv}, gen);
  in.W_o = rnd({o.n_head * dv, 3}, gen);
  return in;
}

}  // namespace

TEST_CASE("FlashAttention: the tiled context equals the plain one within the bound", "[attention][flash]") {
  std::mt19937 gen(331);
  int cases = 0;
  for (auto [name, o] : option_sets())
    for (float spread : {0.5f, 4.0f})  // scores up to about ±60 with spread 4 (head_dim 4)
      for (auto [bq, bk] : {std::pair{1, 1}, {2, 3}, {4, 4}, {7, 2}, {16, 16}}) {
        o.flash_block_q = bq;
        o.flash_block_k = bk;
        const AttentionInput in = qkv(gen, o, 7, 4, 3, spread);
        const ap::AttentionTrace tr = ap::attention_trace(in, o);
        const ap::FlashTrace& f = tr.flash;
        INFO(name << ", spread " << spread << ", blocks " << bq << "×" << bk << ": diff " << f.max_diff_context
                  << " bound " << f.bound_context << ", out " << f.max_diff_out << " bound " << f.bound_out);
        REQUIRE(f.context.shape == tr.context.shape);
        CHECK(f.max_diff_context <= f.bound_context);
        CHECK(f.max_diff_out <= f.bound_out);
        // The bound is float32 rounding: a few hundred u at most here.
        CHECK(f.bound_context < 2e-5f * 4);
        CHECK(f.steps.size() == static_cast<size_t>(o.n_head * f.n_q_blocks * f.n_k_blocks));
        ++cases;
      }
  CHECK(cases == 60);
}

TEST_CASE("FlashAttention: every step keeps the online softmax's invariants", "[attention][flash]") {
  // After the step that ends at key column c, m is the maximum of the row's masked scores up to c,
  // and l·e^m their Σ e^s: checked in double against the plain masked scores.
  std::mt19937 gen(332);
  AttentionOptions o;
  o.n_head = 2;
  o.causal = true;
  o.base = 1;
  o.flash_block_q = 3;
  o.flash_block_k = 2;
  const ap::AttentionTrace tr = ap::attention_trace(qkv(gen, o, 8, 4, 2, 3.0f), o);
  int rescales = 0;
  for (const ap::FlashStep& s : tr.flash.steps)
    for (int r = 0; r < s.rows; ++r) {
      const int i = s.r0 + r;
      double m = -INFINITY;
      for (int j = 0; j < s.c0 + s.cols; ++j) m = std::max(m, static_cast<double>(tr.masked(s.head, i, j)));
      CHECK(s.m.data[r] == static_cast<float>(m));
      if (m == -INFINITY) continue;
      double l = 0;
      for (int j = 0; j < s.c0 + s.cols; ++j) l += std::exp(tr.masked(s.head, i, j) - m);
      CHECK(s.l.data[r] == Approx(l).epsilon(1e-5));
      if (s.alpha.data[r] > 0.0f && s.alpha.data[r] < 1.0f) ++rescales;  // a new maximum rescaled the sums
    }
  CHECK(rescales > 0);
  // Tiles wholly above the causal diagonal are skipped.
  CHECK(tr.flash.steps[2].skipped);  // head 0, query block 0 (positions 1..3), keys 4..5
}

TEST_CASE("FlashAttention: the backward's recomputation gives the plain gradients", "[attention][flash][backward]") {
  std::mt19937 gen(333);
  for (auto [name, o] : option_sets()) {
    const AttentionInput in = qkv(gen, o, 6, 4, 3, 2.0f);
    const ap::AttentionTrace plain = ap::attention_trace(in, o);
    const Tensor d_out = rnd(plain.out.shape, gen);
    const ap::AttentionGrads gp = ap::attention_trace_backward(plain, d_out);
    o.flash_block_q = 4;
    o.flash_block_k = 3;
    const ap::AttentionTrace tiled = ap::attention_trace(in, o);
    const ap::AttentionGrads gf = ap::attention_trace_backward(tiled, d_out);
    INFO(name);
    REQUIRE(!gf.flash_P.empty());
    for (int64_t i = 0; i < plain.weights.numel(); ++i) CHECK(gf.flash_P.data[i] == Approx(plain.weights.data[i]).margin(1e-6));
    const std::pair<const Tensor*, const Tensor*> same[] = {{&gf.d_weights, &gp.d_weights}, {&gf.d_scaled, &gp.d_scaled},
                                                            {&gf.d_v, &gp.d_v}, {&gf.d_Q, &gp.d_Q},
                                                            {&gf.d_K, &gp.d_K}, {&gf.d_V, &gp.d_V}, {&gf.d_W_o, &gp.d_W_o}};
    for (const auto& [a, b] : same) {
      REQUIRE(a->shape == b->shape);
      for (int64_t i = 0; i < a->numel(); ++i) CHECK(a->data[i] == Approx(b->data[i]).margin(1e-5));
    }
    // The tile by tile accumulations end at the plain gradients: a key block's dV and dK after the
    // last query block, a query block's dQ after the last key block (of the rotated q, k with RoPE).
    const Tensor& dk = gp.d_k_rot.empty() ? gp.d_k : gp.d_k_rot;
    const Tensor& dq = gp.d_q_rot.empty() ? gp.d_q : gp.d_q_rot;
    REQUIRE(gf.flash_steps.size() == tiled.flash.steps.size());
    int ends = 0;
    for (const auto& st : gf.flash_steps) {
      if (st.q_block == tiled.flash.n_q_blocks - 1)
        for (int c = 0; c < st.cols; ++c, ++ends) {
          for (int d = 0; d < tiled.d_v; ++d) CHECK(st.dv(c, d) == Approx(gp.d_v(st.head, st.c0 + c, d)).margin(1e-5));
          for (int d = 0; d < tiled.head_dim; ++d) CHECK(st.dk(c, d) == Approx(dk(st.head, st.c0 + c, d)).margin(1e-5));
        }
      if (st.k_block == tiled.flash.n_k_blocks - 1)
        for (int r = 0; r < st.rows; ++r)
          for (int d = 0; d < tiled.head_dim; ++d) CHECK(st.dq(r, d) == Approx(dq(st.head, st.r0 + r, d)).margin(1e-5));
    }
    CHECK(ends == o.n_head * tiled.T_total);
  }
}

TEST_CASE("FlashAttention: gradcheck agrees with the flash backward", "[attention][flash][fd]") {
  const std::string spec = R"({"x": "0.5 -1 0.25; 1 0.5 -0.5; -0.25 0.5 1; 0 1.5 0.5; 0.3 -0.2 0.1",
    "W_q": "1 0 0.5 0; 0 1 0 -0.5; 0.5 0 1 0", "W_k": "0.5 0.5 0 0; 0 1 0.25 0; -0.5 0 1 0.5",
    "W_v": "1 2 0 -1; 0 1 1 0; -1 0 0.5 1", "W_o": "1 0; 0 1; 1 1; 0.5 -0.5", "n_head": 2,
    "causal": true, "base": 1, "alibi": true, "flash_block_q": 3, "flash_block_k": 2, "eps": 0.01})";
  const jt::Value r = jt::parse(ap::gradcheck_json(spec));
  REQUIRE(r["ok"].b);
  REQUIRE(r["checks"].size() > 40);
  for (const jt::Value& c : r["checks"].arr) {
    INFO(c["name"].str << " " << c["analytic"].num << " " << c["numeric"].num);
    CHECK(std::fabs(c["analytic"].num - c["numeric"].num) <= 2e-3 * (1 + std::fabs(c["analytic"].num)));
  }
}

TEST_CASE("FlashAttention: bad options are named", "[attention][flash][errors]") {
  auto field_of = [](const std::string& extra) {
    const jt::Value r = jt::parse(ap::trace_json(R"({"Q": "1 0; 0 1", "K": "1 0; 0 1", "V": "1; 2")" + extra + "}"));
    REQUIRE_FALSE(r["ok"].b);
    return r["field"].str;
  };
  CHECK(field_of(R"(, "flash_block_q": 2)") == "flash_block_k");
  CHECK(field_of(R"(, "flash_block_k": 2)") == "flash_block_q");
  CHECK(field_of(R"(, "flash_block_q": 0, "flash_block_k": 1)") == "flash_block_q");
  CHECK(field_of(R"(, "flash_block_q": 1, "flash_block_k": 1, "softmax": "naive")") == "flash_block_q");
  CHECK(field_of(R"(, "flash": {"block_q": 1})") == "flash");
}
