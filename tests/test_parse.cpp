// test_parse.cpp — parse_matrix (matrix_parse.h): every accepted format listed in the header
// (lines, ';', commas, tabs, JSON brackets, NumPy print and repr, NumPy and PyTorch code as written
// and printed, a single bracketed row, trailing whitespace, CRLF), number spellings, and every ParseError with its 1-based row/column.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/tensor/matrix_parse.h"
#include "core/tensor/tensor.h"
#include "core/base/utf8.h"

using Catch::Matchers::Contains;

namespace {

void check_matrix(const std::string& text, const std::vector<std::vector<float>>& want) {
  INFO("input: \"" << text << "\"");
  ap::Tensor t;
  REQUIRE_NOTHROW(t = ap::parse_matrix(text));
  REQUIRE(t.dim() == 2);
  REQUIRE(t.shape[0] == int(want.size()));
  REQUIRE(t.shape[1] == int(want[0].size()));
  CHECK(t.rows() == want);
}

struct PE {
  bool thrown = false;
  std::string what, other;
  int row = -1, column = -1;
};
PE parse_error(const std::string& text) {
  PE p;
  try {
    ap::parse_matrix(text);
    p.other = "<nothing thrown>";
  } catch (const ap::ParseError& e) {
    p.thrown = true;
    p.what = e.what();
    p.row = e.row;
    p.column = e.column;
  } catch (const std::exception& e) {
    p.other = std::string("other exception: ") + e.what();
  }
  return p;
}
#define REQUIRE_PARSE_ERROR(p)        \
  do {                                \
    INFO("instead: " << (p).other);   \
    REQUIRE((p).thrown);              \
    INFO("message: " << (p).what);    \
    CHECK_FALSE((p).what.empty());    \
  } while (0)

const std::vector<std::vector<float>> kI2 = {{1, 0}, {0, 1}};

}  // namespace

TEST_CASE("parse: rows on lines or semicolons - numbers separated by spaces or tabs or commas", "[parse]") {
  check_matrix("1 0\n0 1", kI2);
  check_matrix("1 0; 0 1", kI2);
  check_matrix("1 0;0 1", kI2);
  check_matrix("1, 0; 0, 1", kI2);
  check_matrix("1,0\n0,1", kI2);
  check_matrix("1\t0\n0\t1", kI2);
  check_matrix("1\t0\n0\t1\n", kI2);  // a spreadsheet copy ends with a newline
  check_matrix("1   0\n0  \t 1", kI2);
  check_matrix("1.5 -2 3\n4 5 6e1", {{1.5f, -2, 3}, {4, 5, 60}});
  check_matrix("7", {{7}});
  check_matrix("1 2 3 4", {{1, 2, 3, 4}});
  check_matrix("1\n2\n3", {{1}, {2}, {3}});
  check_matrix("1; 2; 3", {{1}, {2}, {3}});
}

TEST_CASE("parse: JSON and NumPy bracket styles", "[parse]") {
  check_matrix("[[1, 0], [0, 1]]", kI2);
  check_matrix("[[1,0],[0,1]]", kI2);
  check_matrix("[[1, 0],\n [0, 1]]", kI2);
  check_matrix("[[1. 0.]\n [0. 1.]]", kI2);  // NumPy print
  check_matrix("[[ 1.5 -2. ]\n [ 0.   1. ]]", {{1.5f, -2}, {0, 1}});
  check_matrix("array([[1., 0.], [0., 1.]], dtype=float32)", kI2);  // NumPy repr
  check_matrix("array([[1., 0.],\n       [0., 1.]], dtype=float32)", kI2);
  check_matrix("array([[1., 0.], [0., 1.]])", kI2);
  check_matrix("[1, 2]", {{1, 2}});  // a single bracketed row
  check_matrix("[1 2 3]", {{1, 2, 3}});
  check_matrix("[[5]]", {{5}});
}

