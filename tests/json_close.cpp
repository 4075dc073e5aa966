// json_close.cpp — a test tool for tests/gpt_cli_test.cmake: do two JSON files hold the same
// numbers at two paths, within a tolerance? CMake cannot compare floats, so the CLI tests call this.
//
//   json_close A.json PATH_A B.json PATH_B TOL
//
// PATH is dot-separated object keys and array indices ("maps.1.2", "trace.heads.0.weights"; "" or
// "." for the whole document). The two values must have the same structure (arrays of the same
// lengths, the same keys); numbers may differ by at most TOL (absolute); strings ("-inf", "nan")
// must be equal. Prints the largest difference and whether the numbers are bit-identical.
// Exit status: 0 within TOL, 1 not, 2 usage or unreadable input.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "formats/json.h"

using ap::json::Value;

namespace {

struct Diff {
  double max_abs = 0.0;
  long count = 0;
  bool identical = true;
  std::string mismatch;  // the first structural difference, or a number beyond TOL
};

const Value* walk(const Value& root, const std::string& path) {
  const Value* v = &root;
  size_t from = 0;
  while (from < path.size()) {
    size_t dot = path.find('.', from);
    if (dot == std::string::npos) dot = path.size();
    const std::string part = path.substr(from, dot - from);
    from = dot + 1;
    if (part.empty()) continue;
    if (v->is_array()) {
      char* end = nullptr;
      const long i = std::strtol(part.c_str(), &end, 10);
      if (*end || i < 0 || static_cast<size_t>(i) >= v->size()) return nullptr;
      v = &(*v)[static_cast<size_t>(i)];
    } else if (v->is_object()) {
      v = v->find(part);
      if (!v) return nullptr;
    } else {
      return nullptr;
    }
  }
  return v;
}

void compare(const Value& a, const Value& b, double tol, const std::string& where, Diff& d) {
  if (!d.mismatch.empty()) return;
  if (a.is_number() && b.is_number()) {
    const double diff = std::fabs(a.as_number() - b.as_number());
    ++d.count;
    if (a.as_number() != b.as_number()) d.identical = false;
    if (diff > d.max_abs) d.max_abs = diff;
    if (!(diff <= tol))
      d.mismatch = where + ": " + a.dump() + " vs " + b.dump();
    return;
  }
  if (a.type() != b.type()) {
    d.mismatch = where + ": " + a.dump().substr(0, 40) + " vs " + b.dump().substr(0, 40);
    return;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) {
      d.mismatch = where + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " items";
      return;
    }
    for (size_t i = 0; i < a.size(); ++i) compare(a[i], b[i], tol, where + "." + std::to_string(i), d);
  } else if (a.is_object()) {
    if (a.size() != b.size()) {
      d.mismatch = where + ": objects of " + std::to_string(a.size()) + " and " + std::to_string(b.size()) + " keys";
      return;
    }
    for (const auto& [key, value] : a.members()) {
      const Value* other = b.find(key);
      if (!other) {
        d.mismatch = where + ": no key " + key + " in the second";
        return;
      }
      compare(value, *other, tol, where + "." + key, d);
    }
  } else if (a.dump() != b.dump()) {
    d.mismatch = where + ": " + a.dump().substr(0, 40) + " vs " + b.dump().substr(0, 40);
  }
}

bool load(const char* path, Value& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::cerr << "json_close: cannot read " << path << "\n";
    return false;
  }
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  try {
    out = ap::json::parse(text);
  } catch (const std::exception& e) {
    std::cerr << "json_close: " << path << ": " << e.what() << "\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: json_close A.json PATH_A B.json PATH_B TOL\n";
    return 2;
  }
  Value a, b;
  if (!load(argv[1], a) || !load(argv[3], b)) return 2;
  const Value* va = walk(a, argv[2]);
  const Value* vb = walk(b, argv[4]);
  if (!va || !vb) {
    std::cerr << "json_close: no " << (va ? argv[4] : argv[2]) << " in " << (va ? argv[3] : argv[1]) << "\n";
    return 2;
  }
  const double tol = std::strtod(argv[5], nullptr);
  Diff d;
  compare(*va, *vb, tol, "", d);
  std::printf("max |a - b| = %.3g over %ld numbers (%s)\n", d.max_abs, d.count,
              d.identical ? "bit-identical" : "not bit-identical");
  if (!d.mismatch.empty()) {
    std::printf("differs at %s (tolerance %g)\n", d.mismatch.c_str(), tol);
    return 1;
  }
  if (d.count == 0) {
    std::printf("no numbers to compare\n");
    return 1;
  }
  return 0;
}
