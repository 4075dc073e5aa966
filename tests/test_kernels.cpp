// test_kernels.cpp — every fast kernel (kernels_fast.h) against its reference kernel (kernels.h),
// on every instruction set this machine runs (avx512, avx2, sse2, scalar natively; simd128 in the
// wasm build of this file, tests/wasm/kernels.test.mjs), on random shapes with the edge sizes
// (1, odd, not a multiple of any vector width, T = 1, NH = 1), both masks and both softmaxes.
//
// The tolerances are the ones kernels.h promises, with u = 2⁻²⁴ (float32's unit roundoff):
//  - encoder, residual, scale_inplace, adamw_update, crossentropy_backward: bit-identical (the same
//    IEEE operations in the same order, only several lanes at a time).
//  - a sum of K products computed in another order (and with FMA) differs from the reference's by
//    at most 2·(K+8)·u·Σ|terms| (each order is within (K−1)·u·Σ|terms| of the exact sum; +8 covers
//    the few extra roundings of scale and bias): matmul, layernorm, attention's scores and context.
//  - exp: within 4 ulp of exp_f32 over the whole float range (both are within 2 ulp of e^x),
//    ±∞, 0 and NaN where exp_f32 has them. erf: |Δ| ≤ 5e-7 (a rational approximation, 4e-7 from
//    the true erf; erf_f32 is within one ulp). GELU inherits erf's error times |x|/2.
//  - softmax weights: relative error ≤ 2·δs + 4·(n+8)·u, δs the bound on a score's error above
//    (softmax is 1-Lipschitz in the scores' absolute error, relative in the weights); the context
//    Σ a_j·v_j then within that times Σ a_j·|v_j|. NaN (naive overflow) and 0 (empty rows)
//    exactly where the reference has them.
// Magnitudes (Σ|terms|) are computed in double from the inputs.
#include <catch2/catch.hpp>

#include <algorithm>
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
#include "core/tensor/ops.h"

#include "kernels_test_util.h"

namespace {

int64_t ordered_bits(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i < 0 ? int64_t(INT32_MIN) - int64_t(i) : int64_t(i);
}

}  // namespace

TEST_CASE("fast kernels: the dispatcher and the instruction sets", "[kernels]") {
  const char* const* isas = fast::available_isas();
  REQUIRE(isas[0] != nullptr);
  std::vector<std::string> names;
  for (const char* const* p = isas; *p; ++p) names.push_back(*p);
  CHECK(std::find(names.begin(), names.end(), "scalar") != names.end());
#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
  CHECK(std::find(names.begin(), names.end(), "sse2") != names.end());
#endif
#if defined(AP_WASM_SIMD128)
  CHECK(names.front() == "simd128");
#endif
  CHECK_FALSE(fast::set_isa("no-such-isa"));
  const std::string now = fast::isa_name();
  CHECK(fast::set_isa(names.back().c_str()));
  CHECK(std::string(fast::isa_name()) == names.back());
  CHECK(fast::set_isa(now.c_str()));
  // The tier switch (a build with AP_REFERENCE_KERNELS keeps the reference tier), and scratch
  // sizes good for either tier.
  const bool forced = K::set_tier(K::Tier::fast) == K::Tier::reference;
  CHECK(K::set_tier(K::Tier::reference) == K::Tier::reference);
  CHECK(std::string(K::tier_name()) == "reference");
  CHECK(K::set_tier(K::Tier::fast) == (forced ? K::Tier::reference : K::Tier::fast));
  CHECK(std::string(K::tier_name()) == (forced ? std::string("reference") : now));
  CHECK(&K::active() == (forced ? &R : &fast::current()));
  // Every table has every kernel, and the scratch sizes for any tier hold for each of them.
  std::vector<const K::Kernels*> tables = {&R};
  for (const K::Kernels* const* t = fast::compiled(); *t; ++t) tables.push_back(*t);
  for (const K::Kernels* t : tables) {
    INFO("table " << t->name);
#define AP_CHECK_SET(f) CHECK(t->f != nullptr);
    AP_KERNEL_NAMES(AP_CHECK_SET)
#undef AP_CHECK_SET
    for (int T : {1, 7, 64, 300}) {
      CHECK(K::attention_backward_scratch_max(2, T, 64, 4) >= t->attention_backward_scratch(2, T, 64, 4));
      CHECK(K::attention_forward_infer_scratch_max(2, T, 64, 4) >= t->attention_forward_infer_scratch(2, T, 64, 4));
    }
  }
}

