// inspect.cpp — surprisal and attention summaries (see inspect.h).
#include "core/model/inspect.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "core/kernels/kernels.h"

namespace ap {

std::vector<SurprisalWindow> text_surprisal(GPT& model, const std::vector<int>& ids) {
  const int64_t n = static_cast<int64_t>(ids.size());
  if (n < 2)
    throw InputError("the text has " + std::to_string(n) +
                         " token: give at least two (the first is only context for the second)",
                     "text");
  const int S = model.config().block_size;
  std::vector<float> probs(static_cast<size_t>(model.config().vocab_size));
  std::vector<SurprisalWindow> out;
  for (int64_t start = 0; start + 1 < n; start += S) {
    const int T = static_cast<int>(std::min<int64_t>(S, n - 1 - start));
    SurprisalWindow w;
    w.offset = start;
    w.tokens.assign(ids.begin() + start, ids.begin() + start + T + 1);
    // The forward without targets, then the loss kernel row by row: a model opened for inference
    // has no loss buffers (and needs none; one row of probabilities is scratch). Each row's loss
    // is the kernel's, and the mean is summed as GPT::forward sums it: the same bits as a
    // forward with targets.
    model.forward(w.tokens.data(), nullptr, 1, T);
    const int V = model.config().vocab_size;
    const kernels::Kernels& k = kernels::active();
    w.losses.resize(static_cast<size_t>(T));
    float sum = 0.0f;
    for (int t = 0; t < T; ++t) {
      k.crossentropy_forward(&w.losses[static_cast<size_t>(t)], probs.data(), model.logits() + static_cast<size_t>(t) * V,
                             &w.tokens[static_cast<size_t>(t) + 1], 1, V);
      sum += w.losses[static_cast<size_t>(t)];
    }
    w.mean = sum / static_cast<float>(T);
    out.push_back(std::move(w));
  }
  return out;
}

float surprisal_mean(const std::vector<SurprisalWindow>& windows) {
  double sum = 0.0;
  int64_t count = 0;
  for (const SurprisalWindow& w : windows) {
    for (float l : w.losses) sum += l;
    count += static_cast<int64_t>(w.losses.size());
  }
  return count ? static_cast<float>(sum / static_cast<double>(count)) : 0.0f;
}

std::vector<SurprisalWindow> validation_surprisal(Trainer& trainer, float* loss) {
  if (!trainer.has_data())
    throw InputError("this model was loaded without the text it was trained on: give the text again to score "
                     "its validation windows",
                     "text");
  GPT& m = trainer.model();
  const std::vector<int>& val = trainer.dataset().val;
  // The batches Trainer makes (train.cpp): the same windows, the same order, the same sums.
  const ValidationBatches batches(val, trainer.config().batch_size, m.config().block_size, trainer.config().eval_batches);
  const int B = batches.batch_size(), T = batches.block_size();
  std::vector<int> inputs(static_cast<size_t>(B) * T), targets(inputs.size());
  std::vector<SurprisalWindow> out;
  double sum = 0.0;
  for (int i = 0; i < batches.num_batches(); ++i) {
    batches.batch(i, inputs.data(), targets.data(), val);
    sum += m.forward(inputs.data(), targets.data(), B, T);
    for (int b = 0; b < B; ++b) {
      SurprisalWindow w;
      w.offset = batches.offsets()[static_cast<size_t>(i) * B + b];
      const int* in = inputs.data() + static_cast<size_t>(b) * T;
      w.tokens.assign(in, in + T);
      w.tokens.push_back(targets[static_cast<size_t>(b) * T + T - 1]);
      w.losses.assign(m.losses() + static_cast<size_t>(b) * T, m.losses() + static_cast<size_t>(b + 1) * T);
      float s = 0.0f;
      for (float l : w.losses) s += l;
      w.mean = s / static_cast<float>(T);
      out.push_back(std::move(w));
    }
  }
  *loss = static_cast<float>(sum / batches.num_batches());
  return out;
}

PositionLoss loss_by_position(Trainer& trainer, int context, int max_batches) {
  if (!trainer.has_data())
    throw InputError("this model was loaded without the text it was trained on: give the text again to evaluate it",
                     "text");
  GPT& m = trainer.model();
  const GPTConfig& cfg = m.config();
  if (context < 1 || context > kMaxBlockSize)
    throw InputError("context is " + std::to_string(context) + ": it must be 1 to " + std::to_string(kMaxBlockSize),
                     "context");
  if (context > cfg.block_size && cfg.pos == Positions::learned)
    throw InputError("learned positions have a row of wpe for each of the " + std::to_string(cfg.block_size) +
                         " positions the model was made with: there is no wpe row for position " +
                         std::to_string(cfg.block_size) + " and on, so it cannot be evaluated at " +
                         std::to_string(context) + " (RoPE, ALiBi and none have no such table)",
                     "context");
  const std::vector<int>& val = trainer.dataset().val;
  const ValidationBatches batches(val, trainer.config().batch_size, context, max_batches);
  const int B = batches.batch_size(), T = context;
  // the same parameters in a model of the longer context (its RoPE tables are made for it)
  std::unique_ptr<GPT> longer;
  GPT* model = &m;
  if (context > cfg.block_size) {
    GPTConfig c = cfg;
    c.block_size = context;
    longer = std::make_unique<GPT>(c);
    std::copy(m.params(), m.params() + m.num_parameters(), longer->params());
    model = longer.get();
  }
  std::vector<int> inputs(static_cast<size_t>(B) * T), targets(inputs.size());
  std::vector<double> sums(static_cast<size_t>(T), 0.0);
  double total = 0.0;
  for (int i = 0; i < batches.num_batches(); ++i) {
    batches.batch(i, inputs.data(), targets.data(), val);
    model->forward(inputs.data(), targets.data(), B, T);
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t) {
        const float l = model->losses()[static_cast<size_t>(b) * T + t];
        sums[static_cast<size_t>(t)] += l;
        total += l;
      }
  }
  PositionLoss r;
  r.context = T;
  r.windows = batches.num_batches() * B;
  for (double s : sums) r.losses.push_back(static_cast<float>(s / r.windows));
  r.mean = static_cast<float>(total / (static_cast<double>(r.windows) * T));
  return r;
}

