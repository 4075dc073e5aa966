// test_attention.cpp — causal_mask, attention_trace (trace shapes, every stage against an
// independent double-precision reference, tutorial identity example, multi-head = per-head runs,
// KV-cache base = last rows of a full forward, inclusive-mask empty rows, naive overflow),
// single_head_attention, split_heads/concat_heads, and every InputError path (field, row,
// column, message fragments).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/attention/attention.h"
#include "core/tensor/ops.h"
#include "core/tensor/tensor.h"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;

namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

ap::Tensor rnd(ap::Shape shape, std::mt19937& gen, float bound = 1.0f) {
  std::uniform_real_distribution<float> d(-bound, bound);
  ap::Tensor t(shape);
  for (auto& x : t.data) x = d(gen);
  return t;
}

using Mat = std::vector<std::vector<double>>;

Mat to_mat(const ap::Tensor& t) {  // 2-D tensor → doubles
  Mat m(t.shape[0], std::vector<double>(t.shape[1]));
  for (int i = 0; i < t.shape[0]; ++i)
    for (int j = 0; j < t.shape[1]; ++j) m[i][j] = t(i, j);
  return m;
}

Mat mm(const Mat& a, const Mat& b) {
  Mat c(a.size(), std::vector<double>(b[0].size(), 0.0));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < b.size(); ++k)
      for (size_t j = 0; j < b[0].size(); ++j) c[i][j] += a[i][k] * b[k][j];
  return c;
}

void add_bias(Mat& m, const ap::Tensor& b) {
  if (b.empty()) return;
  for (auto& row : m)
    for (size_t j = 0; j < row.size(); ++j) row[j] += b.data[j];
}

Mat cols(const Mat& m, int c0, int n) {
  Mat r(m.size(), std::vector<double>(n));
  for (size_t i = 0; i < m.size(); ++i)
    for (int j = 0; j < n; ++j) r[i][j] = m[i][c0 + j];
  return r;
}

// Independent double-precision forward pass, following the formulas in attention.h.
struct Ref {
  int T = 0, T_total = 0, head_dim = 0, d_v = 0;
  std::vector<Mat> q, k, v, scores, scaled, masked, weights, context;
  Mat mask, concat, out;
};

Ref reference(const ap::AttentionInput& in, const ap::AttentionOptions& o) {
  Ref r;
  Mat Q, K, V;
  if (in.from_x()) {
    Mat x = to_mat(in.x);
    Mat xq(x.begin() + o.base, x.end());
    Q = mm(xq, to_mat(in.W_q));
    add_bias(Q, in.b_q);
    K = mm(x, to_mat(in.W_k));
    add_bias(K, in.b_k);
    V = mm(x, to_mat(in.W_v));
    add_bias(V, in.b_v);
  } else {
    Q = to_mat(in.Q);
    K = to_mat(in.K);
    V = to_mat(in.V);
  }
  const int H = o.n_head;
  r.T = int(Q.size());
  r.T_total = int(K.size());
  r.head_dim = int(Q[0].size()) / H;
  r.d_v = int(V[0].size()) / H;
  const double sf = o.scale ? 1.0 / std::sqrt(double(r.head_dim)) : 1.0;
  r.mask.assign(r.T, std::vector<double>(r.T_total, 0.0));
  if (o.causal)
    for (int i = 0; i < r.T; ++i)
      for (int j = 0; j < r.T_total; ++j) {
        bool m = o.mask == ap::MaskVariant::strict ? (j > i + o.base) : (j >= i + o.base);
        if (m) r.mask[i][j] = -INFINITY;
      }
  r.concat.assign(r.T, std::vector<double>(H * r.d_v, 0.0));
  for (int h = 0; h < H; ++h) {
    Mat q = cols(Q, h * r.head_dim, r.head_dim), k = cols(K, h * r.head_dim, r.head_dim),
        v = cols(V, h * r.d_v, r.d_v);
    Mat s(r.T, std::vector<double>(r.T_total)), sc = s, ms = s, w = s;
    for (int i = 0; i < r.T; ++i) {
      double mx = -INFINITY;
      for (int j = 0; j < r.T_total; ++j) {
        double d = 0;
        for (int c = 0; c < r.head_dim; ++c) d += q[i][c] * k[j][c];
        s[i][j] = d;
        sc[i][j] = d * sf;
        ms[i][j] = sc[i][j] + r.mask[i][j];
        mx = std::max(mx, ms[i][j]);
      }
      double sum = 0;
      for (int j = 0; j < r.T_total; ++j) sum += w[i][j] = (mx == -INFINITY) ? 0.0 : std::exp(ms[i][j] - mx);
      for (int j = 0; j < r.T_total; ++j) w[i][j] = sum > 0 ? w[i][j] / sum : 0.0;
    }
    Mat ctx = mm(w, v);
    for (int i = 0; i < r.T; ++i)
      for (int c = 0; c < r.d_v; ++c) r.concat[i][h * r.d_v + c] = ctx[i][c];
    r.q.push_back(q); r.k.push_back(k); r.v.push_back(v);
    r.scores.push_back(s); r.scaled.push_back(sc); r.masked.push_back(ms);
    r.weights.push_back(w); r.context.push_back(ctx);
  }
  if (!in.W_o.empty()) {
    r.out = mm(r.concat, to_mat(in.W_o));
    add_bias(r.out, in.b_o);
  } else {
    r.out = r.concat;
  }
  return r;
}

