// test_gpt_variants.cpp — the tiny GPT's variants (gpt.h: pos rope | alibi | none, n_kv_head, norm
// rmsnorm, mlp swiglu, n_inner, window):
//  - validate() names the field at fault; the layout's names and shapes (Llama's for SwiGLU, no wpe
//    without learned positions, no norm bias under RMSNorm), gate_proj and up_proj one after the other;
//  - finite differences on the whole model for each variant and the Llama block (reference tier);
//  - the KV cache: cache_step's logits equal the full forward's at every position (RoPE at the
//    absolute position, grouped-query cache, the window), bit for bit in the reference tier;
//  - the config's JSON (checkpoints, run specs) keeps every variant, and writes none of its keys
//    for the defaults.
// Logits and gradients against an independent PyTorch model: tests/gpt_variants_torch_test.py.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "api/gpt_json.h"
#include "core/base/rng.h"
#include "core/kernels/kernels.h"
#include "core/model/gpt.h"
#include "gpt_test_util.h"

namespace {

using ap::GPT;
using ap::GPTConfig;
using ap::kernels::Tier;

using gpt_test_util::random_tokens;
using gpt_test_util::randomize;
using gpt_test_util::TierGuard;

GPTConfig base_config() {
  GPTConfig c;
  c.vocab_size = 11;
  c.block_size = 9;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 16;
  return c;
}

// The variants under test, by name.
std::vector<std::pair<std::string, GPTConfig>> variants() {
  std::vector<std::pair<std::string, GPTConfig>> out;
  auto add = [&](const std::string& name, auto edit) {
    GPTConfig c = base_config();
    edit(c);
    out.emplace_back(name, c);
  };
  add("rope halves", [](GPTConfig& c) { c.pos = ap::Positions::rope; });
  add("rope interleaved, rope_dims 2, base 100", [](GPTConfig& c) {
    c.pos = ap::Positions::rope;
    c.rope = ap::RopePairing::interleaved;
    c.rope_dims = 2;
    c.rope_base = 100.0f;
  });
  add("alibi, window 3", [](GPTConfig& c) {
    c.pos = ap::Positions::alibi;
    c.window = 3;
  });
  add("no positions, inclusive mask", [](GPTConfig& c) {
    c.pos = ap::Positions::none;
    c.mask = ap::MaskVariant::inclusive;
  });
  add("n_kv_head 2", [](GPTConfig& c) { c.n_kv_head = 2; });
  add("n_kv_head 1, window 4", [](GPTConfig& c) {
    c.n_kv_head = 1;
    c.window = 4;
  });
  add("rmsnorm, swiglu n_inner 24", [](GPTConfig& c) {
    c.norm = ap::Norm::rmsnorm;
    c.mlp = ap::Mlp::swiglu;
    c.n_inner = 24;
  });
  add("llama: rope, rmsnorm, swiglu, n_kv_head 2, no bias", [](GPTConfig& c) {
    c.pos = ap::Positions::rope;
    c.norm = ap::Norm::rmsnorm;
    c.mlp = ap::Mlp::swiglu;
    c.n_kv_head = 2;
    c.bias = false;
    c.ln_eps = 1e-6f;
  });
  add("qwen: head_size 6, qk_norm, qkv_bias, untied, llama3 rope_scaling", [](GPTConfig& c) {
    c.pos = ap::Positions::rope;
    c.norm = ap::Norm::rmsnorm;
    c.mlp = ap::Mlp::swiglu;
    c.n_kv_head = 2;
    c.bias = false;
    c.qkv_bias = true;
    c.qk_norm = true;
    c.head_size = 6;
    c.tie_embeddings = false;
    c.rope_scaling = {4.0, 1.0, 4.0, 8};
  });
  add("head_size 2, untied, learned positions", [](GPTConfig& c) {
    c.head_size = 2;
    c.tie_embeddings = false;
  });
  return out;
}

void check_field(const GPTConfig& c, const std::string& field) {
  try {
    c.validate();
    FAIL("validate() accepted a config whose " << field << " is wrong");
  } catch (const ap::InputError& e) {
    CHECK(e.field == field);
  }
}

}  // namespace

