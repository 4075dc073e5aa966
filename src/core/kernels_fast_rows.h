// kernels_fast_rows.h — a part of kernels_fast_impl.h, included by it inside its ISA namespace
// (V, VT, W, the exp/erf and the helpers come from there); not a header of its own. The kernels
// that work along a row: the encoder and the residual (exact adds), layernorm, GELU (erf and
// GPT-2's tanh), cross-entropy and the optimiser's helpers (AdamW, the sum of squares), each
// vectorised along the row with its tolerance against the reference in kernels.h.

// ---------------------------------------------------------------- encoder, residual (exact)

AP_INLINE void add_rows(float* o, const float* a, const float* b, int n) {  // o = a + b (o may alias a or b)
  int i = 0;
  for (; i + W <= n; i += W) V::store(o + i, V::add(V::load(a + i), V::load(b + i)));
  for (; i < n; ++i) o[i] = a[i] + b[i];
}

void encoder_forward(float* out, const int* ids, const float* wte, const float* wpe, int B, int T, int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      add_rows(out + (zu(b) * T + t) * C, wte + zu(ids[b * T + t]) * C, wpe + zu(t) * C, C);
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* ids, int B, int T, int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const float* d = dout + (zu(b) * T + t) * C;
      if (dwte) {
        float* e = dwte + zu(ids[b * T + t]) * C;
        add_rows(e, e, d, C);
      }
      if (dwpe) {
        float* p = dwpe + zu(t) * C;
        add_rows(p, p, d, C);
      }
    }
}

void residual_forward(float* out, const float* a, const float* b, int N) { add_rows(out, a, b, N); }

void residual_backward(float* da, float* db, const float* dout, int N) {
  add_rows(da, da, dout, N);
  add_rows(db, db, dout, N);
}

// ---------------------------------------------------------------- layernorm

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N,
                       int C, float eps) {
  const float invC = 1.0f / static_cast<float>(C);
  for (int n = 0; n < N; ++n) {
    const float* x = inp + zu(n) * C;
    float* o = out + zu(n) * C;
    VT s = V::zero();
    int c = 0;
    for (; c + W <= C; c += W) s = V::add(s, V::load(x + c));
    float m = V::reduce_add(s);
    for (; c < C; ++c) m += x[c];
    m /= static_cast<float>(C);
    const VT mv = V::set1(m);
    s = V::zero();
    c = 0;
    for (; c + W <= C; c += W) {
      const VT d = V::sub(V::load(x + c), mv);
      s = V::fmadd(d, d, s);
    }
    float var = V::reduce_add(s);
    for (; c < C; ++c) var += (x[c] - m) * (x[c] - m);
    var *= invC;
    const float r = 1.0f / __builtin_sqrtf(var + eps);
    const VT rv = V::set1(r);
    c = 0;
    if (b) {
      for (; c + W <= C; c += W)
        V::store(o + c, V::fmadd(V::mul(V::sub(V::load(x + c), mv), rv), V::load(w + c), V::load(b + c)));
      for (; c < C; ++c) o[c] = (x[c] - m) * r * w[c] + b[c];
    } else {
      for (; c + W <= C; c += W) V::store(o + c, V::mul(V::mul(V::sub(V::load(x + c), mv), rv), V::load(w + c)));
      for (; c < C; ++c) o[c] = (x[c] - m) * r * w[c];
    }
    mean[n] = m;
    rstd[n] = r;
  }
}

void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                        const float* mean, const float* rstd, int N, int C) {
  const float invC = 1.0f / static_cast<float>(C);
  for (int n = 0; n < N; ++n) {
    const float* x = inp + zu(n) * C;
    const float* d = dout + zu(n) * C;
    const float m = mean[n], r = rstd[n];
    const VT mv = V::set1(m), rv = V::set1(r);
    VT s1 = V::zero(), s2 = V::zero();
    int c = 0;
    for (; c + W <= C; c += W) {
      const VT norm = V::mul(V::sub(V::load(x + c), mv), rv);
      const VT dn = V::mul(V::load(w + c), V::load(d + c));
      s1 = V::add(s1, dn);
      s2 = V::fmadd(dn, norm, s2);
    }
    float dnorm_mean = V::reduce_add(s1), dnorm_norm_mean = V::reduce_add(s2);
    for (; c < C; ++c) {
      const float norm = (x[c] - m) * r, dn = w[c] * d[c];
      dnorm_mean += dn;
      dnorm_norm_mean += dn * norm;
    }
    dnorm_mean *= invC;
    dnorm_norm_mean *= invC;
    const VT a = V::set1(dnorm_mean), bq = V::set1(dnorm_norm_mean);
    float* dx = dinp ? dinp + zu(n) * C : nullptr;
    c = 0;
    for (; c + W <= C; c += W) {
      const VT dc = V::load(d + c);
      const VT norm = V::mul(V::sub(V::load(x + c), mv), rv);
      if (db) V::store(db + c, V::add(V::load(db + c), dc));
      if (dw) V::store(dw + c, V::fmadd(norm, dc, V::load(dw + c)));
      if (dx) {
        const VT dn = V::mul(V::load(w + c), dc);
        // (dnorm − mean(dnorm) − norm·mean(dnorm·norm))·rstd
        const VT g = V::sub(V::sub(dn, a), V::mul(norm, bq));
        V::store(dx + c, V::fmadd(g, rv, V::load(dx + c)));
      }
    }
    for (; c < C; ++c) {
      const float norm = (x[c] - m) * r, dn = w[c] * d[c];
      if (db) db[c] += d[c];
      if (dw) dw[c] += norm * d[c];
      if (dx) dx[c] += (dn - dnorm_mean - norm * dnorm_norm_mean) * r;
    }
  }
}

