// attention.cpp — input checks and the traced forward pass of scaled dot-product attention
// (semantics and conventions in attention.h).
#include "core/attention/attention.h"

#include "core/attention/flash.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ap {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::string num(long long n) { return std::to_string(n); }

void require_matrix(const Tensor& t, const std::string& name) {
  if (t.dim() != 2)
    throw InputError(name + " must be a matrix (2-D), got shape " + shape_str(t.shape), name);
  if (t.shape[0] == 0 || t.shape[1] == 0)
    throw InputError(name + " is empty (shape " + shape_str(t.shape) + ")", name);
  if (t.shape[0] > kMaxDim || t.shape[1] > kMaxDim)
    throw InputError(name + " is " + shape_str(t.shape) + ", larger than the limit of " + num(kMaxDim) +
                         " rows and columns",
                     name);
}

void require_finite(const Tensor& t, const std::string& name) {
  const int cols = t.dim() == 2 ? t.shape[1] : static_cast<int>(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = t.data[i];
    if (std::isfinite(v)) continue;
    const int row = static_cast<int>(i / cols) + 1, col = static_cast<int>(i % cols) + 1;
    const std::string what = std::isnan(v) ? "NaN" : (v > 0 ? "+∞" : "−∞");
    throw InputError(name + ", row " + num(row) + ", column " + num(col) + ": " + what +
                         " is not allowed as an input",
                     name, row, col);
  }
}

// A bias must be a vector (or a 1-row matrix) as long as its weight is wide.
void check_bias(const Tensor& b, const std::string& name, int width, const std::string& weight) {
  if (b.empty()) return;
  const bool vector = b.dim() == 1 || (b.dim() == 2 && b.shape[0] == 1);
  if (!vector) throw InputError(name + " must be a vector, got shape " + shape_str(b.shape), name);
  if (b.numel() != width)
    throw InputError(name + " has " + num(b.numel()) + " values but " + weight + " has " + num(width) +
                         " columns",
                     name);
  require_finite(b, name);
}

// One of the matrices an input mode needs: given (else "NAME is missing (why)"), 2-D, finite.
void require_given(const Tensor& t, const char* name, const char* why) {
  if (t.empty()) throw InputError(std::string(name) + " is missing (" + why + ")", name);
  require_matrix(t, name);
  require_finite(t, name);
}

// y (rows, n) = x (rows, d) · W (d, n) + b (n, or 1×n; none if empty)
Tensor linear(const Tensor& x, const Tensor& W, const Tensor& b) {
  Tensor y = matmul(x, W);
  return b.empty() ? y : add(y, reshape(b, {W.shape[1]}));
}

// Rows [from, from + count) of a matrix.
Tensor row_range(const Tensor& m, int from, int count) {
  const size_t w = static_cast<size_t>(m.shape[1]);
  return Tensor({count, m.shape[1]}, std::vector<float>(m.data.begin() + from * w, m.data.begin() + (from + count) * w));
}

std::string where(const EmptyRow& r, int n_head) {
  return (n_head > 1 ? "head " + num(r.head + 1) + ", " : std::string()) + "row " + num(r.row + 1);
}

