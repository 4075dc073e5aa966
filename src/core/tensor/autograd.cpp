// autograd.cpp — the Var ops and the backward walk (see autograd.h).
// Each op: check shapes, compute the value with a forward kernel, and set a backward function
// that calls the matching backward kernel. Closures hold raw pointers to their own node and its
// parents: the node owns the closure and holds its parents, so both outlive every call.
#include "core/tensor/autograd.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace ap {

Tensor& Node::grad_buffer() {
  if (grad.shape != value.shape || grad.numel() != value.numel()) grad = Tensor(value.shape);
  return grad;
}

namespace {

Var make(const std::string& op, Tensor value, std::vector<Var> parents) {
  auto n = std::make_shared<Node>();
  n->value = std::move(value);
  n->op = op;
  for (const Var& p : parents) n->requires_grad = n->requires_grad || p->requires_grad;
  n->parents = std::move(parents);
  return n;
}

// Adds src into dst's gradient (same number of elements).
void accumulate(Node* dst, const Tensor& src) {
  if (!dst->requires_grad) return;
  Tensor& g = dst->grad_buffer();
  for (int64_t i = 0; i < g.numel(); ++i) g.data[i] += src.data[i];
}

// Strides of x over a padded 4-D iteration of shape `out` (0 where x is broadcast).
void broadcast_strides(const Shape& x, const Shape& out, int64_t st[kMaxDims]) {
  const int n = static_cast<int>(out.size());
  const int pad = kMaxDims - n;
  for (int d = 0; d < kMaxDims; ++d) st[d] = 0;
  int64_t stride = 1;
  const int off = n - static_cast<int>(x.size());
  for (int d = static_cast<int>(x.size()) - 1; d >= 0; --d) {
    st[pad + off + d] = x[d] == 1 ? 0 : stride;
    stride *= x[d];
  }
}

// g (x's shape) += dout (out's shape) summed over the axes where x was broadcast.
void reduce_broadcast(float* g, const Shape& x, const Tensor& dout) {
  int64_t st[kMaxDims];
  broadcast_strides(x, dout.shape, st);
  int os[kMaxDims] = {1, 1, 1, 1};
  const int pad = kMaxDims - dout.dim();
  for (int d = 0; d < dout.dim(); ++d) os[pad + d] = dout.shape[d];
  const float* d = dout.ptr();
  for (int i0 = 0; i0 < os[0]; ++i0)
    for (int i1 = 0; i1 < os[1]; ++i1)
      for (int i2 = 0; i2 < os[2]; ++i2)
        for (int i3 = 0; i3 < os[3]; ++i3) g[i0 * st[0] + i1 * st[1] + i2 * st[2] + i3 * st[3]] += *d++;
}

std::vector<int> inverse(const std::vector<int>& perm) {
  std::vector<int> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int>(i);
  return inv;
}

}  // namespace

Var leaf(Tensor value, bool requires_grad) {
  Var n = make("leaf", std::move(value), {});
  n->requires_grad = requires_grad;
  return n;
}

Var constant(Tensor value) { return leaf(std::move(value), false); }

Var matmul(const Var& a, const Var& b) {
  Var out = make("matmul", ap::matmul(a->value, b->value), {a, b});
  Node *o = out.get(), *pa = a.get(), *pb = b.get();
  out->backward = [o, pa, pb] {
    const Tensor &A = pa->value, &B = pb->value;
    float* ga = pa->requires_grad ? pa->grad_buffer().ptr() : nullptr;
    float* gb = pb->requires_grad ? pb->grad_buffer().ptr() : nullptr;
    if (A.dim() == 2) {
      matmul_backward(ga, gb, o->grad.ptr(), A.ptr(), B.ptr(), A.shape[0], A.shape[1], B.shape[1]);
      return;
    }
    const int Bn = A.shape[0], M = A.shape[1], K = A.shape[2], N = B.size(-1);
    const bool shared_b = B.dim() == 2;  // (B,M,K)·(K,N): b's gradient sums over the batch
    for (int i = 0; i < Bn; ++i) {
      const size_t bo = shared_b ? 0 : static_cast<size_t>(i) * K * N;
      matmul_backward(ga ? ga + static_cast<size_t>(i) * M * K : nullptr, gb ? gb + bo : nullptr,
                      o->grad.ptr() + static_cast<size_t>(i) * M * N, A.ptr() + static_cast<size_t>(i) * M * K,
                      B.ptr() + bo, M, K, N);
    }
  };
  return out;
}

Var permute(const Var& a, const std::vector<int>& perm) {
  Var out = make("permute", ap::permute(a->value, perm), {a});
  Node *o = out.get(), *pa = a.get();
  out->backward = [o, pa, inv = inverse(perm)] { accumulate(pa, ap::permute(o->grad, inv)); };
  return out;
}

