// test_gpt.cpp — the tiny GPT (gpt.h) and its optimiser (optim.h):
//  - the presets' parameter counts (W3's 108,352 and 818,048) and the layout of the flat buffer;
//  - config validation, with the field at fault;
//  - the autograd oracle: the same model built from autograd.h's ops gives the same loss (bit for
//    bit with the reference kernels, whose arithmetic is the same) and the same gradient for
//    every parameter, for both masks and both softmaxes, in both kernel tiers;
//  - finite differences on the whole model: for each parameter tensor, the directional derivative
//    along a random direction inside that tensor against a central difference;
//  - the KV cache: cache_step's logits equal the full forward's at every position, for every
//    preset and both masks (bit for bit in the reference tier);
//  - AdamW, clipping and the schedule; overfitting one batch; no allocation in a training step.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "core/attention/attention.h"
#include "core/tensor/autograd.h"
#include "core/model/gpt.h"
#include "core/kernels/kernels.h"
#include "core/model/optim.h"
#include "core/base/rng.h"
#include "core/model/train.h"
#include "gpt_test_util.h"

// ------------------------------------------------------------------ allocation counter
// Replaces the global operator new for this test binary so that a test can assert that a
// training step allocates nothing. Counting is off except inside that test.
namespace {
std::atomic<long> g_allocations{0};
std::atomic<bool> g_count_allocations{false};
}  // namespace

// GCC warns (-Wmismatched-new-delete) where a replaced delete calls free() on memory from a
// replaced new: here both are malloc/free by design, so the warning is off for these functions.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  if (g_count_allocations.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// The nothrow form too (Catch2 registers its tests with new(std::nothrow)): left to the runtime's,
// its memory would reach the free() above, which AddressSanitizer reports as a new/free mismatch.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (g_count_allocations.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace {

using ap::GPT;
using ap::GPTConfig;
using ap::MaskVariant;
using ap::kernels::Tier;

using gpt_test_util::random_tokens;
using gpt_test_util::randomize;
using gpt_test_util::TierGuard;

GPTConfig small_config(MaskVariant mask, bool stable) {
  GPTConfig c;
  c.vocab_size = 11;
  c.block_size = 8;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 8;
  c.mask = mask;
  c.stable_softmax = stable;
  return c;
}

// ------------------------------------------------------------------ the autograd oracle
// The same GPT from autograd ops, with the tutorials' c_q, c_k, c_v as three Linear layers.
struct Oracle {
  std::vector<ap::Var> leaves;  // one per ParamTensor, with c_attn split in three
  ap::Var loss;
  // Gradient of ParamTensor i, assembled from the leaves.
  std::vector<std::vector<float>> grads;
};

ap::Var linear(const ap::Var& x, const ap::Var& W, const ap::Var& b) {
  return ap::add(ap::matmul(x, ap::transpose(W)), b);
}

