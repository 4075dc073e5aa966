// ops.cpp — kernels and checked tensor ops (see ops.h for the conventions).
#include "core/tensor/ops.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>

namespace ap {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// 2^k as a float, for k in [-126, 127].
float pow2i(int k) {
  const uint32_t bits = static_cast<uint32_t>(k + 127) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

int norm_dim(int d, int n, const char* what) {
  const int k = d < 0 ? d + n : d;
  if (k < 0 || k >= n)
    throw ShapeError(std::string(what) + ": dimension " + std::to_string(d) + " out of range for " +
                     std::to_string(n) + " dimensions");
  return k;
}

}  // namespace

// ---------------------------------------------------------------- exp

float exp_f32(float x) {
  // Cephes' expf: x = n·ln2 + r with |r| ≤ ln2/2, e^r by a degree-7 polynomial, then scale by 2^n.
  if (x != x) return x;
  if (x > 88.72283172607421875f) return kInf;  // the largest float whose e^x is finite
  if (x < -104.0f) return 0.0f;                 // below half the smallest subnormal (and −∞)
  const float n = std::floor(x * 1.44269504088896341f + 0.5f);
  float r = x - n * 0.693359375f;  // ln2 split in two: this product is exact
  r = r - n * -2.12194440e-4f;
  const float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  // Scale in two exact steps so that 2^n never leaves the normal range (n is in [-150, 128]).
  const int k = static_cast<int>(n);
  const int k1 = k / 2;
  return p * pow2i(k1) * pow2i(k - k1);
}

float log_f32(float x) {
  // Cephes' logf: x = m·2^e with m in [√½, √2), ln m = (m−1) − (m−1)²/2 + (m−1)³·P(m−1), then
  // e·ln2 added in two parts (ln2 split so that e·0.693359375 is exact).
  if (x != x) return x;
  if (x < 0.0f) return std::numeric_limits<float>::quiet_NaN();
  if (x == 0.0f) return -kInf;
  if (x == kInf) return kInf;
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  int e = 0;
  if ((bits >> 23) == 0) {  // subnormal: scale into the normal range first (exact)
    x *= 16777216.0f;       // 2^24
    std::memcpy(&bits, &x, sizeof bits);
    e = -24;
  }
  e += static_cast<int>(bits >> 23) - 126;  // x = m·2^e with m in [0.5, 1)
  bits = (bits & 0x007fffffu) | 0x3f000000u;
  float m;
  std::memcpy(&m, &bits, sizeof m);
  if (m < 0.707106781186547524f) {
    e -= 1;
    m = m + m - 1.0f;
  } else {
    m = m - 1.0f;
  }
  const float z = m * m;
  float y = 7.0376836292e-2f;
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = y * m * z;
  const float fe = static_cast<float>(e);
  y += -2.12194440e-4f * fe;
  y += -0.5f * z;
  float r = m + y;
  r += 0.693359375f * fe;
  return r;
}

// ---------------------------------------------------------------- kernels

void matmul_forward(float* out, const float* a, const float* b, int M, int K, int N) {
  // out (M,N), a (M,K), b (K,N). i-k-j order: the inner loop runs along rows of b and out.
  for (int i = 0; i < M; ++i) {
    float* o = out + static_cast<size_t>(i) * N;
    for (int j = 0; j < N; ++j) o[j] = 0.0f;
    const float* ai = a + static_cast<size_t>(i) * K;
    for (int k = 0; k < K; ++k) {
      const float aik = ai[k];
      const float* bk = b + static_cast<size_t>(k) * N;
      for (int j = 0; j < N; ++j) o[j] += aik * bk[j];
    }
  }
}

void matmul_bt_forward(float* out, const float* a, const float* b, int M, int K, int N) {
  // out (M,N), a (M,K), b (N,K): out[i][j] = Σ_k a[i][k]·b[j][k], summed in k order.
  for (int i = 0; i < M; ++i) {
    const float* ai = a + static_cast<size_t>(i) * K;
    for (int j = 0; j < N; ++j) {
      const float* bj = b + static_cast<size_t>(j) * K;
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s += ai[k] * bj[k];
      out[static_cast<size_t>(i) * N + j] = s;
    }
  }
}

void scale_forward(float* out, const float* x, float s, int N) {
  for (int i = 0; i < N; ++i) out[i] = x[i] * s;
}

namespace {

// One row of softmax; `shift` subtracts the row max first (the stable form).
RowStatus softmax_row(float* out, const float* x, int cols, bool shift) {
  float maxv = -kInf;
  bool has_nan = false;
  for (int j = 0; j < cols; ++j) {
    if (x[j] != x[j]) has_nan = true;
    else if (x[j] > maxv) maxv = x[j];
  }
  if (!has_nan && maxv == -kInf) {  // every entry −∞ (or no entries): nothing to attend to
    for (int j = 0; j < cols; ++j) out[j] = 0.0f;
    return RowStatus::empty;
  }
  const float m = shift ? maxv : 0.0f;
  float sum = 0.0f;
  for (int j = 0; j < cols; ++j) {
    out[j] = exp_f32(x[j] - m);
    sum += out[j];
  }
  const float inv = 1.0f / sum;
  for (int j = 0; j < cols; ++j) out[j] *= inv;
  // Non-finite: a NaN or +∞ input, e^x overflowing (naive form), or the sum underflowing to 0.
  const bool ok = !has_nan && std::isfinite(maxv) && std::isfinite(sum) && sum > 0.0f;
  return ok ? RowStatus::ok : RowStatus::overflow;
}

void softmax_rows_impl(float* out, RowStatus* status, const float* x, int rows, int cols, bool shift) {
  for (int i = 0; i < rows; ++i) {
    const RowStatus s = softmax_row(out + static_cast<size_t>(i) * cols,
                                    x + static_cast<size_t>(i) * cols, cols, shift);
    if (status) status[i] = s;
  }
}

}  // namespace

void softmax_rows_forward(float* out, RowStatus* status, const float* x, int rows, int cols) {
  softmax_rows_impl(out, status, x, rows, cols, true);
}

void softmax_rows_naive_forward(float* out, RowStatus* status, const float* x, int rows, int cols) {
  softmax_rows_impl(out, status, x, rows, cols, false);
}

// ---------------------------------------------------------------- backward kernels

void matmul_backward(float* da, float* db, const float* dout, const float* a, const float* b, int M, int K, int N) {
  for (int i = 0; i < M; ++i) {
    const float* d = dout + static_cast<size_t>(i) * N;
    const float* ai = a + static_cast<size_t>(i) * K;
    for (int k = 0; k < K; ++k) {
      const float* bk = b + static_cast<size_t>(k) * N;
      if (da) {
        float s = 0.0f;
        for (int j = 0; j < N; ++j) s += d[j] * bk[j];
        da[static_cast<size_t>(i) * K + k] += s;
      }
      if (db) {
        float* dbk = db + static_cast<size_t>(k) * N;
        const float aik = ai[k];
        for (int j = 0; j < N; ++j) dbk[j] += aik * d[j];
      }
    }
  }
}

void matmul_bt_backward(float* da, float* db, const float* dout, const float* a, const float* b, int M, int K,
                        int N) {
  for (int i = 0; i < M; ++i) {
    const float* ai = a + static_cast<size_t>(i) * K;
    for (int j = 0; j < N; ++j) {
      const float d = dout[static_cast<size_t>(i) * N + j];
      const float* bj = b + static_cast<size_t>(j) * K;
      if (da) {
        float* dai = da + static_cast<size_t>(i) * K;
        for (int k = 0; k < K; ++k) dai[k] += d * bj[k];
      }
      if (db) {
        float* dbj = db + static_cast<size_t>(j) * K;
        for (int k = 0; k < K; ++k) dbj[k] += d * ai[k];
      }
    }
  }
}

void softmax_rows_backward(float* dx, const float* dy, const float* y, int rows, int cols) {
  for (int i = 0; i < rows; ++i) {
    const float* yi = y + static_cast<size_t>(i) * cols;
    const float* gi = dy + static_cast<size_t>(i) * cols;
    float dot = 0.0f;
    for (int j = 0; j < cols; ++j) dot += gi[j] * yi[j];
    float* di = dx + static_cast<size_t>(i) * cols;
    for (int j = 0; j < cols; ++j) di[j] += yi[j] * (gi[j] - dot);
  }
}

// ---------------------------------------------------------------- layers

void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b, int N,
                       int C, float eps) {
  for (int n = 0; n < N; ++n) {
    const float* xn = x + static_cast<size_t>(n) * C;
    float m = 0.0f;
    for (int c = 0; c < C; ++c) m += xn[c];
    m /= static_cast<float>(C);
    float v = 0.0f;
    for (int c = 0; c < C; ++c) v += (xn[c] - m) * (xn[c] - m);
    v /= static_cast<float>(C);
    const float r = 1.0f / std::sqrt(v + eps);
    float* on = out + static_cast<size_t>(n) * C;
    if (b)
      for (int c = 0; c < C; ++c) on[c] = (xn[c] - m) * r * w[c] + b[c];
    else
      for (int c = 0; c < C; ++c) on[c] = (xn[c] - m) * r * w[c];
    mean[n] = m;
    rstd[n] = r;
  }
}

