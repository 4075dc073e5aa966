// gguf.h — llama.cpp's GGUF file (versions 2 and 3): its metadata, its tensors' table, and what a
// model and its tokenizer need from the metadata (gguf_model.cpp), read from a ByteSource.
//
// Layout (ggml's docs/gguf.md; all little-endian): "GGUF", u32 version, u64 tensor count, u64 metadata
// count; each metadata pair a string key (u64 length + bytes), a u32 value type and the value (arrays:
// u32 element type, u64 count, the elements; arrays of arrays allowed); each tensor's info: name,
// u32 dimension count (≤ 4), u64 dimensions (ne[0] first: the values of a row, so a weight of N rows
// of K values is [K, N]), u32 ggml type, u64 offset from the data section; then padding to
// general.alignment (32 if absent) and the data section, each tensor aligned likewise.
//
// Reading is strict so that a damaged file is never half-read: the magic and the version (2 or 3;
// others refused by number); every count, length and offset proven to fit in the file before
// anything is allocated for it (a string or array longer than what is left, a count of pairs or
// tensors that cannot fit); a key or tensor name given twice, an empty tensor name; at most 4
// dimensions, each ≥ 1, whose values fit in 2⁶³ and whose first is a multiple of the type's block;
// a ggml type GGUF does not
// define (named by its number); general.alignment a power of two of type u32; each tensor's data
// aligned, within the file, overlapping no other. Types GGUF defines but we do not run (Q5_K, IQ…)
// are read and listed (runnable() says which we run). Every error is an InputError whose message
// starts with the file's name and names the byte, key or tensor at fault; its field is that key or
// tensor's name, or the file's name for the structure.
//
// Bytes are read front to back in windows of 64 KiB (src.read; a field longer than a window, or across
// a window's end, on its own), so a PartialSource that lacks them throws NeedBytes and the caller adds
// them and runs the reader again (best in large slices: the header has no length prefix, and a
// vocabulary makes it megabytes); the tensors' data is never read here.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/kernels/quant.h"
#include "formats/byte_source.h"

namespace ap::gguf {

constexpr uint32_t kMaxDims = 4;
constexpr uint64_t kDefaultAlignment = 32;
constexpr size_t kMaxName = 64;   // a tensor's name is shorter (ggml's GGML_MAX_NAME)
constexpr int kMaxArrayDepth = 4;  // arrays of arrays, at most this deep

enum class ValueType : uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7, string = 8, array = 9,
  u64 = 10, i64 = 11, f64 = 12
};
// GGUF's name of the type ("UINT8", …, "ARRAY"), or nullptr for a number it does not define.
const char* value_type_name(uint32_t t);

// One metadata value. Scalars: unsigned integers and booleans in u, signed in i, floats in f.
// Arrays: elem and count; numbers (and booleans) as their raw little-endian bytes in raw, strings in
// strings, arrays in items.
struct Value {
  ValueType type = ValueType::u8;
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0;
  std::string s;
  ValueType elem = ValueType::u8;
  uint64_t count = 0;
  std::string raw;
  std::vector<std::string> strings;
  std::vector<Value> items;
  bool is_integer() const;
  bool is_float() const;
  // Element k of an array of numbers, as a double, a signed or an unsigned integer.
  double number(uint64_t k) const;
  int64_t integer(uint64_t k) const;
};

// A ggml type: its number, its name, values and bytes per block (quant.h's TypeInfo, which the types
// we run are; the others take a number quant::Type does not name).
using GgmlType = quant::TypeInfo;
// Every type GGUF files may hold, or nullptr for a number ggml does not define.
const GgmlType* ggml_type(uint32_t id);

struct TensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ne[0] first
  uint32_t type = 0;
  const char* type_name = "";
  uint64_t offset = 0;  // from the data section's start
  uint64_t bytes = 0;
  uint64_t values() const;
};

