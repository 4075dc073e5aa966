// gpt_open.cpp — the session's opening part, GptOpening (gpt_opening.h; the calls in gpt_session.h): the
// page's "Open a model". The model file (nanoGPT's ckpt.pt, a Hugging Face model.safetensors, or
// this project's .safetensors) is never held whole: the caller gives its first bytes (open_begin),
// then the ranges the core asks for until it can plan (open_plan: a safetensors header; a zip's end
// records, directory, local headers, data.pkl), and the plan makes the model; then the caller
// streams the weights' ranges through one slice buffer the core made (open_view, open_feed), each
// tensor converted into its place in the model's parameters as it comes (weight_fill.h), and
// open_finish hands over the run. The small files (meta.pkl, config.json) come as bytes beside it.
// This project's own files are read whole (load_checkpoint reads them so), then freed.
//
// A Llama-family model of several files (open_files … open_files_plan, below: a Hugging Face folder's
// config.json, index and safetensors shards, or one GGUF file) is planned the same way, each file a
// PartialSource of its headers; then the caller writes each tensor range's bytes straight into the
// buffer made for it (open_view, open_feed: one buffer per tensor, no slice buffer in between), and
// open_finish makes the model with typed weights (llama_load.h's open_llama, gpt.h's "Typed
// weights") on those very buffers: BF16, F16 and quantized matrices stay as the files hold them and
// the model keeps the buffers (a GGUF's Q and K, put back in Hugging Face's row order, are copies:
// their file bytes are freed). Peak and after: the weights' bytes once, the norms in float32, the
// headers, the activations and KV cache of the model (gpt.h's memory_bytes with the typed weights).
//
// Memory: open_begin compares what opening will take (the model sized from config.json or the
// safetensors header: 4 bytes per parameter, the KV cache, the activations of one token; and the
// slice) with what is left (in wasm: the 4 GiB a module can address, minus what it uses now);
// open_plan compares the model's exact size (with the slice and the largest tensor gathered whole:
// a Conv1D weight to transpose) with what is left then. Either refuses with both figures, field
// "memory". Peak while opening: the model, the slice (16 MiB from the page), one tensor and the
// headers: about 1.1× an F32 file.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <new>

#include "formats/bpe_files.h"
#include "formats/gguf.h"
#include "formats/gguf_tokenizer.h"
#include "formats/gguf_weights.h"
#include "formats/hf_folder.h"
#include "formats/hf_tokenizer_json.h"
#include "formats/llama_load.h"
#include "api/checkpoint.h"
#include "api/gpt_json.h"
#include "api/gpt_session.h"
#include "formats/import.h"
#include "formats/weight_fill.h"
#include "formats/json.h"
#include "formats/safetensors.h"
#include "api/spec.h"

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

// The largest block the module's allocator gives at once: in wasm, Emscripten 3.1.6's sbrk takes a
// signed 32-bit increment, so one allocation of 2 GiB or more fails.
#ifdef __EMSCRIPTEN__
constexpr int64_t kMaxBlockBytes = (int64_t(1) << 31) - (int64_t(1) << 20);
#else
constexpr int64_t kMaxBlockBytes = kMaxOpenBytes;
#endif

// The opening under way (open_begin … open_finish).
struct OpenState {
  std::string name;
  std::unique_ptr<PartialSource> src;  // the bytes read for planning
  std::string format;
  std::unique_ptr<Trainer> run;        // made by open_plan, its parameters filled by open_feed
  std::unique_ptr<WeightFill> fill;
  uint64_t slice = 0;                  // the slice buffer's size (GptOpening::file_)
};

namespace {

// The reads' ranges as the caller reads them: adjacent ones merged.
Value ranges_value(const std::vector<WeightRead>& reads) {
  std::vector<ByteRange> rs;
  for (const WeightRead& r : reads) {
    if (r.size == 0) continue;
    if (!rs.empty() && rs.back().first + rs.back().second == r.at) rs.back().second += r.size;
    else rs.emplace_back(r.at, r.size);
  }
  Value v = Value::array();
  for (const ByteRange& r : rs) {
    Value& x = v.push(Value::array());
    x.push(static_cast<long long>(r.first));
    x.push(static_cast<long long>(r.second));
  }
  return v;
}

std::string refusal(const std::string& name, int64_t need, const std::string& parts, int64_t left) {
  return "opening " + name + " needs about " + gib(need) + " (" + parts + ") but " + gib(left) + " is left of the " +
         gib(open_memory_max()) + " this page can address: it will not fit, so it was not read";
}

}  // namespace

