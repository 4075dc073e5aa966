// gpt.h — the tiny GPT of the tutorials and of nanoGPT, written the way llm.c writes GPT-2.
//
//   x      = wte[ids] + wpe[t]                                   # (B, T, C)
//   for each of n_layer blocks (pre-LayerNorm):
//     x    = x + attn.c_proj(attention(c_attn(ln_1(x))))         # causal, n_head heads of C/n_head
//     x    = x + mlp.c_proj(gelu(mlp.c_fc(ln_2(x))))             # 4C hidden, exact GELU
//   logits = ln_f(x) · wteᵀ                                      # (B, T, V), lm_head tied to wte
//   loss   = mean cross-entropy of logits against the next tokens
//
// The config also covers the models trained elsewhere that the importer opens (formats/import.h):
// nanoGPT's bias=False (no biases in the Linear layers and LayerNorms), GPT-2's GELU ("gelu_new",
// the tanh approximation), another LayerNorm ε, and sizes up to GPT-2's (vocabulary 50,304,
// n_embd 1,600, 48 layers, block_size 1,024). The tiny presets keep the defaults (exact GELU,
// ε 1e-5, biases on).
//
// c_attn holds the tutorials' c_q, c_k and c_v stacked (rows 0…C, C…2C, 2C…3C of a (3C, C)
// weight, PyTorch's Linear layout out × in), so a checkpoint is nanoGPT's state dict as is.
//
// Memory, as llm.c: every parameter lives in one flat buffer in nanoGPT's state-dict order, with
// named views (GPTParams); the gradients in a second buffer of the same layout. Activations are
// allocated once for a given (batch, T) by reserve(); forward() and backward() then allocate
// nothing. Each layer has an explicit forward and backward kernel (kernels.h); backward adds (+=)
// into the gradients, so zero_grad() comes first. Each buffer's layout is written once (gpt.cpp:
// the parameters' names and shapes, the activations', their gradients', the KV cache's), and the
// count, the views, the named tensors and memory_bytes() all come from it.
//
// The attention options of the stepper apply: mask strict (query t sees keys ≤ t) or inclusive
// (the tutorials' exercise j ≥ i + base: query t sees keys < t, and position 0 sees nothing, so
// its context is 0), and the stable or the naive softmax (which overflows: training reports it).
//
// Generation keeps a KV cache: cache_step(token) runs one position, the next after the cached
// ones, with the stepper's `base` = the number of cached positions, and returns its logits. The
// cache holds at most block_size positions (the learned position embeddings stop there); what to
// do past that is the caller's choice (generate() in generate.h crops the context).
//
// A model is made for training (gradients, and room for AdamW's moments, counted by memory_bytes)
// or for inference only (ModelUse::infer: an opened model, without gradients or the backward's
// scratch; make_trainable() adds them for fine-tuning).
//
// Limits: see GPTConfig::validate() and the constants below. Errors are InputError (attention.h)
// naming the field at fault.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/attention/attention.h"
#include "core/kernels/kernels.h"
#include "core/tensor/tensor.h"

namespace ap {

// A model's sizes (GPTConfig::validate): up to GPT-2's (GPT-2 XL has 48 layers of n_embd 1,600;
// nanoGPT pads GPT-2's 50,257 tokens to 50,304).
constexpr int kMaxLayers = 48;
constexpr int kMaxEmbd = 1600;
constexpr int kMaxHeads = 64;
constexpr int kMaxBlockSize = 1024;
constexpr int kMaxModelVocab = 50304;
constexpr int kMaxBatch = 1024;
// A new run's sizes (the run spec, the training page's form, `gpt train`): the tiny GPT's range.
constexpr int kMaxRunLayers = 32;
constexpr int kMaxRunEmbd = 1024;
// What GPT::memory_bytes counts (parameters, their gradients, AdamW's two moments, the activations
// of one (batch, T) and their gradients, the KV cache), in bytes: the limit of a model made for
// training.
constexpr int64_t kMaxModelBytes = int64_t(1) << 30;
// The limit of an opened model (ModelUse::infer, and make_trainable): in wasm, what the 4 GiB a
// wasm32 module can address leaves for the model beside the runtime (GPT-2 medium, 355M
// parameters, takes about 1.6 GiB for inference); natively, GPT-2 XL's inference with room to spare.
#ifdef __EMSCRIPTEN__
constexpr int64_t kMaxOpenBytes = int64_t(3) << 30;
#else
constexpr int64_t kMaxOpenBytes = int64_t(32) << 30;
#endif

// The MLP's activation: the exact GELU (nn.GELU(), nanoGPT's) or GPT-2's tanh approximation
// (Hugging Face's "gelu_new"; PyTorch's GELU(approximate="tanh")).
enum class Activation { gelu, gelu_new };

// What a model is made for: training (gradients; AdamW's moments counted beside it) or inference.
enum class ModelUse { train, infer };

struct GPTConfig {
  int vocab_size = 65;
  int block_size = 64;  // the longest context: the rows of wpe
  int n_layer = 2;
  int n_head = 4;
  int n_embd = 64;
  MaskVariant mask = MaskVariant::strict;
  bool stable_softmax = true;
  Activation activation = Activation::gelu;
  float ln_eps = 1e-5f;  // LayerNorm's ε
  bool bias = true;      // biases in the Linear layers and LayerNorms (nanoGPT's bias=False: none)

