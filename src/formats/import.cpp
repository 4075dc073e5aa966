// import.cpp — nanoGPT's ckpt.pt and meta.pkl into a model-only TrainState (import.h).
#include "formats/import.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "core/base/number_text.h"
#include "core/tokenizers/tokenizer.h"
#include "formats/checkpoint_format.h"
#include "formats/json.h"
#include "formats/pickle.h"
#include "formats/safetensors.h"
#include "formats/weight_fill.h"
#include "formats/zip.h"

namespace ap {

namespace {

using pickle::Kind;
using pickle::Object;
using pickle::Pickle;

constexpr const char* kCompiledPrefix = "_orig_mod.";

[[noreturn]] void fail(const std::string& name, const std::string& message) {
  throw InputError(name + ": " + message, name);
}

template <class Int>
std::string shape_text(const std::vector<Int>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

std::vector<int64_t> wide(const Shape& s) { return std::vector<int64_t>(s.begin(), s.end()); }

// Where a model came from, for its source line: the file's folder and name
// (out-shakespeare-char/ckpt.pt), not the whole path.
std::string short_name(const std::string& path) {
  size_t cut = path.rfind('/');
  if (cut != std::string::npos && cut > 0) cut = path.rfind('/', cut - 1);
  return cut == std::string::npos ? path : path.substr(cut + 1);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// What the checkpoint's archive holds: its directory and pickle, and the reads of its tensors.
struct Archive {
  const ByteSource& bytes;
  std::string name, prefix;  // the file's name; the records' folder ("archive", or the file's stem)
  zip::Archive zip;
  Pickle pkl;

  // The read of tensor t (its values go to the parameters at dst): its storage record, whole (for
  // its CRC-32), with t's view of it checked against the record.
  WeightRead read(const Object& t, const std::string& tensor, int64_t dst) {
    const Object& s = pkl.at(t.storage);
    if (s.s != "float32" && s.s != "bfloat16" && s.s != "float16")
      fail(name, "tensor " + tensor + " is " + s.s + ": a model's weights are read from float32, bfloat16 or float16");
    const int size = pickle::dtype_size(s.s);
    // Sizes, strides and the storage within what a file can hold (no overflow below).
    const int64_t big = int64_t(1) << 40;
    if (static_cast<uint64_t>(s.i) > bytes.size() || t.offset > big)
      fail(name, "tensor " + tensor + " claims a storage of " + std::to_string(s.i) + " elements at offset " +
                     std::to_string(t.offset) + ", more than the file holds");
    int64_t numel = 1, last = t.offset;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.shape[d] > big || t.stride[d] > big || (t.shape[d] && numel > big / t.shape[d]) ||
          (t.shape[d] > 1 && t.stride[d] > 0 && t.shape[d] - 1 > big / t.stride[d]))
        fail(name, "tensor " + tensor + " has an absurd size " + shape_text(t.shape) + " or stride");
      numel *= t.shape[d];
      if (t.shape[d]) last += (t.shape[d] - 1) * t.stride[d];
    }
    if (numel > 0 && last >= s.i)
      fail(name, "tensor " + tensor + " " + shape_text(t.shape) + " reaches element " + std::to_string(last) +
                     " of a storage of " + std::to_string(s.i));
    const std::string rec = prefix + "/data/" + s.key;
    const zip::Entry* e = zip.find(rec);
    if (!e) fail(name, "there is no record " + rec + " for the storage of tensor " + tensor + " (a damaged file)");
    const uint64_t need = static_cast<uint64_t>(s.i) * static_cast<uint64_t>(size);
    if (e->size < need)
      fail(name, "record " + rec + " holds " + std::to_string(e->size) + " bytes, but tensor " + tensor + " needs " +
                     std::to_string(need));
    WeightRead r;
    r.tensor = tensor;
    r.record = rec;
    r.crc = e->crc;
    r.at = e->offset;
    r.size = e->size;
    r.dtype = s.s;
    r.offset = t.offset;
    r.shape = t.shape;
    r.stride = t.stride;
    r.dst = dst;
    return r;
  }
};

const Object& need_key(const Pickle& p, const Object& dict, const std::string& key, const std::string& name,
                       const std::string& where) {
  const Object* v = p.get(dict, key);
  if (!v) fail(name, where + " has no \"" + key + "\"");
  return *v;
}

int64_t int_arg(const Pickle& p, const Object& args, const char* key, const std::string& name) {
  const Object& v = need_key(p, args, key, name, "model_args");
  if (v.kind != Kind::integer || v.i < 1 || v.i > (int64_t(1) << 30))
    fail(name, std::string("model_args[\"") + key + "\"] is " + pickle::kind_name(v.kind) +
                   (v.kind == Kind::integer ? " " + std::to_string(v.i) : "") + ", not a count ≥ 1");
  return v.i;
}

GPTConfig config_of(const Pickle& p, const Object& args, const std::string& name) {
  if (args.kind != Kind::dict) fail(name, std::string("model_args is ") + pickle::kind_name(args.kind) + ", not a dict");
  GPTConfig c;
  c.n_layer = static_cast<int>(int_arg(p, args, "n_layer", name));
  c.n_head = static_cast<int>(int_arg(p, args, "n_head", name));
  c.n_embd = static_cast<int>(int_arg(p, args, "n_embd", name));
  c.block_size = static_cast<int>(int_arg(p, args, "block_size", name));
  c.vocab_size = static_cast<int>(int_arg(p, args, "vocab_size", name));
  const Object* bias = p.get(args, "bias");
  if (bias && bias->kind != Kind::boolean) fail(name, "model_args[\"bias\"] is not True or False");
  c.bias = bias ? bias->i != 0 : true;
  c.activation = Activation::gelu;  // nanoGPT's nn.GELU(): exact
  c.ln_eps = 1e-5f;
  c.mask = MaskVariant::strict;
  c.stable_softmax = true;
  try {
    c.validate();
  } catch (const InputError& e) {
    fail(name, std::string("model_args: ") + e.what());
  }
  return c;
}

std::string args_text(const GPTConfig& c) {
  return "n_layer " + std::to_string(c.n_layer) + ", n_embd " + std::to_string(c.n_embd) + ", block_size " +
         std::to_string(c.block_size) + ", vocab_size " + std::to_string(c.vocab_size) +
         (c.bias ? ", bias True" : ", bias False");
}

// The state dict's tensors by nanoGPT's name (without _orig_mod.), the mask buffers left out.
std::map<std::string, const Object*> tensors_of(const Pickle& p, const Object& sd, const std::string& name) {
  if (sd.kind != Kind::dict) fail(name, std::string("\"model\" is ") + pickle::kind_name(sd.kind) + ", not a state dict");
  std::map<std::string, const Object*> out;
  for (size_t i = 0; i + 1 < sd.items.size(); i += 2) {
    const Object& k = p.at(sd.items[i]);
    const Object& v = p.at(sd.items[i + 1]);
    if (k.kind != Kind::string) fail(name, "the state dict has a key that is " + std::string(pickle::kind_name(k.kind)));
    std::string key = k.s;
    if (key.rfind(kCompiledPrefix, 0) == 0) key = key.substr(std::strlen(kCompiledPrefix));
    if (v.kind != Kind::tensor)
      fail(name, "state dict entry " + k.s + " is " + pickle::kind_name(v.kind) + ", not a tensor");
    if (ends_with(key, ".attn.bias") || ends_with(key, ".attn.masked_bias")) continue;  // the causal mask buffer
    out[key] = &v;
  }
  return out;
}

}  // namespace

bool is_torch_zip(const std::string& bytes) { return zip::looks_like_zip(bytes); }
bool is_torch_zip(const ByteSource& bytes) { return zip::looks_like_zip(bytes); }

ImportPlan plan_nanogpt(const ByteSource& bytes, const std::string& name) {
  Archive a{bytes, name, "", zip::read_archive(bytes, name), {}};
  const zip::Entry* pkl = nullptr;
  for (const zip::Entry& e : a.zip.entries) {
    const size_t slash = e.name.find('/');
    if (slash != std::string::npos && e.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      pkl = &e;
      a.prefix = e.name.substr(0, slash);
      break;
    }
  }
  if (!pkl) fail(name, "the zip has no data.pkl record: not a file torch.save wrote");
  const zip::Entry* order = a.zip.find(a.prefix + "/byteorder");
  std::vector<ByteRange> small{{pkl->offset, pkl->size}};
  if (order) small.emplace_back(order->offset, order->size);
  bytes.want(small);  // (both in one round for a partial source)
  if (order) {
    const std::string v(zip::entry_data(bytes, *order, name), static_cast<size_t>(order->size));
    if (v != "little") fail(name, "the record " + order->name + " says " + v + "-endian: only little-endian is read");
  }
  a.pkl = pickle::load(zip::entry_data(bytes, *pkl, name), static_cast<size_t>(pkl->size), true, name + " (" + pkl->name + ")");
  const Pickle& p = a.pkl;
  const Object& top = p.top();
  if (top.kind != Kind::dict) fail(name, std::string("the pickle holds ") + pickle::kind_name(top.kind) + ", not a dict");
  if (!p.get(top, "model"))
    fail(name, "there is no \"model\": not a checkpoint of nanoGPT's train.py (a bare state dict has no model_args, "
               "which give the config)");
  ImportPlan out;
  TrainState& s = out.state;
  s.model = config_of(p, need_key(p, top, "model_args", name, "the checkpoint"), name);
  std::map<std::string, const Object*> tensors = tensors_of(p, *p.get(top, "model"), name);
  // Before allocating: the weights must fit in the file (2 bytes each at least, bfloat16's).
  if (static_cast<uint64_t>(s.model.num_parameters()) * 2 > bytes.size())
    fail(name, "model_args (" + args_text(s.model) + ") describe " + std::to_string(s.model.num_parameters()) +
                   " parameters, more than a file of " + std::to_string(bytes.size()) + " bytes holds");
  const Object* wte = nullptr;
  for (const ParamTensor& t : param_tensors(s.model)) {
    const auto it = tensors.find(t.name);
    if (it == tensors.end())
      fail(name, "the state dict has no tensor " + t.name + " " + shape_text(t.shape) + ", which model_args (" +
                     args_text(s.model) + ") need");
    if (it->second->shape != wide(t.shape))
      fail(name, "tensor " + t.name + " has shape " + shape_text(it->second->shape) + " but model_args (" +
                     args_text(s.model) + ") give " + shape_text(t.shape));
    out.reads.push_back(a.read(*it->second, t.name, t.offset));
    if (!wte) wte = it->second;  // the first tensor: transformer.wte.weight
    tensors.erase(it);
  }
  const auto head = tensors.find("lm_head.weight");
  if (head != tensors.end()) {
    const ParamTensor w = param_tensors(s.model).front();
    const Object& h = *head->second;
    if (h.shape != wide(w.shape))
      fail(name, "tensor lm_head.weight has shape " + shape_text(h.shape) + ", not wte's " + shape_text(w.shape));
    // nanoGPT ties them: one storage, one view (nothing to compare); else its values are compared
    if (!(p.at(h.storage).key == p.at(wte->storage).key && h.offset == wte->offset && h.stride == wte->stride)) {
      WeightRead r = a.read(h, "lm_head.weight", w.offset);
      r.differs = "lm_head.weight differs from transformer.wte.weight: the playground's GPT ties its output head to "
                  "the token embedding, as nanoGPT does";
      out.reads.push_back(std::move(r));
    }
    tensors.erase(head);
  }
  if (!tensors.empty())
    fail(name, "the state dict holds a tensor " + tensors.begin()->first +
                   " that nanoGPT's GPT (with these model_args: " + args_text(s.model) + ") does not have");
  s.source = "nanoGPT " + short_name(name);
  if (const Object* iter = p.get(top, "iter_num"); iter && iter->kind == Kind::integer)
    s.source += ", iter " + std::to_string(iter->i);
  if (const Object* config = p.get(top, "config"); config && config->kind == Kind::dict)
    if (const Object* d = p.get(*config, "dataset"); d && d->kind == Kind::string) out.dataset = d->s;
  return out;
}

void fill_weights(TrainState& s, std::vector<WeightRead> reads, const std::string& bytes, const std::string& name) {
  fill_weights(s, std::move(reads), StringSource(bytes), name);
}

void fill_weights(TrainState& s, std::vector<WeightRead> reads, const ByteSource& bytes, const std::string& name) {
  constexpr uint64_t kSlice = uint64_t(16) << 20;  // a file read in slices: one of them held at a time
  s.params.assign(static_cast<size_t>(s.model.num_parameters()), 0.0f);
  WeightFill fill(std::move(reads), s.params.data(), name);
  for (const WeightRead& r : fill.reads())
    for (uint64_t off = 0; off < r.size; off += kSlice) {
      const uint64_t n = std::min(kSlice, r.size - off);
      fill.feed(bytes.read(r.at + off, n), n);
    }
  fill.finish();
}

NanoGptImport import_nanogpt(const std::string& bytes, const std::string& name) {
  ImportPlan plan = plan_nanogpt(StringSource(bytes), name);
  fill_weights(plan.state, std::move(plan.reads), bytes, name);
  return {std::move(plan.state), std::move(plan.dataset)};
}

void set_meta_vocab(TrainState& s, const std::string& bytes, const std::string& name) {
  const Pickle p = pickle::load(bytes.data(), bytes.size(), false, name);
  const Object& top = p.top();
  if (top.kind != Kind::dict) fail(name, std::string("the pickle holds ") + pickle::kind_name(top.kind) + ", not a dict");
  const Object& itos = need_key(p, top, "itos", name, "meta.pkl");
  if (itos.kind != Kind::dict) fail(name, "\"itos\" is not a dict");
  std::vector<std::string> pieces(static_cast<size_t>(s.model.vocab_size));
  std::vector<bool> seen(pieces.size(), false);
  size_t count = 0;
  for (size_t i = 0; i + 1 < itos.items.size(); i += 2) {
    const Object& k = p.at(itos.items[i]);
    const Object& v = p.at(itos.items[i + 1]);
    if (k.kind != Kind::integer || v.kind != Kind::string)
      fail(name, "\"itos\" must map token ids to strings; it holds " + std::string(pickle::kind_name(k.kind)) + " → " +
                     pickle::kind_name(v.kind));
    if (k.i < 0 || k.i >= s.model.vocab_size)
      fail(name, "\"itos\" has the id " + std::to_string(k.i) + ", outside the model's vocab_size " +
                     std::to_string(s.model.vocab_size));
    if (!seen[static_cast<size_t>(k.i)]) ++count;
    seen[static_cast<size_t>(k.i)] = true;
    pieces[static_cast<size_t>(k.i)] = v.s;
  }
  if (count != pieces.size())
    fail(name, "\"itos\" has " + std::to_string(count) + " tokens but the model's vocab_size is " +
                   std::to_string(s.model.vocab_size));
  std::vector<char32_t> chars;
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::vector<char32_t> cps;
    try {
      cps = utf8_decode(pieces[i], "vocab");
    } catch (const InputError&) {
    }
    if (cps.size() != 1)
      fail(name, "\"itos\"[" + std::to_string(i) + "] is not one character: a character-level meta.pkl is needed");
    chars.push_back(cps[0]);
  }
  if (const Object* stoi = p.get(top, "stoi"); stoi && stoi->kind == Kind::dict)
    for (size_t i = 0; i + 1 < stoi->items.size(); i += 2) {
      const Object& k = p.at(stoi->items[i]);
      const Object& v = p.at(stoi->items[i + 1]);
      if (k.kind != Kind::string || v.kind != Kind::integer || v.i < 0 || v.i >= s.model.vocab_size ||
          pieces[static_cast<size_t>(v.i)] != k.s)
        fail(name, "\"stoi\" and \"itos\" disagree" + (k.kind == Kind::string ? " on " + k.s : std::string()));
    }
  try {
    s.vocab = CharTokenizer::from_chars(chars).chars();
  } catch (const InputError& e) {
    fail(name, std::string("its characters are not a vocabulary the playground reads (one per id, in code-point "
                           "order, as nanoGPT's sorted(set(text))): ") + e.what());
  }
}

