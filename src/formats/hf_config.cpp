// hf_config.cpp — config.json of the Llama family (see hf_config.h).
#include "formats/hf_config.h"

#include <cmath>

#include "core/base/input_error.h"
#include "core/model/rope_scaling.h"
#include "formats/json.h"

namespace ap {

namespace {

struct Reader {
  const json::Value& obj;
  const std::string& name;
  [[noreturn]] void refuse(const std::string& msg) const { throw InputError(name + ": " + msg, name); }
  const json::Value* get(const char* key) const {
    const json::Value* v = obj.find(key);
    return v && !v->is_null() ? v : nullptr;
  }
  long long whole(const char* key, long long lo, long long hi, long long dflt = -1) const {
    const json::Value* v = get(key);
    if (!v) {
      if (dflt >= 0) return dflt;
      refuse(std::string("\"") + key + "\" is missing");
    }
    if (!v->is_number() || v->as_number() != std::floor(v->as_number()) || v->as_number() < static_cast<double>(lo) ||
        v->as_number() > static_cast<double>(hi))
      refuse(std::string("\"") + key + "\" is " + json::excerpt(v->dump(), 40) + ", not a whole number from " +
             std::to_string(lo) + " to " + std::to_string(hi));
    return static_cast<long long>(v->as_number());
  }
  double positive(const json::Value& o, const char* key, double dflt, const std::string& where) const {
    const json::Value* v = o.find(key);
    if (!v || v->is_null()) {
      if (dflt > 0) return dflt;
      refuse("\"" + where + key + "\" is missing");
    }
    if (!v->is_number() || !(v->as_number() > 0) || !std::isfinite(v->as_number()))
      refuse("\"" + where + key + "\" is " + json::excerpt(v->dump(), 40) + ", not a positive number");
    return v->as_number();
  }
  bool flag(const char* key, bool dflt) const {
    const json::Value* v = get(key);
    if (!v) return dflt;
    if (!v->is_bool()) refuse(std::string("\"") + key + "\" is " + json::excerpt(v->dump(), 40) + ", not true or false");
    return v->as_bool();
  }
  std::vector<long long> ids(const char* key) const {
    const json::Value* v = get(key);
    std::vector<long long> out;
    if (!v) return out;
    auto one = [&](const json::Value& x) {
      if (!x.is_number() || x.as_number() != std::floor(x.as_number()) || x.as_number() < 0 || x.as_number() >= kMaxHfDim)
        refuse(std::string("\"") + key + "\" holds " + json::excerpt(x.dump(), 40) + ", not a token id");
      out.push_back(static_cast<long long>(x.as_number()));
    };
    if (v->is_array()) for (const json::Value& x : v->items()) one(x);
    else one(*v);
    return out;
  }
};

void read_rope_scaling(const Reader& r, HfConfig& c) {
  const json::Value* s = r.get("rope_scaling");
  if (!s) return;
  if (!s->is_object()) r.refuse("\"rope_scaling\" must be an object or null");
  const json::Value* t = s->find("rope_type");
  if (!t || t->is_null()) t = s->find("type");
  if (!t || !t->is_string()) r.refuse("\"rope_scaling\" has no \"rope_type\" (or \"type\") string");
  const std::string type = t->as_string();
  if (type == "default") return;
  if (type != "llama3")
    r.refuse("rope_scaling type \"" + json::excerpt(type, 40) + "\" is not read (only \"llama3\" and \"default\" are)");
  HfRopeScaling& k = c.rope_scaling;
  k.type = type;
  k.factor = r.positive(*s, "factor", 0, "rope_scaling.");
  k.low_freq_factor = r.positive(*s, "low_freq_factor", 0, "rope_scaling.");
  k.high_freq_factor = r.positive(*s, "high_freq_factor", 0, "rope_scaling.");
  if (!(k.high_freq_factor > k.low_freq_factor))
    r.refuse("rope_scaling.high_freq_factor must be greater than low_freq_factor");
  const json::Value* o = s->find("original_max_position_embeddings");
  if (!o || !o->is_number() || o->as_number() != std::floor(o->as_number()) || o->as_number() < 1 || o->as_number() > kMaxHfDim)
    r.refuse("rope_scaling.original_max_position_embeddings must be a whole number from 1 to " + std::to_string(kMaxHfDim));
  k.original_max_position_embeddings = static_cast<long long>(o->as_number());
}

}  // namespace

HfConfig read_hf_config(const std::string& text, const std::string& name) {
  const json::Value root = json::parse_file(text, name);
  if (!root.is_object()) throw InputError(name + ": not a JSON object", name);
  const Reader r{root, name};
  HfConfig c;
  const json::Value* mt = r.get("model_type");
  if (!mt || !mt->is_string()) r.refuse("\"model_type\" is missing (a Hugging Face config.json names its model type)");
  c.model_type = mt->as_string();
  if (c.model_type != "llama" && c.model_type != "mistral" && c.model_type != "qwen2" && c.model_type != "qwen3")
    r.refuse("model_type \"" + json::excerpt(c.model_type, 40) + "\" is not one this reader knows (llama, mistral, qwen2, qwen3)");
  c.vocab_size = r.whole("vocab_size", 1, kMaxHfDim);
  c.hidden_size = r.whole("hidden_size", 1, kMaxHfDim);
  c.intermediate_size = r.whole("intermediate_size", 1, kMaxHfDim);
  c.num_hidden_layers = r.whole("num_hidden_layers", 1, kMaxHfLayers);
  c.num_attention_heads = r.whole("num_attention_heads", 1, c.hidden_size);
  c.num_key_value_heads = r.whole("num_key_value_heads", 1, c.num_attention_heads, c.num_attention_heads);
  if (c.num_attention_heads % c.num_key_value_heads)
    r.refuse("num_key_value_heads " + std::to_string(c.num_key_value_heads) + " does not divide num_attention_heads " +
             std::to_string(c.num_attention_heads));
  const bool head_dim_given = r.get("head_dim") != nullptr;
  if (!head_dim_given && c.hidden_size % c.num_attention_heads)
    r.refuse("hidden_size " + std::to_string(c.hidden_size) + " is not a multiple of num_attention_heads " +
             std::to_string(c.num_attention_heads) + " (and there is no head_dim)");
  c.head_dim = r.whole("head_dim", 2, kMaxHfDim, c.hidden_size / c.num_attention_heads);
  if (c.head_dim % 2) r.refuse("head_dim " + std::to_string(c.head_dim) + " is odd: the rotation pairs dimensions");
  c.max_position_embeddings = r.whole("max_position_embeddings", 1, kMaxHfDim);
  c.rope_theta = r.positive(root, "rope_theta", 10000, "");
  c.rms_norm_eps = r.positive(root, "rms_norm_eps", 1e-6, "");
  c.tie_word_embeddings = r.flag("tie_word_embeddings", false);
  c.attention_bias = c.model_type == "qwen2" ? true : c.model_type == "mistral" ? false : r.flag("attention_bias", false);
  c.attention_out_bias = c.model_type == "qwen2" ? false : c.attention_bias;
  c.qk_norm = c.model_type == "qwen3";
  if (r.flag("mlp_bias", false)) r.refuse("\"mlp_bias\" is true: MLP biases are not read");
  const json::Value* act = r.get("hidden_act");
  c.hidden_act = act && act->is_string() ? act->as_string() : "silu";
  if (act && !act->is_string()) r.refuse("\"hidden_act\" must be a string");
  if (c.hidden_act != "silu") r.refuse("hidden_act \"" + json::excerpt(c.hidden_act, 40) + "\" is not read (only \"silu\": SwiGLU)");
  const bool window_used = c.model_type == "mistral" || r.flag("use_sliding_window", false);
  if (window_used) c.sliding_window = r.whole("sliding_window", 1, kMaxHfDim, 0);
  c.bos_token_ids = r.ids("bos_token_id");
  c.eos_token_ids = r.ids("eos_token_id");
  read_rope_scaling(r, c);
  return c;
}

std::vector<double> rope_inverse_frequencies(const HfConfig& c) {
  return rope_inverse_frequencies(c.rope_theta, c.head_dim, rope_scaling_of(c));
}

RopeScaling rope_scaling_of(const HfConfig& c) {
  RopeScaling s;
  if (c.rope_scaling.type != "llama3") return s;
  s.factor = c.rope_scaling.factor;
  s.low_freq_factor = c.rope_scaling.low_freq_factor;
  s.high_freq_factor = c.rope_scaling.high_freq_factor;
  s.original_max_position_embeddings = c.rope_scaling.original_max_position_embeddings;
  return s;
}

}  // namespace ap
