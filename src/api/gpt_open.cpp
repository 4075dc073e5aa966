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
// Memory: open_begin compares what opening will take (the model sized from config.json or the
// safetensors header: 4 bytes per parameter, the KV cache, the activations of one token; and the
// slice) with what is left (in wasm: the 4 GiB a module can address, minus what it uses now);
// open_plan compares the model's exact size (with the slice and the largest tensor gathered whole:
// a Conv1D weight to transpose) with what is left then. Either refuses with both figures, field
// "memory". Peak while opening: the model, the slice (16 MiB from the page), one tensor and the
// headers: about 1.1× an F32 file.
#include <cstring>
#include <new>

#include "formats/bpe_files.h"
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
    const Value spec = json::parse(spec_json);
    reject_unknown_keys(spec, {"name", "size", "config_name", "slice"}, "open spec");
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
    const Value spec = json::parse(spec_json);
    reject_unknown_keys(spec, {"meta_name", "config_name"}, "open spec");
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

void GptOpening::open_cancel() {
  std::string().swap(file_);
  open_.reset();
  tokenizer_.reset();
}

}  // namespace ap
