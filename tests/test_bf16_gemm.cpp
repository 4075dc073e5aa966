// test_bf16_gemm.cpp — bf16_gemm.h's prompt product (activations rounded to bf16, VDPBF16PS) on
// random shapes (odd K and OC, every tile and panel tail) against two independent sums in double:
// the reference's (float32 activations times the BF16 weights) within bf16_gemm.h's stated bound
// (u₈ + 2·(K+8)·u·(1 + u₈))·Σ|a·w| + 2⁻¹²⁵·Σ(1 + |w|), and the bf16-rounded activations' (rounded here
// by quant.h's f32_to_bf16) within the float sum's 2·(K+8)·u·Σ|bf16(a)·w| + 2⁻¹²⁵·Σ(1 + |w|); a
// column or row split gives the same bits; typed_matmul_forward takes it for the BF16 parts of a
// matrix of several parts at 8 rows or more, and an opened BF16 model's logits on 1 and 2 threads
// are the same bits and near the float path's. Skipped (saying so) where the CPU lacks avx512_bf16.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "core/kernels/bf16_gemm.h"
#include "core/kernels/kernels.h"
#include "core/kernels/quant.h"
#include "core/kernels/typed_matmul.h"
#include "formats/llama_load.h"
#include "llama_weights_test_util.h"

namespace {

namespace Q = ap::quant;
namespace B = ap::kernels::bf16;
const double u = std::ldexp(1.0, -24), u8 = std::ldexp(1.0, -8), tiny = std::ldexp(1.0, -125);

bool skipped() {
  if (B::available()) return false;
  WARN("skipped: this CPU (or this build) lacks avx512_bf16; bf16_gemm.h's product never runs here");
  return true;
}

struct Case {
  std::vector<float> x;      // (N, C) activations
  std::vector<uint16_t> w;   // (OC, C) bf16 bits
};

Case random_case(int N, int C, int OC, std::mt19937& rng) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  Case c;
  c.x.resize(size_t(N) * size_t(C));
  for (float& v : c.x) v = g(rng);
  c.w.resize(size_t(OC) * size_t(C));
  for (uint16_t& v : c.w) v = Q::f32_to_bf16(0.05f * g(rng));
  return c;
}

// Checks got (N, OC, stride ldo) against both bounds (bf16: bf16_gemm.h's product) or against the
// reference within the float sum's bound alone (!bf16: the float path); returns the outputs outside.
int check_bounds(const float* got, int ldo, const Case& c, int N, int C, int OC, bool bf16 = true) {
  int bad = 0;
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < OC; ++o) {
      double ref = 0, mag = 0, rnd = 0, rmag = 0, wsum = 0;
      for (int k = 0; k < C; ++k) {
        const double a = c.x[size_t(n) * size_t(C) + size_t(k)], w = Q::bf16_to_f32(c.w[size_t(o) * size_t(C) + size_t(k)]);
        const double r = Q::bf16_to_f32(Q::f32_to_bf16(static_cast<float>(a)));
        ref += a * w, mag += std::fabs(a * w), rnd += r * w, rmag += std::fabs(r * w), wsum += 1 + std::fabs(w);
      }
      const double v = got[size_t(n) * size_t(ldo) + size_t(o)];
      const double b1 = ((bf16 ? u8 : 0.0) + 2.0 * (C + 8) * u * (1 + u8)) * mag + tiny * wsum;
      const double b2 = 2.0 * (C + 8) * u * rmag + tiny * wsum;
      if (!(std::fabs(v - ref) <= b1) || (bf16 && !(std::fabs(v - rnd) <= b2))) {
        if (++bad <= 3) UNSCOPED_INFO("output (" << n << ", " << o << "): " << v << ", reference " << ref << " (bound " << b1
                                                 << "), bf16-rounded sum " << rnd << " (bound " << b2 << ")");
      }
    }
  return bad;
}

}  // namespace

TEST_CASE("bf16 gemm: random shapes within the stated bounds, the same bits on any split", "[quant][bf16]") {
  if (skipped()) return;
  std::mt19937 rng(7);
  const int shapes[][3] = {{1, 1, 1},   {8, 2, 16},   {6, 3, 17},   {7, 33, 65},  {13, 64, 64},
                           {9, 97, 63}, {12, 31, 130}, {20, 576, 70}, {11, 1537, 33}};
  for (const auto& s : shapes) {
    const int N = s[0], C = s[1], OC = s[2];
    INFO("N = " << N << ", C = " << C << ", OC = " << OC);
    const Case c = random_case(N, C, OC, rng);
    const int ldo = OC + 3;  // a stride wider than the columns: nothing past OC is written
    std::vector<float> got(size_t(N) * size_t(ldo), -7.0f);
    B::gemm(got.data(), ldo, c.x.data(), c.w.data(), N, C, OC);
    CHECK(check_bounds(got.data(), ldo, c, N, C, OC) == 0);
    for (int n = 0; n < N; ++n)
      for (int o = OC; o < ldo; ++o) CHECK(got[size_t(n) * size_t(ldo) + size_t(o)] == -7.0f);
    // a thread's share: columns [lo, OC) and rows [1, N) alone
    const int lo = OC / 3, r0 = N > 1 ? 1 : 0;
    std::vector<float> part(size_t(N) * size_t(OC - lo));
    B::gemm(part.data(), OC - lo, c.x.data() + size_t(r0) * size_t(C), c.w.data() + size_t(lo) * size_t(C), N - r0, C,
            OC - lo);
    bool same = true;
    for (int n = r0; n < N; ++n)
      same &= std::memcmp(&part[size_t(n - r0) * size_t(OC - lo)], &got[size_t(n) * size_t(ldo) + size_t(lo)],
                          sizeof(float) * size_t(OC - lo)) == 0;
    CHECK(same);
  }
}

