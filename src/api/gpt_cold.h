// gpt_cold.h — the session's calls that run once per opening or per walk, reached through one
// table: opening a model trained elsewhere (gpt_open.cpp, with the safetensors and ckpt.pt
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

namespace ap {

class GptSession;

struct GptColdCalls {
  std::string (*open_begin)(GptSession& s, const std::string& spec_json, const std::string& head,
                            const std::string& config_json);
  std::string (*open_piece)(GptSession& s, double at, std::string bytes);
  std::string (*open_plan)(GptSession& s, const std::string& spec_json, const std::string& meta,
                           const std::string& config_json);
  std::string (*open_feed)(GptSession& s, double n);
  std::string (*open_finish)(GptSession& s);
  std::string (*open_tokenizer)(GptSession& s, const std::string& spec_json, const std::string& first,
                                const std::string& second);
  void (*open_cancel)(GptSession& s);
  std::string (*block_trace)(GptSession& s, const std::string& spec_json);
  std::string (*weight_row)(GptSession& s, const std::string& spec_json);
  std::string (*finetune_memory)(GptSession& s, const std::string& spec_json);
  std::string (*finetune)(GptSession& s, const std::string& spec_json, const std::string& text);
};

// The table, or null in a wasm module that did not register it (gpt_core).
const GptColdCalls* gpt_cold();
// The table or an InputError (field "piece"); for guarded code.
const GptColdCalls& need_gpt_cold();
// The answer of a call refused for want of the table: {"ok":false,…,"field":"piece"}.
std::string gpt_cold_missing();
// The linked table (gpt_cold.cpp), and its registration (a wasm module's bindings).
const GptColdCalls& gpt_cold_calls();
void set_gpt_cold(const GptColdCalls* calls);

}  // namespace ap