// Throws InputError for the first thing wrong with the input under these options (shapes, finite
// values, limits), field by field in a fixed order, so that attention_trace computes only from
// valid input.
void check_attention_inputs(const AttentionInput& in, const AttentionOptions& opt) {
  const int H = opt.n_head;
  if (H < 1) throw InputError("n_head must be at least 1, got " + num(H), "n_head");
  if (opt.base < 0) throw InputError("base must be 0 or more, got " + num(opt.base), "base");
  if (opt.n_kv_head != 0 && (opt.n_kv_head < 1 || opt.n_kv_head > H || H % opt.n_kv_head != 0))
    throw InputError("n_kv_head must divide n_head = " + num(H) + " (each group of query heads reads one key/value "
                         "head), got " + num(opt.n_kv_head),
                     "n_kv_head");
  const int KV = opt.n_kv_head ? opt.n_kv_head : H;
  const bool grouped = KV != H;  // K and V are narrower than Q: their widths are checked below

  int T, T_total, q_cols, k_cols, v_cols;  // Q is (T, q_cols), K (T_total, k_cols), V (T_total, v_cols)
  if (in.from_x()) {
    require_matrix(in.x, "x");
    require_finite(in.x, "x");
    T_total = in.x.shape[0];
    const int d_model = in.x.shape[1];
    if (opt.base >= T_total)
      throw InputError("base is " + num(opt.base) + " but x has only " + num(T_total) +
                           " rows: base counts the cached rows before the queries, so it must be less than " +
                           num(T_total),
                       "base");
    const char* names[3] = {"W_q", "W_k", "W_v"};
    const Tensor* W[3] = {&in.W_q, &in.W_k, &in.W_v};
    for (int i = 0; i < 3; ++i) {
      require_given(*W[i], names[i], "x needs W_q, W_k and W_v");
      if (W[i]->shape[0] != d_model)
        throw InputError(std::string(names[i]) + " has " + num(W[i]->shape[0]) + " rows but x has " +
                             num(d_model) + " columns (d_model)",
                         names[i]);
    }
    if (!grouped && in.W_k.shape[1] != in.W_q.shape[1])
      throw InputError("W_k has " + num(in.W_k.shape[1]) + " columns but W_q has " + num(in.W_q.shape[1]) +
                           ": Q and K must have the same width",
                       "W_k");
    check_bias(in.b_q, "b_q", in.W_q.shape[1], "W_q");
    check_bias(in.b_k, "b_k", in.W_k.shape[1], "W_k");
    check_bias(in.b_v, "b_v", in.W_v.shape[1], "W_v");
    T = T_total - opt.base;
    q_cols = in.W_q.shape[1];
    k_cols = in.W_k.shape[1];
    v_cols = in.W_v.shape[1];
  } else {
    if (in.Q.empty() && in.K.empty() && in.V.empty())
      throw InputError("no input: give x with W_q, W_k, W_v, or Q, K and V", "x");
    require_given(in.Q, "Q", "give Q, K and V");
    require_given(in.K, "K", "give Q, K and V");
    require_given(in.V, "V", "give Q, K and V");
    if (!grouped && in.K.shape[1] != in.Q.shape[1])
      throw InputError("K has " + num(in.K.shape[1]) + " columns but Q has " + num(in.Q.shape[1]), "K");
    if (in.V.shape[0] != in.K.shape[0])
      throw InputError("V has " + num(in.V.shape[0]) + " rows but K has " + num(in.K.shape[0]) +
                           ": every key needs a value",
                       "V");
    if (in.K.shape[0] != in.Q.shape[0] + opt.base)
      throw InputError("K has " + num(in.K.shape[0]) + " rows but Q has " + num(in.Q.shape[0]) +
                           " rows and base is " + num(opt.base) + ": K must have T + base = " +
                           num(in.Q.shape[0] + opt.base) + " rows",
                       "K");
    T = in.Q.shape[0];
    T_total = in.K.shape[0];
    q_cols = in.Q.shape[1];
    k_cols = in.K.shape[1];
    v_cols = in.V.shape[1];
  }
  const char* qname = in.from_x() ? "W_q" : "Q";
  const char* vname = in.from_x() ? "W_v" : "V";
  if (q_cols % H != 0)
    throw InputError(std::string(qname) + " has " + num(q_cols) + " columns, which " + num(H) +
                         " heads cannot share equally (n_head must divide it)",
                     "n_head");
  if (!grouped && v_cols % H != 0)
    throw InputError(std::string(vname) + " has " + num(v_cols) + " columns, which " + num(H) +
                         " heads cannot share equally (n_head must divide it)",
                     "n_head");
  if (grouped) {
    const char* kname = in.from_x() ? "W_k" : "K";
    if (k_cols != q_cols / H * KV)
      throw InputError(std::string(kname) + " has " + num(k_cols) + " columns but " + num(KV) +
                           " key/value heads of head_dim " + num(q_cols / H) + " need " + num(q_cols / H * KV),
                       kname);
    if (v_cols % KV != 0)
      throw InputError(std::string(vname) + " has " + num(v_cols) + " columns, which " + num(KV) +
                           " key/value heads cannot share equally (n_kv_head must divide it)",
                       "n_kv_head");
  }
  const int concat_cols = H * (v_cols / KV);  // n_head·d_v
  if (opt.rope != RopePairing::none) {
    const int head_dim = q_cols / H;
    if (!(opt.rope_base > 1.0) || !std::isfinite(opt.rope_base))
      throw InputError("rope_base must be a number above 1 (10000 in the RoPE paper), got " +
                           std::to_string(opt.rope_base),
                       "rope_base");
    if (opt.rope_dims == 0 && head_dim % 2 != 0)
      throw InputError("RoPE turns pairs of dimensions but head_dim is " + num(head_dim) +
                           ", odd: set rope_dims to an even number up to " + num(head_dim - 1),
                       "rope");
    if (opt.rope_dims != 0 && (opt.rope_dims < 2 || opt.rope_dims % 2 != 0 || opt.rope_dims > head_dim))
      throw InputError("rope_dims must be even, from 2 to head_dim = " + num(head_dim) + ", got " +
                           num(opt.rope_dims),
                       "rope_dims");
  } else if (opt.rope_dims != 0) {
    throw InputError("rope_dims is given but rope is off", "rope_dims");
  }
  if (opt.window < 0) throw InputError("window must be 1 or more, got " + num(opt.window), "window");
  if (opt.window > 0 && !opt.causal)
    throw InputError("window needs causal: true (a sliding window limits how far back a query looks)", "window");
  if (opt.sinks < 0) throw InputError("sinks must be 0 or more, got " + num(opt.sinks), "sinks");
  if (opt.sinks > 0 && opt.window == 0) throw InputError("sinks is given but there is no window", "sinks");
  if (!opt.alibi && !opt.alibi_slopes.empty())
    throw InputError("alibi_slopes is given but alibi is off", "alibi_slopes");
  if (opt.alibi && !opt.alibi_slopes.empty()) {
    if (static_cast<int>(opt.alibi_slopes.size()) != H)
      throw InputError("alibi_slopes has " + num(static_cast<long long>(opt.alibi_slopes.size())) +
                           " slopes but there are " + num(H) + " heads: give one per head",
                       "alibi_slopes");
    for (float m : opt.alibi_slopes)
      if (!std::isfinite(m)) throw InputError("alibi_slopes holds a non-finite slope", "alibi_slopes");
  }
  check_flash_options(opt, T, T_total);
  if (static_cast<long long>(H) * T * T_total > kMaxScores)
    throw InputError("n_head·T·T_total = " + num(static_cast<long long>(H) * T * T_total) +
                         " is more than the limit of " + num(kMaxScores),
                     "n_head");

  // The output layer: concat (T, n_head·d_v) · W_o + b_o
  if (!in.W_o.empty()) {
    require_matrix(in.W_o, "W_o");
    require_finite(in.W_o, "W_o");
    if (in.W_o.shape[0] != concat_cols)
      throw InputError("W_o has " + num(in.W_o.shape[0]) + " rows but the concatenated heads have " +
                           num(concat_cols) + " columns (n_head·d_v)",
                       "W_o");
    check_bias(in.b_o, "b_o", in.W_o.shape[1], "W_o");
  } else if (!in.b_o.empty()) {
    throw InputError("b_o is given without W_o", "b_o");
  }
}

