// hf_folder.h — the weights of a Hugging Face model folder: `model.safetensors`, or the shards
// `model-0000N-of-0000M.safetensors` that `model.safetensors.index.json` names, planned into the
// list of tensors the model loader reads: (name, shape, dtype, file, offset) in model order.
//
// What is checked, each fault refused by name (InputError, field the file or the tensor):
//   - the index: "weight_map" an object of tensor → shard file; a shard file name is a plain name
//     ending ".safetensors" (no folder, no "..");
//   - every shard the index names is there (else: the shard, and a tensor it should hold); each
//     shard is a sound safetensors file (truncated or padded files are refused by the container's
//     reader, safetensors.h);
//   - every tensor of a shard is where the index puts it, and is in no other shard; every tensor
//     of the index is in its shard;
//   - the tensors are exactly the ones config.json implies (hf_expected_tensors), with those
//     shapes, each F32, F16 or BF16; a missing one is named, an extra one too (except the
//     rotary_emb.inv_freq buffers of older files, and lm_head.weight when the embeddings are tied,
//     which are skipped).
// Tensor names follow transformers' LlamaForCausalLM / MistralForCausalLM / Qwen2ForCausalLM /
// Qwen3ForCausalLM: model.embed_tokens.weight, model.layers.N.self_attn.q_proj.weight, …,
// model.norm.weight, lm_head.weight. Shapes are PyTorch's Linear [out, in].
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "formats/byte_source.h"
#include "formats/hf_config.h"
#include "formats/safetensors.h"

namespace ap {

constexpr const char* kHfIndexFile = "model.safetensors.index.json";
constexpr const char* kHfSingleFile = "model.safetensors";
constexpr uint64_t kMaxHfShardHeader = uint64_t(64) << 20;
constexpr uint64_t kMaxHfShardBytes = uint64_t(1) << 40;

struct HfIndex {
  std::vector<std::pair<std::string, std::string>> weight_map;  // tensor → file, in file order
  std::vector<std::string> files;                               // each once, in first-named order
};

struct HfShard {
  std::string file;
  safetensors::Header header;
  std::vector<safetensors::TensorInfo> tensors;
};

struct HfTensor {
  std::string name, dtype, file;
  std::vector<uint64_t> shape;
  uint64_t offset = 0, bytes = 0;  // absolute byte offset in the file, and length
};

HfIndex read_hf_index(const std::string& text, const std::string& name = kHfIndexFile);
HfShard read_hf_shard(const ByteSource& bytes, const std::string& file);
// The tensors config.json implies, in model order, with their shapes.
std::vector<std::pair<std::string, std::vector<uint64_t>>> hf_expected_tensors(const HfConfig& c);
// The plan; index null for a single model.safetensors (then shards holds that one file).
std::vector<HfTensor> plan_hf_tensors(const HfConfig& c, const std::vector<HfShard>& shards, const HfIndex* index);

// A folder read whole (natively, and in tests): file name → bytes. Needs config.json, and the
// index with its shards or model.safetensors.
struct HfFolder {
  HfConfig config;
  std::vector<HfTensor> tensors;
};
HfFolder read_hf_folder(const std::map<std::string, std::string>& files);

}  // namespace ap