TEST_CASE("parse: NumPy and PyTorch code - calls as written and tensors as printed", "[parse]") {
  check_matrix("np.array([[1., 0.], [0., 1.]])", kI2);
  check_matrix("numpy.asarray([[1, 0], [0, 1]], dtype=np.float32)", kI2);
  check_matrix("  np.array([[1., 0.],\n            [0., 1.]])\n", kI2);
  check_matrix("torch.tensor([[1., 0.], [0., 1.]])", kI2);
  check_matrix("torch.tensor([[1., 0.], [0., 1.]], dtype=torch.float32, requires_grad=True)", kI2);
  check_matrix("tensor([[1., 0.], [0., 1.]], requires_grad=True)", kI2);
  check_matrix("tensor([[1., 0.], [0., 1.]], grad_fn=<AddBackward0>)", kI2);
  check_matrix("tensor([[1., 0.], [0., 1.]], device='cuda:0', grad_fn=<MmBackward0>)", kI2);
  check_matrix("tensor([[ 0.1000, -0.2000],\n        [ 0.3000,  0.4000]])", {{0.1f, -0.2f}, {0.3f, 0.4f}});
  check_matrix("tensor([[ 1.0000e-03, -2.5000e+00],\n        [ 3.0000e+00,  4.0000e+00]],\n       requires_grad=True)",
               {{1e-3f, -2.5f}, {3, 4}});
  check_matrix("Parameter containing:\ntensor([[ 0.5000, -1.0000]], requires_grad=True)", {{0.5f, -1}});
  check_matrix("tensor([1., 2., 3.])", {{1, 2, 3}});  // a vector is one row
  check_matrix("torch.FloatTensor([[1, 0], [0, 1]])", kI2);
  check_matrix("tensor([[1., 0.], [0., 1.]],)", kI2);  // a trailing comma
}

TEST_CASE("parse errors: code that is not a matrix names what is wrong", "[parse][errors]") {
  PE call = parse_error("torch.randn(2, 3)");
  REQUIRE_PARSE_ERROR(call);
  CHECK_THAT(call.what, Contains("'torch.randn('"));
  PE tail = parse_error("tensor([[1., 0.]], 7)");
  REQUIRE_PARSE_ERROR(tail);
  CHECK_THAT(tail.what, Contains("at character 20"));
  CHECK_THAT(tail.what, Contains("'7'"));
  PE open = parse_error("tensor([[1., 0.]]");
  REQUIRE_PARSE_ERROR(open);
  CHECK_THAT(open.what, Contains("closing ')'"));
  PE start = parse_error("x = [[1, 2]]");
  REQUIRE_PARSE_ERROR(start);
  CHECK_THAT(start.what, Contains("found 'x' at character 1"));
  PE start_utf8 = parse_error("\xC3\xA9 [[1, 2]]");  // é: one character, named whole
  REQUIRE_PARSE_ERROR(start_utf8);
  CHECK_THAT(start_utf8.what, Contains("found '\xC3\xA9' at character 1"));
  PE after = parse_error("tensor([[1., 0.]] x)");
  REQUIRE_PARSE_ERROR(after);
  CHECK_THAT(after.what, Contains("at character 19"));
  PE row = parse_error("[[1, 2], 3]");
  REQUIRE_PARSE_ERROR(row);
  CHECK(row.row == 2);
  CHECK_THAT(row.what, Contains("found '3' at character 10"));
  PE cell = parse_error("tensor([[1., x], [0., 1.]])");
  REQUIRE_PARSE_ERROR(cell);
  CHECK(cell.row == 1);
  CHECK(cell.column == 2);
  CHECK_THAT(cell.what, Contains("'x'"));
  PE shortened = parse_error("tensor([[0.1, 0.2, ..., 0.9],\n        [0.3, 0.4, ..., 0.8]])");
  REQUIRE_PARSE_ERROR(shortened);
  CHECK(shortened.row == 1);
  CHECK(shortened.column == 3);
  CHECK_THAT(shortened.what, Contains("profile='full'"));
  PE rows_left_out = parse_error("array([[1, 2],\n       ...,\n       [3, 4]])");
  REQUIRE_PARSE_ERROR(rows_left_out);
  CHECK(rows_left_out.row == 2);
  CHECK_THAT(rows_left_out.what, Contains("threshold=sys.maxsize"));
}

TEST_CASE("parse: trailing whitespace - trailing newlines and CRLF", "[parse]") {
  check_matrix("1 0\n0 1\n", kI2);
  check_matrix("1 0\n0 1\n\n", kI2);
  check_matrix("1 0\n0 1  \n  \t", kI2);
  check_matrix("1 0 \n0 1 ", kI2);
  check_matrix("1 0\r\n0 1\r\n", kI2);
  check_matrix("1 0\r\n0 1", kI2);
  check_matrix("[[1, 0],\r\n [0, 1]]\r\n", kI2);
}

