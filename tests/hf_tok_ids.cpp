// hf_tok_ids.cpp — a test tool for tests/hf_tokenizer_reference_test.mjs: the core's ids of many
// texts under a Hugging Face tokenizer.json (formats/hf_tokenizer_json.h).
//
//   hf_tok_ids TOKENIZER_JSON CONFIG_JSON CASES
//   hf_tok_ids FILE.gguf ANY CASES    the tokenizer of a GGUF file (formats/gguf_tokenizer.h); ANY is read, unused
//
// CASES is a file of records, each a 4-byte little-endian length then that many bytes (any bytes).
// Prints three lines per record: the ids with the post-processor's special tokens, separated by
// spaces; the hex of decode(those ids); "ok" if decode(encode(text) without special tokens) gives
// the record's bytes back exactly, else "ROUNDTRIP". Exit status: 0 done, 2 usage, unreadable input
// or a refused tokenizer (the message on stderr).
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "core/base/input_error.h"
#include "formats/gguf.h"
#include "formats/gguf_tokenizer.h"
#include "formats/hf_tokenizer_json.h"

namespace {
bool read(const char* path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}
std::string hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) (out += d[c >> 4]) += d[c & 15];
  return out;
}
}  // namespace

int main(int argc, char** argv) {
  std::string tok_json, config, cases;
  if (argc != 4 || !read(argv[1], tok_json) || !read(argv[2], config) || !read(argv[3], cases)) {
    std::cerr << "usage: hf_tok_ids TOKENIZER_JSON CONFIG_JSON CASES (all readable files)\n";
    return 2;
  }
  try {
    const std::string path = argv[1];
    const bool gguf = path.size() > 5 && path.compare(path.size() - 5, 5, ".gguf") == 0;
    const auto tok = gguf ? ap::load_gguf_tokenizer(ap::gguf::read_file(ap::StringSource(tok_json), path), path).tokenizer
                          : ap::load_hf_tokenizer(tok_json, config).tokenizer;
    std::string out;
    for (size_t at = 0; at + 4 <= cases.size();) {
      const auto* p = reinterpret_cast<const unsigned char*>(cases.data() + at);
      const size_t n = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<size_t>(p[3]) << 24);
      if (at + 4 + n > cases.size()) throw ap::InputError("a record runs past the end of the file", "cases");
      const std::string text = cases.substr(at + 4, n);
      at += 4 + n;
      const std::vector<int> ids = tok->encode(text, true);
      for (size_t i = 0; i < ids.size(); ++i) out += (i ? " " : "") + std::to_string(ids[i]);
      out += "\n" + hex(tok->decode(ids)) + "\n";
      out += tok->decode(tok->encode(text, false)) == text ? "ok\n" : "ROUNDTRIP\n";
    }
    std::cout << out;
  } catch (const ap::InputError& e) {
    std::cerr << "hf_tok_ids: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
