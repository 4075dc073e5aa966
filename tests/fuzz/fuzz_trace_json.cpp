// fuzz_trace_json.cpp — libFuzzer target for the JSON API: any bytes given to trace_json (and to
// the JSON reader behind every API function) must come back as one JSON object that starts with
// {"ok":true or {"ok":false, in valid UTF-8 — never a crash, a hang, an escaped exception, or
// output that a browser's JSON.parse would choke on. The same bytes also go to the JSON reader
// directly: a parsed object never holds a repeated key, and dumping it gives valid UTF-8 JSON.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "api/api.h"
#include "formats/json.h"
#include "core/base/utf8.h"

namespace {

void check_no_repeats(const ap::json::Value& v) {
  if (v.is_object()) {
    std::set<std::string> keys;
    for (const auto& m : v.members()) {
      if (!keys.insert(m.first).second) std::abort();  // a repeated key got through
      check_no_repeats(m.second);
    }
  } else if (v.is_array()) {
    for (const auto& item : v.items()) check_no_repeats(item);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const std::string& out : {ap::trace_json(text), ap::softmax_json(text), ap::parse_matrix_json(text)}) {
    if (out.rfind("{\"ok\":true", 0) != 0 && out.rfind("{\"ok\":false", 0) != 0) std::abort();
    if (!ap::utf8_valid(out)) std::abort();            // JSON text must be UTF-8 (RFC 8259 §8.1)
    const ap::json::Value v = ap::json::parse(out);  // our own output must read back
    if (!v.is_object()) std::abort();
  }
  ap::json::Value v;
  try {
    v = ap::json::parse(text);
  } catch (const ap::json::JsonError&) {
    return 0;
  }
  if (!ap::utf8_valid(text)) std::abort();  // the reader accepted invalid UTF-8
  check_no_repeats(v);
  const std::string again = v.dump();
  if (!ap::utf8_valid(again)) std::abort();
  ap::json::parse(again);  // a JsonError here escapes, which libFuzzer reports: the writer wrote bad JSON
  return 0;
}
