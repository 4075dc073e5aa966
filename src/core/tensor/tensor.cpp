// tensor.cpp — Tensor construction, shape checks and element access helpers (see tensor.h).
#include "core/tensor/tensor.h"

#include <limits>

namespace ap {

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t shape_numel(const Shape& shape) {
  if (shape.size() > static_cast<size_t>(kMaxDims))
    throw ShapeError("a tensor has at most " + std::to_string(kMaxDims) + " dimensions, got " +
                     shape_str(shape));
  int64_t n = 1;
  for (int d : shape) {
    if (d < 0) throw ShapeError("negative dimension in shape " + shape_str(shape));
    if (d != 0 && n > std::numeric_limits<int32_t>::max() / d)
      throw ShapeError("shape " + shape_str(shape) + " has too many elements");
    n *= d;
  }
  return n;
}

Tensor::Tensor(Shape s, float fill) : shape(std::move(s)) {
  data.assign(static_cast<size_t>(shape_numel(shape)), fill);
}

Tensor::Tensor(Shape s, std::vector<float> d) : shape(std::move(s)), data(std::move(d)) {
  const int64_t n = shape_numel(shape);
  if (n != static_cast<int64_t>(data.size()))
    throw ShapeError("shape " + shape_str(shape) + " needs " + std::to_string(n) +
                     " values, got " + std::to_string(data.size()));
}

Tensor Tensor::from_rows(const std::vector<std::vector<float>>& rows) {
  const int r = static_cast<int>(rows.size());
  const int c = r ? static_cast<int>(rows[0].size()) : 0;
  std::vector<float> d;
  d.reserve(static_cast<size_t>(r) * c);
  for (int i = 0; i < r; ++i) {
    if (static_cast<int>(rows[i].size()) != c)
      throw ShapeError("row " + std::to_string(i + 1) + " has " + std::to_string(rows[i].size()) +
                       " values but row 1 has " + std::to_string(c));
    d.insert(d.end(), rows[i].begin(), rows[i].end());
  }
  return Tensor({r, c}, std::move(d));
}

int Tensor::size(int d) const {
  const int n = dim();
  const int k = d < 0 ? d + n : d;
  if (k < 0 || k >= n)
    throw ShapeError("dimension " + std::to_string(d) + " out of range for shape " + shape_str(shape));
  return shape[k];
}

std::vector<std::vector<float>> Tensor::rows() const {
  if (dim() != 2) throw ShapeError("rows() needs a 2-D tensor, got shape " + shape_str(shape));
  std::vector<std::vector<float>> out(shape[0]);
  for (int i = 0; i < shape[0]; ++i)
    out[i].assign(data.begin() + static_cast<size_t>(i) * shape[1],
                  data.begin() + static_cast<size_t>(i + 1) * shape[1]);
  return out;
}

Tensor Tensor::slice0(int index) const {
  if (dim() < 1 || index < 0 || index >= shape[0])
    throw ShapeError("slice0(" + std::to_string(index) + ") out of range for shape " + shape_str(shape));
  Shape s(shape.begin() + 1, shape.end());
  const size_t n = static_cast<size_t>(shape_numel(s));
  return Tensor(s, std::vector<float>(data.begin() + index * n, data.begin() + (index + 1) * n));
}

}  // namespace ap