// Compares a 2-D tensor (or slice) to a double matrix: -inf must match exactly, finite within tol.
void check_close(const ap::Tensor& got, const Mat& want, const std::string& what, double tol = 2e-5) {
  INFO(what);
  REQUIRE(got.dim() == 2);
  REQUIRE(got.shape[0] == int(want.size()));
  REQUIRE(got.shape[1] == int(want.empty() ? 0 : want[0].size()));
  int bad = 0;
  for (int i = 0; i < got.shape[0]; ++i)
    for (int j = 0; j < got.shape[1]; ++j) {
      double g = got(i, j), w = want[i][j];
      bool ok = std::isinf(w) ? (g == w) : (std::fabs(g - w) <= tol * (1.0 + std::fabs(w)));
      if (!ok && bad++ < 5) {
        INFO("at [" << i << "][" << j << "] got " << g << " want " << w);
        CHECK(ok);
      }
    }
  CHECK(bad == 0);
}

bool has_nan(const ap::Tensor& t) {
  for (float x : t.data)
    if (std::isnan(x)) return true;
  return false;
}

bool contains_row(const std::vector<ap::EmptyRow>& v, int head, int row) {
  for (const auto& e : v)
    if (e.head == head && e.row == row) return true;
  return false;
}

struct Caught {
  bool input_error = false;
  std::string what, field, other;
  int row = -1, column = -1;
};
Caught catch_input_error(const std::function<void()>& fn) {
  Caught c;
  try {
    fn();
    c.other = "<nothing thrown>";
  } catch (const ap::InputError& e) {
    c.input_error = true;
    c.what = e.what();
    c.field = e.field;
    c.row = e.row;
    c.column = e.column;
  } catch (const std::exception& e) {
    c.other = std::string("other exception: ") + e.what();
  }
  return c;
}
#define REQUIRE_INPUT_ERROR(c)            \
  do {                                    \
    INFO("instead: " << (c).other);       \
    REQUIRE((c).input_error);             \
    INFO("message: " << (c).what);        \
    CHECK_FALSE((c).what.empty());        \
  } while (0)

Caught run_error(const ap::AttentionInput& in, const ap::AttentionOptions& o) {
  return catch_input_error([&] { ap::attention_trace(in, o); });
}

ap::AttentionInput qkv(ap::Tensor Q, ap::Tensor K, ap::Tensor V) {
  ap::AttentionInput in;
  in.Q = std::move(Q);
  in.K = std::move(K);
  in.V = std::move(V);
  return in;
}

}  // namespace

// --------------------------------------------------------------------------------- causal_mask

TEST_CASE("causal_mask strict 4x4: 0 on and below the diagonal - -inf above", "[mask]") {
  ap::Tensor m = ap::causal_mask(4, 4, 0, ap::MaskVariant::strict);
  REQUIRE(m.shape == ap::Shape{4, 4});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      INFO(i << "," << j);
      if (j <= i) CHECK(m(i, j) == 0.0f);
      else CHECK(m(i, j) == -kInf);
    }
}

TEST_CASE("causal_mask inclusive 4x4: the diagonal is masked too", "[mask]") {
  ap::Tensor m = ap::causal_mask(4, 4, 0, ap::MaskVariant::inclusive);
  REQUIRE(m.shape == ap::Shape{4, 4});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      INFO(i << "," << j);
      if (j < i) CHECK(m(i, j) == 0.0f);
      else CHECK(m(i, j) == -kInf);
    }
  for (int j = 0; j < 4; ++j) CHECK(m(0, j) == -kInf);  // row 0 sees nothing
}

TEST_CASE("causal_mask with a KV-cache base (T=2 base=3 T_total=5)", "[mask]") {
  ap::Tensor s = ap::causal_mask(2, 5, 3, ap::MaskVariant::strict);
  REQUIRE(s.shape == ap::Shape{2, 5});
  const float z = 0.0f, n = -kInf;
  std::vector<float> want_strict = {z, z, z, z, n,   // query at position 3
                                    z, z, z, z, z};  // query at position 4
  CHECK(s.data == want_strict);
  ap::Tensor inc = ap::causal_mask(2, 5, 3, ap::MaskVariant::inclusive);
  std::vector<float> want_inc = {z, z, z, n, n, z, z, z, z, n};
  CHECK(inc.data == want_inc);
  // general formula on a few more sizes
  for (int T : {1, 3, 5})
    for (int base : {0, 1, 4})
      for (auto var : {ap::MaskVariant::strict, ap::MaskVariant::inclusive}) {
        ap::Tensor m = ap::causal_mask(T, T + base, base, var);
        REQUIRE(m.shape == ap::Shape{T, T + base});
        for (int i = 0; i < T; ++i)
          for (int j = 0; j < T + base; ++j) {
            bool masked = var == ap::MaskVariant::strict ? j > i + base : j >= i + base;
            CHECK(m(i, j) == (masked ? -kInf : 0.0f));
          }
      }
}

// ------------------------------------------------------------------------------- forward pass

