// test_interp.cpp — the interpretability tools' identities (core/interp): what must hold exactly,
// whatever the model. Their values against an independent PyTorch model are tests/interp_torch_test.py's.
//  - an unhooked run's logits are GPT::forward's, bit for bit, and the last lens point is them;
//  - patching the corrupted run with the clean run's whole residual at any layer restores the clean
//    logits bit for bit; patching the corrupted run with itself changes nothing;
//  - the first two, and the backward, on every variant of gpt.h (positions, norms, MLPs, grouped
//    and multi-query attention, windows, no biases, and the Llama family's head_size, qk_norm,
//    qkv_bias and untied lm_head);
//  - a patching sweep split in parts gives the one sweep's numbers, bit for bit;
//  - the attribution's parts sum to the logit difference;
//  - the backward (what attribution patching multiplies) against a central difference of the metric;
//  - zero-ablating a head equals zeroing its columns of attn.c_proj's weight;
//  - bad input is refused naming the field.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "core/base/rng.h"
#include "core/interp/interp.h"
#include "core/kernels/kernels.h"

namespace {

using namespace ap::interp;

// The models the identities hold for: nanoGPT's (0), GPT-2's layout without biases (1), and the
// variants of gpt.h: the Llama block (RoPE halves, RMSNorm, SwiGLU, grouped-query, no bias) (2),
// RoPE interleaved on part of each head, multi-query, SwiGLU of another width with biases (3),
// ALiBi with a sliding window (4), no positions without biases (5); the Llama family's options:
// Qwen3's heads wider than n_embd/n_head (12 in 32) with the q/k norm and an untied lm_head (6),
// Qwen2's q/k/v biases alone with heads narrower than n_embd/n_head (4 in 32) (7).
constexpr int kModels = 8;
ap::GPT random_model(int which) {
  ap::GPTConfig c = ap::GPTConfig::tiny(13);
  c.block_size = 16;
  c.n_embd = 32;
  if (which == 1) {
    c.activation = ap::Activation::gelu_new;
    c.bias = false;
    c.ln_eps = 1e-3f;
  } else if (which == 2) {
    c.pos = ap::Positions::rope;
    c.norm = ap::Norm::rmsnorm;
    c.mlp = ap::Mlp::swiglu;
    c.n_kv_head = 2;
    c.bias = false;
  } else if (which == 3) {
    c.pos = ap::Positions::rope;
    c.rope = ap::RopePairing::interleaved;
    c.rope_dims = 4;
    c.n_kv_head = 1;
    c.mlp = ap::Mlp::swiglu;
    c.n_inner = 40;
  } else if (which == 4) {
    c.pos = ap::Positions::alibi;
    c.window = 4;
  } else if (which == 5) {
    c.pos = ap::Positions::none;
    c.bias = false;
  } else if (which >= 6) {
    c.pos = ap::Positions::rope;
    c.norm = ap::Norm::rmsnorm;
    c.mlp = ap::Mlp::swiglu;
    c.n_kv_head = 2;
    c.bias = false;
    c.head_size = which == 6 ? 12 : 4;
    c.qk_norm = which == 6;
    c.tie_embeddings = which != 6;
    c.qkv_bias = which == 7;
  }
  ap::GPT m(c, ap::ModelUse::infer);
  ap::Rng rng(5);
  for (int64_t i = 0; i < m.num_parameters(); ++i) m.params()[i] = 0.3f * rng.normal();
  return m;
}

const std::vector<int> kClean = {0, 5, 3, 12, 7, 7, 1, 9, 4, 2};
const std::vector<int> kCorrupt = {0, 5, 3, 12, 8, 7, 1, 9, 4, 11};

}  // namespace

TEST_CASE("interp: a hooked run is the model's forward, and clean patches restore it exactly", "[interp]") {
  for (int which = 0; which < kModels; ++which) {
    INFO("model " << which);
    ap::GPT model = random_model(which);
    const int V = model.config().vocab_size, L = model.config().n_layer, T = int(kClean.size());
    model.forward(kClean.data(), nullptr, 1, T);
    RunCache clean, corrupt, r;
    run(model, kClean, clean);
    for (size_t i = 0; i < clean.logits.size(); ++i) REQUIRE(clean.logits[i] == model.logits()[i]);
    run(model, kCorrupt, corrupt);
    for (int l = 0; l <= L; ++l) {
      const size_t TC = size_t(T) * size_t(model.config().n_embd);
      run(model, kCorrupt, r,
          [&](Site s, int layer, float* act) {
            if (s == Site::resid && layer == l)
              std::copy(clean.resid.begin() + long(l * TC), clean.resid.begin() + long((l + 1) * TC), act);
          },
          l, &corrupt);
      for (size_t i = 0; i < r.logits.size(); ++i) REQUIRE(r.logits[i] == clean.logits[i]);
    }
    // the last lens point is the model's prediction; its top token is the lens's default target
    const Lens lens = logit_lens(model, kClean, {3, -1, true});
    REQUIRE(lens.points.size() == size_t(2 * L + 1));
    for (int t = 0; t < T; ++t) REQUIRE(lens.target_ranks[size_t(2 * L) * size_t(T) + size_t(t)] == 0);
    // the clean prompt patched into itself recovers everything, everywhere
    Metric m{3, 7, -1};
    const Patching self = patch(model, kClean, kCorrupt, m);
    for (int t = 0; t < T; ++t) REQUIRE(self.resid[size_t(L) * size_t(T) + size_t(t)] == (t == T - 1 ? 1.0f : 0.0f));
    // the attribution's parts sum to the logit difference
    const Attribution a = attribute(model, kClean, m);
    REQUIRE(std::abs(a.sum - a.logit) < 1e-4 * (1 + std::abs(a.logit)));
    REQUIRE(a.logit == Approx(double(clean.logits[size_t(T - 1) * V + 3]) - clean.logits[size_t(T - 1) * V + 7]));
  }
}

