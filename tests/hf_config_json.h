// hf_config_json.h — an HfConfig as JSON for the test tools that dump what a reader made of a model
// (hf_folder_dump, gguf_weights_dump): config.json's fields as formats/hf_config.h holds them, and
// the RoPE inverse frequencies they imply, each in full (%.17g) for the Python side to compare.
#pragma once

#include <cstdio>
#include <initializer_list>
#include <utility>

#include "formats/hf_config.h"
#include "formats/json.h"

inline ap::json::Value hf_config_json(const ap::HfConfig& c) {
  using ap::json::Value;
  Value cfg = Value::object();
  cfg.set("model_type", c.model_type);
  cfg.set("hidden_act", c.hidden_act);
  for (const auto& [k, v] : std::initializer_list<std::pair<const char*, long long>>{
           {"vocab_size", c.vocab_size}, {"hidden_size", c.hidden_size}, {"intermediate_size", c.intermediate_size},
           {"num_hidden_layers", c.num_hidden_layers}, {"num_attention_heads", c.num_attention_heads},
           {"num_key_value_heads", c.num_key_value_heads}, {"head_dim", c.head_dim},
           {"max_position_embeddings", c.max_position_embeddings}, {"sliding_window", c.sliding_window}})
    cfg.set(k, v);
  cfg.set("rope_theta", c.rope_theta);
  cfg.set("rms_norm_eps", c.rms_norm_eps);
  cfg.set("tie_word_embeddings", c.tie_word_embeddings);
  cfg.set("attention_bias", c.attention_bias);
  cfg.set("attention_out_bias", c.attention_out_bias);
  cfg.set("qk_norm", c.qk_norm);
  cfg.set("rope_scaling", c.rope_scaling.type);
  cfg.set("rope_factor", c.rope_scaling.factor);
  for (const auto& [key, list] : {std::make_pair("bos_token_ids", &c.bos_token_ids),
                                  std::make_pair("eos_token_ids", &c.eos_token_ids)}) {
    Value ids = Value::array();
    for (long long id : *list) ids.push(id);
    cfg.set(key, ids);
  }
  Value inv = Value::array();
  for (double x : ap::rope_inverse_frequencies(c)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    inv.push(Value::raw(buf));
  }
  cfg.set("inv_freq", inv);
  return cfg;
}
