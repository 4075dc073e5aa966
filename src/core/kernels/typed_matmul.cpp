// typed_matmul.cpp — the Linear layer and the embedding lookup on a typed matrix (typed_matmul.h),
// through quant.h's products and dequantize_row.
#include "core/kernels/typed_matmul.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/kernels/kernels.h"

namespace ap::kernels {

namespace {

size_t sz(int64_t v) { return static_cast<size_t>(v); }

// A prompt's rows (N ≥ kChunkedRows): the weight rows dequantized a chunk at a time (about
// kChunkFloats floats) into this thread's buffer, then the float kernel of the tier in use on the
// chunk (its blocked product, not one dot product per output), the chunk's columns put in place.
constexpr int kChunkedRows = 8;
constexpr int kChunkFloats = 1 << 16;

void chunked(float* out, const float* inp, const TypedMatrix& w, int N, int C, int OC) {
  thread_local std::vector<float> deq, part_out;
  const int R = std::max(16, std::min(OC, kChunkFloats / C));
  deq.resize(sz(int64_t(R) * C));
  part_out.resize(sz(int64_t(N) * R));
  const Kernels& k = active();
  int row = 0;
  for (const TypedPart& p : w.parts) {
    const uint64_t rb = quant::row_bytes(p.type, static_cast<uint64_t>(C));
    for (int r0 = 0; r0 < p.rows; r0 += R) {
      const int n = std::min(R, p.rows - r0);
      for (int r = 0; r < n; ++r)
        quant::dequantize_row(p.type, p.data + rb * static_cast<uint64_t>(r0 + r), deq.data() + sz(int64_t(r) * C), C);
      k.matmul_forward(part_out.data(), inp, deq.data(), nullptr, N, C, n);
      for (int i = 0; i < N; ++i)
        std::memcpy(out + sz(int64_t(i) * OC + row + r0), part_out.data() + sz(int64_t(i) * n), sz(n) * sizeof(float));
    }
    row += p.rows;
  }
}

}  // namespace

int64_t TypedMatrix::bytes() const {
  int64_t n = 0;
  for (const TypedPart& p : parts)
    n += static_cast<int64_t>(quant::row_bytes(p.type, static_cast<uint64_t>(cols))) * p.rows;
  return n;
}

void typed_matmul_forward(float* out, const float* inp, const TypedMatrix& w, const float* bias, int N, int C, int OC) {
  if (w.parts.size() == 1 && w.parts[0].type == quant::Type::F32) {  // the float32 model's own kernel
    active().matmul_forward(out, inp, reinterpret_cast<const float*>(w.parts[0].data), bias, N, C, OC);
    return;
  }
  if (N >= kChunkedRows) {
    chunked(out, inp, w, N, C, OC);
  } else if (w.parts.size() == 1) {
    quant::matmul(out, inp, w.parts[0].data, w.parts[0].type, N, OC, C);
  } else {
    for (int n = 0; n < N; ++n) {
      int row = 0;
      for (const TypedPart& p : w.parts) {
        quant::matmul(out + sz(int64_t(n) * OC + row), inp + sz(int64_t(n) * C), p.data, p.type, 1, p.rows, C);
        row += p.rows;
      }
    }
  }
  if (!bias) return;
  for (int n = 0; n < N; ++n) {
    float* o = out + sz(int64_t(n) * OC);
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
