// test_block_trace.cpp — the model's own numbers, step by step (block_trace.h), and what a model
// does with a text (inspect.h):
//  - every step of a position's trace equals, bit for bit, the reference forward's value at that
//    position (encoded, ln_1 with its mean and rstd, q/k/v, each head's weights and context, the
//    heads side by side, the residual sums, ln_2, c_fc, GELU, ln_f, the logits), for both masks
//    and both softmaxes, with and without GPT-2's gelu_new, biases and the default ε, at the first, a middle and the last position; the values the forward
//    does not keep (x̂, the variance, c_proj's outputs) recombine into those it does, bit for bit;
//    the fast tier agrees within float rounding;
//  - the same for every variant of gpt.h (RoPE with its turn, ALiBi's bias, grouped-query heads,
//    RMSNorm, SwiGLU's gate, a window with its sinks, no positions, and the Llama family's
//    head_size, q/k norm, q/k/v biases and untied lm_head): the trace's q, k (and the q/k norm's
//    inputs and rstd), weights and contexts are the forward's, the turn recomputed from the kept cos and sin, the window's hidden
//    keys weigh exactly 0;
//  - the surprisal of a text is the forward's own loss: one window's mean is GPT::forward's
//    return value, bit for bit; a long text is read in windows that overlap by one token;
//  - the validation windows' surprisal averages to Trainer::evaluate()'s loss, bit for bit;
//  - the loss by position at a longer context than trained (RoPE, ALiBi, none): its first
//    block_size positions are the trained model's own losses on each window's prefix (causal
//    attention: a position sees only what came before); learned positions are refused past
//    block_size, naming wpe; at block_size, the validation windows' own losses;
//  - the heads' mean and the attention rollout against a float64 computation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "input_error_util.h"
#include "core/model/block_trace.h"
#include "core/model/inspect.h"
#include "core/kernels/kernels.h"
#include "core/tensor/ops.h"
#include "core/base/rng.h"

