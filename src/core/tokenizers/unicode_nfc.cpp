// unicode_nfc.cpp — NFC (see unicode_nfc.h).
#include "core/tokenizers/unicode_nfc.h"

#include <algorithm>
#include <vector>

#include "core/base/utf8.h"
#include "core/tokenizers/bpe.h"

namespace ap {

namespace {

constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

int ccc(char32_t cp) {
  if (cp < 0x300) return 0;
  const NfcClassRange* end = kNfcClasses + kNfcClassesCount;
  const NfcClassRange* it =
      std::upper_bound(kNfcClasses, end, cp, [](char32_t c, const NfcClassRange& r) { return c < r.first; });
  return it != kNfcClasses && cp <= (it - 1)->last ? (it - 1)->ccc : 0;
}

void decompose(char32_t cp, std::vector<char32_t>& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const char32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount) out.push_back(kTBase + s % kTCount);
    return;
  }
  const NfcDecomp* end = kNfcDecomps + kNfcDecompsCount;
  const NfcDecomp* it = std::lower_bound(kNfcDecomps, end, cp, [](const NfcDecomp& d, char32_t c) { return d.cp < c; });
  if (it != end && it->cp == cp) out.insert(out.end(), kNfcDecompData + it->at, kNfcDecompData + it->at + it->len);
  else out.push_back(cp);
}

// The primary composite of a + b, or 0.
char32_t compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  const NfcPair* end = kNfcPairs + kNfcPairsCount;
  const NfcPair* it = std::lower_bound(kNfcPairs, end, std::make_pair(a, b), [](const NfcPair& p, std::pair<char32_t, char32_t> k) {
    return p.first != k.first ? p.first < k.first : p.second < k.second;
  });
  return it != end && it->first == a && it->second == b ? it->composite : 0;
}

// NFC of a run of code points, appended as UTF-8.
void normalize_run(const std::vector<char32_t>& run, std::string& out) {
  std::vector<char32_t> d;
  d.reserve(run.size() + 8);
  for (char32_t cp : run) decompose(cp, d);
  // canonical ordering: a stable sort of each run of non-starters by class
  for (size_t i = 0; i < d.size();) {
    if (ccc(d[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < d.size() && ccc(d[j]) != 0) ++j;
    std::stable_sort(d.begin() + static_cast<long>(i), d.begin() + static_cast<long>(j),
                     [](char32_t a, char32_t b) { return ccc(a) < ccc(b); });
    i = j;
  }
  // canonical composition (UAX #15's algorithm)
  std::vector<char32_t> c;
  c.reserve(d.size());
  long starter = -1;
  int last = 0;
  for (char32_t cp : d) {
    const int k = ccc(cp);
    if (starter >= 0 && (last < k || (last == 0 && static_cast<long>(c.size()) == starter + 1))) {
      if (const char32_t x = compose(c[static_cast<size_t>(starter)], cp)) {
        c[static_cast<size_t>(starter)] = x;
        continue;
      }
    }
    if (k == 0) starter = static_cast<long>(c.size());
    last = k;
    c.push_back(cp);
  }
  for (char32_t cp : c) utf8_append(out, cp);
}

}  // namespace

std::string nfc(const std::string& text) {
  bool ascii = true;
  for (unsigned char b : text) ascii = ascii && b < 0x80;
  if (ascii) return text;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  std::string out;
  out.reserve(text.size());
  std::vector<char32_t> run;
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const size_t len = utf8_char_at(s, text.size(), i, cp);
    if (len == 0) {
      normalize_run(run, out);
      run.clear();
      out.push_back(text[i++]);
      continue;
    }
    run.push_back(cp);
    i += len;
  }
  normalize_run(run, out);
  return out;
}

}  // namespace ap
