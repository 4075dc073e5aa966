// smollm.h — W8's model (bench/README.md): SmolLM2-135M's shape (Llama: 30 layers, hidden 576, 9
// heads of 64, 3 key/value heads, vocabulary 49,152, SwiGLU of 1,536, RMSNorm ε 1e-5, RoPE θ
// 100,000 on halves, embeddings tied, no biases: 134,515,008 parameters) with seeded random weights,
// made exactly as bench/peers/smollm.py makes them for the PyTorch peer: element i of the tensor
// `name` (transformers' name, e.g. "model.layers.0.self_attn.q_proj.weight", Linear layout out × in)
// is r = 2·((z >> 40)·2⁻²⁴) − 1 with z = splitmix64(fnv1a64(name) + (i + 1)·0x9E3779B97F4A7C15)
// (gpt2s.h's), RMSNorm weights 1 + 0.1·r, every other tensor (0.02·√3)·r; the matrices then stored
// as BF16 (round to nearest even), Q8_0 or Q4_0 (ggml's quantize_row_q*_0_ref), Q4_K or Q6_K (a plain
// quantizer of this file's, quantize_k below: not ggml's search, so for speed only; only down_proj's
// rows are whole super-blocks, the others fall back as in build()), the norms as float32
// (with BF16, rounded to BF16 first, as a BF16 file's norms are when opened).
// The model is the GPT with typed weights (gpt.h) that opening such a file makes, built here from
// its slices without a file.
// Limits: random weights; the logits agree with the peer's to BF16 matmul rounding, not bit for bit.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/kernels/quant.h"
#include "core/model/gpt.h"
#include "gpt2s.h"

