// gpt_calls.cpp — the table of GptSession's calls and call_json (see gpt_calls.h).
#include "api/gpt_calls.h"

#include <set>

#include "api/gpt_cold.h"
#include "api/spec.h"

namespace ap {

using json::Value;
using namespace spec;

const Value& GptCallArgs::need(const char* key) const {
  const Value* x = get(call, key);
  if (!x) throw InputError("the " + name + " call needs \"" + key + "\"", key);
  return *x;
}

std::string GptCallArgs::spec_text() const {
  const Value* x = get(call, "spec");
  return x ? x->dump() : std::string("{}");
}

int GptCallArgs::whole(const char* key) const {
  need(key);
  return static_cast<int>(read_int(call, key, 0, -(1LL << 31), (1LL << 31) - 1));
}

std::string GptCallArgs::text(const char* key, size_t max_bytes) const {
  need(key);
  return read_string(call, key, "", max_bytes);
}

namespace {

constexpr size_t kMaxPath = 4096;

// The caller's reader of a file named by `key`; its errors are answered with that key as field.
std::string read_through(const std::function<std::string(const std::string&)>& read, const std::string& path,
                         const char* key) {
  if (!read) throw InputError("this build reads no files (" + path + "): give the bytes to the session's load", key);
  try {
    return read(path);
  } catch (const InputError& e) {
    throw InputError(e.what(), key);
  }
}

std::string load(GptSession& s, const GptCallArgs& a) {
  const std::string path = a.text("path", kMaxPath);
  std::string text;
  if (get(a.call, "text_path")) text = read_through(a.files.read_text, a.text("text_path", kMaxPath), "text_path");
  return s.load(read_through(a.files.read_checkpoint, path, "path"), text);
}

std::string save(GptSession& s, const GptCallArgs& a) {
  const std::string path = a.text("path", kMaxPath);
  const std::string bytes = s.save();
  if (bytes.empty()) throw InputError(s.last_error(), "checkpoint");
  if (!a.files.write_checkpoint)
    throw InputError("this build writes no files (" + path + "): take the bytes from the session's save", "path");
  try {
    a.files.write_checkpoint(path, bytes);
  } catch (const InputError& e) {
    throw InputError(e.what(), "path");
  }
  Value r = Value::object();
  r.set("bytes", static_cast<long long>(bytes.size()));
  return ok(std::move(r)).dump();
}

std::string finetune(GptSession& s, const GptCallArgs& a) {
  if (get(a.call, "text") && get(a.call, "text_path"))
    throw InputError("give the text once: \"text\" or \"text_path\"", "text");
  const std::string text = get(a.call, "text_path")
                               ? read_through(a.files.read_text, a.text("text_path", kMaxPath), "text_path")
                               : a.text("text", size_t(1) << 26);
  return need_gpt_cold().finetune(s, a.spec_text(), text);
}

using A = const GptCallArgs&;

}  // namespace

const std::vector<GptCall>& gpt_calls() {
  static const std::vector<GptCall> calls = {
      {"create", {"spec"}, R"({"call":"create","spec":{…}})", [](GptSession& s, A a) { return s.create(a.spec_text()); }},
      {"load", {"path", "text_path"}, R"({"call":"load","path":F,"text_path":T})", load},
      {"info", {}, "", [](GptSession& s, A) { return s.info(); }},
      {"vocab", {"spec"}, R"({"call":"vocab","spec":{"from":0,"count":100}})",
       [](GptSession& s, A a) { return s.vocab(a.spec_text()); }},
      {"train", {"n"}, R"({"call":"train","n":N})", [](GptSession& s, A a) { return s.train(a.whole("n")); }},
      {"evaluate", {}, "", [](GptSession& s, A) { return s.evaluate(); }},
      {"sample", {"spec"}, R"({"call":"sample","spec":{…}})", [](GptSession& s, A a) { return s.sample(a.spec_text()); }},
      {"generate_start", {"spec"}, "generate_start (spec)",
       [](GptSession& s, A a) { return s.generate_start(a.spec_text()); }},
      {"generate_next", {}, "", [](GptSession& s, A) { return s.generate_next(); }},
      {"run_prompt", {"prompt"}, R"({"call":"run_prompt","prompt":P})",
       [](GptSession& s, A a) { return s.run_prompt(a.text("prompt", 1 << 20)); }},
      {"head_spec", {"layer", "head"}, R"({"call":"head_spec","layer":L,"head":H})",
       [](GptSession& s, A a) {
         const int layer = a.whole("layer"), head = a.whole("head");
         return s.head_spec(layer, head);
       }},
      {"attention_maps", {}, "", [](GptSession& s, A) { return s.attention_maps_json(); }},
      {"attention_summary", {}, "", [](GptSession& s, A) { return s.attention_summary(); }},
      {"next_token", {"spec"}, R"({"call":"next_token","spec":{"prompt":P,"temperature":T,"top_k":K,"top_p":P}})",
       [](GptSession& s, A a) { return s.next_token(a.spec_text()); }},
      {"surprisal", {"spec"}, R"({"call":"surprisal","spec":{"text":T}|{"validation":true}})",
       [](GptSession& s, A a) { return s.surprisal(a.spec_text()); }},
      {"block_trace", {"spec"}, R"({"call":"block_trace","spec":{"prompt":P,"position":N}})",
       [](GptSession& s, A a) { return need_gpt_cold().block_trace(s, a.spec_text()); }},
      {"weight_row", {"spec"}, R"({"call":"weight_row","spec":{"weight":W,"layer":L,"row":R}})",
       [](GptSession& s, A a) { return need_gpt_cold().weight_row(s, a.spec_text()); }},
      {"save", {"path"}, R"({"call":"save","path":F})", save},
      {"tasks", {}, "", [](GptSession&, A) { return gpt_tasks_json(); }},
      {"kernels", {"tier"}, R"({"call":"kernels","tier":"reference"|"fast"})",
       [](GptSession&, A a) { return gpt_set_kernels(a.text("tier", 64)); }},
      {"memory", {"spec"}, R"({"call":"memory","spec":{…}})", [](GptSession&, A a) { return gpt_memory_json(a.spec_text()); }},
      {"threads", {"n"}, R"({"call":"threads","n":N})", [](GptSession& s, A a) { return s.set_threads(a.whole("n")); }},
      {"encode", {"text"}, R"({"call":"encode","text":T})", [](GptSession& s, A a) { return s.encode(a.text("text", 1 << 24)); }},
      {"decode", {"ids"}, R"({"call":"decode","ids":[N,…]})", [](GptSession& s, A a) { return s.decode(a.need("ids").dump()); }},
      {"finetune_memory", {"spec"}, R"({"call":"finetune_memory","spec":{"context":T,"batch_size":B}})",
       [](GptSession& s, A a) { return need_gpt_cold().finetune_memory(s, a.spec_text()); }},
      {"finetune", {"spec", "text", "text_path"}, R"({"call":"finetune","spec":{…},"text_path":F})", finetune},
  };
  return calls;
}

std::string call_json(GptSession& session, const std::string& line) { return call_json(session, line, FileAccess{}); }

std::string call_json(GptSession& session, const std::string& line, const FileAccess& files) {
  std::string answer;
  const std::string envelope = guarded([&] {
    const Value v = json::parse(line);
    if (!v.is_object()) throw InputError("a call must be a JSON object such as {\"call\":\"info\"}", "call");
    if (!v.find("call")) throw InputError("the call has no \"call\" (what to do: create, load, train, …)", "call");
    const std::string name = read_string(v, "call", "", 64);
    const GptCall* call = nullptr;
    std::string names;
    for (const GptCall& c : gpt_calls()) {
      if (name == c.name) call = &c;
      names += std::string(names.empty() ? "" : ", ") + c.name;
    }
    if (!call) throw InputError("unknown call \"" + json::excerpt(name) + "\": the calls are " + names, "call");
    std::set<std::string> known(call->keys.begin(), call->keys.end());
    known.insert("call");
    reject_unknown_keys(v, known, name + " call");
    answer = call->handler(session, GptCallArgs{v, name, files});
    return Value::object();
  });
  return answer.empty() ? envelope : answer;
}

}  // namespace ap
