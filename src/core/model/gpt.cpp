// gpt.cpp — the tiny GPT's config, parameter layout, forward, backward and KV cache (see gpt.h).
#include "core/model/gpt.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/base/rng.h"
#include "core/model/gpt_layout.h"

namespace ap {

namespace {

std::string num(long long v) { return std::to_string(v); }

void check_range(int value, int lo, int hi, const char* field, const char* what) {
  if (value < lo || value > hi)
    throw InputError(std::string(field) + " is " + num(value) + ": " + what + " must be between " + num(lo) +
                         " and " + num(hi),
                     field);
}

size_t sz(long long v) { return static_cast<size_t>(v); }

}  // namespace

// ---------------------------------------------------------------- config

namespace {

// The sizes come first in GPTConfig; every variant keeps its default.
GPTConfig sized(int vocab_size, int block_size, int n_layer, int n_head, int n_embd) {
  return GPTConfig{vocab_size, block_size, n_layer, n_head, n_embd};
}

}  // namespace

GPTConfig GPTConfig::tiny(int vocab_size) { return sized(vocab_size, 64, 2, 4, 64); }

GPTConfig GPTConfig::small(int vocab_size) { return sized(vocab_size, 128, 4, 4, 128); }

GPTConfig GPTConfig::gpt2_small() {
  GPTConfig c = sized(50257, 1024, 12, 12, 768);
  c.activation = Activation::gelu_new;
  return c;
}

GPTConfig GPTConfig::preset(const std::string& name, int vocab_size) {
  if (name == "tiny") return tiny(vocab_size);
  if (name == "small") return small(vocab_size);
  throw InputError("unknown preset \"" + name + "\": the presets are \"tiny\" and \"small\"", "preset");
}

void GPTConfig::validate() const {
  check_range(vocab_size, 1, kMaxModelVocab, "vocab_size", "the vocabulary size");
  check_range(block_size, 1, kMaxBlockSize, "block_size", "the context length");
  check_range(n_layer, 1, kMaxLayers, "n_layer", "the number of layers");
  check_range(n_head, 1, kMaxHeads, "n_head", "the number of heads");
  check_range(n_embd, 1, kMaxEmbd, "n_embd", "the embedding width");
  check_range(head_size, 0, kMaxHeadSize, "head_size", "each head's width (0: n_embd/n_head)");
  if (head_size == 0 && n_embd % n_head != 0)
    throw InputError("n_embd is " + num(n_embd) + ", which " + num(n_head) +
                         " heads cannot share equally (n_head must divide n_embd)",
                     "n_head");
  if (!(ln_eps > 0.0f && ln_eps <= 0.1f))
    throw InputError("ln_eps is " + std::to_string(ln_eps) + ": the norm's epsilon must be above 0 and at most 0.1",
                     "ln_eps");
  check_range(n_kv_head, 0, n_head, "n_kv_head", "the number of key/value heads (0: n_head)");
  if (n_kv_head > 0 && n_head % n_kv_head != 0)
    throw InputError("n_kv_head is " + num(n_kv_head) + ", which does not divide n_head = " + num(n_head) +
                         ": each key/value head serves an equal group of query heads",
                     "n_kv_head");
  if (pos == Positions::rope) {
    if (!(rope_base > 1.0) || !std::isfinite(rope_base))
      throw InputError("rope_base must be a number above 1 (10000 in the RoPE paper), got " + std::to_string(rope_base),
                       "rope_base");
    if (rope_dims == 0 && head_dim() % 2 != 0)
      throw InputError("RoPE turns pairs of dimensions but head_dim is " + num(head_dim()) +
                           ", odd: set rope_dims to an even number up to " + num(head_dim() - 1),
                       "rope_dims");
    if (rope_dims != 0 && (rope_dims < 2 || rope_dims % 2 != 0 || rope_dims > head_dim()))
      throw InputError("rope_dims must be even, from 2 to head_dim = " + num(head_dim()) + ", got " + num(rope_dims),
                       "rope_dims");
    if (rope == RopePairing::none)
      throw InputError("rope must be \"halves\" or \"interleaved\" with pos \"rope\"", "rope");
  } else if (rope_dims != 0) {
    throw InputError("rope_dims is given but pos is not \"rope\"", "rope_dims");
  }
  if (rope_scaling.on()) {
    const RopeScaling& r = rope_scaling;
    if (pos != Positions::rope) throw InputError("rope_scaling is RoPE's: it needs pos \"rope\"", "rope_scaling");
    if (!std::isfinite(r.factor) || !(r.low_freq_factor > 0) || !std::isfinite(r.high_freq_factor) ||
        !(r.high_freq_factor > r.low_freq_factor) || r.original_max_position_embeddings < 1)
      throw InputError("rope_scaling needs a finite factor, 0 < low_freq_factor < high_freq_factor and "
                       "original_max_position_embeddings ≥ 1",
                       "rope_scaling");
  }
  check_range(n_inner, 0, kMaxInner, "n_inner", "the MLP's hidden size (0: 4·n_embd)");
  if (mlp == Mlp::swiglu && activation != Activation::gelu)
    throw InputError("activation gelu_new is the GELU MLP's; SwiGLU uses SiLU", "activation");
  check_range(window, 0, kMaxBlockSize, "window", "the sliding window (0: none)");
  check_range(sink, 0, kMaxBlockSize, "sink", "the attention sinks (0: none)");
  if (sink > 0 && window == 0) throw InputError("sink is given but there is no window: sinks stay visible under a window", "sink");
}

bool GPTConfig::gpt2_block() const {
  return pos == Positions::learned && norm == Norm::layernorm && mlp == Mlp::gelu && inner() == 4 * n_embd &&
         kv_head() == n_head && window == 0 && sink == 0 && head_dim() * n_head == n_embd && tie_embeddings &&
         !qkv_bias && !qk_norm;
}

bool GPTConfig::operator==(const GPTConfig& o) const {
  return vocab_size == o.vocab_size && block_size == o.block_size && n_layer == o.n_layer && n_head == o.n_head &&
         n_embd == o.n_embd && mask == o.mask && stable_softmax == o.stable_softmax && activation == o.activation &&
         ln_eps == o.ln_eps && bias == o.bias && pos == o.pos && rope_base == o.rope_base &&
         rope_dims == o.rope_dims && (pos != Positions::rope || rope == o.rope) && kv_head() == o.kv_head() &&
         norm == o.norm && mlp == o.mlp && inner() == o.inner() && window == o.window && sink == o.sink &&
         head_dim() == o.head_dim() && tie_embeddings == o.tie_embeddings && has_qkv_bias() == o.has_qkv_bias() &&
         qk_norm == o.qk_norm && rope_scaling == o.rope_scaling;
}

// ---------------------------------------------------------------- the layouts
// Each buffer's layout, once: its parts in order, each with its size and the view that points at
// it. The count, the views (carve), the named tensors and memory_bytes all walk these.

namespace {

// One part of a buffer: the view that points at it, and its size in floats.
struct Part {
  float** view;
  int64_t floats;
};

// buf holds n zeros: resized without a value (FloatBuffer), then cleared in one memset.
void zeroed(FloatBuffer& buf, size_t n) {
  buf.clear();
  buf.resize(n);
  if (n) std::memset(buf.data(), 0, n * sizeof(float));
}

int64_t floats_of(const std::vector<Part>& layout) {
  int64_t n = 0;
  for (const Part& p : layout) n += p.floats;
  return n;
}

// Allocates buf for a layout (zeros) and points each view at its part.
void carve(FloatBuffer& buf, const std::vector<Part>& layout) {
  zeroed(buf, sz(floats_of(layout)));
  float* at = buf.data();
  for (const Part& p : layout) {
    *p.view = at;
    at += p.floats;
  }
}

}  // namespace

namespace layout {

std::vector<ParamSlot> param_layout(const GPTConfig& cfg, GPTParams& v) {
  const int V = cfg.vocab_size, C = cfg.n_embd, W = cfg.qkv_width(), H = cfg.inner(), A = cfg.attn_width(),
            hs = cfg.head_dim();
  const bool norm_bias = cfg.bias && cfg.norm == Norm::layernorm;  // RMSNorm has no bias
  v.h.resize(sz(std::max(cfg.n_layer, 0)));
  std::vector<ParamSlot> out = {{"transformer.wte.weight", {V, C}, &v.wte}};
  if (cfg.pos == Positions::learned) out.push_back({"transformer.wpe.weight", {cfg.block_size, C}, &v.wpe});
  else v.wpe = nullptr;
  for (size_t l = 0; l < v.h.size(); ++l) {
    const std::string h = "transformer.h." + std::to_string(l) + ".";
    BlockParams& b = v.h[l];
    b.up_proj_w = b.up_proj_b = nullptr;
    std::vector<ParamSlot> mlp;
    if (cfg.mlp == Mlp::swiglu)  // gate and up one after the other: one (2H, C) weight, one (2H) bias
      mlp = {{"mlp.gate_proj.weight", {H, C}, &b.c_fc_w},   {"mlp.up_proj.weight", {H, C}, &b.up_proj_w},
             {"mlp.gate_proj.bias", {H}, &b.c_fc_b},        {"mlp.up_proj.bias", {H}, &b.up_proj_b},
             {"mlp.down_proj.weight", {C, H}, &b.mlp_c_proj_w}, {"mlp.down_proj.bias", {C}, &b.mlp_c_proj_b}};
    else
      mlp = {{"mlp.c_fc.weight", {H, C}, &b.c_fc_w},
             {"mlp.c_fc.bias", {H}, &b.c_fc_b},
             {"mlp.c_proj.weight", {C, H}, &b.mlp_c_proj_w},
             {"mlp.c_proj.bias", {C}, &b.mlp_c_proj_b}};
    std::vector<ParamSlot> block = {{"ln_1.weight", {C}, &b.ln_1_w},
                                    {"ln_1.bias", {C}, &b.ln_1_b},
                                    {"attn.c_attn.weight", {W, C}, &b.c_attn_w},
                                    {"attn.c_attn.bias", {W}, &b.c_attn_b},
                                    {"attn.q_norm.weight", {hs}, &b.q_norm_w},
                                    {"attn.k_norm.weight", {hs}, &b.k_norm_w},
                                    {"attn.c_proj.weight", {C, A}, &b.attn_c_proj_w},
                                    {"attn.c_proj.bias", {C}, &b.attn_c_proj_b},
                                    {"ln_2.weight", {C}, &b.ln_2_w},
                                    {"ln_2.bias", {C}, &b.ln_2_b}};
    block.insert(block.end(), mlp.begin(), mlp.end());
    for (ParamSlot t : block) {
      const bool is_bias = t.shape.size() == 1 && t.name.compare(t.name.size() - 5, 5, ".bias") == 0;
      const bool is_norm = t.name.compare(0, 3, "ln_") == 0;
      const bool kept_bias = cfg.bias || (cfg.qkv_bias && t.view == &b.c_attn_b);
      const bool qk = t.view == &b.q_norm_w || t.view == &b.k_norm_w;
      if ((is_bias && (!kept_bias || (is_norm && !norm_bias))) || (qk && !cfg.qk_norm)) {
        *t.view = nullptr;
        continue;
      }
      t.name = h + t.name;
      out.push_back(std::move(t));
    }
  }
  out.push_back({"transformer.ln_f.weight", {C}, &v.ln_f_w});
  if (norm_bias)
    out.push_back({"transformer.ln_f.bias", {C}, &v.ln_f_b});
  else
    v.ln_f_b = nullptr;
  if (!cfg.tie_embeddings) out.push_back({"lm_head.weight", {V, C}, &v.lm_head});
  else v.lm_head = nullptr;
  return out;
}

}  // namespace layout

namespace {

using layout::param_layout;
using layout::ParamSlot;

// The forward's activations for (B, T), in buffer order; views in a. Inference keeps no loss:
// probs and losses stay null.
std::vector<Part> act_layout(const GPTConfig& cfg, int B, int T, GPTActs& a, ModelUse use) {
  const int64_t C = cfg.n_embd, NH = cfg.n_head, V = cfg.vocab_size, BT = int64_t(B) * T, W = cfg.qkv_width(),
                FC = cfg.fc_width(), H = cfg.inner(), A = cfg.attn_width(),
                QK = cfg.qk_norm ? int64_t(NH + cfg.kv_head()) : 0;
  a.h.assign(sz(std::max(cfg.n_layer, 0)), BlockActs{});
  std::vector<Part> out = {{&a.encoded, BT * C}};
  for (BlockActs& l : a.h)
    out.insert(out.end(), {{&l.ln_1, BT * C},
                           {&l.ln_1_mean, BT},
                           {&l.ln_1_rstd, BT},
                           {&l.qkv, BT * W},
                           {&l.qk_in, BT * QK * cfg.head_dim()},
                           {&l.qk_rstd, BT * QK},
                           {&l.atty, BT * A},
                           {&l.att, int64_t(B) * NH * T * T},
                           {&l.residual2, BT * C},
                           {&l.ln_2, BT * C},
                           {&l.ln_2_mean, BT},
                           {&l.ln_2_rstd, BT},
                           {&l.fch, BT * FC},
                           {&l.fch_gelu, BT * H},
                           {&l.residual3, BT * C}});
  out.insert(out.end(), {{&a.ln_f, BT * C}, {&a.ln_f_mean, BT}, {&a.ln_f_rstd, BT}, {&a.logits, BT * V}});
  if (use == ModelUse::train) out.insert(out.end(), {{&a.probs, BT * V}, {&a.losses, BT}});
  else a.probs = a.losses = nullptr;
  return out;
}

// The backward's scratch for (B, T); views in d.
std::vector<Part> act_grad_layout(const GPTConfig& cfg, int B, int T, GPTActGrads& d) {
  const int64_t C = cfg.n_embd, V = cfg.vocab_size, BT = int64_t(B) * T, W = cfg.qkv_width(), FC = cfg.fc_width(),
                H = cfg.inner(), A = cfg.attn_width(),
                QK = cfg.qk_norm ? int64_t(cfg.n_head + cfg.kv_head()) * cfg.head_dim() : 0;
  const size_t scratch = kernels::attention_backward_scratch_max(B, T, cfg.attn_width(), cfg.n_head);
  return {{&d.residual, BT * C}, {&d.ln, BT * C},       {&d.qkv, BT * W},    {&d.qk, BT * QK},
          {&d.atty, BT * A},     {&d.fch, BT * FC},     {&d.fch_gelu, BT * H}, {&d.logits, BT * V},
          {&d.scratch, int64_t(scratch)}};
}

// The KV cache for S positions and one position's activations; views in c.
std::vector<Part> cache_layout(const GPTConfig& cfg, int64_t S, GPTCache& c) {
  const int64_t C = cfg.n_embd, L = cfg.n_layer, NH = cfg.n_head, V = cfg.vocab_size,
                KC = int64_t(cfg.kv_head()) * cfg.head_dim(), QK = cfg.qk_norm ? NH + cfg.kv_head() : 0;
  return {{&c.k, L * S * KC},  {&c.v, L * S * KC},      {&c.x, C},
          {&c.ln, C},          {&c.qkv, cfg.qkv_width()}, {&c.qk_in, QK * cfg.head_dim()},
          {&c.qk_rstd, QK},    {&c.atty, cfg.attn_width()}, {&c.proj, C},
          {&c.fch, cfg.fc_width()}, {&c.logits, V},      {&c.att, L * NH * S},
          {&c.mean, 1},        {&c.rstd, 1}};
}

// The cache's positions for a model used at T: its first size, or T's, within block_size.
int64_t cache_positions(const GPTConfig& cfg, int T) {
  return std::min<int64_t>(cfg.block_size, std::max(T, kCacheStart));
}

// RoPE's cos and sin tables and ALiBi's slopes, in floats.
int64_t table_floats(const GPTConfig& cfg) {
  return int64_t(cfg.block_size) * cfg.rot_dims() + (cfg.pos == Positions::alibi ? cfg.n_head : 0);
}

}  // namespace

int64_t GPTConfig::num_parameters() const {
  GPTParams views;
  int64_t n = 0;
  for (const ParamSlot& t : param_layout(*this, views)) n += shape_numel(t.shape);
  return n;
}

std::vector<ParamTensor> param_tensors(const GPTConfig& cfg) {
  GPTParams views;
  std::vector<ParamTensor> out;
  int64_t offset = 0;
  for (ParamSlot& t : param_layout(cfg, views)) {
    const int64_t n = shape_numel(t.shape);
    const bool decay = t.shape.size() >= 2;
    out.push_back({std::move(t.name), std::move(t.shape), offset, n, decay});
    offset += n;
  }
  return out;
}

GPTParams param_views(float* base, const GPTConfig& cfg) {
  GPTParams v;
  float* at = base;
  for (const ParamSlot& t : param_layout(cfg, v)) {
    *t.view = at;
    at += shape_numel(t.shape);
  }
  return v;
}

// ---------------------------------------------------------------- the model

GPT::GPT(const GPTConfig& config, ModelUse use) : config_(config), use_(use), opened_(use == ModelUse::infer) {
  config_.validate();
  check_memory(config_, 1, 1, use_, limit());
  tensors_ = param_tensors(config_);
  const int64_t n = config_.num_parameters();
  zeroed(params_, sz(n));
  n_params_ = n;
  param_base_ = params_.data();
  p_ = param_views(params_.data(), config_);
  if (use_ == ModelUse::train) {
    zeroed(grads_, sz(n));
    g_ = param_views(grads_.data(), config_);
  }
  make_tables();
}

void GPT::make_tables() {
  // As the stepper (attention.cpp): θ_i = base^(−2i/d_rot) in double, kept as float; the angle
  // position·θ_i in double, kept as float; its cos and sin in double, kept as float.
  const int pairs = config_.rot_dims() / 2, S = config_.block_size;
  rope_cos_.assign(sz(int64_t(S) * pairs), 0.0f);
  rope_sin_.assign(sz(int64_t(S) * pairs), 0.0f);
  const std::vector<double> scaled = config_.rope_scaling.on()
                                         ? rope_inverse_frequencies(config_.rope_base, config_.rot_dims(),
                                                                    config_.rope_scaling)
                                         : std::vector<double>();
  for (int i = 0; i < pairs; ++i) {
    const float theta = scaled.empty() ? static_cast<float>(std::pow(config_.rope_base, -2.0 * i / config_.rot_dims()))
                                       : static_cast<float>(scaled[sz(i)]);
    for (int p = 0; p < S; ++p) {
      const float phi = static_cast<float>(static_cast<double>(p) * static_cast<double>(theta));
      rope_cos_[sz(int64_t(p) * pairs + i)] = static_cast<float>(std::cos(static_cast<double>(phi)));
      rope_sin_[sz(int64_t(p) * pairs + i)] = static_cast<float>(std::sin(static_cast<double>(phi)));
    }
  }
  alibi_.clear();
  if (config_.pos == Positions::alibi)  // the paper's geometric sequence, as the stepper's default
    for (int h = 0; h < config_.n_head; ++h)
      alibi_.push_back(static_cast<float>(std::pow(2.0, -8.0 * (h + 1) / config_.n_head)));
}

void GPT::norm_forward(const kernels::Kernels& k, float* out, float* mean, float* rstd, const float* inp,
                       const float* w, const float* b, int N) const {
  if (config_.norm == Norm::rmsnorm) k.rmsnorm_forward(out, rstd, inp, w, N, config_.n_embd, config_.ln_eps);
  else k.layernorm_forward(out, mean, rstd, inp, w, b, N, config_.n_embd, config_.ln_eps);
}

void GPT::norm_backward(const kernels::Kernels& k, float* dinp, float* dw, float* db, const float* dout,
                        const float* inp, const float* w, const float* mean, const float* rstd, int N) const {
  if (config_.norm == Norm::rmsnorm) k.rmsnorm_backward(dinp, dw, dout, inp, w, rstd, N, config_.n_embd);
  else k.layernorm_backward(dinp, dw, db, dout, inp, w, mean, rstd, N, config_.n_embd);
}

void GPT::mlp_act_forward(const kernels::Kernels& k, float* out, const float* fch, int N) const {
  const int H = config_.inner();
  if (config_.mlp == Mlp::swiglu) k.swiglu_forward(out, fch, N, H);
  else if (config_.activation == Activation::gelu_new) k.gelu_new_forward(out, fch, N * H);
  else k.gelu_forward(out, fch, N * H);
}

GPT::GPT(ReplicaOf r)
    : config_(r.owner->config_), use_(ModelUse::train), opened_(r.owner->opened_), tensors_(r.owner->tensors_),
      p_(r.owner->p_), n_params_(r.owner->n_params_), param_base_(r.owner->param_base_),
      rope_cos_(r.owner->rope_cos_), rope_sin_(r.owner->rope_sin_), alibi_(r.owner->alibi_) {
  check_memory(config_, 1, 1, use_, limit());
  zeroed(grads_, sz(n_params_));
  g_ = param_views(grads_.data(), config_);
}

void GPT::make_trainable(int B, int T) {
  check_range(B, 1, kMaxBatch, "batch_size", "the batch size");
  check_range(T, 1, config_.block_size, "T", "the sequence length (at most block_size)");
  if (use_ == ModelUse::train) return reserve(B, T);
  check_memory(config_, B, T, ModelUse::train, limit());
  to_float32();  // typed weights: fine-tuning trains the float32 model
  set_threads(1);  // training's threads are the Trainer's (replicas sharing the batch)
  // the inference activations go first, so that the peak is the training model's alone
  FloatBuffer().swap(act_buffer_);
  std::vector<int>().swap(ids_);
  B_alloc_ = T_alloc_ = B_ = T_ = 0;
  has_targets_ = false;
  zeroed(grads_, params_.size());
  g_ = param_views(grads_.data(), config_);
  use_ = ModelUse::train;
  reserve(B, T);  // the training layouts: probs, losses, targets and the backward's scratch
}

void GPT::init_weights(uint64_t seed) {
  const float std_proj = 0.02f / std::sqrt(2.0f * static_cast<float>(config_.n_layer));
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const ParamTensor& t = tensors_[i];
    float* w = param_base_ + t.offset;
    const bool is_bias = t.name.size() > 5 && t.name.compare(t.name.size() - 5, 5, ".bias") == 0;
    const bool is_ln = t.name.find("ln_") != std::string::npos || t.name.find("_norm.") != std::string::npos;
    if (is_ln && !is_bias) {
      std::fill(w, w + t.numel, 1.0f);
    } else if (is_bias) {
      std::fill(w, w + t.numel, 0.0f);
    } else {
      const bool proj = t.name.find("c_proj.weight") != std::string::npos ||
                        t.name.find("down_proj.weight") != std::string::npos;
      const float stdev = proj ? std_proj : 0.02f;
      Rng rng(derive_seed(seed, i + 1));
      for (int64_t k = 0; k < t.numel; ++k) w[k] = stdev * rng.normal();
    }
  }
}

