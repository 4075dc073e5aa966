// bpe.cpp — GPT-2's byte-level BPE (see bpe.h).
#include "core/tokenizers/bpe.h"

#include <algorithm>
#include <mutex>
#include <queue>

#include "core/base/input_error.h"
#include "core/tokenizers/unicode_classes.h"
#include "core/base/utf8.h"

namespace ap {

namespace {

bool in_ranges(const CodeRange* r, size_t n, char32_t cp) {
  const CodeRange* end = r + n;
  const CodeRange* it = std::upper_bound(r, end, cp, [](char32_t c, const CodeRange& x) { return c < x.first; });
  return it != r && cp <= (it - 1)->last;
}

size_t contraction(const std::vector<Unit>& u, size_t i) {
  auto is = [&](size_t k, char32_t c) { return k < u.size() && u[k].cp == c; };
  if (!is(i, U'\'')) return 0;
  if (is(i + 1, U's') || is(i + 1, U't') || is(i + 1, U'm') || is(i + 1, U'd')) return 2;
  if ((is(i + 1, U'r') && is(i + 2, U'e')) || (is(i + 1, U'v') && is(i + 2, U'e')) ||
      (is(i + 1, U'l') && is(i + 2, U'l')))
    return 3;
  return 0;
}

struct SymbolTable {
  std::string sym[256];
  SymbolTable() {
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      sym[b] = utf8_encode(printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++));
    }
  }
};
const SymbolTable& symbols() {
  static const SymbolTable t;
  return t;
}

std::string quoted(const std::string& s) { return "\"" + utf8_sanitize(s) + "\""; }

}  // namespace

size_t utf8_char_at(const unsigned char* s, size_t n, size_t i, char32_t& cp) {
  const unsigned char b = s[i];
  if (b < 0x80) { cp = b; return 1; }
  size_t len;
  char32_t min;
  if (b >= 0xC2 && b <= 0xDF) { len = 2; cp = b & 0x1F; min = 0x80; }
  else if (b >= 0xE0 && b <= 0xEF) { len = 3; cp = b & 0x0F; min = 0x800; }
  else if (b >= 0xF0 && b <= 0xF4) { len = 4; cp = b & 0x07; min = 0x10000; }
  else return 0;
  if (i + len > n) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((s[i + k] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i + k] & 0x3F);
  }
  if (cp < min || !is_scalar_value(cp)) return 0;
  return len;
}

bool is_unicode_letter(char32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  return in_ranges(kLetters, kLettersCount, cp);
}
bool is_unicode_number(char32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return in_ranges(kNumbers, kNumbersCount, cp);
}
bool is_unicode_space(char32_t cp) { return in_ranges(kSpaces, kSpacesCount, cp); }

std::vector<Unit> units_of(const std::string& text, size_t from, size_t len) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t end = from + len;
  std::vector<Unit> out;
  out.reserve(len);
  for (size_t i = from; i < end;) {
    char32_t cp = 0;
    size_t n = utf8_char_at(s, end, i, cp);
    Cls c = Cls::other;
    if (n == 0) {
      n = 1;
      cp = 0xFFFFFFFF;
    } else if (is_unicode_letter(cp)) c = Cls::letter;
    else if (is_unicode_number(cp)) c = Cls::number;
    else if (is_unicode_space(cp)) c = Cls::space;
    out.push_back({i, n, c, cp});
    i += n;
  }
  return out;
}

std::string byte_symbol(uint8_t b) { return symbols().sym[b]; }

std::vector<std::pair<size_t, size_t>> bpe_pretokenize(const std::string& text) {
  const std::vector<Unit> u = units_of(text, 0, text.size());
  std::vector<std::pair<size_t, size_t>> pieces;
  const size_t n = u.size();
  auto run = [&](size_t k, Cls c) {  // end of the run of class c from unit k
    while (k < n && u[k].cls == c) ++k;
    return k;
  };
  for (size_t i = 0; i < n;) {
    size_t end = 0;
    const bool space_then = u[i].cp == U' ' && i + 1 < n;
    if (const size_t c = contraction(u, i)) end = i + c;                        // 's|'t|'re|'ve|'m|'ll|'d
    else if (u[i].cls == Cls::letter || u[i].cls == Cls::number || u[i].cls == Cls::other)
      end = run(i, u[i].cls);                                                 // \p{L}+, \p{N}+, [^\s\p{L}\p{N}]+
    else if (space_then && u[i + 1].cls != Cls::space) end = run(i + 1, u[i + 1].cls);  // " " + one of those
    else {                                                                    // \s+(?!\S)|\s+
      const size_t j = run(i, Cls::space);
      end = (j == n || j - i == 1) ? j : j - 1;
    }
    pieces.emplace_back(u[i].at, (end < n ? u[end].at : text.size()) - u[i].at);
    i = end;
  }
  return pieces;
}