std::string GptOpening::open_begin(const std::string& spec_json, const std::string& head, const std::string& config_json) {
  return guarded([&] {
    open_cancel();
    const Value spec = read_spec(spec_json, {"name", "size", "config_name", "slice"}, "open spec");
    const std::string name = read_string(spec, "name", "model", 1024);
    const int64_t size = read_int(spec, "size", 0, 1, int64_t(1) << 40);
    const std::string config_name = read_string(spec, "config_name", "config.json", 1024);
    const int64_t slice = read_int(spec, "slice", 16 << 20, 1, 256 << 20);
    int64_t model = 0;
    const int64_t declared = header_parameters(head);
    if (declared > 0) model = declared * 4;
    if (!config_json.empty())
      model = std::max(model, GPT::memory_bytes(hf_gpt2_config(config_json, config_name), 1, 1, ModelUse::infer));
    const int64_t read = std::min(size, slice);
    const int64_t need = model + read, left = open_memory_left();
    if (need > left || model > kMaxOpenBytes)
      throw InputError(refusal(name, need, (model ? "the model's " + gib(model) + " and " : std::string()) + "a slice of " +
                                               gib(read) + " to read the file's " + gib(size) + " through",
                               left),
                       "memory");
    auto o = std::make_shared<OpenState>();
    o->name = name;
    o->slice = static_cast<uint64_t>(read);
    o->src = std::make_unique<PartialSource>(static_cast<uint64_t>(size));
    o->src->add(0, head);
    open_ = std::move(o);
    file_name_ = name;
    Value v = Value::object();
    v.set("size", static_cast<long long>(size));
    v.set("need", static_cast<long long>(need));
    v.set("left", static_cast<long long>(left));
    return v;
  });
}

std::string GptOpening::open_piece(double at, std::string bytes) {
  return guarded([&] {
    if (!open_ || open_->run) throw InputError("no file is being planned: call open_begin first", "model");
    if (!(at >= 0 && at < 9.007199254740992e15)) throw InputError("open_piece: a byte offset ≥ 0", "at");
    open_->src->add(static_cast<uint64_t>(at), std::move(bytes));
    return Value::object();
  });
}