// ---------------------------------------------------------------- GELU (exact, erf; GPT-2's tanh)
// An elementwise activation on vectors (the tail a partial vector): out = f(x); dinp += f'(x)·dout.

template <class F>
AP_INLINE void map_forward(float* out, const float* inp, int N, F f) {
  int i = 0;
  for (; i + W <= N; i += W) V::store(out + i, f(V::load(inp + i)));
  if (i < N) V::store_partial(out + i, f(V::load_partial(inp + i, N - i)), N - i);
}

template <class G>
AP_INLINE void map_backward(float* dinp, const float* inp, const float* dout, int N, G grad) {
  int i = 0;
  for (; i + W <= N; i += W) V::store(dinp + i, V::fmadd(grad(V::load(inp + i)), V::load(dout + i), V::load(dinp + i)));
  if (i < N) {
    const int n = N - i;
    V::store_partial(
        dinp + i, V::fmadd(grad(V::load_partial(inp + i, n)), V::load_partial(dout + i, n), V::load_partial(dinp + i, n)), n);
  }
}

void gelu_forward(float* out, const float* inp, int N) {
  const VT half = V::set1(0.5f), one = V::set1(1.0f), s2 = V::set1(0.70710678118654752f);
  map_forward(out, inp, N, [&](VT x) { return V::mul(V::mul(half, x), V::add(one, erf_v(V::mul(x, s2)))); });
}

AP_INLINE VT gelu_grad(VT x) {  // Φ(x) + x·φ(x)
  const VT cdf = V::mul(V::set1(0.5f), V::add(V::set1(1.0f), erf_v(V::mul(x, V::set1(0.70710678118654752f)))));
  const VT pdf = V::mul(exp_v(V::mul(V::set1(-0.5f), V::mul(x, x))), V::set1(0.39894228040143268f));
  return V::fmadd(x, pdf, cdf);
}

void gelu_backward(float* dinp, const float* inp, const float* dout, int N) {
  map_backward(dinp, inp, dout, N, [](VT x) { return gelu_grad(x); });
}

// GPT-2's: the reference's formula, x·σ(2u) = x / (1 + e^(−2u)), u = √(2/π)(x + 0.044715x³).
AP_INLINE VT gelu_new_sigma(VT x) {  // σ(2u)
  const VT u = V::mul(V::set1(0.7978845608028654f), V::add(x, V::mul(V::set1(0.044715f), V::mul(x, V::mul(x, x)))));
  return V::div(V::set1(1.0f), V::add(V::set1(1.0f), exp_v(V::mul(V::set1(-2.0f), u))));
}

void gelu_new_forward(float* out, const float* inp, int N) {
  map_forward(out, inp, N, [](VT x) { return V::mul(x, gelu_new_sigma(x)); });
}

AP_INLINE VT gelu_new_grad(VT x) {  // σ + x·σ(1 − σ)·2u′
  const VT s = gelu_new_sigma(x);
  const VT du = V::mul(V::set1(0.7978845608028654f), V::fmadd(V::set1(3.0f * 0.044715f), V::mul(x, x), V::set1(1.0f)));
  return V::fmadd(V::mul(x, V::mul(s, V::sub(V::set1(1.0f), s))), V::mul(V::set1(2.0f), du), s);
}

void gelu_new_backward(float* dinp, const float* inp, const float* dout, int N) {
  map_backward(dinp, inp, dout, N, [](VT x) { return gelu_new_grad(x); });
}

