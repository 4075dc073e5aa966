// llama_weights.h — a Llama-family model's weights as the model loader reads them, whichever file
// they came from (a Hugging Face folder's safetensors, a GGUF file): config.json's fields (HfConfig)
// and each tensor under its transformers name, in PyTorch's layout, in its storage type, pointing at
// its bytes. The readers (hf_folder.h for folders, gguf_model for GGUF) make one; the loader of the
// model takes it and never asks where it came from.
//
// Limits: the bytes are owned by the caller (the file's ByteSource) or by `owned` (bytes a reader
// had to make, e.g. GGUF's Q and K rows put back in Hugging Face's order); a LlamaWeights must not
// outlive the source it points into.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/kernels/quant.h"
#include "formats/hf_config.h"

namespace ap {

struct LlamaTensor {
  std::string name;             // transformers' name: "model.layers.0.self_attn.q_proj.weight"
  std::vector<uint64_t> shape;  // PyTorch's: (out, in) for a Linear weight, (n) for a norm or bias
  quant::Type type;             // F32, F16, BF16, or one of ggml's block types (quant.h)
  const char* data = nullptr;   // row after row, each row whole blocks of its type
  uint64_t bytes = 0;
};

struct LlamaWeights {
  HfConfig config;
  std::vector<LlamaTensor> tensors;  // exactly hf_expected_tensors(config)'s names, in that order
  std::deque<std::string> owned;     // bytes made by the reader, which tensors may point into
};

}  // namespace ap
