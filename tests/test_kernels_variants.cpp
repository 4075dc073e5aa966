// test_kernels_variants.cpp — the kernels of the GPT's variants (gpt.h): RMSNorm, RoPE, SwiGLU, and
// attention with grouped-query heads, a sliding window with its sinks and ALiBi (forward, inference, backward,
// decode), each fast kernel against its reference on every instruction set (kernels_test_util.h),
// and the reference against itself where a variant must reduce to the plain kernel.
//
// Tolerances (u = 2⁻²⁴), as kernels.h's:
//  - RMSNorm: a sum of C squares in another order: out within 2·(C+8)·u·|x·rstd·w| (twice: the
//    sum, then the sqrt and products); dinp within 2·(C+8)·u·(rstd·|w·d| + rstd³·|x|·Σ|d·w·x|/C).
//  - RoPE: two products and a sum per element (FMA or not): within 4u·(|a·cos| + |b·sin|).
//  - SwiGLU: σ from the fast exp (4 ulp): out within 16u·|out|; its backward within
//    32u·(1 + |g|)·|d·u| + 16u·|d·silu(g)|.
//  - attention: the plain kernels' bounds (test_kernels.cpp), with ALiBi's bias counted in the score's
//    magnitude; exact zeros where the reference has them (outside the window, masked, empty rows).
#include "kernels_test_util.h"

#include <algorithm>

namespace {

// Attention's fast-vs-reference bounds for one case, as test_kernels.cpp derives them, over the
// variants' column layout: head h reads key/value head h/(NH/n_kv_head), keys [lo, n).
struct AttnBounds {
  std::vector<double> w, out, dqkv;
};

AttnBounds attention_bounds(const Vec& qkv, const Vec& att, const Vec& dout, const Vec& dqkv0, int B, int T, int C,
                            int NH, const K::AttnOptions& opt) {
  const int hs = C / NH, W = K::qkv_width(C, NH, opt), nkv = K::kv_heads(NH, opt), KC = nkv * hs;
  const double scale = 1.0 / std::sqrt(double(hs));
  AttnBounds r;
  r.w.assign(att.size(), 0.0);
  r.out.assign(size_t(B) * T * C, 0.0);
  std::vector<double> mag(dqkv0.size());
  for (size_t i = 0; i < mag.size(); ++i) mag[i] = std::fabs(dqkv0[i]);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h) {
      const int ko = C + h / (NH / nkv) * hs, vo = ko + KC;
      const float* row0 = qkv.data() + size_t(b) * T * W;
      for (int t = 0; t < T; ++t) {
        // with sinks, the keys from 0 (the gap's weights are 0: only the scores' bound counts it)
        const int n = K::visible_keys(t, opt.mask),
                  lo = opt.sink > 0 ? 0 : std::min(K::first_key(t, opt.window), std::max(n, 0));
        const float slope = opt.alibi_slopes ? opt.alibi_slopes[h] : 0.0f;
        double qk = 0;
        for (int j = lo; j < n; ++j) {
          double s = 0;
          for (int c = 0; c < hs; ++c) s += std::fabs(double(row0[size_t(t) * W + h * hs + c]) * row0[size_t(j) * W + ko + c]);
          qk = std::max(qk, s * scale + std::fabs(double(slope) * (t - j)));
        }
        const double wt = 2 * sum_tol(hs) * qk + 4 * (n + 8) * kU;
        const float* at = att.data() + ((size_t(b) * NH + h) * T + t) * T;
        for (int j = 0; j < T; ++j) r.w[((size_t(b) * NH + h) * T + t) * T + j] = wt * at[j];
        const float* d = dout.data() + (size_t(b) * T + t) * C + h * hs;
        double dotmag = 0;
        for (int j = lo; j < n; ++j) {
          double dtm = 0;
          for (int c = 0; c < hs; ++c) dtm += std::fabs(double(d[c]) * row0[size_t(j) * W + vo + c]);
          dotmag += dtm * at[j];
        }
        for (int c = 0; c < hs; ++c) {
          double m = 0;
          for (int j = lo; j < n; ++j) m += at[j] * std::fabs(double(row0[size_t(j) * W + vo + c]));
          r.out[(size_t(b) * T + t) * C + h * hs + c] = (wt + sum_tol(n)) * m;
        }
        for (int j = lo; j < n; ++j) {
          double dtm = 0;
          for (int c = 0; c < hs; ++c) dtm += std::fabs(double(d[c]) * row0[size_t(j) * W + vo + c]);
          const double dpre = at[j] * (dtm + dotmag);
          for (int c = 0; c < hs; ++c) {
            const size_t base = size_t(b) * T * W;
            mag[base + size_t(t) * W + h * hs + c] += scale * dpre * std::fabs(row0[size_t(j) * W + ko + c]);
            mag[base + size_t(j) * W + ko + c] += scale * dpre * std::fabs(row0[size_t(t) * W + h * hs + c]);
            mag[base + size_t(j) * W + vo + c] += at[j] * std::fabs(d[c]);
          }
        }
      }
    }
  r.dqkv.resize(mag.size());
  for (size_t i = 0; i < mag.size(); ++i) r.dqkv[i] = sum_tol(2 * T + hs) * mag[i];
  return r;
}

