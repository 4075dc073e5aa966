// test_rng.cpp — Rng (SplitMix64 checked against an independent implementation written here),
// uniform01 / uniform ranges and moments, determinism per seed, random_uniform, derive_seed.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "core/base/rng.h"
#include "core/tensor/tensor.h"

namespace {

// Reference SplitMix64 (Steele, Lea, Flood 2014; Vigna's splitmix64.c).
struct RefSplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

}  // namespace

TEST_CASE("Rng::next_u64 is SplitMix64", "[rng]") {
  // Published first output of splitmix64 seeded with 0 (e.g. Vigna's reference, Java's
  // SplittableRandom): 0xE220A8397B1DCDAF.
  CHECK(ap::Rng(0).next_u64() == 0xE220A8397B1DCDAFull);
  for (uint64_t seed : {uint64_t(42), uint64_t(0), uint64_t(1), uint64_t(0xFFFFFFFFFFFFFFFFull),
                        uint64_t(123456789)}) {
    INFO("seed " << seed);
    ap::Rng r(seed);
    RefSplitMix64 ref{seed};
    for (int i = 0; i < 1000; ++i) {
      uint64_t a = r.next_u64(), b = ref.next();
      if (a != b) {
        INFO("i = " << i);
        REQUIRE(a == b);
      }
    }
  }
}

TEST_CASE("Rng: same seed same numbers - different seed different numbers", "[rng]") {
  ap::Rng a(7), b(7), c(8);
  std::vector<uint64_t> va, vb, vc;
  for (int i = 0; i < 100; ++i) {
    va.push_back(a.next_u64());
    vb.push_back(b.next_u64());
    vc.push_back(c.next_u64());
  }
  CHECK(va == vb);
  CHECK(va != vc);
  int equal = 0;
  for (int i = 0; i < 100; ++i) equal += va[i] == vc[i];
  CHECK(equal == 0);

  ap::Rng f1(7), f2(7), f3(8);
  std::vector<float> fa, fb, fc;
  for (int i = 0; i < 100; ++i) {
    fa.push_back(f1.uniform(1.0f));
    fb.push_back(f2.uniform(1.0f));
    fc.push_back(f3.uniform(1.0f));
  }
  CHECK(fa == fb);
  CHECK(fa != fc);
}

TEST_CASE("Rng::uniform01 is built from the top 24 bits", "[rng]") {
  ap::Rng r(42);
  RefSplitMix64 ref{42};
  for (int i = 0; i < 1000; ++i) {
    float u = r.uniform01();
    uint64_t top24 = ref.next() >> 40;
    float want = static_cast<float>(top24) * (1.0f / 16777216.0f);
    CHECK(u == want);
    CHECK(u >= 0.0f);
    CHECK(u < 1.0f);
    // a multiple of 2^-24
    double scaled = double(u) * 16777216.0;
    CHECK(scaled == std::floor(scaled));
  }
}

TEST_CASE("Rng::uniform(bound) is in -bound..bound with the right moments", "[rng]") {
  for (float bound : {1.0f, 0.5f, 2.0f, 0.125f}) {
    INFO("bound " << bound);
    ap::Rng r(1234);
    const int N = 100000;
    double sum = 0, sq = 0;
    float lo = bound, hi = -bound;
    for (int i = 0; i < N; ++i) {
      float u = r.uniform(bound);
      REQUIRE(u >= -bound);
      REQUIRE(u < bound);
      lo = std::min(lo, u);
      hi = std::max(hi, u);
      sum += u;
      sq += double(u) * u;
    }
    double mean = sum / N, var = sq / N - mean * mean;
    double want_var = double(bound) * bound / 3.0;  // (2b)^2 / 12
    // standard error of the mean: b/sqrt(3N) ≈ 0.0018 b; allow ~6 sigma
    CHECK(std::fabs(mean) < 0.011 * bound);
    CHECK(var == Approx(want_var).epsilon(0.02));
    CHECK(lo < -0.999 * bound);  // the range is actually used
    CHECK(hi > 0.999 * bound);
  }
  ap::Rng r(99);
  const int N = 100000;
  double sum = 0, sq = 0;
  for (int i = 0; i < N; ++i) {
    double u = r.uniform01();
    sum += u;
    sq += u * u;
  }
  double mean = sum / N;
  CHECK(mean == Approx(0.5).margin(0.006));
  CHECK(sq / N - mean * mean == Approx(1.0 / 12.0).epsilon(0.02));
}

TEST_CASE("random_uniform: shape - range - determinism - filled from Rng(seed) in row-major order", "[rng]") {
  ap::Tensor a = ap::random_uniform(3, 5, 0.5f, 7);
  REQUIRE(a.shape == ap::Shape{3, 5});
  for (float x : a.data) {
    CHECK(x >= -0.5f);
    CHECK(x < 0.5f);
  }
  CHECK(ap::random_uniform(3, 5, 0.5f, 7).data == a.data);
  CHECK(ap::random_uniform(3, 5, 0.5f, 8).data != a.data);
  ap::Rng r(7);
  for (size_t i = 0; i < a.data.size(); ++i) CHECK(a.data[i] == r.uniform(0.5f));
  std::set<float> distinct(a.data.begin(), a.data.end());
  CHECK(distinct.size() > 10);
  ap::Tensor b = ap::random_uniform(1, 1, 2.0f, 0);
  CHECK(b.shape == ap::Shape{1, 1});
}

TEST_CASE("derive_seed gives distinct - deterministic seeds per stream", "[rng]") {
  std::set<uint64_t> seen;
  for (uint64_t seed : {uint64_t(0), uint64_t(1), uint64_t(42), uint64_t(1000)})
    for (uint64_t stream = 0; stream < 64; ++stream) {
      uint64_t s = ap::derive_seed(seed, stream);
      CHECK(s == ap::derive_seed(seed, stream));
      seen.insert(s);
    }
  CHECK(seen.size() == 4 * 64);  // no collisions across seeds and streams
  // streams of one seed give different numbers
  ap::Rng a(ap::derive_seed(42, 1)), b(ap::derive_seed(42, 2));
  CHECK(a.next_u64() != b.next_u64());
}

TEST_CASE("Rng::normal: moments of N(0,1), determinism, and state() resumes the stream", "[rng]") {
  ap::Rng r(2024);
  const int N = 200000;
  double s = 0, s2 = 0, s4 = 0;
  int beyond3 = 0;
  for (int i = 0; i < N; ++i) {
    const double x = r.normal();
    s += x;
    s2 += x * x;
    s4 += x * x * x * x;
    beyond3 += std::fabs(x) > 3.0;
  }
  const double mean = s / N, var = s2 / N - mean * mean, kurt = s4 / N;
  CHECK(std::fabs(mean) < 0.01);     // sd of the mean: 1/√N ≈ 0.0022
  CHECK(std::fabs(var - 1.0) < 0.02);
  CHECK(std::fabs(kurt - 3.0) < 0.1);  // a normal's fourth moment
  CHECK(beyond3 > 0.0027 * N * 0.8);   // P(|x| > 3) = 0.27%
  CHECK(beyond3 < 0.0027 * N * 1.2);

  ap::Rng a(5), b(5);
  for (int i = 0; i < 1000; ++i) REQUIRE(a.normal() == b.normal());
  ap::Rng c(a.state());
  for (int i = 0; i < 1000; ++i) REQUIRE(a.normal() == c.normal());
}