TEST_CASE("GPT variants: validate names the field at fault", "[gpt][variants]") {
  GPTConfig c = base_config();
  c.n_kv_head = 3;  // does not divide 4
  check_field(c, "n_kv_head");
  c = base_config();
  c.n_kv_head = 5;
  check_field(c, "n_kv_head");
  c = base_config();
  c.rope_dims = 2;  // without rope
  check_field(c, "rope_dims");
  c.pos = ap::Positions::rope;
  c.rope_dims = 3;
  check_field(c, "rope_dims");
  c.rope_dims = 6;  // head_dim is 4
  check_field(c, "rope_dims");
  c.rope_dims = 0;
  c.rope_base = 1.0f;
  check_field(c, "rope_base");
  c = base_config();
  c.mlp = ap::Mlp::swiglu;
  c.activation = ap::Activation::gelu_new;
  check_field(c, "activation");
  c = base_config();
  c.window = ap::kMaxBlockSize + 1;
  check_field(c, "window");
  c = base_config();
  c.n_inner = -1;
  check_field(c, "n_inner");
  for (const auto& v : variants()) CHECK_NOTHROW(v.second.validate());
}

TEST_CASE("GPT variants: the layout's names and shapes", "[gpt][variants]") {
  const auto all = variants();
  GPTConfig llama, qwen;
  for (const auto& v : all) {
    if (v.first.rfind("llama", 0) == 0) llama = v.second;
    if (v.first.rfind("qwen", 0) == 0) qwen = v.second;
  }
  {  // Qwen's: c_attn's bias alone, the q/k norms of head_size, lm_head last; c_proj (C, NH·hs)
    std::vector<std::string> got;
    for (const auto& t : ap::param_tensors(qwen))
      if (t.name.rfind("transformer.h.0.attn", 0) == 0 || t.name == "lm_head.weight")
        got.push_back(t.name + " " + std::to_string(t.shape.back()) + "x" + std::to_string(t.shape.front()));
    CHECK(got == std::vector<std::string>{"transformer.h.0.attn.c_attn.weight 16x48",
                                          "transformer.h.0.attn.c_attn.bias 48x48",
                                          "transformer.h.0.attn.q_norm.weight 6x6",
                                          "transformer.h.0.attn.k_norm.weight 6x6",
                                          "transformer.h.0.attn.c_proj.weight 24x16", "lm_head.weight 16x11"});
    CHECK(ap::param_tensors(qwen).back().name == "lm_head.weight");
  }
  const auto ts = ap::param_tensors(llama);
  std::vector<std::string> names;
  for (const auto& t : ts) names.push_back(t.name);
  const std::vector<std::string> block0 = {"transformer.h.0.ln_1.weight", "transformer.h.0.attn.c_attn.weight",
                                           "transformer.h.0.attn.c_proj.weight", "transformer.h.0.ln_2.weight",
                                           "transformer.h.0.mlp.gate_proj.weight", "transformer.h.0.mlp.up_proj.weight",
                                           "transformer.h.0.mlp.down_proj.weight"};
  REQUIRE(names.size() == 1 + 2 * block0.size() + 1);
  CHECK(names[0] == "transformer.wte.weight");  // no wpe under RoPE
  for (size_t i = 0; i < block0.size(); ++i) CHECK(names[1 + i] == block0[i]);
  CHECK(names.back() == "transformer.ln_f.weight");
  // c_attn: q (16), k and v (2 heads of 4 each); gate and up (4·16 each) one after the other
  CHECK(ts[2].shape == ap::Shape{16 + 2 * 2 * 4, 16});
  CHECK(ts[6].offset == ts[5].offset + ts[5].numel);
  GPT m(llama);
  CHECK(m.p().h[0].up_proj_w == m.p().h[0].c_fc_w + 64 * 16);
  CHECK(m.p().wpe == nullptr);
  CHECK(m.p().ln_f_b == nullptr);
  // a SwiGLU MLP with biases: gate's and up's biases one after the other too
  GPTConfig sw = all[6].second;
  sw.norm = ap::Norm::layernorm;
  GPT ms(sw);
  CHECK(ms.p().h[1].up_proj_b == ms.p().h[1].c_fc_b + 24);
  CHECK(ms.p().h[1].ln_2_b != nullptr);
}

