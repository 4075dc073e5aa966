// test_finetune.cpp — fine-tuning a model trained elsewhere (train.h's Trainer::finetune, the
// session's finetune and finetune_memory, gpt_session.h): a tiny model-only state, as `gpt import`
// writes one (its characters from a meta.pkl, or GPT-2's byte-level BPE), opened, then trained on a
// repeated text:
//  - the loss falls, and the same seed gives the same losses bit for bit (another seed does not);
//  - the memory is checked before anything is allocated: refused with both figures and the setting
//    to lower (context, then batch_size, then the model), and the opened model is as it was;
//  - a text too short for the context, a context past block_size, a model of bare token ids are
//    refused by name;
//  - the saved checkpoint is a training run (its moments, the context, "base"), that samples and
//    resumes exactly as the uninterrupted run, with characters and with GPT-2's BPE alike.
#include <catch2/catch.hpp>
#include <string>

#include "api/checkpoint.h"
#include "api/gpt_calls.h"
#include "api/gpt_session.h"
#include "core/tokenizers/bpe.h"
#include "core/model/train.h"
#include "input_error_util.h"
#include "formats/json.h"

namespace {

using ap::json::parse;

std::string repeated_text() {
  std::string t;
  for (int i = 0; i < 40; ++i) t += "the cat sat on the mat. ";
  return t;
}

// A model-only state as the importer makes it: nanoGPT's tiny shape, seeded weights, a vocabulary.
ap::TrainState foreign_model(bool bpe) {
  ap::TrainState s;
  s.source = "a test nanoGPT ckpt.pt";
  s.model = ap::GPTConfig::tiny(1);
  s.model.block_size = 16;
  s.model.activation = ap::Activation::gelu_new;
  if (bpe) {
    std::vector<std::pair<std::string, long long>> v;
    for (int b = 0; b < 256; ++b) v.emplace_back(ap::byte_symbol(static_cast<uint8_t>(b)), b);
    v.emplace_back("at", 256);
    v.emplace_back("he", 257);
    v.emplace_back("\u0120t", 258);
    v.emplace_back("\u0120the", 259);
    s.bpe = ap::BpeTokenizer::build(v, {{"a", "t", 1}, {"h", "e", 2}, {"\u0120", "t", 3}, {"\u0120t", "he", 4}},
                                    "vocab.json", "merges.txt");
    s.model.vocab_size = 260;
  } else {
    for (char32_t c : std::u32string(U" .acehmnost")) s.vocab.push_back(c);
    s.model.vocab_size = static_cast<int>(s.vocab.size());
  }
  ap::GPT g(s.model);
  g.init_weights(7);
  s.params.assign(g.params(), g.params() + g.num_parameters());
  return s;
}

std::string model_file(bool bpe) { return ap::save_checkpoint(foreign_model(bpe)); }

std::string losses(ap::GptSession& s, int n) { return parse(s.train(n)).find("losses")->dump(); }

}  // namespace

TEST_CASE("finetune: an opened model trains on a repeated text, the same seed the same losses", "[finetune]") {
  for (const bool bpe : {false, true}) {
    INFO((bpe ? "GPT-2 BPE" : "characters"));
    ap::GptSession a;
    REQUIRE(parse(a.load(model_file(bpe), "")).find("ok")->as_bool());
    CHECK(parse(a.info()).find("source")->as_string() == "a test nanoGPT ckpt.pt");
    const std::string spec = R"({"context":8,"batch_size":4,"steps":40,"lr":0.01,"seed":5,"text_name":"cat.txt"})";
    const auto mem = parse(a.finetune_memory(spec));
    CHECK(mem.find("fits")->as_bool());
    CHECK(static_cast<int64_t>(mem.find("need")->as_number()) ==
          ap::GPT::memory_bytes(a.trainer()->model().config(), 4, 8, ap::ModelUse::train));
    const auto info = parse(a.finetune(spec, repeated_text()));
    REQUIRE(info.find("ok")->as_bool());
    CHECK(info.find("base")->as_string() == "a test nanoGPT ckpt.pt");
    CHECK(info.find("source")->as_string().empty());
    CHECK(info.find("step")->as_number() == 0);
    const float before = a.trainer()->evaluate();
    const ap::json::Value trained = parse(a.train(40));
    const std::vector<ap::json::Value>& l = trained.find("losses")->items();
    REQUIRE(l.size() == 40);
    const float after = a.trainer()->evaluate();
    CHECK(after < 0.85f * before);
    CHECK(l.back().as_number() < 0.85 * l.front().as_number());

    ap::GptSession b, c;
    b.load(model_file(bpe), "");
    b.finetune(spec, repeated_text());
    const std::string b_losses = losses(b, 40);
    CHECK(b_losses == trained.find("losses")->dump());  // bit for bit
    c.load(model_file(bpe), "");
    c.finetune(R"({"context":8,"batch_size":4,"steps":40,"lr":0.01,"seed":6})", repeated_text());
    CHECK(losses(c, 40) != b_losses);  // another seed, other batches
  }
}

