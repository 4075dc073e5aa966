// gguf_cmd.cpp — `gpt inspect FILE.gguf`: a GGUF file's header as read by formats/gguf.h, the
// metadata (arrays cut short), the model's config and the tokenizer's (or why we do not run them),
// the Hugging Face config it implies (formats/gguf_weights.h), whether its tokenizer reads
// (gguf_tokenizer.h), and the tensor table with each tensor's transformers name; with --json all of
// it, arrays whole. The file is read in slices, never whole
// (file_io.h's FileSource), and its tensors' data is not read.
#include <cstring>
#include <iostream>
#include <string>

#include "api/spec.h"
#include "cli/gpt/commands.h"
#include "cli/gpt/common.h"
#include "core/base/input_error.h"
#include "formats/file_io.h"
#include "formats/gguf.h"
#include "formats/gguf_tokenizer.h"
#include "formats/gguf_weights.h"
#include "formats/json.h"

namespace ap::gpt_cli {

namespace {

using json::Value;

constexpr uint64_t kMaxGgufBytes = uint64_t(1) << 40;  // read in slices: only the header is read

json::Value value_json(const gguf::Value& v) {
  using gguf::ValueType;
  auto scalar = [](ValueType t, uint64_t u, int64_t i, double f) -> Value {
    switch (t) {
      case ValueType::boolean: return Value(u != 0);
      case ValueType::f32: return Value::f32(static_cast<float>(f));
      case ValueType::f64: return Value(f);
      case ValueType::i8: case ValueType::i16: case ValueType::i32: case ValueType::i64: return Value(static_cast<long long>(i));
      default:  // unsigned: exact as a number up to 2⁵³, as text beyond
        return u <= (uint64_t(1) << 53) ? Value(static_cast<long long>(u)) : Value(std::to_string(u));
    }
  };
  if (v.type == ValueType::string) return Value(v.s);
  if (v.type != ValueType::array) return scalar(v.type, v.u, v.i, v.f);
  Value a = Value::array();
  for (uint64_t k = 0; k < v.count; ++k) {
    if (v.elem == ValueType::string) a.push(Value(v.strings[static_cast<size_t>(k)]));
    else if (v.elem == ValueType::array) a.push(value_json(v.items[static_cast<size_t>(k)]));
    else a.push(scalar(v.elem, static_cast<uint64_t>(v.integer(k)), v.integer(k), v.number(k)));
  }
  return a;
}

std::string type_label(const gguf::Value& v) {
  std::string t = gguf::value_type_name(static_cast<uint32_t>(v.type));
  if (v.type == gguf::ValueType::array)
    t += " of " + std::to_string(v.count) + " " + gguf::value_type_name(static_cast<uint32_t>(v.elem));
  return t;
}

std::string shape_text(const gguf::TensorInfo& t) {
  std::string s = "[";
  for (size_t d = 0; d < t.dims.size(); ++d) s += (d ? ", " : "") + std::to_string(t.dims[d]);
  return s + "]";
}

std::string describe_model(const gguf::ModelConfig& c) {
  std::string s = c.architecture + (c.name.empty() ? "" : " (" + c.name + ")") + ": " + std::to_string(c.block_count) +
                  " layers, width " + std::to_string(c.embedding_length) + ", " + std::to_string(c.head_count) +
                  " heads of " + std::to_string(c.key_length) + " (" + std::to_string(c.head_count_kv) +
                  " key/value heads), feed-forward " + std::to_string(c.feed_forward_length) + ", context " +
                  with_commas(static_cast<long long>(c.context_length)) + ", RoPE base " + gguf::value_text([&] {
                    gguf::Value v; v.type = gguf::ValueType::f64; v.f = c.rope_freq_base; return v; }()) +
                  " over " + std::to_string(c.rope_dimension_count) + " dimensions" +
                  (c.rope_adjacent_pairs ? " (adjacent pairs)" : " (pairs half a head apart)");
  if (!c.rope_scaling_type.empty()) s += " (scaling " + c.rope_scaling_type + ")";
  if (c.sliding_window) s += ", sliding window " + std::to_string(c.sliding_window);
  if (c.vocab_size) s += ", vocabulary " + with_commas(static_cast<long long>(c.vocab_size));
  return s;
}

std::string ids_text(const std::vector<long long>& ids) {
  std::string s;
  for (long long id : ids) s += (s.empty() ? "" : ", ") + std::to_string(id);
  return ids.size() == 1 ? s : "[" + s + "]";
}

// The HfConfig in config.json's words, on one line.
std::string describe_hf(const HfConfig& c) {
  gguf::Value v;
  v.type = gguf::ValueType::f64;
  auto num = [&](double x) { v.f = x; return gguf::value_text(v); };
  std::string s = "model_type " + c.model_type + ", hidden_size " + std::to_string(c.hidden_size) + ", intermediate_size " +
                  std::to_string(c.intermediate_size) + ", num_hidden_layers " + std::to_string(c.num_hidden_layers) +
                  ", num_attention_heads " + std::to_string(c.num_attention_heads) + ", num_key_value_heads " +
                  std::to_string(c.num_key_value_heads) + ", head_dim " + std::to_string(c.head_dim) + ", vocab_size " +
                  std::to_string(c.vocab_size) + ", max_position_embeddings " + std::to_string(c.max_position_embeddings) +
                  ", rope_theta " + num(c.rope_theta) + ", rms_norm_eps " + num(c.rms_norm_eps) + ", tie_word_embeddings " +
                  (c.tie_word_embeddings ? "true" : "false");
  if (c.rope_scaling.type == "llama3")
    s += ", rope_scaling llama3 (factor " + num(c.rope_scaling.factor) + ", low_freq_factor " + num(c.rope_scaling.low_freq_factor) +
         ", high_freq_factor " + num(c.rope_scaling.high_freq_factor) + ", original_max_position_embeddings " +
         std::to_string(c.rope_scaling.original_max_position_embeddings) + ")";
  if (c.attention_bias) s += c.attention_out_bias ? ", attention biases" : ", q/k/v biases";
  if (c.qk_norm) s += ", q/k norms";
  if (c.sliding_window) s += ", sliding_window " + std::to_string(c.sliding_window);
  if (!c.bos_token_ids.empty()) s += ", bos_token_id " + ids_text(c.bos_token_ids);
  if (!c.eos_token_ids.empty()) s += ", eos_token_id " + ids_text(c.eos_token_ids);
  return s;
}

// What a tensor becomes in the model: its transformers name, or what it is for.
std::string hf_role(const std::string& name, bool adjacent) {
  if (name == "rope_freqs.weight") return "rope_scaling (Llama 3's frequency factors)";
  const std::string hf = hf_tensor_name(name);
  if (hf.empty()) return "";
  const bool permuted = adjacent && (hf.find("q_proj.") != std::string::npos || hf.find("k_proj.") != std::string::npos);
  return hf + (permuted ? " (rows put back in Hugging Face's order)" : "");
}

}  // namespace

// By its name, or by its first 4 bytes if it is a regular file; whatever else is wrong with it, the
// reader it goes to says so, naming it.
bool is_gguf_file(const std::string& path) {
  const std::string ext = ".gguf";
  if (path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0) return true;
  return has_magic(path, "GGUF");
}

int cmd_inspect_gguf(const std::string& path, bool as_json) {
  const FileSource src(path, kMaxGgufBytes, "a GGUF file");
  const gguf::File f = gguf::read_file(src, path);
  std::string model_error, tokenizer_error, hf_error, tokenizer_run_error;
  gguf::ModelConfig config;
  HfConfig hf;
  try {
    hf = gguf_hf_config(src, f, path);
  } catch (const InputError& e) {
    hf_error = e.what();
  }
  try {
    load_gguf_tokenizer(f, path);
  } catch (const InputError& e) {
    tokenizer_run_error = e.what();
  }
  const bool adjacent = hf_error.empty() && hf.model_type == "llama";
  gguf::TokenizerData tok;
  try {
    config = gguf::read_model_config(f, path);
  } catch (const InputError& e) {
    model_error = e.what();
  }
  try {
    tok = gguf::read_tokenizer(f, path);
  } catch (const InputError& e) {
    tokenizer_error = e.what();
  }
  if (as_json) {
    Value v = Value::object();
    v.set("file", path);
    v.set("format", "gguf");
    v.set("version", static_cast<long long>(f.version));
    v.set("bytes", static_cast<long long>(f.file_size));
    v.set("alignment", static_cast<long long>(f.alignment));
    v.set("data_start", static_cast<long long>(f.data_start));
    Value meta = Value::array();
    for (const auto& [key, val] : f.metadata) {
      Value& m = meta.push(Value::object());
      m.set("key", key);
      m.set("type", gguf::value_type_name(static_cast<uint32_t>(val.type)));
      if (val.type == gguf::ValueType::array) m.set("elem", gguf::value_type_name(static_cast<uint32_t>(val.elem)));
      m.set("value", value_json(val));
    }
    v.set("metadata", std::move(meta));
    if (model_error.empty()) v.set("model", describe_model(config));
    else v.set("model_error", model_error);
    if (!tokenizer_error.empty()) v.set("tokenizer_error", tokenizer_error);
    if (hf_error.empty()) v.set("hf_config", describe_hf(hf));
    else v.set("hf_config_error", hf_error);
    if (!tokenizer_run_error.empty()) v.set("tokenizer_run_error", tokenizer_run_error);
    Value list = Value::array();
    for (const gguf::TensorInfo& t : f.tensors) {
      Value& e = list.push(Value::object());
      e.set("name", t.name);
      e.set("type", t.type_name);
      e.set("type_id", static_cast<long long>(t.type));
      Value shape = Value::array();
      for (uint64_t d : t.dims) shape.push(static_cast<long long>(d));
      e.set("shape", std::move(shape));
      e.set("offset", static_cast<long long>(t.offset));
      e.set("bytes", static_cast<long long>(t.bytes));
      e.set("runs", gguf::runnable(t));
      const std::string role = hf_role(t.name, adjacent);
      if (!role.empty()) e.set("hf_name", role);
    }
    v.set("tensors", std::move(list));
    std::cout << spec::ok(std::move(v)).dump() << "\n";
    return 0;
  }
  std::cout << path << ": GGUF version " << f.version << ", " << with_commas(static_cast<long long>(f.file_size))
            << " bytes; " << f.metadata.size() << " metadata keys, " << f.tensors.size() << " tensors; data from byte "
            << with_commas(static_cast<long long>(f.data_start)) << " (alignment " << f.alignment << ")\n";
  std::cout << "model: " << (model_error.empty() ? describe_model(config) : model_error) << "\n";
  if (tokenizer_error.empty()) {
    std::cout << "tokenizer: " << tok.model << (tok.pre.empty() ? "" : " (pre-tokenizer " + tok.pre + ")") << ", "
              << with_commas(static_cast<long long>(tok.tokens.size())) << " tokens, "
              << with_commas(static_cast<long long>(tok.merges.size())) << " merges; bos " << tok.bos_id << ", eos "
              << tok.eos_id << "\n";
  } else {
    std::cout << "tokenizer: " << tokenizer_error << "\n";
  }
  std::cout << "config.json it implies: " << (hf_error.empty() ? describe_hf(hf) : hf_error) << "\n";
  if (tokenizer_error.empty())
    std::cout << "tokenizer as Hugging Face's: " << (tokenizer_run_error.empty() ? "reads" : tokenizer_run_error) << "\n";
  std::cout << "metadata:\n";
  for (const auto& [key, val] : f.metadata)
    std::cout << "  " << key << "  " << type_label(val) << "  " << gguf::value_text(val) << "\n";
  std::cout << "tensors (shape ne[0] first; offset from the data section):\n";
  for (const gguf::TensorInfo& t : f.tensors) {
    std::cout << "  " << t.name << "  " << t.type_name << "  " << shape_text(t) << "  offset "
              << with_commas(static_cast<long long>(t.offset)) << "  " << with_commas(static_cast<long long>(t.bytes))
              << " bytes" << (gguf::runnable(t) ? "" : "  (a type we do not run)");
    const std::string role = hf_role(t.name, adjacent);
    std::cout << (role.empty() ? "" : "  → " + role) << "\n";
  }
  return 0;
}

}  // namespace ap::gpt_cli