void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                        const float* mean, const float* rstd, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const float* xn = x + static_cast<size_t>(n) * C;
    const float* dn = dout + static_cast<size_t>(n) * C;
    const float m = mean[n], r = rstd[n];
    // dnorm = dout·w; dx = r·(dnorm − mean(dnorm) − norm·mean(dnorm·norm))
    float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
    for (int c = 0; c < C; ++c) {
      const float norm = (xn[c] - m) * r;
      const float dnorm = w[c] * dn[c];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean /= static_cast<float>(C);
    dnorm_norm_mean /= static_cast<float>(C);
    for (int c = 0; c < C; ++c) {
      const float norm = (xn[c] - m) * r;
      const float dnorm = w[c] * dn[c];
      if (db) db[c] += dn[c];
      if (dw) dw[c] += norm * dn[c];
      if (dx) dx[static_cast<size_t>(n) * C + c] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * r;
    }
  }
}

float erf_f32(float xf) {
  // The Maclaurin series erf(x) = 2/√π Σ (−1)^n x^(2n+1) / (n!(2n+1)) in double, summed until the
  // terms stop mattering, then rounded once to float32: within one float32 ulp. Only + − × ÷, so
  // every platform gives the same bits. Beyond |x| = 4, erf is ±1 in float32.
  const double x = xf;
  if (xf != xf) return xf;
  if (x >= 4.0) return 1.0f;
  if (x <= -4.0) return -1.0f;
  const double x2 = x * x;
  double term = x, sum = x;  // term_n = (−1)^n x^(2n+1) / n!
  for (int n = 1; n < 100; ++n) {
    term *= -x2 / n;
    const double t = term / (2 * n + 1);
    sum += t;
    if (std::fabs(t) < 1e-17 * std::fabs(sum)) break;
  }
  return static_cast<float>(sum * 1.1283791670955126);  // 2/√π
}

