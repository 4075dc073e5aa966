// input_error_util.h — what an InputError says, for the tests of the code that throws it
// (header-only): error_of(f) runs f and returns the error's {field, message}, or {"", "no error"}
// when f throws nothing; described(f) the same as "field: message". Any other exception passes
// through (a test then fails on it).
#pragma once

#include <functional>
#include <string>

#include "core/attention/attention.h"

namespace input_error_util {

struct Error {
  std::string field, message;
};

inline Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ap::InputError& e) {
    return {e.field, e.what()};
  }
  return {"", "no error"};
}

// The same as one text, "field: message" (or "no error"), for CHECK_THAT(…, StartsWith(…)).
inline std::string described(const std::function<void()>& f) {
  const Error e = error_of(f);
  return e.message == "no error" && e.field.empty() ? e.message : e.field + ": " + e.message;
}

}  // namespace input_error_util
