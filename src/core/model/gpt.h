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
// The modern variants (each off by default; the defaults are the model above, bit for bit), as
// Llama, Qwen, Mistral and GPT-NeoX build their blocks:
//   pos       learned (wpe, as above) | rope | alibi | none. rope: q and k of every head rotated
//             by their position after c_attn (the stepper's RoPE, attention.h: rope_base θ,
//             rope_dims d_rot ≤ head_dim, pairing `rope` halves (GPT-NeoX, Llama) or interleaved
//             (the RoPE paper)); alibi: −m_h·(i − j) added to head h's scaled scores, m_h =
//             2^(−8h/n_head); none: no position signal but the causal mask. Only learned has wpe.
//   n_kv_head grouped-query attention: n_kv_head key/value heads (dividing n_head; 1 is
//             multi-query), query head h reading h / (n_head/n_kv_head); 0 means n_head.
//   norm      layernorm | rmsnorm (x·w/√(mean(x²) + ln_eps), Llama's; a weight, no bias).
//   mlp       gelu (c_fc, activation, c_proj) | swiglu (down_proj(silu(gate_proj(x)) ⊙
//             up_proj(x)), Llama's); hidden size n_inner (0 means 4·n_embd).
//   window    a sliding window: the query at position p sees keys p − window + 1 … p (Mistral).
// And what the Llama family's checkpoints need (an opened model's; each off by default):
//   head_size       each head's width, independent of n_embd/n_head (Qwen3: 16 heads × 128 in a
//                   hidden size of 1,024): q is n_head·head_size wide, attn.c_proj (C, n_head·hs);
//                   0 means n_embd/n_head.
//   tie_embeddings  true: the output layer is wte; false: lm_head.weight (V, C) of its own, after
//                   ln_f in the buffer.
//   qkv_bias        c_attn's bias even when bias is false (Qwen2: q/k/v biases only).
//   qk_norm         Qwen3's RMSNorm of every q and k head (attn.q_norm, attn.k_norm, head_size
//                   weights, ε ln_eps) after c_attn, before RoPE.
//   rope_scaling    Llama 3's scaled inverse frequencies (rope_scaling.h); factor 0 means none.
//   sink      attention sinks under the window (StreamingLLM): the first `sink` keys stay visible to
//             every query whatever the window; 0 means none.
// The parameters keep nanoGPT's names for the GPT-2 parts (ln_1, attn.c_attn, attn.c_proj, ln_2,
// ln_f, also under rmsnorm) and take Llama's for SwiGLU: mlp.gate_proj, mlp.up_proj (stored one
// after the other: one (2·n_inner, n_embd) weight, one matmul), mlp.down_proj. With n_kv_head,
// c_attn's rows are q (n_embd), k and v (n_kv_head·head_dim each). With rope, the kept qkv holds
// the rotated q and k (rotation in place; its backward turns the gradient back).
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
// Typed weights (an opened model of the Llama family, formats/llama_load.h: GPT(config, slices)):
// every matrix (wte, lm_head, and each block's c_attn, attn.c_proj, c_fc, mlp.c_proj; not wpe)
// stays in its file's storage type (quant.h: BF16 and F16 two bytes a weight, Q8_0 … Q4_K their
// blocks), read by typed_matmul.h's products and, for wte, dequantized a row at a time on lookup;
// the norms and biases are float32 in the flat buffer, which holds nothing else. forward() and the
// KV cache run on them, and so do the block walk and the interpretability runs, through the
// accessors that never convert: vectors() (the views of the flat buffer: norms, biases, wpe),
// matrix_forward / matrix_backward (a Linear layer's product by name) and matrix_rows (a matrix's
// rows dequantized). What reads the weights as float32 by name — p(), params(), head(), hence
// saving and fine-tuning (make_trainable) — first converts the whole model to float32
// (to_float32: 4 bytes a weight from then on, the values the typed products read, exactly).
// weight_bytes() says what the weights take now, and the memory checks (constructor, reserve, the
// cache) reckon the weights so: memory_bytes(…, weight_bytes) with typed_weight_bytes(config,
// matrix bytes) — the matrices as stored, the rest 4 bytes a value.
// The matrices' bytes are copied from the slices, or (given a TypedOwner: the page's opening,
// whose buffers already hold the files' bytes) used where they are and kept alive by the owner:
// then the model's weights are the files' bytes, in memory once.
//
// Limits: see GPTConfig::validate() and the constants below. Errors are InputError (attention.h)
// naming the field at fault.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/attention/attention.h"
#include "core/base/thread_pool.h"
#include "core/kernels/kernels.h"
#include "core/kernels/quant.h"
#include "core/kernels/typed_matmul.h"
#include "core/model/rope_scaling.h"
#include "core/tensor/tensor.h"

