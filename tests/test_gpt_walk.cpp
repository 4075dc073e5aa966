// test_gpt_walk.cpp — the block walk behind JSON (src/api/gpt_walk.cpp), as `gpt api`, the wasm
// module and the page read it:
//  - block_trace's every vector is core/model/block_trace.h's, number for number after the float32
//    round trip of the JSON (so its bit-for-bit checks against the forward, test_block_trace.cpp,
//    carry over), for the default (last) and a middle position, with γ, β and the biases the
//    model's; the top logits are the forward's last row's largest, with their softmax;
//    (a model without biases and with gelu_new: tests/walk_torch_test.py, through `gpt api`);
//  - weight_row gives the row of weights (and the bias) a matmul output is the dot product of:
//    q's, c_proj's, c_fc's and the logits' terms recombine into the trace's values;
//  - the walk's sampled token ("sample") is generation's first token for the same prompt, seed,
//    temperature, top-k and top-p (greedy too), with the draw's numbers consistent (coin = u·S in
//    the drawn token's segment [from, to)) and the reshaped distribution next_token's;
//  - bad specs are answered by field (prompt, position, sample, weight, layer, row), never a crash.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "api/gpt_calls.h"
#include "api/gpt_session.h"
#include "core/model/block_trace.h"
#include "core/kernels/kernels.h"
#include "json_test_util.h"

namespace {

const char* kSpec = R"({"task":"copy","n_layer":2,"n_embd":16,"n_head":2,"block_size":8,"batch_size":2,"eval_batches":1,"seed":3})";

jt::Value call(ap::GptSession& s, const std::string& line) { return jt::parse(ap::call_json(s, line)); }

// Every number of a JSON array equals the vector's, as float32.
bool same(const jt::Value& a, const std::vector<float>& v) {
  if (!a.is_array() || a.size() != v.size()) return false;
  for (size_t i = 0; i < v.size(); ++i)
    if (static_cast<float>(a.arr[i].num) != v[i]) return false;
  return true;
}
bool same(const jt::Value& a, const float* p, size_t n) { return same(a, std::vector<float>(p, p + n)); }

// Σ_j x_j·w_j in order, then + b: the reference matmul's arithmetic for one output.
float dot(const std::vector<float>& x, const jt::Value& w, const jt::Value& bias) {
  float s = 0.0f;
  for (size_t j = 0; j < x.size(); ++j) s += x[j] * static_cast<float>(w.arr[j].num);
  return bias.is_null() ? s : s + static_cast<float>(bias.num);
}

void check_layernorm(const jt::Value& j, const ap::LayerNormTrace& t, const float* w, const float* b) {
  CHECK(static_cast<float>(j["mean"].num) == t.mean);
  CHECK(static_cast<float>(j["var"].num) == t.var);
  CHECK(static_cast<float>(j["rstd"].num) == t.rstd);
  CHECK(same(j["xhat"], t.xhat));
  CHECK(same(j["out"], t.out));
  CHECK(same(j["gamma"], w, t.out.size()));
  if (b) CHECK(same(j["beta"], b, t.out.size()));
  else CHECK(j["beta"].is_null());
}

std::string prompt_call(const std::string& call_name, const std::string& spec) {
  return R"({"call":")" + call_name + R"(","spec":)" + spec + "}";
}

}  // namespace