int64_t GPT::memory_bytes(const GPTConfig& cfg, int B, int T, ModelUse use, int64_t weight_bytes) {
  GPTActs a;
  GPTActGrads d;
  GPTCache c;
  const bool train = use == ModelUse::train;
  const bool typed = !train && weight_bytes >= 0;
  const int64_t floats = (train ? 4 : typed ? 0 : 1) * cfg.num_parameters() + floats_of(act_layout(cfg, B, T, a, use)) +
                         (train ? floats_of(act_grad_layout(cfg, B, T, d)) : 0) +
                         floats_of(cache_layout(cfg, cache_positions(cfg, T), c)) +
                         table_floats(cfg);
  const int64_t ints = (train ? 2 : 1) * int64_t(B) * T;  // ids (and targets)
  return int64_t(sizeof(float)) * floats + int64_t(sizeof(int)) * ints + (typed ? weight_bytes : 0);
}

void GPT::check_memory(const GPTConfig& cfg, int B, int T, ModelUse use, int64_t limit, int64_t weight_bytes) {
  const int64_t model = memory_bytes(cfg, 1, 1, use, weight_bytes);
  if (model > limit)
    throw InputError("this model has " + num(cfg.num_parameters()) + " parameters: " +
                         (use == ModelUse::train ? std::string("with their gradients and AdamW's moments it needs ")
                          : weight_bytes >= 0 ? "for inference (its weights as stored, " + num(weight_bytes >> 20) +
                                                    " MiB, with its KV cache) it needs "
                                              : std::string("for inference (with its KV cache) it needs ")) +
                         num(model >> 20) + " MiB, more than the limit of " + num(limit >> 20) + " MiB",
                     "n_embd");
  const int64_t batch = memory_bytes(cfg, B, T, use, weight_bytes);
  if (batch > limit)
    throw InputError("a batch of " + num(B) + " sequences of " + num(T) + " tokens needs " + num(batch >> 20) +
                         " MiB for this model, more than the limit of " + num(limit >> 20) +
                         " MiB: use a smaller batch_size or block_size",
                     "batch_size");
}

