// zip.cpp — the zip reader (zip.h): PKWARE's APPNOTE, the parts torch.save's archives use.
#include "formats/zip.h"

#include <cstring>

#include "core/base/input_error.h"

namespace ap::zip {

namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50, kLocator64Sig = 0x07064b50;
constexpr uint64_t kEndSize = 22, kCentralSize = 46, kLocalSize = 30, kLocator64Size = 20, kEnd64Size = 56;

std::string num(uint64_t v) { return std::to_string(v); }

[[noreturn]] void fail(const std::string& what, const std::string& message) {
  throw InputError(what + ": " + message, what);
}

uint64_t le(const ByteSource& b, uint64_t at, int n) {
  const char* p = b.read(at, static_cast<uint64_t>(n));
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// The end-of-central-directory record: the last signature within the last 22 + 65,535 bytes.
uint64_t find_end(const ByteSource& b, const std::string& what) {
  if (b.size() < kEndSize)
    fail(what, "the file has " + num(b.size()) + " bytes, too few for a zip archive (at least 22)");
  const uint64_t lowest = b.size() > kEndSize + 65535 ? b.size() - kEndSize - 65535 : 0;
  b.read(lowest, b.size() - lowest);  // (a partial source: the whole tail in one round)
  for (uint64_t at = b.size() - kEndSize + 1; at-- > lowest;)
    if (le(b, at, 4) == kEndSig && at + kEndSize + le(b, at + 20, 2) == b.size()) return at;
  fail(what, "no end-of-central-directory record in the last bytes of the file: not a zip archive, or a truncated one "
             "(a download cut short?)");
}

// Zip64's fields in an extra block, in APPNOTE's order, for those the header left at all ones.
void read_zip64_extra(const ByteSource& b, uint64_t at, uint64_t len, Entry& e, uint64_t& csize, bool need_u,
                      bool need_c, bool need_o, const std::string& what) {
  const uint64_t end = at + len;
  while (at + 4 <= end) {
    const uint64_t id = le(b, at, 2), n = le(b, at + 2, 2);
    if (at + 4 + n > end) fail(what, "entry " + e.name + ": an extra field runs past its block");
    if (id == 1) {
      uint64_t p = at + 4;
      auto take = [&](uint64_t& out) {
        if (p + 8 > at + 4 + n) fail(what, "entry " + e.name + ": its zip64 extra field is too short");
        out = le(b, p, 8);
        p += 8;
      };
      if (need_u) take(e.size);
      if (need_c) take(csize);
      if (need_o) take(e.header);
      return;
    }
    at += 4 + n;
  }
  fail(what, "entry " + e.name + " has sizes of 0xFFFFFFFF but no zip64 extra field");
}

}  // namespace

const Entry* Archive::find(const std::string& name) const {
  for (const Entry& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

bool looks_like_zip(const std::string& bytes) { return looks_like_zip(StringSource(bytes)); }
bool looks_like_zip(const ByteSource& bytes) { return bytes.size() >= 4 && le(bytes, 0, 4) == kLocalSig; }

Archive read_archive(const std::string& bytes, const std::string& what) { return read_archive(StringSource(bytes), what); }

Archive read_archive(const ByteSource& b, const std::string& what) {
  const uint64_t end = find_end(b, what);
  uint64_t count = le(b, end + 10, 2), dir_size = le(b, end + 12, 4), dir_at = le(b, end + 16, 4);
  if (le(b, end + 4, 2) != 0 || le(b, end + 6, 2) != 0)
    fail(what, "a multi-disk (split) zip archive, which this reader does not take");
  if (count == 0xFFFF || dir_size == 0xFFFFFFFF || dir_at == 0xFFFFFFFF) {  // zip64
    if (end < kLocator64Size || le(b, end - kLocator64Size, 4) != kLocator64Sig)
      fail(what, "the end record asks for zip64 but there is no zip64 locator before byte " + num(end));
    const uint64_t at = le(b, end - kLocator64Size + 8, 8);
    if (at > end - kLocator64Size || end - kLocator64Size - at < kEnd64Size || le(b, at, 4) != kEnd64Sig)
      fail(what, "the zip64 locator points at byte " + num(at) + ", where there is no zip64 end record");
    count = le(b, at + 32, 8);
    dir_size = le(b, at + 40, 8);
    dir_at = le(b, at + 48, 8);
  }
  if (dir_at > end || dir_size > end - dir_at)
    fail(what, "the central directory (" + num(dir_size) + " bytes at byte " + num(dir_at) +
                   ") runs past its end record at byte " + num(end) + ": a truncated or damaged file");
  if (count > dir_size / kCentralSize)
    fail(what, "the end record claims " + num(count) + " entries, more than a directory of " + num(dir_size) +
                   " bytes can hold");
  Archive a;
  a.entries.reserve(static_cast<size_t>(count));
  uint64_t at = dir_at;
  const uint64_t dir_end = dir_at + dir_size;
  for (uint64_t i = 0; i < count; ++i) {
    if (dir_end - at < kCentralSize || le(b, at, 4) != kCentralSig)
      fail(what, "entry " + num(i) + " of the central directory (byte " + num(at) + ") is missing or damaged");
    const uint64_t flags = le(b, at + 8, 2), method = le(b, at + 10, 2);
    const uint64_t name_len = le(b, at + 28, 2), extra_len = le(b, at + 30, 2), comment_len = le(b, at + 32, 2);
    if (dir_end - at - kCentralSize < name_len + extra_len + comment_len)
      fail(what, "entry " + num(i) + " of the central directory (byte " + num(at) + ") runs past the directory");
    Entry e;
    e.name.assign(b.read(at + kCentralSize, name_len), static_cast<size_t>(name_len));
    e.crc = static_cast<uint32_t>(le(b, at + 16, 4));
    uint64_t csize = le(b, at + 20, 4);
    e.size = le(b, at + 24, 4);
    e.header = le(b, at + 42, 4);
    if (csize == 0xFFFFFFFF || e.size == 0xFFFFFFFF || e.header == 0xFFFFFFFF)
      read_zip64_extra(b, at + kCentralSize + name_len, extra_len, e, csize, e.size == 0xFFFFFFFF,
                       csize == 0xFFFFFFFF, e.header == 0xFFFFFFFF, what);
    if (flags & 1) fail(what, "entry " + e.name + " is encrypted");
    if (method != 0)
      fail(what, "entry " + e.name + " is compressed (method " + num(method) +
                     "): only stored entries are read, as torch.save writes them");
    if (csize != e.size)
      fail(what, "entry " + e.name + " is stored but its sizes differ (" + num(csize) + " and " + num(e.size) + ")");
    if (e.header > b.size() || b.size() - e.header < kLocalSize + name_len)
      fail(what, "entry " + e.name + ": no local header at byte " + num(e.header) + " (the file has " +
                     num(b.size()) + " bytes)");
    a.entries.push_back(std::move(e));
    at += kCentralSize + name_len + extra_len + comment_len;
  }
  // The local headers (fixed part and name), all in one round for a partial source, then the data:
  // both inside the file.
  std::vector<ByteRange> headers;
  for (const Entry& e : a.entries) headers.emplace_back(e.header, kLocalSize + e.name.size());
  b.want(headers);
  for (Entry& e : a.entries) {
    if (le(b, e.header, 4) != kLocalSig)
      fail(what, "entry " + e.name + ": no local header at byte " + num(e.header) + " (the file has " +
                     num(b.size()) + " bytes)");
    const uint64_t lname = le(b, e.header + 26, 2), lextra = le(b, e.header + 28, 2);
    if (lname != e.name.size() || std::memcmp(b.read(e.header + kLocalSize, lname), e.name.data(), lname) != 0)
      fail(what, "entry " + e.name + ": its local header at byte " + num(e.header) + " names another entry");
    e.offset = e.header + kLocalSize + lname + lextra;
    if (e.offset > b.size() || e.size > b.size() - e.offset)
      fail(what, "entry " + e.name + " claims " + num(e.size) + " bytes from byte " + num(e.offset) +
                     ", past the end of the file (" + num(b.size()) + " bytes): a truncated file or absurd sizes");
  }
  return a;
}

uint32_t crc32(const char* p, uint64_t n) { return crc32_update(0, p, n); }

// Slicing by 8 (eight tables of 256: eight bytes per step), so that checking a storage record of
// hundreds of MB costs little beside reading it.
uint32_t crc32_update(uint32_t crc, const char* p, uint64_t n) {
  static uint32_t table[8][256];
  static const bool made = [] {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int t = 1; t < 8; ++t) table[t][i] = table[0][table[t - 1][i] & 0xFF] ^ (table[t - 1][i] >> 8);
    return true;
  }();
  (void)made;
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  uint32_t c = crc ^ 0xFFFFFFFFu;
  for (; n >= 8; n -= 8, u += 8) {
    const uint32_t lo = c ^ (uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 | uint32_t(u[3]) << 24);
    const uint32_t hi = uint32_t(u[4]) | uint32_t(u[5]) << 8 | uint32_t(u[6]) << 16 | uint32_t(u[7]) << 24;
    c = table[7][lo & 0xFF] ^ table[6][(lo >> 8) & 0xFF] ^ table[5][(lo >> 16) & 0xFF] ^ table[4][lo >> 24] ^
        table[3][hi & 0xFF] ^ table[2][(hi >> 8) & 0xFF] ^ table[1][(hi >> 16) & 0xFF] ^ table[0][hi >> 24];
  }
  for (; n > 0; --n, ++u) c = table[0][(c ^ *u) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

const char* entry_data(const std::string& bytes, const Entry& e, const std::string& what) {
  return entry_data(StringSource(bytes), e, what);
}

const char* entry_data(const ByteSource& bytes, const Entry& e, const std::string& what) {
  const char* p = bytes.read(e.offset, e.size);
  const uint32_t crc = crc32(p, e.size);
  if (crc != e.crc)
    fail(what, "entry " + e.name + " (" + num(e.size) + " bytes at byte " + num(e.offset) +
                   ") does not match its CRC-32: the file is damaged");
  return p;
}

}  // namespace ap::zip
