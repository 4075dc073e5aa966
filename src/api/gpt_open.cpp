// gpt_open.cpp — GptSession's opening of a model file in slices (see gpt_session.h): the page's
// "Open a model". The model file (nanoGPT's ckpt.pt, a Hugging Face model.safetensors, or this
// project's .safetensors) is read once into one buffer of its size that the core allocates
// (open_begin), filled by the caller in slices (the bindings hand out views of it: no whole copy
// in JS), and read from there (open_finish), then freed before the model is made. The small files
// (meta.pkl, config.json) come as bytes beside it.
//
// Memory: before the buffer is made, open_begin compares what opening will take (the file, plus
// the model sized from config.json or the safetensors header: 4 bytes per parameter, the KV cache,
// the activations of one token) with what is left (in wasm: the 4 GiB a module can address, minus
// what it uses now); before the model is made, open_finish compares the model's exact size with
// what is left then. Either refuses with both figures, field "memory". Peak while opening: the
// file and the weights read as float32 are both alive while the file is read (about twice an F32
// file), then the weights and the model's copy of them.
#include <cstring>

#include "bpe_files.h"
#include "checkpoint.h"
#include "gpt_json.h"
#include "gpt_session.h"
#include "import.h"
#include "json.h"
#include "safetensors.h"
#include "spec.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/heap.h>
#include <malloc.h>
#include <unistd.h>
#endif

