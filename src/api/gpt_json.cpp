// gpt_json.cpp — run specs, configs, head specs and attention maps as JSON (see gpt_json.h).
#include "api/gpt_json.h"

#include <algorithm>
#include <set>

#include "core/base/number_text.h"
#include "core/base/utf8.h"
#include "api/spec.h"

namespace ap {

using json::Value;
using namespace spec;

namespace {

const std::set<std::string> kRunKeys = {
    "preset", "n_layer",  "n_head", "n_embd",   "block_size",   "mask",         "softmax",    "task",
    "n_chars", "text",    "text_name", "batch_size", "steps",   "lr",           "min_lr",     "warmup_steps",
    "weight_decay", "beta1", "beta2", "grad_clip", "eval_interval", "eval_batches", "seed",
    // the model's variants (gpt.h), shared with the config's JSON
    "pos", "rope_base", "rope_dims", "rope", "n_kv_head", "norm", "mlp", "n_inner", "window", "sink", "bias",
    "head_size", "tie_embeddings", "qkv_bias", "qk_norm", "rope_scaling", "head_scores_interval"};

// The variants' keys of a config (gpt.h), written only when not the default.
const std::vector<std::string> kVariantKeys = {"pos",       "rope_base",      "rope_dims", "rope",    "n_kv_head",
                                               "norm",      "mlp",            "n_inner",   "window",  "sink",
                                               "head_size", "tie_embeddings", "qkv_bias",  "qk_norm", "rope_scaling"};
const std::vector<std::string> kPositions = {"learned", "rope", "alibi", "none"};
const std::vector<std::string> kPairings = {"halves", "interleaved"};

void write_variants(Value& v, const GPTConfig& c) {
  const GPTConfig d;
  if (c.pos != d.pos) v.set("pos", kPositions[static_cast<size_t>(c.pos)]);
  if (c.pos == Positions::rope) {
    if (c.rope_base != d.rope_base) v.set("rope_base", Value::f32(c.rope_base));
    if (c.rope_dims != d.rope_dims) v.set("rope_dims", c.rope_dims);
    if (c.rope != d.rope) v.set("rope", rope_pairing_name(c.rope));
  }
  if (c.n_kv_head != d.n_kv_head) v.set("n_kv_head", c.n_kv_head);
  if (c.norm != d.norm) v.set("norm", norm_name(c.norm));
  if (c.mlp != d.mlp) v.set("mlp", mlp_name(c.mlp));
  if (c.n_inner != d.n_inner) v.set("n_inner", c.n_inner);
  if (c.window != d.window) v.set("window", c.window);
  if (c.sink != d.sink) v.set("sink", c.sink);
  if (c.head_size != d.head_size) v.set("head_size", c.head_size);
  if (c.tie_embeddings != d.tie_embeddings) v.set("tie_embeddings", c.tie_embeddings);
  if (c.qkv_bias != d.qkv_bias) v.set("qkv_bias", c.qkv_bias);
  if (c.qk_norm != d.qk_norm) v.set("qk_norm", c.qk_norm);
  if (c.rope_scaling.on()) v.set("rope_scaling", rope_scaling_json(c.rope_scaling));
}

double read_double(const Value& spec, const std::string& key, double fallback, double lo, double hi) {
  const Value* v = get(spec, key);
  if (!v) return fallback;
  if (!v->is_number() || !(v->as_number() >= lo && v->as_number() <= hi))
    throw InputError("rope_scaling." + key + " must be a number from " + format_float(static_cast<float>(lo)) +
                         " to " + format_float(static_cast<float>(hi)) + ", got " + v->dump().substr(0, 24),
                     "rope_scaling");
  return v->as_number();
}

// Llama 3's rope_scaling as config.json writes it: {"rope_type": "llama3", "factor", …}.
void read_rope_scaling(const Value& v, GPTConfig& c) {
  const Value* s = get(v, "rope_scaling");
  if (!s) return;
  if (!s->is_object()) throw InputError("rope_scaling must be an object", "rope_scaling");
  reject_unknown_keys(*s, {"rope_type", "factor", "low_freq_factor", "high_freq_factor",
                           "original_max_position_embeddings"},
                      "rope_scaling");
  if (read_choice(*s, "rope_type", {"llama3"}) != "llama3" || !s->find("rope_type"))
    throw InputError("rope_scaling needs \"rope_type\": \"llama3\"", "rope_scaling");
  RopeScaling& r = c.rope_scaling;
  r.factor = read_double(*s, "factor", 0, 1e-6, 1e6);
  r.low_freq_factor = read_double(*s, "low_freq_factor", 1, 1e-6, 1e6);
  r.high_freq_factor = read_double(*s, "high_freq_factor", 4, 1e-6, 1e6);
  r.original_max_position_embeddings = read_int(*s, "original_max_position_embeddings", 0, 1, 1 << 20);
}

// The variants' keys (each optional, the default when absent) into c; rope_base, rope_dims and
// rope only with pos "rope".
void read_variants(const Value& v, GPTConfig& c) {
  const std::string pos = read_choice(v, "pos", kPositions);
  c.pos = static_cast<Positions>(std::find(kPositions.begin(), kPositions.end(), pos) - kPositions.begin());
  for (const char* key : {"rope_base", "rope_dims", "rope"})
    if (v.find(key) && c.pos != Positions::rope)
      throw InputError(std::string(key) + " is RoPE's: it needs \"pos\": \"rope\"", key);
  c.rope_base = read_float(v, "rope_base", c.rope_base, 1.0, 1e9);
  c.rope_dims = static_cast<int>(read_int(v, "rope_dims", c.rope_dims, 0, kMaxEmbd));
  c.rope = read_choice(v, "rope", kPairings) == "halves" ? RopePairing::halves : RopePairing::interleaved;
  c.n_kv_head = static_cast<int>(read_int(v, "n_kv_head", c.n_kv_head, 0, kMaxHeads));
  c.norm = read_choice(v, "norm", {"layernorm", "rmsnorm"}) == "rmsnorm" ? Norm::rmsnorm : Norm::layernorm;
  c.mlp = read_choice(v, "mlp", {"gelu", "swiglu"}) == "swiglu" ? Mlp::swiglu : Mlp::gelu;
  c.n_inner = static_cast<int>(read_int(v, "n_inner", c.n_inner, 0, kMaxInner));
  c.window = static_cast<int>(read_int(v, "window", c.window, 0, kMaxBlockSize));
  c.head_size = static_cast<int>(read_int(v, "head_size", c.head_size, 0, kMaxHeadSize));
  c.tie_embeddings = read_bool(v, "tie_embeddings", c.tie_embeddings);
  c.qkv_bias = read_bool(v, "qkv_bias", c.qkv_bias);
  c.qk_norm = read_bool(v, "qk_norm", c.qk_norm);
  read_rope_scaling(v, c);
  c.sink = static_cast<int>(read_int(v, "sink", c.sink, 0, kMaxBlockSize));
}

const char* mask_name(MaskVariant m) { return m == MaskVariant::strict ? "strict" : "inclusive"; }

// A config's numbers under their JSON keys, in the order they are written and read: a whole
// number (`whole`) or a float32 (`real`, written with its shortest digits), checked in [lo, hi].
// The writer, the key list and the reader of each config walk one table.
template <class Config>
struct NumberField {
  const char* key;
  int Config::*whole;
  float Config::*real;
  double lo, hi;
};

const NumberField<GPTConfig> kConfigSizes[] = {
    {"vocab_size", &GPTConfig::vocab_size, nullptr, 1, kMaxModelVocab},
    {"block_size", &GPTConfig::block_size, nullptr, 1, kMaxBlockSize},
    {"n_layer", &GPTConfig::n_layer, nullptr, 1, kMaxLayers},
    {"n_head", &GPTConfig::n_head, nullptr, 1, kMaxHeads},
    {"n_embd", &GPTConfig::n_embd, nullptr, 1, kMaxEmbd}};  // then "mask" and "softmax"

const NumberField<TrainConfig> kTrainFields[] = {  // the seed is not here: see gpt_json.h
    {"batch_size", &TrainConfig::batch_size, nullptr, 1, kMaxBatch},
    {"steps", &TrainConfig::steps, nullptr, 1, kMaxSteps},
    {"lr", nullptr, &TrainConfig::lr, 0, 10},
    {"min_lr", nullptr, &TrainConfig::min_lr, 0, 10},
    {"warmup_steps", &TrainConfig::warmup_steps, nullptr, 0, kMaxSteps},
    {"weight_decay", nullptr, &TrainConfig::weight_decay, 0, 10},
    {"beta1", nullptr, &TrainConfig::beta1, 0, 1},
    {"beta2", nullptr, &TrainConfig::beta2, 0, 1},
    {"grad_clip", nullptr, &TrainConfig::grad_clip, 0, 1e6},
    {"eval_interval", &TrainConfig::eval_interval, nullptr, 1, kMaxSteps},
    {"eval_batches", &TrainConfig::eval_batches, nullptr, 1, 1024}};

template <class Config, size_t N>
void write_numbers(Value& v, const Config& c, const NumberField<Config> (&fields)[N]) {
  for (const NumberField<Config>& f : fields) {
    if (f.whole) v.set(f.key, c.*f.whole);
    else v.set(f.key, Value::f32(c.*f.real));
  }
}

// An object with exactly the fields' keys and `more`, every one required (`where` names it in
// messages and fields); then the fields' numbers, each checked.
// `optional` keys are allowed and may be absent.
template <class Config, size_t N>
void read_numbers(const Value& v, Config& c, const NumberField<Config> (&fields)[N], const std::string& where,
                  const std::vector<std::string>& more = {}, const std::vector<std::string>& optional = {}) {
  std::vector<std::string> keys;
  for (const NumberField<Config>& f : fields) keys.push_back(f.key);
  keys.insert(keys.end(), more.begin(), more.end());
  if (!v.is_object()) throw InputError(where + " must be a JSON object", where);
  std::set<std::string> allowed(keys.begin(), keys.end());
  allowed.insert(optional.begin(), optional.end());
  reject_unknown_keys(v, allowed, where);
  for (const std::string& key : keys)
    if (!v.find(key)) throw InputError(where + " has no \"" + key + "\"", where + "." + key);
  for (const NumberField<Config>& f : fields) {
    if (f.whole)
      c.*f.whole = static_cast<int>(read_int(v, f.key, 0, static_cast<long long>(f.lo), static_cast<long long>(f.hi)));
    else
      c.*f.real = read_float(v, f.key, 0, f.lo, f.hi);
  }
}

}  // namespace

RunSpec read_run_spec(const Value& s) {
  reject_unknown_keys(s, kRunKeys, "GPT spec");
  RunSpec r;
  const std::string preset = read_choice(s, "preset", {"tiny", "small"});
  r.model = GPTConfig::preset(preset, 1);
  r.model.n_layer = static_cast<int>(read_int(s, "n_layer", r.model.n_layer, 1, kMaxRunLayers));
  r.model.n_head = static_cast<int>(read_int(s, "n_head", r.model.n_head, 1, kMaxHeads));
  r.model.n_embd = static_cast<int>(read_int(s, "n_embd", r.model.n_embd, 1, kMaxRunEmbd));
  r.model.block_size = static_cast<int>(read_int(s, "block_size", r.model.block_size, 1, kMaxRunBlockSize));
  r.model.mask = read_mask(s);
  r.model.stable_softmax = read_choice(s, "softmax", {"stable", "naive"}) == "stable";
  r.model.bias = read_bool(s, "bias", r.model.bias);
  read_variants(s, r.model);
  if (r.model.head_size == 0 && r.model.n_embd % r.model.n_head != 0)
    throw InputError("n_embd is " + std::to_string(r.model.n_embd) + ", which " + std::to_string(r.model.n_head) +
                         " heads cannot share equally (n_head must divide n_embd)",
                     "n_head");

  if (get(s, "text")) {
    if (get(s, "task")) throw InputError("give either \"task\" or \"text\", not both", "task");
    if (get(s, "n_chars")) throw InputError("\"n_chars\" is the length of a task's text; it does not apply to \"text\"", "n_chars");
    r.data.text = read_string(s, "text", "");
    r.data.name = read_string(s, "text_name", "text", 1024);
  } else {
    if (get(s, "text_name")) throw InputError("\"text_name\" names a \"text\", and there is none", "text_name");
    r.data.task = read_choice(s, "task", {"copy", "reverse", "sort", "induction", "sums", "grammar"});
    r.data.n_chars = read_int(s, "n_chars", kDefaultTaskChars, kMinTaskChars, kMaxTaskChars);
  }

  TrainConfig& t = r.train;
  t.batch_size = static_cast<int>(read_int(s, "batch_size", t.batch_size, 1, kMaxBatch));
  t.steps = static_cast<int>(read_int(s, "steps", t.steps, 1, kMaxSteps));
  t.lr = read_float(s, "lr", t.lr, 1e-9, 10.0);
  t.min_lr = read_float(s, "min_lr", std::min(t.min_lr, t.lr / 10.0f), 0.0, 10.0);
  t.warmup_steps = static_cast<int>(read_int(s, "warmup_steps", std::min(t.warmup_steps, t.steps / 10), 0, kMaxSteps));
  t.weight_decay = read_float(s, "weight_decay", t.weight_decay, 0.0, 10.0);
  t.beta1 = read_float(s, "beta1", t.beta1, 0.0, 0.999999);
  t.beta2 = read_float(s, "beta2", t.beta2, 0.0, 0.999999);
  t.grad_clip = read_float(s, "grad_clip", t.grad_clip, 0.0, 1e6);
  t.eval_interval = static_cast<int>(read_int(s, "eval_interval", t.eval_interval, 1, kMaxSteps));
  t.eval_batches = static_cast<int>(read_int(s, "eval_batches", t.eval_batches, 1, 1024));
  t.head_scores_interval = static_cast<int>(read_int(s, "head_scores_interval", 0, 0, kMaxSteps));
  t.seed = static_cast<uint64_t>(read_int(s, "seed", static_cast<long long>(t.seed), 0, (1LL << 53)));
  t.validate();
  return r;
}

TrainConfig read_finetune_spec(const Value& s, const GPTConfig& model, std::string* text_name) {
  reject_unknown_keys(s, {"context", "batch_size", "steps", "lr", "min_lr", "warmup_steps", "weight_decay", "beta1",
                          "beta2", "grad_clip", "eval_interval", "eval_batches", "seed", "text_name"},
                      "fine-tuning spec");
  TrainConfig t;
  t.context = static_cast<int>(read_int(s, "context", std::min(model.block_size, 128), 1, model.block_size));
  t.batch_size = static_cast<int>(read_int(s, "batch_size", 4, 1, kMaxBatch));
  t.steps = static_cast<int>(read_int(s, "steps", 100, 1, kMaxSteps));
  t.lr = read_float(s, "lr", 1e-4f, 1e-9, 10.0);
  t.min_lr = read_float(s, "min_lr", t.lr / 10.0f, 0.0, 10.0);
  t.warmup_steps = static_cast<int>(read_int(s, "warmup_steps", 0, 0, kMaxSteps));
  t.weight_decay = read_float(s, "weight_decay", t.weight_decay, 0.0, 10.0);
  t.beta1 = read_float(s, "beta1", t.beta1, 0.0, 0.999999);
  t.beta2 = read_float(s, "beta2", t.beta2, 0.0, 0.999999);
  t.grad_clip = read_float(s, "grad_clip", t.grad_clip, 0.0, 1e6);
  t.eval_interval = static_cast<int>(read_int(s, "eval_interval", std::min(t.eval_interval, t.steps), 1, kMaxSteps));
  t.eval_batches = static_cast<int>(read_int(s, "eval_batches", t.eval_batches, 1, 1024));
  t.seed = static_cast<uint64_t>(read_int(s, "seed", static_cast<long long>(t.seed), 0, (1LL << 53)));
  t.validate();
  if (text_name) *text_name = read_string(s, "text_name", "text", 1024);
  return t;
}

const char* activation_name(Activation a) { return a == Activation::gelu_new ? "gelu_new" : "gelu"; }
const char* positions_name(Positions p) { return kPositions[static_cast<size_t>(p)].c_str(); }
const char* rope_pairing_name(RopePairing r) { return r == RopePairing::interleaved ? "interleaved" : "halves"; }
const char* norm_name(Norm n) { return n == Norm::rmsnorm ? "rmsnorm" : "layernorm"; }
const char* mlp_name(Mlp m) { return m == Mlp::swiglu ? "swiglu" : "gelu"; }

Value rope_scaling_json(const RopeScaling& r) {
  if (!r.on()) return Value();
  Value v = Value::object();
  v.set("rope_type", "llama3");
  v.set("factor", r.factor);
  v.set("low_freq_factor", r.low_freq_factor);
  v.set("high_freq_factor", r.high_freq_factor);
  v.set("original_max_position_embeddings", r.original_max_position_embeddings);
  return v;
}

Value config_json(const GPTConfig& c) {
  Value v = Value::object();
  write_numbers(v, c, kConfigSizes);
  v.set("mask", mask_name(c.mask));
  v.set("softmax", c.stable_softmax ? "stable" : "naive");
  // What models from elsewhere need, written when not the tiny GPT's defaults.
  const GPTConfig d;
  if (c.activation != d.activation) v.set("activation", activation_name(c.activation));
  if (c.ln_eps != d.ln_eps) v.set("ln_eps", Value::f32(c.ln_eps));
  if (c.bias != d.bias) v.set("bias", c.bias);
  write_variants(v, c);
  return v;
}

GPTConfig read_config(const Value& v, const std::string& where) {
  GPTConfig c;
  std::vector<std::string> optional = {"activation", "ln_eps", "bias"};
  optional.insert(optional.end(), kVariantKeys.begin(), kVariantKeys.end());
  read_numbers(v, c, kConfigSizes, where, {"mask", "softmax"}, optional);
  c.mask = read_mask(v);
  c.stable_softmax = read_choice(v, "softmax", {"stable", "naive"}) == "stable";
  if (v.find("activation"))
    c.activation = read_choice(v, "activation", {"gelu", "gelu_new"}) == "gelu_new" ? Activation::gelu_new : Activation::gelu;
  c.ln_eps = read_float(v, "ln_eps", c.ln_eps, 1e-12, 0.1);
  c.bias = read_bool(v, "bias", c.bias);
  read_variants(v, c);
  c.validate();
  return c;
}

Value train_config_json(const TrainConfig& t) {
  Value v = Value::object();
  write_numbers(v, t, kTrainFields);
  if (t.context > 0) v.set("context", t.context);  // a fine-tuning run's; absent: block_size
  if (t.head_scores_interval > 0) v.set("head_scores_interval", t.head_scores_interval);  // absent: never
  return v;
}

TrainConfig read_train_config(const Value& v, const std::string& where) {
  TrainConfig t;
  read_numbers(v, t, kTrainFields, where, {}, {"context", "head_scores_interval"});
  t.context = static_cast<int>(read_int(v, "context", 0, 1, kMaxBlockSize));
  t.head_scores_interval = static_cast<int>(read_int(v, "head_scores_interval", 0, 0, kMaxSteps));
  t.validate();
  return t;
}

Value token_labels(const CharTokenizer& tok, const std::vector<int>& ids) {
  Value out = Value::array();
  for (int id : ids) out.push(tok.token_text(id));
  return out;
}

Value data_source_json(const TrainState& s) {
  Value d = Value::object();
  if (!s.task.empty()) {
    d.set("task", s.task);
    d.set("n_chars", static_cast<long long>(s.n_chars));
  } else {
    d.set("text_name", s.text_name);
    d.set("text_fingerprint", s.text_fingerprint);
  }
  return d;
}

Value attention_maps_json(const CharTokenizer& tok, const std::vector<int>& ids, int n_layer, int n_head,
                          const std::function<const float*(int)>& weights) {
  const int T = static_cast<int>(ids.size());
  Value v = Value::object();
  v.set("tokens", token_labels(tok, ids));
  v.set("T", T);
  v.set("n_layer", n_layer);
  v.set("n_head", n_head);
  Value layers = Value::array();
  for (int l = 0; l < n_layer; ++l) {
    Value& heads = layers.push(Value::array());
    const float* w = weights(l);
    for (int h = 0; h < n_head; ++h) heads.push(matrix_value(w + static_cast<size_t>(h) * T * T, T, T));
  }
  v.set("maps", std::move(layers));
  return v;
}

Value head_spec(const GPT& model, int layer, int head) {
  const GPTConfig& c = model.config();
  if (model.batch() != 1 || model.seq_len() < 1)
    throw InputError("run the model on one prompt first", "prompt");
  if (layer < 0 || layer >= c.n_layer)
    throw InputError("layer " + std::to_string(layer) + " does not exist: the model has layers 0 to " +
                         std::to_string(c.n_layer - 1),
                     "layer");
  if (head < 0 || head >= c.n_head)
    throw InputError("head " + std::to_string(head) + " does not exist: each layer has heads 0 to " +
                         std::to_string(c.n_head - 1),
                     "head");
  const int T = model.seq_len(), C = c.attn_width(), hs = c.head_dim(), W = c.qkv_width();
  const int kv = head / (c.n_head / c.kv_head()) * hs, KC = c.kv_head() * hs;
  const float* qkv = model.qkv(layer);  // (T, W): q | k | v, with RoPE q and k already turned
  std::vector<float> part(static_cast<size_t>(T) * hs);
  auto block = [&](int col) {  // the head's hs columns from col
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < hs; ++i) part[static_cast<size_t>(t) * hs + i] = qkv[static_cast<size_t>(t) * W + col + i];
    return matrix_value(part.data(), T, hs);
  };
  Value v = Value::object();
  v.set("Q", block(head * hs));
  v.set("K", block(C + kv));  // the head's group's key/value head
  v.set("V", block(C + KC + kv));
  v.set("n_head", 1);
  v.set("causal", true);
  v.set("mask", mask_name(c.mask));
  v.set("softmax", c.stable_softmax ? "stable" : "naive");
  if (c.window > 0) v.set("window", c.window);
  if (c.sink > 0) v.set("sinks", c.sink);  // the stepper's name of the same variant
  if (const float* slopes = model.alibi_slopes()) {
    v.set("alibi", true);
    Value m = Value::array();
    m.push(Value::f32(slopes[head]));
    v.set("alibi_slopes", std::move(m));
  }
  return v;
}

}  // namespace ap