namespace ap {

// A model's sizes (GPTConfig::validate): an opened model's, up to the Llama family's small models
// (Qwen2.5's vocabulary of 152,064; Llama 3 8B's n_embd 4,096 and MLP of 14,336; 64 layers; a
// context of 8,192 — the KV cache and activations are sized by the T actually used).
constexpr int kMaxLayers = 64;
constexpr int kMaxEmbd = 4096;
constexpr int kMaxHeads = 64;
constexpr int kMaxHeadSize = 512;
constexpr int kMaxBlockSize = 8192;
constexpr int kMaxModelVocab = 152064;
constexpr int kMaxBatch = 1024;
// A new run's sizes (the run spec, the training page's form, `gpt train`): the tiny GPT's range.
constexpr int kMaxRunLayers = 32;
constexpr int kMaxRunEmbd = 1024;
constexpr int kMaxRunBlockSize = 1024;
// The KV cache's first size in positions (it grows by doubling up to block_size).
constexpr int kCacheStart = 1024;
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

// Where a position comes from (GPTConfig::pos), the norm, and the MLP (see the top of this file).
enum class Positions { learned, rope, alibi, none };
enum class Norm { layernorm, rmsnorm };
enum class Mlp { gelu, swiglu };

// The largest MLP hidden size (n_inner).
constexpr int kMaxInner = 4 * kMaxEmbd;

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
  float ln_eps = 1e-5f;  // the norm's ε (LayerNorm's or RMSNorm's)
  bool bias = true;      // biases in the Linear layers and LayerNorms (nanoGPT's bias=False: none)
  Positions pos = Positions::learned;
  float rope_base = 10000.0f;                // RoPE's θ base (pos rope)
  int rope_dims = 0;                         // RoPE's rotated dimensions per head; 0 means head_dim
  RopePairing rope = RopePairing::halves;    // RoPE's pairs (pos rope): halves or interleaved
  int n_kv_head = 0;                         // key/value heads; 0 means n_head
  Norm norm = Norm::layernorm;
  Mlp mlp = Mlp::gelu;
  int n_inner = 0;                           // the MLP's hidden size; 0 means 4·n_embd
  int window = 0;                            // sliding window; 0 means none
  int head_size = 0;                         // each head's width; 0 means n_embd/n_head
  bool tie_embeddings = true;                // false: lm_head.weight (V, C) of its own
  bool qkv_bias = false;                     // c_attn's bias even with bias false (Qwen2)
  bool qk_norm = false;                      // RMSNorm of each q and k head before RoPE (Qwen3)
  RopeScaling rope_scaling{};                // Llama 3's scaled frequencies (pos rope); factor 0: none
  int sink = 0;                              // attention sinks under the window; 0 means none

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