TEST_CASE("interp: the backward is the metric's derivative", "[interp]") {
  for (int which = 0; which < kModels; ++which) {
    INFO("model " << which);
    ap::GPT model = random_model(which);
    const int C = model.config().n_embd, T = int(kClean.size());
    RunCache c, r;
    run(model, kClean, c);
    RunGrads d;
    backward(model, c, T - 1, 3, 7, d);
    // a step along the gradient at layer 1's residual, position 4 (with a sliding window, T − 2: a
    // key the last position's query sees): the metric moves by |g|²·ε
    const int l = 1, t = model.config().window ? T - 2 : 4;
    const size_t at = (size_t(l) * T + t) * C;
    double g2 = 0.0;
    for (int i = 0; i < C; ++i) g2 += double(d.resid[at + i]) * d.resid[at + i];
    REQUIRE(g2 > 1e-6);
    const double eps = 1e-3 / std::sqrt(g2);
    auto moved = [&](double s) {
      run(model, kClean, r,
          [&](Site site, int layer, float* act) {
            if (site == Site::resid && layer == l)
              for (int i = 0; i < C; ++i) act[size_t(t) * C + i] += float(s * d.resid[at + i]);
          },
          l, &c);
      return metric(r, model.config().vocab_size, T - 1, 3, 7);
    };
    const double slope = (moved(eps) - moved(-eps)) / (2 * eps);
    REQUIRE(slope == Approx(g2).epsilon(2e-2));
  }
}

TEST_CASE("interp: zero-ablating a head is zeroing its columns of attn.c_proj", "[interp]") {
  ap::GPT model = random_model(0);
  const Ablation ab = ablate(model, kClean, AblateMode::zero, {}, {3, 7, -1});
  const int C = model.config().n_embd, hs = model.config().head_dim(), l = 1, h = 2;
  ap::GPT cut = random_model(0);
  float* w = cut.p().h[l].attn_c_proj_w;
  for (int o = 0; o < C; ++o)
    for (int j = h * hs; j < (h + 1) * hs; ++j) w[o * C + j] = 0.0f;
  RunCache r;
  run(cut, kClean, r);
  const int NH = model.config().n_head;
  REQUIRE(run_loss(r, 13) - ab.loss == Approx(ab.head_loss[size_t(l * NH + h)]).margin(1e-5));
  REQUIRE(metric(r, 13, int(kClean.size()) - 1, 3, 7) - ab.metric ==
          Approx(ab.head_metric[size_t(l * NH + h)]).margin(1e-4));
}

TEST_CASE("interp: a patching sweep split in parts is the one sweep, bit for bit", "[interp]") {
  for (int which : {0, 6}) {
    INFO("model " << which);
    ap::GPT model = random_model(which);
    const Metric m{3, 7, -1};
    const Patching whole = patch(model, kClean, kCorrupt, m);
    const int cells = patch_cells(model.config(), int(kClean.size()));
    REQUIRE(cells == int(whole.resid.size() + whole.heads.size() + whole.mlps.size()));
    std::vector<float> resid(whole.resid.size(), 0.0f), heads(whole.heads.size(), 0.0f), mlps(whole.mlps.size(), 0.0f);
    int calls = 0, seen = 0;
    for (int first = 0; first < cells; first += 7) {  // parts of 7 cells; the last one shorter
      const Patching part = patch(model, kClean, kCorrupt, m, [&](int, int) { ++calls; return true; }, first, 7);
      REQUIRE(part.first == first);
      REQUIRE(part.count == std::min(7, cells - first));
      seen += part.count;
      for (size_t i = 0; i < resid.size(); ++i) resid[i] += part.resid[i];  // the others' cells are 0
      for (size_t i = 0; i < heads.size(); ++i) heads[i] += part.heads[i];
      for (size_t i = 0; i < mlps.size(); ++i) mlps[i] += part.mlps[i];
    }
    REQUIRE(seen == cells);
    REQUIRE(calls == cells + (cells + 6) / 7);  // one call per cell, and the end of each part
    REQUIRE(resid == whole.resid);
    REQUIRE(heads == whole.heads);
    REQUIRE(mlps == whole.mlps);
  }
}

TEST_CASE("interp: refusals name the field", "[interp]") {
  ap::GPT model = random_model(0);
  auto field = [](auto f) {
    try {
      f();
    } catch (const ap::InputError& e) {
      return e.field;
    }
    return std::string("none");
  };
  REQUIRE(field([&] { patch(model, kClean, {1, 2}, {3, 7, -1}); }) == "corrupted");
  REQUIRE(field([&] { patch(model, kClean, kClean, {3, 7, -1}); }) == "corrupted");
  REQUIRE(field([&] { attribute(model, kClean, {13, -1, -1}); }) == "token");
  REQUIRE(field([&] { attribute(model, kClean, {1, -1, 10}); }) == "position");
  REQUIRE(field([&] { ablate(model, kClean, AblateMode::mean, {}, {}); }) == "reference");
  REQUIRE(field([&] { ablate(model, kClean, AblateMode::mean, {{1, 2}}, {}); }) == "reference");
  REQUIRE(field([&] { head_scores(model, {9, 4, 0}); }) == "length");
  REQUIRE(field([&] { logit_lens(model, {1, 99}, {}); }) == "ids");
  REQUIRE(field([&] { patch(model, kClean, kCorrupt, {3, 7, -1}, nullptr, 10000); }) == "first");
}