Oracle build_oracle(const GPT& m, const std::vector<int>& ids, const std::vector<int>& targets, int B, int T) {
  const GPTConfig& cfg = m.config();
  const int C = cfg.n_embd, NH = cfg.n_head, hs = C / NH;
  Oracle o;
  auto leaf_of = [&](const ap::ParamTensor& t, int64_t offset, ap::Shape shape) {
    const float* p = m.params() + t.offset + offset;
    ap::Tensor v(shape, std::vector<float>(p, p + ap::shape_numel(shape)));
    return ap::leaf(std::move(v));
  };
  std::vector<ap::Var> by_tensor;  // the leaf (or the c_q leaf) of each ParamTensor
  std::vector<std::vector<ap::Var>> parts;
  for (const auto& t : m.tensors()) {
    if (t.name.find("c_attn") != std::string::npos) {
      const bool w = t.name.find("weight") != std::string::npos;
      std::vector<ap::Var> qkv;
      for (int i = 0; i < 3; ++i)
        qkv.push_back(w ? leaf_of(t, int64_t(i) * C * C, {C, C}) : leaf_of(t, int64_t(i) * C, {C}));
      parts.push_back(qkv);
    } else {
      parts.push_back({leaf_of(t, 0, t.shape)});
    }
  }
  size_t k = 0;
  auto next = [&]() -> std::vector<ap::Var>& { return parts[k++]; };
  const ap::Var wte = next()[0], wpe = next()[0];
  std::vector<int> pos(static_cast<size_t>(B * T));
  for (int i = 0; i < B * T; ++i) pos[static_cast<size_t>(i)] = i % T;
  ap::Var x = ap::add(ap::embedding(wte, ids), ap::embedding(wpe, pos));  // (B·T, C)
  const ap::Var mask = ap::constant(ap::causal_mask(T, T, 0, cfg.mask));
  for (int l = 0; l < cfg.n_layer; ++l) {
    const ap::Var ln1w = next()[0], ln1b = next()[0];
    const std::vector<ap::Var> Wqkv = next(), bqkv = next();
    const ap::Var Wo = next()[0], bo = next()[0], ln2w = next()[0], ln2b = next()[0];
    const ap::Var Wfc = next()[0], bfc = next()[0], Wp = next()[0], bp = next()[0];
    const ap::Var h = ap::layernorm(x, ln1w, ln1b);
    auto heads = [&](const ap::Var& a) {  // (B·T, C) → (B·NH, T, hs)
      return ap::reshape(ap::permute(ap::reshape(a, {B, T, NH, hs}), {0, 2, 1, 3}), {B * NH, T, hs});
    };
    const ap::Var q = heads(linear(h, Wqkv[0], bqkv[0]));
    const ap::Var kk = heads(linear(h, Wqkv[1], bqkv[1]));
    const ap::Var v = heads(linear(h, Wqkv[2], bqkv[2]));
    const ap::Var scaled = ap::scale(ap::matmul(q, ap::transpose(kk)), 1.0f / std::sqrt(static_cast<float>(hs)));
    const ap::Var att = ap::softmax_rows(ap::add(scaled, mask), cfg.stable_softmax);
    const ap::Var ctx = ap::reshape(ap::permute(ap::reshape(ap::matmul(att, v), {B, NH, T, hs}), {0, 2, 1, 3}),
                                    {B * T, C});
    x = ap::add(x, linear(ctx, Wo, bo));
    x = ap::add(x, linear(ap::gelu(linear(ap::layernorm(x, ln2w, ln2b), Wfc, bfc)), Wp, bp));
  }
  const ap::Var lnfw = next()[0], lnfb = next()[0];
  const ap::Var logits = ap::matmul(ap::layernorm(x, lnfw, lnfb), ap::transpose(wte));
  o.loss = ap::cross_entropy(logits, targets);
  ap::backward(o.loss);
  for (const auto& p : parts) {
    std::vector<float> g;
    for (const ap::Var& v : p) {
      const ap::Tensor& gt = v->grad;
      if (gt.numel() == 0)
        g.insert(g.end(), static_cast<size_t>(v->value.numel()), 0.0f);
      else
        g.insert(g.end(), gt.data.begin(), gt.data.end());
    }
    o.grads.push_back(std::move(g));
  }
  return o;
}

double max_abs(const float* x, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, std::fabs(static_cast<double>(x[i])));
  return m;
}

}  // namespace

// ------------------------------------------------------------------ config and layout

TEST_CASE("GPT presets: tiny and small have W3's parameter counts", "[gpt]") {
  CHECK(GPTConfig::tiny(65).num_parameters() == 108352);
  CHECK(GPTConfig::small(65).num_parameters() == 818048);
  const GPTConfig t = GPTConfig::tiny(65);
  CHECK(t.n_layer == 2);
  CHECK(t.n_embd == 64);
  CHECK(t.n_head == 4);
  CHECK(t.head_dim() == 16);
  CHECK(t.block_size == 64);
  const GPTConfig s = GPTConfig::small(65);
  CHECK((s.n_layer == 4 && s.n_embd == 128 && s.n_head == 4 && s.block_size == 128));
  CHECK(GPTConfig::preset("small", 65) == s);
  CHECK_THROWS_AS(GPTConfig::preset("huge", 65), ap::InputError);
  GPT m(t);
  CHECK(m.num_parameters() == 108352);
}

TEST_CASE("GPT parameter layout: nanoGPT's names, shapes and order, contiguous, decay on matrices", "[gpt]") {
  const GPTConfig c = GPTConfig::tiny(65);
  const auto ts = ap::param_tensors(c);
  REQUIRE(ts.size() == 2 + 12 * 2 + 2);
  CHECK(ts[0].name == "transformer.wte.weight");
  CHECK(ts[0].shape == ap::Shape{65, 64});
  CHECK(ts[1].name == "transformer.wpe.weight");
  CHECK(ts[1].shape == ap::Shape{64, 64});
  CHECK(ts[4].name == "transformer.h.0.attn.c_attn.weight");
  CHECK(ts[4].shape == ap::Shape{192, 64});
  CHECK(ts[5].shape == ap::Shape{192});
  CHECK(ts[12].name == "transformer.h.0.mlp.c_proj.weight");
  CHECK(ts[12].shape == ap::Shape{64, 256});
  CHECK(ts.back().name == "transformer.ln_f.bias");
  int64_t offset = 0;
  for (const auto& t : ts) {
    INFO(t.name);
    CHECK(t.offset == offset);
    CHECK(t.numel == ap::shape_numel(t.shape));
    CHECK(t.decay == (t.shape.size() == 2));
    offset += t.numel;
  }
  CHECK(offset == c.num_parameters());
  // The views walk the same layout.
  std::vector<float> buf(static_cast<size_t>(offset));
  const ap::GPTParams v = ap::param_views(buf.data(), c);
  CHECK(v.h[1].c_fc_w - buf.data() == ts[2 + 12 + 8].offset);
  CHECK(v.ln_f_b - buf.data() == ts.back().offset);
}

