// fuzz_bpe.cpp — libFuzzer target for GPT-2's BPE (core/tokenizers/bpe.h, formats/bpe_files.h): any bytes, read
// as a tokenizer.json, as a vocab.json + merges.txt pair (split at the first NUL), and encoded by a
// small fixed tokenizer, must give a tokenizer or an InputError naming the file, and every text must
// decode back to its bytes exactly — never crash, hang, leak, or throw anything else.
// Seed corpus: tests/fuzz/corpus/bpe (a small tokenizer.json in each merge form, a vocab/merges
// pair, and texts with Chinese, emoji and invalid UTF-8). Run with -max_len=4096.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "formats/bpe_files.h"
#include "core/attention/attention.h"

namespace {

// The 256 byte symbols, "ab", " t", " th", " the", "the" and their merges.
std::shared_ptr<const ap::BpeTokenizer> fixed() {
  std::vector<std::pair<std::string, long long>> v;
  for (int b = 0; b < 256; ++b) v.emplace_back(ap::byte_symbol(static_cast<uint8_t>(b)), b);
  const std::string g = ap::byte_symbol(' ');
  for (const std::string& s : {std::string("ab"), g + "t", g + "th", g + "the", std::string("th"), std::string("the")})
    v.emplace_back(s, static_cast<long long>(v.size()));
  std::vector<ap::BpeMerge> m = {{"a", "b", 1}, {g, "t", 2}, {g + "t", "h", 3}, {g + "th", "e", 4}, {"t", "h", 5},
                                 {"th", "e", 6}};
  return ap::BpeTokenizer::build(v, m, "vocab", "merges");
}

void expect_named(const ap::InputError& e, const char* a, const char* b) {
  if (std::string(e.what()).empty() || (e.field.rfind(a, 0) != 0 && e.field.rfind(b, 0) != 0)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::shared_ptr<const ap::BpeTokenizer> tok = fixed();
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::vector<int> ids = tok->encode(bytes);
  if (tok->decode(ids) != bytes) std::abort();
  try {
    const auto t = ap::load_tokenizer_json(bytes, "tokenizer.json");
    if (t->decode(t->encode(bytes)) != bytes) std::abort();
  } catch (const ap::InputError& e) {
    expect_named(e, "tokenizer.json", "tokenizer.json");
  }
  const size_t nul = bytes.find('\0');
  if (nul != std::string::npos) {
    try {
      const auto t = ap::load_bpe_files(bytes.substr(0, nul), bytes.substr(nul + 1));
      const std::string text = bytes.substr(nul + 1);
      if (t->decode(t->encode(text)) != text) std::abort();
    } catch (const ap::InputError& e) {
      expect_named(e, "vocab.json", "merges.txt");
    }
  }
  return 0;
}
