// golden_util.h — shared by the golden-file tests: read a file, and compare an "expect" tree
// against the core's JSON output (numbers within |a-b| <= tol*(1+|b|), strings exactly, arrays
// element by element, objects key by key for the keys present in expect; empty_rows and
// overflow_rows as sets of {head,row}). Appends one line per mismatch.
#pragma once

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "json_test_util.h"

namespace golden_util {

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::string describe(const jt::Value& v) {
  if (v.is_number()) return v.str;
  if (v.is_string()) return "\"" + v.str + "\"";
  if (v.is_bool()) return v.b ? "true" : "false";
  if (v.is_null()) return "null";
  if (v.is_array()) return "array[" + std::to_string(v.size()) + "]";
  return "object";
}

inline std::set<std::pair<int, int>> row_set(const jt::Value& v, std::vector<std::string>& out, const std::string& path) {
  std::set<std::pair<int, int>> s;
  if (!v.is_array()) {
    out.push_back(path + ": expected an array, got " + describe(v));
    return s;
  }
  for (const auto& e : v.arr) {
    if (!e.is_object() || !e.has("head") || !e.has("row") || !e["head"].is_number() || !e["row"].is_number()) {
      out.push_back(path + ": entry is not {head,row}: " + describe(e));
      continue;
    }
    s.insert({int(e["head"].num), int(e["row"].num)});
  }
  return s;
}

// Compares expect ⊆ actual; appends a line per mismatch.
inline void compare(const jt::Value& expect, const jt::Value& actual, double tol, const std::string& path,
             std::vector<std::string>& out) {
  switch (expect.type) {
    case jt::Value::Number: {
      if (!actual.is_number()) {
        out.push_back(path + ": expected " + expect.str + ", got " + describe(actual));
        return;
      }
      double a = actual.num, b = expect.num;
      if (!(std::fabs(a - b) <= tol * (1.0 + std::fabs(b))))
        out.push_back(path + ": expected " + expect.str + ", got " + actual.str + " (|diff| " +
                      std::to_string(std::fabs(a - b)) + ")");
      return;
    }
    case jt::Value::String:
      if (!actual.is_string() || actual.str != expect.str)
        out.push_back(path + ": expected \"" + expect.str + "\", got " + describe(actual));
      return;
    case jt::Value::Bool:
      if (!actual.is_bool() || actual.b != expect.b)
        out.push_back(path + ": expected " + describe(expect) + ", got " + describe(actual));
      return;
    case jt::Value::Null:
      if (!actual.is_null()) out.push_back(path + ": expected null, got " + describe(actual));
      return;
    case jt::Value::Array:
      if (!actual.is_array() || actual.size() != expect.size()) {
        out.push_back(path + ": expected " + describe(expect) + ", got " + describe(actual));
        return;
      }
      for (size_t i = 0; i < expect.size(); ++i)
        compare(expect.arr[i], actual.arr[i], tol, path + "[" + std::to_string(i) + "]", out);
      return;
    case jt::Value::Object:
      if (!actual.is_object()) {
        out.push_back(path + ": expected an object, got " + describe(actual));
        return;
      }
      for (const auto& kv : expect.obj) {
        const std::string p = path + "." + kv.first;
        const jt::Value* a = actual.find(kv.first);
        if (!a) {
          out.push_back(p + ": missing in the output");
          continue;
        }
        if (kv.first == "empty_rows" || kv.first == "overflow_rows") {
          auto want = row_set(kv.second, out, p + " (golden)");
          auto got = row_set(*a, out, p);
          if (want != got) {
            std::string w, g;
            for (auto& e : want) w += "{" + std::to_string(e.first) + "," + std::to_string(e.second) + "}";
            for (auto& e : got) g += "{" + std::to_string(e.first) + "," + std::to_string(e.second) + "}";
            out.push_back(p + ": expected {head,row} set " + w + ", got " + g);
          }
          if (a->is_array() && a->size() != kv.second.size())
            out.push_back(p + ": duplicate entries (" + std::to_string(a->size()) + " listed)");
          continue;
        }
        compare(kv.second, *a, tol, p, out);
      }
      return;
  }
}

}  // namespace golden_util
