// fuzz_trace_json.cpp — libFuzzer target for the JSON API: any bytes given to trace_json (and to
// the JSON reader behind every API function) must come back as one JSON object that starts with
// {"ok":true or {"ok":false — never a crash, a hang or an escaped exception.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "api/api.h"
#include "api/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const std::string& out : {ap::trace_json(text), ap::softmax_json(text), ap::parse_matrix_json(text)}) {
    if (out.rfind("{\"ok\":true", 0) != 0 && out.rfind("{\"ok\":false", 0) != 0) std::abort();
    const ap::json::Value v = ap::json::parse(out);  // our own output must read back
    if (!v.is_object()) std::abort();
  }
  return 0;
}
