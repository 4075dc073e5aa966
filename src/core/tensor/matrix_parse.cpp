// matrix_parse.cpp — the forgiving matrix reader (formats and errors in matrix_parse.h).
#include "core/tensor/matrix_parse.h"

#include <cmath>
#include <limits>
#include <vector>

#include "core/base/number_text.h"
#include "core/base/utf8.h"

namespace ap {

namespace {

using Rows = std::vector<std::vector<float>>;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string at(int row, int col) {
  return "row " + std::to_string(row) + ", column " + std::to_string(col) + ": ";
}

// `text` with each byte that is not part of valid UTF-8 written as \xHH, so a message names the byte
// instead of carrying it (a message must be valid UTF-8 to reach JSON and the page).
std::string escape_invalid_bytes(const std::string& text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    const std::string rest = text.substr(pos);
    const size_t bad = utf8_invalid_offset(rest);
    if (bad == std::string::npos) {
      out += rest;
      break;
    }
    out += rest.substr(0, bad);
    static const char* hex = "0123456789ABCDEF";
    const auto b = static_cast<unsigned char>(rest[bad]);
    out += "\\x";
    out += hex[b >> 4];
    out += hex[b & 15];
    pos += bad + 1;
  }
  return out;
}

// Shortens what the user typed for a message, so a pasted essay does not become the message: 24
// bytes at most, cut on a character boundary. Bytes that are not UTF-8 are shown as \xHH (byte_note
// then explains the first: '\xFF4' … (byte 0 of the cell: 0xFF never appears in UTF-8)).
std::string quoted(const std::string& token) {
  std::string shown = token;
  if (token.size() > 24) {
    size_t cut = 24;
    for (int back = 0; back < 3 && cut > 0 && (static_cast<unsigned char>(token[cut]) & 0xC0) == 0x80; ++back) --cut;
    shown = token.substr(0, cut) + "…";
  }
  return "'" + escape_invalid_bytes(shown) + "'";
}

// What follows a quoted cell when it holds bytes that are not UTF-8; empty otherwise.
std::string byte_note(const std::string& token) {
  const size_t bad = utf8_invalid_offset(token);
  if (bad == std::string::npos) return "";
  return " (byte " + std::to_string(bad) + " of the cell: " + utf8_fault(token, bad) + ")";
}

// A cell's number, or false when it is not a finite float32 (parse_number then says why). It builds
// no string and has no destructor in scope: in wasm, with Emscripten's JS exceptions, a call that may
// throw from a frame with destructors (or from a noexcept one) goes out to JS and back, and this runs
// once per cell of every edit.
bool read_number(const char* begin, const char* end, float& out) {
  double d = 0.0;
  if (!parse_decimal(begin, end, d) || !std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max()) return false;
  out = static_cast<float>(d);  // nearest double, then float32: as Math.fround and NumPy do
  return true;
}

// The cell's number, or the ParseError that names the row, the column and what is wrong.
float parse_number(const std::string& token, int row, int col) {
  double d = 0.0;
  if (!parse_decimal(token.data(), token.data() + token.size(), d))
    throw ParseError(at(row, col) + quoted(token) + " is not a number" + byte_note(token), row, col);
  if (!std::isfinite(d))
    throw ParseError(at(row, col) + quoted(token) + " is not a finite number", row, col);
  if (std::fabs(d) > std::numeric_limits<float>::max())
    throw ParseError(at(row, col) + quoted(token) + " is outside the float32 range (±3.4e38)", row, col);
  return static_cast<float>(d);
}

void check_row(Rows& rows, int row) {
  if (rows.back().empty()) throw ParseError("row " + std::to_string(row) + " is empty", row, 0);
  if (rows.size() > 1 && rows.back().size() != rows.front().size())
    throw ParseError("row " + std::to_string(row) + " has " + std::to_string(rows.back().size()) +
                         " numbers but row 1 has " + std::to_string(rows.front().size()),
                     row, 0);
}

// Reads the numbers of one row from text[pos, end): separated by spaces, tabs or commas.
// Two commas (or tabs) with nothing between them are an empty cell; one trailing comma is allowed.
void read_row(const std::string& text, size_t pos, size_t end, Rows& rows, int row) {
  if (row > kMaxParseRows)
    throw ParseError("more than " + std::to_string(kMaxParseRows) + " rows", row, 0);
  rows.emplace_back();
  std::vector<float>& out = rows.back();
  bool hard_separator_pending = false;  // a ',' or tab seen since the last number
  while (pos < end) {
    const char c = text[pos];
    if (c == ',' || c == '\t') {
      if (hard_separator_pending || out.empty())
        throw ParseError(at(row, static_cast<int>(out.size()) + 1) + "empty cell", row,
                         static_cast<int>(out.size()) + 1);
      hard_separator_pending = true;
      ++pos;
    } else if (is_space(c)) {
      ++pos;
    } else {
      size_t stop = pos;
      while (stop < end && !is_space(text[stop]) && text[stop] != ',') ++stop;
      const int col = static_cast<int>(out.size()) + 1;
      if (col > kMaxParseCols)
        throw ParseError(at(row, col) + "more than " + std::to_string(kMaxParseCols) + " columns", row, col);
      float v = 0.0f;
      if (!read_number(text.data() + pos, text.data() + stop, v)) v = parse_number(text.substr(pos, stop - pos), row, col);
      out.push_back(v);
      hard_separator_pending = false;
      pos = stop;
    }
  }
  check_row(rows, row);
}

Tensor to_tensor(const Rows& rows) {
  if (rows.empty()) throw ParseError("no numbers", 0, 0);
  return Tensor::from_rows(rows);
}

// "1 0\n0 1", "1, 0; 0, 1", tab-separated: rows end at a newline or ';'; blank rows are skipped.
Tensor parse_lines(const std::string& text) {
  Rows rows;
  size_t start = 0;
  while (start <= text.size()) {
    size_t stop = text.find_first_of("\n;", start);
    if (stop == std::string::npos) stop = text.size();
    bool blank = true;
    for (size_t i = start; i < stop; ++i) blank = blank && is_space(text[i]);
    if (!blank) read_row(text, start, stop, rows, static_cast<int>(rows.size()) + 1);
    start = stop + 1;
  }
  return to_tensor(rows);
}

// "[[1, 0], [0, 1]]", NumPy's "[[1. 0.]\n [0. 1.]]", or one row "[1, 2]".
Tensor parse_brackets(const std::string& text) {
  size_t pos = 0;
  auto skip = [&](bool commas) {
    while (pos < text.size() && (is_space(text[pos]) || (commas && text[pos] == ','))) ++pos;
  };
  auto row_of = [](const Rows& rows) { return static_cast<int>(rows.size()) + 1; };
  Rows rows;
  // Reads "[ numbers ]" starting at pos (which is at '['); leaves pos after the ']'.
  auto bracketed_row = [&]() {
    const int row = row_of(rows);
    const size_t open = pos++;
    const size_t close = text.find_first_of("[]", pos);
    if (close == std::string::npos || text[close] != ']')
      throw ParseError(close == std::string::npos
                           ? "row " + std::to_string(row) + ": missing ']'"
                           : "row " + std::to_string(row) + ": brackets nested more than two levels",
                       row, 0);
    read_row(text, open + 1, close, rows, row);
    pos = close + 1;
  };
  skip(false);
  if (pos >= text.size() || text[pos] != '[') throw ParseError("expected '[' at the start", 0, 0);
  size_t inner = pos + 1;
  while (inner < text.size() && is_space(text[inner])) ++inner;
  if (inner < text.size() && text[inner] == '[') {  // a list of rows
    ++pos;
    for (;;) {
      skip(true);
      if (pos >= text.size()) throw ParseError("missing ']' at the end", row_of(rows) - 1, 0);
      if (text[pos] == ']') { ++pos; break; }
      if (text[pos] != '[')
        throw ParseError("row " + std::to_string(row_of(rows)) + ": expected '[' before the numbers of a row",
                         row_of(rows), 0);
      bracketed_row();
    }
  } else {
    bracketed_row();
  }
  skip(false);
  if (pos != text.size())
    throw ParseError("unexpected text after the closing ']': " + quoted(text.substr(pos)), 0, 0);
  return to_tensor(rows);
}

// NumPy's repr: "array([[1., 2.]], dtype=float32)" → "[[1., 2.]]".
std::string strip_numpy_repr(const std::string& text) {
  size_t b = 0;
  while (b < text.size() && is_space(text[b])) ++b;
  if (text.compare(b, 6, "array(") != 0) return text;
  size_t e = text.size();
  while (e > b && is_space(text[e - 1])) --e;
  if (e == b || text[e - 1] != ')') throw ParseError("array( is missing its closing ')'", 0, 0);
  std::string body = text.substr(b + 6, e - 1 - (b + 6));
  const size_t last = body.rfind(']');
  if (last != std::string::npos) {
    size_t rest = last + 1;
    while (rest < body.size() && is_space(body[rest])) ++rest;
    if (rest < body.size() && body[rest] == ',' && body.find("dtype", rest) != std::string::npos)
      body.resize(last + 1);
  }
  return body;
}

// U+2212 MINUS SIGN, as pasted from typeset text, becomes '-'.
// The text is copied in runs between the minus signs, not a byte at a time (in wasm each append
// that may throw is a call out to JS and back).
std::string normalise_minus(const std::string& text) {
  static const std::string kMinus = "\xE2\x88\x92";
  std::string out;
  out.reserve(text.size());
  size_t from = 0;
  for (size_t m = text.find(kMinus); m != std::string::npos; m = text.find(kMinus, from)) {
    out.append(text, from, m - from);
    out += '-';
    from = m + kMinus.size();
  }
  out.append(text, from, std::string::npos);
  return out;
}

}  // namespace

Tensor parse_matrix(const std::string& raw) {
  const std::string text = strip_numpy_repr(normalise_minus(raw));
  return text.find('[') != std::string::npos || text.find(']') != std::string::npos ? parse_brackets(text)
                                                                                     : parse_lines(text);
}

}  // namespace ap