TEST_CASE("bf16 gemm: typed_matmul takes it for the BF16 parts of a prompt's product", "[quant][bf16]") {
  if (skipped()) return;
  namespace K = ap::kernels;
  std::mt19937 rng(9);
  const int C = 75, N = 9;  // odd K; a prompt of 9 rows
  const Q::Type types[] = {Q::Type::BF16, Q::Type::F32, Q::Type::BF16};
  const int rows[] = {19, 5, 47};
  std::vector<Case> cases;
  K::TypedMatrix m;
  std::vector<std::vector<float>> f32(3);
  for (int p = 0; p < 3; ++p) {
    cases.push_back(random_case(N, C, rows[p], rng));
    if (types[p] == Q::Type::F32) {
      for (uint16_t h : cases[p].w) f32[p].push_back(Q::bf16_to_f32(h));
      m.parts.push_back({types[p], reinterpret_cast<const char*>(f32[p].data()), rows[p]});
    } else {
      m.parts.push_back({types[p], reinterpret_cast<const char*>(cases[p].w.data()), rows[p]});
    }
  }
  m.rows = 19 + 5 + 47;
  m.cols = C;
  const Case& x = cases[0];
  const K::Tier was = K::tier();
  K::set_tier(K::Tier::fast);
  std::vector<float> got(size_t(N) * size_t(m.rows));
  K::typed_matmul_forward(got.data(), x.x.data(), m, nullptr, N, C, m.rows);
  int row = 0;
  for (int p = 0; p < 3; ++p) {
    INFO("part " << p);
    Case c = cases[p];
    c.x = x.x;
    if (types[p] == Q::Type::BF16 && B::enabled() && std::strcmp(K::active().name, "avx512") == 0) {
      CHECK(check_bounds(got.data() + row, m.rows, c, N, C, rows[p]) == 0);
      std::vector<float> direct(size_t(N) * size_t(rows[p]));
      B::gemm(direct.data(), rows[p], x.x.data(), c.w.data(), N, C, rows[p]);
      for (int n = 0; n < N; ++n)
        CHECK(std::memcmp(&direct[size_t(n) * size_t(rows[p])], &got[size_t(n) * size_t(m.rows) + size_t(row)],
                          sizeof(float) * size_t(rows[p])) == 0);
    } else {  // the float path
      CHECK(check_bounds(got.data() + row, m.rows, c, N, C, rows[p], false) == 0);
    }
    row += rows[p];
  }
  K::set_tier(was);
}

TEST_CASE("bf16 gemm: an opened BF16 model, the same bits on 1 and 2 threads, near the float path", "[quant][bf16]") {
  if (skipped()) return;
  namespace K = ap::kernels;
  ap::HfConfig c = ap_test::small_hf_config("llama", 70, 96, 161, 24, 64);  // MLP 161: odd K for mlp.c_proj
  c.tie_word_embeddings = true;
  const ap::LlamaWeights w = ap_test::random_llama_weights(c, 13, 0.3f, [](int) { return Q::Type::BF16; });
  std::unique_ptr<ap::GPT> m = ap::open_llama(w, "test");
  const K::Tier was = K::tier();
  K::set_tier(K::Tier::fast);
  std::vector<int> ids;
  for (int i = 0; i < 20; ++i) ids.push_back((i * 31 + 5) % c.vocab_size);
  const size_t n = ids.size() * size_t(c.vocab_size);
  auto logits = [&] {
    m->forward(ids.data(), nullptr, 1, static_cast<int>(ids.size()));
    return std::vector<float>(m->logits(), m->logits() + n);
  };
  const std::vector<float> one = logits();
  m->set_threads(2);
  const std::vector<float> two = logits();
  m->set_threads(1);
  CHECK(std::memcmp(one.data(), two.data(), n * sizeof(float)) == 0);
  B::set_enabled(false);
  const std::vector<float> f32act = logits();
  B::set_enabled(true);
  // Each product moves by at most ~u₈ of its magnitude; through 2 layers the logits stay within a
  // few u₈ of their largest magnitude (measured: about 2⁻⁸ of it here; bound 8·u₈).
  double worst = 0, top = 0;
  for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(double(one[i]) - f32act[i])), top = std::max(top, std::fabs(double(f32act[i])));
  INFO("largest difference " << worst << " of the largest logit " << top);
  CHECK(worst > 0);  // the product ran (activations rounded)
  CHECK(worst <= 8 * u8 * top);
  K::set_tier(was);
}