void gelu_forward(float* out, const float* x, int N) {
  for (int i = 0; i < N; ++i) out[i] = 0.5f * x[i] * (1.0f + erf_f32(x[i] * 0.70710678118654752f));
}

void gelu_backward(float* dx, const float* x, const float* dout, int N) {
  // d/dx x·Φ(x) = Φ(x) + x·φ(x), φ(x) = e^(−x²/2)/√(2π)
  for (int i = 0; i < N; ++i) {
    const float cdf = 0.5f * (1.0f + erf_f32(x[i] * 0.70710678118654752f));
    const float pdf = exp_f32(-0.5f * x[i] * x[i]) * 0.39894228040143268f;
    dx[i] += (cdf + x[i] * pdf) * dout[i];
  }
}

namespace {
constexpr float kGeluNewA = 0.7978845608028654f;  // √(2/π)
constexpr float kGeluNewB = 0.044715f;
}  // namespace

void gelu_new_forward(float* out, const float* x, int N) {
  for (int i = 0; i < N; ++i) {
    const float v = x[i];
    const float u = kGeluNewA * (v + kGeluNewB * v * v * v);
    out[i] = v / (1.0f + exp_f32(-2.0f * u));
  }
}

void gelu_new_backward(float* dx, const float* x, const float* dout, int N) {
  // d/dx x·σ(2u) = σ + x·σ(1 − σ)·2u′, u′ = √(2/π)(1 + 3·0.044715x²)
  for (int i = 0; i < N; ++i) {
    const float v = x[i];
    const float u = kGeluNewA * (v + kGeluNewB * v * v * v);
    const float s = 1.0f / (1.0f + exp_f32(-2.0f * u));
    const float du = kGeluNewA * (1.0f + 3.0f * kGeluNewB * v * v);
    dx[i] += (s + v * s * (1.0f - s) * 2.0f * du) * dout[i];
  }
}

void embedding_forward(float* out, const int* ids, const float* table, int N, int C) {
  for (int n = 0; n < N; ++n)
    std::memcpy(out + static_cast<size_t>(n) * C, table + static_cast<size_t>(ids[n]) * C, sizeof(float) * C);
}

void embedding_backward(float* dtable, const float* dout, const int* ids, int N, int C) {
  for (int n = 0; n < N; ++n) {
    float* row = dtable + static_cast<size_t>(ids[n]) * C;
    const float* d = dout + static_cast<size_t>(n) * C;
    for (int c = 0; c < C; ++c) row[c] += d[c];
  }
}

