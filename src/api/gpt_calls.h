// gpt_calls.h — GptSession's calls as JSON lines: the `gpt api` protocol (docs/api.md), which the
// wasm module speaks too (GptSession.call_json).
//
// A call is one JSON object, {"call": NAME, …its arguments}; call_json answers with the session's
// JSON text verbatim, or with {"ok":false,"error","field"} naming the key of a malformed call (not
// an object, no "call", an unknown call, a key the call does not take, a missing argument). One
// table (gpt_calls()) holds every call: its name, the keys it takes, how the `gpt api` help writes
// it, and its handler; the "unknown call" message lists the names in the table's order. Adding a
// call is one row.
//
// Calls that name files (load: "path", "text_path"; save: "path") reach them through the
// FileAccess the caller gives: the `gpt` CLI gives its readers and the atomic checkpoint writer;
// without one (the wasm module) such a call is refused, naming "path". A reader's or writer's
// InputError is answered with the key that named the file as its field.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/gpt_session.h"
#include "formats/json.h"

namespace ap {

// How the calls that name files reach them; each throws InputError (any field).
struct FileAccess {
  std::function<std::string(const std::string& path)> read_checkpoint;
  std::function<std::string(const std::string& path)> read_text;
  std::function<void(const std::string& path, const std::string& bytes)> write_checkpoint;
};

// One call's arguments, and the readers the handlers share. Each throws InputError naming the key.
struct GptCallArgs {
  const json::Value& call;   // the whole call object
  const std::string& name;   // its "call"
  const FileAccess& files;
  const json::Value& need(const char* key) const;  // present and not null, or "the NAME call needs …"
  std::string spec_text() const;                   // "spec" as JSON text; "{}" when absent
  int whole(const char* key) const;                // a required whole number in int32's range
  std::string text(const char* key, size_t max_bytes) const;  // a required string
};

struct GptCall {
  const char* name;
  std::vector<std::string> keys;  // the arguments it takes, besides "call"
  const char* example;            // how the `gpt api` help writes it ("" writes the name alone)
  std::string (*handler)(GptSession& session, const GptCallArgs& args);
};

const std::vector<GptCall>& gpt_calls();

// One call → one answer (JSON text, one line). No exception leaves it.
std::string call_json(GptSession& session, const std::string& line);
std::string call_json(GptSession& session, const std::string& line, const FileAccess& files);

}  // namespace ap
