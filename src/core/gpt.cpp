// gpt.cpp — the tiny GPT's config, parameter layout, forward, backward and KV cache (see gpt.h).
#include "gpt.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "rng.h"

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

GPTConfig GPTConfig::tiny(int vocab_size) {
  GPTConfig c;
  c.vocab_size = vocab_size;
  c.block_size = 64;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 64;
  return c;
}

GPTConfig GPTConfig::small(int vocab_size) {
  GPTConfig c;
  c.vocab_size = vocab_size;
  c.block_size = 128;
  c.n_layer = 4;
  c.n_head = 4;
  c.n_embd = 128;
  return c;
}

GPTConfig GPTConfig::preset(const std::string& name, int vocab_size) {
  if (name == "tiny") return tiny(vocab_size);
  if (name == "small") return small(vocab_size);
  throw InputError("unknown preset \"" + name + "\": the presets are \"tiny\" and \"small\"", "preset");
}

int64_t GPTConfig::num_parameters() const {
  const int64_t C = n_embd, L = n_layer;
  const int64_t block = 2 * C + (3 * C * C + 3 * C) + (C * C + C) + 2 * C + (4 * C * C + 4 * C) + (4 * C * C + C);
  return int64_t(vocab_size) * C + int64_t(block_size) * C + L * block + 2 * C;
}

void GPTConfig::validate() const {
  check_range(vocab_size, 1, kMaxModelVocab, "vocab_size", "the vocabulary size");
  check_range(block_size, 1, kMaxBlockSize, "block_size", "the context length");
  check_range(n_layer, 1, kMaxLayers, "n_layer", "the number of layers");
  check_range(n_head, 1, kMaxHeads, "n_head", "the number of heads");
  check_range(n_embd, 1, kMaxEmbd, "n_embd", "the embedding width");
  if (n_embd % n_head != 0)
    throw InputError("n_embd is " + num(n_embd) + ", which " + num(n_head) +
                         " heads cannot share equally (n_head must divide n_embd)",
                     "n_head");
}

bool GPTConfig::operator==(const GPTConfig& o) const {
  return vocab_size == o.vocab_size && block_size == o.block_size && n_layer == o.n_layer && n_head == o.n_head &&
         n_embd == o.n_embd && mask == o.mask && stable_softmax == o.stable_softmax;
}

// ---------------------------------------------------------------- parameter layout

std::vector<ParamTensor> param_tensors(const GPTConfig& cfg) {
  const int V = cfg.vocab_size, C = cfg.n_embd;
  std::vector<ParamTensor> out;
  int64_t offset = 0;
  auto add = [&](const std::string& name, Shape shape) {
    const int64_t n = shape_numel(shape);
    const bool decay = shape.size() >= 2;
    out.push_back({name, std::move(shape), offset, n, decay});
    offset += n;
  };
  add("transformer.wte.weight", {V, C});
  add("transformer.wpe.weight", {cfg.block_size, C});
  for (int l = 0; l < cfg.n_layer; ++l) {
    const std::string h = "transformer.h." + std::to_string(l) + ".";
    add(h + "ln_1.weight", {C});
    add(h + "ln_1.bias", {C});
    add(h + "attn.c_attn.weight", {3 * C, C});
    add(h + "attn.c_attn.bias", {3 * C});
    add(h + "attn.c_proj.weight", {C, C});
    add(h + "attn.c_proj.bias", {C});
    add(h + "ln_2.weight", {C});
    add(h + "ln_2.bias", {C});
    add(h + "mlp.c_fc.weight", {4 * C, C});
    add(h + "mlp.c_fc.bias", {4 * C});
    add(h + "mlp.c_proj.weight", {C, 4 * C});
    add(h + "mlp.c_proj.bias", {C});
  }
  add("transformer.ln_f.weight", {C});
  add("transformer.ln_f.bias", {C});
  return out;
}

GPTParams param_views(float* base, const GPTConfig& cfg) {
  // Walks the same order as param_tensors.
  const int64_t V = cfg.vocab_size, C = cfg.n_embd;
  float* p = base;
  auto take = [&p](int64_t n) {
    float* at = p;
    p += n;
    return at;
  };
  GPTParams v;
  v.wte = take(V * C);
  v.wpe = take(int64_t(cfg.block_size) * C);
  v.h.resize(sz(cfg.n_layer));
  for (BlockParams& b : v.h) {
    b.ln_1_w = take(C);
    b.ln_1_b = take(C);
    b.c_attn_w = take(3 * C * C);
    b.c_attn_b = take(3 * C);
    b.attn_c_proj_w = take(C * C);
    b.attn_c_proj_b = take(C);
    b.ln_2_w = take(C);
    b.ln_2_b = take(C);
    b.c_fc_w = take(4 * C * C);
    b.c_fc_b = take(4 * C);
    b.mlp_c_proj_w = take(4 * C * C);
    b.mlp_c_proj_b = take(C);
  }
  v.ln_f_w = take(C);
  v.ln_f_b = take(C);
  return v;
}