TEST_CASE("fast kernels: exp within 4 ulp of exp_f32, erf within 5e-7 of erf_f32", "[kernels]") {
  // A dense sweep over [-110, 95] (every regime: 0, subnormal results, normal, overflow) and specials.
  Vec x;
  for (double v = -110.0; v <= 95.0; v += 0.00731) x.push_back(float(v));
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 88.7228f, 88.72283f, 88.7229f, -87.33f, -103.9f, -104.0f, -104.1f,
                  kInf, -kInf, std::numeric_limits<float>::quiet_NaN(), 1000.0f, -1000.0f})
    x.push_back(v);
  Vec ref(x.size());
  for (size_t i = 0; i < x.size(); ++i) ref[i] = ap::exp_f32(x[i]);
  Vec erx;
  for (double v = -6.0; v <= 6.0; v += 0.000913) erx.push_back(float(v));
  for (float v : {0.0f, -0.0f, 1e-20f, -1e-20f, 4.0f, -4.0f, 10.0f, -10.0f, kInf, -kInf}) erx.push_back(v);
  Vec eref(erx.size());
  for (size_t i = 0; i < erx.size(); ++i) eref[i] = ap::erf_f32(erx[i]);
  for_each_isa([&](const K::Kernels& F, const std::string& isa) {
    INFO("isa " << isa);
    // every length up to 37 (tails of every width), then the whole sweep
    for (int n = 1; n <= 37; ++n) {
      Vec out(n);
      F.exp_n(out.data(), x.data() + 5000, n);
      expect_close("exp n=" + std::to_string(n), out.data(), ref.data() + 5000, n,
                   [&](size_t i) { return 4.0 * std::ldexp(1.0, int(std::ilogb(ref[5000 + i])) - 23); });
    }
    Vec out(x.size());
    F.exp_n(out.data(), x.data(), int(x.size()));
    int64_t worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(ref[i]) || std::isinf(ref[i]) || ref[i] == 0.0f) {
        INFO("exp(" << x[i] << "): fast " << out[i] << " ref " << ref[i]);
        CHECK(((std::isnan(ref[i]) && std::isnan(out[i])) || ref[i] == out[i]));
        continue;
      }
      // subnormal results: 4 ulp of the smallest normal's spacing
      const int64_t d = std::llabs(ordered_bits(out[i]) - ordered_bits(ref[i]));
      if (d > worst) worst = d;
      if (d > 4) {
        INFO("exp(" << x[i] << "): fast " << out[i] << " ref " << ref[i] << ", " << d << " ulp");
        CHECK(d <= 4);
      }
    }
    INFO("exp worst " << worst << " ulp");
    CHECK(worst <= 4);
    Vec eout(erx.size());
    F.erf_n(eout.data(), erx.data(), int(erx.size()));
    expect_close("erf", eout.data(), eref.data(), erx.size(), [&](size_t i) {
      // within 5e-7, and within 4 ulp of erf near 0 (where erf(x) ≈ 1.13x is tiny)
      return std::min(5e-7, 4.0 * std::fabs(double(eref[i])) * 2 * kU + 1e-45);
    });
  });
}

TEST_CASE("fast kernels: matmul forward and backward", "[kernels]") {
  std::mt19937 g(20261130);
  struct Shape {
    int N, C, OC;
  };
  std::vector<Shape> shapes = {{1, 1, 1},   {1, 64, 192}, {2, 3, 5},      {3, 17, 65},   {4, 64, 65},
                               {5, 7, 1},   {7, 1, 9},    {13, 33, 31},   {64, 64, 192}, {100, 64, 256},
                               {37, 257, 70}, {1024, 64, 65}, {67, 300, 129}, {256, 256, 256}, {50, 520, 1700},
                               // the transposed weight panels packed 4×4 (SIMD128, SSE2): output columns
                               // not a multiple of 4, k in several KC blocks with a tail shorter than 4;
                               // few rows as in a prompt's forward
                               {64, 1030, 37}, {63, 1537, 9}, {6, 2049, 3}, {65, 40, 19}, {4, 3, 2},
                               // the one-row product (N < 4, generation) of a matrix of 1 MB or more
                               // (its loads ahead of each row's pages stay inside the matrix): a row of
                               // GPT-2's widths, rows with a tail shorter than 4 vectors, one just
                               // under 1 MB (the plain loop)
                               {1, 768, 400}, {1, 3072, 90}, {1, 77, 3500}, {2, 130, 2100}, {3, 1, 270000},
                               {1, 768, 341},
                               // the prompt's product (4 ≤ N ≤ 256: Xᵀ packed, weight rows broadcast,
                               // stored transposed): token chunks of 1, 2, 3 and 4 vectors with tails,
                               // output rows not a multiple of any tile's, the largest N, and past it
                               // (N 257; Xᵀ over the workspace: the packed GEMM)
                               {16, 768, 70}, {33, 65, 7}, {64, 200, 301}, {100, 3, 130}, {256, 40, 50},
                               {9, 1, 25}, {47, 129, 23}, {257, 31, 17}, {200, 3000, 5},
                               // few rows past the short path (wasm: B packed a panel at a time, A
                               // packed): output columns past the GEMM's NC block, k in two blocks
                               {20, 300, 1900}};
  std::uniform_int_distribution<int> d(1, 150);
  for (int i = 0; i < 6; ++i) shapes.push_back({d(g), d(g), d(g)});
  for (const Shape& s : shapes) {
    const int N = s.N, C = s.C, OC = s.OC;
    const Vec inp = random_vec(g, size_t(N) * C), w = random_vec(g, size_t(OC) * C), bias = random_vec(g, OC);
    const Vec dout = random_vec(g, size_t(N) * OC);
    const Vec dinp0 = random_vec(g, size_t(N) * C), dw0 = random_vec(g, size_t(OC) * C), db0 = random_vec(g, OC);
    // magnitudes
    std::vector<double> mag_out(size_t(N) * OC), mag_dinp(size_t(N) * C), mag_dw(size_t(OC) * C), mag_db(OC);
    for (int n = 0; n < N; ++n)
      for (int o = 0; o < OC; ++o) {
        double m = 0;
        for (int c = 0; c < C; ++c) m += std::fabs(double(inp[size_t(n) * C + c]) * w[size_t(o) * C + c]);
        mag_out[size_t(n) * OC + o] = m + std::fabs(bias[o]);
      }
    for (int n = 0; n < N; ++n)
      for (int c = 0; c < C; ++c) {
        double m = std::fabs(dinp0[size_t(n) * C + c]);
        for (int o = 0; o < OC; ++o) m += std::fabs(double(dout[size_t(n) * OC + o]) * w[size_t(o) * C + c]);
        mag_dinp[size_t(n) * C + c] = m;
      }
    for (int o = 0; o < OC; ++o) {
      for (int c = 0; c < C; ++c) {
        double m = std::fabs(dw0[size_t(o) * C + c]);
        for (int n = 0; n < N; ++n) m += std::fabs(double(dout[size_t(n) * OC + o]) * inp[size_t(n) * C + c]);
        mag_dw[size_t(o) * C + c] = m;
      }
      double m = std::fabs(db0[o]);
      for (int n = 0; n < N; ++n) m += std::fabs(dout[size_t(n) * OC + o]);
      mag_db[o] = m;
    }
    Vec ref_out(size_t(N) * OC), ref_out_nb(size_t(N) * OC);
    R.matmul_forward(ref_out.data(), inp.data(), w.data(), bias.data(), N, C, OC);
    R.matmul_forward(ref_out_nb.data(), inp.data(), w.data(), nullptr, N, C, OC);
    Vec ref_dinp = dinp0, ref_dw = dw0, ref_db = db0;
    R.matmul_backward(ref_dinp.data(), ref_dw.data(), ref_db.data(), dout.data(), inp.data(), w.data(), N, C, OC);
    for_each_isa([&](const K::Kernels& F, const std::string& isa) {
      const std::string tag = isa + " N=" + std::to_string(N) + " C=" + std::to_string(C) + " OC=" + std::to_string(OC);
      Vec out(size_t(N) * OC, 123.0f);
      F.matmul_forward(out.data(), inp.data(), w.data(), bias.data(), N, C, OC);
      expect_close("matmul_forward " + tag, out.data(), ref_out.data(), out.size(),
                   [&](size_t i) { return sum_tol(C) * mag_out[i]; });
      F.matmul_forward(out.data(), inp.data(), w.data(), nullptr, N, C, OC);
      expect_close("matmul_forward (no bias) " + tag, out.data(), ref_out_nb.data(), out.size(),
                   [&](size_t i) { return sum_tol(C) * mag_out[i]; });
      Vec dinp = dinp0, dw = dw0, db = db0;
      F.matmul_backward(dinp.data(), dw.data(), db.data(), dout.data(), inp.data(), w.data(), N, C, OC);
      expect_close("matmul_backward dinp " + tag, dinp.data(), ref_dinp.data(), dinp.size(),
                   [&](size_t i) { return sum_tol(OC) * mag_dinp[i]; });
      expect_close("matmul_backward dweight " + tag, dw.data(), ref_dw.data(), dw.size(),
                   [&](size_t i) { return sum_tol(N) * mag_dw[i]; });
      expect_close("matmul_backward dbias " + tag, db.data(), ref_db.data(), db.size(),
                   [&](size_t i) { return sum_tol(N) * mag_db[i]; });
      // null gradients are skipped
      Vec dinp2 = dinp0;
      F.matmul_backward(dinp2.data(), nullptr, nullptr, dout.data(), inp.data(), w.data(), N, C, OC);
      expect_equal("matmul_backward dinp alone " + tag, dinp2.data(), dinp.data(), dinp.size());
    });
  }
}

