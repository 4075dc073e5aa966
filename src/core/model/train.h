// train.h — training the tiny GPT on a built-in task or the user's text, as one object that a
// CLI, the wasm module and a checkpoint can all drive.
//
// A Trainer owns the data (the text, its character tokenizer, the train/validation split), the
// model, AdamW's moments, the batch sampler and the step counter. step() is nanoGPT's training
// iteration: a seeded random batch, forward, backward, clipping by global norm, the scheduled
// learning rate (warm-up, then cosine to min_lr at `steps`), one AdamW update. evaluate() is the
// mean loss over fixed validation windows (data.h's ValidationBatches), so it depends on the model
// alone. Everything is seeded from TrainConfig::seed: weights, batches and (for a task) the text;
// the same seed gives the same losses on one build, bit for bit, and a run resumed from a
// checkpoint (state() / Trainer(state)) continues exactly as the uninterrupted run.
//
// Threads (set_threads): a step runs data-parallel over the batch. Share k of n takes the rows
// [B·k/n, B·(k+1)/n) of the batch; each runs forward and backward on its own thread into its own
// gradients (the model itself for share 0, a replica reading the same parameters for the others,
// its activations reserved up front), the gradients are summed in share order, the loss is the
// mean of the B·T per-token losses summed in order (as one thread does), then one AdamW step.
// One thread is the single-threaded step, bit for bit; n threads give the same bits every run;
// different counts agree within the fast tier's summation tolerance (the weight gradients' sums
// over rows are split and regrouped), and the checkpoint does not record the count: a run saved
// with n resumes with any. The same parts serve separate workers that each hold a model (the
// page's): begin_step, shard_gradients in each worker, add_shard, finish_step.
//
// Divergence: a non-finite loss or gradient norm stops training. The step that found it applies
// no update (the parameters stay those after the last good step), diverged() becomes true with a
// message naming the step (counted from 1, as everywhere) and the likely cause (the naive softmax's overflow, or a learning rate
// too high), and step() refuses to go on.
//
// Limits: those of GPTConfig and data.h; TrainConfig::validate() lists its own.
// Errors: InputError naming the field ("steps", "lr", "text", "task", …).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/model/data.h"
#include "core/model/gpt.h"
#include "core/model/optim.h"
#include "core/base/thread_pool.h"
#include "core/tokenizers/tokenizer.h"

