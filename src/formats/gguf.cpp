// gguf.cpp — the GGUF reader of gguf.h: the header, the metadata's values, the tensors' table, each
// count and length checked against the bytes left before anything is allocated for it.
#include "formats/gguf.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <set>

#include "core/base/input_error.h"
#include "core/kernels/quant.h"

namespace ap::gguf {

namespace {

// The ggml types we do not run (ggml.h's enum ggml_type; sizes as gguf-py's GGML_QUANT_SIZES):
// ggml_type finds the ones we run in quant.h's table, declared there once.
const GgmlType kGgmlTypes[] = {
    {quant::Type{3}, "Q4_1", 32, 20},
    {quant::Type{6}, "Q5_0", 32, 22},
    {quant::Type{7}, "Q5_1", 32, 24},
    {quant::Type{9}, "Q8_1", 32, 36},
    {quant::Type{10}, "Q2_K", 256, 84},
    {quant::Type{11}, "Q3_K", 256, 110},
    {quant::Type{13}, "Q5_K", 256, 176},
    {quant::Type{15}, "Q8_K", 256, 292},
    {quant::Type{16}, "IQ2_XXS", 256, 66},
    {quant::Type{17}, "IQ2_XS", 256, 74},
    {quant::Type{18}, "IQ3_XXS", 256, 98},
    {quant::Type{19}, "IQ1_S", 256, 50},
    {quant::Type{20}, "IQ4_NL", 32, 18},
    {quant::Type{21}, "IQ3_S", 256, 110},
    {quant::Type{22}, "IQ2_S", 256, 82},
    {quant::Type{23}, "IQ4_XS", 256, 136},
    {quant::Type{24}, "I8", 1, 1},
    {quant::Type{25}, "I16", 1, 2},
    {quant::Type{26}, "I32", 1, 4},
    {quant::Type{27}, "I64", 1, 8},
    {quant::Type{28}, "F64", 1, 8},
    {quant::Type{29}, "IQ1_M", 256, 56},
    {quant::Type{34}, "TQ1_0", 256, 54},
    {quant::Type{35}, "TQ2_0", 256, 66},
    {quant::Type{39}, "MXFP4", 32, 17},
};

const char* const kValueTypeNames[] = {"UINT8", "INT8",   "UINT16", "INT16", "UINT32", "INT32", "FLOAT32",
                                       "BOOL",  "STRING", "ARRAY",  "UINT64", "INT64", "FLOAT64"};

// A scalar type's size in bytes; 0 for STRING and ARRAY.
uint64_t scalar_size(ValueType t) {
  switch (t) {
    case ValueType::u8: case ValueType::i8: case ValueType::boolean: return 1;
    case ValueType::u16: case ValueType::i16: return 2;
    case ValueType::u32: case ValueType::i32: case ValueType::f32: return 4;
    case ValueType::u64: case ValueType::i64: case ValueType::f64: return 8;
    default: return 0;
  }
}

std::string u64s(uint64_t v) { return std::to_string(v); }

// Reads the file front to back, each read checked against the file's size.
class Cursor {
 public:
  Cursor(const ByteSource& src, const std::string& what) : src_(src), what_(what), size_(src.size()) {}
  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }
  [[noreturn]] void fail(uint64_t at, const std::string& msg, const std::string& field) const {
    throw InputError(what_ + ": byte " + u64s(at) + ": " + msg, field.empty() ? what_ : field);
  }
  const char* take(uint64_t n, const std::string& thing, const std::string& field) {
    if (n > left())
      fail(pos_, thing + " needs " + u64s(n) + " bytes, but the file ends " + u64s(left()) + " bytes later (" +
                     u64s(size_) + " bytes in all)",
           field);
    const char* p = n ? bytes(n) : "";
    pos_ += n;
    return p;
  }
  template <class T>
  T get(const std::string& thing, const std::string& field) {
    T v;
    std::memcpy(&v, take(sizeof v, thing, field), sizeof v);
    return v;
  }
  std::string string(const std::string& thing, const std::string& field) {
    const uint64_t at = pos_;
    const uint64_t n = get<uint64_t>(thing + "'s length", field);
    if (n > left())
      fail(at, thing + " claims " + u64s(n) + " bytes, but the file ends " + u64s(left()) + " bytes after its length",
           field);
    const char* p = take(n, thing, field);
    return std::string(p, static_cast<size_t>(n));
  }

