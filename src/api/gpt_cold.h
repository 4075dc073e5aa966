// gpt_cold.h — the handlers of the calls' table's cold rows (gpt_calls.h: rows without a
// handler), the calls that run once per opening or per walk: opening a model trained elsewhere (gpt_open.cpp, with the safetensors and ckpt.pt
// planning, the restricted unpickler, the zip reader, GPT-2's config and tokenizer files, the
// weight fill), fine-tuning such a model (gpt_finetune.cpp, Trainer::finetune) and the walk
// through the block (gpt_walk.cpp, core/model/block_trace.h).
//
// Natively the table is linked in. In wasm a module's bindings register it (set_gpt_cold): the
// training page's start module, web/gen/gpt_core.wasm, is built without it, and web/gpt.js loads
// web/gen/gpt_core_full.wasm (the same core with it) beside it on the first opening or walk; the
// threads build has it. Without it gpt_cold() is null and every call through it is refused,
// field "piece" (docs/api.md "The second module").
#pragma once

#include <cstdint>
#include <string>
#include <cstddef>

namespace ap {

class GptSession;
class GptCallArgs;

// A cold call's handler (gpt_calls.h's GptHandler), by the name of its row in kGptCalls.
struct GptColdCall {
  const char* name;
  std::string (*handler)(GptSession& s, const GptCallArgs& a);
};
// The handlers, a static array (no heap: the modules' heaps stay alike).
struct GptColdCalls {
  const GptColdCall* calls;
  size_t count;
  const GptColdCall* begin() const { return calls; }
  const GptColdCall* end() const { return calls + count; }
};

// The handlers, or null in a wasm module that did not register them (gpt_core).
const GptColdCalls* gpt_cold();
// The handler of a cold call, or an InputError (field "piece"); for guarded code.
std::string (*need_gpt_cold(const char* name))(GptSession&, const GptCallArgs&);
// The linked handlers (gpt_cold.cpp), and their registration (a wasm module's bindings).
const GptColdCalls& gpt_cold_calls();
void set_gpt_cold(const GptColdCalls* calls);
// finetune's text, from the wasm method or gpt api ("text" or "text_path": gpt_calls.cpp).
std::string finetune_text(const GptCallArgs& a);

}  // namespace ap
