// checkpoint.cpp — the GPT's checkpoint (checkpoint.h) on the safetensors container
// (safetensors.h): which tensors a config needs, the metadata, and the checks of what is read.
//
// The writer is deterministic (the same state gives the same bytes: the metadata's keys in a fixed
// order, floats written by format_float; safetensors.h writes the data little-endian whatever the
// host). The reader trusts nothing and goes in steps: the container (safetensors::read_header), the
// metadata (format first, then every key), the config it gives against an expected one, every
// tensor entry against the exact list and shapes that config needs (checked as the container is
// read, so the first fault in header order is the one named), and only then the values, each
// checked (finite; a second moment ≥ 0; lm_head bitwise equal to wte). Memory never exceeds the
// file's size. Every error is an InputError whose message names the byte, tensor or metadata key.
#include "api/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/number_text.h"
#include "core/tokenizers/tokenizer.h"
#include "core/base/utf8.h"
#include "formats/file_io.h"
#include "api/gpt_json.h"
#include "formats/hf_tokenizer_json.h"
#include "formats/json.h"
#include "formats/safetensors.h"

namespace ap {

using json::Value;
using safetensors::quoted;

namespace {

constexpr const char* kMeta = safetensors::kMetadataKey;
constexpr size_t kMaxTextName = 1024;
const safetensors::Limits kLimits{kMaxCheckpointHeader, kMaxCheckpointBytes, "checkpoint"};

template <class Int>
std::string num(Int v) {
  return std::to_string(v);
}

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
  // (n_kv_head: c_attn has n_embd + 2·n_kv_head·head_dim rows; n_inner replaces 4·n_embd)
  if (ends("c_attn.weight")) return "3·n_embd, n_embd";
  if (ends("c_attn.bias")) return "3·n_embd";
  if (ends("attn.c_proj.weight")) return "n_embd, n_embd";  // (n_embd, n_head·head_size with head_size)
  if (ends("q_norm.weight") || ends("k_norm.weight")) return "head_size";
  if (ends("c_fc.weight") || ends("gate_proj.weight") || ends("up_proj.weight")) return "4·n_embd, n_embd";
  if (ends("c_fc.bias") || ends("gate_proj.bias") || ends("up_proj.bias")) return "4·n_embd";
  if (ends("mlp.c_proj.weight") || ends("down_proj.weight")) return "n_embd, 4·n_embd";
  return "n_embd";  // LayerNorm weights and biases, the projections' biases
}

// Header order: the model (nanoGPT's state_dict order), lm_head, then AdamW's m and v.
std::vector<TensorSlot> tensor_slots(const GPTConfig& c, bool moments) {
  const std::vector<ParamTensor> params = param_tensors(c);
  std::vector<TensorSlot> out;
  out.reserve(3 * params.size() + 1);
  for (const ParamTensor& p : params) out.push_back({p.name, p.shape, dims_of(p.name), Store::params, p.offset, p.numel});
  const ParamTensor& wte = params.front();
  if (c.tie_embeddings)  // the tied output head, a copy of wte; untied, lm_head.weight is a parameter
    out.push_back({"lm_head.weight", wte.shape, dims_of("lm_head.weight"), Store::lm_head, wte.offset, wte.numel});
  if (!moments) return out;
  for (const ParamTensor& p : params)
    out.push_back({"optimizer.exp_avg." + p.name, p.shape, dims_of(p.name), Store::m, p.offset, p.numel});
  for (const ParamTensor& p : params)
    out.push_back({"optimizer.exp_avg_sq." + p.name, p.shape, dims_of(p.name), Store::v, p.offset, p.numel});
  return out;
}

// The state's floats that a slot holds (lm_head: wte's, in params).
const std::vector<float>& values_of(const TrainState& s, Store store) {
  return store == Store::m ? s.m : store == Store::v ? s.v : s.params;
}

std::vector<uint64_t> dims(const Shape& s) { return std::vector<uint64_t>(s.begin(), s.end()); }
std::string shape_text(const Shape& s) { return safetensors::shape_text(dims(s)); }

// Element `flat` of a tensor of shape s as "[i, j]".
std::string element_text(const Shape& s, int64_t flat) {
  std::vector<uint64_t> idx(s.size());
  for (size_t k = s.size(); k-- > 0;) {
    idx[k] = static_cast<uint64_t>(flat % s[k]);
    flat /= s[k];
  }
  return safetensors::shape_text(idx);
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

const std::vector<std::string> kMetaKeys = {"format", "format_version", "config", "train", "vocab", "data",
                                             "step",   "seed",           "rng_state", "adam_t", "val_loss"};
// A model-only file's (an imported model: no training state).
const std::vector<std::string> kModelMetaKeys = {"format", "format_version", "config", "vocab", "source"};
// A model-only file with GPT-2's BPE: its vocabulary (token strings in id order, as vocab.json's
// keys) and merges (merges.txt's text) instead of "vocab".
const std::vector<std::string> kBpeModelMetaKeys = {"format", "format_version", "config", "bpe_vocab", "bpe_merges",
                                                    "source"};
constexpr size_t kMaxSource = 1024;

Value metadata(const TrainState& s) {
  Value m = Value::object();
  m.set("format", kCheckpointFormat);
  m.set("format_version", std::to_string(kCheckpointFormatVersion));
  m.set("config", config_json(s.model).dump());
  if (!s.model_only()) m.set("train", train_config_json(s.train).dump());
  Value vocab = Value::array();
  if (s.hf_tokenizer) {  // the Llama family's tokenizer.json (and tokenizer_config.json), as read
    m.set("hf_tokenizer", s.hf_tokenizer_json);
    m.set("hf_tokenizer_config", s.hf_tokenizer_config);
  } else if (s.bpe) {
    for (const std::string& t : s.bpe->tokens()) vocab.push(t);
    m.set("bpe_vocab", vocab.dump());
    m.set("bpe_merges", s.bpe->merges_text());
  } else {
    for (char32_t c : s.vocab) vocab.push(utf8_encode(c));
    m.set("vocab", vocab.dump());
  }
  if (s.model_only()) {
    m.set("source", s.source);
    return m;
  }
  if (!s.base.empty()) m.set("base", s.base);
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

// GPT-2's BPE of a model-only file: "bpe_vocab" (token strings, id order) and "bpe_merges".
std::shared_ptr<const BpeTokenizer> read_bpe(const Value& v, const std::string& merges) {
  const std::string where = meta_field("bpe_vocab");
  if (!v.is_array()) fail(where + " must be a JSON array of token strings in id order", where);
  std::vector<std::pair<std::string, long long>> tokens;
  tokens.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      fail(where + ": entry " + num(i) + " (counting from 0) is " + json::excerpt(v[i].dump(), 40) + ", not a string", where);
    tokens.emplace_back(v[i].as_string(), static_cast<long long>(i));
  }
  return BpeTokenizer::build(tokens, parse_bpe_merges(merges, meta_field("bpe_merges")), where, meta_field("bpe_merges"));
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
  // A model-only file (what the importer writes) says where it came from instead of its training.
  const bool model_only = meta.find("source") != nullptr;
  const bool hf = meta.find("hf_tokenizer") != nullptr;
  const bool bpe = !hf && meta.find("bpe_vocab") != nullptr;
  std::vector<std::string> keys = bpe && model_only ? kBpeModelMetaKeys : model_only ? kModelMetaKeys : kMetaKeys;
  if ((bpe && !model_only) || hf) {  // a BPE instead of "vocab" (GPT-2's, or a tokenizer.json)
    keys.erase(std::find(keys.begin(), keys.end(), "vocab"));
    keys.insert(keys.end(), {hf ? "hf_tokenizer" : "bpe_vocab", hf ? "hf_tokenizer_config" : "bpe_merges"});
  }
  for (const auto& m : meta.members()) {
    bool known = !model_only && m.first == "base";  // optional: a fine-tuned run's origin
    for (const std::string& k : keys) known = known || m.first == k;
    if (!known)
      fail(std::string(kMeta) + " has an unknown key " + quoted(m.first) +
               (model_only ? " (a model-only file, with \"source\", holds no training state)" : ""),
           kMeta);
    safetensors::check_metadata_value(m.first, m.second);
  }
  for (const std::string& k : keys)
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
  if (hf) {
    s.hf_tokenizer_json = meta.find("hf_tokenizer")->as_string();
    s.hf_tokenizer_config = meta.find("hf_tokenizer_config")->as_string();
    s.hf_tokenizer = in_metadata("hf_tokenizer", [&] {
      return load_hf_tokenizer(s.hf_tokenizer_json, s.hf_tokenizer_config).tokenizer;
    });
    in_metadata("hf_tokenizer", [&] { return Tokenizer::from_hf(s.hf_tokenizer, s.model.vocab_size).vocab_size(); });
  } else if (bpe) {
    s.bpe = read_bpe(parse_meta_json("bpe_vocab", meta.find("bpe_vocab")->as_string()),
                     meta.find("bpe_merges")->as_string());
    in_metadata("bpe_vocab", [&] { return Tokenizer::from_bpe(s.bpe, s.model.vocab_size).vocab_size(); });
  } else {
    s.vocab = read_vocab(parse_meta_json("vocab", meta.find("vocab")->as_string()));
  }
  if (!bpe && !hf && static_cast<int64_t>(s.vocab.size()) != s.model.vocab_size)
    fail(meta_field("vocab") + " has " + num(s.vocab.size()) + " characters but " + meta_field("config") +
             " has vocab_size " + num(s.model.vocab_size),
         meta_field("vocab"));
  if (model_only) {
    s.source = meta.find("source")->as_string();
    if (s.source.empty() || s.source.size() > kMaxSource)
      fail(meta_field("source") + " must say where the model came from, in 1 to " + num(kMaxSource) + " bytes",
           meta_field("source"));
    return s;
  }
  if (const Value* base = meta.find("base")) {
    s.base = base->as_string();
    if (s.base.empty() || s.base.size() > kMaxSource)
      fail(meta_field("base") + " must say where the fine-tuned model came from, in 1 to " + num(kMaxSource) + " bytes",
           meta_field("base"));
  }
  const Value train = parse_meta_json("train", meta.find("train")->as_string());
  s.train = in_metadata("train", [&] { return read_train_config(train, meta_field("train")); });
  s.train.seed = meta_u64(meta, "seed");
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
  add("activation", activation_name(a.activation), activation_name(b.activation));
  add("ln_eps", format_float(a.ln_eps), format_float(b.ln_eps));
  add("bias", a.bias ? "true" : "false", b.bias ? "true" : "false");
  add("pos", positions_name(a.pos), positions_name(b.pos));
  add("rope_base", format_float(a.rope_base), format_float(b.rope_base));
  add("rope_dims", num(a.rope_dims), num(b.rope_dims));
  add("rope", rope_pairing_name(a.rope), rope_pairing_name(b.rope));
  add("n_kv_head", num(a.kv_head()), num(b.kv_head()));
  add("norm", norm_name(a.norm), norm_name(b.norm));
  add("mlp", mlp_name(a.mlp), mlp_name(b.mlp));
  add("n_inner", num(a.inner()), num(b.inner()));
  add("window", num(a.window), num(b.window));
  add("head_size", num(a.head_dim()), num(b.head_dim()));
  add("tie_embeddings", a.tie_embeddings ? "true" : "false", b.tie_embeddings ? "true" : "false");
  add("qkv_bias", a.has_qkv_bias() ? "true" : "false", b.has_qkv_bias() ? "true" : "false");
  add("qk_norm", a.qk_norm ? "true" : "false", b.qk_norm ? "true" : "false");
  add("rope_scaling", rope_scaling_json(a.rope_scaling).dump(), rope_scaling_json(b.rope_scaling).dump());
  add("sink", num(a.sink), num(b.sink));
  return out;
}

// ---------------------------------------------------------------- the tensors and their values

// Values a checkpoint may hold: finite, and a second moment ≥ 0. `data_start + begin` is the file
// byte of the tensor's first value, for the message; x holds its elements [from, from + n) (n < 0:
// all of them).
void check_finite(const TensorSlot& t, const float* x, uint64_t data_start, uint64_t begin, int64_t from = 0,
                  int64_t n = -1) {
  if (n < 0) n = t.numel - from;
  for (int64_t k = 0; k < n; ++k) {
    const bool bad = !std::isfinite(x[k]) || (t.store == Store::v && x[k] < 0.0f);
    if (!bad) continue;
    const int64_t i = from + k;
    const std::string at = " at element " + element_text(t.shape, i) + " (byte " +
                           num(data_start + begin + 4 * static_cast<uint64_t>(i)) + ")";
    if (!std::isfinite(x[k]))
      fail("tensor " + quoted(t.name) + " holds " + format_float(x[k]) + at +
               ": a checkpoint's weights and moments must be finite",
           t.name);
    fail("tensor " + quoted(t.name) + " holds " + format_float(x[k]) + at +
             ": AdamW's second moment is a mean of squares and cannot be negative",
         t.name);
  }
}

void check_expected(const GPTConfig& c, const GPTConfig* expected) {
  if (expected && *expected != c)
    fail("this checkpoint's model " + config_json(c).dump() + " is not the expected " + config_json(*expected).dump() +
             " (" + config_difference(c, *expected) + ")",
         meta_field("config"));
}

// Every tensor entry against the config's list: the names, F32, the shapes, none missing (the
// container checks the offsets between). Returns the entries in header order, with their slots.
std::vector<std::pair<safetensors::TensorInfo, const TensorSlot*>> check_tensors(const safetensors::Header& h,
                                                                                 const GPTConfig& c,
                                                                                 const std::vector<TensorSlot>& slots) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < slots.size(); ++i) index.emplace(slots[i].name, i);
  std::vector<bool> seen(slots.size(), false);
  std::vector<const TensorSlot*> order;  // the slot of each entry, in header order
  const std::string config_words = "n_layer " + num(c.n_layer) + ", n_embd " + num(c.n_embd) + ", vocab_size " +
                                   num(c.vocab_size) + ", block_size " + num(c.block_size);
  safetensors::Expect expect;
  expect.name = [&](const std::string& name) {
    const auto it = index.find(name);
    if (it == index.end()) {
      std::string why = "this config (" + config_words + ") has no such tensor";
      if (name.rfind("transformer.h.", 0) == 0 || name.rfind("optimizer.exp_avg", 0) == 0)
        why += " (its layers are 0 to " + num(c.n_layer - 1) + ")";
      fail("the header lists an unknown tensor " + quoted(name) + ": " + why, field_name(name));
    }
    seen[it->second] = true;
    order.push_back(&slots[it->second]);
  };
  expect.dtype = [&](const std::string& name, const Value& dtype) {
    if (!dtype.is_string() || dtype.as_string() != "F32")
      fail("tensor " + quoted(name) + " has dtype " + json::excerpt(dtype.dump(), 24) +
               ": this format stores F32 only (float32, little-endian)",
           name);
  };
  expect.shape = [&](const std::string& name, const std::vector<uint64_t>& shape) {
    const TensorSlot& slot = *order.back();
    if (shape != dims(slot.shape))
      fail("tensor " + quoted(name) + " has shape " + safetensors::shape_text(shape) + ", but this checkpoint's config (" +
               config_words + ") needs " + shape_text(slot.shape) + " = [" + slot.dims + "]",
           name);
  };
  expect.all_read = [&] {
    for (size_t i = 0; i < slots.size(); ++i)
      if (!seen[i])
        fail("the checkpoint has no tensor " + quoted(slots[i].name) + " (" + shape_text(slots[i].shape) +
                 "), which this config (" + config_words + ") needs",
             slots[i].name);
  };
  std::vector<safetensors::TensorInfo> tensors = safetensors::read_tensors(h, kLimits, expect);
  std::vector<std::pair<safetensors::TensorInfo, const TensorSlot*>> out;
  out.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) out.emplace_back(std::move(tensors[i]), order[i]);
  return out;
}

