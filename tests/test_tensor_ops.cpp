// test_tensor_ops.cpp — Tensor (constructors, from_rows, size, slice0, rows, shape helpers) and the
// checked ops of ops.h other than softmax: matmul (2-D, batched, broadcast, kernels, errors),
// transpose, permute (all 24 perms of a 4-D tensor), reshape, add with broadcasting, scale,
// add_scalar. Expected values come from naive double-precision loops written here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/tensor/ops.h"
#include "core/tensor/tensor.h"

using Catch::Matchers::Contains;

namespace {

ap::Tensor random_tensor(const ap::Shape& shape, std::mt19937& gen, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  int64_t n = 1;
  for (int d : shape) n *= d;
  std::vector<float> data(static_cast<size_t>(n));
  for (auto& x : data) x = dist(gen);
  return ap::Tensor(shape, data);
}

// Naive (M,K)·(K,N) in double, plus Σ|a||b| per output for the error bound.
void naive_matmul(const float* a, const float* b, int M, int K, int N, std::vector<double>& out,
                  std::vector<double>& absum) {
  out.assign(static_cast<size_t>(M) * N, 0.0);
  absum.assign(static_cast<size_t>(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0, t = 0;
      for (int k = 0; k < K; ++k) {
        s += double(a[i * K + k]) * double(b[k * N + j]);
        t += std::fabs(double(a[i * K + k]) * double(b[k * N + j]));
      }
      out[static_cast<size_t>(i) * N + j] = s;
      absum[static_cast<size_t>(i) * N + j] = t;
    }
}

// Float sum in left-to-right order starting from 0, each step rounded to float. The product and
// the sum are done in double and rounded (exact for products; innocuous double rounding for +),
// so compiler FMA contraction cannot change the bits of this reference.
float left_to_right_dot(const float* a, const float* b, int K, int a_stride, int b_stride) {
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
    float p = static_cast<float>(double(a[k * a_stride]) * double(b[k * b_stride]));
    acc = static_cast<float>(double(acc) + double(p));
  }
  return acc;
}

void check_matmul_close(const ap::Tensor& got, const float* a, const float* b, int M, int K, int N,
                        size_t offset) {
  std::vector<double> ref, absum;
  naive_matmul(a, b, M, K, N, ref, absum);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      size_t idx = static_cast<size_t>(i) * N + j;
      double tol = 2.0 * (K + 1) * 1.2e-7 * absum[idx] + 1e-30;
      INFO("M=" << M << " K=" << K << " N=" << N << " i=" << i << " j=" << j);
      CHECK(std::fabs(double(got.data[offset + idx]) - ref[idx]) <= tol);
    }
}

// Index helpers for a row-major tensor.
int64_t flat_index(const ap::Shape& shape, const std::vector<int>& idx) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
  return f;
}

template <class E>
std::string thrown_message(E&& fn) {
  try {
    fn();
  } catch (const ap::ShapeError& e) {
    return e.what();
  }
  return "<no ShapeError thrown>";
}

}  // namespace

// ------------------------------------------------------------------------------------- Tensor

TEST_CASE("shape_str formats shapes as 2x3 with brackets", "[tensor]") {
  CHECK(ap::shape_str({2, 3}) == "[2, 3]");
  CHECK(ap::shape_str({5}) == "[5]");
  CHECK(ap::shape_str({}) == "[]");
  CHECK(ap::shape_str({1, 2, 3, 4}) == "[1, 2, 3, 4]");
}

TEST_CASE("shape_numel counts elements and rejects bad shapes", "[tensor]") {
  CHECK(ap::shape_numel({2, 3, 4}) == 24);
  CHECK(ap::shape_numel({}) == 1);
  CHECK(ap::shape_numel({0, 5}) == 0);
  CHECK(ap::shape_numel({7}) == 7);
  CHECK_THROWS_AS(ap::shape_numel({-1}), ap::ShapeError);
  CHECK_THROWS_AS(ap::shape_numel({2, -3}), ap::ShapeError);
  CHECK_THROWS_AS(ap::shape_numel({1, 1, 1, 1, 1}), ap::ShapeError);  // > kMaxDims
}

