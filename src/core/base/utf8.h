// utf8.h — strict UTF-8 decoding and encoding, shared by the tokenizer and the JSON writer.
//
// Strict means RFC 3629 / Unicode's definition: no overlong forms, no UTF-16 surrogates
// (U+D800–U+DFFF), nothing above U+10FFFF, no stray continuation bytes, no truncated sequences.
// utf8_decode throws InputError at the first fault, naming its byte offset (counting from 0), its
// line, and the bytes, e.g.
//   invalid UTF-8 at byte 17 (counting from 0; line 2): 0xC3 followed by 0x28 — 0xC3 starts a
//   2-byte sequence but 0x28 is not a continuation byte (0x80–0xBF)
// utf8_sanitize is the lenient twin for output: each maximal ill-formed subpart becomes one U+FFFD
// (Unicode's "substitution of maximal subparts", as browsers' TextDecoder does).
// Limits: none beyond memory; the text is a std::string of bytes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ap {

constexpr char32_t kReplacementChar = 0xFFFD;

// A Unicode scalar value: ≤ U+10FFFF and not a surrogate. Only these can be encoded in UTF-8.
inline bool is_scalar_value(char32_t cp) { return cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF); }

// The code points of `utf8`. Throws InputError (field `field`) at the first invalid byte.
std::vector<char32_t> utf8_decode(const std::string& utf8, const char* field = "text");

// Byte offset of the first invalid byte, or std::string::npos if `utf8` is valid UTF-8.
size_t utf8_invalid_offset(const std::string& utf8);
inline bool utf8_valid(const std::string& utf8) { return utf8_invalid_offset(utf8) == std::string::npos; }

// What is wrong with the bytes at `offset` (where utf8_invalid_offset stopped), e.g. "0xFF never
// appears in UTF-8"; empty if a valid character starts there.
std::string utf8_fault(const std::string& utf8, size_t offset);

// `utf8` with each maximal ill-formed subpart replaced by U+FFFD; valid text comes back unchanged.
std::string utf8_sanitize(const std::string& utf8);

// Appends the UTF-8 of one code point (1 to 4 bytes); a non-scalar value appends U+FFFD.
void utf8_append(std::string& out, char32_t cp);
std::string utf8_encode(char32_t cp);
std::string utf8_encode(const std::vector<char32_t>& cps);

// How messages show one character: "Z" (U+005A), "中" (U+4E2D), "\n" (U+000A), "\"" (U+0022) —
// quoted, with invisible and control characters escaped, then the code point.
std::string describe_char(char32_t cp);

}  // namespace ap
