// gpt_calls.h — the one table of the GPT's calls (kGptCalls): each call's name, role, arguments,
// handler and the typed arrays it leaves, declared once. It drives `gpt api` (call_json: one JSON
// object per call, {"call": NAME, …its arguments}), the wasm module's Embind registration
// (src/bindings/gpt_bindings.cpp: one method per row, its arguments positional in the row's
// order), the `calls` answer web/gpt.js reads, and the table test (tests/wasm/gpt_calls.test.mjs:
// every row in web/gpt.d.ts and docs/api.md, written there by scripts/gen-gpt-api.mjs from each row's
// doc; nothing registered besides).
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

constexpr size_t kMaxCallArgs = 5;
constexpr size_t kMaxCallResults = 5;

struct GptCall {
  const char* name;
  GptRole role;
  GptArg args[kMaxCallArgs];
  const char* results[kMaxCallResults];  // the typed arrays it leaves (kGptResults' names)
  const char* example;                   // gpt api's help ("" the name alone); nullptr: not a gpt api call
  GptHandler handler;                    // nullptr: a call of the full module (gpt_full.cpp)
  // One line of Markdown: what the call does and answers. scripts/gen-gpt-api.mjs writes it into
  // docs/api.md's table of calls and web/gpt.d.ts; the table test fails for a row without one.
  const char* doc = nullptr;
};

