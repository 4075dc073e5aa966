// test_softmax.cpp — exp_f32 (ulp accuracy against long-double exp over a dense sweep, special
// values, overflow/underflow thresholds, monotonicity) and the row softmax in both variants
// (stable / naive): sums, shift invariance, large inputs, all −∞ rows, one-hot rows, RowStatus,
// kernels vs checked ops.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/tensor/ops.h"
#include "core/tensor/tensor.h"

namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// Floats mapped to integers so that adjacent floats differ by 1 (sign-magnitude → two's complement).
int64_t ordered_bits(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i < 0 ? int64_t(INT32_MIN) - int64_t(i) : int64_t(i);
}
int64_t ulp_distance(float a, float b) {
  int64_t d = ordered_bits(a) - ordered_bits(b);
  return d < 0 ? -d : d;
}

// Correctly rounded (up to vanishingly rare double-rounding cases) reference.
float ref_exp(float x) { return static_cast<float>(std::exp(static_cast<long double>(x))); }

std::vector<double> ref_softmax(const std::vector<float>& row) {
  double m = -INFINITY;
  for (float v : row) m = std::max(m, double(v));
  std::vector<double> e(row.size());
  double s = 0;
  for (size_t j = 0; j < row.size(); ++j) s += e[j] = std::exp(double(row[j]) - m);
  for (auto& v : e) v /= s;
  return e;
}

using SoftmaxFn = ap::Tensor (*)(const ap::Tensor&, std::vector<ap::RowStatus>*);
struct Variant {
  const char* name;
  SoftmaxFn fn;
  void (*kernel)(float*, ap::RowStatus*, const float*, int, int);
};
const Variant kVariants[] = {{"stable", &ap::softmax_rows, &ap::softmax_rows_forward},
                             {"naive", &ap::softmax_rows_naive, &ap::softmax_rows_naive_forward}};

}  // namespace

// ------------------------------------------------------------------------------------ exp_f32

TEST_CASE("exp_f32 is within 2 ulp of exp over a dense sweep of -110..90", "[exp]") {
  const int N = 2000000;
  int64_t worst = 0;
  float worst_x = 0;
  int64_t checked = 0;
  auto check_one = [&](float x) {
    float r = ref_exp(x);
    // normal results and overflow (+inf is one step above FLT_MAX in ordered bits)
    if (!(r >= FLT_MIN)) return;
    float got = ap::exp_f32(x);
    int64_t d = std::isnan(got) ? INT64_MAX : ulp_distance(got, r);
    ++checked;
    if (d > worst) { worst = d; worst_x = x; }
  };
  for (int k = 0; k <= N; ++k) check_one(static_cast<float>(-110.0 + 200.0 * k / N));
  std::mt19937 gen(2024);
  std::uniform_real_distribution<float> dist(-110.0f, 90.0f);
  for (int k = 0; k < 500000; ++k) check_one(dist(gen));
  std::uniform_real_distribution<float> small(-1e-3f, 1e-3f);
  for (int k = 0; k < 200000; ++k) check_one(small(gen));
  INFO("worst ulp distance " << worst << " at x = " << worst_x << " (exp_f32 = "
                             << ap::exp_f32(worst_x) << ", reference = " << ref_exp(worst_x) << ")");
  CHECK(checked > 2000000);
  CHECK(worst <= 2);
}

TEST_CASE("exp_f32 on subnormal results stays within 2 ulp (header: whole float range)", "[exp]") {
  int64_t worst = 0;
  float worst_x = 0;
  for (int k = 0; k <= 200000; ++k) {
    float x = static_cast<float>(-104.5 + 17.5 * k / 200000.0);  // exp(x) from 0 to ~FLT_MIN
    float r = ref_exp(x);
    if (r >= FLT_MIN) continue;
    float got = ap::exp_f32(x);
    int64_t d = std::isnan(got) ? INT64_MAX : ulp_distance(got, r);
    if (d > worst) { worst = d; worst_x = x; }
  }
  INFO("worst ulp distance " << worst << " at x = " << worst_x << " (exp_f32 = "
                             << ap::exp_f32(worst_x) << ", reference = " << ref_exp(worst_x) << ")");
  CHECK(worst <= 2);
}