TEST_CASE("GPTConfig::validate names the field at fault", "[gpt]") {
  auto field_of = [](GPTConfig c) {
    try {
      c.validate();
    } catch (const ap::InputError& e) {
      return e.field + ": " + e.what();
    }
    return std::string("no error");
  };
  GPTConfig c = GPTConfig::tiny(65);
  c.n_head = 3;
  CHECK_THAT(field_of(c), Catch::StartsWith("n_head: n_embd is 64, which 3 heads cannot share equally"));
  c = GPTConfig::tiny(65);
  c.n_layer = 0;
  CHECK_THAT(field_of(c), Catch::StartsWith("n_layer: n_layer is 0"));
  c = GPTConfig::tiny(65);
  c.n_embd = ap::kMaxEmbd + 1;
  CHECK_THAT(field_of(c), Catch::StartsWith("n_embd: n_embd is 4097"));
  c = GPTConfig::tiny(65);
  c.head_size = ap::kMaxHeadSize + 1;
  CHECK_THAT(field_of(c), Catch::StartsWith("head_size:"));
  c = GPTConfig::tiny(65);
  c.rope_scaling.factor = 8;
  CHECK_THAT(field_of(c), Catch::StartsWith("rope_scaling: rope_scaling is RoPE's"));
  c.pos = ap::Positions::rope;
  c.rope_scaling.original_max_position_embeddings = 0;
  CHECK_THAT(field_of(c), Catch::StartsWith("rope_scaling: rope_scaling needs"));
  c = GPTConfig::tiny(65);
  c.n_head = 3;
  c.head_size = 10;  // heads of their own width: n_head need not divide n_embd
  CHECK(field_of(c) == "no error");
  c = GPTConfig::tiny(0);
  CHECK_THAT(field_of(c), Catch::StartsWith("vocab_size:"));
  c = GPTConfig::tiny(65);
  c.block_size = 100000;
  CHECK_THAT(field_of(c), Catch::StartsWith("block_size:"));
  c = GPTConfig::tiny(65);
  c.n_head = -1;
  CHECK_THAT(field_of(c), Catch::StartsWith("n_head:"));
  CHECK(field_of(GPTConfig::small(8192)) == "no error");
  // A model past the memory limit is refused before anything is allocated.
  c = GPTConfig::tiny(8192);
  c.n_layer = 32;
  c.n_embd = 1024;
  c.n_head = 16;
  CHECK_THROWS_WITH(GPT(c), Catch::Contains("more than the limit"));
}

TEST_CASE("GPT memory_bytes is what the model and its AdamW allocate, from the same layouts", "[gpt]") {
  GPTConfig odd = GPTConfig::tiny(37);
  odd.n_layer = 3;
  odd.n_head = 3;
  odd.n_embd = 24;
  odd.block_size = 19;
  for (const GPTConfig& c : {GPTConfig::tiny(65), GPTConfig::small(30), odd}) {
    for (const auto& bt : std::vector<std::pair<int, int>>{{1, 1}, {3, 7}, {4, c.block_size}}) {
      const int B = bt.first, T = bt.second;
      INFO("n_embd " << c.n_embd << ", B " << B << ", T " << T);
      GPT m(c);
      m.reserve(B, T);
      m.cache_reset();
      ap::AdamW opt(m.tensors(), m.num_parameters());
      const int64_t adamw = int64_t(sizeof(float)) * int64_t(opt.m().capacity() + opt.v().capacity());
      CHECK(m.allocated_bytes() + adamw == GPT::memory_bytes(c, B, T));
    }
  }
  // reserve keeps the larger of each size: (2, 5) then (3, 4) holds (3, 5)
  GPT m(odd);
  m.reserve(2, 5);
  m.reserve(3, 4);
  m.cache_reset();
  ap::AdamW opt(m.tensors(), m.num_parameters());
  CHECK(m.allocated_bytes() + int64_t(sizeof(float)) * 2 * m.num_parameters() == GPT::memory_bytes(odd, 3, 5));
}

