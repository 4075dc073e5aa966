// weight_fill.cpp — WeightFill (weight_fill.h): the reads' bytes into the parameters.
#include "formats/weight_fill.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/base/half_float.h"
#include "core/base/input_error.h"
#include "core/base/number_text.h"
#include "formats/zip.h"

namespace ap {

namespace {

[[noreturn]] void fail(const std::string& name, const std::string& message) {
  throw InputError(name + ": " + message, name);
}

enum class DT { f32, bf16, f16 };

DT dt_of(const std::string& dtype) { return dtype == "float32" ? DT::f32 : dtype == "bfloat16" ? DT::bf16 : DT::f16; }
uint64_t dt_size(DT d) { return d == DT::f32 ? 4 : 2; }

// Little-endian, as torch.save and safetensors write on every host this project runs on.
float element(const char* p, DT d) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  if (d == DT::f32) {
    const uint32_t b = uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 | uint32_t(u[3]) << 24;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  const uint16_t h = static_cast<uint16_t>(u[0] | u[1] << 8);
  return d == DT::bf16 ? bf16_to_float(h) : f16_to_float(h);
}

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// out[0, n) = the n elements of dtype d from p: float32 copied as it is, bfloat16 widened by a
// shift, float16 converted (its subnormals, infinities and NaN included).
void convert(float* out, const char* p, int64_t n, DT d) {
  if (d == DT::f32) {
    std::memcpy(out, p, static_cast<size_t>(n) * 4);  // little-endian, as the host (see element())
  } else if (d == DT::bf16) {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = bf16_to_float(h);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = element(p + 2 * i, d);
  }
}

// The index of the first value of v[0, n) that is not finite (all exponent bits set), or -1: one
// branch-free pass (a min over the exponent bits, vectorised by the compiler) per block of 4,096,
// then the element itself looked for only in a block that has one.
int64_t first_not_finite(const float* v, int64_t n) {
  constexpr uint32_t kExp = 0x7F800000u;
  auto bits = [v](int64_t i) {
    uint32_t u;
    std::memcpy(&u, v + i, 4);
    return u;
  };
  for (int64_t b = 0; b < n; b += 4096) {
    const int64_t e = std::min<int64_t>(n, b + 4096);
    uint32_t lo = ~0u;
    for (int64_t i = b; i < e; ++i) lo = std::min(lo, (bits(i) & kExp) ^ kExp);  // 0 for Inf and NaN
    if (lo != 0) continue;
    for (int64_t i = b; i < e; ++i)
      if ((bits(i) & kExp) == kExp) return i;
  }
  return -1;
}

// A Conv1D weight, (in, out) row-major at p, written as (out, in) at dst, in blocks of 32 × 32 so
// that both sides stay in cache.
template <DT d>
void transpose_into(float* dst, const char* p, int64_t in, int64_t out) {
  constexpr int64_t es = d == DT::f32 ? 4 : 2, B = 32;
  for (int64_t i0 = 0; i0 < in; i0 += B)
    for (int64_t o0 = 0; o0 < out; o0 += B) {
      const int64_t i1 = std::min(in, i0 + B), o1 = std::min(out, o0 + B);
      for (int64_t i = i0; i < i1; ++i) {
        const char* row = p + (i * out) * es;
        for (int64_t o = o0; o < o1; ++o) dst[o * in + i] = element(row + o * es, d);
      }
    }
}

}  // namespace

std::vector<int64_t> row_major(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

float read_element(const char* p, const std::string& dtype) { return element(p, dt_of(dtype)); }

WeightFill::WeightFill(std::vector<WeightRead> reads, float* params, std::string name)
    : reads_(std::move(reads)), params_(params), name_(std::move(name)) {
  for (const WeightRead& r : reads_) total_ += r.size;
  begin_read();
}

void WeightFill::begin_read() {
  while (cur_ < reads_.size() && reads_[cur_].size == 0) ++cur_;
  if (cur_ == reads_.size()) return;
  const WeightRead& r = reads_[cur_];
  direct_ = !r.transpose && r.stride == row_major(r.shape);
  if (!direct_) stage_.reserve(static_cast<size_t>(r.size));
}

void WeightFill::put(int64_t index, float v) {
  const WeightRead& r = reads_[cur_];
  if (!std::isfinite(v))
    fail(name_, "tensor " + r.tensor + " holds " + format_float(v) + " at element " + std::to_string(index) +
                    " (row-major): a model's weights must be finite");
  float& out = params_[r.dst + index];
  if (r.differs.empty()) out = v;
  else if (out != v) fail(name_, r.differs);
}

void WeightFill::feed(const char* p, uint64_t n) {
  if (n > remaining())
    fail(name_, "was given " + std::to_string(n) + " bytes to read, but only " + std::to_string(remaining()) +
                    " of its weights are left");
  while (n > 0) {
    const WeightRead& r = reads_[cur_];
    const uint64_t k = std::min(n, r.size - pos_);
    feed_read(p, k);
    p += k;
    n -= k;
    fed_ += k;
    if (pos_ == r.size) end_read();
  }
}

void WeightFill::feed_read(const char* p, uint64_t n) {
  const WeightRead& r = reads_[cur_];
  if (!r.record.empty()) crc_ = zip::crc32_update(crc_, p, n);
  if (!direct_) {
    if (pos_ == 0 && n == r.size) gather(p);  // the whole read in this slice: no copy
    else stage_.append(p, static_cast<size_t>(n));
    pos_ += n;
    return;
  }
  const DT d = dt_of(r.dtype);
  const uint64_t es = dt_size(d);
  const int64_t first = r.offset, last = r.offset + numel_of(r.shape);  // the view's elements [first, last)
  auto take = [&](const char* e, int64_t j) {
    if (j >= first && j < last) put(j - first, element(e, d));
  };
  // the elements of the view [lo, hi) at q: converted in bulk into their place, then checked
  auto bulk = [&](const char* q, int64_t lo, int64_t hi) {
    if (!r.differs.empty()) {  // compared with what is there (a tied tensor): one by one
      for (int64_t j = lo; j < hi; ++j) take(q + static_cast<uint64_t>(j - lo) * es, j);
      return;
    }
    float* out = params_ + r.dst + (lo - first);
    convert(out, q, hi - lo, d);
    const int64_t bad = first_not_finite(out, hi - lo);
    if (bad >= 0) put(lo - first + bad, out[bad]);
  };
  uint64_t i = 0;
  if (!carry_.empty()) {  // complete the element split by the last slice
    const uint64_t m = std::min<uint64_t>(es - carry_.size(), n);
    carry_.append(p, static_cast<size_t>(m));
    i = m;
    if (carry_.size() == es) {
      take(carry_.data(), static_cast<int64_t>((pos_ + m) / es) - 1);
      carry_.clear();
    }
  }
  const uint64_t whole = (n - i) / es;
  // only the elements inside the view
  const int64_t j0 = static_cast<int64_t>((pos_ + i) / es);
  const int64_t lo = std::max<int64_t>(j0, first), hi = std::min<int64_t>(j0 + static_cast<int64_t>(whole), last);
  if (lo < hi) bulk(p + i + static_cast<uint64_t>(lo - j0) * es, lo, hi);
  i += whole * es;
  if (i < n) carry_.append(p + i, static_cast<size_t>(n - i));
  pos_ += n;
}

void WeightFill::end_read() {
  const WeightRead& r = reads_[cur_];
  if (!r.record.empty() && crc_ != r.crc)
    fail(name_, "entry " + r.record + " (" + std::to_string(r.size) + " bytes at byte " + std::to_string(r.at) +
                    ") does not match its CRC-32: the file is damaged");
  if (!direct_ && !stage_.empty()) {
    gather(stage_.data());
    std::string().swap(stage_);
  }
  carry_.clear();
  crc_ = 0;
  pos_ = 0;
  ++cur_;
  begin_read();
}

void WeightFill::gather(const char* p) {
  const WeightRead& r = reads_[cur_];
  const DT d = dt_of(r.dtype);
  const uint64_t es = dt_size(d);
  const int64_t numel = numel_of(r.shape);
  if (r.transpose && r.differs.empty() && r.shape.size() == 2 && r.stride == row_major(r.shape)) {
    // Conv1D's (in, out), contiguous: transposed in blocks, then checked in one pass
    const int64_t in = r.shape[0], out = r.shape[1];
    float* dst = params_ + r.dst;
    const char* q = p + static_cast<uint64_t>(r.offset) * es;
    if (d == DT::f32) transpose_into<DT::f32>(dst, q, in, out);
    else if (d == DT::bf16) transpose_into<DT::bf16>(dst, q, in, out);
    else transpose_into<DT::f16>(dst, q, in, out);
    const int64_t bad = first_not_finite(dst, numel);
    if (bad >= 0) put((bad % in) * out + bad / in, dst[bad]);  // (named by its index in the file's order)
    return;
  }
  // any other view (strided, or compared with a tied tensor): element by element
  std::vector<int64_t> index(r.shape.size(), 0);
  const int64_t in = r.transpose ? r.shape[0] : 0, out = r.transpose ? r.shape[1] : 0;
  for (int64_t n = 0; n < numel; ++n) {
    int64_t at = r.offset;
    for (size_t k = 0; k < index.size(); ++k) at += index[k] * r.stride[k];
    const float v = element(p + static_cast<uint64_t>(at) * es, d);
    if (!std::isfinite(v)) put(n, v);  // (named by its index in the file's order)
    put(r.transpose ? (n % out) * in + n / out : n, v);
    for (size_t k = index.size(); k-- > 0;) {  // the next index, row-major
      if (++index[k] < r.shape[k]) break;
      index[k] = 0;
    }
  }
}

void WeightFill::finish() const {
  if (cur_ < reads_.size()) {
    const WeightRead& r = reads_[cur_];
    fail(name_, "the file ended before tensor " + r.tensor + " was read whole (" + std::to_string(pos_) + " of " +
                    std::to_string(r.size) + " bytes at byte " + std::to_string(r.at) + ")");
  }
}

}  // namespace ap
