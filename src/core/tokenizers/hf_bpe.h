// hf_bpe.h — the BPE tokenizers of Hugging Face tokenizer.json files, as the `tokenizers` library
// runs them: added tokens split out first, then per segment normalizer → pre-tokenizer → model,
// then the post-processor's special tokens; decode back to bytes.
//
// Two models:
//   byte_level     Llama 3, Qwen2/3, SmolLM2 (and GPT-2): every token a string of GPT-2's 256 byte
//                  symbols (byte_symbol in bpe.h); a piece's bytes start as byte tokens and merge.
//                  ignore_merges (Llama 3): a piece that is itself a token is that token.
//   sentencepiece  Llama 2, Mistral, TinyLlama: tokens are text with "▁" for a space; a piece
//                  starts as its characters, a character that is not a token becomes its UTF-8
//                  bytes' <0xNN> tokens (byte_fallback) or the unknown token (fused when fuse_unk).
// Both merge adjacent symbols by rank, lowest first, leftmost first (O(n log n) in the piece).
// Normalizers: NFC (unicode_nfc.h), then Prepend, then literal Replace.
// Pre-tokenizers: a Split pattern of split_patterns.h, Digits (individual), ByteLevel's GPT-2
// split (use_regex) and its prefix space; Metaspace without splitting (" "→"▁", and "▁" put
// before a segment that does not start with one: always, or only the text's first); none (a
// SentencePiece model sees the segment whole).
// Added tokens (special or not) are found in the raw text leftmost first, the longest at a place;
// their flags lstrip/rstrip/single_word/normalized must be false (the reader refuses others).
//
// Text that is not valid UTF-8: byte_level encodes every byte (an invalid one is a character of
// no class, see split_patterns.h); sentencepiece encodes an invalid byte as its <0xNN> token (or
// unknown). decode gives the tokens' bytes, so decode(encode(b)) == b for any b with byte_fallback
// or byte_level; a SentencePiece decode strips `strip_start` leading spaces (the Strip decoder),
// or with metaspace_decoder the space of a first token that starts with "▁" (the Metaspace
// decoder, as @huggingface/tokenizers has it: one "▁", where Rust's drops all of that token's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tokenizers/bpe.h"
#include "core/tokenizers/split_patterns.h"

namespace ap {

struct HfAddedToken {
  std::string content;
  int id = 0;
  bool special = false;
};

// One pre-tokenizer step, applied to every piece the steps before it made.
struct HfPreStep {
  enum class Kind { split, digits, byte_level_regex } kind = Kind::split;
  SplitPattern pattern = SplitPattern::gpt2;  // kind split
};

struct HfBpeSpec {
  enum class Model { byte_level, sentencepiece } model = Model::byte_level;
  std::vector<std::string> vocab;   // id → token string, ids 0..n−1 (added tokens' ids included)
  std::vector<BpeMerge> merges;     // rank order
  std::string merges_name = "tokenizer.json model.merges", vocab_name = "tokenizer.json model.vocab";
  // normalizer
  bool nfc = false;
  std::string prepend;                                       // Prepend ("▁"), before Replace
  std::vector<std::pair<std::string, std::string>> replace;  // literal (from, to), in order
  // pre-tokenizer
  std::vector<HfPreStep> pre;
  bool byte_level_prefix_space = false;  // ByteLevel's add_prefix_space
  enum class Metaspace { none, always, first, never } metaspace = Metaspace::none;  // its prepend_scheme
  // model
  bool ignore_merges = false, byte_fallback = false, fuse_unk = false;
  int unk_id = -1;
  std::vector<HfAddedToken> added;
  // post-processor (one sequence): ids before and after the text
  std::vector<int> prefix_ids, suffix_ids;
  // decoder (sentencepiece): leading spaces the Strip decoder removes
  int strip_start = 0;
  bool metaspace_decoder = false;
};

class HfBpeTokenizer {
 public:
  // Checks the spec (InputError naming the token, merge or id) and builds the tables.
  static std::shared_ptr<const HfBpeTokenizer> build(const HfBpeSpec& spec);

  int vocab_size() const { return static_cast<int>(bytes_.size()); }
  // Token ids of any bytes; with_special adds the post-processor's ids (BOS …).
  std::vector<int> encode(const std::string& text, bool with_special = true) const;
  // The bytes of ids (an id outside the vocabulary is an InputError, field "ids").
  std::string decode(const std::vector<int>& ids, bool skip_special = false) const;
  const std::string& token_string(int id) const { return spec_.vocab.at(static_cast<size_t>(id)); }
  std::string token_bytes(int id) const;
  const HfBpeSpec& spec() const { return spec_; }
  bool is_special(int id) const;

 private:
  HfBpeTokenizer() = default;
  void encode_segment(const std::string& text, bool at_start, std::vector<int>& out) const;
  void encode_piece(const std::string& piece, std::vector<int>& out) const;
  std::string normalize(const std::string& segment, bool at_start) const;
  HfBpeSpec spec_;
  std::vector<std::string> bytes_;                  // id → the bytes it decodes to
  std::unordered_map<std::string, int> id_of_;      // token string → id
  BpeRanks merges_;
  std::vector<bool> special_;
  std::vector<std::vector<size_t>> added_by_first_;  // first byte → indices into spec_.added
  int byte_id_[256] = {};                           // byte_level: a byte's token; sentencepiece: <0xNN> or −1
  std::shared_ptr<BpePieceCache> cache_;
};

}  // namespace ap
