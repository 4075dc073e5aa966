// kernels_fast.h — the fast tier of kernels.h (internal: kernels.cpp dispatches to it). Same
// signatures and contracts as the reference kernels; see kernels.h for the tolerance promise.
#pragma once

#include "kernels.h"

namespace ap::kernels::fast {

// The instruction set the fast kernels run with on this machine ("avx512", "avx2", "simd128", …).
const char* isa_name();

void encoder_forward(float* out, const int* ids, const float* wte, const float* wpe, int B, int T, int C);
void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* ids, int B, int T, int C);
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N,
                       int C);
void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                        const float* mean, const float* rstd, int N, int C);
void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C, int OC);
void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC);
void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH, AttnOptions opt);
size_t attention_backward_scratch(int B, int T, int C, int NH);
void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                        int T, int C, int NH, AttnOptions opt);
void attention_decode(float* out, float* att, const float* q, const float* k_cache, const float* v_cache, int base,
                      int C, int NH, AttnOptions opt);
void gelu_forward(float* out, const float* inp, int N);
void gelu_backward(float* dinp, const float* inp, const float* dout, int N);
void residual_forward(float* out, const float* a, const float* b, int N);
void residual_backward(float* da, float* db, const float* dout, int N);
void crossentropy_forward(float* losses, float* probs, const float* logits, const int* targets, int N, int V);
void crossentropy_backward(float* dlogits, const float* probs, const int* targets, float dloss, int N, int V);
double sum_squares(const float* x, int64_t n);
void scale_inplace(float* x, float s, int64_t n);
void adamw_update(float* params, float* m, float* v, const float* grads, int64_t n, float lr, float beta1,
                  float beta2, float eps, float weight_decay, float bias1, float bias2);

}  // namespace ap::kernels::fast
