// gpt_json.h — the GPT's JSON vocabulary, shared by the `gpt` CLI, the wasm module and the
// checkpoint's metadata, so that one concept has one name everywhere.
//
// A run spec (every key optional):
//   model:  "preset": "tiny" | "small" (default "tiny"), then any of "n_layer", "n_head",
//           "n_embd", "block_size" to change it; "mask": "strict" | "inclusive";
//           "softmax": "stable" | "naive"; the variants (gpt.h): "pos": "learned" | "rope" |
//           "alibi" | "none", with rope "rope_base", "rope_dims", "rope": "halves" |
//           "interleaved"; "n_kv_head", "norm": "layernorm" | "rmsnorm", "mlp": "gelu" | "swiglu",
//           "n_inner", "window", "sink", "bias": true | false
//   data:   "task": "copy" | "reverse" | "sort" | "induction" | "sums" | "grammar" (default
//           "copy") with "n_chars" (its length), or "text": the user's UTF-8 text with
//           "text_name" (for messages; default "text")
//   train:  "batch_size", "steps", "lr", "min_lr", "warmup_steps", "weight_decay", "beta1",
//           "beta2", "grad_clip", "eval_interval", "eval_batches", "seed"
// Unknown keys, and "task" with "text", are refused by name.
//
// A config as JSON: {"vocab_size","block_size","n_layer","n_head","n_embd","mask","softmax"}, and
// "activation" ("gelu" | "gelu_new"), "ln_eps", "bias" (true | false) and the variants' keys (as in
// the run spec) when not the defaults (gelu, 1e-5, true, learned positions, …), so that the tiny
// GPT's configs and checkpoints stay as they were.
// A head's stepper spec: the q, k, v of one head for the last forward pass (one sequence) as the
// stepper's Q, K, V mode, with the model's mask and softmax, so that `attention trace` (or the
// page) recomputes that head's weights: {"Q","K","V","n_head":1,"causal":true,"mask","softmax"},
// and "window", "sinks", "alibi", "alibi_slopes" with those variants (RoPE: Q and K as turned; grouped-query:
// K and V of the head's key/value head).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/model/gpt.h"
#include "core/model/train.h"
#include "formats/json.h"

namespace ap {

struct RunSpec {
  GPTConfig model;  // vocab_size is set by the Trainer from the data
  TrainConfig train;
  DataSpec data;
};

// Throws InputError naming the key at fault.
RunSpec read_run_spec(const json::Value& spec);

// A fine-tuning spec (GptSession::finetune, `gpt finetune`): {"context","batch_size","steps","lr",
// "min_lr","warmup_steps","weight_decay","beta1","beta2","grad_clip","eval_interval","eval_batches",
// "seed","text_name"}, every key optional; fine-tuning's defaults: context min(block_size, 128),
// batch_size 4, steps 100, lr 1e-4 decaying to lr/10, no warm-up. text_name (may be null): the
// text's name ("text"). Throws InputError naming the key.
TrainConfig read_finetune_spec(const json::Value& spec, const GPTConfig& model, std::string* text_name);

json::Value config_json(const GPTConfig& c);
const char* activation_name(Activation a);
const char* positions_name(Positions p);
const char* rope_pairing_name(RopePairing r);
// Llama 3's rope_scaling as a config's JSON holds it (config.json's keys), null when off.
json::Value rope_scaling_json(const RopeScaling& r);
const char* norm_name(Norm n);
const char* mlp_name(Mlp m);
// All keys required; `where` prefixes messages and fields ("config", "__metadata__.config").
GPTConfig read_config(const json::Value& v, const std::string& where);
// TrainConfig without the seed (a 64-bit integer; checkpoints keep it as a decimal string).
json::Value train_config_json(const TrainConfig& t);
TrainConfig read_train_config(const json::Value& v, const std::string& where);

// The tokens of a string, each as its own UTF-8 string (for labels).
json::Value token_labels(const CharTokenizer& tok, const std::vector<int>& ids);

// Where a run's text comes from: {"task","n_chars"}, or {"text_name","text_fingerprint"}.
json::Value data_source_json(const TrainState& s);

// {"tokens","T","n_layer","n_head","maps":[layer][head] = T×T} for the tokens of one prompt, with
// layer l's weights (n_head, T, T) at weights(l).
json::Value attention_maps_json(const CharTokenizer& tok, const std::vector<int>& ids, int n_layer, int n_head,
                                const std::function<const float*(int)>& weights);

// After model.forward(ids, nullptr, 1, T): one head's stepper spec (see above).
json::Value head_spec(const GPT& model, int layer, int head);

}  // namespace ap
