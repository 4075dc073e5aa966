// test_api_json.cpp — the JSON face (api.h): trace_json (identity spec as strings and arrays,
// every documented key of the result, agreement with attention_trace to the bit, seeds,
// empty/overflow rows, non-finite strings), the {"ok":false,...} error shape for bad matrices,
// malformed JSON, wrong types, unknown values and keys, parse_matrix_json, random_matrix_json,
// causal_mask_json, softmax_json, version, and that output numbers are the shortest text that
// reads back to the same float32; hostile JSON (src/formats/json.h's reader and writer): repeated keys
// refused by every entry point, and every output valid UTF-8 whatever bytes the input held.
// Responses are read with the independent tests/json_test_util.h.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "api/api.h"
#include "core/attention/attention.h"
#include "core/base/rng.h"
#include "core/base/utf8.h"
#include "json_test_util.h"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;

namespace {

// The answer as JSON: an object whose "ok" is `ok`.
jt::Value parse_answer(const std::string& text, bool ok) {
  INFO("response: " << text.substr(0, 2000));
  jt::Value v;
  REQUIRE_NOTHROW(v = jt::parse(text));
  REQUIRE(v.is_object());
  REQUIRE(v.has("ok"));
  REQUIRE(v["ok"].is_bool());
  REQUIRE(v["ok"].b == ok);
  return v;
}

jt::Value parse_ok(const std::string& text) { return parse_answer(text, true); }

struct Err {
  std::string error, field;
  int row = -1, column = -1;
};
Err parse_err(const std::string& text) {
  const jt::Value v = parse_answer(text, false);
  INFO("response: " << text.substr(0, 2000));
  REQUIRE(v.has("error"));
  REQUIRE(v["error"].is_string());
  REQUIRE(v.has("field"));
  REQUIRE(v["field"].is_string());
  REQUIRE(v.has("row"));
  REQUIRE(v["row"].is_number());
  REQUIRE(v.has("column"));
  REQUIRE(v["column"].is_number());
  CHECK_FALSE(v["error"].str.empty());
  return Err{v["error"].str, v["field"].str, int(v["row"].num), int(v["column"].num)};
}

// Significant digits of a JSON number's text ("0.00120" → 2, "-1.5e-7" → 2, "100" → 1).
int sig_digits(const std::string& raw) {
  std::string m;
  for (char c : raw) {
    if (c == 'e' || c == 'E') break;
    if (c >= '0' && c <= '9') m += c;
  }
  size_t a = m.find_first_not_of('0');
  if (a == std::string::npos) return 0;
  size_t b = m.find_last_not_of('0');
  return int(b - a + 1);
}
// Fewest significant digits that read back to f.
int min_digits(float f) {
  for (int p = 1; p <= 9; ++p) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, double(f));
    if (static_cast<float>(std::strtod(buf, nullptr)) == f) return p;
  }
  return 9;
}

// Walks every number in a JSON value: each must be a float32 written with the fewest digits.
void check_shortest_numbers(const jt::Value& v, const std::string& path, int& count, int& bad) {
  if (v.is_number()) {
    ++count;
    float f = static_cast<float>(v.num);
    bool ok = static_cast<double>(f) == v.num || std::strtof(v.str.c_str(), nullptr) == f;
    if (f != 0.0f && std::isfinite(f)) ok = ok && sig_digits(v.str) == min_digits(f);
    if (!ok && bad++ < 10) {
      INFO("number " << v.str << " at " << path << " (float " << f << ", shortest has " << min_digits(f)
                     << " digits)");
      CHECK(ok);
    }
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.arr.size(); ++i) check_shortest_numbers(v.arr[i], path + "[" + std::to_string(i) + "]", count, bad);
  } else if (v.is_object()) {
    for (const auto& kv : v.obj) check_shortest_numbers(kv.second, path + "." + kv.first, count, bad);
  }
}

// JSON number text of a float32 → the float it reads back to (or the non-finite string's value).
float as_float(const jt::Value& v) {
  if (v.is_number()) return std::strtof(v.str.c_str(), nullptr);
  return static_cast<float>(jt::to_double(v));
}

