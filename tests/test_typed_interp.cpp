// test_typed_interp.cpp — the block walk and the interpretability runs on an opened model with typed
// weights (gpt.h "Typed weights"): a BF16 and a Q8_0 model of the Llama family (Qwen2's q/k/v
// biases and tied embeddings; Qwen3's q/k norm with an untied lm_head) against the same model
// converted to float32 first (load_llama). In the reference tier every number is the float
// model's bit for bit — the walk (block_trace, whose products are the reference kernel on rows
// dequantized a chunk at a time), the logit lens, direct logit attribution, activation patching
// and attribution patching (their forward the typed products of typed_matmul.h, the reference
// tier's the float reference kernel's sums: test_typed_weights.cpp; their backward the reference
// kernel on dequantized rows) and the rows a matrix shows (matrix_rows); in the fast tier within
// 1e-4 of it (float32 activations). And the model stays typed: typed() still true and
// weight_bytes() unchanged after each call (a call that converted it would double a BF16 model's
// weights). Against PyTorch: tests/walk_torch_test.py and tests/interp_torch_test.py (float models).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/interp/interp.h"
#include "core/kernels/bf16_gemm.h"
#include "core/kernels/kernels.h"
#include "core/model/block_trace.h"
#include "formats/llama_load.h"
#include "llama_weights_test_util.h"

namespace {

using ap::quant::Type;

// Heads of 64: c_attn's 512 rows and U's 300 converted in chunks of 256 (GPT::matrix_forward).
ap::HfConfig qwen2() {
  ap::HfConfig c = ap_test::small_hf_config("qwen2", 300, 64, 96, 64, 32);
  c.attention_bias = true;  // q/k/v biases
  c.tie_word_embeddings = true;
  return c;
}

ap::HfConfig qwen3() {
  ap::HfConfig c = qwen2();
  c.model_type = "qwen3";
  c.attention_bias = false;
  c.qk_norm = true;
  c.head_dim = 32;  // 4 heads of 32 in a hidden size of 64
  c.tie_word_embeddings = false;  // lm_head of its own
  return c;
}

std::unique_ptr<ap::GPT> float_model(const ap::LlamaWeights& w) {
  ap::LlamaModel m = ap::load_llama(w, "test");
  auto g = std::make_unique<ap::GPT>(m.config, ap::ModelUse::infer);
  std::copy(m.params.begin(), m.params.end(), g->params());
  return g;
}

const std::vector<int> kClean = {3, 17, 42, 0, 9, 49, 5, 23, 11};
const std::vector<int> kCorrupt = {3, 17, 41, 0, 9, 2, 5, 23, 11};

// Every number the walk and the interpretability calls give, one after the other.
void push(std::vector<float>& out, const std::vector<float>& v) { out.insert(out.end(), v.begin(), v.end()); }
void push_ln(std::vector<float>& out, const ap::LayerNormTrace& t) {
  push(out, t.x);
  out.insert(out.end(), {t.mean, t.var, t.rstd});
  push(out, t.xhat);
  push(out, t.out);
}
std::vector<float> walk_numbers(const ap::GPT& m, int position) {
  const ap::BlockTrace t = ap::block_trace(m, kClean.data(), static_cast<int>(kClean.size()), position);
  std::vector<float> out;
  for (const auto* v : {&t.wte, &t.wpe, &t.encoded, &t.logits, &t.probs}) push(out, *v);
  for (const ap::LayerTrace& l : t.layers) {
    push_ln(out, l.ln_1);
    push_ln(out, l.ln_2);
    for (const auto* v : {&l.q, &l.k, &l.v, &l.q_lin, &l.k_lin, &l.q_rstd, &l.k_rstd, &l.q_raw, &l.k_raw, &l.keys,
                          &l.values, &l.atty, &l.attn_proj, &l.residual2, &l.fc, &l.silu, &l.act, &l.mlp_proj,
                          &l.residual3})
      push(out, *v);
    for (const ap::HeadTrace& h : l.heads)
      for (const auto* v : {&h.dots, &h.scores, &h.weights, &h.context}) push(out, *v);
  }
  push_ln(out, t.ln_f);
  return out;
}
std::vector<float> lens_numbers(const ap::GPT& m) {
  const ap::interp::Lens l = ap::interp::logit_lens(m, kClean, {});
  std::vector<float> out = l.top_probs;
  push(out, l.target_probs);
  for (int i : l.top_ids) out.push_back(static_cast<float>(i));
  return out;
}
std::vector<float> attribution_numbers(const ap::GPT& m) {
  const ap::interp::Attribution a = ap::interp::attribute(m, kClean, {7, 12, -1});
  std::vector<float> out = a.heads;
  for (const auto* v : {&a.mlps, &a.attn_bias, &a.mlp_bias}) push(out, *v);
  out.insert(out.end(), {a.wte, a.wpe, a.ln_f_bias, static_cast<float>(a.sum), static_cast<float>(a.logit)});
  return out;
}
std::vector<float> patch_numbers(const ap::GPT& m) {
  const ap::interp::Patching p = ap::interp::patch(m, kClean, kCorrupt, {7, 12, -1});
  std::vector<float> out = p.resid;
  for (const auto* v : {&p.heads, &p.mlps}) push(out, *v);
  out.insert(out.end(), {static_cast<float>(p.clean), static_cast<float>(p.corrupted)});
  return out;
}
std::vector<float> attribution_patch_numbers(const ap::GPT& m) {
  const ap::interp::Patching p = ap::interp::attribution_patch(m, kClean, kCorrupt, {7, 12, -1});
  std::vector<float> out = p.resid;
  for (const auto* v : {&p.heads, &p.mlps}) push(out, *v);
  out.insert(out.end(), {static_cast<float>(p.clean), static_cast<float>(p.corrupted)});
  return out;
}
// Every row of every matrix (matrix_rows: what the walk's weights view shows).
std::vector<float> matrix_numbers(const ap::GPT& m) {
  using M = ap::GPT::Matrix;
  std::vector<float> out;
  for (int l = 0; l < m.config().n_layer; ++l)
    for (M which : {M::c_attn, M::attn_c_proj, M::c_fc, M::mlp_c_proj, M::wte, M::head}) {
      std::vector<float> rows(static_cast<size_t>(m.matrix_rows(which)) * static_cast<size_t>(m.matrix_cols(which)));
      m.matrix_rows(which, l, 0, m.matrix_rows(which), rows.data());
      push(out, rows);
    }
  return out;
}

struct TierGuard {
  ap::kernels::Tier was = ap::kernels::tier();
  ~TierGuard() {
    ap::kernels::set_tier(was);
    ap::kernels::bf16::set_enabled(true);
  }
};

}  // namespace

