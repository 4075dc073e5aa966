// test_gpt_predict.cpp — the next-token distribution behind JSON (src/api/gpt_predict.h), as the
// page, `gpt api` and the wasm module read it:
//  - next_token with a prompt gives, token for token, next_token_distribution over the logits of
//    the prompt's last position in a full forward pass (values written as float32 and read back);
//  - without a prompt it reshapes the kept logits: the same answer as with the prompt again, for
//    other options; the probabilities of every token sum to 1, top-k and top-p keep what they say;
//  - training forgets the prompt (the weights changed), and bad options are named by field;
//  - sampling with top_p through the session draws the text the core's generate() draws.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "api/gpt_calls.h"
#include "api/gpt_session.h"
#include "core/generate.h"
#include "json_test_util.h"

namespace {

const char* kSpec = R"({"task":"copy","n_layer":1,"n_embd":16,"n_head":2,"block_size":8,"batch_size":2,"eval_batches":1,"seed":3})";

jt::Value call(ap::GptSession& s, const std::string& line) { return jt::parse(ap::call_json(s, line)); }

}  // namespace

TEST_CASE("next_token: the prompt's distribution, then reshaped without running the model again", "[gpt][api][next_token]") {
  ap::GptSession s;
  REQUIRE(call(s, std::string(R"({"call":"create","spec":)") + kSpec + "}").find("ok")->b);
  REQUIRE(call(s, R"({"call":"train","n":5})").find("ok")->b);
  const int V = s.trainer()->model().config().vocab_size;

  const jt::Value a = call(s, R"({"call":"next_token","spec":{"prompt":"abc=","temperature":0.7,"show":100}})");
  REQUIRE(a.find("ok")->b);
  CHECK(a.find("vocab_size")->num == V);
  CHECK(a.find("tokens")->size() == 4);
  // the core's distribution over the last position of a full forward pass
  ap::GPT& m = s.trainer()->model();
  const std::vector<int> ids = s.trainer()->tokenizer().encode("abc=", "prompt");
  m.forward(ids.data(), nullptr, 1, 4);
  ap::NextTokenLogits l;
  l.set(m.logits() + 3 * V, V);
  ap::NextTokenOptions o;
  o.temperature = 0.7f;
  const ap::NextTokenDistribution d = ap::next_token_distribution(l, o, V);
  const jt::Value& top = *a.find("top");
  REQUIRE(top.size() == static_cast<size_t>(V));  // show is capped at the vocabulary
  double sum = 0;
  for (int i = 0; i < V; ++i) {
    const jt::Value& t = top.arr[static_cast<size_t>(i)];
    CHECK(t.find("id")->num == d.top[static_cast<size_t>(i)].id);
    CHECK(static_cast<float>(t.find("p")->num) == d.top[static_cast<size_t>(i)].p);
    CHECK(static_cast<float>(t.find("logit")->num) == d.top[static_cast<size_t>(i)].logit);
    CHECK(t.find("text")->str == s.trainer()->tokenizer().token_text(d.top[static_cast<size_t>(i)].id));
    if (i > 0) CHECK(t.find("p")->num <= top.arr[static_cast<size_t>(i - 1)].find("p")->num);
    sum += t.find("p")->num;
  }
  CHECK(sum == Approx(1.0).epsilon(1e-5));
  CHECK(a.find("kept")->num == V);
  CHECK(a.find("dropped_mass")->num == 0);
  CHECK(static_cast<float>(a.find("entropy")->num) == d.entropy);

  // reshaped: top-k 3 then top-p 0.5 of the same logits, without the prompt, equals with it
  const jt::Value b = call(s, R"({"call":"next_token","spec":{"top_k":3,"top_p":0.5,"show":5}})");
  const jt::Value b2 = call(s, R"({"call":"next_token","spec":{"prompt":"abc=","top_k":3,"top_p":0.5,"show":5}})");
  REQUIRE(b.find("ok")->b);
  CHECK(ap::call_json(s, R"({"call":"next_token","spec":{"top_k":3,"top_p":0.5,"show":5}})") ==
        ap::call_json(s, R"({"call":"next_token","spec":{"prompt":"abc=","top_k":3,"top_p":0.5,"show":5}})"));
  CHECK(b2.find("top")->size() == 5);
  const int kept = static_cast<int>(b.find("kept")->num);
  CHECK(kept >= 1);
  CHECK(kept <= 3);
  double kept_p = 0, kept_full = 0;
  for (const jt::Value& t : b.find("top")->arr) {
    if (t.find("kept")->b) {
      kept_p += t.find("p")->num;
      kept_full += t.find("p_full")->num;
    } else {
      CHECK(t.find("p")->num == 0);
    }
  }
  CHECK(kept_p == Approx(1.0).epsilon(1e-5));
  CHECK(kept_full == Approx(b.find("kept_mass")->num).epsilon(1e-5));
  CHECK(b.find("kept_mass")->num + b.find("dropped_mass")->num == Approx(1.0).epsilon(1e-5));
  CHECK(b.find("top_p")->num == Approx(0.5));
  CHECK(b.find("top_k")->num == 3);

  // greedy: the most likely token alone
  const jt::Value g = call(s, R"({"call":"next_token","spec":{"greedy":true,"show":2}})");
  CHECK(g.find("kept")->num == 1);
  CHECK(g.find("top")->arr[0].find("p")->num == 1);
  CHECK(g.find("entropy")->num == 0);

  // bad options, named
  CHECK(call(s, R"({"call":"next_token","spec":{"top_p":0}})").find("field")->str == "top_p");
  CHECK(call(s, R"({"call":"next_token","spec":{"top_p":1.5}})").find("field")->str == "top_p");
  CHECK(call(s, R"({"call":"next_token","spec":{"top_k":13}})").find("field")->str == "top_k");
  CHECK(call(s, R"({"call":"next_token","spec":{"temperature":0}})").find("field")->str == "temperature");
  CHECK(call(s, R"({"call":"next_token","spec":{"show":0}})").find("field")->str == "show");
  CHECK(call(s, R"({"call":"next_token","spec":{"prompt":"aZ"}})").find("field")->str == "prompt");
  CHECK(call(s, R"({"call":"next_token","spec":{"prompt":""}})").find("field")->str == "prompt");
  CHECK(call(s, R"({"call":"next_token","spec":{"extra":1}})").find("field")->str == "extra");
  // a refused prompt keeps the last one's logits
  CHECK(ap::call_json(s, R"({"call":"next_token","spec":{"top_k":3,"top_p":0.5,"show":5}})") ==
        ap::call_json(s, R"({"call":"next_token","spec":{"prompt":"abc=","top_k":3,"top_p":0.5,"show":5}})"));

  // training changes the weights: the kept logits are forgotten
  REQUIRE(call(s, R"({"call":"train","n":1})").find("ok")->b);
  const jt::Value after = call(s, R"({"call":"next_token","spec":{}})");
  CHECK(after.find("ok")->b == false);
  CHECK(after.find("field")->str == "prompt");
}