TEST_CASE("finetune: the memory is refused before allocating, with both figures and the setting to lower",
          "[finetune]") {
  ap::TrainState s = foreign_model(false);
  const ap::GPTConfig cfg = s.model;
  std::unique_ptr<ap::Trainer> t = ap::Trainer::open(std::move(s));
  const int64_t held = t->model().allocated_bytes();
  ap::TrainConfig tc;
  tc.batch_size = 4;
  tc.context = 16;
  tc.steps = 10;
  tc.warmup_steps = 0;
  ap::DataSpec d;
  d.text = repeated_text();
  d.name = "cat.txt";
  const int64_t need = ap::finetune_memory_bytes(cfg, tc);
  CHECK(need == ap::GPT::memory_bytes(cfg, 4, 16, ap::ModelUse::train));
  // one byte short: a shorter context fits
  auto e = input_error_util::error_of([&] { t->finetune(tc, d, need - 1, "in this test"); });
  CHECK(e.field == "context");
  const std::string need_bytes = [&] {
    std::string n = std::to_string(need), c;
    for (size_t i = 0; i < n.size(); ++i) {
      if (i > 0 && (n.size() - i) % 3 == 0) c += ',';
      c += n[i];
    }
    return c;
  }();
  CHECK_THAT(e.message, Catch::StartsWith("fine-tuning this model (101,824 parameters) at batch_size 4 × context 16 needs " +
                                          need_bytes + " bytes = 2.4 MiB (the parameters"));
  CHECK_THAT(e.message, Catch::Contains(" MiB in this test: lower context to 15 or less (2,427,028 bytes = 2.3 MiB), or batch_size"));
  CHECK_THAT(e.message, !Catch::Contains("))") && !Catch::Contains(") ("));
  // a context of 1 does not fit at this batch size, the batch of 1 does
  const int64_t one = ap::GPT::memory_bytes(cfg, 1, 1, ap::ModelUse::train);
  e = input_error_util::error_of([&] { t->finetune(tc, d, one, "in this test"); });
  CHECK(e.field == "batch_size");
  CHECK_THAT(e.message, Catch::Contains("lower batch_size (batch_size 1 × context 1 needs"));
  e = input_error_util::error_of([&] { t->finetune(tc, d, one - 1, "in this test"); });
  CHECK(e.field == "model");
  CHECK_THAT(e.message, Catch::Contains("cannot be fine-tuned here (it still opens for inference)"));
  // nothing was allocated, and the opened model is as it was
  CHECK(t->opened());
  CHECK(t->model().use() == ap::ModelUse::infer);
  CHECK(t->model().allocated_bytes() == held);
  // GPT-2 small's figures, what docs/import.md quotes (GPT::memory_bytes; vocab 50,257)
  const ap::GPTConfig gpt2 = ap::GPTConfig::gpt2_small();
  CHECK(gpt2.num_parameters() == 124439808);
  tc.batch_size = 1;
  tc.context = 1024;
  e = input_error_util::error_of([&] { ap::check_finetune_memory(gpt2, tc, int64_t(3) << 30, "here"); });
  CHECK(e.field == "context");  // wasm's open limit, 3 GiB
  CHECK_THAT(e.message, Catch::StartsWith("fine-tuning this model (124,439,808 parameters) at batch_size 1 × context 1024 needs 3,94") &&
                           Catch::Contains("bytes = 3.67 GiB (the parameters") && Catch::Contains("bytes = 3.00 GiB here: lower context to") &&
                           !Catch::Contains("))"));
}

