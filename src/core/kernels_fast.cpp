// kernels_fast.cpp — the fast tier's dispatch: picks one instruction set's table of kernels
// (kernels_fast.h) at the first call — the best the CPU runs, or AP_FAST_ISA's — and forwards every
// kernel to it. Also the per-thread packing workspace.
#include "kernels_fast.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace ap::kernels::fast {

float* workspace() {
  alignas(64) static thread_local float ws[kWorkspaceFloats];
  return ws;
}

namespace {

struct Entry {
  const char* name;
  const Table& (*table)();
  bool (*runs)();
};

bool always() { return true; }
#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
bool has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
}
bool has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

// Best first.
const Entry kEntries[] = {
#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
    {"avx512", avx512::table, has_avx512},
    {"avx2", avx2::table, has_avx2},
    {"sse2", sse2::table, always},
#endif
#if defined(AP_WASM_SIMD128)
    {"simd128", simd128::table, always},
#endif
    {"scalar", scalar::table, always},
};
constexpr size_t kCount = sizeof kEntries / sizeof kEntries[0];

const Table* by_name(const char* name) {
  for (const Entry& e : kEntries)
    if (std::strcmp(e.name, name) == 0 && e.runs()) return &e.table();
  return nullptr;
}

const Table* initial() {
  if (const char* env = std::getenv("AP_FAST_ISA"))
    if (const Table* t = by_name(env)) return t;
  for (const Entry& e : kEntries)
    if (e.runs()) return &e.table();
  return &scalar::table();
}

const Table*& current() {
  static const Table* t = initial();
  return t;
}

inline const Table& k() { return *current(); }

}  // namespace

const char* isa_name() { return k().name; }

const char* const* available_isas() {
  static const char* names[kCount + 1] = {};
  static const bool filled = [] {
    size_t n = 0;
    for (const Entry& e : kEntries)
      if (e.runs()) names[n++] = e.name;
    return true;
  }();
  (void)filled;
  return names;
}

bool set_isa(const char* name) {
  const Table* t = by_name(name);
  if (t) current() = t;
  return t != nullptr;
}

void encoder_forward(float* out, const int* ids, const float* wte, const float* wpe, int B, int T, int C) {
  k().encoder_forward(out, ids, wte, wpe, B, T, C);
}
void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* ids, int B, int T, int C) {
  k().encoder_backward(dwte, dwpe, dout, ids, B, T, C);
}
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N,
                       int C) {
  k().layernorm_forward(out, mean, rstd, inp, w, b, N, C);
}
void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                        const float* mean, const float* rstd, int N, int C) {
  k().layernorm_backward(dinp, dw, db, dout, inp, w, mean, rstd, N, C);
}
void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C, int OC) {
  k().matmul_forward(out, inp, weight, bias, N, C, OC);
}
void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC) {
  k().matmul_backward(dinp, dweight, dbias, dout, inp, weight, N, C, OC);
}
void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH, AttnOptions opt) {
  k().attention_forward(out, att, qkv, B, T, C, NH, opt);
}
// Scratch sizes: the largest any instruction set needs, so a buffer outlives set_isa().
size_t attention_forward_infer_scratch(int B, int T, int C, int NH) {
  size_t n = 0;
  for (const Entry& e : kEntries) n = std::max(n, e.table().attention_forward_infer_scratch(B, T, C, NH));
  return n;
}
void attention_forward_infer(float* out, float* scratch, const float* qkv, int B, int T, int C, int NH,
                             AttnOptions opt) {
  k().attention_forward_infer(out, scratch, qkv, B, T, C, NH, opt);
}
size_t attention_backward_scratch(int B, int T, int C, int NH) {
  size_t n = 0;
  for (const Entry& e : kEntries) n = std::max(n, e.table().attention_backward_scratch(B, T, C, NH));
  return n;
}
void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                        int T, int C, int NH, AttnOptions opt) {
  k().attention_backward(dqkv, scratch, dout, qkv, att, B, T, C, NH, opt);
}
void attention_decode(float* out, float* att, const float* q, const float* k_cache, const float* v_cache, int base,
                      int C, int NH, AttnOptions opt) {
  k().attention_decode(out, att, q, k_cache, v_cache, base, C, NH, opt);
}
void gelu_forward(float* out, const float* inp, int N) { k().gelu_forward(out, inp, N); }
void gelu_backward(float* dinp, const float* inp, const float* dout, int N) { k().gelu_backward(dinp, inp, dout, N); }
void residual_forward(float* out, const float* a, const float* b, int N) { k().residual_forward(out, a, b, N); }
void residual_backward(float* da, float* db, const float* dout, int N) { k().residual_backward(da, db, dout, N); }
void crossentropy_forward(float* losses, float* probs, const float* logits, const int* targets, int N, int V) {
  k().crossentropy_forward(losses, probs, logits, targets, N, V);
}
void crossentropy_backward(float* dlogits, const float* probs, const int* targets, float dloss, int N, int V) {
  k().crossentropy_backward(dlogits, probs, targets, dloss, N, V);
}
double sum_squares(const float* x, int64_t n) { return k().sum_squares(x, n); }
void scale_inplace(float* x, float s, int64_t n) { k().scale_inplace(x, s, n); }
void adamw_update(float* params, float* m, float* v, const float* grads, int64_t n, float lr, float beta1,
                  float beta2, float eps, float weight_decay, float bias1, float bias2) {
  k().adamw_update(params, m, v, grads, n, lr, beta1, beta2, eps, weight_decay, bias1, bias2);
}
void exp_n(float* out, const float* x, int n) { k().exp_n(out, x, n); }
void erf_n(float* out, const float* x, int n) { k().erf_n(out, x, n); }

}  // namespace ap::kernels::fast
