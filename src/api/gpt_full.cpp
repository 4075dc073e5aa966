// gpt_full.cpp — the handlers of the calls' table's full-module rows (gpt_full.h), each the GptSession
// method of its name. Linked natively, and into the wasm modules whose bindings register them
// (gpt_core_full, gpt_core_mt).
#include "api/gpt_full.h"

#include "api/gpt_calls.h"
#include "api/spec.h"

namespace ap {

const GptFullCalls& gpt_full_calls() {
  using A = const GptCallArgs&;
  static const GptFullCall handlers[] = {
      {"block_trace", [](GptSession& s, A a) { return s.block_trace(a.spec("spec")); }},
      {"weight_row", [](GptSession& s, A a) { return s.weight_row(a.spec("spec")); }},
      {"finetune_memory", [](GptSession& s, A a) { return s.finetune_memory(a.spec("spec")); }},
      {"finetune", [](GptSession& s, A a) {
         const std::string text = finetune_text(a);
         return s.finetune(a.spec("spec"), text);
       }},
      {"open_begin", [](GptSession& s, A a) { return s.open_begin(a.spec("spec"), a.bytes("head"), a.bytes("config")); }},
      {"open_piece", [](GptSession& s, A a) { return s.open_piece(a.number("at"), a.bytes("bytes")); }},
      {"open_plan", [](GptSession& s, A a) { return s.open_plan(a.spec("spec"), a.bytes("meta"), a.bytes("config")); }},
      {"open_feed", [](GptSession& s, A a) { return s.open_feed(a.number("n")); }},
      {"open_finish", [](GptSession& s, A) { return s.open_finish(); }},
      {"open_tokenizer",
       [](GptSession& s, A a) { return s.open_tokenizer(a.spec("spec"), a.bytes("first"), a.bytes("second")); }},
      {"open_files", [](GptSession& s, A a) {
         return s.open_files(a.spec("spec"), a.bytes("config"), a.bytes("index"), a.bytes("tokenizer"),
                             a.bytes("tokenizer_config"));
       }},
      {"open_files_piece", [](GptSession& s, A a) { return s.open_files_piece(a.number("file"), a.number("at"), a.bytes("bytes")); }},
      {"open_files_plan", [](GptSession& s, A) { return s.open_files_plan(); }},
      {"open_cancel", [](GptSession& s, A) {
         s.open_cancel();
         return spec::ok(json::Value::object()).dump();
       }},
  };
  static const GptFullCalls calls = {handlers, sizeof(handlers) / sizeof(handlers[0])};
  return calls;
}

}  // namespace ap
