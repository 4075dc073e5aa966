// kernels_fast.h — the fast tier of kernels.h (internal: kernels.cpp dispatches to it). Same
// signatures and contracts as the reference kernels; see kernels.h for the tolerance promise.
//
// The kernels are written once (kernels_fast_impl.h) and compiled once per instruction set, each
// into its own table of function pointers: natively avx512 (AVX-512F + FMA), avx2 (AVX2 + FMA),
// sse2 (every x86-64) and scalar (plain C++), the best one the CPU has chosen at the first call;
// in wasm simd128 (AP_WASM_SIMD128, set by the build). The environment variable AP_FAST_ISA (avx512 | avx2 | sse2 | scalar) or
// set_isa() picks a lower one, so the tests and the benchmarks can run every path on one machine.
//
// Memory: the kernels never allocate. Packing (the GEMM's panels, an attention head's Kᵀ or Vᵀ)
// uses one fixed workspace of kWorkspaceFloats floats per thread (thread_local, in BSS: 2 MB
// reserved, pages touched only when used); the attention kernels' row blocks use the caller's
// scratch (kernels.h's *_scratch functions).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels.h"

namespace ap::kernels::fast {

// Floats in the per-thread packing workspace.
constexpr size_t kWorkspaceFloats = size_t(1) << 19;
// The calling thread's workspace (64-byte aligned).
float* workspace();

// The instruction set the fast kernels run with ("avx512", "avx2", "sse2", "simd128", "scalar").
const char* isa_name();
// The instruction sets this build has and this CPU runs, best first (null-terminated list).
const char* const* available_isas();
// Switches to the named instruction set; false (and no change) if it is not available.
bool set_isa(const char* name);

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
size_t attention_forward_infer_scratch(int B, int T, int C, int NH);
void attention_forward_infer(float* out, float* scratch, const float* qkv, int B, int T, int C, int NH,
                             AttnOptions opt);
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

// The vector exp and erf the kernels use, on n floats (for the tests).
void exp_n(float* out, const float* x, int n);
void erf_n(float* out, const float* x, int n);

// One instruction set's kernels (kernels_fast_<isa>.cpp).
namespace fn {
using encoder_forward = decltype(&fast::encoder_forward);
using encoder_backward = decltype(&fast::encoder_backward);
using layernorm_forward = decltype(&fast::layernorm_forward);
using layernorm_backward = decltype(&fast::layernorm_backward);
using matmul_forward = decltype(&fast::matmul_forward);
using matmul_backward = decltype(&fast::matmul_backward);
using attention_forward = decltype(&fast::attention_forward);
using attention_forward_infer_scratch = decltype(&fast::attention_forward_infer_scratch);
using attention_forward_infer = decltype(&fast::attention_forward_infer);
using attention_backward_scratch = decltype(&fast::attention_backward_scratch);
using attention_backward = decltype(&fast::attention_backward);
using attention_decode = decltype(&fast::attention_decode);
using gelu_forward = decltype(&fast::gelu_forward);
using gelu_backward = decltype(&fast::gelu_backward);
using residual_forward = decltype(&fast::residual_forward);
using residual_backward = decltype(&fast::residual_backward);
using crossentropy_forward = decltype(&fast::crossentropy_forward);
using crossentropy_backward = decltype(&fast::crossentropy_backward);
using sum_squares = decltype(&fast::sum_squares);
using scale_inplace = decltype(&fast::scale_inplace);
using adamw_update = decltype(&fast::adamw_update);
using exp_n = decltype(&fast::exp_n);
using erf_n = decltype(&fast::erf_n);
}  // namespace fn

struct Table {
  const char* name;
  fn::encoder_forward encoder_forward;
  fn::encoder_backward encoder_backward;
  fn::layernorm_forward layernorm_forward;
  fn::layernorm_backward layernorm_backward;
  fn::matmul_forward matmul_forward;
  fn::matmul_backward matmul_backward;
  fn::attention_forward attention_forward;
  fn::attention_forward_infer_scratch attention_forward_infer_scratch;
  fn::attention_forward_infer attention_forward_infer;
  fn::attention_backward_scratch attention_backward_scratch;
  fn::attention_backward attention_backward;
  fn::attention_decode attention_decode;
  fn::gelu_forward gelu_forward;
  fn::gelu_backward gelu_backward;
  fn::residual_forward residual_forward;
  fn::residual_backward residual_backward;
  fn::crossentropy_forward crossentropy_forward;
  fn::crossentropy_backward crossentropy_backward;
  fn::sum_squares sum_squares;
  fn::scale_inplace scale_inplace;
  fn::adamw_update adamw_update;
  fn::exp_n exp_n;
  fn::erf_n erf_n;
};

// The tables this build compiled (each defined in its kernels_fast_<isa>.cpp).
#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
namespace avx512 { const Table& table(); }
namespace avx2 { const Table& table(); }
namespace sse2 { const Table& table(); }
#endif
#if defined(AP_WASM_SIMD128)
namespace simd128 { const Table& table(); }
#endif
namespace scalar { const Table& table(); }

}  // namespace ap::kernels::fast