bool same_float(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// A 2-D JSON array equals a 2-D tensor, float for float.
void check_matrix_equals(const jt::Value& m, const ap::Tensor& t, const std::string& what) {
  INFO(what);
  REQUIRE(t.dim() == 2);
  REQUIRE(m.is_array());
  REQUIRE(m.size() == size_t(t.shape[0]));
  for (int i = 0; i < t.shape[0]; ++i) {
    REQUIRE(m[i].is_array());
    REQUIRE(m[i].size() == size_t(t.shape[1]));
    for (int j = 0; j < t.shape[1]; ++j) {
      INFO("[" << i << "][" << j << "] json " << (m[i][j].is_number() ? m[i][j].str : m[i][j].str)
               << " core " << t(i, j));
      CHECK(same_float(as_float(m[i][j]), t(i, j)));
    }
  }
}

bool any_string(const jt::Value& v, const std::string& s) {
  if (v.is_string()) return v.str == s;
  for (const auto& e : v.arr)
    if (any_string(e, s)) return true;
  for (const auto& kv : v.obj)
    if (any_string(kv.second, s)) return true;
  return false;
}

// An entry of empty_rows / overflow_rows: an object {"head","row"} or (softmax_json) a row number.
bool lists_row(const jt::Value& list, int head, int row) {
  for (const auto& e : list.arr) {
    if (e.is_number() && int(e.num) == row && head == 0) return true;
    if (e.is_object() && e.has("row") && int(e["row"].num) == row &&
        (!e.has("head") || int(e["head"].num) == head))
      return true;
  }
  return false;
}

const char* kIdentityStrings =
    R"({"x":"1 0; 0 1","W_q":"1 0; 0 1","W_k":"1 0; 0 1","W_v":"1 0; 0 1"})";
const char* kIdentityArrays =
    R"({"x":[[1,0],[0,1]],"W_q":[[1,0],[0,1]],"W_k":[[1,0],[0,1]],"W_v":[[1,0],[0,1]]})";

}  // namespace

// ------------------------------------------------------------------------------- trace_json

TEST_CASE("trace_json: identity spec as strings and as arrays gives identical text", "[api]") {
  std::string a = ap::trace_json(kIdentityStrings);
  std::string b = ap::trace_json(kIdentityArrays);
  CHECK(a == b);
  jt::Value v = parse_ok(a);
  const jt::Value& t = v["trace"];
  CHECK(t["mode"].str == "x");
  CHECK(t["T"].num == 2);
  CHECK(t["T_total"].num == 2);
  CHECK(t["n_head"].num == 1);
  CHECK(t["d_model"].num == 2);
  CHECK(t["head_dim"].num == 2);
  const double p = 1.0 / (1.0 + std::exp(-1.0 / std::sqrt(2.0)));
  auto w = jt::to_matrix(t["heads"][0]["weights"]);
  REQUIRE(w.size() == 2);
  CHECK(w[0][0] == Approx(p).margin(1e-6));
  CHECK(w[0][1] == Approx(1 - p).margin(1e-6));
  CHECK(w[1][0] == Approx(1 - p).margin(1e-6));
  CHECK(w[1][1] == Approx(p).margin(1e-6));
  auto out = jt::to_matrix(t["out"]);
  CHECK(out == w);
}

TEST_CASE("trace_json: the result has every documented key", "[api]") {
  std::string spec = R"({"x":[[1,2,3,4],[0.5,-1,2,0],[3,1,-2,1]],"W_q":"1 0 0 0; 0 1 0 0; 0 0 1 0; 0 0 0 1",
    "W_k":[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],"W_v":[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],
    "W_o":[[1,0],[0,1],[1,0],[0,1]],"b_o":[0.5,-0.5],"n_head":2,"causal":true,"base":1})";
  jt::Value v = parse_ok(ap::trace_json(spec));
  REQUIRE(v.has("trace"));
  const jt::Value& t = v["trace"];
  for (const char* key : {"mode", "T", "T_total", "base", "n_head", "d_model", "head_dim", "d_v", "d_out",
                          "scale_factor", "options", "inputs", "mask", "heads", "concat", "out", "empty_rows",
                          "overflow_rows", "warnings"}) {
    INFO("key " << key);
    CHECK(t.has(key));
  }
  CHECK(t["T"].num == 2);
  CHECK(t["T_total"].num == 3);
  CHECK(t["base"].num == 1);
  CHECK(t["n_head"].num == 2);
  CHECK(t["head_dim"].num == 2);
  CHECK(t["d_v"].num == 2);
  CHECK(t["d_out"].num == 2);
  CHECK(t["options"].is_object());
  CHECK(t["inputs"].is_object());
  CHECK(t["inputs"].has("x"));
  CHECK(t["inputs"].has("W_o"));
  REQUIRE(t["heads"].is_array());
  REQUIRE(t["heads"].size() == 2);
  for (const char* key : {"q", "k", "v", "scores", "scaled", "masked", "weights", "weight_row_sums", "context"}) {
    INFO("head key " << key);
    CHECK(t["heads"][0].has(key));
  }
  // causal mask written with "-inf" strings: row 0 (position 1) sees keys 0,1 only
  auto mask = jt::to_matrix(t["mask"]);
  REQUIRE(mask.size() == 2);
  REQUIRE(mask[0].size() == 3);
  CHECK(mask[0][0] == 0.0);
  CHECK(mask[0][1] == 0.0);
  CHECK(mask[0][2] == -INFINITY);
  CHECK(t["mask"][0][2].is_string());
  CHECK(t["mask"][0][2].str == "-inf");
  CHECK(t["empty_rows"].is_array());
  CHECK(t["overflow_rows"].is_array());
  CHECK(t["warnings"].is_array());
}