int64_t GPT::allocated_bytes() const {
  int64_t floats = 0;
  for (const FloatBuffer* v : {&params_, &grads_, &act_buffer_, &grad_buffer_, &cache_buffer_})
    floats += static_cast<int64_t>(v->capacity());
  floats += static_cast<int64_t>(rope_cos_.capacity() + rope_sin_.capacity() + alibi_.capacity());
  const int64_t ints = static_cast<int64_t>(ids_.capacity() + targets_.capacity());
  return int64_t(sizeof(float)) * floats + int64_t(sizeof(int)) * ints + static_cast<int64_t>(typed_bytes_.capacity()) +
         typed_owner_.bytes;
}

void GPT::reserve(int B, int T) {
  check_range(B, 1, kMaxBatch, "batch_size", "the batch size");
  check_range(T, 1, config_.block_size, "T", "the sequence length (at most block_size)");
  if (B <= B_alloc_ && T <= T_alloc_) return;
  B = std::max(B, B_alloc_);
  T = std::max(T, T_alloc_);
  check_memory(config_, B, T, use_, limit(), typed_weights());
  carve(act_buffer_, act_layout(config_, B, T, a_, use_));
  ids_.assign(sz(int64_t(B) * T), 0);
  if (use_ == ModelUse::train) {
    carve(grad_buffer_, act_grad_layout(config_, B, T, d_));
    targets_.assign(sz(int64_t(B) * T), 0);
  }
  B_alloc_ = B;
  T_alloc_ = T;
  B_ = T_ = 0;
  has_targets_ = false;
}

