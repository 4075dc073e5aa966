// interp.h — the interpretability tools of ARENA's and TransformerLens' tutorials, on a GPT and a
// token sequence: the logit lens, direct logit attribution, ablation, activation patching,
// attribution patching, and the induction and previous-token scores of every head.
//
// All run one sequence at a time through hooked_run.h (the model's own kernels, every variant of
// gpt.h; the model's buffers untouched, so a training run or the page's prompt is left as it
// was; an opened model with typed weights stays typed: the runs read its matrices through
// GPT::matrix_forward, matrix_backward and matrix_rows, never converting it to float32). The
// metric of attribution, ablation and patching is m = logit[a] − logit[b] at one position (the
// last by default), or logit[a] alone when no b is given. Sums are in double, in a fixed order.
//
//  - logit_lens: the residual stream at each point (after the embeddings, after each layer's
//    attention — TransformerLens' resid_mid — and after each MLP) through ln_f (with that point's
//    own statistics) and the unembedding: the top-k tokens and the probability of a target token,
//    points × positions. The last point's is the model's own prediction, bit for bit.
//  - attribute (direct logit attribution): the residual at the final point is a sum of parts —
//    wte[id], wpe[pos], each head's z_h · W_O[:, h]ᵀ, each attn.c_proj bias, each MLP's output
//    without its bias, each mlp.c_proj bias (wpe only with learned positions; the biases 0 without
//    them). With ln_f's scale frozen (the position's rstd from this run), ln_f is linear: part ↦
//    ((part − mean(part)) · rstd ⊙ γ) · u with u = U[a] − U[b] (U the unembedding: wte, or lm_head) (RMSNorm: part · rstd ⊙ γ · u,
//    nothing subtracted), plus ln_f's bias β · u once. The parts sum to m.
//  - ablate: each head's z (all positions), then each MLP's output, replaced by zeros or by the mean
//    over reference sequences (per position: their first T tokens); the change in the loss (mean
//    cross-entropy of the prompt's next tokens) and in m, (L, NH) and (L).
//  - patch: clean and corrupted prompts of one length; the clean run's activation put into the
//    corrupted run — the residual entering each layer (and the last) at each position, each head's z
//    (all positions), each MLP's output — and (m_patched − m_corrupt) / (m_clean − m_corrupt): the
//    fraction of m recovered. Each forward starts at the patched layer from the corrupted cache
//    and unembeds the metric's position alone (the clean and corrupted runs' metrics likewise).
//  - attribution_patch: the same maps to first order, from the corrupted run's ∂m/∂activation:
//    Σ ∂m/∂act · (clean − corrupt) / (m_clean − m_corrupt), with ∂m/∂z for a head, ∂m/∂resid
//    (the stream after the MLP) for an MLP's output.
//  - head_scores: `batch` sequences of `length` seeded random tokens, each repeated once (2·length
//    tokens); a head's induction score is its mean weight from t to t − length + 1 over the second
//    copy (the token after the previous occurrence of t's token), its previous-token score its mean
//    weight from t to t − 1 over t ≥ 1 (Olsson et al. 2022).
// Errors: InputError naming the field ("ids", "corrupted", "token", "other", "position", "layer", "first",
// "reference", "length", "batch", "top_k").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/interp/hooked_run.h"

