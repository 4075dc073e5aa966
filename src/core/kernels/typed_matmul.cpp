// typed_matmul.cpp — the Linear layer and the embedding lookup on a typed matrix (typed_matmul.h),
// through quant.h's products and dequantize_row.
#include "core/kernels/typed_matmul.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/kernels/bf16_gemm.h"
#include "core/kernels/kernels.h"

namespace ap::kernels {

namespace {

size_t sz(int64_t v) { return static_cast<size_t>(v); }

// A prompt's rows (N ≥ kChunkedRows) on one part (rows [row, row + p.rows) of out's OC columns,
// out's rows ldo apart): the weight rows dequantized a chunk at a time (chunk_rows; quant::dequantize of the tier in use,
// the reference's bits either way) into this thread's buffer, then the float kernel of the tier in
// use on the chunk (its blocked product, not one dot product per output) writing the chunk's
// columns in place (matmul_forward_into). Each output's sum is the same whatever the chunk
// (kernels.h's matmul: the bits depend on neither the tile nor the columns).
constexpr int kChunkedRows = 8;
constexpr int kChunkFloats = 1 << 16;

// A chunk's rows: about kChunkFloats floats, in whole panels of the fast GEMM (16 columns in SIMD128
// and AVX2, 8 in SSE2, 4 scalar: a multiple of 16, rounded down; 64 in AVX-512: a multiple of 64,
// the nearest). A chunk of 113 rows (576 columns) left a last SIMD128 panel of 1 column of 16
// computed, ~11 % of the product's multiply-adds thrown away; on AVX-512 112 rows left 48 of 64.
// (AVX-512's rounding measured natively on Q8_0's prompt; 64 in wasm measured no faster than 16.)
int chunk_rows(const Kernels& k, int OC, int C) {
  const int fit = std::min(OC, kChunkFloats / C);
  if (std::strcmp(k.name, "avx512") == 0) return std::max(64, (fit + 32) / 64 * 64);
  return std::max(16, fit / 16 * 16);
}

void chunked(float* out, int ldo, const float* inp, const TypedPart& p, int row, int N, int C, int OC) {
  thread_local std::vector<float> deq;
  const Kernels& k = active();
  const int R = chunk_rows(k, OC, C);
  deq.resize(sz(int64_t(R) * C));
  const uint64_t rb = quant::row_bytes(p.type, static_cast<uint64_t>(C));
  for (int r0 = 0; r0 < p.rows; r0 += R) {
    const int n = std::min(R, p.rows - r0);
    for (int r = 0; r < n; ++r)
      quant::dequantize(p.type, p.data + rb * static_cast<uint64_t>(r0 + r), deq.data() + sz(int64_t(r) * C), C);
    k.matmul_forward_into(out + row + r0, ldo, inp, deq.data(), nullptr, N, C, n);
  }
}

// The state of bf16::enabled(): 1 on, 0 off, −1 not yet read from the environment.
std::atomic<int> bf16_state{-1};

// A BF16 part of a prompt's product takes bf16_gemm.h's product in the fast tier on avx512 when
// bf16::enabled().
bool bf16_product(const TypedPart& p, int N) {
  return p.type == quant::Type::BF16 && N >= bf16::kRows && std::strcmp(active().name, "avx512") == 0 &&
         bf16::enabled();
}

}  // namespace

bool bf16::enabled() {
  if (bf16_state < 0) {
    const char* env = std::getenv("AP_BF16_GEMM");
    bf16_state = (!(env && std::strcmp(env, "0") == 0) && available()) ? 1 : 0;
  }
  return bf16_state == 1;
}
void bf16::set_enabled(bool on) { bf16_state = on && available() ? 1 : 0; }

#if defined(AP_BF16_GEMM)
bool bf16::available() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512bf16");
}
#else
bool bf16::available() { return false; }
void bf16::gemm(float*, int, const float*, const uint16_t*, int, int, int) {}
#endif

int64_t TypedMatrix::bytes() const {
  int64_t n = 0;
  for (const TypedPart& p : parts)
    n += static_cast<int64_t>(quant::row_bytes(p.type, static_cast<uint64_t>(cols))) * p.rows;
  return n;
}

void typed_matmul_forward(float* out, const float* inp, const TypedMatrix& w, const float* bias, int N, int C, int OC) {
  typed_matmul_forward_into(out, OC, inp, w, bias, N, C, OC);
}

void typed_matmul_forward_into(float* out, int ldo, const float* inp, const TypedMatrix& w, const float* bias, int N,
                               int C, int OC) {
  if (w.parts.size() == 1 && w.parts[0].type == quant::Type::F32) {  // the float32 model's own kernel
    active().matmul_forward_into(out, ldo, inp, reinterpret_cast<const float*>(w.parts[0].data), bias, N, C, OC);
    return;
  }
  if (N >= kChunkedRows) {
    int row = 0;
    for (const TypedPart& p : w.parts) {
      if (bf16_product(p, N)) bf16::gemm(out + row, ldo, inp, reinterpret_cast<const uint16_t*>(p.data), N, C, p.rows);
      else chunked(out, ldo, inp, p, row, N, C, OC);
      row += p.rows;
    }
  } else if (w.parts.size() == 1 && (N == 1 || ldo == OC)) {
    quant::matmul(out, inp, w.parts[0].data, w.parts[0].type, N, OC, C);
  } else {  // part by part: an F32 part on the float kernel (as alone), the others a row at a time
    int row = 0;
    for (const TypedPart& p : w.parts) {
      if (p.type == quant::Type::F32)
        active().matmul_forward_into(out + row, ldo, inp, reinterpret_cast<const float*>(p.data), nullptr, N, C, p.rows);
      else
        for (int n = 0; n < N; ++n)
          quant::matmul(out + sz(int64_t(n) * ldo + row), inp + sz(int64_t(n) * C), p.data, p.type, 1, p.rows, C);
      row += p.rows;
    }
  }
  if (!bias) return;
  for (int n = 0; n < N; ++n) {
    float* o = out + sz(int64_t(n) * ldo);
    for (int oc = 0; oc < OC; ++oc) o[oc] += bias[oc];
  }
}

void typed_rows(float* out, const TypedMatrix& w, const int* ids, int n, const float* pos) {
  const int C = w.cols;
  for (int i = 0; i < n; ++i) {
    int id = ids[i];
    const TypedPart* part = w.parts.data();
    while (id >= part->rows) id -= (part++)->rows;  // ids are checked against the rows (GPT::check_ids)
    const uint64_t rb = quant::row_bytes(part->type, static_cast<uint64_t>(C));
    float* o = out + sz(int64_t(i) * C);
    quant::dequantize_row(part->type, part->data + rb * static_cast<uint64_t>(id), o, C);
    if (pos)
      for (int c = 0; c < C; ++c) o[c] += pos[sz(int64_t(i) * C + c)];
  }
}

}  // namespace ap::kernels
