// gguf_model.cpp — what a model and its tokenizer need from a GGUF file's metadata (gguf.h):
// general.architecture and its "<arch>.…" keys into ModelConfig, tokenizer.ggml.* into TokenizerData.
// Each key's type and range is checked; a missing required key, a value of the wrong type or out of
// range, and an architecture we do not run are refused by name.
#include <cmath>
#include <string>

#include "core/base/input_error.h"
#include "formats/gguf.h"

namespace ap::gguf {

const char* const kArchitectures[] = {"llama", "qwen2", "qwen3"};
const size_t kNumArchitectures = sizeof kArchitectures / sizeof kArchitectures[0];

namespace {

// Sizes beyond these are refused before a model is built from them.
constexpr uint64_t kMaxCount = uint64_t(1) << 24;

std::string type_name(const Value& v) { return value_type_name(static_cast<uint32_t>(v.type)); }

[[noreturn]] void fail(const std::string& what, const std::string& key, const std::string& msg) {
  throw InputError(what + ": " + key + " " + msg, key);
}

// An integer key in [lo, kMaxCount]; `def` if absent and not required.
uint64_t count(const File& f, const std::string& what, const std::string& key, bool required, uint64_t def,
               uint64_t lo = 1) {
  const Value* v = f.find(key);
  if (!v) {
    if (required) fail(what, key, "is missing");
    return def;
  }
  if (v->type == ValueType::array) fail(what, key, "is an array (one value per layer), which we do not run");
  if (!v->is_integer()) fail(what, key, "is " + type_name(*v) + ", not an integer");
  const bool negative = (v->type == ValueType::i8 || v->type == ValueType::i16 || v->type == ValueType::i32 ||
                         v->type == ValueType::i64) && v->i < 0;
  const uint64_t n = negative ? 0 : (v->u ? v->u : static_cast<uint64_t>(v->i > 0 ? v->i : 0));
  if (negative || n < lo || n > kMaxCount)
    fail(what, key, "is " + (negative ? std::to_string(v->i) : std::to_string(n)) + ", outside [" + std::to_string(lo) +
                        ", " + std::to_string(kMaxCount) + "]");
  return n;
}

// A positive finite float key; `def` if absent and not required.
double positive(const File& f, const std::string& what, const std::string& key, bool required, double def) {
  const Value* v = f.find(key);
  if (!v) {
    if (required) fail(what, key, "is missing");
    return def;
  }
  if (!v->is_float()) fail(what, key, "is " + type_name(*v) + ", not FLOAT32 or FLOAT64");
  if (!(std::isfinite(v->f) && v->f > 0)) fail(what, key, "is " + value_text(*v) + ", not a positive number");
  return v->f;
}

std::string text(const File& f, const std::string& what, const std::string& key, bool required) {
  const Value* v = f.find(key);
  if (!v) {
    if (required) fail(what, key, "is missing");
    return std::string();
  }
  if (v->type != ValueType::string) fail(what, key, "is " + type_name(*v) + ", not STRING");
  return v->s;
}

// A token id key (-1 if absent), checked against the vocabulary's size.
int64_t token_id(const File& f, const std::string& what, const std::string& key, size_t vocab) {
  const Value* v = f.find(key);
  if (!v) return -1;
  if (!v->is_integer()) fail(what, key, "is " + type_name(*v) + ", not an integer");
  const bool is_signed = v->type == ValueType::i8 || v->type == ValueType::i16 || v->type == ValueType::i32 ||
                         v->type == ValueType::i64;
  if (is_signed ? (v->i < 0 || static_cast<uint64_t>(v->i) >= vocab) : v->u >= vocab)
    fail(what, key, "is " + (is_signed ? std::to_string(v->i) : std::to_string(v->u)) + ", not a token of the " +
                        std::to_string(vocab) + " in the vocabulary");
  return is_signed ? v->i : static_cast<int64_t>(v->u);
}

int flag(const File& f, const std::string& what, const std::string& key) {
  const Value* v = f.find(key);
  if (!v) return -1;
  if (v->type != ValueType::boolean) fail(what, key, "is " + type_name(*v) + ", not BOOL");
  return static_cast<int>(v->u);
}

}  // namespace

ModelConfig read_model_config(const File& f, const std::string& what) {
  ModelConfig c;
  c.architecture = text(f, what, "general.architecture", true);
  bool known = false;
  std::string names;
  for (size_t k = 0; k < kNumArchitectures; ++k) {
    known = known || c.architecture == kArchitectures[k];
    names += (k ? ", " : "") + std::string(kArchitectures[k]);
  }
  if (!known)
    throw InputError(what + ": architecture '" + c.architecture + "' is not one we run (" + names + ")",
                     "general.architecture");
  c.name = text(f, what, "general.name", false);
  const std::string a = c.architecture + ".";
  c.context_length = count(f, what, a + "context_length", true, 0);
  c.embedding_length = count(f, what, a + "embedding_length", true, 0);
  c.block_count = count(f, what, a + "block_count", true, 0);
  c.feed_forward_length = count(f, what, a + "feed_forward_length", true, 0);
  c.head_count = count(f, what, a + "attention.head_count", true, 0);
  c.head_count_kv = count(f, what, a + "attention.head_count_kv", false, c.head_count);
  if (c.head_count % c.head_count_kv != 0)
    fail(what, a + "attention.head_count_kv", "is " + std::to_string(c.head_count_kv) + ", which does not divide the " +
                                                  std::to_string(c.head_count) + " heads");
  const bool has_key_length = f.find(a + "attention.key_length") != nullptr;
  if (!has_key_length && c.embedding_length % c.head_count != 0)
    fail(what, a + "attention.head_count", "is " + std::to_string(c.head_count) + ", which does not divide the width " +
                                               std::to_string(c.embedding_length));
  c.key_length = count(f, what, a + "attention.key_length", false, c.embedding_length / c.head_count);
  c.value_length = count(f, what, a + "attention.value_length", false, c.key_length);
  c.rope_dimension_count = count(f, what, a + "rope.dimension_count", false, c.key_length);
  if (c.rope_dimension_count > c.key_length || c.rope_dimension_count % 2 != 0)
    fail(what, a + "rope.dimension_count", "is " + std::to_string(c.rope_dimension_count) +
                                               ", not an even number up to the head's width " + std::to_string(c.key_length));
  c.sliding_window = count(f, what, a + "attention.sliding_window", false, 0, 0);
  c.rope_freq_base = positive(f, what, a + "rope.freq_base", false, 10000.0);
  c.rms_epsilon = positive(f, what, a + "attention.layer_norm_rms_epsilon", true, 0);
  c.rope_scaling_type = text(f, what, a + "rope.scaling.type", false);
  if (c.rope_scaling_type == "none") c.rope_scaling_type.clear();
  c.rope_scaling_factor = positive(f, what, a + "rope.scaling.factor", false, 0);
  c.rope_adjacent_pairs = c.architecture == "llama";
  c.vocab_size = count(f, what, a + "vocab_size", false, 0);
  if (!c.vocab_size)
    if (const Value* t = f.find("tokenizer.ggml.tokens"))
      if (t->type == ValueType::array) c.vocab_size = t->count;
  return c;
}

TokenizerData read_tokenizer(const File& f, const std::string& what) {
  TokenizerData t;
  t.model = text(f, what, "tokenizer.ggml.model", true);
  if (t.model != "gpt2" && t.model != "llama")
    throw InputError(what + ": tokenizer.ggml.model is '" + t.model + "', not one we read (gpt2, llama)",
                     "tokenizer.ggml.model");
  t.pre = text(f, what, "tokenizer.ggml.pre", false);
  const std::string tk = "tokenizer.ggml.tokens";
  const Value* tokens = f.find(tk);
  if (!tokens) fail(what, tk, "is missing");
  if (tokens->type != ValueType::array || tokens->elem != ValueType::string)
    fail(what, tk, "is not an array of strings");
  if (tokens->count == 0) fail(what, tk, "is empty");
  t.tokens = tokens->strings;
  const size_t n = t.tokens.size();
  if (const Value* s = f.find("tokenizer.ggml.scores")) {
    if (s->type != ValueType::array || !(s->elem == ValueType::f32 || s->elem == ValueType::f64) || s->count != n)
      fail(what, "tokenizer.ggml.scores", "is not an array of " + std::to_string(n) + " floats, one per token");
    for (uint64_t k = 0; k < s->count; ++k) t.scores.push_back(static_cast<float>(s->number(k)));
  }
  if (const Value* s = f.find("tokenizer.ggml.token_type")) {
    if (s->type != ValueType::array || !(s->elem == ValueType::i32 || s->elem == ValueType::u32) || s->count != n)
      fail(what, "tokenizer.ggml.token_type", "is not an array of " + std::to_string(n) + " INT32, one per token");
    for (uint64_t k = 0; k < s->count; ++k) t.token_type.push_back(static_cast<int32_t>(s->integer(k)));
  }
  if (const Value* m = f.find("tokenizer.ggml.merges")) {
    if (m->type != ValueType::array || m->elem != ValueType::string)
      fail(what, "tokenizer.ggml.merges", "is not an array of strings");
    t.merges = m->strings;
  }
  t.bos_id = token_id(f, what, "tokenizer.ggml.bos_token_id", n);
  t.eos_id = token_id(f, what, "tokenizer.ggml.eos_token_id", n);
  t.unk_id = token_id(f, what, "tokenizer.ggml.unknown_token_id", n);
  t.pad_id = token_id(f, what, "tokenizer.ggml.padding_token_id", n);
  t.add_bos = flag(f, what, "tokenizer.ggml.add_bos_token");
  t.add_eos = flag(f, what, "tokenizer.ggml.add_eos_token");
  return t;
}

}  // namespace ap::gguf