// ---------------------------------------------------------------- Hugging Face GPT-2

namespace {

// A foreign safetensors file is read tensor by tensor, never whole: its size is limited by the
// model's (checked when the model is made), not by one allocation's.
constexpr uint64_t kMaxForeignBytes = uint64_t(1) << 40;

const char* const kConv1D[] = {".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight", ".mlp.c_proj.weight"};

int config_int(const json::Value& c, const char* key, const std::string& where, bool required = true, int fallback = 0) {
  const json::Value* v = c.find(key);
  if (!v) {
    if (required) fail(where, std::string("has no \"") + key + "\"");
    return fallback;
  }
  if (!v->is_number() || v->as_number() != std::floor(v->as_number()) || v->as_number() < 1 ||
      v->as_number() > double(1 << 30))
    fail(where, std::string("\"") + key + "\" is " + json::excerpt(v->dump(), 24) + ", not a count ≥ 1");
  return static_cast<int>(v->as_number());
}

GPTConfig hf_config(const std::string& text, const std::string& where) {
  json::Value c;
  try {
    c = json::parse(text);
  } catch (const json::JsonError& e) {
    fail(where, std::string("not valid JSON: ") + e.what());
  }
  if (!c.is_object()) fail(where, "must be a JSON object");
  if (const json::Value* t = c.find("model_type"); t && !(t->is_string() && t->as_string() == "gpt2"))
    fail(where, "\"model_type\" is " + json::excerpt(t->dump(), 40) + ": only GPT-2's (\"gpt2\") is read");
  GPTConfig g;
  g.n_layer = config_int(c, "n_layer", where);
  g.n_head = config_int(c, "n_head", where);
  g.n_embd = config_int(c, "n_embd", where);
  g.block_size = config_int(c, "n_positions", where, c.find("n_ctx") == nullptr, config_int(c, "n_ctx", where, false));
  g.vocab_size = config_int(c, "vocab_size", where);
  if (const json::Value* inner = c.find("n_inner"); inner && !inner->is_null() &&
                                                     !(inner->is_number() && inner->as_number() == 4.0 * g.n_embd))
    fail(where, "\"n_inner\" is " + json::excerpt(inner->dump(), 24) + ": the playground's MLP is 4·n_embd wide");
  const json::Value* act = c.find("activation_function");
  const std::string a = act && act->is_string() ? act->as_string() : act ? act->dump() : "gelu_new";
  if (a == "gelu_new" || a == "gelu_pytorch_tanh") g.activation = Activation::gelu_new;
  else if (a == "gelu") g.activation = Activation::gelu;
  else fail(where, "\"activation_function\" is " + json::excerpt(act->dump(), 40) +
                       ": the playground's GPT has gelu_new (GPT-2's tanh approximation) and gelu (exact)");
  if (const json::Value* eps = c.find("layer_norm_epsilon")) {
    if (!eps->is_number() || !(eps->as_number() > 0) || eps->as_number() > 0.1)
      fail(where, "\"layer_norm_epsilon\" is " + json::excerpt(eps->dump(), 24) + ": it must be in (0, 0.1]");
    g.ln_eps = static_cast<float>(eps->as_number());
  }
  g.bias = true;
  try {
    g.validate();
  } catch (const InputError& e) {
    fail(where, e.what());
  }
  return g;
}

}  // namespace