TEST_CASE("Tensor constructors", "[tensor]") {
  SECTION("default is empty") {
    ap::Tensor t;
    CHECK(t.empty());
    CHECK(t.dim() == 0);
    CHECK(t.numel() == 0);
  }
  SECTION("shape and fill") {
    ap::Tensor t({2, 3}, 1.5f);
    CHECK(t.dim() == 2);
    CHECK(t.shape == ap::Shape{2, 3});
    REQUIRE(t.numel() == 6);
    for (float x : t.data) CHECK(x == 1.5f);
    CHECK_FALSE(t.empty());
  }
  SECTION("default fill is zero") {
    ap::Tensor t({3, 1, 2});
    REQUIRE(t.numel() == 6);
    for (float x : t.data) CHECK(x == 0.0f);
  }
  SECTION("scalar shape holds one number and is not empty") {
    ap::Tensor t(ap::Shape{}, 4.0f);
    CHECK(t.dim() == 0);
    CHECK(t.numel() == 1);
    CHECK_FALSE(t.empty());
    CHECK(t.data[0] == 4.0f);
  }
  SECTION("shape and data") {
    ap::Tensor t({2, 2}, std::vector<float>{1, 2, 3, 4});
    CHECK(t(0, 0) == 1);
    CHECK(t(0, 1) == 2);
    CHECK(t(1, 0) == 3);
    CHECK(t(1, 1) == 4);
  }
  SECTION("3-D indexing is row-major") {
    std::vector<float> d(24);
    std::iota(d.begin(), d.end(), 0.0f);
    ap::Tensor t({2, 3, 4}, d);
    CHECK(t(1, 2, 3) == 23.0f);
    CHECK(t(1, 0, 0) == 12.0f);
    CHECK(t(0, 1, 2) == 6.0f);
  }
  SECTION("data size must match the shape") {
    CHECK_THROWS_AS(ap::Tensor({2, 3}, std::vector<float>(5)), ap::ShapeError);
    CHECK_THROWS_AS(ap::Tensor({2, 3}, std::vector<float>(7)), ap::ShapeError);
  }
  SECTION("bad shapes are refused") {
    CHECK_THROWS_AS(ap::Tensor({-1, 2}), ap::ShapeError);
    CHECK_THROWS_AS(ap::Tensor({1, 2, 3, 4, 5}), ap::ShapeError);
  }
}

TEST_CASE("Tensor::from_rows builds 2-D tensors and refuses ragged rows", "[tensor]") {
  ap::Tensor t = ap::Tensor::from_rows({{1, 2, 3}, {4, 5, 6}});
  CHECK(t.shape == ap::Shape{2, 3});
  CHECK(t.data == std::vector<float>{1, 2, 3, 4, 5, 6});
  ap::Tensor one = ap::Tensor::from_rows({{7}});
  CHECK(one.shape == ap::Shape{1, 1});
  CHECK_THROWS_AS(ap::Tensor::from_rows({{1, 2, 3}, {4, 5}}), ap::ShapeError);
  CHECK_THROWS_AS(ap::Tensor::from_rows({{1}, {2, 3}}), ap::ShapeError);
  // ShapeError is a std::invalid_argument.
  CHECK_THROWS_AS(ap::Tensor::from_rows({{1, 2}, {3}}), std::invalid_argument);
}

TEST_CASE("Tensor::size with negative indices", "[tensor]") {
  ap::Tensor t({2, 3, 5});
  CHECK(t.size(0) == 2);
  CHECK(t.size(1) == 3);
  CHECK(t.size(2) == 5);
  CHECK(t.size(-1) == 5);
  CHECK(t.size(-2) == 3);
  CHECK(t.size(-3) == 2);
}