namespace ap {

constexpr int kMaxSteps = 1000000;

struct TrainConfig {
  int batch_size = 16;
  int steps = 2000;          // the run's length: the cosine reaches min_lr here
  float lr = 1e-3f;          // peak learning rate
  float min_lr = 1e-4f;
  int warmup_steps = 100;
  float weight_decay = 0.1f;
  float beta1 = 0.9f;
  float beta2 = 0.99f;
  float grad_clip = 1.0f;    // global-norm clipping; 0 turns it off
  int eval_interval = 100;   // the caller's cadence for evaluate() (CLI, page)
  int eval_batches = 8;      // at most this many validation batches per evaluate()
  uint64_t seed = 1337;
  // Tokens per training sequence; 0: the model's block_size. Fine-tuning a model trained elsewhere
  // (GPT-2's block_size is 1,024) trains on shorter windows to fit in memory: the model keeps all
  // its positions (wpe is not cropped), training only sees the first `context` of them.
  int context = 0;
  // The caller's cadence for the heads' induction and previous-token scores (core/interp/interp.h's
  // head_scores; GptSession::train answers them every this many steps); 0: never.
  int head_scores_interval = 0;
  // Throws InputError naming the field of a value out of range.
  void validate() const;
  LRSchedule schedule() const { return {lr, min_lr, warmup_steps, steps}; }
  AdamWConfig adamw() const { return {lr, beta1, beta2, 1e-8f, weight_decay}; }
};

// Where the text comes from: a built-in task (data.h), generated from the run's seed, or the
// user's UTF-8 text.
struct DataSpec {
  std::string task;                   // "copy", …; empty for text
  long long n_chars = kDefaultTaskChars;  // a task's length in characters
  std::string text;                   // the user's text, when task is empty
  std::string name;                   // the text's name for messages and metadata (a file name)
};

// The tokenizer of a run on this data: a task's fixed alphabet, or the text's characters
// (InputError, field "text", for invalid UTF-8 or more characters than a vocabulary holds).
CharTokenizer data_tokenizer(const DataSpec& data);

// The bytes a new run takes: GPT::memory_bytes at batch_size × block_size with the data's
// vocabulary. Throws the InputError a Trainer of this spec would for the training config, the
// data's vocabulary, the model's config and its memory (GPT::check_memory); the text's length is
// not checked (the data split is not made).
int64_t run_memory_bytes(GPTConfig model, const TrainConfig& train, const DataSpec& data);

// 64-bit FNV-1a of bytes, as 16 hex digits: how a checkpoint recognises the text it was trained on.
std::string text_fingerprint(const std::string& bytes);

// Steps are counted from 1 everywhere (messages, the CLI's log, the page's chart): step k is the
// k-th update; "after step k" is the model after k updates, and step 0 is the initial model.
// The first row of share k of n over a batch of B rows (share k is rows [shard_row(B, n, k),
// shard_row(B, n, k + 1))).
inline int shard_row(int B, int n, int k) { return static_cast<int>(int64_t(B) * k / n); }

// One share's forward and backward on g (a model, or a replica, with the step's parameters): zeroes
// g's gradients, then computes the gradients of the whole batch's mean loss (batch_rows · T
// tokens) from `rows` sequences of T tokens; g.losses() then holds their per-token losses. Returns
// their mean; a non-finite one skips the backward (the step diverges). Throws InputError for bad ids.
float shard_gradients(GPT& g, const int* ids, const int* targets, int rows, int T, int batch_rows);

// The validation loss of `count` batches of B sequences of T tokens on g (a model, a replica or a
// worker's model with the run's parameters): batch i's ids and targets are ids[i·B·T …] and
// targets[i·B·T …], and out[i] its mean loss, g.forward's: whoever computes a batch, the same bits.
// Throws InputError for bad ids.
void validation_losses(GPT& g, float* out, const int* ids, const int* targets, int count, int B, int T);

struct StepResult {
  int64_t step;     // this step's number, from 1; after a good step, steps_done() == step
  float loss;       // the batch's mean loss before the update
  float lr;         // the learning rate used
  float grad_norm;  // before clipping
  bool diverged;
};

// Everything a checkpoint holds; Trainer(state, text) continues from it.
struct TrainState {
  GPTConfig model;
  TrainConfig train;
  std::string task;            // empty: the user's text
  long long n_chars = 0;       // the task's length
  std::string text_name;       // the text's name, when not a task
  std::string text_fingerprint;  // text_fingerprint(text), when not a task
  std::vector<char32_t> vocab;   // the tokenizer's characters, id order (empty with bpe)
  std::shared_ptr<const BpeTokenizer> bpe;  // GPT-2's BPE, for a model trained elsewhere; else null
  // A Hugging Face tokenizer.json's (the Llama family's), and that file's text with its
  // tokenizer_config.json's (what a checkpoint keeps); else null and empty.
  std::shared_ptr<const HfBpeTokenizer> hf_tokenizer;
  std::string hf_tokenizer_json, hf_tokenizer_config;
  int64_t step = 0;              // steps done
  uint64_t sampler_state = 0;
  int64_t adam_t = 0;
  std::vector<float> params, m, v;  // flat, gpt.h's layout
  float last_val_loss = -1.0f;      // −1: never evaluated
  // A model-only file (a model trained elsewhere, imported): where it came from ("nanoGPT
  // ckpt.pt, iter 5000"); no training state (train, data, step, moments: defaults and empty).
  // Empty for a run of this project.
  std::string source;
  bool model_only() const { return !source.empty(); }
  // A run fine-tuned from a model trained elsewhere (Trainer::finetune): that model's source. Its
  // model is held to the open limit (kMaxOpenBytes) rather than a new run's. Empty otherwise.
  std::string base;
};

// The bytes fine-tuning `model` with `train` takes: GPT::memory_bytes for training at batch_size ×
// context (parameters, gradients, AdamW's two moments, the activations of the batch and their
// gradients, the KV cache).
int64_t finetune_memory_bytes(const GPTConfig& model, const TrainConfig& train);
// Throws InputError when finetune_memory_bytes passes `available`, with both figures (bytes and
// GiB / MiB) and the setting to lower: field "context" with the longest context that fits at this
// batch_size, else "batch_size", else "model" (the model alone, with gradients and moments, does
// not fit). `where` ends the figure of what there is ("left of the 4.00 GiB this page can address").
void check_finetune_memory(const GPTConfig& model, const TrainConfig& train, int64_t available,
                           const std::string& where);

// The state's tokenizer: its BPE if it has one, else its characters. Throws InputError (field
// "vocab") if it disagrees with the model's vocab_size.
Tokenizer tokenizer_of(const TrainState& s);

class Trainer {
 public:
  // A new run: builds the text (task or user's), the tokenizer (a task's fixed alphabet, or the
  // text's characters), the split, the model from `model` (its vocab_size is set here), seeded
  // weights, and zero moments. Throws InputError.
  Trainer(GPTConfig model, const TrainConfig& train, const DataSpec& data);
  // Resume from a checkpoint's state. A task run regenerates its text; a text run needs the same
  // text again (`text`: checked against the fingerprint, field "text") to train or evaluate.
  // Without it the model is loaded alone: it samples, generates and saves (state() keeps the
  // moments and the sampler untouched), and step() and evaluate() ask for the text (InputError,
  // field "text"). A model-only state (an imported model) is refused: it has no training state to
  // resume (field "checkpoint"). Throws InputError.
  Trainer(const TrainState& state, const std::string& text = "");
  // A model-only state (a model trained elsewhere) opened for inference: its parameters move into
  // a ModelUse::infer model (the state's copy is released: one copy, not two); its tokenizer is the
  // state's vocabulary, or token ids when it has none (tokenizer.h). It samples, generates, shows
  // attention and saves (a model-only file again); step() and evaluate() refuse (field "model").
  // A state without parameters gives a model of zeros, for the caller to fill (model().params()).
  static std::unique_ptr<Trainer> open(TrainState&& state);
  // The same around a model already made for inference (a typed GPT: llama_load.h's open_llama),
  // whose config is the state's; the state carries no parameters.
  static std::unique_ptr<Trainer> open(TrainState&& state, std::unique_ptr<GPT> model);
  bool opened() const { return !source_.empty(); }
  const std::string& source() const { return source_; }
  // Fine-tuning an opened model (or a run of this project, from its current weights, within
  // kMaxModelBytes) on the user's text (data.text, data.name): the model becomes
  // trainable in place (its parameters are not copied; gradients and the training activations at
  // batch_size × context are added), the text is read with the model's own tokenizer (GPT-2's BPE
  // or meta.pkl's characters; token ids cannot be fine-tuned: field "text") and split as a new
  // run's, AdamW starts fresh, the batches are seeded from train.seed (the same seed, the same
  // losses). Then the Trainer is a run on that text (opened() false, base() the model's source, or
  // "this playground's run on …, step N"):
  // step(), evaluate(), state() with the moments (a training checkpoint that resumes).
  // Checked before anything is allocated: the settings (context ≤ block_size), the text (at least
  // 2·(context + 1) tokens: a window for training and one for validation; field "text"), and the
  // memory against `available` (check_finetune_memory). Throws InputError; on error the opened
  // model is as it was.
  void finetune(const TrainConfig& train, const DataSpec& data, int64_t available, const std::string& where);
  const std::string& base() const { return base_; }
  // Tokens per training sequence: TrainConfig::context, or block_size.
  int context() const { return train_.context > 0 ? train_.context : model_->config().block_size; }

