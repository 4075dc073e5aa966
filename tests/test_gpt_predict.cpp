// test_gpt_predict.cpp — the next-token distribution behind JSON (src/api/gpt_predict.h), as the
// page, `gpt api` and the wasm module read it:
//  - next_token with a prompt gives, token for token, next_token_distribution over the logits of
//    the prompt's last position in a full forward pass (values written as float32 and read back);
//  - without a prompt it reshapes the kept logits: the same answer as with the prompt again, for
//    other options; the probabilities of every token sum to 1, top-k and top-p keep what they say;
//  - a prompt longer than block_size is read by its last block_size tokens, as generation reads it;
//  - training forgets the prompt (the weights changed), and bad options are named by field;
//  - sampling with top_p through the session draws the text the core's generate() draws;
//  - patch asked cell by cell keeps its two runs (made once) and gives the whole sweep bit for
//    bit; other prompts or metric, a refused spec and training forget them.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "api/gpt_calls.h"
#include "api/gpt_interp.h"
#include "api/gpt_session.h"
#include "core/model/generate.h"
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

TEST_CASE("next_token: a prompt longer than block_size is read by its last block_size tokens", "[gpt][api][next_token]") {
  ap::GptSession s;
  REQUIRE(call(s, std::string(R"({"call":"create","spec":)") + kSpec + "}").find("ok")->b);
  REQUIRE(call(s, R"({"call":"train","n":5})").find("ok")->b);
  // 14 characters, block_size 8: the model sees the last 8, "dcba=abc", as generation crops them
  const std::string whole = R"({"call":"next_token","spec":{"prompt":"jihgfedcba=abc","show":12}})";
  const std::string tail = R"({"call":"next_token","spec":{"prompt":"dcba=abc","show":12}})";
  const std::string head = R"({"call":"next_token","spec":{"prompt":"jihgfedc","show":12}})";
  const std::string a = ap::call_json(s, whole), t = ap::call_json(s, tail), h = ap::call_json(s, head);
  // a field's text in an answer
  auto field = [](const std::string& answer, const char* key) {
    const jt::Value v = jt::parse(answer);
    REQUIRE(v.find("ok")->b);
    const jt::Value& f = *v.find(key);
    return answer.substr(f.begin, f.end - f.begin);
  };
  CHECK(jt::parse(a).find("tokens")->size() == 8);
  CHECK(field(a, "tokens") == field(t, "tokens"));
  CHECK(field(a, "top") == field(t, "top"));
  CHECK(a == t);  // the whole answer, token for token
  // the first 8 give another distribution: the comparison above tells the two crops apart
  CHECK(field(h, "top") != field(a, "top"));
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

TEST_CASE("A generation step tells what its token was drawn from, and which number drew it", "[gpt][api][next_token]") {
  ap::GptSession s;
  REQUIRE(call(s, std::string(R"({"call":"create","spec":)") + kSpec + "}").find("ok")->b);
  REQUIRE(call(s, R"({"call":"train","n":5})").find("ok")->b);
  const jt::Value first = call(s, R"({"call":"generate_start","spec":{"prompt":"ab","temperature":1.3,"top_k":6,"top_p":0.7,"seed":5}})");
  REQUIRE(first.find("ok")->b);
  CHECK(first.find("draw") == nullptr);  // the prompt's step drew nothing
  for (int i = 0; i < 6; ++i) {
    const jt::Value g = call(s, R"({"call":"generate_next"})");
    REQUIRE(g.find("ok")->b);
    const jt::Value& draw = *g.find("draw");
    const jt::Value& dist = *g.find("distribution");
    CHECK(draw.find("token")->num == g.find("token")->num);
    CHECK(dist.find("temperature")->num == Approx(1.3));
    CHECK(dist.find("top_k")->num == 6);
    CHECK(dist.find("top_p")->num == Approx(0.7));
    CHECK(draw.find("kept")->num == dist.find("kept")->num);
    // the coin is u·S and falls in the drawn token's segment
    const double u = draw.find("u")->num, sum = draw.find("sum")->num, coin = draw.find("coin")->num;
    CHECK(u >= 0);
    CHECK(u < 1);
    CHECK(static_cast<float>(coin) == static_cast<float>(static_cast<float>(u) * static_cast<float>(sum)));
    CHECK(draw.find("from")->num <= coin);
    CHECK(coin < draw.find("to")->num);
    // the drawn token is a kept one of the distribution, with the probability the draw says
    bool found = false;
    for (const jt::Value& t : dist.find("top")->arr)
      if (t.find("id")->num == draw.find("token")->num) {
        found = true;
        CHECK(t.find("kept")->b);
        CHECK(t.find("p")->num == draw.find("p")->num);
        CHECK((draw.find("to")->num - draw.find("from")->num) / sum == Approx(t.find("p")->num).epsilon(1e-4));
      }
    CHECK(found);  // at most 6 (plus ties) are kept, and 16 are listed
  }
  // greedy: no number drawn, the most likely token with probability 1
  REQUIRE(call(s, R"({"call":"generate_start","spec":{"prompt":"ab","greedy":true}})").find("ok")->b);
  const jt::Value g = call(s, R"({"call":"generate_next"})");
  CHECK(g.find("draw")->find("greedy")->b);
  CHECK(g.find("draw")->find("u")->num == 0);
  CHECK(g.find("draw")->find("p")->num == 1);
  CHECK(g.find("distribution")->find("top")->arr[0].find("id")->num == g.find("token")->num);
}

TEST_CASE("surprisal: a text's −log p per token, and the validation windows' mean is the validation loss", "[gpt][api][inspect]") {
  ap::GptSession s;
  REQUIRE(call(s, std::string(R"({"call":"create","spec":)") + kSpec + "}").find("ok")->b);
  REQUIRE(call(s, R"({"call":"train","n":5})").find("ok")->b);
  // the validation windows: their mean is what evaluate() says, to the last bit of its JSON
  const jt::Value v = call(s, R"({"call":"surprisal","spec":{"validation":true}})");
  REQUIRE(v.find("ok")->b);
  const jt::Value e = call(s, R"({"call":"evaluate"})");
  CHECK(v.find("mean")->str == e.find("val_loss")->str);
  // a text: 19 characters (18 predictions) in windows of block_size 8 predictions overlapping by one token
  const jt::Value t = call(s, R"({"call":"surprisal","spec":{"text":"abc=abc\ncab=cab\nbca"}})");
  REQUIRE(t.find("ok")->b);
  CHECK(t.find("count")->num == 18);
  const auto& w = t.find("windows")->arr;
  REQUIRE(w.size() == 3);
  CHECK(w[1].find("offset")->num == 8);
  CHECK(w[1].find("tokens")->arr.front().str == w[0].find("tokens")->arr.back().str);
  double sum = 0;
  for (const jt::Value& x : w)
    for (const jt::Value& l : x.find("losses")->arr) {
      CHECK(l.num > 0);
      sum += l.num;
    }
  CHECK(t.find("mean")->num == Approx(sum / 18).epsilon(1e-5));
  // each token's −log p is the model's: the first window's mean is GPT::forward's loss over it
  ap::GPT& m = s.trainer()->model();
  const std::vector<int> ids = s.trainer()->tokenizer().encode("abc=abc\nc", "text");
  CHECK(static_cast<float>(w[0].find("mean")->num) == m.forward(ids.data(), ids.data() + 1, 1, 8));
  CHECK(call(s, R"({"call":"surprisal","spec":{"text":"a"}})").find("field")->str == "text");
  CHECK(call(s, R"({"call":"surprisal","spec":{"text":"aZ"}})").find("field")->str == "text");
  CHECK(call(s, R"({"call":"surprisal","spec":{}})").find("field")->str == "text");
  CHECK(call(s, R"({"call":"surprisal","spec":{"text":"ab","validation":true}})").find("field")->str == "text");
}

TEST_CASE("patch asked cell by cell keeps the two runs and gives the whole sweep, bit for bit", "[gpt][api][interp]") {
  ap::GptSession s;
  REQUIRE(call(s, std::string(R"({"call":"create","spec":)") + kSpec + "}").find("ok")->b);
  REQUIRE(call(s, R"({"call":"train","n":3})").find("ok")->b);
  const std::string prompts = R"("clean":"abcd=ab","corrupted":"abce=ab","token":"c","other":"d")";
  const auto ask = [&](const std::string& extra) {
    return call(s, R"({"call":"patch","spec":{)" + prompts + extra + "}}");
  };
  // the grids of an answer, in the sweep's order
  const auto cells_of = [](const jt::Value& a) {
    std::vector<float> out;
    for (const jt::Value& row : a.find("resid")->arr)
      for (const jt::Value& x : row.arr) out.push_back(static_cast<float>(x.num));
    for (const jt::Value& row : a.find("heads")->arr)
      for (const jt::Value& x : row.arr) out.push_back(static_cast<float>(x.num));
    for (const jt::Value& x : a.find("mlps")->arr) out.push_back(static_cast<float>(x.num));
    return out;
  };
  // the whole sweep from a session that keeps nothing between calls: the stateless call
  const std::vector<int> clean = s.trainer()->tokenizer().encode("abcd=ab", "clean");
  const std::vector<int> bad = s.trainer()->tokenizer().encode("abce=ab", "corrupted");
  const auto fresh = [&] {
    const ap::GPT& m = s.trainer()->model();
    const int c = s.trainer()->tokenizer().encode("c", "token")[0], d = s.trainer()->tokenizer().encode("d", "other")[0];
    const ap::interp::Patching p = ap::interp::patch(m, clean, bad, {c, d, -1});
    std::vector<float> out = p.resid;
    out.insert(out.end(), p.heads.begin(), p.heads.end());
    out.insert(out.end(), p.mlps.begin(), p.mlps.end());
    return out;
  };
  const std::vector<float> whole = fresh();
  REQUIRE(s.kept_patch() == nullptr);
  const jt::Value first = ask(R"(,"first":0,"count":1)");
  REQUIRE(first.find("ok")->b);
  const int cells = static_cast<int>(first.find("cells")->num);
  REQUIRE(cells == static_cast<int>(whole.size()));
  const ap::KeptPatch* kept = s.kept_patch().get();
  REQUIRE(kept != nullptr);
  std::vector<float> got(whole.size(), 0.0f);
  for (int i = 0; i < cells; ++i) {
    const jt::Value a = ask(R"(,"first":)" + std::to_string(i) + R"(,"count":1)");
    REQUIRE(a.find("ok")->b);
    const std::vector<float> one = cells_of(a);
    for (size_t j = 0; j < one.size(); ++j)
      if (static_cast<int>(j) != i) REQUIRE(one[j] == 0.0f);  // the cell asked for alone
    got[static_cast<size_t>(i)] = one[static_cast<size_t>(i)];
    REQUIRE(s.kept_patch().get() == kept);  // the same runs: made once
  }
  REQUIRE(got == whole);
  // another metric (or other prompts) makes them again; a bad spec keeps nothing
  REQUIRE(call(s, R"({"call":"patch","spec":{"clean":"abcd=ab","corrupted":"abce=ab","token":"c","first":0,"count":1}})").find("ok")->b);
  REQUIRE(s.kept_patch() != nullptr);
  REQUIRE(s.kept_patch()->asked.other == -1);
  REQUIRE_FALSE(call(s, R"({"call":"patch","spec":{"clean":"abcd=ab","corrupted":"abce=a","token":"c"}})").find("ok")->b);
  REQUIRE(s.kept_patch() == nullptr);
  // training changes the weights: the kept runs go, and the next call's cells are the new model's
  REQUIRE(ask(R"(,"first":0,"count":1)").find("ok")->b);
  REQUIRE(call(s, R"({"call":"train","n":1})").find("ok")->b);
  REQUIRE(s.kept_patch() == nullptr);
  const std::vector<float> after = fresh();
  REQUIRE(after != whole);
  for (int i : {0, cells / 2, cells - 1}) {
    const jt::Value a = ask(R"(,"first":)" + std::to_string(i) + R"(,"count":1)");
    REQUIRE(cells_of(a)[static_cast<size_t>(i)] == after[static_cast<size_t>(i)]);
  }
}
