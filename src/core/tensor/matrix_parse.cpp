// matrix_parse.cpp — the forgiving matrix reader (formats and errors in matrix_parse.h).
#include "core/tensor/matrix_parse.h"

#include <cmath>
#include <limits>
#include <utility>
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

// NumPy and PyTorch print a large matrix with '...' in place of rows and columns.
const char* const kShortenedPrint =
    "the print left numbers out ('...'): print it whole first (np.set_printoptions(threshold=sys.maxsize), "
    "torch.set_printoptions(profile='full'))";

// The cell's number, or the ParseError that names the row, the column and what is wrong.
float parse_number(const std::string& token, int row, int col) {
  double d = 0.0;
  if (token == "..." || token == "\xE2\x80\xA6") throw ParseError(at(row, col) + kShortenedPrint, row, col);
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

// Where `pos` is for a message: "character N" (1-based, counting characters, not bytes).
std::string character_at(const std::string& text, size_t pos) {
  size_t n = 0;
  for (size_t i = 0; i < pos && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;
  return "character " + std::to_string(n + 1);
}

// The character at `pos` (all its bytes), quoted for a message; "the end" past the text.
std::string found_at(const std::string& text, size_t pos, size_t end) {
  if (pos >= end) return "the end";
  size_t stop = pos + 1;
  while (stop < end && (static_cast<unsigned char>(text[stop]) & 0xC0) == 0x80) ++stop;
  return quoted(text.substr(pos, stop - pos)) + " at " + character_at(text, pos);
}

// "[[1, 0], [0, 1]]", NumPy's "[[1. 0.]\n [0. 1.]]", or one row "[1, 2]": text[begin, end), so
// that a message counts characters in the text as the user gave it.
Tensor parse_brackets(const std::string& text, size_t begin, size_t end) {
  size_t pos = begin;
  auto skip = [&](bool commas) {
    while (pos < end && (is_space(text[pos]) || (commas && text[pos] == ','))) ++pos;
  };
  auto row_of = [](const Rows& rows) { return static_cast<int>(rows.size()) + 1; };
  Rows rows;
  // Reads "[ numbers ]" starting at pos (which is at '['); leaves pos after the ']'.
  auto bracketed_row = [&]() {
    const int row = row_of(rows);
    const size_t open = pos++;
    size_t close = text.find_first_of("[]", pos);
    if (close >= end) close = std::string::npos;
    if (close == std::string::npos || text[close] != ']')
      throw ParseError(close == std::string::npos
                           ? "row " + std::to_string(row) + ": missing ']'"
                           : "row " + std::to_string(row) + ": brackets nested more than two levels (" +
                                 found_at(text, close, end) + ")",
                       row, 0);
    read_row(text, open + 1, close, rows, row);
    pos = close + 1;
  };
  skip(false);
  if (pos >= end || text[pos] != '[')
    throw ParseError("expected '[' at the start, found " + found_at(text, pos, end), 0, 0);
  size_t inner = pos + 1;
  while (inner < end && is_space(text[inner])) ++inner;
  if (inner < end && text[inner] == '[') {  // a list of rows
    ++pos;
    for (;;) {
      skip(true);
      if (pos >= end) throw ParseError("missing ']' at the end", row_of(rows) - 1, 0);
      if (text[pos] == ']') { ++pos; break; }
      if (text.compare(pos, 3, "...") == 0)
        throw ParseError("row " + std::to_string(row_of(rows)) + ": " + kShortenedPrint, row_of(rows), 0);
      if (text[pos] != '[')
        throw ParseError("row " + std::to_string(row_of(rows)) + ": expected '[' before the numbers of a row, found " +
                             found_at(text, pos, end),
                         row_of(rows), 0);
      bracketed_row();
    }
  } else {
    bracketed_row();
  }
  skip(false);
  if (pos != end)
    throw ParseError("unexpected text after the closing ']' at " + character_at(text, pos) + ": " +
                         quoted(text.substr(pos, end - pos)),
                     0, 0);
  return to_tensor(rows);
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

// The call names whose brackets are read: NumPy's array/asarray, PyTorch's tensor/as_tensor and
// its typed constructors, each with any module prefix ("np.", "numpy.", "torch.").
bool is_matrix_call(const std::string& name) {
  const size_t dot = name.rfind('.');
  const std::string last = dot == std::string::npos ? name : name.substr(dot + 1);
  for (const char* known : {"array", "asarray", "tensor", "as_tensor", "Tensor", "FloatTensor", "DoubleTensor"})
    if (last == known) return true;
  return false;
}

// The keyword arguments after the last ']' of a call ("dtype=float32", "requires_grad=True",
// "grad_fn=<AddBackward0>", "device='cuda:0'"): each `name=value`; anything else is named.
void check_call_tail(const std::string& text, size_t from, size_t to) {
  size_t pos = from;
  auto skip = [&] { while (pos < to && is_space(text[pos])) ++pos; };
  auto refuse = [&](size_t at) {
    throw ParseError("unexpected text after the closing ']' at " + character_at(text, at) + ": " +
                         quoted(text.substr(at, to - at)) + " (only keyword arguments such as dtype=… may follow)",
                     0, 0);
  };
  skip();
  while (pos < to) {
    if (text[pos] != ',') refuse(pos);
    ++pos;
    skip();
    if (pos == to) return;  // a trailing comma
    const size_t name = pos;
    while (pos < to && is_name_char(text[pos])) ++pos;
    if (pos == name || !is_name_start(text[name])) refuse(name);
    skip();
    if (pos == to || text[pos] != '=') refuse(name);
    ++pos;
    // The value runs to the next comma outside <…>, quotes and parentheses.
    int depth = 0;
    char quote = 0;
    while (pos < to) {
      const char c = text[pos];
      if (quote) { if (c == quote) quote = 0; }
      else if (c == '\'' || c == '"') quote = c;
      else if (c == '<' || c == '(') ++depth;
      else if ((c == '>' || c == ')') && depth > 0) --depth;
      else if (c == ',' && depth == 0) break;
      ++pos;
    }
  }
}

// Python code around the brackets: NumPy's repr "array([[1., 2.]], dtype=float32)", a call as
// written "np.array([[1., 2.]])", PyTorch's print "tensor([[ 0.1000, -0.2000],\n        [...]],
// requires_grad=True)" (also after nn.Parameter's "Parameter containing:") → the range of "[[1., 2.]]".
std::pair<size_t, size_t> strip_code_call(const std::string& text) {
  size_t b = 0;
  while (b < text.size() && is_space(text[b])) ++b;
  static const std::string kParameter = "Parameter containing:";
  if (text.compare(b, kParameter.size(), kParameter) == 0) {
    b += kParameter.size();
    while (b < text.size() && is_space(text[b])) ++b;
  }
  if (b >= text.size() || !is_name_start(text[b])) return {b, text.size()};
  size_t open = b;
  while (open < text.size() && (is_name_char(text[open]) || text[open] == '.')) ++open;
  const std::string name = text.substr(b, open - b);
  while (open < text.size() && is_space(text[open])) ++open;
  if (open >= text.size() || text[open] != '(') return {b, text.size()};  // words, not a call: the reader names them
  if (!is_matrix_call(name))
    throw ParseError(quoted(name + "(") + " is not read; paste the numbers, or array(…) / tensor(…) as NumPy "
                         "and PyTorch print them",
                     0, 0);
  size_t e = text.size();
  while (e > open && is_space(text[e - 1])) --e;
  if (e == open + 1 || text[e - 1] != ')') throw ParseError(quoted(name + "(") + " is missing its closing ')'", 0, 0);
  const size_t body = open + 1, end = e - 1;
  const size_t last = text.rfind(']', end);
  if (last != std::string::npos && last >= body) check_call_tail(text, last + 1, end);
  return {body, last != std::string::npos && last >= body ? last + 1 : end};
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
  const std::string text = normalise_minus(raw);
  const auto [begin, end] = strip_code_call(text);
  const size_t bracket = text.find_first_of("[]", begin);
  if (bracket != std::string::npos && bracket < end) return parse_brackets(text, begin, end);
  return parse_lines(text.substr(begin, end - begin));
}

}  // namespace ap
