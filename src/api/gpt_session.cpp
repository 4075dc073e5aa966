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
constexpr int kDrawShow = 16;  // a generation step lists the 16 most likely tokens it drew from

Value f32_or_null(float f) { return f < 0.0f ? Value() : Value::f32(f); }

Value floats(const std::vector<float>& v) {
  Value a = Value::array();
  for (float f : v) a.push(Value::f32(f));
  return a;
}

SampleOptions read_sample_spec(const Value& s, std::string& prompt) {
  reject_unknown_keys(s, {"prompt", "max_new_tokens", "temperature", "top_k", "top_p", "greedy", "seed"},
                      "sampling spec");
  if (!get(s, "prompt")) throw InputError("the sampling spec needs a \"prompt\"", "prompt");
  prompt = read_string(s, "prompt", "", 1 << 20);
  SampleOptions o;
  static_cast<NextTokenOptions&>(o) = read_next_token_options(s);
  o.max_new_tokens = static_cast<int>(read_int(s, "max_new_tokens", o.max_new_tokens, 0, kMaxNewTokens));
  o.seed = static_cast<uint64_t>(read_int(s, "seed", 1, 0, 1LL << 53));
  return o;
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
  generator_.reset();
  prompt_ids_.clear();
  next_ids_.clear();
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
    generator_.reset();
    prompt_ids_.clear();
    next_ids_.clear();
    trainer_ = std::move(t);
    return info_value();
  });
}

std::string GptSession::set_threads(int n) {
  return guarded([&] {
    if (trainer_) trainer_->set_threads(n);
    else ThreadPool check(n);  // the count's errors, before any run
    threads_ = n;
    Value v = Value::object();
    v.set("threads", n);
    v.set("cores", hardware_threads());
    return v;
  });
}

std::string GptSession::info() const {
  return guarded([&] { return info_value(); });
}