Var transpose(const Var& a, int d0, int d1) {
  const int n = a->value.dim();
  if (n < 2) throw ShapeError("transpose needs at least 2 dimensions, got " + shape_str(a->value.shape));
  std::vector<int> perm(n);
  for (int i = 0; i < n; ++i) perm[i] = i;
  const int k0 = d0 < 0 ? d0 + n : d0, k1 = d1 < 0 ? d1 + n : d1;
  if (k0 < 0 || k0 >= n || k1 < 0 || k1 >= n)
    throw ShapeError("transpose: dimensions out of range for " + shape_str(a->value.shape));
  std::swap(perm[k0], perm[k1]);
  return permute(a, perm);
}

Var reshape(const Var& a, Shape shape) {
  Var out = make("reshape", ap::reshape(a->value, std::move(shape)), {a});
  Node *o = out.get(), *pa = a.get();
  out->backward = [o, pa] { accumulate(pa, o->grad); };  // same numbers, same order
  return out;
}

Var add(const Var& a, const Var& b) {
  Var out = make("add", ap::add(a->value, b->value), {a, b});
  Node *o = out.get(), *pa = a.get(), *pb = b.get();
  out->backward = [o, pa, pb] {
    if (pa->requires_grad) reduce_broadcast(pa->grad_buffer().ptr(), pa->value.shape, o->grad);
    if (pb->requires_grad) reduce_broadcast(pb->grad_buffer().ptr(), pb->value.shape, o->grad);
  };
  return out;
}

Var scale(const Var& a, float s) {
  Var out = make("scale", ap::scale(a->value, s), {a});
  Node *o = out.get(), *pa = a.get();
  out->backward = [o, pa, s] {
    if (!pa->requires_grad) return;
    float* g = pa->grad_buffer().ptr();
    for (int64_t i = 0; i < o->grad.numel(); ++i) g[i] += s * o->grad.data[i];
  };
  return out;
}

Var add_scalar(const Var& a, float s) {
  Var out = make("add_scalar", ap::add_scalar(a->value, s), {a});
  Node *o = out.get(), *pa = a.get();
  out->backward = [o, pa] { accumulate(pa, o->grad); };
  return out;
}

Var softmax_rows(const Var& a, bool stable) {
  Var out = make(stable ? "softmax" : "softmax_naive",
                 stable ? ap::softmax_rows(a->value) : ap::softmax_rows_naive(a->value), {a});
  Node *o = out.get(), *pa = a.get();
  out->backward = [o, pa] {
    if (!pa->requires_grad) return;
    const int cols = o->value.size(-1);
    const int rows = cols ? static_cast<int>(o->value.numel() / cols) : 0;
    softmax_rows_backward(pa->grad_buffer().ptr(), o->grad.ptr(), o->value.ptr(), rows, cols);
  };
  return out;
}

Var layernorm(const Var& x, const Var& w, const Var& b, float eps) {
  const Tensor& X = x->value;
  if (X.dim() < 1) throw ShapeError("layernorm needs at least 1 dimension");
  const int C = X.size(-1);
  if (w->value.shape != Shape{C} || b->value.shape != Shape{C})
    throw ShapeError("layernorm: w and b must be [" + std::to_string(C) + "], got " + shape_str(w->value.shape) +
                     " and " + shape_str(b->value.shape));
  const int N = C ? static_cast<int>(X.numel() / C) : 0;
  Tensor y(X.shape);
  auto mean = std::make_shared<std::vector<float>>(N), rstd = std::make_shared<std::vector<float>>(N);
  layernorm_forward(y.ptr(), mean->data(), rstd->data(), X.ptr(), w->value.ptr(), b->value.ptr(), N, C, eps);
  Var out = make("layernorm", std::move(y), {x, w, b});
  Node *o = out.get(), *px = x.get(), *pw = w.get(), *pb = b.get();
  out->backward = [o, px, pw, pb, mean, rstd, N, C] {
    layernorm_backward(px->requires_grad ? px->grad_buffer().ptr() : nullptr,
                       pw->requires_grad ? pw->grad_buffer().ptr() : nullptr,
                       pb->requires_grad ? pb->grad_buffer().ptr() : nullptr, o->grad.ptr(), px->value.ptr(),
                       pw->value.ptr(), mean->data(), rstd->data(), N, C);
  };
  return out;
}

Var gelu(const Var& x) {
  Tensor y(x->value.shape);
  gelu_forward(y.ptr(), x->value.ptr(), static_cast<int>(y.numel()));
  Var out = make("gelu", std::move(y), {x});
  Node *o = out.get(), *px = x.get();
  out->backward = [o, px] {
    if (px->requires_grad)
      gelu_backward(px->grad_buffer().ptr(), px->value.ptr(), o->grad.ptr(), static_cast<int>(o->grad.numel()));
  };
  return out;
}