namespace {

struct AttnCase {
  int B, T, C, NH;
  ap::MaskVariant mask;
  bool stable;
  float qk_scale;  // inputs uniform in ±qk_scale (large values make the naive softmax overflow)
};

std::string describe(const AttnCase& a) {
  std::ostringstream s;
  s << "B=" << a.B << " T=" << a.T << " C=" << a.C << " NH=" << a.NH
    << (a.mask == ap::MaskVariant::strict ? " strict" : " inclusive") << (a.stable ? " stable" : " naive")
    << " x" << a.qk_scale;
  return s.str();
}

std::vector<AttnCase> attention_cases() {
  using MV = ap::MaskVariant;
  std::vector<AttnCase> cs;
  for (MV m : {MV::strict, MV::inclusive})
    for (bool st : {true, false}) {
      cs.push_back({1, 1, 1, 1, m, st, 1});
      cs.push_back({1, 1, 16, 4, m, st, 1});
      cs.push_back({2, 5, 6, 2, m, st, 1});
      cs.push_back({1, 7, 3, 1, m, st, 1});
      cs.push_back({3, 13, 20, 4, m, st, 1});
      cs.push_back({2, 64, 64, 4, m, st, 1});    // the tiny GPT's heads (hs 16)
      cs.push_back({1, 33, 128, 4, m, st, 1});   // the small GPT's (hs 32)
      cs.push_back({1, 70, 64, 1, m, st, 1});    // W1's head (hs 64)
      cs.push_back({1, 41, 45, 3, m, st, 1});    // hs 15: not a multiple of any width
      cs.push_back({2, 19, 40, 5, m, st, 1});    // hs 8
      cs.push_back({1, 200, 72, 1, m, st, 0.5f});
    }
  // large scores: the naive softmax overflows to NaN, the stable one does not
  cs.push_back({1, 9, 8, 1, MV::strict, false, 40});
  cs.push_back({1, 9, 8, 1, MV::strict, true, 40});
  cs.push_back({1, 12, 16, 2, MV::inclusive, false, 40});
  return cs;
}

}  // namespace