void GPT::check_ids(const int* ids, int n, const char* field) const {
  for (int i = 0; i < n; ++i)
    if (ids[i] < 0 || ids[i] >= config_.vocab_size)
      throw InputError(std::string(field) + " has " + num(ids[i]) + " at position " + num(i) +
                           ", outside the vocabulary of " + num(config_.vocab_size) + " tokens",
                       field);
}

float GPT::forward(const int* ids, const int* targets, int B, int T) {
  check_range(B, 1, kMaxBatch, "batch_size", "the batch size");
  check_range(T, 1, config_.block_size, "T", "the sequence length (at most block_size)");
  check_ids(ids, B * T, "ids");
  if (targets && use_ != ModelUse::train)
    throw InputError("this model was opened for inference: it computes no loss until made trainable", "targets");
  if (targets) check_ids(targets, B * T, "targets");
  reserve(B, T);
  B_ = B;
  T_ = T;
  has_targets_ = targets != nullptr;
  const int C = config_.n_embd, NH = config_.n_head, V = config_.vocab_size, BT = B * T, W = config_.qkv_width(),
            FC = config_.fc_width(), H = config_.inner(), hs = config_.head_dim(), NR = NH + config_.kv_head(),
            A = config_.attn_width();
  std::copy(ids, ids + BT, ids_.begin());
  if (targets) std::copy(targets, targets + BT, targets_.begin());
  const kernels::Kernels& k = kernels::active();

  // att is laid out (B, NH, T, T) for this call's T: views stay valid for any T ≤ T_alloc.
  embed(k, a_.encoded, ids_.data(), B, T, 0);                              // (B, T, C)
  const float* residual = a_.encoded;
  for (int l = 0; l < config_.n_layer; ++l) {
    const BlockParams& w = p_.h[sz(l)];
    const TypedBlock* tw = typed_ ? &tb_[sz(l)] : nullptr;
    BlockActs& a = a_.h[sz(l)];
    norm_rows(k, a.ln_1, a.ln_1_mean, a.ln_1_rstd, residual, w.ln_1_w, w.ln_1_b, BT);
    linear(k, a.qkv, a.ln_1, w.c_attn_w, tw ? &tw->c_attn : nullptr, w.c_attn_b, BT, C, W);  // (B, T, W): q | k | v
    if (config_.qk_norm) qk_norm_forward(k, a.qkv, a.qk_in, a.qk_rstd, w, BT);
    if (config_.pos == Positions::rope) k.rope_forward(a.qkv, B, T, W, NR, hs, 0, rope_table());  // q, k turned
    attention(k, a.atty, a.att, a.qkv, B, T);                                // (B, T, A)
    linear(k, a.residual2, a.atty, w.attn_c_proj_w, tw ? &tw->attn_c_proj : nullptr, w.attn_c_proj_b, BT, A, C);
    residual_add(k, a.residual2, residual, a.residual2, int64_t(BT) * C);       // x + attn(…)
    norm_rows(k, a.ln_2, a.ln_2_mean, a.ln_2_rstd, a.residual2, w.ln_2_w, w.ln_2_b, BT);
    linear(k, a.fch, a.ln_2, w.c_fc_w, tw ? &tw->c_fc : nullptr, w.c_fc_b, BT, C, FC);  // (B, T, FC)
    mlp_act_rows(k, a.fch_gelu, a.fch, BT);                                 // (B, T, H)
    linear(k, a.residual3, a.fch_gelu, w.mlp_c_proj_w, tw ? &tw->mlp_c_proj : nullptr, w.mlp_c_proj_b, BT, H, C);
    residual_add(k, a.residual3, a.residual2, a.residual3, int64_t(BT) * C);  // x + mlp(…)
    residual = a.residual3;
  }
  norm_rows(k, a_.ln_f, a_.ln_f_mean, a_.ln_f_rstd, residual, p_.ln_f_w, p_.ln_f_b, BT);
  linear(k, a_.logits, a_.ln_f, p_.lm_head ? p_.lm_head : p_.wte, typed_head(), nullptr, BT, C, V);  // (B, T, V)
  if (!targets) return std::numeric_limits<float>::quiet_NaN();
  k.crossentropy_forward(a_.losses, a_.probs, a_.logits, targets_.data(), BT, V);
  // The mean in float, summed in order (as autograd's cross_entropy).
  float sum = 0.0f;
  for (int i = 0; i < BT; ++i) sum += a_.losses[i];
  return sum / static_cast<float>(BT);
}

