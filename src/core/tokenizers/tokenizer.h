// tokenizer.h — a model's tokenizer: the playground's character tokenizer (one token per Unicode
// code point, so Chinese, accents and emoji are single tokens, as letters are), or GPT-2's
// byte-level BPE (bpe.h) for a model trained elsewhere (from_bpe).
//
// The vocabulary is the distinct code points of the training text, sorted by code point; token id
// i is chars()[i]. It is saved with a checkpoint (from_chars rebuilds it). A code point is one
// token even where a user sees one character made of several (e.g. "e" + U+0301 combining acute,
// or a flag emoji): no normalisation is done, so text decodes back byte for byte.
//
// Errors are InputError with `field` naming the input: "text" (training text), "prompt" (or the
// field given to encode), "vocab" (a saved vocabulary), "ids" (decode). Messages name the byte
// offset of invalid UTF-8 (utf8.h) and, for an unknown character, the character, its code point,
// its character index and byte offset (both counting from 0):
//   "Z" (U+005A) at character 3 (byte 3) of the prompt is not in the vocabulary of 27 characters
// Limits: at most kMaxVocab distinct characters.
//
// A model opened without its vocabulary (a Hugging Face GPT-2 or a nanoGPT checkpoint without
// meta.pkl: GPT-2's BPE, which this tokenizer is not) uses token_ids(V): text is its token ids,
// written "[15496][11][995]" (encode also takes them separated by spaces or commas), and a
// token's text is "[id]", so that a decoded text reads back to the same ids.
//
// With GPT-2's BPE: encode takes any text (bpe.h: it never fails), decode gives bytes (a
// character split across tokens is only whole in the joined bytes), token_text a piece as text
// (bpe_piece_text: "<0xF0>" for a byte that is not a whole character). The model's vocab_size may
// exceed the BPE's (nanoGPT pads GPT-2's 50,257 to 50,304): those ids decode to nothing and show as
// "<unused 50300>". chars() is empty. The same for a Hugging Face tokenizer.json (from_hf), whose
// encode also adds the special tokens its post-processor names (Llama's BOS).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/tokenizers/bpe.h"
#include "core/tokenizers/hf_bpe.h"
#include "core/base/utf8.h"

namespace ap {

// The largest vocabulary: 8192 distinct code points. Enough for any alphabetic script and for a
// few thousand Chinese characters (everyday Chinese uses ~3,500), while the embedding table stays
// small (8192 × n_embd 64 = 0.5 M parameters, 2 MiB) and a softmax over the vocabulary stays cheap.
constexpr int kMaxVocab = 8192;

class Tokenizer {
 public:
  // The distinct code points of `utf8`, sorted. Errors (field "text"): empty text, invalid UTF-8,
  // more than kMaxVocab distinct characters.
  static Tokenizer from_text(const std::string& utf8);
  // A saved vocabulary, checked: non-empty, at most kMaxVocab, each a Unicode scalar value,
  // strictly increasing (sorted, no repeats). Errors: field "vocab".
  static Tokenizer from_chars(std::vector<char32_t> chars);
  // Token ids as text, for a vocabulary of V tokens this tokenizer cannot spell (see above).
  static Tokenizer token_ids(int vocab_size);
  bool is_ids() const { return n_ids_ > 0; }
  // GPT-2's BPE for a model of `model_vocab` ids (at least the BPE's). Errors: field "vocab".
  static Tokenizer from_bpe(std::shared_ptr<const BpeTokenizer> bpe, int model_vocab);

  // A Hugging Face tokenizer.json's BPE (hf_bpe.h: the Llama family's) for a model of `model_vocab`
  // ids: encode adds the post-processor's special tokens (BOS where the file says), decode and
  // token_text as with GPT-2's BPE. Errors: field "vocab".
  static Tokenizer from_hf(std::shared_ptr<const HfBpeTokenizer> hf, int model_vocab);

  // The BPE, or null for the character tokenizer.
  const std::shared_ptr<const BpeTokenizer>& bpe() const { return bpe_; }
  const std::shared_ptr<const HfBpeTokenizer>& hf() const { return hf_; }

  int vocab_size() const {
    return bpe_ || hf_ ? bpe_vocab_ : n_ids_ > 0 ? n_ids_ : static_cast<int>(chars_.size());
  }
  const std::vector<char32_t>& chars() const { return chars_; }
  // The id of a code point, or -1 if it is not in the vocabulary.
  int id_of(char32_t cp) const;

  // Token ids of `utf8`. Errors (field `field`): invalid UTF-8; a character not in the vocabulary.
  // `field` also names the input in messages ("... of the prompt ..."). Empty text gives no ids.
  std::vector<int> encode(const std::string& utf8, const char* field = "prompt") const;
  // UTF-8 text of ids (with BPE: bytes); an id outside [0, vocab_size) is an InputError (field
  // "ids") naming its index and value.
  std::string decode(const std::vector<int>& ids) const;
  std::string decode(const int* ids, size_t n) const;
  // One token as UTF-8 text (throws like decode).
  std::string token_text(int id) const;

 private:
  explicit Tokenizer(std::vector<char32_t> chars);
  std::vector<char32_t> chars_;  // sorted, distinct
  std::vector<int> ascii_;       // id of each code point < 128, or -1 (a fast path for encode)
  int n_ids_ = 0;                // token_ids' vocabulary size; 0 for characters
  std::vector<int> encode_ids(const std::string& text, const char* field) const;
  std::shared_ptr<const BpeTokenizer> bpe_;
  std::shared_ptr<const HfBpeTokenizer> hf_;
  int bpe_vocab_ = 0;            // the model's vocab_size with either BPE
  // from_bpe and from_hf: a tokenizer with `bpe` in `slot`, once the model has a row for each of
  // its tokens (`none` and `named` name it in the errors).
  template <class Bpe>
  static Tokenizer with_bpe(std::shared_ptr<const Bpe> bpe, std::shared_ptr<const Bpe> Tokenizer::*slot,
                            int model_vocab, const char* none, const char* named);
};

// The name this class had when it held characters only (branches written before BPE use it).
using CharTokenizer = Tokenizer;

}  // namespace ap
