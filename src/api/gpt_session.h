// gpt_session.h — one GPT run (a Trainer) behind JSON text and flat float arrays: what the wasm
// module exposes to the training page (src/bindings/) and what the `gpt` CLI drives, so both run
// one code path and can be compared (tests/wasm/). GptSession is the facade the calls' table
// (gpt_calls.h) calls; it holds the run and its training (here, gpt_session.cpp) and, by role, its
// parts: predicting and inspecting (GptPredict, gpt_predict.h), opening a model (GptOpening,
// gpt_opening.h), the data-parallel shards (GptShards, gpt_shards.h); each works on the session's run.
//
// Every method that takes input returns JSON text, {"ok":true,…} or {"ok":false,"error":…,
// "field":…} (spec.h's guarded): no exception leaves a session. The float arrays (logits,
// attention weights, the cache's keys and values) are the results of the last successful call
// that computed them; they are empty before that.
//
//   create(spec)            a new run from a run spec (gpt_json.h) → info
//   create_with_text(spec, text)
//                           the same, the text given as bytes beside the spec rather than as its
//                           "text" key (which the spec must then not have): a file's bytes reach
//                           the core as they are, so invalid UTF-8 is named by its byte offset
//                           (the JSON reader could only refuse the whole spec) and a large text
//                           is not escaped into JSON and parsed again → info
//   load(bytes[, text])     a run from checkpoint bytes (checkpoint.h) → info; a text run trains
//                           and evaluates only with its text (without it: the model alone,
//                           has_data false, for sampling, attention and generation)
//   info()                  {"config","train","seed","data","vocab","n_params","step","steps",
//                            "tokens_per_step","val_loss","has_data","diverged","divergence","kernels"}
//   train(n)                up to n steps (stops at divergence) → {"step" (steps done after),
//                            "losses","lrs","grad_norms" (one per step done),"diverged","divergence"}
//   evaluate()              → {"step","val_loss"}
//   sample(spec)            {"prompt","max_new_tokens","temperature","top_k","top_p","greedy","seed"} →
//                            {"text" (prompt + new), "new_text", "tokens" (labels)}
//   generate_start(spec)    the same spec: runs the prompt through the KV cache → step info
//   generate_next()         one more token through the cache → step info:
//                            {"token","text","base","cache_length","rebuilt","tokens" (context labels),
//                             "max_abs_diff"} — max_abs_diff: |cached logits − full forward's
//                            logits| over the vocabulary, for the same context; after a draw also
//                            "draw" (the token's probability p, the uniform u, coin = u·S, its
//                            segment [from, to) of S in id order: gpt_predict.h) and
//                            "distribution" (next_token's answer for the logits and options it
//                            was drawn with, the 16 most likely)
//   run_prompt(prompt)      one forward pass over the prompt (its last block_size characters) →
//                            {"tokens","T","n_layer","n_head"}; then attention_weights() is
//                            (n_layer, n_head, T, T) and head_spec(l, h) the stepper's spec
//   attention_summary()     run_prompt's maps summed up (inspect.h, reference order) →
//                            {"tokens","T","n_layer","head_mean" (L matrices T×T: each layer's heads
//                            averaged),"rollout" (L matrices: attention rollout up to each layer)};
//                            then attention_mean() and attention_rollout() are the same (L, T, T)
//   next_token(spec)        the next-token distribution of a prompt under temperature, top-k and
//                            top-p; without a prompt, the last one's logits reshaped (gpt_predict.h)
//   surprisal(spec)         −log p of every token of a text, or of the validation windows (gpt_predict.h)
//   vocab(spec)             the tokens' texts, spec {"from" (0), "count" (to the end)} →
//                            {"from","vocab","vocab_size"}; [] for token ids. info()'s "vocab"
//                            lists a character vocabulary only (GPT-2's 50,257 pieces come from here)
//   block_trace(spec)       {"prompt","position" (default the last),"show","sample","kv_layer"?} → one position walked
//                            through the whole model in the reference tier (core/model/block_trace.h;
//                            gpt_walk.cpp): {"tokens","T","position","token","visible","seen"
//                            (1/0 per key: the window and its sinks),"scale","n_kv_head","rope_cos"?,
//                            "rope_sin"? (RoPE),"config","activation","ln_eps","wte","wpe" (null
//                            without learned positions),"encoded","layers":[{"ln_1","q_raw"?,"k_raw"?
//                            (RoPE: before the turn),"q","k","v","keys"?,"values"? (kv_layer's always),
//                            "heads":[{"kv_head","slope"?,"bias"? (ALiBi),"dots","scores" (−∞ where
//                            the window hides a key),"weights","context"}],"atty","attn_proj",
//                            "residual2","ln_2","fc","silu"? (SwiGLU),"act","mlp_proj","residual3",
//                            the biases}],"ln_f","top","max_logit","sum_exp"}
//   weight_row(spec)        {"weight": "c_attn"|"attn.c_proj"|"c_fc"|"mlp.c_proj"|"lm_head","layer","row"}
//                            → {"weight","row","w" (that output's weights, in order),"bias"}
//   save()                  checkpoint bytes (empty, and last_error() set, on failure)
//   open_begin(spec, head, config)   opening a model file read in slices (gpt_open.cpp): spec
//                            {"name", "size", "config_name", "slice" (16 MiB)}; head: the file's
//                            first bytes (a safetensors header sizes the model), config: a Hugging
//                            Face config.json or "". Refuses (field "memory") what will not fit,
//                            before reading → {"size","need","left"}
//   open_piece(at, bytes)   bytes of the file from byte `at`, as open_plan asked for them
//   open_plan(spec, meta, config)  spec {"meta_name","config_name"}: plans from the bytes given so
//                            far → {"need": [[at, n], …]} (give them with open_piece, plan again),
//                            or, once the headers are read (a ckpt.pt with meta.pkl's bytes or "",
//                            a Hugging Face model.safetensors with its config.json; this project's
//                            file asks for all of itself), makes the model and the slice buffer →
//                            {"read": [[at, n], …] (the ranges of the weights, to feed in this
//                            order), "bytes"}
//   open_buffer()           the slice buffer, for the caller to fill (the bindings' views of it)
//   open_feed(n)            the buffer's first n bytes are the next of the ranges → {"left"}
//   open_finish()           every range fed: makes the run an opened model (model-only: inference,
//                            Trainer::open) or a training checkpoint without its text → info with
//                            "opened": {"name","format" ("nanogpt" | "huggingface" | "playground")}
//   open_tokenizer(spec, first, second)  GPT-2's tokenizer files for the model being opened, read
//                            and checked now: spec {"names": ["tokenizer.json"]} (first: its bytes)
//                            or {"names": ["vocab.json","merges.txt"]} (first, second) →
//                            {"vocab_size"}; open_finish gives them to a model without a vocabulary
//                            of its own (Hugging Face's, a ckpt.pt without meta.pkl)
//   open_cancel()           frees the opening under way (and the tokenizer files)
//   open_files(spec, config, index, tokenizer, tokenizer_config)  opening a Llama-family model of
//                            several files (gpt_open.cpp): spec {"name" (what messages call
//                            it), "files": [{"name","size"}, …] (the .safetensors shards or one
//                            .gguf)}, and the bytes of config.json, model.safetensors.index.json,
//                            tokenizer.json, tokenizer_config.json (each "" when not given). A file
//                            the index lists but not given, no config.json beside safetensors, a
//                            malformed small file: refused by name before any weight is read →
//                            {"format" ("hf-folder" | "gguf"),"files" (the names it reads)}
//   open_files_piece(file, at, bytes)  bytes of files[file] from byte `at`, as open_files_plan asked
//   open_files_plan()       → {"need": [[file, at, n], …]} (headers: give them, plan again), or the
//                            model's config checked, the memory figured (field "memory") and the
//                            buffers for the weights' bytes made → {"read": [[file, at, n], …],
//                            "bytes"}: then open_view / open_feed (each range's bytes in order) and
//                            open_finish (format "hf-folder" | "gguf")
// Fine-tuning an opened model (gpt_finetune.cpp; train.h's Trainer::finetune):
//   finetune_memory(spec)   spec {"context" (min(block_size, 128)),"batch_size" (4),"steps" (100),
//                            "lr" (1e-4),"min_lr" (lr/10),"warmup_steps" (0),"weight_decay","beta1",
//                            "beta2","grad_clip","eval_interval","eval_batches","seed","text_name"}
//                            → {"need","available" (bytes),"fits","context","batch_size"}, and when it
//                            does not fit, finetune's "error" and "field" (the setting to lower)
//   finetune(spec, text)    the opened model becomes a run on the text (the model's own tokenizer,
//                            fresh AdamW, batches seeded from "seed"): checked first (context ≤
//                            block_size, the text ≥ 2·(context + 1) tokens, the memory: both figures
//                            and the setting to lower, field "context" | "batch_size" | "model");
//                            refused, the opened model stays → info (with "base": where it came from);
//                            then train, step_begin … step_finish, evaluate and save as any run
// load() also opens a model-only file (gpt import's) as an opened model, for finetune.
// Data-parallel training across workers (step_begin … shard_evaluate_staged): the session's
// shards part, GptShards (gpt_shards.h), reached as shards().
//   set_threads(n)          threads sharing each training step's batch (train.h), and an opened
//                            model's forward and generation (GPT::set_threads: columns, rows, heads), for this
//                            run and the next ones; 1 by default (the wasm module's answers, bit for bit) →
//                            {"threads","cores"}; in wasm 1 in gpt_core (the page runs workers
//                            instead), up to the pthreads loadGpt started in gpt_core_mt
//   encode(text)            the model's token ids of a text → {"ids","tokens" (labels: each token's
//                            text, GPT-2's BPE pieces such as " the", "<0xF0>" for a byte that is
//                            not a whole character)}
//   decode(ids_json)        a JSON array of token ids → {"text" (invalid UTF-8, a character cut
//                            between tokens, shown as U+FFFD), "tokens"}
// info() also says "tokenizer": "characters", "gpt2-bpe" or "token_ids".
// And three functions of no session:
//   gpt_tasks_json()        {"tasks":[{"name","description","example","attention","alphabet","loss_floor"}]}
//   gpt_set_kernels(tier)   "reference" | "fast" → {"kernels": the tier now in use ("reference",
//                            "avx512", "avx2", "simd128", …)}: for exactness checks and debugging
//   gpt_memory_json(spec)   a run spec → {"bytes","limit"}: the bytes create(spec) would take
//                            (train.h's run_memory_bytes: parameters, gradients, AdamW's moments,
//                            activations of batch_size × block_size, the KV cache) and the core's
//                            limit (kMaxModelBytes); past the limit, create's error naming the field
//                            ("n_embd" for the model alone, "batch_size" for the batch)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/model/train.h"
#include "api/gpt_opening.h"
#include "api/gpt_predict.h"
#include "api/gpt_shards.h"

