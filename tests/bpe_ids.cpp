// bpe_ids.cpp — a test tool for tests/bpe_reference_test.mjs: the core's BPE ids of many texts.
//
//   bpe_ids VOCAB_JSON MERGES_TXT CASES
//
// CASES is a file of records, each a 4-byte little-endian length then that many bytes (any bytes:
// invalid UTF-8 too). Prints one line per record: its ids separated by spaces, or "ROUNDTRIP" if
// decoding the ids did not give back the record's bytes exactly. Exit status: 0 done, 2 usage,
// unreadable input or a refused tokenizer (the message on stderr).
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "formats/bpe_files.h"
#include "core/attention/attention.h"

namespace {
bool read(const char* path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  std::string vocab, merges, cases;
  if (argc != 4 || !read(argv[1], vocab) || !read(argv[2], merges) || !read(argv[3], cases)) {
    std::cerr << "usage: bpe_ids VOCAB_JSON MERGES_TXT CASES (all readable files)\n";
    return 2;
  }
  try {
    const auto tok = ap::load_bpe_files(vocab, merges, argv[1], argv[2]);
    std::string out;
    for (size_t at = 0; at + 4 <= cases.size();) {
      const auto* p = reinterpret_cast<const unsigned char*>(cases.data() + at);
      const size_t n = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<size_t>(p[3]) << 24);
      if (at + 4 + n > cases.size()) throw ap::InputError("a record runs past the end of the file", "cases");
      const std::string text = cases.substr(at + 4, n);
      at += 4 + n;
      const std::vector<int> ids = tok->encode(text);
      if (tok->decode(ids) != text) {
        out += "ROUNDTRIP\n";
        continue;
      }
      for (size_t i = 0; i < ids.size(); ++i) out += (i ? " " : "") + std::to_string(ids[i]);
      out += "\n";
    }
    std::cout << out;
  } catch (const ap::InputError& e) {
    std::cerr << "bpe_ids: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
