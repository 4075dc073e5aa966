// gpt_session.cpp — the GPT run behind JSON text (see gpt_session.h).
#include "api/gpt_session.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/model/inspect.h"
#include "core/kernels/kernels.h"
#include "api/checkpoint.h"
#include "api/gpt_json.h"
#include "api/gpt_interp.h"
#include "api/gpt_predict.h"
#include "formats/json.h"
#include "api/spec.h"

namespace ap {

using json::Value;
using namespace spec;

namespace {

constexpr int kMaxTrainCall = 100000;

Value f32_or_null(float f) { return f < 0.0f ? Value() : Value::f32(f); }

Value floats(const std::vector<float>& v) {
  Value a = Value::array();
  for (float f : v) a.push(Value::f32(f));
  return a;
}

Value data_json(const TrainState& s) {
  Value d = data_source_json(s);
  if (!s.task.empty()) {
    const TaskInfo& t = task_info(s.task);
    d.set("description", t.description);
    d.set("example", t.example);
    d.set("attention", t.attention);
    d.set("loss_floor", t.loss_floor);
  }
  return d;
}

}  // namespace

std::string gpt_tasks_json() {
  return guarded([] {
    Value list = Value::array();
    for (const TaskInfo& t : task_infos()) {
      Value& o = list.push(Value::object());
      o.set("name", t.name);
      o.set("description", t.description);
      o.set("example", t.example);
      o.set("attention", t.attention);
      o.set("alphabet", t.alphabet);
      o.set("loss_floor", t.loss_floor);
    }
    Value v = Value::object();
    v.set("tasks", std::move(list));
    return v;
  });
}

std::string gpt_set_kernels(const std::string& tier) {
  return guarded([&] {
    if (tier != "reference" && tier != "fast")
      throw InputError("kernels must be \"reference\" or \"fast\", got \"" + json::excerpt(tier) + "\"", "kernels");
    kernels::set_tier(tier == "fast" ? kernels::Tier::fast : kernels::Tier::reference);
    Value v = Value::object();
    v.set("kernels", kernels::tier_name());
    return v;
  });
}

std::string gpt_memory_json(const std::string& spec_json) {
  return guarded([&] {
    const RunSpec r = read_run_spec(json::parse(spec_json));
    Value v = Value::object();
    v.set("bytes", static_cast<long long>(run_memory_bytes(r.model, r.train, r.data)));
    v.set("limit", static_cast<long long>(kMaxModelBytes));
    return v;
  });
}

GptSession::GptSession() = default;
GptSession::~GptSession() = default;

void GptSession::start(const RunSpec& r) {
  auto t = std::make_unique<Trainer>(r.model, r.train, r.data);
  t->set_threads(threads_);
  predict_.forget();
  trainer_ = std::move(t);
}

std::string GptSession::create(const std::string& spec_json) {
  return guarded([&] {
    start(read_run_spec(json::parse(spec_json)));
    return info_value();
  });
}

std::string GptSession::create_with_text(const std::string& spec_json, const std::string& text) {
  return guarded([&] {
    Value spec = json::parse(spec_json);
    if (spec.is_object()) {  // read_run_spec refuses anything else by name
      if (spec.find("text"))
        throw InputError("the text is given twice: as the spec's \"text\" and beside it", "text");
      spec.set("text", Value(text));
    }
    start(read_run_spec(spec));
    return info_value();
  });
}

std::string GptSession::load(const std::string& checkpoint_bytes, const std::string& text) {
  return guarded([&] {
    TrainState s = load_checkpoint(checkpoint_bytes);
    if (s.model_only() && !text.empty())
      throw InputError("this file holds a model only (" + s.source + "): give the text to finetune instead", "text");
    auto t = s.model_only() ? Trainer::open(std::move(s)) : std::make_unique<Trainer>(s, text);
    t->set_threads(threads_);
    predict_.forget();
    trainer_ = std::move(t);
    share_threads();
    return info_value();
  });
}

std::string GptSession::set_threads(int n) {
  return guarded([&] {
    if (trainer_) trainer_->set_threads(n);
    else ThreadPool::check(n);  // the count's errors, before any run (no thread started)
    threads_ = n;
    share_threads();
    Value v = Value::object();
    v.set("threads", n);
    v.set("cores", hardware_threads());
    return v;
  });
}

void GptSession::share_threads() {
  if (trainer_ && trainer_->model().use() == ModelUse::infer) trainer_->model().set_threads(threads_);
}

std::string GptSession::info() const {
  return guarded([&] { return info_value(); });
}

std::string GptSession::vocab(const std::string& spec_json) const {
  return guarded([&] {
    require_model();
    const Value spec = read_spec(spec_json, {"from", "count"}, "vocab spec");
    const Tokenizer& t = trainer_->tokenizer();
    const long long V = t.is_ids() ? 0 : t.vocab_size();
    const long long from = read_int(spec, "from", 0, 0, V);
    const long long count = read_int(spec, "count", V - from, 0, V - from);
    Value list = Value::array();
    for (long long i = from; i < from + count; ++i) list.push(t.token_text(static_cast<int>(i)));
    Value v = Value::object();
    v.set("from", from);
    v.set("vocab", std::move(list));
    v.set("vocab_size", static_cast<long long>(t.vocab_size()));
    return v;
  });
}

void GptSession::require_model() const {
  if (!trainer_) throw InputError("no model yet: create or load one first", "model");
}

Value GptSession::info_value() const {
  require_model();
  const TrainState s = trainer_->state_meta();  // without the weights
  const GPT& m = trainer_->model();
  Value v = Value::object();
  v.set("config", config_json(m.config()));
  v.set("train", train_config_json(s.train));
  v.set("seed", std::to_string(s.train.seed));
  v.set("data", data_json(s));
  // the characters; empty for token ids (an opened model without its vocabulary) and for GPT-2's
  // BPE (50,257 pieces: ask vocab() once instead)
  Value vocab = Value::array();
  if (!trainer_->tokenizer().is_ids() && !trainer_->tokenizer().bpe() && !trainer_->tokenizer().hf())
    for (int i = 0; i < trainer_->tokenizer().vocab_size(); ++i) vocab.push(trainer_->tokenizer().token_text(i));
  v.set("vocab", std::move(vocab));
  v.set("tokenizer", trainer_->tokenizer().bpe()    ? "gpt2-bpe"
                     : trainer_->tokenizer().hf()   ? "hf-bpe"
                     : trainer_->tokenizer().is_ids() ? "token_ids"
                                                    : "characters");
  v.set("source", s.source);  // where an opened model came from; "" for a run of this project
  if (!s.base.empty()) v.set("base", s.base);  // a fine-tuned run's: where its model came from
  v.set("n_params", static_cast<long long>(m.num_parameters()));
  v.set("step", static_cast<long long>(trainer_->steps_done()));
  v.set("steps", s.train.steps);
  v.set("tokens_per_step", static_cast<long long>(trainer_->tokens_per_step()));
  v.set("val_loss", f32_or_null(trainer_->last_val_loss()));
  v.set("has_data", trainer_->has_data());
  v.set("diverged", trainer_->diverged());
  v.set("divergence", trainer_->divergence_message());
  v.set("kernels", kernels::tier_name());
  return v;
}

std::string GptSession::train(int n) {
  return guarded([&] {
    require_model();
    if (n < 1 || n > kMaxTrainCall)
      throw InputError("train takes 1 to " + std::to_string(kMaxTrainCall) + " steps, got " + std::to_string(n),
                       "steps");
    forget_caches();
    std::vector<float> losses, lrs, norms;
    Value scores = Value::array();  // the run's head_scores_interval (gpt_interp.h)
    for (int i = 0; i < n; ++i) {
      const StepResult r = trainer_->step();
      if (r.diverged) {
        losses.push_back(r.loss);
        break;
      }
      losses.push_back(r.loss);
      lrs.push_back(r.lr);
      norms.push_back(r.grad_norm);
      const int every = trainer_->config().head_scores_interval;
      if (every > 0 && trainer_->steps_done() % every == 0) scores.push(head_scores_at_step(*trainer_));
    }
    Value v = steps_answer(losses, lrs, norms);
    if (trainer_->config().head_scores_interval > 0) v.set("head_scores", std::move(scores));
    return v;
  });
}

void GptSession::forget_caches() { predict_.forget(); }  // the weights change: a cache would be stale

Value GptSession::steps_answer(const std::vector<float>& losses, const std::vector<float>& lrs,
                               const std::vector<float>& norms) const {
  Value v = Value::object();
  v.set("step", static_cast<long long>(trainer_->steps_done()));
  v.set("losses", floats(losses));
  v.set("lrs", floats(lrs));
  v.set("grad_norms", floats(norms));
  v.set("diverged", trainer_->diverged());
  v.set("divergence", trainer_->divergence_message());
  return v;
}

std::string GptSession::evaluate() {
  return guarded([&] {
    require_model();
    Value v = Value::object();
    v.set("step", static_cast<long long>(trainer_->steps_done()));
    v.set("val_loss", Value::f32(trainer_->evaluate()));
    return v;
  });
}

std::string GptSession::save() {
  last_error_.clear();
  try {
    require_model();
    return save_checkpoint(trainer_->state());
  } catch (const std::exception& e) {
    last_error_ = e.what();
  } catch (...) {
    last_error_ = "unknown error";
  }
  return std::string();
}

}  // namespace ap
