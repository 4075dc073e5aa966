// spec.cpp — the shared readers and writers of the API's JSON (see spec.h).
#include "api/spec.h"

#include <cmath>
#include <limits>

#include "core/base/number_text.h"

namespace ap::spec {

namespace {

float read_cell(const Value& v, const std::string& field, int row, int col) {
  if (v.is_number()) {
    const double d = v.as_number();
    if (std::fabs(d) > std::numeric_limits<float>::max())
      throw InputError(field + ", row " + std::to_string(row) + ", column " + std::to_string(col) +
                           ": the number is outside the float32 range (±3.4e38)",
                       field, row, col);
    return static_cast<float>(d);
  }
  if (v.is_string()) {
    const std::string& s = v.as_string();
    if (s == "-inf") return -std::numeric_limits<float>::infinity();
    if (s == "inf") return std::numeric_limits<float>::infinity();
    if (s == "nan") return std::numeric_limits<float>::quiet_NaN();
  }
  throw InputError(field + ", row " + std::to_string(row) + ", column " + std::to_string(col) +
                       ": expected a number, got " + v.dump().substr(0, 24),
                   field, row, col);
}

}  // namespace

Tensor read_matrix(const Value& v, const std::string& field) {
  if (v.is_string()) {
    try {
      return parse_matrix(v.as_string());
    } catch (const ParseError& e) {
      throw InputError(field + ": " + e.what(), field, e.row, e.column);
    }
  }
  if (!v.is_array() || v.size() == 0)
    throw InputError(field + " must be a matrix: [[1, 0], [0, 1]] or text such as \"1 0; 0 1\"", field);
  const bool flat = !v[0].is_array();
  const int rows = flat ? 1 : static_cast<int>(v.size());
  if (rows > kMaxDim)
    throw InputError(field + " has " + std::to_string(rows) + " rows, more than the limit of " +
                         std::to_string(kMaxDim),
                     field);
  std::vector<std::vector<float>> out(rows);
  for (int i = 0; i < rows; ++i) {
    const Value& row = flat ? v : v[i];
    if (!row.is_array())
      throw InputError(field + ", row " + std::to_string(i + 1) + ": expected a list of numbers", field, i + 1, 0);
    if (row.size() > static_cast<size_t>(kMaxDim))
      throw InputError(field + ", row " + std::to_string(i + 1) + " has more than " + std::to_string(kMaxDim) +
                           " columns",
                       field, i + 1, 0);
    for (size_t j = 0; j < row.size(); ++j)
      out[i].push_back(read_cell(row[j], field, i + 1, static_cast<int>(j) + 1));
    if (out[i].empty()) throw InputError(field + ", row " + std::to_string(i + 1) + " is empty", field, i + 1, 0);
    if (i > 0 && out[i].size() != out[0].size())
      throw InputError(field + ": row " + std::to_string(i + 1) + " has " + std::to_string(out[i].size()) +
                           " numbers but row 1 has " + std::to_string(out[0].size()),
                       field, i + 1, 0);
  }
  return Tensor::from_rows(out);
}

Tensor read_vector(const Value& v, const std::string& field) {
  Tensor m = read_matrix(v, field);
  if (m.shape[0] != 1 && m.shape[1] != 1)
    throw InputError(field + " must be a vector, got a " + std::to_string(m.shape[0]) + "×" +
                         std::to_string(m.shape[1]) + " matrix",
                     field);
  return reshape(m, {static_cast<int>(m.numel())});
}

const Value* get(const Value& spec, const std::string& key) {
  const Value* v = spec.find(key);
  return v && !v->is_null() ? v : nullptr;
}

long long read_int(const Value& spec, const std::string& key, long long fallback, long long lo, long long hi) {
  const Value* v = get(spec, key);
  if (!v) return fallback;
  if (!v->is_number() || std::floor(v->as_number()) != v->as_number())
    throw InputError(key + " must be a whole number, got " + v->dump().substr(0, 24), key);
  const double d = v->as_number();
  if (d < static_cast<double>(lo) || d > static_cast<double>(hi))
    throw InputError(key + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                         v->dump(),
                     key);
  return static_cast<long long>(d);
}

float read_float(const Value& spec, const std::string& key, float fallback, double lo, double hi) {
  const Value* v = get(spec, key);
  if (!v) return fallback;
  if (!v->is_number()) throw InputError(key + " must be a number, got " + v->dump().substr(0, 24), key);
  const double d = v->as_number();
  if (!(d >= lo && d <= hi))
    throw InputError(key + " must be between " + format_float(static_cast<float>(lo)) + " and " +
                         format_float(static_cast<float>(hi)) + ", got " + v->dump().substr(0, 24),
                     key);
  return static_cast<float>(d);
}

std::string read_string(const Value& spec, const std::string& key, const std::string& fallback, size_t max_bytes) {
  const Value* v = get(spec, key);
  if (!v) return fallback;
  if (!v->is_string()) throw InputError(key + " must be a string, got " + v->dump().substr(0, 24), key);
  if (v->as_string().size() > max_bytes)
    throw InputError(key + " is " + std::to_string(v->as_string().size()) + " bytes, more than the limit of " +
                         std::to_string(max_bytes),
                     key);
  return v->as_string();
}

bool read_bool(const Value& spec, const std::string& key, bool fallback) {
  const Value* v = get(spec, key);
  if (!v) return fallback;
  if (!v->is_bool()) throw InputError(key + " must be true or false, got " + v->dump().substr(0, 24), key);
  return v->as_bool();
}

std::string read_choice(const Value& spec, const std::string& key, const std::vector<std::string>& choices) {
  const Value* v = get(spec, key);
  if (!v) return choices[0];
  for (const std::string& c : choices)
    if (v->is_string() && v->as_string() == c) return c;
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "\"" : ", \"") + c + "\"";
  throw InputError(key + " must be one of " + list + ", got " + v->dump().substr(0, 24), key);
}