struct VariantCase {
  int B, T, C, NH, n_kv_head, window;
  bool alibi;
  ap::MaskVariant mask;
  int sink = 0;
};

std::string describe(const VariantCase& a) {
  std::ostringstream s;
  s << "B=" << a.B << " T=" << a.T << " C=" << a.C << " NH=" << a.NH << " n_kv_head=" << a.n_kv_head
    << " window=" << a.window << " sink=" << a.sink << (a.alibi ? " alibi" : "") << (a.mask == ap::MaskVariant::strict ? " strict" : " inclusive");
  return s.str();
}

Vec slopes_for(int NH) {
  Vec s(NH);
  for (int h = 0; h < NH; ++h) s[h] = static_cast<float>(std::pow(2.0, -8.0 * (h + 1) / NH));
  return s;
}

}  // namespace

TEST_CASE("variant kernels: attention with grouped-query heads, a window and ALiBi", "[kernels]") {
  std::mt19937 g(21);
  using MV = ap::MaskVariant;
  std::vector<VariantCase> cases;
  for (MV m : {MV::strict, MV::inclusive}) {
    cases.push_back({1, 1, 16, 4, 2, 0, false, m});
    cases.push_back({2, 13, 20, 4, 2, 0, false, m});
    cases.push_back({1, 40, 64, 4, 1, 0, true, m});
    cases.push_back({2, 33, 48, 6, 3, 5, false, m});
    cases.push_back({1, 64, 64, 4, 2, 7, true, m});    // the Llama-like tiny GPT with a window
    cases.push_back({1, 19, 45, 3, 0, 1, true, m});    // window 1: each query sees itself alone
    cases.push_back({1, 70, 128, 4, 4, 16, false, m});
    cases.push_back({2, 33, 48, 6, 3, 5, false, m, 2});   // sinks: the first 2 keys beside the window
    cases.push_back({1, 64, 64, 4, 2, 7, true, m, 4});    // with ALiBi
    cases.push_back({1, 40, 64, 4, 1, 3, false, m, 9});   // sinks longer than the window
    cases.push_back({1, 19, 45, 3, 0, 1, true, m, 1});
  }
  for (const VariantCase& a : cases) {
    const int B = a.B, T = a.T, C = a.C, NH = a.NH;
    const Vec slopes = slopes_for(NH);
    const K::AttnOptions opt{a.mask, true, a.n_kv_head, a.window, a.alibi ? slopes.data() : nullptr, a.sink};
    const int W = K::qkv_width(C, NH, opt);
    const Vec qkv = random_vec(g, size_t(B) * T * W), dout = random_vec(g, size_t(B) * T * C),
              dqkv0 = random_vec(g, size_t(B) * T * W);
    const size_t natt = size_t(B) * NH * T * T;
    Vec ro(size_t(B) * T * C), ra(natt, 7.0f);
    R.attention_forward(ro.data(), ra.data(), qkv.data(), B, T, C, NH, opt);
    Vec rd = dqkv0, scratch(K::attention_backward_scratch_max(B, T, C, NH), 0.0f);
    R.attention_backward(rd.data(), scratch.data(), dout.data(), qkv.data(), ra.data(), B, T, C, NH, opt);
    {
      Vec o2(ro.size()), s(K::attention_forward_infer_scratch_max(B, T, C, NH));
      R.attention_forward_infer(o2.data(), s.data(), qkv.data(), B, T, C, NH, opt);
      expect_equal("reference infer " + describe(a), o2.data(), ro.data(), ro.size());
    }
    // the window, its sinks and the mask: zeros exactly outside [0, sink) ∪ [first_key, visible_keys)
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < NH; ++h)
        for (int t = 0; t < T; ++t)
          for (int j = 0; j < T; ++j) {
            const bool seen = (j >= K::first_key(t, a.window) || j < a.sink) && j < K::visible_keys(t, a.mask);
            const float w = ra[((size_t(b) * NH + h) * T + t) * T + j];
            if (!seen) REQUIRE(w == 0.0f);
            if (seen && a.sink > 0) REQUIRE(w > 0.0f);  // every key the row sees has its weight
          }
    const AttnBounds bd = attention_bounds(qkv, ra, dout, dqkv0, B, T, C, NH, opt);
    for_each_isa([&](const K::Kernels& F, const std::string& isa) {
      const std::string tag = isa + " " + describe(a);
      Vec o(ro.size(), 5.0f), at(natt, 9.0f);
      F.attention_forward(o.data(), at.data(), qkv.data(), B, T, C, NH, opt);
      expect_close("attention_forward att " + tag, at.data(), ra.data(), natt, [&](size_t i) { return bd.w[i]; });
      for (size_t i = 0; i < natt; ++i)
        if (ra[i] == 0.0f && at[i] != 0.0f) {
          INFO("attention_forward " << tag << ": att[" << i << "] = " << at[i] << ", reference 0");
          CHECK(false);
          break;
        }
      expect_close("attention_forward out " + tag, o.data(), ro.data(), o.size(), [&](size_t i) { return bd.out[i]; });
      Vec o2(ro.size(), 3.0f), s(K::attention_forward_infer_scratch_max(B, T, C, NH), 1.0f);
      F.attention_forward_infer(o2.data(), s.data(), qkv.data(), B, T, C, NH, opt);
      expect_equal("attention_forward_infer = attention_forward " + tag, o2.data(), o.data(), o.size());
      Vec d = dqkv0, sc(K::attention_backward_scratch_max(B, T, C, NH), 2.0f);
      F.attention_backward(d.data(), sc.data(), dout.data(), qkv.data(), ra.data(), B, T, C, NH, opt);
      expect_close("attention_backward " + tag, d.data(), rd.data(), d.size(), [&](size_t i) { return bd.dqkv[i]; });
    });
    // decode of the last position over a cache of the keys and values = the forward's last row
    if (B == 1) {
      const int KC = (W - C) / 2;
      Vec kc(size_t(T) * KC), vc(size_t(T) * KC);
      for (int j = 0; j < T; ++j)
        for (int c = 0; c < KC; ++c) {
          kc[size_t(j) * KC + c] = qkv[size_t(j) * W + C + c];
          vc[size_t(j) * KC + c] = qkv[size_t(j) * W + C + KC + c];
        }
      const float* q = qkv.data() + size_t(T - 1) * W;
      Vec dro(C), dra(size_t(NH) * T);
      R.attention_decode(dro.data(), dra.data(), q, kc.data(), vc.data(), T - 1, C, NH, opt);
      expect_equal("reference decode = forward's last row " + describe(a), dro.data(), ro.data() + size_t(T - 1) * C, C);
      for (int h = 0; h < NH; ++h)
        expect_equal("reference decode weights " + describe(a), dra.data() + size_t(h) * T,
                     ra.data() + (size_t(h) * T + T - 1) * T, T);
      for_each_isa([&](const K::Kernels& F, const std::string& isa) {
        Vec o(C, 8.0f), at(dra.size(), 6.0f);
        F.attention_decode(o.data(), at.data(), q, kc.data(), vc.data(), T - 1, C, NH, opt);
        expect_close("attention_decode att " + isa + " " + describe(a), at.data(), dra.data(), at.size(),
                     [&](size_t i) { return bd.w[(size_t(i / T) * T + T - 1) * T + i % T]; });
        expect_close("attention_decode out " + isa + " " + describe(a), o.data(), dro.data(), C,
                     [&](size_t i) { return bd.out[size_t(T - 1) * C + i]; });
      });
    }
  }
}

