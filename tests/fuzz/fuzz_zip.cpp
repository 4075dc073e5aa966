// fuzz_zip.cpp — libFuzzer target for the zip reader and nanoGPT's import (formats/zip.h,
// formats/import.h): any bytes must give an archive (each entry inside the file, its CRC checked when
// read) and a model, or throw InputError naming the file — never crash, hang, leak, allocate
// beyond the file's size, or throw anything else. A model that imports must be one the checkpoint
// writer takes once it has a vocabulary.
// Seed corpus: tests/fuzz/corpus/zip (a tiny nanoGPT ckpt.pt written by torch.save). Run with
// -max_len=16384.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "api/checkpoint.h"
#include "formats/import.h"
#include "formats/zip.h"
#include "core/attention/attention.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const ap::zip::Archive a = ap::zip::read_archive(bytes, "ckpt.pt");
    for (const ap::zip::Entry& e : a.entries) {
      if (e.offset > bytes.size() || e.size > bytes.size() - e.offset) std::abort();
      try {
        ap::zip::entry_data(bytes, e, "ckpt.pt");
      } catch (const ap::InputError&) {
      }
    }
  } catch (const ap::InputError& e) {
    if (std::string(e.what()).empty() || e.field != "ckpt.pt") std::abort();
  }
  try {
    ap::NanoGptImport im = ap::import_nanogpt(bytes, "ckpt.pt");
    if (static_cast<int64_t>(im.state.params.size()) != im.state.model.num_parameters()) std::abort();
    if (im.state.model.vocab_size <= 8192) {
      for (int i = 0; i < im.state.model.vocab_size; ++i) im.state.vocab.push_back(static_cast<char32_t>(0x4E00 + i));
      ap::load_checkpoint(ap::save_checkpoint(im.state));
    }
  } catch (const ap::InputError& e) {
    if (std::string(e.what()).empty() || e.field.empty()) std::abort();
  }
  return 0;
}
