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
// Errors: InputError with field "path", the message naming the path and the system's reason.
#pragma once

#include <cstdint>
#include <string>

namespace ap {

std::string parent_dir(const std::string& path);
void write_file_atomic(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path, uint64_t max_bytes, const std::string& what);

}  // namespace ap