TEST_CASE("Tensor::slice0 and rows", "[tensor]") {
  std::vector<float> d(24);
  std::iota(d.begin(), d.end(), 0.0f);
  ap::Tensor t({2, 3, 4}, d);
  ap::Tensor s = t.slice0(1);
  REQUIRE(s.shape == ap::Shape{3, 4});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) CHECK(s(i, j) == t(1, i, j));

  ap::Tensor r = s.slice0(2);
  REQUIRE(r.shape == ap::Shape{4});
  CHECK(r.data == std::vector<float>{20, 21, 22, 23});

  ap::Tensor scalar = r.slice0(3);
  CHECK(scalar.shape == ap::Shape{});
  REQUIRE(scalar.numel() == 1);
  CHECK(scalar.data[0] == 23.0f);

  CHECK_THROWS(t.slice0(2));
  CHECK_THROWS(t.slice0(-5));

  auto rows = s.rows();
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == std::vector<float>{12, 13, 14, 15});
  CHECK(rows[2] == std::vector<float>{20, 21, 22, 23});
  // from_rows ∘ rows is the identity
  ap::Tensor back = ap::Tensor::from_rows(rows);
  CHECK(back.shape == s.shape);
  CHECK(back.data == s.data);
}

// ------------------------------------------------------------------------------------- matmul

TEST_CASE("matmul 2-D matches a naive double loop on random shapes", "[ops][matmul]") {
  std::mt19937 gen(1234);
  const std::vector<std::array<int, 3>> shapes = {
      {1, 1, 1}, {1, 7, 1}, {1, 5, 9}, {9, 5, 1}, {7, 1, 6}, {3, 4, 5},
      {16, 16, 16}, {13, 31, 7}, {2, 64, 3}, {33, 2, 17}, {1, 100, 1}, {100, 1, 1}};
  for (auto [M, K, N] : shapes) {
    ap::Tensor a = random_tensor({M, K}, gen);
    ap::Tensor b = random_tensor({K, N}, gen);
    ap::Tensor c = ap::matmul(a, b);
    REQUIRE(c.shape == ap::Shape{M, N});
    check_matmul_close(c, a.ptr(), b.ptr(), M, K, N, 0);
  }
}

TEST_CASE("matmul sums left to right in float (deterministic bits)", "[ops][matmul]") {
  std::mt19937 gen(99);
  for (auto [M, K, N] : std::vector<std::array<int, 3>>{{4, 37, 5}, {1, 200, 3}, {6, 3, 1}}) {
    ap::Tensor a = random_tensor({M, K}, gen, -3.0f, 3.0f);
    ap::Tensor b = random_tensor({K, N}, gen, -3.0f, 3.0f);
    ap::Tensor c = ap::matmul(a, b);
    REQUIRE(c.shape == ap::Shape{M, N});
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        INFO("i=" << i << " j=" << j << " K=" << K);
        CHECK(c(i, j) == left_to_right_dot(a.ptr() + i * K, b.ptr() + j, K, 1, N));
      }
  }
}

TEST_CASE("matmul batched 3-D and broadcast BMK times KN", "[ops][matmul]") {
  std::mt19937 gen(7);
  const int B = 3, M = 4, K = 5, N = 2;
  ap::Tensor a = random_tensor({B, M, K}, gen);
  SECTION("batched") {
    ap::Tensor b = random_tensor({B, K, N}, gen);
    ap::Tensor c = ap::matmul(a, b);
    REQUIRE(c.shape == ap::Shape{B, M, N});
    for (int bi = 0; bi < B; ++bi)
      check_matmul_close(c, a.ptr() + bi * M * K, b.ptr() + bi * K * N, M, K, N,
                         static_cast<size_t>(bi) * M * N);
  }
  SECTION("broadcast b") {
    ap::Tensor b = random_tensor({K, N}, gen);
    ap::Tensor c = ap::matmul(a, b);
    REQUIRE(c.shape == ap::Shape{B, M, N});
    for (int bi = 0; bi < B; ++bi)
      check_matmul_close(c, a.ptr() + bi * M * K, b.ptr(), M, K, N, static_cast<size_t>(bi) * M * N);
  }
}

