// test_gpt_session.cpp — GptSession (src/api/gpt_session.h), the JSON face that the wasm module
// and `gpt api` share, on the points the bindings rely on:
//  - create_with_text takes the text as bytes beside the spec: invalid UTF-8 is named by its byte
//    offset, a text also given in the spec is refused, and the result equals create with the text
//    in the spec;
//  - a failed create leaves the current run as it was;
//  - answers write float32 values with float32's shortest digits (create/info: "lr":0.001, not a
//    double's 17 digits; a generation step's max_abs_diff likewise);
//  - gpt_memory_json is GPT::memory_bytes of the run create would make (the data's vocabulary,
//    batch_size × block_size), and create's error past the limit;
//  - call_json (gpt_calls.h), the calls' table: a line answered as the method would (and as the
//    wasm methods' positional way in, call_given, answers), the "unknown call" message listing the
//    table's gpt api names in order, each full-module row's handler in gpt_full.cpp, the files reached only through the
//    FileAccess given (without one refused, named by the key that names the file; a reader's
//    error answered with that key);
//  - run_memory: the run's parameter count against GPT-2's layout counted by hand, its training
//    bytes the memory call's for the same spec, its KV cache's bytes by hand (and with n_kv_head);
//  - loss_by_position: one loss per position, at block_size and past it (RoPE), refused for
//    learned positions past block_size (field "context");
//  - attention_summary: the head means and the rollout of run_prompt's maps (inspect.h), as JSON
//    and as flat arrays alike; before a prompt, the error names "prompt".
// The whole API is exercised from JS in tests/wasm/gpt.test.mjs and compared with `gpt api` there.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "api/gpt_calls.h"
#include "api/gpt_full.h"
#include "api/gpt_session.h"
#include "core/attention/attention.h"
#include "core/model/gpt.h"
#include "core/model/inspect.h"
#include "json_test_util.h"

namespace {

const char* kSmall = R"({"n_layer":1,"n_embd":16,"n_head":2,"block_size":8,"batch_size":2,"eval_batches":1,"seed":3)";

std::string spec(const std::string& extra = "") { return std::string(kSmall) + extra + "}"; }

const std::string kText = "the quick brown fox jumps over the lazy dog. the dog sleeps.";

}  // namespace

TEST_CASE("GptSession::create_with_text: bytes beside the spec", "[gpt][api]") {
  ap::GptSession a, b;
  const std::string with_bytes = a.create_with_text(spec(), kText);
  const std::string in_spec = b.create(spec(",\"text\":\"" + kText + "\""));
  REQUIRE(with_bytes.rfind("{\"ok\":true", 0) == 0);
  CHECK(with_bytes == in_spec);
  CHECK(a.train(3) == b.train(3));

  const jt::Value bad = jt::parse(a.create_with_text(spec(), std::string("ab\xff") + kText));
  CHECK(bad.find("ok")->b == false);
  CHECK(bad.find("field")->str == "text");
  CHECK(bad.find("error")->str.find("byte 2") != std::string::npos);

  const jt::Value twice = jt::parse(a.create_with_text(spec(",\"text\":\"abc\""), kText));
  CHECK(twice.find("field")->str == "text");
  CHECK(jt::parse(a.create_with_text(spec(), "")).find("field")->str == "text");
  CHECK(jt::parse(a.create_with_text("[1]", kText)).find("ok")->b == false);
  CHECK(jt::parse(a.create_with_text("{\"task\":\"copy\"}", kText)).find("field")->str == "task");

  // The failures above left the run as it was: it trains on.
  const jt::Value t = jt::parse(a.train(1));
  CHECK(t.find("ok")->b == true);
  CHECK(t.find("step")->num == 4);
}

