// gpt_full.h — the handlers of the calls' table's full-module rows (gpt_calls.h: rows without a
// handler), the calls that run once per opening or per walk: opening a model trained elsewhere (gpt_open.cpp, with the safetensors and ckpt.pt
// planning, the restricted unpickler, the zip reader, GPT-2's config and tokenizer files, the
// weight fill), fine-tuning such a model (gpt_finetune.cpp, Trainer::finetune) and the walk
// through the block (gpt_walk.cpp, core/model/block_trace.h).
//
// Natively the table is linked in. In wasm a module's bindings register it (set_gpt_full): the
// training page's start module, web/gen/gpt_core.wasm, is built without it, and web/gpt.js loads
// web/gen/gpt_core_full.wasm (the same core with it) beside it on the first opening or walk; the
// threads build has it. Without it gpt_full() is null and every call through it is refused,
// field "piece" (docs/api.md "The full module").
#pragma once

#include <cstdint>
#include <string>
#include <cstddef>

namespace ap {

class GptSession;
class GptCallArgs;

// A full-module call's handler (gpt_calls.h's GptHandler), by the name of its row in kGptCalls.
struct GptFullCall {
  const char* name;
  std::string (*handler)(GptSession& s, const GptCallArgs& a);
};
// The handlers, a static array (no heap: the modules' heaps stay alike).
struct GptFullCalls {
  const GptFullCall* calls;
  size_t count;
  const GptFullCall* begin() const { return calls; }
  const GptFullCall* end() const { return calls + count; }
};

// The handlers, or null in a wasm module that did not register them (gpt_core).
const GptFullCalls* gpt_full();
// The handler of a call of the full module, or an InputError (field "piece"); for guarded code.
std::string (*need_gpt_full(const char* name))(GptSession&, const GptCallArgs&);
// The linked handlers (gpt_full.cpp), and their registration (a wasm module's bindings).
const GptFullCalls& gpt_full_calls();
void set_gpt_full(const GptFullCalls* calls);
// finetune's text, from the wasm method or gpt api ("text" or "text_path": gpt_calls.cpp).
std::string finetune_text(const GptCallArgs& a);

}  // namespace ap
