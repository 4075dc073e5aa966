// test_safetensors.cpp — the safetensors container (src/formats/safetensors.h) on its own, for any
// tensors (the GPT's checkpoint on top of it: test_checkpoint.cpp):
//  - the round trip: several dtypes (F32 from floats, raw I64, U8, BOOL, F16), a scalar (shape
//    []) and an empty tensor (a zero dimension), metadata or none; the layout byte for byte (the
//    length, the padded header, the offsets, little-endian data);
//  - the container's faults, each named: a file shorter than the length prefix, a header length
//    over the limit or past the end, a header that is not JSON or not an object, a tensor given
//    twice;
//  - the entries' faults, each naming the tensor: not an object, an unknown or a missing key, an
//    unknown dtype, too many or negative dimensions, offsets that are not [begin, end], run
//    backwards, hold the wrong number of bytes for the dtype and shape, leave a gap, overlap,
//    come out of order or run past the end; trailing bytes; a metadata value that is not a string;
//  - the hooks a format on top gets (Expect), asked in order, and what the writer refuses.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "formats/json.h"
#include "formats/safetensors.h"
#include "core/attention/attention.h"
#include "input_error_util.h"

namespace st = ap::safetensors;
using ap::json::Value;
using input_error_util::Error;
using input_error_util::error_of;

namespace {

const st::Limits kLimits{1 << 16, 1 << 20, "file"};

std::string le64(uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xFF);
  return out;
}

// A file with this header text (as given, not padded) and data.
std::string assemble(const std::string& header, const std::string& data) { return le64(header.size()) + header + data; }

Error read_error(const std::string& bytes) {
  return error_of([&] { st::read_file(bytes, kLimits); });
}

// Two F32 tensors a [2] and b [1], 12 bytes of data, with entry `b` as given.
std::string two_tensors(const std::string& b_entry, const std::string& data = std::string(12, '\0')) {
  return assemble(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":)" + b_entry + "}", data);
}

}  // namespace

TEST_CASE("safetensors: any tensors round-trip, laid out as the format says", "[safetensors]") {
  const std::vector<float> w = {1.5f, -2.0f, 0.0f, -0.0f, 3.25f, 1e-30f};
  const int64_t ids[] = {-1, 7, INT64_MAX};
  unsigned char ids_le[24];
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 8; ++k) ids_le[8 * i + k] = static_cast<unsigned char>(static_cast<uint64_t>(ids[i]) >> (8 * k));
  const unsigned char mask[] = {1, 0, 1, 1};
  const unsigned char half[] = {0x00, 0x3C};  // F16 1.0
  Value meta = Value::object();
  meta.set("format", "pt");
  meta.set("note", "注意");
  const std::vector<st::TensorData> tensors = {
      {"w", "F32", {2, 3}, w.data(), nullptr},
      {"ids", "I64", {3}, nullptr, ids_le},
      {"mask", "BOOL", {2, 2}, nullptr, mask},
      {"scalar", "F16", {}, nullptr, half},
      {"empty", "F32", {4, 0}, nullptr, nullptr},
  };
  const std::string bytes = st::write_file(meta, tensors, kLimits);

  // The layout: the length, the header padded with spaces to a multiple of 8, the data in order.
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  CHECK(n % 8 == 0);
  const std::string header = bytes.substr(8, n);
  CHECK(header.substr(0, header.find_last_of('}') + 1) ==
        R"({"__metadata__":{"format":"pt","note":"注意"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
        R"("ids":{"dtype":"I64","shape":[3],"data_offsets":[24,48]},"mask":{"dtype":"BOOL","shape":[2,2],"data_offsets":[48,52]},)"
        R"("scalar":{"dtype":"F16","shape":[],"data_offsets":[52,54]},"empty":{"dtype":"F32","shape":[4,0],"data_offsets":[54,54]}})");
  CHECK(bytes.size() == 8 + n + 54);
  CHECK(bytes.substr(8 + n, 4) == std::string("\x00\x00\xC0\x3F", 4));  // 1.5f, little-endian
  CHECK(bytes.substr(8 + n + 24, 8) == std::string("\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF", 8));

  const st::File f = st::read_file(bytes, kLimits);
  REQUIRE(f.metadata.size() == 2);
  CHECK(f.metadata[1].first == "note");
  CHECK(f.metadata[1].second == "注意");
  REQUIRE(f.tensors.size() == 5);
  CHECK(f.tensors[1].name == "ids");
  CHECK(f.tensors[1].dtype == "I64");
  CHECK(f.tensors[3].shape.empty());
  CHECK(f.tensors[4].shape == std::vector<uint64_t>{4, 0});
  CHECK(f.tensors[4].begin == f.tensors[4].end);
  std::vector<float> back(6);
  st::read_f32(bytes, f.header, f.tensors[0], back.data());
  CHECK(std::memcmp(back.data(), w.data(), sizeof(float) * 6) == 0);  // −0 stays −0
  CHECK(bytes.substr(8 + n + f.tensors[1].begin, 24) == std::string(reinterpret_cast<const char*>(ids_le), 24));

  // No metadata: no "__metadata__" at all; and a file with no tensors.
  const std::string bare = st::write_file(Value(), {{"x", "U8", {1}, nullptr, mask}}, kLimits);
  CHECK(bare.find("__metadata__") == std::string::npos);
  CHECK(st::read_file(bare, kLimits).metadata.empty());
  CHECK(st::read_file(st::write_file(Value(), {}, kLimits), kLimits).tensors.empty());
  // The same input gives the same bytes.
  CHECK(st::write_file(meta, tensors, kLimits) == bytes);
}