TEST_CASE("fast kernels: attention forward, inference forward, backward", "[kernels]") {
  std::mt19937 g(7);
  for (const AttnCase& a : attention_cases()) {
    const int B = a.B, T = a.T, C = a.C, NH = a.NH, hs = C / NH, C3 = 3 * C;
    const K::AttnOptions opt{a.mask, a.stable};
    const Vec qkv = random_vec(g, size_t(B) * T * C3, -a.qk_scale, a.qk_scale);
    const Vec dout = random_vec(g, size_t(B) * T * C);
    const Vec dqkv0 = random_vec(g, size_t(B) * T * C3);
    const size_t natt = size_t(B) * NH * T * T;
    Vec ref_out(size_t(B) * T * C), ref_att(natt, 7.0f);
    R.attention_forward(ref_out.data(), ref_att.data(), qkv.data(), B, T, C, NH, opt);
    Vec ref_dqkv = dqkv0, scratch(K::attention_backward_scratch_max(B, T, C, NH) + 1, 0.0f);
    R.attention_backward(ref_dqkv.data(), scratch.data(), dout.data(), qkv.data(), ref_att.data(), B, T, C, NH, opt);
    // the reference inference form is the reference forward, bit for bit
    {
      Vec out(ref_out.size()), s(K::attention_forward_infer_scratch_max(B, T, C, NH));
      R.attention_forward_infer(out.data(), s.data(), qkv.data(), B, T, C, NH, opt);
      expect_equal("reference infer " + describe(a), out.data(), ref_out.data(), out.size());
    }
    // bounds (double): per row, the score error δs and the magnitudes of the sums
    const double scale = 1.0 / std::sqrt(double(hs));
    std::vector<double> w_tol(natt), mag_out(ref_out.size()), mag_dqkv(ref_dqkv.size());
    std::vector<double> tol_out(ref_out.size()), tol_dqkv(ref_dqkv.size());
    for (size_t i = 0; i < dqkv0.size(); ++i) mag_dqkv[i] = std::fabs(dqkv0[i]);
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < NH; ++h) {
        const float* q = qkv.data() + size_t(b) * T * C3 + h * hs;
        const float* k = q + C;
        const float* v = q + 2 * C;
        for (int t = 0; t < T; ++t) {
          const int n = ap::kernels::visible_keys(t, a.mask);
          double qk = 0;
          for (int j = 0; j < n; ++j) {
            double s = 0;
            for (int c = 0; c < hs; ++c) s += std::fabs(double(q[size_t(t) * C3 + c]) * k[size_t(j) * C3 + c]);
            qk = std::max(qk, s * scale);
          }
          const double ds = sum_tol(hs) * qk;
          const double wt = 2 * ds + 4 * (n + 8) * kU;
          const float* at = ref_att.data() + ((size_t(b) * NH + h) * T + t) * T;
          double* wtol = w_tol.data() + ((size_t(b) * NH + h) * T + t) * T;
          for (int j = 0; j < T; ++j) wtol[j] = wt * at[j];
          // context: Σ a_j|v_j|
          const float* d = dout.data() + (size_t(b) * T + t) * C + h * hs;
          double dotmag = 0;
          for (int j = 0; j < n; ++j) {
            double dtm = 0;
            for (int c = 0; c < hs; ++c) dtm += std::fabs(double(d[c]) * v[size_t(j) * C3 + c]);
            dotmag += dtm * at[j];
          }
          for (int c = 0; c < hs; ++c) {
            double m = 0;
            for (int j = 0; j < n; ++j) m += at[j] * std::fabs(double(v[size_t(j) * C3 + c]));
            const size_t oi = (size_t(b) * T + t) * C + h * hs + c;
            mag_out[oi] = m;
            tol_out[oi] = (wt + sum_tol(n)) * m;
          }
          // gradients: dpre_j = a_j(datt_j − dot); dq += scale·dpre_j·k_j; dk_j += scale·dpre_j·q; dv_j += a_j·d
          for (int j = 0; j < n; ++j) {
            double dtm = 0;
            for (int c = 0; c < hs; ++c) dtm += std::fabs(double(d[c]) * v[size_t(j) * C3 + c]);
            const double dpre_mag = at[j] * (dtm + dotmag);
            for (int c = 0; c < hs; ++c) {
              const size_t qi = (size_t(b) * T + t) * C3 + h * hs + c;
              const size_t ki = (size_t(b) * T + j) * C3 + C + h * hs + c;
              const size_t vi = (size_t(b) * T + j) * C3 + 2 * C + h * hs + c;
              mag_dqkv[qi] += scale * dpre_mag * std::fabs(k[size_t(j) * C3 + c]);
              mag_dqkv[ki] += scale * dpre_mag * std::fabs(q[size_t(t) * C3 + c]);
              mag_dqkv[vi] += at[j] * std::fabs(d[c]);
            }
          }
        }
      }
    for (size_t i = 0; i < tol_dqkv.size(); ++i) tol_dqkv[i] = sum_tol(2 * T + hs) * mag_dqkv[i];
    for_each_isa([&](const K::Kernels& F, const std::string& isa) {
      const std::string tag = isa + " " + describe(a);
      Vec out(ref_out.size(), 5.0f), att(natt, 9.0f);
      F.attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH, opt);
      expect_close("attention_forward att " + tag, att.data(), ref_att.data(), natt,
                   [&](size_t i) { return w_tol[i]; });
      // zeros exactly where the reference has them (masked keys, empty rows)
      for (size_t i = 0; i < natt; ++i)
        if (ref_att[i] == 0.0f && att[i] != 0.0f) {
          INFO("attention_forward " << tag << ": att[" << i << "] = " << att[i] << ", reference 0");
          CHECK(false);
          break;
        }
      expect_close("attention_forward out " + tag, out.data(), ref_out.data(), out.size(),
                   [&](size_t i) { return tol_out[i]; });
      Vec out2(ref_out.size(), 3.0f), s(K::attention_forward_infer_scratch_max(B, T, C, NH), 1.0f);
      F.attention_forward_infer(out2.data(), s.data(), qkv.data(), B, T, C, NH, opt);
      expect_equal("attention_forward_infer = attention_forward " + tag, out2.data(), out.data(), out.size());
      if (a.stable || a.qk_scale <= 1.0f) {
        Vec dqkv = dqkv0, sc(K::attention_backward_scratch_max(B, T, C, NH), 2.0f);
        F.attention_backward(dqkv.data(), sc.data(), dout.data(), qkv.data(), ref_att.data(), B, T, C, NH, opt);
        expect_close("attention_backward " + tag, dqkv.data(), ref_dqkv.data(), dqkv.size(),
                     [&](size_t i) { return tol_dqkv[i]; });
      }
    });
  }
}

