// llama_load.h — a Llama-family model (LlamaWeights: a Hugging Face folder's or a GGUF file's
// tensors, llama_weights.h) made into the GPT's config and flat float32 parameters (gpt.h), and a
// Hugging Face folder read natively into LlamaWeights.
//
// The mapping (transformers' names → gpt.h's): embed_tokens → wte; per layer input_layernorm →
// ln_1, q_proj | k_proj | v_proj stacked row-wise → attn.c_attn (weights and biases), q_norm /
// k_norm → attn.q_norm / attn.k_norm, o_proj → attn.c_proj, post_attention_layernorm → ln_2,
// gate_proj | up_proj → mlp.gate_proj | mlp.up_proj (c_fc), down_proj → mlp.down_proj; norm →
// ln_f; lm_head → lm_head (untied). RoPE pairs the halves (transformers' rotate_half). Llama's
// attention_bias (biases on all four projections) is bias on: the MLP's biases, which the file
// has not, are zeros. block_size is max_position_embeddings, at most kMaxBlockSize.
//
// Two ways in: load_llama converts each tensor to float32 from its storage type (F32, F16, BF16 or
// a ggml block type, quant.h's dequantize_row) into the flat parameters (what a checkpoint, `gpt
// import` and fine-tuning take); open_llama makes the model for inference with its matrices kept
// in their types (gpt.h, "Typed weights": a BF16 model takes about its files' bytes, not twice),
// every value still checked finite on the way, and the memory reckoned with them as stored.
// Refused by name (InputError, field the tensor or the file): a tensor missing, extra or of the
// wrong size, a value that is not finite, a model beyond the open limit (in figures, before any
// allocation: check_llama_memory).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/model/gpt.h"
#include "formats/llama_weights.h"

namespace ap {

// The GPT's config for config.json's model (InputError naming the key when it cannot be run).
GPTConfig llama_gpt_config(const HfConfig& c);
// Throws InputError (field "model") when the model opened for inference passes kMaxOpenBytes:
// its weights as float32, or (weight_bytes ≥ 0, a typed model: GPT::typed_weight_bytes) as stored.
void check_llama_memory(const GPTConfig& g, int64_t weight_bytes = -1);
// Writes every parameter of g (param_tensors' layout) into params (g.num_parameters() floats)
// from w; `file` names the model in messages.
void fill_llama_params(const LlamaWeights& w, const GPTConfig& g, float* params, const std::string& file);
// One piece of a parameter at a time (a writer that streams them, `gpt import`): the returned
// function writes rows [begin, end) of parameter p (of param_tensors(g); a 1-D parameter is one
// row: begin 0, end 1) into out, converted and checked as fill_llama_params does (the same bits);
// the tensors are placed and checked when it is made. It reads w's bytes, which must outlive it.
using LlamaParamFill = std::function<void(const ParamTensor& p, int64_t begin, int64_t end, float* out)>;
LlamaParamFill llama_param_fill(const LlamaWeights& w, const GPTConfig& g, const std::string& file);
// Both: the config, the memory check, then the parameters (the vector is allocated after the check).
struct LlamaModel {
  GPTConfig config;
  std::vector<float> params;
};
LlamaModel load_llama(const LlamaWeights& w, const std::string& file);
// The model for inference with typed weights (gpt.h), its bytes copied from w, or with an owner
// (the buffers w points into, which the model then keeps: the page's opening) used in place: the
// same checks and messages as load_llama's, the memory reckoned with the weights as stored.
std::unique_ptr<GPT> open_llama(const LlamaWeights& w, const std::string& file, TypedOwner owner = {});

// Natively: a Hugging Face folder (config.json and model.safetensors, or the index and its shards)
// read into LlamaWeights; the files' bytes are kept in w.owned. InputError naming the file.
LlamaWeights read_llama_folder(const std::string& dir);
// Whether dir is a folder with a config.json (what the CLI opens as a Hugging Face folder).
bool is_hf_folder(const std::string& dir);

}  // namespace ap