TEST_CASE("parse: number spellings as strtof reads them", "[parse]") {
  ap::Tensor t = ap::parse_matrix(".5 1e-3 +2 -0");
  REQUIRE(t.shape == ap::Shape{1, 4});
  CHECK(t.data[0] == 0.5f);
  CHECK(t.data[1] == 1e-3f);
  CHECK(t.data[2] == 2.0f);
  CHECK(t.data[3] == 0.0f);
  CHECK(std::signbit(t.data[3]));
  ap::Tensor u = ap::parse_matrix("-0.5 1E3 2.5e+2 -.25 0.1 3.4e38");
  REQUIRE(u.shape == ap::Shape{1, 6});
  CHECK(u.data[0] == -0.5f);
  CHECK(u.data[1] == 1000.0f);
  CHECK(u.data[2] == 250.0f);
  CHECK(u.data[3] == -0.25f);
  CHECK(u.data[4] == 0.1f);  // the float nearest 0.1, as strtof gives
  CHECK(u.data[5] == 3.4e38f);
}

TEST_CASE("parse: U+2212 minus signs anywhere read as '-' - the text between them unchanged", "[parse]") {
  const std::string m = "\xE2\x88\x92";  // U+2212 MINUS SIGN
  check_matrix(m + "1 2\n3 " + m + "4.5", {{-1, 2}, {3, -4.5f}});
  check_matrix("0.25 " + m + "0.5 " + m + ".75", {{0.25f, -0.5f, -0.75f}});
  check_matrix("[[" + m + "1, 2e" + m + "3]]", {{-1, 2e-3f}});
  // two minus signs are not a number; a cut sequence is not UTF-8: both named with their cell
  PE twice = parse_error("1 " + m + m + "2");
  REQUIRE_PARSE_ERROR(twice);
  CHECK(twice.column == 2);
  CHECK_THAT(twice.what, Contains("'--2' is not a number"));
  PE cut = parse_error("1 2 \xE2\x88");
  REQUIRE_PARSE_ERROR(cut);
  CHECK(cut.column == 3);
  CHECK_THAT(cut.what, Contains("is cut short"));
}

TEST_CASE("parse errors: a non-number gives its row and column", "[parse][errors]") {
  PE p = parse_error("1 2 3\n4 5 abc");
  REQUIRE_PARSE_ERROR(p);
  CHECK(p.row == 2);
  CHECK(p.column == 3);
  CHECK_THAT(p.what, Contains("abc"));

  PE q = parse_error("1, x; 3, 4");
  REQUIRE_PARSE_ERROR(q);
  CHECK(q.row == 1);
  CHECK(q.column == 2);

  PE r = parse_error("[[1, 2], [3, 4a]]");
  REQUIRE_PARSE_ERROR(r);
  CHECK(r.row == 2);
  CHECK(r.column == 2);

  PE s = parse_error("1 2\n3 1.2.3");
  REQUIRE_PARSE_ERROR(s);
  CHECK(s.row == 2);
  CHECK(s.column == 2);
}

TEST_CASE("parse errors: bytes that are not UTF-8 are named, not replaced", "[parse][errors]") {
  // a stray byte in a cell: the message shows it as \xFF and says what is wrong with it
  PE p = parse_error("1 2\n3 \xff" "4");
  REQUIRE_PARSE_ERROR(p);
  CHECK(p.row == 2);
  CHECK(p.column == 2);
  CHECK(p.what == "row 2, column 2: '\\xFF4' is not a number (byte 0 of the cell: 0xFF never appears in UTF-8)");
  // a lone UTF-16 surrogate, as a browser's string of a broken paste encodes it (ED A0 80)
  PE s = parse_error("1 \xed\xa0\x80");
  REQUIRE_PARSE_ERROR(s);
  CHECK_THAT(s.what, Contains("'\\xED\\xA0\\x80' is not a number (byte 0 of the cell: 0xED"));
  // the message itself is always valid UTF-8 (what JSON and the page can carry)
  for (const PE& e : {p, s}) CHECK(ap::utf8_valid(e.what));
}

