// byte_source.h — a model file's bytes as the readers of its structure see them (zip.h,
// safetensors.h, import.h): all of them (a file read whole, natively), or only the parts read so
// far (the page's opening, which reads the file in slices and never holds it whole).
//
// A reader asks for the bytes it needs with read(at, n); a partial source that lacks them throws
// NeedBytes (not an InputError: the caller reads those bytes and runs the reader again, which is
// cheap: only headers, directories and pickles are read this way, never weights). want() asks for
// several ranges at once, so that one round of reading fetches them all (the zip's local headers).
// Callers check that [at, at + n) lies within size() before they read: a source never bounds-checks
// for them beyond that.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ap {

using ByteRange = std::pair<uint64_t, uint64_t>;  // (at, n)

// Thrown by a partial source for the ranges it lacks.
struct NeedBytes {
  std::vector<ByteRange> ranges;
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // n bytes from byte at; at + n ≤ size().
  virtual const char* read(uint64_t at, uint64_t n) const = 0;
  // Throws NeedBytes for every range it lacks (a whole source has them all).
  virtual void want(const std::vector<ByteRange>& ranges) const { (void)ranges; }
};

// A file read whole.
class StringSource : public ByteSource {
 public:
  explicit StringSource(const std::string& bytes) : b_(bytes) {}
  uint64_t size() const override { return b_.size(); }
  const char* read(uint64_t at, uint64_t) const override { return b_.data() + at; }

 private:
  const std::string& b_;
};

// The parts of a file of `size` bytes read so far (add()), each a range of its bytes.
class PartialSource : public ByteSource {
 public:
  explicit PartialSource(uint64_t size) : size_(size) {}
  uint64_t size() const override { return size_; }
  const char* read(uint64_t at, uint64_t n) const override {
    const char* p = find(at, n);
    if (!p) throw NeedBytes{{{at, n}}};
    return p;
  }
  void want(const std::vector<ByteRange>& ranges) const override {
    NeedBytes need;
    for (const ByteRange& r : ranges)
      if (!find(r.first, r.second)) need.ranges.push_back(r);
    if (!need.ranges.empty()) throw need;
  }
  // Bytes from byte at (clipped to the file).
  void add(uint64_t at, std::string bytes) {
    if (at >= size_) return;
    if (bytes.size() > size_ - at) bytes.resize(static_cast<size_t>(size_ - at));
    held_ += bytes.size();
    parts_[at] = std::move(bytes);
  }
  uint64_t held() const { return held_; }
  // The part added at byte at, moved out (empty if none).
  std::string take(uint64_t at) {
    auto it = parts_.find(at);
    if (it == parts_.end()) return std::string();
    std::string out = std::move(it->second);
    held_ -= out.size();
    parts_.erase(it);
    return out;
  }  // bytes kept, for the memory figures

 private:
  const char* find(uint64_t at, uint64_t n) const {
    auto it = parts_.upper_bound(at);
    if (it == parts_.begin()) return nullptr;
    --it;  // the last part starting at or before `at`
    if (at - it->first + n > it->second.size()) return nullptr;
    return it->second.data() + (at - it->first);
  }
  uint64_t size_;
  uint64_t held_ = 0;
  std::map<uint64_t, std::string> parts_;
};

}  // namespace ap