TEST_CASE("tutorial identity example: 2x2 weights 0.6698/0.3302 and out == weights",
          "[attention]") {
  ap::Tensor I = ap::Tensor::from_rows({{1, 0}, {0, 1}});
  ap::AttentionInput in;
  in.x = I;
  in.W_q = I;
  in.W_k = I;
  in.W_v = I;
  ap::AttentionTrace t = ap::attention_trace(in, ap::AttentionOptions{});
  const double p = 1.0 / (1.0 + std::exp(-1.0 / std::sqrt(2.0)));  // 0.669762…
  REQUIRE(t.weights.shape == ap::Shape{1, 2, 2});
  ap::Tensor w = t.weights.slice0(0);
  CHECK(w(0, 0) == Approx(0.6698).margin(1e-4));
  CHECK(w(0, 1) == Approx(0.3302).margin(1e-4));
  CHECK(w(1, 0) == Approx(0.3302).margin(1e-4));
  CHECK(w(1, 1) == Approx(0.6698).margin(1e-4));
  CHECK(w(0, 0) == Approx(p).margin(1e-6));
  CHECK(w(0, 1) == Approx(1 - p).margin(1e-6));
  REQUIRE(t.out.shape == ap::Shape{2, 2});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) CHECK(t.out(i, j) == Approx(w(i, j)).margin(1e-7));
  CHECK(t.scale_factor == Approx(1.0 / std::sqrt(2.0)).epsilon(1e-7));
  CHECK(t.empty_rows.empty());
  CHECK(t.overflow_rows.empty());
}

TEST_CASE("trace shapes and sizes for several configurations", "[attention]") {
  std::mt19937 gen(42);
  struct Cfg { bool x_mode; int H, hd, dv, T, base, d_model, d_out; bool W_o; bool causal; };
  const Cfg cfgs[] = {
      {true, 1, 4, 4, 3, 0, 4, 0, false, false},  // x mode: head_dim = d_v = d_model/H
      {true, 2, 3, 3, 5, 2, 6, 4, true, true},
      {true, 3, 2, 2, 1, 4, 5, 6, true, true},
      {false, 1, 3, 5, 4, 0, 0, 0, false, true},
      {false, 2, 1, 3, 2, 3, 0, 1, true, true},
      {false, 4, 2, 1, 6, 0, 0, 3, true, false},
  };
  for (const auto& c : cfgs) {
    const int Tt = c.T + c.base;
    INFO("x_mode=" << c.x_mode << " H=" << c.H << " hd=" << c.hd << " dv=" << c.dv << " T=" << c.T
                   << " base=" << c.base);
    ap::AttentionInput in;
    if (c.x_mode) {
      in.x = rnd({Tt, c.d_model}, gen);
      in.W_q = rnd({c.d_model, c.H * c.hd}, gen);
      in.W_k = rnd({c.d_model, c.H * c.hd}, gen);
      in.W_v = rnd({c.d_model, c.H * c.dv}, gen);
    } else {
      in = qkv(rnd({c.T, c.H * c.hd}, gen), rnd({Tt, c.H * c.hd}, gen), rnd({Tt, c.H * c.dv}, gen));
    }
    if (c.W_o) in.W_o = rnd({c.H * c.dv, c.d_out}, gen);
    ap::AttentionOptions o;
    o.n_head = c.H;
    o.base = c.base;
    o.causal = c.causal;
    ap::AttentionTrace t = ap::attention_trace(in, o);
    const int d_out = c.W_o ? c.d_out : c.H * c.dv;
    CHECK(t.T == c.T);
    CHECK(t.T_total == Tt);
    if (c.x_mode) CHECK(t.d_model == c.d_model);
    CHECK(t.head_dim == c.hd);
    CHECK(t.d_v == c.dv);
    CHECK(t.d_out == d_out);
    CHECK(t.options.n_head == c.H);
    CHECK(t.options.base == c.base);
    CHECK(t.scale_factor == Approx(1.0 / std::sqrt(double(c.hd))).epsilon(1e-7));
    CHECK(t.q.shape == ap::Shape{c.H, c.T, c.hd});
    CHECK(t.k.shape == ap::Shape{c.H, Tt, c.hd});
    CHECK(t.v.shape == ap::Shape{c.H, Tt, c.dv});
    for (const ap::Tensor* s : {&t.scores, &t.scaled, &t.masked, &t.weights})
      CHECK(s->shape == ap::Shape{c.H, c.T, Tt});
    CHECK(t.mask.shape == ap::Shape{c.T, Tt});
    CHECK(t.weight_row_sums.shape == ap::Shape{c.H, c.T});
    CHECK(t.context.shape == ap::Shape{c.H, c.T, c.dv});
    CHECK(t.concat.shape == ap::Shape{c.T, c.H * c.dv});
    CHECK(t.out.shape == ap::Shape{c.T, d_out});
    // every non-empty row of weights sums to 1
    for (int h = 0; h < c.H; ++h)
      for (int i = 0; i < c.T; ++i) {
        double s = 0;
        for (int j = 0; j < Tt; ++j) s += t.weights(h, i, j);
        CHECK(s == Approx(1.0).margin(2e-6));
        CHECK(t.weight_row_sums(h, i) == Approx(1.0).margin(2e-6));
      }
    if (!c.causal)
      for (float m : t.mask.data) CHECK(m == 0.0f);
    CHECK(t.empty_rows.empty());
    CHECK(t.overflow_rows.empty());
  }
}

