// optim.cpp — AdamW, gradient clipping and the learning-rate schedule (see optim.h).
#include "core/model/optim.h"

#include <cmath>

#include "core/kernels/kernels.h"

namespace ap {

namespace {

// x^n by squaring: multiplications only, so every platform gives the same bits (std::pow may not).
double pow_int(double x, int64_t n) {
  double r = 1.0;
  while (n > 0) {
    if (n & 1) r *= x;
    x *= x;
    n >>= 1;
  }
  return r;
}

}  // namespace

AdamW::AdamW(const std::vector<ParamTensor>& tensors, int64_t num_parameters, AdamWConfig config)
    : tensors_(tensors), config_(config), m_(static_cast<size_t>(num_parameters), 0.0f),
      v_(static_cast<size_t>(num_parameters), 0.0f) {}

void AdamW::step(float* params, const float* grads, float lr) {
  ++t_;
  // The bias corrections in double, then rounded once: 1 − β^t loses its digits in float for large t.
  const float bias1 = static_cast<float>(1.0 - pow_int(config_.beta1, t_));
  const float bias2 = static_cast<float>(1.0 - pow_int(config_.beta2, t_));
  const kernels::Kernels& k = kernels::active();
  for (const ParamTensor& t : tensors_)
    k.adamw_update(params + t.offset, m_.data() + t.offset, v_.data() + t.offset, grads + t.offset, t.numel, lr,
                   config_.beta1, config_.beta2, config_.eps, t.decay ? config_.weight_decay : 0.0f, bias1, bias2);
}

float clip_grad_norm(float* grads, int64_t n, float max_norm) {
  const kernels::Kernels& k = kernels::active();
  const double norm = std::sqrt(k.sum_squares(grads, n));
  const float normf = static_cast<float>(norm);
  if (!std::isfinite(norm)) return normf;
  if (max_norm > 0.0f && norm > max_norm)
    k.scale_inplace(grads, static_cast<float>(max_norm / (norm + 1e-6)), n);
  return normf;
}

float LRSchedule::at(int64_t step) const {
  if (step < warmup_steps) return lr * static_cast<float>(step + 1) / static_cast<float>(warmup_steps + 1);
  if (decay_steps <= 0) return lr;
  if (step >= decay_steps) return min_lr;
  const double ratio = static_cast<double>(step - warmup_steps) / static_cast<double>(decay_steps - warmup_steps);
  const double coeff = 0.5 * (1.0 + std::cos(3.14159265358979323846 * ratio));
  return static_cast<float>(min_lr + coeff * (lr - min_lr));
}

}  // namespace ap