  // The tutorials' GPTConfig::tiny: 2 layers, n_embd 64, 4 heads of 16, block 64 (108,352
  // parameters at vocab 65: W3's tiny model).
  static GPTConfig tiny(int vocab_size = 65);
  // 4 layers, n_embd 128, 4 heads of 32, block 128 (818,048 parameters at vocab 65).
  static GPTConfig small(int vocab_size = 65);
  // GPT-2 small's shape (OpenAI's gpt2, 124,439,808 parameters): 12 layers, 12 heads of 64, n_embd
  // 768, vocabulary 50,257, block_size 1,024, gelu_new, biases, ε 1e-5. Not a preset of the run
  // spec (a new run stays within kMaxModelBytes): the shape of an opened GPT-2, for tests and benches.
  static GPTConfig gpt2_small();
  // "tiny" or "small", else InputError (field "preset").
  static GPTConfig preset(const std::string& name, int vocab_size);

  int head_dim() const { return n_embd / n_head; }
  int64_t num_parameters() const;
  // Throws InputError naming the field: a size of 0 or above its limit, n_embd not divisible by
  // n_head, ln_eps not in (0, 0.1].
  void validate() const;
  bool operator==(const GPTConfig& o) const;
  bool operator!=(const GPTConfig& o) const { return !(*this == o); }
};

// One parameter tensor of the flat buffer: nanoGPT's state-dict name, its shape, where it starts.
struct ParamTensor {
  std::string name;  // "transformer.h.0.attn.c_attn.weight", …
  Shape shape;       // PyTorch's layout: (out, in) for a Linear weight
  int64_t offset;    // in floats, from the start of the flat buffer
  int64_t numel;
  bool decay;        // AdamW's weight decay applies: matrices (dim ≥ 2), not biases and LayerNorm
};

// The tensors of a config in buffer order (nanoGPT's state_dict order, without lm_head, tied to wte;
// without the biases when config.bias is false).
std::vector<ParamTensor> param_tensors(const GPTConfig& config);

// Named views into a flat buffer (parameters, gradients, or an optimiser's moments). The biases are
// null when config.bias is false.
struct BlockParams {
  float* ln_1_w;         // (C)
  float* ln_1_b;         // (C)
  float* c_attn_w;       // (3C, C): c_q, c_k, c_v stacked
  float* c_attn_b;       // (3C)
  float* attn_c_proj_w;  // (C, C)
  float* attn_c_proj_b;  // (C)
  float* ln_2_w;         // (C)
  float* ln_2_b;         // (C)
  float* c_fc_w;         // (4C, C)
  float* c_fc_b;         // (4C)
  float* mlp_c_proj_w;   // (C, 4C)
  float* mlp_c_proj_b;   // (C)
};
struct GPTParams {
  float* wte;  // (V, C), also lm_head
  float* wpe;  // (block_size, C)
  std::vector<BlockParams> h;
  float* ln_f_w;  // (C)
  float* ln_f_b;  // (C)
};
GPTParams param_views(float* base, const GPTConfig& config);

// What one block's forward keeps for its backward (views into the activation buffer).
struct BlockActs {
  float* ln_1;       // (B, T, C)
  float* ln_1_mean;  // (B, T)
  float* ln_1_rstd;  // (B, T)
  float* qkv;        // (B, T, 3C)
  float* atty;       // (B, T, C): the heads' contexts side by side
  float* att;        // (B, NH, T, T): softmax weights, 0 where masked
  float* residual2;  // (B, T, C) = residual + attn.c_proj(atty)
  float* ln_2;       // (B, T, C)
  float* ln_2_mean;  // (B, T)
  float* ln_2_rstd;  // (B, T)
  float* fch;        // (B, T, 4C)
  float* fch_gelu;   // (B, T, 4C)
  float* residual3;  // (B, T, C) = residual2 + mlp.c_proj(fch_gelu): the block's output
};
// The forward's activations for (B, T): views into one buffer (GPT::reserve).
struct GPTActs {
  float* encoded;    // (B, T, C) = wte[ids] + wpe
  std::vector<BlockActs> h;
  float* ln_f;       // (B, T, C)
  float* ln_f_mean;  // (B, T)
  float* ln_f_rstd;  // (B, T)
  float* logits;     // (B, T, V)
  float* probs;      // (B, T, V)
  float* losses;     // (B, T)
};
// The backward's scratch, reused by every layer: views into a second buffer.
struct GPTActGrads {
  float* residual;  // (B, T, C): ∂L/∂ the residual stream
  float* ln;        // (B, T, C): ∂L/∂ a LayerNorm's output
  float* qkv;       // (B, T, 3C)
  float* atty;      // (B, T, C)
  float* fch;       // (B, T, 4C)
  float* fch_gelu;  // (B, T, 4C)
  float* logits;    // (B, T, V)
  float* scratch;   // attention_backward's scratch (the largest any tier needs)
};
// The KV cache and one position's activations (GPT::cache_reset): views into one buffer.
struct GPTCache {
  float* k;       // (n_layer, block_size, C): the cached keys
  float* v;       // (n_layer, block_size, C): the cached values
  float* x;       // (C): the residual stream
  float* ln;      // (C)
  float* qkv;     // (3C)
  float* atty;    // (C)
  float* proj;    // (C)
  float* fch;     // (4C)
  float* logits;  // (V)
  float* att;     // (n_layer, NH, block_size): each layer's weights of the last step
  float* mean;    // (1)
  float* rstd;    // (1)
};

// A float buffer whose resize() leaves the new floats unset (its allocator's value-initialisation
// does nothing), for the owner to clear in one memset (zeroed()). In wasm, under Emscripten's
// exception handling, libc++'s fill of a std::vector<float> goes element by element: a second and
// more for GPT-2 small's 124M parameters.
template <class T>
struct UnsetAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UnsetAllocator<U>;
  };
  UnsetAllocator() = default;
  template <class U>
  UnsetAllocator(const UnsetAllocator<U>&) {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-initialised: a float left as it is
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using FloatBuffer = std::vector<float, UnsetAllocator<float>>;

class GPT {
 public:
  // Validates the config (InputError) and allocates the parameters (zeros: call init_weights or
  // load them) and, for training, their gradients. The memory limit: kMaxModelBytes for training,
  // kMaxOpenBytes for inference.
  explicit GPT(const GPTConfig& config, ModelUse use = ModelUse::train);
  // A data-parallel replica (train.h's threads): it reads `owner`'s parameters in place (no copy;
  // the owner must outlive it and keep its buffer), with gradients and activations of its own.
  // Made for training; params() is the owner's buffer.
  struct ReplicaOf {
    GPT* owner;
  };
  explicit GPT(ReplicaOf replica);

  // nanoGPT's initialisation from a seed: weights N(0, 0.02) (the residual projections
  // attn.c_proj and mlp.c_proj N(0, 0.02/√(2·n_layer))), biases 0, LayerNorm weight 1 and bias 0.
  // Each tensor draws from its own stream (derive_seed), so the same seed gives the same bits
  // natively and in wasm.
  void init_weights(uint64_t seed);

  const GPTConfig& config() const { return config_; }
  ModelUse use() const { return use_; }
  // An inference model becomes trainable (fine-tuning) for batches of up to B sequences of T
  // tokens: the memory is checked for training at (B, T) against kMaxOpenBytes first (InputError,
  // the model unchanged), then the inference activations are freed and the gradients and training
  // activations allocated. On a model made for training it is reserve(B, T).
  void make_trainable(int B, int T);
  int64_t num_parameters() const { return n_params_; }
  const std::vector<ParamTensor>& tensors() const { return tensors_; }
  float* params() { return param_base_; }
  const float* params() const { return param_base_; }
  float* grads() { return grads_.data(); }
  const float* grads() const { return grads_.data(); }
  const GPTParams& p() const { return p_; }
  const GPTParams& g() const { return g_; }

  // Allocates the activations for batches of up to B sequences of up to T tokens (T ≤
  // block_size). forward() reserves on its own when needed; call this first to keep every
  // training step free of allocation. Throws InputError if the memory would pass kMaxModelBytes.
  void reserve(int B, int T);
  // The bytes a model of this config takes once reserve(B, T) and cache_reset() have run. For
  // training, with an AdamW over its parameters: parameters, gradients, AdamW's m and v, the
  // activations of (B, T) and their gradients (with the attention scratch of whichever tier needs
  // most), the ids and targets, and the KV cache. For inference: the parameters, the forward's
  // activations of (B, T) without the loss's probabilities, the ids, and the KV cache. From the
  // same layouts that allocate them (gpt.cpp).
  static int64_t memory_bytes(const GPTConfig& config, int B, int T, ModelUse use = ModelUse::train);
  // Throws InputError when memory_bytes(config, B, T, use) passes `limit`: naming n_embd when the
  // model alone (B = T = 1) does, batch_size when the batch does. What the constructor (for 1, 1)
  // and reserve() check.
  static void check_memory(const GPTConfig& config, int B, int T, ModelUse use = ModelUse::train,
                           int64_t limit = kMaxModelBytes);
  // The bytes this model's buffers hold now (their capacity): memory_bytes without AdamW's m and v.
  int64_t allocated_bytes() const;

  // The forward pass over ids (B, T). With targets (B, T), also the losses; returns their mean
  // (NaN without targets, or when the model diverged). Throws InputError for an id outside
  // [0, V) (field "ids" or "targets"), T > block_size or B, T < 1.
  float forward(const int* ids, const int* targets, int B, int T);
  // Sets every parameter gradient to 0.
  void zero_grad();
  // ∂(mean loss)/∂(every parameter), added into grads(); needs the last forward to have had targets
  // and a model made for training (InputError otherwise). loss_rows is the count the mean divides
  // by: 0 for this forward's B·T; a data-parallel share of a batch gives the whole batch's, so that
  // the shares' gradients sum to the batch's.
  void backward(int64_t loss_rows = 0);

  // What the last forward computed (its B and T).
  int batch() const { return B_; }
  int seq_len() const { return T_; }
  const float* logits() const { return a_.logits; }                       // (B, T, V)
  const float* losses() const { return a_.losses; }                       // (B, T)
  const float* attention_weights(int layer) const { return a_.h[layer].att; }  // (B, NH, T, T)
  const float* qkv(int layer) const { return a_.h[layer].qkv; }           // (B, T, 3C)
  const GPTActs& acts() const { return a_; }  // every activation of the last forward (views)

  // ---------------------------------------------------------------- the KV cache
  // Empties the cache (allocated on first use: 2·n_layer·block_size·C floats).
  void cache_reset();
  int cache_length() const { return cache_len_; }
  // Runs token at position base = cache_length() against the cached keys and values, appends its
  // key and value, and returns its logits (V). Throws InputError when the cache is full
  // (block_size positions) or the token is outside [0, V).
  const float* cache_step(int token);
  // Of the last cache_step: layer's weights (NH, T_total) with T_total = cache_length().
  const float* cache_attention(int layer) const;
  // Cached keys and values of a layer: (cache_length(), C), head h in columns h·hs….
  const float* cache_keys(int layer) const;
  const float* cache_values(int layer) const;

 private:
  void check_ids(const int* ids, int n, const char* field) const;
  kernels::AttnOptions attn_options() const { return {config_.mask, config_.stable_softmax}; }
  int64_t limit() const { return use_ == ModelUse::train && !opened_ ? kMaxModelBytes : kMaxOpenBytes; }
  // The activation's forward kernel of the tier k.
  void activation_forward(const kernels::Kernels& k, float* out, const float* inp, int N) const;

  GPTConfig config_;
  ModelUse use_;
  bool opened_ = false;  // made for inference (then perhaps made trainable): the open limit applies
  std::vector<ParamTensor> tensors_;
  FloatBuffer params_, grads_;
  GPTParams p_, g_;
  int64_t n_params_ = 0;
  float* param_base_ = nullptr;  // params_.data(), or a replica's owner's

  // Activations for (B_alloc, T_alloc), one buffer with named views; their gradients likewise.
  int B_alloc_ = 0, T_alloc_ = 0;
  FloatBuffer act_buffer_, grad_buffer_;
  GPTActs a_{};
  GPTActGrads d_{};
  std::vector<int> ids_, targets_;  // (B, T) of the last forward
  int B_ = 0, T_ = 0;
  bool has_targets_ = false;

  // KV cache (allocated by the first cache_reset).
  FloatBuffer cache_buffer_;
  GPTCache c_{};
  int cache_len_ = 0;
};

}  // namespace ap