TEST_CASE("every stage of the trace matches an independent double-precision forward", "[attention]") {
  std::mt19937 gen(7);
  struct Cfg { int H, hd, T, base; bool causal; ap::MaskVariant mv; bool scale, bias, W_o; };
  const Cfg cfgs[] = {
      {1, 4, 4, 0, false, ap::MaskVariant::strict, true, false, false},
      {2, 3, 5, 0, true, ap::MaskVariant::strict, true, true, true},
      {3, 2, 3, 2, true, ap::MaskVariant::strict, true, true, true},
      {2, 2, 4, 1, true, ap::MaskVariant::inclusive, true, true, false},
      {2, 4, 3, 0, false, ap::MaskVariant::strict, false, false, true},
      {4, 1, 6, 3, true, ap::MaskVariant::strict, false, true, true},
  };
  for (const auto& c : cfgs) {
    INFO("H=" << c.H << " hd=" << c.hd << " T=" << c.T << " base=" << c.base << " causal=" << c.causal
              << " inclusive=" << (c.mv == ap::MaskVariant::inclusive) << " scale=" << c.scale
              << " bias=" << c.bias << " W_o=" << c.W_o);
    const int d_model = c.H * c.hd, Tt = c.T + c.base;
    ap::AttentionInput in;
    in.x = rnd({Tt, d_model}, gen, 1.5f);
    in.W_q = rnd({d_model, d_model}, gen);
    in.W_k = rnd({d_model, d_model}, gen);
    in.W_v = rnd({d_model, d_model}, gen);
    if (c.bias) {
      in.b_q = rnd({d_model}, gen, 0.5f);
      in.b_k = rnd({d_model}, gen, 0.5f);
      in.b_v = rnd({d_model}, gen, 0.5f);
    }
    if (c.W_o) {
      in.W_o = rnd({d_model, 3}, gen);
      if (c.bias) in.b_o = rnd({3}, gen, 0.5f);
    }
    ap::AttentionOptions o;
    o.n_head = c.H;
    o.causal = c.causal;
    o.mask = c.mv;
    o.base = c.base;
    o.scale = c.scale;
    ap::AttentionTrace t = ap::attention_trace(in, o);
    Ref r = reference(in, o);
    REQUIRE(t.T == r.T);
    REQUIRE(t.T_total == r.T_total);
    if (!c.scale) CHECK(t.scale_factor == 1.0f);
    check_close(t.mask, r.mask, "mask", 0);
    for (int h = 0; h < c.H; ++h) {
      INFO("head " << h);
      check_close(t.q.slice0(h), r.q[h], "q");
      check_close(t.k.slice0(h), r.k[h], "k");
      check_close(t.v.slice0(h), r.v[h], "v");
      check_close(t.scores.slice0(h), r.scores[h], "scores");
      check_close(t.scaled.slice0(h), r.scaled[h], "scaled");
      check_close(t.masked.slice0(h), r.masked[h], "masked");
      check_close(t.weights.slice0(h), r.weights[h], "weights");
      check_close(t.context.slice0(h), r.context[h], "context");
      for (int i = 0; i < r.T; ++i) {
        double s = 0;
        for (double w : r.weights[h][i]) s += w;
        CHECK(t.weight_row_sums(h, i) == Approx(s).margin(2e-6));
      }
    }
    check_close(t.concat, r.concat, "concat");
    check_close(t.out, r.out, "out");
  }
}

TEST_CASE("trace stages are consistent with the ops they are named after", "[attention]") {
  std::mt19937 gen(77);
  const int H = 2, T = 4, base = 1, Tt = T + base;
  ap::AttentionInput in = qkv(rnd({T, H * 3}, gen), rnd({Tt, H * 3}, gen), rnd({Tt, H * 2}, gen));
  ap::AttentionOptions o;
  o.n_head = H;
  o.causal = true;
  o.base = base;
  ap::AttentionTrace t = ap::attention_trace(in, o);
  CHECK(t.q.data == ap::split_heads(in.Q, H).data);
  CHECK(t.k.data == ap::split_heads(in.K, H).data);
  CHECK(t.v.data == ap::split_heads(in.V, H).data);
  ap::Tensor mask = ap::causal_mask(T, Tt, base, ap::MaskVariant::strict);
  CHECK(t.mask.data == mask.data);
  for (size_t k = 0; k < t.scores.data.size(); ++k) {
    CHECK(t.scaled.data[k] == Approx(t.scores.data[k] * t.scale_factor).epsilon(1e-6).margin(1e-7));
  }
  CHECK(t.masked.data == ap::add(t.scaled, t.mask).data);
  CHECK(t.weights.data == ap::softmax_rows(t.masked).data);
  for (int h = 0; h < H; ++h) {
    ap::Tensor ctx = ap::matmul(t.weights.slice0(h), t.v.slice0(h));
    ap::Tensor got = t.context.slice0(h);
    for (size_t k = 0; k < ctx.data.size(); ++k) CHECK(got.data[k] == Approx(ctx.data[k]).margin(1e-6));
  }
  CHECK(ap::concat_heads(t.context).data == t.concat.data);
  CHECK(t.out.data == t.concat.data);  // no W_o
}

