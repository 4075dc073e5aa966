// zip_writer.h — the tests' writer of the zip archives torch.save makes (formats/zip.h reads them):
// stored entries with their CRCs and the central directory, in bytes, so the import's tests need
// no PyTorch. Limits: no compression (a `method` other than 0 is only written into the headers,
// for the reader to refuse), no zip64, every size under 4 GiB.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "formats/zip.h"

namespace zip_writer {

// v as n little-endian bytes.
inline std::string le(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}

// A zip of (name, data) entries. pad64: as torch.save writes it, each local header carries an extra
// field (id "FB") of the size that starts the data at a multiple of 64; the central directory
// carries none. method: the compression method written in both headers (0, stored).
inline std::string make_zip(const std::vector<std::pair<std::string, std::string>>& entries, bool pad64 = false,
                            int method = 0) {
  std::string out, dir;
  for (const auto& [name, data] : entries) {
    const uint32_t crc = ap::zip::crc32(data.data(), data.size());
    const size_t at = out.size();
    std::string extra;
    if (pad64) {
      const size_t bare = at + 30 + name.size() + 4;  // the data's start with an empty "FB" field
      const size_t fill = (64 - bare % 64) % 64;
      extra = "FB" + le(fill, 2) + std::string(fill, 'Z');
    }
    out += le(0x04034b50, 4) + le(20, 2) + le(0, 2) + le(method, 2) + le(0, 4) + le(crc, 4) + le(data.size(), 4) +
           le(data.size(), 4) + le(name.size(), 2) + le(extra.size(), 2) + name + extra + data;
    dir += le(0x02014b50, 4) + le(20, 2) + le(20, 2) + le(0, 2) + le(method, 2) + le(0, 4) + le(crc, 4) +
           le(data.size(), 4) + le(data.size(), 4) + le(name.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) +
           le(0, 4) + le(at, 4) + name;
  }
  const size_t dir_at = out.size();
  out += dir + le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(entries.size(), 2) + le(entries.size(), 2) +
         le(dir.size(), 4) + le(dir_at, 4) + le(0, 2);
  return out;
}

}  // namespace zip_writer
