// split_patterns.h — the pre-tokenizer patterns of Hugging Face tokenizer.json files, matched by
// hand (no regex engine): each known pattern is recognised by its exact text and refused by name
// otherwise, so a file never gets a split it did not ask for.
//
// Known patterns (the "Split" pre-tokenizer's {"Regex": …} with behavior "Isolated"):
//   llama3  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   qwen2   the same with \p{N} (one digit a piece): Qwen2, Qwen2.5, Qwen3
//   gpt2    GPT-2's 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ (the
//           ByteLevel pre-tokenizer's use_regex; bpe_pretokenize in bpe.h)
// The classes are those of unicode_classes.h (\s is White_Space). "(?i:" folds case as Oniguruma
// does for these letters: 's also matches 'S and 'ſ (U+017F, whose case fold is s).
// Bytes that are not valid UTF-8 are each one character of none of the classes (like a
// punctuation mark): the split never fails and the pieces cover the text.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace ap {

enum class SplitPattern { gpt2, llama3, qwen2 };

// The pattern whose text is `regex` exactly; false if none (the caller refuses it by name).
bool split_pattern_of(const std::string& regex, SplitPattern& out);
const char* split_pattern_name(SplitPattern p);
const std::string& split_pattern_text(SplitPattern p);

// The pieces of text[at, at + len) under the pattern, as (offset, length) in the text, appended.
void split_with(SplitPattern p, const std::string& text, size_t at, size_t len,
                std::vector<std::pair<size_t, size_t>>& out);

// The Digits pre-tokenizer with individual_digits: each \p{N} character its own piece, the runs
// between them pieces (appended, offsets in the text).
void split_digits(const std::string& text, size_t at, size_t len, std::vector<std::pair<size_t, size_t>>& out);

}  // namespace ap