TEST_CASE("finetune: bad settings and texts refused by name", "[finetune]") {
  ap::GptSession s;
  s.load(model_file(false), "");
  const auto no = [](const std::string& answer) { return parse(answer); };
  auto e = no(s.finetune(R"({"context":17})", repeated_text()));
  CHECK(e.find("field")->as_string() == "context");
  e = no(s.finetune(R"({"context":16})", "the cat sat on the mat."));
  CHECK(e.find("field")->as_string() == "text");
  CHECK_THAT(e.find("error")->as_string(), Catch::Contains("is 23 tokens long") && Catch::Contains("at least 2 × (16 + 1) = 34"));
  e = no(s.finetune(R"({"context":4})", "the dog"));  // 'd' and 'g' are not in the vocabulary
  CHECK(e.find("field")->as_string() == "text");
  e = no(s.finetune(R"({"contxt":4})", repeated_text()));
  CHECK(e.find("field")->as_string() == "contxt");
  CHECK(s.trainer()->opened());  // still the opened model
  // a model of bare token ids reads no text
  ap::TrainState ids = foreign_model(false);
  ids.vocab.clear();
  std::unique_ptr<ap::Trainer> t = ap::Trainer::open(std::move(ids));
  ap::TrainConfig tc;
  ap::DataSpec d{"", 0, repeated_text(), "cat.txt"};
  CHECK(input_error_util::error_of([&] { t->finetune(tc, d, int64_t(1) << 40, ""); }).field == "text");
  // a run of this project is fine-tuned from its weights, and says so
  ap::GptSession run;
  run.create(R"({"n_layer":1,"n_embd":16,"n_head":2,"block_size":8,"steps":5,"task":"copy"})");
  run.train(2);
  const auto f = no(run.finetune(R"({"context":4,"batch_size":2})", "abcabcabcabcabcabc"));
  CHECK(f.find("base")->as_string() == "this playground's run on the copy task, step 2");
}

TEST_CASE("finetune: the checkpoint is a run on the text that samples and resumes exactly", "[finetune]") {
  for (const bool bpe : {false, true}) {
    INFO((bpe ? "GPT-2 BPE" : "characters"));
    const std::string spec = R"({"context":8,"batch_size":2,"steps":20,"lr":0.01,"seed":3,"text_name":"cat.txt"})";
    ap::GptSession whole;
    whole.load(model_file(bpe), "");
    whole.finetune(spec, repeated_text());
    const auto all = parse(whole.train(20)).find("losses")->items();

    ap::GptSession first;
    first.load(model_file(bpe), "");
    first.finetune(spec, repeated_text());
    first.train(10);
    const std::string bytes = first.save();
    REQUIRE(!bytes.empty());
    const ap::TrainState st = ap::load_checkpoint(bytes);
    CHECK(st.base == "a test nanoGPT ckpt.pt");
    CHECK(st.train.context == 8);
    CHECK(st.m.size() == st.params.size());
    CHECK(static_cast<bool>(st.bpe) == bpe);
    CHECK(st.text_name == "cat.txt");

    ap::GptSession resumed;
    REQUIRE(parse(resumed.load(bytes, repeated_text())).find("ok")->as_bool());
    CHECK(parse(resumed.info()).find("base")->as_string() == "a test nanoGPT ckpt.pt");
    const auto rest = parse(resumed.train(10)).find("losses")->items();
    REQUIRE(rest.size() == 10);
    for (size_t i = 0; i < 10; ++i) CHECK(rest[i].as_number() == all[10 + i].as_number());

    ap::GptSession alone;  // without the text: it samples
    REQUIRE(parse(alone.load(bytes, "")).find("ok")->as_bool());
    const auto out = parse(alone.sample(R"({"prompt":"the ","max_new_tokens":8,"seed":1})"));
    REQUIRE(out.find("ok")->as_bool());
    CHECK(out.find("text")->as_string().rfind("the ", 0) == 0);
  }
}

TEST_CASE("finetune: gpt api's calls", "[finetune][api]") {
  ap::GptSession s;
  s.load(model_file(false), "");
  const auto m = parse(ap::call_json(s, R"({"call":"finetune_memory","spec":{"context":8,"batch_size":2}})"));
  CHECK(m.find("fits")->as_bool());
  const auto f = parse(ap::call_json(
      s, R"({"call":"finetune","spec":{"context":8,"batch_size":2,"steps":3},"text":")" + repeated_text() + "\"}"));
  CHECK(f.find("ok")->as_bool());
  CHECK(parse(ap::call_json(s, R"({"call":"train","n":3})")).find("losses")->items().size() == 3);
}