TEST_CASE("variant kernels: the reference variants reduce to the plain attention", "[kernels]") {
  // grouped-query = the plain kernel over k and v heads repeated per group (Llama's repeat_kv), bit
  // for bit; a window of T or more = no window, bit for bit
  std::mt19937 g(5);
  const int B = 2, T = 11, C = 24, NH = 6, NKV = 2, hs = C / NH, group = NH / NKV;
  const K::AttnOptions gqa{ap::MaskVariant::strict, true, NKV, 0, nullptr};
  const K::AttnOptions plain{};
  const int W = K::qkv_width(C, NH, gqa);
  const Vec qkv = random_vec(g, size_t(B) * T * W);
  Vec full(size_t(B) * T * 3 * C);
  for (int r = 0; r < B * T; ++r)
    for (int c = 0; c < C; ++c) {
      const int h = c / hs, kv = (h / group) * hs + c % hs;
      full[size_t(r) * 3 * C + c] = qkv[size_t(r) * W + c];
      full[size_t(r) * 3 * C + C + c] = qkv[size_t(r) * W + C + kv];
      full[size_t(r) * 3 * C + 2 * C + c] = qkv[size_t(r) * W + C + NKV * hs + kv];
    }
  Vec o1(size_t(B) * T * C), a1(size_t(B) * NH * T * T), o2 = o1, a2 = a1;
  R.attention_forward(o1.data(), a1.data(), qkv.data(), B, T, C, NH, gqa);
  R.attention_forward(o2.data(), a2.data(), full.data(), B, T, C, NH, plain);
  expect_equal("grouped-query = repeated heads: out", o1.data(), o2.data(), o1.size());
  expect_equal("grouped-query = repeated heads: att", a1.data(), a2.data(), a1.size());
  const K::AttnOptions wide{ap::MaskVariant::strict, true, 0, T, nullptr};
  Vec o3 = o1, a3 = a1;
  R.attention_forward(o3.data(), a3.data(), full.data(), B, T, C, NH, wide);
  expect_equal("window T = no window", o3.data(), o2.data(), o3.size());
  // sinks covering every key the window hides = no window, bit for bit
  const K::AttnOptions sunk{ap::MaskVariant::strict, true, 0, 2, nullptr, T};
  Vec o4 = o1, a4 = a1;
  R.attention_forward(o4.data(), a4.data(), full.data(), B, T, C, NH, sunk);
  expect_equal("sinks over the whole window = no window: out", o4.data(), o2.data(), o4.size());
  expect_equal("sinks over the whole window = no window: att", a4.data(), a2.data(), a4.size());
}

