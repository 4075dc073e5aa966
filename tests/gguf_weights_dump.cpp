// gguf_weights_dump.cpp — a test tool for tests/gguf_weights_test.py: a GGUF file as the model loader
// gets it (formats/gguf_weights.h: read_gguf_weights), the tensors dequantized by the core (quant.h).
//
//   gguf_weights_dump FILE.gguf OUT.bin
//     prints JSON: the HfConfig, its RoPE inverse frequencies, and each tensor's transformers name,
//     shape, type and its first value's index in OUT.bin; OUT.bin holds every tensor's values in
//     Hugging Face order as little-endian float32 (quant::dequantize_row, row by row). A refused file
//     prints the message on stderr and exits 1. Exit 2: usage or an unreadable file.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "core/base/input_error.h"
#include "core/kernels/quant.h"
#include "formats/file_io.h"
#include "formats/gguf.h"
#include "formats/gguf_weights.h"
#include "formats/json.h"
#include "hf_config_json.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: gguf_weights_dump FILE.gguf OUT.bin\n";
    return 2;
  }
  std::string bytes;
  try {
    bytes = ap::read_file(argv[1], uint64_t(1) << 30, "a GGUF file");
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  try {
    const ap::StringSource src(bytes);
    const ap::gguf::File f = ap::gguf::read_file(src, argv[1]);
    const ap::LlamaWeights w = ap::read_gguf_weights(src, f, argv[1]);
    const ap::HfConfig& c = w.config;
    using ap::json::Value;
    Value cfg = hf_config_json(c);
    Value tensors = Value::array();
    std::vector<float> all;
    for (const ap::LlamaTensor& t : w.tensors) {
      Value e = Value::object();
      e.set("name", t.name);
      e.set("type", ap::quant::type_info(t.type).name);
      Value shape = Value::array();
      for (uint64_t d : t.shape) shape.push(static_cast<long long>(d));
      e.set("shape", shape);
      e.set("at", static_cast<long long>(all.size()));
      e.set("gguf_name", ap::gguf_tensor_name(t.name));
      const uint64_t k = t.shape.size() == 2 ? t.shape[1] : t.shape[0], rows = t.shape.size() == 2 ? t.shape[0] : 1;
      const uint64_t rb = ap::quant::row_bytes(t.type, k);
      if (rb * rows != t.bytes) {
        std::cerr << "gguf_weights_dump: " << t.name << " holds " << t.bytes << " bytes, not " << rb * rows << "\n";
        return 2;
      }
      std::vector<float> row(k);
      for (uint64_t r = 0; r < rows; ++r) {
        ap::quant::dequantize_row(t.type, t.data + r * rb, row.data(), static_cast<int64_t>(k));
        all.insert(all.end(), row.begin(), row.end());
      }
      tensors.push(e);
    }
    std::FILE* out = std::fopen(argv[2], "wb");
    if (!out || std::fwrite(all.data(), 4, all.size(), out) != all.size()) return 2;
    std::fclose(out);
    Value root = Value::object();
    root.set("config", cfg);
    root.set("tensors", tensors);
    root.set("owned", static_cast<long long>(w.owned.size()));
    std::cout << root.dump() << "\n";
  } catch (const ap::InputError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
