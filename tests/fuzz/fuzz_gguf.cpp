// fuzz_gguf.cpp — libFuzzer target for the GGUF reader (formats/gguf.h) and what is read from its
// metadata (the model's config, the tokenizer's data): any bytes must give a header whose tensors
// all lie inside the file, or throw InputError naming the file, key or tensor — never crash, hang,
// leak, allocate beyond the file's size, or throw anything else. A file read whole and one read in
// parts (a PartialSource fed what it asks for, as the page's opening does) must read alike; a
// tensor of a type we run is dequantized row by row and multiplied (quant.h) from the file's bytes;
// the tokenizer as an HfBpeTokenizer (gguf_tokenizer.h) and the file as a Llama-family model's weights (gguf_weights.h) is read or refused by name, and every
// tensor it gives lies in the file's bytes or in its own made ones, of the size its shape says.
// Seed corpus: tests/fuzz/corpus/gguf (tests/gguf_writer.py's sample files). Run with -max_len=16384.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/base/input_error.h"
#include "core/kernels/quant.h"
#include "formats/gguf.h"
#include "formats/gguf_tokenizer.h"
#include "formats/gguf_weights.h"

namespace {

// The header through a PartialSource given the ranges it asks for, round by round.
ap::gguf::File read_in_parts(const std::string& bytes) {
  ap::PartialSource part(bytes.size());
  for (int round = 0;; ++round) {
    try {
      return ap::gguf::read_file(part, "fuzz.gguf");
    } catch (const ap::NeedBytes& need) {
      if (round > 100000) std::abort();
      for (const ap::ByteRange& r : need.ranges) {
        if (r.first >= bytes.size() || r.second > bytes.size() - r.first) std::abort();  // asked past the end
        part.add(r.first, bytes.substr(static_cast<size_t>(r.first), static_cast<size_t>(r.second)));
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const ap::StringSource whole(bytes);
  std::string error;
  ap::gguf::File f;
  try {
    f = ap::gguf::read_file(whole, "fuzz.gguf");
  } catch (const ap::InputError& e) {
    if (std::string(e.what()).rfind("fuzz.gguf: ", 0) != 0 || e.field.empty()) std::abort();
    error = e.what();
  }
  try {
    const ap::gguf::File g = read_in_parts(bytes);
    if (!error.empty() || g.tensors.size() != f.tensors.size() || g.metadata.size() != f.metadata.size()) std::abort();
  } catch (const ap::InputError& e) {
    if (e.what() != error) std::abort();
  }
  if (!error.empty()) return 0;
  for (const ap::gguf::TensorInfo& t : f.tensors) {
    if (f.data_start + t.offset + t.bytes > bytes.size()) std::abort();
    if (!ap::gguf::runnable(t) || t.values() > 4096) continue;
    const ap::quant::Type type = ap::quant::type_info(t.type)->type;
    const int K = static_cast<int>(t.dims.empty() ? 1 : t.dims[0]);
    const int N = static_cast<int>(t.values() / static_cast<uint64_t>(K));
    std::vector<float> w((t.bytes + 3) / 4), x(static_cast<size_t>(K), 1.0f), y(static_cast<size_t>(N));
    std::copy(bytes.begin() + static_cast<long>(f.data_start + t.offset),
              bytes.begin() + static_cast<long>(f.data_start + t.offset + t.bytes), reinterpret_cast<char*>(w.data()));
    ap::quant::matmul_ref(y.data(), x.data(), w.data(), type, 1, N, K);
    ap::quant::matmul(y.data(), x.data(), w.data(), type, 1, N, K);
  }
  for (auto read : {+[](const ap::gguf::File& g) { ap::gguf::read_model_config(g, "fuzz.gguf"); },
                    +[](const ap::gguf::File& g) { ap::gguf::read_tokenizer(g, "fuzz.gguf"); },
                    +[](const ap::gguf::File& g) { ap::load_gguf_tokenizer(g, "fuzz.gguf"); }}) {
    try {
      read(f);
    } catch (const ap::InputError& e) {
      if (std::string(e.what()).rfind("fuzz.gguf: ", 0) != 0 || e.field.empty()) std::abort();
    }
  }
  try {
    const ap::LlamaWeights w = ap::read_gguf_weights(whole, f, "fuzz.gguf");
    for (const ap::LlamaTensor& t : w.tensors) {
      const uint64_t k = t.shape.size() == 2 ? t.shape[1] : t.shape[0], rows = t.shape.size() == 2 ? t.shape[0] : 1;
      if (ap::quant::row_bytes(t.type, k) * rows != t.bytes) std::abort();
      bool inside = t.data >= bytes.data() && t.data + t.bytes <= bytes.data() + bytes.size();
      for (const std::string& o : w.owned) inside = inside || (t.data == o.data() && t.bytes == o.size());
      if (!inside) std::abort();
    }
  } catch (const ap::InputError& e) {
    if (std::string(e.what()).rfind("fuzz.gguf: ", 0) != 0 || e.field.empty()) std::abort();
  }
  return 0;
}