TEST_CASE("exp_f32 special values", "[exp]") {
  CHECK(ap::exp_f32(0.0f) == 1.0f);
  CHECK(ap::exp_f32(-0.0f) == 1.0f);
  CHECK(ap::exp_f32(-kInf) == 0.0f);
  CHECK_FALSE(std::signbit(ap::exp_f32(-kInf)));
  CHECK(ap::exp_f32(kInf) == kInf);
  CHECK(std::isnan(ap::exp_f32(kNaN)));
  CHECK(std::isnan(ap::exp_f32(-kNaN)));
  // overflow: +inf above ln(FLT_MAX) = 88.72284
  for (float x : {88.73f, 88.75f, 89.0f, 90.0f, 100.0f, 1000.0f, 1e20f, FLT_MAX}) {
    INFO("x = " << x);
    CHECK(ap::exp_f32(x) == kInf);
  }
  // just below the threshold the result is finite and close to FLT_MAX
  CHECK(std::isfinite(ap::exp_f32(88.72f)));
  CHECK(ap::exp_f32(88.72f) > 3.3e38f);
  // underflow: 0 below ln(2^-150) = -103.9721
  for (float x : {-103.98f, -104.0f, -110.0f, -1000.0f, -1e20f, -FLT_MAX}) {
    INFO("x = " << x);
    CHECK(ap::exp_f32(x) == 0.0f);
  }
  CHECK(ap::exp_f32(-103.0f) > 0.0f);  // a subnormal, not flushed to zero
  CHECK(ap::exp_f32(1e-10f) == 1.0f);
  CHECK(ulp_distance(ap::exp_f32(1.0f), static_cast<float>(2.718281828459045)) <= 2);
  CHECK(ulp_distance(ap::exp_f32(-1.0f), static_cast<float>(0.36787944117144233)) <= 2);
  CHECK(ulp_distance(ap::exp_f32(0.6931471805599453f), 2.0f) <= 2);
}

TEST_CASE("exp_f32 is monotonic non-decreasing", "[exp]") {
  SECTION("dense sweep") {
    float prev = ap::exp_f32(-120.0f);
    bool ok = true;
    float bad_x = 0;
    const int N = 1000000;
    for (int k = 1; k <= N; ++k) {
      float x = static_cast<float>(-120.0 + 215.0 * k / N);
      float y = ap::exp_f32(x);
      if (!(y >= prev)) { ok = false; bad_x = x; }
      prev = y;
    }
    INFO("first decrease at x = " << bad_x);
    CHECK(ok);
  }
  SECTION("consecutive floats around critical points") {
    for (float anchor : {-103.97f, -87.33f, -10.0f, -1.0f, -0.35f, -1e-3f, 0.0f, 1e-3f, 0.3465736f,
                         0.6931472f, 1.0f, 20.0f, 88.72f}) {
      float x = anchor;
      for (int k = 0; k < 5000; ++k) x = std::nextafter(x, -kInf);
      float prev = ap::exp_f32(x);
      bool ok = true;
      for (int k = 0; k < 10000; ++k) {
        x = std::nextafter(x, kInf);
        float y = ap::exp_f32(x);
        if (!(y >= prev)) ok = false;
        prev = y;
      }
      INFO("anchor " << anchor);
      CHECK(ok);
    }
  }
}

// ------------------------------------------------------------------------------------ softmax

TEST_CASE("softmax rows sum to 1 and match a double reference", "[softmax]") {
  std::mt19937 gen(17);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  for (const auto& v : kVariants) {
    INFO("variant " << v.name);
    for (int cols : {1, 2, 3, 7, 64}) {
      const int rows = 5;
      ap::Tensor x({rows, cols});
      for (auto& e : x.data) e = dist(gen);
      std::vector<ap::RowStatus> status;
      ap::Tensor y = v.fn(x, &status);
      REQUIRE(y.shape == x.shape);
      REQUIRE(status.size() == size_t(rows));
      for (int i = 0; i < rows; ++i) {
        CHECK(status[i] == ap::RowStatus::ok);
        std::vector<float> row(x.data.begin() + i * cols, x.data.begin() + (i + 1) * cols);
        auto ref = ref_softmax(row);
        double sum = 0;
        for (int j = 0; j < cols; ++j) {
          sum += y(i, j);
          CHECK(std::fabs(y(i, j) - ref[j]) <= 1e-6 * (1.0 + ref[j]) + 4e-7 * ref[j] * cols);
          CHECK(y(i, j) >= 0.0f);
        }
        CHECK(std::fabs(sum - 1.0) <= 1e-6 * cols);
      }
    }
  }
}

TEST_CASE("softmax of equal entries is uniform - one column gives 1", "[softmax]") {
  for (const auto& v : kVariants) {
    INFO("variant " << v.name);
    ap::Tensor x({2, 4}, 3.25f);
    ap::Tensor y = v.fn(x, nullptr);
    for (float e : y.data) CHECK(e == 0.25f);
    ap::Tensor one({3, 1}, std::vector<float>{-5.0f, 0.0f, 40.0f});
    ap::Tensor y1 = v.fn(one, nullptr);
    for (float e : y1.data) CHECK(e == 1.0f);
  }
}

