// test_number_text.cpp — number_text.h: parse_decimal against strtod, and format_float's output
// reading back to the same float32 with no more significant digits than std::to_chars' shortest.
#include <catch2/catch.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/base/number_text.h"

namespace {

float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

double parse(const std::string& s) {
  double d = 0;
  REQUIRE(ap::parse_decimal(s.data(), s.data() + s.size(), d));
  return d;
}

int significant_digits(const std::string& s) {
  std::string mant = s.substr(0, s.find_first_of("eE"));
  std::string digits;
  for (char c : mant)
    if (c >= '0' && c <= '9') digits += c;
  const size_t a = digits.find_first_not_of('0');
  if (a == std::string::npos) return 1;
  const size_t b = digits.find_last_not_of('0');
  return static_cast<int>(b - a + 1);
}

}  // namespace

TEST_CASE("format_float reads back exactly and is as short as to_chars", "[number_text]") {
  std::mt19937 gen(12345);
  int checked = 0;
  for (int i = 0; i < 300000; ++i) {
    const float f = bits_to_float(static_cast<uint32_t>(gen()));
    if (!std::isfinite(f)) continue;
    const std::string s = ap::format_float(f);
    const float back = static_cast<float>(parse(s));
    INFO("f bits " << i << " text " << s);
    REQUIRE((std::memcmp(&back, &f, sizeof f) == 0 || (f == 0 && back == 0)));
    REQUIRE(static_cast<float>(std::strtod(s.c_str(), nullptr)) == f);
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, f);
    REQUIRE(significant_digits(s) <= significant_digits(std::string(buf, r.ptr)));
    ++checked;
  }
  CHECK(checked > 250000);
}

TEST_CASE("format_float writes in JavaScript's style", "[number_text]") {
  CHECK(ap::format_float(0.1f) == "0.1");
  CHECK(ap::format_float(1000.0f) == "1000");
  CHECK(ap::format_float(-2.5f) == "-2.5");
  CHECK(ap::format_float(0.0f) == "0");
  CHECK(ap::format_float(-0.0f) == "0");
  CHECK(ap::format_float(1e-7f) == "1e-7");
  CHECK(ap::format_float(1.5e-7f) == "1.5e-7");
  CHECK(ap::format_float(1e-6f) == "0.000001");
  CHECK(ap::format_float(1e20f) == "100000000000000000000");  // 1e20 reads back to 1e20f
  CHECK(ap::format_float(1e21f) == "1e+21");
  CHECK(ap::format_float(std::numeric_limits<float>::max()) == "3.4028235e+38");
  CHECK(ap::format_float(std::numeric_limits<float>::denorm_min()) == "1e-45");
  CHECK(ap::format_float(16777216.0f) == "16777216");
  CHECK(ap::format_float(0.66976154f) == "0.66976154");
  CHECK(ap::format_float(std::numeric_limits<float>::infinity()) == "inf");
  CHECK(ap::format_float(-std::numeric_limits<float>::infinity()) == "-inf");
  CHECK(ap::format_float(std::nanf("")) == "nan");
}

TEST_CASE("append_matrix_json writes each number as format_float does", "[number_text]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float m[6] = {1.5f, -0.0f, std::nanf(""), inf, -inf, 1e-7f};
  std::string s = "x";
  ap::append_matrix_json(s, m, 2, 3, false);
  CHECK(s == R"(x[[1.5,0,"nan"],["inf","-inf",1e-7]])");
  s.clear();
  ap::append_matrix_json(s, m, 1, 6, true);
  CHECK(s == R"([1.5,0,"nan","inf","-inf",1e-7])");
  // the widest texts a float has (22 characters in fixed notation, 15 in exponent notation), a
  // whole row of them, and random bit patterns: the same text as format_float, joined by commas
  std::mt19937 rng(7);
  for (int cols : {1, 3, 17, 64}) {
    std::vector<float> row(static_cast<size_t>(cols) * 2);
    for (size_t k = 0; k < row.size(); ++k)
      row[k] = k % 3 == 0 ? -1.2345679e20f : k % 3 == 1 ? -1.1754942e-38f : bits_to_float(static_cast<uint32_t>(rng()));
    std::string want = "[";
    for (int i = 0; i < 2; ++i) {
      want += i ? ",[" : "[";
      for (int j = 0; j < cols; ++j) {
        const float f = row[static_cast<size_t>(i) * cols + j];
        if (j) want += ',';
        want += std::isfinite(f) ? ap::format_float(f) : '"' + ap::format_float(f) + '"';
      }
      want += ']';
    }
    want += ']';
    std::string got;
    ap::append_matrix_json(got, row.data(), 2, cols, false);
    CHECK(got == want);
  }
  CHECK(ap::format_float(-1.2345679e20f).size() == 22);
}

TEST_CASE("parse_decimal matches strtod", "[number_text]") {
  const char* cases[] = {"0", "-0", "1", "+2", ".5", "7.", "1e3", "1E-3", "-1.5e-3", "0.1", "3.14159265358979",
                         "123456789012345678901234567890", "1e-400", "1e400", "0.000000000000000000000001",
                         "2.2250738585072014e-308", "9007199254740993", "4.9e-324", "1.7976931348623157e308",
                         "00012.50"};
  for (const char* c : cases) {
    INFO(c);
    CHECK(parse(c) == std::strtod(c, nullptr));
  }
  std::mt19937_64 gen(7);
  std::uniform_int_distribution<int> exp(-40, 40);
  for (int i = 0; i < 100000; ++i) {
    const std::string s = std::to_string(gen() % 100000000) + "e" + std::to_string(exp(gen));
    INFO(s);
    REQUIRE(parse(s) == std::strtod(s.c_str(), nullptr));
  }
  CHECK(std::isinf(parse("inf")));
  CHECK(parse("-Infinity") < 0);
  CHECK(std::isnan(parse("NaN")));
  double d;
  for (const char* bad : {"", "-", ".", "e5", "1e", "1e+", "1.2.3", "abc", "1 ", " 1", "0x10", "--1", "1f"}) {
    INFO(bad);
    CHECK_FALSE(ap::parse_decimal(bad, bad + std::strlen(bad), d));
  }
}