namespace ap {

struct RunSpec;  // gpt_json.h
namespace json {
class Value;
}

std::string gpt_tasks_json();
std::string gpt_set_kernels(const std::string& tier);
std::string gpt_memory_json(const std::string& spec_json);

class GptSession {
 public:
  GptSession();
  ~GptSession();
  GptSession(const GptSession&) = delete;
  GptSession& operator=(const GptSession&) = delete;

  std::string create(const std::string& spec_json);
  std::string create_with_text(const std::string& spec_json, const std::string& text);
  std::string load(const std::string& checkpoint_bytes, const std::string& text);
  std::string info() const;
  std::string vocab(const std::string& spec_json) const;
  std::string train(int n);
  std::string evaluate();
  // predicting and inspecting: the predict part (gpt_predict.h, gpt_predict.cpp, gpt_walk.cpp)
  std::string sample(const std::string& spec_json) { return predict_.sample(spec_json); }
  std::string generate_start(const std::string& spec_json) { return predict_.generate_start(spec_json); }
  std::string generate_next() { return predict_.generate_next(); }
  std::string run_prompt(const std::string& prompt) { return predict_.run_prompt(prompt); }
  std::string head_spec(int layer, int head) { return predict_.head_spec(layer, head); }
  // run_prompt's weights as JSON (the CLI's format)
  std::string attention_maps_json() const { return predict_.attention_maps_json(); }
  // run_prompt's head means and rollout (inspect.h) as JSON
  std::string attention_summary() { return predict_.attention_summary(); }
  std::string next_token(const std::string& spec_json) { return predict_.next_token(spec_json); }
  std::string surprisal(const std::string& spec_json) { return predict_.surprisal(spec_json); }
  std::string block_trace(const std::string& spec_json) { return predict_.block_trace(spec_json); }
  std::string weight_row(const std::string& spec_json) { return predict_.weight_row(spec_json); }
  std::string encode(const std::string& text) { return predict_.encode(text); }
  std::string decode(const std::string& ids_json) { return predict_.decode(ids_json); }
  std::shared_ptr<KeptPatch>& kept_patch() { return predict_.kept_patch(); }  // gpt_interp.cpp's

