// gpt_interp.cpp — the interpretability tools behind JSON (see gpt_interp.h).
#include "api/gpt_interp.h"

#include <memory>
#include <vector>

#include "core/interp/interp.h"
#include "api/gpt_json.h"
#include "api/gpt_session.h"
#include "api/spec.h"

namespace ap {

using json::Value;
using namespace spec;

namespace {

constexpr size_t kMaxPrompt = 1 << 16;

// What the tools read: the model and its tokenizer.
struct Model {
  const GPT& m;
  const CharTokenizer& tok;
  const GPT& model() const { return m; }
  const CharTokenizer& tokenizer() const { return tok; }
};

// A prompt's ids (its last block_size tokens).
std::vector<int> prompt_ids(const Model& t, const Value& spec, const char* key) {
  if (!get(spec, key)) throw InputError(std::string("give a \"") + key + "\" to run", key);
  std::vector<int> ids = t.tokenizer().encode(read_string(spec, key, "", kMaxPrompt), key);
  if (ids.empty()) throw InputError(std::string("the ") + key + " is empty: give at least one character", key);
  const int S = t.model().config().block_size;
  if (static_cast<int>(ids.size()) > S) ids.erase(ids.begin(), ids.end() - S);
  return ids;
}

// A token: an id, or a text that is exactly one token; −1 when absent.
int token_of(const Model& t, const Value& spec, const char* key) {
  const Value* v = get(spec, key);
  if (!v) return -1;
  const int V = t.model().config().vocab_size;
  if (v->is_number()) return static_cast<int>(read_int(spec, key, -1, 0, V - 1));
  const std::vector<int> ids = t.tokenizer().encode(read_string(spec, key, "", 1024), key);
  if (ids.size() != 1)
    throw InputError(std::string(key) + " is \"" + json::excerpt(v->as_string()) + "\", which is " +
                         std::to_string(ids.size()) + " tokens: give one token (or its id)",
                     key);
  return ids[0];
}

interp::Metric metric_of(const Model& t, const Value& spec) {
  interp::Metric m;
  m.token = token_of(t, spec, "token");
  m.other = token_of(t, spec, "other");
  m.position = static_cast<int>(read_int(spec, "position", -1, -1, kMaxBlockSize));
  return m;
}

Value floats(const float* x, size_t n) {
  Value a = Value::array();
  for (size_t i = 0; i < n; ++i) a.push(Value::f32(x[i]));
  return a;
}
Value floats(const std::vector<float>& x) { return floats(x.data(), x.size()); }
// rows × cols of x as nested arrays
Value grid(const std::vector<float>& x, size_t rows, size_t cols) {
  Value a = Value::array();
  for (size_t r = 0; r < rows; ++r) a.push(floats(x.data() + r * cols, cols));
  return a;
}

Value token_json(const Model& t, int id) { return id < 0 ? Value(nullptr) : Value(t.tokenizer().token_text(id)); }

std::string interp_lens(const Model& t, const std::string& spec_json) {
  return guarded([&] {
    const Value spec = read_spec(spec_json, {"prompt", "top_k", "target", "mid"}, "lens spec");
    const std::vector<int> ids = prompt_ids(t, spec, "prompt");
    interp::LensOptions o;
    o.top_k = static_cast<int>(read_int(spec, "top_k", 5, 1, 100));
    o.target = token_of(t, spec, "target");
    o.mid = read_bool(spec, "mid", true);
    const interp::Lens lens = interp::logit_lens(t.model(), ids, o);
    const size_t T = size_t(lens.T), k = size_t(lens.k), P = lens.points.size();
    Value top = Value::array();
    for (size_t p = 0; p < P; ++p) {
      Value& rows = top.push(Value::array());
      for (size_t i = 0; i < T; ++i) {
        Value& row = rows.push(Value::array());
        for (size_t j = 0; j < k; ++j) {
          const size_t at = (p * T + i) * k + j;
          Value& e = row.push(Value::object());
          e.set("id", lens.top_ids[at]);
          e.set("text", t.tokenizer().token_text(lens.top_ids[at]));
          e.set("p", Value::f32(lens.top_probs[at]));
        }
      }
    }
    Value v = Value::object();
    v.set("tokens", token_labels(t.tokenizer(), ids));
    Value points = Value::array();
    for (const std::string& p : lens.points) points.push(p);
    v.set("points", std::move(points));
    v.set("top", std::move(top));
    Value targets = Value::array(), ranks = Value::array();
    for (int id : lens.targets) targets.push(id);
    v.set("targets", std::move(targets));
    v.set("target_p", grid(lens.target_probs, P, T));
    for (size_t p = 0; p < P; ++p) {
      Value& r = ranks.push(Value::array());
      for (size_t i = 0; i < T; ++i) r.push(lens.target_ranks[p * T + i]);
    }
    v.set("target_rank", std::move(ranks));
    return v;
  });
}

std::string interp_attribute(const Model& t, const std::string& spec_json) {
  return guarded([&] {
    const Value spec = read_spec(spec_json, {"prompt", "token", "other", "position"}, "attribute spec");
    const std::vector<int> ids = prompt_ids(t, spec, "prompt");
    const interp::Attribution a = interp::attribute(t.model(), ids, metric_of(t, spec));
    const GPTConfig& c = t.model().config();
    Value v = Value::object();
    v.set("tokens", token_labels(t.tokenizer(), ids));
    v.set("position", a.position);
    v.set("token", token_json(t, a.token));
    v.set("other", token_json(t, a.other));
    v.set("heads", grid(a.heads, size_t(c.n_layer), size_t(c.n_head)));
    v.set("mlps", floats(a.mlps));
    v.set("attn_bias", floats(a.attn_bias));
    v.set("mlp_bias", floats(a.mlp_bias));
    set_f32(v, {{"wte", a.wte}, {"wpe", a.wpe}, {"ln_f_bias", a.ln_f_bias}});
    v.set("sum", a.sum);
    v.set("logit", a.logit);
    return v;
  });
}

std::string interp_ablate(const Model& t, const std::string& spec_json) {
  return guarded([&] {
    const Value spec = read_spec(spec_json, {"prompt", "mode", "reference", "token", "other", "position"},
                                 "ablate spec");
    const std::vector<int> ids = prompt_ids(t, spec, "prompt");
    const std::string mode = get(spec, "mode") ? read_choice(spec, "mode", {"zero", "mean"}) : "zero";
    std::vector<std::vector<int>> reference;
    if (const Value* r = get(spec, "reference")) {
      if (!r->is_array()) throw InputError("reference must be a list of texts", "reference");
      for (const Value& x : r->items()) {
        if (!x.is_string()) throw InputError("reference must be a list of texts", "reference");
        reference.push_back(t.tokenizer().encode(x.as_string(), "reference"));
      }
    }
    const interp::Ablation a = interp::ablate(t.model(), ids, mode == "mean" ? interp::AblateMode::mean
                                                                             : interp::AblateMode::zero,
                                              reference, metric_of(t, spec));
    const GPTConfig& c = t.model().config();
    const size_t L = size_t(c.n_layer), NH = size_t(c.n_head);
    Value v = Value::object();
    v.set("tokens", token_labels(t.tokenizer(), ids));
    v.set("mode", mode);
    v.set("loss", a.loss);
    v.set("head_loss", grid(a.head_loss, L, NH));
    v.set("mlp_loss", floats(a.mlp_loss));
    if (a.has_metric) {
      v.set("metric", a.metric);
      v.set("head_metric", grid(a.head_metric, L, NH));
      v.set("mlp_metric", floats(a.mlp_metric));
    }
    return v;
  });
}

// kept: a session's last patch runs, reused when the model, the prompts and the metric are the
// same (then only the cells asked for run), else made and kept; null: made for this call alone.
std::string interp_patch(const Model& t, const std::string& spec_json, bool attribution,
                         std::shared_ptr<KeptPatch>* kept = nullptr) {
  return guarded([&] {
    const Value spec =
        attribution
            ? read_spec(spec_json, {"clean", "corrupted", "token", "other", "position"}, "attribution_patch spec")
            : read_spec(spec_json, {"clean", "corrupted", "token", "other", "position", "first", "count"}, "patch spec");
    const std::vector<int> clean = prompt_ids(t, spec, "clean"), corrupted = prompt_ids(t, spec, "corrupted");
    const interp::Metric m = metric_of(t, spec);
    // a part of the sweep's cells (interp.h: patch_cells), for the page's workers
    const int cells = interp::patch_cells(t.model().config(), static_cast<int>(clean.size()));
    const int first = static_cast<int>(read_int(spec, "first", 0, 0, cells));
    const int count = static_cast<int>(read_int(spec, "count", -1, -1, cells));
    interp::Patching p;
    if (attribution) {
      p = interp::attribution_patch(t.model(), clean, corrupted, m);
    } else if (!kept) {
      p = interp::patch(t.model(), clean, corrupted, m, nullptr, first, count);
    } else {
      std::shared_ptr<KeptPatch>& k = *kept;
      const bool same = k && k->model == &t.model() && k->runs.clean.ids == clean && k->runs.corrupt.ids == corrupted &&
                        k->asked.token == m.token && k->asked.other == m.other && k->asked.position == m.position;
      if (!same) {
        k.reset();  // (a refused spec keeps nothing)
        auto made = std::make_shared<KeptPatch>();
        made->runs = interp::patch_runs(t.model(), clean, corrupted, m);
        made->model = &t.model();
        made->asked = m;
        k = std::move(made);
      }
      p = interp::patch(t.model(), k->runs, nullptr, first, count);
    }
    const GPTConfig& c = t.model().config();
    const size_t L = size_t(c.n_layer), NH = size_t(c.n_head);
    Value v = Value::object();
    v.set("tokens", token_labels(t.tokenizer(), clean));
    v.set("corrupted_tokens", token_labels(t.tokenizer(), corrupted));
    v.set("clean_metric", p.clean);
    v.set("corrupted_metric", p.corrupted);
    v.set("resid", grid(p.resid, L + 1, size_t(p.T)));
    v.set("heads", grid(p.heads, L, NH));
    v.set("mlps", floats(p.mlps));
    if (!attribution) {
      v.set("cells", cells);
      v.set("first", p.first);
      v.set("count", p.count);
    }
    return v;
  });
}

std::string interp_head_scores(const Model& t, const std::string& spec_json) {
  return guarded([&] {
    const Value spec = read_spec(spec_json, {"length", "batch", "seed"}, "head_scores spec");
    interp::HeadScoreOptions o;
    o.length = static_cast<int>(read_int(spec, "length", 0, 0, kMaxBlockSize));
    o.batch = static_cast<int>(read_int(spec, "batch", 4, 1, 64));
    o.seed = static_cast<uint64_t>(read_int(spec, "seed", 0, 0, 1LL << 53));
    const interp::HeadScores h = interp::head_scores(t.model(), o);
    const GPTConfig& c = t.model().config();
    Value v = Value::object();
    v.set("length", h.length);
    v.set("batch", h.batch);
    v.set("induction", grid(h.induction, size_t(c.n_layer), size_t(c.n_head)));
    v.set("previous", grid(h.previous, size_t(c.n_layer), size_t(c.n_head)));
    Value seqs = Value::array();
    for (const std::vector<int>& ids : h.sequences) {
      Value& row = seqs.push(Value::array());
      for (int id : ids) row.push(id);
    }
    v.set("sequences", std::move(seqs));
    return v;
  });
}

}  // namespace

std::string interp_call(const std::string& name, const GPT& model, const CharTokenizer& tok, const std::string& spec) {
  const Model t{model, tok};
  if (name == "lens") return interp_lens(t, spec);
  if (name == "attribute") return interp_attribute(t, spec);
  if (name == "ablate") return interp_ablate(t, spec);
  if (name == "patch") return interp_patch(t, spec, false);
  if (name == "attribution_patch") return interp_patch(t, spec, true);
  if (name == "head_scores") return interp_head_scores(t, spec);
  return spec::failure("unknown interpretability call \"" + json::excerpt(name) + "\"", "call", 0, 0).dump();
}

json::Value head_scores_at_step(const Trainer& t) {
  const interp::HeadScores h = interp::head_scores(t.model(), {});
  const GPTConfig& c = t.model().config();
  Value v = Value::object();
  v.set("step", static_cast<long long>(t.steps_done()));
  v.set("induction", grid(h.induction, size_t(c.n_layer), size_t(c.n_head)));
  v.set("previous", grid(h.previous, size_t(c.n_layer), size_t(c.n_head)));
  return v;
}

std::string interp_call(GptSession& s, const std::string& name, const std::string& spec) {
  if (!s.ready()) return spec::failure("no model yet: create or load one first", "model", 0, 0).dump();
  if (name == "patch") return interp_patch({s.trainer()->model(), s.trainer()->tokenizer()}, spec, false, &s.kept_patch());
  return interp_call(name, s.trainer()->model(), s.trainer()->tokenizer(), spec);
}

}  // namespace ap
