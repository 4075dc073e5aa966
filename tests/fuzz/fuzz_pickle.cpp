// fuzz_pickle.cpp — libFuzzer target for the restricted unpickler (formats/pickle.h): any bytes, read
// as a torch data.pkl and as a meta.pkl, must give a value or throw InputError naming the file —
// never crash, hang, leak, recurse without bound, or throw anything else. Every reference in the
// result must be an object of the arena.
// Seed corpus: tests/fuzz/corpus/pickle (a torch.save data.pkl and a nanoGPT meta.pkl, written by
// PyTorch for tests/import_torch_test.py's shapes). Run with -max_len=4096.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "formats/pickle.h"
#include "core/attention/attention.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (bool torch : {true, false}) {
    try {
      const ap::pickle::Pickle p = ap::pickle::load(reinterpret_cast<const char*>(data), size, torch, "data.pkl");
      if (p.root >= p.objects.size()) std::abort();
      for (const ap::pickle::Object& o : p.objects) {
        for (size_t i : o.items)
          if (i >= p.objects.size()) std::abort();
        if (o.kind == ap::pickle::Kind::tensor && p.at(o.storage).kind != ap::pickle::Kind::storage) std::abort();
      }
    } catch (const ap::InputError& e) {
      if (std::string(e.what()).empty() || e.field != "data.pkl") std::abort();
    }
  }
  return 0;
}