namespace {

// A model whose every parameter is N(0, scale): activations of every size, not the initial ones.
// foreign: a model as imported from elsewhere (GPT-2's gelu_new, no biases, another ε).
ap::GPT random_model(ap::MaskVariant mask, bool stable, float scale = 0.3f, bool foreign = false) {
  ap::GPTConfig c = ap::GPTConfig::tiny(13);
  c.block_size = 16;
  c.n_embd = 32;
  c.mask = mask;
  c.stable_softmax = stable;
  if (foreign) {
    c.activation = ap::Activation::gelu_new;
    c.bias = false;
    c.ln_eps = 1e-3f;
  }
  ap::GPT m(c);
  ap::Rng rng(17);
  for (int64_t i = 0; i < m.num_parameters(); ++i) m.params()[i] = scale * rng.normal();
  return m;
}

bool same_bits(const std::vector<float>& a, const float* b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

std::string error_of(const std::function<void()>& f) { return input_error_util::described(f); }

}  // namespace

TEST_CASE("A position's trace is the reference forward's values, bit for bit", "[block_trace]") {
  ap::kernels::set_tier(ap::kernels::Tier::reference);
  const std::vector<int> ids = {0, 5, 3, 12, 7, 7, 1, 9, 4, 2, 11, 6};
  const int T = static_cast<int>(ids.size());
  for (ap::MaskVariant mask : {ap::MaskVariant::strict, ap::MaskVariant::inclusive})
    for (bool stable : {true, false})
    for (bool foreign : {false, true}) {
      ap::GPT m = random_model(mask, stable, 0.3f, foreign);
      const ap::GPTConfig& c = m.config();
      const int C = c.n_embd, NH = c.n_head, hs = C / NH, V = c.vocab_size;
      m.forward(ids.data(), nullptr, 1, T);
      const ap::GPTActs& a = m.acts();
      for (int p : {0, 5, T - 1}) {
        INFO("mask " << (mask == ap::MaskVariant::strict ? "strict" : "inclusive") << ", stable " << stable
                     << ", foreign " << foreign << ", position " << p);
        const ap::BlockTrace tr = ap::block_trace(m, ids.data(), T, p);
        const size_t r = static_cast<size_t>(p) * C;
        CHECK(tr.token == ids[p]);
        CHECK(tr.visible == (mask == ap::MaskVariant::strict ? p + 1 : p));
        CHECK(same_bits(tr.encoded, a.encoded + r));
        for (int c2 = 0; c2 < C; ++c2) CHECK(tr.encoded[c2] == tr.wte[c2] + tr.wpe[c2]);
        for (int l = 0; l < c.n_layer; ++l) {
          const ap::LayerTrace& lt = tr.layers[l];
          const ap::BlockActs& b = a.h[l];
          const ap::BlockParams& w = m.p().h[l];
          CHECK(same_bits(lt.ln_1.out, b.ln_1 + r));
          CHECK(lt.ln_1.mean == b.ln_1_mean[p]);
          CHECK(lt.ln_1.rstd == b.ln_1_rstd[p]);
          CHECK(lt.ln_1.rstd == 1.0f / std::sqrt(lt.ln_1.var + tr.math.ln_eps));
          for (int c2 = 0; c2 < C; ++c2) CHECK(lt.ln_1.out[c2] == lt.ln_1.xhat[c2] * w.ln_1_w[c2] + (w.ln_1_b ? w.ln_1_b[c2] : 0.0f));
          CHECK(same_bits(lt.q, b.qkv + 3 * r));
          CHECK(same_bits(lt.k, b.qkv + 3 * r + C));
          CHECK(same_bits(lt.v, b.qkv + 3 * r + 2 * C));
          REQUIRE(lt.keys.size() == static_cast<size_t>(tr.visible) * C);
          for (int h = 0; h < NH; ++h) {
            const ap::HeadTrace& ht = lt.heads[h];
            const float* att = b.att + (static_cast<size_t>(h) * T + p) * T;
            REQUIRE(ht.weights.size() == static_cast<size_t>(tr.visible));
            CHECK(same_bits(ht.weights, att));
            CHECK(same_bits(ht.context, b.atty + r + h * hs));
            for (int j = 0; j < tr.visible; ++j) CHECK(ht.scores[j] == ht.dots[j] * tr.scale);
          }
          CHECK(same_bits(lt.atty, b.atty + r));
          for (int c2 = 0; c2 < C; ++c2) CHECK(lt.residual2[c2] == (l ? tr.layers[l - 1].residual3[c2] : tr.encoded[c2]) + lt.attn_proj[c2]);
          CHECK(same_bits(lt.residual2, b.residual2 + r));
          CHECK(same_bits(lt.ln_2.out, b.ln_2 + r));
          CHECK(same_bits(lt.fc, b.fch + 4 * r));
          CHECK(same_bits(lt.act, b.fch_gelu + 4 * r));
          for (int c2 = 0; c2 < C; ++c2) CHECK(lt.residual3[c2] == lt.residual2[c2] + lt.mlp_proj[c2]);
          CHECK(same_bits(lt.residual3, b.residual3 + r));
        }
        CHECK(same_bits(tr.ln_f.out, a.ln_f + r));
        CHECK(tr.ln_f.mean == a.ln_f_mean[p]);
        CHECK(same_bits(tr.logits, a.logits + static_cast<size_t>(p) * V));
        double z = 0.0, mx = -INFINITY;
        for (float l : tr.logits) mx = std::max(mx, double(l));
        for (float l : tr.logits) z += std::exp(l - mx);
        if (stable)
          for (int v = 0; v < V; ++v) CHECK(tr.probs[v] == Approx(std::exp(tr.logits[v] - mx) / z).epsilon(1e-5).margin(1e-9));
      }
    }
  // the fast tier computes the same within float rounding
  ap::GPT m = random_model(ap::MaskVariant::strict, true);
  const ap::BlockTrace tr = ap::block_trace(m, ids.data(), T, T - 1);
  ap::kernels::set_tier(ap::kernels::Tier::fast);
  m.forward(ids.data(), nullptr, 1, T);
  const float* logits = m.logits() + static_cast<size_t>(T - 1) * m.config().vocab_size;
  for (int v = 0; v < m.config().vocab_size; ++v) CHECK(tr.logits[v] == Approx(logits[v]).epsilon(1e-4).margin(1e-4));
}

TEST_CASE("A variant model's trace is the reference forward's values, bit for bit", "[block_trace]") {
  ap::kernels::set_tier(ap::kernels::Tier::reference);
  const std::vector<int> ids = {0, 5, 3, 12, 7, 7, 1, 9, 4, 2, 11, 6};
  const int T = static_cast<int>(ids.size());
  struct Case {
    const char* name;
    std::function<void(ap::GPTConfig&)> set;
  };
  const std::vector<Case> cases = {
      {"llama", [](ap::GPTConfig& c) { c.pos = ap::Positions::rope; c.norm = ap::Norm::rmsnorm; c.mlp = ap::Mlp::swiglu; c.n_kv_head = 2; c.bias = false; }},
      {"rope interleaved partial, mqa", [](ap::GPTConfig& c) { c.pos = ap::Positions::rope; c.rope = ap::RopePairing::interleaved; c.rope_dims = 4; c.n_kv_head = 1; }},
      {"alibi window sink", [](ap::GPTConfig& c) { c.pos = ap::Positions::alibi; c.window = 3; c.sink = 2; }},
      {"none, window, inclusive, swiglu", [](ap::GPTConfig& c) { c.pos = ap::Positions::none; c.window = 4; c.mask = ap::MaskVariant::inclusive; c.mlp = ap::Mlp::swiglu; c.n_inner = 40; }},
      // the Llama family's options: Qwen3 (heads of 12 in 32, q/k norm, untied lm_head), Qwen2
      // (q/k/v biases alone, heads of 4), and the q/k norm without RoPE
      {"qwen3", [](ap::GPTConfig& c) { c.pos = ap::Positions::rope; c.norm = ap::Norm::rmsnorm; c.mlp = ap::Mlp::swiglu; c.n_kv_head = 2; c.bias = false; c.head_size = 12; c.qk_norm = true; c.tie_embeddings = false; }},
      {"qwen2", [](ap::GPTConfig& c) { c.pos = ap::Positions::rope; c.norm = ap::Norm::rmsnorm; c.mlp = ap::Mlp::swiglu; c.bias = false; c.qkv_bias = true; c.head_size = 4; }},
      {"qk_norm, learned positions", [](ap::GPTConfig& c) { c.qk_norm = true; c.head_size = 16; }},
  };
  for (const Case& cs : cases) {
    ap::GPTConfig c = ap::GPTConfig::tiny(13);
    c.block_size = 16;
    c.n_embd = 32;
    cs.set(c);
    ap::GPT m(c);
    ap::Rng rng(23);
    for (int64_t i = 0; i < m.num_parameters(); ++i) m.params()[i] = 0.3f * rng.normal();
    const int C = c.n_embd, NH = c.n_head, hs = c.head_dim(), V = c.vocab_size, W = c.qkv_width(), A = c.attn_width();
    const int KC = (W - A) / 2, NR = NH + c.kv_head();
    const int H = c.inner(), FC = c.fc_width();
    m.forward(ids.data(), nullptr, 1, T);
    const ap::GPTActs& a = m.acts();
    for (int p : {0, 5, T - 1}) {
      INFO(cs.name << ", position " << p);
      const ap::BlockTrace tr = ap::block_trace(m, ids.data(), T, p);
      const size_t r = static_cast<size_t>(p) * C, rw = static_cast<size_t>(p) * W;
      CHECK(same_bits(tr.encoded, a.encoded + r));
      CHECK(tr.wpe.empty() == (c.pos != ap::Positions::learned));  // learned positions keep their row of wpe
      CHECK(tr.n_kv_head == c.kv_head());
      for (int l = 0; l < c.n_layer; ++l) {
        const ap::LayerTrace& lt = tr.layers[l];
        const ap::BlockActs& b = a.h[l];
        CHECK(same_bits(lt.ln_1.out, b.ln_1 + r));
        CHECK(same_bits(lt.q, b.qkv + rw));
        CHECK(same_bits(lt.k, b.qkv + rw + A));
        CHECK(same_bits(lt.v, b.qkv + rw + A + KC));
        if (c.qk_norm) {  // c_attn's q and k, and each head's 1/rms, as the forward kept them
          REQUIRE(lt.q_lin.size() == static_cast<size_t>(A));
          REQUIRE(lt.q_rstd.size() == static_cast<size_t>(NH));
          CHECK(same_bits(lt.q_lin, b.qk_in + static_cast<size_t>(p) * NR * hs));
          CHECK(same_bits(lt.k_lin, b.qk_in + static_cast<size_t>(p) * NR * hs + A));
          CHECK(same_bits(lt.q_rstd, b.qk_rstd + static_cast<size_t>(p) * NR));
          CHECK(same_bits(lt.k_rstd, b.qk_rstd + static_cast<size_t>(p) * NR + NH));
          const std::vector<float>& normed = lt.q_raw.empty() ? lt.q : lt.q_raw;
          for (int i = 0; i < A; ++i)  // the reference kernel's (x·rstd)·γ
            CHECK(normed[i] == lt.q_lin[i] * lt.q_rstd[i / hs] * m.p().h[l].q_norm_w[i % hs]);
        } else {
          CHECK(lt.q_lin.empty());
        }
        if (c.pos == ap::Positions::rope) {
          // the turn from the kept angles: each pair (a, b) → (a·cos − b·sin, a·sin + b·cos)
          const int pairs = static_cast<int>(tr.rope_cos.size());
          REQUIRE(pairs == c.rot_dims() / 2);
          const bool halves = c.rope == ap::RopePairing::halves;
          for (int h = 0; h < NH + c.kv_head(); ++h) {
            const std::vector<float>& raw = h < NH ? lt.q_raw : lt.k_raw;
            const std::vector<float>& turned = h < NH ? lt.q : lt.k;
            const int o = (h < NH ? h : h - NH) * hs;
            for (int i = 0; i < pairs; ++i) {
              const int ia = o + (halves ? i : 2 * i), ib = o + (halves ? i + pairs : 2 * i + 1);
              CHECK(turned[ia] == raw[ia] * tr.rope_cos[i] - raw[ib] * tr.rope_sin[i]);
              CHECK(turned[ib] == raw[ia] * tr.rope_sin[i] + raw[ib] * tr.rope_cos[i]);
            }
          }
        } else {
          CHECK(lt.q_raw.empty());
        }
        for (int h = 0; h < NH; ++h) {
          const ap::HeadTrace& ht = lt.heads[h];
          CHECK(ht.kv_head == h / (NH / c.kv_head()));
          const float* att = b.att + (static_cast<size_t>(h) * T + p) * T;
          REQUIRE(ht.weights.size() == static_cast<size_t>(tr.visible));
          CHECK(same_bits(ht.weights, att));
          CHECK(same_bits(ht.context, b.atty + static_cast<size_t>(p) * A + h * hs));
          for (int j = 0; j < tr.visible; ++j) {
            const bool seen = (j < c.sink || j > p - c.window || c.window == 0);
            CHECK(tr.seen[j] == (seen ? 1 : 0));
            if (!seen) CHECK(ht.weights[j] == 0.0f);
            if (seen) CHECK(ht.scores[j] == (c.pos == ap::Positions::alibi ? ht.dots[j] * tr.scale + ht.bias[j] : ht.dots[j] * tr.scale));
            if (c.pos == ap::Positions::alibi) CHECK(ht.bias[j] == -ht.slope * static_cast<float>(p - j));
          }
        }
        CHECK(same_bits(lt.residual2, b.residual2 + r));
        CHECK(same_bits(lt.ln_2.out, b.ln_2 + r));
        if (c.norm == ap::Norm::rmsnorm)
          for (int c2 = 0; c2 < C; ++c2) CHECK(lt.ln_2.out[c2] == lt.ln_2.xhat[c2] * m.p().h[l].ln_2_w[c2]);
        CHECK(same_bits(lt.fc, b.fch + static_cast<size_t>(p) * FC));
        CHECK(same_bits(lt.act, b.fch_gelu + static_cast<size_t>(p) * H));
        if (c.mlp == ap::Mlp::swiglu)
          for (int i = 0; i < H; ++i) CHECK(lt.act[i] == lt.silu[i] * lt.fc[H + i]);
        CHECK(same_bits(lt.residual3, b.residual3 + r));
      }
      CHECK(same_bits(tr.logits, a.logits + static_cast<size_t>(p) * V));
    }
  }
  ap::kernels::set_tier(ap::kernels::Tier::fast);
}

TEST_CASE("Block trace: errors name the field, the activations", "[block_trace]") {
  ap::GPT m = random_model(ap::MaskVariant::strict, true);
  const std::vector<int> ids = {1, 2, 3};
  CHECK_THAT(error_of([&] { ap::block_trace(m, ids.data(), 3, 3); }), Catch::StartsWith("position: position is 3: the prompt's positions are 0 to 2"));
  CHECK_THAT(error_of([&] { ap::block_trace(m, ids.data(), 3, -1); }), Catch::StartsWith("position:"));
  const std::vector<int> bad = {1, 99};
  CHECK_THAT(error_of([&] { ap::block_trace(m, bad.data(), 2, 0); }), Catch::StartsWith("ids: ids has 99 at position 1"));
  CHECK(ap::block_math(m.config()).activation == ap::Activation::gelu);
  CHECK(ap::block_math(m.config()).ln_eps == 1e-5f);
  // both activations against their float64 formulas
  std::vector<float> x = {-4.0f, -1.5f, -0.3f, 0.0f, 0.2f, 1.0f, 2.7f, 5.0f}, y(x.size());
  ap::activation_forward(y.data(), x.data(), static_cast<int>(x.size()), ap::Activation::gelu);
  for (size_t i = 0; i < x.size(); ++i) CHECK(y[i] == Approx(0.5 * x[i] * (1 + std::erf(x[i] / std::sqrt(2.0)))).margin(1e-6));
  ap::activation_forward(y.data(), x.data(), static_cast<int>(x.size()), ap::Activation::gelu_new);
  for (size_t i = 0; i < x.size(); ++i) {
    const double t = std::tanh(std::sqrt(2 / M_PI) * (x[i] + 0.044715 * x[i] * x[i] * x[i]));
    CHECK(y[i] == Approx(0.5 * x[i] * (1 + t)).margin(1e-6));
  }
}

TEST_CASE("Surprisal is the forward's own loss, window by window", "[inspect]") {
  ap::GPT m = random_model(ap::MaskVariant::strict, true, 0.1f);
  std::vector<int> ids;
  for (int i = 0; i < 40; ++i) ids.push_back((i * 7 + 3) % 13);
  // one window: its mean is GPT::forward's loss, bit for bit
  const std::vector<int> short_ids(ids.begin(), ids.begin() + 10);
  const auto one = ap::text_surprisal(m, short_ids);
  REQUIRE(one.size() == 1);
  const float loss = m.forward(short_ids.data(), short_ids.data() + 1, 1, 9);
  CHECK(one[0].mean == loss);
  CHECK(one[0].losses.size() == 9);
  double s = 0;
  for (float l : one[0].losses) s += l;
  CHECK(ap::surprisal_mean(one) == Approx(s / 9).epsilon(1e-6));
  // a long text: windows of block_size (16) predictions overlapping by one token
  const auto many = ap::text_surprisal(m, ids);
  REQUIRE(many.size() == 3);  // 39 predictions: 16 + 16 + 7
  CHECK(many[0].offset == 0);
  CHECK(many[1].offset == 16);
  CHECK(many[2].offset == 32);
  CHECK(many[2].losses.size() == 7);
  CHECK(many[1].tokens.front() == many[0].tokens.back());
  for (const auto& w : many) {
    const float l = m.forward(w.tokens.data(), w.tokens.data() + 1, 1, static_cast<int>(w.losses.size()));
    CHECK(w.mean == l);
    for (size_t i = 0; i < w.losses.size(); ++i) CHECK(w.losses[i] == m.losses()[i]);
  }
  CHECK_THAT(error_of([&] { ap::text_surprisal(m, {3}); }), Catch::StartsWith("text: the text has 1 token"));
}

TEST_CASE("The validation windows' surprisal averages to the validation loss, bit for bit", "[inspect]") {
  ap::GPTConfig c = ap::GPTConfig::tiny(0);
  c.block_size = 16;
  ap::TrainConfig t;
  t.batch_size = 4;
  t.steps = 5;
  t.warmup_steps = 1;
  t.eval_batches = 3;
  ap::DataSpec d;
  d.task = "copy";
  d.n_chars = 2000;
  ap::Trainer tr(c, t, d);
  for (int i = 0; i < 3; ++i) tr.step();
  float loss = 0.0f;
  const auto windows = ap::validation_surprisal(tr, &loss);
  CHECK(loss == tr.evaluate());
  REQUIRE(windows.size() == 12);  // 3 batches of 4
  const auto& val = tr.dataset().val;
  for (const auto& w : windows) {
    REQUIRE(w.tokens.size() == 17);
    CHECK(std::equal(w.tokens.begin(), w.tokens.end(), val.begin() + w.offset));
    // each window's losses are the forward's own over that window alone
    const float l = tr.model().forward(w.tokens.data(), w.tokens.data() + 1, 1, 16);
    CHECK(w.mean == Approx(l).epsilon(1e-6));
  }
  // a model loaded without its text cannot score its validation windows
  d.task.clear();
  d.text = std::string(300, 'a') + std::string(300, 'b');
  ap::Trainer text_run(c, t, d);
  ap::Trainer alone(text_run.state());
  CHECK_THAT(error_of([&] { ap::validation_surprisal(alone, &loss); }), Catch::StartsWith("text:"));
}

TEST_CASE("The loss by position at a longer context than trained", "[inspect]") {
  ap::TrainConfig t;
  t.batch_size = 4;
  t.steps = 5;
  t.warmup_steps = 1;
  t.eval_batches = 2;
  ap::DataSpec d;
  d.task = "copy";
  d.n_chars = 3000;
  for (ap::Positions pos : {ap::Positions::rope, ap::Positions::alibi, ap::Positions::none, ap::Positions::learned}) {
    ap::GPTConfig c = ap::GPTConfig::tiny(0);
    c.block_size = 8;
    c.pos = pos;
    ap::Trainer tr(c, t, d);
    for (int i = 0; i < 3; ++i) tr.step();
    // at block_size: the validation windows' own losses, position by position
    float mean = 0.0f;
    const auto windows = ap::validation_surprisal(tr, &mean);
    const ap::PositionLoss at = ap::loss_by_position(tr, 8, 2);
    REQUIRE(at.losses.size() == 8);
    REQUIRE(at.windows == static_cast<int>(windows.size()));
    for (int p = 0; p < 8; ++p) {
      double s = 0;
      for (const auto& w : windows) s += w.losses[p];
      CHECK(at.losses[p] == static_cast<float>(s / windows.size()));
    }
    if (pos == ap::Positions::learned) {
      CHECK_THAT(error_of([&] { ap::loss_by_position(tr, 16, 2); }),
                 Catch::StartsWith("context: learned positions have a row of wpe for each of the 8 positions"));
      continue;
    }
    const ap::PositionLoss longer = ap::loss_by_position(tr, 16, 2);
    REQUIRE(longer.losses.size() == 16);
    // the prefix check: the same windows (ValidationBatches of 16) through the trained model, 8 at a time
    const ap::ValidationBatches vb(tr.dataset().val, 4, 16, 2);
    std::vector<int> in(4 * 16), tg(4 * 16);
    std::vector<double> sums(8, 0.0);
    for (int i = 0; i < vb.num_batches(); ++i) {
      vb.batch(i, in.data(), tg.data(), tr.dataset().val);
      for (int b = 0; b < 4; ++b) {
        tr.model().forward(in.data() + b * 16, tg.data() + b * 16, 1, 8);
        for (int p = 0; p < 8; ++p) sums[p] += tr.model().losses()[p];
      }
    }
    for (int p = 0; p < 8; ++p) CHECK(longer.losses[p] == Approx(sums[p] / longer.windows).epsilon(1e-5));
    CHECK(std::isfinite(longer.mean));
  }
}

TEST_CASE("The heads' mean and the attention rollout", "[inspect]") {
  const int L = 3, NH = 2, T = 4;
  std::vector<float> w(static_cast<size_t>(L) * NH * T * T, 0.0f);
  ap::Rng rng(5);
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < NH; ++h)
      for (int i = 0; i < T; ++i) {
        float* r = &w[((static_cast<size_t>(l) * NH + h) * T + i) * T];
        float s = 0;
        for (int j = 0; j <= i; ++j) s += (r[j] = rng.uniform01() + 0.1f);
        for (int j = 0; j <= i; ++j) r[j] /= s;
      }
  std::vector<float> mean(static_cast<size_t>(L) * T * T), roll(mean.size());
  ap::head_mean(mean.data(), w.data(), L, NH, T);
  ap::attention_rollout(roll.data(), mean.data(), L, T);
  std::vector<double> R(T * T, 0.0);
  for (int l = 0; l < L; ++l) {
    std::vector<double> A(T * T);
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        double m = 0;
        for (int h = 0; h < NH; ++h) m += w[((static_cast<size_t>(l) * NH + h) * T + i) * T + j];
        m /= NH;
        CHECK(mean[(static_cast<size_t>(l) * T + i) * T + j] == Approx(m).epsilon(1e-6).margin(1e-7));
        A[i * T + j] = 0.5 * m + (i == j ? 0.5 : 0.0);  // rows already sum to 1
      }
    std::vector<double> next(T * T, 0.0);
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j)
        for (int k = 0; k < T; ++k) next[i * T + j] += A[i * T + k] * (l ? R[k * T + j] : (k == j ? 1.0 : 0.0));
    R = next;
    for (int i = 0; i < T; ++i) {
      double rowsum = 0;
      for (int j = 0; j < T; ++j) {
        CHECK(roll[(static_cast<size_t>(l) * T + i) * T + j] == Approx(R[i * T + j]).epsilon(1e-5).margin(1e-7));
        rowsum += roll[(static_cast<size_t>(l) * T + i) * T + j];
        if (j > i) CHECK(roll[(static_cast<size_t>(l) * T + i) * T + j] == 0.0f);  // causal: nothing from the future
      }
      CHECK(rowsum == Approx(1.0).epsilon(1e-5));
    }
  }
  // a row the mask hides entirely (inclusive mask, position 0) rolls out as the identity
  std::vector<float> empty(static_cast<size_t>(T) * T, 0.0f), m1(empty.size()), r1(empty.size());
  for (int i = 1; i < T; ++i) empty[static_cast<size_t>(i) * T] = 1.0f;
  ap::head_mean(m1.data(), empty.data(), 1, 1, T);
  ap::attention_rollout(r1.data(), m1.data(), 1, T);
  CHECK(r1[0] == 1.0f);
}