namespace ap {

using json::Value;
using namespace spec;

namespace {

std::string gib(int64_t bytes) {
  char b[32];
  if (bytes >= (int64_t(1) << 30)) std::snprintf(b, sizeof b, "%.2f GiB", bytes / double(int64_t(1) << 30));
  else if (bytes >= (1 << 20)) std::snprintf(b, sizeof b, "%.0f MiB", bytes / double(1 << 20));
  else std::snprintf(b, sizeof b, "%lld bytes", static_cast<long long>(bytes));
  return b;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The parameters a safetensors header declares (its tensors' elements, without the attention's
// mask buffers), or -1 when `head` does not hold a whole header. Only for sizing: the file is
// checked in full when it is read.
int64_t header_parameters(const std::string& head) {
  if (head.size() < 8) return -1;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(head[static_cast<size_t>(i)]);
  if (n > head.size() - 8) return -1;
  Value h;
  try {
    h = json::parse(head.substr(8, static_cast<size_t>(n)));
  } catch (const std::exception&) {
    return -1;
  }
  if (!h.is_object()) return -1;
  int64_t total = 0;
  for (const auto& [name, t] : h.members()) {
    if (name == safetensors::kMetadataKey || ends_with(name, "attn.bias") || ends_with(name, "attn.masked_bias")) continue;
    const Value* shape = t.is_object() ? t.find("shape") : nullptr;
    if (!shape || !shape->is_array()) return -1;
    double numel = 1;
    for (const Value& d : shape->items()) numel *= d.is_number() ? d.as_number() : 0;
    if (numel > 4e9) numel = 4e9;  // absurd: sized as the whole address space
    total += static_cast<int64_t>(numel);
  }
  return total;
}

}  // namespace

int64_t open_memory_max() {
#ifdef __EMSCRIPTEN__
  return static_cast<int64_t>(emscripten_get_heap_max());
#else
  return kMaxOpenBytes;
#endif
}

int64_t open_memory_left() {
#ifdef __EMSCRIPTEN__
  const struct mallinfo mi = mallinfo();
  const int64_t top = static_cast<int64_t>(reinterpret_cast<uintptr_t>(sbrk(0)));
  // mallinfo's fields are int; in a module past 2 GiB they wrap: read back as the unsigned 32 bits
  const int64_t free_bytes = static_cast<uint32_t>(mi.fordblks);
  return static_cast<int64_t>(emscripten_get_heap_max()) - top + free_bytes;
#else
  return kMaxOpenBytes;
#endif
}

std::string GptSession::open_begin(const std::string& spec_json, const std::string& head, const std::string& config_json) {
  return guarded([&] {
    std::string().swap(file_);
    tokenizer_.reset();  // a new opening starts without an earlier one's tokenizer files
    const Value spec = json::parse(spec_json);
    reject_unknown_keys(spec, {"name", "size", "config_name"}, "open spec");
    file_name_ = read_string(spec, "name", "model", 1024);
    const int64_t size = read_int(spec, "size", 0, 1, int64_t(1) << 40);
    const std::string config_name = read_string(spec, "config_name", "config.json", 1024);
    int64_t model = 0;
    const int64_t declared = header_parameters(head);
    if (declared > 0) model = declared * 4;
    if (!config_json.empty())
      model = std::max(model, GPT::memory_bytes(hf_gpt2_config(config_json, config_name), 1, 1, ModelUse::infer));
    const int64_t need = size + model, left = open_memory_left();
    if (need > left || model > kMaxOpenBytes)
      throw InputError("opening " + file_name_ + " needs about " + gib(need) + " (the file's " + gib(size) +
                           (model ? " and the model's " + gib(model) : std::string()) + ") but " + gib(left) +
                           " is left of the " + gib(open_memory_max()) +
                           " this page can address: it will not fit, so it was not read",
                       "memory");
    try {
      file_.resize(static_cast<size_t>(size));
    } catch (const std::exception&) {
      std::string().swap(file_);
      throw InputError("could not set aside " + gib(size) + " to read " + file_name_ + " into (the browser refused the memory)",
                       "memory");
    }
    Value v = Value::object();
    v.set("size", static_cast<long long>(size));
    v.set("need", static_cast<long long>(need));
    v.set("left", static_cast<long long>(left));
    return v;
  });
}

std::string GptSession::open_finish(const std::string& spec_json, const std::string& meta, const std::string& config_json) {
  return guarded([&] {
    const Value spec = json::parse(spec_json);
    reject_unknown_keys(spec, {"meta_name", "config_name"}, "open spec");
    const std::string meta_name = read_string(spec, "meta_name", "meta.pkl", 1024);
    const std::string config_name = read_string(spec, "config_name", "config.json", 1024);
    if (file_.empty()) throw InputError("no file is being opened: call open_begin and fill its buffer first", "model");
    std::string format;
    TrainState s;
    bool model_only = true;
    if (is_torch_zip(file_)) {
      format = "nanogpt";
      s = std::move(import_nanogpt(file_, file_name_).state);
      if (!meta.empty()) set_meta_vocab(s, meta, meta_name);
    } else if (is_foreign_safetensors(file_)) {
      format = "huggingface";
      if (config_json.empty())
        throw InputError(file_name_ + " is a Hugging Face safetensors file: its config.json (n_layer, n_head, n_embd, "
                         "activation_function, …) is needed beside it",
                         config_name);
      s = import_hf_gpt2(file_, config_json, file_name_, config_name);
    } else {
      format = "playground";
      try {
        s = load_checkpoint(file_);
      } catch (const InputError& e) {
        const bool safetensors = file_.size() >= 9 && file_[8] == '{';
        throw InputError(file_name_ + (safetensors ? ": " : " is neither a PyTorch zip (ckpt.pt) nor a safetensors file: ") +
                             e.what(),
                         e.field.empty() ? file_name_ : e.field);
      }
      model_only = s.model_only();
    }
    // GPT-2's tokenizer files (open_tokenizer) for a model without a vocabulary of its own: a
    // Hugging Face GPT-2, or a nanoGPT checkpoint without meta.pkl (nanoGPT's own fallback)
    std::shared_ptr<const BpeTokenizer> bpe = std::move(tokenizer_);  // (used once: tokenizer_ is empty now)
    if (bpe && model_only && s.vocab.empty() && !s.bpe) set_bpe_tokenizer(s, std::move(bpe), tokenizer_name_);
    std::string().swap(file_);  // the weights are read: the file's bytes go before the model is made
    const int64_t model = GPT::memory_bytes(s.model, 1, 1, model_only ? ModelUse::infer : ModelUse::train);
    const int64_t left = open_memory_left();
    if (model > left)
      throw InputError("the model of " + file_name_ + " needs " + gib(model) + " but " + gib(left) + " is left of the " +
                           gib(open_memory_max()) + " this page can address: it will not fit",
                       "memory");
    std::unique_ptr<Trainer> t = model_only ? Trainer::open(std::move(s)) : std::make_unique<Trainer>(s, std::string());
    generator_.reset();
    prompt_ids_.clear();
    next_ids_.clear();
    trainer_ = std::move(t);
    Value v = info_value();
    Value o = Value::object();
    o.set("name", file_name_);
    o.set("format", format);
    v.set("opened", std::move(o));
    return v;
  });
}

std::string GptSession::open_tokenizer(const std::string& spec_json, const std::string& first, const std::string& second) {
  return guarded([&] {
    const Value spec = json::parse(spec_json);
    reject_unknown_keys(spec, {"names"}, "tokenizer spec");
    const Value* names = spec.find("names");
    if (!names || !names->is_array() || names->items().empty() || names->items().size() > 2)
      throw InputError("names: one name (tokenizer.json) or two (vocab.json, merges.txt)", "names");
    std::vector<std::string> n;
    for (const Value& x : names->items()) {
      if (!x.is_string() || x.as_string().empty() || x.as_string().size() > 1024) throw InputError("names: each a file's name", "names");
      n.push_back(x.as_string());
    }
    // read and checked now, so a malformed file is named before the model is
    tokenizer_ = n.size() == 1 ? load_tokenizer_json(first, n[0]) : load_bpe_files(first, second, n[0], n[1]);
    tokenizer_name_ = n.size() == 1 ? n[0] : n[0] + " and " + n[1];
    Value v = Value::object();
    v.set("vocab_size", static_cast<long long>(tokenizer_->vocab_size()));
    return v;
  });
}

void GptSession::open_cancel() {
  std::string().swap(file_);
  tokenizer_.reset();
}

}  // namespace ap
