// checkpoint.h — the GPT's one checkpoint format: safetensors, with nanoGPT's names.
//
// Layout (https://github.com/huggingface/safetensors, "format"): 8 bytes little-endian u64 N, then
// N bytes of a JSON header (UTF-8, padded with spaces to a multiple of 8), then the raw
// little-endian data. The header maps each tensor name to {"dtype":"F32","shape":[…],
// "data_offsets":[begin,end]} (offsets into the data, which the tensors tile exactly, in header
// order) and "__metadata__" to a string→string map.
//
// Tensors, all F32:
//   the model under nanoGPT's state-dict names and layouts (gpt.h's param_tensors: e.g.
//   "transformer.h.0.attn.c_attn.weight" [3C, C], c_q/c_k/c_v stacked), then "lm_head.weight"
//   [V, C] (the tied wte, stored again so that nanoGPT's load_state_dict finds it);
//   AdamW's moments under "optimizer.exp_avg.<name>" and "optimizer.exp_avg_sq.<name>" (PyTorch's
//   names for m and v), for every model tensor but lm_head.
// __metadata__ (every value a string, as safetensors requires; JSON inside where noted):
//   "format": "attention-playground-gpt", "format_version": "1",
//   "config": JSON {"vocab_size","block_size","n_layer","n_head","n_embd","mask","softmax"},
//   "train": JSON of TrainConfig {"batch_size","steps","lr","min_lr","warmup_steps",
//            "weight_decay","beta1","beta2","grad_clip","eval_interval","eval_batches"}
//            (floats written with float32's shortest digits, so they read back exactly),
//   "vocab": JSON array of one-character strings, in id order,
//   "data": JSON {"task":"copy","n_chars":100000} or {"text_name":"…","text_fingerprint":"…"},
//   "step", "seed", "rng_state" (the batch sampler's), "adam_t": decimal integers,
//   "val_loss": the last validation loss ("" if never evaluated).
//
// Reading checks everything and names what is wrong: the byte offset for a truncated file or a
// bad header length, the tensor for a wrong dtype, shape, offsets, a missing or an unknown tensor
// or a non-finite value, the metadata key for a bad field, and the config when the file's config
// is not the one expected. Limits: the header ≤ kMaxCheckpointHeader bytes; the file ≤
// kMaxCheckpointBytes.
//
// write_checkpoint_file writes atomically: a temporary file in the same directory, flushed, then
// renamed over the target, so an interrupted write leaves the old checkpoint whole.
#pragma once

#include <cstdint>
#include <string>

#include "../core/train.h"

namespace ap {

constexpr const char* kCheckpointFormat = "attention-playground-gpt";
constexpr int kCheckpointFormatVersion = 1;
constexpr uint64_t kMaxCheckpointHeader = uint64_t(1) << 24;  // 16 MiB
constexpr uint64_t kMaxCheckpointBytes = uint64_t(1) << 31;   // 2 GiB

// The checkpoint's bytes.
std::string save_checkpoint(const TrainState& state);

// Reads a checkpoint. If `expected` is given, a file whose config differs is refused with both
// configs in the message. Throws InputError: field "checkpoint" for the file's structure (with the
// byte offset in the message), the tensor's name for a tensor, "__metadata__.<key>" for metadata.
TrainState load_checkpoint(const std::string& bytes, const GPTConfig* expected = nullptr);

// Native only (the wasm module passes bytes). Throws InputError (field "path") on I/O errors.
void write_checkpoint_file(const std::string& path, const std::string& bytes);
std::string read_checkpoint_file(const std::string& path);

}  // namespace ap
