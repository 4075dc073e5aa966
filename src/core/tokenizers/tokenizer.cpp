// tokenizer.cpp — a model's tokenizer: characters, or GPT-2's BPE (see tokenizer.h).
#include "core/tokenizers/tokenizer.h"

#include <algorithm>

#include "core/base/input_error.h"

namespace ap {

namespace {

// The vocabulary as messages show it: "\n =abcdefghij" (escaped, quoted), when it is short enough
// to read; empty otherwise.
std::string vocabulary_text(const std::vector<char32_t>& chars) {
  if (chars.size() > 100) return "";
  std::string out;
  for (char32_t c : chars) {
    const std::string d = describe_char(c);              // "\"x\" (U+0078)"
    out += d.substr(1, d.rfind("\" (U+") - 1);           // x, or its escape
  }
  return "\"" + out + "\"";
}

}  // namespace

Tokenizer::Tokenizer(std::vector<char32_t> chars) : chars_(std::move(chars)), ascii_(128, -1) {
  for (size_t i = 0; i < chars_.size() && chars_[i] < 128; ++i) ascii_[chars_[i]] = static_cast<int>(i);
}

Tokenizer Tokenizer::from_text(const std::string& utf8) {
  if (utf8.empty()) throw InputError("the text is empty", "text");
  const std::vector<char32_t> cps = utf8_decode(utf8, "text");
  // A bitmap over every code point (136 KiB) finds the distinct ones in one pass, already sorted.
  std::vector<bool> seen(0x110000, false);
  long long distinct = 0;
  for (char32_t c : cps)
    if (!seen[c]) { seen[c] = true; ++distinct; }
  if (distinct > kMaxVocab)
    throw InputError("the text has " + std::to_string(distinct) + " distinct characters, more than the limit of " +
                         std::to_string(kMaxVocab) + " a vocabulary can hold",
                     "text");
  std::vector<char32_t> chars;
  chars.reserve(static_cast<size_t>(distinct));
  for (char32_t c = 0; c < 0x110000; ++c)
    if (seen[c]) chars.push_back(c);
  return Tokenizer(std::move(chars));
}

Tokenizer Tokenizer::from_chars(std::vector<char32_t> chars) {
  if (chars.empty()) throw InputError("the vocabulary is empty", "vocab");
  if (chars.size() > static_cast<size_t>(kMaxVocab))
    throw InputError("the vocabulary has " + std::to_string(chars.size()) + " characters, more than the limit of " +
                         std::to_string(kMaxVocab),
                     "vocab");
  for (size_t i = 0; i < chars.size(); ++i) {
    if (!is_scalar_value(chars[i]))
      throw InputError("character " + std::to_string(i) + " of the vocabulary (counting from 0) is " +
                           describe_char(chars[i]) + ", not a Unicode scalar value (a surrogate or above U+10FFFF)",
                       "vocab");
    if (i > 0 && chars[i] == chars[i - 1])
      throw InputError("character " + std::to_string(i) + " of the vocabulary (counting from 0), " +
                           describe_char(chars[i]) + ", repeats the one before it",
                       "vocab");
    if (i > 0 && chars[i] < chars[i - 1])
      throw InputError("the vocabulary is not sorted by code point: character " + std::to_string(i) +
                           " (counting from 0), " + describe_char(chars[i]) + ", comes after " +
                           describe_char(chars[i - 1]),
                       "vocab");
  }
  return Tokenizer(std::move(chars));
}

Tokenizer Tokenizer::token_ids(int vocab_size) {
  if (vocab_size < 1) throw InputError("the vocabulary is empty", "vocab");
  Tokenizer t(std::vector<char32_t>{});
  t.n_ids_ = vocab_size;
  return t;
}

// "[15496][11]", "15496 11" or "15496, 11" → ids, each checked against the vocabulary.
std::vector<int> Tokenizer::encode_ids(const std::string& text, const char* field) const {
  const std::string what = field ? field : "input";
  std::vector<int> ids;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == ',' || c == '[' || c == ']' || c == '\n' || c == '\t') { ++i; continue; }
    if (c < '0' || c > '9')
      throw InputError("this model has no vocabulary of characters (GPT-2's BPE tokens): give the " + what +
                           " as token ids, like [15496][11][995] or 15496 11 995; byte " + std::to_string(i) +
                           " (counting from 0) is " + describe_char(static_cast<unsigned char>(c)),
                       field ? field : "");
    long long v = 0;
    const size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && v <= n_ids_) v = v * 10 + (text[i++] - '0');
    if (v >= n_ids_)
      throw InputError("token id " + text.substr(start, i - start) + " at byte " + std::to_string(start) + " of the " +
                           what + " is outside the vocabulary: ids run from 0 to " + std::to_string(n_ids_ - 1),
                       field ? field : "");
    ids.push_back(static_cast<int>(v));
  }
  return ids;
}

