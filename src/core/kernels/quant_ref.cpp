// quant_ref.cpp — quant.h's reference tier (dequantization, the quantizers of Q8_0 and Q4_0, the
// fixed-order product) and the tier switch of its products (the reference, or the fast table of the
// instruction set kernels_fast.h has in use).
#include <cmath>
#include <cstring>
#include <vector>

#include "core/kernels/kernels.h"
#include "core/kernels/kernels_fast.h"
#include "core/kernels/quant.h"
#include "core/kernels/quant_blocks.inc"

namespace ap::quant {

namespace {

const TypeInfo kTypes[] = {
    {Type::F32, "F32", 1, 4},
    {Type::F16, "F16", 1, 2},
    {Type::BF16, "BF16", 1, 2},
    {Type::Q8_0, "Q8_0", kQK8_0, static_cast<int>(sizeof(BlockQ8_0))},
    {Type::Q4_0, "Q4_0", kQK4_0, static_cast<int>(sizeof(BlockQ4_0))},
    {Type::Q4_K, "Q4_K", kQK_K, static_cast<int>(sizeof(BlockQ4_K))},
    {Type::Q6_K, "Q6_K", kQK_K, static_cast<int>(sizeof(BlockQ6_K))},
};

}  // namespace

const TypeInfo* type_info(uint32_t ggml_type) {
  for (const TypeInfo& t : kTypes)
    if (static_cast<uint32_t>(t.type) == ggml_type) return &t;
  return nullptr;
}

const TypeInfo& type_info(Type t) { return *type_info(static_cast<uint32_t>(t)); }

uint64_t row_bytes(Type t, uint64_t k) {
  const TypeInfo& i = type_info(t);
  return k / static_cast<uint64_t>(i.block) * static_cast<uint64_t>(i.bytes);
}

float f16_to_f32(uint16_t h) { return blocks::f16(h); }
float bf16_to_f32(uint16_t h) { return blocks::bf16(h); }

uint16_t f32_to_f16(float f) { return float_to_f16(f); }  // core/base/half_float.h
uint16_t f32_to_bf16(float f) { return float_to_bf16(f); }

void dequantize_row(Type t, const void* row, float* out, int64_t k) { blocks::row(t, row, out, k); }

void quantize_row_q8_0(const float* x, void* out, int64_t k) {
  BlockQ8_0* y = static_cast<BlockQ8_0*>(out);
  for (int64_t i = 0; i < k / kQK8_0; ++i, x += kQK8_0) {
    float amax = 0.0f;
    for (int j = 0; j < kQK8_0; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = f32_to_f16(d);
    for (int j = 0; j < kQK8_0; ++j) y[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
  }
}

void quantize_row_q4_0(const float* x, void* out, int64_t k) {
  BlockQ4_0* y = static_cast<BlockQ4_0*>(out);
  for (int64_t i = 0; i < k / kQK4_0; ++i, x += kQK4_0) {
    float amax = 0.0f, max = 0.0f;  // the value of largest magnitude, with its sign
    for (int j = 0; j < kQK4_0; ++j)
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = f32_to_f16(d);
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      const int q0 = static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f));
      const int q1 = static_cast<int>(static_cast<int8_t>(x[j + kQK4_0 / 2] * id + 8.5f));
      y[i].qs[j] = static_cast<uint8_t>((q0 < 15 ? q0 : 15) | ((q1 < 15 ? q1 : 15) << 4));
    }
  }
}

void matmul_ref(float* y, const float* x, const void* w, Type t, int M, int N, int K) {
  std::vector<float> row(static_cast<size_t>(K));
  const uint64_t rb = row_bytes(t, static_cast<uint64_t>(K));
  for (int n = 0; n < N; ++n) {
    blocks::row(t, static_cast<const char*>(w) + rb * static_cast<uint64_t>(n), row.data(), K);
    for (int m = 0; m < M; ++m) {
      const float* xm = x + static_cast<size_t>(m) * static_cast<size_t>(K);
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s += xm[k] * row[static_cast<size_t>(k)];
      y[static_cast<size_t>(m) * static_cast<size_t>(N) + static_cast<size_t>(n)] = s;
    }
  }
}

// ---------------------------------------------------------------- the fast tier's tables
namespace fast {
#define AP_QUANT_DECLARE_TABLE(isa) namespace isa { extern const FastTable table; }
AP_FAST_ISAS(AP_QUANT_DECLARE_TABLE)
#undef AP_QUANT_DECLARE_TABLE

#define AP_QUANT_TABLE(isa) &isa::table,
const FastTable* const kTables[] = {AP_FAST_ISAS(AP_QUANT_TABLE)};
#undef AP_QUANT_TABLE
}  // namespace fast

const FastTable& fast_current() {
  const char* isa = kernels::fast::isa_name();
  for (const FastTable* t : fast::kTables)
    if (std::strcmp(t->name, isa) == 0) return *t;
  return fast::scalar::table;
}

void dequantize(Type t, const void* row, float* out, int64_t k) {
  if (kernels::tier() == kernels::Tier::reference) blocks::row(t, row, out, k);
  else fast_current().dequantize(t, row, out, k);
}

void matmul(float* y, const float* x, const void* w, Type t, int M, int N, int K) {
  if (kernels::tier() == kernels::Tier::reference) matmul_ref(y, x, w, t, M, N, K);
  else fast_current().matmul(y, x, w, t, M, N, K);
}

}  // namespace ap::quant
