// file_io.h — whole files, natively (POSIX; not built for wasm, which has no file system): an
// atomic write and a bounded read. Used for checkpoints (checkpoint.h) and any file that must
// never be left half-written.
//
//   write_file_atomic(path, bytes)  a temporary file in the same directory ("<path>.tmp-<pid>-<n>"),
//                                   written, fsync'd, then renamed over the target (and the
//                                   directory fsync'd, best effort), so an interrupted write leaves
//                                   the old file whole; on failure the temporary file is removed.
//                                   A file being replaced keeps its permissions.
//   read_file(path, max_bytes, what)  a regular file, whole; `what` names it in the message of one
//                                   too large ("… more than the limit of N for a checkpoint").
//   parent_dir(path)                the directory a path's file is in: "." for "x", "/" for "/x".
//   is_regular_file(path), is_directory(path)  what stat says, without opening it (false if absent).
//   has_magic(path, magic)          a regular file that starts with those bytes: reads them only,
//                                   and opens nothing else (a FIFO or a device would block or stream).
//   FileSource(path, max_bytes, what)  a file as a ByteSource (byte_source.h) read in slices, never
//                                   whole: what a reader asks for is read then (pread). Reads of up
//                                   to 1 MiB (headers, directories, pickles) are kept for the
//                                   source's life; a larger one (a tensor's slice, a large header)
//                                   only until the next larger one: readers of weights take them
//                                   in slices and use each before the next.
// Errors: InputError with field "path", the message naming the path and the system's reason.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <map>
#include <memory>
#include <vector>

#include "formats/byte_source.h"

namespace ap {

std::string parent_dir(const std::string& path);
bool is_regular_file(const std::string& path);
bool is_directory(const std::string& path);
bool has_magic(const std::string& path, const std::string& magic);
void write_file_atomic(const std::string& path, const std::string& bytes);
// The same, its bytes given piece by piece: produce(write) calls write(data, n) for each piece in
// order, so the file is never held whole. An exception from produce removes the temporary file (the
// target unchanged) and goes on up.
using WriteBytes = std::function<void(const char* data, size_t n)>;
void write_file_atomic(const std::string& path, const std::function<void(const WriteBytes& write)>& produce);
std::string read_file(const std::string& path, uint64_t max_bytes, const std::string& what);

class FileSource : public ByteSource {
 public:
  FileSource(const std::string& path, uint64_t max_bytes, const std::string& what);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  uint64_t size() const override { return size_; }
  const char* read(uint64_t at, uint64_t n) const override;

 private:
  void read_into(char* out, uint64_t at, uint64_t n) const;
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  // the small reads, by first byte (each kept where it is: a reader may hold a pointer into it)
  mutable std::map<uint64_t, std::vector<std::unique_ptr<std::string>>> kept_;
  mutable std::string large_;  // the last large one
};

}  // namespace ap
