// gpt_json.cpp — run specs, configs, head specs and attention maps as JSON (see gpt_json.h).
#include "gpt_json.h"

#include <set>

#include "../core/number_text.h"
#include "../core/utf8.h"
#include "spec.h"

namespace ap {

using json::Value;
using namespace spec;

namespace {

const std::set<std::string> kRunKeys = {
    "preset", "n_layer",  "n_head", "n_embd",   "block_size",   "mask",         "softmax",    "task",
    "n_chars", "text",    "text_name", "batch_size", "steps",   "lr",           "min_lr",     "warmup_steps",
    "weight_decay", "beta1", "beta2", "grad_clip", "eval_interval", "eval_batches", "seed"};

const char* mask_name(MaskVariant m) { return m == MaskVariant::strict ? "strict" : "inclusive"; }

Value f32(float f) { return Value::f32(f); }

const Value& required(const Value& v, const std::string& key, const std::string& where) {
  const Value* x = v.find(key);
  if (!x) throw InputError(where + " has no \"" + key + "\"", where + "." + key);
  return *x;
}

}  // namespace

RunSpec read_run_spec(const Value& s) {
  reject_unknown_keys(s, kRunKeys, "GPT spec");
  RunSpec r;
  const std::string preset = read_choice(s, "preset", {"tiny", "small"});
  r.model = GPTConfig::preset(preset, 1);
  r.model.n_layer = static_cast<int>(read_int(s, "n_layer", r.model.n_layer, 1, kMaxLayers));
  r.model.n_head = static_cast<int>(read_int(s, "n_head", r.model.n_head, 1, kMaxHeads));
  r.model.n_embd = static_cast<int>(read_int(s, "n_embd", r.model.n_embd, 1, kMaxEmbd));
  r.model.block_size = static_cast<int>(read_int(s, "block_size", r.model.block_size, 1, kMaxBlockSize));
  r.model.mask = read_mask(s);
  r.model.stable_softmax = read_choice(s, "softmax", {"stable", "naive"}) == "stable";
  if (r.model.n_embd % r.model.n_head != 0)
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
  t.seed = static_cast<uint64_t>(read_int(s, "seed", static_cast<long long>(t.seed), 0, (1LL << 53)));
  t.validate();
  return r;
}

Value config_json(const GPTConfig& c) {
  Value v = Value::object();
  v.set("vocab_size", c.vocab_size);
  v.set("block_size", c.block_size);
  v.set("n_layer", c.n_layer);
  v.set("n_head", c.n_head);
  v.set("n_embd", c.n_embd);
  v.set("mask", mask_name(c.mask));
  v.set("softmax", c.stable_softmax ? "stable" : "naive");
  return v;
}

GPTConfig read_config(const Value& v, const std::string& where) {
  if (!v.is_object()) throw InputError(where + " must be a JSON object", where);
  reject_unknown_keys(v, {"vocab_size", "block_size", "n_layer", "n_head", "n_embd", "mask", "softmax"}, where);
  for (const char* k : {"vocab_size", "block_size", "n_layer", "n_head", "n_embd", "mask", "softmax"})
    required(v, k, where);
  GPTConfig c;
  c.vocab_size = static_cast<int>(read_int(v, "vocab_size", 0, 1, kMaxModelVocab));
  c.block_size = static_cast<int>(read_int(v, "block_size", 0, 1, kMaxBlockSize));
  c.n_layer = static_cast<int>(read_int(v, "n_layer", 0, 1, kMaxLayers));
  c.n_head = static_cast<int>(read_int(v, "n_head", 0, 1, kMaxHeads));
  c.n_embd = static_cast<int>(read_int(v, "n_embd", 0, 1, kMaxEmbd));
  c.mask = read_mask(v);
  c.stable_softmax = read_choice(v, "softmax", {"stable", "naive"}) == "stable";
  c.validate();
  return c;
}

Value train_config_json(const TrainConfig& t) {
  Value v = Value::object();
  v.set("batch_size", t.batch_size);
  v.set("steps", t.steps);
  v.set("lr", f32(t.lr));
  v.set("min_lr", f32(t.min_lr));
  v.set("warmup_steps", t.warmup_steps);
  v.set("weight_decay", f32(t.weight_decay));
  v.set("beta1", f32(t.beta1));
  v.set("beta2", f32(t.beta2));
  v.set("grad_clip", f32(t.grad_clip));
  v.set("eval_interval", t.eval_interval);
  v.set("eval_batches", t.eval_batches);
  return v;
}

TrainConfig read_train_config(const Value& v, const std::string& where) {
  static const std::vector<std::string> keys = {"batch_size",   "steps", "lr",    "min_lr",    "warmup_steps",
                                                "weight_decay", "beta1", "beta2", "grad_clip", "eval_interval",
                                                "eval_batches"};
  if (!v.is_object()) throw InputError(where + " must be a JSON object", where);
  reject_unknown_keys(v, std::set<std::string>(keys.begin(), keys.end()), where);
  for (const std::string& k : keys) required(v, k, where);
  TrainConfig t;
  t.batch_size = static_cast<int>(read_int(v, "batch_size", 0, 1, kMaxBatch));
  t.steps = static_cast<int>(read_int(v, "steps", 0, 1, kMaxSteps));
  t.lr = read_float(v, "lr", 0, 0, 10);
  t.min_lr = read_float(v, "min_lr", 0, 0, 10);
  t.warmup_steps = static_cast<int>(read_int(v, "warmup_steps", 0, 0, kMaxSteps));
  t.weight_decay = read_float(v, "weight_decay", 0, 0, 10);
  t.beta1 = read_float(v, "beta1", 0, 0, 1);
  t.beta2 = read_float(v, "beta2", 0, 0, 1);
  t.grad_clip = read_float(v, "grad_clip", 0, 0, 1e6);
  t.eval_interval = static_cast<int>(read_int(v, "eval_interval", 0, 1, kMaxSteps));
  t.eval_batches = static_cast<int>(read_int(v, "eval_batches", 0, 1, 1024));
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
  const int T = model.seq_len(), C = c.n_embd, hs = c.head_dim();
  const float* qkv = model.qkv(layer);  // (T, 3C)
  std::vector<float> part(static_cast<size_t>(T) * hs);
  auto block = [&](int which) {  // 0: q, 1: k, 2: v — head's columns of that third
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < hs; ++i)
        part[static_cast<size_t>(t) * hs + i] = qkv[static_cast<size_t>(t) * 3 * C + which * C + head * hs + i];
    return matrix_value(part.data(), T, hs);
  };
  Value v = Value::object();
  v.set("Q", block(0));
  v.set("K", block(1));
  v.set("V", block(2));
  v.set("n_head", 1);
  v.set("causal", true);
  v.set("mask", mask_name(c.mask));
  v.set("softmax", c.stable_softmax ? "stable" : "naive");
  return v;
}

}  // namespace ap
