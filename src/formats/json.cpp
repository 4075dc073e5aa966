// json.cpp — reader and writer for json.h.
#include "formats/json.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <unordered_map>

#include "core/base/input_error.h"
#include "core/base/number_text.h"
#include "core/base/utf8.h"

namespace ap::json {

std::string excerpt(const std::string& s, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // inside a character
    if (chars++ == max_chars) return s.substr(0, i) + "…";
  }
  return s;
}

namespace {

// Doubles in our output are counts and options (whole numbers); anything else gets 17 digits.
void write_double(std::string& out, double v) {
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) {
    out += std::to_string(static_cast<long long>(v));
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  out += buf;
}

// The two-character escapes: a character and the letter after its backslash. The writer writes
// these (other control characters as \u00XX); the reader reads them, and "\/" (RFC 8259).
constexpr std::pair<char, char> kEscapes[] = {{'"', '"'}, {'\\', '\\'}, {'\n', 'n'}, {'\r', 'r'},
                                              {'\t', 't'}, {'\b', 'b'},   {'\f', 'f'}};

// A byte → table: escape_letters()[c] is the letter after the backslash for c (0: none);
// unescape_letters()[e] the character that "\e" stands for (0: not an escape).
constexpr std::array<char, 256> escape_letters() {
  std::array<char, 256> t{};
  for (const auto& p : kEscapes) t[static_cast<unsigned char>(p.first)] = p.second;
  return t;
}
constexpr std::array<char, 256> unescape_letters() {
  std::array<char, 256> t{};
  for (const auto& p : kEscapes) t[static_cast<unsigned char>(p.second)] = p.first;
  t['/'] = '/';
  return t;
}
constexpr std::array<char, 256> kEscapeLetter = escape_letters(), kUnescaped = unescape_letters();

void write_string(std::string& out, const std::string& text) {
  // Strings built from bad input (a message quoting it) may hold invalid UTF-8; JSON must not.
  const std::string sanitized = utf8_valid(text) ? std::string() : utf8_sanitize(text);
  const std::string& s = sanitized.empty() ? text : sanitized;
  out += '"';
  for (unsigned char c : s) {
    if (const char e = kEscapeLetter[c]) {
      out += '\\';
      out += e;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

// The character at byte `pos` as a message shows it: "x" (U+0078) — see describe_char.
std::string shown_char(const std::string& s, size_t pos) {
  const unsigned char c = static_cast<unsigned char>(s[pos]);
  const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  try {
    return describe_char(utf8_decode(s.substr(pos, len))[0]);
  } catch (const std::exception&) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02X", c);
    return buf;
  }
}

}  // namespace

namespace detail {

class Reader {
 public:
  explicit Reader(const std::string& text) : s_(text) {}

  Value document() {
    const size_t bad = utf8_invalid_offset(s_);
    if (bad != std::string::npos) {
      pos_ = bad;
      fail("invalid UTF-8 (" + utf8_fault(s_, bad) + ")");
    }
    Value v = value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  // Line and column (1-based; the column counts characters) of byte offset `at`.
  std::pair<int, int> where(size_t at) const {
    int line = 1, column = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(s_[i]);
      if (c == '\n') { ++line; column = 1; }
      else if ((c & 0xC0) != 0x80) { ++column; }  // a continuation byte is part of the character before
    }
    return {line, column};
  }

  static std::string at_text(std::pair<int, int> lc) {
    return "line " + std::to_string(lc.first) + ", column " + std::to_string(lc.second);
  }

  [[noreturn]] void fail(const std::string& what) const {
    const auto lc = where(pos_);
    throw JsonError("JSON: " + what + " at " + at_text(lc), lc.first, lc.second);
  }

  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }

  bool consume(const char* word) {
    size_t n = 0;
    while (word[n]) ++n;
    if (s_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }

  Value value(int depth) {
    if (depth > kMaxJsonDepth) fail("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    skip_ws();
    if (pos_ >= s_.size()) fail("unexpected end of input");
    const char c = s_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return Value(string());
    if (consume("true")) return Value(true);
    if (consume("false")) return Value(false);
    if (consume("null")) return Value(nullptr);
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    fail("unexpected character " + shown_char(s_, pos_));
  }

  Value object(int depth) {
    Value v = Value::object();
    std::unordered_map<std::string, size_t> seen;  // key → byte offset of its first occurrence
    ++pos_;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') { ++pos_; return v; }
    for (;;) {
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a key in quotes");
      const size_t key_at = pos_;
      std::string key = string();
      const auto first = seen.emplace(key, key_at);
      if (!first.second) {
        const auto lc = where(key_at);
        throw JsonError("JSON: repeated key \"" + excerpt(key) + "\" at " + at_text(lc) + " (first given at " +
                            at_text(where(first.first->second)) + "): each key may appear once in an object",
                        lc.first, lc.second);
      }
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') fail("expected ':' after the key \"" + excerpt(key) + "\"");
      ++pos_;
      v.members_.emplace_back(std::move(key), value(depth + 1));
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') { ++pos_; continue; }
      if (pos_ < s_.size() && s_[pos_] == '}') { ++pos_; return v; }
      fail("expected ',' or '}' in an object");
    }
  }

  Value array(int depth) {
    Value v = Value::array();
    ++pos_;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == ']') { ++pos_; return v; }
    for (;;) {
      v.push(value(depth + 1));
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') { ++pos_; continue; }
      if (pos_ < s_.size() && s_[pos_] == ']') { ++pos_; return v; }
      fail("expected ',' or ']' in an array");
    }
  }

  Value number() {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ > from;
    };
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') ++pos_;
    else if (!digits()) fail("a number needs digits");
    if (pos_ < s_.size() && s_[pos_] == '.') { ++pos_; if (!digits()) fail("a number needs digits after '.'"); }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) fail("a number needs digits in its exponent");
    }
    double d = 0.0;
    parse_decimal(s_.data() + start, s_.data() + pos_, d);
    if (!std::isfinite(d)) { pos_ = start; fail("number out of range"); }
    return Value(d);
  }

