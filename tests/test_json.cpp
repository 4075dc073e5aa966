// test_json.cpp — the JSON reader and writer of src/formats/json.h as a hostile user tries them:
// repeated keys refused by name with the line and column of the second occurrence at every depth
// (also when spelt with escapes), objects with many keys read without a quadratic scan, invalid
// UTF-8 refused with its position and bytes, columns counted in characters, messages that show a
// character rather than a raw byte, and a writer whose output is valid UTF-8 whatever its strings
// hold (invalid parts replaced by U+FFFD). Output is read back with tests/json_test_util.h.
#include <catch2/catch.hpp>

#include <string>

#include "formats/json.h"
#include "core/base/rng.h"
#include "core/base/utf8.h"
#include "json_test_util.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace json = ap::json;

namespace {

json::JsonError parse_error(const std::string& text) {
  try {
    json::parse(text);
  } catch (const json::JsonError& e) {
    return e;
  }
  FAIL("parsed without error: " << text);
  return json::JsonError("", 0, 0);
}

const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

}  // namespace

TEST_CASE("json::parse refuses a repeated key by name - at the second occurrence", "[json][errors]") {
  json::JsonError e = parse_error(R"({"Q":[[1]],"K":[[1]],"Q":[[2]]})");
  CHECK(e.line == 1);
  CHECK(e.column == 22);  // the second "Q"
  CHECK(std::string(e.what()) ==
        "JSON: repeated key \"Q\" at line 1, column 22 (first given at line 1, column 2): each key may appear once in "
        "an object");

  // on other lines, and deep inside arrays and objects
  json::JsonError m = parse_error("{\n  \"a\": 1,\n  \"b\": {\"c\": [1, {\"d\": 1,\n    \"d\": 2}]},\n  \"e\": 3\n}");
  CHECK(m.line == 4);
  CHECK(m.column == 5);
  CHECK_THAT(m.what(), Contains("repeated key \"d\""));
  CHECK_THAT(m.what(), Contains("first given at line 3, column 19"));
  for (const char* text : {R"([{"x":1,"x":1}])", R"({"a":{"b":{"c":{"d":{"e":1,"e":1}}}}})", R"({"a":1,"b":2,"a":1})",
                           R"({"":1,"":2})", R"([1,[2,[3,{"n":null,"n":null}]]])"}) {
    INFO(text);
    CHECK_THAT(parse_error(text).what(), Contains("repeated key"));
  }
  // the same key spelt with an escape is the same key
  json::JsonError esc = parse_error(R"({"Q":1,"\u0051":2})");
  CHECK_THAT(esc.what(), Contains("repeated key \"Q\""));
  CHECK(esc.column == 8);
  // a huge repeated key is quoted in part
  const std::string big(5000, 'k');
  json::JsonError huge = parse_error("{\"" + big + "\":1,\"" + big + "\":2}");
  CHECK(std::string(huge.what()).size() < 300);
  CHECK_THAT(huge.what(), Contains(std::string(40, 'k') + "…\""));
}

TEST_CASE("json::parse: the same key in different objects - or in another case - is fine", "[json]") {
  json::Value v = json::parse(R"({"a":{"x":1},"b":{"x":2},"c":[{"x":3},{"x":4}],"q":5,"Q":6})");
  REQUIRE(v.is_object());
  CHECK(v.size() == 5);
  CHECK(v.find("a")->find("x")->as_number() == 1);
  CHECK(v.find("b")->find("x")->as_number() == 2);
  CHECK(v.find("c")->items()[1].find("x")->as_number() == 4);
  CHECK(v.find("q")->as_number() == 5);
  CHECK(v.find("Q")->as_number() == 6);
  // members keep their order
  CHECK(v.members()[0].first == "a");
  CHECK(v.members()[4].first == "Q");
}

