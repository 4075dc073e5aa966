// input_error.h — the one error type of bad input, everywhere in the core and the layers above:
// a std::invalid_argument whose message names the matrix, shape, tensor, file or byte at fault,
// with `field` the thing at fault (the page puts the message beside it) and, for one cell, its row
// and column. Every JSON answer turns it into {"ok":false,"error","field"}.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace ap {

struct InputError : std::invalid_argument {
  InputError(const std::string& message, std::string field, int row = 0, int column = 0)
      : std::invalid_argument(message), field(std::move(field)), row(row), column(column) {}
  std::string field;  // the matrix or option at fault: "x", "W_q", "K", "n_head", "base", …
  int row;            // 1-based, 0 if not about one cell
  int column;         // 1-based, 0 if not about one cell
};

}  // namespace ap
