// autograd.h — reverse-mode automatic differentiation over Tensor, small enough to read at once
// (in the spirit of micrograd's engine.py).
//
// A Var is a node of the computation graph: its value, its gradient (same shape, allocated on
// first use), the Vars it was computed from, and a backward function that reads its gradient and
// ADDS into its parents' gradients by calling the backward kernels of ops.h. So a Var used twice
// (a tied weight) collects both contributions, and zero_grad() clears gradients between steps.
// backward(root) visits the graph once in reverse topological order (no recursion, so deep graphs
// are fine). Only Vars that need a gradient (leaves made with requires_grad, and everything that
// depends on them) get one; constants (a mask, the targets' one-hots) never do.
//
// Ops: matmul (2-D, batched 3-D, 3-D·2-D), transpose/permute, reshape, add with broadcasting
// (the gradient is summed over broadcast axes), scale, add_scalar, softmax_rows (stable or
// naive: the same backward), layernorm, gelu, embedding, cross_entropy (mean over rows), and two
// reductions to a scalar: sum and weighted_sum (L = Σ r_i·y_i, what the gradient checks use).
// Shape errors are ShapeError, as for the Tensor ops.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor/ops.h"
#include "core/tensor/tensor.h"

namespace ap {

struct Node;
using Var = std::shared_ptr<Node>;

struct Node {
  Tensor value;
  Tensor grad;                    // empty until backward reaches this node (then value's shape)
  std::vector<Var> parents;
  std::function<void()> backward;  // += into parents' grads; empty for leaves
  std::string op;                 // "leaf", "matmul", … (for printing graphs and errors)
  bool requires_grad = false;

  Tensor& grad_buffer();          // grad, allocated as zeros on first use
};

// A leaf: a parameter (requires_grad) or an input.
Var leaf(Tensor value, bool requires_grad = true);
// A leaf that never gets a gradient (a mask, data).
Var constant(Tensor value);

Var matmul(const Var& a, const Var& b);
Var transpose(const Var& a, int d0 = -2, int d1 = -1);
Var permute(const Var& a, const std::vector<int>& perm);
Var reshape(const Var& a, Shape shape);
Var add(const Var& a, const Var& b);
Var scale(const Var& a, float s);
Var add_scalar(const Var& a, float s);
Var softmax_rows(const Var& a, bool stable = true);
// Over the last dimension of x (…, C) with w (C) and b (C).
Var layernorm(const Var& x, const Var& w, const Var& b, float eps = 1e-5f);
Var gelu(const Var& x);
// table (V, C), ids in [0, V) → (ids.size(), C); throws ShapeError for an id out of range.
Var embedding(const Var& table, const std::vector<int>& ids);
// logits (N, V), targets (N) in [0, V) → scalar mean of −log softmax(logits)[target].
Var cross_entropy(const Var& logits, const std::vector<int>& targets);
Var sum(const Var& a);                            // scalar Σ a
Var weighted_sum(const Var& a, const Tensor& r);  // scalar Σ r ⊙ a, r with a's shape

// Seeds root's gradient with ones (or with `seed`, root's shape) and runs every backward
// function once, in reverse topological order. Intermediate gradients are recomputed by each
// call; leaves' gradients accumulate across calls until zero_grad.
void backward(const Var& root);
void backward(const Var& root, const Tensor& seed);
// Sets the gradients of these Vars to zero (keeps their buffers).
void zero_grad(const std::vector<Var>& vars);

}  // namespace ap