TEST_CASE("GptSession: float32 values keep float32's shortest digits", "[gpt][api]") {
  ap::GptSession s;
  const std::string info = s.create(spec(",\"task\":\"copy\",\"n_chars\":2000,\"lr\":0.001,\"weight_decay\":0.1"));
  CHECK(info.find("\"lr\":0.001,") != std::string::npos);
  CHECK(info.find("\"weight_decay\":0.1,") != std::string::npos);
  CHECK(info == s.info());
  const std::string step = s.generate_start("{\"prompt\":\"abc\",\"greedy\":true}");
  const jt::Value v = jt::parse(step);
  REQUIRE(v.find("ok")->b == true);
  // Whatever its value, max_abs_diff is written as a float32 (at most 9 significant digits).
  const std::string& diff = v.find("max_abs_diff")->str;
  CHECK(diff.size() <= 16);
}

TEST_CASE("GptSession::attention_summary: the head means and the rollout of the last prompt's maps", "[gpt][api]") {
  ap::GptSession s;
  const std::string created = s.create(
      R"({"n_layer":3,"n_embd":16,"n_head":2,"block_size":8,"batch_size":2,"eval_batches":1,"seed":3,"task":"copy","n_chars":2000})");
  REQUIRE(jt::parse(created).find("ok")->b == true);
  jt::Value v = jt::parse(s.attention_summary());
  CHECK(v.find("ok")->b == false);
  CHECK(v.find("field")->str == "prompt");
  REQUIRE(jt::parse(s.run_prompt("abc=ab")).find("ok")->b == true);
  v = jt::parse(s.attention_summary());
  REQUIRE(v.find("ok")->b == true);
  const int L = 3, NH = 2, T = 6;
  CHECK(v.find("T")->num == T);
  CHECK(v.find("n_layer")->num == L);
  std::vector<float> mean(static_cast<size_t>(L) * T * T), roll(mean.size());
  ap::head_mean(mean.data(), s.attention_weights().data(), L, NH, T);
  ap::attention_rollout(roll.data(), mean.data(), L, T);
  CHECK(s.attention_mean() == mean);
  CHECK(s.attention_rollout() == roll);
  const jt::Value& jm = *v.find("head_mean");
  const jt::Value& jr = *v.find("rollout");
  REQUIRE(jm.arr.size() == L);
  REQUIRE(jr.arr.size() == L);
  for (int l = 0; l < L; ++l)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        const size_t k = (static_cast<size_t>(l) * T + i) * T + j;
        CHECK(static_cast<float>(jm.arr[l].arr[i].arr[j].num) == mean[k]);
        CHECK(static_cast<float>(jr.arr[l].arr[i].arr[j].num) == roll[k]);
      }
  // each rollout row sums to 1 (the ½·I keeps every row's mass), and no key after the query
  for (int i = 0; i < T; ++i) {
    double sum = 0;
    for (int j = 0; j < T; ++j) sum += roll[(static_cast<size_t>(L - 1) * T + i) * T + j];
    CHECK(sum == Approx(1.0).epsilon(1e-5));
    for (int j = i + 1; j < T; ++j) CHECK(roll[(static_cast<size_t>(L - 1) * T + i) * T + j] == 0.0f);
  }
}