TEST_CASE("matmul shape errors name both shapes", "[ops][matmul][errors]") {
  ap::Tensor a({2, 3}), b({4, 5});
  std::string msg = thrown_message([&] { ap::matmul(a, b); });
  CHECK_THAT(msg, Contains("[2, 3]"));
  CHECK_THAT(msg, Contains("[4, 5]"));

  ap::Tensor a3({2, 3, 4}), b3({3, 4, 5});
  msg = thrown_message([&] { ap::matmul(a3, b3); });
  CHECK_THAT(msg, Contains("[2, 3, 4]"));
  CHECK_THAT(msg, Contains("[3, 4, 5]"));

  ap::Tensor a3b({2, 3, 4}), b3b({2, 5, 6});  // inner sizes differ
  msg = thrown_message([&] { ap::matmul(a3b, b3b); });
  CHECK_THAT(msg, Contains("[2, 3, 4]"));
  CHECK_THAT(msg, Contains("[2, 5, 6]"));

  CHECK_THROWS_AS(ap::matmul(ap::Tensor({3}), ap::Tensor({3, 2})), ap::ShapeError);
}

TEST_CASE("matmul kernels: matmul_forward - matmul_bt_forward - scale_forward", "[ops][kernels]") {
  std::mt19937 gen(5);
  const int M = 5, K = 7, N = 3;
  ap::Tensor a = random_tensor({M, K}, gen);
  ap::Tensor b = random_tensor({K, N}, gen);
  ap::Tensor bt = ap::Tensor({N, K});
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) bt(j, k) = b(k, j);

  ap::Tensor out({M, N}, -99.0f);
  ap::matmul_forward(out.ptr(), a.ptr(), b.ptr(), M, K, N);
  check_matmul_close(out, a.ptr(), b.ptr(), M, K, N, 0);

  ap::Tensor out_bt({M, N}, -99.0f);
  ap::matmul_bt_forward(out_bt.ptr(), a.ptr(), bt.ptr(), M, K, N);
  check_matmul_close(out_bt, a.ptr(), b.ptr(), M, K, N, 0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      CHECK(out_bt(i, j) == left_to_right_dot(a.ptr() + i * K, bt.ptr() + j * K, K, 1, 1));

  std::vector<float> x = {1.0f, -2.0f, 0.5f, 3.0f}, y(4, 0.0f);
  ap::scale_forward(y.data(), x.data(), 0.25f, 4);
  CHECK(y == std::vector<float>{0.25f, -0.5f, 0.125f, 0.75f});
}

// ------------------------------------------------------------------------------- transpose etc.

TEST_CASE("transpose swaps dimensions", "[ops][transpose]") {
  std::mt19937 gen(11);
  SECTION("2-D default") {
    ap::Tensor a = random_tensor({3, 5}, gen);
    ap::Tensor t = ap::transpose(a);
    REQUIRE(t.shape == ap::Shape{5, 3});
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) CHECK(t(j, i) == a(i, j));
  }
  SECTION("3-D default swaps the last two") {
    ap::Tensor a = random_tensor({2, 3, 4}, gen);
    ap::Tensor t = ap::transpose(a);
    REQUIRE(t.shape == ap::Shape{2, 4, 3});
    for (int b = 0; b < 2; ++b)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) CHECK(t(b, j, i) == a(b, i, j));
  }
  SECTION("3-D explicit and negative dims") {
    ap::Tensor a = random_tensor({2, 3, 4}, gen);
    ap::Tensor t = ap::transpose(a, 0, 2);
    ap::Tensor tn = ap::transpose(a, -3, -1);
    REQUIRE(t.shape == ap::Shape{4, 3, 2});
    CHECK(tn.shape == t.shape);
    CHECK(tn.data == t.data);
    for (int b = 0; b < 2; ++b)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) CHECK(t(j, i, b) == a(b, i, j));
  }
  SECTION("transpose twice is the identity") {
    ap::Tensor a = random_tensor({4, 1, 3}, gen);
    ap::Tensor tt = ap::transpose(ap::transpose(a, 0, 1), 0, 1);
    CHECK(tt.shape == a.shape);
    CHECK(tt.data == a.data);
  }
  SECTION("bad dims throw") {
    ap::Tensor a({2, 3});
    CHECK_THROWS_AS(ap::transpose(a, 0, 2), ap::ShapeError);
    CHECK_THROWS_AS(ap::transpose(a, -3, 0), ap::ShapeError);
  }
}

