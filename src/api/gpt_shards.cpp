// gpt_shards.cpp — GptShards (gpt_shards.h): a training step split across workers that each hold a
// session (see gpt_shards.h; the step in parts is train.h's). The main session samples the batch
// and owns the run; a worker's session holds only a model of the same config (shard_model) and
// computes one share's gradients with the parameters it is sent. Bytes are float32 or int32
// little-endian (wasm and x86 both are).
#include <cstring>

#include "api/gpt_json.h"
#include "api/gpt_session.h"
#include "api/gpt_shards.h"
#include "formats/json.h"
#include "api/spec.h"

namespace ap {

using json::Value;
using namespace spec;

namespace {

// bytes → count values of 4 bytes each into out (its capacity reused), or InputError naming field.
template <class T>
void read_words(std::vector<T>& out, const std::string& bytes, const char* field) {
  static_assert(sizeof(T) == 4, "float32 or int32");
  if (bytes.size() % 4 != 0)
    throw InputError(std::string(field) + " has " + std::to_string(bytes.size()) +
                         " bytes: 4-byte values need a multiple of 4",
                     field);
  out.resize(bytes.size() / 4);
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
}

const std::vector<int> kNoInts;
const std::vector<float> kNoFloats;

// {loss}: the mean of the per-token losses of the share the model has just run (own_shard,
// mirror_shard: its batch is the share's rows).
static Value share_loss(const GPT& m) {
  double sum = 0.0;
  const int n = m.batch() * m.seq_len();
  for (int i = 0; i < n; ++i) sum += m.losses()[i];
  Value v = Value::object();
  v.set("loss", Value::f32(static_cast<float>(sum / n)));
  return v;
}

// v resized to n values (none below 0; its capacity reused) → its data, for the bindings' views.
template <class T>
T* staged(std::vector<T>& v, int n) {
  v.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return v.data();
}

InputError params_size(const GPT& g, size_t bytes) {
  return InputError("params has " + std::to_string(bytes) + " bytes: the model's " + std::to_string(g.num_parameters()) +
                        " parameters take " + std::to_string(4 * g.num_parameters()),
                    "params");
}

// A share's gradients and per-token losses added to the step under way (in share order).
Value add_share(Trainer& t, const std::vector<float>& grads, const std::vector<float>& losses) {
  t.add_shard(grads.data(), static_cast<int64_t>(grads.size()), losses.data(), static_cast<int64_t>(losses.size()));
  return Value::object();
}

// One share's forward and backward on model g with these parameters (n_params of them) → its
// gradients and per-token losses into grads and losses; {"loss","rows"}.
Value compute_share(GPT& g, const std::vector<float>& params, const std::vector<int>& ids,
                    const std::vector<int>& targets, int batch_rows, std::vector<float>& grads,
                    std::vector<float>& losses) {
  const int T = g.config().block_size;
  std::memcpy(g.params(), params.data(), params.size() * sizeof(float));
  const int64_t n = static_cast<int64_t>(ids.size());
  if (n == 0 || n % T != 0 || static_cast<int64_t>(targets.size()) != n)
    throw InputError("ids and targets must be whole rows of block_size = " + std::to_string(T) +
                         " tokens, as many of each (got " + std::to_string(n) + " and " +
                         std::to_string(targets.size()) + ")",
                     "ids");
  const int rows = static_cast<int>(n / T);
  if (batch_rows < rows || batch_rows > kMaxBatch)
    throw InputError("batch_rows is " + std::to_string(batch_rows) + ": it must be between this share's " +
                         std::to_string(rows) + " rows and " + std::to_string(kMaxBatch),
                     "batch_rows");
  const float loss = ap::shard_gradients(g, ids.data(), targets.data(), rows, T, batch_rows);
  grads.assign(g.grads(), g.grads() + g.num_parameters());
  losses.assign(g.losses(), g.losses() + n);
  Value v = Value::object();
  v.set("loss", Value::f32(loss));
  v.set("rows", rows);
  return v;
}

}  // namespace

const std::vector<int>& GptShards::batch_ids() const { return s_.trainer_ ? s_.trainer_->batch_ids() : kNoInts; }
const std::vector<int>& GptShards::batch_targets() const {
  return s_.trainer_ ? s_.trainer_->batch_targets() : kNoInts;
}

std::string GptShards::step_begin(int n) {
  return guarded([&] {
    s_.require_model();
    s_.trainer_->begin_step(n);
    const GPT& m = s_.trainer_->model();
    step_params_.assign(m.params(), m.params() + m.num_parameters());
    const int B = s_.trainer_->config().batch_size;
    Value rows = Value::array();
    for (int k = 0; k <= n; ++k) rows.push(static_cast<long long>(shard_row(B, n, k)));
    Value v = Value::object();
    v.set("step", static_cast<long long>(s_.trainer_->steps_done() + 1));
    v.set("shares", n);
    v.set("T", m.config().block_size);
    v.set("rows", std::move(rows));
    return v;
  });
}

std::string GptShards::step_own() {
  return guarded([&] {
    s_.require_model();
    s_.forget_caches();
    s_.trainer_->own_shard();
    return share_loss(s_.trainer_->model());
  });
}

std::string GptShards::step_share(int k) {
  return guarded([&] {
    s_.require_model();
    s_.forget_caches();
    s_.trainer_->mirror_shard(k);
    return share_loss(s_.trainer_->model());
  });
}

void GptShards::step_grads(const float*& p, size_t& n) {
  p = s_.trainer_ ? s_.trainer_->model().grads() : nullptr;
  n = s_.trainer_ ? static_cast<size_t>(s_.trainer_->model().num_parameters()) : 0;
}

const std::vector<float>& GptShards::step_share_grads() const {
  return s_.trainer_ ? s_.trainer_->mirror_grads() : kNoFloats;
}

const std::vector<float>& GptShards::step_losses() const { return s_.trainer_ ? s_.trainer_->batch_losses() : kNoFloats; }

std::string GptShards::step_add(const std::string& grads, const std::string& losses) {
  return guarded([&] {
    s_.require_model();
    read_words(shard_in_, grads, "gradients");
    read_words(stage_losses_, losses, "losses");
    return add_share(*s_.trainer_, shard_in_, stage_losses_);
  });
}

std::string GptShards::step_add_staged() {
  return guarded([&] {
    s_.require_model();
    return add_share(*s_.trainer_, shard_in_, stage_losses_);
  });
}

std::string GptShards::step_finish() {
  return guarded([&] {
    s_.require_model();
    s_.forget_caches();
    const StepResult r = s_.trainer_->finish_step();
    std::vector<float> lrs, norms;
    if (!r.diverged) {
      lrs.push_back(r.lr);
      norms.push_back(r.grad_norm);
    }
    return s_.steps_answer({r.loss}, lrs, norms);
  });
}

std::string GptShards::shard_model(const std::string& config_json) {
  return guarded([&] {
    const GPTConfig c = read_config(json::parse(config_json), "config");
    shard_ = std::make_unique<GPT>(c);
    Value v = Value::object();
    v.set("n_params", static_cast<long long>(shard_->num_parameters()));
    return v;
  });
}

std::string GptShards::shard_gradients(const std::string& params, const std::string& ids, const std::string& targets,
                                        int batch_rows) {
  return guarded([&] {
    if (!shard_) throw InputError("no shard model yet: shard_model(config) first", "model");
    if (static_cast<int64_t>(params.size()) != 4 * shard_->num_parameters()) throw params_size(*shard_, params.size());
    read_words(shard_in_, params, "params");
    read_words(shard_ids_, ids, "ids");
    read_words(shard_targets_, targets, "targets");
    return compute_share(*shard_, shard_in_, shard_ids_, shard_targets_, batch_rows, shard_grads_, shard_losses_);
  });
}

std::string GptShards::shard_gradients_staged(int batch_rows) {
  return guarded([&] {
    if (!shard_) throw InputError("no shard model yet: shard_model(config) first", "model");
    if (static_cast<int64_t>(shard_in_.size()) != shard_->num_parameters()) throw params_size(*shard_, 4 * shard_in_.size());
    return compute_share(*shard_, shard_in_, shard_ids_, shard_targets_, batch_rows, shard_grads_, shard_losses_);
  });
}

std::string GptShards::eval_begin(int n) {
  return guarded([&] {
    s_.require_model();
    n = s_.trainer_->begin_evaluate(n);
    const GPT& m = s_.trainer_->model();
    step_params_.assign(m.params(), m.params() + m.num_parameters());
    const int nb = s_.trainer_->eval_batches();
    Value bounds = Value::array();
    for (int k = 0; k <= n; ++k) bounds.push(static_cast<long long>(shard_row(nb, n, k)));
    Value v = Value::object();
    v.set("step", static_cast<long long>(s_.trainer_->steps_done()));
    v.set("shares", n);
    v.set("batches", nb);
    v.set("B", s_.trainer_->config().batch_size);
    v.set("T", s_.trainer_->context());
    v.set("bounds", std::move(bounds));
    return v;
  });
}

std::string GptShards::eval_own() {
  return guarded([&] {
    s_.require_model();
    s_.trainer_->own_evaluate();
    return Value::object();
  });
}

std::string GptShards::eval_add_staged() {
  return guarded([&] {
    s_.require_model();
    s_.trainer_->add_evaluate(stage_losses_.data(), static_cast<int64_t>(stage_losses_.size()));
    return Value::object();
  });
}

std::string GptShards::eval_finish() {
  return guarded([&] {
    s_.require_model();
    const float loss = s_.trainer_->finish_evaluate();
    Value v = Value::object();
    v.set("step", static_cast<long long>(s_.trainer_->steps_done()));
    v.set("val_loss", Value::f32(loss));
    return v;
  });
}

std::string GptShards::shard_evaluate_staged(int B, int T) {
  return guarded([&] {
    if (!shard_) throw InputError("no shard model yet: shard_model(config) first", "model");
    if (static_cast<int64_t>(shard_in_.size()) != shard_->num_parameters()) throw params_size(*shard_, 4 * shard_in_.size());
    if (B < 1 || B > kMaxBatch)
      throw InputError("B is " + std::to_string(B) + ": it must be between 1 and " + std::to_string(kMaxBatch), "B");
    if (T < 1 || T > shard_->config().block_size)
      throw InputError("T is " + std::to_string(T) + ": it must be between 1 and block_size = " +
                           std::to_string(shard_->config().block_size),
                       "T");
    const int64_t BT = int64_t(B) * T, n = static_cast<int64_t>(shard_ids_.size());
    if (n == 0 || n % BT != 0 || static_cast<int64_t>(shard_targets_.size()) != n)
      throw InputError("ids and targets must be whole batches of " + std::to_string(B) + " rows of " + std::to_string(T) +
                           " tokens, as many of each (got " + std::to_string(n) + " and " +
                           std::to_string(shard_targets_.size()) + ")",
                       "ids");
    std::memcpy(shard_->params(), shard_in_.data(), shard_in_.size() * sizeof(float));
    const int count = static_cast<int>(n / BT);
    shard_losses_.resize(static_cast<size_t>(count));
    ap::validation_losses(*shard_, shard_losses_.data(), shard_ids_.data(), shard_targets_.data(), count, B, T);
    Value v = Value::object();
    v.set("batches", count);
    return v;
  });
}

const std::vector<int>& GptShards::eval_ids() const { return s_.trainer_ ? s_.trainer_->eval_ids() : kNoInts; }
const std::vector<int>& GptShards::eval_targets() const { return s_.trainer_ ? s_.trainer_->eval_targets() : kNoInts; }

float* GptShards::stage_floats(int n) { return staged(shard_in_, n); }
float* GptShards::stage_losses(int n) { return staged(stage_losses_, n); }
int* GptShards::stage_ids(int n) { return staged(shard_ids_, n); }
int* GptShards::stage_targets(int n) { return staged(shard_targets_, n); }

}  // namespace ap