// ---------------------------------------------------------------- the model

GPT::GPT(const GPTConfig& config) : config_(config) {
  config_.validate();
  tensors_ = param_tensors(config_);
  const int64_t n = config_.num_parameters();
  if (memory_bytes(config_, 1, 1) > kMaxModelBytes)
    throw InputError("this model has " + num(n) + " parameters: with their gradients and AdamW's moments it needs " +
                         num(memory_bytes(config_, 1, 1) >> 20) + " MiB, more than the limit of " +
                         num(kMaxModelBytes >> 20) + " MiB",
                     "n_embd");
  params_.assign(sz(n), 0.0f);
  grads_.assign(sz(n), 0.0f);
  p_ = param_views(params_.data(), config_);
  g_ = param_views(grads_.data(), config_);
}

void GPT::init_weights(uint64_t seed) {
  const float std_proj = 0.02f / std::sqrt(2.0f * static_cast<float>(config_.n_layer));
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const ParamTensor& t = tensors_[i];
    float* w = params_.data() + t.offset;
    const bool is_bias = t.name.size() > 5 && t.name.compare(t.name.size() - 5, 5, ".bias") == 0;
    const bool is_ln = t.name.find("ln_") != std::string::npos;
    if (is_ln && !is_bias) {
      std::fill(w, w + t.numel, 1.0f);
    } else if (is_bias) {
      std::fill(w, w + t.numel, 0.0f);
    } else {
      const bool proj = t.name.find("c_proj.weight") != std::string::npos;
      const float stdev = proj ? std_proj : 0.02f;
      Rng rng(derive_seed(seed, i + 1));
      for (int64_t k = 0; k < t.numel; ++k) w[k] = stdev * rng.normal();
    }
  }
}

int64_t GPT::memory_bytes(const GPTConfig& cfg, int B, int T) {
  const int64_t C = cfg.n_embd, L = cfg.n_layer, NH = cfg.n_head, V = cfg.vocab_size;
  const int64_t BT = int64_t(B) * T;
  const int64_t per_layer = BT * C * 6 + BT * 4 + BT * 3 * C + int64_t(B) * NH * T * T + BT * 4 * C * 2;
  const int64_t acts = BT * C + L * per_layer + BT * C + 2 * BT + 2 * BT * V + BT;
  const int64_t grads = BT * C * 3 + BT * 3 * C + BT * 4 * C * 2 + BT * V + T;
  return 4 * (4 * cfg.num_parameters() + acts + grads);
}