  int head_dim() const { return head_size > 0 ? head_size : n_embd / n_head; }
  int kv_head() const { return n_kv_head > 0 ? n_kv_head : n_head; }
  int attn_width() const { return n_head * head_dim(); }                   // q's and the contexts' width
  int qkv_width() const { return attn_width() + 2 * kv_head() * head_dim(); }  // c_attn's rows
  bool has_qkv_bias() const { return bias || qkv_bias; }
  int inner() const { return n_inner > 0 ? n_inner : 4 * n_embd; }        // the MLP's hidden size
  int fc_width() const { return mlp == Mlp::swiglu ? 2 * inner() : inner(); }  // c_fc's (gate | up) rows
  int rot_dims() const { return pos == Positions::rope ? (rope_dims > 0 ? rope_dims : head_dim()) : 0; }
  // The GPT-2 block of the top of this file (learned positions, LayerNorm, GELU MLP of 4·n_embd,
  // every head its own keys, no window): what the block walk and the importer's GPT-2 cover.
  bool gpt2_block() const;
  int64_t num_parameters() const;
  // Throws InputError naming the field: a size of 0 or above its limit, n_embd not divisible by
  // n_head (without head_size), ln_eps not in (0, 0.1], n_kv_head not dividing n_head, rope_base ≤ 1, rope_dims odd or
  // above head_dim (or given without rope), gelu_new with swiglu, window above block_size, sink
  // without a window or above block_size.
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
  float* c_attn_w;       // (3C, C): c_q, c_k, c_v stacked (qkv_width rows with n_kv_head)
  float* c_attn_b;       // (3C); also with qkv_bias
  float* q_norm_w;       // (hs) qk_norm's, else null
  float* k_norm_w;       // (hs) qk_norm's, else null
  float* attn_c_proj_w;  // (C, C)
  float* attn_c_proj_b;  // (C)
  float* ln_2_w;         // (C)
  float* ln_2_b;         // (C)
  float* c_fc_w;         // (4C, C); SwiGLU: mlp.gate_proj (H, C), then up_proj (H, C) after it
  float* c_fc_b;         // (4C); SwiGLU: gate_proj's (H), then up_proj's (H) after it
  float* mlp_c_proj_w;   // (C, 4C); SwiGLU: mlp.down_proj (C, H)
  float* mlp_c_proj_b;   // (C)
  float* up_proj_w;      // SwiGLU's up_proj (H, C) = c_fc_w + H·C; null for GELU
  float* up_proj_b;      // SwiGLU's up_proj bias (H) = c_fc_b + H; null for GELU or no bias
};
struct GPTParams {
  float* wte;  // (V, C), also lm_head
  float* wpe;  // (block_size, C); null unless pos is learned
  std::vector<BlockParams> h;
  float* ln_f_w;  // (C)
  float* ln_f_b;  // (C)
  float* lm_head;  // (V, C) when not tie_embeddings, else null (wte is the output layer)
};
GPTParams param_views(float* base, const GPTConfig& config);

