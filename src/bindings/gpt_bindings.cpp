// gpt_bindings.cpp — the Embind layer of the GPT module (web/gen/gpt_core.mjs), and nothing else:
// it registers the calls' table (src/api/gpt_calls.h: kGptCalls, kGptResults, kGptStages) —
// each call a method of GptSession (role "module": a function gpt_<name>), its arguments
// positional in the row's order — and call_json (one `gpt api` line → its answer, without files).
// tests/wasm/gpt_calls.test.mjs checks that nothing else is registered.
//
// GptSession is an Embind class: JS makes one with `new M.GptSession()` and must `.delete()` it
// (web/gpt.js's run.free() does). A class rather than integer handles because a run is an object
// with state: Embind checks `this` on every call, refuses a deleted one, and needs no handle table
// in C++. Every call returns the session's JSON text, and no C++ exception crosses into JS (the
// calls catch them all; an escaped exception would leak wasm memory in Emscripten 3.1.6).
//
// Arguments: text, spec and json ones are strings (UTF-8), bytes ones a Uint8Array (Embind's
// std::string takes both: a checkpoint's bytes, a file's text), whole ones and numbers JS numbers.
// A result (kGptResults) comes out as NAME(), a Float32Array or Int32Array copy made here with
// `new Float32Array(view)` (a view into the heap would be detached by the next memory growth), or
// as NAME_view(), a view into the heap valid until the next call into the module (web/gpt.js copies
// from it at once: the data-parallel exchange, one typed-array copy and no allocation per step).
// The stages (stage_floats(n), …) are views to write a share into before a *_staged call. save()
// returns a Uint8Array, or null on failure (last_error() then says why). heap_bytes_in_use()
// reports malloc's live bytes, for the leak test in tests/wasm/.
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <string>
#include <utility>
#include <vector>

#include "api/gpt_calls.h"
#include "api/gpt_full.h"
#include "api/gpt_session.h"

namespace {

using ap::GptSession;
using emscripten::val;

val copy_of(const void* p, size_t n, bool ints) {
  if (ints) return val::global("Int32Array").new_(emscripten::typed_memory_view(n, static_cast<const int*>(p)));
  return val::global("Float32Array").new_(emscripten::typed_memory_view(n, static_cast<const float*>(p)));
}

val view_of(void* p, size_t n, bool ints) {
  if (ints) return val(emscripten::typed_memory_view(n, static_cast<int*>(p)));
  return val(emscripten::typed_memory_view(n, static_cast<float*>(p)));
}

// A result (kGptResults[I]) as a copy and as a view.
template <size_t I>
val result_copy(GptSession& s) {
  const void* p = nullptr;
  size_t n = 0;
  ap::kGptResults[I].get(s, p, n);
  return copy_of(p, n, ap::kGptResults[I].ints);
}

template <size_t I>
val result_view(GptSession& s) {
  const void* p = nullptr;
  size_t n = 0;
  ap::kGptResults[I].get(s, p, n);
  return view_of(const_cast<void*>(p), n, ap::kGptResults[I].ints);
}

// A staging area (kGptStages[I]) of n values as a view to write into.
template <size_t I>
val stage(GptSession& s, int n) {
  void* p = ap::kGptStages[I].area(s, n);
  return view_of(p, static_cast<size_t>(n > 0 ? n : 0), ap::kGptStages[I].ints);
}

// The C++ type a positional argument of this kind comes in as (Embind converts to it).
template <ap::ArgKind K>
struct ArgType {
  using type = const std::string&;
};
template <>
struct ArgType<ap::ArgKind::whole> {
  using type = int;
};
template <>
struct ArgType<ap::ArgKind::number> {
  using type = double;
};

ap::GptArgValue given(const std::string& s) { return {&s, 0}; }
ap::GptArgValue given(double x) { return {nullptr, x}; }

// The method of call row I: its positional arguments to call_given.
template <size_t I, class... T>
struct Method {
  static auto call(GptSession& s, T... v) {
    const ap::GptArgValue args[sizeof...(T) + 1] = {given(v)...};
    constexpr const ap::GptCall& row = ap::kGptCalls[I];
    if constexpr (ap::returns_bytes(row)) {
      std::string bytes;
      ap::call_given(s, row, args, &bytes);
      if (bytes.empty()) return val::null();
      const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
      return val::global("Uint8Array").new_(emscripten::typed_memory_view(bytes.size(), p));
    } else {
      return ap::call_given(s, row, args, nullptr);
    }
  }
  // a module row: no session of the caller's
  static std::string module(T... v) {
    static GptSession none;
    return call(none, v...);
  }
};

template <size_t I, size_t... J>
void add_call(emscripten::class_<GptSession>& c, std::index_sequence<J...>) {
  constexpr const ap::GptCall& row = ap::kGptCalls[I];
  using M = Method<I, typename ArgType<ap::positional_kind(row, J)>::type...>;
  if constexpr (row.role == ap::GptRole::module)
    emscripten::function((std::string("gpt_") + row.name).c_str(), &M::module);
  else
    c.function(row.name, &M::call);
}

template <size_t... I>
void add_calls(emscripten::class_<GptSession>& c, std::index_sequence<I...>) {
  (add_call<I>(c, std::make_index_sequence<ap::positional_count(ap::kGptCalls[I])>{}), ...);
}

template <size_t... I>
void add_results(emscripten::class_<GptSession>& c, std::index_sequence<I...>) {
  (c.function(ap::kGptResults[I].name, &result_copy<I>), ...);
  (c.function((std::string(ap::kGptResults[I].name) + "_view").c_str(), &result_view<I>), ...);
}

template <size_t... I>
void add_stages(emscripten::class_<GptSession>& c, std::index_sequence<I...>) {
  (c.function(ap::kGptStages[I].name, &stage<I>), ...);
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

bool full_loaded() { return ap::gpt_full() != nullptr; }

template <class T>
constexpr size_t count(const T& table) {
  return sizeof(table) / sizeof(table[0]);
}

}  // namespace

EMSCRIPTEN_BINDINGS(gpt_core) {
#ifdef AP_FULL_LINKED
  ap::set_gpt_full(&ap::gpt_full_calls());
#endif
  emscripten::function("heap_bytes_in_use", &heap_bytes_in_use);
  emscripten::function("open_memory", &open_memory);
  emscripten::function("full_loaded", &full_loaded);

  emscripten::class_<GptSession> session("GptSession");
  session.constructor<>();
  add_calls(session, std::make_index_sequence<ap::kGptCallCount>{});
  add_results(session, std::make_index_sequence<count(ap::kGptResults)>{});
  add_stages(session, std::make_index_sequence<count(ap::kGptStages)>{});
  session.function("open_view", &open_view);
  session.function("last_error", &last_error);
  session.function("call_json", emscripten::select_overload<std::string(GptSession&, const std::string&)>(&ap::call_json));
}
