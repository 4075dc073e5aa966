// number_text.cpp — fast, portable decimal reading and shortest float32 writing (see number_text.h).
#include "core/base/number_text.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace ap {

namespace {

// 10^k for k in [0, 22]: exact in double.
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// x·10^k using only exact powers of ten and IEEE multiply/divide, so every platform gives the
// same bits (std::pow may differ in the last place between C libraries).
double times_pow10(double x, int k) {
  for (; k > 22; k -= 22) x *= 1e22;
  for (; k < -22; k += 22) x /= 1e22;
  return k >= 0 ? x * kPow10[k] : x / kPow10[-k];
}

bool lower_equal(const char* a, const char* word, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != word[i]) return false;
  }
  return true;
}

}  // namespace

bool parse_decimal(const char* begin, const char* end, double& out) {
  const char* p = begin;
  bool negative = false;
  if (p < end && (*p == '+' || *p == '-')) negative = *p++ == '-';
  const size_t rest = static_cast<size_t>(end - p);
  if ((rest == 3 && lower_equal(p, "inf", 3)) || (rest == 8 && lower_equal(p, "infinity", 8))) {
    out = negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  if (rest == 3 && lower_equal(p, "nan", 3)) {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  uint64_t mantissa = 0;  // the first 19 significant digits
  int significant = 0, dropped = 0, exp10 = 0, digits = 0;
  bool inexact = false;   // a nonzero digit beyond the 19th
  for (; p < end && *p >= '0' && *p <= '9'; ++p, ++digits) {
    if (mantissa == 0 && *p == '0') continue;
    if (significant < 19) { mantissa = mantissa * 10 + static_cast<uint64_t>(*p - '0'); ++significant; }
    else { ++dropped; inexact |= *p != '0'; }
  }
  if (p < end && *p == '.') {
    for (++p; p < end && *p >= '0' && *p <= '9'; ++p, ++digits) {
      if (mantissa == 0 && *p == '0') { --exp10; continue; }
      if (significant < 19) { mantissa = mantissa * 10 + static_cast<uint64_t>(*p - '0'); ++significant; --exp10; }
      else { inexact |= *p != '0'; }
    }
  }
  if (digits == 0) return false;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool eneg = false;
    if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
    if (p == end || *p < '0' || *p > '9') return false;
    int e = 0;
    for (; p < end && *p >= '0' && *p <= '9'; ++p) e = e < 100000 ? e * 10 + (*p - '0') : e;
    exp10 += eneg ? -e : e;
  }
  if (p != end) return false;
  exp10 += dropped;
  double v;
  if (mantissa == 0) {
    v = 0.0;
  } else if (!inexact && mantissa < (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
    // Clinger's fast path: both operands exact, so one IEEE operation rounds correctly.
    const double m = static_cast<double>(mantissa);
    v = exp10 >= 0 ? m * kPow10[exp10] : m / kPow10[-exp10];
  } else {
    const std::string text(begin, end);  // rare: long or extreme numbers; strtod is exact
    v = std::strtod(text.c_str(), nullptr);
    negative = false;
  }
  out = negative ? -v : v;
  return true;
}

std::string format_float(float f) {
  std::string s;
  append_float(s, f);
  return s;
}

void append_float(std::string& out, float f) {
  char buf[kFloatTextMax];
  out.append(buf, write_float(buf, f));
}

size_t write_float(char* out, float f) noexcept {
  char* const begin = out;
  auto put = [&](const char* text) { while (*text) *out++ = *text++; };
  if (std::isnan(f)) { put("nan"); return static_cast<size_t>(out - begin); }
  if (std::isinf(f)) { put(f > 0 ? "inf" : "-inf"); return static_cast<size_t>(out - begin); }
  if (f == 0.0f) { *out++ = '0'; return 1; }
  if (f < 0) *out++ = '-';
  const float a = std::fabs(f);
  const double v = a;
  // Half the distance to the neighbouring floats: any decimal strictly inside reads back to a. The
  // neighbours of a positive finite float are its bit pattern ± 1 (what std::nextafter gives; the
  // one above FLT_MAX is infinity); wasm has no instruction for nextafter or log10, so both are
  // done with the bits here: they run for every number of every trace.
  uint32_t bits = 0;
  std::memcpy(&bits, &a, sizeof bits);
  const uint32_t above_bits = bits + 1, below_bits = bits - 1;
  float above = 0.0f, below = 0.0f;
  std::memcpy(&above, &above_bits, sizeof above);
  std::memcpy(&below, &below_bits, sizeof below);
  const double up = (static_cast<double>(above) - v) / 2;
  const double down = (v - static_cast<double>(below)) / 2;
  // The decimal exponent: 10^e10 ≤ v < 10^(e10+1), with the powers of ten as times_pow10 rounds
  // them. From the binary exponent (a normal float lies in [2^b, 2^(b+1)): log10 is b·log10(2)
  // or up to one more), then moved until the comparisons hold.
  const int biased = static_cast<int>(bits >> 23);
  int e10 = biased ? static_cast<int>(std::floor((biased - 127) * 0.30102999566398120))
                   : static_cast<int>(std::floor(std::log10(v)));  // subnormal: rare
  while (v >= times_pow10(1.0, e10 + 1)) ++e10;
  while (v < times_pow10(1.0, e10)) --e10;
  uint64_t n = 0;
  int k = 0;
  // With p ≥ 6 digits, a normal float whose shortest form is shorter comes out padded with zeros
  // (its interval is narrower than half a step of the 6-digit grid), which are stripped below;
  // subnormals have wider intervals, so their search starts at 1 digit. The double arithmetic
  // errs by < 1e-15 relative; a candidate must sit inside the interval (half-width ≥ 3e-8
  // relative) by a margin of 1e-14 relative, and 9 digits always round-trip.
  for (int p = a < std::numeric_limits<float>::min() ? 1 : 6; p <= 9; ++p) {
    k = e10 - p + 1;
    const double scaled = times_pow10(v, -k);
    double r = std::nearbyint(scaled);
    if (r >= kPow10[p]) { r = std::nearbyint(r / 10); ++k; }
    const double d = times_pow10(r, k);
    const double gap = d >= v ? up : down;
    n = static_cast<uint64_t>(r);
    if (std::fabs(d - v) < gap - v * 1e-14 || p == 9) break;
  }
  char digits[24];
  int len = 0;
  // n < 10^9 fits in 32 bits, whose division by 10 compiles to a multiplication (a 64-bit one is a
  // division instruction in wasm, 18 per number)
  for (uint32_t m = static_cast<uint32_t>(n); m; m /= 10) digits[len++] = static_cast<char>('0' + m % 10);
  int first = 0;  // strip trailing zeros (they sit at the start of the reversed buffer)
  while (first < len - 1 && digits[first] == '0') { ++first; ++k; }
  const int count = len - first;
  const int point = count + k;  // digits before the decimal point, in fixed notation
  const int e = point - 1;      // exponent of the first digit
  auto digit = [&](int i) { return digits[len - 1 - i]; };  // i-th most significant
  if (e >= -6 && e < 21) {
    if (point <= 0) {
      put("0.");
      for (int i = 0; i < -point; ++i) *out++ = '0';
      for (int i = 0; i < count; ++i) *out++ = digit(i);
    } else {
      for (int i = 0; i < count || i < point; ++i) {
        if (i == point) *out++ = '.';
        *out++ = i < count ? digit(i) : '0';
      }
    }
  } else {
    *out++ = digit(0);
    if (count > 1) {
      *out++ = '.';
      for (int i = 1; i < count; ++i) *out++ = digit(i);
    }
    put(e < 0 ? "e-" : "e+");
    const int x = e < 0 ? -e : e;  // a float's decimal exponent has at most 2 digits
    if (x >= 10) *out++ = static_cast<char>('0' + x / 10);
    *out++ = static_cast<char>('0' + x % 10);
  }
  return static_cast<size_t>(out - begin);
}

void append_matrix_json(std::string& out, const float* data, int rows, int cols, bool one_d) {
  // room for the widest row, then cut to what was written: one resize per row, and the numbers
  // written through a pointer (no call per character that could throw, which in wasm with
  // JS exceptions would cost a round trip through JS each)
  const size_t row_max = static_cast<size_t>(cols) * (kFloatTextMax + 3) + 4;
  if (!one_d) out += '[';
  for (int i = 0; i < rows; ++i) {
    const size_t start = out.size();
    out.resize(start + row_max);
    char* p = &out[start];
    if (i) *p++ = ',';
    *p++ = '[';
    const float* row = data + static_cast<size_t>(i) * cols;
    for (int j = 0; j < cols; ++j) {
      if (j) *p++ = ',';
      const float f = row[j];
      if (std::isfinite(f)) {
        p += write_float(p, f);
      } else {
        const char* s = std::isnan(f) ? "\"nan\"" : (f > 0 ? "\"inf\"" : "\"-inf\"");
        while (*s) *p++ = *s++;
      }
    }
    *p++ = ']';
    out.resize(static_cast<size_t>(p - out.data()));
  }
  if (!one_d) out += ']';
}

}  // namespace ap
