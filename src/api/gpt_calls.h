// gpt_calls.h — the one table of the GPT's calls (kGptCalls): each call's name, role, arguments,
// handler and the typed arrays it leaves, declared once. It drives `gpt api` (call_json: one JSON
// object per call, {"call": NAME, …its arguments}), the wasm module's Embind registration
// (src/bindings/gpt_bindings.cpp: one method per row, its arguments positional in the row's
// order), the `calls` answer web/gpt.js reads, and the table test (tests/wasm/gpt_calls.test.mjs:
// every row in web/gpt.d.ts and docs/api.md, nothing registered besides).
//
// A handler reads its arguments by key through GptCallArgs, the same way for both ways in: from
// the call object (gpt api; a malformed call is refused naming the key: not an object, no "call",
// an unknown call, a key the call does not take, a missing argument) or from the method's
// positional arguments (wasm: strings, bytes, numbers as Embind converts them). Every answer is the
// session's JSON text verbatim, or {"ok":false,"error","field"}; no exception leaves a call.
//
// A row with an example is a `gpt api` call (its help lists the examples; the "unknown call"
// message lists those names in the table's order); a row without one takes bytes or hands out the
// heap (the data-parallel exchange, the opening's pieces) and is the wasm module's only. A row
// without a handler is a call of the full module: its handler is in gpt_full.cpp (gpt_full.h), linked into the
// modules that have the opening, fine-tuning and the walk. Role "module" rows need no session:
// the wasm module registers them as functions gpt_<name>.
//
// Calls that name files (load: "path", "text_path"; save: "path"; finetune: "text_path") reach
// them through the FileAccess the caller gives: the `gpt` CLI gives its readers and the atomic
// checkpoint writer; without one (the wasm module's call_json) such a call is refused, naming
// "path". A reader's or writer's InputError is answered with the key that named the file.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "api/gpt_interp.h"
#include "api/gpt_session.h"
#include "formats/json.h"

namespace ap {

// How the calls that name files reach them; each throws InputError (any field).
struct FileAccess {
  std::function<std::string(const std::string& path)> read_checkpoint;
  std::function<std::string(const std::string& path)> read_text;
  std::function<void(const std::string& path, const std::string& bytes)> write_checkpoint;
};

// What an argument is. gpt api / wasm method:
//   spec    a JSON object (absent: {}) / its JSON text
//   json    any JSON value, required / its JSON text
//   text    a string of at most `max` bytes / a string or UTF-8 bytes
//   bytes   (only through the file its `file` key names) / bytes
//   whole   a whole number in int32's range / a number
//   number  — / a number (a byte offset or count)
//   out     a path the answer is written to / (none: the method returns the bytes)
enum class ArgKind : unsigned char { spec, json, text, bytes, whole, number, out };

struct GptArg {
  const char* key;
  ArgKind kind;
  size_t max = 0;              // text: the most bytes
  const char* file = nullptr;  // gpt api: the key naming a file that holds it instead
};

// The session's parts, as the calls' roles: the run and its training; predicting and inspecting;
// opening a model (and fine-tuning it); the data-parallel shards; the module (no session).
enum class GptRole : unsigned char { run, predict, open, shards, module };

class GptCallArgs;
using GptHandler = std::string (*)(GptSession& session, const GptCallArgs& args);

constexpr size_t kMaxCallArgs = 4;
constexpr size_t kMaxCallResults = 5;

struct GptCall {
  const char* name;
  GptRole role;
  GptArg args[kMaxCallArgs];
  const char* results[kMaxCallResults];  // the typed arrays it leaves (kGptResults' names)
  const char* example;                   // gpt api's help ("" the name alone); nullptr: not a gpt api call
  GptHandler handler;                    // nullptr: a call of the full module (gpt_full.cpp)
  bool returns_bytes = false;            // the wasm method returns the bytes (Uint8Array, null on failure)
};

// A typed array a call leaves in the session: the wasm module's NAME() (a copy) and NAME_view()
// (a view into the heap, valid until the next call into the module).
struct GptResult {
  const char* name;
  bool ints;  // Int32Array, else Float32Array
  void (*get)(GptSession& s, const void*& data, size_t& n);
};

// A staging area of n values the wasm side writes into before a *_staged call: NAME(n) → a view.
struct GptStage {
  const char* name;
  bool ints;
  void* (*area)(GptSession& s, int n);
};

// One argument of a wasm method call: a string's (or bytes') address, or a number.
struct GptArgValue {
  const std::string* text = nullptr;
  double number = 0;
};

// One call's arguments, by key, from the call object or the positional values. Each accessor
// throws InputError naming the key.
class GptCallArgs {
 public:
  GptCallArgs(const GptCall& row, const json::Value& call, const FileAccess& files);     // gpt api
  GptCallArgs(const GptCall& row, const GptArgValue* given, std::string* bytes_out);     // wasm
  const GptCall& row;
  const json::Value* call_object() const { return call_; }  // gpt api's call; null for a wasm method
  const FileAccess& files() const { return *files_; }
  std::string spec(const char* key) const;           // spec
  std::string json(const char* key) const;           // json
  const std::string& text(const char* key) const;    // text
  const std::string& bytes(const char* key) const;   // bytes (a wasm method's)
  int whole(const char* key) const;                  // whole
  double number(const char* key) const;              // number
  // gpt api: "the NAME call needs KEY" unless present and not null.
  const json::Value& need(const char* key) const;
  // The wasm method's bytes result (returns_bytes rows): given here, returned by the method.
  void give_bytes(std::string bytes) const;