void GPT::set_threads(int n) {
  if (n == threads()) return;
  pool_ = n == 1 ? nullptr : std::make_unique<ThreadPool>(n);  // ThreadPool checks n
}

template <class F>
void GPT::split(int64_t n, int64_t unit, int64_t work, F f) {
  const int parts = threads();
  const int64_t units = (n + unit - 1) / unit;
  if (parts == 1 || units < 2 || work < kMinSplit) return f(int64_t(0), n);
  auto bound = [&](int i) { return std::min(n, units * i / parts * unit); };
  auto part = [&](int i) {
    const int64_t lo = bound(i), hi = bound(i + 1);
    if (lo < hi) f(lo, hi);
  };
  pool_->run(part);
}

void GPT::linear(const kernels::Kernels& k, float* out, const float* inp, const float* w, const float* b, int N, int C,
                 int OC) {
  auto product = [&](int lo, int hi) {  // its columns straight into place (rows OC apart)
    k.matmul_forward_into(out + lo, OC, inp, w + size_t(lo) * sz(C), b ? b + lo : nullptr, N, C, hi - lo);
  };  // every column group on one thread as a wide product computes it: the same bits
  if (int64_t(N) * C * OC < kMinSplit || !split_columns(OC, product)) k.matmul_forward(out, inp, w, b, N, C, OC);
}