TEST_CASE("GPT::check_memory names the model or the batch, with the sizes", "[gpt]") {
  auto error_of = [](const GPTConfig& c, int B, int T) {
    try {
      GPT::check_memory(c, B, T);
    } catch (const ap::InputError& e) {
      return e.field + ": " + e.what();
    }
    return std::string("no error");
  };
  CHECK(error_of(GPTConfig::small(65), 16, 128) == "no error");
  GPTConfig big = GPTConfig::tiny(8192);
  big.n_layer = 32;
  big.n_embd = 1024;
  big.n_head = 16;
  CHECK_THAT(error_of(big, 1, 1), Catch::Matches("n_embd: this model has 411535360 parameters: with their gradients "
                                                 "and AdamW's moments it needs [0-9]+ MiB, more than the limit of "
                                                 "1024 MiB"));
  const GPTConfig small = GPTConfig::small(65);
  const int64_t mib = GPT::memory_bytes(small, 1024, 128) >> 20;
  CHECK(error_of(small, 1024, 128) == "batch_size: a batch of 1024 sequences of 128 tokens needs " +
                                          std::to_string(mib) +
                                          " MiB for this model, more than the limit of 1024 MiB: use a smaller "
                                          "batch_size or block_size");
  CHECK_THROWS_WITH(GPT(small).reserve(1024, 128), Catch::Contains("a batch of 1024 sequences"));
}

TEST_CASE("GPT forward refuses bad ids, T and batch with the field at fault", "[gpt]") {
  GPT m(small_config(MaskVariant::strict, true));
  m.init_weights(1);
  std::vector<int> ids = {1, 2, 3, 11};
  CHECK_THROWS_WITH(m.forward(ids.data(), nullptr, 1, 4), Catch::Contains("ids has 11 at position 3"));
  ids[3] = -1;
  CHECK_THROWS_WITH(m.forward(ids.data(), nullptr, 1, 4), Catch::Contains("ids has -1"));
  std::vector<int> long_ids(9, 0);
  CHECK_THROWS_WITH(m.forward(long_ids.data(), nullptr, 1, 9), Catch::Contains("T is 9"));
  CHECK_THROWS_AS(m.backward(), ap::InputError);  // no forward with targets yet
}

TEST_CASE("GPT init: nanoGPT's normal(0, 0.02), scaled residual projections, same seed same bits", "[gpt]") {
  GPTConfig c = GPTConfig::small(65);
  GPT a(c), b(c), d(c);
  a.init_weights(7);
  b.init_weights(7);
  d.init_weights(8);
  CHECK(std::vector<float>(a.params(), a.params() + a.num_parameters()) ==
        std::vector<float>(b.params(), b.params() + b.num_parameters()));
  CHECK(a.params()[5] != d.params()[5]);
  for (const auto& t : a.tensors()) {
    INFO(t.name);
    const float* w = a.params() + t.offset;
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < t.numel; ++i) {
      s += w[i];
      s2 += double(w[i]) * w[i];
    }
    const double mean = s / t.numel, sd = std::sqrt(s2 / t.numel - mean * mean);
    if (t.name.find(".bias") != std::string::npos) {
      CHECK(s2 == 0);
    } else if (t.name.find("ln_") != std::string::npos) {
      CHECK(mean == 1.0);
      CHECK(sd == 0.0);
    } else {
      const double want = t.name.find("c_proj.weight") != std::string::npos ? 0.02 / std::sqrt(8.0) : 0.02;
      CHECK(std::fabs(mean) < 4 * want / std::sqrt(double(t.numel)) + 1e-9);
      CHECK(sd == Approx(want).epsilon(0.05));
    }
  }
}

// ------------------------------------------------------------------ the oracle

TEST_CASE("GPT equals the autograd oracle: loss and every parameter gradient", "[gpt][oracle]") {
  for (Tier tier : {Tier::reference, Tier::fast}) {
    TierGuard guard(tier);
    for (MaskVariant mask : {MaskVariant::strict, MaskVariant::inclusive})
      for (bool stable : {true, false}) {
        const GPTConfig cfg = small_config(mask, stable);
        const int B = 3, T = 7;  // T below block_size: the buffers' strides follow T
        INFO("tier " << (tier == Tier::reference ? "reference" : ap::kernels::tier_name()) << ", mask "
                     << (mask == MaskVariant::strict ? "strict" : "inclusive") << ", softmax "
                     << (stable ? "stable" : "naive"));
        GPT m(cfg);
        randomize(m, 11, 0.3f);
        const auto ids = random_tokens(B * T, cfg.vocab_size, 1);
        const auto targets = random_tokens(B * T, cfg.vocab_size, 2);
        m.zero_grad();
        const float loss = m.forward(ids.data(), targets.data(), B, T);
        m.backward();
        const Oracle o = build_oracle(m, ids, targets, B, T);
        const float want = o.loss->value.data[0];
        if (tier == Tier::reference)
          CHECK(loss == want);  // the same arithmetic in the same order
        else
          CHECK(loss == Approx(want).epsilon(1e-5));
        for (size_t i = 0; i < m.tensors().size(); ++i) {
          const auto& t = m.tensors()[i];
          INFO(t.name);
          const float* g = m.grads() + t.offset;
          const double scale = std::max(1e-3, max_abs(o.grads[i].data(), t.numel));
          double worst = 0;
          for (int64_t k = 0; k < t.numel; ++k)
            worst = std::max(worst, std::fabs(double(g[k]) - o.grads[i][static_cast<size_t>(k)]));
          // float32 sums of ~50 terms in different orders: a few ulp of the tensor's largest entry.
          CHECK(worst <= (tier == Tier::reference ? 2e-5 : 1e-4) * scale);
        }
      }
  }
}

