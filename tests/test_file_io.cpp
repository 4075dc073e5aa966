// test_file_io.cpp — whole files (src/api/file_io.h) beyond what the checkpoint's tests cover
// (test_checkpoint.cpp: the atomic replace, a write that fails half way, a failing rename): the
// bounded read's limit and its refusal of what is not a regular file, an empty path, parent_dir.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "api/file_io.h"
#include "core/attention.h"

namespace {

struct Error {
  std::string field, message;
};

template <class F>
Error error_of(F&& f) {
  try {
    f();
  } catch (const ap::InputError& e) {
    return {e.field, e.what()};
  }
  return {"", "no error"};
}

}  // namespace

TEST_CASE("file_io: a bounded read, an atomic write, the parent folder", "[file]") {
  std::string tmpl = (std::filesystem::temp_directory_path() / "ap_file_io_XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  const std::string dir = tmpl, path = dir + "/f.bin";

  ap::write_file_atomic(path, std::string("ab\0c", 4));
  CHECK(ap::read_file(path, 4, "a test") == std::string("ab\0c", 4));
  Error e = error_of([&] { ap::read_file(path, 3, "a test"); });
  CHECK(e.field == "path");
  CHECK(e.message == path + " is 4 bytes, more than the limit of 3 for a test");
  e = error_of([&] { ap::read_file(dir, 100, "a test"); });
  CHECK(e.message == "cannot read " + dir + ": not a regular file");
  const std::string fifo = dir + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  e = error_of([&] { ap::read_file(fifo + "-missing", 100, "a test"); });
  CHECK_THAT(e.message, Catch::StartsWith("cannot open " + fifo + "-missing: "));
  e = error_of([&] { ap::write_file_atomic("", "x"); });
  CHECK(e.field == "path");
  CHECK(e.message == "no file name given");
  ap::write_file_atomic(path, "");
  CHECK(ap::read_file(path, 0, "a test").empty());

  CHECK(ap::parent_dir("x.bin") == ".");
  CHECK(ap::parent_dir("/x.bin") == "/");
  CHECK(ap::parent_dir("a/b/x.bin") == "a/b");
  std::filesystem::remove_all(dir);
}
