// gpt_full_table.cpp — where gpt_full.h's handlers are found: natively always the linked one; in wasm
// the one a module's bindings registered (gpt_core_full and gpt_core_mt do; gpt_core does not, so
// the opening's, the fine-tuning's and the walk's code is not linked into it).
#include "api/gpt_full.h"

#include "api/gpt_session.h"
#include "api/spec.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/heap.h>
#include <malloc.h>
#include <unistd.h>
#endif

namespace ap {

namespace {
const GptFullCalls* registered_calls = nullptr;
}  // namespace

void set_gpt_full(const GptFullCalls* calls) { registered_calls = calls; }

const GptFullCalls* gpt_full() {
#ifdef __EMSCRIPTEN__
  return registered_calls;
#else
  return registered_calls ? registered_calls : &gpt_full_calls();
#endif
}

std::string (*need_gpt_full(const char* name))(GptSession&, const GptCallArgs&) {
  const GptFullCalls* calls = gpt_full();
  if (!calls)
    throw InputError("opening a model, fine-tuning it and the walk are in the full module (gpt_core_full), not in this one",
                     "piece");
  for (const GptFullCall& c : *calls)
    if (std::string(c.name) == name) return c.handler;
  throw InputError(std::string("the call ") + name + " has no handler", "call");
}

// What is left for opening a model (gpt_session.h), here rather than in gpt_open.cpp: the page
// asks before the full module is loaded.
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

}  // namespace ap
