// matrix_parse.h — reads a matrix as people type or paste it. Shared by the page, the CLI and the tests.
//
// Accepted:
//   - rows on lines or separated by ';', numbers separated by spaces, tabs or commas
//     ("1 0\n0 1", "1, 0; 0, 1", a spreadsheet's tab-separated copy);
//   - JSON / NumPy style brackets: "[[1, 0], [0, 1]]", NumPy's print "[[1. 0.]\n [0. 1.]]",
//     its repr "array([[1., 0.], [0., 1.]], dtype=float32)"; a single bracketed row "[1, 2]";
//   - the same brackets inside Python code as written or printed: np.array(…), numpy.asarray(…),
//     torch.tensor(…), PyTorch's print "tensor([[ 0.1000, -0.2000],\n        [ 0.3000,  0.4000]])"
//     (also after nn.Parameter's "Parameter containing:"), with keyword tails after the last ']'
//     (", dtype=torch.float32", ", requires_grad=True", ", grad_fn=<AddBackward0>", ", device='cuda:0'").
//     Other calls ("torch.randn(…)") are refused by name; a print shortened with '...' is refused
//     with the option that prints it whole.
// Numbers: decimal or exponent notation ("1", "-0.5", ".5", "1e-3", "+2", "7."), read as the
// nearest double and then rounded to float32 (number_text.h). NaN and ±Inf are refused (they are
// never a sensible input), as are numbers outside float32's range. Every error is a ParseError with a 1-based row and column (the
// column counts numbers, not characters; 0 when the error is not in a cell); an error outside the
// cells names the character at fault and where it is ("found 'x' at character 3").
// Limits: at most kMaxParseRows rows and kMaxParseCols columns.
#pragma once

#include <stdexcept>
#include <string>

#include "core/tensor/tensor.h"

namespace ap {

constexpr int kMaxParseRows = 1024;
constexpr int kMaxParseCols = 1024;

struct ParseError : std::invalid_argument {
  ParseError(const std::string& message, int row, int column)
      : std::invalid_argument(message), row(row), column(column) {}
  int row;     // 1-based; 0 if not about one row
  int column;  // 1-based; 0 if not about one cell
};

// Parses text into a 2-D tensor [rows, cols]. Throws ParseError.
Tensor parse_matrix(const std::string& text);

}  // namespace ap