TEST_CASE("multi-head attention equals each head run alone and concatenated", "[attention]") {
  std::mt19937 gen(99);
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    const int H = 3, hd = 2, dv = 3, T = 4, base = causal ? 2 : 0, Tt = T + base;
    ap::Tensor Q = rnd({T, H * hd}, gen, 2.0f), K = rnd({Tt, H * hd}, gen, 2.0f),
               V = rnd({Tt, H * dv}, gen, 2.0f);
    ap::AttentionOptions o;
    o.n_head = H;
    o.causal = causal;
    o.base = base;
    ap::AttentionTrace all = ap::attention_trace(qkv(Q, K, V), o);
    auto slice_cols = [](const ap::Tensor& m, int c0, int n) {
      ap::Tensor r({m.shape[0], n});
      for (int i = 0; i < m.shape[0]; ++i)
        for (int j = 0; j < n; ++j) r(i, j) = m(i, c0 + j);
      return r;
    };
    ap::AttentionOptions o1 = o;
    o1.n_head = 1;
    for (int h = 0; h < H; ++h) {
      INFO("head " << h);
      ap::AttentionTrace one = ap::attention_trace(
          qkv(slice_cols(Q, h * hd, hd), slice_cols(K, h * hd, hd), slice_cols(V, h * dv, dv)), o1);
      ap::Tensor w_all = all.weights.slice0(h), w_one = one.weights.slice0(0);
      for (size_t k = 0; k < w_all.data.size(); ++k) CHECK(w_all.data[k] == Approx(w_one.data[k]).margin(1e-6));
      for (int i = 0; i < T; ++i)
        for (int c = 0; c < dv; ++c) CHECK(all.concat(i, h * dv + c) == Approx(one.out(i, c)).margin(1e-6));
    }
  }
}

TEST_CASE("KV cache: with base > 0 the rows equal the last rows of a full causal forward", "[attention]") {
  std::mt19937 gen(5);
  for (auto mv : {ap::MaskVariant::strict, ap::MaskVariant::inclusive})
    for (bool causal : {true, false})
      for (int base : {1, 3, 5}) {
        INFO("inclusive " << (mv == ap::MaskVariant::inclusive) << " causal " << causal << " base " << base);
        const int Tt = 6, dm = 4, H = 2;
        ap::AttentionInput in;
        in.x = rnd({Tt, dm}, gen);
        in.W_q = rnd({dm, dm}, gen);
        in.W_k = rnd({dm, dm}, gen);
        in.W_v = rnd({dm, dm}, gen);
        in.b_q = rnd({dm}, gen);
        in.W_o = rnd({dm, 3}, gen);
        ap::AttentionOptions o;
        o.n_head = H;
        o.causal = causal;
        o.mask = mv;
        ap::AttentionTrace full = ap::attention_trace(in, o);
        o.base = base;
        ap::AttentionTrace step = ap::attention_trace(in, o);
        const int T = Tt - base;
        REQUIRE(step.T == T);
        REQUIRE(step.T_total == Tt);
        for (int h = 0; h < H; ++h)
          for (int i = 0; i < T; ++i)
            for (int j = 0; j < Tt; ++j) {
              CHECK(step.weights(h, i, j) == Approx(full.weights(h, base + i, j)).margin(1e-6));
              CHECK(step.masked(h, i, j) == Approx(full.masked(h, base + i, j)).margin(1e-5));
            }
        for (int i = 0; i < T; ++i)
          for (int c = 0; c < 3; ++c) CHECK(step.out(i, c) == Approx(full.out(base + i, c)).margin(1e-5));
        CHECK(step.empty_rows.empty());
      }
}

TEST_CASE("inclusive mask with base 0: row 0 is empty - zeros - reported - never NaN", "[attention]") {
  std::mt19937 gen(12);
  const int H = 2, T = 4;
  for (bool x_mode : {false, true}) {
    INFO("x_mode " << x_mode);
    ap::AttentionInput in;
    if (x_mode) {
      in.x = rnd({T, 4}, gen);
      in.W_q = rnd({4, 4}, gen);
      in.W_k = rnd({4, 4}, gen);
      in.W_v = rnd({4, 4}, gen);
    } else {
      in = qkv(rnd({T, 4}, gen), rnd({T, 4}, gen), rnd({T, 4}, gen));
    }
    in.W_o = rnd({4, 2}, gen);
    ap::AttentionOptions o;
    o.n_head = H;
    o.causal = true;
    o.mask = ap::MaskVariant::inclusive;
    ap::AttentionTrace t = ap::attention_trace(in, o);
    for (int h = 0; h < H; ++h) {
      for (int j = 0; j < T; ++j) CHECK(t.weights(h, 0, j) == 0.0f);
      for (int c = 0; c < 2; ++c) CHECK(t.context(h, 0, c) == 0.0f);
      CHECK(t.weight_row_sums(h, 0) == 0.0f);
      for (int i = 1; i < T; ++i) CHECK(t.weight_row_sums(h, i) == Approx(1.0).margin(2e-6));
      CHECK(contains_row(t.empty_rows, h, 0));
    }
    CHECK(t.empty_rows.size() == size_t(H));
    for (int c = 0; c < 2; ++c) CHECK(t.out(0, c) == 0.0f);  // no b_o
    CHECK_FALSE(t.warnings.empty());
    CHECK(t.overflow_rows.empty());
    for (const ap::Tensor* x : {&t.q, &t.k, &t.v, &t.scores, &t.scaled, &t.mask, &t.masked, &t.weights,
                                &t.weight_row_sums, &t.context, &t.concat, &t.out})
      CHECK_FALSE(has_nan(*x));
  }
}