TEST_CASE("safetensors: a container that is not one is refused, naming the byte", "[safetensors][corrupt]") {
  Error e = read_error("");
  CHECK(e.field == "file");
  CHECK(e.message == "the file is 0 bytes: it ends at byte 0, inside the 8-byte header length (bytes 0 to 7) "
                     "that starts a safetensors file (truncated)");
  e = read_error(le64(uint64_t(1) << 17) + "{}");
  CHECK(e.message == "the header length (bytes 0 to 7, little-endian) is 131072 bytes, more than the limit of 65536: "
                     "not a file, or a corrupted one");
  e = read_error(le64(1) + "{");
  CHECK(e.message == "the header length (bytes 0 to 7, little-endian) is 1 bytes: too short for a JSON header");
  e = read_error(le64(40) + "{}");
  CHECK(e.message == "the header length (bytes 0 to 7) says the JSON header takes bytes 8 to 47, but the file ends "
                     "at byte 10 (truncated, or not a safetensors file)");
  e = read_error(std::string(1 << 20, ' ') + "x");
  CHECK(e.message == "the file is 1048577 bytes, more than the limit of 1048576 for a file");
  e = read_error(assemble(R"({"a": tru})", ""));
  CHECK(e.field == "file");
  CHECK_THAT(e.message, Catch::StartsWith("the header (bytes 8 to 17) is not valid JSON, at byte 14: JSON: "));
  e = read_error(assemble("[1, 2]", ""));
  CHECK(e.message == "the header (bytes 8 to 13) is JSON but not an object of tensors");
  // A tensor given twice: the JSON reader refuses the repeated key.
  e = read_error(assemble(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                          "xy"));
  CHECK_THAT(e.message, Catch::Contains("repeated key \"a\""));
  // Metadata: an object of strings.
  e = read_error(assemble(R"({"__metadata__":{"n":5}})", ""));
  CHECK(e.field == "__metadata__.n");
  CHECK(e.message == "__metadata__.n must be a string (safetensors metadata maps strings to strings), got 5");
  e = read_error(assemble(R"({"__metadata__":"x"})", ""));
  CHECK(e.field == "__metadata__");
}

TEST_CASE("safetensors: a bad tensor entry is refused by name", "[safetensors][corrupt]") {
  struct Case {
    std::string entry, message;
  };
  const std::vector<Case> cases = {
      {R"("U8")", "tensor \"b\": its header entry must be an object {dtype, shape, data_offsets}"},
      {R"({"dtype":"F32","shape":[1],"data_offsets":[8,12],"x":1})", "tensor \"b\" has an unknown key \"x\" in its header entry"},
      {R"({"dtype":"F32","data_offsets":[8,12]})", "tensor \"b\" has no \"shape\" in its header entry"},
      {R"({"dtype":"F33","shape":[1],"data_offsets":[8,12]})",
       "tensor \"b\" has dtype \"F33\": not one of the format's dtypes (F64, F32, F16, BF16, I64, …, U8, BOOL)"},
      {R"({"dtype":4,"shape":[1],"data_offsets":[8,12]})",
       "tensor \"b\" has dtype 4: not one of the format's dtypes (F64, F32, F16, BF16, I64, …, U8, BOOL)"},
      {R"({"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[8,12]})",
       "tensor \"b\": \"shape\" must be an array of at most 8 dimensions"},
      {R"({"dtype":"F32","shape":[-1],"data_offsets":[8,12]})",
       "tensor \"b\": \"shape\"'s dimensions must be whole numbers ≥ 0, got -1"},
      {R"({"dtype":"F32","shape":[1],"data_offsets":[8]})", "tensor \"b\": \"data_offsets\" must be [begin, end]"},
      {R"({"dtype":"F32","shape":[1],"data_offsets":[8,1e300]})",
       "tensor \"b\": \"data_offsets\" must be whole numbers ≥ 0, got 1.0000000000000001e+300"},
      {R"({"dtype":"F32","shape":[1],"data_offsets":[12,8]})", "tensor \"b\": its data_offsets [12, 8] end before they begin"},
      {R"({"dtype":"F16","shape":[1],"data_offsets":[8,12]})",
       "tensor \"b\": its data_offsets [8, 12] hold 4 bytes, but F16 [1] needs 2"},
      {R"({"dtype":"F64","shape":[9007199254740992,9007199254740992],"data_offsets":[8,12]})",
       "tensor \"b\": its data_offsets [8, 12] hold 4 bytes, but F64 [9007199254740992, 9007199254740992] needs more than 2^64"},
      {R"({"dtype":"F32","shape":[1],"data_offsets":[9,13]})",
       "tensor \"b\": its data_offsets [9, 13] leave a gap of 1 bytes after the previous tensor \"a\" (which ends at data "
       "offset 8): the tensors must tile the data in header order"},
      {R"({"dtype":"F32","shape":[1],"data_offsets":[4,8]})",
       "tensor \"b\": its data_offsets [4, 8] overlap the previous tensor \"a\" (which ends at data offset 8)"},
      {R"({"dtype":"F32","shape":[0],"data_offsets":[0,0]})",
       "tensor \"b\": its data_offsets [0, 0] come before those of the previous tensor \"a\" (out of order): the tensors "
       "must tile the data in header order"},
      {R"({"dtype":"F32","shape":[2],"data_offsets":[8,16]})",
       "tensor \"b\": its data_offsets [8, 16] run to byte 132 of the file, but the file ends at byte 128 (truncated)"},
  };
  for (const Case& c : cases) {
    INFO(c.entry);
    const Error e = read_error(two_tensors(c.entry));
    CHECK(e.field == "b");
    CHECK(e.message == c.message);
  }
  // The first tensor must start the data; nothing may follow the last.
  Error e = read_error(assemble(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})", "xy"));
  CHECK(e.message == "tensor \"a\": its data_offsets [1, 2] leave a gap of 1 bytes after the data (which ends at data "
                     "offset 0): the tensors must tile the data in header order");
  e = read_error(two_tensors(R"({"dtype":"F32","shape":[1],"data_offsets":[8,12]})", std::string(14, '\0')));
  CHECK(e.field == "file");
  CHECK(e.message == "the file has 2 bytes after the last tensor's data (bytes 128 to 129): trailing bytes, not part of "
                     "any tensor");
  // A huge name is shortened in the message and the field.
  const std::string name(500, 'n');
  e = read_error(assemble("{\"" + name + "\":1}", ""));
  CHECK(e.field == std::string(200, 'n') + "…");
  CHECK_THAT(e.message, Catch::StartsWith("tensor \"" + std::string(80, 'n') + "…\": its header entry"));
}

