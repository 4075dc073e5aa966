// common.h — what the `gpt` CLI's commands share: its errors and exit status, the formatting of
// numbers and texts in its messages, reading the user's text file, refusing early an output that
// cannot be written, and reading a checkpoint (the file's path before the core's message).
// Limits: a --text file of at most 64 MiB (the run spec's limit for "text").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/attention/attention.h"
#include "core/model/gpt.h"
#include "core/tokenizers/tokenizer.h"
#include "core/model/train.h"
#include "formats/byte_source.h"
#include "formats/safetensors.h"

namespace ap::gpt_cli {

constexpr size_t kMaxTextBytes = size_t(1) << 26;  // 64 MiB: the run spec's limit for "text"
constexpr int kExitError = 1, kExitUsage = 2, kExitDiverged = 3;

// An error the CLI itself finds (a file it cannot read), reported like the core's InputError but
// with no field, and with its exit status.
struct CliError : InputError {
  CliError(const std::string& message, int code = kExitError) : InputError(message, ""), code(code) {}
  int code;
};

std::string with_commas(long long n);   // 104,960
std::string fixed(double v, int digits);  // printf's %.*f
std::string json_quoted(const std::string& s);  // a text as a JSON string: how messages show characters

// A file's bytes, at most max_bytes; `what` names it in messages ("the config.json"). Throws CliError.
std::string read_file(const std::string& path, size_t max_bytes, const char* what);
// The user's text (at most kMaxTextBytes). Throws CliError.
std::string read_text_file(const std::string& path);
// Refuses (CliError) an output whose folder does not exist or cannot be written, or that is a folder.
void check_writable(const std::string& path, const char* what);

// What a checkpoint holds, read in slices (file_io.h's FileSource: the file is never held whole, so
// the peak is the model's, not the model's and the file's). Throws CliError: the file's errors, and
// the core's about its insides after the path ("a.safetensors: tensor …").
struct Checkpoint {
  safetensors::File header;  // this project's file: its metadata and tensors; empty for a foreign one
  TrainState state;
  uint64_t file_bytes = 0;  // the file's size
  std::string imported;  // what the file was, if converted ("nanoGPT's ckpt.pt"); empty otherwise
  // A Llama-family model read with typed = true: the model for inference with its matrices in their
  // file's types (llama_load.h's open_llama), state.params then empty; else null.
  std::unique_ptr<GPT> typed;
  // A Llama-family model read by read_llama_in_place: fill(p, begin, end, out) converts rows [begin,
  // end) of parameter p to float32 (llama_load.h's llama_param_fill) from the file's bytes, which
  // `weights` keeps; state.params then empty.
  std::function<void(const ParamTensor& p, int64_t begin, int64_t end, float* out)> fill;
  std::shared_ptr<const void> weights;
};

// Also takes nanoGPT's ckpt.pt (its meta.pkl found beside it, or at ../data/<dataset>/meta.pkl from
// its folder, or data/<dataset>/meta.pkl from here, as nanoGPT's sample.py looks) and Hugging
// Face's GPT-2 model.safetensors (with config.json beside it), with GPT-2's tokenizer files where
// they lie beside it (attach_bpe); without a vocabulary it takes token ids only.
// A note on stderr (never stdout: --json answers stay clean) names every file found this way.
// typed: a Hugging Face folder or a GGUF file opens as Checkpoint::typed (for inference) rather
// than as float32 parameters, on the files' bytes read once and kept (its matrices used in place:
// the peak is about the files' size).
Checkpoint read_checkpoint(const std::string& path, bool typed = false);
// A Hugging Face folder or a GGUF file with its weights left in the file's bytes (read once and kept):
// Checkpoint::fill gives each parameter as float32 when asked, so a writer holds one tensor at a
// time. The same checks and messages as read_checkpoint's (a value that is not finite: when fill
// reaches it).
Checkpoint read_llama_in_place(const std::string& path);
// The model file and the files that go with it, as every command that takes a checkpoint takes
// them (`gpt sample ckpt.pt meta.pkl`, as `gpt import`): alone, read_checkpoint(files[0]); with
// companions (meta.pkl, config.json, GPT-2's tokenizer files), read_model_files(files, false).
Checkpoint read_checkpoint(const std::vector<std::string>& files, bool typed = false);
// GPT-2's BPE for a model-only state without characters (formats/bpe_files.h): from the files given,
// else vocab.json + merges.txt or tokenizer.json beside the model (Hugging Face's folder). Nothing
// found: the state stays without one (require_vocab then says what to give). Throws InputError
// naming the file at fault.
struct TokenizerFiles {
  std::string vocab, merges, tokenizer_json;  // paths; empty: not given
};
void attach_bpe(TrainState& s, const std::string& model_path, const TokenizerFiles& given);
// Refuses (CliError) a model-only file (an imported model) for a command that needs a run's
// training state and data: `what` is what the command does ("resume").
void require_training_state(const std::string& file, const TrainState& s, const char* what);
// A model trained elsewhere from the files `gpt import` takes (told apart by their contents and
// names, in any order: nanoGPT's ckpt.pt with meta.pkl or GPT-2's tokenizer files, Hugging Face's
// model.safetensors with config.json and tokenizer files), as a model-only state with its
// tokenizer (import_cmd.cpp). own_files: this project's .safetensors too (a training checkpoint's
// model alone, its moments dropped). Throws CliError naming the file at fault.
TrainState read_model_files(const std::vector<std::string>& files, bool own_files);
// nanoGPT's ckpt.pt as a model-only state; `meta` its meta.pkl, or "" to look for one as above.
TrainState import_model(const std::string& path, const ByteSource& bytes, const std::string& meta);

// A model read from a checkpoint for inference: no training data needed (a text run's checkpoint
// samples without its text).
// need_tokenizer: refuse (CliError) a model without a vocabulary (GPT-2's BPE without its files),
// which takes token ids only; otherwise tok is null for such a model.
struct LoadedModel {
  TrainState state;  // without its params (moved into the model)
  std::unique_ptr<GPT> model;
  std::unique_ptr<CharTokenizer> tok;
};
LoadedModel load_model(const std::vector<std::string>& files, bool need_tokenizer = true);
void check_prompt_length(const LoadedModel& m, const std::vector<int>& ids);

// The text a run trains or evaluates on: the --text file's, checked against the checkpoint (a
// task run regenerates its own, so --text does not apply), or "" without --text.
std::string run_text(const std::string& file, const TrainState& s, const std::string& text_file);

// "2 layers, 4 heads of 16, n_embd 64, block_size 64, vocab 12", and "the copy task (100,000
// characters)" or "the text \"notes.txt\"".
std::string describe_config(const GPTConfig& c);
std::string describe_data(const TrainState& s);

}  // namespace ap::gpt_cli