std::vector<BpeMerge> parse_bpe_merges(const std::string& text, const std::string& name) {
  std::vector<BpeMerge> out;
  size_t line = 0;
  for (size_t at = 0; at <= text.size();) {
    size_t eol = text.find('\n', at);
    if (eol == std::string::npos) eol = text.size();
    std::string l = text.substr(at, eol - at);
    at = eol + 1;
    ++line;
    if (!l.empty() && l.back() == '\r') l.pop_back();
    if (l.empty() || (line == 1 && l.rfind("#version", 0) == 0)) continue;
    const size_t sp = l.find(' ');
    if (sp == std::string::npos || sp == 0 || sp + 1 == l.size() || l.find(' ', sp + 1) != std::string::npos)
      throw InputError(name + " line " + std::to_string(line) + ": " + quoted(l.substr(0, 80)) +
                           " is not a merge: a line holds two symbol strings separated by one space",
                       name);
    out.push_back({l.substr(0, sp), l.substr(sp + 1), line});
  }
  if (out.empty()) throw InputError(name + " holds no merges", name);
  return out;
}

void BpePieceCache::encode(const std::string& text, size_t at, size_t len, std::vector<int>& out,
                           const std::function<void(std::vector<int>&)>& encode_piece) {
  constexpr size_t kCachedPiece = 64, kCacheEntries = 65536;
  if (len > kCachedPiece) {
    encode_piece(out);
    return;
  }
  const std::string piece = text.substr(at, len);
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = pieces_.find(piece);
    if (it != pieces_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t from = out.size();
  encode_piece(out);
  std::lock_guard<std::mutex> lock(mu_);
  if (pieces_.size() >= kCacheEntries) pieces_.clear();
  pieces_.emplace(piece, std::vector<int>(out.begin() + static_cast<long>(from), out.end()));
}

std::shared_ptr<const BpeTokenizer> BpeTokenizer::build(const std::vector<std::pair<std::string, long long>>& vocab,
                                                        const std::vector<BpeMerge>& merges,
                                                        const std::string& vocab_name, const std::string& merges_name,
                                                        const std::string& merges_unit) {
  std::shared_ptr<BpeTokenizer> t(new BpeTokenizer());
  t->cache_ = std::make_shared<BpePieceCache>();
  if (vocab.empty()) throw InputError(vocab_name + " holds no tokens", vocab_name);
  if (vocab.size() > static_cast<size_t>(kMaxBpeVocab))
    throw InputError(vocab_name + " holds " + std::to_string(vocab.size()) + " tokens, more than the limit of " +
                         std::to_string(kMaxBpeVocab),
                     vocab_name);
  // The byte each of the 256 symbols stands for.
  std::unordered_map<char32_t, int> byte_of;
  for (int b = 0; b < 256; ++b) byte_of[utf8_decode(symbols().sym[b])[0]] = b;
  const size_t n = vocab.size();
  t->tokens_.assign(n, std::string());
  t->bytes_.assign(n, std::string());
  std::vector<bool> seen(n, false);
  std::unordered_map<std::string, int> id_of;
  for (const auto& [tok, id] : vocab) {
    const std::string key = vocab_name + " key " + quoted(tok);
    if (id < 0 || id >= static_cast<long long>(n))
      throw InputError(key + " has id " + std::to_string(id) + ", outside 0.." + std::to_string(n - 1) + " (ids run from 0 to one less than the " +
                           std::to_string(n) + " tokens)",
                       vocab_name);
    if (seen[id])
      throw InputError(key + " has id " + std::to_string(id) + ", which token " + quoted(t->tokens_[id]) +
                           " has already",
                       vocab_name);
    if (tok.empty()) throw InputError(vocab_name + ": token " + std::to_string(id) + " is the empty string", vocab_name);
    if (!utf8_valid(tok)) throw InputError(key + " is not valid UTF-8", vocab_name);
    std::string bytes;
    for (char32_t c : utf8_decode(tok)) {
      const auto it = byte_of.find(c);
      if (it == byte_of.end())
        throw InputError(key + " holds " + describe_char(c) + ", which is none of GPT-2's 256 byte symbols (a byte-level BPE vocabulary spells every token with them)",
                         vocab_name);
      bytes.push_back(static_cast<char>(it->second));
    }
    if (!id_of.emplace(tok, static_cast<int>(id)).second)
      throw InputError(key + " appears twice", vocab_name);
    seen[id] = true;
    t->tokens_[id] = tok;
    t->bytes_[id] = std::move(bytes);
  }
  for (int b = 0; b < 256; ++b) {
    const auto it = id_of.find(symbols().sym[b]);
    if (it == id_of.end())
      throw InputError(vocab_name + " has no token for the byte 0x" + "0123456789ABCDEF"[b >> 4] +
                           "0123456789ABCDEF"[b & 15] + " (" + quoted(symbols().sym[b]) +
                           "): a byte-level vocabulary holds all 256",
                       vocab_name);
    t->byte_id_[b] = it->second;
  }
  t->merge_lines_.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const BpeMerge& m = merges[r];
    const std::string where = merges_name + " " + merges_unit + " " + std::to_string(m.line);
    auto id = [&](const std::string& s, const char* what) {
      const auto it = id_of.find(s);
      if (it == id_of.end())
        throw InputError(where + ": " + what + " " + quoted(s) + " is not a token of " + vocab_name, merges_name);
      return it->second;
    };
    const int a = id(m.left, "the left part"), b = id(m.right, "the right part"), ab = id(m.left + m.right, "the merge");
    const uint64_t key = bpe_pair(a, b);
    if (!t->merges_.emplace(key, BpeRank{static_cast<int>(r), ab}).second)
      throw InputError(where + ": the merge " + quoted(m.left + " " + m.right) + " repeats an earlier line", merges_name);
    t->merge_lines_.emplace_back(a, b);
  }
  return t;
}