TEST_CASE("trace_json agrees with attention_trace to the bit", "[api]") {
  std::string spec = R"({"x":"0.3 -1.2 0.7 2; 1.1 0.4 -0.6 0.2; -0.8 0.9 1.5 -0.3; 0.25 0.5 -1 1",
    "W_q":"0.1 0.2 0.3 0.4; -0.5 0.6 -0.7 0.8; 0.9 -1 1.1 -1.2; 0.13 0.14 -0.15 0.16",
    "W_k":"0.2 -0.1 0.4 0.3; 0.6 0.5 -0.8 0.7; -1 0.9 -1.2 1.1; 0.14 0.13 0.16 -0.15",
    "W_v":"1 2 3 4; 5 6 7 8; -1 -2 -3 -4; 0.5 0.25 0.125 0.0625",
    "b_q":"0.01 0.02 0.03 0.04","W_o":"1 0.5; -0.5 1; 0.25 0.75; 2 -1","b_o":[0.1,0.2],
    "n_head":2,"causal":true,"base":1})";
  jt::Value v = parse_ok(ap::trace_json(spec));
  const jt::Value& t = v["trace"];

  ap::AttentionInput in;
  in.x = ap::Tensor::from_rows({{0.3f, -1.2f, 0.7f, 2}, {1.1f, 0.4f, -0.6f, 0.2f}, {-0.8f, 0.9f, 1.5f, -0.3f}, {0.25f, 0.5f, -1, 1}});
  in.W_q = ap::Tensor::from_rows({{0.1f, 0.2f, 0.3f, 0.4f}, {-0.5f, 0.6f, -0.7f, 0.8f}, {0.9f, -1, 1.1f, -1.2f}, {0.13f, 0.14f, -0.15f, 0.16f}});
  in.W_k = ap::Tensor::from_rows({{0.2f, -0.1f, 0.4f, 0.3f}, {0.6f, 0.5f, -0.8f, 0.7f}, {-1, 0.9f, -1.2f, 1.1f}, {0.14f, 0.13f, 0.16f, -0.15f}});
  in.W_v = ap::Tensor::from_rows({{1, 2, 3, 4}, {5, 6, 7, 8}, {-1, -2, -3, -4}, {0.5f, 0.25f, 0.125f, 0.0625f}});
  in.b_q = ap::Tensor({4}, std::vector<float>{0.01f, 0.02f, 0.03f, 0.04f});
  in.W_o = ap::Tensor::from_rows({{1, 0.5f}, {-0.5f, 1}, {0.25f, 0.75f}, {2, -1}});
  in.b_o = ap::Tensor({2}, std::vector<float>{0.1f, 0.2f});
  ap::AttentionOptions o;
  o.n_head = 2;
  o.causal = true;
  o.base = 1;
  ap::AttentionTrace tr = ap::attention_trace(in, o);

  CHECK(as_float(t["scale_factor"]) == tr.scale_factor);
  check_matrix_equals(t["mask"], tr.mask, "mask");
  for (int h = 0; h < 2; ++h) {
    INFO("head " << h);
    const jt::Value& hd = t["heads"][h];
    check_matrix_equals(hd["q"], tr.q.slice0(h), "q");
    check_matrix_equals(hd["k"], tr.k.slice0(h), "k");
    check_matrix_equals(hd["v"], tr.v.slice0(h), "v");
    check_matrix_equals(hd["scores"], tr.scores.slice0(h), "scores");
    check_matrix_equals(hd["scaled"], tr.scaled.slice0(h), "scaled");
    check_matrix_equals(hd["masked"], tr.masked.slice0(h), "masked");
    check_matrix_equals(hd["weights"], tr.weights.slice0(h), "weights");
    check_matrix_equals(hd["context"], tr.context.slice0(h), "context");
    auto sums = jt::to_vector(hd["weight_row_sums"]);
    REQUIRE(sums.size() == 3);
    for (int i = 0; i < 3; ++i) CHECK(float(sums[i]) == tr.weight_row_sums(h, i));
  }
  check_matrix_equals(t["concat"], tr.concat, "concat");
  check_matrix_equals(t["out"], tr.out, "out");

  int count = 0, bad = 0;
  check_shortest_numbers(v, "$", count, bad);
  CHECK(count > 100);
  CHECK(bad == 0);
}

