// gpt_walk.cpp — one position of a prompt walked through the whole model, as JSON: GptSession's
// block_trace and weight_row (declared in gpt_session.h; the calls' JSON is documented there and
// in docs/api.md). The numbers are core/block_trace.h's, in the reference tier; this file only
// writes them, with the parameters the page needs to show a step's arithmetic (γ, β and the
// biases, which are small) — a matmul output's terms come one row at a time from weight_row, so a
// GPT-2-sized trace does not carry its weight matrices.
//
// Limits: the keys and values of the visible positions are written only while
// visible · n_embd · n_layer ≤ kMaxWalkKV floats (the page's own models); beyond it "keys" and
// "values" are absent (the stepper link has them). The logits are written as the `show` most
// likely (default 10), with the softmax's max and sum so a probability's arithmetic can be shown.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "../core/block_trace.h"
#include "gpt_json.h"
#include "gpt_session.h"
#include "spec.h"

namespace ap {

using json::Value;
using namespace spec;

namespace {

constexpr long long kMaxWalkKV = 1 << 16;

Value floats(const float* p, size_t n) {
  Value a = Value::array();
  for (size_t i = 0; i < n; ++i) a.push(Value::f32(p[i]));
  return a;
}
Value floats(const std::vector<float>& v) { return floats(v.data(), v.size()); }
Value floats_or_null(const float* p, size_t n) { return p ? floats(p, n) : Value(); }

// {"mean","var","rstd","xhat","out","gamma","beta"} (beta null without biases)
Value layernorm_json(const LayerNormTrace& t, const float* w, const float* b) {
  Value v = Value::object();
  v.set("mean", Value::f32(t.mean));
  v.set("var", Value::f32(t.var));
  v.set("rstd", Value::f32(t.rstd));
  v.set("xhat", floats(t.xhat));
  v.set("out", floats(t.out));
  v.set("gamma", floats(w, t.out.size()));
  v.set("beta", floats_or_null(b, t.out.size()));
  return v;
}

Value layer_json(const LayerTrace& t, const BlockParams& b, int C, bool kv) {
  const size_t c = static_cast<size_t>(C);
  Value v = Value::object();
  v.set("ln_1", layernorm_json(t.ln_1, b.ln_1_w, b.ln_1_b));
  v.set("q", floats(t.q));
  v.set("k", floats(t.k));
  v.set("v", floats(t.v));
  v.set("c_attn_b", floats_or_null(b.c_attn_b, 3 * c));
  if (kv && !t.keys.empty()) {
    v.set("keys", floats(t.keys));
    v.set("values", floats(t.values));
  }
  Value heads = Value::array();
  for (const HeadTrace& h : t.heads) {
    Value& o = heads.push(Value::object());
    o.set("dots", floats(h.dots));
    o.set("scores", floats(h.scores));
    o.set("weights", floats(h.weights));
    o.set("context", floats(h.context));
  }
  v.set("heads", std::move(heads));
  v.set("atty", floats(t.atty));
  v.set("attn_proj", floats(t.attn_proj));
  v.set("attn_c_proj_b", floats_or_null(b.attn_c_proj_b, c));
  v.set("residual2", floats(t.residual2));
  v.set("ln_2", layernorm_json(t.ln_2, b.ln_2_w, b.ln_2_b));
  v.set("fc", floats(t.fc));
  v.set("c_fc_b", floats_or_null(b.c_fc_b, 4 * c));
  v.set("act", floats(t.act));
  v.set("mlp_proj", floats(t.mlp_proj));
  v.set("mlp_c_proj_b", floats_or_null(b.mlp_c_proj_b, c));
  v.set("residual3", floats(t.residual3));
  return v;
}

}  // namespace

std::string GptSession::block_trace(const std::string& spec_json) {
  return guarded([&] {
    require_model();
    const Value s = json::parse(spec_json);
    reject_unknown_keys(s, {"prompt", "position", "show"}, "block_trace spec");
    if (!get(s, "prompt")) throw InputError("the block_trace spec needs a \"prompt\"", "prompt");
    const GPT& m = trainer_->model();
    const GPTConfig& c = m.config();
    const CharTokenizer& tok = trainer_->tokenizer();
    std::vector<int> ids = tok.encode(read_string(s, "prompt", "", 1 << 20), "prompt");
    if (ids.empty()) throw InputError("the prompt is empty: give at least one character", "prompt");
    if (static_cast<int>(ids.size()) > c.block_size) ids.erase(ids.begin(), ids.end() - c.block_size);
    const int T = static_cast<int>(ids.size());
    const int position = static_cast<int>(read_int(s, "position", T - 1, -(1LL << 31), (1LL << 31) - 1));
    const int show = static_cast<int>(std::min<long long>(read_int(s, "show", 10, 1, kMaxModelVocab), c.vocab_size));
    const BlockTrace tr = ap::block_trace(m, ids.data(), T, position);
    const bool kv = static_cast<long long>(tr.visible) * c.n_embd * c.n_layer <= kMaxWalkKV;

    Value v = Value::object();
    v.set("tokens", token_labels(tok, ids));
    v.set("T", T);
    v.set("position", tr.position);
    v.set("token", tr.token);
    v.set("visible", tr.visible);
    v.set("scale", Value::f32(tr.scale));
    v.set("config", config_json(c));
    v.set("activation", activation_name(tr.math.activation));
    v.set("ln_eps", Value::f32(tr.math.ln_eps));
    v.set("wte", floats(tr.wte));
    v.set("wpe", floats(tr.wpe));
    v.set("encoded", floats(tr.encoded));
    Value layers = Value::array();
    for (size_t l = 0; l < tr.layers.size(); ++l) layers.push(layer_json(tr.layers[l], m.p().h[l], c.n_embd, kv));
    v.set("layers", std::move(layers));
    v.set("ln_f", layernorm_json(tr.ln_f, m.p().ln_f_w, m.p().ln_f_b));
    // the logits' most likely `show`, and the softmax's max and Σ exp(z − max) in its own order
    std::vector<int> order(static_cast<size_t>(c.vocab_size));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + show, order.end(), [&](int a, int b) {
      const float la = tr.logits[static_cast<size_t>(a)], lb = tr.logits[static_cast<size_t>(b)];
      return la > lb || (la == lb && a < b);
    });
    Value top = Value::array();
    for (int r = 0; r < show; ++r) {
      const int id = order[static_cast<size_t>(r)];
      Value& o = top.push(Value::object());
      o.set("id", id);
      o.set("text", tok.token_text(id));
      o.set("logit", Value::f32(tr.logits[static_cast<size_t>(id)]));
      o.set("p", Value::f32(tr.probs[static_cast<size_t>(id)]));
    }
    v.set("top", std::move(top));
    const float mx = *std::max_element(tr.logits.begin(), tr.logits.end());
    float sum = 0.0f;
    for (float z : tr.logits) sum += std::exp(z - mx);
    v.set("max_logit", Value::f32(mx));
    v.set("sum_exp", Value::f32(sum));
    v.set("vocab_size", c.vocab_size);
    return v;
  });
}