TEST_CASE("fast kernels: attention_decode over a KV cache", "[kernels]") {
  std::mt19937 g(11);
  using MV = ap::MaskVariant;
  for (int C : {1, 16, 64, 45, 128})
    for (int NH : {1, 4, 3})
      for (int base : {0, 1, 6, 63, 256})
        for (MV m : {MV::strict, MV::inclusive})
          for (bool st : {true, false}) {
            if (C % NH) continue;
            const int hs = C / NH, Tt = base + 1;
            const K::AttnOptions opt{m, st};
            const Vec q = random_vec(g, C), kc = random_vec(g, size_t(Tt) * C), vc = random_vec(g, size_t(Tt) * C);
            Vec ro(C), ra(size_t(NH) * Tt, 4.0f);
            R.attention_decode(ro.data(), ra.data(), q.data(), kc.data(), vc.data(), base, C, NH, opt);
            const int n = ap::kernels::visible_keys(base, m);
            std::vector<double> wtol(ra.size()), otol(C);
            for (int h = 0; h < NH; ++h) {
              double qk = 0;
              for (int j = 0; j < n; ++j) {
                double s = 0;
                for (int c = 0; c < hs; ++c) s += std::fabs(double(q[h * hs + c]) * kc[size_t(j) * C + h * hs + c]);
                qk = std::max(qk, s / std::sqrt(double(hs)));
              }
              const double wt = 2 * sum_tol(hs) * qk + 4 * (n + 8) * kU;
              for (int j = 0; j < Tt; ++j) wtol[size_t(h) * Tt + j] = wt * ra[size_t(h) * Tt + j];
              for (int c = 0; c < hs; ++c) {
                double mg = 0;
                for (int j = 0; j < n; ++j) mg += ra[size_t(h) * Tt + j] * std::fabs(double(vc[size_t(j) * C + h * hs + c]));
                otol[h * hs + c] = (wt + sum_tol(n)) * mg;
              }
            }
            for_each_isa([&](const K::Kernels& F, const std::string& isa) {
              std::ostringstream tag;
              tag << isa << " C=" << C << " NH=" << NH << " base=" << base
                  << (m == MV::strict ? " strict" : " inclusive") << (st ? " stable" : " naive");
              Vec o(C, 8.0f), at(ra.size(), 6.0f);
              F.attention_decode(o.data(), at.data(), q.data(), kc.data(), vc.data(), base, C, NH, opt);
              expect_close("attention_decode att " + tag.str(), at.data(), ra.data(), at.size(),
                           [&](size_t i) { return wtol[i]; });
              expect_close("attention_decode out " + tag.str(), o.data(), ro.data(), o.size(),
                           [&](size_t i) { return otol[i]; });
            });
          }
}

