// api.cpp — reads JSON specs into core types, runs the core, writes results as JSON (see api.h).
// Every exception stops here: the functions return {"ok":false,...} instead of throwing, which is
// what lets the wasm boundary leak nothing.
#include "api/api.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/attention/attention.h"
#include "core/attention/mla.h"
#include "core/tensor/matrix_parse.h"
#include "core/base/number_text.h"
#include "core/base/rng.h"
#include "formats/json.h"
#include "api/spec.h"

namespace ap {

namespace {

using json::Value;
using namespace spec;

constexpr const char* kVersion = "0.1.0";

const std::set<std::string> kTraceKeys = {"x",   "W_q",    "W_k",    "W_v",  "W_o",  "b_q",   "b_k",
                                          "b_v", "b_o",    "Q",      "K",    "V",    "seed",  "n_head",
                                          "causal", "mask", "base", "scale", "softmax",
                                          "rope", "rope_base", "rope_dims", "alibi", "alibi_slopes", "n_kv_head", "window", "sinks",
                                          "flash_block_q", "flash_block_k",
                                          "W_dkv", "W_uk", "W_uv", "W_kr", "W_qr"};

// Multi-head latent attention's own weights (mla.h); W_dkv selects the mode.
constexpr const char* kMlaWeights[] = {"W_dkv", "W_uk", "W_uv", "W_kr", "W_qr"};

struct Spec {
  AttentionInput in;
  AttentionOptions opt;
  bool mla = false;  // multi-head latent attention: the input is mla_in, not in
  MlaInput mla_in;
};

// The modern variants' keys (attention.h): each is off when absent, and a key that only refines
// a variant that is off is an error naming it.
void read_modern_options(const Value& spec, AttentionOptions& opt) {
  const std::string rope = read_choice(spec, "rope", {"none", "interleaved", "halves"});
  opt.rope = rope == "interleaved" ? RopePairing::interleaved
             : rope == "halves"    ? RopePairing::halves
                                   : RopePairing::none;
  if (opt.rope == RopePairing::none)
    for (const char* key : {"rope_base", "rope_dims"})
      if (get(spec, key))
        throw InputError(std::string(key) + " is given but rope is off: set \"rope\" to \"interleaved\" or \"halves\"",
                         key);
  opt.rope_base = read_float(spec, "rope_base", 10000.0f, 1.0 + 1e-6, 1e9);
  opt.rope_dims = static_cast<int>(read_int(spec, "rope_dims", 0, 2, kMaxDim));
  opt.n_kv_head = static_cast<int>(read_int(spec, "n_kv_head", 0, 1, kMaxDim));
  opt.window = static_cast<int>(read_int(spec, "window", 0, 1, 1 << 20));
  opt.sinks = static_cast<int>(read_int(spec, "sinks", 0, 0, 1 << 20));
  if (opt.window && !opt.causal) throw InputError("window needs \"causal\": true", "window");
  if (get(spec, "sinks") && !opt.window) throw InputError("sinks is given but there is no window", "sinks");
  opt.alibi = read_bool(spec, "alibi", false);
  if (const Value* v = get(spec, "alibi_slopes")) {
    if (!opt.alibi) throw InputError("alibi_slopes is given but alibi is off: set \"alibi\": true", "alibi_slopes");
    opt.alibi_slopes = read_vector(*v, "alibi_slopes").data;
  }
  opt.flash_block_q = static_cast<int>(read_int(spec, "flash_block_q", 0, 1, kMaxDim));
  opt.flash_block_k = static_cast<int>(read_int(spec, "flash_block_k", 0, 1, kMaxDim));
  if (!opt.flash_block_q != !opt.flash_block_k) {
    const char* missing = opt.flash_block_q ? "flash_block_k" : "flash_block_q";
    throw InputError(std::string(missing) + " is missing: FlashAttention's tiles need both block sizes", missing);
  }
}

// Multi-head latent attention (mla.h): x, W_q, W_o, b_o from `in`, the latent's weights from the
// spec; the plain mode's keys and values are refused, naming the key.
Spec read_mla_spec(const Value& spec, const AttentionInput& in, const AttentionOptions& opt) {
  for (const char* key : {"W_k", "W_v", "b_q", "b_k", "b_v", "Q", "K", "V", "seed"})
    if (get(spec, key))
      throw InputError(std::string(key) + " is given with W_dkv: in multi-head latent attention the keys and values "
                           "come from the latent (W_dkv, W_uk, W_uv) and the query from x·W_q",
                       key);
  Spec s;
  s.opt = opt;
  s.mla = true;
  MlaInput& m = s.mla_in;
  m.x = in.x;
  m.W_q = in.W_q;
  m.W_o = in.W_o;
  m.b_o = in.b_o;
  Tensor* weights[] = {&m.W_dkv, &m.W_uk, &m.W_uv, &m.W_kr, &m.W_qr};
  for (int i = 0; i < 5; ++i)
    if (const Value* v = get(spec, kMlaWeights[i])) *weights[i] = read_matrix(*v, kMlaWeights[i]);
  return s;
}

// The attention part of a spec; `extra` lists the other keys the caller reads itself.
Spec read_attention_spec(const Value& spec, const std::set<std::string>& extra = {}) {
  std::set<std::string> keys = kTraceKeys;
  keys.insert(extra.begin(), extra.end());
  reject_unknown_keys(spec, keys, "spec");
  AttentionOptions opt;
  opt.n_head = static_cast<int>(read_int(spec, "n_head", 1, 1, kMaxDim));
  opt.causal = read_bool(spec, "causal", false);
  opt.mask = read_mask(spec);
  opt.base = static_cast<int>(read_int(spec, "base", 0, 0, kMaxDim));
  opt.scale = read_bool(spec, "scale", true);
  opt.stable_softmax = read_choice(spec, "softmax", {"stable", "naive"}) == "stable";
  read_modern_options(spec, opt);

  AttentionInput in;
  const std::pair<const char*, Tensor*> matrices[] = {{"x", &in.x},     {"W_q", &in.W_q}, {"W_k", &in.W_k},
                                                      {"W_v", &in.W_v}, {"W_o", &in.W_o}, {"Q", &in.Q},
                                                      {"K", &in.K},     {"V", &in.V}};
  for (const auto& [key, tensor] : matrices)
    if (const Value* v = get(spec, key)) *tensor = read_matrix(*v, key);
  const std::pair<const char*, Tensor*> vectors[] = {
      {"b_q", &in.b_q}, {"b_k", &in.b_k}, {"b_v", &in.b_v}, {"b_o", &in.b_o}};
  for (const auto& [key, tensor] : vectors)
    if (const Value* v = get(spec, key)) *tensor = read_vector(*v, key);

  if (get(spec, "W_dkv")) return read_mla_spec(spec, in, opt);
  for (const char* key : kMlaWeights)
    if (get(spec, key))
      throw InputError(std::string(key) + " is given but W_dkv is not: " + key +
                           " belongs to multi-head latent attention, whose latent is c = x·W_dkv",
                       key);
  const bool has_qkv = !in.Q.empty() || !in.K.empty() || !in.V.empty();
  if (in.from_x() && has_qkv)
    throw InputError("give either x (with W_q, W_k, W_v) or Q, K and V, not both", in.Q.empty() ? "K" : "Q");
  if (!in.from_x()) {
    for (const char* key : {"W_q", "W_k", "W_v", "b_q", "b_k", "b_v", "seed"})
      if (get(spec, key))
        throw InputError(std::string(key) + " is given but x is not: " + key + " belongs to the x mode", key);
  }
  if (get(spec, "seed")) {
    const uint64_t seed = static_cast<uint64_t>(read_int(spec, "seed", 0, 0, (1LL << 53)));
    if (in.x.dim() != 2) throw InputError("x must be a matrix (2-D), got shape " + shape_str(in.x.shape), "x");
    const int d_model = in.x.shape[1];
    if (d_model % opt.n_head != 0)
      throw InputError("x has " + std::to_string(d_model) + " columns, which " + std::to_string(opt.n_head) +
                           " heads cannot share equally (n_head must divide d_model for random weights)",
                       "n_head");
    const float bound = 1.0f / std::sqrt(static_cast<float>(d_model / opt.n_head));
    Tensor* W[3] = {&in.W_q, &in.W_k, &in.W_v};
    // With n_kv_head, W_k and W_v are n_kv_head heads wide (checked by the core when it divides).
    const int kv = opt.n_kv_head && opt.n_head % opt.n_kv_head == 0 ? opt.n_kv_head : opt.n_head;
    const int widths[3] = {d_model, d_model / opt.n_head * kv, d_model / opt.n_head * kv};
    for (int i = 0; i < 3; ++i)
      if (W[i]->empty()) *W[i] = random_uniform(d_model, widths[i], bound, derive_seed(seed, i + 1));
  }

  Spec out;
  out.in = in;
  out.opt = opt;
  return out;
}

// FlashAttention's tiles (flash.h): every step's state, the final m, l, L and context per head,
// and how far the result is from the plain path's.
Value flash_object(const AttentionTrace& tr) {
  const FlashTrace& f = tr.flash;
  Value v = Value::object();
  v.set("block_q", f.block_q);
  v.set("block_k", f.block_k);
  v.set("n_q_blocks", f.n_q_blocks);
  v.set("n_k_blocks", f.n_k_blocks);
  Value& steps = v.set("steps", Value::array());
  for (const FlashStep& s : f.steps) {
    Value& o = steps.push(Value::object());
    for (const auto& [key, n] : {std::pair<const char*, int>{"head", s.head}, {"q_block", s.q_block},
                                 {"k_block", s.k_block}, {"r0", s.r0}, {"rows", s.rows}, {"c0", s.c0},
                                 {"cols", s.cols}})
      o.set(key, n);
    o.set("skipped", s.skipped);
    for (const auto& [key, t] : {std::pair<const char*, const Tensor*>{"m", &s.m}, {"alpha", &s.alpha},
                                 {"l", &s.l}, {"p", &s.p}, {"o", &s.o}})
      o.set(key, matrix_value(*t));
  }
  v.set("heads", per_head(tr.options.n_head, {{"m", &f.m}, {"l", &f.l}, {"lse", &f.lse}, {"context", &f.context}}));
  v.set("concat", matrix_value(f.concat));
  v.set("out", matrix_value(f.out));
  Value& diff = v.set("max_abs_diff", Value::object());
  diff.set("context", Value::f32(f.max_diff_context));
  diff.set("out", Value::f32(f.max_diff_out));
  Value& bound = v.set("bound", Value::object());
  bound.set("context", Value::f32(f.bound_context));
  bound.set("out", Value::f32(f.bound_out));
  v.set("within_bound", f.max_diff_context <= f.bound_context && f.max_diff_out <= f.bound_out);
  return v;
}

Value trace_object(const AttentionTrace& tr) {
  const AttentionOptions& opt = tr.options;
  const AttentionInput& in = tr.input;
  Value t = Value::object();
  t.set("mode", in.from_x() ? "x" : "qkv");
  t.set("T", tr.T);
  t.set("T_total", tr.T_total);
  t.set("base", opt.base);
  t.set("n_head", opt.n_head);
  t.set("d_model", in.from_x() ? Value(tr.d_model) : Value(nullptr));
  t.set("head_dim", tr.head_dim);
  t.set("d_v", tr.d_v);
  t.set("d_out", tr.d_out);
  t.set("scale_factor", Value::f32(tr.scale_factor));
  Value& o = t.set("options", Value::object());
  o.set("n_head", opt.n_head);
  o.set("causal", opt.causal);
  o.set("mask", opt.mask == MaskVariant::strict ? "strict" : "inclusive");
  o.set("base", opt.base);
  o.set("scale", opt.scale);
  o.set("softmax", opt.stable_softmax ? "stable" : "naive");
  if (opt.rope != RopePairing::none) {
    o.set("rope", opt.rope == RopePairing::interleaved ? "interleaved" : "halves");
    o.set("rope_base", opt.rope_base);
    o.set("rope_dims", tr.rope_dims);
    Value& r = t.set("rope", Value::object());
    r.set("pairing", opt.rope == RopePairing::interleaved ? "interleaved" : "halves");
    r.set("base", opt.rope_base);
    r.set("dims", tr.rope_dims);
    r.set("theta", matrix_value(tr.rope_theta));
    r.set("q_positions", matrix_value(tr.q_positions));
    r.set("k_positions", matrix_value(tr.k_positions));
    r.set("q_angles", matrix_value(tr.q_angles));
    r.set("k_angles", matrix_value(tr.k_angles));
  }
  if (opt.window) {
    o.set("window", opt.window);
    o.set("sinks", opt.sinks);
  }
  if (opt.n_kv_head) {
    o.set("n_kv_head", opt.n_kv_head);
    Value& g = t.set("kv_heads", Value::object());
    g.set("n_kv_head", opt.n_kv_head);
    g.set("group_size", opt.n_head / opt.n_kv_head);
    Value& reads = g.set("kv_head", Value::array());
    for (int h : tr.kv_head) reads.push(h);
    // The KV cache holds K and V for T_total positions: n_kv_head heads here, n_head in full MHA.
    g.set("cache_floats", static_cast<double>(tr.T_total) * opt.n_kv_head * (tr.head_dim + tr.d_v));
    g.set("cache_floats_mha", static_cast<double>(tr.T_total) * opt.n_head * (tr.head_dim + tr.d_v));
  }
  if (opt.flash_block_q) {
    o.set("flash_block_q", opt.flash_block_q);
    o.set("flash_block_k", opt.flash_block_k);
    t.set("flash", flash_object(tr));
  }
  if (opt.alibi) {
    o.set("alibi", true);
    t.set("alibi", Value::object()).set("slopes", matrix_value(tr.alibi_slopes));
  }
  Value& inputs = t.set("inputs", Value::object());
  const std::pair<const char*, const Tensor*> used[] = {
      {"x", &tr.input.x},     {"W_q", &tr.input.W_q}, {"W_k", &tr.input.W_k}, {"W_v", &tr.input.W_v},
      {"b_q", &tr.input.b_q}, {"b_k", &tr.input.b_k}, {"b_v", &tr.input.b_v}, {"W_o", &tr.input.W_o},
      {"b_o", &tr.input.b_o}, {"Q", &tr.input.Q},     {"K", &tr.input.K},     {"V", &tr.input.V}};
  for (const auto& [key, tensor] : used)
    if (!tensor->empty()) inputs.set(key, matrix_value(*tensor));
  t.set("mask", matrix_value(tr.mask));
  std::vector<std::pair<const char*, const Tensor*>> steps = {{"q", &tr.q}, {"k", &tr.k}, {"v", &tr.v}};
  if (!tr.q_rot.empty()) steps.insert(steps.end(), {{"q_rot", &tr.q_rot}, {"k_rot", &tr.k_rot}});
  steps.insert(steps.end(), {{"scores", &tr.scores}, {"scaled", &tr.scaled}});
  if (!tr.bias.empty()) steps.push_back({"bias", &tr.bias});
  steps.insert(steps.end(), {{"masked", &tr.masked},
                             {"weights", &tr.weights}, {"weight_row_sums", &tr.weight_row_sums},
                             {"context", &tr.context}});
  t.set("heads", per_head(opt.n_head, steps));
  t.set("concat", matrix_value(tr.concat));
  t.set("out", matrix_value(tr.out));
  t.set("empty_rows", rows_value(tr.empty_rows));
  t.set("overflow_rows", rows_value(tr.overflow_rows));
  Value& warnings = t.set("warnings", Value::array());
  for (const std::string& w : tr.warnings) warnings.push(w);
  return t;
}

// An MLA trace: the attention's trace (its Q, K, V the heads [q_R | q_C], [k_R | k_C], c·W_uv),
// mode "mla", the MLA inputs, and "mla": the latent, both forms of the scores and the context, and
// their agreement (mla.h).
Value mla_trace_object(const MlaTrace& mt) {
  Value t = trace_object(mt.attn);
  const MlaInput& in = mt.input;
  t.set("mode", "mla");
  t.set("d_model", in.x.shape[1]);
  Value& inputs = t.set("inputs", Value::object());
  const std::pair<const char*, const Tensor*> used[] = {
      {"x", &in.x},       {"W_q", &in.W_q},   {"W_dkv", &in.W_dkv}, {"W_uk", &in.W_uk}, {"W_uv", &in.W_uv},
      {"W_kr", &in.W_kr}, {"W_qr", &in.W_qr}, {"W_o", &in.W_o},     {"b_o", &in.b_o}};
  for (const auto& [key, tensor] : used)
    if (!tensor->empty()) inputs.set(key, matrix_value(*tensor));
  Value& m = t.set("mla", Value::object());
  m.set("d_c", mt.d_c);
  m.set("d_nope", mt.d_nope);
  m.set("d_rope", mt.d_rope);
  m.set("d_v", mt.d_v);
  m.set("c", matrix_value(mt.c));
  m.set("k_C", matrix_value(mt.k_C));
  m.set("q_C", matrix_value(mt.q_C));
  if (mt.d_rope) {
    m.set("k_R", matrix_value(mt.k_R));
    m.set("q_R", matrix_value(mt.q_R));
  }
  std::vector<std::pair<const char*, const Tensor*>> steps = {{"q_latent", &mt.q_latent},
                                                              {"scores_latent", &mt.scores_latent}};
  if (mt.d_rope) steps.push_back({"scores_rope", &mt.scores_rope});
  steps.insert(steps.end(), {{"scores_absorbed", &mt.scores_absorbed},
                             {"context_latent", &mt.context_latent},
                             {"context_absorbed", &mt.context_absorbed}});
  m.set("heads", per_head(mt.attn.options.n_head, steps));
  Value& diff = m.set("max_abs_diff", Value::object());
  diff.set("scores", Value::f32(mt.max_diff_scores));
  diff.set("context", Value::f32(mt.max_diff_context));
  m.set("cache_floats", mt.cache_floats);
  m.set("cache_floats_mha", mt.cache_floats_mha);
  return t;
}

Value trace_value(const Value& spec) {
  const Spec s = read_attention_spec(spec);
  Value body = Value::object();
  body.set("trace", s.mla ? mla_trace_object(mla_trace(s.mla_in, s.opt))
                          : trace_object(attention_trace(s.in, s.opt)));
  return body;
}

// ---------------------------------------------------------------- backward

// The upstream gradient and the loss it belongs to (see api.h): d_out given → L = Σ d_out ⊙ out;
// "loss":"sum" (the default) → d_out = 1; "loss":"mse" with "target" → L = mean((out − target)²).
enum class LossKind { d_out, sum, mse };

struct Upstream {
  LossKind kind = LossKind::sum;
  Tensor d_out;   // ∂L/∂out
  Tensor target;  // for mse
  double loss = 0;
};

// L for an output `out`, summed in double: Σ d_out ⊙ out (d_out given and held fixed), Σ out,
// or mean((out − target)²).
double loss_of(const Upstream& u, const Tensor& out) {
  double L = 0;
  for (int64_t i = 0; i < out.numel(); ++i) {
    const double o = out.data[i];
    if (u.kind == LossKind::d_out) L += u.d_out.data[i] * o;
    else if (u.kind == LossKind::sum) L += o;
    else L += (o - u.target.data[i]) * (o - u.target.data[i]) / static_cast<double>(out.numel());
  }
  return L;
}

// Rows and columns of a matrix input; a bias vector counts as one row.
struct Grid {
  int rows, cols;
};
Grid grid_of(const Tensor& t) { return t.dim() == 2 ? Grid{t.shape[0], t.shape[1]} : Grid{1, t.shape[0]}; }

Upstream read_upstream(const Value& spec, const AttentionTrace& tr) {
  Upstream u;
  const Value* d_out = get(spec, "d_out");
  const Value* loss = get(spec, "loss");
  if (d_out && loss) throw InputError("give either d_out or loss, not both", "loss");
  const std::string kind = read_choice(spec, "loss", {"sum", "mse"});
  if (kind != "mse" && get(spec, "target")) throw InputError("target goes with \"loss\": \"mse\"", "target");
  if (d_out) {
    u.kind = LossKind::d_out;
    u.d_out = read_matrix(*d_out, "d_out");
  } else if (kind == "sum") {
    u.kind = LossKind::sum;
    u.d_out = Tensor(tr.out.shape, 1.0f);
  } else {
    u.kind = LossKind::mse;
    Tensor& target = u.target;
    const Value* t = get(spec, "target");
    if (!t) throw InputError("\"loss\": \"mse\" needs a target matrix with out's shape", "target");
    target = read_matrix(*t, "target");
    if (target.shape != tr.out.shape)
      throw InputError("target is " + shape_str(target.shape) + " but out is " + shape_str(tr.out.shape), "target");
    for (float v : target.data)
      if (!std::isfinite(v)) throw InputError("target holds a non-finite number", "target");
    u.d_out = Tensor(tr.out.shape);
    const float n = static_cast<float>(tr.out.numel());
    for (int64_t i = 0; i < tr.out.numel(); ++i) u.d_out.data[i] = 2.0f * (tr.out.data[i] - target.data[i]) / n;
  }
  if (u.d_out.shape != tr.out.shape)
    throw InputError("d_out is " + shape_str(u.d_out.shape) + " but out is " + shape_str(tr.out.shape) +
                         ": the upstream gradient must have out's shape",
                     "d_out");
  u.loss = loss_of(u, tr.out);
  return u;
}

const std::set<std::string> kBackwardKeys = {"d_out", "loss", "target"};

// Sets out[key] to each tensor of `all` that is not empty, as a matrix.
template <size_t N>
void set_present(Value& out, const std::pair<const char*, const Tensor*> (&all)[N]) {
  for (const auto& [key, t] : all)
    if (!t->empty()) out.set(key, matrix_value(*t));
}

Value grads_object(const AttentionTrace& tr, const AttentionGrads& g) {
  Value out = Value::object();
  out.set("out", matrix_value(g.d_out));
  const std::pair<const char*, const Tensor*> top[] = {{"W_o", &g.d_W_o}, {"b_o", &g.d_b_o}, {"concat", &g.d_concat}};
  for (const auto& [key, t] : top)
    if (!t->empty()) out.set(key, matrix_value(*t));
  std::vector<std::pair<const char*, const Tensor*>> steps = {
      {"context", &g.d_context}, {"weights", &g.d_weights}, {"v", &g.d_v},
      {"scaled", &g.d_scaled},   {"scores", &g.d_scores}};
  if (!g.d_q_rot.empty()) steps.insert(steps.end(), {{"q_rot", &g.d_q_rot}, {"k_rot", &g.d_k_rot}});
  steps.insert(steps.end(), {{"q", &g.d_q}, {"k", &g.d_k}});
  out.set("heads", per_head(tr.options.n_head, steps));
  if (!g.flash_D.empty()) {
    Value& f = out.set("flash", Value::object());
    f.set("heads", per_head(tr.options.n_head, {{"D", &g.flash_D}, {"P", &g.flash_P}}));
    Value& steps = f.set("steps", Value::array());
    for (const AttentionGrads::FlashBackStep& s : g.flash_steps) {
      Value& o = steps.push(Value::object());
      for (const auto& [key, n] : {std::pair<const char*, int>{"head", s.head}, {"k_block", s.k_block},
                                   {"q_block", s.q_block}, {"r0", s.r0}, {"rows", s.rows}, {"c0", s.c0},
                                   {"cols", s.cols}})
        o.set(key, n);
      o.set("dv", matrix_value(s.dv));
      o.set("dk", matrix_value(s.dk));
      o.set("dq", matrix_value(s.dq));
    }
  }
  const std::pair<const char*, const Tensor*> rest[] = {
      {"Q", &g.d_Q},     {"K", &g.d_K},     {"V", &g.d_V},     {"x", &g.d_x},     {"W_q", &g.d_W_q},
      {"W_k", &g.d_W_k}, {"W_v", &g.d_W_v}, {"b_q", &g.d_b_q}, {"b_k", &g.d_b_k}, {"b_v", &g.d_b_v}};
  set_present(out, rest);
  return out;
}

// MLA's gradients: the attention's, then the latent's and the leaves' (mla.h).
Value mla_grads_object(const MlaTrace& mt, const MlaGrads& g) {
  Value out = grads_object(mt.attn, g.attn);
  const std::pair<const char*, const Tensor*> rest[] = {
      {"c", &g.d_c},         {"k_R", &g.d_k_R},     {"q_R", &g.d_q_R},   {"x", &g.d_x},       {"W_q", &g.d_W_q},
      {"W_dkv", &g.d_W_dkv}, {"W_uk", &g.d_W_uk},   {"W_uv", &g.d_W_uv}, {"W_kr", &g.d_W_kr}, {"W_qr", &g.d_W_qr}};
  set_present(out, rest);
  return out;
}

Value backward_value(const Value& spec) {
  const Spec s = read_attention_spec(spec, kBackwardKeys);
  if (s.mla) {
    const MlaTrace mt = mla_trace(s.mla_in, s.opt);
    const Upstream u = read_upstream(spec, mt.attn);
    Value body = Value::object();
    body.set("trace", mla_trace_object(mt));
    body.set("loss", std::isfinite(u.loss) ? Value(u.loss) : Value(std::isnan(u.loss) ? "nan" : "inf"));
    body.set("grads", mla_grads_object(mt, mla_trace_backward(mt, u.d_out)));
    return body;
  }
  const AttentionTrace tr = attention_trace(s.in, s.opt);
  const Upstream u = read_upstream(spec, tr);
  const AttentionGrads g = attention_trace_backward(tr, u.d_out);
  Value body = Value::object();
  body.set("trace", trace_object(tr));
  body.set("loss", std::isfinite(u.loss) ? Value(u.loss) : Value(std::isnan(u.loss) ? "nan" : "inf"));
  body.set("grads", grads_object(tr, g));
  return body;
}

// The tensor `name` keys in `all`, or null: an input that is empty counts as absent (skip_empty).
template <class T, size_t N>
T* tensor_named(const std::pair<const char*, T*> (&all)[N], const std::string& name, bool skip_empty) {
  for (const auto& [key, t] : all)
    if (name == key) return skip_empty && t->empty() ? nullptr : t;
  return nullptr;
}

// The input tensor named `name` in an AttentionInput, or null.
Tensor* input_named(AttentionInput& in, const std::string& name) {
  const std::pair<const char*, Tensor*> all[] = {{"x", &in.x},     {"W_q", &in.W_q}, {"W_k", &in.W_k},
                                                 {"W_v", &in.W_v}, {"b_q", &in.b_q}, {"b_k", &in.b_k},
                                                 {"b_v", &in.b_v}, {"W_o", &in.W_o}, {"b_o", &in.b_o},
                                                 {"Q", &in.Q},     {"K", &in.K},     {"V", &in.V}};
  return tensor_named(all, name, true);
}

const Tensor* grad_named(const AttentionGrads& g, const std::string& name) {
  const std::pair<const char*, const Tensor*> all[] = {
      {"x", &g.d_x},     {"W_q", &g.d_W_q}, {"W_k", &g.d_W_k}, {"W_v", &g.d_W_v}, {"b_q", &g.d_b_q}, {"b_k", &g.d_b_k},
      {"b_v", &g.d_b_v}, {"W_o", &g.d_W_o}, {"b_o", &g.d_b_o}, {"Q", &g.d_Q},     {"K", &g.d_K},     {"V", &g.d_V}};
  return tensor_named(all, name, false);
}

// The same for multi-head latent attention's inputs and gradients.
Tensor* mla_input_named(MlaInput& in, const std::string& name) {
  const std::pair<const char*, Tensor*> all[] = {{"x", &in.x},       {"W_q", &in.W_q},   {"W_dkv", &in.W_dkv},
                                                 {"W_uk", &in.W_uk}, {"W_uv", &in.W_uv}, {"W_kr", &in.W_kr},
                                                 {"W_qr", &in.W_qr}, {"W_o", &in.W_o},   {"b_o", &in.b_o}};
  return tensor_named(all, name, true);
}

const Tensor* mla_grad_named(const MlaGrads& g, const std::string& name) {
  const std::pair<const char*, const Tensor*> all[] = {
      {"x", &g.d_x},       {"W_q", &g.d_W_q},   {"W_dkv", &g.d_W_dkv},   {"W_uk", &g.d_W_uk}, {"W_uv", &g.d_W_uv},
      {"W_kr", &g.d_W_kr}, {"W_qr", &g.d_W_qr}, {"W_o", &g.attn.d_W_o}, {"b_o", &g.attn.d_b_o}};
  return tensor_named(all, name, false);
}

constexpr int kMaxChecks = 1024;

Value gradcheck_value(const Value& spec) {
  std::set<std::string> extra = kBackwardKeys;
  extra.insert({"check", "eps"});
  const Spec s = read_attention_spec(spec, extra);
  const MlaTrace mt = s.mla ? mla_trace(s.mla_in, s.opt) : MlaTrace{};
  const AttentionTrace tr = s.mla ? mt.attn : attention_trace(s.in, s.opt);
  const Upstream u = read_upstream(spec, tr);
  const AttentionGrads g = s.mla ? AttentionGrads{} : attention_trace_backward(tr, u.d_out);
  const MlaGrads mg = s.mla ? mla_trace_backward(mt, u.d_out) : MlaGrads{};
  // The inputs moved, by name, and the forward pass that reads them (plain or MLA).
  Spec probe = s;
  auto input_of = [&](const std::string& name) {
    return probe.mla ? mla_input_named(probe.mla_in, name) : input_named(probe.in, name);
  };
  auto out_of_probe = [&] {
    return probe.mla ? mla_trace(probe.mla_in, probe.opt).attn.out : attention_trace(probe.in, probe.opt).out;
  };
  double eps = 1e-2;
  if (const Value* e = get(spec, "eps")) {
    if (!e->is_number() || !(e->as_number() > 0) || e->as_number() > 1)
      throw InputError("eps must be a number in (0, 1], got " + e->dump().substr(0, 24), "eps");
    eps = e->as_number();
  }
  // Which entries: the listed ones, or every entry of every input (up to kMaxChecks).
  struct Entry { std::string name; int row, col; };
  std::vector<Entry> entries;
  if (const Value* c = get(spec, "check")) {
    if (!c->is_array()) throw InputError("check must be a list of {\"name\", \"row\", \"col\"}", "check");
    for (const Value& item : c->items()) {
      if (!item.is_object()) throw InputError("check must be a list of {\"name\", \"row\", \"col\"}", "check");
      const Value* n = item.find("name");
      if (!n || !n->is_string()) throw InputError("each check needs a \"name\" such as \"W_q\"", "check");
      Tensor* t = input_of(n->as_string());
      if (!t) throw InputError("check: \"" + n->as_string() + "\" is not an input of this spec", "check");
      const Grid grid = grid_of(*t);
      const long long r = read_int(item, "row", 0, 0, grid.rows - 1), col = read_int(item, "col", 0, 0, grid.cols - 1);
      entries.push_back({n->as_string(), static_cast<int>(r), static_cast<int>(col)});
    }
  } else {
    for (const char* name : {"x", "W_q", "W_k", "W_v", "b_q", "b_k", "b_v", "W_dkv", "W_uk", "W_uv", "W_kr", "W_qr",
                             "W_o", "b_o", "Q", "K", "V"})
      if (Tensor* t = input_of(name)) {
        const Grid grid = grid_of(*t);
        for (int r = 0; r < grid.rows; ++r)
          for (int c = 0; c < grid.cols; ++c) entries.push_back({name, r, c});
      }
  }
  if (entries.size() > static_cast<size_t>(kMaxChecks))
    throw InputError(std::to_string(entries.size()) + " entries to check, more than the limit of " +
                         std::to_string(kMaxChecks) + ": list some in \"check\"",
                     "check");
  // L(θ ± eps) with the same upstream d_out held fixed (or the same loss recomputed).
  Value checks = Value::array();
  for (const Entry& e : entries) {
    Tensor* t = input_of(e.name);
    const int cols = grid_of(*t).cols;
    float& cell = t->data[static_cast<size_t>(e.row) * cols + e.col];
    const float original = cell;
    cell = static_cast<float>(original + eps);
    const double up = loss_of(u, out_of_probe());
    cell = static_cast<float>(original - eps);
    const double down = loss_of(u, out_of_probe());
    const double step = static_cast<double>(static_cast<float>(original + eps)) -
                        static_cast<double>(static_cast<float>(original - eps));
    cell = original;
    const double numeric = (up - down) / step;
    const double analytic = (s.mla ? mla_grad_named(mg, e.name) : grad_named(g, e.name))->data[static_cast<size_t>(e.row) * cols + e.col];
    const double abs_error = std::fabs(numeric - analytic);
    Value& c = checks.push(Value::object());
    c.set("name", e.name);
    c.set("row", e.row);
    c.set("col", e.col);
    c.set("analytic", Value::f32(static_cast<float>(analytic)));
    c.set("numeric", Value::f32(static_cast<float>(numeric)));
    c.set("abs_error", Value::f32(static_cast<float>(abs_error)));
    c.set("rel_error", Value::f32(static_cast<float>(abs_error / std::max(std::fabs(numeric) + std::fabs(analytic), 1e-30))));
  }
  Value body = Value::object();
  body.set("loss", std::isfinite(u.loss) ? Value(u.loss) : Value("nan"));
  body.set("eps", eps);
  body.set("checks", std::move(checks));
  return body;
}

}  // namespace

std::string trace_json(const std::string& spec) {
  return guarded([&] { return trace_value(json::parse(spec)); });
}

std::string backward_json(const std::string& spec) {
  return guarded([&] { return backward_value(json::parse(spec)); });
}

std::string gradcheck_json(const std::string& spec) {
  return guarded([&] { return gradcheck_value(json::parse(spec)); });
}

std::string parse_matrix_json(const std::string& text) {
  return guarded([&] {
    const Tensor m = parse_matrix(text);
    Value body = Value::object();
    body.set("rows", m.shape[0]);
    body.set("cols", m.shape[1]);
    body.set("matrix", matrix_value(m));
    return body;
  });
}

std::string random_matrix_json(const std::string& spec_text) {
  return guarded([&] {
    const Value spec = read_spec(spec_text, {"rows", "cols", "seed", "bound"}, "random matrix spec");
    const int rows = static_cast<int>(read_int(spec, "rows", 0, 1, kMaxDim));
    const int cols = static_cast<int>(read_int(spec, "cols", 0, 1, kMaxDim));
    if (!get(spec, "rows") || !get(spec, "cols")) throw InputError("rows and cols are required", "rows");
    const uint64_t seed = static_cast<uint64_t>(read_int(spec, "seed", 0, 0, (1LL << 53)));
    float bound = 1.0f / std::sqrt(static_cast<float>(cols));
    if (const Value* b = get(spec, "bound")) {
      if (!b->is_number() || !(b->as_number() >= 0) || b->as_number() > 1e30)
        throw InputError("bound must be a number from 0 to 1e30, got " + b->dump().substr(0, 24), "bound");
      bound = static_cast<float>(b->as_number());
    }
    Value body = Value::object();
    body.set("matrix", matrix_value(random_uniform(rows, cols, bound, seed)));
    return body;
  });
}

std::string causal_mask_json(const std::string& spec_text) {
  return guarded([&] {
    const Value spec = read_spec(spec_text, {"T", "base", "mask"}, "mask spec");
    if (!get(spec, "T")) throw InputError("T is required", "T");
    const int T = static_cast<int>(read_int(spec, "T", 0, 1, kMaxDim));
    const int base = static_cast<int>(read_int(spec, "base", 0, 0, kMaxDim));
    Value body = Value::object();
    body.set("mask", matrix_value(causal_mask(T, T + base, base, read_mask(spec))));
    return body;
  });
}

std::string softmax_json(const std::string& spec_text) {
  return guarded([&] {
    const Value spec = read_spec(spec_text, {"x", "softmax"}, "softmax spec");
    const Value* x = get(spec, "x");
    if (!x) throw InputError("x is required", "x");
    const Tensor m = read_matrix(*x, "x");
    const bool stable = read_choice(spec, "softmax", {"stable", "naive"}) == "stable";
    std::vector<RowStatus> status;
    const Tensor w = stable ? softmax_rows(m, &status) : softmax_rows_naive(m, &status);
    Value empty = Value::array(), overflow = Value::array();
    for (size_t i = 0; i < status.size(); ++i) {
      if (status[i] == RowStatus::empty) empty.push(static_cast<int>(i));
      if (status[i] == RowStatus::overflow) overflow.push(static_cast<int>(i));
    }
    Value body = Value::object();
    body.set("weights", matrix_value(w));
    body.set("empty_rows", std::move(empty));
    body.set("overflow_rows", std::move(overflow));
    return body;
  });
}

std::string version() { return kVersion; }

}  // namespace ap