TEST_CASE("gpt_memory_json: the bytes of the run create would make, and create's error past the limit", "[gpt][api]") {
  const jt::Value m = jt::parse(ap::gpt_memory_json(spec(",\"text\":\"" + kText + "\"")));
  REQUIRE(m.find("ok")->b == true);
  ap::GptSession s;
  const jt::Value info = jt::parse(s.create(spec(",\"text\":\"" + kText + "\"")));
  ap::GPTConfig c = ap::GPTConfig::tiny(static_cast<int>(info.find("vocab")->arr.size()));
  c.n_layer = 1;
  c.n_embd = 16;
  c.n_head = 2;
  c.block_size = 8;
  CHECK(m.find("bytes")->num == static_cast<double>(ap::GPT::memory_bytes(c, 2, 8)));
  CHECK(s.trainer()->model().allocated_bytes() <= ap::GPT::memory_bytes(c, 2, 8));
  CHECK(m.find("limit")->num == static_cast<double>(ap::kMaxModelBytes));
  // a task's vocabulary is its alphabet ("copy": a–j, '=' and '\n')
  c.vocab_size = 12;
  CHECK(jt::parse(ap::gpt_memory_json(spec(",\"task\":\"copy\""))).find("bytes")->num ==
        static_cast<double>(ap::GPT::memory_bytes(c, 2, 8)));
  // past the limit: create's words, naming the batch (or the model alone)
  const std::string big = R"({"n_layer":8,"n_embd":256,"block_size":128,"batch_size":64})";
  const jt::Value e = jt::parse(ap::gpt_memory_json(big));
  CHECK(e.find("ok")->b == false);
  CHECK(e.find("field")->str == "batch_size");
  CHECK(e.find("error")->str == jt::parse(ap::GptSession().create(big)).find("error")->str);
  CHECK(jt::parse(ap::gpt_memory_json(R"({"n_layer":32,"n_embd":1024,"n_head":16})")).find("field")->str == "n_embd");
  CHECK(jt::parse(ap::gpt_memory_json(R"({"colour":1})")).find("field")->str == "colour");
  CHECK(jt::parse(ap::gpt_memory_json("[")).find("ok")->b == false);
}

TEST_CASE("call_json: the calls' table, and files only through the caller's FileAccess", "[gpt][api]") {
  ap::GptSession a, b;
  CHECK(ap::call_json(a, "{\"call\":\"create\",\"spec\":" + spec() + "}") == b.create(spec()));
  CHECK(ap::call_json(a, R"({"call":"train","n":2})") == b.train(2));

  std::string names;
  for (const ap::GptCall& c : ap::kGptCalls)
    if (c.example) names += std::string(names.empty() ? "" : ", ") + c.name;
  CHECK(names.rfind("create, load, info, vocab, train, evaluate", 0) == 0);
  const jt::Value unknown = jt::parse(ap::call_json(a, R"({"call":"fly"})"));
  CHECK(unknown.find("error")->str == "unknown call \"fly\": the calls are " + names);

  // The same row through the wasm methods' way in (positional arguments): the same answer.
  const std::string n3 = "3";
  ap::GptArgValue given[1] = {{nullptr, 3}};
  CHECK(ap::call_given(a, *ap::find_gpt_call("train"), given, nullptr) == b.train(3));
  ap::GptArgValue prompt[1] = {{&n3, 0}};
  CHECK(ap::call_given(a, *ap::find_gpt_call("run_prompt"), prompt, nullptr) == b.run_prompt("3"));

  // result: a typed array the calls left, as JSON — the values of run_prompt's maps, and of an
  // int result (a step's batch); an unknown name refused, naming the results.
  const jt::Value maps = jt::parse(ap::call_json(a, R"({"call":"result","name":"attention_weights"})"));
  REQUIRE(maps.find("values"));
  const std::vector<float>& w = a.attention_weights();
  REQUIRE(maps.find("values")->arr.size() == w.size());
  for (size_t i = 0; i < w.size(); ++i) CHECK(static_cast<float>(maps.find("values")->arr[i].num) == w[i]);
  CHECK(jt::parse(ap::call_json(a, R"({"call":"step_begin","n":2})")).find("error"));  // the wasm module's only
  a.shards().step_begin(2);
  const jt::Value ids = jt::parse(ap::call_json(a, R"({"call":"result","name":"batch_ids"})"));
  REQUIRE(ids.find("values")->arr.size() == a.shards().batch_ids().size());
  CHECK(ids.find("values")->arr[1].num == a.shards().batch_ids()[1]);
  const jt::Value bad = jt::parse(ap::call_json(a, R"({"call":"result","name":"weights"})"));
  CHECK(bad.find("field")->str == "name");
  CHECK(bad.find("error")->str.find("the results are logits, full_logits,") != std::string::npos);

  // Each full-module row (no handler in the table) has its handler in gpt_full.cpp, and no other has one.
  std::set<std::string> full_rows;
  for (const ap::GptFullCall& c : ap::gpt_full_calls()) CHECK(full_rows.insert(c.name).second);
  for (const ap::GptCall& c : ap::kGptCalls) CHECK(full_rows.erase(c.name) == (c.handler ? 0u : 1u));
  CHECK(full_rows.empty());

  // No FileAccess: a call that names a file is refused, naming the key; the run stays.
  jt::Value r = jt::parse(ap::call_json(a, R"({"call":"load","path":"x.safetensors","text_path":"t.txt"})"));
  CHECK(r.find("field")->str == "text_path");
  CHECK(r.find("error")->str.find("reads no files (t.txt)") != std::string::npos);
  r = jt::parse(ap::call_json(a, R"({"call":"save","path":"x.safetensors"})"));
  CHECK(r.find("field")->str == "path");
  CHECK(ap::call_json(a, R"({"call":"info"})") == b.info());

  // Through a FileAccess: save writes, load reads; a reader's error is answered with its key.
  std::string file;
  ap::FileAccess files;
  files.write_checkpoint = [&](const std::string& path, const std::string& bytes) {
    if (path != "m.safetensors") throw ap::InputError("no room", "somewhere");
    file = bytes;
  };
  files.read_checkpoint = [&](const std::string&) { return file; };
  files.read_text = [](const std::string& path) -> std::string { throw ap::InputError("cannot read " + path, ""); };
  r = jt::parse(ap::call_json(a, R"({"call":"save","path":"m.safetensors"})", files));
  CHECK(r.find("ok")->b);
  CHECK(file == b.save());
  r = jt::parse(ap::call_json(a, R"({"call":"save","path":"elsewhere"})", files));
  CHECK(r.find("error")->str == "no room");
  CHECK(r.find("field")->str == "path");
  r = jt::parse(ap::call_json(a, R"({"call":"load","path":"m.safetensors","text_path":"t.txt"})", files));
  CHECK(r.find("error")->str == "cannot read t.txt");
  CHECK(r.find("field")->str == "text_path");
  CHECK(ap::call_json(a, R"({"call":"load","path":"m.safetensors"})", files) == b.load(file, ""));
}

