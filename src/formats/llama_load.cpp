// llama_load.cpp — LlamaWeights → the GPT's config and parameters (see llama_load.h); the folder
// read natively is llama_folder.cpp.
#include "formats/llama_load.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "core/base/input_error.h"
#include "core/base/number_text.h"

namespace ap {

namespace {

std::string num(long long v) { return std::to_string(v); }
std::string q(const std::string& s) { return "\"" + s + "\""; }

int fits(long long v, int hi, const char* key) {
  if (v > hi) throw InputError(std::string("config.json: ") + key + " " + num(v) + " is more than the " + num(hi) +
                                   " this model runs", key);
  return static_cast<int>(v);
}

// A LlamaTensor's place in the GPT's parameters: the parameter's name and the first row in it.
struct Target {
  std::string param;
  int64_t row = 0;
};

// transformers' name → gpt.h's (q/k/v and gate/up stacked: their first row), or empty.
Target target_of(const std::string& name, const GPTConfig& g) {
  if (name == "model.embed_tokens.weight") return {"transformer.wte.weight"};
  if (name == "model.norm.weight") return {"transformer.ln_f.weight"};
  if (name == "lm_head.weight") return {"lm_head.weight"};
  const std::string pre = "model.layers.";
  if (name.compare(0, pre.size(), pre) != 0) return {};
  const size_t dot = name.find('.', pre.size());
  if (dot == std::string::npos) return {};
  const std::string layer = name.substr(pre.size(), dot - pre.size()), rest = name.substr(dot + 1);
  const std::string h = "transformer.h." + layer + ".";
  const int64_t A = g.attn_width(), KC = int64_t(g.kv_head()) * g.head_dim(), H = g.inner();
  static const std::map<std::string, std::pair<std::string, int>> kMap = {
      {"input_layernorm.weight", {"ln_1.weight", 0}},
      {"post_attention_layernorm.weight", {"ln_2.weight", 0}},
      {"self_attn.q_proj.weight", {"attn.c_attn.weight", 0}},
      {"self_attn.k_proj.weight", {"attn.c_attn.weight", 1}},
      {"self_attn.v_proj.weight", {"attn.c_attn.weight", 2}},
      {"self_attn.q_proj.bias", {"attn.c_attn.bias", 0}},
      {"self_attn.k_proj.bias", {"attn.c_attn.bias", 1}},
      {"self_attn.v_proj.bias", {"attn.c_attn.bias", 2}},
      {"self_attn.q_norm.weight", {"attn.q_norm.weight", 0}},
      {"self_attn.k_norm.weight", {"attn.k_norm.weight", 0}},
      {"self_attn.o_proj.weight", {"attn.c_proj.weight", 0}},
      {"self_attn.o_proj.bias", {"attn.c_proj.bias", 0}},
      {"mlp.gate_proj.weight", {"mlp.gate_proj.weight", 0}},
      {"mlp.up_proj.weight", {"mlp.up_proj.weight", 0}},
      {"mlp.down_proj.weight", {"mlp.down_proj.weight", 0}}};
  (void)H;
  const auto it = kMap.find(rest);
  if (it == kMap.end()) return {};
  const int part = it->second.second;  // q, k or v: rows from 0, A, A + KC
  return {h + it->second.first, part == 0 ? 0 : part == 1 ? A : A + KC};
}

}  // namespace

GPTConfig llama_gpt_config(const HfConfig& c) {
  GPTConfig g;
  g.vocab_size = fits(c.vocab_size, kMaxModelVocab, "vocab_size");
  g.n_embd = fits(c.hidden_size, kMaxEmbd, "hidden_size");
  g.n_layer = fits(c.num_hidden_layers, kMaxLayers, "num_hidden_layers");
  g.n_head = fits(c.num_attention_heads, kMaxHeads, "num_attention_heads");
  g.n_kv_head = fits(c.num_key_value_heads, kMaxHeads, "num_key_value_heads");
  const int hd = fits(c.head_dim, kMaxHeadSize, "head_dim");
  g.head_size = hd * g.n_head == g.n_embd ? 0 : hd;
  g.n_inner = fits(c.intermediate_size, kMaxInner, "intermediate_size");
  g.block_size = static_cast<int>(std::min<long long>(c.max_position_embeddings, kMaxBlockSize));
  g.pos = Positions::rope;
  g.rope = RopePairing::halves;
  g.rope_base = static_cast<float>(c.rope_theta);
  g.rope_scaling = rope_scaling_of(c);
  g.norm = Norm::rmsnorm;
  g.mlp = Mlp::swiglu;
  g.ln_eps = static_cast<float>(c.rms_norm_eps);
  g.bias = c.attention_out_bias;  // Llama's attention_bias: on all four projections (the MLP's: zeros)
  g.qkv_bias = c.attention_bias && !c.attention_out_bias;
  g.qk_norm = c.qk_norm;
  g.tie_embeddings = c.tie_word_embeddings;
  g.window = c.sliding_window > 0 && c.sliding_window < g.block_size ? static_cast<int>(c.sliding_window) : 0;
  try {
    g.validate();
  } catch (const InputError& e) {
    throw InputError(std::string("config.json: this model cannot be run: ") + e.what(), "config.json");
  }
  return g;
}

void check_llama_memory(const GPTConfig& g, int64_t weight_bytes) {
  try {
    GPT::check_memory(g, 1, 1, ModelUse::infer, kMaxOpenBytes, weight_bytes);
  } catch (const InputError& e) {
    throw InputError(e.what(), "model");
  }
}

namespace {

// A file tensor's place in the GPT's parameters, checked: a parameter this config has, fitting it,
// its bytes its shape's in its type. `row`: the first row (a 1-D tensor: the first element).
struct Placed {
  const LlamaTensor* t;
  const ParamTensor* p;
  int64_t row, in, rows;
};

std::vector<Placed> place_llama_tensors(const LlamaWeights& w, const GPTConfig& g, const std::vector<ParamTensor>& tensors,
                                        const std::string& file) {
  std::map<std::string, const ParamTensor*> by_name;
  for (const ParamTensor& t : tensors) by_name[t.name] = &t;
  std::map<std::string, int64_t> filled;  // floats written per parameter
  std::vector<Placed> out;
  for (const LlamaTensor& t : w.tensors) {
    const Target at = target_of(t.name, g);
    const auto it = by_name.find(at.param);
    if (at.param.empty() || it == by_name.end())
      throw InputError(file + ": tensor " + q(t.name) + " is not one this " + w.config.model_type + " model has", t.name);
    const ParamTensor& p = *it->second;
    const int64_t cols = p.shape.size() == 2 ? p.shape[1] : 1;  // a Linear weight's row: `in` floats
    uint64_t numel = 1;
    for (uint64_t d : t.shape) numel *= d;
    const int64_t in = t.shape.size() == 2 ? static_cast<int64_t>(t.shape[1]) : static_cast<int64_t>(numel);
    const int64_t rows = in > 0 ? static_cast<int64_t>(numel) / in : 0;
    if ((t.shape.size() == 2 && in != cols) || at.row * cols + static_cast<int64_t>(numel) > p.numel)
      throw InputError(file + ": tensor " + q(t.name) + " has " + num(static_cast<long long>(numel)) +
                           " values, which do not fit " + q(p.name) + " of this config", t.name);
    if (quant::row_bytes(t.type, static_cast<uint64_t>(in)) * static_cast<uint64_t>(rows) != t.bytes)
      throw InputError(file + ": tensor " + q(t.name) + " has " + num(static_cast<long long>(t.bytes)) +
                           " bytes, not the size of its shape in its type", t.name);
    out.push_back({&t, &p, at.row, in, rows});
    filled[p.name] += static_cast<int64_t>(numel);
  }
  for (const ParamTensor& p : tensors) {
    const int64_t n = filled.count(p.name) ? filled[p.name] : 0;
    const bool zeros = g.bias && n == 0 && p.name.find(".mlp.") != std::string::npos;  // Llama's MLP: no biases
    if (n != p.numel && !zeros)
      throw InputError(file + ": " + q(p.name) + " got " + num(n) + " of its " + num(p.numel) +
                           " values from the file's tensors (a tensor is missing)",
                       p.name);
  }
  return out;
}

// Row r of x, dequantized into out (x.in floats); InputError naming the tensor and the place of a
// value that is not finite.
void dequantize_checked(const Placed& x, int64_t r, float* out, const std::string& file) {
  const LlamaTensor& t = *x.t;
  const uint64_t rb = quant::row_bytes(t.type, static_cast<uint64_t>(x.in));
  quant::dequantize_row(t.type, t.data + static_cast<uint64_t>(r) * rb, out, x.in);
  for (int64_t i = 0; i < x.in; ++i)
    if (!std::isfinite(out[i]))
      throw InputError(file + ": tensor " + q(t.name) + " holds " + format_float(out[i]) + " at [" + num(r) +
                           (t.shape.size() == 2 ? ", " + num(i) : "") + "]: a model's weights must be finite",
                       t.name);
}

// Whether every value of t is finite, told from its bits without converting it: F32, F16 and BF16
// hold ±∞ or NaN exactly when the exponent's bits are all ones. False for the block types (and for
// a value that is not finite): the caller then converts row by row, which names the place at fault.
template <class U>
bool finite_bits(const char* p, uint64_t n, U exponent) {
  constexpr int kBlock = 2048;
  U block[kBlock];  // a block copied out (the bytes need not be aligned), then scanned in a loop that vectorizes
  for (uint64_t at = 0; at < n; at += kBlock) {
    const int m = static_cast<int>(std::min<uint64_t>(kBlock, n - at));
    std::memcpy(block, p + at * sizeof(U), static_cast<size_t>(m) * sizeof(U));
    U bad = 0;
    for (int i = 0; i < m; ++i) bad |= static_cast<U>((block[i] & exponent) == exponent);
    if (bad) return false;
  }
  return true;
}

bool finite_by_bits(const LlamaTensor& t) {
  switch (t.type) {
    case quant::Type::F32: return finite_bits<uint32_t>(t.data, t.bytes / 4, 0x7F800000u);
    case quant::Type::F16: return finite_bits<uint16_t>(t.data, t.bytes / 2, 0x7C00u);
    case quant::Type::BF16: return finite_bits<uint16_t>(t.data, t.bytes / 2, 0x7F80u);
    default: return false;
  }
}

}  // namespace

void fill_llama_params(const LlamaWeights& w, const GPTConfig& g, float* params, const std::string& file) {
  const std::vector<ParamTensor> tensors = param_tensors(g);
  const std::vector<Placed> placed = place_llama_tensors(w, g, tensors, file);
  std::fill(params, params + g.num_parameters(), 0.0f);  // Llama's MLP biases, which no tensor gives
  for (const Placed& x : placed) {  // the conversion to float32, row by row
    const int64_t cols = x.p->shape.size() == 2 ? x.p->shape[1] : 1;
    float* dst = params + x.p->offset + x.row * cols;
    for (int64_t r = 0; r < x.rows; ++r) dequantize_checked(x, r, dst + r * x.in, file);
  }
}

LlamaParamFill llama_param_fill(const LlamaWeights& w, const GPTConfig& g, const std::string& file) {
  auto tensors = std::make_shared<const std::vector<ParamTensor>>(param_tensors(g));
  auto placed = std::make_shared<const std::vector<Placed>>(place_llama_tensors(w, g, *tensors, file));
  return [tensors, placed, file](const ParamTensor& p, int64_t begin, int64_t end, float* out) {
    const bool matrix = p.shape.size() == 2;  // a vector is one row
    const int64_t cols = matrix ? p.shape[1] : p.numel;
    std::fill(out, out + (end - begin) * cols, 0.0f);  // Llama's MLP biases, which no tensor gives
    for (const Placed& x : *placed) {
      if (x.p->name != p.name) continue;
      if (!matrix) {  // its pieces (q | k | v biases) from element x.row
        for (int64_t r = 0; r < x.rows; ++r) dequantize_checked(x, r, out + x.row + r * x.in, file);
        continue;
      }
      for (int64_t r = std::max(begin, x.row); r < std::min(end, x.row + x.rows); ++r)
        dequantize_checked(x, r - x.row, out + (r - begin) * cols, file);
    }
  };
}

std::unique_ptr<GPT> open_llama(const LlamaWeights& w, const std::string& file, TypedOwner owner) {
  const GPTConfig g = llama_gpt_config(w.config);
  const std::vector<ParamTensor> tensors = param_tensors(g);
  const std::vector<Placed> placed = place_llama_tensors(w, g, tensors, file);
  int64_t matrices = 0;  // the 2-D tensors' bytes as stored (typed_weight_bytes counts the rest)
  for (const Placed& x : placed)
    if (x.p->shape.size() == 2) matrices += static_cast<int64_t>(x.t->bytes);
  check_llama_memory(g, GPT::typed_weight_bytes(g, matrices));
  std::vector<TypedSlice> slices;
  std::vector<float> row;
  for (const Placed& x : placed) {
    if (!finite_by_bits(*x.t)) {  // a block type, or a value to name: row by row, finite or refused
      row.resize(static_cast<size_t>(x.in));
      for (int64_t r = 0; r < x.rows; ++r) dequantize_checked(x, r, row.data(), file);
    }
    slices.push_back({x.p->name, x.row, x.t->type, x.t->data, x.rows, x.in});
  }
  try {
    return std::make_unique<GPT>(g, slices, std::move(owner));
  } catch (const InputError& e) {
    throw InputError(file + ": " + e.what(), e.field);
  }
}

LlamaModel load_llama(const LlamaWeights& w, const std::string& file) {
  LlamaModel m;
  m.config = llama_gpt_config(w.config);
  check_llama_memory(m.config);
  m.params.assign(static_cast<size_t>(m.config.num_parameters()), 0.0f);
  fill_llama_params(w, m.config, m.params.data(), file);
  return m;
}

}  // namespace ap
