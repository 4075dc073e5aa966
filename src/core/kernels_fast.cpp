// kernels_fast.cpp — the fast tier of kernels.h. PLACEHOLDER until the SIMD kernels land: every
// function forwards to the reference kernel, so the fast tier is exactly the reference tier.
#include "kernels_fast.h"

namespace ap::kernels::fast {

const char* isa_name() { return "scalar"; }

void encoder_forward(float* out, const int* ids, const float* wte, const float* wpe, int B, int T, int C) {
  reference::encoder_forward(out, ids, wte, wpe, B, T, C);
}
void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* ids, int B, int T, int C) {
  reference::encoder_backward(dwte, dwpe, dout, ids, B, T, C);
}
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N,
                       int C) {
  reference::layernorm_forward(out, mean, rstd, inp, w, b, N, C);
}
void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                        const float* mean, const float* rstd, int N, int C) {
  reference::layernorm_backward(dinp, dw, db, dout, inp, w, mean, rstd, N, C);
}
void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C, int OC) {
  reference::matmul_forward(out, inp, weight, bias, N, C, OC);
}
void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC) {
  reference::matmul_backward(dinp, dweight, dbias, dout, inp, weight, N, C, OC);
}
void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH, AttnOptions opt) {
  reference::attention_forward(out, att, qkv, B, T, C, NH, opt);
}
size_t attention_backward_scratch(int B, int T, int C, int NH) {
  return reference::attention_backward_scratch(B, T, C, NH);
}
void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                        int T, int C, int NH, AttnOptions opt) {
  reference::attention_backward(dqkv, scratch, dout, qkv, att, B, T, C, NH, opt);
}
void attention_decode(float* out, float* att, const float* q, const float* k_cache, const float* v_cache, int base,
                      int C, int NH, AttnOptions opt) {
  reference::attention_decode(out, att, q, k_cache, v_cache, base, C, NH, opt);
}
void gelu_forward(float* out, const float* inp, int N) { reference::gelu_forward(out, inp, N); }
void gelu_backward(float* dinp, const float* inp, const float* dout, int N) {
  reference::gelu_backward(dinp, inp, dout, N);
}
void residual_forward(float* out, const float* a, const float* b, int N) { reference::residual_forward(out, a, b, N); }
void residual_backward(float* da, float* db, const float* dout, int N) { reference::residual_backward(da, db, dout, N); }
void crossentropy_forward(float* losses, float* probs, const float* logits, const int* targets, int N, int V) {
  reference::crossentropy_forward(losses, probs, logits, targets, N, V);
}
void crossentropy_backward(float* dlogits, const float* probs, const int* targets, float dloss, int N, int V) {
  reference::crossentropy_backward(dlogits, probs, targets, dloss, N, V);
}
double sum_squares(const float* x, int64_t n) { return reference::sum_squares(x, n); }
void scale_inplace(float* x, float s, int64_t n) { reference::scale_inplace(x, s, n); }
void adamw_update(float* params, float* m, float* v, const float* grads, int64_t n, float lr, float beta1,
                  float beta2, float eps, float weight_decay, float bias1, float bias2) {
  reference::adamw_update(params, m, v, grads, n, lr, beta1, beta2, eps, weight_decay, bias1, bias2);
}

}  // namespace ap::kernels::fast