void GPT::residual_add(const kernels::Kernels& k, float* out, const float* a, const float* b, int64_t n) {
  split(n, 64, n, [&](int64_t lo, int64_t hi) { k.residual_forward(out + lo, a + lo, b + lo, static_cast<int>(hi - lo)); });
}

void GPT::attention(const kernels::Kernels& k, float* out, float* att, const float* qkv, int B, int T) {
  const int NH = config_.n_head, A = config_.attn_width();
  const kernels::AttnOptions opt = attn_options();
  const int64_t work = int64_t(B) * T * T * A;
  split(NH, 1, work, [&](int64_t lo, int64_t hi) {
    kernels::AttnOptions o = opt;
    o.head_lo = static_cast<int>(lo);
    o.head_hi = static_cast<int>(hi);
    k.attention_forward(out, att, qkv, B, T, A, NH, o);
  });
}

void GPT::norm_rows(const kernels::Kernels& k, float* out, float* mean, float* rstd, const float* inp,
                    const float* w, const float* b, int N) {
  const int64_t C = config_.n_embd;
  split(N, 1, N * C, [&](int64_t lo, int64_t hi) {
    norm_forward(k, out + lo * C, mean ? mean + lo : nullptr, rstd + lo, inp + lo * C, w, b, static_cast<int>(hi - lo));
  });
}

void GPT::mlp_act_rows(const kernels::Kernels& k, float* out, const float* fch, int N) {
  const int64_t H = config_.inner(), FC = config_.fc_width();
  split(N, 1, N * H, [&](int64_t lo, int64_t hi) {
    mlp_act_forward(k, out + lo * H, fch + lo * FC, static_cast<int>(hi - lo));
  });
}

void GPT::zero_grad() { std::fill(grads_.begin(), grads_.end(), 0.0f); }