// What one block's forward keeps for its backward (views into the activation buffer).
struct BlockActs {
  float* ln_1;       // (B, T, C)
  float* ln_1_mean;  // (B, T) (unused by RMSNorm)
  float* ln_1_rstd;  // (B, T)
  float* qkv;        // (B, T, 3C)
  float* qk_in;      // (B, T, (NH + KV)·hs): q and k before qk_norm (qk_norm only)
  float* qk_rstd;    // (B, T, NH + KV): their RMSNorms' 1/rms (qk_norm only)
  float* atty;       // (B, T, NH·hs): the heads' contexts side by side
  float* att;        // (B, NH, T, T): softmax weights, 0 where masked
  float* residual2;  // (B, T, C) = residual + attn.c_proj(atty)
  float* ln_2;       // (B, T, C)
  float* ln_2_mean;  // (B, T)
  float* ln_2_rstd;  // (B, T)
  float* fch;        // (B, T, 4C) (fc_width: SwiGLU's gate | up)
  float* fch_gelu;   // (B, T, 4C) (inner: the activation's or SwiGLU's output)
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
  float* qk;        // (B, T, (NH + KV)·hs): ∂L/∂ qk_norm's output (qk_norm only)
  float* atty;      // (B, T, NH·hs)
  float* fch;       // (B, T, 4C)
  float* fch_gelu;  // (B, T, 4C)
  float* logits;    // (B, T, V)
  float* scratch;   // attention_backward's scratch (the largest any tier needs)
};
// The KV cache and one position's activations (GPT::cache_reset): views into one buffer.
struct GPTCache {
  float* k;       // (n_layer, S, KC): the cached keys, KC = kv_head·head_dim (RoPE: rotated); S the capacity
  float* v;       // (n_layer, S, KC): the cached values
  float* x;       // (C): the residual stream
  float* ln;      // (C)
  float* qkv;     // (3C)
  float* qk_in;   // ((NH + KV)·hs) (qk_norm only)
  float* qk_rstd; // (NH + KV) (qk_norm only)
  float* atty;    // (NH·hs)
  float* proj;    // (C)
  float* fch;     // (4C)
  float* logits;  // (V)
  float* att;     // (n_layer, NH, S): each layer's weights of the last step
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

// Rows of a parameter in a file's storage type, for GPT(config, slices): `rows` rows of `cols`
// values of parameter `param` (param_tensors' name) from row `row` on (a 1-D tensor: from element
// `row`; stacked q/k/v biases are three slices);
// SwiGLU's mlp.up_proj.weight is its own parameter, as in param_tensors. The bytes are copied,
// unless a TypedOwner holds them.
struct TypedSlice {
  std::string param;
  int64_t row = 0;
  quant::Type type = quant::Type::F32;
  const char* data = nullptr;
  int64_t rows = 0, cols = 0;
};
// What keeps the slices' bytes alive when the model uses them in place (GPT(config, slices,
// owner)): `keep` is held as long as the typed weights are, and its `bytes` count in
// weight_bytes() (all of them, matrices or not). A slice whose bytes are not 4-byte aligned is
// copied all the same.
struct TypedOwner {
  std::shared_ptr<const void> keep;
  int64_t bytes = 0;
};

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
  // An opened model for inference with typed weights (see the top of this file): the matrices'
  // slices kept in their types (copied), the other tensors' dequantized into the flat buffer (zeros
  // where no slice writes). InputError naming the parameter: an unknown name, a slice outside its
  // parameter, a matrix whose rows the slices do not cover exactly once.
  // With an owner, the matrices' bytes are used in place (see TypedOwner). The memory is checked
  // (typed_weight_bytes) before anything is allocated.
  GPT(const GPTConfig& config, const std::vector<TypedSlice>& slices, TypedOwner owner = {});

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
  // The flat float32 parameters and their views (a typed model converts to float32 first).
  float* params() { return to_float32(), param_base_; }
  const float* params() const { return to_float32(), param_base_; }
  float* grads() { return grads_.data(); }
  const float* grads() const { return grads_.data(); }
  const GPTParams& p() const { return to_float32(), p_; }
  // The views valid on a typed model without converting it: every tensor of the flat buffer (the
  // norms' weights and biases, the Linear layers' biases, wpe, q_norm and k_norm) as p() has it;
  // the matrices' views (wte, lm_head and each block's c_attn_w, attn_c_proj_w, c_fc_w, up_proj_w,
  // mlp_c_proj_w) are null on a typed model: read those through matrix_forward, matrix_backward
  // and matrix_rows. On a float32 model it is p().
  const GPTParams& vectors() const { return p_; }
  // The matrices by name (layer: a block's; wte and head ignore it; head is lm_head, or wte when
  // tied), their shape (rows = the Linear layer's outputs) and bias (null without; wte, head none).
  enum class Matrix { c_attn, attn_c_proj, c_fc, mlp_c_proj, wte, head };
  int matrix_rows(Matrix m) const;
  int matrix_cols(Matrix m) const;
  // out (N, rows) = inp (N, cols) · Wᵀ + bias in tier k, without converting a typed model. Float32:
  // k.matmul_forward. Typed, when k is the tier in use (kernels::active()): the forward's typed
  // product (typed_matmul.h, on the calling thread), so a hooked run's logits are forward()'s; with
  // another tier (the walk's reference): k.matmul_forward on the rows dequantized a chunk at a time,
  // each output the bits k gives on the float32 model (the reference and the fast tier's kernels
  // compute an output the same way whatever rows a call covers).
  void matrix_forward(const kernels::Kernels& k, float* out, const float* inp, Matrix m, int layer, int N) const;
  // dinp (N, cols) += dout (N, rows) · W in tier k (inp (N, cols) the layer's input, for the kernel's
  // signature): k.matmul_backward's input gradient, typed rows dequantized a chunk at a time; the
  // same bits as on the float32 model (the sums over the rows run in the same order).
  void matrix_backward(const kernels::Kernels& k, float* dinp, const float* dout, const float* inp, Matrix m,
                       int layer, int N) const;
  // Rows [first, first + n) of a matrix into out (n · cols floats): a typed model's dequantized (the
  // values its products read), a float32 model's copied.
  void matrix_rows(Matrix m, int layer, int first, int n, float* out) const;
  // Typed weights (see the top of this file): whether the model holds them, and their conversion to
  // the float32 model (nothing when already float32; InputError "model" past the memory limit).
  bool typed() const { return typed_; }
  void to_float32() const {
    if (typed_) const_cast<GPT*>(this)->convert_to_float32();
  }
  // The bytes the weights take now: the flat buffer's floats and the typed matrices' bytes.
  int64_t weight_bytes() const;
  // Each matrix's storage types, by parameter name, e.g. {"transformer.wte.weight", "BF16"}; empty
  // for a float32 model (a matrix stacked from parts of several types: "Q4_K+Q6_K").
  std::vector<std::pair<std::string, std::string>> weight_types() const;
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
  // weight_bytes ≥ 0 (inference): the weights take that many bytes instead of 4 a parameter (a
  // typed model's: typed_weight_bytes).
  static int64_t memory_bytes(const GPTConfig& config, int B, int T, ModelUse use = ModelUse::train,
                              int64_t weight_bytes = -1);
  // The bytes a typed model's weights take when its matrices (wte, lm_head, each block's four)
  // take matrix_bytes as stored: those plus 4 bytes for each value of the other tensors (the
  // norms and biases, float32 in the flat buffer).
  static int64_t typed_weight_bytes(const GPTConfig& config, int64_t matrix_bytes);
  // Throws InputError when memory_bytes(config, B, T, use) passes `limit`: naming n_embd when the
  // model alone (B = T = 1) does, batch_size when the batch does. What the constructor (for 1, 1)
  // and reserve() check.
  static void check_memory(const GPTConfig& config, int B, int T, ModelUse use = ModelUse::train,
                           int64_t limit = kMaxModelBytes, int64_t weight_bytes = -1);
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
  const float* qkv(int layer) const { return a_.h[layer].qkv; }  // (B, T, qkv_width), RoPE: q, k rotated
  // ALiBi's slopes (n_head), or null.
  const float* alibi_slopes() const { return alibi_.empty() ? nullptr : alibi_.data(); }
  // The options the attention kernels get and RoPE's tables (d_rot 0 unless pos is rope), as the
  // forward uses them: for the block walk (block_trace.h), which retraces one position.
  kernels::AttnOptions attention_options() const { return attn_options(); }
  kernels::RopeTable rope_tables() const { return rope_table(); }
  const GPTActs& acts() const { return a_; }  // every activation of the last forward (views)

