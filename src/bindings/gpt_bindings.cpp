// gpt_bindings.cpp — the Embind layer of the GPT module (web/gen/gpt_core.mjs), and nothing else:
// it exposes GptSession (src/api/gpt_session.h) and the functions of no session; call_json
// (src/api/gpt_calls.h) as a method: one `gpt api` call line → its answer, without files.
//
// GptSession is an Embind class: JS makes one with `new M.GptSession()` and must `.delete()` it
// (web/gpt.js's run.free() does). A class rather than integer handles because a run is an object
// with state: Embind checks `this` on every call, refuses a deleted one, and needs no handle table
// in C++. Every method returns the session's JSON text, and no C++ exception crosses into JS (the
// session catches them all; an escaped exception would leak wasm memory in Emscripten 3.1.6).
//
// Strings in are UTF-8 (a JS string), or bytes (a Uint8Array, for checkpoint bytes and a file's
// text: Embind's std::string takes both). Float results come out as Float32Array and checkpoint
// bytes as Uint8Array, each a copy made here with `new Float32Array(view)`: a view into the heap
// would be detached by the next memory growth. save() returns null on failure; last_error() then
// says why. The data-parallel calls (step_*, shard_*) take floats and ints as bytes (a Uint8Array
// over the typed array's buffer) and give Float32Array / Int32Array copies; their *_view and stage_*
// twins give views into the heap instead (below), so a step's parameters and gradients cross with
// one typed-array copy each and no allocation. heap_bytes_in_use() reports malloc's live bytes, for the leak test in tests/wasm/.
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <string>
#include <utility>
#include <vector>

#include "api/gpt_calls.h"
#include "api/gpt_cold.h"
#include "api/gpt_session.h"

namespace {

using ap::GptSession;
using emscripten::val;

val copy_floats(const std::vector<float>& v) {
  return val::global("Float32Array").new_(emscripten::typed_memory_view(v.size(), v.data()));
}

// A session's float result (one of its accessors) as a Float32Array.
template <const std::vector<float>& (GptSession::*result)() const>
val floats(const GptSession& s) {
  return copy_floats((s.*result)());
}

val copy_ints(const std::vector<int>& v) {
  return val::global("Int32Array").new_(emscripten::typed_memory_view(v.size(), v.data()));
}

// A session's int result as an Int32Array.
template <const std::vector<int>& (GptSession::*result)() const>
val ints(const GptSession& s) {
  return copy_ints((s.*result)());
}

val save(GptSession& s) {
  const std::string bytes = s.save();
  if (!s.last_error().empty()) return val::null();
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  return val::global("Uint8Array").new_(emscripten::typed_memory_view(bytes.size(), p));
}

// Views into the heap, not copies (the data-parallel exchange, per step): valid until the next call
// into the module, which may grow the memory and detach them. web/gpt.js copies from or into them
// at once.
template <class T, const std::vector<T>& (GptSession::*result)() const>
val heap_view(const GptSession& s) {
  const std::vector<T>& v = (s.*result)();
  return val(emscripten::typed_memory_view(v.size(), v.data()));
}

// A staging area of n values (GptSession::stage_*) as a view to write into.
template <class T, T* (GptSession::*area)(int)>
val stage(GptSession& s, int n) {
  T* p = (s.*area)(n);
  return val(emscripten::typed_memory_view(static_cast<size_t>(n > 0 ? n : 0), p));
}

// step_own's gradients, a view of the model's (valid until the next step_add or step).
val step_grads_view(GptSession& s) {
  const float* p = nullptr;
  size_t n = 0;
  s.step_grads(p, n);
  return val(emscripten::typed_memory_view(n, p));
}

std::string last_error(const GptSession& s) { return s.last_error(); }

val open_view(GptSession& s, double offset, double length) {
  const double size = static_cast<double>(s.open_size());
  if (!(offset >= 0 && length >= 0 && offset + length <= size)) return val::null();
  auto* p = reinterpret_cast<unsigned char*>(s.open_buffer()) + static_cast<size_t>(offset);
  return val(emscripten::typed_memory_view(static_cast<size_t>(length), p));
}

val open_memory() {
  val v = val::object();
  v.set("left", static_cast<double>(ap::open_memory_left()));
  v.set("max", static_cast<double>(ap::open_memory_max()));
  return v;
}

double heap_bytes_in_use() { return static_cast<double>(mallinfo().uordblks); }

// The calls of gpt_cold.h (opening, fine-tuning, the walk): through its table, registered in the modules built
// with it (AP_COLD_LINKED: gpt_core_full, gpt_core_mt); gpt_core refuses them, field "piece".
using ap::GptColdCalls;
using Text = const std::string&;

template <class... A>
struct Cold {
  template <std::string (*const GptColdCalls::*call)(GptSession&, A...)>
  static std::string method(GptSession& s, A... a) {
    const ap::GptColdCalls* c = ap::gpt_cold();
    return c ? (c->*call)(s, std::forward<A>(a)...) : ap::gpt_cold_missing();
  }
};

void open_cancel(GptSession& s) {
  if (const ap::GptColdCalls* c = ap::gpt_cold()) c->open_cancel(s);
}

bool cold_loaded() { return ap::gpt_cold() != nullptr; }

}  // namespace