TEST_CASE("sample with top_p draws the text generate() draws", "[gpt][api][next_token]") {
  ap::GptSession s;
  REQUIRE(call(s, std::string(R"({"call":"create","spec":)") + kSpec + "}").find("ok")->b);
  REQUIRE(call(s, R"({"call":"train","n":5})").find("ok")->b);
  const jt::Value a = call(s, R"({"call":"sample","spec":{"prompt":"ab","max_new_tokens":30,"top_p":0.6,"seed":4}})");
  REQUIRE(a.find("ok")->b);
  ap::SampleOptions o;
  o.max_new_tokens = 30;
  o.top_p = 0.6f;
  o.seed = 4;
  const std::vector<int> ids = s.trainer()->tokenizer().encode("ab", "prompt");
  CHECK(a.find("text")->str == s.trainer()->tokenizer().decode(ap::generate(s.trainer()->model(), ids, o)));
  // p → 0 keeps the most likely token alone: the greedy text
  const jt::Value tiny = call(s, R"({"call":"sample","spec":{"prompt":"ab","max_new_tokens":30,"top_p":1e-9,"seed":4}})");
  const jt::Value greedy = call(s, R"({"call":"sample","spec":{"prompt":"ab","max_new_tokens":30,"greedy":true}})");
  CHECK(tiny.find("text")->str == greedy.find("text")->str);
  CHECK(call(s, R"({"call":"sample","spec":{"prompt":"ab","top_p":-1}})").find("field")->str == "top_p");
}