TEST_CASE("encode and decode: a model's token ids and texts, through the session and call_json", "[gpt][api]") {
  ap::GptSession s;
  CHECK(jt::parse(s.encode("a")).find("field")->str == "model");
  REQUIRE(jt::parse(s.create(spec(",\"text\":\"" + kText + "\""))).find("ok")->b);
  CHECK(jt::parse(s.info()).find("tokenizer")->str == "characters");
  CHECK(s.encode("the dog") == R"({"ok":true,"ids":[21,9,6,0,5,16,8],"tokens":["t","h","e"," ","d","o","g"]})");
  CHECK(s.decode("[21,9,6]") == R"({"ok":true,"text":"the","tokens":["t","h","e"]})");
  CHECK(ap::call_json(s, R"({"call":"encode","text":"the dog"})") == s.encode("the dog"));
  CHECK(ap::call_json(s, R"({"call":"decode","ids":[21,9,6]})") == s.decode("[21,9,6]"));
  const jt::Value out = jt::parse(s.decode("[1,99]"));
  CHECK(out.find("field")->str == "ids");
  CHECK(out.find("error")->str.find("token id 99 at position 1") != std::string::npos);
  CHECK(jt::parse(s.decode("[0.5]")).find("field")->str == "ids");
  CHECK(jt::parse(s.decode("{}")).find("field")->str == "ids");
  CHECK(jt::parse(s.encode("Z")).find("field")->str == "text");
}