std::string GptOpening::open_plan(const std::string& spec_json, const std::string& meta, const std::string& config_json) {
  return guarded([&] {
    const Value spec = read_spec(spec_json, {"meta_name", "config_name"}, "open spec");
    const std::string meta_name = read_string(spec, "meta_name", "meta.pkl", 1024);
    const std::string config_name = read_string(spec, "config_name", "config.json", 1024);
    if (!open_ || open_->run) throw InputError("no file is being planned: call open_begin first", "model");
    OpenState& o = *open_;
    const PartialSource& src = *o.src;
    ImportPlan plan;
    bool model_only = true;
    try {
      if (is_torch_zip(src)) {
        o.format = "nanogpt";
        plan = plan_nanogpt(src, o.name);
        if (!meta.empty()) set_meta_vocab(plan.state, meta, meta_name);
      } else if (is_foreign_safetensors(src)) {
        o.format = "huggingface";
        if (config_json.empty())
          throw InputError(o.name + " is a Hugging Face safetensors file: its config.json (n_layer, n_head, n_embd, "
                           "activation_function, …) is needed beside it",
                           config_name);
        plan = plan_hf_gpt2(src, config_json, o.name, config_name);
      } else {
        o.format = "playground";  // read whole
        const int64_t size = static_cast<int64_t>(src.size()), left = open_memory_left();
        if (src.size() > kMaxCheckpointBytes)
          throw InputError(o.name + " is " + gib(size) + ": this project's files are read whole, up to " +
                               gib(int64_t(kMaxCheckpointBytes)) + " (a foreign model.safetensors or ckpt.pt is read tensor by tensor)",
                           o.name);
        if (2 * size > left)
          throw InputError(refusal(o.name, 2 * size, "the file's " + gib(size) + ", read whole, and its model's as much", left),
                           "memory");
        src.read(0, src.size());  // (NeedBytes: the whole file)
        const std::string whole = o.src->take(0);
        o.src.reset();
        try {
          plan.state = load_checkpoint(whole);
        } catch (const InputError& e) {
          throw InputError(checkpoint_fault(o.name, whole.substr(0, 9), e.what()), e.field.empty() ? o.name : e.field);
        }
        model_only = plan.state.model_only();
      }
    } catch (const NeedBytes& n) {
      Value need = Value::array();
      for (const ByteRange& r : n.ranges) {
        Value& x = need.push(Value::array());
        x.push(static_cast<long long>(r.first));
        x.push(static_cast<long long>(std::min<uint64_t>(r.second, src.size() - r.first)));
      }
      Value v = Value::object();
      v.set("need", std::move(need));
      return v;
    }
    TrainState& s = plan.state;
    // GPT-2's tokenizer files (open_tokenizer) for a model without a vocabulary of its own: a
    // Hugging Face GPT-2, or a nanoGPT checkpoint without meta.pkl (nanoGPT's own fallback)
    std::shared_ptr<const BpeTokenizer> bpe = std::move(tokenizer_);  // (used once: tokenizer_ is empty now)
    if (bpe && model_only && s.vocab.empty() && !s.bpe) set_bpe_tokenizer(s, std::move(bpe), tokenizer_name_);
    o.src.reset();  // the headers are read
    uint64_t staged = 0;  // the largest read gathered whole
    for (const WeightRead& r : plan.reads)
      if (r.transpose || r.stride != row_major(r.shape)) staged = std::max(staged, r.size);
    const uint64_t slice = plan.reads.empty() ? 0 : o.slice;
    const int64_t model = GPT::memory_bytes(s.model, 1, 1, model_only ? ModelUse::infer : ModelUse::train);
    const int64_t need = model + static_cast<int64_t>(slice + staged), left = open_memory_left();
    if (need > left)
      throw InputError(refusal(o.name, need, "the model's " + gib(model) + ", a slice of " + gib(int64_t(slice)) +
                                                 " and one tensor's " + gib(int64_t(staged)),
                               left),
                       "memory");
    const int64_t block = s.model.num_parameters() * 4;  // the parameters: one allocation
    if (block > kMaxBlockBytes)
      throw InputError("the parameters of " + o.name + " need " + gib(block) + " in one block, but this module's " +
                           "allocator gives at most " + gib(kMaxBlockBytes) + " at once (Emscripten's sbrk takes a " +
                           "signed 32-bit step): it will not open here; natively, gpt opens it",
                       "memory");
    try {
      o.run = model_only ? Trainer::open(std::move(s)) : std::make_unique<Trainer>(s, std::string());
    } catch (const std::bad_alloc&) {
      throw InputError("could not set aside " + gib(model) + " for the model of " + o.name +
                           " (the browser refused the memory)",
                       "memory");
    }
    o.fill = std::make_unique<WeightFill>(std::move(plan.reads), o.run->model().params(), o.name);
    try {
      file_.resize(static_cast<size_t>(std::min<uint64_t>(slice, o.fill->total())));
    } catch (const std::exception&) {
      open_cancel();
      throw InputError("could not set aside " + gib(int64_t(slice)) + " to read " + file_name_ +
                           " through (the browser refused the memory)",
                       "memory");
    }
    Value v = Value::object();
    v.set("read", ranges_value(o.fill->reads()));
    v.set("bytes", static_cast<long long>(o.fill->total()));
    return v;
  });
}

std::string GptOpening::open_feed(double n) {
  if (files_) return files_feed(n);
  return guarded([&] {
    if (!open_ || !open_->fill) throw InputError("no file is being read: call open_plan first", "model");
    if (!(n >= 0 && n <= static_cast<double>(file_.size())))
      throw InputError("open_feed: at most the slice's " + std::to_string(file_.size()) + " bytes", "n");
    open_->fill->feed(file_.data(), static_cast<uint64_t>(n));
    Value v = Value::object();
    v.set("left", static_cast<long long>(open_->fill->remaining()));
    return v;
  });
}