TEST_CASE("GPT gradients match central finite differences, tensor by tensor", "[gpt][gradcheck]") {
  // For each tensor P, a random direction d inside P: (L(p + εd) − L(p − εd)) / 2ε ≈ ∇_P L · d.
  // The whole model runs in float32, so ε is large-ish and the tolerance is relative to |∇L·d|.
  // The models from elsewhere too: GPT-2's tanh GELU, no biases (nanoGPT's bias=False), another ε.
  TierGuard guard(Tier::reference);
  for (int variant = 0; variant < 3; ++variant) {
    const MaskVariant mask = variant == 1 ? MaskVariant::inclusive : MaskVariant::strict;
    GPTConfig cfg = small_config(mask, true);
    cfg.n_layer = 1;
    if (variant == 2) {
      cfg.activation = ap::Activation::gelu_new;
      cfg.bias = false;
      cfg.ln_eps = 1e-3f;
    }
    GPT m(cfg);
    randomize(m, 5, 0.3f);
    const int B = 2, T = 6;
    const auto ids = random_tokens(B * T, cfg.vocab_size, 3);
    const auto targets = random_tokens(B * T, cfg.vocab_size, 4);
    m.zero_grad();
    m.forward(ids.data(), targets.data(), B, T);
    m.backward();
    const std::vector<float> grads(m.grads(), m.grads() + m.num_parameters());
    const std::vector<float> p0(m.params(), m.params() + m.num_parameters());
    ap::Rng r(99);
    for (const auto& t : m.tensors()) {
      INFO("variant " << variant << ", mask " << (mask == MaskVariant::strict ? "strict" : "inclusive") << ", "
                      << t.name);
      std::vector<float> d(static_cast<size_t>(t.numel));
      double analytic = 0;
      for (int64_t k = 0; k < t.numel; ++k) {
        d[static_cast<size_t>(k)] = r.normal();
        analytic += double(d[static_cast<size_t>(k)]) * grads[static_cast<size_t>(t.offset + k)];
      }
      const float eps = 1e-2f;
      auto loss_at = [&](float s) {
        std::copy(p0.begin(), p0.end(), m.params());
        for (int64_t k = 0; k < t.numel; ++k) m.params()[t.offset + k] += s * d[static_cast<size_t>(k)];
        return double(m.forward(ids.data(), targets.data(), B, T));
      };
      const double numeric = (loss_at(eps) - loss_at(-eps)) / (2.0 * eps);
      std::copy(p0.begin(), p0.end(), m.params());
      CHECK(std::fabs(numeric - analytic) <= 2e-3 + 2e-2 * std::fabs(analytic));
    }
  }
}

TEST_CASE("GPT: a wrong gradient is caught by the finite-difference check's arithmetic", "[gpt][gradcheck]") {
  // The check above must be able to fail: perturbing one analytic gradient entry of a tensor by
  // 10% of its directional derivative moves it outside the tolerance.
  TierGuard guard(Tier::reference);
  GPTConfig cfg = small_config(MaskVariant::strict, true);
  cfg.n_layer = 1;
  GPT m(cfg);
  randomize(m, 5, 0.3f);
  const int B = 2, T = 6;
  const auto ids = random_tokens(B * T, cfg.vocab_size, 3), targets = random_tokens(B * T, cfg.vocab_size, 4);
  m.zero_grad();
  m.forward(ids.data(), targets.data(), B, T);
  m.backward();
  const auto& t = m.tensors()[4];  // c_attn.weight
  double analytic = 0;
  for (int64_t k = 0; k < t.numel; ++k) analytic += m.grads()[t.offset + k];  // d = all ones
  const float eps = 1e-2f;
  const std::vector<float> p0(m.params(), m.params() + m.num_parameters());
  auto loss_at = [&](float s) {
    std::copy(p0.begin(), p0.end(), m.params());
    for (int64_t k = 0; k < t.numel; ++k) m.params()[t.offset + k] += s;
    return double(m.forward(ids.data(), targets.data(), B, T));
  };
  const double numeric = (loss_at(eps) - loss_at(-eps)) / (2.0 * eps);
  CHECK(std::fabs(numeric - analytic) <= 2e-3 + 2e-2 * std::fabs(analytic));
  const double wrong = analytic * 1.1 + 0.01;
  CHECK_FALSE(std::fabs(numeric - wrong) <= 2e-3 + 2e-2 * std::fabs(wrong));
}

// ------------------------------------------------------------------ the KV cache