TEST_CASE("fast kernels: layernorm, GELU, cross-entropy", "[kernels]") {
  std::mt19937 g(3);
  for (int C : {1, 3, 16, 17, 64, 65, 128, 255, 512})
    for (int N : {1, 5, 33}) {
      const Vec x = random_vec(g, size_t(N) * C, -2.0f, 3.0f), w = random_vec(g, C, 0.5f, 1.5f),
                b = random_vec(g, C), dout = random_vec(g, size_t(N) * C);
      const Vec dx0 = random_vec(g, size_t(N) * C), dw0 = random_vec(g, C), db0 = random_vec(g, C);
      Vec ro(size_t(N) * C), rm(N), rr(N);
      R.layernorm_forward(ro.data(), rm.data(), rr.data(), x.data(), w.data(), b.data(), N, C, 1e-5f);
      // no bias (nanoGPT's bias=False) and another ε: the same row arithmetic
      Vec rnb(size_t(N) * C), rnbm(N), rnbr(N);
      R.layernorm_forward(rnb.data(), rnbm.data(), rnbr.data(), x.data(), w.data(), nullptr, N, C, 1e-3f);
      Vec rdx = dx0, rdw = dw0, rdb = db0;
      R.layernorm_backward(rdx.data(), rdw.data(), rdb.data(), dout.data(), x.data(), w.data(), rm.data(), rr.data(),
                           N, C);
      // magnitudes: out = norm·w + b; dx = r·(dn − mean dn − norm·mean(dn·norm)); dw = Σ_n norm·d
      std::vector<double> mo(ro.size()), mdx(rdx.size()), mdw(C), mmr(N);
      for (int n = 0; n < N; ++n) {
        double adn = 0, adnn = 0, ax = 0;
        for (int c = 0; c < C; ++c) {
          const double nm = (x[size_t(n) * C + c] - double(rm[n])) * rr[n];
          adn += std::fabs(w[c] * dout[size_t(n) * C + c]);
          adnn += std::fabs(w[c] * dout[size_t(n) * C + c] * nm);
          ax += std::fabs(x[size_t(n) * C + c]);
        }
        mmr[n] = ax / C;
        for (int c = 0; c < C; ++c) {
          const size_t i = size_t(n) * C + c;
          // the mean's error (≈ C·u·mean|x|) moves every (x − mean) by up to that much
          const double nm = (std::fabs(x[i] - double(rm[n])) + ax / C) * rr[n];
          mo[i] = (nm + 1) * std::fabs(w[c]) + std::fabs(b[c]);
          mdx[i] = std::fabs(dx0[i]) + rr[n] * (std::fabs(w[c] * dout[i]) + adn / C + (nm + 1) * adnn / C);
          mdw[c] += nm * std::fabs(dout[i]);
        }
      }
      for (int c = 0; c < C; ++c) mdw[c] += std::fabs(dw0[c]);
      for_each_isa([&](const K::Kernels& F, const std::string& isa) {
        const std::string tag = isa + " N=" + std::to_string(N) + " C=" + std::to_string(C);
        Vec o(ro.size()), m(N), r(N);
        F.layernorm_forward(o.data(), m.data(), r.data(), x.data(), w.data(), b.data(), N, C, 1e-5f);
        expect_close("layernorm_forward out " + tag, o.data(), ro.data(), o.size(),
                     [&](size_t i) { return 2 * sum_tol(C) * mo[i]; });
        Vec onb(ro.size()), mnb(N), rnbf(N);
        F.layernorm_forward(onb.data(), mnb.data(), rnbf.data(), x.data(), w.data(), nullptr, N, C, 1e-3f);
        expect_close("layernorm_forward no bias, eps 1e-3 " + tag, onb.data(), rnb.data(), onb.size(),
                     [&](size_t i) { return 2 * sum_tol(C) * mo[i]; });
        expect_close("layernorm_forward rstd eps 1e-3 " + tag, rnbf.data(), rnbr.data(), N,
                     [&](size_t i) { return 2 * sum_tol(C) * rnbr[i]; });
        expect_close("layernorm_forward mean " + tag, m.data(), rm.data(), N,
                     [&](size_t i) { return sum_tol(C) * mmr[i]; });
        expect_close("layernorm_forward rstd " + tag, r.data(), rr.data(), N,
                     [&](size_t i) { return 2 * sum_tol(C) * rr[i]; });
        Vec dx = dx0, dw = dw0, db = db0;
        F.layernorm_backward(dx.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(), rm.data(), rr.data(),
                             N, C);
        expect_close("layernorm_backward dinp " + tag, dx.data(), rdx.data(), dx.size(),
                     [&](size_t i) { return 2 * sum_tol(C) * mdx[i]; });
        expect_close("layernorm_backward dw " + tag, dw.data(), rdw.data(), C,
                     [&](size_t i) { return sum_tol(N) * mdw[i]; });
        expect_equal("layernorm_backward db " + tag, db.data(), rdb.data(), C);
      });
    }

  // An activation's inputs: uniform in (−lim, lim), and for n > 10 the signed zeros, ±30 and a tiny one.
  auto activation_inputs = [&](int n, float lim) {
    Vec x = random_vec(g, n, -lim, lim);
    if (n > 10) {
      x[0] = 0.0f;
      x[1] = -0.0f;
      x[2] = 30.0f;
      x[3] = -30.0f;
      x[4] = 1e-8f;
    }
    return x;
  };
  for (int n : {1, 3, 15, 16, 17, 100, 1000, 4099}) {
    const Vec x = activation_inputs(n, 7.0f);
    const Vec dout = random_vec(g, n), d0 = random_vec(g, n);
    Vec ro(n), rd = d0;
    R.gelu_forward(ro.data(), x.data(), n);
    R.gelu_backward(rd.data(), x.data(), dout.data(), n);
    for_each_isa([&](const K::Kernels& F, const std::string& isa) {
      const std::string tag = isa + " n=" + std::to_string(n);
      Vec o(n);
      F.gelu_forward(o.data(), x.data(), n);
      // ½x·(1 + erf): erf's 5e-7, then a few roundings of the result
      expect_close("gelu_forward " + tag, o.data(), ro.data(), n,
                   [&](size_t i) { return 2.6e-7 * std::fabs(x[i]) + 4 * kU * std::fabs(ro[i]); });
      Vec io = x;  // in place (the model writes gelu over its input)
      F.gelu_forward(io.data(), io.data(), n);
      expect_equal("gelu_forward in place " + tag, io.data(), o.data(), n);
      Vec d = d0;
      F.gelu_backward(d.data(), x.data(), dout.data(), n);
      expect_close("gelu_backward " + tag, d.data(), rd.data(), n, [&](size_t i) {
        const double xx = x[i], pdf = std::exp(-0.5 * xx * xx) * 0.3989422804014327;
        // Φ's 2.6e-7, x·φ's exp error (x²/2 rounded: ≈ (x² + 8)·u relative), the final sum
        return (2.6e-7 + std::fabs(xx) * pdf * (xx * xx + 8) * kU) * std::fabs(dout[i]) +
               4 * kU * (std::fabs(d0[i]) + 2 * std::fabs(dout[i]));
      });
    });
  }

  // GPT-2's GELU (the tanh approximation): the reference's formula x·σ(2u) on vectors, exp within
  // 4 ulp and u's few roundings, magnified by |2u| in e^(−2u)
  for (int n : {1, 3, 15, 16, 17, 100, 1000, 4099}) {
    const Vec x = activation_inputs(n, 9.0f);
    const Vec dout = random_vec(g, n), d0 = random_vec(g, n);
    Vec ro(n), rd = d0;
    R.gelu_new_forward(ro.data(), x.data(), n);
    R.gelu_new_backward(rd.data(), x.data(), dout.data(), n);
    // against float64's ½x(1 + tanh(u)), written x / (1 + e^(−2u)) so that float64 itself does not
    // cancel for negative x: the reference is close to the exact function
    for (int i = 0; i < n; ++i) {
      const double xx = x[i], u = 0.7978845608028654 * (xx + 0.044715 * xx * xx * xx);
      const double exact = xx / (1.0 + std::exp(-2.0 * u));
      CHECK(std::fabs(ro[i] - exact) <= (16 + 16 * std::fabs(u)) * kU * std::fabs(exact) + 1e-37);
    }
    auto uof = [&](size_t i) {
      const double xx = x[i];
      return std::fabs(0.7978845608028654 * (xx + 0.044715 * xx * xx * xx));
    };
    for_each_isa([&](const K::Kernels& F, const std::string& isa) {
      const std::string tag = isa + " n=" + std::to_string(n);
      Vec o(n);
      F.gelu_new_forward(o.data(), x.data(), n);
      expect_close("gelu_new_forward " + tag, o.data(), ro.data(), n,
                   [&](size_t i) { return (16 + 16 * uof(i)) * kU * std::fabs(ro[i]) + 1e-37; });
      Vec io = x;
      F.gelu_new_forward(io.data(), io.data(), n);
      expect_equal("gelu_new_forward in place " + tag, io.data(), o.data(), n);
      Vec d = d0;
      F.gelu_new_backward(d.data(), x.data(), dout.data(), n);
      expect_close("gelu_new_backward " + tag, d.data(), rd.data(), n, [&](size_t i) {
        const double xx = x[i], u = uof(i), s = 1.0 / (1.0 + std::exp(-2.0 * 0.7978845608028654 * (xx + 0.044715 * xx * xx * xx)));
        const double du = 0.7978845608028654 * (1 + 3 * 0.044715 * xx * xx);
        const double mag = s + std::fabs(xx) * s * (1 - s) * 2 * du;
        return (32 + 32 * u) * kU * mag * std::fabs(dout[i]) + 4 * kU * (std::fabs(d0[i]) + 2 * mag * std::fabs(dout[i]));
      });
    });
  }

  for (int V : {1, 2, 9, 65, 100, 257})
    for (int N : {1, 7, 64}) {
      const Vec logits = random_vec(g, size_t(N) * V, -6.0f, 6.0f);
      std::vector<int> tg(N);
      for (int n = 0; n < N; ++n) tg[n] = int(g() % V);
      Vec rl(N), rp(size_t(N) * V);
      R.crossentropy_forward(rl.data(), rp.data(), logits.data(), tg.data(), N, V);
      const Vec d0 = random_vec(g, size_t(N) * V);
      Vec rd = d0;
      R.crossentropy_backward(rd.data(), rp.data(), tg.data(), 1.0f / N, N, V);
      for_each_isa([&](const K::Kernels& F, const std::string& isa) {
        const std::string tag = isa + " N=" + std::to_string(N) + " V=" + std::to_string(V);
        Vec l(N), p(size_t(N) * V);
        F.crossentropy_forward(l.data(), p.data(), logits.data(), tg.data(), N, V);
        expect_close("crossentropy_forward probs " + tag, p.data(), rp.data(), p.size(),
                     [&](size_t i) { return (4 * (V + 8) * kU) * rp[i]; });
        expect_close("crossentropy_forward losses " + tag, l.data(), rl.data(), N, [&](size_t n) {
          double m = -1e30;
          for (int v = 0; v < V; ++v) m = std::max(m, double(logits[size_t(n) * V + v]));
          return sum_tol(V) * (1 + std::fabs(m) + std::fabs(logits[size_t(n) * V + tg[n]])) + 8 * kU;
        });
        Vec d = d0;
        F.crossentropy_backward(d.data(), rp.data(), tg.data(), 1.0f / N, N, V);
        expect_equal("crossentropy_backward " + tag, d.data(), rd.data(), d.size());
      });
    }
}

