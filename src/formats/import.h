// import.h — models trained elsewhere, as model-only states (TrainState::model_only) that the
// GPT, the CLI and save_checkpoint take like the project's own.
//
// nanoGPT's ckpt.pt (the file its train.py writes: torch.save of {"model": state dict,
// "model_args", "optimizer", "iter_num", "best_val_loss", "config"}), read without PyTorch: the zip
// (zip.h), then archive/data.pkl with the restricted unpickler (pickle.h: nothing in the file is
// run), then each tensor's storage record.
//   - model_args (n_layer, n_head, n_embd, block_size, bias, vocab_size; dropout ignored) give the
//     config, with nanoGPT's exact GELU, LayerNorm ε 1e-5, the strict causal mask and the stable
//     softmax;
//   - the state dict's names are nanoGPT's, with or without torch.compile's "_orig_mod." prefix;
//     the attention's "attn.bias" mask buffer is ignored; lm_head.weight, if there, must equal wte
//     (nanoGPT ties them); every tensor's shape must agree with model_args, none may be missing or
//     unknown; float32, bfloat16 and float16 storages are read as float32 (any layout of strides);
//     weights must be finite. The optimizer's state and "config" are ignored (config's "dataset"
//     is kept, to find the meta.pkl).
//   - the vocabulary comes from the dataset's meta.pkl (`stoi`/`itos`, read by the same
//     unpickler): one character per id, in code-point order (nanoGPT's sorted(set(text))), its
//     size equal to vocab_size. Without one, nanoGPT uses GPT-2's BPE tokenizer (vocab_size
//     50,304: GPT-2's 50,257 padded), given by set_bpe_tokenizer from its files (bpe_files.h).
//
// A Hugging Face GPT-2-family model.safetensors (gpt2, distilgpt2, gpt2-medium, their fine-tunes)
// with its config.json: HF's names ("h.0.attn.c_attn.weight", "wte.weight"), with or without
// "transformer."; Conv1D weights stored in × out, transposed here to nanoGPT's out × in; the
// attention's "attn.bias"/"attn.masked_bias" buffers ignored; lm_head.weight, if there, equal to
// wte; F32, F16 and BF16 read as float32. config.json gives n_layer, n_head, n_embd, n_positions
// (block_size), vocab_size, layer_norm_epsilon and activation_function ("gelu_new" or
// "gelu_pytorch_tanh": the tanh GELU; "gelu": the exact one; any other refused by name);
// model_type, if given, must be "gpt2", n_inner null or 4·n_embd. The vocabulary is GPT-2's BPE,
// from vocab.json + merges.txt or tokenizer.json (bpe_files.h, set_bpe_tokenizer); without them
// the model takes token ids (gpt logits --ids).
// Errors are InputError, field the file's name, the message naming the record, tensor, key or byte.
#pragma once

#include <memory>
#include <string>

#include "core/model/train.h"
#include "formats/byte_source.h"
#include "formats/weight_fill.h"

namespace ap {

struct NanoGptImport {
  TrainState state;     // model_only; vocab empty until set_meta_vocab
  std::string dataset;  // config["dataset"] ("shakespeare_char"), or "" if absent
};

// True for a zip archive (what torch.save writes).
bool is_torch_zip(const std::string& bytes);
bool is_torch_zip(const ByteSource& bytes);

NanoGptImport import_nanogpt(const std::string& ckpt, const std::string& name);

// An import in two steps, so that a file need not be held whole (the page's opening): the plan is
// read from the file's header (a safetensors header; a ckpt.pt's zip directory, local headers,
// data.pkl and byteorder), every check above made, and gives the model's config, source and the
// reads of its weights (weight_fill.h: in parameter order, a compared lm_head last); WeightFill
// then reads them into the model's parameters. From a partial source, planning throws NeedBytes
// for the bytes it lacks (a few rounds: never the weights).
struct ImportPlan {
  TrainState state;     // model_only; params, vocab empty
  std::string dataset;  // nanoGPT's config["dataset"], or ""
  std::vector<WeightRead> reads;
};
ImportPlan plan_nanogpt(const ByteSource& ckpt, const std::string& name);
ImportPlan plan_hf_gpt2(const ByteSource& safetensors, const std::string& config_json, const std::string& name,
                        const std::string& config_name);
// The reads from a file held whole into s.params (allocated here); from a source, in slices of
// 16 MiB (each used before the next is read: a FileSource's, file_io.h).
void fill_weights(TrainState& s, std::vector<WeightRead> reads, const std::string& bytes, const std::string& name);
void fill_weights(TrainState& s, std::vector<WeightRead> reads, const ByteSource& bytes, const std::string& name);

// The character vocabulary of a nanoGPT meta.pkl, for the imported model (its vocab_size must agree).
void set_meta_vocab(TrainState& s, const std::string& meta_pkl, const std::string& name);

// True for a safetensors file that is not this project's checkpoint (its metadata has no
// "format": "attention-playground-gpt"), such as Hugging Face's.
bool is_foreign_safetensors(const std::string& bytes);
bool is_foreign_safetensors(const ByteSource& bytes);

// A model-only state (vocab empty: GPT-2's BPE).
TrainState import_hf_gpt2(const std::string& safetensors, const std::string& config_json, const std::string& name,
                          const std::string& config_name);

// The config of a Hugging Face config.json, checked as import_hf_gpt2 checks it (before the
// weights are read: what the page's "Open a model" sizes the memory by).
GPTConfig hf_gpt2_config(const std::string& config_json, const std::string& config_name);

// Gives a model-only state GPT-2's BPE (its vocab_size may pad the tokenizer's: nanoGPT's 50,304).
// Refused (field `name`): a state with a character vocabulary, a tokenizer larger than the model.
void set_bpe_tokenizer(TrainState& s, std::shared_ptr<const BpeTokenizer> bpe, const std::string& name);

// Refuses a model without a vocabulary (no meta.pkl, no BPE), saying what to give.
void require_vocab(const TrainState& s, const std::string& name);

}  // namespace ap