 private:
  // The bytes [pos, pos + n): a field within one window of kWindow bytes is read from that window
  // (one read of the source per window, not one per field: a vocabulary is 10⁵ strings); a longer
  // one, or one across a window's end, on its own.
  static constexpr uint64_t kWindow = uint64_t(1) << 16;
  const char* bytes(uint64_t n) {
    const uint64_t w = pos_ / kWindow;
    if ((pos_ + n - 1) / kWindow != w) return src_.read(pos_, n);
    if (!window_ || window_index_ != w) {
      const uint64_t start = w * kWindow, len = size_ - start < kWindow ? size_ - start : kWindow;
      window_ = src_.read(start, len);
      window_index_ = w;
    }
    return window_ + (pos_ - w * kWindow);
  }
  const ByteSource& src_;
  const std::string& what_;
  const char* window_ = nullptr;
  uint64_t window_index_ = 0;
  uint64_t size_;
  uint64_t pos_ = 0;
};

ValueType read_type(Cursor& c, const std::string& thing, const std::string& key) {
  const uint64_t at = c.pos();
  const uint32_t t = c.get<uint32_t>(thing, key);
  if (!value_type_name(t)) c.fail(at, thing + " is " + std::to_string(t) + ", not a type GGUF defines (0 to 12)", key);
  return static_cast<ValueType>(t);
}

void read_scalar(Cursor& c, ValueType t, Value& v, const std::string& key) {
  const std::string thing = std::string("the ") + kValueTypeNames[static_cast<uint32_t>(t)] + " value of key '" + key + "'";
  v.type = t;
  switch (t) {
    case ValueType::u8: v.u = c.get<uint8_t>(thing, key); break;
    case ValueType::i8: v.i = c.get<int8_t>(thing, key); break;
    case ValueType::u16: v.u = c.get<uint16_t>(thing, key); break;
    case ValueType::i16: v.i = c.get<int16_t>(thing, key); break;
    case ValueType::u32: v.u = c.get<uint32_t>(thing, key); break;
    case ValueType::i32: v.i = c.get<int32_t>(thing, key); break;
    case ValueType::u64: v.u = c.get<uint64_t>(thing, key); break;
    case ValueType::i64: v.i = c.get<int64_t>(thing, key); break;
    case ValueType::f32: v.f = c.get<float>(thing, key); break;
    case ValueType::f64: v.f = c.get<double>(thing, key); break;
    case ValueType::boolean: {
      const uint64_t at = c.pos();
      const uint8_t b = c.get<uint8_t>(thing, key);
      if (b > 1) c.fail(at, thing + " is " + std::to_string(b) + ", not a boolean (0 or 1)", key);
      v.u = b;
      break;
    }
    default: break;
  }
}

void read_value(Cursor& c, ValueType t, Value& v, const std::string& key, int depth);

void read_array(Cursor& c, Value& v, const std::string& key, int depth) {
  v.type = ValueType::array;
  if (depth >= kMaxArrayDepth)
    c.fail(c.pos(), "key '" + key + "': arrays nested more than " + std::to_string(kMaxArrayDepth) + " deep", key);
  v.elem = read_type(c, "the element type of array '" + key + "'", key);
  const uint64_t at = c.pos();
  v.count = c.get<uint64_t>("the length of array '" + key + "'", key);
  // The least bytes an element takes: a scalar's size, a string's or an array's length fields.
  const uint64_t least = v.elem == ValueType::string ? 8 : v.elem == ValueType::array ? 12 : scalar_size(v.elem);
  if (v.count > c.left() / least)
    c.fail(at, "array '" + key + "' claims " + u64s(v.count) + " elements of " + kValueTypeNames[static_cast<uint32_t>(v.elem)] +
                   " (at least " + u64s(least) + " bytes each), but only " + u64s(c.left()) + " bytes are left",
           key);
  if (v.elem == ValueType::string) {
    v.strings.reserve(static_cast<size_t>(v.count));
    for (uint64_t k = 0; k < v.count; ++k)
      v.strings.push_back(c.string("string " + u64s(k) + " of array '" + key + "'", key));
  } else if (v.elem == ValueType::array) {
    v.items.resize(static_cast<size_t>(v.count));
    for (uint64_t k = 0; k < v.count; ++k) read_array(c, v.items[static_cast<size_t>(k)], key, depth + 1);
  } else {
    const uint64_t n = v.count * least;
    const char* p = c.take(n, "array '" + key + "'", key);
    v.raw.assign(p, static_cast<size_t>(n));
    if (v.elem == ValueType::boolean)
      for (uint64_t k = 0; k < v.count; ++k)
        if (static_cast<uint8_t>(v.raw[static_cast<size_t>(k)]) > 1)
          c.fail(c.pos() - n + k, "element " + u64s(k) + " of array '" + key + "' is not a boolean (0 or 1)", key);
  }
}

void read_value(Cursor& c, ValueType t, Value& v, const std::string& key, int depth) {
  if (t == ValueType::string) {
    v.type = t;
    v.s = c.string("the string value of key '" + key + "'", key);
  } else if (t == ValueType::array) {
    read_array(c, v, key, depth);
  } else {
    read_scalar(c, t, v, key);
  }
}

// The file's general.alignment, checked.
uint64_t alignment_of(const File& f, const std::string& what) {
  const Value* a = f.find("general.alignment");
  if (!a) return kDefaultAlignment;
  if (a->type != ValueType::u32)
    throw InputError(what + ": general.alignment is " + kValueTypeNames[static_cast<uint32_t>(a->type)] + ", not UINT32",
                     "general.alignment");
  if (a->u == 0 || (a->u & (a->u - 1)) != 0)
    throw InputError(what + ": general.alignment is " + u64s(a->u) + ", not a power of two", "general.alignment");
  return a->u;
}

void read_tensor_info(Cursor& c, TensorInfo& t, size_t index) {
  const uint64_t at = c.pos();
  const std::string thing = "tensor " + std::to_string(index);
  t.name = c.string("the name of " + thing, "");
  const std::string& nm = t.name;
  if (nm.empty()) c.fail(at, thing + " has an empty name", "");
  if (nm.size() >= kMaxName)
    c.fail(at, thing + "'s name is " + std::to_string(nm.size()) + " bytes long; GGUF's names are shorter than " +
                   std::to_string(kMaxName), nm);
  const uint64_t dims_at = c.pos();
  const uint32_t nd = c.get<uint32_t>("the dimension count of tensor '" + nm + "'", nm);
  if (nd > kMaxDims)
    c.fail(dims_at, "tensor '" + nm + "' has " + std::to_string(nd) + " dimensions; GGUF allows at most " +
                        std::to_string(kMaxDims), nm);
  uint64_t values = 1;
  for (uint32_t d = 0; d < nd; ++d) {
    const uint64_t d_at = c.pos();
    const uint64_t n = c.get<uint64_t>("dimension " + std::to_string(d) + " of tensor '" + nm + "'", nm);
    if (n == 0 || n > (uint64_t(1) << 63) / values)
      c.fail(d_at, "tensor '" + nm + "': dimension " + std::to_string(d) + " is " + u64s(n) +
                       (n == 0 ? " (every dimension is at least 1)" : ", making more than 2^63 values"), nm);
    values *= n;
    t.dims.push_back(n);
  }
  const uint64_t type_at = c.pos();
  t.type = c.get<uint32_t>("the type of tensor '" + nm + "'", nm);
  const GgmlType* g = ggml_type(t.type);
  if (!g) c.fail(type_at, "tensor '" + nm + "' has ggml type " + std::to_string(t.type) + ", a number ggml does not define", nm);
  t.type_name = g->name;
  const uint64_t row = t.dims.empty() ? 1 : t.dims[0];
  if (row % g->block != 0)
    c.fail(type_at, "tensor '" + nm + "' of type " + g->name + " has rows of " + u64s(row) + " values, not a multiple of its block of " +
                        u64s(g->block), nm);
  if (values / g->block > UINT64_MAX / g->bytes) c.fail(type_at, "tensor '" + nm + "' has more bytes than 2^64", nm);
  t.bytes = values / g->block * g->bytes;
  t.offset = c.get<uint64_t>("the offset of tensor '" + nm + "'", nm);
}

}  // namespace