TEST_CASE("GPT variants: gradients match central finite differences", "[gpt][variants][gradcheck]") {
  TierGuard guard(Tier::reference);
  for (const auto& v : variants()) {
    GPTConfig cfg = v.second;
    cfg.n_layer = 1;
    GPT m(cfg);
    randomize(m, 5, 0.3f);
    const int B = 2, T = 7;
    const auto ids = random_tokens(B * T, cfg.vocab_size, 3), targets = random_tokens(B * T, cfg.vocab_size, 4);
    m.zero_grad();
    m.forward(ids.data(), targets.data(), B, T);
    m.backward();
    const std::vector<float> grads(m.grads(), m.grads() + m.num_parameters());
    const std::vector<float> p0(m.params(), m.params() + m.num_parameters());
    ap::Rng r(99);
    for (const auto& t : m.tensors()) {
      INFO(v.first << ": " << t.name);
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
      // the five-point difference (error O(ε⁴)): wte, also the lm_head, curves too much for ε² at ε = 1e-2
      const double numeric = (8.0 * (loss_at(eps) - loss_at(-eps)) - (loss_at(2 * eps) - loss_at(-2 * eps))) / (12.0 * eps);
      std::copy(p0.begin(), p0.end(), m.params());
      CHECK(std::fabs(numeric - analytic) <= 2e-3 + 2e-2 * std::fabs(analytic));
    }
  }
}

TEST_CASE("GPT variants: the KV cache's logits equal the full forward's", "[gpt][variants][cache]") {
  for (Tier tier : {Tier::reference, Tier::fast}) {
    TierGuard guard(tier);
    for (const auto& v : variants()) {
      const GPTConfig& cfg = v.second;
      INFO("tier " << ap::kernels::tier_name() << ", " << v.first);
      GPT m(cfg, ap::ModelUse::infer);
      randomize(m, 4, 0.3f);
      const int T = cfg.block_size;
      const auto ids = random_tokens(T, cfg.vocab_size, 5);
      m.forward(ids.data(), nullptr, 1, T);
      const std::vector<float> full(m.logits(), m.logits() + int64_t(T) * cfg.vocab_size);
      m.cache_reset();
      double worst = 0;
      for (int t = 0; t < T; ++t) {
        const float* l = m.cache_step(ids[static_cast<size_t>(t)]);
        for (int k = 0; k < cfg.vocab_size; ++k)
          worst = std::max(worst, std::fabs(double(l[k]) - full[static_cast<size_t>(t * cfg.vocab_size + k)]));
      }
      if (tier == Tier::reference)
        CHECK(worst == 0.0);
      else
        CHECK(worst <= 1e-5);
    }
  }
}

TEST_CASE("GPT variants: the config's JSON keeps every variant, and the defaults write none", "[gpt][variants]") {
  for (const auto& v : variants()) {
    INFO(v.first);
    const ap::json::Value j = ap::config_json(v.second);
    CHECK(ap::read_config(j, "config") == v.second);
  }
  const std::string plain = ap::config_json(GPTConfig::tiny(65)).dump();
  for (const char* key : {"pos", "rope", "n_kv_head", "norm", "mlp", "n_inner", "window"})
    CHECK(plain.find(std::string("\"") + key + "\"") == std::string::npos);
  ap::json::Value j = ap::config_json(variants()[0].second);
  j.set("rope_dims", 3);
  CHECK_THROWS_WITH(ap::read_config(j, "config"), Catch::Contains("rope_dims"));
  ap::json::Value k = ap::config_json(base_config());
  k.set("rope_base", 500);
  CHECK_THROWS_WITH(ap::read_config(k, "config"), Catch::Contains("needs \"pos\": \"rope\""));
}