bool is_foreign_safetensors(const std::string& bytes) { return is_foreign_safetensors(StringSource(bytes)); }

bool is_foreign_safetensors(const ByteSource& bytes) {
  try {
    const safetensors::Header h = safetensors::read_header(bytes, {kMaxCheckpointHeader, kMaxForeignBytes, "file"});
    const json::Value* meta = h.metadata();
    const json::Value* format = meta && meta->is_object() ? meta->find("format") : nullptr;
    return !(format && format->is_string() && format->as_string() == kCheckpointFormat);
  } catch (const InputError&) {
    return false;  // not a safetensors file at all: the checkpoint reader says why
  }
}

ImportPlan plan_hf_gpt2(const ByteSource& bytes, const std::string& config_text, const std::string& name,
                        const std::string& config_name) {
  const safetensors::Limits limits{kMaxCheckpointHeader, kMaxForeignBytes, name};
  ImportPlan plan;
  TrainState& s = plan.state;
  s.model = hf_config(config_text, config_name);
  const GPTConfig& c = s.model;
  const safetensors::Header h = safetensors::read_header(bytes, limits);
  const std::vector<safetensors::TensorInfo> infos = safetensors::read_tensors(h, limits);
  if (static_cast<uint64_t>(c.num_parameters()) * 2 > bytes.size())
    fail(name, config_name + " describes " + std::to_string(c.num_parameters()) + " parameters, more than a file of " +
                   std::to_string(bytes.size()) + " bytes holds");
  std::map<std::string, const safetensors::TensorInfo*> by_name;
  for (const safetensors::TensorInfo& t : infos) {
    std::string key = t.name;
    if (key.rfind("transformer.", 0) == 0) key = key.substr(12);
    if (ends_with(key, ".attn.bias") || ends_with(key, ".attn.masked_bias")) continue;  // the mask buffers
    by_name["transformer." + key] = &t;  // nanoGPT's names have the prefix
  }
  // The read of one tensor (its values, in the file's row-major order, to the parameters at dst).
  auto read = [&](const safetensors::TensorInfo& t, int64_t dst) {
    WeightRead r;
    r.dtype = t.dtype == "F32" ? "float32" : t.dtype == "F16" ? "float16" : t.dtype == "BF16" ? "bfloat16" : "";
    if (r.dtype.empty())
      fail(name, "tensor " + t.name + " is " + t.dtype + ": a model's weights are read from F32, F16 or BF16");
    r.tensor = t.name;
    r.at = h.data_start + t.begin;
    r.size = t.end - t.begin;
    r.shape.assign(t.shape.begin(), t.shape.end());
    r.stride = row_major(r.shape);
    r.dst = dst;
    return r;
  };
  const std::string words = "n_layer " + std::to_string(c.n_layer) + ", n_embd " + std::to_string(c.n_embd) +
                            ", n_positions " + std::to_string(c.block_size) + ", vocab_size " +
                            std::to_string(c.vocab_size);
  for (const ParamTensor& p : param_tensors(c)) {
    const auto it = by_name.find(p.name);
    const std::string hf = p.name.substr(12);  // HF's name, without "transformer."
    if (it == by_name.end())
      fail(name, "there is no tensor " + hf + ", which " + config_name + " (" + words + ") needs");
    bool conv = false;
    for (const char* suffix : kConv1D) conv = conv || ends_with(p.name, suffix);
    std::vector<uint64_t> want(p.shape.begin(), p.shape.end());
    if (conv) std::swap(want[0], want[1]);  // Conv1D: in × out
    if (it->second->shape != want)
      fail(name, "tensor " + it->second->name + " has shape " + safetensors::shape_text(it->second->shape) + " but " +
                     config_name + " (" + words + ") gives " + safetensors::shape_text(want) +
                     (conv ? " (Conv1D: in × out)" : ""));
    plan.reads.push_back(read(*it->second, p.offset));
    plan.reads.back().transpose = conv;  // (in, out) → (out, in)
    by_name.erase(it);
  }
  if (const auto head = by_name.find("transformer.lm_head.weight"); head != by_name.end()) {
    const ParamTensor wte = param_tensors(c).front();
    const std::string differs = "lm_head.weight differs from wte.weight: the playground's GPT ties its output head to "
                                "the token embedding, as GPT-2 does";
    if (head->second->shape != std::vector<uint64_t>(wte.shape.begin(), wte.shape.end())) fail(name, differs);
    plan.reads.push_back(read(*head->second, wte.offset));
    plan.reads.back().differs = differs;
    by_name.erase(head);
  }
  if (!by_name.empty())
    fail(name, "the file holds a tensor " + by_name.begin()->second->name + " that GPT-2 (with " + config_name + ": " +
                   words + ") does not have");
  s.source = "Hugging Face GPT-2 " + short_name(name);
  return plan;
}