EMSCRIPTEN_BINDINGS(gpt_core) {
#ifdef AP_COLD_LINKED
  ap::set_gpt_cold(&ap::gpt_cold_calls());
#endif
  emscripten::function("gpt_tasks_json", &ap::gpt_tasks_json);
  emscripten::function("gpt_set_kernels", &ap::gpt_set_kernels);
  emscripten::function("gpt_memory_json", &ap::gpt_memory_json);
  emscripten::function("heap_bytes_in_use", &heap_bytes_in_use);
  emscripten::function("open_memory", &open_memory);
  emscripten::function("cold_loaded", &cold_loaded);

  emscripten::class_<GptSession>("GptSession")
      .constructor<>()
      .function("create", &GptSession::create)
      .function("create_with_text", &GptSession::create_with_text)
      .function("load", &GptSession::load)
      .function("info", &GptSession::info)
      .function("vocab", &GptSession::vocab)
      .function("train", &GptSession::train)
      .function("evaluate", &GptSession::evaluate)
      .function("sample", &GptSession::sample)
      .function("generate_start", &GptSession::generate_start)
      .function("generate_next", &GptSession::generate_next)
      .function("run_prompt", &GptSession::run_prompt)
      .function("head_spec", &GptSession::head_spec)
      .function("attention_maps_json", &GptSession::attention_maps_json)
      .function("attention_summary", &GptSession::attention_summary)
      .function("next_token", &GptSession::next_token)
      .function("surprisal", &GptSession::surprisal)
      .function("block_trace", &Cold<Text>::method<&GptColdCalls::block_trace>)
      .function("weight_row", &Cold<Text>::method<&GptColdCalls::weight_row>)
      .function("encode", &GptSession::encode)
      .function("decode", &GptSession::decode)
      .function("logits", &floats<&GptSession::logits>)
      .function("full_logits", &floats<&GptSession::full_logits>)
      .function("attention_weights", &floats<&GptSession::attention_weights>)
      .function("attention_mean", &floats<&GptSession::attention_mean>)
      .function("attention_rollout", &floats<&GptSession::attention_rollout>)
      .function("cache_attention", &floats<&GptSession::cache_attention>)
      .function("cache_keys", &floats<&GptSession::cache_keys>)
      .function("cache_values", &floats<&GptSession::cache_values>)
      .function("open_begin", &Cold<Text, Text, Text>::method<&GptColdCalls::open_begin>)
      .function("open_piece", &Cold<double, std::string>::method<&GptColdCalls::open_piece>)
      .function("open_plan", &Cold<Text, Text, Text>::method<&GptColdCalls::open_plan>)
      .function("open_view", &open_view)
      .function("open_feed", &Cold<double>::method<&GptColdCalls::open_feed>)
      .function("open_finish", &Cold<>::method<&GptColdCalls::open_finish>)
      .function("open_tokenizer", &Cold<Text, Text, Text>::method<&GptColdCalls::open_tokenizer>)
      .function("open_cancel", &open_cancel)
      .function("finetune_memory", &Cold<Text>::method<&GptColdCalls::finetune_memory>)
      .function("finetune", &Cold<Text, Text>::method<&GptColdCalls::finetune>)
      .function("save", &save)
      .function("step_begin", &GptSession::step_begin)
      .function("step_own", &GptSession::step_own)
      .function("step_share", &GptSession::step_share)
      .function("step_grads_view", &step_grads_view)
      .function("step_share_grads_view", &heap_view<float, &GptSession::step_share_grads>)
      .function("step_losses_view", &heap_view<float, &GptSession::step_losses>)
      .function("step_add", &GptSession::step_add)
      .function("step_finish", &GptSession::step_finish)
      .function("shard_model", &GptSession::shard_model)
      .function("shard_gradients", &GptSession::shard_gradients)
      .function("step_params", &floats<&GptSession::step_params>)
      .function("batch_ids", &ints<&GptSession::batch_ids>)
      .function("batch_targets", &ints<&GptSession::batch_targets>)
      .function("shard_grads", &floats<&GptSession::shard_grads>)
      .function("shard_losses", &floats<&GptSession::shard_losses>)
      .function("step_params_view", &heap_view<float, &GptSession::step_params>)
      .function("batch_ids_view", &heap_view<int, &GptSession::batch_ids>)
      .function("batch_targets_view", &heap_view<int, &GptSession::batch_targets>)
      .function("shard_grads_view", &heap_view<float, &GptSession::shard_grads>)
      .function("shard_losses_view", &heap_view<float, &GptSession::shard_losses>)
      .function("stage_floats", &stage<float, &GptSession::stage_floats>)
      .function("stage_losses", &stage<float, &GptSession::stage_losses>)
      .function("stage_ids", &stage<int, &GptSession::stage_ids>)
      .function("stage_targets", &stage<int, &GptSession::stage_targets>)
      .function("step_add_staged", &GptSession::step_add_staged)
      .function("shard_gradients_staged", &GptSession::shard_gradients_staged)
      .function("eval_begin", &GptSession::eval_begin)
      .function("eval_own", &GptSession::eval_own)
      .function("eval_add_staged", &GptSession::eval_add_staged)
      .function("eval_finish", &GptSession::eval_finish)
      .function("shard_evaluate_staged", &GptSession::shard_evaluate_staged)
      .function("eval_ids_view", &heap_view<int, &GptSession::eval_ids>)
      .function("eval_targets_view", &heap_view<int, &GptSession::eval_targets>)
      .function("last_error", &last_error)
      .function("call_json", emscripten::select_overload<std::string(GptSession&, const std::string&)>(&ap::call_json));
}