TEST_CASE("softmax is invariant to adding a constant to a row", "[softmax]") {
  std::mt19937 gen(23);
  std::uniform_int_distribution<int> grid(-64, 64);
  for (const auto& v : kVariants) {
    INFO("variant " << v.name);
    const int rows = 4, cols = 6;
    ap::Tensor x({rows, cols});
    for (auto& e : x.data) e = grid(gen) / 8.0f;  // multiples of 1/8: shifts below are exact
    ap::Tensor y = v.fn(x, nullptr);
    for (float c : {-20.0f, -1.5f, 3.0f, 40.0f}) {
      INFO("c = " << c);
      ap::Tensor y2 = v.fn(ap::add_scalar(x, c), nullptr);
      for (size_t k = 0; k < y.data.size(); ++k) {
        if (std::string(v.name) == "stable")
          CHECK(y2.data[k] == y.data[k]);  // x+c-max(x+c) == x-max(x) exactly
        else
          CHECK(std::fabs(y2.data[k] - y.data[k]) <= 2e-6 * (1.0f + y.data[k]));
      }
    }
  }
}

TEST_CASE("softmax with entries around 1000: stable is finite - naive overflows", "[softmax]") {
  ap::Tensor x = ap::Tensor::from_rows({{1000.0f, 1001.0f, 999.5f}, {0.0f, 1.0f, -0.5f}});
  std::vector<ap::RowStatus> st;
  ap::Tensor ys = ap::softmax_rows(x, &st);
  REQUIRE(st.size() == 2);
  CHECK(st[0] == ap::RowStatus::ok);
  CHECK(st[1] == ap::RowStatus::ok);
  for (float e : ys.data) CHECK(std::isfinite(e));
  // row 0 is row 1 shifted by exactly 1000
  for (int j = 0; j < 3; ++j) CHECK(ys(0, j) == ys(1, j));
  auto ref = ref_softmax({0.0f, 1.0f, -0.5f});
  for (int j = 0; j < 3; ++j) CHECK(ys(0, j) == Approx(ref[j]).epsilon(1e-6));

  std::vector<ap::RowStatus> sn;
  ap::Tensor yn = ap::softmax_rows_naive(x, &sn);
  REQUIRE(sn.size() == 2);
  CHECK(sn[0] == ap::RowStatus::overflow);
  CHECK(sn[1] == ap::RowStatus::ok);
  bool any_nan = false;
  for (int j = 0; j < 3; ++j) any_nan = any_nan || std::isnan(yn(0, j));
  CHECK(any_nan);  // +inf/+inf: the lesson is kept, not hidden
  for (int j = 0; j < 3; ++j) CHECK(yn(1, j) == Approx(ref[j]).epsilon(1e-6));

  // naive overflows just above ~88.72 but not below
  std::vector<ap::RowStatus> s2;
  ap::softmax_rows_naive(ap::Tensor::from_rows({{88.0f, 0.0f}, {89.0f, 0.0f}}), &s2);
  CHECK(s2[0] == ap::RowStatus::ok);
  CHECK(s2[1] == ap::RowStatus::overflow);
}

TEST_CASE("softmax: a row of all -inf becomes zeros and is reported empty", "[softmax]") {
  for (const auto& v : kVariants) {
    INFO("variant " << v.name);
    ap::Tensor x = ap::Tensor::from_rows({{-kInf, -kInf, -kInf}, {1.0f, 2.0f, 3.0f}, {-kInf, -kInf, -kInf}});
    std::vector<ap::RowStatus> st;
    ap::Tensor y = v.fn(x, &st);
    REQUIRE(st.size() == 3);
    CHECK(st[0] == ap::RowStatus::empty);
    CHECK(st[1] == ap::RowStatus::ok);
    CHECK(st[2] == ap::RowStatus::empty);
    for (int j = 0; j < 3; ++j) {
      CHECK(y(0, j) == 0.0f);
      CHECK(y(2, j) == 0.0f);
      CHECK_FALSE(std::isnan(y(1, j)));
    }
    // single column
    std::vector<ap::RowStatus> s1;
    ap::Tensor y1 = v.fn(ap::Tensor({1, 1}, -kInf), &s1);
    CHECK(y1.data[0] == 0.0f);
    CHECK(s1[0] == ap::RowStatus::empty);
  }
}

TEST_CASE("softmax: one finite entry and the rest -inf is one-hot", "[softmax]") {
  for (const auto& v : kVariants) {
    INFO("variant " << v.name);
    ap::Tensor x = ap::Tensor::from_rows(
        {{-kInf, 2.5f, -kInf, -kInf}, {-40.0f, -kInf, -kInf, -kInf}, {-kInf, -kInf, -kInf, 0.0f}});
    std::vector<ap::RowStatus> st;
    ap::Tensor y = v.fn(x, &st);
    const int hot[3] = {1, 0, 3};
    for (int i = 0; i < 3; ++i) {
      CHECK(st[i] == ap::RowStatus::ok);
      for (int j = 0; j < 4; ++j) CHECK(y(i, j) == (j == hot[i] ? 1.0f : 0.0f));
    }
  }
}

