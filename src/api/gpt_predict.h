// gpt_predict.h — the next-token distribution behind JSON (next_token.h's numbers, one writer for
// every caller): GptSession::next_token (defined in gpt_predict.cpp) and the JSON of a distribution
// and of a draw, which a generation step reuses.
//
//   next_token(spec)  spec {"prompt"?, "temperature", "top_k", "top_p", "greedy", "show"} →
//                     {"tokens" (the context's labels), "vocab_size", "temperature", "top_k",
//                      "top_p", "greedy" (the options answered), "kept", "kept_mass",
//                      "dropped_mass", "entropy", "entropy_full", "max_logit",
//                      "top":[{"id","text","logit","p","p_full","kept"}] (the `show` most likely,
//                      default 10, kept or not)}.
//     With "prompt", the model runs once over its last block_size tokens and the session keeps that
//     position's logits; without it, the kept logits are reshaped again (no forward pass: what a
//     slider costs). Training, create and load forget them.
//   surprisal(spec)   spec {"text": T} or {"validation": true} → {"windows":[{"offset","tokens"
//                     (labels, n + 1),"losses" (n: −log p of tokens[1 …], nats),"mean"}],"count",
//                     "mean","step"}: inspect.h's windows. For a text (at most 65,536 bytes, at
//                     least two characters) windows of block_size predictions overlapping by one
//                     token, mean the mean −log p over every predicted token; for the validation
//                     windows, mean is the validation loss evaluate() gives, bit for bit.
// Errors name the field: "prompt" (empty, unknown character, or none run yet), "temperature",
// "top_k", "top_p", "show", "logits" (a diverged model), "text" (surprisal: none, too short,
// unknown character, a model loaded without its text for the validation windows).
#pragma once

#include "core/model/next_token.h"
#include "core/tokenizers/tokenizer.h"
#include "formats/json.h"

namespace ap {

constexpr size_t kMaxSurprisalText = size_t(1) << 16;  // bytes

// The options of a spec's "temperature", "top_k", "top_p", "greedy" (absent: 1, 0, 1, false), each
// in its JSON range; NextTokenOptions::validate checks them against the vocabulary.
NextTokenOptions read_next_token_options(const json::Value& spec);

// {"temperature","top_k","top_p","greedy","kept","kept_mass","dropped_mass","entropy",
//  "entropy_full","max_logit","top":[…]}
json::Value distribution_json(const NextTokenDistribution& d, const NextTokenOptions& o, const CharTokenizer& tok);

// {"token","p","u","coin","sum","from","to","kept","greedy"}
json::Value draw_json(const NextTokenDraw& d);

}  // namespace ap