  // Flat results (row-major float32).
  const std::vector<float>& logits() const { return predict_.logits(); }  // generation: (V) of the last step
  const std::vector<float>& full_logits() const { return predict_.full_logits(); }  // the same from a full forward
  const std::vector<float>& attention_weights() const { return predict_.attention_weights(); }  // run_prompt: (L, NH, T, T)
  const std::vector<float>& attention_mean() const { return predict_.attention_mean(); }  // attention_summary: (L, T, T)
  const std::vector<float>& attention_rollout() const { return predict_.attention_rollout(); }  // (L, T, T)
  const std::vector<float>& cache_attention() const { return predict_.cache_attention(); }  // generation: (L, NH, T_total)
  // generation: (L, T_total, C), with grouped-query attention (L, T_total, n_kv_head·head_dim)
  const std::vector<float>& cache_keys() const { return predict_.cache_keys(); }
  const std::vector<float>& cache_values() const { return predict_.cache_values(); }

  // opening a model: the opening part (gpt_opening.h, gpt_open.cpp)
  std::string open_begin(const std::string& spec_json, const std::string& head, const std::string& config_json) {
    return opening_.open_begin(spec_json, head, config_json);
  }
  std::string open_piece(double at, std::string bytes) { return opening_.open_piece(at, std::move(bytes)); }
  std::string open_plan(const std::string& spec_json, const std::string& meta, const std::string& config_json) {
    return opening_.open_plan(spec_json, meta, config_json);
  }
  char* open_buffer() { return opening_.open_buffer(); }
  size_t open_size() const { return opening_.open_size(); }
  std::string open_feed(double n) { return opening_.open_feed(n); }
  std::string open_finish() { return opening_.open_finish(); }
  std::string open_tokenizer(const std::string& spec_json, const std::string& first, const std::string& second) {
    return opening_.open_tokenizer(spec_json, first, second);
  }
  void open_cancel() { opening_.open_cancel(); }
  std::string open_files(const std::string& spec_json, const std::string& config, const std::string& index,
                         const std::string& tokenizer, const std::string& tokenizer_config) {
    return opening_.open_files(spec_json, config, index, tokenizer, tokenizer_config);
  }
  std::string open_files_piece(double file, double at, std::string bytes) {
    return opening_.open_files_piece(file, at, std::move(bytes));
  }
  std::string open_files_plan() { return opening_.open_files_plan(); }
  std::string finetune_memory(const std::string& spec_json);  // gpt_finetune.cpp
  std::string finetune(const std::string& spec_json, const std::string& text);

