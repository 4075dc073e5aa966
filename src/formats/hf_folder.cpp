// hf_folder.cpp — a Hugging Face folder's index, shards and tensor plan (see hf_folder.h).
#include "formats/hf_folder.h"

#include <unordered_map>
#include <unordered_set>

#include "core/base/input_error.h"
#include "formats/json.h"

namespace ap {

namespace {

std::string q(const std::string& s) { return "\"" + json::excerpt(s, 80) + "\""; }

bool plain_shard_name(const std::string& f) {
  const std::string ext = ".safetensors";
  return f.size() > ext.size() && f.compare(f.size() - ext.size(), ext.size(), ext) == 0 &&
         f.find('/') == std::string::npos && f.find('\\') == std::string::npos && f.find("..") == std::string::npos &&
         f.find('\0') == std::string::npos;
}

bool ignored_extra(const std::string& name, const HfConfig& c) {
  const std::string inv = "rotary_emb.inv_freq";
  if (name.size() > inv.size() && name.compare(name.size() - inv.size(), inv.size(), inv) == 0) return true;
  return c.tie_word_embeddings && name == "lm_head.weight";
}

}  // namespace

HfIndex read_hf_index(const std::string& text, const std::string& name) {
  const json::Value root = json::parse_file(text, name);
  const json::Value* wm = root.is_object() ? root.find("weight_map") : nullptr;
  if (!wm || !wm->is_object()) throw InputError(name + " has no \"weight_map\" object (tensor → shard file)", name);
  if (wm->size() == 0) throw InputError(name + ": \"weight_map\" is empty", name);
  HfIndex out;
  std::unordered_set<std::string> seen;
  for (const auto& [tensor, file] : wm->members()) {
    if (!file.is_string() || !plain_shard_name(file.as_string()))
      throw InputError(name + ": weight_map[" + q(tensor) + "] is " + json::excerpt(file.dump(), 60) +
                           ", not the plain name of a .safetensors file in the folder", name);
    out.weight_map.emplace_back(tensor, file.as_string());
    if (seen.insert(file.as_string()).second) out.files.push_back(file.as_string());
  }
  return out;
}

HfShard read_hf_shard(const ByteSource& bytes, const std::string& file) {
  const safetensors::Limits limits{kMaxHfShardHeader, kMaxHfShardBytes, file};
  HfShard s;
  s.file = file;
  try {
    s.header = safetensors::read_header(bytes, limits);
    s.tensors = safetensors::read_tensors(s.header, limits);
  } catch (const InputError& e) {
    throw InputError(file + ": " + e.what(), e.field);
  }
  return s;
}

std::vector<std::pair<std::string, std::vector<uint64_t>>> hf_expected_tensors(const HfConfig& c) {
  using Shape = std::vector<uint64_t>;
  const auto u = [](long long v) { return static_cast<uint64_t>(v); };
  const uint64_t h = u(c.hidden_size), v = u(c.vocab_size), im = u(c.intermediate_size), hd = u(c.head_dim);
  const uint64_t qd = u(c.num_attention_heads) * hd, kvd = u(c.num_key_value_heads) * hd;
  std::vector<std::pair<std::string, Shape>> out;
  out.emplace_back("model.embed_tokens.weight", Shape{v, h});
  for (long long i = 0; i < c.num_hidden_layers; ++i) {
    const std::string l = "model.layers." + std::to_string(i) + ".";
    out.emplace_back(l + "input_layernorm.weight", Shape{h});
    out.emplace_back(l + "self_attn.q_proj.weight", Shape{qd, h});
    if (c.attention_bias) out.emplace_back(l + "self_attn.q_proj.bias", Shape{qd});
    out.emplace_back(l + "self_attn.k_proj.weight", Shape{kvd, h});
    if (c.attention_bias) out.emplace_back(l + "self_attn.k_proj.bias", Shape{kvd});
    out.emplace_back(l + "self_attn.v_proj.weight", Shape{kvd, h});
    if (c.attention_bias) out.emplace_back(l + "self_attn.v_proj.bias", Shape{kvd});
    out.emplace_back(l + "self_attn.o_proj.weight", Shape{h, qd});
    if (c.attention_out_bias) out.emplace_back(l + "self_attn.o_proj.bias", Shape{h});
    if (c.qk_norm) {
      out.emplace_back(l + "self_attn.q_norm.weight", Shape{hd});
      out.emplace_back(l + "self_attn.k_norm.weight", Shape{hd});
    }
    out.emplace_back(l + "post_attention_layernorm.weight", Shape{h});
    out.emplace_back(l + "mlp.gate_proj.weight", Shape{im, h});
    out.emplace_back(l + "mlp.up_proj.weight", Shape{im, h});
    out.emplace_back(l + "mlp.down_proj.weight", Shape{h, im});
  }
  out.emplace_back("model.norm.weight", Shape{h});
  if (!c.tie_word_embeddings) out.emplace_back("lm_head.weight", Shape{v, h});
  return out;
}

std::vector<HfTensor> plan_hf_tensors(const HfConfig& c, const std::vector<HfShard>& shards, const HfIndex* index) {
  // Where each tensor is: one shard, never two.
  std::unordered_map<std::string, std::pair<const HfShard*, const safetensors::TensorInfo*>> at;
  for (const HfShard& s : shards)
    for (const auto& t : s.tensors) {
      const auto [it, fresh] = at.emplace(t.name, std::make_pair(&s, &t));
      if (!fresh)
        throw InputError("tensor " + q(t.name) + " is duplicated: it is in " + it->second.first->file + " and in " + s.file,
                         t.name);
    }
  if (index) {
    std::unordered_map<std::string, std::string> file_of;
    for (const auto& [tensor, file] : index->weight_map) file_of.emplace(tensor, file);
    for (const std::string& f : index->files) {
      bool present = false;
      for (const HfShard& s : shards) present = present || s.file == f;
      if (!present) {
        std::string example;
        for (const auto& [tensor, file] : index->weight_map)
          if (file == f) {
            example = tensor;
            break;
          }
        throw InputError("the shard " + f + " is missing: " + kHfIndexFile + " puts tensors there (" + q(example) + ")", f);
      }
    }
    for (const auto& [tensor, file] : index->weight_map) {
      const auto it = at.find(tensor);
      if (it == at.end())
        throw InputError(std::string(kHfIndexFile) + " puts tensor " + q(tensor) + " in " + file + ", which has no such tensor", tensor);
      if (it->second.first->file != file)
        throw InputError(std::string(kHfIndexFile) + " puts tensor " + q(tensor) + " in " + file + ", but it is in " +
                             it->second.first->file, tensor);
    }
    for (const auto& [tensor, where] : at)
      if (!file_of.count(tensor))
        throw InputError("tensor " + q(tensor) + " of " + where.first->file + " is not in " + kHfIndexFile + "'s weight_map", tensor);
  }
  std::vector<HfTensor> plan;
  std::unordered_set<std::string> expected;
  for (const auto& [name, shape] : hf_expected_tensors(c)) {
    expected.insert(name);
    const auto it = at.find(name);
    if (it == at.end())
      throw InputError("tensor " + q(name) + " " + safetensors::shape_text(shape) + " is missing: config.json's " + c.model_type +
                           " model has it, and no weight file holds it", name);
    const HfShard& s = *it->second.first;
    const safetensors::TensorInfo& t = *it->second.second;
    if (t.shape != shape)
      throw InputError("tensor " + q(name) + " in " + s.file + " has the shape " + safetensors::shape_text(t.shape) +
                           ", but config.json implies " + safetensors::shape_text(shape), name);
    if (t.dtype != "F32" && t.dtype != "F16" && t.dtype != "BF16")
      throw InputError("tensor " + q(name) + " in " + s.file + " has dtype " + t.dtype + ": only F32, F16 and BF16 are read", name);
    plan.push_back({name, t.dtype, s.file, t.shape, s.header.data_start + t.begin, t.end - t.begin});
  }
  for (const HfShard& s : shards)
    for (const auto& t : s.tensors)
      if (!expected.count(t.name) && !ignored_extra(t.name, c))
        throw InputError("tensor " + q(t.name) + " in " + s.file + " is not a tensor of config.json's " + c.model_type +
                             " model (" + std::to_string(c.num_hidden_layers) + " layers)", t.name);
  return plan;
}

HfFolder read_hf_folder(const std::map<std::string, std::string>& files) {
  auto file = [&](const std::string& name) -> const std::string& {
    const auto it = files.find(name);
    if (it == files.end()) throw InputError("the folder has no " + name, name);
    return it->second;
  };
  HfFolder out;
  out.config = read_hf_config(file("config.json"));
  std::vector<HfShard> shards;
  if (files.count(kHfIndexFile)) {
    const HfIndex index = read_hf_index(file(kHfIndexFile));
    for (const std::string& f : index.files)
      if (files.count(f)) shards.push_back(read_hf_shard(StringSource(files.at(f)), f));
    out.tensors = plan_hf_tensors(out.config, shards, &index);
  } else {
    if (!files.count(kHfSingleFile))
      throw InputError(std::string("the folder has neither ") + kHfSingleFile + " nor " + kHfIndexFile + " (with its shards)",
                       kHfSingleFile);
    shards.push_back(read_hf_shard(StringSource(file(kHfSingleFile)), kHfSingleFile));
    out.tensors = plan_hf_tensors(out.config, shards, nullptr);
  }
  return out;
}

}  // namespace ap