TEST_CASE("permute: all 24 permutations of a 4-D tensor", "[ops][permute]") {
  const ap::Shape shape = {2, 3, 4, 5};
  std::vector<float> d(120);
  std::iota(d.begin(), d.end(), 0.0f);
  ap::Tensor a(shape, d);
  std::vector<int> perm = {0, 1, 2, 3};
  int count = 0;
  do {
    ++count;
    ap::Tensor p = ap::permute(a, perm);
    INFO("perm = " << perm[0] << perm[1] << perm[2] << perm[3]);
    ap::Shape want_shape = {shape[perm[0]], shape[perm[1]], shape[perm[2]], shape[perm[3]]};
    REQUIRE(p.shape == want_shape);
    REQUIRE(p.numel() == 120);
    bool all_ok = true;
    std::vector<int> oi(4), ai(4);
    for (oi[0] = 0; oi[0] < want_shape[0]; ++oi[0])
      for (oi[1] = 0; oi[1] < want_shape[1]; ++oi[1])
        for (oi[2] = 0; oi[2] < want_shape[2]; ++oi[2])
          for (oi[3] = 0; oi[3] < want_shape[3]; ++oi[3]) {
            for (int k = 0; k < 4; ++k) ai[perm[k]] = oi[k];
            if (p.data[flat_index(want_shape, oi)] != a.data[flat_index(shape, ai)]) all_ok = false;
          }
    CHECK(all_ok);
  } while (std::next_permutation(perm.begin(), perm.end()));
  CHECK(count == 24);
}

TEST_CASE("permute refuses non-permutations", "[ops][permute][errors]") {
  ap::Tensor a({2, 3, 4});
  CHECK_THROWS_AS(ap::permute(a, {0, 0, 1}), ap::ShapeError);
  CHECK_THROWS_AS(ap::permute(a, {0, 1}), ap::ShapeError);
  CHECK_THROWS_AS(ap::permute(a, {0, 1, 3}), ap::ShapeError);
  CHECK_THROWS_AS(ap::permute(a, {0, 1, 2, 3}), ap::ShapeError);
}

TEST_CASE("reshape keeps the numbers and infers -1", "[ops][reshape]") {
  std::vector<float> d(24);
  std::iota(d.begin(), d.end(), 0.0f);
  ap::Tensor a({2, 3, 4}, d);
  ap::Tensor r = ap::reshape(a, {6, 4});
  CHECK(r.shape == ap::Shape{6, 4});
  CHECK(r.data == d);
  CHECK(ap::reshape(a, {-1, 8}).shape == ap::Shape{3, 8});
  CHECK(ap::reshape(a, {4, -1}).shape == ap::Shape{4, 6});
  CHECK(ap::reshape(a, {-1}).shape == ap::Shape{24});
  CHECK(ap::reshape(a, {2, -1, 3}).shape == ap::Shape{2, 4, 3});
  CHECK(ap::reshape(a, {1, 24, 1}).data == d);

  SECTION("errors") {
    std::string msg = thrown_message([&] { ap::reshape(a, {5, 5}); });
    CHECK_THAT(msg, Contains("[2, 3, 4]"));
    CHECK_THAT(msg, Contains("[5, 5]"));
    CHECK_THROWS_AS(ap::reshape(a, {-1, -1}), ap::ShapeError);
    CHECK_THROWS_AS(ap::reshape(a, {5, -1}), ap::ShapeError);  // 24 not divisible by 5
    CHECK_THROWS_AS(ap::reshape(a, {-2, 12}), ap::ShapeError);
    CHECK_THROWS_AS(ap::reshape(a, {1, 1, 2, 3, 4}), ap::ShapeError);  // > kMaxDims
  }
}

// ---------------------------------------------------------------------------------- add & co