TEST_CASE("trace_json: output numbers are the shortest text that reads back to the float", "[api]") {
  std::string a = ap::parse_matrix_json("0.1 0.2 0.3; 1 100 1e-3; 0.333333343 -2.5 16777216");
  jt::Value v = parse_ok(a);
  const jt::Value& m = v["matrix"];
  CHECK(m[0][0].str == "0.1");
  CHECK(m[0][1].str == "0.2");
  CHECK(m[0][2].str == "0.3");
  CHECK(m[1][0].str == "1");
  CHECK(sig_digits(m[1][1].str) == 1);
  CHECK(std::strtof(m[1][2].str.c_str(), nullptr) == 1e-3f);
  CHECK(sig_digits(m[1][2].str) == 1);
  CHECK(std::strtof(m[2][0].str.c_str(), nullptr) == 0.333333343f);
  CHECK(sig_digits(m[2][0].str) == min_digits(0.333333343f));
  CHECK(m[2][1].str == "-2.5");
  CHECK(std::strtof(m[2][2].str.c_str(), nullptr) == 16777216.0f);

  jt::Value r = parse_ok(ap::random_matrix_json(R"({"rows":20,"cols":20,"seed":5,"bound":1.7})"));
  int count = 0, bad = 0;
  check_shortest_numbers(r, "$", count, bad);
  CHECK(count >= 400);
  CHECK(bad == 0);

  jt::Value t = parse_ok(ap::trace_json(R"({"x":"0.3 0.1 -0.2; 0.7 -0.9 0.4; 1 2 3","seed":11,"causal":true})"));
  count = bad = 0;
  check_shortest_numbers(t, "$", count, bad);
  CHECK(bad == 0);
}

TEST_CASE("trace_json: QKV mode", "[api]") {
  jt::Value v = parse_ok(ap::trace_json(R"({"Q":"1 0","K":"1 0; 0 1","V":"1 2; 3 4","base":1,"causal":true})"));
  const jt::Value& t = v["trace"];
  CHECK(t["mode"].str == "qkv");
  CHECK(t["T"].num == 1);
  CHECK(t["T_total"].num == 2);
  auto w = jt::to_matrix(t["heads"][0]["weights"]);
  const double p = 1.0 / (1.0 + std::exp(-1.0 / std::sqrt(2.0)));
  CHECK(w[0][0] == Approx(p).margin(1e-6));
  auto out = jt::to_matrix(t["out"]);
  CHECK(out[0][0] == Approx(p * 1 + (1 - p) * 3).margin(1e-5));
  CHECK(out[0][1] == Approx(p * 2 + (1 - p) * 4).margin(1e-5));
}

TEST_CASE("trace_json: seed fills missing weights deterministically - per-matrix streams", "[api]") {
  const std::string x = R"("x":"0.5 -1 2; 1 0 -0.5; 0.25 0.75 1; -2 1 0")";
  std::string a1 = ap::trace_json("{" + x + R"(,"seed":3})");
  std::string a2 = ap::trace_json("{" + x + R"(,"seed":3})");
  std::string b = ap::trace_json("{" + x + R"(,"seed":4})");
  CHECK(a1 == a2);
  CHECK(a1 != b);
  jt::Value va = parse_ok(a1);
  const jt::Value& in = va["trace"]["inputs"];
  for (const char* w : {"W_q", "W_k", "W_v"}) {
    INFO(w);
    REQUIRE(in.has(w));
    auto m = jt::to_matrix(in[w]);
    REQUIRE(m.size() == 3);  // square, d_model × d_model
    REQUIRE(m[0].size() == 3);
    const double bound = 1.0 / std::sqrt(3.0);  // head_dim = 3 with n_head 1
    for (auto& row : m)
      for (double e : row) {
        CHECK(e >= -bound);
        CHECK(e < bound);
      }
  }
  CHECK(jt::to_matrix(in["W_q"]) != jt::to_matrix(in["W_k"]));
  CHECK(jt::to_matrix(in["W_k"]) != jt::to_matrix(in["W_v"]));
  // giving W_q explicitly does not shift the random W_k and W_v
  jt::Value vq = parse_ok(ap::trace_json("{" + x + R"(,"seed":3,"W_q":"1 0 0; 0 1 0; 0 0 1"})"));
  const jt::Value& in2 = vq["trace"]["inputs"];
  CHECK(jt::to_matrix(in2["W_q"]) == std::vector<std::vector<double>>{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}});
  CHECK(jt::to_matrix(in2["W_k"]) == jt::to_matrix(in["W_k"]));
  CHECK(jt::to_matrix(in2["W_v"]) == jt::to_matrix(in["W_v"]));
  // with n_head 3 the bound is 1/√1
  jt::Value v3 = parse_ok(ap::trace_json("{" + x + R"(,"seed":3,"n_head":3})"));
  bool above = false;
  for (auto& row : jt::to_matrix(v3["trace"]["inputs"]["W_q"]))
    for (double e : row) {
      CHECK(std::fabs(e) <= 1.0);
      above = above || std::fabs(e) > 1.0 / std::sqrt(3.0);
    }
  (void)above;  // 9 samples: not asserted, only the bound is
}

