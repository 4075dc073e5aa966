// gguf_tokenizer.h — a GGUF file's tokenizer (tokenizer.ggml.*, gguf.h's TokenizerData) as the core's
// HfBpeTokenizer (core/tokenizers/hf_bpe.h), encoding as the tokenizer.json it was converted from does
// under Hugging Face's tokenizers library (the reference of tests/hf_tokenizer_reference_test.mjs).
//
// tokenizer.ggml.model "gpt2": byte-level BPE, tokens spelled in GPT-2's byte symbols, merges "a b".
//   tokenizer.ggml.pre names the split (llama.cpp's names): llama-bpe, llama3, llama-v3 (Llama 3: the
//   llama3 pattern, and ignore_merges as llama.cpp sets it); qwen2, deepseek-r1-qwen (the qwen2
//   pattern, and NFC as Qwen's tokenizer.json normalizes; llama.cpp itself does not); smollm (each
//   digit a piece, then GPT-2's pattern); gpt-2 (GPT-2's pattern). A missing or other `pre` ("default",
//   …: splits we do not have) is refused by name.
// tokenizer.ggml.model "llama": SentencePiece BPE with byte fallback (Llama 2, Mistral, TinyLlama):
//   tokens with "▁" for a space, and scores. The merges are made from the scores as transformers'
//   converter makes tokenizer.json's from a SentencePiece model (SentencePieceExtractor): for every
//   normal token (token_type 1, or any but <0xNN> and the control/unknown ones when there are no
//   types), each split of its characters into two tokens is a merge, ranked by the token's score,
//   highest first, ties by token id, then the left part's id, then the right's. Encoding then picks
//   the pair whose merge has the best rank: for the scores SentencePiece's BPE trainer writes (one per
//   token) that is llama.cpp's llm_tokenizer_spm (the bigram of best score, leftmost first) but for
//   ties between two splits of one token. Byte fallback when all 256 <0xNN> tokens are there (else
//   the unknown token); a space prefix ("▁" before each segment, as the Prepend normalizer and
//   llama.cpp's add_space_prefix) unless tokenizer.ggml.add_space_prefix is false; decoding strips
//   that one leading space.
// Both: token_type 3 (control) and 2 (unknown) are special added tokens, 4 (user-defined) added ones
// (split out of the text before the model, as Hugging Face does with added_tokens); add_bos_token /
// add_eos_token true put the BOS / EOS id around encode's ids (absent: not). bos_id / eos_id are
// tokenizer.ggml.bos_token_id / eos_token_id. Errors are InputError naming the key (field the key).
#pragma once

#include <string>

#include "formats/gguf.h"
#include "formats/hf_tokenizer_json.h"

namespace ap {

// The split names tokenizer.ggml.pre may hold, and the model names tokenizer.ggml.model.
extern const char* const kGgufPreTokenizers;

HfTokenizerFiles load_gguf_tokenizer(const gguf::File& f, const std::string& what);

}  // namespace ap
