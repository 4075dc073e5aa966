// hf_folder_dump.cpp — a test tool for tests/hf_folder_test.py: a Hugging Face folder as the core
// reads it (formats/hf_folder.h, hf_config.h), and the 16-bit float conversions (core/base/half_float.h).
//
//   hf_folder_dump DIR        prints JSON: the config, its RoPE inverse frequencies, and the
//                             plan's tensors with their values as float32; a refused folder
//                             prints the message on stderr and exits 1
//   hf_folder_dump --convert IN OUT
//                             IN: float32s (little-endian); OUT: for each of the 65,536 16-bit
//                             patterns F16→float32 bits then BF16→float32 bits (u32 each), then
//                             for each float of IN its F16 and BF16 bits (u16 each)
// Exit status: 0 done, 1 refused, 2 usage.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>

#include "core/base/half_float.h"
#include "core/base/input_error.h"
#include "formats/hf_folder.h"
#include "formats/json.h"
#include "hf_config_json.h"

namespace {

bool read(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

int convert(const char* in_path, const char* out_path) {
  std::string in, out;
  if (!read(in_path, in)) return 2;
  auto put = [&](uint32_t v, int bytes) {
    for (int k = 0; k < bytes; ++k) out.push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
  };
  for (uint32_t h = 0; h < 65536; ++h) {
    put(ap::float_bits(ap::f16_to_float(static_cast<uint16_t>(h))), 4);
    put(ap::float_bits(ap::bf16_to_float(static_cast<uint16_t>(h))), 4);
  }
  for (size_t i = 0; i + 4 <= in.size(); i += 4) {
    const auto* p = reinterpret_cast<const unsigned char*>(in.data() + i);
    const float f = ap::bits_float(p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24));
    put(ap::float_to_f16(f), 2);
    put(ap::float_to_bf16(f), 2);
  }
  std::ofstream(out_path, std::ios::binary) << out;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--convert") return convert(argv[2], argv[3]);
  if (argc != 2) {
    std::cerr << "usage: hf_folder_dump DIR | hf_folder_dump --convert IN OUT\n";
    return 2;
  }
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(argv[1])) {
    if (!e.is_regular_file() || !read(e.path().string(), files[e.path().filename().string()])) return 2;
  }
  try {
    const ap::HfFolder f = ap::read_hf_folder(files);
    const ap::HfConfig& c = f.config;
    using ap::json::Value;
    Value cfg = hf_config_json(c);
    Value tensors = Value::array();
    for (const ap::HfTensor& t : f.tensors) {
      Value e = Value::object();
      e.set("name", t.name);
      e.set("dtype", t.dtype);
      e.set("file", t.file);
      Value shape = Value::array();
      uint64_t n = 1;
      for (uint64_t d : t.shape) {
        shape.push(static_cast<long long>(d));
        n *= d;
      }
      e.set("shape", shape);
      e.set("offset", static_cast<long long>(t.offset));
      e.set("bytes", static_cast<long long>(t.bytes));
      // The values, read again through the container's reader from the plan's file and offset.
      const std::string& bytes = files.at(t.file);
      ap::safetensors::Header h;
      h.data_start = 0;
      ap::safetensors::TensorInfo info{t.name, t.dtype, t.shape, t.offset, t.offset + t.bytes};
      std::vector<float> vals(n);
      ap::safetensors::read_as_f32(ap::StringSource(bytes), h, info, vals.data());
      Value v = Value::array();
      for (float x : vals) v.push(Value::f32(x));
      e.set("values", v);
      tensors.push(e);
    }
    Value root = Value::object();
    root.set("config", cfg);
    root.set("tensors", tensors);
    std::cout << root.dump() << "\n";
  } catch (const ap::InputError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