TEST_CASE("fast kernels: elementwise, encoder, optimiser helpers (bit-identical)", "[kernels]") {
  std::mt19937 g(5);
  for (int n : {1, 2, 7, 16, 31, 64, 1000, 4103}) {
    const Vec a = random_vec(g, n), b = random_vec(g, n), d = random_vec(g, n);
    Vec ro(n), ra = a, rb = b;
    R.residual_forward(ro.data(), a.data(), b.data(), n);
    R.residual_backward(ra.data(), rb.data(), d.data(), n);
    Vec rs = a;
    R.scale_inplace(rs.data(), 0.37f, n);
    const double rss = R.sum_squares(a.data(), n);
    // AdamW on parameters, moments and gradients of every sign
    const Vec p0 = random_vec(g, n), m0 = random_vec(g, n, -0.1f, 0.1f), v0 = random_vec(g, n, 0.0f, 0.01f);
    Vec rp = p0, rm = m0, rv = v0;
    R.adamw_update(rp.data(), rm.data(), rv.data(), d.data(), n, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f, 0.271f, 0.00299f);
    for_each_isa([&](const K::Kernels& F, const std::string& isa) {
      const std::string tag = isa + " n=" + std::to_string(n);
      Vec o(n), fa = a, fb = b;
      F.residual_forward(o.data(), a.data(), b.data(), n);
      expect_equal("residual_forward " + tag, o.data(), ro.data(), n);
      Vec io = a;
      F.residual_forward(io.data(), io.data(), b.data(), n);  // in place
      expect_equal("residual_forward in place " + tag, io.data(), ro.data(), n);
      F.residual_backward(fa.data(), fb.data(), d.data(), n);
      expect_equal("residual_backward da " + tag, fa.data(), ra.data(), n);
      expect_equal("residual_backward db " + tag, fb.data(), rb.data(), n);
      Vec s = a;
      F.scale_inplace(s.data(), 0.37f, n);
      expect_equal("scale_inplace " + tag, s.data(), rs.data(), n);
      const double ss = F.sum_squares(a.data(), n);
      INFO("sum_squares " << tag << ": fast " << ss << " ref " << rss);
      CHECK(std::fabs(ss - rss) <= 1e-13 * rss);
      Vec p = p0, m = m0, v = v0;
      F.adamw_update(p.data(), m.data(), v.data(), d.data(), n, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f, 0.271f, 0.00299f);
      expect_equal("adamw params " + tag, p.data(), rp.data(), n);
      expect_equal("adamw m " + tag, m.data(), rm.data(), n);
      expect_equal("adamw v " + tag, v.data(), rv.data(), n);
    });
  }
  for (int C : {1, 5, 16, 64, 67}) {
    const int B = 3, T = 5, V = 11;
    const Vec wte = random_vec(g, size_t(V) * C), wpe = random_vec(g, size_t(T) * C),
              dout = random_vec(g, size_t(B) * T * C);
    std::vector<int> ids(B * T);
    for (int& i : ids) i = int(g() % V);
    ids[0] = ids[1] = ids[7];  // repeated ids collect every contribution
    Vec ro(size_t(B) * T * C), rwte = wte, rwpe = wpe;
    R.encoder_forward(ro.data(), ids.data(), wte.data(), wpe.data(), B, T, C);
    R.encoder_backward(rwte.data(), rwpe.data(), dout.data(), ids.data(), B, T, C);
    for_each_isa([&](const K::Kernels& F, const std::string& isa) {
      const std::string tag = isa + " C=" + std::to_string(C);
      Vec o(ro.size()), dwte = wte, dwpe = wpe;
      F.encoder_forward(o.data(), ids.data(), wte.data(), wpe.data(), B, T, C);
      expect_equal("encoder_forward " + tag, o.data(), ro.data(), o.size());
      F.encoder_backward(dwte.data(), dwpe.data(), dout.data(), ids.data(), B, T, C);
      expect_equal("encoder_backward dwte " + tag, dwte.data(), rwte.data(), dwte.size());
      expect_equal("encoder_backward dwpe " + tag, dwpe.data(), rwpe.data(), dwpe.size());
    });
  }
}