// A row with an `out` argument (save): gpt api writes the answer's bytes to that path; the wasm
// method takes no such argument and returns the bytes (a Uint8Array, null on failure).
constexpr bool returns_bytes(const GptCall& c) {
  for (const GptArg& a : c.args)
    if (a.key && a.kind == ArgKind::out) return true;
  return false;
}

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
std::string run_memory_call(GptSession& s, const GptCallArgs& a);
std::string loss_by_position_call(GptSession& s, const GptCallArgs& a);
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
   [](GptSession& s, A a) { return s.create(a.spec("spec")); },
   "a new run from a [run spec](#the-run-spec) → the run's info"},
  {"load", R::run, {{"checkpoint", K::bytes, 0, "path"}, {"text", K::bytes, 0, "text_path"}}, {},
   R"({"call":"load","path":F,"text_path":T})", load_call,
   "a run from a checkpoint → the run's info (`text_path`/`text` only for a text run); also opens a model trained elsewhere (nanoGPT's `ckpt.pt`, Hugging Face's `model.safetensors` with its files beside it, a model-only `.safetensors`) for inference and `finetune`"},
  {"info", R::run, {}, {}, "", [](GptSession& s, A) { return s.info(); },
   R"(the run's info: `{"config","train","seed","data","vocab","tokenizer","source","n_params","step","steps","tokens_per_step","val_loss","has_data","diverged","divergence","kernels"}`)"},
  {"vocab", R::run, {{"spec", K::spec}}, {}, R"({"call":"vocab","spec":{"from":0,"count":100}})",
   [](GptSession& s, A a) { return s.vocab(a.spec("spec")); },
   R"(`{"from","vocab","vocab_size"}`: the tokens' texts from id `from` (0), `count` of them (to the end); `[]` for a model of token ids. `info`'s `"vocab"` lists a character vocabulary only: GPT-2's 50,257 pieces come from here)"},
  {"train", R::run, {{"n", K::whole}}, {}, R"({"call":"train","n":N})",
   [](GptSession& s, A a) { return s.train(a.whole("n")); },
   R"(up to `n` steps (1 … 100,000; stops at divergence) → `{"step","losses","lrs","grad_norms","diverged","divergence"}`)"},
  {"evaluate", R::run, {}, {}, "", [](GptSession& s, A) { return s.evaluate(); },
   R"(the mean loss over the validation windows → `{"step","val_loss"}`)"},
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
   },
   R"(`{"name","values"}`: a typed array the last calls left (the names of `calls`'s `results`: `logits`, `attention_weights`, `cache_keys`, …), its values as JSON — what the wasm module hands out as typed arrays (`session.logits()`: a `Float32Array`), for `gpt api`; an unknown name is refused (field `name`) listing them)"},
  // predicting and inspecting (gpt_session.cpp, gpt_predict.cpp; the walk: gpt_walk.cpp, the full module)
  {"sample", R::predict, {{"spec", K::spec}}, {}, R"({"call":"sample","spec":{…}})",
   [](GptSession& s, A a) { return s.sample(a.spec("spec")); },
   R"(text from a prompt ([the sampling spec](#the-sampling-spec)) → `{"text","new_text","tokens"}`)"},
  {"generate_start", R::predict, {{"spec", K::spec}},
   {"logits", "full_logits", "cache_attention", "cache_keys", "cache_values"}, "generate_start (spec)",
   [](GptSession& s, A a) { return s.generate_start(a.spec("spec")); },
   "runs the prompt (the sampling spec) through the KV cache → the first step (`generate_next`'s answer), leaving the step's logits, attention and cache"},
  {"generate_next", R::predict, {}, {"logits", "full_logits", "cache_attention", "cache_keys", "cache_values"}, "",
   [](GptSession& s, A) { return s.generate_next(); },
   R"(one more token through the cache → `{"token","text","base","cache_length","rebuilt","generated","tokens","max_abs_diff"}`, after a draw also `"draw"` and `"distribution"`)"},
  {"run_prompt", R::predict, {{"prompt", K::text, 1 << 20}}, {"attention_weights"}, R"({"call":"run_prompt","prompt":P})",
   [](GptSession& s, A a) { return s.run_prompt(a.text("prompt")); },
   R"(one forward pass over the prompt (its last block_size tokens) → `{"tokens","T","n_layer","n_head"}`, leaving `attention_weights` (n_layer, n_head, T, T))"},
  {"head_spec", R::predict, {{"layer", K::whole}, {"head", K::whole}}, {}, R"({"call":"head_spec","layer":L,"head":H})",
   [](GptSession& s, A a) {
     const int layer = a.whole("layer"), head = a.whole("head");
     return s.head_spec(layer, head);
   },
   R"(the stepper's spec of one head for the last `run_prompt` → `{"spec":{"Q","K","V","n_head":1,"causal":true,"mask","softmax"}}`)"},
  {"attention_maps", R::predict, {}, {}, "", [](GptSession& s, A) { return s.attention_maps_json(); },
   R"(run_prompt's weights as JSON: `{"tokens","T","n_layer","n_head","maps":[layer][head][T][T]}`)"},
  {"attention_summary", R::predict, {}, {"attention_mean", "attention_rollout"}, "",
   [](GptSession& s, A) { return s.attention_summary(); },
   R"(run_prompt's maps summed up in the reference order (`src/core/model/inspect.h`): `{"tokens","T","n_layer","head_mean":[layer][T][T],"rollout":[layer][T][T]}` — each layer's heads averaged, and attention rollout (Abnar and Zuidema 2020: ½·mean + ½·I, rows renormalised, multiplied layer by layer) up to each layer; before run_prompt, an error naming `prompt`)"},
  {"next_token", R::predict, {{"spec", K::spec}}, {},
   R"({"call":"next_token","spec":{"prompt":P,"temperature":T,"top_k":K,"top_p":P}})",
   [](GptSession& s, A a) { return s.next_token(a.spec("spec")); },
   "the [next-token distribution](#the-next-token-spec)"},
  {"surprisal", R::predict, {{"spec", K::spec}}, {}, R"({"call":"surprisal","spec":{"text":T}|{"validation":true}})",
   [](GptSession& s, A a) { return s.surprisal(a.spec("spec")); },
   R"(−log p of every token of a text, or of the validation windows (`{"validation":true}`: their mean is `evaluate`'s) → `{"windows":[{"offset","tokens","losses","mean"}],"count","mean","step"}`)"},
  {"block_trace", R::predict, {{"spec", K::spec}}, {}, R"({"call":"block_trace","spec":{"prompt":P,"position":N}})", nullptr,
   "the [block walk](#the-block-walk) (the [full module](#the-full-module))"},
  {"weight_row", R::predict, {{"spec", K::spec}}, {}, R"({"call":"weight_row","spec":{"weight":W,"layer":L,"row":R}})",
   nullptr,
   R"(one output's weights, for the terms of a matmul step → `{"weight","row","w","bias"}` (the [full module](#the-full-module)))"},
  // the interpretability tools (gpt_interp.cpp, core/interp/interp.h)
  {"lens", R::predict, {{"spec", K::spec}}, {}, R"({"call":"lens","spec":{"prompt":P,"top_k":5,"target":T}})",
   [](GptSession& s, A a) { return interp_call(s, "lens", a.spec("spec")); },
   R"(the [logit lens](#interpretability): `{"tokens","points","top":[point][position][k]{id,text,p},"targets","target_p","target_rank"}`)"},
  {"attribute", R::predict, {{"spec", K::spec}}, {},
   R"({"call":"attribute","spec":{"prompt":P,"token":A,"other":B,"position":N}})",
   [](GptSession& s, A a) { return interp_call(s, "attribute", a.spec("spec")); },
   R"([direct logit attribution](#interpretability): `{"tokens","position","token","other","heads":[layer][head],"mlps","attn_bias","mlp_bias","wte","wpe","ln_f_bias","sum","logit"}`)"},
  {"ablate", R::predict, {{"spec", K::spec}}, {},
   R"({"call":"ablate","spec":{"prompt":P,"mode":"zero"|"mean","reference":[P,…],"token":A,"other":B}})",
   [](GptSession& s, A a) { return interp_call(s, "ablate", a.spec("spec")); },
   R"([ablation](#interpretability): `{"tokens","mode","loss","metric"?,"head_loss","head_metric"?:[layer][head],"mlp_loss","mlp_metric"?}` (ablated − clean))"},
  {"patch", R::predict, {{"spec", K::spec}}, {},
   R"({"call":"patch","spec":{"clean":P,"corrupted":Q,"token":A,"other":B}})",
   [](GptSession& s, A a) { return interp_call(s, "patch", a.spec("spec")); },
   R"([activation patching](#interpretability): `{"tokens","corrupted_tokens","clean_metric","corrupted_metric","resid":[layer+1][position],"heads":[layer][head],"mlps"}` (fraction recovered))"},
  {"attribution_patch", R::predict, {{"spec", K::spec}}, {},
   R"({"call":"attribution_patch","spec":{"clean":P,"corrupted":Q,"token":A,"other":B}})",
   [](GptSession& s, A a) { return interp_call(s, "attribution_patch", a.spec("spec")); },
   R"(the same maps to first order (gradient × activation difference))"},
  {"head_scores", R::predict, {{"spec", K::spec}}, {}, R"({"call":"head_scores","spec":{"length":N,"batch":B,"seed":S}})",
   [](GptSession& s, A a) { return interp_call(s, "head_scores", a.spec("spec")); },
   R"(`{"length","batch","induction":[layer][head],"previous":[layer][head],"sequences"}`)"},
  {"save", R::run, {{"path", K::out}}, {}, R"({"call":"save","path":F})", save_call,
   R"(the checkpoint: `gpt api` writes it atomically to `path` → `{"bytes":N}`; the wasm method returns its bytes (a `Uint8Array`, or `null`: then `last_error()` says why))"},
  // the module: no session
  {"tasks", R::module, {}, {}, "", [](GptSession&, A) { return gpt_tasks_json(); },
   R"(the built-in tasks → `{"tasks":[{"name","description","example","attention","alphabet","loss_floor"}]}`)"},
  {"kernels", R::module, {{"tier", K::text, 64}}, {}, R"({"call":"kernels","tier":"reference"|"fast"})",
   [](GptSession&, A a) { return gpt_set_kernels(a.text("tier")); },
   R"(the kernel tier for every run → `{"kernels"}`: the tier now in use (`"reference"` or the fast tier's name))"},
  {"memory", R::module, {{"spec", K::spec}}, {}, R"({"call":"memory","spec":{…}})",
   [](GptSession&, A a) { return gpt_memory_json(a.spec("spec")); },
   R"(the bytes `create` of this spec would take and the core's limit → `{"bytes","limit"}` (no session needed); past the limit, `create`'s error)"},
  {"run_memory", R::run, {}, {}, "", run_memory_call,
   R"(the loaded run's size and memory, in bytes → `{"n_params","parameters" (4 per parameter),"allocated" (the model's buffers now: parameters, gradients, activations, KV cache; AdamW's moments not counted),"training" (a training step at batch_size × context, AdamW's moments counted: what `memory` gives for its spec),"inference" (one sequence of block_size, no gradients),"kv_cache" (the KV cache: keys and values of every layer, block_size × n_kv_head·head_dim floats each),"limit" (a run's: `memory`'s)}`)"},
  {"loss_by_position", R::predict, {{"spec", K::spec}}, {}, R"({"call":"loss_by_position","spec":{"context":128}})",
   loss_by_position_call,
   R"(the validation loss at each position of windows of `context` tokens (default block_size; longer than the model was made for with RoPE, ALiBi or no positions; learned positions are refused past block_size, naming wpe), over up to `batches` (default eval_batches) batches → `{"context","block_size","windows","losses" (one per position),"mean"}`)"},
  {"threads", R::run, {{"n", K::whole}}, {}, R"({"call":"threads","n":N})",
   [](GptSession& s, A a) { return s.set_threads(a.whole("n")); },
   R"(threads sharing each step of this session's runs and an opened model's forward (each Linear layer's columns, the norms and activations by rows, attention by heads, generation's products by columns: the same bits as one thread), 1 by default ([gpt.md](gpt.md#training)) → `{"threads","cores"}`; in wasm up to `loadGpt`'s threads in `gpt_core_mt` (`run.setThreads(n)`), 1 in `gpt_core` (the page's workers use `stepBegin` … `stepFinish`))"},
  {"encode", R::predict, {{"text", K::text, 1 << 24}}, {}, R"({"call":"encode","text":T})",
   [](GptSession& s, A a) { return s.encode(a.text("text")); },
   R"(the model's token ids of a text → `{"ids","tokens"}` (tokens: each token's text, such as GPT-2's `" the"`))"},
  {"decode", R::predict, {{"ids", K::json}}, {}, R"({"call":"decode","ids":[N,…]})",
   [](GptSession& s, A a) { return s.decode(a.json("ids")); },
   R"(the text of token ids → `{"text","tokens"}`)"},
  // opening a model and fine-tuning it (gpt_open.cpp, gpt_finetune.cpp: the full module)
  {"finetune_memory", R::open, {{"spec", K::spec}}, {}, R"({"call":"finetune_memory","spec":{"context":T,"batch_size":B}})",
   nullptr,
   R"(`{"need","available","fits","context","batch_size"}` (bytes), and when it does not fit `finetune`'s `"error"` and `"field"`: what fine-tuning the loaded model would take, checked before anything is allocated ([import.md](import.md#fine-tuning-a-model-trained-elsewhere)))"},
  {"finetune", R::open, {{"spec", K::spec}, {"text", K::text, size_t(1) << 26, "text_path"}}, {},
   R"({"call":"finetune","spec":{…},"text_path":F})", nullptr,
   R"(info, with `"base"`: the loaded model (an opened or imported one, or a run) becomes a run on the text (`"text"` or the file `"text_path"`), fresh AdamW, then `train`, `evaluate`, `save` as any run; refused (the model stays) for a context past block_size (`context`), a text under 2·(context + 1) tokens (`text`), memory (`context`, `batch_size` or `model`, both figures in the message))"},
  // this table (the wasm module's gpt_calls(): what web/gpt.js builds its methods from)
  {"calls", R::module, {}, {}, "", calls_call,
   R"(this table (`src/api/gpt_calls.h`): `{"calls":[{"name","role","args":[{"key","kind","file"?}],"results","api","example"?,"doc","full"?,"returns"?}],"results":[{"name","type"}],"stages":[{"name","type"}]}` — every call with its role (`run`, `predict`, `open`, `shards`, `module`), its arguments in the wasm method's order and their kinds, the typed arrays it leaves, whether `gpt api` takes it, and whether it is in the [full module](#the-full-module) only (`full`); `web/gpt.js` builds its methods from it)"},
  // the wasm module's only (bytes in)
  {"create_with_text", R::run, {{"spec", K::spec}, {"text", K::bytes}}, {}, nullptr,
   [](GptSession& s, A a) { return s.create_with_text(a.spec("spec"), a.bytes("text")); },
   R"(`create` with the text beside the spec, as bytes or a string (the spec then has no `"text"`) → the run's info)"},
  {"open_begin", R::open, {{"spec", K::spec}, {"head", K::bytes}, {"config", K::bytes}}, {}, nullptr, nullptr,
   R"(starts opening a model file read in slices: spec `{"name","size","config_name","slice"}`, the file's first bytes, a `config.json` or `""`; refuses (field `memory`) what will not fit → `{"size","need","left"}`)"},
  {"open_piece", R::open, {{"at", K::number}, {"bytes", K::bytes}}, {}, nullptr, nullptr,
   "bytes of the file from byte `at`, as `open_plan` asked for them"},
  {"open_plan", R::open, {{"spec", K::spec}, {"meta", K::bytes}, {"config", K::bytes}}, {}, nullptr, nullptr,
   R"(plans from the bytes given so far → `{"need":[[at,n],…]}`, or once the headers are read makes the model and the slice buffer → `{"read":[[at,n],…],"bytes"}`)"},
  {"open_feed", R::open, {{"n", K::number}}, {}, nullptr, nullptr,
   R"(the slice buffer's first `n` bytes are the next of the ranges → `{"left"}`)"},
  {"open_finish", R::open, {}, {}, nullptr, nullptr,
   R"(every range fed: the run becomes the opened model → info with `"opened"`)"},
  {"open_tokenizer", R::open, {{"spec", K::spec}, {"first", K::bytes}, {"second", K::bytes}}, {}, nullptr, nullptr,
   R"(GPT-2's tokenizer files for the model being opened (`tokenizer.json`, or `vocab.json` and `merges.txt`), checked now → `{"vocab_size"}`)"},
  {"open_cancel", R::open, {}, {}, nullptr, nullptr,
   "frees the opening under way (and the tokenizer files)"},
  {"open_files", R::open,
   {{"spec", K::spec}, {"config", K::bytes}, {"index", K::bytes}, {"tokenizer", K::bytes}, {"tokenizer_config", K::bytes}},
   {}, nullptr, nullptr,
   R"(starts opening a Llama-family model of several files: spec `{"name","files":[{"name","size"},…]}` (the `.safetensors` shards or one `.gguf`), the bytes of `config.json`, `model.safetensors.index.json`, `tokenizer.json`, `tokenizer_config.json` (each `""` when not given); a shard the index lists but not given, no `config.json`: refused by name → `{"format","files"}`)"},
  {"open_files_piece", R::open, {{"file", K::number}, {"at", K::number}, {"bytes", K::bytes}}, {}, nullptr, nullptr,
   "bytes of `files[file]` from byte `at`, as `open_files_plan` asked for them"},
  {"open_files_plan", R::open, {}, {}, nullptr, nullptr,
   R"(plans from the bytes given so far → `{"need":[[file,at,n],…]}`, or once the headers are read checks the model and the memory and makes the buffers for its weights → `{"read":[[file,at,n],…],"bytes"}`, fed with `open_view` / `open_feed`, then `open_finish`)"},
  // the data-parallel shards (gpt_shards.cpp)
  {"step_begin", R::shards, {{"n", K::whole}}, {"batch_ids", "batch_targets", "step_params"}, nullptr,
   [](GptSession& s, A a) { return s.shards().step_begin(a.whole("n")); },
   R"(a training step in `n` shares: the batch split by rows → `{"step","shares","T","rows"}`, leaving the batch and the parameters)"},
  {"step_own", R::shards, {}, {"step_grads", "step_losses"}, nullptr, [](GptSession& s, A) { return s.shards().step_own(); },
   R"(share 0's forward and backward here → `{"loss"}`, leaving its gradients and per-token losses)"},
  {"step_share", R::shards, {{"k", K::whole}}, {"step_share_grads", "step_losses"}, nullptr,
   [](GptSession& s, A a) { return s.shards().step_share(a.whole("k")); },
   R"(a mirror's share `k` of the step begun → `{"loss"}`, leaving its gradients and losses)"},
  {"step_add", R::shards, {{"grads", K::bytes}, {"losses", K::bytes}}, {}, nullptr,
   [](GptSession& s, A a) { return s.shards().step_add(a.bytes("grads"), a.bytes("losses")); },
   "adds the next share's gradients and per-token losses (the bytes of Float32Arrays)"},
  {"step_add_staged", R::shards, {}, {}, nullptr, [](GptSession& s, A) { return s.shards().step_add_staged(); },
   "`step_add` from the staging areas `stage_floats` and `stage_losses`"},
  {"step_finish", R::shards, {}, {}, nullptr, [](GptSession& s, A) { return s.shards().step_finish(); },
   "ends the step: clip, AdamW → `train`'s answer for one step"},
  {"shard_model", R::shards, {{"config", K::json}}, {}, nullptr,
   [](GptSession& s, A a) { return s.shards().shard_model(a.json("config")); },
   R"(makes this session a helper's model of a run's config (its info's `"config"`))"},
  {"shard_gradients", R::shards, {{"params", K::bytes}, {"ids", K::bytes}, {"targets", K::bytes}, {"batch_rows", K::whole}},
   {"shard_grads", "shard_losses"}, nullptr,
   [](GptSession& s, A a) {
     return s.shards().shard_gradients(a.bytes("params"), a.bytes("ids"), a.bytes("targets"), a.whole("batch_rows"));
   },
   R"(a helper's share: gradients of whole rows (ids, targets) with these parameters, scaled to `batch_rows` → `{"loss","rows"}`)"},
  {"shard_gradients_staged", R::shards, {{"batch_rows", K::whole}}, {"shard_grads", "shard_losses"}, nullptr,
   [](GptSession& s, A a) { return s.shards().shard_gradients_staged(a.whole("batch_rows")); },
   "`shard_gradients` from the staging areas"},
  {"eval_begin", R::shards, {{"n", K::whole}}, {"eval_ids", "eval_targets", "step_params"}, nullptr,
   [](GptSession& s, A a) { return s.shards().eval_begin(a.whole("n")); },
   R"(the validation batches split `n` ways → `{"step","shares","batches","B","T","bounds"}`, leaving their ids, targets and the parameters)"},
  {"eval_own", R::shards, {}, {}, nullptr, [](GptSession& s, A) { return s.shards().eval_own(); },
   "share 0's validation batches here"},
  {"eval_add_staged", R::shards, {}, {}, nullptr, [](GptSession& s, A) { return s.shards().eval_add_staged(); },
   "adds the next share's batch losses from `stage_losses`"},
  {"eval_finish", R::shards, {}, {}, nullptr, [](GptSession& s, A) { return s.shards().eval_finish(); },
   "ends the evaluation → `evaluate`'s answer"},
  {"shard_evaluate_staged", R::shards, {{"B", K::whole}, {"T", K::whole}}, {"shard_losses"}, nullptr,
   [](GptSession& s, A a) {
     const int B = a.whole("B"), T = a.whole("T");
     return s.shards().shard_evaluate_staged(B, T);
   },
   R"(a helper's validation batches (B rows of T tokens each) from the staging areas → `{"batches"}`, leaving their losses)"},
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
