// quant.h — weights kept in ggml's storage types (llama.cpp's GGUF files) and the products that read
// them directly: F32, F16, BF16, Q8_0, Q4_0, Q4_K and Q6_K. Each block layout is defined here once,
// as ggml-common.h defines it (a struct whose size is asserted); the arithmetic of a block lives in
// quant_blocks.inc, shared by the reference tier (quant_ref.cpp) and the fast tier (quant_fast_impl.h,
// compiled per instruction set by the kernels_fast_<isa>.cpp units), so that both dequantize to the
// same bits.
//
// A weight matrix W of N rows of K values is stored row after row, each row K / block(type) blocks.
// The products compute y[m][n] = Σ_k x[m][k] · W[n][k] (y = x·Wᵀ, x of M rows of K floats; M = 1 is
// generation's matrix-vector product, M > 1 a prompt's matrix-matrix product):
//   matmul_ref  reference tier: each row of W dequantized, then one sum per output in the order
//               k = 0, 1, …, K−1 (no FMA): the same bits natively and in wasm.
//   matmul      the tier in use (kernels::tier()): the reference, or the fast kernel of the instruction
//               set in use (kernels_fast.h), which sums in vector lanes with fused multiply-adds and
//               agrees with the reference within 2·(K+8)·u·Σ_k |x[m][k]·W[n][k]| (u = 2⁻²⁴), as
//               kernels.h's matmul does: the same dequantized values summed in another order —
//               except Q8_0 in WebAssembly SIMD128, which first rounds each block of 32 of x to
//               16-bit integers (x̂ = i·e, e = max|x| / 32767 over the block) and sums in integers:
//               on top of that bound, at most Σ_k |w_k|·0.51·e_{b(k)} (quant_fast_impl.h).
// Limits: the host is little-endian (x86-64, wasm), as the files are; W starts at an address
// aligned to 4 bytes (F32 rows are read in place as floats; the other rows need 2, and every block's
// size is even; GGUF aligns its tensors to 32 bytes); K is a multiple of the type's block. No function allocates but matmul_ref (one row of K floats).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ap::quant {

// ggml's numbers for the types we run (ggml.h's enum ggml_type).
enum class Type : uint32_t { F32 = 0, F16 = 1, Q4_0 = 2, Q8_0 = 8, Q4_K = 12, Q6_K = 14, BF16 = 30 };

constexpr int kQK8_0 = 32;  // values in a Q8_0 block
constexpr int kQK4_0 = 32;  // values in a Q4_0 block
constexpr int kQK_K = 256;  // values in a K-quant super-block

// 32 values: x[i] = d · qs[i].
struct BlockQ8_0 {
  uint16_t d;  // scale, IEEE half
  int8_t qs[kQK8_0];
};
static_assert(sizeof(BlockQ8_0) == 2 + kQK8_0, "Q8_0 block is 34 bytes");

// 32 values: x[j] = d · ((qs[j] & 15) − 8), x[j + 16] = d · ((qs[j] >> 4) − 8), j < 16.
struct BlockQ4_0 {
  uint16_t d;  // scale, IEEE half
  uint8_t qs[kQK4_0 / 2];
};
static_assert(sizeof(BlockQ4_0) == 2 + kQK4_0 / 2, "Q4_0 block is 18 bytes");

// 256 values in 8 sub-blocks of 32; sub-block s has a 6-bit scale sc[s] and a 6-bit min m[s]
// packed in `scales` (quant_blocks.inc: scale_min_k4), and x = d·sc[s] · q − dmin·m[s], q the 4-bit
// quant: sub-blocks 2i and 2i+1 take the low and the high nibbles of qs[32i … 32i+31].
struct BlockQ4_K {
  uint16_t d;     // super-block scale of the scales, IEEE half
  uint16_t dmin;  // super-block scale of the mins, IEEE half
  uint8_t scales[12];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 4 + 12 + kQK_K / 2, "Q4_K block is 144 bytes");

// 256 values in 16 sub-blocks of 16, each with a signed 8-bit scale; x = d · scales[s] · (q − 32),
// q 6 bits: the low 4 in ql, the high 2 in qh (quant_blocks.inc: dequantize_q6_K gives the order).
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;  // super-block scale, IEEE half
};
static_assert(sizeof(BlockQ6_K) == kQK_K / 2 + kQK_K / 4 + kQK_K / 16 + 2, "Q6_K block is 210 bytes");

// A ggml type: its number, its name as ggml writes it, values and bytes per block (the types we run
// here; gguf.h's GgmlType is this struct for every type a GGUF file may hold).
struct TypeInfo {
  Type type;
  const char* name;
  int block;
  int bytes;
};
// The type of ggml's number, or nullptr if we do not run it.
const TypeInfo* type_info(uint32_t ggml_type);
const TypeInfo& type_info(Type t);
// Bytes of a row of k values (k a multiple of the block).
uint64_t row_bytes(Type t, uint64_t k);

// IEEE half and bfloat16 to float (exact), and back (round to nearest, ties to even; NaN stays NaN).
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);

// One row of k values, dequantized (reference); dequantize: the same bits by the tier in use.
void dequantize_row(Type t, const void* row, float* out, int64_t k);
void dequantize(Type t, const void* row, float* out, int64_t k);

// ggml's reference quantizers (quantize_row_*_ref), to write test files: Q8_0 d = max|x| / 127,
// q = round(x / d); Q4_0 d = −m / 8 with m the value of largest magnitude, q = min(15, ⌊x/d + 8.5⌋).
void quantize_row_q8_0(const float* x, void* out, int64_t k);
void quantize_row_q4_0(const float* x, void* out, int64_t k);

// y (M×N) = x (M×K) · Wᵀ, W of type t with N rows of K values (see above).
void matmul_ref(float* y, const float* x, const void* w, Type t, int M, int N, int K);
void matmul(float* y, const float* x, const void* w, Type t, int M, int N, int K);

// The fast tier's kernels of one instruction set (quant_fast_impl.h).
struct FastTable {
  const char* name;  // as kernels_fast.h names the instruction set
  void (*matmul)(float* y, const float* x, const void* w, Type t, int M, int N, int K);
  // dequantize_row's values, bit for bit (Q4_K and Q6_K made in vector lanes).
  void (*dequantize)(Type t, const void* row, float* out, int64_t k);
};
// The table of the instruction set in use (kernels::fast::isa_name()).
const FastTable& fast_current();

}  // namespace ap::quant