void GPT::reserve(int B, int T) {
  check_range(B, 1, kMaxBatch, "batch_size", "the batch size");
  check_range(T, 1, config_.block_size, "T", "the sequence length (at most block_size)");
  if (B <= B_alloc_ && T <= T_alloc_) return;
  B = std::max(B, B_alloc_);
  T = std::max(T, T_alloc_);
  if (memory_bytes(config_, B, T) > kMaxModelBytes)
    throw InputError("a batch of " + num(B) + " sequences of " + num(T) + " tokens needs " +
                         num(memory_bytes(config_, B, T) >> 20) + " MiB for this model, more than the limit of " +
                         num(kMaxModelBytes >> 20) + " MiB: use a smaller batch_size or block_size",
                     "batch_size");
  const int64_t C = config_.n_embd, NH = config_.n_head, V = config_.vocab_size;
  const int64_t BT = int64_t(B) * T;

  // Sizes first, in one list, so the buffer is one allocation and the views are carved in order.
  const int64_t per_layer = 3 * BT * C + 2 * BT + BT * 3 * C + int64_t(B) * NH * T * T + 2 * BT * C + 2 * BT +
                            2 * BT * 4 * C;
  act_buffer_.assign(sz(BT * C + config_.n_layer * per_layer + BT * C + 2 * BT + 2 * BT * V + BT), 0.0f);
  float* p = act_buffer_.data();
  auto take = [&p](int64_t n) {
    float* at = p;
    p += n;
    return at;
  };
  encoded_ = take(BT * C);
  acts_.assign(sz(config_.n_layer), BlockActs{});
  for (BlockActs& a : acts_) {
    a.ln_1 = take(BT * C);
    a.ln_1_mean = take(BT);
    a.ln_1_rstd = take(BT);
    a.qkv = take(BT * 3 * C);
    a.atty = take(BT * C);
    a.att = take(int64_t(B) * NH * T * T);
    a.residual2 = take(BT * C);
    a.ln_2 = take(BT * C);
    a.ln_2_mean = take(BT);
    a.ln_2_rstd = take(BT);
    a.fch = take(BT * 4 * C);
    a.fch_gelu = take(BT * 4 * C);
    a.residual3 = take(BT * C);
  }
  ln_f_ = take(BT * C);
  ln_f_mean_ = take(BT);
  ln_f_rstd_ = take(BT);
  logits_ = take(BT * V);
  probs_ = take(BT * V);
  losses_ = take(BT);

  const int64_t scratch = static_cast<int64_t>(kernels::attention_backward_scratch_max(B, T, int(C), int(NH)));
  grad_buffer_.assign(sz(3 * BT * C + BT * 3 * C + 2 * BT * 4 * C + BT * V + scratch), 0.0f);
  p = grad_buffer_.data();
  d_residual_ = take(BT * C);
  d_ln_ = take(BT * C);
  d_qkv_ = take(BT * 3 * C);
  d_atty_ = take(BT * C);
  d_fch_ = take(BT * 4 * C);
  d_fch_gelu_ = take(BT * 4 * C);
  d_logits_ = take(BT * V);
  d_scratch_ = take(scratch);

  ids_.assign(sz(BT), 0);
  targets_.assign(sz(BT), 0);
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
  if (targets) check_ids(targets, B * T, "targets");
  reserve(B, T);
  B_ = B;
  T_ = T;
  has_targets_ = targets != nullptr;
  const int C = config_.n_embd, NH = config_.n_head, V = config_.vocab_size, BT = B * T;
  std::copy(ids, ids + BT, ids_.begin());
  if (targets) std::copy(targets, targets + BT, targets_.begin());
  const kernels::AttnOptions opt = attn_options();
  const kernels::Kernels& k = kernels::active();

  // att is laid out (B, NH, T, T) for this call's T: views stay valid for any T ≤ T_alloc.
  k.encoder_forward(encoded_, ids_.data(), p_.wte, p_.wpe, B, T, C);  // (B, T, C)
  const float* residual = encoded_;
  for (int l = 0; l < config_.n_layer; ++l) {
    const BlockParams& w = p_.h[sz(l)];
    BlockActs& a = acts_[sz(l)];
    k.layernorm_forward(a.ln_1, a.ln_1_mean, a.ln_1_rstd, residual, w.ln_1_w, w.ln_1_b, BT, C);
    k.matmul_forward(a.qkv, a.ln_1, w.c_attn_w, w.c_attn_b, BT, C, 3 * C);     // (B, T, 3C)
    k.attention_forward(a.atty, a.att, a.qkv, B, T, C, NH, opt);               // (B, T, C)
    k.matmul_forward(a.residual2, a.atty, w.attn_c_proj_w, w.attn_c_proj_b, BT, C, C);
    k.residual_forward(a.residual2, residual, a.residual2, BT * C);            // x + attn(…)
    k.layernorm_forward(a.ln_2, a.ln_2_mean, a.ln_2_rstd, a.residual2, w.ln_2_w, w.ln_2_b, BT, C);
    k.matmul_forward(a.fch, a.ln_2, w.c_fc_w, w.c_fc_b, BT, C, 4 * C);         // (B, T, 4C)
    k.gelu_forward(a.fch_gelu, a.fch, BT * 4 * C);
    k.matmul_forward(a.residual3, a.fch_gelu, w.mlp_c_proj_w, w.mlp_c_proj_b, BT, 4 * C, C);
    k.residual_forward(a.residual3, a.residual2, a.residual3, BT * C);         // x + mlp(…)
    residual = a.residual3;
  }
  k.layernorm_forward(ln_f_, ln_f_mean_, ln_f_rstd_, residual, p_.ln_f_w, p_.ln_f_b, BT, C);
  k.matmul_forward(logits_, ln_f_, p_.wte, nullptr, BT, C, V);                 // (B, T, V)
  if (!targets) return std::numeric_limits<float>::quiet_NaN();
  k.crossentropy_forward(losses_, probs_, logits_, targets_.data(), BT, V);
  // The mean in float, summed in order (as autograd's cross_entropy).
  float sum = 0.0f;
  for (int i = 0; i < BT; ++i) sum += losses_[i];
  return sum / static_cast<float>(BT);
}