std::string GptOpening::open_finish() {
  if (files_) return files_finish();
  return guarded([&] {
    if (!open_ || !open_->run) throw InputError("no file is being opened: call open_begin and open_plan first", "model");
    open_->fill->finish();
    std::unique_ptr<Trainer> t = std::move(open_->run);
    const std::string format = open_->format;
    open_cancel();
    s_.predict_.forget();
    s_.trainer_ = std::move(t);
    s_.share_threads();
    Value v = s_.info_value();
    Value o = Value::object();
    o.set("name", file_name_);
    o.set("format", format);
    v.set("opened", std::move(o));
    return v;
  });
}
std::string GptOpening::open_tokenizer(const std::string& spec_json, const std::string& first, const std::string& second) {
  return guarded([&] {
    const Value spec = read_spec(spec_json, {"names"}, "tokenizer spec");
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

void GptOpening::open_cancel() {
  std::string().swap(file_);
  open_.reset();
  tokenizer_.reset();
  files_.reset();
  feed_at_ = nullptr;
  feed_left_ = 0;
}

// ---- a Llama-family model of several files: a Hugging Face folder, or one GGUF file ----

struct FilesOpening {
  struct File {
    std::string name;
    uint64_t size = 0;
    std::unique_ptr<PartialSource> src;  // its headers, as read
  };
  struct Range {
    size_t file = 0;
    uint64_t at = 0;
    std::string bytes;  // the weights' bytes, as fed
  };
  std::string name, format;  // what messages call the model; "hf-folder" or "gguf"
  std::vector<File> files;
  HfConfig config;
  bool has_index = false;
  HfIndex index;
  std::string tokenizer_json, tokenizer_config;
  std::shared_ptr<const HfBpeTokenizer> tokenizer;
  std::string tokenizer_note;  // why a GGUF's tokenizer was not read
  // open_files_plan's
  bool planned = false;
  GPTConfig model;
  std::vector<HfTensor> tensors;  // a folder's
  gguf::File gguf;                // a GGUF's header
  std::vector<Range> reads;
  size_t at = 0;  // the range being fed, and how far
  uint64_t filled = 0, total = 0;
};

namespace {

bool ends_with_ci(const std::string& s, const char* tail) {
  const size_t n = std::strlen(tail);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - n + i])) != tail[i]) return false;
  return true;
}

quant::Type dtype_type(const std::string& dtype) {
  return dtype == "F16" ? quant::Type::F16 : dtype == "BF16" ? quant::Type::BF16 : quant::Type::F32;
}

// A tensor's range (file, at, n): one buffer each, so that each tensor's bytes start aligned for
// the typed products (quant.h) and the model can use them where they are.
void add_range(std::vector<FilesOpening::Range>& out, std::vector<uint64_t>& sizes, size_t file, uint64_t at, uint64_t n) {
  out.push_back({file, at, std::string()});
  sizes.push_back(n);
}

// The memory an opened Llama-family model takes: its weights as the files hold them (`bytes`, the
// tensors' bytes: held once, in the buffers they were read into), the norms and biases in float32
// besides, the activations of one token and the KV cache (gpt.h's memory_bytes).
int64_t files_model_bytes(const GPTConfig& g, uint64_t bytes) {
  return GPT::memory_bytes(g, 1, 1, ModelUse::infer, GPT::typed_weight_bytes(g, static_cast<int64_t>(bytes)));
}

// The module's memory grown once to hold `bytes` past the heap's break (wasm; natively nothing),
// which the weights' buffers then take without growing it again. Grown a buffer at a time, the
// memory would overshoot its last growth by up to a fifth (Emscripten's geometric growth, up to
// 96 MiB) and end at up to 1.2× what it holds.
void reserve_heap(uint64_t bytes) {
#ifdef __EMSCRIPTEN__
  const uint64_t want = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(sbrk(0))) + bytes;
  if (want > emscripten_get_heap_size() && want < static_cast<uint64_t>(open_memory_max()))
    emscripten_resize_heap(static_cast<size_t>(want));
#else
  (void)bytes;
#endif
}

