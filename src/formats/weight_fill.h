// weight_fill.h — a model's weights read tensor by tensor from a file's bytes straight into its
// parameters: the last step of opening a model trained elsewhere (import.h plans the reads from
// the file's header, zip directory and pickle; this fills them), so that the whole file never sits
// in memory beside the model.
//
// A WeightRead is one range of the file (a tensor's bytes in a safetensors file; a storage record
// of a ckpt.pt, whole, for its CRC-32) and the tensor it holds: a view of its elements (offset,
// shape, strides, as PyTorch's), float32, bfloat16 or float16 read as float32, Conv1D's (in, out)
// written as (out, in), or compared with values already written (a tied lm_head). The caller feeds
// the reads' bytes in order, in slices of any size (feed()); a contiguous view is converted as the
// bytes come, in bulk (float32 copied into place, bfloat16 widened, then checked finite in one
// pass), any other (a transposed Conv1D weight, a strided view) once its read is whole: straight
// from the slice when the read lies whole in one, else from a buffer of that read's size (one
// tensor's bytes, not the file's); a Conv1D weight is transposed in blocks of 32 × 32.
//
// Refused, each naming the file and the tensor (InputError, field the file's name): a value that is
// not finite (with its row-major index), a record whose CRC-32 does not match, a compared tensor
// that differs, bytes past the last read or too few at finish().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ap {

struct WeightRead {
  std::string tensor;           // for messages (the file's own name for it)
  std::string record;           // a zip record's name: its CRC-32 is checked; "" for none
  uint32_t crc = 0;
  uint64_t at = 0, size = 0;    // the bytes of the file
  std::string dtype;            // "float32", "bfloat16" or "float16"
  int64_t offset = 0;           // the view's first element in those bytes
  std::vector<int64_t> shape, stride;  // the view (row-major strides: contiguous)
  bool transpose = false;       // shape is (in, out): written as (out, in)
  int64_t dst = 0;              // the values' place in the parameters
  std::string differs;          // non-empty: compare with the parameters at dst; the message if they differ
};

// Row-major strides of a shape.
std::vector<int64_t> row_major(const std::vector<int64_t>& shape);

// float32 of one little-endian element of dtype ("float32", "bfloat16", "float16").
float read_element(const char* p, const std::string& dtype);

class WeightFill {
 public:
  // params: the model's parameters (the caller keeps them alive); name: the file's, for messages.
  WeightFill(std::vector<WeightRead> reads, float* params, std::string name);
  // The next n bytes of the reads, in order.
  void feed(const char* p, uint64_t n);
  // Bytes still to feed; the reads (for the caller to read them).
  uint64_t remaining() const { return total_ - fed_; }
  uint64_t total() const { return total_; }
  const std::vector<WeightRead>& reads() const { return reads_; }
  // Throws unless every read is whole.
  void finish() const;

 private:
  void begin_read();                          // the next read with bytes
  void feed_read(const char* p, uint64_t n);  // within the current read
  void end_read();                            // the current read is whole
  void gather(const char* p);                 // the current read (not direct), whole at p, into place
  void put(int64_t index, float v);           // the view's element `index` (row-major)

  std::vector<WeightRead> reads_;
  float* params_;
  std::string name_;
  uint64_t total_ = 0, fed_ = 0;
  size_t cur_ = 0;      // the read being fed
  uint64_t pos_ = 0;    // bytes of it fed
  uint32_t crc_ = 0;
  bool direct_ = true;  // its view is contiguous: converted as it comes
  std::string carry_;   // an element split between two slices
  std::string stage_;   // a read gathered whole (not direct)
};

}  // namespace ap