TEST_CASE("block_trace: every step of the walk is the core's trace, and weight_row gives each matmul's terms", "[gpt][api][walk]") {
  ap::kernels::set_tier(ap::kernels::Tier::fast);  // the session's tier: the trace is the reference tier anyway
  ap::GptSession s;
  REQUIRE(call(s, std::string(R"({"call":"create","spec":)") + kSpec + "}")["ok"].b);
  REQUIRE(call(s, R"({"call":"train","n":5})")["ok"].b);
  const ap::GPT& m = s.trainer()->model();
  const ap::GPTConfig& c = m.config();
  const int C = c.n_embd;
  const std::vector<int> ids = s.trainer()->tokenizer().encode("abc=ab", "prompt");
  const int T = static_cast<int>(ids.size());
  for (int position : {-1, 2}) {
    INFO("position " << position);
    const jt::Value a = call(s, prompt_call("block_trace", position < 0 ? R"({"prompt":"abc=ab"})"
                                                                       : R"({"prompt":"abc=ab","position":2})"));
    REQUIRE(a["ok"].b);
    const int p = position < 0 ? T - 1 : position;
    const ap::BlockTrace tr = ap::block_trace(m, ids.data(), T, p);
    CHECK(a["position"].num == p);
    CHECK(a["T"].num == T);
    CHECK(a["tokens"].size() == static_cast<size_t>(T));
    CHECK(a["token"].num == ids[static_cast<size_t>(p)]);
    CHECK(a["visible"].num == tr.visible);
    CHECK(a["activation"].str == "gelu");
    CHECK(same(a["wte"], tr.wte));
    CHECK(same(a["wpe"], tr.wpe));
    CHECK(same(a["encoded"], tr.encoded));
    REQUIRE(a["layers"].size() == static_cast<size_t>(c.n_layer));
    for (int l = 0; l < c.n_layer; ++l) {
      const jt::Value& L = a["layers"][static_cast<size_t>(l)];
      const ap::LayerTrace& t = tr.layers[static_cast<size_t>(l)];
      const ap::BlockParams& b = m.p().h[static_cast<size_t>(l)];
      check_layernorm(L["ln_1"], t.ln_1, b.ln_1_w, b.ln_1_b);
      CHECK(same(L["q"], t.q));
      CHECK(same(L["k"], t.k));
      CHECK(same(L["v"], t.v));
      CHECK(same(L["keys"], t.keys));
      CHECK(same(L["values"], t.values));
      REQUIRE(L["heads"].size() == static_cast<size_t>(c.n_head));
      for (int h = 0; h < c.n_head; ++h) {
        const jt::Value& H = L["heads"][static_cast<size_t>(h)];
        CHECK(same(H["dots"], t.heads[static_cast<size_t>(h)].dots));
        CHECK(same(H["scores"], t.heads[static_cast<size_t>(h)].scores));
        CHECK(same(H["weights"], t.heads[static_cast<size_t>(h)].weights));
        CHECK(same(H["context"], t.heads[static_cast<size_t>(h)].context));
      }
      CHECK(same(L["atty"], t.atty));
      CHECK(same(L["attn_proj"], t.attn_proj));
      CHECK(same(L["residual2"], t.residual2));
      check_layernorm(L["ln_2"], t.ln_2, b.ln_2_w, b.ln_2_b);
      CHECK(same(L["fc"], t.fc));
      CHECK(same(L["act"], t.act));
      CHECK(same(L["mlp_proj"], t.mlp_proj));
      CHECK(same(L["residual3"], t.residual3));
      CHECK(same(L["c_fc_b"], b.c_fc_b, 4 * static_cast<size_t>(C)));
      // a matmul output is the dot product of its input with weight_row's row, plus its bias
      const std::string layer = std::to_string(l);
      for (int i : {0, C - 1}) {
        const std::string row = std::to_string(i);
        const jt::Value q = call(s, prompt_call("weight_row", R"({"weight":"c_attn","layer":)" + layer + R"(,"row":)" + row + "}"));
        REQUIRE(q["ok"].b);
        CHECK(dot(t.ln_1.out, q["w"], q["bias"]) == t.q[static_cast<size_t>(i)]);
        const jt::Value o = call(s, prompt_call("weight_row", R"({"weight":"attn.c_proj","layer":)" + layer + R"(,"row":)" + row + "}"));
        CHECK(dot(t.atty, o["w"], o["bias"]) == t.attn_proj[static_cast<size_t>(i)]);
        const jt::Value f = call(s, prompt_call("weight_row", R"({"weight":"c_fc","layer":)" + layer + R"(,"row":)" + row + "}"));
        CHECK(dot(t.ln_2.out, f["w"], f["bias"]) == t.fc[static_cast<size_t>(i)]);
        const jt::Value mp = call(s, prompt_call("weight_row", R"({"weight":"mlp.c_proj","layer":)" + layer + R"(,"row":)" + row + "}"));
        REQUIRE(mp["w"].size() == 4 * static_cast<size_t>(C));
        CHECK(dot(t.act, mp["w"], mp["bias"]) == t.mlp_proj[static_cast<size_t>(i)]);
      }
    }
    check_layernorm(a["ln_f"], tr.ln_f, m.p().ln_f_w, m.p().ln_f_b);
    // the top logits: the largest of the trace's, in order, with their probabilities
    const jt::Value& top = a["top"];
    REQUIRE(top.size() == 10);
    float best = INFINITY;
    for (const jt::Value& e : top.arr) {
      const size_t id = static_cast<size_t>(e["id"].num);
      CHECK(static_cast<float>(e["logit"].num) == tr.logits[id]);
      CHECK(static_cast<float>(e["p"].num) == tr.probs[id]);
      CHECK(tr.logits[id] <= best);
      best = tr.logits[id];
      const jt::Value w = call(s, prompt_call("weight_row", R"({"weight":"lm_head","row":)" + std::to_string(id) + "}"));
      CHECK(w["bias"].is_null());
      CHECK(dot(tr.ln_f.out, w["w"], w["bias"]) == tr.logits[id]);
    }
    int above = 0;
    for (float z : tr.logits) above += z > best;
    CHECK(above < 10);
    // p = e^(z − max) / Σ e^(z − max): the written max and sum give the probability
    const double p0 = std::exp(top[0]["logit"].num - a["max_logit"].num) / a["sum_exp"].num;
    CHECK(p0 == Approx(top[0]["p"].num).epsilon(1e-5));
  }
}