  std::string save();
  const std::string& last_error() const { return last_error_; }
  std::string set_threads(int n);
  // the data-parallel part (gpt_shards.h)
  GptShards& shards() { return shards_; }
  const GptShards& shards() const { return shards_; }

  bool ready() const { return trainer_ != nullptr; }
  Trainer* trainer() { return trainer_.get(); }

 private:
  // The body of info() (it throws; the callers guard).
  json::Value info_value() const;
  // train()'s answer for these steps (the diverging one's loss last, without its lr and norm)
  json::Value steps_answer(const std::vector<float>& losses, const std::vector<float>& lrs,
                           const std::vector<float>& norms) const;
  void forget_caches();  // the weights change: the generator, the prompts
  void start(const RunSpec& r);  // a new Trainer replaces the current run only once it is built
  // A model opened for inference runs its forwards (a prompt's, a sweep's) on the session's
  // threads (GPT::set_threads: the same bits for every count); a training run's threads are the Trainer's.
  void share_threads();
  // Every call that needs a model starts here: "no model yet" (field "model") before create or load.
  void require_model() const;

  std::unique_ptr<Trainer> trainer_;
  std::string last_error_;
  int threads_ = 1;
  GptPredict predict_{*this};
  GptOpening opening_{*this};
  GptShards shards_{*this};
  friend class GptPredict;
  friend class GptOpening;
  friend class GptShards;
};

// What is left for opening a model, and the most there can be: in wasm the module's address space
// (up to 4 GiB) minus what it uses; natively kMaxOpenBytes (gpt_full_table.cpp).
int64_t open_memory_left();
int64_t open_memory_max();
// What fine-tuning `model` may take in all, and (where) how to name it in a refusal (gpt_finetune.cpp).
int64_t finetune_available(const GPT& model, std::string* where);

}  // namespace ap