void reject_unknown_keys(const Value& spec, const std::set<std::string>& known, const std::string& what) {
  if (!spec.is_object()) throw InputError(what + " must be a JSON object", "");
  for (const auto& m : spec.members())
    if (!known.count(m.first)) throw InputError("unknown key \"" + json::excerpt(m.first) + "\" in the " + what, m.first);
}

Value read_spec(const std::string& json_text, const std::set<std::string>& known, const std::string& what) {
  Value spec = json::parse(json_text);
  reject_unknown_keys(spec, known, what);
  return spec;
}

MaskVariant read_mask(const Value& spec) {
  return read_choice(spec, "mask", {"strict", "inclusive"}) == "strict" ? MaskVariant::strict
                                                                         : MaskVariant::inclusive;
}

// ---------------------------------------------------------------- writing results

// 2-D → [[...]], 1-D → [...], written straight to text: a trace holds up to millions of numbers,
// and a Value per number would cost ~150 bytes each.
namespace {

std::string matrix_text(const float* data, int rows, int cols, bool one_d) {
  std::string out;
  out.reserve(static_cast<size_t>(rows) * cols * 11 + 16);
  append_matrix_json(out, data, rows, cols, one_d);  // number_text.cpp (built for speed)
  return out;
}

}  // namespace

Value matrix_value(const Tensor& t) {
  const int rows = t.dim() == 1 ? 1 : t.shape[0];
  const int cols = t.dim() == 1 ? t.shape[0] : t.shape[1];
  return Value::raw(matrix_text(t.ptr(), rows, cols, t.dim() == 1));
}

Value matrix_value(const float* data, int rows, int cols) { return Value::raw(matrix_text(data, rows, cols, false)); }

Value rows_value(const std::vector<EmptyRow>& rows) {
  Value out = Value::array();
  for (const EmptyRow& r : rows) {
    Value& o = out.push(Value::object());
    o.set("head", r.head);
    o.set("row", r.row);
  }
  return out;
}

Value per_head(int n_head, const std::vector<std::pair<const char*, const Tensor*>>& steps) {
  Value heads = Value::array();
  for (int h = 0; h < n_head; ++h) {
    Value& head = heads.push(Value::object());
    for (const auto& [name, t] : steps) head.set(name, matrix_value(t->slice0(h)));
  }
  return heads;
}

void set_f32(Value& v, std::initializer_list<std::pair<const char*, float>> fields) {
  for (const auto& [key, x] : fields) v.set(key, Value::f32(x));
}

Value ok(Value body) {
  Value out = Value::object();
  out.set("ok", true);
  for (const auto& m : body.members()) out.set(m.first, m.second);
  return out;
}

Value failure(const std::string& message, const std::string& field, int row, int column) {
  Value out = Value::object();
  out.set("ok", false);
  out.set("error", message);
  out.set("field", field);
  out.set("row", row);
  out.set("column", column);
  return out;
}

}  // namespace ap::spec
