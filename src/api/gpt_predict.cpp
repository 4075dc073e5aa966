// gpt_predict.cpp — the session's predicting and inspecting part behind JSON (see gpt_predict.h):
// sampling, generation through the KV cache, a prompt's attention maps, the next-token
// distribution, the surprisal, the tokenizer; the block walk is in gpt_walk.cpp.
#include "api/gpt_predict.h"

#include <algorithm>
#include <cmath>

#include "core/model/gpt.h"
#include "core/model/inspect.h"
#include "api/gpt_json.h"
#include "api/gpt_session.h"
#include "api/spec.h"

namespace ap {

using json::Value;
using namespace spec;

namespace {

constexpr int kDrawShow = 16;  // a generation step lists the 16 most likely tokens it drew from

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

}  // namespace

NextTokenOptions read_next_token_options(const Value& s) {
  NextTokenOptions o;
  o.temperature = read_float(s, "temperature", o.temperature, 1e-6, 100.0);
  o.top_k = static_cast<int>(read_int(s, "top_k", 0, 0, kMaxModelVocab));
  o.top_p = read_float(s, "top_p", o.top_p, 0.0, 1.0);
  o.greedy = read_bool(s, "greedy", false);
  return o;
}

Value distribution_json(const NextTokenDistribution& d, const NextTokenOptions& o, const CharTokenizer& tok) {
  Value v = Value::object();
  v.set("temperature", Value::f32(o.temperature));
  v.set("top_k", o.top_k);
  v.set("top_p", Value::f32(o.top_p));
  v.set("greedy", o.greedy);
  v.set("kept", d.kept);
  set_f32(v, {{"kept_mass", d.kept_mass},
              {"dropped_mass", d.dropped_mass},
              {"entropy", d.entropy},
              {"entropy_full", d.entropy_full},
              {"max_logit", d.max_logit}});
  Value top = Value::array();
  for (const NextTokenEntry& e : d.top) {
    Value& t = top.push(Value::object());
    t.set("id", e.id);
    t.set("text", tok.token_text(e.id));
    set_f32(t, {{"logit", e.logit}, {"p", e.p}, {"p_full", e.p_full}});
    t.set("kept", e.kept);
  }
  v.set("top", std::move(top));
  return v;
}

Value draw_json(const NextTokenDraw& d) {
  Value v = Value::object();
  v.set("token", d.token);
  set_f32(v, {{"p", d.p}, {"u", d.u}, {"coin", d.coin}, {"sum", d.sum}, {"from", d.from}, {"to", d.to}});
  v.set("kept", d.kept);
  v.set("greedy", d.greedy);
  return v;
}

std::string GptPredict::next_token(const std::string& spec_json) {
  return guarded([&] {
    s_.require_model();
    const Value s = read_spec(spec_json, {"prompt", "temperature", "top_k", "top_p", "greedy", "show"},
                              "next_token spec");
    GPT& m = s_.trainer_->model();
    const GPTConfig& c = m.config();
    const CharTokenizer& tok = s_.trainer_->tokenizer();
    const NextTokenOptions o = read_next_token_options(s);
    o.validate(c.vocab_size);
    const int show = static_cast<int>(read_int(s, "show", 10, 1, kMaxModelVocab));
    if (get(s, "prompt")) {
      std::vector<int> ids = tok.encode(read_string(s, "prompt", "", 1 << 20), "prompt");
      if (ids.empty()) throw InputError("the prompt is empty: give at least one character", "prompt");
      if (static_cast<int>(ids.size()) > c.block_size) ids.erase(ids.begin(), ids.end() - c.block_size);
      const int T = static_cast<int>(ids.size());
      next_ids_.clear();
      m.forward(ids.data(), nullptr, 1, T);
      next_logits_.set(m.logits() + static_cast<size_t>(T - 1) * c.vocab_size, c.vocab_size);  // throws if diverged
      next_ids_ = ids;
    } else if (next_ids_.empty()) {
      throw InputError("give a prompt first: the next token of which text?", "prompt");
    }
    const NextTokenDistribution d = next_token_distribution(next_logits_, o, std::min(show, c.vocab_size));
    Value v = distribution_json(d, o, tok);
    v.set("tokens", token_labels(tok, next_ids_));
    v.set("vocab_size", c.vocab_size);
    return v;
  });
}

std::string GptPredict::surprisal(const std::string& spec_json) {
  return guarded([&] {
    s_.require_model();
    const Value s = read_spec(spec_json, {"text", "validation"}, "surprisal spec");
    const bool validation = read_bool(s, "validation", false);
    if (validation == (get(s, "text") != nullptr))
      throw InputError("the surprisal spec needs either a \"text\" or \"validation\": true", "text");
    const CharTokenizer& tok = s_.trainer_->tokenizer();
    float mean = 0.0f;
    std::vector<SurprisalWindow> windows;
    if (validation) {
      windows = validation_surprisal(*s_.trainer_, &mean);
    } else {
      windows = text_surprisal(s_.trainer_->model(), tok.encode(read_string(s, "text", "", kMaxSurprisalText), "text"));
      mean = surprisal_mean(windows);
    }
    Value list = Value::array();
    long long count = 0;
    for (const SurprisalWindow& w : windows) {
      Value& o = list.push(Value::object());
      o.set("offset", static_cast<long long>(w.offset));
      o.set("tokens", token_labels(tok, w.tokens));
      Value losses = Value::array();
      for (float l : w.losses) losses.push(Value::f32(l));
      o.set("losses", std::move(losses));
      o.set("mean", Value::f32(w.mean));
      count += static_cast<long long>(w.losses.size());
    }
    Value v = Value::object();
    v.set("windows", std::move(list));
    v.set("count", count);
    v.set("mean", Value::f32(mean));
    v.set("step", static_cast<long long>(s_.trainer_->steps_done()));
    return v;
  });
}

void GptPredict::forget() {
  generator_.reset();
  prompt_ids_.clear();
  next_ids_.clear();
  kept_patch_.reset();
}

std::string GptPredict::sample(const std::string& spec_json) {
  return guarded([&] {
    s_.require_model();
    std::string prompt;
    const SampleOptions o = read_sample_spec(json::parse(spec_json), prompt);
    const CharTokenizer& tok = s_.trainer_->tokenizer();
    const std::vector<int> ids = tok.encode(prompt, "prompt");
    generator_.reset();
    const std::vector<int> out = generate(s_.trainer_->model(), ids, o);
    const std::vector<int> fresh(out.begin() + static_cast<std::ptrdiff_t>(ids.size()), out.end());
    Value v = Value::object();
    v.set("text", tok.decode(out));
    v.set("new_text", tok.decode(fresh));
    v.set("tokens", token_labels(tok, out));
    return v;
  });
}

Value GptPredict::step_info() {
  GPT& m = s_.trainer_->model();
  const CharTokenizer& tok = s_.trainer_->tokenizer();
  const GPTConfig& c = m.config();
  const int V = c.vocab_size, L = c.n_layer, NH = c.n_head, n = m.cache_length();
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
    // rows of the key/value heads: C, or n_kv_head·head_dim with grouped-query attention
    const size_t KC = static_cast<size_t>(c.kv_head()) * c.head_dim();
    cache_k_.insert(cache_k_.end(), m.cache_keys(l), m.cache_keys(l) + static_cast<size_t>(n) * KC);
    cache_v_.insert(cache_v_.end(), m.cache_values(l), m.cache_values(l) + static_cast<size_t>(n) * KC);
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

std::string GptPredict::generate_start(const std::string& spec_json) {
  std::string out = guarded([&] {
    s_.require_model();
    std::string prompt;
    const SampleOptions o = read_sample_spec(json::parse(spec_json), prompt);
    const std::vector<int> ids = s_.trainer_->tokenizer().encode(prompt, "prompt");
    generator_.reset();
    generator_ = std::make_unique<Generator>(s_.trainer_->model(), ids, o);
    return Value::object();
  });
  if (out.rfind("{\"ok\":true", 0) != 0) return out;
  return guarded([&] { return step_info(); });
}

std::string GptPredict::generate_next() {
  return guarded([&] {
    if (!generator_) throw InputError("start generating first (generate_start)", "generator");
    generator_->next();
    return step_info();
  });
}

std::string GptPredict::run_prompt(const std::string& prompt) {
  return guarded([&] {
    s_.require_model();
    const CharTokenizer& tok = s_.trainer_->tokenizer();
    std::vector<int> ids = tok.encode(prompt, "prompt");
    if (ids.empty()) throw InputError("the prompt is empty: give at least one character", "prompt");
    GPT& m = s_.trainer_->model();
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

std::string GptPredict::head_spec(int layer, int head) {
  return guarded([&] {
    s_.require_model();
    if (prompt_ids_.empty()) throw InputError("run a prompt first (run_prompt)", "prompt");
    // Again over run_prompt's tokens: another call may have run the model since.
    GPT& m = s_.trainer_->model();
    m.forward(prompt_ids_.data(), nullptr, 1, static_cast<int>(prompt_ids_.size()));
    Value v = Value::object();
    v.set("spec", ap::head_spec(s_.trainer_->model(), layer, head));
    return v;
  });
}

std::string GptPredict::attention_maps_json() const {
  return guarded([&] {
    s_.require_model();
    if (prompt_ids_.empty()) throw InputError("run a prompt first (run_prompt)", "prompt");
    const GPTConfig& c = s_.trainer_->model().config();
    const size_t layer_floats = static_cast<size_t>(c.n_head) * prompt_ids_.size() * prompt_ids_.size();
    return ap::attention_maps_json(s_.trainer_->tokenizer(), prompt_ids_, c.n_layer, c.n_head,
                                   [&](int l) { return maps_.data() + static_cast<size_t>(l) * layer_floats; });
  });
}

std::string GptPredict::attention_summary() {
  return guarded([&] {
    s_.require_model();
    if (prompt_ids_.empty()) throw InputError("run a prompt first (run_prompt)", "prompt");
    const GPTConfig& c = s_.trainer_->model().config();
    const int T = static_cast<int>(prompt_ids_.size());
    const size_t TT = static_cast<size_t>(T) * T;
    mean_.assign(static_cast<size_t>(c.n_layer) * TT, 0.0f);
    rollout_.assign(mean_.size(), 0.0f);
    head_mean(mean_.data(), maps_.data(), c.n_layer, c.n_head, T);  // out is (L, T, T)
    ap::attention_rollout(rollout_.data(), mean_.data(), c.n_layer, T);  // out is (L, T, T)
    Value v = Value::object();
    v.set("tokens", token_labels(s_.trainer_->tokenizer(), prompt_ids_));
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

std::string GptPredict::encode(const std::string& text) {
  return guarded([&] {
    s_.require_model();
    const Tokenizer& tok = s_.trainer_->tokenizer();
    const std::vector<int> ids = tok.encode(text, "text");
    Value out = Value::object();
    Value list = Value::array();
    for (int id : ids) list.push(id);
    out.set("ids", std::move(list));
    out.set("tokens", token_labels(tok, ids));
    return out;
  });
}

std::string GptPredict::decode(const std::string& ids_json) {
  return guarded([&] {
    s_.require_model();
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
    const Tokenizer& tok = s_.trainer_->tokenizer();
    Value out = Value::object();
    out.set("text", tok.decode(ids));
    out.set("tokens", token_labels(tok, ids));
    return out;
  });
}

}  // namespace ap
