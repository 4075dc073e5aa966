// utf8.cpp — strict UTF-8 decoding, sanitising and encoding (see utf8.h).
//
// One decoder, step(), serves all three readers. It follows Unicode's table of well-formed byte
// sequences (Table 3-7): the second byte's range is narrowed after E0 (A0–BF, else overlong), ED
// (80–9F, else a surrogate), F0 (90–BF, else overlong) and F4 (80–8F, else above U+10FFFF), so a
// fault is found at the earliest byte, and the bytes consumed by a fault are exactly one "maximal
// ill-formed subpart" — the unit that utf8_sanitize replaces by one U+FFFD.
#include "core/base/utf8.h"

#include <cstdio>

#include "core/base/input_error.h"

namespace ap {

namespace {

enum class Fault {
  none,
  stray_continuation,  // 80–BF with no lead byte
  never_valid,         // C0, C1 (overlong-only leads), F5–FF
  bad_continuation,    // a lead byte, then a byte that is not a continuation byte
  truncated,           // the text ends inside a sequence
  overlong,            // E0 80–9F …, F0 80–8F …
  surrogate,           // ED A0–BF …
  too_large,           // F4 90–BF …
};

struct Step {
  char32_t cp = 0;
  int length = 1;  // bytes consumed: the sequence, or the maximal ill-formed subpart (≥ 1)
  Fault fault = Fault::none;
  int need = 1;    // the sequence length the lead byte announces
};

Step step(const unsigned char* s, size_t n, size_t i) {
  Step r;
  const unsigned char b0 = s[i];
  if (b0 < 0x80) { r.cp = b0; return r; }
  if (b0 < 0xC0) { r.fault = Fault::stray_continuation; return r; }
  if (b0 < 0xC2 || b0 > 0xF4) { r.fault = Fault::never_valid; return r; }
  r.need = b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4;
  unsigned char lo = 0x80, hi = 0xBF;
  Fault narrow = Fault::none;  // what a continuation byte outside [lo, hi] in second place means
  if (b0 == 0xE0) { lo = 0xA0; narrow = Fault::overlong; }
  if (b0 == 0xED) { hi = 0x9F; narrow = Fault::surrogate; }
  if (b0 == 0xF0) { lo = 0x90; narrow = Fault::overlong; }
  if (b0 == 0xF4) { hi = 0x8F; narrow = Fault::too_large; }
  char32_t cp = b0 & (r.need == 2 ? 0x1F : r.need == 3 ? 0x0F : 0x07);
  for (int k = 1; k < r.need; ++k) {
    if (i + k >= n) { r.fault = Fault::truncated; r.length = k; return r; }
    const unsigned char b = s[i + k];
    const bool continuation = b >= 0x80 && b <= 0xBF;
    if (k == 1 && continuation && (b < lo || b > hi)) { r.fault = narrow; r.length = 1; return r; }
    if (!continuation) { r.fault = Fault::bad_continuation; r.length = k; return r; }
    cp = (cp << 6) | (b & 0x3F);
  }
  r.cp = cp;
  r.length = r.need;
  return r;
}

std::string hex_byte(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", b);
  return buf;
}

std::string code_point(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  return buf;
}

// "0xE0 0x80 0xAF": the bytes from i on, at most `count`, stopping at the end of the text.
std::string hex_bytes(const unsigned char* s, size_t n, size_t i, int count) {
  std::string out;
  for (int k = 0; k < count && i + k < n; ++k) out += (k ? " " : "") + hex_byte(s[i + k]);
  return out;
}

// What is wrong with the sequence at byte i (a fault found by step()).
std::string explain(const unsigned char* s, size_t n, size_t i, const Step& r) {
  const unsigned char b0 = s[i];
  const std::string lead = hex_byte(b0);
  const std::string seq = std::to_string(r.need) + "-byte sequence";
  switch (r.fault) {
    case Fault::stray_continuation:
      return lead + " is a continuation byte with no lead byte before it";
    case Fault::never_valid:
      if (b0 < 0xC2) return lead + " never appears in UTF-8 (it could only start an overlong encoding of an ASCII character)";
      return lead + " never appears in UTF-8" + (b0 < 0xF8 ? " (it would start a code point above U+10FFFF)" : "");
    case Fault::bad_continuation:
      return hex_bytes(s, n, i, r.length) + " followed by " + hex_byte(s[i + r.length]) + " — " + lead + " starts a " +
             seq + " but " + hex_byte(s[i + r.length]) + " is not a continuation byte (0x80–0xBF)";
    case Fault::truncated:
      return hex_bytes(s, n, i, r.length) + " at the end of the text — " + lead + " starts a " + seq +
             " that is cut short";
    case Fault::overlong:
    case Fault::surrogate:
    case Fault::too_large: {
      // Read on while the bytes are continuation bytes, to name the value the sequence would encode.
      int have = 1;
      char32_t cp = b0 & (r.need == 3 ? 0x0F : 0x07);
      while (have < r.need && i + have < n && s[i + have] >= 0x80 && s[i + have] <= 0xBF)
        cp = (cp << 6) | (s[i + have++] & 0x3F);
      const std::string bytes = hex_bytes(s, n, i, have);
      const bool whole = have == r.need;
      if (r.fault == Fault::overlong)
        return bytes + (whole ? " is an overlong encoding of " + code_point(cp) + " (UTF-8 must use the shortest form)"
                              : " starts an overlong encoding (UTF-8 must use the shortest form)");
      if (r.fault == Fault::surrogate)
        return bytes + (whole ? " encodes " + code_point(cp) + ", a UTF-16 surrogate, which UTF-8 must not contain"
                              : " starts a UTF-16 surrogate (U+D800–U+DFFF), which UTF-8 must not contain");
      return bytes + (whole ? " encodes " + code_point(cp) + ", above the largest code point U+10FFFF"
                            : " starts a code point above the largest, U+10FFFF");
    }
    case Fault::none: break;
  }
  return "";
}

// "the text", "the prompt", "the vocabulary" — how messages name the input.
std::string input_name(const char* field) {
  const std::string f = field ? field : "";
  if (f == "vocab") return "the vocabulary";
  return f.empty() ? "the input" : "the " + f;
}

}  // namespace

std::vector<char32_t> utf8_decode(const std::string& utf8, const char* field) {
  const auto* s = reinterpret_cast<const unsigned char*>(utf8.data());
  const size_t n = utf8.size();
  std::vector<char32_t> out;
  out.reserve(n);
  size_t i = 0;
  while (i < n) {
    if (s[i] < 0x80) { out.push_back(s[i++]); continue; }  // ASCII fast path
    const Step r = step(s, n, i);
    if (r.fault != Fault::none) {
      size_t line = 1;
      for (size_t k = 0; k < i; ++k) line += s[k] == '\n';
      throw InputError("invalid UTF-8 at byte " + std::to_string(i) + " of " + input_name(field) +
                           " (counting from 0, on line " + std::to_string(line) + "): " + explain(s, n, i, r),
                       field ? field : "");
    }
    out.push_back(r.cp);
    i += r.length;
  }
  return out;
}

size_t utf8_invalid_offset(const std::string& utf8) {
  const auto* s = reinterpret_cast<const unsigned char*>(utf8.data());
  const size_t n = utf8.size();
  for (size_t i = 0; i < n;) {
    if (s[i] < 0x80) { ++i; continue; }
    const Step r = step(s, n, i);
    if (r.fault != Fault::none) return i;
    i += r.length;
  }
  return std::string::npos;
}

std::string utf8_fault(const std::string& utf8, size_t offset) {
  if (offset >= utf8.size()) return "";
  const auto* s = reinterpret_cast<const unsigned char*>(utf8.data());
  const Step r = step(s, utf8.size(), offset);
  return r.fault == Fault::none ? "" : explain(s, utf8.size(), offset, r);
}

std::string utf8_sanitize(const std::string& utf8) {
  const size_t bad = utf8_invalid_offset(utf8);
  if (bad == std::string::npos) return utf8;
  const auto* s = reinterpret_cast<const unsigned char*>(utf8.data());
  const size_t n = utf8.size();
  std::string out(utf8, 0, bad);
  for (size_t i = bad; i < n;) {
    const Step r = step(s, n, i);
    if (r.fault != Fault::none) utf8_append(out, kReplacementChar);
    else out.append(utf8, i, r.length);
    i += r.length;
  }
  return out;
}

void utf8_append(std::string& out, char32_t cp) {
  if (!is_scalar_value(cp)) cp = kReplacementChar;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string utf8_encode(char32_t cp) {
  std::string out;
  utf8_append(out, cp);
  return out;
}

std::string utf8_encode(const std::vector<char32_t>& cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t cp : cps) utf8_append(out, cp);
  return out;
}

std::string describe_char(char32_t cp) {
  std::string shown;
  switch (cp) {
    case '"': shown = "\\\""; break;
    case '\\': shown = "\\\\"; break;
    case '\n': shown = "\\n"; break;
    case '\r': shown = "\\r"; break;
    case '\t': shown = "\\t"; break;
    default: {
      // Controls (C0, DEL, C1), invisible format characters (soft hyphen, zero-width and
      // direction marks, line/paragraph separators, word joiners, BOM) and non-characters of
      // UTF-8 are escaped; a combining mark is shown on a dotted circle so it has a base.
      const bool invisible = cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xAD ||
                             (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
                             (cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF || !is_scalar_value(cp);
      const bool combining = (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x20D0 && cp <= 0x20FF) ||
                             (cp >= 0xFE20 && cp <= 0xFE2F);
      if (invisible) {
        char buf[16];
        std::snprintf(buf, sizeof buf, cp <= 0xFFFF ? "\\u%04X" : "\\u{%X}", static_cast<unsigned>(cp));
        shown = buf;
      } else {
        if (combining) utf8_append(shown, 0x25CC);
        utf8_append(shown, cp);
      }
    }
  }
  return "\"" + shown + "\" (" + code_point(cp) + ")";
}

}  // namespace ap
