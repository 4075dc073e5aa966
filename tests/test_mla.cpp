// test_mla.cpp — multi-head latent attention (mla.h): the absorbed form gives the plain scores and
// context, the KV cache is the latent and the shared rotary key, the backward agrees with finite
// differences (with the options it composes with), and bad input is named. The numbers themselves
// are checked against the float64 NumPy reference (tests/golden, mla_* cases).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>

#include "api/api.h"
#include "core/attention/mla.h"
#include "json_test_util.h"

namespace {

using ap::AttentionOptions;
using ap::MlaInput;
using ap::Tensor;

Tensor rnd(ap::Shape shape, std::mt19937& gen) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tensor t(shape);
  for (float& v : t.data) v = u(gen);
  return t;
}

MlaInput mla_input(std::mt19937& gen, int Tt, int d_model, int H, int d_c, int d_nope, int d_rope, int d_v) {
  MlaInput in;
  in.x = rnd({Tt, d_model}, gen);
  in.W_q = rnd({d_model, H * d_nope}, gen);
  in.W_dkv = rnd({d_model, d_c}, gen);
  in.W_uk = rnd({d_c, H * d_nope}, gen);
  in.W_uv = rnd({d_c, H * d_v}, gen);
  if (d_rope) {
    in.W_kr = rnd({d_model, d_rope}, gen);
    in.W_qr = rnd({d_model, H * d_rope}, gen);
  }
  in.W_o = rnd({H * d_v, 3}, gen);
  return in;
}

double loss(const MlaInput& in, const AttentionOptions& o, const Tensor& d_out) {
  const Tensor out = ap::mla_trace(in, o).attn.out;
  double L = 0;
  for (int64_t i = 0; i < out.numel(); ++i) L += static_cast<double>(d_out.data[i]) * out.data[i];
  return L;
}

}  // namespace

TEST_CASE("MLA: the absorbed form gives the same scores and context", "[attention][mla]") {
  std::mt19937 gen(341);
  for (int d_rope : {0, 2, 4}) {
    AttentionOptions o;
    o.n_head = 3;
    o.causal = true;
    o.base = 2;
    o.rope = d_rope ? ap::RopePairing::interleaved : ap::RopePairing::none;
    const ap::MlaTrace tr = ap::mla_trace(mla_input(gen, 7, 6, 3, 2, 4, d_rope, 2), o);
    INFO("d_rope " << d_rope << ": scores " << tr.max_diff_scores << ", context " << tr.max_diff_context);
    CHECK(tr.max_diff_scores <= 1e-5f);
    CHECK(tr.max_diff_context <= 1e-5f);
    CHECK(tr.attn.head_dim == 4 + d_rope);
    // What the cache holds per position: the latent (d_c) and the shared rotary key (d_rope),
    // against n_head·(head_dim + d_v) for multi-head attention.
    CHECK(tr.cache_floats == 7.0 * (2 + d_rope));
    CHECK(tr.cache_floats_mha == 7.0 * 3 * (4 + d_rope + 2));
  }
}

TEST_CASE("MLA: every head's key shares the one rotary part k_R", "[attention][mla]") {
  std::mt19937 gen(342);
  AttentionOptions o;
  o.n_head = 2;
  o.rope = ap::RopePairing::halves;
  const ap::MlaTrace tr = ap::mla_trace(mla_input(gen, 4, 4, 2, 3, 2, 2, 2), o);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 2; ++i) {
      CHECK(tr.attn.k(0, j, i) == tr.k_R(j, i));
      CHECK(tr.attn.k(1, j, i) == tr.k_R(j, i));
      CHECK(tr.attn.k_rot(0, j, i) == tr.attn.k_rot(1, j, i));
    }
}