// What keeps the weights' buffers alive in the opened model (gpt.h's TypedOwner).
struct FilesBytes {
  std::vector<FilesOpening::Range> reads;  // a folder's, one per tensor
  std::unique_ptr<PartialSource> data;     // a GGUF's, one part per tensor
  std::deque<std::string> owned;           // what the GGUF's reader made (Q and K rows reordered)
};

}  // namespace

std::string GptOpening::open_files(const std::string& spec_json, const std::string& config, const std::string& index,
                                   const std::string& tokenizer, const std::string& tokenizer_config) {
  return guarded([&] {
    open_cancel();
    const Value spec = json::parse(spec_json);
    reject_unknown_keys(spec, {"name", "files"}, "open spec");
    auto o = std::make_shared<FilesOpening>();
    o->name = read_string(spec, "name", "model", 1024);
    const Value* files = spec.find("files");
    if (!files || !files->is_array() || files->items().size() > 4096)
      throw InputError("files: a list of {\"name\", \"size\"}, the model's .safetensors files or one .gguf", "files");
    std::map<std::string, uint64_t> given;
    for (const Value& f : files->items()) {
      if (!f.is_object()) throw InputError("files: each {\"name\", \"size\"}", "files");
      reject_unknown_keys(f, {"name", "size"}, "a file");
      const std::string n = read_string(f, "name", "", 1024);
      if (n.empty()) throw InputError("files: each file has a name", "files");
      given[n] = static_cast<uint64_t>(read_int(f, "size", 0, 0, int64_t(1) << 42));
    }
    std::vector<std::string> ggufs, tensors_files;
    for (const auto& [n, size] : given) (ends_with_ci(n, ".gguf") ? ggufs : tensors_files).push_back(n);
    if (!ggufs.empty()) {
      if (ggufs.size() + tensors_files.size() > 1)
        throw InputError("a GGUF file is a whole model: open " + ggufs[0] + " alone (given with " +
                             (ggufs.size() > 1 ? ggufs[1] : tensors_files[0]) + ")",
                         ggufs[0]);
      o->format = "gguf";
      o->files.push_back({ggufs[0], given[ggufs[0]], nullptr});
    } else {
      o->format = "hf-folder";
      if (config.empty())
        throw InputError("no config.json among the files: a Hugging Face folder's config.json says the model's shape "
                         "(layers, heads, widths); give it with the .safetensors files",
                         "config.json");
      o->config = read_hf_config(config, "config.json");
      std::vector<std::string> want;
      if (!index.empty()) {
        o->has_index = true;
        o->index = read_hf_index(index, kHfIndexFile);
        for (const std::string& f : o->index.files)
          if (!given.count(f))
            throw InputError(f + " is listed in " + kHfIndexFile + " but was not given (" +
                                 std::to_string(o->index.files.size()) + " shards: give them all)",
                             f);
        want = o->index.files;
      } else if (given.count(kHfSingleFile)) {
        want = {kHfSingleFile};
      } else {
        throw InputError(tensors_files.empty()
                             ? std::string("no weights among the files: give ") + kHfSingleFile + ", or " + kHfIndexFile +
                                   " with its shards, beside config.json"
                             : std::string("no ") + kHfIndexFile + " among the files: it says which of " +
                                   tensors_files[0] + ", … holds each tensor; give it with the shards",
                         tensors_files.empty() ? kHfSingleFile : kHfIndexFile);
      }
      for (const std::string& f : want) o->files.push_back({f, given[f], nullptr});
      // the memory, from config.json alone, before anything is read
      const GPTConfig g = llama_gpt_config(o->config);
      uint64_t bytes = 0;
      for (const auto& f : o->files) bytes += f.size;
      // the weights: the files' bytes, and at least 2 bytes a weight (BF16, F16: a folder's smallest)
      const int64_t least = 2 * (g.num_parameters() - GPT::typed_weight_bytes(g, 0) / 4);
      const int64_t weights = std::max(static_cast<int64_t>(bytes), least);
      const int64_t need = files_model_bytes(g, static_cast<uint64_t>(weights)), left = open_memory_left();
      const std::string held = weights > static_cast<int64_t>(bytes)
                                   ? gib(weights) + " at 2 bytes a weight (config.json's " + std::to_string(g.num_parameters()) + " parameters)"
                                   : gib(weights) + " as the files hold them, kept so,";
      if (need > left || need > kMaxOpenBytes)
        throw InputError(refusal(o->name, need, "the weights' " + held + " and " + gib(need - weights) +
                                                    " for the norms in float32, the activations and the KV cache",
                                 left),
                         "memory");
    }
    for (auto& f : o->files) f.src = std::make_unique<PartialSource>(f.size);
    if (!tokenizer.empty()) {  // read and checked now: a malformed file is named before the weights are read
      o->tokenizer_json = tokenizer;
      o->tokenizer_config = tokenizer_config;
      o->tokenizer = load_hf_tokenizer(tokenizer, tokenizer_config).tokenizer;
    }
    files_ = o;
    Value v = Value::object();
    v.set("format", o->format);
    Value names = Value::array();
    for (const auto& f : o->files) names.push(f.name);
    v.set("files", std::move(names));
    return v;
  });
}