TEST_CASE("typed weights: the walk and the interpretability runs keep the model typed, the float model's numbers",
          "[llama][typed][interp][walk]") {
  const auto which = GENERATE(0, 1, 2, 3);
  const ap::HfConfig c = which % 2 ? qwen3() : qwen2();
  const Type type = which < 2 ? Type::BF16 : Type::Q8_0;
  INFO(c.model_type << " in " << ap::quant::type_info(type).name);
  const ap::LlamaWeights w = ap_test::random_llama_weights(c, 11, 0.3f, [&](int) { return type; });
  std::unique_ptr<ap::GPT> typed = ap::open_llama(w, "test");
  std::unique_ptr<ap::GPT> plain = float_model(w);
  REQUIRE(typed->typed());
  const int64_t bytes = typed->weight_bytes();
  CHECK(bytes * 3 < plain->weight_bytes() * 2);  // BF16: about half; Q8_0: about a quarter
  const std::vector<std::pair<std::string, std::function<std::vector<float>(const ap::GPT&)>>> calls = {
      {"walk, the first position", [](const ap::GPT& m) { return walk_numbers(m, 0); }},
      {"walk, the last position", [](const ap::GPT& m) { return walk_numbers(m, static_cast<int>(kClean.size()) - 1); }},
      {"the logit lens", lens_numbers},
      {"attribution", attribution_numbers},
      {"patching", patch_numbers},
      {"attribution patching", attribution_patch_numbers},
      {"the weights' rows", matrix_numbers}};
  TierGuard guard;
  ap::kernels::bf16::set_enabled(false);  // float32 activations (bf16_gemm.h's are test_bf16_gemm.cpp's)
  for (const ap::kernels::Tier tier : {ap::kernels::Tier::reference, ap::kernels::Tier::fast}) {
    ap::kernels::set_tier(tier);
    for (const auto& [name, call] : calls) {
      INFO(name << " in the " << ap::kernels::tier_name() << " tier");
      const std::vector<float> want = call(*plain), got = call(*typed);
      // (b) the model stays typed: its weights take what they took
      CHECK(typed->typed());
      CHECK(typed->weight_bytes() == bytes);
      // (a) the float model's numbers
      REQUIRE(got.size() == want.size());
      REQUIRE(!got.empty());
      if (tier == ap::kernels::Tier::reference || name.rfind("walk", 0) == 0 || name == "the weights' rows") {
        CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
      } else {
        float worst = 0.0f;
        for (size_t i = 0; i < got.size(); ++i)
          worst = std::max(worst, std::fabs(got[i] - want[i]) / std::max(1.0f, std::fabs(want[i])));
        INFO("largest difference " << worst);
        CHECK(worst <= 1e-4f);
      }
    }
  }
}

TEST_CASE("typed weights: what converts to float32 is seen by the check above", "[llama][typed][interp]") {
  // the check's own witness: p() converts (the planted bug a call left reading it would be)
  const ap::LlamaWeights w = ap_test::random_llama_weights(qwen2(), 11, 0.3f, [](int) { return Type::BF16; });
  std::unique_ptr<ap::GPT> m = ap::open_llama(w, "test");
  const int64_t bytes = m->weight_bytes();
  (void)m->vectors();
  CHECK(m->typed());
  (void)m->p();
  CHECK(!m->typed());
  CHECK(m->weight_bytes() > bytes * 19 / 10);
}