void head_mean(float* out, const float* weights, int L, int NH, int T) {
  const size_t TT = static_cast<size_t>(T) * T;
  for (int l = 0; l < L; ++l) {
    float* o = out + static_cast<size_t>(l) * TT;
    for (size_t i = 0; i < TT; ++i) {
      float s = 0.0f;
      for (int h = 0; h < NH; ++h) s += weights[(static_cast<size_t>(l) * NH + h) * TT + i];
      o[i] = s / static_cast<float>(NH);
    }
  }
}

void attention_rollout(float* out, const float* mean, int L, int T) {
  const size_t TT = static_cast<size_t>(T) * T;
  std::vector<float> a(TT), prev(TT);
  for (int l = 0; l < L; ++l) {
    const float* m = mean + static_cast<size_t>(l) * TT;
    // Ã = ½·A + ½·I, each row renormalised (a row the mask hides entirely is the identity's)
    for (int i = 0; i < T; ++i) {
      float sum = 0.0f;
      for (int j = 0; j < T; ++j) {
        const float v = 0.5f * m[static_cast<size_t>(i) * T + j] + (i == j ? 0.5f : 0.0f);
        a[static_cast<size_t>(i) * T + j] = v;
        sum += v;
      }
      for (int j = 0; j < T; ++j) a[static_cast<size_t>(i) * T + j] /= sum;
    }
    float* r = out + static_cast<size_t>(l) * TT;
    if (l == 0) {
      std::memcpy(r, a.data(), sizeof(float) * TT);
    } else {
      // R_l = Ã_l · R_{l−1}
      std::memcpy(prev.data(), out + static_cast<size_t>(l - 1) * TT, sizeof(float) * TT);
      for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
          float s = 0.0f;
          for (int k = 0; k < T; ++k) s += a[static_cast<size_t>(i) * T + k] * prev[static_cast<size_t>(k) * T + j];
          r[static_cast<size_t>(i) * T + j] = s;
        }
    }
  }
}

}  // namespace ap
