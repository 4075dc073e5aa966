// gguf_probe.cpp — a test tool for tests/gguf_test.py: reads a GGUF file with formats/gguf.h and, for
// each tensor of a type we run, writes what the core computes from it as raw little-endian float32:
//   OUT/<name>.deq   the tensor dequantized (quant::dequantize_row, row by row)
//   OUT/<name>.ref   y = x·Wᵀ by quant::matmul_ref, x the first M·K floats of X.f32 (M = 3)
//   OUT/<name>.fast.<isa>  the same by the fast tier on each instruction set this build and CPU
//                          run (quant::fast_current().matmul), and
//   OUT/<name>.deq.<isa>   its dequantization (fast_current().dequantize: the prompt's products')
// W is the tensor as N rows of K = ne[0] values. Usage: gguf_probe FILE.gguf X.f32 OUT; exit 1 with
// the reader's message on a file it refuses.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "core/base/input_error.h"
#include "core/kernels/kernels_fast.h"
#include "core/kernels/quant.h"
#include "formats/file_io.h"
#include "formats/gguf.h"

namespace {

void write_floats(const std::string& path, const std::vector<float>& v) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(v.data(), sizeof(float), v.size(), f) != v.size()) {
    std::cerr << "gguf_probe: cannot write " << path << "\n";
    std::exit(2);
  }
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: gguf_probe FILE.gguf X.f32 OUT\n";
    return 2;
  }
  namespace Q = ap::quant;
  try {
    const std::string bytes = ap::read_file(argv[1], uint64_t(1) << 30, "a GGUF file");
    const ap::StringSource src(bytes);
    const ap::gguf::File f = ap::gguf::read_file(src, argv[1]);
    const std::string xs = ap::read_file(argv[2], uint64_t(1) << 30, "X");
    std::vector<float> x(xs.size() / 4);
    std::memcpy(x.data(), xs.data(), x.size() * 4);
    const int M = 3;
    for (const ap::gguf::TensorInfo& t : f.tensors) {
      if (!ap::gguf::runnable(t)) continue;
      const Q::Type type = Q::type_info(t.type)->type;
      const int K = static_cast<int>(t.dims[0]);
      const int N = static_cast<int>(t.values() / t.dims[0]);
      if (static_cast<size_t>(M) * static_cast<size_t>(K) > x.size()) {
        std::cerr << "gguf_probe: X.f32 is too short for tensor " << t.name << "\n";
        return 2;
      }
      std::vector<float> w((t.bytes + 3) / 4);  // 4-byte aligned copy of the tensor's bytes
      std::memcpy(w.data(), bytes.data() + f.data_start + t.offset, t.bytes);
      std::vector<float> deq(t.values()), ref(static_cast<size_t>(M) * static_cast<size_t>(N)), fast(ref.size());
      const uint64_t rb = Q::row_bytes(type, static_cast<uint64_t>(K));
      for (int n = 0; n < N; ++n)
        Q::dequantize_row(type, reinterpret_cast<const char*>(w.data()) + rb * static_cast<uint64_t>(n),
                          deq.data() + static_cast<size_t>(n) * static_cast<size_t>(K), K);
      Q::matmul_ref(ref.data(), x.data(), w.data(), type, M, N, K);
      const std::string base = std::string(argv[3]) + "/" + t.name;
      write_floats(base + ".deq", deq);
      write_floats(base + ".ref", ref);
      const std::string before = ap::kernels::fast::isa_name();
      for (const char* const* isa = ap::kernels::fast::available_isas(); *isa; ++isa) {
        ap::kernels::fast::set_isa(*isa);
        Q::fast_current().matmul(fast.data(), x.data(), w.data(), type, M, N, K);
        for (int n = 0; n < N; ++n)
          Q::fast_current().dequantize(type, reinterpret_cast<const char*>(w.data()) + rb * static_cast<uint64_t>(n),
                                       deq.data() + static_cast<size_t>(n) * static_cast<size_t>(K), K);
        write_floats(base + ".fast." + *isa, fast);
        write_floats(base + ".deq." + *isa, deq);
      }
      ap::kernels::fast::set_isa(before.c_str());
    }
  } catch (const ap::InputError& e) {
    std::cerr << "gguf_probe: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