// (KV, rows, d) → (H, rows, d): query head h gets key/value head h / (H/KV), listed in kv_head.
Tensor repeat_kv(const Tensor& t, int H, std::vector<int>& kv_head) {
  const int KV = t.shape[0];
  kv_head.resize(H);
  if (KV == H) {
    for (int h = 0; h < H; ++h) kv_head[h] = h;
    return t;
  }
  Tensor out({H, t.shape[1], t.shape[2]});
  const size_t n = static_cast<size_t>(t.shape[1]) * t.shape[2];
  for (int h = 0; h < H; ++h) {
    kv_head[h] = h / (H / KV);
    std::copy(t.data.begin() + kv_head[h] * n, t.data.begin() + (kv_head[h] + 1) * n, out.data.begin() + h * n);
  }
  return out;
}

// The backward of repeat_kv: (H, rows, d) → (KV, rows, d), each group's heads summed.
Tensor sum_kv_groups(const Tensor& t, const std::vector<int>& kv_head, int KV) {
  if (KV == t.shape[0]) return t;
  Tensor out({KV, t.shape[1], t.shape[2]});
  const size_t n = static_cast<size_t>(t.shape[1]) * t.shape[2];
  for (int h = 0; h < t.shape[0]; ++h)
    for (size_t i = 0; i < n; ++i) out.data[kv_head[h] * n + i] += t.data[h * n + i];
  return out;
}