// The weights and AdamW's moments, in header order, each checked; then lm_head against wte. The
// entries are proven to tile the file, so this allocates at most its size.
void copy_values(const ByteSource& bytes, const safetensors::Header& h,
                 const std::vector<std::pair<safetensors::TensorInfo, const TensorSlot*>>& tensors,
                 const TensorSlot& wte, TrainState& s) {
  const int64_t P = s.model.num_parameters();
  s.params.assign(static_cast<size_t>(P), 0.0f);
  if (!s.model_only()) {
    s.m.assign(static_cast<size_t>(P), 0.0f);
    s.v.assign(static_cast<size_t>(P), 0.0f);
  }
  std::vector<float> lm_head;
  uint64_t lm_head_begin = 0;
  for (const auto& [info, slot] : tensors) {
    float* dst;
    if (slot->store == Store::lm_head) {
      lm_head.resize(static_cast<size_t>(slot->numel));
      lm_head_begin = info.begin;
      dst = lm_head.data();
    } else {
      dst = (slot->store == Store::params ? s.params : slot->store == Store::m ? s.m : s.v).data() + slot->offset;
    }
    safetensors::read_f32(bytes, h, info, dst);
    check_finite(*slot, dst, h.data_start, info.begin);
  }
  for (int64_t i = 0; !lm_head.empty() && i < wte.numel; ++i)
    if (bits(lm_head[static_cast<size_t>(i)]) != bits(s.params[static_cast<size_t>(wte.offset + i)]))
      fail("tensor \"lm_head.weight\" differs from \"transformer.wte.weight\" at element " +
               element_text(wte.shape, i) + " (byte " + num(h.data_start + lm_head_begin + 4 * static_cast<uint64_t>(i)) +
               "): " + format_float(lm_head[static_cast<size_t>(i)]) + " vs " +
               format_float(s.params[static_cast<size_t>(wte.offset + i)]) +
               "; the output head is tied to the token embedding, so the two must be equal",
           "lm_head.weight");
}

}  // namespace