void GPT::zero_grad() { std::fill(grads_.begin(), grads_.end(), 0.0f); }

void GPT::backward() {
  if (!has_targets_)
    throw InputError("backward needs a forward pass with targets first", "targets");
  const int B = B_, T = T_, C = config_.n_embd, NH = config_.n_head, V = config_.vocab_size, BT = B * T;
  const kernels::AttnOptions opt = attn_options();
  const kernels::Kernels& k = kernels::active();
  auto zero = [](float* x, int64_t n) { std::memset(x, 0, sizeof(float) * sz(n)); };

  // loss = mean(losses): each row's dloss is 1/(B·T)
  zero(d_logits_, int64_t(BT) * V);
  k.crossentropy_backward(d_logits_, probs_, targets_.data(), 1.0f / static_cast<float>(BT), BT, V);
  // logits = ln_f · wteᵀ (the tied lm_head)
  zero(d_ln_, int64_t(BT) * C);
  k.matmul_backward(d_ln_, g_.wte, nullptr, d_logits_, ln_f_, p_.wte, BT, C, V);
  const float* last = config_.n_layer ? acts_.back().residual3 : encoded_;
  zero(d_residual_, int64_t(BT) * C);
  k.layernorm_backward(d_residual_, g_.ln_f_w, g_.ln_f_b, d_ln_, last, p_.ln_f_w, ln_f_mean_, ln_f_rstd_, BT, C);

  for (int l = config_.n_layer - 1; l >= 0; --l) {
    const BlockParams& w = p_.h[sz(l)];
    const BlockParams& dw = g_.h[sz(l)];
    const BlockActs& a = acts_[sz(l)];
    const float* residual = l == 0 ? encoded_ : acts_[sz(l - 1)].residual3;
    // d_residual_ holds ∂L/∂residual3. residual3 = residual2 + mlp.c_proj(fch_gelu): the
    // projection's output gradient is d_residual_ itself, and it flows on to residual2 unchanged.
    zero(d_fch_gelu_, int64_t(BT) * 4 * C);
    k.matmul_backward(d_fch_gelu_, dw.mlp_c_proj_w, dw.mlp_c_proj_b, d_residual_, a.fch_gelu, w.mlp_c_proj_w, BT,
                      4 * C, C);
    zero(d_fch_, int64_t(BT) * 4 * C);
    k.gelu_backward(d_fch_, a.fch, d_fch_gelu_, BT * 4 * C);
    zero(d_ln_, int64_t(BT) * C);
    k.matmul_backward(d_ln_, dw.c_fc_w, dw.c_fc_b, d_fch_, a.ln_2, w.c_fc_w, BT, C, 4 * C);
    // ln_2's input is residual2: its gradient adds to the residual stream's → ∂L/∂residual2.
    k.layernorm_backward(d_residual_, dw.ln_2_w, dw.ln_2_b, d_ln_, a.residual2, w.ln_2_w, a.ln_2_mean, a.ln_2_rstd,
                         BT, C);
    // residual2 = residual + attn.c_proj(atty)
    zero(d_atty_, int64_t(BT) * C);
    k.matmul_backward(d_atty_, dw.attn_c_proj_w, dw.attn_c_proj_b, d_residual_, a.atty, w.attn_c_proj_w, BT, C,
                      C);
    zero(d_qkv_, int64_t(BT) * 3 * C);
    k.attention_backward(d_qkv_, d_scratch_, d_atty_, a.qkv, a.att, B, T, C, NH, opt);
    zero(d_ln_, int64_t(BT) * C);
    k.matmul_backward(d_ln_, dw.c_attn_w, dw.c_attn_b, d_qkv_, a.ln_1, w.c_attn_w, BT, C, 3 * C);
    k.layernorm_backward(d_residual_, dw.ln_1_w, dw.ln_1_b, d_ln_, residual, w.ln_1_w, a.ln_1_mean, a.ln_1_rstd,
                         BT, C);
  }
  k.encoder_backward(g_.wte, g_.wpe, d_residual_, ids_.data(), B, T, C);
}

