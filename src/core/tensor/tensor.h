// tensor.h — the core's one data type: a dense float32 tensor, row-major, 0 to 4 dimensions.
//
// A Tensor owns its numbers (std::vector<float>) and its shape; there are no strides and no
// views, so every op reads and writes contiguous memory and the kernels in ops.h can take raw
// pointers with sizes last (llm.c style). Copying a Tensor copies its data.
// Limits: at most kMaxDims dimensions; each dimension at least 0 and the element count must fit
// in an int64. Errors are ShapeError (a std::invalid_argument) with the shapes in the message.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ap {

constexpr int kMaxDims = 4;

using Shape = std::vector<int>;

// Thrown when shapes do not fit together; the message names the operands and their shapes.
struct ShapeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// "[2, 3]" — how shapes appear in every message.
std::string shape_str(const Shape& shape);
// Number of elements of a shape (1 for a scalar shape {}); throws ShapeError on a bad shape.
int64_t shape_numel(const Shape& shape);

struct Tensor {
  Shape shape;
  std::vector<float> data;

  Tensor() = default;
  explicit Tensor(Shape shape, float fill = 0.0f);
  Tensor(Shape shape, std::vector<float> data);

  // Builds a 2-D tensor from rows; throws ShapeError if the rows are ragged.
  static Tensor from_rows(const std::vector<std::vector<float>>& rows);

  int dim() const { return static_cast<int>(shape.size()); }
  // Size of dimension d; negative d counts from the end (-1 is the last).
  int size(int d) const;
  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  bool empty() const { return data.empty() && shape.empty(); }

  float* ptr() { return data.data(); }
  const float* ptr() const { return data.data(); }

  float& operator()(int i, int j) { return data[static_cast<size_t>(i) * shape[1] + j]; }
  float operator()(int i, int j) const { return data[static_cast<size_t>(i) * shape[1] + j]; }
  float& operator()(int b, int i, int j) {
    return data[(static_cast<size_t>(b) * shape[1] + i) * shape[2] + j];
  }
  float operator()(int b, int i, int j) const {
    return data[(static_cast<size_t>(b) * shape[1] + i) * shape[2] + j];
  }

  // Rows of a 2-D tensor as nested vectors (for tests, JSON and printing).
  std::vector<std::vector<float>> rows() const;
  // Slice [index] of the first dimension, as a tensor of one dimension fewer.
  Tensor slice0(int index) const;
};

}  // namespace ap
