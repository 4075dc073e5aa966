// gpt_calls.cpp — the calls' arguments (GptCallArgs), the handlers longer than a line, and the
// dispatch of both ways in: call_json (gpt api) and call_given (the wasm methods); see gpt_calls.h.
#include "api/gpt_calls.h"

#include <cstring>
#include <set>

#include "api/gpt_full.h"
#include "core/model/inspect.h"
#include "api/spec.h"

namespace ap {

using json::Value;
using namespace spec;

GptCallArgs::GptCallArgs(const GptCall& r, const json::Value& call, const FileAccess& files)
    : row(r), call_(&call), files_(&files) {}

GptCallArgs::GptCallArgs(const GptCall& r, const GptArgValue* given, std::string* bytes_out)
    : row(r), given_(given), bytes_out_(bytes_out) {
  static const FileAccess none;
  files_ = &none;
}

size_t GptCallArgs::index(const char* key) const {
  size_t j = 0;
  for (const GptArg& a : row.args) {
    if (!a.key || a.kind == ArgKind::out) continue;
    if (std::strcmp(a.key, key) == 0) return j;
    ++j;
  }
  throw InputError(std::string("the ") + row.name + " call has no argument \"" + key + "\"", key);
}

const Value& GptCallArgs::need(const char* key) const {
  const Value* x = call_ ? get(*call_, key) : nullptr;
  if (!x) throw InputError("the " + std::string(row.name) + " call needs \"" + key + "\"", key);
  return *x;
}

std::string GptCallArgs::spec(const char* key) const {
  if (!call_) return *given_[index(key)].text;
  const Value* x = get(*call_, key);
  return x ? x->dump() : std::string("{}");
}

std::string GptCallArgs::json(const char* key) const {
  if (!call_) return *given_[index(key)].text;
  return need(key).dump();
}

const std::string& GptCallArgs::text(const char* key) const {
  const size_t j = index(key);
  if (!call_) return *given_[j].text;
  need(key);
  return held_[j] = read_string(*call_, key, "", row.args[j].max);
}

const std::string& GptCallArgs::bytes(const char* key) const {
  const size_t j = index(key);
  if (!call_) return *given_[j].text;
  throw InputError(std::string("the ") + row.name + " call takes bytes: the wasm module's only", key);
}

int GptCallArgs::whole(const char* key) const {
  if (!call_) return static_cast<int>(given_[index(key)].number);
  need(key);
  return static_cast<int>(read_int(*call_, key, 0, -(1LL << 31), (1LL << 31) - 1));
}

double GptCallArgs::number(const char* key) const {
  if (!call_) return given_[index(key)].number;
  need(key);
  return static_cast<double>(read_int(*call_, key, 0, 0, 1LL << 53));
}

void GptCallArgs::give_bytes(std::string b) const {
  if (bytes_out_) *bytes_out_ = std::move(b);
}

namespace {

constexpr size_t kMaxPath = 4096;

// The caller's reader of a file named by `key`; its errors are answered with that key as field.
std::string read_through(const std::function<std::string(const std::string&)>& read, const std::string& path,
                         const char* key) {
  if (!read) throw InputError("this build reads no files (" + path + "): give the bytes to the session's load", key);
  try {
    return read(path);
  } catch (const InputError& e) {
    throw InputError(e.what(), key);
  }
}

std::string path_of(const GptCallArgs& a, const char* key) {
  a.need(key);
  return read_string(*a.call_object(), key, "", kMaxPath);
}

// gpt api's keys of a row: each argument's own, or for bytes the key of the file that holds them.
std::set<std::string> json_keys(const GptCall& c) {
  std::set<std::string> keys{"call"};
  for (const GptArg& a : c.args) {
    if (!a.key) continue;
    if (a.kind != ArgKind::bytes) keys.insert(a.key);
    if (a.file) keys.insert(a.file);
  }
  return keys;
}

GptHandler handler_of(const GptCall& c) { return c.handler ? c.handler : need_gpt_full(c.name); }

}  // namespace

std::string load_call(GptSession& s, const GptCallArgs& a) {
  if (!a.call_object()) return s.load(a.bytes("checkpoint"), a.bytes("text"));
  const std::string path = path_of(a, "path");
  std::string text;
  if (get(*a.call_object(), "text_path"))
    text = read_through(a.files().read_text, path_of(a, "text_path"), "text_path");
  return s.load(read_through(a.files().read_checkpoint, path, "path"), text);
}

std::string save_call(GptSession& s, const GptCallArgs& a) {
  if (!a.call_object()) {
    std::string bytes = s.save();
    a.give_bytes(bytes);
    if (bytes.empty()) throw InputError(s.last_error(), "checkpoint");
    return ok(Value::object()).dump();
  }
  const std::string path = path_of(a, "path");
  const std::string bytes = s.save();
  if (bytes.empty()) throw InputError(s.last_error(), "checkpoint");
  if (!a.files().write_checkpoint)
    throw InputError("this build writes no files (" + path + "): take the bytes from the session's save", "path");
  try {
    a.files().write_checkpoint(path, bytes);
  } catch (const InputError& e) {
    throw InputError(e.what(), "path");
  }
  Value r = Value::object();
  r.set("bytes", static_cast<long long>(bytes.size()));
  return ok(std::move(r)).dump();
}

std::string run_memory_call(GptSession& s, const GptCallArgs&) {
  if (!s.ready()) throw InputError("no model yet: create or load one first", "model");
  const Trainer& t = *s.trainer();
  const GPT& m = t.model();
  const GPTConfig& c = m.config();
  Value r = Value::object();
  r.set("n_params", static_cast<long long>(m.num_parameters()));
  r.set("parameters", static_cast<long long>(sizeof(float) * m.num_parameters()));
  r.set("allocated", static_cast<long long>(m.allocated_bytes()));
  r.set("training", static_cast<long long>(GPT::memory_bytes(c, t.config().batch_size, t.context())));
  r.set("inference", static_cast<long long>(GPT::memory_bytes(c, 1, c.block_size, ModelUse::infer)));
  // the cache's keys and values (gpt.h CacheViews): n_layer × block_size × KC floats each
  r.set("kv_cache", static_cast<long long>(sizeof(float)) * 2 * c.n_layer * c.block_size * c.kv_head() * c.head_dim());
  r.set("limit", static_cast<long long>(kMaxModelBytes));
  return ok(std::move(r)).dump();
}

std::string loss_by_position_call(GptSession& s, const GptCallArgs& a) {
  if (!s.ready()) throw InputError("no model yet: create or load one first", "model");
  Trainer& t = *s.trainer();
  const Value sp = read_spec(a.spec("spec"), {"context", "batches"}, "loss_by_position spec");
  const int block = t.model().config().block_size;
  const int context = static_cast<int>(read_int(sp, "context", block, 1, kMaxBlockSize));
  const int batches = static_cast<int>(read_int(sp, "batches", t.config().eval_batches, 1, 1000));
  const PositionLoss p = loss_by_position(t, context, batches);
  Value r = Value::object();
  r.set("context", p.context);
  r.set("block_size", block);
  r.set("windows", p.windows);
  Value losses = Value::array();
  for (float l : p.losses) losses.push(Value::f32(l));
  r.set("losses", std::move(losses));
  r.set("mean", Value::f32(p.mean));
  return ok(std::move(r)).dump();
}

// finetune's text in gpt api: "text" or the file "text_path", not both (gpt_full.cpp's handler).
std::string finetune_text(const GptCallArgs& a) {
  if (!a.call_object()) return a.text("text");
  if (get(*a.call_object(), "text") && get(*a.call_object(), "text_path"))
    throw InputError("give the text once: \"text\" or \"text_path\"", "text");
  return get(*a.call_object(), "text_path") ? read_through(a.files().read_text, path_of(a, "text_path"), "text_path")
                                            : a.text("text");
}

namespace {

const char* kind_name(ArgKind k) {
  switch (k) {
    case ArgKind::spec: return "spec";
    case ArgKind::json: return "json";
    case ArgKind::text: return "text";
    case ArgKind::bytes: return "bytes";
    case ArgKind::whole: return "whole";
    case ArgKind::number: return "number";
    case ArgKind::out: return "out";
  }
  return "";
}

const char* role_name(GptRole r) {
  switch (r) {
    case GptRole::run: return "run";
    case GptRole::predict: return "predict";
    case GptRole::open: return "open";
    case GptRole::shards: return "shards";
    case GptRole::module: return "module";
  }
  return "";
}

template <class T>
Value typed_list(const T& table) {
  Value list = Value::array();
  for (const auto& x : table) {
    Value e = Value::object();
    e.set("name", x.name);
    e.set("type", x.ints ? "int32" : "float32");
    list.push(std::move(e));
  }
  return list;
}

}  // namespace

std::string calls_call(GptSession&, const GptCallArgs&) {
  Value calls = Value::array();
  for (const GptCall& c : kGptCalls) {
    Value row = Value::object();
    row.set("name", c.name);
    row.set("role", role_name(c.role));
    Value args = Value::array();
    for (const GptArg& a : c.args) {
      if (!a.key) continue;
      Value arg = Value::object();
      arg.set("key", a.key);
      arg.set("kind", kind_name(a.kind));
      if (a.file) arg.set("file", a.file);
      args.push(std::move(arg));
    }
    row.set("args", std::move(args));
    Value results = Value::array();
    for (const char* r : c.results)
      if (r) results.push(Value(r));
    row.set("results", std::move(results));
    row.set("api", c.example != nullptr);
    if (c.example) row.set("example", c.example);
    row.set("doc", c.doc ? c.doc : "");
    if (!c.handler) row.set("full", true);
    if (returns_bytes(c)) row.set("returns", "bytes");
    calls.push(std::move(row));
  }
  Value r = Value::object();
  r.set("calls", std::move(calls));
  r.set("results", typed_list(kGptResults));
  r.set("stages", typed_list(kGptStages));
  return ok(std::move(r)).dump();
}

const GptCall* find_gpt_call(const std::string& name) {
  for (const GptCall& c : kGptCalls)
    if (name == c.name) return &c;
  return nullptr;
}

std::string call_json(GptSession& session, const std::string& line) { return call_json(session, line, FileAccess{}); }

std::string call_json(GptSession& session, const std::string& line, const FileAccess& files) {
  std::string answer;
  const std::string envelope = guarded([&] {
    const Value v = json::parse(line);
    if (!v.is_object()) throw InputError("a call must be a JSON object such as {\"call\":\"info\"}", "call");
    if (!v.find("call")) throw InputError("the call has no \"call\" (what to do: create, load, train, …)", "call");
    const std::string name = read_string(v, "call", "", 64);
    const GptCall* call = nullptr;
    std::string names;
    for (const GptCall& c : kGptCalls) {
      if (!c.example) continue;  // the wasm module's only
      if (name == c.name) call = &c;
      names += std::string(names.empty() ? "" : ", ") + c.name;
    }
    if (!call) throw InputError("unknown call \"" + json::excerpt(name) + "\": the calls are " + names, "call");
    reject_unknown_keys(v, json_keys(*call), name + " call");
    const GptHandler handler = handler_of(*call);
    answer = handler(session, GptCallArgs(*call, v, files));
    return Value::object();
  });
  return answer.empty() ? envelope : answer;
}

std::string call_given(GptSession& session, const GptCall& row, const GptArgValue* given, std::string* bytes_out) {
  std::string answer;
  const std::string envelope = guarded([&] {
    answer = handler_of(row)(session, GptCallArgs(row, given, bytes_out));
    return Value::object();
  });
  return answer.empty() ? envelope : answer;
}

}  // namespace ap