void bpe_merge(std::vector<int>& tok, const BpeRanks& ranks, BpeOrder order) {
  // The symbols as a linked list; merging keeps the left node. Candidate pairs wait in a heap by
  // (rank, node); a candidate whose pair has changed since it was pushed is skipped.
  const int n = static_cast<int>(tok.size());
  std::vector<int> next(n), prev(n);
  for (int i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  struct Cand {
    int rank, node, a, b;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : node > o.node; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
  auto push = [&](int i) {
    if (i < 0 || next[i] < 0) return;
    const auto it = ranks.find(bpe_pair(tok[i], tok[next[i]]));
    if (it != ranks.end()) heap.push({it->second.rank, i, tok[i], tok[next[i]]});
  };
  for (int i = 0; i + 1 < n; ++i) push(i);
  std::vector<Cand> round;
  std::vector<bool> dead(n, false);
  while (!heap.empty()) {
    // rounds: every candidate of the lowest rank, taken before any of them merges; one_by_one: one.
    const int rank = heap.top().rank;
    round.clear();
    do {
      round.push_back(heap.top());
      heap.pop();
    } while (order == BpeOrder::rounds && !heap.empty() && heap.top().rank == rank);
    for (const Cand& c : round) {
      const int i = c.node, j = next[i];
      if (dead[i] || tok[i] != c.a || j < 0 || tok[j] != c.b) continue;  // no longer there
      tok[i] = ranks.at(bpe_pair(c.a, c.b)).id;
      dead[j] = true;
      next[i] = next[j];
      if (next[j] >= 0) prev[next[j]] = i;
      push(prev[i]);
      push(i);
    }
  }
  size_t k = 0;
  for (int i = n ? 0 : -1; i >= 0; i = next[i]) tok[k++] = tok[i];
  tok.resize(k);
}

void BpeTokenizer::encode_piece(const unsigned char* p, size_t n, std::vector<int>& out) const {
  std::vector<int> tok(n);
  for (size_t i = 0; i < n; ++i) tok[i] = byte_id_[p[i]];
  bpe_merge(tok, merges_, BpeOrder::rounds);
  out.insert(out.end(), tok.begin(), tok.end());
}

std::vector<int> BpeTokenizer::encode(const std::string& text) const {
  std::vector<int> ids;
  ids.reserve(text.size() / 3 + 1);
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (const std::pair<size_t, size_t>& piece : bpe_pretokenize(text))
    cache_->encode(text, piece.first, piece.second, ids,
                   [&](std::vector<int>& out) { encode_piece(s + piece.first, piece.second, out); });
  return ids;
}

void check_token_id(int id, size_t position, int vocab_size) {
  if (id < 0 || id >= vocab_size)
    throw InputError("token id " + std::to_string(id) + " at position " + std::to_string(position) +
                         " (counting from 0) is outside the vocabulary: ids run from 0 to " +
                         std::to_string(vocab_size - 1),
                     "ids");
}

std::string BpeTokenizer::decode(const int* ids, size_t n) const {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    check_token_id(ids[i], i, vocab_size());
    out += bytes_[static_cast<size_t>(ids[i])];
  }
  return out;
}

std::string BpeTokenizer::token_bytes(int id) const { return decode(&id, 1); }

std::string BpeTokenizer::merges_text() const {
  std::string out = "#version: 0.2\n";
  for (const auto& [a, b] : merge_lines_) out += tokens_[a] + " " + tokens_[b] + "\n";
  return out;
}

std::string bpe_piece_text(const std::string& bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  std::string out;
  for (size_t i = 0; i < bytes.size();) {
    char32_t cp = 0;
    const size_t len = utf8_char_at(s, bytes.size(), i, cp);
    if (len) {
      out.append(bytes, i, len);
      i += len;
    } else {
      static const char* hex = "0123456789ABCDEF";
      out += std::string("<0x") + hex[s[i] >> 4] + hex[s[i] & 15] + ">";
      ++i;
    }
  }
  return out;
}

std::string visible_token(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == ' ') out += "\u2423";
    else if (c == '\n') out += "\u21B5";
    else if (c == '\t') out += "\u21E5";
    else out += c;
  }
  return out;
}

}  // namespace ap