std::string GptOpening::open_files_piece(double file, double at, std::string bytes) {
  return guarded([&] {
    if (!files_ || files_->planned) throw InputError("no files are being planned: call open_files first", "model");
    if (!(file >= 0 && file < static_cast<double>(files_->files.size())))
      throw InputError("open_files_piece: a file's place in open_files' list", "file");
    if (!(at >= 0 && at < 9.007199254740992e15)) throw InputError("open_files_piece: a byte offset ≥ 0", "at");
    files_->files[static_cast<size_t>(file)].src->add(static_cast<uint64_t>(at), std::move(bytes));
    return Value::object();
  });
}

std::string GptOpening::open_files_plan() {
  return guarded([&] {
    if (!files_ || files_->planned) throw InputError("no files are being planned: call open_files first", "model");
    FilesOpening& o = *files_;
    Value need = Value::array();
    auto needs = [&](size_t i, const NeedBytes& n) {
      for (const ByteRange& r : n.ranges) {
        Value& x = need.push(Value::array());
        x.push(static_cast<long long>(i));
        x.push(static_cast<long long>(r.first));
        x.push(static_cast<long long>(std::min<uint64_t>(r.second, o.files[i].size - r.first)));
      }
    };
    std::vector<FilesOpening::Range> reads;
    std::vector<uint64_t> sizes;
    if (o.format == "gguf") {
      FilesOpening::File& f = o.files[0];
      try {
        o.gguf = gguf::read_file(*f.src, f.name);
        o.config = gguf_hf_config(*f.src, o.gguf, f.name);  // (rope_freqs.weight's bytes, if it has them)
      } catch (const NeedBytes& n) {
        needs(0, n);
      }
      if (!need.items().empty()) {
        Value v = Value::object();
        v.set("need", std::move(need));
        return v;
      }
      std::vector<const gguf::TensorInfo*> ts;
      for (const gguf::TensorInfo& t : o.gguf.tensors) ts.push_back(&t);
      std::sort(ts.begin(), ts.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
      for (const gguf::TensorInfo* t : ts) add_range(reads, sizes, 0, o.gguf.data_start + t->offset, t->bytes);
      try {  // its tokenizer; without one the model still runs on token ids
        o.tokenizer = load_gguf_tokenizer(o.gguf, f.name).tokenizer;
      } catch (const InputError& e) {
        o.tokenizer_note = e.what();
      }
    } else {
      std::vector<HfShard> shards;
      for (size_t i = 0; i < o.files.size(); ++i) {
        try {
          shards.push_back(read_hf_shard(*o.files[i].src, o.files[i].name));
        } catch (const NeedBytes& n) {
          needs(i, n);
        }
      }
      if (!need.items().empty()) {
        Value v = Value::object();
        v.set("need", std::move(need));
        return v;
      }
      o.tensors = plan_hf_tensors(o.config, shards, o.has_index ? &o.index : nullptr);
      std::map<std::string, size_t> place;
      for (size_t i = 0; i < o.files.size(); ++i) place[o.files[i].name] = i;
      std::vector<const HfTensor*> ts;
      for (const HfTensor& t : o.tensors) ts.push_back(&t);
      std::sort(ts.begin(), ts.end(), [&](auto* a, auto* b) {
        return std::make_pair(place[a->file], a->offset) < std::make_pair(place[b->file], b->offset);
      });
      for (const HfTensor* t : ts) add_range(reads, sizes, place[t->file], t->offset, t->bytes);
    }
    o.model = llama_gpt_config(o.config);
    if (o.tokenizer) {
      try {
        Tokenizer::from_hf(o.tokenizer, o.model.vocab_size);  // fits the model
      } catch (const InputError& e) {
        throw InputError(std::string(o.format == "gguf" ? o.files[0].name : "tokenizer.json") + ": " + e.what(),
                         o.format == "gguf" ? o.files[0].name : "tokenizer.json");
      }
    }
    uint64_t total = 0, largest = 0;
    for (uint64_t n : sizes) total += n, largest = std::max(largest, n);
    const int64_t need_bytes = files_model_bytes(o.model, total), left = open_memory_left();
    if (need_bytes > left || need_bytes > kMaxOpenBytes)
      throw InputError(refusal(o.name, need_bytes, "the weights' " + gib(int64_t(total)) + " as the files hold them, kept so, " +
                                                       "and " + gib(need_bytes - int64_t(total)) + " for the norms in " +
                                                       "float32, the activations and the KV cache",
                               left),
                       "memory");
    if (static_cast<int64_t>(largest) > kMaxBlockBytes)
      throw InputError("a tensor of " + o.name + " takes " + gib(int64_t(largest)) + " in one block, but this module's " +
                           "allocator gives at most " + gib(kMaxBlockBytes) + " at once: it will not open here; natively, gpt opens it",
                       "memory");
    for (auto& f : o.files) f.src.reset();  // the headers are read
    // the weights' buffers, the norms in float32 and a little room beside (RoPE's tables, one
    // token's activations), grown at once
    reserve_heap(total + static_cast<uint64_t>(GPT::typed_weight_bytes(o.model, 0)) + (uint64_t(8) << 20));
    try {
      for (size_t i = 0; i < reads.size(); ++i) reads[i].bytes.resize(static_cast<size_t>(sizes[i]));
    } catch (const std::exception&) {
      open_cancel();
      throw InputError("could not set aside " + gib(int64_t(total)) + " for the weights of " + o.name +
                           " (the browser refused the memory)",
                       "memory");
    }
    o.reads = std::move(reads);
    o.planned = true;
    o.total = total;
    feed_at_ = o.reads.empty() ? nullptr : &o.reads[0].bytes[0];
    feed_left_ = o.reads.empty() ? 0 : o.reads[0].bytes.size();
    Value read = Value::array();
    for (const auto& r : o.reads) {
      Value& x = read.push(Value::array());
      x.push(static_cast<long long>(r.file));
      x.push(static_cast<long long>(r.at));
      x.push(static_cast<long long>(r.bytes.size()));
    }
    Value v = Value::object();
    v.set("read", std::move(read));
    v.set("bytes", static_cast<long long>(total));
    return v;
  });
}

std::string GptOpening::files_feed(double n) {
  return guarded([&] {
    FilesOpening& o = *files_;
    if (!o.planned || o.at >= o.reads.size())
      throw InputError(o.planned ? "every range is fed: call open_finish" : "no files are being read: call open_files_plan first",
                       "model");
    if (!(n >= 0 && n <= static_cast<double>(feed_left_)))
      throw InputError("open_feed: at most the " + std::to_string(feed_left_) + " bytes left of this range", "n");
    o.filled += static_cast<uint64_t>(n);
    const std::string& r = o.reads[o.at].bytes;
    if (o.filled == r.size()) {
      ++o.at;
      o.filled = 0;
    }
    if (o.at < o.reads.size()) {
      std::string& next = o.reads[o.at].bytes;
      feed_at_ = &next[0] + o.filled;
      feed_left_ = next.size() - o.filled;
    } else {
      feed_at_ = nullptr;
      feed_left_ = 0;
    }
    uint64_t left = 0;
    for (size_t i = o.at; i < o.reads.size(); ++i) left += o.reads[i].bytes.size();
    Value v = Value::object();
    v.set("left", static_cast<long long>(left - o.filled));
    return v;
  });
}

std::string GptOpening::files_finish() {
  return guarded([&] {
    FilesOpening& o = *files_;
    if (!o.planned) throw InputError("no files are being opened: call open_files and open_files_plan first", "model");
    if (o.at < o.reads.size())
      throw InputError(o.files[o.reads[o.at].file].name + ": byte " + std::to_string(o.reads[o.at].at + o.filled) +
                           " and on were not given (open_feed the ranges open_files_plan asked for)",
                       o.files[o.reads[o.at].file].name);
    LlamaWeights w;
    auto bytes = std::make_shared<FilesBytes>();  // the buffers the model keeps
    if (o.format == "gguf") {
      bytes->data = std::make_unique<PartialSource>(o.files[0].size);
      std::vector<uint64_t> ats;
      for (auto& r : o.reads) {
        ats.push_back(r.at);
        bytes->data->add(r.at, std::move(r.bytes));
      }
      w = read_gguf_weights(*bytes->data, o.gguf, o.files[0].name);
      std::set<const char*> used;  // a tensor the reader copied (Q, K reordered): its file bytes freed
      for (const LlamaTensor& t : w.tensors) used.insert(t.data);
      for (uint64_t at : ats)
        if (!used.count(bytes->data->read(at, 0))) bytes->data->take(at);
    } else {
      w.config = o.config;
      for (const HfTensor& t : o.tensors) {
        const char* p = nullptr;
        for (const auto& r : o.reads)
          if (o.files[r.file].name == t.file && r.at <= t.offset && t.offset + t.bytes <= r.at + r.bytes.size())
            p = r.bytes.data() + (t.offset - r.at);
        w.tensors.push_back({t.name, t.shape, dtype_type(t.dtype), p, t.bytes});
      }
    }
    TrainState s;
    s.model = o.model;
    s.source = (o.format == "gguf" ? "llama.cpp's " + w.config.model_type + " GGUF " : "Hugging Face's " + w.config.model_type + " folder ") + o.name;
    if (o.tokenizer) {
      s.hf_tokenizer = o.tokenizer;
      s.hf_tokenizer_json = o.tokenizer_json;
      s.hf_tokenizer_config = o.tokenizer_config;
    }
    std::unique_ptr<Trainer> t;
    try {
      // the model on the buffers read (w points into them): they move to the owner the model keeps
      bytes->owned = std::move(w.owned);
      if (o.format != "gguf") bytes->reads = std::move(o.reads);
      int64_t held = bytes->data ? static_cast<int64_t>(bytes->data->held()) : 0;
      for (const auto& r : bytes->reads) held += static_cast<int64_t>(r.bytes.size());
      for (const std::string& b : bytes->owned) held += static_cast<int64_t>(b.size());
      t = Trainer::open(std::move(s), open_llama(w, o.name, TypedOwner{bytes, held}));
    } catch (const std::bad_alloc&) {
      throw InputError("could not set aside the model of " + o.name + " (the browser refused the memory)", "memory");
    }
    const std::string format = o.format, name = o.name, note = o.tokenizer_note, type = w.config.model_type;
    const bool tokenizer = o.tokenizer != nullptr;
    const int64_t weight_bytes = t->model().weight_bytes();
    std::set<std::string> types;  // the matrices' storage types, e.g. BF16, or Q8_0 and F32
    for (const auto& [param, ty] : t->model().weight_types()) types.insert(ty);
    w = LlamaWeights();
    bytes.reset();
    open_cancel();  // what the opening held beside the model freed
    s_.predict_.forget();
    s_.trainer_ = std::move(t);
    Value v = s_.info_value();
    Value op = Value::object();
    op.set("name", name);
    op.set("format", format);
    op.set("model_type", type);
    if (!tokenizer && !note.empty()) op.set("tokenizer_note", note);
    op.set("weight_bytes", static_cast<long long>(weight_bytes));
    Value tv = Value::array();
    for (const std::string& ty : types) tv.push(ty);
    op.set("weight_types", std::move(tv));
    v.set("opened", std::move(op));
    return v;
  });
}

}  // namespace ap