  // ---------------------------------------------------------------- threads
  // Threads for inference: forward() (the prompt's forward; a training step's parallelism is the
  // Trainer's) and cache_step() (generation). A Linear layer's product splits its output columns
  // across n threads (thread i the i-th of n equal runs of whole 16-column groups), each computing
  // its columns with the same kernel, straight into place (matmul_forward_into, or
  // typed_matmul_forward_into on a typed matrix's rows); forward()'s norms and activations split
  // over rows, its residual adds over runs of floats and its attention over heads. A fast or
  // reference kernel computes each output the same way whatever columns, rows or heads a call
  // covers (kernels.h), so the logits have the same bits for every n. Work too small to pay for
  // the threads stays on one. 1 (the default) runs on the caller alone, as does a
  // model made trainable (make_trainable sets 1: training's threads are the Trainer's). Throws
  // InputError (field "threads") outside [1, kMaxThreads] or above 1 where threads cannot run.
  void set_threads(int n);
  int threads() const { return pool_ ? pool_->size() : 1; }
  // out (N,OC) = inp (N,C)·wᵀ + b with tier k, split as set_threads says (forward()'s Linear layers).
  void linear(const kernels::Kernels& k, float* out, const float* inp, const float* w, const float* b, int N, int C,
              int OC);

  // ---------------------------------------------------------------- the KV cache
  // Empties the cache (allocated on first use for min(block_size, kCacheStart) positions: 2·n_layer·
  // positions·KC floats; it doubles when full, up to block_size, checked against the memory limit).
  void cache_reset();
  int cache_length() const { return cache_len_; }
  // Runs token at position base = cache_length() against the cached keys and values, appends its
  // key and value, and returns its logits (V). Throws InputError when the cache is full
  // (block_size positions) or the token is outside [0, V).
  const float* cache_step(int token);
  // Of the last cache_step: layer's weights (NH, T_total) with T_total = cache_length().
  const float* cache_attention(int layer) const;
  // Cached keys and values of a layer: (cache_length(), KC), KC = kv_head·head_dim, key/value head
  // h in columns h·hs… (RoPE: the rotated keys).
  const float* cache_keys(int layer) const;
  const float* cache_values(int layer) const;