TEST_CASE("KV cache: logits with the cache equal the full forward's at every position", "[gpt][cache]") {
  for (Tier tier : {Tier::reference, Tier::fast}) {
    TierGuard guard(tier);
    for (const char* preset : {"tiny", "small"})
      for (MaskVariant mask : {MaskVariant::strict, MaskVariant::inclusive}) {
        GPTConfig cfg = GPTConfig::preset(preset, 65);
        cfg.mask = mask;
        INFO("tier " << ap::kernels::tier_name() << ", preset " << preset << ", mask "
                     << (mask == MaskVariant::strict ? "strict" : "inclusive"));
        GPT m(cfg);
        m.init_weights(3);
        randomize(m, 4, 0.1f);  // larger than init so that attention is far from uniform
        const int T = cfg.block_size;
        const auto ids = random_tokens(T, cfg.vocab_size, 5);
        m.forward(ids.data(), nullptr, 1, T);
        const std::vector<float> full(m.logits(), m.logits() + int64_t(T) * cfg.vocab_size);
        std::vector<float> full_att0(m.attention_weights(0), m.attention_weights(0) + int64_t(cfg.n_head) * T * T);
        m.cache_reset();
        double worst = 0;
        bool att_equal = true;
        for (int t = 0; t < T; ++t) {
          CHECK(m.cache_length() == t);  // the step's base
          const float* l = m.cache_step(ids[static_cast<size_t>(t)]);
          for (int v = 0; v < cfg.vocab_size; ++v)
            worst = std::max(worst, std::fabs(double(l[v]) - full[static_cast<size_t>(t * cfg.vocab_size + v)]));
          // layer 0's weights of this step = row t of the full forward's, for each head
          for (int h = 0; h < cfg.n_head; ++h)
            for (int j = 0; j <= t; ++j)
              att_equal = att_equal && std::fabs(m.cache_attention(0)[h * (t + 1) + j] -
                                                 full_att0[static_cast<size_t>((h * T + t) * T + j)]) <= 1e-6f;
        }
        CHECK(att_equal);
        if (tier == Tier::reference)
          CHECK(worst == 0.0);
        else
          CHECK(worst <= 1e-5);
        CHECK_THROWS_WITH(m.cache_step(0), Catch::Contains("KV cache is full"));
        m.cache_reset();
        CHECK(m.cache_length() == 0);
      }
  }
}

TEST_CASE("KV cache: past its first kCacheStart positions it grows, keeping what it holds", "[gpt][cache]") {
  GPTConfig cfg = GPTConfig::tiny(17);
  cfg.n_embd = 16;
  cfg.n_layer = 1;
  cfg.pos = ap::Positions::rope;
  cfg.block_size = ap::kCacheStart + 40;
  GPT m(cfg, ap::ModelUse::infer);
  randomize(m, 4, 0.3f);
  const int T = cfg.block_size;
  const auto ids = random_tokens(T, cfg.vocab_size, 5);
  m.cache_reset();
  // the cache of one model, before it grows: what memory_bytes counts for T = 1
  CHECK(m.allocated_bytes() <= GPT::memory_bytes(cfg, 1, 1, ap::ModelUse::infer));
  std::vector<float> last;
  for (int t = 0; t < T; ++t) {
    const float* l = m.cache_step(ids[static_cast<size_t>(t)]);
    last.assign(l, l + cfg.vocab_size);
  }
  CHECK(m.cache_length() == T);
  const std::vector<float> key0(m.cache_keys(0), m.cache_keys(0) + 8);
  m.forward(ids.data(), nullptr, 1, T);
  double worst = 0;
  for (int v = 0; v < cfg.vocab_size; ++v)
    worst = std::max(worst, std::fabs(double(last[static_cast<size_t>(v)]) -
                                      m.logits()[static_cast<size_t>((T - 1) * cfg.vocab_size + v)]));
  CHECK(worst <= 1e-5);
  // the first position's key, written before the cache grew, is still row 0 (rotated at 0: q·R(0) = q)
  const float* qkv = m.qkv(0);
  for (int i = 0; i < 8; ++i) CHECK(std::fabs(key0[static_cast<size_t>(i)] - qkv[cfg.attn_width() + i]) <= 1e-5f);
  CHECK_THROWS_WITH(m.cache_step(0), Catch::Contains("KV cache is full"));
}