TEST_CASE("json::parse: an object of 100,000 keys - in order - a repeat at the end still found", "[json]") {
  // With a linear scan per key this would take ~5·10^9 string comparisons; it must be linear.
  std::string text = "{";
  for (int i = 0; i < 100000; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  json::Value v = json::parse(text + "}");
  REQUIRE(v.size() == 100000);
  CHECK(v.members()[12345].first == "k12345");
  CHECK(v.members()[12345].second.as_number() == 12345);
  CHECK(v.find("k99999")->as_number() == 99999);
  json::JsonError e = parse_error(text + ",\"k7\":0}");
  CHECK_THAT(e.what(), Contains("repeated key \"k7\""));
}

TEST_CASE("json::parse refuses invalid UTF-8 with its line - column and bytes", "[json][errors]") {
  struct C { std::string text; int line, column; const char* says; };
  for (const C& c : {C{"{\"Q\xFF\xFE\":1}", 1, 4, "0xFF never appears in UTF-8"},
                     C{"{\"x\":\"1 2\",\n \"y\":\"\xC3(\"}", 2, 7, "0xC3 followed by 0x28"},
                     C{"[\"\xED\xA0\x80\"]", 1, 3, "encodes U+D800, a UTF-16 surrogate"},
                     C{"[\"\xC0\xAF\"]", 1, 3, "0xC0 never appears"},
                     C{"\xEF\xBB", 1, 1, "cut short"},
                     C{"{\"中文\":\"\x80\"}", 1, 8, "0x80 is a continuation byte"}}) {
    INFO(c.says);
    json::JsonError e = parse_error(c.text);
    CHECK(e.line == c.line);
    CHECK(e.column == c.column);
    CHECK_THAT(e.what(), StartsWith("JSON: invalid UTF-8 ("));
    CHECK_THAT(e.what(), Contains(c.says));
    CHECK(ap::utf8_valid(e.what()));
  }
  // valid UTF-8 in strings, raw or escaped, reads as UTF-8
  json::Value v = json::parse("{\"名前\":\"注意力 😀\",\"e\":\"\\u00e9\\ud83d\\ude00\"}");
  CHECK(v.find("名前")->as_string() == "注意力 😀");
  CHECK(v.find("e")->as_string() == "é😀");
}

TEST_CASE("json::parse: columns count characters - messages show characters - not raw bytes", "[json][errors]") {
  json::JsonError d = parse_error("{\"中文\":1,\"中文\":2}");
  CHECK(d.column == 9);
  CHECK_THAT(d.what(), Contains("first given at line 1, column 2"));
  json::JsonError u = parse_error("[1, é]");
  CHECK(u.column == 5);
  CHECK(std::string(u.what()) == "JSON: unexpected character \"é\" (U+00E9) at line 1, column 5");
  json::JsonError c = parse_error("[\x01]");
  CHECK_THAT(c.what(), Contains("unexpected character \"\\u0001\" (U+0001)"));
  json::JsonError esc = parse_error("[\"a\\中\"]");
  CHECK_THAT(esc.what(), Contains("bad escape: a backslash before \"中\" (U+4E2D)"));
  CHECK(esc.column == 4);
}

TEST_CASE("json::parse: strings - runs of plain characters between escapes read whole", "[json]") {
  const std::string long_run(5000, 'x');
  json::Value v = json::parse("[\"" + long_run + "\\n" + long_run + "\\\"end\\u00e9\", \"\", \"a\", \"\\t\"]");
  CHECK(v[0].as_string() == long_run + "\n" + long_run + "\"end\xC3\xA9");
  CHECK(v[1].as_string().empty());
  CHECK(v[2].as_string() == "a");
  CHECK(v[3].as_string() == "\t");
  // a control character after a run: named at its own column
  json::JsonError c = parse_error("[\"abcdef\x01\"]");
  CHECK_THAT(c.what(), Contains("control character in a string"));
  CHECK(c.column == 9);
  json::JsonError open = parse_error("[\"abcdef");
  CHECK_THAT(open.what(), Contains("unterminated string"));
}

TEST_CASE("json::Value::dump writes valid UTF-8 whatever its strings hold", "[json]") {
  CHECK(json::Value("a\xFF" "b").dump() == "\"a" + kReplacement + "b\"");
  CHECK(json::Value("\xC3(").dump() == "\"" + kReplacement + "(\"");
  CHECK(json::Value("\xED\xA0\x80").dump() == "\"" + kReplacement + kReplacement + kReplacement + "\"");
  CHECK(json::Value("注意力 😀 café").dump() == "\"注意力 😀 café\"");  // valid text unchanged
  CHECK(json::Value("tab\tnl\nquote\"\x01").dump() == R"("tab\tnl\nquote\"\u0001")");
  json::Value o = json::Value::object();
  o.set("key\xFE", "value\x80");
  CHECK(o.dump() == "{\"key" + kReplacement + "\":\"value" + kReplacement + "\"}");

  // random bytes in keys and strings: the output is valid UTF-8, reads back (with an independent
  // reader too), and holds the sanitised text
  ap::Rng rng(17);
  for (int i = 0; i < 3000; ++i) {
    std::string s(static_cast<size_t>(rng.next_u64() % 24), '\0');
    for (char& ch : s) ch = static_cast<char>(rng.next_u64() & 0xFF);
    json::Value obj = json::Value::object();
    obj.set(s, s);
    obj.set("list", json::Value::array()).push(s);
    const std::string out = obj.dump();
    REQUIRE(ap::utf8_valid(out));
    const json::Value back = json::parse(out);
    REQUIRE(back.members()[0].first == ap::utf8_sanitize(s));
    REQUIRE(back.members()[0].second.as_string() == ap::utf8_sanitize(s));
    jt::Value indep;
    REQUIRE_NOTHROW(indep = jt::parse(out));
    REQUIRE(indep["list"][0].str == ap::utf8_sanitize(s));
  }
}

TEST_CASE("json::excerpt cuts long text at a character boundary", "[json]") {
  CHECK(json::excerpt("short") == "short");
  CHECK(json::excerpt(std::string(40, 'x')) == std::string(40, 'x'));
  CHECK(json::excerpt(std::string(41, 'x')) == std::string(40, 'x') + "…");
  std::string zh;
  for (int i = 0; i < 50; ++i) zh += "中";
  const std::string cut = json::excerpt(zh, 10);
  CHECK(cut == zh.substr(0, 30) + "…");
  CHECK(ap::utf8_valid(cut));
}