// ---------------------------------------------------------------- writing

namespace {

// What save_checkpoint checks before it writes (params: whether s must hold its parameters), and the
// file's metadata.
Value checked_metadata(const TrainState& s, bool params) {
  s.model.validate();
  const int64_t P = s.model.num_parameters();
  const int64_t moments = s.model_only() ? 0 : P;  // a model-only file has none
  if ((params && static_cast<int64_t>(s.params.size()) != P) || static_cast<int64_t>(s.m.size()) != moments ||
      static_cast<int64_t>(s.v.size()) != moments)
    fail("the state holds " + num(s.params.size()) + " parameters and moments of " + num(s.m.size()) + " and " +
         num(s.v.size()) + ", but its config needs " + num(P) + " each: not saved");
  if (!s.bpe && !s.hf_tokenizer && static_cast<int64_t>(s.vocab.size()) != s.model.vocab_size)
    fail("the state's vocabulary has " + num(s.vocab.size()) + " characters but its config's vocab_size is " +
             num(s.model.vocab_size) + ": not saved",
         "vocab");
  // A file this writer makes is always one the reader takes: refuse what it would refuse.
  Value meta = metadata(s);
  try {
    read_metadata(meta);
  } catch (const InputError& e) {
    fail(std::string(e.what()) + ": not saved", e.field);
  }
  return meta;
}

// A tensor's values checked as the reader will check them (the tied lm_head is wte's, checked there).
// (src: elements [from, from + n) of it; n < 0: all.)
void check_saved(const TensorSlot& t, const float* src, int64_t from = 0, int64_t n = -1) {
  if (t.store == Store::lm_head) return;
  try {
    check_finite(t, src, 0, 0, from, n);
  } catch (const InputError& e) {
    const std::string message = e.what();
    fail(message.substr(0, message.find(" (byte")) + ": not saved", t.name);
  }
}

}  // namespace

