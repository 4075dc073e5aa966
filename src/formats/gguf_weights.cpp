// gguf_weights.cpp — a GGUF file of the Llama family as LlamaWeights (see gguf_weights.h).
#include "formats/gguf_weights.h"

#include <cmath>
#include <cstring>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/base/input_error.h"
#include "formats/hf_folder.h"

namespace ap {

namespace {

// A layer's tensors: llama.cpp's suffix after "blk.N.", transformers' after "model.layers.N.".
const std::pair<const char*, const char*> kLayerNames[] = {
    {"attn_norm.weight", "input_layernorm.weight"},
    {"attn_q.weight", "self_attn.q_proj.weight"},
    {"attn_q.bias", "self_attn.q_proj.bias"},
    {"attn_k.weight", "self_attn.k_proj.weight"},
    {"attn_k.bias", "self_attn.k_proj.bias"},
    {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_v.bias", "self_attn.v_proj.bias"},
    {"attn_output.weight", "self_attn.o_proj.weight"},
    {"attn_output.bias", "self_attn.o_proj.bias"},
    {"attn_q_norm.weight", "self_attn.q_norm.weight"},
    {"attn_k_norm.weight", "self_attn.k_norm.weight"},
    {"ffn_norm.weight", "post_attention_layernorm.weight"},
    {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},
    {"ffn_down.weight", "mlp.down_proj.weight"},
};
const std::pair<const char*, const char*> kModelNames[] = {
    {"token_embd.weight", "model.embed_tokens.weight"},
    {"output_norm.weight", "model.norm.weight"},
    {"output.weight", "lm_head.weight"},
};
constexpr const char* kRopeFreqs = "rope_freqs.weight";

// "<prefix><digits>.<rest>": the layer's number and the rest, or false.
bool split_layer(const std::string& name, const std::string& prefix, std::string& layer, std::string& rest) {
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  size_t k = prefix.size();
  while (k < name.size() && name[k] >= '0' && name[k] <= '9') ++k;
  if (k == prefix.size() || k - prefix.size() > 6 || k >= name.size() || name[k] != '.') return false;
  if (name[prefix.size()] == '0' && k - prefix.size() > 1) return false;  // no leading zeros
  layer = name.substr(prefix.size(), k - prefix.size());
  rest = name.substr(k + 1);
  return true;
}

[[noreturn]] void refuse(const std::string& what, const std::string& field, const std::string& msg) {
  throw InputError(what + ": " + msg, field);
}

std::string dims_text(const std::vector<uint64_t>& d) {
  std::string s = "[";
  for (size_t k = 0; k < d.size(); ++k) s += (k ? ", " : "") + std::to_string(d[k]);
  return s + "]";
}

long long dim(const std::string& what, const std::string& key, uint64_t v, long long hi) {
  if (v > static_cast<uint64_t>(hi)) refuse(what, key, key + " is " + std::to_string(v) + ", past the limit of " + std::to_string(hi));
  return static_cast<long long>(v);
}

// tokenizer.ggml.<key> as an id below vocab, or none.
void token_ids(const gguf::File& f, const std::string& what, const char* key, long long vocab, std::vector<long long>& out) {
  const std::string k = std::string("tokenizer.ggml.") + key;
  const gguf::Value* v = f.find(k);
  if (!v) return;
  if (!v->is_integer()) refuse(what, k, k + " is " + gguf::value_text(*v) + ", not an integer");
  const bool is_signed = v->type == gguf::ValueType::i8 || v->type == gguf::ValueType::i16 ||
                         v->type == gguf::ValueType::i32 || v->type == gguf::ValueType::i64;
  const long long id = is_signed ? static_cast<long long>(v->i) : (v->u > uint64_t(1) << 40 ? -1 : static_cast<long long>(v->u));
  if (id < 0 || id >= vocab)
    refuse(what, k, k + " is " + gguf::value_text(*v) + ", not a token of the " + std::to_string(vocab) + " the model embeds");
  out.push_back(id);
}

// Llama 3's frequency factors (as llama.cpp's converter writes them from rope_scaling, and as
// hf_config's rope_inverse_frequencies applies them) for the given factor.
double llama3_factor(double inv, const HfRopeScaling& s) {
  const double pi = 3.14159265358979323846;
  const double old_len = static_cast<double>(s.original_max_position_embeddings);
  const double wavelen = 2 * pi / inv;
  if (wavelen < old_len / s.high_freq_factor) return 1;
  if (wavelen > old_len / s.low_freq_factor) return s.factor;
  const double smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  return 1 / ((1 - smooth) / s.factor + smooth);
}

void read_rope_freqs(const ByteSource& src, const gguf::File& f, const std::string& what, HfConfig& c, bool adjacent) {
  const gguf::TensorInfo* t = f.tensor(kRopeFreqs);
  if (!t) return;
  const uint64_t half = static_cast<uint64_t>(c.head_dim / 2);
  if (t->dims != std::vector<uint64_t>{half} || t->type != 0)
    refuse(what, t->name, "tensor '" + t->name + "' is " + t->type_name + " " + dims_text(t->dims) +
                              ", not F32 [" + std::to_string(half) + "] (one frequency factor per pair of the head's " +
                              std::to_string(c.head_dim) + " dimensions)");
  if (!adjacent)
    refuse(what, t->name, "tensor '" + t->name + "' (RoPE frequency factors) is in a " + c.model_type +
                              " file: we run it for llama files only (Llama 3's scaling)");
  std::vector<float> ff(half);
  std::memcpy(ff.data(), gguf::tensor_data(src, f, *t), half * 4);
  double top = 0;
  bool all_one = true;
  for (float x : ff) {
    if (!(std::isfinite(x) && x > 0))
      refuse(what, t->name, "tensor '" + t->name + "' holds " + std::to_string(x) + ", not a positive frequency factor");
    top = std::max(top, static_cast<double>(x));
    all_one = all_one && x == 1.0f;
  }
  if (all_one) return;
  HfRopeScaling s;
  s.type = "llama3";
  s.factor = top;
  s.low_freq_factor = 1;
  s.high_freq_factor = 4;
  s.original_max_position_embeddings = 8192;
  for (uint64_t i = 0; i < half; ++i) {
    const double inv = 1.0 / std::pow(c.rope_theta, static_cast<double>(2 * i) / static_cast<double>(c.head_dim));
    const double want = llama3_factor(inv, s);
    if (std::fabs(ff[i] - want) > 1e-5 * want)
      refuse(what, t->name, "tensor '" + t->name + "' holds frequency factor " + std::to_string(ff[i]) + " at " +
                                std::to_string(i) + ", where Llama 3's rule (factor " + std::to_string(top) +
                                ", low_freq_factor 1, high_freq_factor 4, original context 8192) gives " +
                                std::to_string(want) + ": other RoPE scalings are not run");
  }
  c.rope_scaling = s;
}

}  // namespace

namespace {

// A tensor's name in the other naming, from GGUF's to Hugging Face's (to_hf) or back; "" if none.
std::string renamed(const std::string& name, bool to_hf) {
  for (const auto& [g, h] : kModelNames)
    if (name == (to_hf ? g : h)) return to_hf ? h : g;
  const std::string from_layers = to_hf ? "blk." : "model.layers.", to_layers = to_hf ? "model.layers." : "blk.";
  std::string layer, rest;
  if (!split_layer(name, from_layers, layer, rest)) return std::string();
  for (const auto& [g, h] : kLayerNames)
    if (rest == (to_hf ? g : h)) return to_layers + layer + "." + (to_hf ? h : g);
  return std::string();
}

}  // namespace

std::string gguf_tensor_name(const std::string& hf) { return renamed(hf, false); }

std::string hf_tensor_name(const std::string& gguf) { return renamed(gguf, true); }

HfConfig gguf_hf_config(const ByteSource& src, const gguf::File& f, const std::string& what) {
  const gguf::ModelConfig m = gguf::read_model_config(f, what);
  const std::string a = m.architecture + ".";
  HfConfig c;
  c.model_type = m.architecture;
  c.hidden_act = "silu";
  c.hidden_size = dim(what, a + "embedding_length", m.embedding_length, kMaxHfDim);
  c.intermediate_size = dim(what, a + "feed_forward_length", m.feed_forward_length, kMaxHfDim);
  c.num_hidden_layers = dim(what, a + "block_count", m.block_count, kMaxHfLayers);
  c.num_attention_heads = dim(what, a + "attention.head_count", m.head_count, kMaxHfDim);
  c.num_key_value_heads = dim(what, a + "attention.head_count_kv", m.head_count_kv, kMaxHfDim);
  c.head_dim = dim(what, a + "attention.key_length", m.key_length, kMaxHfDim);
  c.max_position_embeddings = dim(what, a + "context_length", m.context_length, kMaxHfDim);
  if (m.value_length != m.key_length)
    refuse(what, a + "attention.value_length", a + "attention.value_length is " + std::to_string(m.value_length) +
                                                   ", not the key_length " + std::to_string(m.key_length) + ": we run heads whose values are as wide as their keys");
  if (c.head_dim % 2) refuse(what, a + "attention.key_length", a + "attention.key_length is odd: the rotation pairs dimensions");
  if (m.rope_dimension_count != m.key_length)
    refuse(what, a + "rope.dimension_count", a + "rope.dimension_count is " + std::to_string(m.rope_dimension_count) +
                                                 ", not the head's " + std::to_string(m.key_length) + ": a partial rotation, which we do not run");
  if (!m.rope_scaling_type.empty())
    refuse(what, a + "rope.scaling.type", a + "rope.scaling.type is '" + m.rope_scaling_type +
                                              "': we run no RoPE scaling but Llama 3's, which llama.cpp writes as rope_freqs.weight");
  if (m.rope_scaling_factor != 0 && m.rope_scaling_factor != 1)
    refuse(what, a + "rope.scaling.factor", a + "rope.scaling.factor is " + std::to_string(m.rope_scaling_factor) +
                                                ": we run no RoPE scaling but Llama 3's, which llama.cpp writes as rope_freqs.weight");
  c.rope_theta = m.rope_freq_base;
  c.rms_norm_eps = m.rms_epsilon;
  c.sliding_window = dim(what, a + "attention.sliding_window", m.sliding_window, kMaxHfDim);
  const gguf::TensorInfo* embd = f.tensor("token_embd.weight");
  if (!embd) refuse(what, "token_embd.weight", "there is no tensor 'token_embd.weight' (model.embed_tokens.weight)");
  if (embd->dims.size() != 2)
    refuse(what, embd->name, "tensor 'token_embd.weight' has shape " + dims_text(embd->dims) + ", not [width, vocabulary]");
  c.vocab_size = dim(what, embd->name, embd->dims[1], kMaxHfDim);
  if (m.vocab_size && m.vocab_size != embd->dims[1]) {
    const bool key = f.find(a + "vocab_size") != nullptr;
    if (key || m.vocab_size > embd->dims[1])
      refuse(what, key ? a + "vocab_size" : "tokenizer.ggml.tokens",
             (key ? a + "vocab_size is " : std::string("the tokenizer has ")) + std::to_string(m.vocab_size) +
                 (key ? "" : " tokens") + ", but token_embd.weight embeds " + std::to_string(embd->dims[1]));
  }
  c.tie_word_embeddings = f.tensor("output.weight") == nullptr;
  c.qk_norm = m.architecture == "qwen3";
  c.attention_bias = m.architecture == "qwen2" || f.tensor("blk.0.attn_q.bias") != nullptr;
  c.attention_out_bias = m.architecture != "qwen2" && c.attention_bias;
  token_ids(f, what, "bos_token_id", c.vocab_size, c.bos_token_ids);
  token_ids(f, what, "eos_token_id", c.vocab_size, c.eos_token_ids);
  read_rope_freqs(src, f, what, c, m.rope_adjacent_pairs);
  return c;
}

void gguf_rows_to_hf(const char* in, char* out, uint64_t rows, uint64_t row_bytes, uint64_t heads) {
  const uint64_t hd = rows / heads, half = hd / 2;
  for (uint64_t h = 0; h < heads; ++h)
    for (uint64_t a = 0; a < 2; ++a)
      for (uint64_t j = 0; j < half; ++j)
        std::memcpy(out + (h * hd + a * half + j) * row_bytes, in + (h * hd + 2 * j + a) * row_bytes, row_bytes);
}

LlamaWeights read_gguf_weights(const ByteSource& src, const gguf::File& f, const std::string& what) {
  LlamaWeights w;
  w.config = gguf_hf_config(src, f, what);
  const HfConfig& c = w.config;
  const bool adjacent = c.model_type == "llama";
  std::unordered_set<std::string> used{kRopeFreqs};
  for (const auto& [hf, shape] : hf_expected_tensors(c)) {
    const std::string g = gguf_tensor_name(hf);
    used.insert(g);
    const std::vector<uint64_t> dims(shape.rbegin(), shape.rend());
    const gguf::TensorInfo* t = f.tensor(g);
    if (!t)
      refuse(what, g, "there is no tensor '" + g + "' (" + hf + " " + dims_text(dims) + ", ne[0] first): the " +
                          c.model_type + " model of " + std::to_string(c.num_hidden_layers) + " layers has it");
    if (t->dims != dims)
      refuse(what, g, "tensor '" + g + "' (" + hf + ") has shape " + dims_text(t->dims) + " (ne[0] first), but the model's config gives " +
                          dims_text(dims));
    gguf::check_runnable(*t, what);
    LlamaTensor out;
    out.name = hf;
    out.shape = shape;
    out.type = quant::type_info(t->type)->type;
    out.bytes = t->bytes;
    out.data = gguf::tensor_data(src, f, *t);
    const bool q = hf.find("self_attn.q_proj.") != std::string::npos, k = hf.find("self_attn.k_proj.") != std::string::npos;
    if (adjacent && (q || k)) {
      const uint64_t rows = shape[0], values = shape.size() == 2 ? shape[1] : 1;
      const quant::TypeInfo& ti = quant::type_info(out.type);
      if (values % static_cast<uint64_t>(ti.block) != 0)
        refuse(what, g, "tensor '" + g + "' is " + ti.name + ": a bias of a block type cannot have its rows put back in " +
                            "Hugging Face's order (F32, F16 or BF16 can)");
      const uint64_t heads = static_cast<uint64_t>(q ? c.num_attention_heads : c.num_key_value_heads);
      w.owned.emplace_back(static_cast<size_t>(t->bytes), '\0');
      gguf_rows_to_hf(out.data, &w.owned.back()[0], rows, t->bytes / rows, heads);
      out.data = w.owned.back().data();
    }
    w.tensors.push_back(std::move(out));
  }
  for (const gguf::TensorInfo& t : f.tensors)
    if (!used.count(t.name))
      refuse(what, t.name, "tensor '" + t.name + "' is not one of the " + c.model_type + " model's (" +
                               std::to_string(c.num_hidden_layers) + " layers" +
                               (c.attention_bias ? "" : ", no attention biases") + (c.tie_word_embeddings ? ", tied output" : "") + ")");
  return w;
}

}  // namespace ap