template <class Bpe>
Tokenizer Tokenizer::with_bpe(std::shared_ptr<const Bpe> bpe, std::shared_ptr<const Bpe> Tokenizer::*slot,
                              int model_vocab, const char* none, const char* named) {
  if (!bpe) throw InputError(none, "vocab");
  if (model_vocab < bpe->vocab_size())
    throw InputError("the model's vocab_size is " + std::to_string(model_vocab) + " but its " + named + " has " +
                         std::to_string(bpe->vocab_size()) + " tokens: the model has no row for the last ones",
                     "vocab");
  Tokenizer t(std::vector<char32_t>{});
  t.*slot = std::move(bpe);
  t.bpe_vocab_ = model_vocab;
  return t;
}

Tokenizer Tokenizer::from_bpe(std::shared_ptr<const BpeTokenizer> bpe, int model_vocab) {
  return with_bpe(std::move(bpe), &Tokenizer::bpe_, model_vocab, "no BPE tokenizer", "BPE tokenizer");
}

Tokenizer Tokenizer::from_hf(std::shared_ptr<const HfBpeTokenizer> hf, int model_vocab) {
  return with_bpe(std::move(hf), &Tokenizer::hf_, model_vocab, "no tokenizer.json tokenizer", "tokenizer.json");
}

int Tokenizer::id_of(char32_t cp) const {
  if (n_ids_ > 0 || bpe_ || hf_) return -1;
  if (cp < 128) return ascii_[cp];
  const auto it = std::lower_bound(chars_.begin(), chars_.end(), cp);
  return it != chars_.end() && *it == cp ? static_cast<int>(it - chars_.begin()) : -1;
}

std::vector<int> Tokenizer::encode(const std::string& utf8, const char* field) const {
  if (bpe_) return bpe_->encode(utf8);
  if (hf_) return hf_->encode(utf8, true);
  if (n_ids_ > 0) return encode_ids(utf8, field);
  const std::vector<char32_t> cps = utf8_decode(utf8, field);
  std::vector<int> ids(cps.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    const int id = id_of(cps[i]);
    if (id < 0) {
      size_t byte = 0;
      for (size_t k = 0; k < i; ++k) byte += utf8_encode(cps[k]).size();
      const std::string known = vocabulary_text(chars_);
      throw InputError(describe_char(cps[i]) + " at character " + std::to_string(i) + " (byte " + std::to_string(byte) +
                           ", both counting from 0) of the " + (field ? field : "input") +
                           " is not in the vocabulary of " + std::to_string(chars_.size()) + " characters" +
                           (known.empty() ? "" : ": " + known),
                       field ? field : "");
    }
    ids[i] = id;
  }
  return ids;
}

std::string Tokenizer::decode(const int* ids, size_t n) const {
  std::string out;
  out.reserve(n);
  if (hf_) {  // the tokenizer's own decoder (byte fallback, "▁" → " ", …); padding ids decode to nothing
    std::vector<int> known;
    for (size_t i = 0; i < n; ++i) {
      check_token_id(ids[i], i, vocab_size());
      if (ids[i] < hf_->vocab_size()) known.push_back(ids[i]);
    }
    return hf_->decode(known);
  }
  for (size_t i = 0; i < n; ++i) {
    check_token_id(ids[i], i, vocab_size());
    if (bpe_) {
      if (ids[i] < bpe_->vocab_size()) out += bpe_->token_bytes(ids[i]);  // padding ids decode to nothing
    } else if (n_ids_ > 0) {
      out += "[" + std::to_string(ids[i]) + "]";
    } else {
      utf8_append(out, chars_[ids[i]]);
    }
  }
  return out;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const { return decode(ids.data(), ids.size()); }

std::string Tokenizer::token_text(int id) const {
  if (bpe_ && id >= bpe_->vocab_size() && id < vocab_size()) return "<unused " + std::to_string(id) + ">";
  if (hf_) {
    check_token_id(id, 0, vocab_size());
    return id >= hf_->vocab_size() ? "<unused " + std::to_string(id) + ">" : bpe_piece_text(hf_->token_bytes(id));
  }
  return bpe_ ? bpe_piece_text(decode(&id, 1)) : decode(&id, 1);
}

}  // namespace ap
