// gpt_predict.h — the session's predicting and inspecting part (the calls' table's role "predict"):
// GptPredict, one in each GptSession, works on its run and holds what these calls leave (the
// generator and its KV cache's arrays, the last prompt's attention maps, the next-token logits).
// Its calls are documented in gpt_session.h, which forwards them here; gpt_predict.cpp writes them
// (gpt_walk.cpp the block walk). Also the next-token distribution behind JSON (next_token.h's
// numbers, one writer for every caller) and the JSON of a draw, which a generation step reuses.
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

#include <memory>
#include <string>
#include <vector>

#include "core/model/generate.h"
#include "core/model/next_token.h"
#include "core/tokenizers/tokenizer.h"
#include "formats/json.h"

namespace ap {

struct KeptPatch;  // gpt_interp.cpp: the last patch call's two whole runs

constexpr size_t kMaxSurprisalText = size_t(1) << 16;  // bytes

// The options of a spec's "temperature", "top_k", "top_p", "greedy" (absent: 1, 0, 1, false), each
// in its JSON range; NextTokenOptions::validate checks them against the vocabulary.
NextTokenOptions read_next_token_options(const json::Value& spec);

// {"temperature","top_k","top_p","greedy","kept","kept_mass","dropped_mass","entropy",
//  "entropy_full","max_logit","top":[…]}
json::Value distribution_json(const NextTokenDistribution& d, const NextTokenOptions& o, const CharTokenizer& tok);

// {"token","p","u","coin","sum","from","to","kept","greedy"}
json::Value draw_json(const NextTokenDraw& d);

class GptSession;

class GptPredict {
 public:
  explicit GptPredict(GptSession& s) : s_(s) {}
  std::string sample(const std::string& spec_json);
  std::string generate_start(const std::string& spec_json);
  std::string generate_next();
  std::string run_prompt(const std::string& prompt);
  std::string head_spec(int layer, int head);
  std::string attention_maps_json() const;
  std::string attention_summary();
  std::string next_token(const std::string& spec_json);
  std::string surprisal(const std::string& spec_json);
  std::string block_trace(const std::string& spec_json);  // gpt_walk.cpp
  std::string weight_row(const std::string& spec_json);   // gpt_walk.cpp
  std::string encode(const std::string& text);
  std::string decode(const std::string& ids_json);
  // The run's weights changed or another run replaced it: the generator, the prompts and the
  // kept patch runs go.
  void forget();
  // The last patch call's clean and corrupted runs (gpt_interp.cpp), for the next patch call of the
  // same prompts and metric: a sweep asked cell by cell runs them once.
  std::shared_ptr<KeptPatch>& kept_patch() { return kept_patch_; }

  const std::vector<float>& logits() const { return logits_; }
  const std::vector<float>& full_logits() const { return full_logits_; }
  const std::vector<float>& attention_weights() const { return maps_; }
  const std::vector<float>& attention_mean() const { return mean_; }
  const std::vector<float>& attention_rollout() const { return rollout_; }
  const std::vector<float>& cache_attention() const { return cache_att_; }
  const std::vector<float>& cache_keys() const { return cache_k_; }
  const std::vector<float>& cache_values() const { return cache_v_; }

 private:
  json::Value step_info();  // a generation step's answer (throws; the callers guard)

  GptSession& s_;
  std::unique_ptr<Generator> generator_;
  std::vector<float> logits_, full_logits_, maps_, cache_att_, cache_k_, cache_v_;
  std::vector<float> mean_, rollout_;  // attention_summary's
  std::vector<int> prompt_ids_;  // run_prompt's tokens (cropped to block_size)
  NextTokenLogits next_logits_;  // next_token's: the last position's logits of next_ids_
  std::vector<int> next_ids_;
  std::shared_ptr<KeptPatch> kept_patch_;
};

}  // namespace ap
