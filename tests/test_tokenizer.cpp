// test_tokenizer.cpp — UTF-8 (utf8.h) and the character tokenizer (tokenizer.h).
// UTF-8: known encodings, a round trip of every scalar value, every kind of invalid byte with its
// offset and message, an exhaustive comparison of validity against an independent reference
// decoder (all 1- and 2-byte strings, 3-byte strings with a non-ASCII first byte, sampled 4-byte
// strings), U+FFFD
// substitution of maximal subparts (Unicode's own example), describe_char.
// Tokenizer: vocabulary sorted by code point, Chinese and emoji round trips, every error with its
// field and message (empty text, invalid UTF-8, too many characters, unknown characters with
// index and byte offset, bad saved vocabularies, ids out of range).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/attention/attention.h"
#include "core/base/rng.h"
#include "core/tokenizers/tokenizer.h"
#include "core/base/utf8.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

// An independent reference: is `b` (n bytes) exactly one well-formed UTF-8 character? Decodes by
// the bit patterns alone, then checks the value's range, shortest form and surrogates.
bool ref_one_char(const unsigned char* b, int n) {
  int need;
  uint32_t cp;
  if (b[0] < 0x80) { need = 1; cp = b[0]; }
  else if ((b[0] & 0xE0) == 0xC0) { need = 2; cp = b[0] & 0x1F; }
  else if ((b[0] & 0xF0) == 0xE0) { need = 3; cp = b[0] & 0x0F; }
  else if ((b[0] & 0xF8) == 0xF0) { need = 4; cp = b[0] & 0x07; }
  else return false;
  if (n != need) return false;
  for (int i = 1; i < n; ++i) {
    if ((b[i] & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (b[i] & 0x3F);
  }
  const uint32_t min_for_length[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_for_length[need]) return false;     // overlong
  if (cp >= 0xD800 && cp <= 0xDFFF) return false;  // surrogate
  return cp <= 0x10FFFF;
}

// Is a whole string valid, by the reference: some split into well-formed characters (the greedy
// split by lead byte is the only candidate).
bool ref_valid(const std::string& s) {
  const auto* b = reinterpret_cast<const unsigned char*>(s.data());
  size_t i = 0;
  while (i < s.size()) {
    int need = b[i] < 0x80 ? 1 : (b[i] & 0xE0) == 0xC0 ? 2 : (b[i] & 0xF0) == 0xE0 ? 3 : (b[i] & 0xF8) == 0xF0 ? 4 : 0;
    if (need == 0 || i + need > s.size() || !ref_one_char(b + i, need)) return false;
    i += need;
  }
  return true;
}

std::string bytes(std::initializer_list<int> list) {
  std::string s;
  for (int b : list) s += static_cast<char>(b);
  return s;
}

ap::InputError decode_error(const std::string& s, const char* field = "text") {
  try {
    ap::utf8_decode(s, field);
  } catch (const ap::InputError& e) {
    return e;
  }
  FAIL("no error for " << s.size() << " bytes");
  return ap::InputError("", "");
}

template <class F>
ap::InputError error_of(F&& f) {
  try {
    f();
  } catch (const ap::InputError& e) {
    return e;
  }
  FAIL("no InputError");
  return ap::InputError("", "");
}

}  // namespace

// ------------------------------------------------------------------------------------ UTF-8

TEST_CASE("utf8: known encodings at every length boundary", "[utf8]") {
  struct K { char32_t cp; std::string utf8; };
  for (const K& k : {K{0x00, bytes({0x00})}, K{0x41, "A"}, K{0x7F, bytes({0x7F})}, K{0x80, bytes({0xC2, 0x80})},
                     K{0xE9, "\xC3\xA9"}, K{0x7FF, bytes({0xDF, 0xBF})}, K{0x800, bytes({0xE0, 0xA0, 0x80})},
                     K{0x4E2D, "\xE4\xB8\xAD"} /* 中 */, K{0xD7FF, bytes({0xED, 0x9F, 0xBF})},
                     K{0xE000, bytes({0xEE, 0x80, 0x80})}, K{0xFFFD, "\xEF\xBF\xBD"},
                     K{0xFFFF, bytes({0xEF, 0xBF, 0xBF})}, K{0x10000, bytes({0xF0, 0x90, 0x80, 0x80})},
                     K{0x1F600, "\xF0\x9F\x98\x80"} /* 😀 */, K{0x10FFFF, bytes({0xF4, 0x8F, 0xBF, 0xBF})}}) {
    INFO("U+" << std::hex << uint32_t(k.cp));
    CHECK(ap::utf8_encode(k.cp) == k.utf8);
    CHECK(ap::utf8_decode(k.utf8) == std::vector<char32_t>{k.cp});
    CHECK(ap::utf8_valid(k.utf8));
  }
  // non-scalar values encode as U+FFFD
  CHECK(ap::utf8_encode(char32_t(0xD800)) == "\xEF\xBF\xBD");
  CHECK(ap::utf8_encode(char32_t(0x110000)) == "\xEF\xBF\xBD");
  CHECK(ap::utf8_decode("").empty());
}

TEST_CASE("utf8: every scalar value round-trips - and nothing else is produced", "[utf8]") {
  std::vector<char32_t> all;
  for (char32_t c = 0; c <= 0x10FFFF; ++c)
    if (ap::is_scalar_value(c)) all.push_back(c);
  CHECK(all.size() == 0x110000 - 0x800);
  const std::string text = ap::utf8_encode(all);
  // 128·1 + 1920·2 + (63488 − 2048)·3 … : the byte count of each length class
  CHECK(text.size() == 128 * 1 + 1920 * 2 + (65536 - 2048 - 2048) * 3 + 1048576 * 4);
  CHECK(ap::utf8_valid(text));
  CHECK(ap::utf8_decode(text) == all);
  CHECK(ap::utf8_sanitize(text) == text);
  CHECK_FALSE(ap::is_scalar_value(0xD800));
  CHECK_FALSE(ap::is_scalar_value(0xDFFF));
  CHECK_FALSE(ap::is_scalar_value(0x110000));
  CHECK(ap::is_scalar_value(0x10FFFF));
}

TEST_CASE("utf8: each kind of invalid byte - its 0-based offset - line - and bytes", "[utf8][errors]") {
  struct C { std::string text; size_t offset; const char* says; };
  const C cases[] = {
      {"ab" + bytes({0xC3, 0x28}) + "cd", 2, "0xC3 followed by 0x28 — 0xC3 starts a 2-byte sequence but 0x28 is not a continuation byte"},
      {"xyz" + bytes({0x80}), 3, "0x80 is a continuation byte with no lead byte before it"},
      {"\xC3\xA9" + bytes({0xBF}), 2, "0xBF is a continuation byte with no lead byte"},
      {bytes({0xC0, 0xAF}), 0, "0xC0 never appears in UTF-8 (it could only start an overlong encoding"},
      {bytes({0xC1, 0xBF}), 0, "0xC1 never appears in UTF-8"},
      {"a" + bytes({0xE0, 0x80, 0xAF}), 1, "0xE0 0x80 0xAF is an overlong encoding of U+002F"},
      {bytes({0xF0, 0x80, 0x80, 0xAF}), 0, "0xF0 0x80 0x80 0xAF is an overlong encoding of U+002F"},
      {bytes({0xF0, 0x8F, 0xBF, 0xBF}), 0, "is an overlong encoding of U+FFFF"},
      {bytes({0xED, 0xA0, 0x80}), 0, "0xED 0xA0 0x80 encodes U+D800, a UTF-16 surrogate"},
      {bytes({0xED, 0xBF, 0xBF}), 0, "encodes U+DFFF, a UTF-16 surrogate"},
      {bytes({0xF4, 0x90, 0x80, 0x80}), 0, "0xF4 0x90 0x80 0x80 encodes U+110000, above the largest code point U+10FFFF"},
      {bytes({0xF5, 0x80, 0x80, 0x80}), 0, "0xF5 never appears in UTF-8 (it would start a code point above U+10FFFF)"},
      {bytes({0xFF}), 0, "0xFF never appears in UTF-8"},
      {bytes({0xFE}), 0, "0xFE never appears in UTF-8"},
      {"ok\n" + bytes({0xE4, 0xB8}), 3, "0xE4 0xB8 at the end of the text — 0xE4 starts a 3-byte sequence that is cut short"},
      {bytes({0xF0, 0x9F, 0x98}), 0, "0xF0 0x9F 0x98 at the end of the text"},
      {bytes({0xE4, 0xB8, 0x41}), 0, "0xE4 0xB8 followed by 0x41"},
      {bytes({0xF0, 0x9F, 0x98, 0x20}), 0, "0xF0 0x9F 0x98 followed by 0x20 — 0xF0 starts a 4-byte sequence"},
      {"中文" + bytes({0xFF}), 6, "0xFF never appears"},
  };
  for (const C& c : cases) {
    INFO("case expecting: " << c.says);
    CHECK(ap::utf8_invalid_offset(c.text) == c.offset);
    CHECK_FALSE(ap::utf8_valid(c.text));
    const ap::InputError e = decode_error(c.text);
    CHECK(e.field == "text");
    CHECK_THAT(e.what(), StartsWith("invalid UTF-8 at byte " + std::to_string(c.offset) + " of the text (counting from 0, on line "));
    CHECK_THAT(e.what(), Contains(c.says));
    CHECK(ap::utf8_fault(c.text, c.offset) != "");
    CHECK_THAT(e.what(), Contains(ap::utf8_fault(c.text, c.offset)));
  }
  // the line is counted; the field names the input
  const ap::InputError e = decode_error("line one\nline two\n" + bytes({0x80}), "prompt");
  CHECK(e.field == "prompt");
  CHECK_THAT(e.what(), StartsWith("invalid UTF-8 at byte 18 of the prompt (counting from 0, on line 3): "));
  CHECK(ap::utf8_fault("abc", 1) == "");
}

TEST_CASE("utf8: validity agrees with an independent decoder on all 1- and 2-byte strings and all 3-byte strings that start with a non-ASCII byte", "[utf8]") {
  int valid1 = 0, valid2 = 0, mismatches = 0;
  for (int a = 0; a < 256; ++a) {
    const std::string s = bytes({a});
    valid1 += ap::utf8_valid(s);
    if (ap::utf8_valid(s) != ref_valid(s) && mismatches++ < 5) FAIL_CHECK("1 byte " << a);
    for (int b = 0; b < 256; ++b) {
      const std::string t = bytes({a, b});
      const bool v = ap::utf8_valid(t);
      valid2 += v;
      if (v != ref_valid(t) && mismatches++ < 5) FAIL_CHECK("2 bytes " << a << " " << b);
    }
  }
  CHECK(valid1 == 128);
  CHECK(valid2 == 128 * 128 + 1920);  // two ASCII, or one 2-byte character
  // 3 bytes: every string whose first byte is not ASCII (after an ASCII byte, the rest is a 2-byte
  // string, checked above), and three ASCII first bytes
  std::string t(3, '\0');
  long long valid3 = 0;
  for (int a : [] { std::vector<int> v = {0x00, 0x41, 0x7F}; for (int x = 0x80; x < 256; ++x) v.push_back(x); return v; }())
    for (int b = 0; b < 256; ++b)
      for (int c = 0; c < 256; ++c) {
        t[0] = static_cast<char>(a), t[1] = static_cast<char>(b), t[2] = static_cast<char>(c);
        const bool v = ap::utf8_valid(t);
        valid3 += v;
        if (v != ref_valid(t) && mismatches++ < 5) FAIL_CHECK("3 bytes " << a << " " << b << " " << c);
        if ((c & 7) != 0) continue;  // sanitize: every 8th string
        if (v) {
          if (ap::utf8_sanitize(t) != t && mismatches++ < 5) FAIL_CHECK("sanitize changed valid bytes");
        } else if (!ap::utf8_valid(ap::utf8_sanitize(t)) && mismatches++ < 5) {
          FAIL_CHECK("sanitize left invalid bytes");
        }
      }
  // after the 3 ASCII bytes, any valid 2-byte string; a 2-byte character then ASCII; a 3-byte
  // character (65536 − 2048 below U+0800 − 2048 surrogates)
  CHECK(valid3 == 3LL * (128 * 128 + 1920) + 1920LL * 128 + (65536 - 2048 - 2048));
  // 4-byte strings: every lead byte F0–F7 with sampled continuations, and random strings
  ap::Rng rng(7);
  std::string u(4, '\0');
  for (int i = 0; i < 400000; ++i) {
    const int lead = i < 200000 ? 0xF0 + (i % 8) : static_cast<int>(rng.next_u64() & 0xFF);
    u[0] = static_cast<char>(lead);
    for (int k = 1; k < 4; ++k) {
      const uint64_t r = rng.next_u64();
      u[k] = static_cast<char>((r & 3) ? 0x80 + ((r >> 8) & 0x3F) : (r >> 16) & 0xFF);  // mostly continuations
    }
    if (ap::utf8_valid(u) != ref_valid(u) && mismatches++ < 5) FAIL_CHECK("4 bytes lead " << lead);
  }
  CHECK(mismatches == 0);
}

TEST_CASE("utf8_sanitize: one U+FFFD per maximal ill-formed subpart (Unicode's example)", "[utf8]") {
  // The Unicode Standard, §3.9 "U+FFFD Substitution of Maximal Subparts", and WHATWG's decoder:
  // 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 → a � � � b � c � � d
  const std::string in = bytes({0x61, 0xF1, 0x80, 0x80, 0xE1, 0x80, 0xC2, 0x62, 0x80, 0x63, 0x80, 0xBF, 0x64});
  const std::string R = "\xEF\xBF\xBD";
  CHECK(ap::utf8_sanitize(in) == "a" + R + R + R + "b" + R + "c" + R + R + "d");
  // overlong, surrogate and too-large sequences: each byte after the lead is its own subpart
  CHECK(ap::utf8_sanitize(bytes({0xE0, 0x80, 0xAF})) == R + R + R);
  CHECK(ap::utf8_sanitize(bytes({0xED, 0xA0, 0x80})) == R + R + R);
  CHECK(ap::utf8_sanitize(bytes({0xF4, 0x90, 0x80, 0x80})) == R + R + R + R);
  CHECK(ap::utf8_sanitize(bytes({0xC0, 0xAF})) == R + R);
  CHECK(ap::utf8_sanitize("ok" + bytes({0xE4, 0xB8})) == "ok" + R);  // a truncated sequence: one
  CHECK(ap::utf8_sanitize("中" + bytes({0xFF}) + "文") == "中" + R + "文");
  CHECK(ap::utf8_sanitize("plain ASCII") == "plain ASCII");
  // random bytes always come out valid
  ap::Rng rng(3);
  for (int i = 0; i < 2000; ++i) {
    std::string s(static_cast<size_t>(rng.next_u64() % 64), '\0');
    for (char& c : s) c = static_cast<char>(rng.next_u64() & 0xFF);
    const std::string t = ap::utf8_sanitize(s);
    REQUIRE(ap::utf8_valid(t));
    if (ap::utf8_valid(s)) REQUIRE(t == s);
  }
}

TEST_CASE("describe_char: quoted - escaped when invisible - with the code point", "[utf8]") {
  CHECK(ap::describe_char('Z') == "\"Z\" (U+005A)");
  CHECK(ap::describe_char(0x4E2D) == "\"中\" (U+4E2D)");
  CHECK(ap::describe_char(0x1F600) == "\"😀\" (U+1F600)");
  CHECK(ap::describe_char('\n') == "\"\\n\" (U+000A)");
  CHECK(ap::describe_char('\t') == "\"\\t\" (U+0009)");
  CHECK(ap::describe_char('\r') == "\"\\r\" (U+000D)");
  CHECK(ap::describe_char('"') == "\"\\\"\" (U+0022)");
  CHECK(ap::describe_char('\\') == "\"\\\\\" (U+005C)");
  CHECK(ap::describe_char(' ') == "\" \" (U+0020)");
  CHECK(ap::describe_char(0x01) == "\"\\u0001\" (U+0001)");
  CHECK(ap::describe_char(0x7F) == "\"\\u007F\" (U+007F)");
  CHECK(ap::describe_char(0x85) == "\"\\u0085\" (U+0085)");
  CHECK(ap::describe_char(0x200B) == "\"\\u200B\" (U+200B)");
  CHECK(ap::describe_char(0xFEFF) == "\"\\uFEFF\" (U+FEFF)");
  CHECK(ap::describe_char(0x0301) == "\"◌\xCC\x81\" (U+0301)");  // a combining acute on a dotted circle
  CHECK(ap::describe_char(0xD800) == "\"\\uD800\" (U+D800)");
  CHECK(ap::describe_char(0x110000) == "\"\\u{110000}\" (U+110000)");
  // every description is valid UTF-8
  for (char32_t c = 0; c < 0x3000; ++c) REQUIRE(ap::utf8_valid(ap::describe_char(c)));
}

// -------------------------------------------------------------------------------- tokenizer

TEST_CASE("CharTokenizer::from_text: the distinct code points sorted - ids round-trip", "[tokenizer]") {
  const ap::CharTokenizer tok = ap::CharTokenizer::from_text("hello world\n");
  CHECK(tok.vocab_size() == 9);
  CHECK(tok.chars() == std::vector<char32_t>{'\n', ' ', 'd', 'e', 'h', 'l', 'o', 'r', 'w'});
  const std::vector<int> ids = tok.encode("hello world\n", "text");
  CHECK(ids == std::vector<int>{4, 3, 5, 5, 6, 1, 8, 6, 7, 5, 2, 0});
  CHECK(tok.decode(ids) == "hello world\n");
  CHECK(tok.token_text(4) == "h");
  CHECK(tok.token_text(0) == "\n");
  CHECK(tok.id_of('l') == 5);
  CHECK(tok.id_of('z') == -1);
  CHECK(tok.id_of(0x4E2D) == -1);
  CHECK(tok.encode("").empty());
  CHECK(tok.decode(std::vector<int>{}).empty());
  // one character is a vocabulary too
  const ap::CharTokenizer one = ap::CharTokenizer::from_text("aaaa");
  CHECK(one.vocab_size() == 1);
  CHECK(one.encode("aa") == std::vector<int>{0, 0});
}

TEST_CASE("CharTokenizer: Chinese - accents - emoji are one token per code point", "[tokenizer]") {
  const std::string text = "你好，世界！Hello, café 😀\n你好吗？";
  const ap::CharTokenizer tok = ap::CharTokenizer::from_text(text);
  const std::vector<char32_t> cps = ap::utf8_decode(text);
  const std::vector<int> ids = tok.encode(text, "text");
  REQUIRE(ids.size() == cps.size());
  CHECK(ids.size() == 24);  // 6 + "Hello, " 7 + "café " 5 + 😀 + \n + 4
  CHECK(tok.decode(ids) == text);
  for (size_t i = 0; i < ids.size(); ++i) CHECK(tok.chars()[ids[i]] == cps[i]);
  // sorted by code point, distinct
  for (size_t i = 1; i < tok.chars().size(); ++i) CHECK(tok.chars()[i - 1] < tok.chars()[i]);
  CHECK(tok.chars().front() == '\n');
  CHECK(tok.chars().back() == 0x1F600);
  CHECK(tok.token_text(tok.id_of(0x4E16)) == "世");
  CHECK(tok.token_text(tok.vocab_size() - 1) == "😀");
  // a combining accent is its own token, and decodes back byte for byte
  const ap::CharTokenizer comb = ap::CharTokenizer::from_text("e\xCC\x81");
  CHECK(comb.vocab_size() == 2);
  CHECK(comb.decode(comb.encode("e\xCC\x81")) == "e\xCC\x81");
}

TEST_CASE("CharTokenizer::from_text errors: empty - invalid UTF-8 - too many characters", "[tokenizer][errors]") {
  ap::InputError empty = error_of([] { ap::CharTokenizer::from_text(""); });
  CHECK(empty.field == "text");
  CHECK(std::string(empty.what()) == "the text is empty");

  ap::InputError bad = error_of([] { ap::CharTokenizer::from_text("héllo" + bytes({0xC3, 0x28}) + "!"); });
  CHECK(bad.field == "text");
  CHECK_THAT(bad.what(), StartsWith("invalid UTF-8 at byte 6 of the text (counting from 0"));
  CHECK_THAT(bad.what(), Contains("0xC3 followed by 0x28"));

  // exactly kMaxVocab distinct characters is fine; one more is refused with both numbers
  std::vector<char32_t> cps;
  for (char32_t c = 0x4E00; c < 0x4E00 + ap::kMaxVocab; ++c) cps.push_back(c);
  const ap::CharTokenizer full = ap::CharTokenizer::from_text(ap::utf8_encode(cps));
  CHECK(full.vocab_size() == ap::kMaxVocab);
  CHECK(ap::kMaxVocab == 8192);
  cps.push_back('a');
  ap::InputError many = error_of([&] { ap::CharTokenizer::from_text(ap::utf8_encode(cps)); });
  CHECK(many.field == "text");
  CHECK_THAT(many.what(), Contains("8193 distinct characters"));
  CHECK_THAT(many.what(), Contains("limit of 8192"));
}

TEST_CASE("CharTokenizer::encode: an unknown character is named with its index and byte offset", "[tokenizer][errors]") {
  const ap::CharTokenizer tok = ap::CharTokenizer::from_text("abcdefghijklmnopqrstuvwxyz ");
  REQUIRE(tok.vocab_size() == 27);
  ap::InputError e = error_of([&] { tok.encode("abcZ"); });
  CHECK(e.field == "prompt");
  CHECK_THAT(e.what(), StartsWith("\"Z\" (U+005A) at character 3 (byte 3, both counting from 0) of the prompt is "
                                  "not in the vocabulary of 27 characters"));
  CHECK_THAT(e.what(), Contains("\" abcdefghijklmnopqrstuvwxyz\""));  // the vocabulary, when short

  // after multi-byte characters, the character index and the byte offset differ
  const ap::CharTokenizer zh = ap::CharTokenizer::from_text("你好，世界");
  ap::InputError z = error_of([&] { zh.encode("你好吗"); });
  CHECK_THAT(z.what(), StartsWith("\"吗\" (U+5417) at character 2 (byte 6, both counting from 0) of the prompt"));
  CHECK_THAT(z.what(), Contains("vocabulary of 5 characters"));

  // control characters are shown escaped; the field names the input
  ap::InputError n = error_of([&] { tok.encode("ab\ncd", "text"); });
  CHECK(n.field == "text");
  CHECK_THAT(n.what(), StartsWith("\"\\n\" (U+000A) at character 2 (byte 2, both counting from 0) of the text"));
  ap::InputError t = error_of([&] { tok.encode("\t"); });
  CHECK_THAT(t.what(), StartsWith("\"\\t\" (U+0009) at character 0 (byte 0"));

  // invalid UTF-8 in a prompt
  ap::InputError u = error_of([&] { tok.encode("ab" + bytes({0xFF})); });
  CHECK(u.field == "prompt");
  CHECK_THAT(u.what(), StartsWith("invalid UTF-8 at byte 2 of the prompt (counting from 0"));

  // a large vocabulary is not listed in the message
  std::vector<char32_t> cps;
  for (char32_t c = 0x4E00; c < 0x4E00 + 500; ++c) cps.push_back(c);
  const ap::CharTokenizer big = ap::CharTokenizer::from_text(ap::utf8_encode(cps));
  ap::InputError b = error_of([&] { big.encode("x"); });
  CHECK(std::string(b.what()) ==
        "\"x\" (U+0078) at character 0 (byte 0, both counting from 0) of the prompt is not in the vocabulary of 500 "
        "characters");
}

TEST_CASE("CharTokenizer::from_chars: a saved vocabulary is checked", "[tokenizer][errors]") {
  const ap::CharTokenizer tok = ap::CharTokenizer::from_text("the cat sees a dog.\n猫");
  const ap::CharTokenizer again = ap::CharTokenizer::from_chars(tok.chars());
  CHECK(again.chars() == tok.chars());
  CHECK(again.encode("a cat.") == tok.encode("a cat."));
  // the vocabulary's own UTF-8 text reads back to the same tokenizer
  CHECK(ap::CharTokenizer::from_text(ap::utf8_encode(tok.chars())).chars() == tok.chars());

  struct C { std::vector<char32_t> chars; const char* says; };
  std::vector<char32_t> too_many;
  for (char32_t c = 0x100; c < 0x100 + ap::kMaxVocab + 1; ++c) too_many.push_back(c);
  for (const C& c : {C{{}, "the vocabulary is empty"},
                     C{{'a', 'c', 'b'}, "not sorted by code point: character 2 (counting from 0), \"b\" (U+0062), comes after \"c\" (U+0063)"},
                     C{{'a', 'b', 'b'}, "character 2 of the vocabulary (counting from 0), \"b\" (U+0062), repeats the one before it"},
                     C{{'a', 0xD800}, "character 1 of the vocabulary (counting from 0) is \"\\uD800\" (U+D800), not a Unicode scalar value"},
                     C{{'a', 0x110000}, "is \"\\u{110000}\" (U+110000), not a Unicode scalar value"},
                     C{too_many, "the vocabulary has 8193 characters, more than the limit of 8192"}}) {
    INFO(c.says);
    ap::InputError e = error_of([&] { ap::CharTokenizer::from_chars(c.chars); });
    CHECK(e.field == "vocab");
    CHECK_THAT(e.what(), Contains(c.says));
  }
  std::vector<char32_t> max;
  for (char32_t c = 0x100; c < 0x100 + ap::kMaxVocab; ++c) max.push_back(c);
  CHECK(ap::CharTokenizer::from_chars(max).vocab_size() == ap::kMaxVocab);
  CHECK(ap::CharTokenizer::from_chars({0x10FFFF}).token_text(0) == "\xF4\x8F\xBF\xBF");
}

TEST_CASE("CharTokenizer::decode: ids out of range are named", "[tokenizer][errors]") {
  const ap::CharTokenizer tok = ap::CharTokenizer::from_text("abc");
  CHECK(tok.decode({2, 1, 0}) == "cba");
  for (int bad : {3, -1, 1000000}) {
    INFO(bad);
    ap::InputError e = error_of([&] { tok.decode({0, 1, bad}); });
    CHECK(e.field == "ids");
    CHECK_THAT(e.what(), Contains("token id " + std::to_string(bad) + " at position 2 (counting from 0) is outside "
                                  "the vocabulary: ids run from 0 to 2"));
    ap::InputError t = error_of([&] { tok.token_text(bad); });
    CHECK(t.field == "ids");
  }
}

TEST_CASE("CharTokenizer: a large text encodes and decodes back", "[tokenizer]") {
  std::string text;
  ap::Rng rng(11);
  const char32_t pool[] = {'a', 'b', ' ', '\n', 0xE9, 0x4E2D, 0x6587, 0x1F600};
  std::vector<char32_t> cps;
  for (int i = 0; i < 300000; ++i) cps.push_back(pool[rng.next_u64() % 8]);
  text = ap::utf8_encode(cps);
  const ap::CharTokenizer tok = ap::CharTokenizer::from_text(text);
  CHECK(tok.vocab_size() == 8);
  const std::vector<int> ids = tok.encode(text, "text");
  CHECK(ids.size() == cps.size());
  CHECK(tok.decode(ids) == text);
}
