// gpt_walk.cpp — one position of a prompt walked through the whole model, as JSON: GptSession's
// block_trace and weight_row (declared in gpt_session.h; the calls' JSON is documented there and
// in docs/api.md). The numbers are core/model/block_trace.h's, in the reference tier; this file only
// writes them, with the parameters the page needs to show a step's arithmetic (γ, β and the
// biases, which are small) — a matmul output's terms come one row at a time from weight_row, so a
// GPT-2-sized trace does not carry its weight matrices.
//
// Limits: the keys and values of the visible positions are written only while
// visible · n_embd · n_layer ≤ kMaxWalkKV floats (the page's own models); beyond it "keys" and
// "values" are absent, and a call with "kv_layer": l writes that layer's (the page asks for them
// when a score's or a context's terms are opened). The logits are written as the `show` most
// likely (default 10), with the softmax's max and sum so a probability's arithmetic can be shown.
// "sample" is the next token drawn from the position's logits as generation draws its first one
// (core/model/generate.h first_draw: the same seed, temperature, top-k and top-p give the same token as
// `gpt sample` / generate_start on the prompt cut after this position), with the reshaped
// distribution and the draw's numbers. Its logits are the trace's (reference tier); generation's
// are the fast tier's, equal to them within float rounding, so the two differ only if the draw
// falls within that rounding of a boundary between two tokens.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/model/block_trace.h"
#include "core/model/generate.h"
#include "api/gpt_json.h"
#include "api/gpt_predict.h"
#include "api/gpt_session.h"
#include "api/spec.h"

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

// The spec's "sample" {temperature, top_k, top_p, greedy, seed} (absent: generation's defaults).
SampleOptions read_walk_sample(const Value& s, int vocab_size) {
  SampleOptions o;
  if (const Value* v = get(s, "sample")) {
    if (!v->is_object()) throw InputError("\"sample\" must be an object {temperature, top_k, top_p, greedy, seed}", "sample");
    reject_unknown_keys(*v, {"temperature", "top_k", "top_p", "greedy", "seed"}, "block_trace sample");
    static_cast<NextTokenOptions&>(o) = read_next_token_options(*v);
    o.seed = static_cast<uint64_t>(read_int(*v, "seed", 1, 0, 1LL << 53));
  }
  static_cast<const NextTokenOptions&>(o).validate(vocab_size);
  return o;
}

// {the reshaped distribution (distribution_json), "seed", "draw": draw_json + "text",
//  "cum_from", "cum_to"; "drawn": {id, text, logit, p, p_full, rank}} for the trace's logits
Value sample_json(const std::vector<float>& logits, const SampleOptions& o, int show, const CharTokenizer& tok) {
  NextTokenLogits l;
  l.set(logits.data(), static_cast<int>(logits.size()));
  const NextTokenDraw d = first_draw(l, o);
  const NextTokenDistribution dist = next_token_distribution(l, o, show);
  Value v = distribution_json(dist, o, tok);
  v.set("seed", static_cast<long long>(o.seed));
  Value draw = draw_json(d);
  draw.set("text", tok.token_text(d.token));
  // the drawn token's stretch [from, to) / S of the cumulative probability, which holds u
  draw.set("cum_from", Value::f32(d.sum > 0.0f ? d.from / d.sum : 0.0f));
  draw.set("cum_to", Value::f32(d.sum > 0.0f ? d.to / d.sum : 1.0f));
  v.set("draw", std::move(draw));
  // the drawn token's entry, which may lie past the `show` most likely
  const NextTokenDistribution all = next_token_distribution(l, o, l.rank()[static_cast<size_t>(d.token)] + 1);
  const NextTokenEntry& e = all.top.back();
  Value drawn = Value::object();
  drawn.set("id", e.id);
  drawn.set("text", tok.token_text(e.id));
  drawn.set("logit", Value::f32(e.logit));
  drawn.set("p", Value::f32(e.p));
  drawn.set("p_full", Value::f32(e.p_full));
  drawn.set("rank", l.rank()[static_cast<size_t>(d.token)]);
  v.set("drawn", std::move(drawn));
  return v;
}

Value layer_json(const LayerTrace& t, const BlockParams& b, const GPTConfig& cfg, bool kv) {
  const size_t c = static_cast<size_t>(cfg.n_embd);
  Value v = Value::object();
  v.set("ln_1", layernorm_json(t.ln_1, b.ln_1_w, b.ln_1_b));
  if (!t.q_lin.empty()) {  // qk_norm: c_attn's q and k, each head's 1/rms, the norms' weights
    const size_t hs = static_cast<size_t>(cfg.head_dim());
    v.set("q_lin", floats(t.q_lin));
    v.set("k_lin", floats(t.k_lin));
    v.set("q_rstd", floats(t.q_rstd));
    v.set("k_rstd", floats(t.k_rstd));
    v.set("q_norm_w", floats(b.q_norm_w, hs));
    v.set("k_norm_w", floats(b.k_norm_w, hs));
  }
  if (!t.q_raw.empty()) {  // RoPE: q and k before the turn
    v.set("q_raw", floats(t.q_raw));
    v.set("k_raw", floats(t.k_raw));
  }
  v.set("q", floats(t.q));
  v.set("k", floats(t.k));
  v.set("v", floats(t.v));
  v.set("c_attn_b", floats_or_null(b.c_attn_b, static_cast<size_t>(cfg.qkv_width())));
  if (kv && !t.keys.empty()) {
    v.set("keys", floats(t.keys));
    v.set("values", floats(t.values));
  }
  Value heads = Value::array();
  for (const HeadTrace& h : t.heads) {
    Value& o = heads.push(Value::object());
    o.set("kv_head", h.kv_head);
    if (h.slope != 0.0f) {  // ALiBi
      o.set("slope", Value::f32(h.slope));
      o.set("bias", floats(h.bias));
    }
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
  v.set("c_fc_b", floats_or_null(b.c_fc_b, static_cast<size_t>(cfg.fc_width())));
  if (!t.silu.empty()) v.set("silu", floats(t.silu));  // SwiGLU: silu(gate)
  v.set("act", floats(t.act));
  v.set("mlp_proj", floats(t.mlp_proj));
  v.set("mlp_c_proj_b", floats_or_null(b.mlp_c_proj_b, c));
  v.set("residual3", floats(t.residual3));
  return v;
}

}  // namespace

