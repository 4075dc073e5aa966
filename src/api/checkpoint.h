// checkpoint.h — the GPT's one checkpoint format: safetensors, with nanoGPT's names.
//
// The container is safetensors (safetensors.h: 8 bytes little-endian u64 N, N bytes of a JSON
// header padded with spaces to a multiple of 8, then the raw little-endian data; the header maps
// "__metadata__" (first) to a string→string map and each tensor name to {"dtype":"F32","shape":[…],
// "data_offsets":[begin,end]}, offsets that the tensors tile exactly, in header order). This unit
// says which tensors and which metadata a checkpoint holds, and checks them.
//
// Tensors, all F32, in this order:
//   the model under nanoGPT's state-dict names and layouts (gpt.h's param_tensors: e.g.
//   "transformer.h.0.attn.c_attn.weight" [3C, C], c_q/c_k/c_v stacked), then "lm_head.weight"
//   [V, C] (the tied wte, stored again so that nanoGPT's load_state_dict finds it; the reader
//   requires it bitwise equal to wte);
//   AdamW's moments under "optimizer.exp_avg.<name>" and "optimizer.exp_avg_sq.<name>" (PyTorch's
//   names for m and v), for every model tensor but lm_head.
// __metadata__ (every value a string, as safetensors requires; JSON inside where noted; every key
// required, no other key allowed):
//   "format": "attention-playground-gpt", "format_version": "1",
//   "config": JSON {"vocab_size","block_size","n_layer","n_head","n_embd","mask","softmax"},
//   "train": JSON of TrainConfig {"batch_size","steps","lr","min_lr","warmup_steps",
//            "weight_decay","beta1","beta2","grad_clip","eval_interval","eval_batches"}
//            (floats written with float32's shortest digits, so they read back exactly),
//   "vocab": JSON array of one-character strings, in id order (a task's: its alphabet),
//   "data": JSON {"task":"copy","n_chars":100000} or {"text_name":"…","text_fingerprint":"…"},
//   "step", "seed", "rng_state" (the batch sampler's), "adam_t" (≤ step): decimal integers, all
//   64 bits,
//   "val_loss": the last validation loss (format_float: may be "nan"), "" if never evaluated.
//
// save_checkpoint is deterministic (the same state gives the same bytes) and refuses, naming the
// tensor or key, a state that load_checkpoint would refuse (a non-finite weight, say), so every
// file it writes can be read back. Reading checks everything and names what is wrong: the byte
// offset for a truncated file, a bad header length, a header that is not JSON or trailing bytes;
// the tensor for a wrong dtype, shape or offsets, a missing or an unknown tensor, a non-finite
// value, a negative second moment, or an lm_head that is not wte; the metadata key for a bad
// field; and both configs when the file's config is not the one expected. It allocates only after
// the offsets are proven to tile the file, so memory never exceeds the file's size. Limits: the
// header ≤ kMaxCheckpointHeader bytes; the file ≤ kMaxCheckpointBytes. docs/checkpoint.md has
// the whole story.
//
// write_checkpoint_file writes atomically (file_io.h's write_file_atomic: a temporary file in the
// same directory, "<path>.tmp-<pid>-<n>", fsync'd, then renamed over the target), so an
// interrupted write leaves the old checkpoint whole; on failure the temporary file is removed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/model/train.h"
#include "formats/byte_source.h"
#include "formats/checkpoint_format.h"
#include "formats/safetensors.h"

namespace ap {

// The checkpoint's bytes.
std::string save_checkpoint(const TrainState& state);

// A model-only checkpoint written piece by piece, never whole: the same bytes as save_checkpoint of s
// with its params, where s holds no params and fill(p, begin, end, out) gives rows [begin, end) of
// parameter p (a 1-D parameter is one row) when the writer reaches them (the tied lm_head: wte's
// again). write(data, n) takes the file's bytes in order. The same checks and messages as
// save_checkpoint's, a non-finite value found (and thrown) when its rows are reached. It holds
// about 4 MiB of floats at a time (or one row, if longer).
using ParamRows = std::function<void(const ParamTensor& p, int64_t begin, int64_t end, float* out)>;
void save_checkpoint(const TrainState& s, const ParamRows& fill,
                     const std::function<void(const char* data, size_t n)>& write);
// The metadata and tensors (names, dtypes, shapes, offsets) of the file save_checkpoint(s) writes,
// without its values (s need hold no params): what `gpt inspect` shows of a model it would convert.
safetensors::File checkpoint_layout(const TrainState& s);

// Reads a checkpoint. If `expected` is given, a file whose config differs is refused with both
// configs in the message. Throws InputError: field "checkpoint" for the file's structure (with the
// byte offset in the message), the tensor's name for a tensor, "__metadata__.<key>" for metadata.
TrainState load_checkpoint(const std::string& bytes, const GPTConfig* expected = nullptr);
// The same from a source read in slices (file_io.h's FileSource: never the whole file at once).
TrainState load_checkpoint(const ByteSource& bytes, const GPTConfig* expected = nullptr);

// A checkpoint's fault in the words the page and the CLI both use: "NAME: WHAT" for a safetensors
// file (its JSON header starts at byte 8: `head` is the file's first 9 bytes, or fewer), and "NAME
// is neither a PyTorch zip (ckpt.pt) nor a safetensors file: WHAT" for anything else (a text
// renamed .pt, whose first bytes read as an absurd header length).
std::string checkpoint_fault(const std::string& name, const std::string& head, const std::string& what);

// Native only (the wasm module passes bytes). Throws InputError (field "path") on I/O errors.
void write_checkpoint_file(const std::string& path, const std::string& bytes);
std::string read_checkpoint_file(const std::string& path);

}  // namespace ap