TEST_CASE("run_memory: the loaded run's parameters and bytes, counted by hand and by the memory call", "[gpt][api]") {
  ap::GptSession s;
  const jt::Value none = jt::parse(ap::call_json(s, R"({"call":"run_memory"})"));
  CHECK(none.find("field")->str == "model");
  const std::string run = spec(",\"task\":\"copy\"");
  REQUIRE(jt::parse(s.create(run)).find("ok")->b);
  const jt::Value m = jt::parse(ap::call_json(s, R"({"call":"run_memory"})"));
  REQUIRE(m.find("ok")->b);
  // GPT-2's layout by hand (vocabulary 12, block 8, 1 layer, C = 16, biases, lm_head tied to wte):
  // wte V·C, wpe T·C, per layer two LayerNorms 4C, c_attn 3C² + 3C, attn.c_proj C² + C, c_fc
  // 4C² + 4C, mlp.c_proj 4C² + C; ln_f 2C
  const double V = 12, T = 8, C = 16;
  const double n_params = V * C + T * C + (12 * C * C + 13 * C) + 2 * C;
  CHECK(m.find("n_params")->num == n_params);
  CHECK(m.find("parameters")->num == 4 * n_params);
  // a training step's bytes are what the memory call counts for the spec the run was made from
  CHECK(m.find("training")->num == jt::parse(ap::gpt_memory_json(run)).find("bytes")->num);
  CHECK(m.find("limit")->num == static_cast<double>(ap::kMaxModelBytes));
  // the buffers held: at least the parameters and their gradients, and no more than training counts
  CHECK(m.find("allocated")->num >= 2 * 4 * n_params);
  CHECK(m.find("allocated")->num <= m.find("training")->num);
  // inference: the parameters and one sequence's activations, less than training
  CHECK(m.find("inference")->num > 4 * n_params);
  CHECK(m.find("inference")->num < m.find("training")->num);
  CHECK(jt::parse(ap::call_json(s, R"({"call":"run_memory","n":1})")).find("field")->str == "n");
  // the KV cache: K and V, 1 layer × block 8 × C floats of 4 bytes; with one key/value head for 2
  CHECK(m.find("kv_cache")->num == 2 * 1 * T * C * 4);
  ap::GptSession g;
  REQUIRE(jt::parse(g.create(spec(",\"task\":\"copy\",\"n_kv_head\":1"))).find("ok")->b);
  CHECK(jt::parse(ap::call_json(g, R"({"call":"run_memory"})")).find("kv_cache")->num == 2 * 1 * T * (C / 2) * 4);
}

TEST_CASE("loss_by_position: a loss per position, past block_size where the positions allow", "[gpt][api]") {
  ap::GptSession s;
  CHECK(jt::parse(ap::call_json(s, R"({"call":"loss_by_position","spec":{}})")).find("field")->str == "model");
  REQUIRE(jt::parse(s.create(spec(",\"task\":\"copy\""))).find("ok")->b);
  const jt::Value at = jt::parse(ap::call_json(s, R"({"call":"loss_by_position","spec":{}})"));
  REQUIRE(at.find("ok")->b);
  CHECK(at.find("context")->num == 8);
  CHECK(at.find("losses")->arr.size() == 8);
  const jt::Value far = jt::parse(ap::call_json(s, R"({"call":"loss_by_position","spec":{"context":16}})"));
  CHECK(far.find("field")->str == "context");
  CHECK(far.find("error")->str.find("wpe") != std::string::npos);
  CHECK(jt::parse(ap::call_json(s, R"({"call":"loss_by_position","spec":{"colour":1}})")).find("field")->str == "colour");
  ap::GptSession r;
  REQUIRE(jt::parse(r.create(spec(",\"task\":\"copy\",\"pos\":\"rope\""))).find("ok")->b);
  const jt::Value longer = jt::parse(ap::call_json(r, R"({"call":"loss_by_position","spec":{"context":16,"batches":1}})"));
  REQUIRE(longer.find("ok")->b);
  CHECK(longer.find("block_size")->num == 8);
  CHECK(longer.find("losses")->arr.size() == 16);
  CHECK(longer.find("windows")->num == 2);  // one batch of batch_size 2
}
