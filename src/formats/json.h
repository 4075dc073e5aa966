// json.h — a small JSON value, reader and writer for the API's text face (no dependencies but core/base).
//
// Reader: RFC 8259 JSON (objects, arrays, strings with escapes incl. \uXXXX and surrogate pairs,
// numbers as double, true/false/null); errors are JsonError with a 1-based line and column (the
// column counts characters, not bytes). Stricter than RFC 8259 where it allows ambiguity, because
// a spec is typed by people and pasted by hostile ones:
//   - an object that repeats a key ({"Q":…,"Q":…}, also spelt "\u0051") is refused, naming the key,
//     at the second occurrence, at any depth — never silently "the last one wins";
//   - the text must be valid UTF-8 (RFC 8259 §8.1); the error names the line, column and bytes.
// Nesting depth is limited to kMaxJsonDepth so hostile input cannot exhaust the stack; an object
// with n keys is read in O(n) (no quadratic key scan).
// Writer: objects keep insertion order; whole numbers as integers; values marked f32 with the
// fewest digits that read back to the same float32 (number_text.h). The output is always valid
// UTF-8: invalid UTF-8 in any string or key (a message that quotes bad input, say) is written with
// each ill-formed part replaced by U+FFFD. Raw values are trusted as they are.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ap::json {

constexpr int kMaxJsonDepth = 64;

struct JsonError : std::invalid_argument {
  JsonError(const std::string& message, int line, int column)
      : std::invalid_argument(message), line(line), column(column) {}
  int line, column;
};

namespace detail {
class Reader;
}

// At most max_chars characters of s, cut at a character boundary, with "…" if cut: how messages
// quote a key or a value that may be huge.
std::string excerpt(const std::string& s, size_t max_chars = 40);

class Value {
 public:
  // raw: JSON text already written (e.g. a large matrix), emitted as is by dump().
  enum class Type { null, boolean, number, string, array, object, raw };

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : type_(Type::boolean), bool_(b) {}
  Value(double d) : type_(Type::number), num_(d) {}
  Value(int i) : type_(Type::number), num_(i) {}
  Value(long long i) : type_(Type::number), num_(static_cast<double>(i)) {}
  Value(const char* s) : type_(Type::string), str_(s) {}
  Value(std::string s) : type_(Type::string), str_(std::move(s)) {}
  // A float32 number: written with float32's shortest digits; non-finite becomes "-inf"/"inf"/"nan".
  static Value f32(float f);
  // Pre-written JSON text, trusted to be valid; reading never produces one.
  static Value raw(std::string json_text) { Value v; v.type_ = Type::raw; v.str_ = std::move(json_text); return v; }
  static Value array() { Value v; v.type_ = Type::array; return v; }
  static Value object() { Value v; v.type_ = Type::object; return v; }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::null; }
  bool is_bool() const { return type_ == Type::boolean; }
  bool is_number() const { return type_ == Type::number; }
  bool is_string() const { return type_ == Type::string; }
  bool is_array() const { return type_ == Type::array; }
  bool is_object() const { return type_ == Type::object; }

  bool as_bool() const { return bool_; }
  double as_number() const { return num_; }
  const std::string& as_string() const { return str_; }
  const std::vector<Value>& items() const { return items_; }
  const std::vector<std::pair<std::string, Value>>& members() const { return members_; }

  // Arrays.
  Value& push(Value v) { items_.push_back(std::move(v)); return items_.back(); }
  size_t size() const { return type_ == Type::object ? members_.size() : items_.size(); }
  const Value& operator[](size_t i) const { return items_[i]; }
  // Objects: set replaces an existing key; find returns null if absent.
  Value& set(const std::string& key, Value v);
  const Value* find(const std::string& key) const;

  std::string dump() const;

 private:
  friend class detail::Reader;  // appends members it has checked for repeats
  void write(std::string& out) const;
  Type type_ = Type::null;
  bool bool_ = false;
  bool f32_ = false;
  double num_ = 0.0;
  std::string str_;
  std::vector<Value> items_;
  std::vector<std::pair<std::string, Value>> members_;
};

// Parses one JSON text (surrounding whitespace allowed). Throws JsonError.
Value parse(const std::string& text);
// The same for the text of the file `name`: an error is an InputError "name: not valid JSON: …".
Value parse_file(const std::string& text, const std::string& name);


}  // namespace ap::json