void crossentropy_forward(float* losses, float* probs, const float* logits, const int* targets, int N, int V) {
  softmax_rows_forward(probs, nullptr, logits, N, V);
  for (int n = 0; n < N; ++n) {
    // −log p from the logits (log-sum-exp), so that a tiny p does not become −log 0.
    const float* l = logits + static_cast<size_t>(n) * V;
    float m = l[0];
    for (int v = 1; v < V; ++v) m = std::fmax(m, l[v]);
    float s = 0.0f;
    for (int v = 0; v < V; ++v) s += exp_f32(l[v] - m);
    losses[n] = log_f32(s) + m - l[targets[n]];
  }
}

void crossentropy_backward(float* dlogits, const float* dlosses, const float* probs, const int* targets, int N,
                           int V) {
  for (int n = 0; n < N; ++n) {
    const float* p = probs + static_cast<size_t>(n) * V;
    float* d = dlogits + static_cast<size_t>(n) * V;
    for (int v = 0; v < V; ++v) d[v] += (p[v] - (v == targets[n] ? 1.0f : 0.0f)) * dlosses[n];
  }
}

// ---------------------------------------------------------------- checked ops

Tensor matmul(const Tensor& a, const Tensor& b) {
  const std::string shapes = "a is " + shape_str(a.shape) + ", b is " + shape_str(b.shape);
  if (a.dim() == 2 && b.dim() == 2) {
    if (a.shape[1] != b.shape[0])
      throw ShapeError("matmul: a has " + std::to_string(a.shape[1]) + " columns but b has " +
                       std::to_string(b.shape[0]) + " rows (" + shapes + ")");
    Tensor out({a.shape[0], b.shape[1]});
    matmul_forward(out.ptr(), a.ptr(), b.ptr(), a.shape[0], a.shape[1], b.shape[1]);
    return out;
  }
  if (a.dim() == 3 && (b.dim() == 3 || b.dim() == 2)) {
    const int B = a.shape[0], M = a.shape[1], K = a.shape[2];
    const bool shared_b = b.dim() == 2;
    if (!shared_b && b.shape[0] != B)
      throw ShapeError("matmul: batch sizes differ (" + shapes + ")");
    const int Kb = b.size(-2), N = b.size(-1);
    if (Kb != K)
      throw ShapeError("matmul: a has " + std::to_string(K) + " columns but b has " +
                       std::to_string(Kb) + " rows (" + shapes + ")");
    Tensor out({B, M, N});
    for (int i = 0; i < B; ++i)
      matmul_forward(out.ptr() + static_cast<size_t>(i) * M * N, a.ptr() + static_cast<size_t>(i) * M * K,
                     b.ptr() + (shared_b ? 0 : static_cast<size_t>(i) * K * N), M, K, N);
    return out;
  }
  throw ShapeError("matmul takes 2-D·2-D, 3-D·3-D or 3-D·2-D tensors (" + shapes + ")");
}

Tensor permute(const Tensor& a, const std::vector<int>& perm) {
  const int n = a.dim();
  if (static_cast<int>(perm.size()) != n)
    throw ShapeError("permute: " + std::to_string(perm.size()) + " axes given for shape " + shape_str(a.shape));
  std::vector<bool> seen(n, false);
  for (int p : perm) {
    if (p < 0 || p >= n || seen[p])
      throw ShapeError("permute: not a permutation of the axes of " + shape_str(a.shape));
    seen[p] = true;
  }
  // Pad to 4 dimensions so one loop nest serves every rank.
  int in_shape[kMaxDims] = {1, 1, 1, 1};
  int64_t in_stride[kMaxDims] = {0, 0, 0, 0};
  const int pad = kMaxDims - n;
  Shape out_shape(n);
  int64_t stride = 1;
  for (int d = n - 1; d >= 0; --d) {
    in_shape[d] = a.shape[d];
    in_stride[d] = stride;
    stride *= a.shape[d];
  }
  int os[kMaxDims] = {1, 1, 1, 1};
  int64_t st[kMaxDims] = {0, 0, 0, 0};  // stride in a for each output axis
  for (int d = 0; d < n; ++d) {
    out_shape[d] = in_shape[perm[d]];
    os[pad + d] = out_shape[d];
    st[pad + d] = in_stride[perm[d]];
  }
  Tensor out(out_shape);
  float* o = out.ptr();
  const float* x = a.ptr();
  for (int i0 = 0; i0 < os[0]; ++i0)
    for (int i1 = 0; i1 < os[1]; ++i1)
      for (int i2 = 0; i2 < os[2]; ++i2)
        for (int i3 = 0; i3 < os[3]; ++i3)
          *o++ = x[i0 * st[0] + i1 * st[1] + i2 * st[2] + i3 * st[3]];
  return out;
}

