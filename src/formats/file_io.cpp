// file_io.cpp — the atomic write and the bounded read of file_io.h (POSIX).
#include "formats/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base/input_error.h"

namespace ap {

namespace {

[[noreturn]] void fail(const std::string& message) { throw InputError(message, "path"); }

std::string sys_error(const std::string& what, const std::string& path, int err) {
  return what + " " + path + ": " + std::strerror(err);
}

}  // namespace

std::string parent_dir(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// O_NONBLOCK: opening a FIFO or a device never waits for a writer; it is then refused as not a
// regular file. A regular file reads as without it.
constexpr int kReadFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool has_magic(const std::string& path, const std::string& magic) {
  if (!is_regular_file(path)) return false;
  const int fd = ::open(path.c_str(), kReadFlags);
  if (fd < 0) return false;
  std::string head(magic.size(), '\0');
  const ssize_t n = ::pread(fd, &head[0], head.size(), 0);
  ::close(fd);
  return n == static_cast<ssize_t>(magic.size()) && head == magic;
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  write_file_atomic(path, [&](const WriteBytes& write) { write(bytes.data(), bytes.size()); });
}

void write_file_atomic(const std::string& path, const std::function<void(const WriteBytes& write)>& produce) {
  if (path.empty()) fail("no file name given");
  // The temporary file sits beside the target, so the rename stays on one file system (atomic).
  static unsigned counter = 0;
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = path + ".tmp-" + std::to_string(static_cast<long>(getpid())) + "-" + std::to_string(counter++);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) fail(sys_error("cannot write", temp, errno));
  }
  if (fd < 0) fail(sys_error("cannot write", temp, EEXIST));
  auto abandon = [&](const std::string& what, int err) {
    if (fd >= 0) ::close(fd);
    fd = -1;
    ::unlink(temp.c_str());
    fail(sys_error(what, temp, err) + " (" + path + " is unchanged)");
  };
  // A file being replaced keeps its permissions (a checkpoint made private stays private).
  struct stat old;
  if (::stat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode) && ::fchmod(fd, old.st_mode & 07777) != 0)
    abandon("cannot set the permissions of", errno);
  const WriteBytes write = [&](const char* data, size_t n) {
    size_t done = 0;
    while (done < n) {
      const ssize_t w = ::write(fd, data + done, n - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        abandon("cannot write", errno);
      }
      done += static_cast<size_t>(w);
    }
  };
  try {
    produce(write);
  } catch (...) {
    if (fd >= 0) ::close(fd);  // (abandon's own error: closed already)
    fd = -1;
    ::unlink(temp.c_str());
    throw;
  }
  if (::fsync(fd) != 0) abandon("cannot flush", errno);
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) abandon("cannot close", errno);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(sys_error("cannot replace", path, err) + " (it is unchanged)");
  }
  // Make the rename itself durable: flush the directory's entry (best effort).
  const int dfd = ::open(parent_dir(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::string read_file(const std::string& path, uint64_t max_bytes, const std::string& what) {
  const int fd = ::open(path.c_str(), kReadFlags);
  if (fd < 0) fail(sys_error("cannot open", path, errno));
  auto give_up = [&](const std::string& message) {
    ::close(fd);
    fail(message);
  };
  struct stat st;
  if (::fstat(fd, &st) != 0) give_up(sys_error("cannot read", path, errno));
  if (!S_ISREG(st.st_mode)) give_up("cannot read " + path + ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    give_up(path + " is " + std::to_string(static_cast<uint64_t>(st.st_size)) + " bytes, more than the limit of " +
            std::to_string(max_bytes) + " for " + what);
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t r = ::read(fd, &out[done], out.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) give_up(sys_error("cannot read", path, errno));
    if (r == 0) break;  // the file shrank while reading: the caller's parser reports the truncation
    done += static_cast<size_t>(r);
  }
  out.resize(done);
  ::close(fd);
  return out;
}

FileSource::FileSource(const std::string& path, uint64_t max_bytes, const std::string& what) : path_(path) {
  fd_ = ::open(path.c_str(), kReadFlags);
  if (fd_ < 0) fail(sys_error("cannot open", path, errno));
  struct stat st;
  std::string refused;
  if (::fstat(fd_, &st) != 0) refused = sys_error("cannot read", path, errno);
  else if (!S_ISREG(st.st_mode)) refused = "cannot read " + path + ": not a regular file";
  else if (static_cast<uint64_t>(st.st_size) > max_bytes)
    refused = path + " is " + std::to_string(static_cast<uint64_t>(st.st_size)) + " bytes, more than the limit of " +
              std::to_string(max_bytes) + " for " + what;
  if (!refused.empty()) {
    ::close(fd_);
    fail(refused);
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

void FileSource::read_into(char* out, uint64_t at, uint64_t n) const {
  uint64_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd_, out + done, static_cast<size_t>(n - done), static_cast<off_t>(at + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail(sys_error("cannot read", path_, errno));
    if (r == 0)
      fail("cannot read " + path_ + ": it ended at byte " + std::to_string(at + done) + " while it was read (it was " +
           std::to_string(size_) + " bytes: did it change?)");
    done += static_cast<uint64_t>(r);
  }
}

const char* FileSource::read(uint64_t at, uint64_t n) const {
  constexpr uint64_t kKeep = uint64_t(1) << 20;
  if (n > kKeep) {
    large_.resize(static_cast<size_t>(n));
    read_into(large_.data(), at, n);
    return large_.data();
  }
  auto it = kept_.upper_bound(at);
  if (it != kept_.begin()) {  // the parts that start at or before `at`, the nearest first
    for (auto j = std::prev(it);; --j) {
      for (const auto& part : j->second)
        if (at - j->first + n <= part->size()) return part->data() + (at - j->first);
      if (j == kept_.begin() || at - j->first > kKeep) break;
    }
  }
  auto bytes = std::make_unique<std::string>(static_cast<size_t>(n), '\0');
  read_into(bytes->data(), at, n);
  const char* p = bytes->data();
  kept_[at].push_back(std::move(bytes));
  return p;
}

}  // namespace ap