// ---------------------------------------------------------------- cross-entropy

void crossentropy_forward(float* losses, float* probs, const float* logits, const int* targets, int N, int V_) {
  for (int n = 0; n < N; ++n) {
    const float* l = logits + zu(n) * V_;
    float* p = probs + zu(n) * V_;
    // the row max, then Σ e^(l − max), kept in p; −log p_target = log Σ + max − l_target
    VT mv = V::set1(-kInfF);
    int j = 0;
    for (; j + W <= V_; j += W) mv = V::max(V::load(l + j), mv);
    float m = V::reduce_max(mv);
    for (; j < V_; ++j) m = l[j] > m ? l[j] : m;
    std::memcpy(p, l, sizeof(float) * zu(V_));
    softmax_inplace(p, V_, true);
    const VT mm = V::set1(m);
    VT s = V::zero();
    j = 0;
    for (; j + W <= V_; j += W) s = V::add(s, exp_v(V::sub(V::load(l + j), mm)));
    float sum = V::reduce_add(s);
    if (j < V_) sum += sum_first(exp_v(V::sub(V::load_partial(l + j, V_ - j), mm)), V_ - j);
    losses[n] = log_f32(sum) + m - l[targets[n]];
  }
}

void crossentropy_backward(float* dlogits, const float* probs, const int* targets, float dloss, int N, int V_) {
  const VT dl = V::set1(dloss);
  for (int n = 0; n < N; ++n) {
    const float* p = probs + zu(n) * V_;
    float* d = dlogits + zu(n) * V_;
    const int t = targets[n];
    const float dt = d[t];
    int j = 0;
    for (; j + W <= V_; j += W) V::store(d + j, V::add(V::load(d + j), V::mul(V::load(p + j), dl)));
    for (; j < V_; ++j) d[j] += p[j] * dloss;
    d[t] = dt + (p[t] - 1.0f) * dloss;  // the reference's arithmetic at the target
  }
}

// ---------------------------------------------------------------- optimiser helpers

double sum_squares(const float* x, int64_t n) {
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) s[j] += static_cast<double>(x[i + j]) * x[i + j];
  double t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; i < n; ++i) t += static_cast<double>(x[i]) * x[i];
  return t;
}

void scale_inplace(float* x, float s, int64_t n) {
  const VT sv = V::set1(s);
  int64_t i = 0;
  for (; i + W <= n; i += W) V::store(x + i, V::mul(V::load(x + i), sv));
  for (; i < n; ++i) x[i] *= s;
}

// The reference's operations in the reference's order (no fmadd): bit-identical results.
void adamw_update(float* params, float* m, float* v, const float* grads, int64_t n, float lr, float beta1,
                  float beta2, float eps, float weight_decay, float bias1, float bias2) {
  const VT b1 = V::set1(beta1), b2 = V::set1(beta2), c1 = V::set1(1.0f - beta1), c2 = V::set1(1.0f - beta2);
  const VT bc1 = V::set1(bias1), bc2 = V::set1(bias2), e = V::set1(eps), lrv = V::set1(lr),
           wd = V::set1(weight_decay);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const VT g = V::load(grads + i);
    const VT mi = V::add(V::mul(b1, V::load(m + i)), V::mul(c1, g));
    const VT vi = V::add(V::mul(b2, V::load(v + i)), V::mul(V::mul(c2, g), g));
    V::store(m + i, mi);
    V::store(v + i, vi);
    const VT mhat = V::div(mi, bc1), vhat = V::div(vi, bc2);
    const VT p = V::load(params + i);
    const VT upd = V::add(V::div(mhat, V::add(V::sqrt(vhat), e)), V::mul(wd, p));
    V::store(params + i, V::sub(p, V::mul(lrv, upd)));
  }
  if (i < n)  // the last n mod W: the reference itself
    kernels::reference.adamw_update(params + i, m + i, v + i, grads + i, n - i, lr, beta1, beta2, eps, weight_decay,
                                    bias1, bias2);
}

// For the tests: the vector exp and erf on n floats.
void exp_n(float* out, const float* x, int n) {
  int i = 0;
  for (; i + W <= n; i += W) V::store(out + i, exp_v(V::load(x + i)));
  if (i < n) V::store_partial(out + i, exp_v(V::load_partial(x + i, n - i)), n - i);
}
void erf_n(float* out, const float* x, int n) {
  int i = 0;
  for (; i + W <= n; i += W) V::store(out + i, erf_v(V::load(x + i)));
  if (i < n) V::store_partial(out + i, erf_v(V::load_partial(x + i, n - i)), n - i);
}