TEST_CASE("trace_json: inclusive mask to empty row reported - zeros - no NaN text", "[api]") {
  std::string s = ap::trace_json(R"({"Q":"1 2; 3 4; 5 6","K":"1 0; 0 1; 1 1","V":"1 2; 3 4; 5 6",
      "causal":true,"mask":"inclusive"})");
  jt::Value v = parse_ok(s);
  const jt::Value& t = v["trace"];
  CHECK(lists_row(t["empty_rows"], 0, 0));
  CHECK(t["empty_rows"].size() == 1);
  CHECK(t["warnings"].size() >= 1);
  auto w = jt::to_matrix(t["heads"][0]["weights"]);
  for (double e : w[0]) CHECK(e == 0.0);
  auto ctx = jt::to_matrix(t["heads"][0]["context"]);
  for (double e : ctx[0]) CHECK(e == 0.0);
  CHECK_FALSE(any_string(t["heads"], "nan"));
  CHECK_FALSE(any_string(t["out"], "nan"));
  CHECK(any_string(t["mask"], "-inf"));
}

TEST_CASE("trace_json: naive softmax overflow to nan strings and overflow_rows", "[api]") {
  jt::Value v = parse_ok(ap::trace_json(R"({"Q":"40 40; 0.1 0.2","K":"40 40; 1 1","V":"1 2; 3 4","softmax":"naive"})"));
  const jt::Value& t = v["trace"];
  CHECK(lists_row(t["overflow_rows"], 0, 0));
  CHECK(t["warnings"].size() >= 1);
  CHECK(any_string(t["heads"][0]["weights"], "nan"));
  jt::Value s = parse_ok(ap::trace_json(R"({"Q":"40 40; 0.1 0.2","K":"40 40; 1 1","V":"1 2; 3 4","softmax":"stable"})"));
  CHECK(s["trace"]["overflow_rows"].size() == 0);
  CHECK_FALSE(any_string(s["trace"]["heads"], "nan"));
}

// --------------------------------------------------------------------------- trace_json errors

TEST_CASE("trace_json errors: shapes - with the core's message", "[api][errors]") {
  Err e = parse_err(ap::trace_json(R"({"Q":"1 2 3 4; 5 6 7 8","K":"1 2 3; 4 5 6","V":"1 2 3; 4 5 6"})"));
  CHECK(e.error == "K has 3 columns but Q has 4");
  CHECK(e.field == "K");
  CHECK(e.row == 0);
  CHECK(e.column == 0);

  Err b = parse_err(ap::trace_json(R"({"x":"1 2; 3 4","W_q":"1 0; 0 1","W_k":"1 0; 0 1","W_v":"1 0; 0 1","base":2})"));
  CHECK(b.field == "base");
  Err n = parse_err(ap::trace_json(R"({"Q":"1 2 3","K":"1 2 3","V":"1 2 3","n_head":2})"));
  CHECK((n.field == "n_head" || n.field == "Q"));
  Err z = parse_err(ap::trace_json(R"({"Q":"1 2","K":"1 2","V":"1 2","n_head":0})"));
  CHECK(z.field == "n_head");
}

TEST_CASE("trace_json errors: a bad matrix string gives field - row and column", "[api][errors]") {
  Err e = parse_err(ap::trace_json(R"({"x":"1 2; 3 abc","W_q":"1 0; 0 1","W_k":"1 0; 0 1","W_v":"1 0; 0 1"})"));
  CHECK(e.field == "x");
  CHECK(e.row == 2);
  CHECK(e.column == 2);
  Err r = parse_err(ap::trace_json(R"({"x":"1 2; 3 4","W_q":"1 0; 0 1","W_k":"1 0 0; 0 1","W_v":"1 0; 0 1"})"));
  CHECK(r.field == "W_k");
  CHECK(r.row == 2);
  Err a = parse_err(ap::trace_json(R"({"Q":[[1,2],[3]],"K":"1 2","V":"1 2"})"));
  CHECK(a.field == "Q");
  Err s = parse_err(ap::trace_json(R"({"Q":[[1,"x"]],"K":"1 2","V":"1 2"})"));
  CHECK(s.field == "Q");
}

