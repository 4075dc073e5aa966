// test_golden_grad.cpp — runs every case of tests/golden/attention_grad_cases.json (an independent
// float64 NumPy backward, itself checked by finite differences; see tests/golden/README.md)
// through ap::backward_json and compares the loss and every gradient in "expect". Also checks that
// gradcheck_json agrees with the analytic gradients on the same cases.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "api/api.h"
#include "golden_util.h"
#include "json_test_util.h"

namespace {

struct GradGolden {
  std::string text;
  jt::Value root;
};

const GradGolden& grad_golden() {
  static GradGolden g = [] {
    GradGolden x;
    x.text = golden_util::read_file(std::string(AP_GOLDEN_DIR) + "/attention_grad_cases.json");
    if (!x.text.empty()) x.root = jt::parse(x.text);
    return x;
  }();
  return g;
}

std::string spec_text(const jt::Value& c) {
  return grad_golden().text.substr(c["spec"].begin, c["spec"].end - c["spec"].begin);
}

}  // namespace

TEST_CASE("golden gradients: every case matches the float64 reference", "[golden][backward]") {
  const GradGolden& g = grad_golden();
  REQUIRE_FALSE(g.text.empty());
  REQUIRE(g.root["cases"].size() >= 10);
  for (const jt::Value& c : g.root["cases"].arr) {
    const std::string response = ap::backward_json(spec_text(c));
    INFO(c["name"].str << ": " << response.substr(0, 300));
    const jt::Value r = jt::parse(response);
    REQUIRE(r["ok"].b);
    std::vector<std::string> mismatches;
    golden_util::compare(c["expect"], r, c["tolerance"].num, c["name"].str, mismatches);
    std::string all;
    for (const std::string& m : mismatches) all += m + "\n";
    INFO(all);
    CHECK(mismatches.empty());
  }
}

TEST_CASE("gradcheck agrees with the analytic gradients on the golden cases", "[golden][backward]") {
  for (const jt::Value& c : grad_golden().root["cases"].arr) {
    std::string spec = spec_text(c);
    spec = spec.substr(0, spec.rfind('}')) + ", \"eps\": 0.01}";
    const std::string response = ap::gradcheck_json(spec);
    INFO(c["name"].str << ": " << response.substr(0, 300));
    const jt::Value r = jt::parse(response);
    REQUIRE(r["ok"].b);
    REQUIRE(r["checks"].size() > 0);
    for (const jt::Value& check : r["checks"].arr) {
      const double a = check["analytic"].num, n = check["numeric"].num;
      INFO(check["name"].str << "[" << check["row"].num << "][" << check["col"].num << "] analytic " << a
                             << " numeric " << n);
      // float32 forward passes, eps 1e-2: see the tolerance argument in test_autograd.cpp.
      REQUIRE(std::fabs(a - n) <= 2e-3 * (1.0 + std::fabs(a)));
    }
  }
}

TEST_CASE("backward_json errors name the field", "[backward][errors]") {
  const std::string base = R"("Q":"1 0; 0 1","K":"1 0; 0 1","V":"1 2; 3 4")";
  auto field_of = [](const std::string& response) {
    const jt::Value r = jt::parse(response);
    REQUIRE_FALSE(r["ok"].b);
    return r["field"].str;
  };
  CHECK(field_of(ap::backward_json("{" + base + R"(,"d_out":"1 2 3; 4 5 6"})")) == "d_out");
  CHECK(field_of(ap::backward_json("{" + base + R"(,"d_out":"1 2; 3 4","loss":"sum"})")) == "loss");
  CHECK(field_of(ap::backward_json("{" + base + R"(,"loss":"mse"})")) == "target");
  CHECK(field_of(ap::backward_json("{" + base + R"(,"loss":"mse","target":"1 2"})")) == "target");
  CHECK(field_of(ap::backward_json("{" + base + R"(,"loss":"cube"})")) == "loss");
  CHECK(field_of(ap::backward_json("{" + base + R"(,"d_out":"1 x; 3 4"})")) == "d_out");
  CHECK(field_of(ap::gradcheck_json("{" + base + R"(,"check":[{"name":"W_q","row":0,"col":0}]})")) == "check");
  CHECK(field_of(ap::gradcheck_json("{" + base + R"(,"check":[{"name":"K","row":5,"col":0}]})")) == "row");
  CHECK(field_of(ap::gradcheck_json("{" + base + R"(,"eps":0})")) == "eps");
}