TEST_CASE("A model from elsewhere: gelu_new, no biases, another ε: inference only, then trainable", "[gpt][cache]") {
  GPTConfig cfg = small_config(MaskVariant::strict, true);
  cfg.activation = ap::Activation::gelu_new;
  cfg.bias = false;
  cfg.ln_eps = 1e-3f;
  GPTConfig with_bias = cfg;
  with_bias.bias = true;
  // no bias tensors: 2 LayerNorm biases and 4 Linear biases per layer, and ln_f's
  const int64_t C = cfg.n_embd;
  CHECK(with_bias.num_parameters() - cfg.num_parameters() == cfg.n_layer * (2 * C + 3 * C + C + 4 * C + C) + C);
  for (const auto& t : ap::param_tensors(cfg)) CHECK(t.name.find(".bias") == std::string::npos);
  for (Tier tier : {Tier::reference, Tier::fast}) {
    TierGuard guard(tier);
    INFO("tier " << ap::kernels::tier_name());
    GPT train(cfg), infer(cfg, ap::ModelUse::infer);
    randomize(train, 7, 0.3f);
    std::copy(train.params(), train.params() + train.num_parameters(), infer.params());
    const int T = cfg.block_size;
    const auto ids = random_tokens(T, cfg.vocab_size, 8);
    train.forward(ids.data(), nullptr, 1, T);
    infer.forward(ids.data(), nullptr, 1, T);
    bool same = true;
    for (int64_t i = 0; i < int64_t(T) * cfg.vocab_size; ++i) same = same && train.logits()[i] == infer.logits()[i];
    CHECK(same);
    CHECK(GPT::memory_bytes(cfg, 1, T, ap::ModelUse::infer) < GPT::memory_bytes(cfg, 1, T));
    // the KV cache with the tanh GELU and no biases
    infer.cache_reset();
    double worst = 0;
    for (int t = 0; t < T; ++t) {
      const float* l = infer.cache_step(ids[static_cast<size_t>(t)]);
      for (int v = 0; v < cfg.vocab_size; ++v)
        worst = std::max(worst, std::fabs(double(l[v]) - train.logits()[int64_t(t) * cfg.vocab_size + v]));
    }
    if (tier == Tier::reference)
      CHECK(worst == 0.0);
    else
      CHECK(worst <= 1e-5);
    // inference computes no loss until made trainable
    const auto targets = random_tokens(T, cfg.vocab_size, 9);
    CHECK_THROWS_WITH(infer.forward(ids.data(), targets.data(), 1, T), Catch::Contains("opened for inference"));
    CHECK_THROWS_WITH(infer.backward(), Catch::Contains("opened for inference"));
    infer.make_trainable(1, T);
    train.zero_grad();
    infer.zero_grad();
    CHECK(infer.forward(ids.data(), targets.data(), 1, T) == train.forward(ids.data(), targets.data(), 1, T));
    train.backward();
    infer.backward();
    bool grads_same = true;
    for (int64_t i = 0; i < train.num_parameters(); ++i) grads_same = grads_same && train.grads()[i] == infer.grads()[i];
    CHECK(grads_same);
  }
}

TEST_CASE("KV cache: the inclusive mask's first position sees nothing and its context is 0", "[gpt][cache]") {
  GPTConfig cfg = small_config(MaskVariant::inclusive, true);
  GPT m(cfg);
  m.init_weights(1);
  m.cache_reset();
  m.cache_step(3);
  for (int l = 0; l < cfg.n_layer; ++l)
    for (int h = 0; h < cfg.n_head; ++h) CHECK(m.cache_attention(l)[h] == 0.0f);
  m.cache_step(4);
  for (int h = 0; h < cfg.n_head; ++h) {
    CHECK(m.cache_attention(0)[h * 2 + 0] == 1.0f);  // position 1 sees only position 0
    CHECK(m.cache_attention(0)[h * 2 + 1] == 0.0f);
  }
}

// ------------------------------------------------------------------ optimiser

TEST_CASE("AdamW matches torch.optim.AdamW's update, with decay only on matrices", "[optim]") {
  // One parameter tensor of each kind; two steps computed here in double from the formulas of
  // torch.optim.AdamW (decoupled weight decay, bias-corrected moments).
  std::vector<ap::ParamTensor> ts = {{"w", {2, 2}, 0, 4, true}, {"b", {2}, 4, 2, false}};
  ap::AdamWConfig cfg;
  cfg.lr = 0.1f;
  cfg.weight_decay = 0.5f;
  ap::AdamW opt(ts, 6, cfg);
  std::vector<float> p = {1, -2, 0.5f, 3, 1, -1};
  std::vector<double> pd(p.begin(), p.end()), m(6, 0), v(6, 0);
  const std::vector<std::vector<float>> gs = {{0.1f, -0.2f, 0.3f, 0, 1, -1}, {0.2f, 0.2f, -0.1f, 0.5f, 0, 2}};
  for (int step = 1; step <= 2; ++step) {
    const auto& g = gs[static_cast<size_t>(step - 1)];
    opt.step(p.data(), g.data(), cfg.lr);
    for (size_t i = 0; i < 6; ++i) {
      const double wd = i < 4 ? 0.5 : 0.0;
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = 0.99 * v[i] + 0.01 * double(g[i]) * g[i];
      const double mh = m[i] / (1 - std::pow(0.9, step)), vh = v[i] / (1 - std::pow(0.99, step));
      pd[i] -= 0.1 * (mh / (std::sqrt(vh) + 1e-8) + wd * pd[i]);
    }
  }
  for (size_t i = 0; i < 6; ++i) CHECK(p[i] == Approx(pd[i]).epsilon(1e-5));
  CHECK(opt.t() == 2);
}