  // One training step (see above). After divergence, throws InputError (field "steps").
  StepResult step();
  // Threads for the next steps (1 … kMaxThreads; at most batch_size of them get rows): starts the
  // pool and reserves the replicas' gradients and activations. Throws InputError (field "threads").
  void set_threads(int n);
  int threads() const { return threads_; }

  // A step in parts, for workers that each hold a model of this config (the page's): begin_step(n)
  // samples the step's batch (batch_ids(), batch_targets(): (B, T), the same for a seed and step
  // whatever n is; share k is rows [shard_row(B, n, k), shard_row(B, n, k + 1))); own_shard()
  // computes share 0 into model().grads() while the other workers compute theirs (shard_gradients
  // on the same parameters); add_shard adds share k's gradients (num_parameters floats) and its
  // per-token losses (its rows · T) for k = 1 … n − 1 in order; finish_step sums the losses in
  // order, clips and applies AdamW, as step(). Throws InputError naming "threads", "gradients" or
  // "losses" for a count out of range, a share of the wrong size or out of order, and what step()
  // throws. A step begun and not finished is not in state(); begin_step again redoes its batch.
  void begin_step(int n);
  const std::vector<int>& batch_ids() const { return inputs_; }
  const std::vector<int>& batch_targets() const { return targets_; }
  void own_shard();
  void add_shard(const float* grads, int64_t n_grads, const float* losses, int64_t n_losses);
  StepResult finish_step();
  // A mirror of the run in another worker (loaded from the leader's state) steps with it, so that
  // only gradients travel: after begin_step(n), mirror_shard(k) (1 ≤ k < n) computes share k into
  // mirror_grads() (sent to the others) and its losses into the batch's; then add_shard takes the
  // other shares 0 … n − 1 in order (share 0's gradients copied, the next ones added, share k's own
  // added in its turn), so model().grads() holds the leader's sum bit for bit, and finish_step
  // applies the same clip and AdamW: the mirror's parameters stay the leader's.
  void mirror_shard(int k);
  const std::vector<float>& mirror_grads() const { return own_grads_; }
  const std::vector<float>& batch_losses() const { return batch_losses_; }
  int shares() const { return parts_; }  // the begun step's n (0: none begun)
  // Mean loss over the validation batches (deterministic; needs no gradient): each batch's mean
  // loss, summed in batch order in double. With threads (set_threads), the threads take whole
  // batches; the sum is the same, so the same bits whatever the count.
  float evaluate();
  // The evaluation in parts, as the step (the page's workers): begin_evaluate(n) fills eval_ids(),
  // eval_targets() with the validation batches (nb = eval_batches() of them, each (B, T), one after
  // the other) and splits them into s = min(n, nb) shares of whole batches (share k is batches
  // [shard_row(nb, s, k), shard_row(nb, s, k + 1))) → s; own_evaluate() computes share 0 on model();
  // add_evaluate adds share k's batch losses (validation_losses' out, on the same parameters) for
  // k = 1 … s − 1 in order; finish_evaluate() is evaluate()'s answer, the same bits whatever n.
  // Throws InputError naming "threads" (n below 1) or "losses" (a share of the wrong size or out of
  // order), and what evaluate() throws.
  int begin_evaluate(int n);
  int eval_batches() const { return val_ ? val_->num_batches() : 0; }
  const std::vector<int>& eval_ids() const { return eval_ids_; }
  const std::vector<int>& eval_targets() const { return eval_targets_; }
  void own_evaluate();
  void add_evaluate(const float* losses, int64_t n_losses);
  float finish_evaluate();
  // The state to save; the moments and parameters are copied.
  TrainState state() const;
  // The same without the parameters and moments (what info() shows): no copy of the weights.
  TrainState state_meta() const;

