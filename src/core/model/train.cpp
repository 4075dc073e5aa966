// train.cpp — the Trainer (see train.h).
#include "core/model/train.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/utf8.h"

namespace ap {

namespace {

std::string num(long long v) { return std::to_string(v); }

// The seed streams of a run (derive_seed), so that each use has its own numbers.
constexpr uint64_t kTextStream = 101;    // a task's text
constexpr uint64_t kWeightStream = 102;  // the initial weights

std::string fmt(double v) {
  // A NaN's sign bit depends on the CPU (x86 makes -NaN, ARM and wasm may not); %g would print it.
  if (std::isnan(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void check_int(long long v, long long lo, long long hi, const char* field) {
  if (v < lo || v > hi)
    throw InputError(std::string(field) + " is " + num(v) + ": it must be between " + num(lo) + " and " + num(hi),
                     field);
}

void check_real(float v, double lo, double hi, bool lo_open, bool hi_open, const char* field) {
  const bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  if (!ok)
    throw InputError(std::string(field) + " is " + fmt(v) + ": it must be " + (lo_open ? "above " : "at least ") +
                         fmt(lo) + " and " + (hi_open ? "below " : "at most ") + fmt(hi),
                     field);
}

}  // namespace

void TrainConfig::validate() const {
  check_int(batch_size, 1, kMaxBatch, "batch_size");
  check_int(steps, 1, kMaxSteps, "steps");
  check_real(lr, 0.0, 10.0, true, false, "lr");
  check_real(min_lr, 0.0, lr, false, false, "min_lr");
  check_int(warmup_steps, 0, steps, "warmup_steps");
  check_real(weight_decay, 0.0, 10.0, false, false, "weight_decay");
  check_real(beta1, 0.0, 1.0, false, true, "beta1");
  check_real(beta2, 0.0, 1.0, false, true, "beta2");
  check_real(grad_clip, 0.0, 1e6, false, false, "grad_clip");
  check_int(eval_interval, 1, kMaxSteps, "eval_interval");
  check_int(eval_batches, 1, 1024, "eval_batches");
  check_int(context, 0, kMaxBlockSize, "context");
  check_int(head_scores_interval, 0, kMaxSteps, "head_scores_interval");
}

std::string text_fingerprint(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

CharTokenizer data_tokenizer(const DataSpec& data) {
  return CharTokenizer::from_text(data.task.empty() ? data.text : task_info(data.task).alphabet);
}

// The training context of `train` on a model of `model`'s block_size (InputError "context" past it).
static int context_of(const TrainConfig& train, const GPTConfig& model) {
  const int T = train.context > 0 ? train.context : model.block_size;
  if (T > model.block_size)
    throw InputError("context is " + num(T) + ": it must be at most the model's block_size, " + num(model.block_size),
                     "context");
  return T;
}

int64_t run_memory_bytes(GPTConfig model, const TrainConfig& train, const DataSpec& data) {
  train.validate();
  model.vocab_size = data_tokenizer(data).vocab_size();
  model.validate();
  const int T = context_of(train, model);
  GPT::check_memory(model, train.batch_size, T);
  return GPT::memory_bytes(model, train.batch_size, T);
}

void Trainer::setup_data(const std::string& text, const GPTConfig& model) {
  const int T = context_of(train_, model);
  const std::vector<int> tokens = tokenizer_->encode(text, "text");
  data_ = split_dataset(tokens, T);
  if (!model_) model_ = std::make_unique<GPT>(model);
  model_->reserve(train_.batch_size, T);
  val_ = std::make_unique<ValidationBatches>(data_.val, train_.batch_size, T, train_.eval_batches);
  const size_t BT = static_cast<size_t>(train_.batch_size) * T;
  inputs_.assign(BT, 0);
  targets_.assign(BT, 0);
}

Trainer::Trainer(GPTConfig model, const TrainConfig& train, const DataSpec& data)
    : train_(train), task_(data.task), sampler_(train.seed) {
  train_.validate();
  std::string text;
  if (!task_.empty()) {
    n_chars_ = data.n_chars;
    text = generate_task_text(task_, derive_seed(train_.seed, kTextStream), n_chars_);
  } else {
    text_name_ = data.name;
    fingerprint_ = text_fingerprint(data.text);
    text = data.text;
  }
  tokenizer_ = std::make_unique<CharTokenizer>(data_tokenizer(data));
  model.vocab_size = tokenizer_->vocab_size();
  model.validate();
  setup_data(text, model);
  model_->init_weights(derive_seed(train_.seed, kWeightStream));
  opt_ = std::make_unique<AdamW>(model_->tensors(), model_->num_parameters(), train_.adamw());
}

Tokenizer tokenizer_of(const TrainState& s) {
  if (s.bpe) return Tokenizer::from_bpe(s.bpe, s.model.vocab_size);
  if (s.hf_tokenizer) return Tokenizer::from_hf(s.hf_tokenizer, s.model.vocab_size);
  Tokenizer t = Tokenizer::from_chars(s.vocab);
  if (t.vocab_size() != s.model.vocab_size)
    throw InputError("the vocabulary has " + num(t.vocab_size()) + " characters but the model's vocab_size is " +
                         num(s.model.vocab_size),
                     "vocab");
  return t;
}

Trainer::Trainer(const TrainState& s, const std::string& text) : train_(s.train), task_(s.task), sampler_(0) {
  if (s.model_only())
    throw InputError("this file holds a model only (" + s.source +
                         "), with no training state to resume: sample from it, or train a new run",
                     "checkpoint");
  train_.validate();
  s.model.validate();
  tokenizer_ = std::make_unique<Tokenizer>(tokenizer_of(s));
  std::string data_text;
  if (!task_.empty()) {
    n_chars_ = s.n_chars;
    data_text = generate_task_text(task_, derive_seed(train_.seed, kTextStream), n_chars_);
  } else {
    has_data_ = !text.empty();
    if (has_data_ && text_fingerprint(text) != s.text_fingerprint)
      throw InputError("this is not the text the checkpoint was trained on (\"" + s.text_name +
                           "\", fingerprint " + s.text_fingerprint + "; this text's is " + text_fingerprint(text) + ")",
                       "text");
    text_name_ = s.text_name;
    fingerprint_ = s.text_fingerprint;
    data_text = text;
  }
  base_ = s.base;
  if (!base_.empty()) {  // a model trained elsewhere: the open limit (kMaxOpenBytes), as when it was tuned
    model_ = std::make_unique<GPT>(s.model, ModelUse::infer);
    model_->make_trainable(train_.batch_size, context_of(train_, s.model));
  }
  if (has_data_) {
    setup_data(data_text, s.model);
  } else if (!model_) {
    model_ = std::make_unique<GPT>(s.model);
  }
  const int64_t n = model_->num_parameters();
  if (static_cast<int64_t>(s.params.size()) != n || static_cast<int64_t>(s.m.size()) != n ||
      static_cast<int64_t>(s.v.size()) != n)
    throw InputError("the state holds " + num(static_cast<long long>(s.params.size())) + " parameters but the config needs " +
                         num(n),
                     "params");
  std::copy(s.params.begin(), s.params.end(), model_->params());
  opt_ = std::make_unique<AdamW>(model_->tensors(), n, train_.adamw());
  opt_->m() = s.m;
  opt_->v() = s.v;
  opt_->set_t(s.adam_t);
  sampler_.set_state(s.sampler_state);
  step_ = s.step;
  last_val_loss_ = s.last_val_loss;
}

std::unique_ptr<Trainer> Trainer::open(TrainState&& s) { return open(std::move(s), nullptr); }

std::unique_ptr<Trainer> Trainer::open(TrainState&& s, std::unique_ptr<GPT> model) {
  if (!s.model_only()) throw InputError("Trainer::open takes a model-only state", "checkpoint");
  s.model.validate();
  std::unique_ptr<Trainer> t(new Trainer());
  t->source_ = s.source;
  t->has_data_ = false;
  // GPT-2's BPE, a Hugging Face tokenizer.json, the characters of a meta.pkl, or (none) the token ids written as text
  t->tokenizer_ = std::make_unique<Tokenizer>(s.bpe || s.hf_tokenizer || !s.vocab.empty() ? tokenizer_of(s)
                                                                        : Tokenizer::token_ids(s.model.vocab_size));
  if (t->tokenizer_->vocab_size() != s.model.vocab_size)
    throw InputError("the vocabulary has " + num(t->tokenizer_->vocab_size()) + " characters but the model's vocab_size is " +
                         num(s.model.vocab_size),
                     "vocab");
  if (model) {
    if (!s.params.empty() || model->use() != ModelUse::infer || model->num_parameters() != s.model.num_parameters())
      throw InputError("Trainer::open takes a model made for inference from the state's config, without parameters", "model");
    t->model_ = std::move(model);
    return t;
  }
  t->model_ = std::make_unique<GPT>(s.model, ModelUse::infer);
  if (s.params.empty()) return t;  // zeros, for the caller to fill (an opening read tensor by tensor)
  if (static_cast<int64_t>(s.params.size()) != t->model_->num_parameters())
    throw InputError("the state holds " + num(static_cast<long long>(s.params.size())) + " parameters but the config needs " +
                         num(t->model_->num_parameters()),
                     "params");
  std::copy(s.params.begin(), s.params.end(), t->model_->params());
  std::vector<float>().swap(s.params);
  return t;
}

void Trainer::require_data(const char* what) const {
  if (!source_.empty())
    throw InputError("this model was opened from " + source_ + ": it is for inference (maps, the stepper, generation), " +
                         "with no training data or optimiser state to " + what,
                     "model");
  if (!has_data_)
    throw InputError("this model was trained on the text \"" + text_name_ + "\": give the same text again to " + what,
                     "text");
}

float shard_gradients(GPT& g, const int* ids, const int* targets, int rows, int T, int batch_rows) {
  g.zero_grad();
  const float loss = g.forward(ids, targets, rows, T);
  if (std::isfinite(loss)) g.backward(int64_t(batch_rows) * T);
  return loss;
}

void Trainer::check_can_step() {
  require_data("train it further");
  if (diverged_) throw InputError("training stopped: " + divergence_, "steps");
}

StepResult Trainer::step() {
  check_can_step();
  GPT& m = *model_;
  const int B = train_.batch_size, T = context();
  StepResult r{step_ + 1, 0.0f, train_.schedule().at(step_), 0.0f, false};
  sampler_.sample(inputs_.data(), targets_.data(), data_.train, B, T);
  if (!replicas_.empty()) {
    r.loss = parallel_gradients();
  } else {
    m.zero_grad();
    r.loss = m.forward(inputs_.data(), targets_.data(), B, T);
    if (std::isfinite(r.loss)) m.backward();
  }
  return apply(r);
}

StepResult Trainer::apply(StepResult r) {
  GPT& m = *model_;
  if (std::isfinite(r.loss)) r.grad_norm = clip_grad_norm(m.grads(), m.num_parameters(), train_.grad_clip);
  if (!std::isfinite(r.loss) || !std::isfinite(r.grad_norm)) {
    diverged_ = true;
    r.diverged = true;
    const std::string what = !std::isfinite(r.loss) ? "the loss became " + fmt(r.loss)
                                                     : "the gradient norm became " + fmt(r.grad_norm);
    divergence_ = what + " at step " + num(step_ + 1) + ", so training stopped there (the weights are " +
                  (step_ == 0 ? std::string("the initial ones") : "those after step " + num(step_)) + "). ";
    if (!m.config().stable_softmax)
      divergence_ += "The naive softmax computes e^x without subtracting the row max: a score above 88.72 "
                     "overflows float32 to ∞, and ∞/∞ is NaN. The stable softmax does not overflow.";
    else
      divergence_ += "The learning rate (" + fmt(r.lr) + " at this step) is probably too high.";
    return r;
  }
  opt_->step(m.params(), m.grads(), r.lr);
  ++step_;
  return r;
}

// ---------------------------------------------------------------- data-parallel steps

void Trainer::set_threads(int n) {
  if (n == threads_ && (n == 1 || pool_ || model_->use() == ModelUse::infer)) return;
  if (model_->use() == ModelUse::infer) {
    // An opened model not made trainable has no step to share: its forward's threads are the
    // model's own (GPT::set_threads, the session's share_threads), so no second pool is started
    // (gpt_core_mt has one pthread per thread loadGpt asked for). finetune() makes it trainable
    // and sets 1; its training threads come from set_threads after.
    ThreadPool::check(n);
    threads_ = n;
    pool_.reset();
    replicas_.clear();
    return;
  }
  auto pool = std::make_unique<ThreadPool>(n);  // checks n
  std::vector<std::unique_ptr<GPT>> replicas;
  const int B = train_.batch_size, T = context(), shares = std::min(n, B);
  for (int k = 1; k < shares; ++k) {
    replicas.push_back(std::make_unique<GPT>(GPT::ReplicaOf{model_.get()}));
    replicas.back()->reserve(shard_row(B, shares, k + 1) - shard_row(B, shares, k), T);
  }
  threads_ = n;
  pool_ = n > 1 ? std::move(pool) : nullptr;
  replicas_ = std::move(replicas);
}

float Trainer::parallel_gradients() {
  GPT& m = *model_;
  const int B = train_.batch_size, T = context();
  const int shares = static_cast<int>(replicas_.size()) + 1, threads = pool_->size();
  auto share = [&](int k) -> GPT& { return k == 0 ? m : *replicas_[static_cast<size_t>(k - 1)]; };
  auto grads = [&](int i) {
    for (int k = i; k < shares; k += threads) {
      const int r0 = shard_row(B, shares, k), rows = shard_row(B, shares, k + 1) - r0;
      shard_gradients(share(k), inputs_.data() + int64_t(r0) * T, targets_.data() + int64_t(r0) * T, rows, T, B);
    }
  };
  pool_->run(grads);
  // The batch's mean, summed in row order as one thread sums it.
  float sum = 0.0f;
  for (int k = 0; k < shares; ++k) {
    const float* l = share(k).losses();
    const int n = (shard_row(B, shares, k + 1) - shard_row(B, shares, k)) * T;
    for (int i = 0; i < n; ++i) sum += l[i];
  }
  const float loss = sum / static_cast<float>(B * T);
  if (!std::isfinite(loss)) return loss;
  // The gradients summed in share order (share 0's are the model's own), each thread a slice.
  const int64_t np = m.num_parameters();
  float* g = m.grads();
  auto reduce = [&](int i) {
    const int64_t a = np * i / threads, b = np * (i + 1) / threads;
    for (const std::unique_ptr<GPT>& r : replicas_) {
      const float* x = r->grads();
      for (int64_t j = a; j < b; ++j) g[j] += x[j];
    }
  };
  pool_->run(reduce);
  return loss;
}

void Trainer::begin_step(int n) {
  check_can_step();
  const int B = train_.batch_size, T = context();
  if (n < 1 || n > B)
    throw InputError("a step split " + num(n) + " ways needs 1 to batch_size = " + num(B) + " shares", "shares");
  // A step begun and not finished (a worker failed) is begun again from the same batch.
  if (parts_ > 0) sampler_.set_state(sampler_before_);
  sampler_before_ = sampler_.state();
  sampler_.sample(inputs_.data(), targets_.data(), data_.train, B, T);
  batch_losses_.resize(static_cast<size_t>(B) * T);  // allocates once: the first split step
  parts_ = n;
  next_part_ = 0;
  own_part_ = 0;
}

void Trainer::own_shard() {
  if (parts_ < 1 || next_part_ != 0 || own_part_ != 0)
    throw InputError("no step is begun: begin_step first", "gradients");
  const int B = train_.batch_size, T = context(), rows = shard_row(B, parts_, 1);
  shard_gradients(*model_, inputs_.data(), targets_.data(), rows, T, B);
  std::copy(model_->losses(), model_->losses() + int64_t(rows) * T, batch_losses_.begin());
  next_part_ = 1;
}

void Trainer::mirror_shard(int k) {
  if (parts_ < 2 || next_part_ != 0 || own_part_ != 0)
    throw InputError("no step is begun in two or more shares: begin_step first", "gradients");
  if (k < 1 || k >= parts_)
    throw InputError("share " + num(k) + " of " + num(parts_) + ": a mirror computes one of shares 1 … " +
                         num(parts_ - 1),
                     "shares");
  GPT& m = *model_;
  const int B = train_.batch_size, T = context();
  const int r0 = shard_row(B, parts_, k), rows = shard_row(B, parts_, k + 1) - r0;
  shard_gradients(m, inputs_.data() + int64_t(r0) * T, targets_.data() + int64_t(r0) * T, rows, T, B);
  own_grads_.assign(m.grads(), m.grads() + m.num_parameters());  // allocates once: the first step
  std::copy(m.losses(), m.losses() + int64_t(rows) * T, batch_losses_.begin() + int64_t(r0) * T);
  own_part_ = k;
}

void Trainer::add_shard(const float* grads, int64_t n_grads, const float* losses, int64_t n_losses) {
  if (next_part_ >= parts_ || (next_part_ < 1 && own_part_ < 1))
    throw InputError("no share is awaited: begin_step and own_shard first, then shares 1 … n − 1 in order",
                     "gradients");
  GPT& m = *model_;
  const int B = train_.batch_size, T = context();
  const int r0 = shard_row(B, parts_, next_part_), rows = shard_row(B, parts_, next_part_ + 1) - r0;
  if (n_grads != m.num_parameters())
    throw InputError("share " + num(next_part_) + " has " + num(n_grads) + " gradients: the model has " +
                         num(m.num_parameters()) + " parameters",
                     "gradients");
  if (n_losses != int64_t(rows) * T)
    throw InputError("share " + num(next_part_) + " has " + num(n_losses) + " losses: its " + num(rows) +
                         " rows of " + num(T) + " tokens have " + num(int64_t(rows) * T),
                     "losses");
  float* g = m.grads();
  if (next_part_ == 0) {
    std::copy(grads, grads + n_grads, g);  // a mirror's share 0: the leader's own gradients
  } else {
    for (int64_t j = 0; j < n_grads; ++j) g[j] += grads[j];
  }
  std::copy(losses, losses + n_losses, batch_losses_.begin() + int64_t(r0) * T);
  ++next_part_;
  if (next_part_ == own_part_) {  // a mirror's own share, added in its turn (its losses are in place)
    const float* x = own_grads_.data();
    for (int64_t j = 0; j < n_grads; ++j) g[j] += x[j];
    ++next_part_;
  }
}

StepResult Trainer::finish_step() {
  if (parts_ < 1 || next_part_ != parts_)
    throw InputError("the step has " + num(next_part_) + " of its " + num(parts_) + " shares", "gradients");
  parts_ = next_part_ = own_part_ = 0;
  StepResult r{step_ + 1, 0.0f, train_.schedule().at(step_), 0.0f, false};
  float sum = 0.0f;
  for (float l : batch_losses_) sum += l;
  r.loss = sum / static_cast<float>(batch_losses_.size());
  return apply(r);
}

void validation_losses(GPT& g, float* out, const int* ids, const int* targets, int count, int B, int T) {
  const int64_t n = int64_t(B) * T;
  for (int i = 0; i < count; ++i) out[i] = g.forward(ids + i * n, targets + i * n, B, T);
}

void Trainer::fill_eval_batches() {
  require_data("evaluate it");
  const int nb = val_->num_batches();
  const int64_t n = int64_t(val_->batch_size()) * val_->block_size();
  eval_ids_.resize(static_cast<size_t>(nb * n));
  eval_targets_.resize(static_cast<size_t>(nb * n));
  eval_losses_.assign(static_cast<size_t>(nb), 0.0f);
  for (int i = 0; i < nb; ++i) val_->batch(i, eval_ids_.data() + i * n, eval_targets_.data() + i * n, data_.val);
}

float Trainer::mean_eval_loss() {
  double sum = 0.0;
  for (float l : eval_losses_) sum += l;
  last_val_loss_ = static_cast<float>(sum / static_cast<double>(eval_losses_.size()));
  return last_val_loss_;
}

float Trainer::evaluate() {
  fill_eval_batches();
  const int nb = val_->num_batches(), B = val_->batch_size(), T = val_->block_size();
  const int64_t n = int64_t(B) * T;
  const int shares = std::min(static_cast<int>(replicas_.size()) + 1, nb);
  if (shares <= 1) {
    validation_losses(*model_, eval_losses_.data(), eval_ids_.data(), eval_targets_.data(), nb, B, T);
    return mean_eval_loss();
  }
  // Whole batches per thread (a batch's loss is its forward's, whichever model computes it).
  const int threads = pool_->size();
  auto part = [&](int i) {
    for (int k = i; k < shares; k += threads) {
      const int b0 = shard_row(nb, shares, k), count = shard_row(nb, shares, k + 1) - b0;
      GPT& g = k == 0 ? *model_ : *replicas_[static_cast<size_t>(k - 1)];
      validation_losses(g, eval_losses_.data() + b0, eval_ids_.data() + b0 * n, eval_targets_.data() + b0 * n,
                        count, B, T);
    }
  };
  pool_->run(part);
  return mean_eval_loss();
}

int Trainer::begin_evaluate(int n) {
  if (n < 1) throw InputError("an evaluation split " + num(n) + " ways: it needs at least 1 share", "shares");
  fill_eval_batches();
  eval_parts_ = std::min(n, val_->num_batches());
  eval_next_ = 0;
  return eval_parts_;
}

void Trainer::own_evaluate() {
  if (eval_parts_ < 1 || eval_next_ != 0) throw InputError("no evaluation is begun: begin_evaluate first", "losses");
  const int nb = val_->num_batches(), count = shard_row(nb, eval_parts_, 1);
  validation_losses(*model_, eval_losses_.data(), eval_ids_.data(), eval_targets_.data(), count,
                    val_->batch_size(), val_->block_size());
  eval_next_ = 1;
}

void Trainer::add_evaluate(const float* losses, int64_t n_losses) {
  if (eval_next_ < 1 || eval_next_ >= eval_parts_)
    throw InputError("no share of the evaluation is awaited: begin_evaluate and own_evaluate first, then shares "
                     "1 … n − 1 in order",
                     "losses");
  const int nb = val_->num_batches();
  const int b0 = shard_row(nb, eval_parts_, eval_next_), count = shard_row(nb, eval_parts_, eval_next_ + 1) - b0;
  if (n_losses != count)
    throw InputError("share " + num(eval_next_) + " of the evaluation has " + num(n_losses) +
                         " losses: it has " + num(count) + " validation batches",
                     "losses");
  std::copy(losses, losses + n_losses, eval_losses_.begin() + b0);
  ++eval_next_;
}

float Trainer::finish_evaluate() {
  if (eval_parts_ < 1 || eval_next_ != eval_parts_)
    throw InputError("the evaluation has " + num(eval_next_) + " of its " + num(eval_parts_) + " shares", "losses");
  eval_parts_ = eval_next_ = 0;
  return mean_eval_loss();
}

TrainState Trainer::state() const {
  TrainState s = state_meta();
  s.params.assign(model_->params(), model_->params() + model_->num_parameters());
  if (opt_) {
    s.m = opt_->m();
    s.v = opt_->v();
  }
  return s;
}

TrainState Trainer::state_meta() const {
  TrainState s;
  s.source = source_;
  s.base = base_;
  s.model = model_->config();
  s.train = train_;
  s.task = task_;
  s.n_chars = n_chars_;
  s.text_name = text_name_;
  s.text_fingerprint = fingerprint_;
  s.vocab = tokenizer_->chars();
  s.bpe = tokenizer_->bpe();
  s.step = step_;
  s.sampler_state = parts_ > 0 ? sampler_before_ : sampler_.state();  // a begun step is not done
  s.adam_t = opt_ ? opt_->t() : 0;
  s.last_val_loss = last_val_loss_;
  return s;
}

// ---------------------------------------------------------------- fine-tuning a model trained elsewhere

namespace {

// 3942187008 → "3,942,187,008"
std::string grouped(long long v) {
  const std::string d = num(v < 0 ? -v : v);
  std::string c = v < 0 ? "-" : "";
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) c += ',';
    c += d[i];
  }
  return c;
}

// "3,942,187,008 bytes = 3.67 GiB": no parentheses of its own, so it sits inside a message's
std::string bytes_text(int64_t b) {
  char unit[32];
  if (b >= (int64_t(1) << 30)) std::snprintf(unit, sizeof unit, "%.2f GiB", b / double(int64_t(1) << 30));
  else std::snprintf(unit, sizeof unit, "%.1f MiB", b / double(1 << 20));
  return grouped(b) + " bytes = " + unit;
}

}  // namespace

int64_t finetune_memory_bytes(const GPTConfig& model, const TrainConfig& train) {
  return GPT::memory_bytes(model, train.batch_size, context_of(train, model), ModelUse::train);
}

void check_finetune_memory(const GPTConfig& model, const TrainConfig& train, int64_t available, const std::string& where) {
  const int B = train.batch_size, T = context_of(train, model);
  const int64_t need = GPT::memory_bytes(model, B, T, ModelUse::train);
  if (need <= available) return;
  std::string msg = "fine-tuning this model (" + grouped(model.num_parameters()) + " parameters) at batch_size " + num(B) +
                    " × context " + num(T) + " needs " + bytes_text(need) +
                    " (the parameters, their gradients, AdamW's two moments and the activations of " + num(B) + " × " +
                    num(T) + " tokens) but there " + (where.empty() ? "is " : "are ") + bytes_text(available) +
                    (where.empty() ? "" : " " + where) + ": ";
  // the longest context that fits at this batch size (the bytes grow with T)
  int lo = 0, hi = T - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (GPT::memory_bytes(model, B, mid, ModelUse::train) <= available) lo = mid;
    else hi = mid - 1;
  }
  if (lo >= 1)
    throw InputError(msg + "lower context to " + num(lo) + " or less (" +
                         bytes_text(GPT::memory_bytes(model, B, lo, ModelUse::train)) + "), or batch_size",
                     "context");
  const int64_t one = GPT::memory_bytes(model, 1, 1, ModelUse::train);
  if (one <= available)
    throw InputError(msg + "lower batch_size (batch_size 1 × context 1 needs " + bytes_text(one) + ")", "batch_size");
  throw InputError(msg + "the model alone, with its gradients and AdamW's moments, needs " + bytes_text(one) +
                       ", so it cannot be fine-tuned here (it still opens for inference)",
                   "model");
}

void Trainer::finetune(const TrainConfig& train, const DataSpec& data, int64_t available, const std::string& where) {
  train.validate();
  // a run of this project may be fine-tuned too (on another text, with other settings): within its own limit
  if (source_.empty()) available = std::min(available, kMaxModelBytes);
  const GPTConfig& cfg = model_->config();
  const int T = context_of(train, cfg);
  if (tokenizer_->is_ids())
    throw InputError("this model came without its vocabulary (no meta.pkl, no GPT-2 tokenizer files): a text cannot "
                     "be read into its token ids, so it cannot be fine-tuned on one; give the tokenizer files too",
                     "text");
  const std::vector<int> tokens = tokenizer_->encode(data.text, "text");
  const long long n = static_cast<long long>(tokens.size()), need = 2LL * (T + 1);
  if (n < need)
    throw InputError("the text \"" + data.name + "\" is " + num(n) + " tokens long (in this model's tokenizer), " +
                         "but fine-tuning at a context of " + num(T) + " needs at least 2 × (" + num(T) + " + 1) = " +
                         num(need) + ": a window for training and one for validation. Give a longer text or lower context",
                     "text");
  check_finetune_memory(cfg, train, available, where);
  // Nothing has changed yet; from here the run is the fine-tuning one.
  model_->make_trainable(train.batch_size, T);
  if (!source_.empty()) base_ = source_;
  else if (base_.empty())
    base_ = "this playground's run on " + (task_.empty() ? "the text \"" + text_name_ + "\"" : "the " + task_ + " task") +
            ", step " + num(step_);
  train_ = train;
  source_.clear();
  task_.clear();
  n_chars_ = 0;
  text_name_ = data.name;
  fingerprint_ = text_fingerprint(data.text);
  has_data_ = true;
  diverged_ = false;
  divergence_.clear();
  step_ = 0;
  last_val_loss_ = -1.0f;
  parts_ = next_part_ = 0;
  replicas_.clear();
  pool_.reset();
  threads_ = 1;
  sampler_ = BatchSampler(train_.seed);
  setup_data(data.text, cfg);
  opt_ = std::make_unique<AdamW>(model_->tensors(), model_->num_parameters(), train_.adamw());
}

}  // namespace ap
