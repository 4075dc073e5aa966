// json_test_util.h — a tiny, strict, self-contained JSON reader for the tests (header-only).
//
// Deliberately independent of the code under test (src/formats/json.h): objects, arrays, numbers
// (as double, with their raw text kept), strings with escapes (\uXXXX incl. surrogate pairs),
// true/false/null. Every value remembers its [begin, end) span in the source text, so a
// sub-object (e.g. a golden case's "spec") can be passed on verbatim. Throws std::runtime_error.
#pragma once

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace jt {

struct Value {
  enum Type { Null, Bool, Number, String, Array, Object };
  Type type = Null;
  bool b = false;
  double num = 0.0;
  std::string str;  // string contents, or the raw text of a number
  std::vector<Value> arr;
  std::vector<std::pair<std::string, Value>> obj;
  size_t begin = 0, end = 0;  // span in the source text

  bool is_null() const { return type == Null; }
  bool is_bool() const { return type == Bool; }
  bool is_number() const { return type == Number; }
  bool is_string() const { return type == String; }
  bool is_array() const { return type == Array; }
  bool is_object() const { return type == Object; }
  size_t size() const { return type == Array ? arr.size() : obj.size(); }

  const Value* find(const std::string& key) const {
    for (const auto& kv : obj)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
  bool has(const std::string& key) const { return type == Object && find(key) != nullptr; }
  const Value& operator[](const std::string& key) const {
    if (type != Object) throw std::runtime_error("not an object (looking up \"" + key + "\")");
    const Value* v = find(key);
    if (!v) throw std::runtime_error("missing key \"" + key + "\"");
    return *v;
  }
  const Value& operator[](size_t i) const {
    if (type != Array) throw std::runtime_error("not an array");
    if (i >= arr.size()) throw std::runtime_error("index out of range");
    return arr[i];
  }
};

namespace detail {

struct Parser {
  const std::string& s;
  size_t i = 0;
  int depth = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON error at offset " + std::to_string(i) + ": " + what);
  }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  bool lit(const char* word) {
    size_t n = std::string(word).size();
    if (s.compare(i, n, word) == 0) { i += n; return true; }
    return false;
  }
  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) out += char(cp);
    else if (cp < 0x800) { out += char(0xC0 | (cp >> 6)); out += char(0x80 | (cp & 0x3F)); }
    else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12)); out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18)); out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F)); out += char(0x80 | (cp & 0x3F));
    }
  }
  unsigned hex4() {
    if (i + 4 > s.size()) fail("short \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s[i++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f') v |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= unsigned(c - 'A' + 10);
      else fail("bad hex digit");
    }
    return v;
  }
  std::string string_body() {
    if (s[i] != '"') fail("expected string");
    ++i;
    std::string out;
    while (true) {
      if (i >= s.size()) fail("unterminated string");
      char c = s[i++];
      if (c == '"') break;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') { out += c; continue; }
      if (i >= s.size()) fail("bad escape");
      char e = s[i++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && s.compare(i, 2, "\\u") == 0) {
            i += 2;
            unsigned lo = hex4();
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default: fail("bad escape");
      }
    }
    return out;
  }
  Value value() {
    ws();
    if (i >= s.size()) fail("unexpected end");
    if (++depth > 200) fail("too deep");
    Value v;
    v.begin = i;
    char c = s[i];
    if (c == '{') {
      v.type = Value::Object;
      ++i; ws();
      if (i < s.size() && s[i] == '}') { ++i; }
      else {
        while (true) {
          ws();
          if (i >= s.size() || s[i] != '"') fail("expected key");
          std::string key = string_body();
          ws();
          if (i >= s.size() || s[i] != ':') fail("expected ':'");
          ++i;
          v.obj.emplace_back(std::move(key), value());
          ws();
          if (i < s.size() && s[i] == ',') { ++i; continue; }
          if (i < s.size() && s[i] == '}') { ++i; break; }
          fail("expected ',' or '}'");
        }
      }
    } else if (c == '[') {
      v.type = Value::Array;
      ++i; ws();
      if (i < s.size() && s[i] == ']') { ++i; }
      else {
        while (true) {
          v.arr.push_back(value());
          ws();
          if (i < s.size() && s[i] == ',') { ++i; continue; }
          if (i < s.size() && s[i] == ']') { ++i; break; }
          fail("expected ',' or ']'");
        }
      }
    } else if (c == '"') {
      v.type = Value::String;
      v.str = string_body();
    } else if (lit("true")) { v.type = Value::Bool; v.b = true; }
    else if (lit("false")) { v.type = Value::Bool; v.b = false; }
    else if (lit("null")) { v.type = Value::Null; }
    else if (c == '-' || (c >= '0' && c <= '9')) {
      // Strict JSON number grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
      size_t st = i;
      auto digits = [&] { size_t d = i; while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i; return i - d; };
      if (s[i] == '-') ++i;
      if (i < s.size() && s[i] == '0') ++i;
      else if (digits() == 0) fail("bad number");
      if (i < s.size() && s[i] == '.') { ++i; if (digits() == 0) fail("bad fraction"); }
      if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        if (digits() == 0) fail("bad exponent");
      }
      v.type = Value::Number;
      v.str = s.substr(st, i - st);
      v.num = std::strtod(v.str.c_str(), nullptr);
    } else {
      fail(std::string("unexpected character '") + c + "'");
    }
    v.end = i;
    --depth;
    return v;
  }
};

}  // namespace detail

inline Value parse(const std::string& text) {
  detail::Parser p{text};
  Value v = p.value();
  p.ws();
  if (p.i != text.size()) p.fail("trailing characters");
  return v;
}

// A JSON number or one of the strings "inf", "-inf", "nan" → double. Throws otherwise.
inline double to_double(const Value& v) {
  if (v.is_number()) return v.num;
  if (v.is_string()) {
    if (v.str == "inf") return HUGE_VAL;
    if (v.str == "-inf") return -HUGE_VAL;
    if (v.str == "nan") return std::nan("");
  }
  throw std::runtime_error("not a number or non-finite string");
}

// A 2-D array of numbers/non-finite strings → rows of doubles.
inline std::vector<std::vector<double>> to_matrix(const Value& v) {
  if (!v.is_array()) throw std::runtime_error("matrix is not an array");
  std::vector<std::vector<double>> m;
  for (const auto& row : v.arr) {
    if (!row.is_array()) throw std::runtime_error("matrix row is not an array");
    std::vector<double> r;
    for (const auto& x : row.arr) r.push_back(to_double(x));
    m.push_back(std::move(r));
  }
  return m;
}

inline std::vector<double> to_vector(const Value& v) {
  if (!v.is_array()) throw std::runtime_error("vector is not an array");
  std::vector<double> r;
  for (const auto& x : v.arr) r.push_back(to_double(x));
  return r;
}

}  // namespace jt