namespace smollm {

constexpr int kPromptLen = 128, kGenTokens = 64, kCheckTokens = 8, kCheckStride = 4096, kCheckFirst = 17;
constexpr int kLayers = 30, kHidden = 576, kHeads = 9, kKvHeads = 3, kVocab = 49152, kInner = 1536;

// Q4_K or Q6_K of one row (k a multiple of 256), rounding each value to its nearest quant: Q4_K's
// sub-blocks of 32 span [min(x, 0), max(x)] in 15 steps, Q6_K's of 16 max|x| in 31; their 6-bit
// (Q4_K) or 8-bit (Q6_K) scales and mins relative to the super-block's largest, as quant.h lays out.
inline void quantize_k(ap::quant::Type t, const float* x, char* out, int64_t k) {
  using namespace ap::quant;
  auto half = [](float v) { return f16_to_f32(f32_to_f16(v)); };
  auto clampi = [](float v, int lo, int hi) { const int i = static_cast<int>(std::lround(v)); return i < lo ? lo : i > hi ? hi : i; };
  for (int64_t b = 0; b < k / kQK_K; ++b, x += kQK_K) {
    int q[kQK_K];
    if (t == Type::Q4_K) {
      BlockQ4_K& y = reinterpret_cast<BlockQ4_K*>(out)[b];
      float scale[8], mins[8], dmax = 0, mmax = 0;
      for (int s = 0; s < 8; ++s) {
        float lo = 0, hi = 0;
        for (int i = 0; i < 32; ++i) lo = std::min(lo, x[32 * s + i]), hi = std::max(hi, x[32 * s + i]);
        scale[s] = (hi - lo) / 15, mins[s] = -lo;
        dmax = std::max(dmax, scale[s]), mmax = std::max(mmax, mins[s]);
      }
      const float d = half(dmax / 63), dmin = half(mmax / 63);
      y.d = f32_to_f16(d), y.dmin = f32_to_f16(dmin);
      int sc[8], m[8];
      for (int s = 0; s < 8; ++s) {
        sc[s] = d > 0 ? clampi(scale[s] / d, 0, 63) : 0, m[s] = dmin > 0 ? clampi(mins[s] / dmin, 0, 63) : 0;
        const float e = d * static_cast<float>(sc[s]), em = dmin * static_cast<float>(m[s]);
        for (int i = 0; i < 32; ++i) q[32 * s + i] = e > 0 ? clampi((x[32 * s + i] + em) / e, 0, 15) : 0;
      }
      for (int j = 0; j < 4; ++j) {
        y.scales[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        y.scales[j + 4] = static_cast<uint8_t>((m[j] & 63) | ((m[j + 4] >> 4) << 6));
        y.scales[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
      }
      for (int i = 0; i < 4; ++i)
        for (int l = 0; l < 32; ++l) y.qs[32 * i + l] = static_cast<uint8_t>(q[64 * i + l] | (q[64 * i + 32 + l] << 4));
    } else {
      BlockQ6_K& y = reinterpret_cast<BlockQ6_K*>(out)[b];
      float scale[16], amax = 0;
      for (int s = 0; s < 16; ++s) {
        float a = 0;
        for (int i = 0; i < 16; ++i) a = std::max(a, std::fabs(x[16 * s + i]));
        scale[s] = a / 31, amax = std::max(amax, scale[s]);
      }
      const float d = half(amax / 127);
      y.d = f32_to_f16(d);
      for (int s = 0; s < 16; ++s) {
        const int sc = d > 0 ? clampi(scale[s] / d, 0, 127) : 0;
        y.scales[s] = static_cast<int8_t>(sc);
        const float e = d * static_cast<float>(sc);
        for (int i = 0; i < 16; ++i) q[16 * s + i] = (e > 0 ? clampi(x[16 * s + i] / e, -32, 31) : 0) + 32;
      }
      for (int n = 0; n < 2; ++n)
        for (int l = 0; l < 32; ++l) {
          const int* v = q + 128 * n + l;
          y.ql[64 * n + l] = static_cast<uint8_t>((v[0] & 15) | ((v[64] & 15) << 4));
          y.ql[64 * n + l + 32] = static_cast<uint8_t>((v[32] & 15) | ((v[96] & 15) << 4));
          y.qh[32 * n + l] = static_cast<uint8_t>((v[0] >> 4) | ((v[32] >> 4) << 2) | ((v[64] >> 4) << 4) | ((v[96] >> 4) << 6));
        }
    }
  }
}

inline ap::GPTConfig config() {
  ap::GPTConfig g;
  g.vocab_size = kVocab;
  g.block_size = 8192;  // max_position_embeddings
  g.n_layer = kLayers;
  g.n_head = kHeads;
  g.n_kv_head = kKvHeads;
  g.n_embd = kHidden;
  g.n_inner = kInner;
  g.pos = ap::Positions::rope;
  g.rope = ap::RopePairing::halves;
  g.rope_base = 100000.0f;
  g.norm = ap::Norm::rmsnorm;
  g.mlp = ap::Mlp::swiglu;
  g.ln_eps = 1e-5f;
  g.bias = false;
  g.tie_embeddings = true;
  return g;
}

inline std::vector<int> prompt() {
  std::vector<int> p(kPromptLen);
  for (int i = 0; i < kPromptLen; ++i) p[static_cast<size_t>(i)] = (i * 3083 + 11) % kVocab;
  return p;
}

// The values of transformers' tensor `name` (see the top of this file; gpt2s.h's arithmetic).
inline std::vector<float> values(const std::string& name, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  const bool norm = name.find("norm.weight") != std::string::npos;
  const float scale = norm ? 0.1f : static_cast<float>(0.02 * 1.7320508075688772);
  const uint64_t seed = gpt2s::fnv1a64(name);
  for (int64_t i = 0; i < n; ++i) {
    const float v = gpt2s::uniform(seed, i) * scale;
    out[static_cast<size_t>(i)] = norm ? 1.0f + v : v;
  }
  return out;
}

// The model with its matrices in `type` (BF16, Q8_0 or Q4_0), as opening the file would make it.
inline std::unique_ptr<ap::GPT> model(ap::quant::Type type) {
  const int C = kHidden, KC = kKvHeads * (kHidden / kHeads), H = kInner;
  struct T {
    std::string hf, ours;
    int64_t row, rows, cols;
  };
  std::vector<T> ts = {{"model.embed_tokens.weight", "transformer.wte.weight", 0, kVocab, C},
                       {"model.norm.weight", "transformer.ln_f.weight", 0, 1, C}};
  for (int l = 0; l < kLayers; ++l) {
    const std::string hf = "model.layers." + std::to_string(l) + ".", ours = "transformer.h." + std::to_string(l) + ".";
    ts.push_back({hf + "input_layernorm.weight", ours + "ln_1.weight", 0, 1, C});
    ts.push_back({hf + "self_attn.q_proj.weight", ours + "attn.c_attn.weight", 0, C, C});
    ts.push_back({hf + "self_attn.k_proj.weight", ours + "attn.c_attn.weight", C, KC, C});
    ts.push_back({hf + "self_attn.v_proj.weight", ours + "attn.c_attn.weight", C + KC, KC, C});
    ts.push_back({hf + "self_attn.o_proj.weight", ours + "attn.c_proj.weight", 0, C, C});
    ts.push_back({hf + "post_attention_layernorm.weight", ours + "ln_2.weight", 0, 1, C});
    ts.push_back({hf + "mlp.gate_proj.weight", ours + "mlp.gate_proj.weight", 0, H, C});
    ts.push_back({hf + "mlp.up_proj.weight", ours + "mlp.up_proj.weight", 0, H, C});
    ts.push_back({hf + "mlp.down_proj.weight", ours + "mlp.down_proj.weight", 0, C, H});
  }
  std::vector<std::string> bytes;  // each slice's, alive until the model has copied them
  bytes.reserve(ts.size());
  std::vector<ap::TypedSlice> slices;
  for (const T& t : ts) {
    const std::vector<float> v = values(t.hf, t.rows * t.cols);
    // rows not whole super-blocks (576 values) take what llama.cpp's Q4_K_M falls back to, near enough:
    // Q4_0 for Q4_K, Q8_0 for Q6_K (only down_proj's rows of 1,536 are K-quants)
    const bool k_quant = type == ap::quant::Type::Q4_K || type == ap::quant::Type::Q6_K;
    const ap::quant::Type ty = t.rows == 1 ? ap::quant::Type::F32
                               : k_quant && t.cols % ap::quant::kQK_K != 0
                                   ? (type == ap::quant::Type::Q4_K ? ap::quant::Type::Q4_0 : ap::quant::Type::Q8_0)
                                   : type;
    const uint64_t rb = ap::quant::row_bytes(ty, static_cast<uint64_t>(t.cols));
    std::string b(rb * static_cast<uint64_t>(t.rows), '\0');
    for (int64_t r = 0; r < t.rows; ++r) {
      const float* x = v.data() + r * t.cols;
      char* out = &b[rb * static_cast<uint64_t>(r)];
      if (ty == ap::quant::Type::F32 && type == ap::quant::Type::BF16)  // a BF16 file's norms, widened
        for (int64_t i = 0; i < t.cols; ++i) {
          const float f = ap::quant::bf16_to_f32(ap::quant::f32_to_bf16(x[i]));
          std::memcpy(out + 4 * i, &f, 4);
        }
      else if (ty == ap::quant::Type::F32) std::memcpy(out, x, rb);
      else if (ty == ap::quant::Type::Q8_0) ap::quant::quantize_row_q8_0(x, out, t.cols);
      else if (ty == ap::quant::Type::Q4_0) ap::quant::quantize_row_q4_0(x, out, t.cols);
      else if (ty == ap::quant::Type::Q4_K || ty == ap::quant::Type::Q6_K) quantize_k(ty, x, out, t.cols);
      else
        for (int64_t i = 0; i < t.cols; ++i) {
          const uint16_t h = ap::quant::f32_to_bf16(x[i]);
          std::memcpy(out + 2 * i, &h, 2);
        }
    }
    bytes.push_back(std::move(b));
    slices.push_back({t.ours, t.row, ty, bytes.back().data(), t.rows, t.cols});
  }
  return std::make_unique<ap::GPT>(config(), slices);
}

}  // namespace smollm
