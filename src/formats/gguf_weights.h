// gguf_weights.h — a GGUF file of the Llama family (llama, qwen2, qwen3: gguf.h's architectures) as the
// LlamaWeights the model loader reads (llama_weights.h): the config.json it implies, and each tensor
// under its transformers name, in PyTorch's (out, in) layout, in its ggml type, pointing at its bytes.
//
// The config (gguf_hf_config): model_type the architecture; hidden, intermediate, layers, heads, key/
// value heads, head_dim (attention.key_length), rope_theta, rms_norm_eps, max_position_embeddings
// (context_length), sliding_window from the "<arch>.…" keys; vocab_size the rows of token_embd.weight;
// tie_word_embeddings when there is no output.weight; attention_bias from blk.0.attn_q.bias (qwen2: always);
// qwen3's q/k norms; bos/eos ids from tokenizer.ggml.bos_token_id / eos_token_id. Refused by name:
// value_length ≠ key_length, rope.dimension_count ≠ key_length (a partial rotation), rope.scaling.type
// other than none (llama.cpp's linear, yarn …). Llama 3's scaling comes as rope_freqs.weight (head_dim/2
// F32 frequency factors that divide θ_i): supported when the factors are Llama 3's rule with
// low_freq_factor 1, high_freq_factor 4 and original_max_position_embeddings 8192 (every Llama 3.1,
// 3.2 and 3.3 file; factor read from the tensor), within 1e-5 relative; any other factors are refused
// by name, as are factors where the architecture does not rotate that way.
//
// The tensors (read_gguf_weights): exactly hf_expected_tensors(config)'s, in that order (hf_folder.h),
// each found under llama.cpp's name (gguf_tensor_name) with ggml's dims the reverse of PyTorch's shape,
// of a type we run (quant.h). A missing tensor, one of another shape or of a type we do not run, and a
// tensor the model has no place for are refused (InputError naming the tensor, its field the GGUF
// name). The file's reader (gguf::read_file) has already refused unknown ggml types, tensors past the
// file's end and rows that are not whole blocks.
// For llama files (rope_adjacent_pairs) the rows of q_proj and k_proj (weights and biases) are put back
// in Hugging Face's order, the inverse of llama.cpp's converter's `permute` (within each head, GGUF row
// 2j + a holds Hugging Face row a·head_dim/2 + j), row by row, which is exact for every type since a
// row is whole blocks; those bytes are in `owned`, so the model needs one pairing only (rotate_half).
// A 1-D bias of a block type cannot be permuted by rows and is refused.
//
// Limits: the other tensors point into src.read(): src must keep them (a StringSource, or a
// PartialSource holding the data section; a PartialSource lacking bytes throws NeedBytes). The
// LlamaWeights must not outlive src.
#pragma once

#include <cstdint>
#include <string>

#include "formats/byte_source.h"
#include "formats/gguf.h"
#include "formats/hf_config.h"
#include "formats/llama_weights.h"

namespace ap {

// llama.cpp's name of a transformers tensor ("model.layers.3.self_attn.q_proj.weight" →
// "blk.3.attn_q.weight"), or "" for a name the Llama family does not have.
std::string gguf_tensor_name(const std::string& hf_name);
// The inverse: the transformers name of a llama.cpp tensor, or "" if none (rope_freqs.weight too).
std::string hf_tensor_name(const std::string& gguf_name);

// The config the file implies (reads rope_freqs.weight's bytes from src when there is one).
HfConfig gguf_hf_config(const ByteSource& src, const gguf::File& f, const std::string& what);

// The whole: config and tensors (see above). `what` names the file in messages.
LlamaWeights read_gguf_weights(const ByteSource& src, const gguf::File& f, const std::string& what);

// Rows of one projection from llama.cpp's order to Hugging Face's: `rows` rows of row_bytes each,
// in heads of rows/heads (even) rows; out must hold rows·row_bytes bytes and not overlap in.
void gguf_rows_to_hf(const char* in, char* out, uint64_t rows, uint64_t row_bytes, uint64_t heads);

}  // namespace ap