TEST_CASE("fast kernels: deterministic (same inputs, same bits, call after call)", "[kernels]") {
  std::mt19937 g(9);
  const int N = 70, C = 64, OC = 192, B = 2, T = 37, NH = 4;
  const Vec inp = random_vec(g, size_t(N) * C), w = random_vec(g, size_t(OC) * C);
  const Vec qkv = random_vec(g, size_t(B) * T * 3 * C);
  for_each_isa([&](const K::Kernels& F, const std::string& isa) {
    INFO("isa " << isa);
    Vec o1(size_t(N) * OC), o2(size_t(N) * OC);
    F.matmul_forward(o1.data(), inp.data(), w.data(), nullptr, N, C, OC);
    F.matmul_forward(o2.data(), inp.data(), w.data(), nullptr, N, C, OC);
    CHECK(std::memcmp(o1.data(), o2.data(), o1.size() * sizeof(float)) == 0);
    Vec a1(size_t(B) * NH * T * T), a2(a1.size()), y1(size_t(B) * T * C), y2(y1.size());
    F.attention_forward(y1.data(), a1.data(), qkv.data(), B, T, C, NH, {});
    F.attention_forward(y2.data(), a2.data(), qkv.data(), B, T, C, NH, {});
    CHECK(std::memcmp(a1.data(), a2.data(), a1.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(float)) == 0);
  });
}

// What GPT::set_threads relies on (gpt.h): each output computed the same whatever part of the work
// a call covers. A Linear layer's columns (OC) in parts — a prompt's rows and one row, the one-row
// product's matrix crossing the 1 MB at which it streams with loads ahead while its parts do not —
// and attention's heads in ranges (AttnOptions' head_lo, head_hi), which leave the other heads'
// columns of out and blocks of att untouched: the bits of the whole call, on every tier.
TEST_CASE("fast kernels: a split of columns or heads keeps the bits of the whole call", "[kernels]") {
  std::mt19937 g(11);
  const int C = 256, OC = 1024;  // 1 MB of weights: the whole streams, a half or a third does not
  const Vec w = random_vec(g, size_t(OC) * C), bias = random_vec(g, size_t(OC)), inp = random_vec(g, size_t(64) * C);
  const int B = 2, T = 37, NH = 4, AC = 64;
  const Vec qkv = random_vec(g, size_t(B) * T * 3 * AC, -2.0f, 2.0f);
  auto check = [&](const K::Kernels& F, const std::string& tier) {
    for (int N : {1, 2, 3, 5, 64}) {
      Vec whole(size_t(N) * OC), parts(whole.size());
      F.matmul_forward(whole.data(), inp.data(), w.data(), bias.data(), N, C, OC);
      for (int n : {2, 3}) {
        INFO(tier << " matmul N=" << N << " in " << n << " parts");
        Vec in_place(whole.size(), 5.0f);  // matmul_forward_into: each part's columns written where they go
        for (int i = 0; i < n; ++i) {
          const int lo = OC / 16 * i / n * 16, hi = OC / 16 * (i + 1) / n * 16;
          Vec o(size_t(N) * (hi - lo));
          F.matmul_forward(o.data(), inp.data(), w.data() + size_t(lo) * C, bias.data() + lo, N, C, hi - lo);
          for (int r = 0; r < N; ++r)
            std::copy(o.begin() + r * (hi - lo), o.begin() + (r + 1) * (hi - lo), parts.begin() + r * OC + lo);
          F.matmul_forward_into(in_place.data() + lo, OC, inp.data(), w.data() + size_t(lo) * C, bias.data() + lo, N,
                                C, hi - lo);
        }
        CHECK(std::memcmp(whole.data(), parts.data(), whole.size() * sizeof(float)) == 0);
        CHECK(std::memcmp(whole.data(), in_place.data(), whole.size() * sizeof(float)) == 0);
      }
    }
    K::AttnOptions opt;
    Vec y(size_t(B) * T * AC), a(size_t(B) * NH * T * T), y2(y.size(), 5.0f), a2(a.size(), 5.0f);
    F.attention_forward(y.data(), a.data(), qkv.data(), B, T, AC, NH, opt);
    for (int lo : {0, 1, 3}) {  // heads [0, 1), [1, 3), [3, 4), one range at a time
      opt.head_lo = lo;
      opt.head_hi = lo == 0 ? 1 : lo == 1 ? 3 : 4;
      F.attention_forward(y2.data(), a2.data(), qkv.data(), B, T, AC, NH, opt);
      const int hs = AC / NH;
      INFO(tier << " attention heads [" << opt.head_lo << ", " << opt.head_hi << ")");
      for (int b = 0; b < B; ++b)
        for (int h = 0; h < NH; ++h) {  // done so far: the heads before head_hi; the rest still 5
          const bool done = h < opt.head_hi;
          const float* ah = a2.data() + (size_t(b) * NH + h) * T * T;
          CHECK((done ? std::memcmp(ah, a.data() + (ah - a2.data()), size_t(T) * T * sizeof(float)) == 0
                      : std::all_of(ah, ah + T * T, [](float x) { return x == 5.0f; })));
          for (int t = 0; t < T; ++t) {
            const float* yr = y2.data() + (size_t(b) * T + t) * AC + h * hs;
            CHECK((done ? std::memcmp(yr, y.data() + (yr - y2.data()), size_t(hs) * sizeof(float)) == 0
                        : std::all_of(yr, yr + hs, [](float x) { return x == 5.0f; })));
          }
        }
    }
  };
  for_each_isa(check);
  check(R, "reference");
}