  // ---------------------------------------------------------------- the block's pieces
  // What forward() is made of, for a run that hooks into it (interp/hooked_run.h) with the same
  // kernels: the attention's options (mask, softmax, grouped-query, window, ALiBi's slopes),
  // RoPE's tables, the norm (LayerNorm or RMSNorm) forward and backward of tier k on N rows, and
  // the MLP's activation (GELU, gelu_new or SwiGLU) forward on N rows of fch into out.
  kernels::AttnOptions attn_options() const {
    return {config_.mask, config_.stable_softmax, config_.n_kv_head, config_.window, alibi_slopes(), config_.sink};
  }
  const float* head() const { return p().lm_head ? p_.lm_head : p_.wte; }  // the output layer (V, C)
  // qk_norm on N rows of qkv (row stride W): q and k in place, their inputs kept in qk_in, rstd.
  void qk_norm_forward(const kernels::Kernels& k, float* qkv, float* qk_in, float* rstd, const BlockParams& w,
                       int N) const;
  void grow_cache();  // doubles the cache's capacity (up to block_size), keeping what it holds
  kernels::RopeTable rope_table() const {
    return {rope_cos_.data(), rope_sin_.data(), config_.rot_dims(), config_.rope == RopePairing::halves};
  }
  void norm_forward(const kernels::Kernels& k, float* out, float* mean, float* rstd, const float* inp, const float* w,
                    const float* b, int N) const;
  void norm_backward(const kernels::Kernels& k, float* dinp, float* dw, float* db, const float* dout, const float* inp,
                     const float* w, const float* mean, const float* rstd, int N) const;
  void mlp_act_forward(const kernels::Kernels& k, float* out, const float* fch, int N) const;
  // wte's rows of ids (B·T of them) plus wpe's rows from position pos0 (when learned), into out:
  // the forward's embedding (tier k's encoder_forward, or a typed wte's rows dequantized).
  void embed(const kernels::Kernels& k, float* out, const int* ids, int B, int T, int pos0) const;

