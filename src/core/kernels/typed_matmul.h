// typed_matmul.h — the GPT's Linear layers and embedding lookup on a weight matrix kept in its
// file's storage type (quant.h: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K), as an opened model holds
// its big matrices (gpt.h, "typed weights"): the products read the 16-bit or quantized rows and
// convert them on the fly, through quant.h's matmul (the reference tier: fixed order, the same bits
// natively and in wasm; the fast tier: the instruction set in use, within quant.h's tolerance).
//
// An F32 part runs kernels.h's matmul_forward of the tier in use, whatever stands beside it: the
// same bits as the float32 model (an F32 file opens as it always did).
// A TypedMatrix is rows × cols values stacked from parts, each part whole rows of one type (Q, K
// and V of a GGUF file may differ: a Q4_K_M file keeps some V in Q6_K). Fewer than 8 input rows
// (generation's one): quant.h's matmul, each weight row converted as it is read — one product over
// the M rows for one part, one per input row and part for several. 8 rows or more (a prompt): the
// weight rows dequantized a chunk of ~64K floats at a time (quant::dequantize of the tier in use: the
// reference's bits, Q4_K and Q6_K made in vector lanes in the fast tier) and multiplied by kernels.h's
// matmul_forward of the tier in use (its blocked product): in the reference tier the same sums in
// the same order as quant::matmul_ref, so the same bits; in the fast tier within kernels.h's
// matmul bound — except a BF16 part in the fast tier on avx512 when the CPU has avx512_bf16
// (bf16_gemm.h, bf16::enabled()): the activations rounded to bf16 as PyTorch's BF16 Linear does,
// within bf16_gemm.h's bound. Each output is computed the same way whatever rows of w a call
// covers, so a split of the rows (GPT::set_threads) gives the same bits.
// Limits: cols a multiple of each part's block; the parts' data aligned to 4 bytes (quant.h); a
// prompt's product keeps a buffer per thread (the dequantized chunk, grown once).
#pragma once

#include <cstdint>
#include <vector>

#include "core/kernels/quant.h"

namespace ap::kernels {

struct TypedPart {
  quant::Type type;
  const char* data;  // rows × row_bytes(type, cols) bytes
  int rows;
};

struct TypedMatrix {
  std::vector<TypedPart> parts;  // stacked in row order
  int rows = 0, cols = 0;
  bool empty() const { return parts.empty(); }
  // The bytes its parts hold.
  int64_t bytes() const;
};

// out (N, OC) = inp (N, C) · wᵀ (+ bias (OC)), w of OC rows of C values: kernels.h's matmul_forward
// on a typed matrix (the sum first, then the bias, as there).
void typed_matmul_forward(float* out, const float* inp, const TypedMatrix& w, const float* bias, int N, int C, int OC);
// The same with out's rows ldo ≥ OC floats apart (a run of columns of a wider output, written in
// place, as GPT::set_threads' split writes them): the same bits as typed_matmul_forward.
void typed_matmul_forward_into(float* out, int ldo, const float* inp, const TypedMatrix& w, const float* bias, int N,
                               int C, int OC);
// out (n, C) = w's rows ids[0 … n−1], dequantized (an embedding lookup), plus pos (n, C) if given.
void typed_rows(float* out, const TypedMatrix& w, const int* ids, int n, const float* pos);

}  // namespace ap::kernels