namespace ap::interp {

// A long sweep's progress: called with (done, total); returning false cancels it.
using Progress = std::function<bool(int done, int total)>;

// The metric m: logit[token] − logit[other] at `position` (−1: the last); other −1: logit[token].
struct Metric {
  int token = -1;
  int other = -1;
  int position = -1;
};

// ---------------------------------------------------------------- the logit lens
struct LensOptions {
  int top_k = 5;     // 1 … V
  int target = -1;   // the token followed at every position; −1: the model's own top token there
  bool mid = true;   // also the stream after each layer's attention
};
struct Lens {
  std::vector<std::string> points;  // (P): "embed", "0.attn", "0.mlp", …, "L−1.mlp" (without mid: "embed", "0", …)
  int T = 0, k = 0;
  std::vector<int> top_ids;         // (P, T, k), most likely first (the lower id among ties)
  std::vector<float> top_probs;     // (P, T, k)
  std::vector<int> targets;         // (T)
  std::vector<float> target_probs;  // (P, T)
  std::vector<int> target_ranks;    // (P, T): 0 for the most likely
};
Lens logit_lens(const GPT& model, const std::vector<int>& ids, const LensOptions& o);

// ---------------------------------------------------------------- direct logit attribution
struct Attribution {
  int position = 0, token = 0, other = -1;
  std::vector<float> heads;      // (L, NH)
  std::vector<float> mlps;       // (L): without mlp.c_proj's bias
  std::vector<float> attn_bias;  // (L): attn.c_proj's bias (0 without biases)
  std::vector<float> mlp_bias;   // (L): mlp.c_proj's bias
  float wte = 0, wpe = 0, ln_f_bias = 0;
  double sum = 0;                // every part
  double logit = 0;              // m from the run's logits
};
Attribution attribute(const GPT& model, const std::vector<int>& ids, const Metric& m);

// ---------------------------------------------------------------- ablation
enum class AblateMode { zero, mean };
struct Ablation {
  double loss = 0, metric = 0;           // the clean run's (metric 0 without a token)
  bool has_metric = false;
  std::vector<float> head_loss, head_metric;  // (L, NH): ablated − clean
  std::vector<float> mlp_loss, mlp_metric;    // (L)
  bool cancelled = false;
};
// reference: for mean ablation, sequences of at least ids.size() tokens (field "reference").
Ablation ablate(const GPT& model, const std::vector<int>& ids, AblateMode mode,
                const std::vector<std::vector<int>>& reference, const Metric& m, const Progress& progress = nullptr);

// ---------------------------------------------------------------- patching
struct Patching {
  double clean = 0, corrupted = 0;  // m of each run
  int T = 0;
  int first = 0, count = 0;  // the cells computed (patch): the others stay 0
  std::vector<float> resid;  // (L + 1, T): the residual entering each layer, and the last
  std::vector<float> heads;  // (L, NH)
  std::vector<float> mlps;   // (L)
  bool cancelled = false;
};
// The sweep's cells in order: the residual entering layer l at position t ((L + 1)·T, l major),
// each head (L·NH, layer major), each MLP (L). patch computes cells [first, first + count) (count
// −1: to the end), each independent of the others, so that a sweep split in parts (the page's
// workers) gives the same numbers as one; progress counts the part's cells.
int patch_cells(const GPTConfig& g, int T);
Patching patch(const GPT& model, const std::vector<int>& clean, const std::vector<int>& corrupted, const Metric& m,
               const Progress& progress = nullptr, int first = 0, int count = -1);
// The two whole runs a patching starts with (clean and corrupted, each to its metric), made once
// by patch_runs and reused by every part of one sweep: patch(model, runs, …) computes only the
// cells, so a sweep asked for cell by cell (the page's workers, its progress per cell) costs what
// one call does. `runs` must come from this model with its weights as they are now.
struct PatchRuns {
  Metric m;                       // resolved: position ≥ 0
  RunCache clean, corrupt;        // clean.ids, corrupt.ids: the prompts
  double denom = 0;               // m_clean − m_corrupt
  Patching result;                // T, each run's metric and the grids at 0, for the patching to fill
};
PatchRuns patch_runs(const GPT& model, const std::vector<int>& clean, const std::vector<int>& corrupted,
                     const Metric& m);
Patching patch(const GPT& model, const PatchRuns& runs, const Progress& progress = nullptr, int first = 0,
               int count = -1);
Patching attribution_patch(const GPT& model, const std::vector<int>& clean, const std::vector<int>& corrupted,
                           const Metric& m);

// ---------------------------------------------------------------- head scores
struct HeadScoreOptions {
  int length = 0;  // 0: min(20, block_size / 2)
  int batch = 4;   // 1 … 64
  uint64_t seed = 0;
};
struct HeadScores {
  int length = 0, batch = 0;
  std::vector<float> induction;  // (L, NH)
  std::vector<float> previous;   // (L, NH)
  std::vector<std::vector<int>> sequences;  // (batch, 2·length): the tokens they were read on
};
HeadScores head_scores(const GPT& model, const HeadScoreOptions& o);
// The repeated random sequences head_scores reads (batch of 2·length tokens each).
std::vector<std::vector<int>> repeated_tokens(int vocab_size, int length, int batch, uint64_t seed);

}  // namespace ap::interp