  // False for a text run loaded without its text: the model alone, no data to train on.
  bool has_data() const { return has_data_; }
  bool diverged() const { return diverged_; }
  const std::string& divergence_message() const { return divergence_; }
  int64_t steps_done() const { return step_; }
  float last_val_loss() const { return last_val_loss_; }
  GPT& model() { return *model_; }
  const GPT& model() const { return *model_; }
  const CharTokenizer& tokenizer() const { return *tokenizer_; }
  const TrainConfig& config() const { return train_; }
  const Dataset& dataset() const { return data_; }
  const std::string& task() const { return task_; }
  // Tokens per training step: batch_size · context().
  int64_t tokens_per_step() const { return int64_t(train_.batch_size) * context(); }

 private:
  void setup_data(const std::string& text, const GPTConfig& model);
  void require_data(const char* what) const;
  Trainer() : sampler_(0) {}  // open()'s
  void check_can_step();
  float parallel_gradients();        // the threads' shares of the sampled batch → the mean loss
  void fill_eval_batches();          // eval_ids_, eval_targets_ ← every validation batch
  float mean_eval_loss();            // eval_losses_ summed in batch order → last_val_loss_
  StepResult apply(StepResult r);    // clipping, divergence, AdamW (step's end)

  TrainConfig train_;
  std::string source_;  // an opened model's origin (TrainState::source); empty for a run
  std::string base_;    // a fine-tuned run's origin (TrainState::base)
  std::string task_;
  long long n_chars_ = 0;
  std::string text_name_, fingerprint_;
  std::unique_ptr<CharTokenizer> tokenizer_;
  Dataset data_;
  std::unique_ptr<GPT> model_;
  std::unique_ptr<AdamW> opt_;
  std::unique_ptr<ValidationBatches> val_;
  BatchSampler sampler_;
  std::vector<int> inputs_, targets_;  // (B, T)
  int threads_ = 1;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<std::unique_ptr<GPT>> replicas_;  // shares 1 … n − 1 of the threads
  std::vector<float> batch_losses_;             // (B, T): begin_step … finish_step
  int parts_ = 0, next_part_ = 0;               // begin_step's n, and the next share add_shard takes
  int own_part_ = 0;                            // mirror_shard's k (0: not a mirror's step)
  std::vector<float> own_grads_;                // mirror_shard's gradients
  uint64_t sampler_before_ = 0;                 // the sampler before the begun step
  std::vector<int> eval_ids_, eval_targets_;    // (nb, B, T): every validation batch
  std::vector<float> eval_losses_;              // (nb): each batch's mean loss
  int eval_parts_ = 0, eval_next_ = 0;          // begin_evaluate's n, and the next share to add
  int64_t step_ = 0;
  float last_val_loss_ = -1.0f;
  bool diverged_ = false;
  bool has_data_ = true;
  std::string divergence_;
};

}  // namespace ap