TEST_CASE("naive softmax with scores about 1000 reports overflow rows (and keeps the NaN)", "[attention]") {
  ap::Tensor Q = ap::Tensor::from_rows({{40, 40}, {0.1f, 0.2f}});
  ap::Tensor K = ap::Tensor::from_rows({{40, 40}, {1, 1}});
  ap::Tensor V = ap::Tensor::from_rows({{1, 2}, {3, 4}});
  ap::AttentionOptions o;
  o.stable_softmax = false;
  ap::AttentionTrace t = ap::attention_trace(qkv(Q, K, V), o);
  CHECK(contains_row(t.overflow_rows, 0, 0));
  CHECK_FALSE(contains_row(t.overflow_rows, 0, 1));
  CHECK_FALSE(t.warnings.empty());
  CHECK(t.empty_rows.empty());
  bool nan_row0 = false;
  for (int j = 0; j < 2; ++j) nan_row0 = nan_row0 || std::isnan(t.weights(0, 0, j));
  CHECK(nan_row0);
  CHECK_FALSE(std::isnan(t.weights(0, 1, 0)));

  o.stable_softmax = true;
  ap::AttentionTrace s = ap::attention_trace(qkv(Q, K, V), o);
  CHECK(s.overflow_rows.empty());
  CHECK_FALSE(has_nan(s.weights));
  CHECK_FALSE(has_nan(s.out));
  CHECK(s.weights(0, 0, 0) == Approx(1.0).margin(1e-6));
}

TEST_CASE("single_head_attention returns (out - attn) consistent with the trace", "[attention]") {
  std::mt19937 gen(3);
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    ap::Tensor x = rnd({5, 4}, gen), Wq = rnd({4, 3}, gen), Wk = rnd({4, 3}, gen), Wv = rnd({4, 2}, gen),
               Wo = rnd({2, 4}, gen);
    ap::OutAndWeights r = ap::single_head_attention(x, Wq, Wk, Wv, Wo, causal);
    ap::AttentionInput in;
    in.x = x;
    in.W_q = Wq;
    in.W_k = Wk;
    in.W_v = Wv;
    in.W_o = Wo;
    ap::AttentionOptions o;
    o.causal = causal;
    ap::AttentionTrace t = ap::attention_trace(in, o);
    REQUIRE(r.out.shape == ap::Shape{5, 4});
    REQUIRE(r.attn.shape == ap::Shape{5, 5});
    for (size_t k = 0; k < r.out.data.size(); ++k) CHECK(r.out.data[k] == Approx(t.out.data[k]).margin(1e-6));
    ap::Tensor w = t.weights.slice0(0);
    for (size_t k = 0; k < r.attn.data.size(); ++k) CHECK(r.attn.data[k] == Approx(w.data[k]).margin(1e-6));
    Ref ref = reference(in, o);
    check_close(r.out, ref.out, "out vs double reference");
    check_close(r.attn, ref.weights[0], "attn vs double reference");
  }
}

TEST_CASE("split_heads and concat_heads", "[attention]") {
  std::vector<float> d(24);
  for (int i = 0; i < 24; ++i) d[i] = float(i);
  ap::Tensor a({4, 6}, d);  // T=4, n_head·d = 6
  for (int H : {1, 2, 3, 6}) {
    INFO("H " << H);
    const int dh = 6 / H;
    ap::Tensor s = ap::split_heads(a, H);
    REQUIRE(s.shape == ap::Shape{H, 4, dh});
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < 4; ++t)
        for (int i = 0; i < dh; ++i) CHECK(s(h, t, i) == a(t, h * dh + i));
    ap::Tensor back = ap::concat_heads(s);
    CHECK(back.shape == a.shape);
    CHECK(back.data == a.data);
  }
  CHECK_THROWS_AS(ap::split_heads(a, 4), std::invalid_argument);
}

// ------------------------------------------------------------------------------------ errors

TEST_CASE("error: K columns differ from Q columns", "[attention][errors]") {
  std::mt19937 gen(1);
  Caught c = run_error(qkv(rnd({2, 4}, gen), rnd({2, 3}, gen), rnd({2, 3}, gen)), {});
  REQUIRE_INPUT_ERROR(c);
  CHECK(c.field == "K");
  CHECK_THAT(c.what, Equals("K has 3 columns but Q has 4"));
  CHECK(c.row == 0);
  CHECK(c.column == 0);
}

TEST_CASE("error: V rows differ from K rows", "[attention][errors]") {
  std::mt19937 gen(1);
  Caught c = run_error(qkv(rnd({5, 4}, gen), rnd({5, 4}, gen), rnd({7, 4}, gen)), {});
  REQUIRE_INPUT_ERROR(c);
  CHECK(c.field == "V");
  CHECK_THAT(c.what, Contains("V") && Contains("K") && Contains("7") && Contains("5"));
}

