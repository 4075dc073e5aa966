// bpe.h — GPT-2's byte-level BPE tokenizer: the text's bytes in, token ids out, and back.
//
// What it does, as OpenAI's encoder.py (and Hugging Face's GPT-2 tokenizer) does:
//   1. pre-tokenize: split the text with GPT-2's pattern
//        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//      matched by hand (no regex engine) with the Unicode classes of unicode_classes.h;
//   2. map each piece's bytes to GPT-2's 256 printable stand-ins (byte_symbol: "Ġ" for a space);
//   3. merge adjacent symbols by the rank of their pair in merges.txt, lowest rank first, every
//      occurrence of that pair left to right, until no pair has a rank (GPT-2's bpe());
//   4. look each resulting symbol string up in the vocabulary.
// decode maps ids back to bytes, so any bytes round-trip exactly.
//
// Beyond GPT-2: the input is bytes, not a Python str. Valid UTF-8 is tokenized exactly as GPT-2
// tokenizes the text; a byte that is not part of valid UTF-8 is one character of the "other" class
// ([^\s\p{L}\p{N}]: what Python's surrogateescape makes of it) and encodes to its byte token, so
// encode never fails and decode(encode(b)) == b for every b. Text that spells a special token
// ("<|endoftext|>") is encoded as plain text, as encoder.py does; the id itself decodes to it.
// \s is Unicode White_Space (as Python's `regex`): U+0085 is a space, U+FEFF is not (JavaScript's
// \s differs on both).
//
// Limits: a vocabulary of at most kMaxBpeVocab tokens with ids 0..n-1 (each once), every token a
// string of the 256 byte symbols; every byte has its token; each merge's parts and result are
// tokens. Errors are InputError naming the source ("merges.txt line 7: …", field the source's
// name). encode keeps a cache of pieces up to 64 bytes (a word recurs; a piece's merges cost
// O(n log n)), bounded at 65,536 entries and guarded by a mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ap {

constexpr int kMaxBpeVocab = 1 << 20;

// The UTF-8 of GPT-2's stand-in for byte b: b itself for '!'..'~', '¡'..'¬', '®'..'ÿ'; otherwise
// U+0100 + k for the k-th other byte in order (so ' ' → "Ġ" U+0120, '\n' → "Ċ" U+010A).
std::string byte_symbol(uint8_t b);

// The pieces GPT-2's pattern splits `text` into, as (byte offset, byte length), in order; they
// cover the text. Any bytes (see above for invalid UTF-8).
std::vector<std::pair<size_t, size_t>> bpe_pretokenize(const std::string& text);

// The character at byte i of s[0, n): its length (0 if the bytes there are not a valid UTF-8
// character) and code point. Strict: no overlong forms, surrogates or values above U+10FFFF.
size_t utf8_char_at(const unsigned char* s, size_t n, size_t i, char32_t& cp);

// One line of merges: two symbol strings, and where it came from (its line, for messages).
struct BpeMerge {
  std::string left, right;
  size_t line = 0;  // 1-based line of merges.txt, or index in tokenizer.json's model.merges
};

// merges.txt: an optional first line "#version: …", then one merge a line, two symbol strings
// separated by one space; empty lines are skipped. Errors name the line (field `name`).
std::vector<BpeMerge> parse_bpe_merges(const std::string& text, const std::string& name);

// A ranked merge table: (left id << 32 | right id) → the merge's rank and the id it makes.
struct BpeRank {
  int rank, id;
};
using BpeRanks = std::unordered_map<uint64_t, BpeRank>;
inline uint64_t bpe_pair(int left, int right) {
  return (static_cast<uint64_t>(left) << 32) | static_cast<uint32_t>(right);
}
// How pairs of equal rank merge: GPT-2's encoder.py merges every occurrence of the best pair in one
// pass, left to right (rounds); Hugging Face's tokenizers pops one (rank, position) at a time
// (one_by_one). The two agree whenever each merge's parts come from earlier merges, as in every
// real merges file; each tokenizer keeps its reference's rule for the files that do not.
enum class BpeOrder { rounds, one_by_one };
// Merges one piece's symbols (token ids) in place, lowest rank first, leftmost first.
void bpe_merge(std::vector<int>& tok, const BpeRanks& ranks, BpeOrder order);

// Refuses (InputError, field "ids") a token id outside 0 … vocab_size − 1, naming its position in
// the ids: the check both tokenizers' decode make.
void check_token_id(int id, size_t position, int vocab_size);

// Both BPE tokenizers' memo of pieces → ids, shared by the threads that encode with one tokenizer:
// a piece of at most 64 bytes is merged once; at 65,536 pieces the memo starts over.
class BpePieceCache {
 public:
  // Appends the ids of text[at, at + len) to out: the memo's, or those encode_piece appends.
  void encode(const std::string& text, size_t at, size_t len, std::vector<int>& out,
              const std::function<void(std::vector<int>&)>& encode_piece);

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::vector<int>> pieces_;
};

class BpeTokenizer {
 public:
  // `vocab` is (token, id) pairs as vocab.json holds them; `merges` in rank order. `vocab_name` and
  // `merges_name` name the sources in messages ("vocab.json", "tokenizer.json model.merges");
  // `merges_unit` is what a merge's `line` counts ("line" or "merge").
  static std::shared_ptr<const BpeTokenizer> build(const std::vector<std::pair<std::string, long long>>& vocab,
                                                   const std::vector<BpeMerge>& merges, const std::string& vocab_name,
                                                   const std::string& merges_name, const std::string& merges_unit = "line");

  int vocab_size() const { return static_cast<int>(tokens_.size()); }
  // Token ids of any bytes (never throws).
  std::vector<int> encode(const std::string& text) const;
  // The bytes of ids; an id outside [0, vocab_size) is an InputError (field "ids").
  std::string decode(const int* ids, size_t n) const;
  std::string decode(const std::vector<int>& ids) const { return decode(ids.data(), ids.size()); }
  // One token's bytes (throws like decode), and its string in the vocabulary ("Ġthe").
  std::string token_bytes(int id) const;
  const std::string& token_string(int id) const { return tokens_.at(static_cast<size_t>(id)); }
  // For saving: tokens in id order, merges in rank order (as "left right" lines).
  const std::vector<std::string>& tokens() const { return tokens_; }
  std::string merges_text() const;
  size_t merge_count() const { return merge_lines_.size(); }

 private:
  BpeTokenizer() = default;
  void encode_piece(const unsigned char* p, size_t n, std::vector<int>& out) const;
  std::vector<std::string> tokens_;        // id → symbol string
  std::vector<std::string> bytes_;         // id → bytes
  std::vector<std::pair<int, int>> merge_lines_;  // rank → (left id, right id)
  BpeRanks merges_;
  int byte_id_[256] = {};
  std::shared_ptr<BpePieceCache> cache_;
};

// One token's bytes as text for display: whole UTF-8 characters as they are, each byte that is not
// part of one (a piece of an emoji or a Chinese character split across tokens) as "<0xF0>". The
// session's token texts are these; the page's tokenLabel (web/train/maps.js) and visible_token
// below then show whitespace.
std::string bpe_piece_text(const std::string& bytes);

// The one convention for showing a token (the page's tokenLabel does the same): each space as "␣"
// (U+2423), each newline as "↵" (U+21B5), each tab as "⇥" (U+21E5); so GPT-2's "Ġthe" shows "␣the".
std::string visible_token(const std::string& text);

}  // namespace ap