TEST_CASE("clip_grad_norm and the learning-rate schedule", "[optim]") {
  std::vector<float> g = {3, 4};
  CHECK(ap::clip_grad_norm(g.data(), 2, 1.0f) == 5.0f);
  CHECK(g[0] == Approx(0.6f).epsilon(1e-5));
  CHECK(g[1] == Approx(0.8f).epsilon(1e-5));
  g = {0.3f, 0.4f};
  CHECK(ap::clip_grad_norm(g.data(), 2, 1.0f) == Approx(0.5f));
  CHECK(g[0] == 0.3f);  // under the limit: untouched
  g = {1, std::nanf("")};
  CHECK(std::isnan(ap::clip_grad_norm(g.data(), 2, 1.0f)));
  CHECK(g[0] == 1.0f);

  ap::LRSchedule s{1e-3f, 1e-4f, 10, 110};
  CHECK(s.at(0) == Approx(1e-3f / 11));
  CHECK(s.at(9) == Approx(1e-3f * 10 / 11));
  CHECK(s.at(10) == Approx(1e-3f));
  CHECK(s.at(60) == Approx((1e-3 + 1e-4) / 2));
  CHECK(s.at(110) == Approx(1e-4f));
  CHECK(s.at(10000) == Approx(1e-4f));
  for (int i = 11; i < 110; ++i) CHECK(s.at(i) <= s.at(i - 1));
  ap::LRSchedule constant{1e-3f, 1e-4f, 0, 0};
  CHECK(constant.at(500) == 1e-3f);
}

// ------------------------------------------------------------------ training

TEST_CASE("GPT overfits one small batch: the loss falls below 0.05", "[gpt][train]") {
  GPTConfig cfg = GPTConfig::tiny(20);
  cfg.block_size = 16;
  GPT m(cfg);
  m.init_weights(42);
  const int B = 4, T = 16;
  const auto ids = random_tokens(B * T, cfg.vocab_size, 6);
  const auto targets = random_tokens(B * T, cfg.vocab_size, 7);
  ap::AdamWConfig oc;
  oc.weight_decay = 0.0f;
  ap::AdamW opt(m.tensors(), m.num_parameters(), oc);
  float first = 0, loss = 0;
  int steps = 0;
  for (; steps < 400; ++steps) {
    m.zero_grad();
    loss = m.forward(ids.data(), targets.data(), B, T);
    if (steps == 0) first = loss;
    if (loss < 0.05f) break;
    m.backward();
    ap::clip_grad_norm(m.grads(), m.num_parameters(), 1.0f);
    opt.step(m.params(), m.grads(), 3e-3f);
  }
  INFO("loss " << first << " → " << loss << " after " << steps << " steps");
  CHECK(first == Approx(std::log(20.0f)).epsilon(0.05));  // uniform guess at init
  CHECK(loss < 0.05f);
}

TEST_CASE("GPT training: same seed same losses, a training step allocates nothing", "[gpt][train]") {
  auto run = [](std::vector<float>& losses, bool count) {
    GPT m(GPTConfig::tiny(30));
    m.init_weights(9);
    const int B = 4, T = 32;
    m.reserve(B, T);
    ap::AdamW opt(m.tensors(), m.num_parameters());
    const auto ids = random_tokens(B * T, 30, 1), targets = random_tokens(B * T, 30, 2);
    for (int s = 0; s < 5; ++s) {
      if (count && s == 2) g_count_allocations = true;
      m.zero_grad();
      const float loss = m.forward(ids.data(), targets.data(), B, T);
      m.backward();
      ap::clip_grad_norm(m.grads(), m.num_parameters(), 1.0f);
      opt.step(m.params(), m.grads(), 1e-3f);
      g_count_allocations = false;
      losses.push_back(loss);
    }
  };
  std::vector<float> a, b;
  g_allocations = 0;
  run(a, true);
  CHECK(g_allocations == 0);
  run(b, false);
  CHECK(a == b);
  CHECK(a.back() < a.front());
}

TEST_CASE("Trainer threads: a data-parallel step allocates nothing either", "[gpt][train][threads]") {
  ap::TrainConfig t;
  t.batch_size = 6;
  t.steps = 10;
  t.warmup_steps = 1;
  ap::DataSpec d;
  d.task = "copy";
  d.n_chars = 5000;
  GPTConfig c = GPTConfig::tiny();
  c.block_size = 16;
  ap::Trainer tr(c, t, d);
  tr.set_threads(3);
  tr.step();  // the first step may touch what is reserved
  g_allocations = 0;
  g_count_allocations = true;
  for (int s = 0; s < 3; ++s) tr.step();
  g_count_allocations = false;
  CHECK(g_allocations == 0);
}
