// gpt_cold.cpp — the table of gpt_cold.h: each entry calls the GptSession method of the same name.
// Linked natively, and into the wasm modules whose bindings register it (gpt_core_full, gpt_core_mt).
#include "api/gpt_cold.h"

#include "api/gpt_session.h"

namespace ap {

const GptColdCalls& gpt_cold_calls() {
  static const GptColdCalls calls = {
      [](GptSession& s, const std::string& spec, const std::string& head, const std::string& config) {
        return s.open_begin(spec, head, config);
      },
      [](GptSession& s, double at, std::string bytes) { return s.open_piece(at, std::move(bytes)); },
      [](GptSession& s, const std::string& spec, const std::string& meta, const std::string& config) {
        return s.open_plan(spec, meta, config);
      },
      [](GptSession& s, double n) { return s.open_feed(n); },
      [](GptSession& s) { return s.open_finish(); },
      [](GptSession& s, const std::string& spec, const std::string& first, const std::string& second) {
        return s.open_tokenizer(spec, first, second);
      },
      [](GptSession& s) { s.open_cancel(); },
      [](GptSession& s, const std::string& spec) { return s.block_trace(spec); },
      [](GptSession& s, const std::string& spec) { return s.weight_row(spec); },
      [](GptSession& s, const std::string& spec) { return s.finetune_memory(spec); },
      [](GptSession& s, const std::string& spec, const std::string& text) { return s.finetune(spec, text); },
  };
  return calls;
}

}  // namespace ap