// RoPE's angles: angles(r, i) = positions[r]·θ_i, in double, kept as float.
Tensor rope_angles(const Tensor& positions, const Tensor& theta) {
  const int n = positions.shape[0], pairs = theta.shape[0];
  Tensor a({n, pairs});
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < pairs; ++i)
      a(r, i) = static_cast<float>(static_cast<double>(positions.data[r]) * static_cast<double>(theta.data[i]));
  return a;
}

// Turns each row r of every head of t (H, rows, hd) by angles(r, ·), pair by pair, in place;
// sign −1 turns back (Rᵀ, the backward pass).
void rope_rotate(Tensor& t, const Tensor& angles, RopePairing pairing, float sign) {
  const int H = t.shape[0], rows = t.shape[1], hd = t.shape[2], pairs = angles.shape[1];
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < pairs; ++i) {
      const double phi = angles(r, i);
      const float c = static_cast<float>(std::cos(phi)), s = sign * static_cast<float>(std::sin(phi));
      const int ia = pairing == RopePairing::interleaved ? 2 * i : i;
      const int ib = pairing == RopePairing::interleaved ? 2 * i + 1 : i + pairs;
      for (int h = 0; h < H; ++h) {
        float* row = t.ptr() + (static_cast<size_t>(h) * rows + r) * hd;
        const float a = row[ia], b = row[ib];
        row[ia] = a * c - b * s;
        row[ib] = a * s + b * c;
      }
    }
}

}  // namespace

Tensor causal_mask(int T, int T_total, int base, MaskVariant variant) {
  Tensor m({T, T_total});
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T_total; ++j) {
      const bool hidden = variant == MaskVariant::strict ? j > i + base : j >= i + base;
      m(i, j) = hidden ? kNegInf : 0.0f;
    }
  return m;
}

Tensor split_heads(const Tensor& a, int n_head) {
  // (T, n_head·d) → (T, n_head, d) → (n_head, T, d)
  if (a.dim() != 2 || n_head < 1 || a.shape[1] % n_head != 0)
    throw ShapeError("split_heads: cannot split " + shape_str(a.shape) + " into " + num(n_head) + " heads");
  return permute(reshape(a, {a.shape[0], n_head, a.shape[1] / n_head}), {1, 0, 2});
}

Tensor concat_heads(const Tensor& a) {
  // (n_head, T, d) → (T, n_head, d) → (T, n_head·d)
  if (a.dim() != 3) throw ShapeError("concat_heads needs (n_head, T, d), got " + shape_str(a.shape));
  return reshape(permute(a, {1, 0, 2}), {a.shape[1], a.shape[0] * a.shape[2]});
}

