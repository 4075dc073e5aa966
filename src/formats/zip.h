// zip.h — a reader of the zip archives torch.save writes (a nanoGPT ckpt.pt): the central
// directory, and the bytes of an entry, without copying them.
//
// What it reads: stored entries only (method 0, which is what PyTorch writes: its records are
// aligned for mmap, never compressed), with zip64 sizes and offsets, a data descriptor's flag
// (sizes then come from the central directory), and an archive comment. It refuses, naming the
// entry and the byte: a file too short or with no end-of-central-directory record; a directory
// that runs past the end of the file or holds more entries than it has room for; a compressed or
// encrypted entry; an entry whose local header is missing, disagrees with the directory on its
// name, or whose data runs past the end of the file (a truncated download); absurd sizes (more
// than the file holds); and, when an entry is read, a CRC-32 that does not match its bytes.
// Multi-disk archives are refused. Nothing is allocated beyond the directory's entries, each at
// most a name of 64 KiB.
//
// Errors are InputError with field `what` (the file's noun for messages, e.g. "ckpt.pt").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/byte_source.h"

namespace ap::zip {

struct Entry {
  std::string name;
  uint64_t offset = 0;  // of the data in the file
  uint64_t size = 0;
  uint32_t crc = 0;
  uint64_t header = 0;  // of the local header, for messages
};

struct Archive {
  std::vector<Entry> entries;  // in the directory's order
  // The entry of that name, or null.
  const Entry* find(const std::string& name) const;
};

// True if the bytes start like a zip (a local file header's signature).
bool looks_like_zip(const std::string& bytes);
bool looks_like_zip(const ByteSource& bytes);

// The central directory of `bytes`, every entry checked against the file (see above).
Archive read_archive(const std::string& bytes, const std::string& what);
// The same from a partial source: the end records and the directory, then every local header in one
// want() (NeedBytes for what it lacks).
Archive read_archive(const ByteSource& bytes, const std::string& what);

// An entry's bytes (a pointer into `bytes`), its CRC-32 checked.
const char* entry_data(const std::string& bytes, const Entry& e, const std::string& what);
const char* entry_data(const ByteSource& bytes, const Entry& e, const std::string& what);

// CRC-32 (IEEE, zip's) of n bytes.
uint32_t crc32(const char* p, uint64_t n);
// The CRC-32 of bytes so far (crc, 0 to start) followed by n more: for an entry read in slices.
uint32_t crc32_update(uint32_t crc, const char* p, uint64_t n);

}  // namespace ap::zip