Var embedding(const Var& table, const std::vector<int>& ids) {
  const Tensor& W = table->value;
  if (W.dim() != 2) throw ShapeError("embedding: the table must be (V, C), got " + shape_str(W.shape));
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= W.shape[0])
      throw ShapeError("embedding: id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                       " is outside the table's " + std::to_string(W.shape[0]) + " rows");
  const int N = static_cast<int>(ids.size()), C = W.shape[1];
  Tensor y({N, C});
  embedding_forward(y.ptr(), ids.data(), W.ptr(), N, C);
  Var out = make("embedding", std::move(y), {table});
  Node *o = out.get(), *pt = table.get();
  out->backward = [o, pt, ids, N, C] {
    if (pt->requires_grad) embedding_backward(pt->grad_buffer().ptr(), o->grad.ptr(), ids.data(), N, C);
  };
  return out;
}

Var cross_entropy(const Var& logits, const std::vector<int>& targets) {
  const Tensor& L = logits->value;
  if (L.dim() != 2 || L.shape[0] != static_cast<int>(targets.size()))
    throw ShapeError("cross_entropy: logits " + shape_str(L.shape) + " need one target per row, got " +
                     std::to_string(targets.size()));
  const int N = L.shape[0], V = L.shape[1];
  for (size_t i = 0; i < targets.size(); ++i)
    if (targets[i] < 0 || targets[i] >= V)
      throw ShapeError("cross_entropy: target " + std::to_string(targets[i]) + " at row " + std::to_string(i) +
                       " is outside the " + std::to_string(V) + " classes");
  auto probs = std::make_shared<Tensor>(L.shape);
  std::vector<float> losses(N);
  crossentropy_forward(losses.data(), probs->ptr(), L.ptr(), targets.data(), N, V);
  float mean = 0.0f;
  for (float l : losses) mean += l;
  mean /= static_cast<float>(N);
  Var out = make("cross_entropy", Tensor(Shape{}, std::vector<float>{mean}), {logits});
  Node *o = out.get(), *pl = logits.get();
  out->backward = [o, pl, probs, targets, N, V] {
    if (!pl->requires_grad) return;
    const std::vector<float> dlosses(N, o->grad.data[0] / static_cast<float>(N));
    crossentropy_backward(pl->grad_buffer().ptr(), dlosses.data(), probs->ptr(), targets.data(), N, V);
  };
  return out;
}

Var sum(const Var& a) {
  float s = 0.0f;
  for (float v : a->value.data) s += v;
  Var out = make("sum", Tensor(Shape{}, std::vector<float>{s}), {a});
  Node *o = out.get(), *pa = a.get();
  out->backward = [o, pa] {
    if (!pa->requires_grad) return;
    float* g = pa->grad_buffer().ptr();
    for (int64_t i = 0; i < pa->value.numel(); ++i) g[i] += o->grad.data[0];
  };
  return out;
}

Var weighted_sum(const Var& a, const Tensor& r) {
  if (r.shape != a->value.shape)
    throw ShapeError("weighted_sum: weights " + shape_str(r.shape) + " must match " + shape_str(a->value.shape));
  float s = 0.0f;
  for (int64_t i = 0; i < r.numel(); ++i) s += r.data[i] * a->value.data[i];
  Var out = make("weighted_sum", Tensor(Shape{}, std::vector<float>{s}), {a});
  Node *o = out.get(), *pa = a.get();
  out->backward = [o, pa, r] {
    if (!pa->requires_grad) return;
    float* g = pa->grad_buffer().ptr();
    for (int64_t i = 0; i < r.numel(); ++i) g[i] += r.data[i] * o->grad.data[0];
  };
  return out;
}

void backward(const Var& root) { backward(root, Tensor(root->value.shape, 1.0f)); }

void backward(const Var& root, const Tensor& seed) {
  if (seed.shape != root->value.shape)
    throw ShapeError("backward: seed " + shape_str(seed.shape) + " must match the root " +
                     shape_str(root->value.shape));
  // Reverse topological order by an explicit-stack depth-first search.
  std::vector<Node*> order;
  std::unordered_set<Node*> seen;
  std::vector<std::pair<Node*, size_t>> stack{{root.get(), 0}};
  seen.insert(root.get());
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->parents.size()) {
      Node* p = node->parents[next++].get();
      if (p->requires_grad && seen.insert(p).second) stack.push_back({p, 0});
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  // Intermediate gradients belong to this walk only; leaves keep accumulating across walks.
  for (Node* n : order)
    if (n->backward) {
      Tensor& g = n->grad_buffer();
      std::fill(g.data.begin(), g.data.end(), 0.0f);
    }
  root->grad_buffer();
  for (int64_t i = 0; i < seed.numel(); ++i) root->grad.data[i] += seed.data[i];
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    (*it)->grad_buffer();  // a node whose children passed nothing back still has a (zero) gradient
    if ((*it)->backward && (*it)->requires_grad) (*it)->backward();
  }
}

void zero_grad(const std::vector<Var>& vars) {
  for (const Var& v : vars)
    if (!v->grad.data.empty()) std::fill(v->grad.data.begin(), v->grad.data.end(), 0.0f);
}

}  // namespace ap