AttentionTrace attention_trace(const AttentionInput& in, const AttentionOptions& opt) {
  check_attention_inputs(in, opt);
  AttentionTrace tr;
  tr.options = opt;
  tr.input = in;
  const int H = opt.n_head;

  Tensor Q, K, V;  // (T, H·hd), (T_total, H·hd), (T_total, H·dv)
  if (in.from_x()) {
    const int T_total = in.x.shape[0];
    tr.d_model = in.x.shape[1];
    Q = linear(row_range(in.x, opt.base, T_total - opt.base), in.W_q, in.b_q);  // the queries: x[base:]
    K = linear(in.x, in.W_k, in.b_k);
    V = linear(in.x, in.W_v, in.b_v);
  } else {
    Q = in.Q;
    K = in.K;
    V = in.V;
  }
  const int T = Q.shape[0], T_total = K.shape[0];
  tr.T = T;
  tr.T_total = T_total;
  tr.head_dim = Q.shape[1] / H;
  const int KV = opt.n_kv_head ? opt.n_kv_head : H;
  tr.d_v = V.shape[1] / KV;
  tr.scale_factor = opt.scale ? 1.0f / std::sqrt(static_cast<float>(tr.head_dim)) : 1.0f;

  tr.q = split_heads(Q, H);                                    // (H, T, hd)
  tr.k = repeat_kv(split_heads(K, KV), H, tr.kv_head);        // (H, T_total, hd)
  tr.v = repeat_kv(split_heads(V, KV), H, tr.kv_head);        // (H, T_total, dv)
  if (opt.rope != RopePairing::none) {
    const int d_rot = opt.rope_dims ? opt.rope_dims : tr.head_dim;
    tr.rope_dims = d_rot;
    tr.rope_theta = Tensor({d_rot / 2});
    for (int i = 0; i < d_rot / 2; ++i)
      tr.rope_theta.data[i] = static_cast<float>(std::pow(opt.rope_base, -2.0 * i / d_rot));
    tr.q_positions = Tensor({T});
    tr.k_positions = Tensor({T_total});
    for (int i = 0; i < T; ++i) tr.q_positions.data[i] = static_cast<float>(opt.base + i);
    for (int j = 0; j < T_total; ++j) tr.k_positions.data[j] = static_cast<float>(j);
    tr.q_angles = rope_angles(tr.q_positions, tr.rope_theta);
    tr.k_angles = rope_angles(tr.k_positions, tr.rope_theta);
    tr.q_rot = tr.q;
    tr.k_rot = tr.k;
    rope_rotate(tr.q_rot, tr.q_angles, opt.rope, 1.0f);
    rope_rotate(tr.k_rot, tr.k_angles, opt.rope, 1.0f);
  }
  const Tensor& q_used = tr.q_rot.empty() ? tr.q : tr.q_rot;  // what the scores are taken from
  const Tensor& k_used = tr.k_rot.empty() ? tr.k : tr.k_rot;
  tr.scores = Tensor({H, T, T_total});                         // (H, T, T_total)
  for (int h = 0; h < H; ++h)
    matmul_bt_forward(tr.scores.ptr() + static_cast<size_t>(h) * T * T_total,
                      q_used.ptr() + static_cast<size_t>(h) * T * tr.head_dim,
                      k_used.ptr() + static_cast<size_t>(h) * T_total * tr.head_dim, T, tr.head_dim, T_total);
  tr.scaled = opt.scale ? scale(tr.scores, tr.scale_factor) : tr.scores;
  tr.mask = opt.causal ? causal_mask(T, T_total, opt.base, opt.mask) : Tensor({T, T_total});
  if (opt.window > 0)  // keys j ≤ p − w fall out of the window of the query at p, but for the sinks
    for (int i = 0; i < T; ++i)
      for (int j = opt.sinks; j < T_total && j <= opt.base + i - opt.window; ++j) tr.mask(i, j) = kNegInf;
  if (opt.alibi) {
    tr.alibi_slopes = Tensor({H});
    for (int h = 0; h < H; ++h)
      tr.alibi_slopes.data[h] = opt.alibi_slopes.empty()
                                    ? static_cast<float>(std::pow(2.0, -8.0 * (h + 1) / H))
                                    : opt.alibi_slopes[h];
    tr.bias = Tensor({H, T, T_total});
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < T; ++i)
        for (int j = 0; j < T_total; ++j)
          tr.bias(h, i, j) = -tr.alibi_slopes.data[h] * static_cast<float>(opt.base + i - j);
    tr.masked = add(add(tr.scaled, tr.bias), tr.mask);
  } else {
    tr.masked = add(tr.scaled, tr.mask);
  }
  std::vector<RowStatus> status;
  tr.weights = opt.stable_softmax ? softmax_rows(tr.masked, &status) : softmax_rows_naive(tr.masked, &status);
  tr.weight_row_sums = Tensor({H, T});
  for (int r = 0; r < H * T; ++r) {
    float s = 0.0f;
    for (int j = 0; j < T_total; ++j) s += tr.weights.data[static_cast<size_t>(r) * T_total + j];
    tr.weight_row_sums.data[r] = s;
    if (status[r] == RowStatus::empty) tr.empty_rows.push_back({r / T, r % T});
    if (status[r] == RowStatus::overflow) tr.overflow_rows.push_back({r / T, r % T});
  }
  tr.context = matmul(tr.weights, tr.v);  // (H, T, dv)
  tr.concat = concat_heads(tr.context);   // (T, H·dv)

  tr.out = in.W_o.empty() ? tr.concat : linear(tr.concat, in.W_o, in.b_o);  // (T, d_out)
  tr.d_out = tr.out.shape[1];
  if (opt.flash_block_q) flash_forward(tr);  // the same context again, tile by tile (flash.h)

  for (const EmptyRow& r : tr.empty_rows)
    tr.warnings.push_back(where(r, H) + ": the mask hides every key, so this query attends to nothing; "
                          "its weights and context are set to 0 instead of NaN (0/0)");
  for (const EmptyRow& r : tr.overflow_rows)
    tr.warnings.push_back(where(r, H) + (opt.stable_softmax
                                             ? ": softmax met a non-finite score (the scores overflowed float32)"
                                             : ": the naive softmax overflowed: e^x is +∞ for x above 88.72, "
                                               "and ∞/∞ is NaN; the stable softmax subtracts the row max first"));
  return tr;
}