Tensor transpose(const Tensor& a, int d0, int d1) {
  const int n = a.dim();
  if (n < 2) throw ShapeError("transpose needs at least 2 dimensions, got " + shape_str(a.shape));
  std::vector<int> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[norm_dim(d0, n, "transpose")], perm[norm_dim(d1, n, "transpose")]);
  return permute(a, perm);
}

Tensor reshape(const Tensor& a, Shape shape) {
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw ShapeError("reshape: more than one -1 in " + shape_str(shape));
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      throw ShapeError("reshape: negative dimension in " + shape_str(shape));
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || a.numel() % known != 0)
      throw ShapeError("reshape: cannot infer -1 in " + shape_str(shape) + " for " +
                       std::to_string(a.numel()) + " elements of " + shape_str(a.shape));
    shape[infer] = static_cast<int>(a.numel() / known);
  }
  if (shape_numel(shape) != a.numel())
    throw ShapeError("reshape: " + shape_str(a.shape) + " has " + std::to_string(a.numel()) +
                     " elements, " + shape_str(shape) + " needs " + std::to_string(shape_numel(shape)));
  return Tensor(shape, a.data);
}

Shape broadcast_shape(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw ShapeError("cannot broadcast " + shape_str(a) + " with " + shape_str(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor add(const Tensor& a, const Tensor& b) {
  const Shape s = broadcast_shape(a.shape, b.shape);
  Tensor out(s);
  if (a.shape == b.shape) {
    for (int64_t i = 0; i < out.numel(); ++i) out.data[i] = a.data[i] + b.data[i];
    return out;
  }
  // Strides of a and b over the output's (padded) axes; 0 where the operand is broadcast.
  const int n = static_cast<int>(s.size());
  const int pad = kMaxDims - n;
  int os[kMaxDims] = {1, 1, 1, 1};
  int64_t sa[kMaxDims] = {0, 0, 0, 0}, sb[kMaxDims] = {0, 0, 0, 0};
  auto strides = [&](const Shape& x, int64_t* st) {
    int64_t stride = 1;
    const int off = n - static_cast<int>(x.size());
    for (int d = static_cast<int>(x.size()) - 1; d >= 0; --d) {
      st[pad + off + d] = x[d] == 1 ? 0 : stride;
      stride *= x[d];
    }
  };
  for (int d = 0; d < n; ++d) os[pad + d] = s[d];
  strides(a.shape, sa);
  strides(b.shape, sb);
  float* o = out.ptr();
  for (int i0 = 0; i0 < os[0]; ++i0)
    for (int i1 = 0; i1 < os[1]; ++i1)
      for (int i2 = 0; i2 < os[2]; ++i2)
        for (int i3 = 0; i3 < os[3]; ++i3)
          *o++ = a.data[i0 * sa[0] + i1 * sa[1] + i2 * sa[2] + i3 * sa[3]] +
                 b.data[i0 * sb[0] + i1 * sb[1] + i2 * sb[2] + i3 * sb[3]];
  return out;
}

Tensor scale(const Tensor& a, float s) {
  Tensor out(a.shape);
  scale_forward(out.ptr(), a.ptr(), s, static_cast<int>(a.numel()));
  return out;
}

Tensor add_scalar(const Tensor& a, float s) {
  Tensor out(a.shape);
  for (int64_t i = 0; i < a.numel(); ++i) out.data[i] = a.data[i] + s;
  return out;
}

namespace {

Tensor softmax_checked(const Tensor& a, std::vector<RowStatus>* status, bool stable) {
  if (a.dim() < 1) throw ShapeError("softmax needs at least 1 dimension, got a scalar");
  const int cols = a.size(-1);
  const int rows = cols ? static_cast<int>(a.numel() / cols) : 0;
  Tensor out(a.shape);
  std::vector<RowStatus> local;
  std::vector<RowStatus>& st = status ? *status : local;
  st.assign(rows, RowStatus::ok);
  if (stable)
    softmax_rows_forward(out.ptr(), st.data(), a.ptr(), rows, cols);
  else
    softmax_rows_naive_forward(out.ptr(), st.data(), a.ptr(), rows, cols);
  return out;
}

}  // namespace

Tensor softmax_rows(const Tensor& a, std::vector<RowStatus>* status) {
  return softmax_checked(a, status, true);
}

Tensor softmax_rows_naive(const Tensor& a, std::vector<RowStatus>* status) {
  return softmax_checked(a, status, false);
}

}  // namespace ap