const char* value_type_name(uint32_t t) { return t < 13 ? kValueTypeNames[t] : nullptr; }

const GgmlType* ggml_type(uint32_t id) {
  if (const GgmlType* run = quant::type_info(id)) return run;
  for (const GgmlType& g : kGgmlTypes)
    if (static_cast<uint32_t>(g.type) == id) return &g;
  return nullptr;
}

bool Value::is_integer() const {
  switch (type) {
    case ValueType::u8: case ValueType::i8: case ValueType::u16: case ValueType::i16: case ValueType::u32:
    case ValueType::i32: case ValueType::u64: case ValueType::i64: return true;
    default: return false;
  }
}

bool Value::is_float() const { return type == ValueType::f32 || type == ValueType::f64; }

namespace {
template <class T>
T raw_at(const std::string& raw, uint64_t k) {
  T v;
  std::memcpy(&v, raw.data() + k * sizeof(T), sizeof(T));
  return v;
}
}  // namespace

int64_t Value::integer(uint64_t k) const {
  switch (elem) {
    case ValueType::u8: case ValueType::boolean: return raw_at<uint8_t>(raw, k);
    case ValueType::i8: return raw_at<int8_t>(raw, k);
    case ValueType::u16: return raw_at<uint16_t>(raw, k);
    case ValueType::i16: return raw_at<int16_t>(raw, k);
    case ValueType::u32: return raw_at<uint32_t>(raw, k);
    case ValueType::i32: return raw_at<int32_t>(raw, k);
    case ValueType::u64: return static_cast<int64_t>(raw_at<uint64_t>(raw, k));
    case ValueType::i64: return raw_at<int64_t>(raw, k);
    case ValueType::f32: return static_cast<int64_t>(raw_at<float>(raw, k));
    case ValueType::f64: return static_cast<int64_t>(raw_at<double>(raw, k));
    default: return 0;
  }
}

