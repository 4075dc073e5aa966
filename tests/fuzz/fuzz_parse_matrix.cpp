// fuzz_parse_matrix.cpp — libFuzzer target for the matrix parser: any bytes must either parse
// into a well-formed matrix (rows × cols numbers, all finite, within the limits) or throw
// ParseError with a row/column inside the input and a message that is valid UTF-8 (bytes that are
// not UTF-8 are named as \xHH, never carried); nothing else (no crash, no other exception).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/tensor/matrix_parse.h"
#include "core/base/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ap::Tensor m = ap::parse_matrix(text);
    if (m.dim() != 2 || m.shape[0] < 1 || m.shape[1] < 1 || m.shape[0] > ap::kMaxParseRows ||
        m.shape[1] > ap::kMaxParseCols || m.numel() != static_cast<int64_t>(m.shape[0]) * m.shape[1])
      std::abort();
    for (float v : m.data)
      if (!std::isfinite(v)) std::abort();
  } catch (const ap::ParseError& e) {
    if (e.row < 0 || e.column < 0 || e.row > ap::kMaxParseRows + 1 || e.column > ap::kMaxParseCols + 1)
      std::abort();
    if (!ap::utf8_valid(e.what())) std::abort();
  }
  return 0;
}
