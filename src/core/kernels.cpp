// kernels.cpp — the tier switch of kernels.h: each kernel forwards to the fast or the reference
// implementation. One branch per call; the kernels themselves do the work.
#include "kernels.h"

#include "kernels_fast.h"

namespace ap::kernels {

namespace {

#ifdef AP_REFERENCE_KERNELS
constexpr bool kForcedReference = true;
#else
constexpr bool kForcedReference = false;
#endif

Tier g_tier = kForcedReference ? Tier::reference : Tier::fast;

inline bool fast_tier() { return g_tier == Tier::fast; }

}  // namespace

Tier tier() { return g_tier; }

Tier set_tier(Tier t) {
  g_tier = kForcedReference ? Tier::reference : t;
  return g_tier;
}

const char* tier_name() { return fast_tier() ? fast::isa_name() : "reference"; }

#define AP_DISPATCH(name, ...) (fast_tier() ? fast::name(__VA_ARGS__) : reference::name(__VA_ARGS__))

void encoder_forward(float* out, const int* ids, const float* wte, const float* wpe, int B, int T, int C) {
  AP_DISPATCH(encoder_forward, out, ids, wte, wpe, B, T, C);
}
void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* ids, int B, int T, int C) {
  AP_DISPATCH(encoder_backward, dwte, dwpe, dout, ids, B, T, C);
}
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N,
                       int C) {
  AP_DISPATCH(layernorm_forward, out, mean, rstd, inp, w, b, N, C);
}
void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                        const float* mean, const float* rstd, int N, int C) {
  AP_DISPATCH(layernorm_backward, dinp, dw, db, dout, inp, w, mean, rstd, N, C);
}
void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C, int OC) {
  AP_DISPATCH(matmul_forward, out, inp, weight, bias, N, C, OC);
}
void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC) {
  AP_DISPATCH(matmul_backward, dinp, dweight, dbias, dout, inp, weight, N, C, OC);
}
void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH, AttnOptions opt) {
  AP_DISPATCH(attention_forward, out, att, qkv, B, T, C, NH, opt);
}
// Scratch sizes: enough for either tier, so a buffer sized once stays valid after set_tier().
size_t attention_forward_infer_scratch(int B, int T, int C, int NH) {
  const size_t r = reference::attention_forward_infer_scratch(B, T, C, NH);
  const size_t f = fast::attention_forward_infer_scratch(B, T, C, NH);
  return r > f ? r : f;
}
void attention_forward_infer(float* out, float* scratch, const float* qkv, int B, int T, int C, int NH,
                             AttnOptions opt) {
  AP_DISPATCH(attention_forward_infer, out, scratch, qkv, B, T, C, NH, opt);
}
size_t attention_backward_scratch(int B, int T, int C, int NH) {
  const size_t r = reference::attention_backward_scratch(B, T, C, NH);
  const size_t f = fast::attention_backward_scratch(B, T, C, NH);
  return r > f ? r : f;
}
void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                        int T, int C, int NH, AttnOptions opt) {
  AP_DISPATCH(attention_backward, dqkv, scratch, dout, qkv, att, B, T, C, NH, opt);
}
void attention_decode(float* out, float* att, const float* q, const float* k_cache, const float* v_cache, int base,
                      int C, int NH, AttnOptions opt) {
  AP_DISPATCH(attention_decode, out, att, q, k_cache, v_cache, base, C, NH, opt);
}
void gelu_forward(float* out, const float* inp, int N) { AP_DISPATCH(gelu_forward, out, inp, N); }
void gelu_backward(float* dinp, const float* inp, const float* dout, int N) {
  AP_DISPATCH(gelu_backward, dinp, inp, dout, N);
}
void residual_forward(float* out, const float* a, const float* b, int N) { AP_DISPATCH(residual_forward, out, a, b, N); }
void residual_backward(float* da, float* db, const float* dout, int N) { AP_DISPATCH(residual_backward, da, db, dout, N); }
void crossentropy_forward(float* losses, float* probs, const float* logits, const int* targets, int N, int V) {
  AP_DISPATCH(crossentropy_forward, losses, probs, logits, targets, N, V);
}
void crossentropy_backward(float* dlogits, const float* probs, const int* targets, float dloss, int N, int V) {
  AP_DISPATCH(crossentropy_backward, dlogits, probs, targets, dloss, N, V);
}
double sum_squares(const float* x, int64_t n) { return AP_DISPATCH(sum_squares, x, n); }
void scale_inplace(float* x, float s, int64_t n) { AP_DISPATCH(scale_inplace, x, s, n); }
void adamw_update(float* params, float* m, float* v, const float* grads, int64_t n, float lr, float beta1,
                  float beta2, float eps, float weight_decay, float bias1, float bias2) {
  AP_DISPATCH(adamw_update, params, m, v, grads, n, lr, beta1, beta2, eps, weight_decay, bias1, bias2);
}

#undef AP_DISPATCH

}  // namespace ap::kernels
