// fuzz_checkpoint.cpp — libFuzzer target for the checkpoint reader: any bytes given to
// load_checkpoint must either load or throw InputError — never crash, hang, leak, or throw
// anything else (a JsonError or std::out_of_range escaping would be a bug). Whatever loads must be
// a state the writer accepts, and writing it and reading it back must give the same bytes again
// (the reader accepts nothing that the format cannot hold).
// Seed corpus: tests/fuzz/corpus/checkpoint (small real checkpoints and a few mutations, written by
// `ap_tests "[.fuzz_corpus]"`; see tests/test_checkpoint.cpp). Run with -max_len=16384.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "api/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  ap::TrainState s;
  try {
    s = ap::load_checkpoint(bytes);
  } catch (const ap::InputError& e) {
    if (std::string(e.what()).empty() || e.field.empty()) std::abort();  // every error names something
    return 0;
  }
  // Loaded: the writer must take it, and its bytes must read back to the same bytes.
  const std::string again = ap::save_checkpoint(s);
  if (ap::save_checkpoint(ap::load_checkpoint(again)) != again) std::abort();
  return 0;
}