std::string save_checkpoint(const TrainState& s) {
  const Value meta = checked_metadata(s, true);
  const std::vector<TensorSlot> slots = tensor_slots(s.model, !s.model_only());
  std::vector<safetensors::TensorData> tensors;
  for (const TensorSlot& t : slots) {
    const float* src = values_of(s, t.store).data() + t.offset;
    check_saved(t, src);
    tensors.push_back({t.name, "F32", dims(t.shape), src, nullptr});
  }
  return safetensors::write_file(meta, tensors, kLimits);
}

void save_checkpoint(const TrainState& s, const ParamRows& fill,
                     const std::function<void(const char* data, size_t n)>& write) {
  if (!s.model_only() || !s.params.empty())
    fail("a checkpoint written piece by piece is a model alone, its parameters given one at a time: not saved");
  const Value meta = checked_metadata(s, false);
  const std::vector<TensorSlot> slots = tensor_slots(s.model, false);
  const std::vector<ParamTensor> params = param_tensors(s.model);
  std::vector<safetensors::TensorData> tensors;
  for (const TensorSlot& t : slots) tensors.push_back({t.name, "F32", dims(t.shape), nullptr, nullptr});
  const std::string header = safetensors::write_header(meta, tensors, kLimits);
  write(header.data(), header.size());
  constexpr int64_t kChunk = int64_t(1) << 20;  // floats converted and written at a time
  std::vector<float> values;
  for (size_t i = 0; i < slots.size(); ++i) {
    const TensorSlot& t = slots[i];
    const ParamTensor& p = t.store == Store::lm_head ? params.front() : params[i];  // the tied head: wte
    const int64_t rows = p.shape.size() == 2 ? p.shape[0] : 1, cols = p.numel / rows;
    const int64_t step = std::max<int64_t>(1, kChunk / std::max<int64_t>(cols, 1));
    values.resize(static_cast<size_t>(std::min(rows, step) * cols));
    for (int64_t r = 0; r < rows; r += step) {
      const int64_t end = std::min(rows, r + step), n = (end - r) * cols;
      fill(p, r, end, values.data());
      check_saved(t, values.data(), r * cols, n);
      char* bytes = reinterpret_cast<char*>(values.data());  // made little-endian in place
      safetensors::put_f32_le(bytes, values.data(), static_cast<uint64_t>(n));
      write(bytes, static_cast<size_t>(n) * 4);
    }
  }
}