std::string GptSession::weight_row(const std::string& spec_json) {
  return guarded([&] {
    require_model();
    const Value s = json::parse(spec_json);
    reject_unknown_keys(s, {"weight", "layer", "row"}, "weight_row spec");
    const GPTConfig& c = trainer_->model().config();
    const GPTParams& w = trainer_->model().p();
    const std::string name = read_string(s, "weight", "", 64);
    const int C = c.n_embd;
    const float* W = nullptr;
    const float* b = nullptr;
    int rows = 0, cols = C;
    if (name == "lm_head") {
      W = w.wte;
      rows = c.vocab_size;
    } else {
      const int layer = static_cast<int>(read_int(s, "layer", -1, 0, c.n_layer - 1));
      if (!get(s, "layer")) throw InputError("the weight " + json::excerpt(name) + " of which layer?", "layer");
      const BlockParams& p = w.h[static_cast<size_t>(layer)];
      if (name == "c_attn") { W = p.c_attn_w; b = p.c_attn_b; rows = 3 * C; }
      else if (name == "attn.c_proj") { W = p.attn_c_proj_w; b = p.attn_c_proj_b; rows = C; }
      else if (name == "c_fc") { W = p.c_fc_w; b = p.c_fc_b; rows = 4 * C; }
      else if (name == "mlp.c_proj") { W = p.mlp_c_proj_w; b = p.mlp_c_proj_b; rows = C; cols = 4 * C; }
      else
        throw InputError("unknown weight \"" + json::excerpt(name) +
                             "\": the weights are c_attn, attn.c_proj, c_fc, mlp.c_proj, lm_head",
                         "weight");
    }
    if (!get(s, "row")) throw InputError("the weight_row spec needs a \"row\"", "row");
    const int row = static_cast<int>(read_int(s, "row", 0, 0, rows - 1));
    Value v = Value::object();
    v.set("weight", name);
    v.set("row", row);
    v.set("w", floats(W + static_cast<size_t>(row) * static_cast<size_t>(cols), static_cast<size_t>(cols)));
    v.set("bias", b ? Value::f32(b[row]) : Value());
    return v;
  });
}

}  // namespace ap