double Value::number(uint64_t k) const {
  switch (elem) {
    case ValueType::f32: return raw_at<float>(raw, k);
    case ValueType::f64: return raw_at<double>(raw, k);
    case ValueType::u64: return static_cast<double>(raw_at<uint64_t>(raw, k));
    default: return static_cast<double>(integer(k));
  }
}

uint64_t TensorInfo::values() const {
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  return n;
}

const Value* File::find(const std::string& key) const {
  for (const auto& kv : metadata)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

const TensorInfo* File::tensor(const std::string& name) const {
  for (const TensorInfo& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

File read_file(const ByteSource& src, const std::string& what) {
  File f;
  f.file_size = src.size();
  Cursor c(src, what);
  if (src.size() < 4 || std::memcmp(src.read(0, 4), "GGUF", 4) != 0)
    throw InputError(what + ": not a GGUF file (it does not start with \"GGUF\")", what);
  c.take(4, "the magic", "");
  f.version = c.get<uint32_t>("the version", "");
  if (f.version != 2 && f.version != 3)
    c.fail(4, "GGUF version " + u64s(f.version) + " is not one we read (2 or 3)" +
                  (f.version == 0x03000000u || f.version == 0x02000000u ? "; this file is big-endian" : ""), "");
  const uint64_t counts_at = c.pos();
  const uint64_t n_tensors = c.get<uint64_t>("the tensor count", "");
  const uint64_t n_kv = c.get<uint64_t>("the metadata count", "");
  // A pair takes at least 13 bytes (key length, type, one byte); a tensor's info at least 24.
  if (n_kv > c.left() / 13)
    c.fail(counts_at + 8, "the file claims " + u64s(n_kv) + " metadata pairs, more than its " + u64s(c.left()) +
                              " remaining bytes can hold", "");
  if (n_tensors > c.left() / 24)
    c.fail(counts_at, "the file claims " + u64s(n_tensors) + " tensors, more than its " + u64s(c.left()) +
                          " remaining bytes can hold", "");
  std::set<std::string> keys;
  for (uint64_t k = 0; k < n_kv; ++k) {
    const uint64_t at = c.pos();
    std::string key = c.string("the key of metadata pair " + u64s(k), "");
    if (!keys.insert(key).second) c.fail(at, "key '" + key + "' is given twice", key);
    const ValueType t = read_type(c, "the value type of key '" + key + "'", key);
    Value v;
    read_value(c, t, v, key, 0);
    f.metadata.emplace_back(std::move(key), std::move(v));
  }
  f.alignment = alignment_of(f, what);
  if (n_tensors > c.left() / 24)
    c.fail(counts_at, "the file claims " + u64s(n_tensors) + " tensors, more than its " + u64s(c.left()) +
                          " bytes after the metadata can hold", "");
  f.tensors.resize(static_cast<size_t>(n_tensors));
  std::set<std::string> names;
  for (size_t k = 0; k < f.tensors.size(); ++k) {
    const uint64_t at = c.pos();
    read_tensor_info(c, f.tensors[k], k);
    if (!names.insert(f.tensors[k].name).second) c.fail(at, "tensor '" + f.tensors[k].name + "' is given twice", f.tensors[k].name);
  }
  const uint64_t pad = (f.alignment - c.pos() % f.alignment) % f.alignment;
  if (pad > c.left() && !f.tensors.empty())
    c.fail(c.pos(), "the padding before the data section runs past the end of the file", "");
  f.data_start = c.pos() + pad;
  const uint64_t data_size = f.data_start <= f.file_size ? f.file_size - f.data_start : 0;
  // Each tensor aligned and inside the data; none overlapping another (by offset order).
  std::vector<std::pair<uint64_t, size_t>> order;
  for (size_t k = 0; k < f.tensors.size(); ++k) {
    const TensorInfo& t = f.tensors[k];
    const std::string at = "tensor '" + t.name + "' at offset " + u64s(t.offset) + " of the data section (byte " +
                           (t.offset <= UINT64_MAX - f.data_start ? u64s(f.data_start + t.offset) : std::string("past 2^64")) + ")";
    if (t.offset % f.alignment != 0)
      throw InputError(what + ": " + at + " is not aligned to " + u64s(f.alignment) + " bytes", t.name);
    if (t.offset > data_size || t.bytes > data_size - t.offset)
      throw InputError(what + ": " + at + " needs " + u64s(t.bytes) + " bytes, past the end of the file (" +
                           u64s(data_size) + " bytes of data)", t.name);
    order.emplace_back(t.offset, k);
  }
  std::sort(order.begin(), order.end());
  for (size_t k = 1; k < order.size(); ++k) {
    const TensorInfo& a = f.tensors[order[k - 1].second];
    const TensorInfo& b = f.tensors[order[k].second];
    if (a.offset + a.bytes > b.offset)
      throw InputError(what + ": tensor '" + b.name + "' at offset " + u64s(b.offset) + " overlaps tensor '" + a.name +
                           "' (offsets " + u64s(a.offset) + " to " + u64s(a.offset + a.bytes) + ")", b.name);
  }
  return f;
}

const TensorInfo& expect_tensor(const File& f, const std::string& name, const std::vector<uint64_t>& dims,
                                const std::string& what) {
  auto text = [](const std::vector<uint64_t>& d) {
    std::string s = "[";
    for (size_t k = 0; k < d.size(); ++k) s += (k ? ", " : "") + u64s(d[k]);
    return s + "]";
  };
  const TensorInfo* t = f.tensor(name);
  if (!t) throw InputError(what + ": there is no tensor '" + name + "'", name);
  if (t->dims != dims)
    throw InputError(what + ": tensor '" + name + "' has shape " + text(t->dims) + " (ne[0] first), but the model's config gives " +
                         text(dims), name);
  check_runnable(*t, what);
  return *t;
}

const char* tensor_data(const ByteSource& src, const File& f, const TensorInfo& t) {
  return src.read(f.data_start + t.offset, t.bytes);
}

bool runnable(const TensorInfo& t) { return quant::type_info(t.type) != nullptr; }

void check_runnable(const TensorInfo& t, const std::string& what) {
  if (runnable(t)) return;
  throw InputError(what + ": tensor '" + t.name + "' is " + t.type_name +
                       ", a type we do not run (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K)", t.name);
}

namespace {

void quote(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') { out += '\\'; out += static_cast<char>(ch); }
    else if (ch == '\n') out += "\\n";
    else if (ch < 0x20 || ch == 0x7F) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", ch);
      out += b;
    } else out += static_cast<char>(ch);
  }
  out += '"';
}

std::string scalar_text(const Value& v) {
  char b[40];
  if (v.type == ValueType::boolean) return v.u ? "true" : "false";
  if (v.is_float()) {
    std::snprintf(b, sizeof b, v.type == ValueType::f32 ? "%.9g" : "%.17g", v.f);
    return b;
  }
  if (v.type == ValueType::i8 || v.type == ValueType::i16 || v.type == ValueType::i32 || v.type == ValueType::i64)
    return std::to_string(v.i);
  return std::to_string(v.u);
}

}  // namespace

std::string value_text(const Value& v, size_t max_items) {
  std::string out;
  if (v.type == ValueType::string) {
    quote(out, v.s);
    return out;
  }
  if (v.type != ValueType::array) return scalar_text(v);
  out += '[';
  const uint64_t shown = v.count < max_items ? v.count : max_items;
  for (uint64_t k = 0; k < shown; ++k) {
    if (k) out += ", ";
    if (v.elem == ValueType::string) quote(out, v.strings[static_cast<size_t>(k)]);
    else if (v.elem == ValueType::array) out += value_text(v.items[static_cast<size_t>(k)], max_items);
    else {
      Value e;
      e.type = v.elem;
      if (v.elem == ValueType::f32 || v.elem == ValueType::f64) e.f = v.number(k);
      else if (v.elem == ValueType::u64) e.u = static_cast<uint64_t>(v.integer(k));
      else { e.i = v.integer(k); e.u = static_cast<uint64_t>(e.i); }
      out += scalar_text(e);
    }
  }
  if (shown < v.count) out += (shown ? ", … (" : "… (") + u64s(v.count) + " in all)";
  out += ']';
  return out;
}

}  // namespace ap::gguf