TEST_CASE("MLA: backward agrees with finite differences", "[attention][mla][fd]") {
  std::mt19937 gen(343);
  for (int variant = 0; variant < 3; ++variant) {
    AttentionOptions o;
    o.n_head = 2;
    o.causal = variant != 0;
    o.base = variant == 2 ? 2 : 0;
    o.rope = variant ? ap::RopePairing::halves : ap::RopePairing::none;
    o.alibi = variant == 2;
    if (variant == 1) o.flash_block_q = o.flash_block_k = 2;
    MlaInput in = mla_input(gen, 5, 3, 2, 2, 2, variant ? 2 : 0, 2);
    const ap::MlaTrace tr = ap::mla_trace(in, o);
    const Tensor d_out = rnd(tr.attn.out.shape, gen);
    const ap::MlaGrads g = ap::mla_trace_backward(tr, d_out);
    const std::pair<Tensor*, const Tensor*> pairs[] = {{&in.x, &g.d_x},       {&in.W_q, &g.d_W_q},
                                                       {&in.W_dkv, &g.d_W_dkv}, {&in.W_uk, &g.d_W_uk},
                                                       {&in.W_uv, &g.d_W_uv}, {&in.W_kr, &g.d_W_kr},
                                                       {&in.W_qr, &g.d_W_qr}, {&in.W_o, &g.attn.d_W_o}};
    int checked = 0;
    for (const auto& [t, grad] : pairs) {
      if (t->empty()) continue;
      REQUIRE(grad->shape == t->shape);
      for (int64_t i = 0; i < t->numel(); ++i) {
        const float original = t->data[i];
        t->data[i] = original + 1e-2f;
        const double up = loss(in, o, d_out);
        t->data[i] = original - 1e-2f;
        const double down = loss(in, o, d_out);
        const double step = static_cast<double>(original + 1e-2f) - static_cast<double>(original - 1e-2f);
        t->data[i] = original;
        const double numeric = (up - down) / step, analytic = grad->data[i];
        INFO("variant " << variant << ", entry " << i << ": analytic " << analytic << " numeric " << numeric);
        REQUIRE(std::fabs(analytic - numeric) <= 2e-3 * (1.0 + std::fabs(analytic)));
        ++checked;
      }
    }
    CHECK(checked > 60);
  }
}

TEST_CASE("MLA: bad input is named", "[attention][mla][errors]") {
  const std::string base = R"("x": "1 0; 0 1; 1 1", "W_q": "1 0; 0 1", "W_dkv": "1 0; 0 1", "W_uk": "1 0; 0 1",
                               "W_uv": "1 0; 0 1")";
  auto field_of = [&](const std::string& extra) {
    const jt::Value r = jt::parse(ap::trace_json("{" + base + extra + "}"));
    INFO(extra);
    REQUIRE_FALSE(r["ok"].b);
    return r["field"].str;
  };
  CHECK(jt::parse(ap::trace_json("{" + base + "}"))["ok"].b);
  CHECK(field_of(R"(, "W_kr": "1 0; 0 1", "rope": "halves")") == "W_qr");
  CHECK(field_of(R"(, "W_kr": "1 0; 0 1", "W_qr": "1 0 1; 0 1 1", "rope": "halves")") == "W_qr");
  CHECK(field_of(R"(, "W_kr": "1; 0", "W_qr": "1; 0", "rope": "halves")") == "W_kr");
  CHECK(field_of(R"(, "W_kr": "1 0; 0 1", "W_qr": "1 0; 0 1")") == "rope");
  CHECK(field_of(R"(, "n_kv_head": 1)") == "n_kv_head");
  CHECK(field_of(R"(, "V": "1 0; 0 1")") == "V");
  CHECK(field_of(R"(, "seed": 3)") == "seed");
  CHECK(field_of(R"(, "W_o": "1 0 0; 0 1 0; 0 0 1")") == "W_o");
  CHECK(field_of(R"(, "base": 3)") == "base");
  const jt::Value r = jt::parse(ap::trace_json(R"({"Q": "1 0", "K": "1 0", "V": "1", "W_uk": "1 0; 0 1"})"));
  CHECK(r["field"].str == "W_uk");
  const jt::Value q = jt::parse(ap::trace_json(
      R"({"x": "1 0; 0 1", "W_q": "1 0 0; 0 1 0", "W_dkv": "1 0; 0 1", "W_uk": "1 0; 0 1", "W_uv": "1 0; 0 1"})"));
  CHECK(q["field"].str == "W_q");
}
