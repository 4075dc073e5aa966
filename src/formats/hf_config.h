// hf_config.h — a Hugging Face model folder's config.json for the Llama family, read into a plain
// struct the model loader uses: model_type llama (also SmolLM2's and TinyLlama's), mistral, qwen2
// and qwen3; any other model_type is refused by name.
//
// Read: vocab_size, hidden_size, intermediate_size, num_hidden_layers, num_attention_heads,
// num_key_value_heads (default: the heads; must divide them), head_dim (default hidden_size /
// heads), max_position_embeddings, rope_theta (default 10000), rms_norm_eps (default 1e-6),
// tie_word_embeddings (default false), attention_bias (qwen2: always true for q/k/v and none on
// o_proj, as transformers builds it; mistral: none; llama, qwen3: default false, on all four), Qwen3's q/k RMSNorms (qk_norm, always for
// qwen3), Mistral's sliding_window (null for none; qwen2/qwen3 only with use_sliding_window),
// hidden_act ("silu" only; others refused by name), bos_token_id and eos_token_id (a number or
// a list), rope_scaling (null, type "default", or "llama3" with factor, low_freq_factor,
// high_freq_factor and original_max_position_embeddings; other types refused by name).
// mlp_bias true is refused. Limits keep every size within what the loader can index.
// rope_inverse_frequencies gives the rotation's head_dim/2 inverse frequencies with the scaling
// applied (Llama 3's rule as transformers' _compute_llama3_parameters, in double).
// Errors are InputError (field "config.json") naming the key and value.
#pragma once

#include <string>
#include <vector>

#include "core/model/rope_scaling.h"

namespace ap {

struct HfRopeScaling {
  std::string type;  // "" (none) or "llama3"
  double factor = 1, low_freq_factor = 1, high_freq_factor = 4;
  long long original_max_position_embeddings = 0;
};

struct HfConfig {
  std::string model_type, hidden_act;
  long long vocab_size = 0, hidden_size = 0, intermediate_size = 0, num_hidden_layers = 0;
  long long num_attention_heads = 0, num_key_value_heads = 0, head_dim = 0, max_position_embeddings = 0;
  double rope_theta = 10000, rms_norm_eps = 1e-6;
  bool tie_word_embeddings = false, qk_norm = false;
  bool attention_bias = false;      // q/k/v projections' biases
  bool attention_out_bias = false;  // o_proj's bias (llama and qwen3: attention_bias; qwen2: none)
  long long sliding_window = 0;  // 0: none
  std::vector<long long> bos_token_ids, eos_token_ids;
  HfRopeScaling rope_scaling;
};

constexpr long long kMaxHfDim = 1 << 20;      // hidden, intermediate, vocabulary, positions
constexpr long long kMaxHfLayers = 1 << 10;

HfConfig read_hf_config(const std::string& text, const std::string& name = "config.json");

// θ_i = rope_theta^(−2i/head_dim) for i < head_dim/2, scaled as rope_scaling says (the rule is
// core/model/rope_scaling.h's).
std::vector<double> rope_inverse_frequencies(const HfConfig& c);
// rope_scaling as the model's config holds it (factor 0 when there is none).
RopeScaling rope_scaling_of(const HfConfig& c);

}  // namespace ap