 private:
  size_t index(const char* key) const;  // the key's place among the row's positional arguments
  const json::Value* call_ = nullptr;
  const GptArgValue* given_ = nullptr;
  const FileAccess* files_ = nullptr;
  std::string* bytes_out_ = nullptr;
  mutable std::string held_[kMaxCallArgs];  // strings read from the call object
};

// The handlers that are more than one line (gpt_calls.cpp).
std::string load_call(GptSession& s, const GptCallArgs& a);
std::string save_call(GptSession& s, const GptCallArgs& a);
std::string calls_call(GptSession& s, const GptCallArgs& a);
namespace gpt_table {
using A = const GptCallArgs&;
using K = ArgKind;
using R = GptRole;

template <const std::vector<float>& (GptSession::*get)() const>
void floats_of(GptSession& s, const void*& p, size_t& n) {
  const std::vector<float>& v = (s.*get)();
  p = v.data();
  n = v.size();
}
template <const std::vector<int>& (GptSession::*get)() const>
void ints_of(GptSession& s, const void*& p, size_t& n) {
  const std::vector<int>& v = (s.*get)();
  p = v.data();
  n = v.size();
}
// the same for the shards part (gpt_shards.h)
template <class T, const std::vector<T>& (GptShards::*get)() const>
void shards_of(GptSession& s, const void*& p, size_t& n) {
  const std::vector<T>& v = (s.shards().*get)();
  p = v.data();
  n = v.size();
}

// clang-format off
inline constexpr GptResult kGptResults[] = {
  {"logits", false, floats_of<&GptSession::logits>},
  {"full_logits", false, floats_of<&GptSession::full_logits>},
  {"attention_weights", false, floats_of<&GptSession::attention_weights>},
  {"attention_mean", false, floats_of<&GptSession::attention_mean>},
  {"attention_rollout", false, floats_of<&GptSession::attention_rollout>},
  {"cache_attention", false, floats_of<&GptSession::cache_attention>},
  {"cache_keys", false, floats_of<&GptSession::cache_keys>},
  {"cache_values", false, floats_of<&GptSession::cache_values>},
  {"step_params", false, shards_of<float, &GptShards::step_params>},
  {"batch_ids", true, shards_of<int, &GptShards::batch_ids>},
  {"batch_targets", true, shards_of<int, &GptShards::batch_targets>},
  // step_own's gradients: the model's own (valid until the next step_add or step)
  {"step_grads", false, [](GptSession& s, const void*& p, size_t& n) {
     const float* f = nullptr;
     s.shards().step_grads(f, n);
     p = f;
   }},
  {"step_share_grads", false, shards_of<float, &GptShards::step_share_grads>},
  {"step_losses", false, shards_of<float, &GptShards::step_losses>},
  {"shard_grads", false, shards_of<float, &GptShards::shard_grads>},
  {"shard_losses", false, shards_of<float, &GptShards::shard_losses>},
  {"eval_ids", true, shards_of<int, &GptShards::eval_ids>},
  {"eval_targets", true, shards_of<int, &GptShards::eval_targets>},
};

inline constexpr GptStage kGptStages[] = {
  {"stage_floats", false, [](GptSession& s, int n) -> void* { return s.shards().stage_floats(n); }},
  {"stage_losses", false, [](GptSession& s, int n) -> void* { return s.shards().stage_losses(n); }},
  {"stage_ids", true, [](GptSession& s, int n) -> void* { return s.shards().stage_ids(n); }},
  {"stage_targets", true, [](GptSession& s, int n) -> void* { return s.shards().stage_targets(n); }},
};

inline constexpr GptCall kGptCalls[] = {
  // the run and its training (gpt_session.cpp)
  {"create", R::run, {{"spec", K::spec}}, {}, R"({"call":"create","spec":{…}})",
   [](GptSession& s, A a) { return s.create(a.spec("spec")); }},
  {"load", R::run, {{"checkpoint", K::bytes, 0, "path"}, {"text", K::bytes, 0, "text_path"}}, {},
   R"({"call":"load","path":F,"text_path":T})", load_call},
  {"info", R::run, {}, {}, "", [](GptSession& s, A) { return s.info(); }},
  {"vocab", R::run, {{"spec", K::spec}}, {}, R"({"call":"vocab","spec":{"from":0,"count":100}})",
   [](GptSession& s, A a) { return s.vocab(a.spec("spec")); }},
  {"train", R::run, {{"n", K::whole}}, {}, R"({"call":"train","n":N})",
   [](GptSession& s, A a) { return s.train(a.whole("n")); }},
  {"evaluate", R::run, {}, {}, "", [](GptSession& s, A) { return s.evaluate(); }},
  // a typed array the calls left (kGptResults), as JSON: gpt api's way to what the wasm methods copy
  {"result", R::run, {{"name", K::text, 64}}, {}, R"({"call":"result","name":"logits"})",
   [](GptSession& s, A a) {
     const std::string& name = a.text("name");
     std::string names;
     for (const GptResult& r : kGptResults) {
       names += std::string(names.empty() ? "" : ", ") + r.name;
       if (name != r.name) continue;
       const void* p = nullptr;
       size_t n = 0;
       r.get(s, p, n);
       json::Value values = json::Value::array();
       for (size_t i = 0; i < n; ++i)
         values.push(r.ints ? json::Value(static_cast<const int*>(p)[i]) : json::Value::f32(static_cast<const float*>(p)[i]));
       json::Value answer = json::Value::object();
       answer.set("ok", true);
       answer.set("name", name);
       answer.set("values", std::move(values));
       return answer.dump();
     }
     throw InputError("unknown result \"" + json::excerpt(name) + "\": the results are " + names, "name");
   }},
  // predicting and inspecting (gpt_session.cpp, gpt_predict.cpp; the walk: gpt_walk.cpp, the full module)
  {"sample", R::predict, {{"spec", K::spec}}, {}, R"({"call":"sample","spec":{…}})",
   [](GptSession& s, A a) { return s.sample(a.spec("spec")); }},
  {"generate_start", R::predict, {{"spec", K::spec}},
   {"logits", "full_logits", "cache_attention", "cache_keys", "cache_values"}, "generate_start (spec)",
   [](GptSession& s, A a) { return s.generate_start(a.spec("spec")); }},
  {"generate_next", R::predict, {}, {"logits", "full_logits", "cache_attention", "cache_keys", "cache_values"}, "",
   [](GptSession& s, A) { return s.generate_next(); }},
  {"run_prompt", R::predict, {{"prompt", K::text, 1 << 20}}, {"attention_weights"}, R"({"call":"run_prompt","prompt":P})",
   [](GptSession& s, A a) { return s.run_prompt(a.text("prompt")); }},
  {"head_spec", R::predict, {{"layer", K::whole}, {"head", K::whole}}, {}, R"({"call":"head_spec","layer":L,"head":H})",
   [](GptSession& s, A a) {
     const int layer = a.whole("layer"), head = a.whole("head");
     return s.head_spec(layer, head);
   }},
  {"attention_maps", R::predict, {}, {}, "", [](GptSession& s, A) { return s.attention_maps_json(); }},
  {"attention_summary", R::predict, {}, {"attention_mean", "attention_rollout"}, "",
   [](GptSession& s, A) { return s.attention_summary(); }},
  {"next_token", R::predict, {{"spec", K::spec}}, {},
   R"({"call":"next_token","spec":{"prompt":P,"temperature":T,"top_k":K,"top_p":P}})",
   [](GptSession& s, A a) { return s.next_token(a.spec("spec")); }},
  {"surprisal", R::predict, {{"spec", K::spec}}, {}, R"({"call":"surprisal","spec":{"text":T}|{"validation":true}})",
   [](GptSession& s, A a) { return s.surprisal(a.spec("spec")); }},
  {"block_trace", R::predict, {{"spec", K::spec}}, {}, R"({"call":"block_trace","spec":{"prompt":P,"position":N}})", nullptr},
  {"weight_row", R::predict, {{"spec", K::spec}}, {}, R"({"call":"weight_row","spec":{"weight":W,"layer":L,"row":R}})",
   nullptr},
  // the interpretability tools (gpt_interp.cpp, core/interp/interp.h)
  {"lens", R::predict, {{"spec", K::spec}}, {}, R"({"call":"lens","spec":{"prompt":P,"top_k":5,"target":T}})",
   [](GptSession& s, A a) { return interp_call(s, "lens", a.spec("spec")); }},
  {"attribute", R::predict, {{"spec", K::spec}}, {},
   R"({"call":"attribute","spec":{"prompt":P,"token":A,"other":B,"position":N}})",
   [](GptSession& s, A a) { return interp_call(s, "attribute", a.spec("spec")); }},
  {"ablate", R::predict, {{"spec", K::spec}}, {},
   R"({"call":"ablate","spec":{"prompt":P,"mode":"zero"|"mean","reference":[P,…],"token":A,"other":B}})",
   [](GptSession& s, A a) { return interp_call(s, "ablate", a.spec("spec")); }},
  {"patch", R::predict, {{"spec", K::spec}}, {},
   R"({"call":"patch","spec":{"clean":P,"corrupted":Q,"token":A,"other":B}})",
   [](GptSession& s, A a) { return interp_call(s, "patch", a.spec("spec")); }},
  {"attribution_patch", R::predict, {{"spec", K::spec}}, {},
   R"({"call":"attribution_patch","spec":{"clean":P,"corrupted":Q,"token":A,"other":B}})",
   [](GptSession& s, A a) { return interp_call(s, "attribution_patch", a.spec("spec")); }},
  {"head_scores", R::predict, {{"spec", K::spec}}, {}, R"({"call":"head_scores","spec":{"length":N,"batch":B,"seed":S}})",
   [](GptSession& s, A a) { return interp_call(s, "head_scores", a.spec("spec")); }},
  {"save", R::run, {{"path", K::out}}, {}, R"({"call":"save","path":F})", save_call, true},
  // the module: no session
  {"tasks", R::module, {}, {}, "", [](GptSession&, A) { return gpt_tasks_json(); }},
  {"kernels", R::module, {{"tier", K::text, 64}}, {}, R"({"call":"kernels","tier":"reference"|"fast"})",
   [](GptSession&, A a) { return gpt_set_kernels(a.text("tier")); }},
  {"memory", R::module, {{"spec", K::spec}}, {}, R"({"call":"memory","spec":{…}})",
   [](GptSession&, A a) { return gpt_memory_json(a.spec("spec")); }},
  {"threads", R::run, {{"n", K::whole}}, {}, R"({"call":"threads","n":N})",
   [](GptSession& s, A a) { return s.set_threads(a.whole("n")); }},
  {"encode", R::predict, {{"text", K::text, 1 << 24}}, {}, R"({"call":"encode","text":T})",
   [](GptSession& s, A a) { return s.encode(a.text("text")); }},
  {"decode", R::predict, {{"ids", K::json}}, {}, R"({"call":"decode","ids":[N,…]})",
   [](GptSession& s, A a) { return s.decode(a.json("ids")); }},
  // opening a model and fine-tuning it (gpt_open.cpp, gpt_finetune.cpp: the full module)
  {"finetune_memory", R::open, {{"spec", K::spec}}, {}, R"({"call":"finetune_memory","spec":{"context":T,"batch_size":B}})",
   nullptr},
  {"finetune", R::open, {{"spec", K::spec}, {"text", K::text, size_t(1) << 26, "text_path"}}, {},
   R"({"call":"finetune","spec":{…},"text_path":F})", nullptr},
  // this table (the wasm module's gpt_calls(): what web/gpt.js builds its methods from)
  {"calls", R::module, {}, {}, "", calls_call},
  // the wasm module's only (bytes in)
  {"create_with_text", R::run, {{"spec", K::spec}, {"text", K::bytes}}, {}, nullptr,
   [](GptSession& s, A a) { return s.create_with_text(a.spec("spec"), a.bytes("text")); }},
  {"open_begin", R::open, {{"spec", K::spec}, {"head", K::bytes}, {"config", K::bytes}}, {}, nullptr, nullptr},
  {"open_piece", R::open, {{"at", K::number}, {"bytes", K::bytes}}, {}, nullptr, nullptr},
  {"open_plan", R::open, {{"spec", K::spec}, {"meta", K::bytes}, {"config", K::bytes}}, {}, nullptr, nullptr},
  {"open_feed", R::open, {{"n", K::number}}, {}, nullptr, nullptr},
  {"open_finish", R::open, {}, {}, nullptr, nullptr},
  {"open_tokenizer", R::open, {{"spec", K::spec}, {"first", K::bytes}, {"second", K::bytes}}, {}, nullptr, nullptr},
  {"open_cancel", R::open, {}, {}, nullptr, nullptr},
  // the data-parallel shards (gpt_shards.cpp)
  {"step_begin", R::shards, {{"n", K::whole}}, {"batch_ids", "batch_targets", "step_params"}, nullptr,
   [](GptSession& s, A a) { return s.shards().step_begin(a.whole("n")); }},
  {"step_own", R::shards, {}, {"step_grads", "step_losses"}, nullptr, [](GptSession& s, A) { return s.shards().step_own(); }},
  {"step_share", R::shards, {{"k", K::whole}}, {"step_share_grads", "step_losses"}, nullptr,
   [](GptSession& s, A a) { return s.shards().step_share(a.whole("k")); }},
  {"step_add", R::shards, {{"grads", K::bytes}, {"losses", K::bytes}}, {}, nullptr,
   [](GptSession& s, A a) { return s.shards().step_add(a.bytes("grads"), a.bytes("losses")); }},
  {"step_add_staged", R::shards, {}, {}, nullptr, [](GptSession& s, A) { return s.shards().step_add_staged(); }},
  {"step_finish", R::shards, {}, {}, nullptr, [](GptSession& s, A) { return s.shards().step_finish(); }},
  {"shard_model", R::shards, {{"config", K::json}}, {}, nullptr,
   [](GptSession& s, A a) { return s.shards().shard_model(a.json("config")); }},
  {"shard_gradients", R::shards, {{"params", K::bytes}, {"ids", K::bytes}, {"targets", K::bytes}, {"batch_rows", K::whole}},
   {"shard_grads", "shard_losses"}, nullptr,
   [](GptSession& s, A a) {
     return s.shards().shard_gradients(a.bytes("params"), a.bytes("ids"), a.bytes("targets"), a.whole("batch_rows"));
   }},
  {"shard_gradients_staged", R::shards, {{"batch_rows", K::whole}}, {"shard_grads", "shard_losses"}, nullptr,
   [](GptSession& s, A a) { return s.shards().shard_gradients_staged(a.whole("batch_rows")); }},
  {"eval_begin", R::shards, {{"n", K::whole}}, {"eval_ids", "eval_targets", "step_params"}, nullptr,
   [](GptSession& s, A a) { return s.shards().eval_begin(a.whole("n")); }},
  {"eval_own", R::shards, {}, {}, nullptr, [](GptSession& s, A) { return s.shards().eval_own(); }},
  {"eval_add_staged", R::shards, {}, {}, nullptr, [](GptSession& s, A) { return s.shards().eval_add_staged(); }},
  {"eval_finish", R::shards, {}, {}, nullptr, [](GptSession& s, A) { return s.shards().eval_finish(); }},
  {"shard_evaluate_staged", R::shards, {{"B", K::whole}, {"T", K::whole}}, {"shard_losses"}, nullptr,
   [](GptSession& s, A a) {
     const int B = a.whole("B"), T = a.whole("T");
     return s.shards().shard_evaluate_staged(B, T);
   }},
};

// clang-format on
}  // namespace gpt_table

using gpt_table::kGptCalls;
using gpt_table::kGptResults;
using gpt_table::kGptStages;
constexpr size_t kGptCallCount = sizeof(kGptCalls) / sizeof(kGptCalls[0]);

// A row's arguments a wasm method takes, in order (all but `out`).
constexpr size_t positional_count(const GptCall& c) {
  size_t n = 0;
  for (const GptArg& a : c.args)
    if (a.key && a.kind != ArgKind::out) ++n;
  return n;
}
constexpr ArgKind positional_kind(const GptCall& c, size_t j) {
  for (const GptArg& a : c.args)
    if (a.key && a.kind != ArgKind::out && j-- == 0) return a.kind;
  return ArgKind::out;
}

const GptCall* find_gpt_call(const std::string& name);

// One call → one answer (JSON text, one line). No exception leaves it.
std::string call_json(GptSession& session, const std::string& line);
std::string call_json(GptSession& session, const std::string& line, const FileAccess& files);
// A wasm method's call: the row's positional arguments; bytes_out takes a returns_bytes row's bytes.
std::string call_given(GptSession& session, const GptCall& row, const GptArgValue* given, std::string* bytes_out);

}  // namespace ap
