// gpt_predict.cpp — the next-token distribution behind JSON (see gpt_predict.h).
#include "api/gpt_predict.h"

#include <algorithm>

#include "core/model/gpt.h"
#include "core/model/inspect.h"
#include "api/gpt_json.h"
#include "api/gpt_session.h"
#include "api/spec.h"

namespace ap {

using json::Value;
using namespace spec;

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
  v.set("kept_mass", Value::f32(d.kept_mass));
  v.set("dropped_mass", Value::f32(d.dropped_mass));
  v.set("entropy", Value::f32(d.entropy));
  v.set("entropy_full", Value::f32(d.entropy_full));
  v.set("max_logit", Value::f32(d.max_logit));
  Value top = Value::array();
  for (const NextTokenEntry& e : d.top) {
    Value& t = top.push(Value::object());
    t.set("id", e.id);
    t.set("text", tok.token_text(e.id));
    t.set("logit", Value::f32(e.logit));
    t.set("p", Value::f32(e.p));
    t.set("p_full", Value::f32(e.p_full));
    t.set("kept", e.kept);
  }
  v.set("top", std::move(top));
  return v;
}

Value draw_json(const NextTokenDraw& d) {
  Value v = Value::object();
  v.set("token", d.token);
  v.set("p", Value::f32(d.p));
  v.set("u", Value::f32(d.u));
  v.set("coin", Value::f32(d.coin));
  v.set("sum", Value::f32(d.sum));
  v.set("from", Value::f32(d.from));
  v.set("to", Value::f32(d.to));
  v.set("kept", d.kept);
  v.set("greedy", d.greedy);
  return v;
}

std::string GptSession::next_token(const std::string& spec_json) {
  return guarded([&] {
    require_model();
    const Value s = json::parse(spec_json);
    reject_unknown_keys(s, {"prompt", "temperature", "top_k", "top_p", "greedy", "show"}, "next_token spec");
    GPT& m = trainer_->model();
    const GPTConfig& c = m.config();
    const CharTokenizer& tok = trainer_->tokenizer();
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

std::string GptSession::surprisal(const std::string& spec_json) {
  return guarded([&] {
    require_model();
    const Value s = json::parse(spec_json);
    reject_unknown_keys(s, {"text", "validation"}, "surprisal spec");
    const bool validation = read_bool(s, "validation", false);
    if (validation == (get(s, "text") != nullptr))
      throw InputError("the surprisal spec needs either a \"text\" or \"validation\": true", "text");
    const CharTokenizer& tok = trainer_->tokenizer();
    float mean = 0.0f;
    std::vector<SurprisalWindow> windows;
    if (validation) {
      windows = validation_surprisal(*trainer_, &mean);
    } else {
      windows = text_surprisal(trainer_->model(), tok.encode(read_string(s, "text", "", kMaxSurprisalText), "text"));
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
    v.set("step", static_cast<long long>(trainer_->steps_done()));
    return v;
  });
}

}  // namespace ap