TEST_CASE("error: columns not divisible by n_head - and n_head < 1", "[attention][errors]") {
  std::mt19937 gen(1);
  ap::AttentionOptions o;
  o.n_head = 4;
  Caught c = run_error(qkv(rnd({2, 6}, gen), rnd({2, 6}, gen), rnd({2, 6}, gen)), o);
  REQUIRE_INPUT_ERROR(c);
  CHECK((c.field == "n_head" || c.field == "Q"));
  CHECK_THAT(c.what, Contains("6") && Contains("4") && Contains("n_head"));

  // V's columns (d_v · n_head) must divide too
  o.n_head = 2;
  Caught cv = run_error(qkv(rnd({2, 4}, gen), rnd({2, 4}, gen), rnd({2, 5}, gen)), o);
  REQUIRE_INPUT_ERROR(cv);
  CHECK((cv.field == "n_head" || cv.field == "V"));
  CHECK_THAT(cv.what, Contains("5"));

  for (int n : {0, -1}) {
    o.n_head = n;
    Caught z = run_error(qkv(rnd({2, 4}, gen), rnd({2, 4}, gen), rnd({2, 4}, gen)), o);
    REQUIRE_INPUT_ERROR(z);
    CHECK(z.field == "n_head");
    CHECK_THAT(z.what, Contains("n_head"));
  }
}

TEST_CASE("error: base < 0 and base >= rows of x", "[attention][errors]") {
  std::mt19937 gen(1);
  ap::AttentionInput in;
  in.x = rnd({3, 2}, gen);
  in.W_q = rnd({2, 2}, gen);
  in.W_k = rnd({2, 2}, gen);
  in.W_v = rnd({2, 2}, gen);
  ap::AttentionOptions o;
  o.base = -1;
  Caught c = run_error(in, o);
  REQUIRE_INPUT_ERROR(c);
  CHECK(c.field == "base");
  CHECK_THAT(c.what, Contains("base"));
  for (int b : {3, 4}) {
    o.base = b;
    Caught d = run_error(in, o);
    REQUIRE_INPUT_ERROR(d);
    CHECK(d.field == "base");
    CHECK_THAT(d.what, Contains("base") && Contains(std::to_string(b)) && Contains("3"));
  }
  o.base = 2;  // the largest valid base: one query
  CHECK(ap::attention_trace(in, o).T == 1);
}

TEST_CASE("error: K rows != T + base in QKV mode", "[attention][errors]") {
  std::mt19937 gen(1);
  ap::AttentionOptions o;
  o.base = 1;
  Caught c = run_error(qkv(rnd({2, 4}, gen), rnd({4, 4}, gen), rnd({4, 4}, gen)), o);
  REQUIRE_INPUT_ERROR(c);
  CHECK((c.field == "K" || c.field == "base"));
  CHECK_THAT(c.what, Contains("K") && Contains("4"));
  o.base = 0;
  Caught d = run_error(qkv(rnd({2, 4}, gen), rnd({3, 4}, gen), rnd({3, 4}, gen)), o);
  REQUIRE_INPUT_ERROR(d);
  CHECK((d.field == "K" || d.field == "base"));
  o.base = 2;  // consistent: T=2, T_total=4
  CHECK(ap::attention_trace(qkv(rnd({2, 4}, gen), rnd({4, 4}, gen), rnd({4, 4}, gen)), o).T_total == 4);
}

TEST_CASE("error: weight shapes in x mode", "[attention][errors]") {
  std::mt19937 gen(1);
  auto base_in = [&] {
    ap::AttentionInput in;
    in.x = rnd({3, 4}, gen);
    in.W_q = rnd({4, 6}, gen);
    in.W_k = rnd({4, 6}, gen);
    in.W_v = rnd({4, 6}, gen);
    return in;
  };
  CHECK_NOTHROW(ap::attention_trace(base_in(), {}));
  SECTION("W_q rows != x columns") {
    auto in = base_in();
    in.W_q = rnd({7, 6}, gen);
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "W_q");
    CHECK_THAT(c.what, Contains("W_q") && Contains("7") && Contains("4"));
  }
  SECTION("W_k rows != x columns") {
    auto in = base_in();
    in.W_k = rnd({5, 6}, gen);
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "W_k");
    CHECK_THAT(c.what, Contains("W_k") && Contains("5"));
  }
  SECTION("W_k columns != W_q columns") {
    auto in = base_in();
    in.W_k = rnd({4, 5}, gen);
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "W_k");
    CHECK_THAT(c.what, Contains("W_k") && Contains("5") && Contains("6"));
  }
  SECTION("W_v rows != x columns") {
    auto in = base_in();
    in.W_v = rnd({2, 6}, gen);
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "W_v");
  }
  SECTION("bias length != weight columns") {
    for (const char* which : {"b_q", "b_k", "b_v"}) {
      INFO(which);
      auto in = base_in();
      ap::Tensor b = rnd({5}, gen);
      if (std::string(which) == "b_q") in.b_q = b;
      if (std::string(which) == "b_k") in.b_k = b;
      if (std::string(which) == "b_v") in.b_v = b;
      Caught c = run_error(in, {});
      REQUIRE_INPUT_ERROR(c);
      CHECK(c.field == which);
      CHECK_THAT(c.what, Contains(which) && Contains("5") && Contains("6"));
    }
  }
  SECTION("W_o rows != concat width") {
    auto in = base_in();
    in.W_o = rnd({9, 2}, gen);
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "W_o");
    CHECK_THAT(c.what, Contains("W_o") && Contains("9") && Contains("6"));
  }
  SECTION("b_o length != W_o columns") {
    auto in = base_in();
    in.W_o = rnd({6, 2}, gen);
    in.b_o = rnd({3}, gen);
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "b_o");
    CHECK_THAT(c.what, Contains("b_o") && Contains("3") && Contains("2"));
  }
  SECTION("W_o rows != concat width in QKV mode") {
    ap::AttentionInput in = qkv(rnd({2, 4}, gen), rnd({2, 4}, gen), rnd({2, 8}, gen));
    in.W_o = rnd({4, 3}, gen);
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "W_o");
    CHECK_THAT(c.what, Contains("W_o") && Contains("8"));
  }
}

