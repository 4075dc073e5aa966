// llama_folder.cpp — a Hugging Face folder read natively into LlamaWeights (see llama_load.h); not
// in the wasm build (the page reads its files in JS).
#include <map>

#include "core/base/input_error.h"
#include "formats/file_io.h"
#include "formats/hf_folder.h"
#include "formats/llama_load.h"

namespace ap {

namespace {

std::string q(const std::string& s) { return "\"" + s + "\""; }

quant::Type type_of_dtype(const std::string& dtype, const std::string& name) {
  if (dtype == "F32") return quant::Type::F32;
  if (dtype == "F16") return quant::Type::F16;
  if (dtype == "BF16") return quant::Type::BF16;
  throw InputError("tensor " + q(name) + " has dtype " + dtype + ": only F32, F16 and BF16 are read", name);
}

}  // namespace

bool is_hf_folder(const std::string& dir) { return is_directory(dir) && is_regular_file(dir + "/config.json"); }

LlamaWeights read_llama_folder(const std::string& dir) {
  LlamaWeights w;
  auto path = [&](const std::string& f) { return dir + "/" + f; };
  w.config = read_hf_config(read_file(path("config.json"), uint64_t(1) << 20, "config.json"));
  std::map<std::string, const std::string*> bytes;
  std::vector<HfShard> shards;
  auto read_shard = [&](const std::string& f) {
    w.owned.push_back(read_file(path(f), kMaxHfShardBytes, f));
    bytes[f] = &w.owned.back();
    shards.push_back(read_hf_shard(StringSource(w.owned.back()), f));
  };
  std::vector<HfTensor> plan;
  if (is_regular_file(path(kHfIndexFile))) {
    const HfIndex index = read_hf_index(read_file(path(kHfIndexFile), uint64_t(64) << 20, kHfIndexFile));
    for (const std::string& f : index.files)
      if (is_regular_file(path(f))) read_shard(f);
    plan = plan_hf_tensors(w.config, shards, &index);
  } else {
    if (!is_regular_file(path(kHfSingleFile)))
      throw InputError(dir + " has neither " + kHfSingleFile + " nor " + kHfIndexFile + " (with its shards)",
                       kHfSingleFile);
    read_shard(kHfSingleFile);
    plan = plan_hf_tensors(w.config, shards, nullptr);
  }
  for (const HfTensor& t : plan)
    w.tensors.push_back({t.name, t.shape, type_of_dtype(t.dtype, t.name), bytes.at(t.file)->data() + t.offset, t.bytes});
  return w;
}

}  // namespace ap