TEST_CASE("safetensors: a format on top checks its own expectations between the container's", "[safetensors]") {
  const std::string bytes = two_tensors(R"({"dtype":"F32","shape":[1],"data_offsets":[8,12]})");
  const st::Header h = st::read_header(bytes, kLimits);
  std::vector<std::string> asked;
  st::Expect expect;
  expect.name = [&](const std::string& n) { asked.push_back("name " + n); };
  expect.dtype = [&](const std::string& n, const Value& d) { asked.push_back("dtype " + n + " " + d.as_string()); };
  expect.shape = [&](const std::string& n, const std::vector<uint64_t>& s) {
    asked.push_back("shape " + n + " " + st::shape_text(s));
  };
  expect.all_read = [&] { asked.push_back("all read"); };
  CHECK(st::read_tensors(h, kLimits, expect).size() == 2);
  CHECK(asked == std::vector<std::string>{"name a", "dtype a F32", "shape a [2]", "name b", "dtype b F32", "shape b [1]",
                                          "all read"});
  // A hook's error comes before the container's checks that follow it.
  expect.shape = [](const std::string& n, const std::vector<uint64_t>&) {
    if (n == "b") throw ap::InputError("b is not wanted", "b");
  };
  const Error e = error_of([&] {
    st::read_tensors(st::read_header(two_tensors(R"({"dtype":"F32","shape":[1],"data_offsets":[9,1]})"), kLimits), kLimits,
                     expect);
  });
  CHECK(e.message == "b is not wanted");
}

TEST_CASE("safetensors: the writer refuses what it cannot store", "[safetensors]") {
  const float x[] = {1.0f};
  Error e = error_of([&] { st::write_file(Value(), {{"t", "F31", {1}, x, nullptr}}, kLimits); });
  CHECK(e.field == "t");
  CHECK(e.message == "tensor \"t\": \"F31\" is not one of the format's dtypes");
  e = error_of([&] { st::write_file(Value(), {{"t", "F32", {1}, nullptr, nullptr}}, kLimits); });
  CHECK(e.message == "tensor \"t\" has no data to write (f32)");
  e = error_of([&] { st::write_file(Value(), {{"t", "U8", {uint64_t(1) << 40, uint64_t(1) << 40}, nullptr, nullptr}}, kLimits); });
  CHECK(e.message == "tensor \"t\": its shape [1099511627776, 1099511627776] is too large");
  std::vector<float> big(1 << 18);
  e = error_of([&] { st::write_file(Value(), {{"t", "F32", {big.size()}, big.data(), nullptr}}, kLimits); });
  CHECK(e.field == "file");
  CHECK(e.message == "the file would be 1048656 bytes, more than the limit of 1048576");
  Value meta = Value::object();
  meta.set("long", std::string(1 << 16, 'x'));
  e = error_of([&] { st::write_file(meta, {}, kLimits); });
  CHECK_THAT(e.message, Catch::StartsWith("the header would be 65568 bytes, more than the limit of 65536"));
}
