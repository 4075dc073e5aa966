// test_golden.cpp — runs every case of tests/golden/attention_cases.json (an independent float64
// numpy reference, see tests/golden/README.md) through ap::trace_json and compares every field
// present in "expect": numbers as |a-b| <= tol*(1+|b|), "-inf"/"inf"/"nan" strings exactly,
// empty_rows / overflow_rows as sets of {head,row}. Also checks kv_cache_base2 against the last
// rows of kv_cache_full, as the golden README states.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "api/api.h"
#include "golden_util.h"
#include "json_test_util.h"

#ifndef AP_GOLDEN_DIR
#error "AP_GOLDEN_DIR must be defined (absolute path of tests/golden) by the build"
#endif

namespace {

using golden_util::compare;
using golden_util::describe;
using golden_util::read_file;

std::string golden_path() { return std::string(AP_GOLDEN_DIR) + "/attention_cases.json"; }

struct Golden {
  std::string text;
  jt::Value root;
};
const Golden& golden() {
  static Golden g = [] {
    Golden x;
    x.text = read_file(golden_path());
    if (!x.text.empty()) x.root = jt::parse(x.text);
    return x;
  }();
  return g;
}

jt::Value run_case(const jt::Value& c, std::string& response) {
  const std::string spec = golden().text.substr(c["spec"].begin, c["spec"].end - c["spec"].begin);
  response = ap::trace_json(spec);
  return jt::parse(response);
}

const jt::Value* find_case(const std::string& name) {
  for (const auto& c : golden().root["cases"].arr)
    if (c["name"].str == name) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("golden file is present and well formed", "[golden]") {
  INFO("golden file: " << golden_path());
  REQUIRE_FALSE(golden().text.empty());
  REQUIRE(golden().root.is_object());
  REQUIRE(golden().root.has("cases"));
  const jt::Value& cases = golden().root["cases"];
  REQUIRE(cases.is_array());
  CHECK(cases.size() >= 10);
  std::set<std::string> names;
  for (const auto& c : cases.arr) {
    REQUIRE(c.has("name"));
    REQUIRE(c.has("spec"));
    REQUIRE(c.has("expect"));
    CHECK(c["spec"].is_object());
    CHECK(names.insert(c["name"].str).second);  // unique names
  }
}

TEST_CASE("golden attention cases match trace_json", "[golden]") {
  REQUIRE_FALSE(golden().text.empty());
  const jt::Value& cases = golden().root["cases"];
  int compared = 0;
  for (const auto& c : cases.arr) {
    const std::string name = c["name"].str;
    INFO("case " << name << (c.has("description") ? " — " + c["description"].str : std::string()));
    const double tol = c.has("tolerance") ? c["tolerance"].num : 1e-5;
    const jt::Value& expect = c["expect"];
    std::string response;
    jt::Value got;
    REQUIRE_NOTHROW(got = run_case(c, response));
    INFO("response: " << response.substr(0, 600));
    REQUIRE(got.is_object());
    REQUIRE(got.has("ok"));
    std::vector<std::string> mismatches;
    // An expect holding ok/error/field describes an error response; otherwise the trace.
    if (expect.has("ok") || expect.has("error") || expect.has("field")) {
      compare(expect, got, tol, name, mismatches);
    } else {
      REQUIRE(got["ok"].is_bool());
      REQUIRE(got["ok"].b);
      REQUIRE(got.has("trace"));
      compare(expect, got["trace"], tol, name, mismatches);
    }
    std::ostringstream msg;
    for (size_t i = 0; i < mismatches.size() && i < 25; ++i) msg << "\n  " << mismatches[i];
    if (mismatches.size() > 25) msg << "\n  … and " << mismatches.size() - 25 << " more";
    INFO("mismatches:" << msg.str());
    CHECK(mismatches.empty());
    ++compared;
  }
  CHECK(compared == int(cases.size()));
}

TEST_CASE("golden kv_cache_base2 equals the last rows of kv_cache_full", "[golden]") {
  REQUIRE_FALSE(golden().text.empty());
  const jt::Value* step = find_case("kv_cache_base2");
  const jt::Value* full = find_case("kv_cache_full");
  if (!step || !full) {
    WARN("kv_cache_base2 / kv_cache_full not in the golden file; skipped");
    return;
  }
  std::string r1, r2;
  jt::Value a = run_case(*step, r1), b = run_case(*full, r2);
  REQUIRE(a["ok"].b);
  REQUIRE(b["ok"].b);
  const jt::Value& ts = a["trace"];
  const jt::Value& tf = b["trace"];
  const int base = int(ts["base"].num), T = int(ts["T"].num);
  REQUIRE(int(tf["T"].num) == base + T);
  std::vector<std::string> mismatches;
  for (size_t h = 0; h < ts["heads"].size(); ++h)
    for (const char* key : {"q", "scores", "scaled", "masked", "weights", "context"})
      for (int i = 0; i < T; ++i)
        compare(tf["heads"][h][key][base + i], ts["heads"][h][key][i], 1e-6,
                "head " + std::to_string(h) + "." + key + "[" + std::to_string(i) + "]", mismatches);
  for (int i = 0; i < T; ++i) compare(tf["out"][base + i], ts["out"][i], 1e-6, "out[" + std::to_string(i) + "]", mismatches);
  std::ostringstream msg;
  for (size_t i = 0; i < mismatches.size() && i < 25; ++i) msg << "\n  " << mismatches[i];
  INFO("mismatches:" << msg.str());
  CHECK(mismatches.empty());
}