void GPT::backward(int64_t loss_rows) {
  if (use_ != ModelUse::train)
    throw InputError("this model was opened for inference: make it trainable before a backward pass", "targets");
  if (!has_targets_)
    throw InputError("backward needs a forward pass with targets first", "targets");
  const int B = B_, T = T_, C = config_.n_embd, NH = config_.n_head, V = config_.vocab_size, BT = B * T,
            W = config_.qkv_width(), FC = config_.fc_width(), H = config_.inner(), hs = config_.head_dim(),
            NR = NH + config_.kv_head(), A = config_.attn_width();
  const kernels::AttnOptions opt = attn_options();
  const kernels::Kernels& k = kernels::active();
  auto zero = [](float* x, int64_t n) { std::memset(x, 0, sizeof(float) * sz(n)); };

  // loss = mean(losses): each row's dloss is 1/(B·T) (of the whole batch, for a share of one)
  const float rows = static_cast<float>(loss_rows > 0 ? loss_rows : int64_t(BT));
  zero(d_.logits, int64_t(BT) * V);
  k.crossentropy_backward(d_.logits, a_.probs, targets_.data(), 1.0f / rows, BT, V);
  // logits = ln_f · headᵀ (wte, the tied lm_head, or lm_head)
  zero(d_.ln, int64_t(BT) * C);
  k.matmul_backward(d_.ln, g_.lm_head ? g_.lm_head : g_.wte, nullptr, d_.logits, a_.ln_f, head(), BT, C, V);
  const float* last = config_.n_layer ? a_.h.back().residual3 : a_.encoded;
  zero(d_.residual, int64_t(BT) * C);
  norm_backward(k, d_.residual, g_.ln_f_w, g_.ln_f_b, d_.ln, last, p_.ln_f_w, a_.ln_f_mean, a_.ln_f_rstd, BT);

  for (int l = config_.n_layer - 1; l >= 0; --l) {
    const BlockParams& w = p_.h[sz(l)];
    const BlockParams& dw = g_.h[sz(l)];
    const BlockActs& a = a_.h[sz(l)];
    const float* residual = l == 0 ? a_.encoded : a_.h[sz(l - 1)].residual3;
    // d_.residual holds ∂L/∂residual3. residual3 = residual2 + mlp.c_proj(fch_gelu): the
    // projection's output gradient is d_.residual itself, and it flows on to residual2 unchanged.
    zero(d_.fch_gelu, int64_t(BT) * H);
    k.matmul_backward(d_.fch_gelu, dw.mlp_c_proj_w, dw.mlp_c_proj_b, d_.residual, a.fch_gelu, w.mlp_c_proj_w, BT, H,
                      C);
    zero(d_.fch, int64_t(BT) * FC);
    if (config_.mlp == Mlp::swiglu) k.swiglu_backward(d_.fch, a.fch, d_.fch_gelu, BT, H);
    else if (config_.activation == Activation::gelu_new) k.gelu_new_backward(d_.fch, a.fch, d_.fch_gelu, BT * H);
    else k.gelu_backward(d_.fch, a.fch, d_.fch_gelu, BT * H);
    zero(d_.ln, int64_t(BT) * C);
    k.matmul_backward(d_.ln, dw.c_fc_w, dw.c_fc_b, d_.fch, a.ln_2, w.c_fc_w, BT, C, FC);
    // ln_2's input is residual2: its gradient adds to the residual stream's → ∂L/∂residual2.
    norm_backward(k, d_.residual, dw.ln_2_w, dw.ln_2_b, d_.ln, a.residual2, w.ln_2_w, a.ln_2_mean, a.ln_2_rstd, BT);
    // residual2 = residual + attn.c_proj(atty)
    zero(d_.atty, int64_t(BT) * A);
    k.matmul_backward(d_.atty, dw.attn_c_proj_w, dw.attn_c_proj_b, d_.residual, a.atty, w.attn_c_proj_w, BT, A, C);
    zero(d_.qkv, int64_t(BT) * W);
    k.attention_backward(d_.qkv, d_.scratch, d_.atty, a.qkv, a.att, B, T, A, NH, opt);
    if (config_.pos == Positions::rope) k.rope_backward(d_.qkv, B, T, W, NR, hs, 0, rope_table());
    if (config_.qk_norm) {  // ∂L/∂(normed q, k) → ∂L/∂(c_attn's q, k), through each head's RMSNorm
      const int QK = NR * hs;
      for (int r = 0; r < BT; ++r) {
        float* dq = d_.qkv + int64_t(r) * W;
        float* dn = d_.qk + int64_t(r) * QK;
        std::memcpy(dn, dq, sizeof(float) * sz(QK));
        std::memset(dq, 0, sizeof(float) * sz(QK));
        const float* in = a.qk_in + int64_t(r) * QK;
        const float* rstd = a.qk_rstd + int64_t(r) * NR;
        k.rmsnorm_backward(dq, dw.q_norm_w, dn, in, w.q_norm_w, rstd, NH, hs);
        k.rmsnorm_backward(dq + NH * hs, dw.k_norm_w, dn + NH * hs, in + NH * hs, w.k_norm_w, rstd + NH, NR - NH, hs);
      }
    }
    zero(d_.ln, int64_t(BT) * C);
    k.matmul_backward(d_.ln, dw.c_attn_w, dw.c_attn_b, d_.qkv, a.ln_1, w.c_attn_w, BT, C, W);
    norm_backward(k, d_.residual, dw.ln_1_w, dw.ln_1_b, d_.ln, residual, w.ln_1_w, a.ln_1_mean, a.ln_1_rstd, BT);
  }
  k.encoder_backward(g_.wte, g_.wpe, d_.residual, ids_.data(), B, T, C);
}

// ---------------------------------------------------------------- the KV cache

void GPT::cache_reset() {
  if (cache_buffer_.empty()) {
    cache_cap_ = static_cast<int>(std::min(config_.block_size, kCacheStart));
    carve(cache_buffer_, cache_layout(config_, cache_cap_, c_));
  }
  cache_len_ = 0;
}