  unsigned hex4() {
    if (pos_ + 4 > s_.size()) fail("short \\u escape");
    unsigned u = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_++];
      u <<= 4;
      if (c >= '0' && c <= '9') u |= c - '0';
      else if (c >= 'a' && c <= 'f') u |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') u |= c - 'A' + 10;
      else fail("bad \\u escape");
    }
    return u;
  }

  std::string string() {
    ++pos_;  // opening quote
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) { --pos_; fail("control character in a string"); }
      if (c != '\\') {
        // the run of plain characters from here, appended at once (a matrix's text is thousands)
        size_t end = pos_;
        while (end < s_.size() && s_[end] != '"' && s_[end] != '\\' && static_cast<unsigned char>(s_[end]) >= 0x20) ++end;
        out.append(s_, pos_ - 1, end - pos_ + 1);
        pos_ = end;
        continue;
      }
      if (pos_ >= s_.size()) fail("unterminated string");
      const char e = s_[pos_++];
      if (e == 'u') {
        unsigned cp = hex4();
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (!consume("\\u")) fail("lone surrogate in \\u escape");
          const unsigned lo = hex4();
          if (lo < 0xDC00 || lo > 0xDFFF) fail("bad surrogate pair in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          fail("lone surrogate in \\u escape");
        }
        utf8_append(out, cp);  // a scalar value: the surrogates are refused above
      } else if (const char c = kUnescaped[static_cast<unsigned char>(e)]) {
        out += c;
      } else {
        pos_ -= 2;
        fail("bad escape: a backslash before " + shown_char(s_, pos_ + 1));
      }
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace detail

Value Value::f32(float f) {
  if (std::isnan(f)) return Value("nan");
  if (std::isinf(f)) return Value(f > 0 ? "inf" : "-inf");
  Value v(static_cast<double>(f));
  v.f32_ = true;
  return v;
}

Value& Value::set(const std::string& key, Value v) {
  for (auto& m : members_)
    if (m.first == key) return m.second = std::move(v);
  members_.emplace_back(key, std::move(v));
  return members_.back().second;
}

const Value* Value::find(const std::string& key) const {
  for (const auto& m : members_)
    if (m.first == key) return &m.second;
  return nullptr;
}

void Value::write(std::string& out) const {
  switch (type_) {
    case Type::null: out += "null"; break;
    case Type::boolean: out += bool_ ? "true" : "false"; break;
    case Type::number:
      if (f32_) append_float(out, static_cast<float>(num_));
      else write_double(out, num_);
      break;
    case Type::string: write_string(out, str_); break;
    case Type::raw: out += str_; break;
    case Type::array:
      out += '[';
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) out += ',';
        items_[i].write(out);
      }
      out += ']';
      break;
    case Type::object:
      out += '{';
      for (size_t i = 0; i < members_.size(); ++i) {
        if (i) out += ',';
        write_string(out, members_[i].first);
        out += ':';
        members_[i].second.write(out);
      }
      out += '}';
      break;
  }
}

std::string Value::dump() const {
  std::string out;
  write(out);
  return out;
}

Value parse(const std::string& text) { return detail::Reader(text).document(); }

Value parse_file(const std::string& text, const std::string& name) {
  try {
    return parse(text);
  } catch (const JsonError& e) {
    throw InputError(name + ": not valid JSON: " + e.what(), name);
  }
}

}  // namespace ap::json
