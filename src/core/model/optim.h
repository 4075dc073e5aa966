// optim.h — training the GPT: AdamW over the flat parameter buffer, gradient clipping by global
// norm, and nanoGPT's learning-rate schedule (linear warm-up, then cosine decay to min_lr).
//
// AdamW is torch.optim.AdamW's update with decoupled weight decay, applied only to the tensors
// whose ParamTensor::decay is set (the matrices: embeddings and Linear weights, not biases or
// LayerNorm), as nanoGPT's configure_optimizers does. The moments m and v are flat buffers of the
// parameters' layout, so a checkpoint stores them under the same names.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/gpt.h"

namespace ap {

struct AdamWConfig {
  float lr = 1e-3f;  // the peak learning rate (the schedule scales it)
  float beta1 = 0.9f;
  float beta2 = 0.99f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
};

class AdamW {
 public:
  AdamW(const std::vector<ParamTensor>& tensors, int64_t num_parameters, AdamWConfig config = {});
  // One update with learning rate lr: t += 1, then every tensor with its own weight decay.
  void step(float* params, const float* grads, float lr);
  const AdamWConfig& config() const { return config_; }
  int64_t t() const { return t_; }  // updates done
  std::vector<float>& m() { return m_; }
  std::vector<float>& v() { return v_; }
  const std::vector<float>& m() const { return m_; }
  const std::vector<float>& v() const { return v_; }
  // For a checkpoint's resume: the number of updates done so far.
  void set_t(int64_t t) { t_ = t; }

 private:
  std::vector<ParamTensor> tensors_;
  AdamWConfig config_;
  std::vector<float> m_, v_;
  int64_t t_ = 0;
};

// Scales grads (n) so that their global L2 norm is at most max_norm (max_norm ≤ 0: no clipping).
// Returns the norm before clipping (+∞ or NaN if a gradient is not finite; then nothing is scaled).
float clip_grad_norm(float* grads, int64_t n, float max_norm);

// nanoGPT's get_lr: lr·(step+1)/(warmup+1) during warm-up, then a cosine from lr down to min_lr
// at decay_steps, then min_lr. step counts from 0.
struct LRSchedule {
  float lr = 1e-3f;
  float min_lr = 1e-4f;
  int warmup_steps = 0;
  int decay_steps = 0;  // 0: no decay (constant lr after warm-up)
  float at(int64_t step) const;
};

}  // namespace ap