safetensors::File checkpoint_layout(const TrainState& s) {
  const Value meta = checked_metadata(s, false);
  safetensors::File f;
  for (const auto& [key, value] : meta.members()) f.metadata.emplace_back(key, value.as_string());
  uint64_t at = 0;
  for (const TensorSlot& t : tensor_slots(s.model, !s.model_only())) {
    const uint64_t n = 4 * static_cast<uint64_t>(t.numel);
    f.tensors.push_back({t.name, "F32", dims(t.shape), at, at + n});
    at += n;
  }
  return f;
}

// ---------------------------------------------------------------- reading

TrainState load_checkpoint(const std::string& bytes, const GPTConfig* expected) {
  return load_checkpoint(StringSource(bytes), expected);
}

std::string checkpoint_fault(const std::string& name, const std::string& head, const std::string& what) {
  const bool safetensors = head.size() >= 9 && head[8] == '{';
  return name + (safetensors ? ": " : " is neither a PyTorch zip (ckpt.pt) nor a safetensors file: ") + what;
}

TrainState load_checkpoint(const ByteSource& bytes, const GPTConfig* expected) {
  const safetensors::Header h = safetensors::read_header(bytes, kLimits);
  const Value* meta = h.metadata();
  if (!meta)
    fail("the header has no \"__metadata__\": this safetensors file is not an Attention Playground checkpoint",
         kMeta);
  TrainState s = read_metadata(*meta);  // the config, the training state, the data source
  check_expected(s.model, expected);
  const std::vector<TensorSlot> slots = tensor_slots(s.model, !s.model_only());
  const auto tensors = check_tensors(h, s.model, slots);
  copy_values(bytes, h, tensors, slots.front(), s);
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

void write_checkpoint_file(const std::string& path, const std::string& bytes) {
  if (path.empty()) fail("no file name given for the checkpoint", "path");
  write_file_atomic(path, bytes);
}

std::string read_checkpoint_file(const std::string& path) { return read_file(path, kMaxCheckpointBytes, "a checkpoint"); }

#endif

}  // namespace ap
