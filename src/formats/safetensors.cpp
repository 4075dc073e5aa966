// safetensors.cpp — the safetensors reader and writer of safetensors.h.
//
// The reader trusts nothing: the header length against the file and the limit, the header with the
// strict JSON reader, then each entry in header order — its keys, dtype, shape and offsets, which
// must tile the data — with the caller's hooks asked between the checks; only then may a caller
// allocate and copy values (read_f32). Numbers in the header are whole numbers ≤ 2^53 (what a
// double holds exactly), so no sum or product of them is computed unchecked.
#include "formats/safetensors.h"

#include "core/base/half_float.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/base/input_error.h"

namespace ap::safetensors {

using json::Value;

const DType kDTypes[] = {{"F64", 8},  {"F32", 4}, {"F16", 2}, {"BF16", 2},   {"I64", 8},    {"I32", 4},
                         {"I16", 2},  {"I8", 1},  {"U64", 8}, {"U32", 4},    {"U16", 2},    {"U8", 1},
                         {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
const size_t kNumDTypes = sizeof kDTypes / sizeof kDTypes[0];

uint64_t dtype_size(const std::string& name) {
  for (const DType& d : kDTypes)
    if (name == d.name) return d.size;
  return 0;
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::string quoted(const std::string& name) { return "\"" + json::excerpt(name, 80) + "\""; }

namespace {

std::string num(uint64_t v) { return std::to_string(v); }

// A name from the file as an error's field (it may be huge).
std::string field_name(const std::string& s) { return json::excerpt(s, 200); }

[[noreturn]] void fail(const std::string& message, const std::string& field) { throw InputError(message, field); }

uint64_t get_u64_le(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void put_u64_le(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

float get_f32_le(const unsigned char* p) {
  const uint32_t u = uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The bytes of a tensor of `shape` with elements of `size` bytes; false if more than 2^64 − 1.
bool tensor_bytes(const std::vector<uint64_t>& shape, uint64_t size, uint64_t& out) {
  uint64_t n = size;
  bool overflow = false;
  for (uint64_t d : shape) {
    if (d == 0) {
      out = 0;
      return true;
    }
    if (n > UINT64_MAX / d) overflow = true;
    else n *= d;
  }
  out = n;
  return !overflow;
}

// The byte offset in `text` of a 1-based line and column (the column counts characters).
size_t offset_of(const std::string& text, int line, int column) {
  size_t i = 0;
  for (int l = 1; l < line && i < text.size(); ++i)
    if (text[i] == '\n') ++l;
  for (int c = 1; c < column && i < text.size(); ++c) {
    ++i;
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
  }
  return i;
}

// A whole number in [0, 2^53] from the header, or fail naming the tensor and what it is.
uint64_t header_uint(const Value& v, const std::string& tensor, const char* what) {
  if (!v.is_number() || std::floor(v.as_number()) != v.as_number() || v.as_number() < 0 ||
      v.as_number() > 9007199254740992.0)
    fail("tensor " + quoted(tensor) + ": " + what + " must be whole numbers ≥ 0, got " + json::excerpt(v.dump(), 24),
         field_name(tensor));
  return static_cast<uint64_t>(v.as_number());
}

// One entry's keys, dtype and shape (the hooks asked in between), then its offsets.
TensorInfo read_entry(const std::string& name, const Value& e, const Expect& expect) {
  const std::string field = field_name(name);
  if (!e.is_object())
    fail("tensor " + quoted(name) + ": its header entry must be an object {dtype, shape, data_offsets}", field);
  for (const auto& k : e.members())
    if (k.first != "dtype" && k.first != "shape" && k.first != "data_offsets")
      fail("tensor " + quoted(name) + " has an unknown key " + quoted(k.first) + " in its header entry", field);
  const Value* dtype = e.find("dtype");
  const Value* shape = e.find("shape");
  const Value* offsets = e.find("data_offsets");
  if (!dtype || !shape || !offsets)
    fail("tensor " + quoted(name) + " has no \"" + (!dtype ? "dtype" : !shape ? "shape" : "data_offsets") +
             "\" in its header entry",
         field);
  if (expect.dtype) expect.dtype(name, *dtype);
  if (!dtype->is_string() || dtype_size(dtype->as_string()) == 0)
    fail("tensor " + quoted(name) + " has dtype " + json::excerpt(dtype->dump(), 24) +
             ": not one of the format's dtypes (F64, F32, F16, BF16, I64, …, U8, BOOL)",
         field);
  TensorInfo t;
  t.name = name;
  t.dtype = dtype->as_string();
  if (!shape->is_array() || shape->size() > kMaxDims)
    fail("tensor " + quoted(name) + ": \"shape\" must be an array of at most 8 dimensions", field);
  for (const Value& d : shape->items()) t.shape.push_back(header_uint(d, name, "\"shape\"'s dimensions"));
  if (expect.shape) expect.shape(name, t.shape);
  if (!offsets->is_array() || offsets->size() != 2)
    fail("tensor " + quoted(name) + ": \"data_offsets\" must be [begin, end]", field);
  t.begin = header_uint((*offsets)[0], name, "\"data_offsets\"");
  t.end = header_uint((*offsets)[1], name, "\"data_offsets\"");
  const std::string offsets_text = "data_offsets [" + num(t.begin) + ", " + num(t.end) + "]";
  if (t.end < t.begin) fail("tensor " + quoted(name) + ": its " + offsets_text + " end before they begin", field);
  uint64_t want = 0;
  const bool fits = tensor_bytes(t.shape, dtype_size(t.dtype), want);
  if (!fits || t.end - t.begin != want)
    fail("tensor " + quoted(name) + ": its " + offsets_text + " hold " + num(t.end - t.begin) + " bytes, but " +
             t.dtype + " " + shape_text(t.shape) + " needs " + (fits ? num(want) : "more than 2^64"),
         field);
  return t;
}

}  // namespace

void put_f32_le(char* out, const float* src, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &src[i], 4);
    out[4 * i + 0] = static_cast<char>(u & 0xFF);
    out[4 * i + 1] = static_cast<char>((u >> 8) & 0xFF);
    out[4 * i + 2] = static_cast<char>((u >> 16) & 0xFF);
    out[4 * i + 3] = static_cast<char>((u >> 24) & 0xFF);
  }
}

Header read_header(const std::string& bytes, const Limits& limits) { return read_header(StringSource(bytes), limits); }

Header read_header(const ByteSource& bytes, const Limits& limits) {
  const std::string& what = limits.what;
  Header h;
  const uint64_t size = h.file_size = bytes.size();
  if (size > limits.max_bytes)
    fail("the file is " + num(size) + " bytes, more than the limit of " + num(limits.max_bytes) + " for a " + what,
         what);
  if (size < 8)
    fail("the file is " + num(size) + " bytes: it ends at byte " + num(size) +
             ", inside the 8-byte header length (bytes 0 to 7) that starts a safetensors file (truncated)",
         what);
  const uint64_t n = get_u64_le(reinterpret_cast<const unsigned char*>(bytes.read(0, 8)));
  if (n > limits.max_header)
    fail("the header length (bytes 0 to 7, little-endian) is " + num(n) + " bytes, more than the limit of " +
             num(limits.max_header) + ": not a " + what + ", or a corrupted one",
         what);
  if (n < 2) fail("the header length (bytes 0 to 7, little-endian) is " + num(n) + " bytes: too short for a JSON header", what);
  if (8 + n > size)
    fail("the header length (bytes 0 to 7) says the JSON header takes bytes 8 to " + num(8 + n - 1) +
             ", but the file ends at byte " + num(size) + " (truncated, or not a safetensors file)",
         what);
  const std::string text(bytes.read(8, n), static_cast<size_t>(n));
  const std::string where_header = "the header (bytes 8 to " + num(8 + n - 1) + ")";
  try {
    h.json = json::parse(text);
  } catch (const json::JsonError& e) {
    fail(where_header + " is not valid JSON, at byte " + num(8 + offset_of(text, e.line, e.column)) + ": " + e.what(),
         what);
  }
  if (!h.json.is_object()) fail(where_header + " is JSON but not an object of tensors", what);
  h.data_start = 8 + n;
  h.data_size = size - h.data_start;
  return h;
}

void check_metadata_value(const std::string& key, const Value& value) {
  const std::string field = std::string(kMetadataKey) + "." + key;
  if (!value.is_string())
    fail(field + " must be a string (safetensors metadata maps strings to strings), got " +
             json::excerpt(value.dump(), 24),
         field);
}

std::vector<TensorInfo> read_tensors(const Header& h, const Limits& limits, const Expect& expect) {
  std::vector<TensorInfo> out;
  uint64_t pos = 0;  // where the next tensor's data must begin
  for (const auto& [name, entry] : h.json.members()) {
    if (name == kMetadataKey) continue;
    if (expect.name) expect.name(name);
    TensorInfo t = read_entry(name, entry, expect);
    const std::string field = field_name(name);
    const std::string offsets_text = "data_offsets [" + num(t.begin) + ", " + num(t.end) + "]";
    if (t.begin != pos) {
      const TensorInfo* previous = out.empty() ? nullptr : &out.back();
      const std::string prev = previous ? "the previous tensor " + quoted(previous->name) : "the data";
      if (t.begin > pos)
        fail("tensor " + quoted(name) + ": its " + offsets_text + " leave a gap of " + num(t.begin - pos) +
                 " bytes after " + prev + " (which ends at data offset " + num(pos) +
                 "): the tensors must tile the data in header order",
             field);
      if (previous && t.end <= previous->begin)
        fail("tensor " + quoted(name) + ": its " + offsets_text + " come before those of " + prev +
                 " (out of order): the tensors must tile the data in header order",
             field);
      fail("tensor " + quoted(name) + ": its " + offsets_text + " overlap " + prev + " (which ends at data offset " +
               num(pos) + ")",
           field);
    }
    if (t.end > h.data_size)
      fail("tensor " + quoted(name) + ": its " + offsets_text + " run to byte " + num(h.data_start + t.end) +
               " of the file, but the file ends at byte " + num(h.file_size) + " (truncated)",
           field);
    pos = t.end;
    out.push_back(std::move(t));
  }
  if (expect.all_read) expect.all_read();
  if (pos != h.data_size)
    fail("the file has " + num(h.data_size - pos) + " bytes after the last tensor's data (bytes " +
             num(h.data_start + pos) + " to " + num(h.file_size - 1) + "): trailing bytes, not part of any tensor",
         limits.what);
  return out;
}

void read_f32(const std::string& bytes, const Header& h, const TensorInfo& t, float* out) {
  read_f32(StringSource(bytes), h, t, out);
}

void read_f32(const ByteSource& bytes, const Header& h, const TensorInfo& t, float* out) {
  constexpr uint64_t kSlice = uint64_t(4) << 22;  // floats per slice: 16 MiB
  const uint64_t n = (t.end - t.begin) / 4;
  for (uint64_t i0 = 0; i0 < n; i0 += kSlice / 4) {
    const uint64_t m = std::min(kSlice / 4, n - i0);
    const auto* src = reinterpret_cast<const unsigned char*>(bytes.read(h.data_start + t.begin + 4 * i0, 4 * m));
    for (uint64_t i = 0; i < m; ++i) out[i0 + i] = get_f32_le(src + 4 * i);
  }
}

void read_as_f32(const ByteSource& bytes, const Header& h, const TensorInfo& t, float* out) {
  if (t.dtype == "F32") return read_f32(bytes, h, t, out);
  if (t.dtype != "F16" && t.dtype != "BF16")
    fail("tensor " + quoted(t.name) + " has dtype " + t.dtype + ": only F32, F16 and BF16 are read as numbers",
         field_name(t.name));
  const bool bf16 = t.dtype == "BF16";
  constexpr uint64_t kSlice = uint64_t(1) << 24;  // bytes per slice
  const uint64_t n = (t.end - t.begin) / 2;
  for (uint64_t i0 = 0; i0 < n; i0 += kSlice / 2) {
    const uint64_t m = std::min(kSlice / 2, n - i0);
    const auto* src = reinterpret_cast<const unsigned char*>(bytes.read(h.data_start + t.begin + 2 * i0, 2 * m));
    for (uint64_t i = 0; i < m; ++i) {
      const uint16_t v = static_cast<uint16_t>(src[2 * i] | (src[2 * i + 1] << 8));
      out[i0 + i] = bf16 ? bf16_to_float(v) : f16_to_float(v);
    }
  }
}

File read_file(const std::string& bytes, const Limits& limits) { return read_file(StringSource(bytes), limits); }

File read_file(const ByteSource& bytes, const Limits& limits) {
  File f;
  f.header = read_header(bytes, limits);
  if (const Value* meta = f.header.metadata()) {
    if (!meta->is_object()) fail(std::string(kMetadataKey) + " must be a JSON object of strings", kMetadataKey);
    for (const auto& [key, value] : meta->members()) {
      check_metadata_value(key, value);
      f.metadata.emplace_back(key, value.as_string());
    }
  }
  f.tensors = read_tensors(f.header, limits);
  return f;
}

std::string write_header(const Value& metadata, const std::vector<TensorData>& tensors, const Limits& limits, bool data,
                         std::vector<uint64_t>* sizes_out) {
  Value header = Value::object();
  if (!metadata.is_null()) header.set(kMetadataKey, metadata);
  std::vector<uint64_t> sizes;
  uint64_t offset = 0;
  for (const TensorData& t : tensors) {
    uint64_t n = 0;
    const bool known = dtype_size(t.dtype) != 0, fits = tensor_bytes(t.shape, dtype_size(t.dtype), n);
    if (!known || !fits || n > UINT64_MAX / 2 - offset)
      fail("tensor " + quoted(t.name) + ": " + (known ? "its shape " + shape_text(t.shape) + " is too large" :
                                                        "\"" + t.dtype + "\" is not one of the format's dtypes"),
           field_name(t.name));
    if (data && n > 0 && !(t.dtype == "F32" ? t.f32 != nullptr : t.raw != nullptr))
      fail("tensor " + quoted(t.name) + " has no data to write (" + (t.dtype == "F32" ? "f32" : "raw") + ")",
           field_name(t.name));
    Value e = Value::object();
    e.set("dtype", t.dtype);
    Value shape = Value::array();
    for (uint64_t d : t.shape) shape.push(static_cast<long long>(d));
    e.set("shape", shape);
    Value offsets = Value::array();
    offsets.push(static_cast<long long>(offset));
    offset += n;
    offsets.push(static_cast<long long>(offset));
    e.set("data_offsets", offsets);
    header.set(t.name, e);
    sizes.push_back(n);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  if (text.size() > limits.max_header)
    fail("the header would be " + num(text.size()) + " bytes, more than the limit of " + num(limits.max_header),
         limits.what);
  const uint64_t total = 8 + text.size() + offset;
  if (total > limits.max_bytes)
    fail("the " + limits.what + " would be " + num(total) + " bytes, more than the limit of " + num(limits.max_bytes),
         limits.what);

  std::string out;
  out.reserve(8 + text.size());
  put_u64_le(out, text.size());
  out += text;
  if (sizes_out) *sizes_out = std::move(sizes);
  return out;
}

std::string write_file(const Value& metadata, const std::vector<TensorData>& tensors, const Limits& limits) {
  std::vector<uint64_t> sizes;
  std::string out = write_header(metadata, tensors, limits, true, &sizes);
  uint64_t total = out.size();
  for (uint64_t n : sizes) total += n;
  out.reserve(total);
  const size_t data_start = out.size();
  out.resize(total);
  uint64_t at = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorData& t = tensors[i];
    if (sizes[i] == 0) continue;
    if (t.dtype == "F32") put_f32_le(&out[data_start + at], t.f32, sizes[i] / 4);
    else std::memcpy(&out[data_start + at], t.raw, sizes[i]);
    at += sizes[i];
  }
  return out;
}

}  // namespace ap::safetensors