TEST_CASE("parse errors: a long cell is shortened on a character boundary", "[parse][errors]") {
  // 1 byte then 3-byte characters: a cut at 24 bytes would fall inside the 8th one
  std::string cell = "x";
  for (int i = 0; i < 20; ++i) cell += "\u4e2d";  // 中
  PE p = parse_error("1 " + cell);
  REQUIRE_PARSE_ERROR(p);
  CHECK(ap::utf8_valid(p.what));
  CHECK_THAT(p.what, Contains("'x\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u4e2d\u2026' is not a number"));
}

TEST_CASE("parse errors: ragged rows mention both counts", "[parse][errors]") {
  PE p = parse_error("1 2 3\n4 5");
  REQUIRE_PARSE_ERROR(p);
  CHECK(p.row == 2);
  CHECK_THAT(p.what, Contains("3") && Contains("2"));

  PE q = parse_error("1 2\n3 4\n5 6 7 8 9");
  REQUIRE_PARSE_ERROR(q);
  CHECK(q.row == 3);
  CHECK_THAT(q.what, Contains("5") && Contains("2"));

  PE r = parse_error("[[1, 2], [3]]");
  REQUIRE_PARSE_ERROR(r);
  CHECK(r.row == 2);
}

TEST_CASE("parse errors: empty input", "[parse][errors]") {
  for (const char* text : {"", "   ", "\n\n", " \t\r\n", "[]", "[[]]"}) {
    INFO("input: \"" << text << "\"");
    PE p = parse_error(text);
    REQUIRE_PARSE_ERROR(p);
  }
}

TEST_CASE("parse errors: NaN and Inf are refused - with their cell", "[parse][errors]") {
  for (const char* word : {"nan", "NaN", "inf", "-inf", "Infinity", "+INF", "-nan"}) {
    INFO("word: " << word);
    PE p = parse_error(std::string("1 2\n3 ") + word);
    REQUIRE_PARSE_ERROR(p);
    CHECK(p.row == 2);
    CHECK(p.column == 2);
  }
}

TEST_CASE("parse errors: numbers outside float32's range", "[parse][errors]") {
  PE p = parse_error("1e39");
  REQUIRE_PARSE_ERROR(p);
  CHECK(p.row == 1);
  CHECK(p.column == 1);
  PE q = parse_error("0 0 0\n0 -1e39 0");
  REQUIRE_PARSE_ERROR(q);
  CHECK(q.row == 2);
  CHECK(q.column == 2);
  PE r = parse_error("1 1e400");
  REQUIRE_PARSE_ERROR(r);
  CHECK(r.row == 1);
  CHECK(r.column == 2);
}

TEST_CASE("parse errors: unbalanced brackets and nesting deeper than 2", "[parse][errors]") {
  for (const char* text : {"[[1, 2], [3, 4]", "[[1, 2], [3, 4]]]", "[1, 2", "1, 2]", "[[1, 2] [3, 4]",
                           "array([[1., 0.], [0., 1.]]", "[[[1]]]", "[[[1, 2], [3, 4]]]"}) {
    INFO("input: \"" << text << "\"");
    PE p = parse_error(text);
    REQUIRE_PARSE_ERROR(p);
  }
}

TEST_CASE("parse limits: kMaxParseRows rows and kMaxParseCols columns", "[parse][errors]") {
  auto rows_text = [](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += std::to_string(i % 10) + "\n";
    return s;
  };
  auto cols_text = [](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += std::to_string(i % 10) + " ";
    return s;
  };
  ap::Tensor a = ap::parse_matrix(rows_text(ap::kMaxParseRows));
  CHECK(a.shape == ap::Shape{ap::kMaxParseRows, 1});
  CHECK(a.data[ap::kMaxParseRows - 1] == float((ap::kMaxParseRows - 1) % 10));
  ap::Tensor b = ap::parse_matrix(cols_text(ap::kMaxParseCols));
  CHECK(b.shape == ap::Shape{1, ap::kMaxParseCols});

  PE p = parse_error(rows_text(ap::kMaxParseRows + 1));
  REQUIRE_PARSE_ERROR(p);
  CHECK_THAT(p.what, Contains(std::to_string(ap::kMaxParseRows)));
  PE q = parse_error(cols_text(ap::kMaxParseCols + 1));
  REQUIRE_PARSE_ERROR(q);
  CHECK_THAT(q.what, Contains(std::to_string(ap::kMaxParseCols)));
  CHECK(q.row == 1);
}