TEST_CASE("softmax: NaN or +inf input is reported as overflow", "[softmax]") {
  for (const auto& v : kVariants) {
    INFO("variant " << v.name);
    std::vector<ap::RowStatus> st;
    v.fn(ap::Tensor::from_rows({{1.0f, kNaN, 0.0f}, {kInf, 0.0f, 1.0f}, {0.0f, 0.0f, 0.0f}}), &st);
    REQUIRE(st.size() == 3);
    CHECK(st[0] == ap::RowStatus::overflow);
    CHECK(st[1] == ap::RowStatus::overflow);
    CHECK(st[2] == ap::RowStatus::ok);
  }
}

TEST_CASE("softmax over the last dim of 3-D and 1-D tensors - kernels agree with checked ops", "[softmax]") {
  std::mt19937 gen(31);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  for (const auto& v : kVariants) {
    INFO("variant " << v.name);
    ap::Tensor x({2, 3, 5});
    for (auto& e : x.data) e = dist(gen);
    x(1, 2, 0) = x(1, 2, 1) = x(1, 2, 2) = x(1, 2, 3) = x(1, 2, 4) = -kInf;
    std::vector<ap::RowStatus> st;
    ap::Tensor y = v.fn(x, &st);
    REQUIRE(y.shape == x.shape);
    REQUIRE(st.size() == 6);
    for (int r = 0; r < 6; ++r) CHECK(st[r] == (r == 5 ? ap::RowStatus::empty : ap::RowStatus::ok));

    // kernel, with and without status
    std::vector<float> out(30, -1.0f), out2(30, -1.0f);
    std::vector<ap::RowStatus> kst(6, ap::RowStatus::overflow);
    v.kernel(out.data(), kst.data(), x.ptr(), 6, 5);
    v.kernel(out2.data(), nullptr, x.ptr(), 6, 5);
    CHECK(out == y.data);
    CHECK(out2 == y.data);
    CHECK(kst == st);

    // 1-D: one row
    ap::Tensor x1({4}, std::vector<float>{0.0f, 1.0f, 2.0f, 3.0f});
    std::vector<ap::RowStatus> s1;
    ap::Tensor y1 = v.fn(x1, &s1);
    REQUIRE(y1.shape == ap::Shape{4});
    CHECK(s1.size() == 1);
    auto ref = ref_softmax(x1.data);
    for (int j = 0; j < 4; ++j) CHECK(y1.data[j] == Approx(ref[j]).epsilon(1e-6));
  }
}

// ------------------------------------------------------------------------------------ log_f32

TEST_CASE("log_f32 is within 2 ulp of log over the whole positive float range", "[log]") {
  int64_t worst = 0;
  float worst_x = 0;
  int64_t checked = 0;
  auto check_one = [&](float x) {
    const float r = static_cast<float>(std::log(static_cast<long double>(x)));
    const float got = ap::log_f32(x);
    const int64_t d = std::isnan(got) ? INT64_MAX : ulp_distance(got, r);
    ++checked;
    if (d > worst) { worst = d; worst_x = x; }
  };
  // Every 97th float bit pattern from the smallest subnormal to FLT_MAX (~22 M values), then a
  // dense sweep around 1 where log is near 0 and relative error is hardest to keep.
  for (uint32_t bits = 1; bits < 0x7f800000u; bits += 97) {
    float x;
    std::memcpy(&x, &bits, sizeof x);
    check_one(x);
  }
  for (int k = -200000; k <= 200000; ++k) check_one(1.0f + static_cast<float>(k) * 1e-7f);
  INFO("worst ulp distance " << worst << " at x = " << worst_x << " (log_f32 = " << ap::log_f32(worst_x)
                             << ", reference = " << std::log(static_cast<long double>(worst_x)) << ")");
  CHECK(checked > 20000000);
  CHECK(worst <= 2);
}

TEST_CASE("log_f32 special values", "[log]") {
  CHECK(ap::log_f32(1.0f) == 0.0f);
  CHECK(ap::log_f32(0.0f) == -kInf);
  CHECK(ap::log_f32(-0.0f) == -kInf);
  CHECK(ap::log_f32(kInf) == kInf);
  CHECK(std::isnan(ap::log_f32(-1.0f)));
  CHECK(std::isnan(ap::log_f32(-kInf)));
  CHECK(std::isnan(ap::log_f32(kNaN)));
  CHECK(ap::log_f32(ap::exp_f32(1.0f)) == Approx(1.0f).epsilon(1e-7));
}
