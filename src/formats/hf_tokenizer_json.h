// hf_tokenizer_json.h — Hugging Face's tokenizer.json (with tokenizer_config.json when there is
// one) read into the core's HfBpeTokenizer (core/tokenizers/hf_bpe.h).
//
// What is read, and everything else refused by its name (InputError, field "tokenizer.json" or
// "tokenizer_config.json", naming the key: "pre_tokenizer.pretokenizers[0].type \"Whitespace\""):
//   model          type "BPE": vocab (token → id), merges ("a b" strings or ["a", "b"] pairs),
//                  unk_token, byte_fallback, fuse_unk, ignore_merges; dropout null;
//                  continuing_subword_prefix / end_of_word_suffix null or "".
//   added_tokens   id, content, special; single_word, lstrip, rstrip false; normalized true only
//                  where there is no normalizer. Ids beyond the model's vocabulary extend it.
//   normalizer     null, Sequence, NFC, Prepend, Replace of a String.
//   pre_tokenizer  null, Sequence, Split (a pattern split_patterns.h knows, behavior "Isolated",
//                  invert false), Digits (individual_digits), ByteLevel (which makes the model
//                  byte-level; use_regex adds GPT-2's split; add_prefix_space only as the first
//                  step), Metaspace ("▁", split false).
//   post_processor null, ByteLevel, Sequence, TemplateProcessing ("single": special tokens around
//                  the one sequence "A").
//   decoder        byte-level: ByteLevel (alone or in a Sequence); otherwise a Sequence of
//                  Replace "▁"→" ", ByteFallback, Fuse, Strip (of leading " "), Metaspace.
// tokenizer_config.json: bos_token and eos_token (a string or {"content": …}) name the BOS/EOS ids
// given back. Its add_bos_token is not applied: the special tokens encode adds are the
// post-processor's, as the tokenizers libraries (Rust, and JS: the test's reference) do;
// transformers' Llama tokenizer classes rebuild that post-processor from add_bos_token, which for
// the files tested gives the same ids.
#pragma once

#include <memory>
#include <string>

#include "core/tokenizers/hf_bpe.h"

namespace ap {

struct HfTokenizerFiles {
  std::shared_ptr<const HfBpeTokenizer> tokenizer;
  int bos_id = -1, eos_id = -1;  // −1: none named
};

// config_json may be empty (no tokenizer_config.json).
HfTokenizerFiles load_hf_tokenizer(const std::string& tokenizer_json, const std::string& config_json = "");

}  // namespace ap
