// common.cpp — the `gpt` CLI's shared helpers (see common.h).
#include "cli/gpt/common.h"
#include "cli/gpt/commands.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

#include "api/checkpoint.h"
#include "api/gpt_json.h"
#include "formats/file_io.h"
#include "formats/gguf.h"
#include "formats/gguf_tokenizer.h"
#include "formats/gguf_weights.h"
#include "formats/llama_load.h"
#include "formats/bpe_files.h"
#include "formats/hf_tokenizer_json.h"
#include "formats/import.h"
#include "formats/json.h"
#include "core/base/number_text.h"

namespace ap::gpt_cli {

std::string with_commas(long long n) {
  std::string s = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string json_quoted(const std::string& s) { return json::Value(s).dump(); }

std::string read_file(const std::string& path, size_t max_bytes, const char* what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw CliError("cannot read " + std::string(what) + " " + path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw CliError("cannot read " + std::string(what) + " " + path + ": it is a directory");
  if (static_cast<unsigned long long>(st.st_size) > max_bytes)
    throw CliError(std::string(what) + " " + path + " has " + with_commas(st.st_size) + " bytes, more than the limit of " +
                   with_commas(static_cast<long long>(max_bytes)));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw CliError("cannot read " + std::string(what) + " " + path + ": " + std::strerror(errno));
  // a regular file into a string of its size (read in one go, no doubling as it grows: a model file
  // is in memory once); what else it holds (a file that grew, a pipe) appended after
  std::string out(S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) : 0, '\0');
  f.read(&out[0], static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<size_t>(f.gcount()));
  if (!f.eof()) out.append(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  if (f.bad()) throw CliError("cannot read " + std::string(what) + " " + path);
  return out;
}

std::string read_text_file(const std::string& path) { return read_file(path, kMaxTextBytes, "the text file"); }

// Refuses early (before minutes of training) an output whose directory does not exist or cannot
// be written; the checkpoint writer reports anything else.
void check_writable(const std::string& path, const char* what) {
  const std::string dir = parent_dir(path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw CliError("cannot write " + std::string(what) + " " + path + ": the folder " + dir + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw CliError("cannot write " + std::string(what) + " " + path + ": the folder " + dir + " is not writable");
  struct stat target {};
  if (::stat(path.c_str(), &target) == 0 && S_ISDIR(target.st_mode))
    throw CliError("cannot write " + std::string(what) + " " + path + ": it is a directory");
}

TrainState import_model(const std::string& path, const ByteSource& bytes, const std::string& meta) {
  ImportPlan plan = plan_nanogpt(bytes, path);
  fill_weights(plan.state, std::move(plan.reads), bytes, path);
  NanoGptImport im{std::move(plan.state), std::move(plan.dataset)};
  std::string meta_path = meta;
  if (meta_path.empty()) {
    // nanoGPT's layout: out-shakespeare-char/ckpt.pt and data/shakespeare_char/meta.pkl
    const std::string dir = parent_dir(path);
    std::vector<std::string> candidates = {dir + "/meta.pkl"};
    if (!im.dataset.empty() && im.dataset.find("..") == std::string::npos)
      candidates.insert(candidates.end(), {dir + "/../data/" + im.dataset + "/meta.pkl", "data/" + im.dataset + "/meta.pkl"});
    for (const std::string& c : candidates)
      if (is_regular_file(c)) {
        meta_path = c;
        break;
      }
  }
  if (!meta_path.empty()) set_meta_vocab(im.state, read_file(meta_path, kMaxTextBytes, "the meta.pkl"), meta_path);
  if (meta.empty() && !meta_path.empty())
    std::cerr << "gpt: " << path << ": its characters from " << meta_path << " (found"
              << (im.dataset.empty() ? " beside it" : " by its dataset " + json_quoted(im.dataset)) << "; to use another, name it after "
              << path << ")\n";
  return std::move(im.state);
}

void attach_bpe(TrainState& s, const std::string& model_path, const TokenizerFiles& given) {
  if (!s.vocab.empty() || s.bpe) return;
  TokenizerFiles f = given;
  if (f.vocab.empty() != f.merges.empty())
    throw CliError(f.vocab.empty() ? "a merges.txt (" + f.merges + ") needs its vocab.json too"
                                   : "a vocab.json (" + f.vocab + ") needs its merges.txt too");
  if (f.vocab.empty() && f.tokenizer_json.empty()) {  // Hugging Face's folder: the files beside the model
    const std::string dir = parent_dir(model_path);
    if (is_regular_file(dir + "/vocab.json") && is_regular_file(dir + "/merges.txt")) {
      f.vocab = dir + "/vocab.json";
      f.merges = dir + "/merges.txt";
    } else if (is_regular_file(dir + "/tokenizer.json")) {
      f.tokenizer_json = dir + "/tokenizer.json";
    } else {
      return;
    }
    std::cerr << "gpt: " << model_path << ": GPT-2's tokenizer from "
              << (f.vocab.empty() ? f.tokenizer_json : f.vocab + " + " + f.merges) << " (found beside it; to use another, name its files after "
              << model_path << ")\n";
  }
  constexpr size_t kMaxTokenizerBytes = size_t(1) << 26;
  std::shared_ptr<const BpeTokenizer> bpe;
  std::string name;
  if (!f.vocab.empty()) {
    bpe = load_bpe_files(read_file(f.vocab, kMaxTokenizerBytes, "the vocab.json"),
                         read_file(f.merges, kMaxTokenizerBytes, "the merges.txt"), f.vocab, f.merges);
    name = f.vocab;
  } else {
    bpe = load_tokenizer_json(read_file(f.tokenizer_json, kMaxTokenizerBytes, "the tokenizer.json"), f.tokenizer_json);
    name = f.tokenizer_json;
  }
  set_bpe_tokenizer(s, std::move(bpe), name);
}

namespace {

// The bytes a Llama-family model's tensors point into: the GGUF file read whole, or the folder's
// shards and what the readers made (LlamaWeights::owned). A typed model keeps them (TypedOwner) and
// uses its matrices where they lie, so the file is in memory once, not read and then copied.
struct LlamaBytes {
  std::string file;
  std::deque<std::string> owned;
};

// How a Llama-family model's weights are read: converted to float32 parameters, kept in their types
// for inference (Checkpoint::typed), or left where they lie for a writer (Checkpoint::fill).
enum class Weights { float32, typed, in_place };

// The model of a Llama-family file: typed (Checkpoint::typed, on `bytes` in place), as float32
// parameters, or its weights kept with `bytes` for Checkpoint::fill.
void take_llama(Checkpoint& c, LlamaWeights& w, const std::shared_ptr<LlamaBytes>& bytes, const std::string& path,
                Weights how) {
  if (how == Weights::in_place) {  // checked as open_llama checks them, the values converted later
    c.state.model = llama_gpt_config(w.config);
    check_llama_memory(c.state.model);  // as load_llama refuses it (the float32 model's size)
    struct Kept {
      std::shared_ptr<LlamaBytes> bytes;
      LlamaWeights w;  // its tensors point into bytes
    };
    auto kept = std::make_shared<Kept>(Kept{bytes, std::move(w)});
    c.fill = llama_param_fill(kept->w, c.state.model, path);
    c.weights = kept;
    return;
  }
  if (how == Weights::typed) {
    int64_t held = static_cast<int64_t>(bytes->file.size());
    for (const std::string& b : bytes->owned) held += static_cast<int64_t>(b.size());
    c.typed = open_llama(w, path, TypedOwner{bytes, held});
    c.state.model = c.typed->config();
    return;
  }
  LlamaModel m = load_llama(w, path);
  c.state.model = m.config;
  c.state.params = std::move(m.params);
}

// A model of the Llama family, read one way whatever holds it: a Hugging Face folder (llama_load.h)
// or llama.cpp's GGUF (gguf_weights.h). Each brings its tokenizer when it has one: the folder's
// tokenizer.json (an error in it is the model's), the GGUF's own metadata (without it, or with one we
// cannot read, the model still runs on token ids).
Checkpoint read_llama(const std::string& path, bool gguf_file, Weights how) {
  Checkpoint c;
  try {
    // A GGUF file is read whole (a folder's shards too: read_llama_folder): the weights point into
    // its bytes, which a typed model keeps and uses in place; float32 parameters are converted from them.
    auto bytes = std::make_shared<LlamaBytes>();
    if (gguf_file) bytes->file = read_file(path, kMaxCheckpointBytes, "a GGUF file");
    const StringSource src(bytes->file);
    const gguf::File f = gguf_file ? gguf::read_file(src, path) : gguf::File();
    std::string type;
    c.file_bytes = bytes->file.size();
    {
      LlamaWeights w = gguf_file ? read_gguf_weights(src, f, path) : read_llama_folder(path);
      type = w.config.model_type;
      if (!gguf_file)
        for (const std::string& shard : w.owned) c.file_bytes += shard.size();
      bytes->owned = std::move(w.owned);  // a deque's elements stay where they are: w.tensors still point into them
      take_llama(c, w, bytes, path, how);
    }
    if (how == Weights::float32) *bytes = LlamaBytes();  // converted: the file's bytes are not needed any more
    c.state.source = gguf_file ? "llama.cpp's " + type + " GGUF " + path : "Hugging Face's " + type + " folder " + path;
    c.imported = gguf_file ? "a GGUF file" : "a Hugging Face folder";
    if (gguf_file) {
      try {
        c.state.hf_tokenizer = load_gguf_tokenizer(f, path).tokenizer;
        Tokenizer::from_hf(c.state.hf_tokenizer, c.state.model.vocab_size);  // fits the model
      } catch (const InputError& e) {
        c.state.hf_tokenizer.reset();
        std::cerr << "gpt: " << path << ": its tokenizer is not read (" << e.what() << "): give token ids (--ids)\n";
      }
    } else if (is_regular_file(path + "/tokenizer.json")) {  // BOS as the files say
      constexpr uint64_t kMaxTokenizerBytes = uint64_t(1) << 26;
      c.state.hf_tokenizer_json = read_file(path + "/tokenizer.json", kMaxTokenizerBytes, "the tokenizer.json");
      if (is_regular_file(path + "/tokenizer_config.json"))
        c.state.hf_tokenizer_config =
            read_file(path + "/tokenizer_config.json", kMaxTokenizerBytes, "the tokenizer_config.json");
      c.state.hf_tokenizer = load_hf_tokenizer(c.state.hf_tokenizer_json, c.state.hf_tokenizer_config).tokenizer;
      Tokenizer::from_hf(c.state.hf_tokenizer, c.state.model.vocab_size);  // fits the model
    }
  } catch (const InputError& e) {
    throw CliError(path + ": " + e.what());
  }
  return c;
}

}  // namespace

Checkpoint read_checkpoint(const std::string& path, bool typed) {
  const Weights how = typed ? Weights::typed : Weights::float32;
  if (is_hf_folder(path)) return read_llama(path, false, how);
  if (is_gguf_file(path)) return read_llama(path, true, how);
  Checkpoint c;
  std::unique_ptr<FileSource> src;
  try {
    src = std::make_unique<FileSource>(path, kMaxCheckpointBytes, "a checkpoint");
  } catch (const InputError& e) {
    throw CliError(e.what());
  }
  c.file_bytes = src->size();
  // A model trained elsewhere: nanoGPT's ckpt.pt, or Hugging Face's GPT-2 safetensors with the
  // config.json beside it. With a character vocabulary it is read as the model-only file `gpt
  // import` writes; without one (GPT-2's BPE) it takes token ids only.
  try {
    const bool zip = is_torch_zip(*src);
    if (zip || is_foreign_safetensors(*src)) {
      if (zip) {
        c.state = import_model(path, *src, "");
        c.imported = "nanoGPT's ckpt.pt";
      } else {
        const std::string config = parent_dir(path) + "/config.json";
        if (!is_regular_file(config))
          throw CliError(path + " is not an Attention Playground checkpoint; read as Hugging Face's GPT-2, it needs "
                         "its config.json beside it (" + config + " does not exist)");
        const std::string config_text = read_file(config, kMaxTextBytes, "the config.json");
        ImportPlan plan = plan_hf_gpt2(*src, config_text, path, config);
        fill_weights(plan.state, std::move(plan.reads), *src, path);
        c.state = std::move(plan.state);
        c.imported = "Hugging Face's GPT-2 safetensors";
      }
      attach_bpe(c.state, path, {});
      return c;
    }
  } catch (const CliError&) {
    throw;
  } catch (const InputError& e) {
    throw CliError(e.what());
  }
  // The core's messages about a file's insides name the tensor or byte; the file's path comes first.
  try {
    c.state = load_checkpoint(*src);
    c.header = safetensors::read_file(*src, {kMaxCheckpointHeader, kMaxCheckpointBytes, "checkpoint"});
  } catch (const InputError& e) {
    const uint64_t n = std::min<uint64_t>(9, src->size());
    throw CliError(checkpoint_fault(path, n ? std::string(src->read(0, n), n) : std::string(), e.what()));
  }
  return c;
}

Checkpoint read_llama_in_place(const std::string& path) {
  return read_llama(path, is_gguf_file(path), Weights::in_place);
}

Checkpoint read_checkpoint(const std::vector<std::string>& files, bool typed) {
  if (files.size() == 1) return read_checkpoint(files[0], typed);
  Checkpoint c;
  c.state = read_model_files(files, false);
  c.imported = c.state.source.rfind("nanoGPT", 0) == 0 ? "nanoGPT's ckpt.pt" : "Hugging Face's GPT-2 safetensors";
  try {
    c.file_bytes = FileSource(files[0], kMaxCheckpointBytes, "a checkpoint").size();
  } catch (const InputError& e) {
    throw CliError(e.what());
  }
  return c;
}

void require_training_state(const std::string& file, const TrainState& s, const char* what) {
  if (s.model_only())
    throw CliError(file + " holds a model only (" + s.source + "), with no training state or data to " + what +
                   ": sample from it, look at its attention or logits, or train a new run");
}

LoadedModel load_model(const std::vector<std::string>& files, bool need_tokenizer) {
  LoadedModel m;
  const std::string& path = files[0];
  Checkpoint c = read_checkpoint(files, true);  // a Llama-family model keeps its weights' types
  m.state = std::move(c.state);
  m.model = std::move(c.typed);
  if (need_tokenizer) {
    try {
      require_vocab(m.state, path);
    } catch (const InputError& e) {
      throw CliError(e.what());
    }
  }
  if (!m.model) {
    m.model = std::make_unique<GPT>(m.state.model, m.state.model_only() ? ModelUse::infer : ModelUse::train);
    std::copy(m.state.params.begin(), m.state.params.end(), m.model->params());
    std::vector<float>().swap(m.state.params);  // the model holds them now: one copy, not two
  }
  if (!m.state.vocab.empty() || m.state.bpe || m.state.hf_tokenizer) m.tok = std::make_unique<Tokenizer>(tokenizer_of(m.state));
  return m;
}

void check_prompt_length(const LoadedModel& m, const std::vector<int>& ids) {
  if (ids.empty()) throw InputError("the prompt is empty: give at least one character", "prompt");
  const int S = m.state.model.block_size;
  if (static_cast<int>(ids.size()) > S)
    throw InputError("the prompt has " + std::to_string(ids.size()) + (m.state.bpe || m.state.hf_tokenizer ? " tokens" : " characters") +
                         "; the model sees at most block_size = " +
                         std::to_string(S),
                     "prompt");
}

std::string run_text(const std::string& file, const TrainState& s, const std::string& text_file) {
  if (text_file.empty()) return "";
  if (!s.task.empty())
    throw InputError(file + " was trained on the " + s.task + " task, which it regenerates: --text does not apply",
                     "text");
  return read_text_file(text_file);
}

namespace {

// The variants (gpt.h) that are not the default: ", RoPE (halves, base 10000), 2 key/value heads, …".
std::string describe_variants(const GPTConfig& c) {
  std::string out;
  if (c.pos == Positions::rope)
    out += ", RoPE (" + std::string(rope_pairing_name(c.rope)) + ", base " + format_float(c.rope_base) +
           (c.rope_dims ? ", " + std::to_string(c.rope_dims) + " dims" : "") + ")";
  if (c.pos == Positions::alibi) out += ", ALiBi";
  if (c.pos == Positions::none) out += ", no positions";
  if (c.kv_head() != c.n_head) out += ", " + std::to_string(c.kv_head()) + " key/value heads";
  if (c.norm == Norm::rmsnorm) out += ", RMSNorm";
  if (c.mlp == Mlp::swiglu) out += ", SwiGLU";
  if (c.n_inner) out += ", MLP hidden " + std::to_string(c.n_inner);
  if (c.window) out += ", window " + std::to_string(c.window);
  if (c.qkv_bias && !c.bias) out += ", q/k/v biases";
  if (c.qk_norm) out += ", q/k norms";
  if (c.rope_scaling.on()) out += ", Llama 3 RoPE scaling (factor " + format_float(static_cast<float>(c.rope_scaling.factor)) + ")";
  if (!c.tie_embeddings) out += ", untied lm_head";
  if (c.sink) out += ", " + std::to_string(c.sink) + " sink" + (c.sink > 1 ? "s" : "");
  return out;
}

}  // namespace

std::string describe_config(const GPTConfig& c) {
  return std::to_string(c.n_layer) + (c.n_layer == 1 ? " layer, " : " layers, ") + std::to_string(c.n_head) + (c.n_head == 1 ? " head of " : " heads of ") +
         std::to_string(c.head_dim()) + ", n_embd " + std::to_string(c.n_embd) + ", block_size " +
         std::to_string(c.block_size) + ", vocab " + std::to_string(c.vocab_size) +
         (c.mask == MaskVariant::strict ? "" : ", mask inclusive") + (c.stable_softmax ? "" : ", naive softmax") +
         (c.activation == Activation::gelu ? "" : ", GELU tanh (gelu_new)") + (c.bias ? "" : ", no biases") +
         (c.ln_eps == 1e-5f ? "" : (c.norm == Norm::rmsnorm ? ", RMSNorm eps " : ", LayerNorm eps ") + format_float(c.ln_eps)) +
         describe_variants(c);
}

std::string describe_data(const TrainState& s) {
  if (s.model_only()) return s.source;
  if (!s.task.empty()) return "the " + s.task + " task (" + with_commas(s.n_chars) + " characters)";
  return "the text " + json_quoted(s.text_name);
}

}  // namespace ap::gpt_cli