 private:
  void check_ids(const int* ids, int n, const char* field) const;
  // f(lo, hi) over [0, n) cut into threads() runs whose bounds are multiples of unit (the last
  // takes the rest), one a thread; on the caller alone (f(0, n)) with one thread, fewer than two
  // units, or `work` (multiply-adds or floats) too small to pay for waking the pool.
  template <class F>
  void split(int64_t n, int64_t unit, int64_t work, F f);
  // Work under this many multiply-adds (or floats, for the row kernels) stays on the calling
  // thread: waking the pool costs more than it saves.
  static constexpr int64_t kMinSplit = int64_t(1) << 16;
  // A Linear layer's product split over its OC output columns, as both linear()s take it: thread i
  // of n computes product(lo, hi) for the i-th of n equal runs of whole 16-column groups, writing
  // those columns in place. False (nothing run) with one thread or fewer groups than threads.
  template <class F>
  bool split_columns(int OC, F product) {
    constexpr int kGroup = 16;
    const int n = threads(), groups = (OC + kGroup - 1) / kGroup;
    if (n == 1 || groups < n) return false;
    auto cols = [&](int i) { return std::min(OC, groups * i / n * kGroup); };
    auto part = [&](int i) { product(cols(i), cols(i + 1)); };
    pool_->run(part);
    return true;
  }
  // forward()'s other layers, split as set_threads says over what is independent, so each output
  // has the bits of one call: the norm over rows, the MLP's activation over rows, out = a + b over
  // runs of 64 floats, attention over heads (AttnOptions' head_lo, head_hi).
  void norm_rows(const kernels::Kernels& k, float* out, float* mean, float* rstd, const float* inp, const float* w,
                 const float* b, int N);
  void mlp_act_rows(const kernels::Kernels& k, float* out, const float* fch, int N);
  void residual_add(const kernels::Kernels& k, float* out, const float* a, const float* b, int64_t n);
  void attention(const kernels::Kernels& k, float* out, float* att, const float* qkv, int B, int T);
  // A Linear layer: the typed product when tw holds a typed matrix, else the float kernel; either
  // split as set_threads says.
  void linear(const kernels::Kernels& k, float* out, const float* inp, const float* w,
              const kernels::TypedMatrix* tw, const float* b, int N, int C, int OC);
  const kernels::TypedMatrix* typed_head() const { return typed_ ? (t_head_.empty() ? &t_wte_ : &t_head_) : nullptr; }
  // A matrix by name: its typed matrix (null on a float32 model), float32 view and bias.
  struct MatrixRef {
    const kernels::TypedMatrix* typed;
    const float* w;
    const float* b;
  };
  MatrixRef matrix(Matrix m, int layer) const;
  void make_tables();  // RoPE's cos and sin, ALiBi's slopes
  int64_t limit() const { return use_ == ModelUse::train && !opened_ ? kMaxModelBytes : kMaxOpenBytes; }
  // What memory_bytes takes for the weights of this model now: -1 (4 bytes a parameter) unless typed.
  int64_t typed_weights() const { return typed_ ? weight_bytes() : -1; }

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

  // RoPE's tables (block_size, rot_dims/2) and ALiBi's slopes (n_head), empty when off.
  std::vector<float> rope_cos_, rope_sin_, alibi_;

  // Typed weights: their bytes, each block's four matrices and wte's and lm_head's; per tensor of
  // tensors_ its float32 view (null when typed) or its matrix and first row there (to_float32).
  struct TypedBlock {
    kernels::TypedMatrix c_attn, attn_c_proj, c_fc, mlp_c_proj;
  };
  struct TypedSource {
    float* floats = nullptr;
    kernels::TypedMatrix* matrix = nullptr;
    int row = 0;
  };
  void convert_to_float32();
  bool typed_ = false;
  std::vector<char> typed_bytes_;
  TypedOwner typed_owner_;  // the bytes used in place, when an owner gave them
  std::vector<TypedBlock> tb_;
  kernels::TypedMatrix t_wte_, t_head_;
  std::vector<TypedSource> sources_;
  std::unique_ptr<ThreadPool> pool_;  // set_threads' pool (null: one thread)

  // KV cache (allocated by the first cache_reset).
  FloatBuffer cache_buffer_;
  GPTCache c_{};
  int cache_len_ = 0;
  int cache_cap_ = 0;  // positions the cache holds room for
};

}  // namespace ap
