// number_text.h — numbers to text and back, fast and identical on every platform.
//
// Why not printf/strtod: in wasm, musl's printf and strtod work in 128-bit long double, which is
// emulated in software — microseconds per number, too slow for a trace of thousands of numbers
// that must repaint within a frame. These use double arithmetic only (exact where it matters) and
// fall back to strtod only for rare long inputs.
//
// Reading: a decimal is read as the nearest double, then rounded to float32 by the caller — the
// same two steps as JavaScript's Math.fround(Number(s)) and NumPy's np.float32(float(s)), so the
// page, the tests and the golden files agree on every input.
// Writing: the shortest decimal that reads back to the same float32 (at most 9 digits), in
// JavaScript's style: fixed notation for 1e-6 ≤ |x| < 1e21, otherwise "1.5e-8" / "3.4e+38".
#pragma once

#include <cstddef>
#include <string>

namespace ap {

// Parses [begin, end) as a decimal number: optional sign, digits with an optional '.', optional
// exponent ("-1.5e-3", ".5", "+2", "7."). Also "inf", "infinity", "nan" (any case, with sign).
// Returns false if the text is not exactly one such number. Out-of-range values become ±inf (or
// a signed zero), as strtod does.
bool parse_decimal(const char* begin, const char* end, double& out);

// The shortest text that reads back (through parse_decimal and a float32 cast) to exactly f;
// "0" for ±0, "nan", "inf" and "-inf" for the non-finite.
std::string format_float(float f);
void append_float(std::string& out, float f);
// The same text written to out (room for kFloatTextMax chars; not 0-terminated): its length.
constexpr size_t kFloatTextMax = 32;
size_t write_float(char* out, float f) noexcept;
// A rows × cols matrix appended as JSON, [[a,b],[c,d]] (one_d: one row, [a,b]); the numbers as
// append_float writes them, the non-finite as the strings "nan", "inf", "-inf".
void append_matrix_json(std::string& out, const float* data, int rows, int cols, bool one_d);

}  // namespace ap