TEST_CASE("trace_json errors: non-finite strings in a matrix are refused with their cell", "[api][errors]") {
  for (const char* word : {"nan", "inf", "-inf"}) {
    INFO(word);
    Err e = parse_err(ap::trace_json(std::string(R"({"Q":[[1,2],[3,")") + word + R"("]],"K":"1 2; 3 4","V":"1 2; 3 4"})"));
    CHECK(e.field == "Q");
    CHECK(e.row == 2);
    CHECK(e.column == 2);
  }
  Err e = parse_err(ap::trace_json(R"({"Q":"1 2","K":"1 2","V":"1 nan"})"));
  CHECK(e.field == "V");
  CHECK(e.row == 1);
  CHECK(e.column == 2);
}

TEST_CASE("trace_json errors: malformed JSON", "[api][errors]") {
  for (const char* spec : {"", "{", R"({"x": [[1,2]})", R"({"x" [[1]]})", "[1,2]", "nul", R"({"n_head":1,})",
                           R"({"n_head":1} trailing)", "{'x': 1}"}) {
    INFO("spec: " << spec);
    Err e = parse_err(ap::trace_json(spec));
    CHECK_FALSE(e.error.empty());
  }
}

TEST_CASE("trace_json errors: wrong types and unknown values", "[api][errors]") {
  const std::string qkv = R"("Q":"1 2","K":"1 2","V":"1 2")";
  struct C { const char* extra; const char* field; };
  for (C c : {C{R"("n_head":"two")", "n_head"}, C{R"("n_head":1.5)", "n_head"}, C{R"("causal":"yes")", "causal"},
              C{R"("mask":"diagonal")", "mask"}, C{R"("mask":3)", "mask"}, C{R"("softmax":"fast")", "softmax"},
              C{R"("base":-1)", "base"}, C{R"("base":"0")", "base"}, C{R"("scale":1)", "scale"},
              C{R"("seed":-3)", "seed"}, C{R"("seed":"abc")", "seed"}, C{R"("W_o":5)", "W_o"},
              C{R"("b_o":{"a":1})", "b_o"}}) {
    INFO("extra: " << c.extra);
    Err e = parse_err(ap::trace_json("{" + qkv + "," + c.extra + "}"));
    CHECK(e.field == c.field);
  }
}

TEST_CASE("trace_json errors: an unknown key is an error naming the key", "[api][errors]") {
  // api.h does not say; a typo such as "n_heads" silently ignored would be worse than an error.
  Err e = parse_err(ap::trace_json(R"({"Q":"1 2","K":"1 2","V":"1 2","n_heads":2})"));
  CHECK_THAT(e.error, Contains("n_heads"));
  Err f = parse_err(ap::trace_json(R"({"Q":"1 2","K":"1 2","V":"1 2","foo":1})"));
  CHECK_THAT(f.error, Contains("foo"));
}

TEST_CASE("trace_json errors: missing inputs", "[api][errors]") {
  Err none = parse_err(ap::trace_json("{}"));
  CHECK_FALSE(none.error.empty());
  Err noseed = parse_err(ap::trace_json(R"({"x":"1 2; 3 4"})"));
  CHECK(noseed.field == "W_q");
  Err nov = parse_err(ap::trace_json(R"({"Q":"1 2","K":"1 2"})"));
  CHECK(nov.field == "V");
}

// ------------------------------------------------------------------------- other entry points

TEST_CASE("parse_matrix_json", "[api]") {
  jt::Value v = parse_ok(ap::parse_matrix_json("1 0; 0 1"));
  CHECK(v["rows"].num == 2);
  CHECK(v["cols"].num == 2);
  CHECK(jt::to_matrix(v["matrix"]) == std::vector<std::vector<double>>{{1, 0}, {0, 1}});
  jt::Value w = parse_ok(ap::parse_matrix_json("array([[1.5, -2.], [3., 4.]], dtype=float32)"));
  CHECK(jt::to_matrix(w["matrix"]) == std::vector<std::vector<double>>{{1.5, -2}, {3, 4}});
  CHECK(w["rows"].num == 2);
  Err e = parse_err(ap::parse_matrix_json("1 2 3\n4 5 abc"));
  CHECK(e.row == 2);
  CHECK(e.column == 3);
  Err r = parse_err(ap::parse_matrix_json("1 2 3\n4 5"));
  CHECK(r.row == 2);
  Err n = parse_err(ap::parse_matrix_json("1 nan"));
  CHECK(n.row == 1);
  CHECK(n.column == 2);
  Err empty = parse_err(ap::parse_matrix_json(""));
  CHECK_FALSE(empty.error.empty());
}

TEST_CASE("random_matrix_json", "[api]") {
  const char* spec = R"({"rows":2,"cols":3,"seed":1,"bound":0.5})";
  std::string a = ap::random_matrix_json(spec), b = ap::random_matrix_json(spec);
  CHECK(a == b);
  CHECK(a != ap::random_matrix_json(R"({"rows":2,"cols":3,"seed":2,"bound":0.5})"));
  jt::Value v = parse_ok(a);
  auto m = jt::to_matrix(v["matrix"]);
  REQUIRE(m.size() == 2);
  REQUIRE(m[0].size() == 3);
  for (auto& row : m)
    for (double e : row) {
      CHECK(e >= -0.5);
      CHECK(e < 0.5);
    }
  // default bound 1/√cols = 0.5 for cols = 4; 200 samples use most of the range
  jt::Value d = parse_ok(ap::random_matrix_json(R"({"rows":50,"cols":4,"seed":3})"));
  double mx = 0;
  for (auto& row : jt::to_matrix(d["matrix"]))
    for (double e : row) {
      CHECK(e >= -0.5);
      CHECK(e < 0.5);
      mx = std::max(mx, std::fabs(e));
    }
  CHECK(mx > 0.4);
  for (const char* bad : {R"({"rows":0,"cols":3,"seed":1})", R"({"rows":"2","cols":3,"seed":1})",
                          R"({"rows":2,"cols":-1,"seed":1})", R"({"rows":2,"cols":3,"seed":-1})",
                          R"({"rows":2000,"cols":3,"seed":1})", "not json"}) {
    INFO("spec " << bad);
    parse_err(ap::random_matrix_json(bad));
  }
}

TEST_CASE("causal_mask_json", "[api]") {
  jt::Value v = parse_ok(ap::causal_mask_json(R"({"T":4,"base":0,"mask":"strict"})"));
  const jt::Value& m = v["mask"];
  REQUIRE(m.size() == 4);
  for (int i = 0; i < 4; ++i) {
    REQUIRE(m[i].size() == 4);
    for (int j = 0; j < 4; ++j) {
      INFO(i << "," << j);
      if (j > i) {
        CHECK(m[i][j].is_string());
        CHECK(m[i][j].str == "-inf");
      } else {
        CHECK(m[i][j].is_number());
        CHECK(m[i][j].num == 0.0);
      }
    }
  }
  jt::Value b = parse_ok(ap::causal_mask_json(R"({"T":2,"base":3,"mask":"inclusive"})"));
  auto mb = jt::to_matrix(b["mask"]);
  REQUIRE(mb.size() == 2);
  REQUIRE(mb[0].size() == 5);
  const double n = -INFINITY;
  CHECK(mb == std::vector<std::vector<double>>{{0, 0, 0, n, n}, {0, 0, 0, 0, n}});
  Err e = parse_err(ap::causal_mask_json(R"({"T":4,"base":0,"mask":"diagonal"})"));
  CHECK(e.field == "mask");
  Err t = parse_err(ap::causal_mask_json(R"({"T":0})"));
  CHECK(t.field == "T");
  Err bb = parse_err(ap::causal_mask_json(R"({"T":2,"base":-1})"));
  CHECK(bb.field == "base");
}

TEST_CASE("softmax_json", "[api]") {
  jt::Value v = parse_ok(ap::softmax_json(R"({"x":[[1,2,3],["-inf","-inf","-inf"],[0,"-inf","-inf"]],"softmax":"stable"})"));
  auto w = jt::to_matrix(v["weights"]);
  REQUIRE(w.size() == 3);
  double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0), s = e1 + e2 + e3;
  CHECK(w[0][0] == Approx(e1 / s).margin(1e-6));
  CHECK(w[0][1] == Approx(e2 / s).margin(1e-6));
  CHECK(w[0][2] == Approx(e3 / s).margin(1e-6));
  CHECK(w[1] == std::vector<double>{0, 0, 0});
  CHECK(w[2] == std::vector<double>{1, 0, 0});
  CHECK(lists_row(v["empty_rows"], 0, 1));
  CHECK(v["empty_rows"].size() == 1);
  CHECK(v["overflow_rows"].size() == 0);

  jt::Value n = parse_ok(ap::softmax_json(R"({"x":"1000 1001 999; 1 2 3","softmax":"naive"})"));
  CHECK(lists_row(n["overflow_rows"], 0, 0));
  CHECK_FALSE(lists_row(n["overflow_rows"], 0, 1));
  CHECK(any_string(n["weights"][0], "nan"));
  CHECK(jt::to_vector(n["weights"][1])[2] == Approx(e3 / s).margin(1e-6));

  jt::Value st = parse_ok(ap::softmax_json(R"({"x":"1000 1001 999","softmax":"stable"})"));
  CHECK(st["overflow_rows"].size() == 0);
  CHECK_FALSE(any_string(st["weights"], "nan"));

  Err e = parse_err(ap::softmax_json(R"({"x":"1 2","softmax":"fancy"})"));
  CHECK(e.field == "softmax");
  Err m = parse_err(ap::softmax_json(R"({"softmax":"stable"})"));
  CHECK(m.field == "x");
}

