// spec.h — reading JSON specs and writing JSON results, shared by the API's entry points
// (api.cpp for attention, gpt_json.cpp for the GPT) and by the gpt CLI's --json answers
// (src/cli/gpt/model_cmds.cpp: spec::ok, so they have the API's shape). Not for the core.
//
// Readers throw InputError naming the key at fault (and 1-based row/column for a matrix cell);
// guarded() turns every exception into {"ok":false,"error":…,"field":…,"row":…,"column":…}, so no
// exception leaves the API (an exception escaping into JS would leak wasm memory).
#pragma once

#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "core/attention/attention.h"
#include "core/tensor/matrix_parse.h"
#include "core/tensor/tensor.h"
#include "formats/json.h"

namespace ap::spec {

using json::Value;

// A matrix given as [[...],[...]] (a flat [...] is one row) or as text for the matrix parser.
Tensor read_matrix(const Value& v, const std::string& field);
// A bias: [1, 2] or "1 2" (one row or one column).
Tensor read_vector(const Value& v, const std::string& field);
// The value of key, or null if absent or JSON null.
const Value* get(const Value& spec, const std::string& key);
long long read_int(const Value& spec, const std::string& key, long long fallback, long long lo, long long hi);
// A number in [lo, hi] (float32), or fallback when absent.
float read_float(const Value& spec, const std::string& key, float fallback, double lo, double hi);
bool read_bool(const Value& spec, const std::string& key, bool fallback);
// A string of at most max_bytes bytes, or fallback when absent.
std::string read_string(const Value& spec, const std::string& key, const std::string& fallback,
                        size_t max_bytes = size_t(1) << 26);
// One of a few words; the first is the default.
std::string read_choice(const Value& spec, const std::string& key, const std::vector<std::string>& choices);
// Refuses a key not in `known`, by name; also refuses a spec that is not an object.
void reject_unknown_keys(const Value& spec, const std::set<std::string>& known, const std::string& what);
// A call's spec: its JSON text parsed, then reject_unknown_keys.
Value read_spec(const std::string& json_text, const std::set<std::string>& known, const std::string& what);
MaskVariant read_mask(const Value& spec);

// 2-D → [[...]], 1-D → [...], written straight to text (non-finite as "nan", "inf", "-inf").
Value matrix_value(const Tensor& t);
// A (rows, cols) block of floats, row-major, the same way.
Value matrix_value(const float* data, int rows, int cols);
Value rows_value(const std::vector<EmptyRow>& rows);
// [{name: step[h], …} for each head h] from (n_head, …) tensors.
Value per_head(int n_head, const std::vector<std::pair<const char*, const Tensor*>>& steps);
// Sets each field, in order, as a float32 number (Value::f32).
void set_f32(Value& v, std::initializer_list<std::pair<const char*, float>> fields);
// {"ok":true, …body's members…}
Value ok(Value body);
Value failure(const std::string& message, const std::string& field, int row, int column);

// ok(body()).dump(), or failure(…).dump() for any exception.
template <class F>
std::string guarded(F&& body) {
  try {
    return ok(body()).dump();
  } catch (const InputError& e) {
    return failure(e.what(), e.field, e.row, e.column).dump();
  } catch (const ParseError& e) {
    return failure(e.what(), "", e.row, e.column).dump();
  } catch (const json::JsonError& e) {
    return failure(e.what(), "spec", 0, 0).dump();
  } catch (const std::exception& e) {
    return failure(e.what(), "", 0, 0).dump();
  } catch (...) {
    return failure("unknown error", "", 0, 0).dump();
  }
}

}  // namespace ap::spec
