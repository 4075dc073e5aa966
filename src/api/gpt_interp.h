// gpt_interp.h — the interpretability tools (core/interp/interp.h) behind JSON: the handlers of the
// call table's rows lens, attribute, ablate, patch, attribution_patch and head_scores, on the
// session's model. Each takes a spec and answers JSON text ({"ok":false,"error","field"} on bad
// input). A token ("token", "other", "target") is an id or a text that is exactly one token;
// prompts longer than the context keep their last block_size tokens.
//
//   lens(spec)        {"prompt","top_k" (5),"target"?,"mid" (true)} → {"tokens","points" (P),
//                      "top": P×T×k [{"id","text","p"}],"targets" (T ids),"target_p" (P×T),
//                      "target_rank" (P×T)}
//   attribute(spec)   {"prompt","token","other"?,"position"?} → {"tokens","position","token",
//                      "other","heads" (L×NH),"mlps","attn_bias","mlp_bias" (L),"wte","wpe",
//                      "ln_f_bias","sum","logit"}
//   ablate(spec)      {"prompt","mode" ("zero"|"mean"),"reference" ([texts], mean),"token"?,
//                      "other"?,"position"?} → {"tokens","loss","metric"?,"head_loss",
//                      "head_metric"? (L×NH),"mlp_loss","mlp_metric"? (L)}: ablated − clean
//   patch(spec)       {"clean","corrupted","token","other"?,"position"?} → {"tokens",
//                      "corrupted_tokens","clean_metric","corrupted_metric","resid" ((L+1)×T),
//                      "heads" (L×NH),"mlps" (L)}: the fraction of the metric recovered;
//                      "first","count": those cells alone. A session keeps the clean and
//                      corrupted runs for its next patch call of the same prompts and metric
//                      (GptPredict::kept_patch; forgotten when the weights change).
//   attribution_patch(spec)  the same spec and answer, to first order (one forward, one backward)
//   head_scores(spec) {"length" (0: min(20, block_size/2)),"batch" (4),"seed" (0)} →
//                      {"length","batch","induction","previous" (L×NH),
//                      "sequences" (batch × 2·length token ids: what they were read on)}
#pragma once

#include <string>

#include "core/interp/interp.h"
#include "core/model/gpt.h"
#include "core/model/train.h"
#include "core/tokenizers/tokenizer.h"
#include "formats/json.h"

namespace ap {

class GptSession;

// A session's last patch call's two whole runs and what they were made of (GptPredict keeps it,
// and forgets it when the weights change or another run replaces them).
struct KeptPatch {
  const GPT* model = nullptr;
  interp::Metric asked;  // the metric as the spec gave it
  interp::PatchRuns runs;
};

// The call `name` (lens, attribute, ablate, patch, attribution_patch, head_scores) on a model and
// its tokenizer: what `gpt interp` runs.
std::string interp_call(const std::string& name, const GPT& model, const CharTokenizer& tok, const std::string& spec);
// The same on the session's model ("no model yet", field "model", before create or load).
std::string interp_call(GptSession& s, const std::string& name, const std::string& spec);
// What a run with head_scores_interval records after a step: {"step","induction","previous"}
// (L×NH), head_scores with its defaults (length min(20, block_size/2), batch 4, seed 0: the same
// sequences at every step, so the curves compare).
json::Value head_scores_at_step(const Trainer& t);

}  // namespace ap