TEST_CASE("version is a non-empty dotted version", "[api]") {
  std::string v = ap::version();
  CHECK_FALSE(v.empty());
  CHECK_THAT(v, Contains("."));
  CHECK(v.find_first_not_of("0123456789.-+abcdefghijklmnopqrstuvwxyz") == std::string::npos);
}

// ------------------------------------------------------------------ hostile JSON (json.h)

TEST_CASE("every entry point refuses a repeated key by name - at any depth", "[api][errors]") {
  struct C { std::string (*fn)(const std::string&); const char* spec; const char* key; };
  for (C c : {C{ap::trace_json, R"({"Q":"1 0","K":"1 0","V":"1 2","Q":"0 1"})", "Q"},
              C{ap::trace_json, R"({"Q":"1 0","K":"1 0","V":"1 2","causal":true,"causal":false})", "causal"},
              C{ap::backward_json, R"({"Q":"1 0","K":"1 0","V":"1 2","d_out":"1 1","d_out":"2 2"})", "d_out"},
              C{ap::gradcheck_json, R"({"Q":"1 0","K":"1 0","V":"1 2","check":[{"name":"Q","row":0,"col":0,"col":1}]})",
                "col"},
              C{ap::random_matrix_json, R"({"rows":2,"cols":2,"rows":3})", "rows"},
              C{ap::causal_mask_json, R"({"T":2,"T":3})", "T"},
              C{ap::softmax_json, R"({"x":"1 2","softmax":"naive","softmax":"stable"})", "softmax"}}) {
    INFO(c.spec);
    Err e = parse_err(c.fn(c.spec));
    CHECK(e.field == "spec");
    CHECK_THAT(e.error, Contains(std::string("repeated key \"") + c.key + "\""));
    CHECK_THAT(e.error, Contains("first given at line 1"));
  }
  // the first occurrence alone is accepted: nothing else changed
  parse_ok(ap::trace_json(R"({"Q":"1 0","K":"1 0","V":"1 2"})"));
}