// ---------------------------------------------------------------- the KV cache

void GPT::cache_reset() {
  const int64_t C = config_.n_embd, L = config_.n_layer, NH = config_.n_head, V = config_.vocab_size;
  const int64_t S = config_.block_size;
  if (cache_k_.empty()) {
    cache_k_.assign(sz(L * S * C), 0.0f);
    cache_v_.assign(sz(L * S * C), 0.0f);
    cache_buf_.assign(sz(C + C + 3 * C + C + C + 4 * C + V + L * NH * S + 2), 0.0f);
    float* p = cache_buf_.data();
    auto take = [&p](int64_t n) {
      float* at = p;
      p += n;
      return at;
    };
    c_x_ = take(C);
    c_ln_ = take(C);
    c_qkv_ = take(3 * C);
    c_atty_ = take(C);
    c_proj_ = take(C);
    c_fch_ = take(4 * C);
    c_logits_ = take(V);
    c_att_ = take(L * NH * S);
    c_mean_ = take(1);
    c_rstd_ = take(1);
  }
  cache_len_ = 0;
}

const float* GPT::cache_step(int token) {
  if (cache_k_.empty()) cache_reset();
  if (cache_len_ >= config_.block_size)
    throw InputError("the KV cache is full: it holds block_size = " + num(config_.block_size) +
                         " positions (crop the context and start again)",
                     "cache");
  check_ids(&token, 1, "token");
  const int C = config_.n_embd, NH = config_.n_head, V = config_.vocab_size, S = config_.block_size;
  const int pos = cache_len_;  // the stepper's base: the number of cached positions
  const kernels::AttnOptions opt = attn_options();
  const kernels::Kernels& k = kernels::active();
  // Position pos alone, with the same kernels as the full forward (N = 1 row).
  k.encoder_forward(c_x_, &token, p_.wte, p_.wpe + int64_t(pos) * C, 1, 1, C);
  for (int l = 0; l < config_.n_layer; ++l) {
    const BlockParams& w = p_.h[sz(l)];
    float* k_cache = cache_k_.data() + int64_t(l) * S * C;
    float* v_cache = cache_v_.data() + int64_t(l) * S * C;
    k.layernorm_forward(c_ln_, c_mean_, c_rstd_, c_x_, w.ln_1_w, w.ln_1_b, 1, C);
    k.matmul_forward(c_qkv_, c_ln_, w.c_attn_w, w.c_attn_b, 1, C, 3 * C);
    std::memcpy(k_cache + int64_t(pos) * C, c_qkv_ + C, sizeof(float) * sz(C));
    std::memcpy(v_cache + int64_t(pos) * C, c_qkv_ + 2 * C, sizeof(float) * sz(C));
    float* att = c_att_ + int64_t(l) * NH * S;
    k.attention_decode(c_atty_, att, c_qkv_, k_cache, v_cache, pos, C, NH, opt);
    k.matmul_forward(c_proj_, c_atty_, w.attn_c_proj_w, w.attn_c_proj_b, 1, C, C);
    k.residual_forward(c_x_, c_x_, c_proj_, C);
    k.layernorm_forward(c_ln_, c_mean_, c_rstd_, c_x_, w.ln_2_w, w.ln_2_b, 1, C);
    k.matmul_forward(c_fch_, c_ln_, w.c_fc_w, w.c_fc_b, 1, C, 4 * C);
    k.gelu_forward(c_fch_, c_fch_, 4 * C);
    k.matmul_forward(c_proj_, c_fch_, w.mlp_c_proj_w, w.mlp_c_proj_b, 1, 4 * C, C);
    k.residual_forward(c_x_, c_x_, c_proj_, C);
  }
  k.layernorm_forward(c_ln_, c_mean_, c_rstd_, c_x_, p_.ln_f_w, p_.ln_f_b, 1, C);
  k.matmul_forward(c_logits_, c_ln_, p_.wte, nullptr, 1, C, V);
  cache_len_ = pos + 1;
  return c_logits_;
}

const float* GPT::cache_attention(int layer) const {
  return c_att_ + int64_t(layer) * config_.n_head * config_.block_size;
}
const float* GPT::cache_keys(int layer) const {
  return cache_k_.data() + int64_t(layer) * config_.block_size * config_.n_embd;
}
const float* GPT::cache_values(int layer) const {
  return cache_v_.data() + int64_t(layer) * config_.block_size * config_.n_embd;
}

}  // namespace ap