void GPT::grow_cache() {
  const int cap = std::min(config_.block_size, 2 * cache_cap_);
  GPTCache c{};
  const int64_t now = static_cast<int64_t>(cache_buffer_.capacity()) * int64_t(sizeof(float));
  const int64_t after = allocated_bytes() - now + floats_of(cache_layout(config_, cap, c)) * int64_t(sizeof(float));
  if (after > limit())
    throw InputError("the KV cache of " + num(cap) + " positions would take the model to " + num(after >> 20) +
                         " MiB, more than the limit of " + num(limit() >> 20) + " MiB",
                     "cache");
  FloatBuffer grown;
  carve(grown, cache_layout(config_, cap, c));
  const int64_t KC = int64_t(config_.kv_head()) * config_.head_dim();
  for (int l = 0; l < config_.n_layer; ++l) {  // each layer's keys and values to their new place
    std::memcpy(c.k + l * cap * KC, c_.k + l * cache_cap_ * KC, sizeof(float) * sz(cache_len_ * KC));
    std::memcpy(c.v + l * cap * KC, c_.v + l * cache_cap_ * KC, sizeof(float) * sz(cache_len_ * KC));
  }
  std::memcpy(c.x, c_.x, sizeof(float) * sz(config_.n_embd));
  cache_buffer_.swap(grown);
  c_ = c;
  cache_cap_ = cap;
}

void GPT::qk_norm_forward(const kernels::Kernels& k, float* qkv, float* qk_in, float* rstd, const BlockParams& w,
                          int N) const {
  const int NH = config_.n_head, NR = NH + config_.kv_head(), hs = config_.head_dim(), W = config_.qkv_width(),
            QK = NR * hs;
  for (int r = 0; r < N; ++r) {
    float* row = qkv + int64_t(r) * W;
    float* in = qk_in + int64_t(r) * QK;
    float* rs = rstd + int64_t(r) * NR;
    std::memcpy(in, row, sizeof(float) * sz(QK));
    k.rmsnorm_forward(row, rs, in, w.q_norm_w, NH, hs, config_.ln_eps);
    k.rmsnorm_forward(row + NH * hs, rs + NH, in + NH * hs, w.k_norm_w, NR - NH, hs, config_.ln_eps);
  }
}

const float* GPT::cache_step(int token) {
  if (cache_buffer_.empty()) cache_reset();
  if (cache_len_ >= config_.block_size)
    throw InputError("the KV cache is full: it holds block_size = " + num(config_.block_size) +
                         " positions (crop the context and start again)",
                     "cache");
  check_ids(&token, 1, "token");
  if (cache_len_ >= cache_cap_) grow_cache();
  const int C = config_.n_embd, NH = config_.n_head, V = config_.vocab_size, S = cache_cap_,
            W = config_.qkv_width(), FC = config_.fc_width(), H = config_.inner(), hs = config_.head_dim(),
            KC = config_.kv_head() * hs, A = config_.attn_width();
  const int pos = cache_len_;  // the stepper's base: the number of cached positions
  const kernels::AttnOptions opt = attn_options();
  const kernels::Kernels& k = kernels::active();
  // Position pos alone, with the same kernels as the full forward (N = 1 row).
  embed(k, c_.x, &token, 1, 1, pos);
  for (int l = 0; l < config_.n_layer; ++l) {
    const BlockParams& w = p_.h[sz(l)];
    const TypedBlock* tw = typed_ ? &tb_[sz(l)] : nullptr;
    float* k_cache = c_.k + int64_t(l) * S * KC;
    float* v_cache = c_.v + int64_t(l) * S * KC;
    norm_forward(k, c_.ln, c_.mean, c_.rstd, c_.x, w.ln_1_w, w.ln_1_b, 1);
    linear(k, c_.qkv, c_.ln, w.c_attn_w, tw ? &tw->c_attn : nullptr, w.c_attn_b, 1, C, W);
    if (config_.qk_norm) qk_norm_forward(k, c_.qkv, c_.qk_in, c_.qk_rstd, w, 1);
    // RoPE at the absolute position pos: the cached keys are kept turned
    if (config_.pos == Positions::rope) k.rope_forward(c_.qkv, 1, 1, W, NH + config_.kv_head(), hs, pos, rope_table());
    std::memcpy(k_cache + int64_t(pos) * KC, c_.qkv + A, sizeof(float) * sz(KC));
    std::memcpy(v_cache + int64_t(pos) * KC, c_.qkv + A + KC, sizeof(float) * sz(KC));
    float* att = c_.att + int64_t(l) * NH * S;
    k.attention_decode(c_.atty, att, c_.qkv, k_cache, v_cache, pos, A, NH, opt);
    linear(k, c_.proj, c_.atty, w.attn_c_proj_w, tw ? &tw->attn_c_proj : nullptr, w.attn_c_proj_b, 1, A, C);
    k.residual_forward(c_.x, c_.x, c_.proj, C);
    norm_forward(k, c_.ln, c_.mean, c_.rstd, c_.x, w.ln_2_w, w.ln_2_b, 1);
    linear(k, c_.fch, c_.ln, w.c_fc_w, tw ? &tw->c_fc : nullptr, w.c_fc_b, 1, C, FC);
    mlp_act_forward(k, c_.fch, c_.fch, 1);  // in place: the first H floats
    linear(k, c_.proj, c_.fch, w.mlp_c_proj_w, tw ? &tw->mlp_c_proj : nullptr, w.mlp_c_proj_b, 1, H, C);
    k.residual_forward(c_.x, c_.x, c_.proj, C);
  }
  norm_forward(k, c_.ln, c_.mean, c_.rstd, c_.x, p_.ln_f_w, p_.ln_f_b, 1);
  linear(k, c_.logits, c_.ln, p_.lm_head ? p_.lm_head : p_.wte, typed_head(), nullptr, 1, C, V);
  cache_len_ = pos + 1;
  return c_.logits;
}

const float* GPT::cache_attention(int layer) const { return c_.att + int64_t(layer) * config_.n_head * cache_cap_; }
const float* GPT::cache_keys(int layer) const {
  return c_.k + int64_t(layer) * cache_cap_ * config_.kv_head() * config_.head_dim();
}
const float* GPT::cache_values(int layer) const {
  return c_.v + int64_t(layer) * cache_cap_ * config_.kv_head() * config_.head_dim();
}

}  // namespace ap
