// kernels_test_util.h — what the fast kernels' tests (test_kernels.cpp, test_kernels_variants.cpp,
// test_infer_threads.cpp) share: random inputs, the run over every instruction set, the bounds.
// Header-only, in an anonymous namespace: each test file has its own copy (inline: a file that
// uses a few of them is not warned about the rest).
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/kernels/kernels.h"
#include "core/kernels/kernels_fast.h"

namespace {

namespace K = ap::kernels;
namespace fast = ap::kernels::fast;
const K::Kernels& R = K::reference;
using Vec = std::vector<float>;

constexpr double kU = 1.0 / (1 << 24);  // unit roundoff of float32
const float kInf = std::numeric_limits<float>::infinity();

inline double sum_tol(double k) { return 2.0 * (k + 8.0) * kU; }

inline Vec random_vec(std::mt19937& g, size_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> d(lo, hi);
  Vec v(n);
  for (float& x : v) x = d(g);
  return v;
}

// Runs fn with the table of each instruction set this build and CPU have (chosen by set_isa), then
// restores the default.
inline void for_each_isa(const std::function<void(const K::Kernels&, const std::string&)>& fn) {
  const std::string before = fast::isa_name();
  for (const char* const* p = fast::available_isas(); *p; ++p) {
    REQUIRE(fast::set_isa(*p));
    REQUIRE(std::string(fast::current().name) == *p);
    fn(fast::current(), *p);
  }
  fast::set_isa(before.c_str());
}

// |fast − ref| ≤ bound(i) for every i; NaN where the reference has NaN, equal infinities.
inline void expect_close(const std::string& what, const float* fast, const float* ref, size_t n,
                  const std::function<double(size_t)>& bound) {
  size_t worst = 0;
  double worst_ratio = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const bool rn = std::isnan(ref[i]), fn = std::isnan(fast[i]);
    if (rn || fn || std::isinf(ref[i]) || std::isinf(fast[i])) {
      const bool same = (rn && fn) || (!rn && !fn && ref[i] == fast[i]);
      if (!same) {
        worst = i;
        worst_ratio = std::numeric_limits<double>::infinity();
        break;
      }
      continue;
    }
    const double d = std::fabs(double(fast[i]) - double(ref[i]));
    const double b = bound(i);
    const double ratio = d == 0.0 ? 0.0 : (b > 0.0 ? d / b : std::numeric_limits<double>::infinity());
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  std::ostringstream msg;
  msg.precision(9);
  msg << what << ": worst at [" << worst << "] fast " << (n ? fast[worst] : 0.0f) << " ref "
      << (n ? ref[worst] : 0.0f) << ", |Δ|/bound = " << worst_ratio;
  INFO(msg.str());
  CHECK(worst_ratio <= 1.0);
}

inline void expect_equal(const std::string& what, const float* fast, const float* ref, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(fast + i, ref + i, sizeof(float)) != 0) {
      INFO(what << ": differs at [" << i << "]: fast " << fast[i] << " ref " << ref[i]);
      CHECK(false);
      return;
    }
  }
  SUCCEED();
}

}  // namespace
