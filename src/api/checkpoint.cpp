// checkpoint.cpp — the safetensors reader and writer of checkpoint.h.
//
// The writer is deterministic (the same state gives the same bytes: the header's keys in a fixed
// order, floats written by format_float, data bytes assembled explicitly in little-endian order,
// whatever the host). The reader trusts nothing: it checks the header length against the file and
// the limit, reads the header with the project's strict JSON reader (no repeated key, valid UTF-8),
// reads and checks the metadata, derives from the config the exact list of tensors and shapes a
// checkpoint must hold, checks every entry against it and the offsets against the data, and only
// then allocates (so memory never exceeds the file's size) and copies the values, checking each.
// Every error is an InputError whose message names the byte, tensor or metadata key at fault.
#include "checkpoint.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#ifndef __EMSCRIPTEN__
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "../core/number_text.h"
#include "../core/tokenizer.h"
#include "../core/utf8.h"
#include "gpt_json.h"
#include "json.h"

namespace ap {

using json::Value;

namespace {

constexpr const char* kMeta = "__metadata__";
constexpr size_t kMaxTextName = 1024;

template <class Int>
std::string num(Int v) {
  return std::to_string(v);
}

// A name from the file, shortened for a message (it may be huge).
std::string quoted(const std::string& s) { return "\"" + json::excerpt(s, 80) + "\""; }
std::string field_name(const std::string& s) { return json::excerpt(s, 200); }

[[noreturn]] void fail(const std::string& message, const std::string& field = "checkpoint") {
  throw InputError(message, field);
}

// ---------------------------------------------------------------- the tensors a config needs

enum class Store { params, lm_head, m, v };

struct TensorSlot {
  std::string name;
  Shape shape;
  std::string dims;  // the shape in the config's words: "vocab_size, n_embd"
  Store store;
  int64_t offset;  // in floats, into params / m / v (lm_head: wte's)
  int64_t numel;
};

// The shape of a model tensor in the config's words (for messages).
std::string dims_of(const std::string& name) {
  auto ends = [&](const char* suffix) {
    const size_t n = std::strlen(suffix);
    return name.size() >= n && name.compare(name.size() - n, n, suffix) == 0;
  };
  if (ends("wte.weight") || name == "lm_head.weight") return "vocab_size, n_embd";
  if (ends("wpe.weight")) return "block_size, n_embd";
  if (ends("c_attn.weight")) return "3·n_embd, n_embd";
  if (ends("c_attn.bias")) return "3·n_embd";
  if (ends("attn.c_proj.weight")) return "n_embd, n_embd";
  if (ends("c_fc.weight")) return "4·n_embd, n_embd";
  if (ends("c_fc.bias")) return "4·n_embd";
  if (ends("mlp.c_proj.weight")) return "n_embd, 4·n_embd";
  return "n_embd";  // LayerNorm weights and biases, the projections' biases
}

// Header order: the model (nanoGPT's state_dict order), lm_head, then AdamW's m and v.
std::vector<TensorSlot> tensor_slots(const GPTConfig& c) {
  const std::vector<ParamTensor> params = param_tensors(c);
  std::vector<TensorSlot> out;
  out.reserve(3 * params.size() + 1);
  for (const ParamTensor& p : params) out.push_back({p.name, p.shape, dims_of(p.name), Store::params, p.offset, p.numel});
  const ParamTensor& wte = params.front();
  out.push_back({"lm_head.weight", wte.shape, dims_of("lm_head.weight"), Store::lm_head, wte.offset, wte.numel});
  for (const ParamTensor& p : params)
    out.push_back({"optimizer.exp_avg." + p.name, p.shape, dims_of(p.name), Store::m, p.offset, p.numel});
  for (const ParamTensor& p : params)
    out.push_back({"optimizer.exp_avg_sq." + p.name, p.shape, dims_of(p.name), Store::v, p.offset, p.numel});
  return out;
}

std::string shape_text(const std::vector<uint64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + num(s[i]);
  return out + "]";
}
std::string shape_text(const Shape& s) {
  std::vector<uint64_t> u;
  for (int d : s) u.push_back(static_cast<uint64_t>(d));
  return shape_text(u);
}

// Element `flat` of a tensor of shape s as "[i, j]".
std::string element_text(const Shape& s, int64_t flat) {
  std::vector<uint64_t> idx(s.size());
  for (size_t k = s.size(); k-- > 0;) {
    idx[k] = static_cast<uint64_t>(flat % s[k]);
    flat /= s[k];
  }
  return shape_text(idx);
}

// ---------------------------------------------------------------- bytes

void put_u64_le(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint64_t get_u64_le(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void put_f32_le(char* out, const float* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &src[i], 4);
    out[4 * i + 0] = static_cast<char>(u & 0xFF);
    out[4 * i + 1] = static_cast<char>((u >> 8) & 0xFF);
    out[4 * i + 2] = static_cast<char>((u >> 16) & 0xFF);
    out[4 * i + 3] = static_cast<char>((u >> 24) & 0xFF);
  }
}

float get_f32_le(const unsigned char* p) {
  const uint32_t u = uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A decimal integer as the writer writes it: digits only, no sign, no leading zero, ≤ 2^64 − 1.
bool parse_u64(const std::string& s, uint64_t& out) {
  if (s.empty() || s.size() > 20 || (s.size() > 1 && s[0] == '0')) return false;
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    const uint64_t d = static_cast<uint64_t>(ch - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

// ---------------------------------------------------------------- metadata

const char* const kMetaKeys[] = {"format", "format_version", "config", "train", "vocab", "data",
                                 "step",   "seed",           "rng_state", "adam_t", "val_loss"};

Value metadata(const TrainState& s) {
  Value m = Value::object();
  m.set("format", kCheckpointFormat);
  m.set("format_version", std::to_string(kCheckpointFormatVersion));
  m.set("config", config_json(s.model).dump());
  m.set("train", train_config_json(s.train).dump());
  Value vocab = Value::array();
  for (char32_t c : s.vocab) vocab.push(utf8_encode(c));
  m.set("vocab", vocab.dump());
  m.set("data", data_source_json(s).dump());
  m.set("step", num(static_cast<int64_t>(s.step)));
  m.set("seed", num(static_cast<uint64_t>(s.train.seed)));
  m.set("rng_state", num(static_cast<uint64_t>(s.sampler_state)));
  m.set("adam_t", num(static_cast<int64_t>(s.adam_t)));
  m.set("val_loss", s.last_val_loss < 0.0f ? std::string() : format_float(s.last_val_loss));
  return m;
}

std::string meta_field(const std::string& key) { return std::string(kMeta) + "." + key; }

// Runs f; an InputError from inside (read_config's, the tokenizer's) is renamed to the metadata
// key, so the user learns where in the file the bad value is.
template <class F>
auto in_metadata(const std::string& key, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const InputError& e) {
    const std::string where = meta_field(key);
    std::string field = e.field;
    if (field.rfind(where, 0) != 0) field = (field.empty() || field == key) ? where : where + "." + field;
    std::string message = e.what();
    if (message.rfind(where, 0) != 0) message = where + ": " + message;
    throw InputError(message, field);
  }
}

Value parse_meta_json(const std::string& key, const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::JsonError& e) {
    fail(meta_field(key) + " is not valid JSON: " + e.what(), meta_field(key));
  }
}

uint64_t meta_u64(const Value& meta, const std::string& key) {
  const std::string& s = meta.find(key)->as_string();
  uint64_t v = 0;
  if (!parse_u64(s, v))
    fail(meta_field(key) + " is " + quoted(s) + ": it must be a decimal integer (digits only, at most 2^64 − 1)",
         meta_field(key));
  return v;
}

std::vector<char32_t> read_vocab(const Value& v) {
  if (!v.is_array()) fail(meta_field("vocab") + " must be a JSON array of one-character strings", meta_field("vocab"));
  if (v.size() > static_cast<size_t>(kMaxVocab))
    fail(meta_field("vocab") + " has " + num(v.size()) + " characters, more than the limit of " + num(kMaxVocab),
         meta_field("vocab"));
  std::vector<char32_t> chars;
  chars.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const Value& item = v[i];
    std::vector<char32_t> cps;
    if (item.is_string()) cps = utf8_decode(item.as_string(), "vocab");  // valid: the JSON reader checked
    if (cps.size() != 1)
      fail(meta_field("vocab") + ": entry " + num(i) + " (counting from 0) is " + json::excerpt(item.dump(), 40) +
               ", not a string of one character",
           meta_field("vocab"));
    chars.push_back(cps[0]);
  }
  return in_metadata("vocab", [&] { return CharTokenizer::from_chars(chars).chars(); });
}

void read_data(const Value& v, TrainState& s) {
  const std::string where = meta_field("data");
  if (!v.is_object()) fail(where + " must be a JSON object", where);
  auto string_of = [&](const char* key) -> const std::string& {
    const Value* x = v.find(key);
    if (!x || !x->is_string()) fail(where + " needs \"" + key + "\" as a string", where + "." + key);
    return x->as_string();
  };
  for (const auto& m : v.members())
    if (m.first != "task" && m.first != "n_chars" && m.first != "text_name" && m.first != "text_fingerprint")
      fail(where + " has an unknown key " + quoted(m.first), where);
  if (v.find("task")) {
    if (v.find("text_name") || v.find("text_fingerprint"))
      fail(where + " names both a task and a text", where);
    s.task = string_of("task");
    const TaskInfo& info = in_metadata("data", [&]() -> const TaskInfo& { return task_info(s.task); });
    const Value* n = v.find("n_chars");
    if (!n || !n->is_number() || std::floor(n->as_number()) != n->as_number() ||
        n->as_number() < static_cast<double>(kMinTaskChars) || n->as_number() > static_cast<double>(kMaxTaskChars))
      fail(where + ": \"n_chars\" must be a whole number from " + num(static_cast<int64_t>(kMinTaskChars)) + " to " +
               num(static_cast<int64_t>(kMaxTaskChars)) + ", got " + (n ? json::excerpt(n->dump(), 24) : "nothing"),
           where + ".n_chars");
    s.n_chars = static_cast<long long>(n->as_number());
    // A task's vocabulary is its alphabet: anything else could not encode its regenerated text.
    const std::vector<char32_t> alphabet = CharTokenizer::from_text(info.alphabet).chars();
    if (s.vocab != alphabet)
      fail(meta_field("vocab") + " is not the alphabet of the task \"" + s.task + "\" (" + num(alphabet.size()) +
               " characters; the file has " + num(s.vocab.size()) + ")",
           meta_field("vocab"));
  } else {
    if (v.find("n_chars")) fail(where + ": \"n_chars\" belongs to a task, and there is none", where + ".n_chars");
    s.text_name = string_of("text_name");
    if (s.text_name.size() > kMaxTextName)
      fail(where + ": \"text_name\" is " + num(s.text_name.size()) + " bytes, more than the limit of " +
               num(kMaxTextName),
           where + ".text_name");
    s.text_fingerprint = string_of("text_fingerprint");
    bool hex = s.text_fingerprint.size() == 16;
    for (char c : s.text_fingerprint) hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
    if (!hex)
      fail(where + ": \"text_fingerprint\" is " + quoted(s.text_fingerprint) + ", not 16 lowercase hex digits",
           where + ".text_fingerprint");
  }
}

TrainState read_metadata(const Value& meta) {
  if (!meta.is_object()) fail(std::string(kMeta) + " must be a JSON object of strings", kMeta);
  // The format first: a safetensors file from elsewhere is told so, not that its keys are unknown.
  const Value* format = meta.find("format");
  if (!format)
    fail(std::string(kMeta) + " has no \"format\": this safetensors file is not an Attention Playground checkpoint",
         meta_field("format"));
  if (!format->is_string() || format->as_string() != kCheckpointFormat)
    fail(meta_field("format") + " is " + json::excerpt(format->dump(), 40) + ", not \"" + kCheckpointFormat +
             "\": this safetensors file is not an Attention Playground checkpoint",
         meta_field("format"));
  for (const auto& m : meta.members()) {
    bool known = false;
    for (const char* k : kMetaKeys) known = known || m.first == k;
    if (!known) fail(std::string(kMeta) + " has an unknown key " + quoted(m.first), kMeta);
    if (!m.second.is_string())
      fail(meta_field(m.first) + " must be a string (safetensors metadata maps strings to strings), got " +
               json::excerpt(m.second.dump(), 24),
           meta_field(m.first));
  }
  for (const char* k : kMetaKeys)
    if (!meta.find(k)) fail(std::string(kMeta) + " has no \"" + k + "\"", meta_field(k));
  const std::string& version = meta.find("format_version")->as_string();
  if (version != std::to_string(kCheckpointFormatVersion)) {
    uint64_t v = 0;
    const bool newer = parse_u64(version, v) && v > static_cast<uint64_t>(kCheckpointFormatVersion);
    fail(meta_field("format_version") + " is " + quoted(version) + ": this build reads version " +
             std::to_string(kCheckpointFormatVersion) + (newer ? " (the file was written by a newer version)" : ""),
         meta_field("format_version"));
  }

  TrainState s;
  const Value config = parse_meta_json("config", meta.find("config")->as_string());
  s.model = in_metadata("config", [&] { return read_config(config, meta_field("config")); });
  const Value train = parse_meta_json("train", meta.find("train")->as_string());
  s.train = in_metadata("train", [&] { return read_train_config(train, meta_field("train")); });
  s.train.seed = meta_u64(meta, "seed");
  s.vocab = read_vocab(parse_meta_json("vocab", meta.find("vocab")->as_string()));
  if (static_cast<int64_t>(s.vocab.size()) != s.model.vocab_size)
    fail(meta_field("vocab") + " has " + num(s.vocab.size()) + " characters but " + meta_field("config") +
             " has vocab_size " + num(s.model.vocab_size),
         meta_field("vocab"));
  read_data(parse_meta_json("data", meta.find("data")->as_string()), s);

  const uint64_t step = meta_u64(meta, "step");
  if (step > static_cast<uint64_t>(kMaxSteps))
    fail(meta_field("step") + " is " + num(step) + ", more than the limit of " + num(kMaxSteps), meta_field("step"));
  s.step = static_cast<int64_t>(step);
  s.sampler_state = meta_u64(meta, "rng_state");
  const uint64_t adam_t = meta_u64(meta, "adam_t");
  if (adam_t > step)
    fail(meta_field("adam_t") + " is " + num(adam_t) + ", more updates than the " + num(step) + " steps done",
         meta_field("adam_t"));
  s.adam_t = static_cast<int64_t>(adam_t);
  const std::string& val = meta.find("val_loss")->as_string();
  if (val.empty()) {
    s.last_val_loss = -1.0f;
  } else {
    double d = 0;
    if (!parse_decimal(val.data(), val.data() + val.size(), d) || d < 0)
      fail(meta_field("val_loss") + " is " + quoted(val) +
               ": it must be a loss (a number ≥ 0, or nan or inf), or empty if never evaluated",
           meta_field("val_loss"));
    s.last_val_loss = static_cast<float>(d);
  }
  return s;
}

std::string config_difference(const GPTConfig& a, const GPTConfig& b) {
  std::string out;
  auto add = [&](const char* key, const std::string& x, const std::string& y) {
    if (x != y) out += std::string(out.empty() ? "" : ", ") + key + " " + x + " vs " + y;
  };
  add("vocab_size", num(a.vocab_size), num(b.vocab_size));
  add("block_size", num(a.block_size), num(b.block_size));
  add("n_layer", num(a.n_layer), num(b.n_layer));
  add("n_head", num(a.n_head), num(b.n_head));
  add("n_embd", num(a.n_embd), num(b.n_embd));
  add("mask", a.mask == MaskVariant::strict ? "strict" : "inclusive",
      b.mask == MaskVariant::strict ? "strict" : "inclusive");
  add("softmax", a.stable_softmax ? "stable" : "naive", b.stable_softmax ? "stable" : "naive");
  return out;
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

struct Entry {
  const TensorSlot* slot;
  uint64_t begin, end;  // into the data
};

void check_finite(const TensorSlot& t, const float* x, uint64_t data_start, uint64_t begin) {
  for (int64_t i = 0; i < t.numel; ++i) {
    const bool bad = !std::isfinite(x[i]) || (t.store == Store::v && x[i] < 0.0f);
    if (!bad) continue;
    const std::string at = " at element " + element_text(t.shape, i) + " (byte " +
                           num(data_start + begin + 4 * static_cast<uint64_t>(i)) + ")";
    if (!std::isfinite(x[i]))
      fail("tensor " + quoted(t.name) + " holds " + format_float(x[i]) + at +
               ": a checkpoint's weights and moments must be finite",
           t.name);
    fail("tensor " + quoted(t.name) + " holds " + format_float(x[i]) + at +
             ": AdamW's second moment is a mean of squares and cannot be negative",
         t.name);
  }
}

}  // namespace

// ---------------------------------------------------------------- writing

std::string save_checkpoint(const TrainState& s) {
  s.model.validate();
  const int64_t P = s.model.num_parameters();
  if (static_cast<int64_t>(s.params.size()) != P || static_cast<int64_t>(s.m.size()) != P ||
      static_cast<int64_t>(s.v.size()) != P)
    fail("the state holds " + num(s.params.size()) + " parameters and moments of " + num(s.m.size()) + " and " +
         num(s.v.size()) + ", but its config needs " + num(P) + " each: not saved");
  if (static_cast<int64_t>(s.vocab.size()) != s.model.vocab_size)
    fail("the state's vocabulary has " + num(s.vocab.size()) + " characters but its config's vocab_size is " +
             num(s.model.vocab_size) + ": not saved",
         "vocab");
  // A file this writer makes is always one the reader takes: refuse what it would refuse.
  const Value meta = metadata(s);
  try {
    read_metadata(meta);
  } catch (const InputError& e) {
    fail(std::string(e.what()) + ": not saved", e.field);
  }
  const std::vector<TensorSlot> slots = tensor_slots(s.model);
  for (const TensorSlot& t : slots) {
    if (t.store == Store::lm_head) continue;
    const std::vector<float>& src = t.store == Store::params ? s.params : t.store == Store::m ? s.m : s.v;
    try {
      check_finite(t, src.data() + t.offset, 0, 0);
    } catch (const InputError& e) {
      const std::string message = e.what();
      fail(message.substr(0, message.find(" (byte")) + ": not saved", t.name);
    }
  }

  Value header = Value::object();
  header.set(kMeta, meta);
  uint64_t offset = 0;
  for (const TensorSlot& t : slots) {
    Value e = Value::object();
    e.set("dtype", "F32");
    Value shape = Value::array();
    for (int d : t.shape) shape.push(d);
    e.set("shape", shape);
    Value offsets = Value::array();
    offsets.push(static_cast<long long>(offset));
    offset += 4 * static_cast<uint64_t>(t.numel);
    offsets.push(static_cast<long long>(offset));
    e.set("data_offsets", offsets);
    header.set(t.name, e);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  if (text.size() > kMaxCheckpointHeader)
    fail("the header would be " + num(text.size()) + " bytes, more than the limit of " + num(kMaxCheckpointHeader));
  const uint64_t total = 8 + text.size() + offset;
  if (total > kMaxCheckpointBytes)
    fail("the checkpoint would be " + num(total) + " bytes, more than the limit of " + num(kMaxCheckpointBytes));

  std::string out;
  out.reserve(total);
  put_u64_le(out, text.size());
  out += text;
  const size_t data_start = out.size();
  out.resize(total);
  uint64_t at = 0;
  for (const TensorSlot& t : slots) {
    const std::vector<float>& src =
        t.store == Store::m ? s.m : t.store == Store::v ? s.v : s.params;  // lm_head: wte's values
    put_f32_le(&out[data_start + at], src.data() + t.offset, t.numel);
    at += 4 * static_cast<uint64_t>(t.numel);
  }
  return out;
}

// ---------------------------------------------------------------- reading

TrainState load_checkpoint(const std::string& bytes, const GPTConfig* expected) {
  const uint64_t size = bytes.size();
  if (size > kMaxCheckpointBytes)
    fail("the file is " + num(size) + " bytes, more than the limit of " + num(kMaxCheckpointBytes) +
         " for a checkpoint");
  if (size < 8)
    fail("the file is " + num(size) + " bytes: it ends at byte " + num(size) +
         ", inside the 8-byte header length (bytes 0 to 7) that starts a safetensors file (truncated)");
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  const uint64_t n = get_u64_le(b);
  if (n > kMaxCheckpointHeader)
    fail("the header length (bytes 0 to 7, little-endian) is " + num(n) + " bytes, more than the limit of " +
         num(kMaxCheckpointHeader) + ": not a checkpoint, or a corrupted one");
  if (n < 2)
    fail("the header length (bytes 0 to 7, little-endian) is " + num(n) +
         " bytes: too short for a JSON header");
  if (8 + n > size)
    fail("the header length (bytes 0 to 7) says the JSON header takes bytes 8 to " + num(8 + n - 1) +
         ", but the file ends at byte " + num(size) + " (truncated, or not a safetensors file)");
  const std::string text = bytes.substr(8, n);
  const std::string where_header = "the header (bytes 8 to " + num(8 + n - 1) + ")";
  Value header;
  try {
    header = json::parse(text);
  } catch (const json::JsonError& e) {
    fail(where_header + " is not valid JSON, at byte " + num(8 + offset_of(text, e.line, e.column)) + ": " + e.what());
  }
  if (!header.is_object()) fail(where_header + " is JSON but not an object of tensors");
  const Value* meta = header.find(kMeta);
  if (!meta)
    fail("the header has no \"__metadata__\": this safetensors file is not an Attention Playground checkpoint",
         kMeta);

  TrainState s = read_metadata(*meta);
  if (expected && *expected != s.model)
    fail("this checkpoint's model " + config_json(s.model).dump() + " is not the expected " +
             config_json(*expected).dump() + " (" + config_difference(s.model, *expected) + ")",
         meta_field("config"));

  const std::vector<TensorSlot> slots = tensor_slots(s.model);
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < slots.size(); ++i) index.emplace(slots[i].name, i);
  std::vector<bool> seen(slots.size(), false);
  std::vector<Entry> entries;
  entries.reserve(slots.size());
  const uint64_t data_start = 8 + n, data_size = size - data_start;
  const std::string config_words = "n_layer " + num(s.model.n_layer) + ", n_embd " + num(s.model.n_embd) +
                                   ", vocab_size " + num(s.model.vocab_size) + ", block_size " +
                                   num(s.model.block_size);

  // Pass 1: every entry against the config's list, the offsets against the data. No allocation
  // that the file's size does not bound.
  uint64_t pos = 0;
  for (const auto& member : header.members()) {
    const std::string& name = member.first;
    if (name == kMeta) continue;
    const auto it = index.find(name);
    if (it == index.end()) {
      std::string why = "this config (" + config_words + ") has no such tensor";
      if (name.rfind("transformer.h.", 0) == 0 || name.rfind("optimizer.exp_avg", 0) == 0)
        why += " (its layers are 0 to " + num(s.model.n_layer - 1) + ")";
      fail("the header lists an unknown tensor " + quoted(name) + ": " + why, field_name(name));
    }
    const TensorSlot& slot = slots[it->second];
    seen[it->second] = true;
    const Value& e = member.second;
    if (!e.is_object())
      fail("tensor " + quoted(name) + ": its header entry must be an object {dtype, shape, data_offsets}", name);
    for (const auto& k : e.members())
      if (k.first != "dtype" && k.first != "shape" && k.first != "data_offsets")
        fail("tensor " + quoted(name) + " has an unknown key " + quoted(k.first) + " in its header entry", name);
    const Value* dtype = e.find("dtype");
    const Value* shape = e.find("shape");
    const Value* offsets = e.find("data_offsets");
    if (!dtype || !shape || !offsets)
      fail("tensor " + quoted(name) + " has no \"" + (!dtype ? "dtype" : !shape ? "shape" : "data_offsets") +
               "\" in its header entry",
           name);
    if (!dtype->is_string() || dtype->as_string() != "F32")
      fail("tensor " + quoted(name) + " has dtype " + json::excerpt(dtype->dump(), 24) +
               ": this format stores F32 only (float32, little-endian)",
           name);
    if (!shape->is_array() || shape->size() > 8)
      fail("tensor " + quoted(name) + ": \"shape\" must be an array of at most 8 dimensions", name);
    std::vector<uint64_t> dims;
    for (const Value& d : shape->items()) dims.push_back(header_uint(d, name, "\"shape\"'s dimensions"));
    bool same = dims.size() == slot.shape.size();
    for (size_t i = 0; same && i < dims.size(); ++i) same = dims[i] == static_cast<uint64_t>(slot.shape[i]);
    if (!same)
      fail("tensor " + quoted(name) + " has shape " + shape_text(dims) + ", but this checkpoint's config (" +
               config_words + ") needs " + shape_text(slot.shape) + " = [" + slot.dims + "]",
           name);
    if (!offsets->is_array() || offsets->size() != 2)
      fail("tensor " + quoted(name) + ": \"data_offsets\" must be [begin, end]", name);
    const uint64_t begin = header_uint((*offsets)[0], name, "\"data_offsets\"");
    const uint64_t end = header_uint((*offsets)[1], name, "\"data_offsets\"");
    const std::string offsets_text = "data_offsets [" + num(begin) + ", " + num(end) + "]";
    if (end < begin) fail("tensor " + quoted(name) + ": its " + offsets_text + " end before they begin", name);
    const uint64_t want = 4 * static_cast<uint64_t>(slot.numel);
    if (end - begin != want)
      fail("tensor " + quoted(name) + ": its " + offsets_text + " hold " + num(end - begin) + " bytes, but F32 " +
               shape_text(slot.shape) + " needs " + num(want),
           name);
    if (begin != pos) {
      const Entry* previous = entries.empty() ? nullptr : &entries.back();
      const std::string prev = previous ? "the previous tensor " + quoted(previous->slot->name) : "the data";
      if (begin > pos)
        fail("tensor " + quoted(name) + ": its " + offsets_text + " leave a gap of " + num(begin - pos) +
                 " bytes after " + prev + " (which ends at data offset " + num(pos) +
                 "): the tensors must tile the data in header order",
             name);
      if (previous && end <= previous->begin)
        fail("tensor " + quoted(name) + ": its " + offsets_text + " come before those of " + prev +
                 " (out of order): the tensors must tile the data in header order",
             name);
      fail("tensor " + quoted(name) + ": its " + offsets_text + " overlap " + prev + " (which ends at data offset " +
               num(pos) + ")",
           name);
    }
    if (end > data_size)
      fail("tensor " + quoted(name) + ": its " + offsets_text + " run to byte " + num(data_start + end) +
               " of the file, but the file ends at byte " + num(size) + " (truncated)",
           name);
    entries.push_back({&slot, begin, end});
    pos = end;
  }
  for (size_t i = 0; i < slots.size(); ++i)
    if (!seen[i])
      fail("the checkpoint has no tensor " + quoted(slots[i].name) + " (" + shape_text(slots[i].shape) +
               "), which this config (" + config_words + ") needs",
           slots[i].name);
  if (pos != data_size)
    fail("the file has " + num(data_size - pos) + " bytes after the last tensor's data (bytes " +
         num(data_start + pos) + " to " + num(size - 1) + "): trailing bytes, not part of any tensor");

  // Pass 2: the values. The sizes are proven to tile the file, so this allocates at most its size.
  const int64_t P = s.model.num_parameters();
  s.params.assign(static_cast<size_t>(P), 0.0f);
  s.m.assign(static_cast<size_t>(P), 0.0f);
  s.v.assign(static_cast<size_t>(P), 0.0f);
  std::vector<float> lm_head;
  uint64_t lm_head_begin = 0;
  for (const Entry& e : entries) {
    const TensorSlot& t = *e.slot;
    float* dst;
    if (t.store == Store::lm_head) {
      lm_head.resize(static_cast<size_t>(t.numel));
      lm_head_begin = e.begin;
      dst = lm_head.data();
    } else {
      dst = (t.store == Store::params ? s.params : t.store == Store::m ? s.m : s.v).data() + t.offset;
    }
    const unsigned char* src = b + data_start + e.begin;
    for (int64_t i = 0; i < t.numel; ++i) dst[i] = get_f32_le(src + 4 * i);
    check_finite(t, dst, data_start, e.begin);
  }
  const TensorSlot& wte = slots.front();
  for (int64_t i = 0; i < wte.numel; ++i)
    if (bits(lm_head[static_cast<size_t>(i)]) != bits(s.params[static_cast<size_t>(wte.offset + i)]))
      fail("tensor \"lm_head.weight\" differs from \"transformer.wte.weight\" at element " +
               element_text(wte.shape, i) + " (byte " + num(data_start + lm_head_begin + 4 * static_cast<uint64_t>(i)) +
               "): " + format_float(lm_head[static_cast<size_t>(i)]) + " vs " +
               format_float(s.params[static_cast<size_t>(wte.offset + i)]) +
               "; the output head is tied to the token embedding, so the two must be equal",
           "lm_head.weight");
  return s;
}

// ---------------------------------------------------------------- files

#ifdef __EMSCRIPTEN__

void write_checkpoint_file(const std::string& path, const std::string&) {
  fail("the wasm build has no files (" + path + "): save to bytes instead", "path");
}
std::string read_checkpoint_file(const std::string& path) {
  fail("the wasm build has no files (" + path + "): load from bytes instead", "path");
}

#else

namespace {

std::string sys_error(const std::string& what, const std::string& path, int err) {
  return what + " " + path + ": " + std::strerror(err);
}

}  // namespace

void write_checkpoint_file(const std::string& path, const std::string& bytes) {
  if (path.empty()) fail("no file name given for the checkpoint", "path");
  // The temporary file sits beside the target, so the rename stays on one file system (atomic).
  static unsigned counter = 0;
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = path + ".tmp-" + std::to_string(static_cast<long>(getpid())) + "-" + std::to_string(counter++);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) fail(sys_error("cannot write", temp, errno), "path");
  }
  if (fd < 0) fail(sys_error("cannot write", temp, EEXIST), "path");
  auto abandon = [&](const std::string& what, int err) {
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    fail(sys_error(what, temp, err) + " (" + path + " is unchanged)", "path");
  };
  // A file being replaced keeps its permissions (a checkpoint made private stays private).
  struct stat old;
  if (::stat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode) && ::fchmod(fd, old.st_mode & 07777) != 0)
    abandon("cannot set the permissions of", errno);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      abandon("cannot write", errno);
    }
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0) abandon("cannot flush", errno);
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) abandon("cannot close", errno);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(sys_error("cannot replace", path, err) + " (it is unchanged)", "path");
  }
  // Make the rename itself durable: flush the directory's entry (best effort).
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::string read_checkpoint_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(sys_error("cannot open", path, errno), "path");
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    fail(sys_error("cannot read", path, err), "path");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("cannot read " + path + ": not a regular file", "path");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxCheckpointBytes) {
    ::close(fd);
    fail(path + " is " + num(static_cast<uint64_t>(st.st_size)) + " bytes, more than the limit of " +
             num(kMaxCheckpointBytes) + " for a checkpoint",
         "path");
  }
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t r = ::read(fd, &out[done], out.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int err = errno;
      ::close(fd);
      fail(sys_error("cannot read", path, err), "path");
    }
    if (r == 0) break;  // the file shrank while reading: load_checkpoint reports the truncation
    done += static_cast<size_t>(r);
  }
  out.resize(done);
  ::close(fd);
  return out;
}

#endif

}  // namespace ap
