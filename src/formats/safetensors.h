// safetensors.h — the safetensors container, for any set of named tensors with string metadata
// (the GPT's checkpoint, checkpoint.h, is one such file; this unit knows nothing of it).
//
// Layout (https://github.com/huggingface/safetensors, "format"): 8 bytes little-endian u64 N, then
// N bytes of a JSON header, then the raw little-endian data. The header maps "__metadata__"
// (optional) to a string→string map, and each tensor's name to {"dtype","shape":[…],
// "data_offsets":[begin,end]}: byte offsets into the data.
//
// Writing (write_file) is deterministic: "__metadata__" first, then the tensors in the order given,
// their data tiling the data in that order; the header padded with spaces to a multiple of 8; F32
// values written little-endian whatever the host.
//
// Reading is stricter than the format, so that a damaged file is never half-read: the header is
// read with the project's strict JSON reader (no repeated key, so no tensor given twice; valid
// UTF-8); every entry has exactly dtype, shape (at most 8 dimensions) and data_offsets; the dtype
// is one the format defines (kDTypes); the offsets hold exactly the shape's bytes; and the tensors
// tile the data in header order (no gap, no overlap, nothing after). It never allocates more than
// the header's size before the offsets are proven to tile the file. Every error is an InputError
// whose message names the byte, the tensor or the metadata key at fault; its field is the tensor's
// name, "__metadata__.<key>", or Limits::what for the file's structure.
//
// The reading comes in steps, so that a format built on it can check its own expectations in
// between (checkpoint.cpp reads its metadata after read_header, and checks each tensor's name,
// dtype and shape as read_tensors meets it):
//   read_header(bytes, limits)        the length prefix and the header, a JSON object
//   header.metadata()                 "__metadata__", or null; check_metadata_value for each value
//   read_tensors(bytes, header, expect)   every entry, in header order, with the caller's hooks
//   read_f32(bytes, header, tensor, out)  one F32 tensor's values
// read_file(bytes, limits) does all of it for a file of any tensors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "formats/byte_source.h"
#include "formats/json.h"

namespace ap::safetensors {

constexpr const char* kMetadataKey = "__metadata__";
constexpr size_t kMaxDims = 8;

// The dtypes the format defines and their sizes in bytes.
struct DType {
  const char* name;
  uint64_t size;
};
extern const DType kDTypes[];
extern const size_t kNumDTypes;
// The size of a dtype's element, or 0 if the format has no such dtype.
uint64_t dtype_size(const std::string& name);

// What a reader accepts, and the noun its messages use for the file ("checkpoint": "for a
// checkpoint", "not a checkpoint", "the checkpoint would be …"; also the errors' field).
struct Limits {
  uint64_t max_header;
  uint64_t max_bytes;
  std::string what;
};

// The container, read: the header (a JSON object) and where the data lies.
struct Header {
  json::Value json;
  uint64_t file_size = 0, data_start = 0, data_size = 0;
  const json::Value* metadata() const { return json.find(kMetadataKey); }
};

// One tensor's entry, checked.
struct TensorInfo {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets into the data
};

// A reader's expectations, asked as read_tensors meets each entry (each may throw InputError);
// an empty hook expects nothing.
struct Expect {
  std::function<void(const std::string& name)> name;  // before the entry is looked at
  std::function<void(const std::string& name, const json::Value& dtype)> dtype;  // before the dtype is
  std::function<void(const std::string& name, const std::vector<uint64_t>& shape)> shape;
  std::function<void()> all_read;  // after the last entry, before trailing bytes are looked for
};

Header read_header(const std::string& bytes, const Limits& limits);
// The same from a partial source (NeedBytes for the header it lacks).
Header read_header(const ByteSource& bytes, const Limits& limits);
// A metadata value must be a string (safetensors maps strings to strings).
void check_metadata_value(const std::string& key, const json::Value& value);
std::vector<TensorInfo> read_tensors(const Header& header, const Limits& limits, const Expect& expect = {});
// The values of an F32 tensor (end − begin = 4 × numel floats) into out.
void read_f32(const std::string& bytes, const Header& header, const TensorInfo& t, float* out);
// The same from a source, in slices of 16 MiB (each used before the next is read).
void read_f32(const ByteSource& bytes, const Header& header, const TensorInfo& t, float* out);
// The values of an F32, F16 or BF16 tensor as floats (F16 and BF16 widened exactly,
// core/base/half_float.h), from a source in slices of 16 MiB; another dtype is an InputError
// naming the tensor.
void read_as_f32(const ByteSource& bytes, const Header& header, const TensorInfo& t, float* out);

// A whole file: its metadata (string → string, in file order) and its tensors.
struct File {
  Header header;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<TensorInfo> tensors;
};
File read_file(const std::string& bytes, const Limits& limits);
File read_file(const ByteSource& bytes, const Limits& limits);  // (the header's part of it)

// One tensor to write: F32 values from floats, or any dtype's bytes as they go in the file.
struct TensorData {
  std::string name;
  std::string dtype = "F32";
  std::vector<uint64_t> shape;
  const float* f32 = nullptr;          // dtype F32: numel floats
  const unsigned char* raw = nullptr;  // otherwise: numel × dtype_size bytes, little-endian
};

// The file's bytes. metadata: an object of strings written as "__metadata__", or null for none.
// Throws InputError (field limits.what) if the header or the file would pass the limits.
std::string write_file(const json::Value& metadata, const std::vector<TensorData>& tensors, const Limits& limits);
// The same file's first bytes alone (the 8-byte length and the padded JSON header), for a writer that
// then streams each tensor's bytes in order (sizes_out: each tensor's, in bytes); the same checks,
// but `data` false lets the tensors come without their values (f32 and raw null).
std::string write_header(const json::Value& metadata, const std::vector<TensorData>& tensors, const Limits& limits,
                         bool data = false, std::vector<uint64_t>* sizes_out = nullptr);
// n floats as the file stores them (little-endian) at out (4n bytes).
void put_f32_le(char* out, const float* x, uint64_t n);

// For messages: a shape as "[12, 8]", and a name from a file quoted and shortened (it may be huge).
std::string shape_text(const std::vector<uint64_t>& shape);
std::string quoted(const std::string& name);

}  // namespace ap::safetensors