namespace {

// Column sums of m (rows, cols) → (cols): the gradient of a bias added to every row.
Tensor column_sums(const Tensor& m) {
  Tensor out({m.shape[1]});
  for (int i = 0; i < m.shape[0]; ++i)
    for (int j = 0; j < m.shape[1]; ++j) out.data[j] += m(i, j);
  return out;
}

}  // namespace

AttentionGrads attention_trace_backward(const AttentionTrace& tr, const Tensor& d_out) {
  if (d_out.shape != tr.out.shape)
    throw InputError("d_out is " + shape_str(d_out.shape) + " but out is " + shape_str(tr.out.shape) +
                         ": the upstream gradient must have out's shape",
                     "d_out");
  require_finite(d_out, "d_out");
  const AttentionInput& in = tr.input;
  const int H = tr.options.n_head, T = tr.T, Tt = tr.T_total, hd = tr.head_dim, dv = tr.d_v;
  AttentionGrads g;
  g.d_out = d_out;
  // out = concat·W_o + b_o
  if (!in.W_o.empty()) {
    g.d_W_o = Tensor(in.W_o.shape);
    g.d_concat = Tensor(tr.concat.shape);
    matmul_backward(g.d_concat.ptr(), g.d_W_o.ptr(), d_out.ptr(), tr.concat.ptr(), in.W_o.ptr(), T,
                    tr.concat.shape[1], tr.d_out);
    if (!in.b_o.empty()) g.d_b_o = column_sums(d_out);
  } else {
    g.d_concat = d_out;
  }
  g.d_context = split_heads(g.d_concat, H);  // (H, T, dv)
  g.d_weights = Tensor({H, T, Tt});
  g.d_v = Tensor({H, Tt, dv});
  g.d_scaled = Tensor({H, T, Tt});
  const bool rope = !tr.q_rot.empty();
  g.d_q = Tensor({H, T, hd});
  g.d_k = Tensor({H, Tt, hd});
  if (tr.options.flash_block_q) flash_backward(tr, g);  // FlashAttention-2's recomputation (flash.h)
  for (int h = 0; h < H && !tr.options.flash_block_q; ++h) {
    const size_t oW = static_cast<size_t>(h) * T * Tt, oC = static_cast<size_t>(h) * T * dv,
                 oV = static_cast<size_t>(h) * Tt * dv;
    // context = weights·v
    matmul_backward(g.d_weights.ptr() + oW, g.d_v.ptr() + oV, g.d_context.ptr() + oC, tr.weights.ptr() + oW,
                    tr.v.ptr() + oV, T, Tt, dv);
    // weights = softmax(masked); masked = scaled + mask (a constant): the gradient passes through
    softmax_rows_backward(g.d_scaled.ptr() + oW, g.d_weights.ptr() + oW, tr.weights.ptr() + oW, T, Tt);
  }
  // scaled = scores · scale_factor
  g.d_scores = tr.options.scale ? scale(g.d_scaled, tr.scale_factor) : g.d_scaled;
  for (int h = 0; h < H; ++h) {
    const size_t oW = static_cast<size_t>(h) * T * Tt, oQ = static_cast<size_t>(h) * T * hd,
                 oK = static_cast<size_t>(h) * Tt * hd;
    // scores = q·kᵀ (q_rot·k_rotᵀ with RoPE: these are then d_q_rot, d_k_rot)
    matmul_bt_backward(g.d_q.ptr() + oQ, g.d_k.ptr() + oK, g.d_scores.ptr() + oW,
                       (rope ? tr.q_rot : tr.q).ptr() + oQ, (rope ? tr.k_rot : tr.k).ptr() + oK, T, hd, Tt);
  }
  if (rope) {  // q_rot = R·q: d_q = Rᵀ·d_q_rot, the turn by the opposite angle
    g.d_q_rot = g.d_q;
    g.d_k_rot = g.d_k;
    rope_rotate(g.d_q, tr.q_angles, tr.options.rope, -1.0f);
    rope_rotate(g.d_k, tr.k_angles, tr.options.rope, -1.0f);
  }
  g.d_Q = concat_heads(g.d_q);
  const int KV = tr.options.n_kv_head ? tr.options.n_kv_head : H;
  g.d_K = concat_heads(sum_kv_groups(g.d_k, tr.kv_head, KV));
  g.d_V = concat_heads(sum_kv_groups(g.d_v, tr.kv_head, KV));
  if (in.from_x()) {
    // Q = x[base:]·W_q + b_q, K = x·W_k + b_k, V = x·W_v + b_v
    const int base = tr.options.base, d_model = tr.d_model;
    g.d_x = Tensor(in.x.shape);
    g.d_W_q = Tensor(in.W_q.shape);
    g.d_W_k = Tensor(in.W_k.shape);
    g.d_W_v = Tensor(in.W_v.shape);
    const size_t query_rows = static_cast<size_t>(base) * d_model;
    matmul_backward(g.d_x.ptr() + query_rows, g.d_W_q.ptr(), g.d_Q.ptr(), in.x.ptr() + query_rows, in.W_q.ptr(), T,
                    d_model, in.W_q.shape[1]);
    matmul_backward(g.d_x.ptr(), g.d_W_k.ptr(), g.d_K.ptr(), in.x.ptr(), in.W_k.ptr(), Tt, d_model,
                    in.W_k.shape[1]);
    matmul_backward(g.d_x.ptr(), g.d_W_v.ptr(), g.d_V.ptr(), in.x.ptr(), in.W_v.ptr(), Tt, d_model,
                    in.W_v.shape[1]);
    if (!in.b_q.empty()) g.d_b_q = column_sums(g.d_Q);
    if (!in.b_k.empty()) g.d_b_k = column_sums(g.d_K);
    if (!in.b_v.empty()) g.d_b_v = column_sums(g.d_V);
  }
  return g;
}

OutAndWeights single_head_attention(const Tensor& x, const Tensor& W_q, const Tensor& W_k, const Tensor& W_v,
                                    const Tensor& W_o, bool causal) {
  AttentionInput in{x, W_q, W_k, W_v};  // no biases
  in.W_o = W_o;
  AttentionOptions opt;
  opt.causal = causal;
  AttentionTrace tr = attention_trace(in, opt);
  return {tr.out, tr.weights.slice0(0)};
}

}  // namespace ap