std::string GptSession::vocab(const std::string& spec_json) const {
  return guarded([&] {
    require_model();
    const Value spec = json::parse(spec_json);
    reject_unknown_keys(spec, {"from", "count"}, "vocab spec");
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
  if (!trainer_->tokenizer().is_ids() && !trainer_->tokenizer().bpe())
    for (int i = 0; i < trainer_->tokenizer().vocab_size(); ++i) vocab.push(trainer_->tokenizer().token_text(i));
  v.set("vocab", std::move(vocab));
  v.set("tokenizer", trainer_->tokenizer().bpe() ? "gpt2-bpe" : trainer_->tokenizer().is_ids() ? "token_ids" : "characters");
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

void GptSession::forget_caches() {
  generator_.reset();  // the weights change: a cache would be stale
  prompt_ids_.clear();
  next_ids_.clear();
}

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

std::string GptSession::sample(const std::string& spec_json) {
  return guarded([&] {
    require_model();
    std::string prompt;
    const SampleOptions o = read_sample_spec(json::parse(spec_json), prompt);
    const CharTokenizer& tok = trainer_->tokenizer();
    const std::vector<int> ids = tok.encode(prompt, "prompt");
    generator_.reset();
    const std::vector<int> out = generate(trainer_->model(), ids, o);
    const std::vector<int> fresh(out.begin() + static_cast<std::ptrdiff_t>(ids.size()), out.end());
    Value v = Value::object();
    v.set("text", tok.decode(out));
    v.set("new_text", tok.decode(fresh));
    v.set("tokens", token_labels(tok, out));
    return v;
  });
}

Value GptSession::step_info() {
  GPT& m = trainer_->model();
  const CharTokenizer& tok = trainer_->tokenizer();
  const GPTConfig& c = m.config();
  const int V = c.vocab_size, L = c.n_layer, NH = c.n_head, C = c.n_embd, n = m.cache_length();
  logits_.assign(generator_->logits(), generator_->logits() + V);
  // The same context through a full forward pass: its last row must match the cached logits.
  const std::vector<int> ctx = generator_->context();
  m.forward(ctx.data(), nullptr, 1, static_cast<int>(ctx.size()));
  full_logits_.assign(m.logits() + static_cast<size_t>(n - 1) * V, m.logits() + static_cast<size_t>(n) * V);
  float diff = 0.0f;
  for (int v = 0; v < V; ++v) diff = std::fmax(diff, std::fabs(logits_[static_cast<size_t>(v)] - full_logits_[static_cast<size_t>(v)]));
  cache_att_.clear();
  cache_k_.clear();
  cache_v_.clear();
  for (int l = 0; l < L; ++l) {
    cache_att_.insert(cache_att_.end(), m.cache_attention(l), m.cache_attention(l) + static_cast<size_t>(NH) * n);
    cache_k_.insert(cache_k_.end(), m.cache_keys(l), m.cache_keys(l) + static_cast<size_t>(n) * C);
    cache_v_.insert(cache_v_.end(), m.cache_values(l), m.cache_values(l) + static_cast<size_t>(n) * C);
  }
  Value v = Value::object();
  const int last = generator_->tokens().back();
  v.set("token", last);
  v.set("text", tok.token_text(last));
  v.set("base", generator_->base());
  v.set("cache_length", n);
  v.set("rebuilt", generator_->rebuilt());
  v.set("generated", generator_->generated());
  v.set("tokens", token_labels(tok, ctx));
  v.set("max_abs_diff", Value::f32(diff));
  if (generator_->generated() > 0) {  // what the last token was drawn from, and how
    const NextTokenOptions& o = generator_->options();
    v.set("draw", draw_json(generator_->last_draw()));
    v.set("distribution", distribution_json(next_token_distribution(generator_->last_logits(), o, std::min(kDrawShow, c.vocab_size)), o, tok));
  }
  return v;
}

std::string GptSession::generate_start(const std::string& spec_json) {
  std::string out = guarded([&] {
    require_model();
    std::string prompt;
    const SampleOptions o = read_sample_spec(json::parse(spec_json), prompt);
    const std::vector<int> ids = trainer_->tokenizer().encode(prompt, "prompt");
    generator_.reset();
    generator_ = std::make_unique<Generator>(trainer_->model(), ids, o);
    return Value::object();
  });
  if (out.rfind("{\"ok\":true", 0) != 0) return out;
  return guarded([&] { return step_info(); });
}

std::string GptSession::generate_next() {
  return guarded([&] {
    if (!generator_) throw InputError("start generating first (generate_start)", "generator");
    generator_->next();
    return step_info();
  });
}

std::string GptSession::run_prompt(const std::string& prompt) {
  return guarded([&] {
    require_model();
    const CharTokenizer& tok = trainer_->tokenizer();
    std::vector<int> ids = tok.encode(prompt, "prompt");
    if (ids.empty()) throw InputError("the prompt is empty: give at least one character", "prompt");
    GPT& m = trainer_->model();
    const GPTConfig& c = m.config();
    if (static_cast<int>(ids.size()) > c.block_size)
      ids.erase(ids.begin(), ids.end() - c.block_size);  // the model sees at most block_size
    const int T = static_cast<int>(ids.size());
    m.forward(ids.data(), nullptr, 1, T);
    prompt_ids_ = ids;
    maps_.clear();
    for (int l = 0; l < c.n_layer; ++l)
      maps_.insert(maps_.end(), m.attention_weights(l), m.attention_weights(l) + static_cast<size_t>(c.n_head) * T * T);
    Value v = Value::object();
    v.set("tokens", token_labels(tok, ids));
    v.set("T", T);
    v.set("n_layer", c.n_layer);
    v.set("n_head", c.n_head);
    return v;
  });
}

std::string GptSession::head_spec(int layer, int head) {
  return guarded([&] {
    require_model();
    if (prompt_ids_.empty()) throw InputError("run a prompt first (run_prompt)", "prompt");
    // Again over run_prompt's tokens: another call may have run the model since.
    GPT& m = trainer_->model();
    m.forward(prompt_ids_.data(), nullptr, 1, static_cast<int>(prompt_ids_.size()));
    Value v = Value::object();
    v.set("spec", ap::head_spec(trainer_->model(), layer, head));
    return v;
  });
}

std::string GptSession::attention_maps_json() const {
  return guarded([&] {
    require_model();
    if (prompt_ids_.empty()) throw InputError("run a prompt first (run_prompt)", "prompt");
    const GPTConfig& c = trainer_->model().config();
    const size_t layer_floats = static_cast<size_t>(c.n_head) * prompt_ids_.size() * prompt_ids_.size();
    return ap::attention_maps_json(trainer_->tokenizer(), prompt_ids_, c.n_layer, c.n_head,
                                   [&](int l) { return maps_.data() + static_cast<size_t>(l) * layer_floats; });
  });
}

std::string GptSession::attention_summary() {
  return guarded([&] {
    require_model();
    if (prompt_ids_.empty()) throw InputError("run a prompt first (run_prompt)", "prompt");
    const GPTConfig& c = trainer_->model().config();
    const int T = static_cast<int>(prompt_ids_.size());
    const size_t TT = static_cast<size_t>(T) * T;
    mean_.assign(static_cast<size_t>(c.n_layer) * TT, 0.0f);
    rollout_.assign(mean_.size(), 0.0f);
    head_mean(mean_.data(), maps_.data(), c.n_layer, c.n_head, T);  // out is (L, T, T)
    ap::attention_rollout(rollout_.data(), mean_.data(), c.n_layer, T);  // out is (L, T, T)
    Value v = Value::object();
    v.set("tokens", token_labels(trainer_->tokenizer(), prompt_ids_));
    v.set("T", T);
    v.set("n_layer", c.n_layer);
    Value means = Value::array(), rolls = Value::array();
    for (int l = 0; l < c.n_layer; ++l) {
      means.push(matrix_value(mean_.data() + l * TT, T, T));
      rolls.push(matrix_value(rollout_.data() + l * TT, T, T));
    }
    v.set("head_mean", std::move(means));
    v.set("rollout", std::move(rolls));
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

std::string GptSession::encode(const std::string& text) {
  return guarded([&] {
    require_model();
    const Tokenizer& tok = trainer_->tokenizer();
    const std::vector<int> ids = tok.encode(text, "text");
    Value out = Value::object();
    Value list = Value::array();
    for (int id : ids) list.push(id);
    out.set("ids", std::move(list));
    out.set("tokens", token_labels(tok, ids));
    return out;
  });
}

std::string GptSession::decode(const std::string& ids_json) {
  return guarded([&] {
    require_model();
    const Value v = json::parse(ids_json);
    if (!v.is_array()) throw InputError("ids must be a JSON array of token ids", "ids");
    std::vector<int> ids;
    ids.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      const double x = v[i].is_number() ? v[i].as_number() : -1.0;
      if (!v[i].is_number() || x != std::floor(x) || x < 0 || x > 2147483647.0)
        throw InputError("ids[" + std::to_string(i) + "] is " + json::excerpt(v[i].dump(), 24) +
                             ", not a token id (a whole number ≥ 0)",
                         "ids");
      ids.push_back(static_cast<int>(x));
    }
    const Tokenizer& tok = trainer_->tokenizer();
    Value out = Value::object();
    out.set("text", tok.decode(ids));
    out.set("tokens", token_labels(tok, ids));
    return out;
  });
}

}  // namespace ap