std::string GptPredict::block_trace(const std::string& spec_json) {
  return guarded([&] {
    s_.require_model();
    const Value s = read_spec(spec_json, {"prompt", "position", "show", "sample", "kv_layer"}, "block_trace spec");
    if (!get(s, "prompt")) throw InputError("the block_trace spec needs a \"prompt\"", "prompt");
    const GPT& m = s_.trainer_->model();
    const GPTConfig& c = m.config();
    const CharTokenizer& tok = s_.trainer_->tokenizer();
    std::vector<int> ids = tok.encode(read_string(s, "prompt", "", 1 << 20), "prompt");
    if (ids.empty()) throw InputError("the prompt is empty: give at least one character", "prompt");
    if (static_cast<int>(ids.size()) > c.block_size) ids.erase(ids.begin(), ids.end() - c.block_size);
    const int T = static_cast<int>(ids.size());
    const int position = static_cast<int>(read_int(s, "position", T - 1, -(1LL << 31), (1LL << 31) - 1));
    const int show = static_cast<int>(std::min<long long>(read_int(s, "show", 10, 1, kMaxModelVocab), c.vocab_size));
    const SampleOptions sample = read_walk_sample(s, c.vocab_size);
    // kv_layer: that layer's keys and values too, past the limit (one layer's: visible × n_embd each)
    const int kv_layer = static_cast<int>(read_int(s, "kv_layer", -1, -1, c.n_layer - 1));
    const BlockTrace tr = ap::block_trace(m, ids.data(), T, position, kv_layer);
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
    v.set("wpe", tr.wpe.empty() ? Value() : floats(tr.wpe));
    v.set("n_kv_head", tr.n_kv_head);
    Value seen = Value::array();
    for (int f : tr.seen) seen.push(f);
    v.set("seen", std::move(seen));
    if (!tr.rope_cos.empty()) {
      v.set("rope_cos", floats(tr.rope_cos));
      v.set("rope_sin", floats(tr.rope_sin));
    }
    v.set("encoded", floats(tr.encoded));
    Value layers = Value::array();
    for (size_t l = 0; l < tr.layers.size(); ++l) layers.push(layer_json(tr.layers[l], m.vectors().h[l], c, kv || static_cast<int>(l) == kv_layer));
    v.set("layers", std::move(layers));
    v.set("ln_f", layernorm_json(tr.ln_f, m.vectors().ln_f_w, m.vectors().ln_f_b));
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
    v.set("sample", sample_json(tr.logits, sample, show, tok));
    return v;
  });
}

std::string GptPredict::weight_row(const std::string& spec_json) {
  return guarded([&] {
    s_.require_model();
    const Value s = read_spec(spec_json, {"weight", "layer", "row"}, "weight_row spec");
    const GPT& m = s_.trainer_->model();
    const GPTConfig& c = m.config();
    const std::string name = read_string(s, "weight", "", 64);
    using M = GPT::Matrix;
    M which = M::head;  // wte, or an untied lm_head
    int layer = 0;
    if (name != "lm_head") {
      layer = static_cast<int>(read_int(s, "layer", -1, 0, c.n_layer - 1));
      if (!get(s, "layer")) throw InputError("the weight " + json::excerpt(name) + " of which layer?", "layer");
      if (name == "c_attn") which = M::c_attn;
      else if (name == "attn.c_proj") which = M::attn_c_proj;
      else if (name == "c_fc") which = M::c_fc;  // SwiGLU: gate | up
      else if (name == "mlp.c_proj") which = M::mlp_c_proj;
      else
        throw InputError("unknown weight \"" + json::excerpt(name) +
                             "\": the weights are c_attn, attn.c_proj, c_fc, mlp.c_proj, lm_head",
                         "weight");
    }
    // the biases are in the flat buffer; a typed matrix gives the one row shown, dequantized
    const BlockParams& p = m.vectors().h[static_cast<size_t>(layer)];
    const float* b = which == M::c_attn ? p.c_attn_b
                   : which == M::attn_c_proj ? p.attn_c_proj_b
                   : which == M::c_fc ? p.c_fc_b
                   : which == M::mlp_c_proj ? p.mlp_c_proj_b : nullptr;
    const int rows = m.matrix_rows(which), cols = m.matrix_cols(which);
    if (!get(s, "row")) throw InputError("the weight_row spec needs a \"row\"", "row");
    const int row = static_cast<int>(read_int(s, "row", 0, 0, rows - 1));
    std::vector<float> w(static_cast<size_t>(cols));
    m.matrix_rows(which, layer, row, 1, w.data());
    Value v = Value::object();
    v.set("weight", name);
    v.set("row", row);
    v.set("w", floats(w));
    v.set("bias", b ? Value::f32(b[row]) : Value());
    return v;
  });
}

}  // namespace ap
