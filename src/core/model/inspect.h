// inspect.h — what a trained model does with a text, beyond its next token: the surprisal of
// every token of a text (the loss, token by token), and two summaries of its attention maps.
//
// Surprisal: token i of a text gets p_i = the probability the model gave it from the tokens
// before it, and −log p_i (nats), the cross-entropy the loss averages. A text longer than the
// model's context is read in windows of block_size predictions (block_size + 1 tokens) that
// overlap by one token, as the training windows are: each window's first token is context only,
// and the model's context starts again there. The values are the kernel that computes the training
// loss, applied to the forward's logits, so a window's mean is exactly the loss GPT::forward
// returns for it — and a model opened for inference (no loss buffers) is scored too;
// validation_surprisal scores the validation windows and averages
// them as Trainer::evaluate() does, giving the same value, bit for bit.
//
// Attention summaries of a prompt's maps (L, NH, T, T):
//  - head_mean: each layer's heads averaged, (L, T, T): where a layer as a whole looks. It hides
//    heads that disagree (a head looking back and one looking at itself average to neither).
//  - attention_rollout (Abnar and Zuidema, 2020): Ã_l = ½·mean_l + ½·I (the residual connection
//    as an identity), rows renormalised; R_1 = Ã_1, R_l = Ã_l·R_{l−1}, (L, T, T): how much of each
//    earlier token's embedding can reach a position by layer l if the weights were the whole
//    story. It ignores the values, the MLPs and the LayerNorms, so it is a heuristic of flow, not
//    an attribution of the output.
// Sums are in a fixed order (float, left to right): the same bits natively and in wasm.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/gpt.h"
#include "core/model/train.h"

namespace ap {

struct SurprisalWindow {
  int64_t offset = 0;         // where its first token is in the text (or in the validation data)
  std::vector<int> tokens;    // (n + 1): the first is context only
  std::vector<float> losses;  // (n): −log p of tokens[1 …], each from the tokens before it
  float mean = 0.0f;          // the forward's loss over the window (mean of losses)
};

// Every token of ids (at least two) after the first, in windows of up to block_size predictions.
// Throws InputError (field "text") for fewer than two tokens.
std::vector<SurprisalWindow> text_surprisal(GPT& model, const std::vector<int>& ids);

// The mean of −log p over every predicted token of the windows (double sum, then float).
float surprisal_mean(const std::vector<SurprisalWindow>& windows);

// The validation windows Trainer::evaluate() scores (offsets into the validation data), and in
// *loss their mean as evaluate() computes it: the same value, bit for bit. Throws InputError
// (field "text") for a model loaded without its text.
std::vector<SurprisalWindow> validation_surprisal(Trainer& trainer, float* loss);

// The validation loss by position at a context of `context` tokens, which may be longer than the
// model was trained at (block_size) when its positions allow it: RoPE, ALiBi and none have no table
// of positions, so a copy of the model with block_size = context (the same parameters) reads
// windows of context + 1 tokens of the validation split (as validation_surprisal, up to
// max_batches batches of the run's batch size); learned positions have block_size rows of wpe and
// are refused past it (InputError field "context", naming wpe). losses[t]: the mean −log p of the
// prediction at position t over the windows; mean: over every prediction (double sums, then float).
struct PositionLoss {
  int context = 0, windows = 0;
  std::vector<float> losses;
  float mean = 0.0f;
};
PositionLoss loss_by_position(Trainer& trainer, int context, int max_batches);

// head_mean out (L, T, T) from weights (L, NH, T, T).
void head_mean(float* out, const float* weights, int L, int NH, int T);
// attention_rollout out (L, T, T) from the head means (L, T, T).
void attention_rollout(float* out, const float* mean, int L, int T);

}  // namespace ap