TrainState import_hf_gpt2(const std::string& bytes, const std::string& config_text, const std::string& name,
                          const std::string& config_name) {
  ImportPlan plan = plan_hf_gpt2(StringSource(bytes), config_text, name, config_name);
  fill_weights(plan.state, std::move(plan.reads), bytes, name);
  return std::move(plan.state);
}

GPTConfig hf_gpt2_config(const std::string& config_json, const std::string& config_name) {
  return hf_config(config_json, config_name);
}

void set_bpe_tokenizer(TrainState& s, std::shared_ptr<const BpeTokenizer> bpe, const std::string& name) {
  if (!s.vocab.empty())
    fail(name, "the model already has a character vocabulary (a meta.pkl): give GPT-2's tokenizer files or the "
               "meta.pkl, not both");
  if (bpe->vocab_size() > s.model.vocab_size)
    fail(name, "the tokenizer has " + std::to_string(bpe->vocab_size()) + " tokens but the model's vocab_size is " +
                   std::to_string(s.model.vocab_size) + ": it is not this model's tokenizer");
  s.bpe = std::move(bpe);
}

void require_vocab(const TrainState& s, const std::string& name) {
  if (!s.vocab.empty() || s.bpe || s.hf_tokenizer) return;
  if (s.source.rfind("Hugging Face's", 0) == 0 && s.source.find(" folder ") != std::string::npos)
    fail(name, "the folder has no tokenizer.json: give token ids instead (--ids N,N,…)");
  const std::string bpe = "GPT-2's BPE tokenizer (vocab_size " + std::to_string(s.model.vocab_size) +
                          "): give its vocab.json and merges.txt, or its tokenizer.json (from Hugging Face's gpt2)";
  // Only a vocabulary of GPT-2's size can be GPT-2's tokenizer. One under 256 cannot be a byte-level
  // BPE at all (its base symbols are the 256 bytes): it is a dataset's own characters, and its
  // meta.pkl is what is missing. One in between is either.
  const std::string meta = "give its dataset's meta.pkl (nanoGPT's data/<dataset>/meta.pkl, written by prepare.py) "
                           "after the checkpoint";
  if (s.source.rfind("nanoGPT", 0) == 0 && s.model.vocab_size < 256)
    fail(name, "no meta.pkl: this model's vocabulary has " + std::to_string(s.model.vocab_size) +
                   " tokens, not GPT-2's 50,257, so it was trained on characters of its own: " + meta +
                   "; or token ids (gpt logits --ids)");
  if (s.source.rfind("nanoGPT", 0) == 0 && s.model.vocab_size < 50257)
    fail(name, "no meta.pkl: this model's vocabulary has " + std::to_string(s.model.vocab_size) +
                   " tokens, not GPT-2's 50,257: if it was trained on characters, " + meta +
                   "; if on a byte-level BPE of its own, give its vocab.json and merges.txt, or its tokenizer.json; "
                   "or token ids (gpt logits --ids)");
  if (s.source.rfind("nanoGPT", 0) == 0)
    fail(name, "no meta.pkl: without one nanoGPT uses " + bpe +
                   "; or the meta.pkl of a character-level model (nanoGPT's data/shakespeare_char/meta.pkl); or "
                   "token ids (gpt logits --ids)");
  fail(name, "this model reads text with " + bpe + "; or token ids (gpt logits --ids)");
}

}  // namespace ap