TEST_CASE("every output is valid UTF-8 JSON - also for keys and values with invalid UTF-8", "[api][errors]") {
  auto check_valid = [](const std::string& out) {
    INFO("output: " << out.substr(0, 300));
    CHECK(ap::utf8_valid(out));
    jt::Value v;
    REQUIRE_NOTHROW(v = jt::parse(out));
    REQUIRE(v.is_object());
    return v;
  };
  // a key with 0xFF bytes: refused as invalid UTF-8, with its position, in valid UTF-8
  const std::string bad_key = "{\"Q\":\"1 0\",\"K\":\"1 0\",\"V\":\"1 2\",\"\xFF\xFEn_head\":2}";
  for (auto fn : {ap::trace_json, ap::backward_json, ap::gradcheck_json, ap::softmax_json, ap::random_matrix_json,
                  ap::causal_mask_json}) {
    const jt::Value v = check_valid(fn(bad_key));
    CHECK_FALSE(v["ok"].b);
    CHECK_THAT(v["error"].str, Contains("invalid UTF-8 (0xFF never appears in UTF-8) at line 1, column 33"));
  }
  // an unknown key (valid UTF-8) is echoed as it is, a long one in part
  const jt::Value u = check_valid(ap::trace_json(R"({"Q":"1 0","K":"1 0","V":"1 2","注意":1})"));
  CHECK(u["error"].str == "unknown key \"注意\" in the spec");
  CHECK(u["field"].str == "注意");
  const jt::Value l = check_valid(ap::trace_json("{\"" + std::string(3000, 'z') + "\":1}"));
  CHECK(l["error"].str.size() < 100);
  // matrix text with invalid bytes: the parser's message quotes them; the output replaces them
  for (const std::string& text : {std::string("1 2 \xFF\xFE"), std::string("1 \xC3"), std::string("\xE4\xB8 1")}) {
    const jt::Value m = check_valid(ap::parse_matrix_json(text));
    CHECK_FALSE(m["ok"].b);
  }
  // random bytes spliced into a valid spec, through every entry point
  ap::Rng rng(23);
  const std::string base = R"({"Q":"1 0; 0 1","K":"1 0; 0 1","V":"1 2; 3 4","causal":true})";
  for (int i = 0; i < 400; ++i) {
    std::string spec = base;
    const int n = 1 + static_cast<int>(rng.next_u64() % 4);
    for (int k = 0; k < n; ++k)
      spec[rng.next_u64() % spec.size()] = static_cast<char>(0x80 + rng.next_u64() % 0x80);
    for (auto fn : {ap::trace_json, ap::softmax_json, ap::parse_matrix_json}) {
      const std::string out = fn(spec);
      if (!ap::utf8_valid(out)) FAIL("invalid UTF-8 in the output for " << spec);
      REQUIRE_NOTHROW(jt::parse(out));
    }
  }
}
