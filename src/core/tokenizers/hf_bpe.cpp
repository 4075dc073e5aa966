// hf_bpe.cpp — Hugging Face tokenizer.json BPE tokenizers (see hf_bpe.h).
#include "core/tokenizers/hf_bpe.h"

#include <algorithm>
#include <mutex>

#include "core/base/input_error.h"
#include "core/base/utf8.h"
#include "core/tokenizers/unicode_nfc.h"

namespace ap {

namespace {

std::string quoted(const std::string& s) { return "\"" + utf8_sanitize(s.substr(0, 80)) + "\""; }

std::string byte_token_name(int b) {
  static const char* hex = "0123456789ABCDEF";
  return std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  std::string out;
  size_t at = 0;
  for (size_t k; (k = s.find(from, at)) != std::string::npos; at = k + from.size()) out.append(s, at, k - at) += to;
  out.append(s, at, std::string::npos);
  s.swap(out);
}

}  // namespace

std::shared_ptr<const HfBpeTokenizer> HfBpeTokenizer::build(const HfBpeSpec& spec) {
  std::shared_ptr<HfBpeTokenizer> t(new HfBpeTokenizer());
  t->spec_ = spec;
  t->cache_ = std::make_shared<BpePieceCache>();
  const std::string& vn = spec.vocab_name;
  const size_t n = spec.vocab.size();
  if (n == 0) throw InputError(vn + " holds no tokens", vn);
  if (n > static_cast<size_t>(kMaxBpeVocab))
    throw InputError(vn + " holds " + std::to_string(n) + " tokens, more than the limit of " +
                         std::to_string(kMaxBpeVocab), vn);
  const bool byte_level = spec.model == HfBpeSpec::Model::byte_level;
  std::unordered_map<std::string, int> byte_of;  // a byte symbol's UTF-8 → its byte
  for (int b = 0; b < 256; ++b) byte_of[byte_symbol(static_cast<uint8_t>(b))] = b;
  t->special_.assign(n, false);
  std::vector<bool> added(n, false);
  for (const HfAddedToken& a : spec.added) {
    if (a.id < 0 || static_cast<size_t>(a.id) >= n || spec.vocab[a.id] != a.content)
      throw InputError("tokenizer.json added token " + quoted(a.content) + " (id " + std::to_string(a.id) +
                           ") is not the vocabulary's token of that id", "tokenizer.json");
    if (a.content.empty()) throw InputError("tokenizer.json added token " + std::to_string(a.id) + " is empty", "tokenizer.json");
    added[a.id] = true;
    if (t->added_by_first_.empty()) t->added_by_first_.resize(256);
    t->added_by_first_[static_cast<unsigned char>(a.content[0])].push_back(static_cast<size_t>(&a - spec.added.data()));
    t->special_[a.id] = a.special;
  }
  t->bytes_.resize(n);
  for (size_t id = 0; id < n; ++id) {
    const std::string& tok = spec.vocab[id];
    const std::string key = vn + " token " + std::to_string(id) + " " + quoted(tok);
    if (tok.empty()) throw InputError(vn + ": token " + std::to_string(id) + " is the empty string", vn);
    if (!utf8_valid(tok)) throw InputError(key + " is not valid UTF-8", vn);
    if (!t->id_of_.emplace(tok, static_cast<int>(id)).second)
      throw InputError(key + " appears twice (also id " + std::to_string(t->id_of_[tok]) + ")", vn);
    std::string bytes;
    if (added[id]) {
      bytes = tok;
    } else if (byte_level) {
      for (size_t i = 0; i < tok.size();) {
        char32_t cp = 0;
        const size_t len = utf8_char_at(reinterpret_cast<const unsigned char*>(tok.data()), tok.size(), i, cp);
        const auto it = byte_of.find(tok.substr(i, len));
        if (it == byte_of.end())
          throw InputError(key + " holds " + describe_char(cp) +
                               ", which is none of the 256 byte symbols (a byte-level BPE vocabulary spells every token with them)", vn);
        bytes.push_back(static_cast<char>(it->second));
        i += len;
      }
    } else {
      bytes = tok;
      replace_all(bytes, "\u2581", " ");
      if (spec.byte_fallback && tok.size() == 6 && tok.rfind("<0x", 0) == 0 && tok[5] == '>') {
        for (int b = 0; b < 256; ++b)
          if (tok == byte_token_name(b)) bytes = std::string(1, static_cast<char>(b));
      }
    }
    t->bytes_[id] = std::move(bytes);
  }
  for (int b = 0; b < 256; ++b) {
    t->byte_id_[b] = -1;
    const std::string name = byte_level ? byte_symbol(static_cast<uint8_t>(b)) : byte_token_name(b);
    const auto it = t->id_of_.find(name);
    if (it != t->id_of_.end()) t->byte_id_[b] = it->second;
    else if (byte_level || spec.byte_fallback)
      throw InputError(vn + " has no token " + quoted(name) + " for the byte " + byte_token_name(b) +
                           (byte_level ? ": a byte-level vocabulary holds all 256" : ": byte_fallback needs all 256"), vn);
  }
  if (spec.unk_id >= static_cast<int>(n)) throw InputError(vn + ": the unknown token's id is outside the vocabulary", vn);
  for (size_t r = 0; r < spec.merges.size(); ++r) {
    const BpeMerge& m = spec.merges[r];
    const std::string where = spec.merges_name + "[" + std::to_string(m.line) + "]";
    auto id = [&](const std::string& s, const char* what) {
      const auto it = t->id_of_.find(s);
      if (it == t->id_of_.end())
        throw InputError(where + ": " + what + " " + quoted(s) + " is not a token of " + vn, spec.merges_name);
      return it->second;
    };
    const int a = id(m.left, "the left part"), b = id(m.right, "the right part"), ab = id(m.left + m.right, "the merge");
    const uint64_t key = bpe_pair(a, b);
    t->merges_.emplace(key, BpeRank{static_cast<int>(r), ab});  // a repeated pair keeps its first rank, as HF does
  }
  return t;
}

bool HfBpeTokenizer::is_special(int id) const {
  check_token_id(id, 0, vocab_size());
  return special_[static_cast<size_t>(id)];
}

void HfBpeTokenizer::encode_piece(const std::string& piece, std::vector<int>& out) const {
  const auto* s = reinterpret_cast<const unsigned char*>(piece.data());
  std::vector<int> tok;
  if (spec_.model == HfBpeSpec::Model::byte_level) {
    if (spec_.ignore_merges) {
      std::string name;
      for (unsigned char b : piece) name += byte_symbol(b);
      const auto it = id_of_.find(name);
      if (it != id_of_.end()) {
        out.push_back(it->second);
        return;
      }
    }
    for (unsigned char b : piece) tok.push_back(byte_id_[b]);
  } else {
    if (spec_.ignore_merges) {
      const auto it = id_of_.find(piece);
      if (it != id_of_.end()) {
        out.push_back(it->second);
        return;
      }
    }
    for (size_t i = 0; i < piece.size();) {
      char32_t cp = 0;
      size_t len = utf8_char_at(s, piece.size(), i, cp);
      if (len == 0) len = 1;
      const auto it = len > 1 || s[i] < 0x80 ? id_of_.find(piece.substr(i, len)) : id_of_.end();
      if (it != id_of_.end()) {
        tok.push_back(it->second);
      } else if (spec_.byte_fallback) {
        for (size_t k = i; k < i + len; ++k) tok.push_back(byte_id_[s[k]]);
      } else if (spec_.unk_id >= 0) {
        if (!(spec_.fuse_unk && !tok.empty() && tok.back() == spec_.unk_id)) tok.push_back(spec_.unk_id);
      }
      i += len;
    }
  }
  bpe_merge(tok, merges_, BpeOrder::one_by_one);
  out.insert(out.end(), tok.begin(), tok.end());
}

std::string HfBpeTokenizer::normalize(const std::string& segment, bool at_start) const {
  std::string s = spec_.nfc ? nfc(segment) : segment;
  if (!spec_.prepend.empty() && !s.empty()) s = spec_.prepend + s;
  for (const auto& [from, to] : spec_.replace) replace_all(s, from, to);
  if (spec_.byte_level_prefix_space && !s.empty() && s[0] != ' ') s = " " + s;
  if (spec_.metaspace != HfBpeSpec::Metaspace::none && !s.empty()) {
    const std::string bar = "\u2581";
    replace_all(s, " ", bar);
    if (s.compare(0, bar.size(), bar) != 0 &&
        (spec_.metaspace == HfBpeSpec::Metaspace::always || (spec_.metaspace == HfBpeSpec::Metaspace::first && at_start)))
      s = bar + s;
  }
  return s;
}

void HfBpeTokenizer::encode_segment(const std::string& segment, bool at_start, std::vector<int>& out) const {
  const std::string text = normalize(segment, at_start);
  std::vector<std::pair<size_t, size_t>> pieces{{0, text.size()}}, next;
  if (text.empty()) return;
  for (const HfPreStep& step : spec_.pre) {
    next.clear();
    for (const auto& [at, len] : pieces) {
      if (step.kind == HfPreStep::Kind::digits) split_digits(text, at, len, next);
      else split_with(step.kind == HfPreStep::Kind::split ? step.pattern : SplitPattern::gpt2, text, at, len, next);
    }
    pieces.swap(next);
  }
  for (const std::pair<size_t, size_t>& piece : pieces)
    if (piece.second > 0)
      cache_->encode(text, piece.first, piece.second, out,
                     [&](std::vector<int>& o) { encode_piece(text.substr(piece.first, piece.second), o); });
}

std::vector<int> HfBpeTokenizer::encode(const std::string& text, bool with_special) const {
  std::vector<int> ids;
  if (with_special) ids = spec_.prefix_ids;
  // Added tokens: leftmost first, the longest at a place.
  size_t seg = 0;
  for (size_t i = 0; i < text.size();) {
    const HfAddedToken* best = nullptr;
    if (!added_by_first_.empty())
      for (size_t k : added_by_first_[static_cast<unsigned char>(text[i])])
        if (const HfAddedToken& a = spec_.added[k]; text.compare(i, a.content.size(), a.content) == 0 && (!best || a.content.size() > best->content.size()))
        best = &a;
    if (!best) {
      ++i;
      continue;
    }
    encode_segment(text.substr(seg, i - seg), seg == 0, ids);
    ids.push_back(best->id);
    i += best->content.size();
    seg = i;
  }
  encode_segment(text.substr(seg), seg == 0, ids);
  if (with_special) ids.insert(ids.end(), spec_.suffix_ids.begin(), spec_.suffix_ids.end());
  return ids;
}

std::string HfBpeTokenizer::token_bytes(int id) const {
  check_token_id(id, 0, vocab_size());
  return bytes_[static_cast<size_t>(id)];
}

std::string HfBpeTokenizer::decode(const std::vector<int>& ids, bool skip_special) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    check_token_id(ids[i], i, vocab_size());
    if (skip_special && special_[static_cast<size_t>(ids[i])]) continue;
    out += bytes_[static_cast<size_t>(ids[i])];
  }
  size_t strip = 0;
  if (spec_.metaspace_decoder && !ids.empty() && !(skip_special && special_[static_cast<size_t>(ids[0])]) &&
      spec_.vocab[static_cast<size_t>(ids[0])].rfind("\u2581", 0) == 0)
    strip = 1;
  while (strip < static_cast<size_t>(spec_.strip_start) && strip < out.size() && out[strip] == ' ') ++strip;
  return out.substr(strip);
}

}  // namespace ap