TEST_CASE("variant kernels: RMSNorm, RoPE, SwiGLU", "[kernels]") {
  std::mt19937 g(9);
  for (int C : {1, 3, 16, 17, 64, 65, 128})
    for (int N : {1, 5, 33}) {
      const Vec x = random_vec(g, size_t(N) * C, -2.0f, 3.0f), w = random_vec(g, C, 0.5f, 1.5f),
                dout = random_vec(g, size_t(N) * C), dx0 = random_vec(g, size_t(N) * C), dw0 = random_vec(g, C);
      Vec ro(size_t(N) * C), rr(N), rdx = dx0, rdw = dw0;
      R.rmsnorm_forward(ro.data(), rr.data(), x.data(), w.data(), N, C, 1e-6f);
      R.rmsnorm_backward(rdx.data(), rdw.data(), dout.data(), x.data(), w.data(), rr.data(), N, C);
      std::vector<double> mo(ro.size()), mdx(ro.size()), mdw(C);
      for (int n = 0; n < N; ++n) {
        double s = 0;
        for (int c = 0; c < C; ++c) s += std::fabs(double(dout[size_t(n) * C + c]) * w[c] * x[size_t(n) * C + c]);
        const double r = rr[n];
        for (int c = 0; c < C; ++c) {
          const size_t i = size_t(n) * C + c;
          mo[i] = std::fabs(x[i] * r * w[c]);
          mdx[i] = std::fabs(dx0[i]) + r * std::fabs(w[c] * dout[i]) + r * r * r * std::fabs(x[i]) * s / C;
          mdw[c] += std::fabs(dout[i] * x[i]) * r;
        }
      }
      for (int c = 0; c < C; ++c) mdw[c] += std::fabs(dw0[c]);
      for_each_isa([&](const K::Kernels& F, const std::string& isa) {
        const std::string tag = isa + " N=" + std::to_string(N) + " C=" + std::to_string(C);
        Vec o(ro.size()), r(N), dx = dx0, dw = dw0;
        F.rmsnorm_forward(o.data(), r.data(), x.data(), w.data(), N, C, 1e-6f);
        expect_close("rmsnorm_forward " + tag, o.data(), ro.data(), o.size(), [&](size_t i) { return 2 * sum_tol(C) * mo[i]; });
        expect_close("rmsnorm rstd " + tag, r.data(), rr.data(), N, [&](size_t i) { return sum_tol(C) * rr[i]; });
        F.rmsnorm_backward(dx.data(), dw.data(), dout.data(), x.data(), w.data(), rr.data(), N, C);
        expect_close("rmsnorm_backward dinp " + tag, dx.data(), rdx.data(), dx.size(),
                     [&](size_t i) { return 2 * sum_tol(C) * mdx[i]; });
        expect_close("rmsnorm_backward dw " + tag, dw.data(), rdw.data(), C, [&](size_t i) { return sum_tol(N) * mdw[i]; });
      });
    }

  // RoPE on rows of (q heads | k heads | v): both pairings, partial rotation, an offset position
  for (bool halves : {true, false})
    for (int hs : {2, 8, 16, 30, 64})
      for (int d_rot : {2, hs / 2 - (hs / 2) % 2, hs}) {
        if (d_rot < 2) continue;
        const int B = 2, T = 9, n_heads = 3, ld = n_heads * hs + 5, pos0 = 4, S = pos0 + T;
        Vec cs(size_t(S) * d_rot / 2), sn(cs.size());
        for (int p = 0; p < S; ++p)
          for (int i = 0; i < d_rot / 2; ++i) {
            const double phi = p * std::pow(10000.0, -2.0 * i / d_rot);
            cs[size_t(p) * d_rot / 2 + i] = float(std::cos(phi));
            sn[size_t(p) * d_rot / 2 + i] = float(std::sin(phi));
          }
        const K::RopeTable tab{cs.data(), sn.data(), d_rot, halves};
        const Vec x = random_vec(g, size_t(B) * T * ld);
        // per element, |a| + |b| of its pair (0 for the unrotated: those must stay exact)
        auto pair_mag = [&](const Vec& v) {
          std::vector<double> m(v.size(), 0.0);
          for (int r = 0; r < B * T; ++r)
            for (int h = 0; h < n_heads; ++h)
              for (int i = 0; i < d_rot / 2; ++i) {
                const size_t ia = size_t(r) * ld + h * hs + (halves ? i : 2 * i),
                             ib = size_t(r) * ld + h * hs + (halves ? i + d_rot / 2 : 2 * i + 1);
                m[ia] = m[ib] = std::fabs(v[ia]) + std::fabs(v[ib]);
              }
          return m;
        };
        const std::vector<double> mx = pair_mag(x);
        Vec rx = x;
        R.rope_forward(rx.data(), B, T, ld, n_heads, hs, pos0, tab);
        // turning back gives x again within rounding; the columns past the heads stay untouched
        Vec back = rx;
        R.rope_backward(back.data(), B, T, ld, n_heads, hs, pos0, tab);
        expect_close("rope back and forth", back.data(), x.data(), x.size(),
                     [&](size_t i) { return 16 * kU * mx[i]; });
        for (int r = 0; r < B * T; ++r)
          expect_equal("rope leaves the rest", rx.data() + size_t(r) * ld + n_heads * hs,
                       x.data() + size_t(r) * ld + n_heads * hs, 5);
        const std::vector<double> mr = pair_mag(rx);
        for_each_isa([&](const K::Kernels& F, const std::string& isa) {
          const std::string tag = isa + (halves ? " halves" : " interleaved") + " hs=" + std::to_string(hs) +
                                  " d_rot=" + std::to_string(d_rot);
          Vec fx = x;
          F.rope_forward(fx.data(), B, T, ld, n_heads, hs, pos0, tab);
          expect_close("rope_forward " + tag, fx.data(), rx.data(), fx.size(), [&](size_t i) { return 4 * kU * mx[i]; });
          Vec fb = rx, rb = rx;
          F.rope_backward(fb.data(), B, T, ld, n_heads, hs, pos0, tab);
          R.rope_backward(rb.data(), B, T, ld, n_heads, hs, pos0, tab);
          expect_close("rope_backward " + tag, fb.data(), rb.data(), fb.size(), [&](size_t i) { return 4 * kU * mr[i]; });
        });
      }

  // SwiGLU
  for (int H : {1, 3, 16, 17, 100})
    for (int N : {1, 4}) {
      Vec inp = random_vec(g, size_t(N) * 2 * H, -6.0f, 6.0f);
      if (H > 3) inp[0] = 30.0f, inp[1] = -30.0f, inp[2] = 0.0f;
      const Vec dout = random_vec(g, size_t(N) * H), d0 = random_vec(g, size_t(N) * 2 * H);
      Vec ro(size_t(N) * H), rd = d0;
      R.swiglu_forward(ro.data(), inp.data(), N, H);
      R.swiglu_backward(rd.data(), inp.data(), dout.data(), N, H);
      std::vector<double> td(rd.size());
      for (int n = 0; n < N; ++n)
        for (int i = 0; i < H; ++i) {
          const double gg = inp[size_t(n) * 2 * H + i], u = inp[size_t(n) * 2 * H + H + i], d = dout[size_t(n) * H + i];
          const double silu = gg / (1 + std::exp(-gg));
          td[size_t(n) * 2 * H + i] = 32 * kU * (1 + std::fabs(gg)) * std::fabs(d * u) + std::fabs(d0[size_t(n) * 2 * H + i]) * 2 * kU;
          td[size_t(n) * 2 * H + H + i] = 16 * kU * std::fabs(d * silu) + std::fabs(d0[size_t(n) * 2 * H + H + i]) * 2 * kU;
        }
      // in place (out = inp) gives the same bits as apart
      Vec inplace = inp;
      R.swiglu_forward(inplace.data(), inplace.data(), N, H);
      expect_equal("swiglu in place", inplace.data(), ro.data(), ro.size());
      for_each_isa([&](const K::Kernels& F, const std::string& isa) {
        const std::string tag = isa + " N=" + std::to_string(N) + " H=" + std::to_string(H);
        Vec o(ro.size()), d = d0;
        F.swiglu_forward(o.data(), inp.data(), N, H);
        expect_close("swiglu_forward " + tag, o.data(), ro.data(), o.size(),
                     [&](size_t i) { return 16 * kU * std::fabs(ro[i]); });
        F.swiglu_backward(d.data(), inp.data(), dout.data(), N, H);
        expect_close("swiglu_backward " + tag, d.data(), rd.data(), d.size(), [&](size_t i) { return td[i]; });
        Vec ip = inp;
        F.swiglu_forward(ip.data(), ip.data(), N, H);
        expect_equal("swiglu in place " + tag, ip.data(), o.data(), o.size());
      });
    }
}