TEST_CASE("block_trace: a model without biases, and bad specs answered by field", "[gpt][api][walk]") {
  ap::GptSession s;
  REQUIRE(call(s, std::string(R"({"call":"create","spec":)") + kSpec + "}")["ok"].b);
  auto field = [&](const std::string& line) {
    const jt::Value v = call(s, line);
    CHECK_FALSE(v["ok"].b);
    return v.has("field") ? v["field"].str : std::string("(none)");
  };
  CHECK(field(prompt_call("block_trace", "{}")) == "prompt");
  CHECK(field(prompt_call("block_trace", R"({"prompt":""})")) == "prompt");
  CHECK(field(prompt_call("block_trace", R"({"prompt":"abc","position":3})")) == "position");
  CHECK(field(prompt_call("block_trace", R"({"prompt":"abc","position":-1})")) == "position");
  CHECK(field(prompt_call("block_trace", R"({"prompt":"abc","position":"x"})")) == "position");
  CHECK(field(prompt_call("block_trace", R"({"prompt":"abc","colour":1})")) == "colour");
  CHECK(field(prompt_call("weight_row", R"({"weight":"c_attn","row":0})")) == "layer");
  CHECK(field(prompt_call("weight_row", R"({"weight":"c_attn","layer":9,"row":0})")) == "layer");
  CHECK(field(prompt_call("weight_row", R"({"weight":"wq","layer":0,"row":0})")) == "weight");
  CHECK(field(prompt_call("weight_row", R"({"weight":"c_fc","layer":0,"row":64})")) == "row");
  CHECK(field(prompt_call("weight_row", R"({"weight":"c_fc","layer":0})")) == "row");
  CHECK(call(s, prompt_call("weight_row", R"({"weight":"c_fc","layer":0,"row":63})"))["ok"].b);
  CHECK(field(prompt_call("block_trace", R"({"prompt":"abc","sample":3})")) == "sample");
  CHECK(field(prompt_call("block_trace", R"({"prompt":"abc","sample":{"top_p":2}})")) == "top_p");
  CHECK(field(prompt_call("block_trace", R"({"prompt":"abc","sample":{"temperature":0}})")) == "temperature");
  CHECK(field(prompt_call("block_trace", R"({"prompt":"abc","sample":{"seed":-1}})")) == "seed");
  CHECK(field(prompt_call("block_trace", R"({"prompt":"abc","sample":{"colour":1}})")) == "colour");

}