struct File {
  uint32_t version = 0;
  uint64_t file_size = 0;
  uint64_t alignment = kDefaultAlignment;
  uint64_t data_start = 0;  // the data section's first byte
  std::vector<std::pair<std::string, Value>> metadata;  // in the file's order
  std::vector<TensorInfo> tensors;                      // in the file's order
  const Value* find(const std::string& key) const;
  const TensorInfo* tensor(const std::string& name) const;
};

// The header (metadata and tensors' table) of the file called `what` in messages.
File read_file(const ByteSource& src, const std::string& what);

// The tensor called `name`, checked to have these dimensions (ne[0] first) and a type we run;
// refused (InputError, field the name) if missing, of another shape, or of a type we do not run.
const TensorInfo& expect_tensor(const File& f, const std::string& name, const std::vector<uint64_t>& dims,
                                const std::string& what);
// The tensor's bytes (t.bytes of them, from src.read: a PartialSource throws NeedBytes for them).
const char* tensor_data(const ByteSource& src, const File& f, const TensorInfo& t);

// Whether we run the tensor's type (quant.h: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K).
bool runnable(const TensorInfo& t);
// Throws an InputError naming the tensor and its type unless it is runnable.
void check_runnable(const TensorInfo& t, const std::string& what);

// A value as text for people: numbers, "quoted strings", arrays as [a, b, …] cut after max_items
// with "… (N in all)".
std::string value_text(const Value& v, size_t max_items = 8);

// ---------------------------------------------------------------- what a model needs (gguf_model.cpp)

// The architectures we run; the rest are refused by name.
extern const char* const kArchitectures[];
extern const size_t kNumArchitectures;

// general.architecture and its keys ("<arch>.…").
struct ModelConfig {
  std::string architecture;  // llama, qwen2 or qwen3
  std::string name;          // general.name, or empty
  uint64_t context_length = 0, embedding_length = 0, block_count = 0, feed_forward_length = 0;
  uint64_t head_count = 0, head_count_kv = 0;  // attention.head_count(_kv); _kv defaults to head_count
  uint64_t key_length = 0, value_length = 0;   // attention.key/value_length; default width / heads
  uint64_t rope_dimension_count = 0;           // rope.dimension_count; default key_length
  uint64_t sliding_window = 0;                 // attention.sliding_window; 0: none
  uint64_t vocab_size = 0;                     // <arch>.vocab_size, else the tokenizer's tokens, else 0
  double rope_freq_base = 10000.0;             // rope.freq_base
  double rms_epsilon = 0;                      // attention.layer_norm_rms_epsilon
  std::string rope_scaling_type;               // rope.scaling.type; empty: none
  double rope_scaling_factor = 0;              // rope.scaling.factor; 0: none
  // How llama.cpp rotates: true (llama) on adjacent pairs (x[2i], x[2i+1]), its converter having
  // permuted the rows of Q's and K's weights from Hugging Face's order; false (qwen2, qwen3) on
  // pairs half a head apart (x[i], x[i + d/2]), as Hugging Face's rotate_half (llama.cpp's
  // llama_model_rope_type: NORM and NEOX).
  bool rope_adjacent_pairs = false;
};
ModelConfig read_model_config(const File& f, const std::string& what);

// tokenizer.ggml.*: the vocabulary and what its tokenizer needs, for a later reader.
struct TokenizerData {
  std::string model;  // "gpt2" (byte-level BPE) or "llama" (SentencePiece)
  std::string pre;    // the pre-tokenizer's name, or empty
  std::vector<std::string> tokens;
  std::vector<float> scores;        // empty, or one per token
  std::vector<int32_t> token_type;  // empty, or one per token
  std::vector<std::string> merges;  // "a b" pairs, or empty
  int64_t bos_id = -1, eos_id = -1, unk_id = -1, pad_id = -1;  // -1: none
  int add_bos = -1, add_eos = -1;                                // -1: not said, else 0 or 1
};
TokenizerData read_tokenizer(const File& f, const std::string& what);

}  // namespace ap::gguf