TEST_CASE("error: missing inputs", "[attention][errors]") {
  std::mt19937 gen(1);
  SECTION("neither x nor Q/K/V") {
    Caught c = run_error(ap::AttentionInput{}, {});
    REQUIRE_INPUT_ERROR(c);
  }
  SECTION("x without W_q (the core has no seed)") {
    ap::AttentionInput in;
    in.x = rnd({3, 2}, gen);
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "W_q");
    CHECK_THAT(c.what, Contains("W_q"));
  }
  SECTION("x with W_q but no W_k / W_v") {
    ap::AttentionInput in;
    in.x = rnd({3, 2}, gen);
    in.W_q = rnd({2, 2}, gen);
    in.W_v = rnd({2, 2}, gen);
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "W_k");
    in.W_k = rnd({2, 2}, gen);
    in.W_v = ap::Tensor();
    Caught d = run_error(in, {});
    REQUIRE_INPUT_ERROR(d);
    CHECK(d.field == "W_v");
  }
  SECTION("Q and K without V") {
    ap::AttentionInput in;
    in.Q = rnd({2, 2}, gen);
    in.K = rnd({2, 2}, gen);
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "V");
  }
}

TEST_CASE("error: NaN / Inf in a matrix gives the field and the 1-based cell", "[attention][errors]") {
  std::mt19937 gen(1);
  auto base_in = [&] {
    ap::AttentionInput in;
    in.x = rnd({3, 4}, gen);
    in.W_q = rnd({4, 4}, gen);
    in.W_k = rnd({4, 4}, gen);
    in.W_v = rnd({4, 4}, gen);
    in.W_o = rnd({4, 2}, gen);
    return in;
  };
  {
    auto in = base_in();
    in.x(1, 2) = kNaN;
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "x");
    CHECK(c.row == 2);
    CHECK(c.column == 3);
  }
  {
    auto in = base_in();
    in.W_k(0, 1) = kInf;
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "W_k");
    CHECK(c.row == 1);
    CHECK(c.column == 2);
  }
  {
    auto in = base_in();
    in.W_o(3, 1) = -kInf;
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "W_o");
    CHECK(c.row == 4);
    CHECK(c.column == 2);
  }
  {
    auto in = base_in();
    in.b_v = ap::Tensor({4}, std::vector<float>{0, 0, kNaN, 0});
    Caught c = run_error(in, {});
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "b_v");
  }
  {
    ap::AttentionInput in = qkv(rnd({2, 2}, gen), rnd({3, 2}, gen), rnd({3, 2}, gen));
    in.K(2, 0) = -kInf;
    ap::AttentionOptions o;
    o.base = 1;
    Caught c = run_error(in, o);
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "K");
    CHECK(c.row == 3);
    CHECK(c.column == 1);
  }
}

TEST_CASE("error: sizes beyond kMaxDim and kMaxScores", "[attention][errors]") {
  std::mt19937 gen(1);
  SECTION("a dimension above kMaxDim") {
    Caught c = run_error(qkv(ap::Tensor({ap::kMaxDim + 1, 1}), ap::Tensor({ap::kMaxDim + 1, 1}),
                             ap::Tensor({ap::kMaxDim + 1, 1})),
                         {});
    REQUIRE_INPUT_ERROR(c);
    CHECK_THAT(c.what, Contains(std::to_string(ap::kMaxDim)) || Contains(std::to_string(ap::kMaxDim + 1)));
    ap::AttentionInput in;
    in.x = ap::Tensor({2, ap::kMaxDim + 1});
    in.W_q = ap::Tensor({ap::kMaxDim + 1, 2});
    in.W_k = ap::Tensor({ap::kMaxDim + 1, 2});
    in.W_v = ap::Tensor({ap::kMaxDim + 1, 2});
    Caught d = run_error(in, {});
    REQUIRE_INPUT_ERROR(d);
    CHECK(d.field == "x");
  }
  SECTION("n_head · T · T_total above kMaxScores") {
    const int n = 512;  // 512 × 512 × 2 heads = 2 · kMaxScores
    ap::AttentionOptions o;
    o.n_head = 2;
    Caught c = run_error(qkv(ap::Tensor({n, 8}), ap::Tensor({n, 8}), ap::Tensor({n, 8})), o);
    REQUIRE_INPUT_ERROR(c);
    CHECK(c.field == "n_head");
    CHECK_THAT(c.what, Contains(std::to_string(ap::kMaxScores)));
  }
  SECTION("exactly kMaxScores is allowed") {
    const int n = 256;  // 4 heads × 256 × 256 = 2^18 = kMaxScores
    ap::AttentionOptions o;
    o.n_head = 4;
    o.causal = true;
    ap::AttentionTrace t = ap::attention_trace(qkv(ap::Tensor({n, 4}), ap::Tensor({n, 4}), ap::Tensor({n, 4})), o);
    CHECK(t.weights.numel() == ap::kMaxScores);
  }
}