TEST_CASE("block_trace: the sampled token is generation's first, for the same seed and settings", "[gpt][api][walk]") {
  ap::GptSession s;
  REQUIRE(call(s, std::string(R"({"call":"create","spec":)") + kSpec + "}")["ok"].b);
  REQUIRE(call(s, R"({"call":"train","n":5})")["ok"].b);  // barely trained: draws spread over many tokens
  const std::vector<std::string> settings = {
      R"("greedy":true)",
      R"("temperature":1)",
      R"("temperature":0.7,"top_k":3)",
      R"("temperature":1.4,"top_p":0.6)",
      R"("temperature":1,"top_k":5,"top_p":0.8)",
  };
  std::vector<int> seen;
  for (const std::string& set : settings) {
    for (int seed : {1, 2, 3, 17}) {
      const std::string opts = set + R"(,"seed":)" + std::to_string(seed);
      INFO(opts);
      const jt::Value a = call(s, prompt_call("block_trace", R"({"prompt":"abc=ab","sample":{)" + opts + "}}"));
      REQUIRE(a["ok"].b);
      REQUIRE(call(s, prompt_call("generate_start", R"({"prompt":"abc=ab",)" + opts + "}"))["ok"].b);
      const jt::Value g = call(s, R"({"call":"generate_next"})");
      REQUIRE(g["ok"].b);
      const jt::Value& S = a["sample"];
      const jt::Value& d = S["draw"];
      CHECK(d["token"].num == g["token"].num);
      CHECK(d["text"].str == g["text"].str);
      CHECK(S["seed"].num == seed);
      // the draw as generation tells it: the same number; the same segment within float rounding
      // (the walk's logits are the reference tier's, generation's the fast tier's)
      CHECK(d["u"].num == g["draw"]["u"].num);
      CHECK(d["from"].num == Approx(g["draw"]["from"].num).epsilon(1e-5).margin(1e-6));
      CHECK(d["to"].num == Approx(g["draw"]["to"].num).epsilon(1e-5));
      CHECK(S["drawn"]["id"].num == d["token"].num);
      CHECK(S["drawn"]["p"].num == d["p"].num);
      if (d["greedy"].b) {
        CHECK(d["u"].num == 0.0);
        CHECK(S["drawn"]["rank"].num == 0);
      } else {
        CHECK(d["u"].num >= 0.0);
        CHECK(d["u"].num < 1.0);
        CHECK(static_cast<float>(d["coin"].num) == static_cast<float>(d["u"].num) * static_cast<float>(d["sum"].num));
        CHECK(d["from"].num <= d["coin"].num);
        CHECK(d["coin"].num < d["to"].num);
        CHECK(S["drawn"]["rank"].num < S["kept"].num);
      }
      // the reshaped distribution is next_token's for the same prompt and options
      const jt::Value n = call(s, prompt_call("next_token", R"({"prompt":"abc=ab",)" + set + "}"));
      REQUIRE(n["ok"].b);
      CHECK(S["kept"].num == n["kept"].num);
      CHECK(S["dropped_mass"].num == n["dropped_mass"].num);
      REQUIRE(S["top"].size() == n["top"].size());
      for (size_t k = 0; k < n["top"].size(); ++k) {
        CHECK(S["top"][k]["id"].num == n["top"][k]["id"].num);
        CHECK(S["top"][k]["p"].num == Approx(n["top"][k]["p"].num).epsilon(1e-5));
      }
      seen.push_back(static_cast<int>(d["token"].num));
    }
  }
  std::sort(seen.begin(), seen.end());
  CHECK(std::unique(seen.begin(), seen.end()) - seen.begin() > 2);  // the draws are draws, not one token
}

TEST_CASE("block_trace: past the keys' limit, kv_layer gives one layer's keys and values, the core's", "[gpt][api][walk]") {
  ap::kernels::set_tier(ap::kernels::Tier::fast);
  ap::GptSession s;
  // 2 layers × 256 wide: 140 visible keys are 71,680 floats a tensor, past the trace's 65,536
  const char* wide = R"({"task":"copy","n_layer":2,"n_embd":256,"n_head":4,"block_size":160,"batch_size":1,"eval_batches":1,"seed":5})";
  REQUIRE(call(s, std::string(R"({"call":"create","spec":)") + wide + "}")["ok"].b);
  std::string prompt;
  while (prompt.size() < 140) prompt += "abcdefghij=";
  prompt.resize(140);
  const std::string base = R"({"prompt":")" + prompt + R"(","position":139)";
  const jt::Value plain = call(s, prompt_call("block_trace", base + "}"));
  REQUIRE(plain["ok"].b);
  CHECK_FALSE(plain["layers"][0].has("keys"));
  CHECK_FALSE(plain["layers"][1].has("keys"));

  const jt::Value one = call(s, prompt_call("block_trace", base + R"(,"kv_layer":1})"));
  REQUIRE(one["ok"].b);
  CHECK_FALSE(one["layers"][0].has("keys"));
  const jt::Value& L = one["layers"][1];
  REQUIRE(L.has("keys"));
  const ap::GPT& m = s.trainer()->model();
  const std::vector<int> ids = s.trainer()->tokenizer().encode(prompt, "prompt");
  const ap::BlockTrace t = ap::block_trace(m, ids.data(), static_cast<int>(ids.size()), 139, 1);
  CHECK(same(L["keys"], t.layers[1].keys));
  CHECK(same(L["values"], t.layers[1].values));
  // the page's terms: head h's q · key j, summed in order, is the score's dot, bit for bit
  const int C = 256, hs = 64;
  for (int h = 0; h < 4; ++h)
    for (int j : {0, 70, 139}) {
      float dot = 0.0f;
      for (int i = 0; i < hs; ++i)
        dot += static_cast<float>(L["q"].arr[static_cast<size_t>(h * hs + i)].num) *
               static_cast<float>(L["keys"].arr[static_cast<size_t>(j * C + h * hs + i)].num);
      CHECK(dot == static_cast<float>(L["heads"][static_cast<size_t>(h)]["dots"].arr[static_cast<size_t>(j)].num));
    }
  const jt::Value bad = call(s, prompt_call("block_trace", base + R"(,"kv_layer":2})"));
  CHECK_FALSE(bad["ok"].b);
  CHECK(bad["field"].str == "kv_layer");
}