TEST_CASE("add broadcasts like NumPy", "[ops][add]") {
  std::mt19937 gen(3);
  SECTION("[T, Tt] + [H, T, Tt] (mask onto scores)") {
    const int H = 3, T = 2, Tt = 4;
    ap::Tensor mask = random_tensor({T, Tt}, gen);
    ap::Tensor scores = random_tensor({H, T, Tt}, gen);
    for (auto* order : {"mask+scores", "scores+mask"}) {
      INFO(order);
      ap::Tensor s = std::string(order) == "mask+scores" ? ap::add(mask, scores) : ap::add(scores, mask);
      REQUIRE(s.shape == ap::Shape{H, T, Tt});
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < T; ++i)
          for (int j = 0; j < Tt; ++j) CHECK(s(h, i, j) == scores(h, i, j) + mask(i, j));
    }
  }
  SECTION("[3,1] + [1,4] → [3,4]") {
    ap::Tensor a({3, 1}, std::vector<float>{1, 2, 3});
    ap::Tensor b({1, 4}, std::vector<float>{10, 20, 30, 40});
    ap::Tensor s = ap::add(a, b);
    REQUIRE(s.shape == ap::Shape{3, 4});
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) CHECK(s(i, j) == float(i + 1) + float(10 * (j + 1)));
    CHECK(ap::broadcast_shape({3, 1}, {1, 4}) == ap::Shape{3, 4});
  }
  SECTION("scalar shape {}") {
    ap::Tensor a = random_tensor({2, 3}, gen);
    ap::Tensor s(ap::Shape{}, 0.5f);
    ap::Tensor r1 = ap::add(a, s), r2 = ap::add(s, a);
    REQUIRE(r1.shape == ap::Shape{2, 3});
    REQUIRE(r2.shape == ap::Shape{2, 3});
    for (size_t i = 0; i < 6; ++i) {
      CHECK(r1.data[i] == a.data[i] + 0.5f);
      CHECK(r2.data[i] == a.data[i] + 0.5f);
    }
    CHECK(ap::broadcast_shape({}, {}) == ap::Shape{});
  }
  SECTION("same shapes and a vector along the last dim") {
    ap::Tensor a = random_tensor({2, 3}, gen), b = random_tensor({2, 3}, gen);
    ap::Tensor s = ap::add(a, b);
    for (size_t i = 0; i < 6; ++i) CHECK(s.data[i] == a.data[i] + b.data[i]);
    ap::Tensor v({3}, std::vector<float>{1, 2, 3});
    ap::Tensor sv = ap::add(a, v);
    REQUIRE(sv.shape == ap::Shape{2, 3});
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) CHECK(sv(i, j) == a(i, j) + float(j + 1));
    CHECK(ap::broadcast_shape({5, 1, 3}, {4, 1}) == ap::Shape{5, 4, 3});
  }
  SECTION("incompatible shapes → ShapeError naming both") {
    ap::Tensor a({2, 3}), b({3, 2});
    std::string msg = thrown_message([&] { ap::add(a, b); });
    CHECK_THAT(msg, Contains("[2, 3]"));
    CHECK_THAT(msg, Contains("[3, 2]"));
    CHECK_THROWS_AS(ap::broadcast_shape({2, 3}, {4, 3}), ap::ShapeError);
    CHECK_THROWS_AS(ap::add(ap::Tensor({2, 4, 3}), ap::Tensor({3, 3})), ap::ShapeError);
  }
}

TEST_CASE("scale and add_scalar", "[ops]") {
  std::mt19937 gen(8);
  ap::Tensor a = random_tensor({3, 4}, gen);
  ap::Tensor s = ap::scale(a, -2.5f);
  ap::Tensor p = ap::add_scalar(a, 0.75f);
  REQUIRE(s.shape == a.shape);
  REQUIRE(p.shape == a.shape);
  for (size_t i = 0; i < a.data.size(); ++i) {
    CHECK(s.data[i] == a.data[i] * -2.5f);
    CHECK(p.data[i] == a.data[i] + 0.75f);
  }
  ap::Tensor n(ap::Shape{2}, std::vector<float>{-INFINITY, 1.0f});
  ap::Tensor ns = ap::add_scalar(n, 3.0f);
  CHECK(std::isinf(ns.data[0]));
  CHECK(ns.data[0] < 0);
  CHECK(ns.data[1] == 4.0f);
}
