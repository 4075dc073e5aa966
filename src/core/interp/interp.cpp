// interp.cpp — the logit lens, attribution, ablation, patching and head scores (see interp.h).
#include "core/interp/interp.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/base/input_error.h"
#include "core/base/rng.h"
#include "core/kernels/kernels.h"

namespace ap::interp {

namespace {

size_t sz(long long v) { return static_cast<size_t>(v); }
std::string num(long long v) { return std::to_string(v); }

// The metric's position and tokens checked against the model and T; position −1 becomes T − 1.
Metric resolve(const GPT& model, int T, Metric m, bool need_token) {
  const int V = model.config().vocab_size;
  if (m.position < 0) m.position = T - 1;
  if (m.position >= T)
    throw InputError("position " + num(m.position) + " is past the prompt's " + num(T) + " tokens", "position");
  if (need_token && m.token < 0) throw InputError("choose the token whose logit is followed", "token");
  if (m.token >= V || m.token < -1)
    throw InputError("token " + num(m.token) + " is outside the vocabulary of " + num(V), "token");
  if (m.other >= V || m.other < -1)
    throw InputError("token " + num(m.other) + " is outside the vocabulary of " + num(V), "other");
  return m;
}

bool keep_going(const Progress& p, int done, int total) { return !p || p(done, total); }

// A hook that writes `values` (T, C) into a site's columns [c0, c1) (all positions), or, with
// row ≥ 0, into that row only. C is the site's row width (site_width).
Hook put(Site site, int layer, const float* values, int T, int C, int c0, int c1, int row = -1) {
  return [=](Site s, int l, float* act) {
    if (s != site || l != layer) return;
    for (int t = 0; t < T; ++t) {
      if (row >= 0 && t != row) continue;
      std::copy(values + sz(t) * sz(C) + sz(c0), values + sz(t) * sz(C) + sz(c1), act + sz(t) * sz(C) + sz(c0));
    }
  };
}

}  // namespace

// ---------------------------------------------------------------- the logit lens

Lens logit_lens(const GPT& model, const std::vector<int>& ids, const LensOptions& o) {
  const GPTConfig& g = model.config();
  const int T = static_cast<int>(ids.size()), C = g.n_embd, V = g.vocab_size, L = g.n_layer;
  if (o.top_k < 1 || o.top_k > V) throw InputError("top_k must be between 1 and the vocabulary size " + num(V), "top_k");
  if (o.target >= V || o.target < -1) throw InputError("token " + num(o.target) + " is outside the vocabulary", "token");
  RunCache c;
  run(model, ids, c);
  const size_t TC = sz(T) * sz(C);
  Lens out;
  out.T = T;
  out.k = o.top_k;
  std::vector<const float*> at = {c.resid.data()};
  out.points = {"embed"};
  for (int l = 0; l < L; ++l) {
    if (o.mid) {
      at.push_back(c.mid.data() + sz(l) * TC);
      out.points.push_back(num(l) + ".attn");
    }
    at.push_back(c.resid.data() + sz(l + 1) * TC);
    out.points.push_back(o.mid ? num(l) + ".mlp" : num(l));
  }
  // the target at each position: the given token, or the model's own most likely (lowest id among ties)
  out.targets.resize(sz(T));
  for (int t = 0; t < T; ++t) {
    const float* x = c.logits.data() + sz(t) * sz(V);
    out.targets[sz(t)] = o.target >= 0 ? o.target : static_cast<int>(std::max_element(x, x + V) - x);
  }
  const size_t P = at.size(), k = sz(o.top_k);
  out.top_ids.resize(P * sz(T) * k);
  out.top_probs.resize(P * sz(T) * k);
  out.target_probs.resize(P * sz(T));
  out.target_ranks.resize(P * sz(T));
  const kernels::Kernels& kern = kernels::active();
  std::vector<float> lnf(TC), mean(sz(T)), rstd(sz(T)), logits(sz(T) * sz(V));
  std::vector<int> order(sz(V));
  for (size_t p = 0; p < P; ++p) {
    model.norm_forward(kern, lnf.data(), mean.data(), rstd.data(), at[p], model.vectors().ln_f_w,
                       model.vectors().ln_f_b, T);
    model.matrix_forward(kern, logits.data(), lnf.data(), GPT::Matrix::head, 0, T);  // (T, V)
    for (int t = 0; t < T; ++t) {
      const float* x = logits.data() + sz(t) * sz(V);
      const double mx = *std::max_element(x, x + V);
      double z = 0.0;
      for (int v = 0; v < V; ++v) z += std::exp(double(x[v]) - mx);
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + static_cast<long>(k), order.end(),
                        [x](int a, int b) { return x[a] > x[b] || (x[a] == x[b] && a < b); });
      const size_t row = (p * sz(T) + sz(t)) * k;
      for (size_t j = 0; j < k; ++j) {
        out.top_ids[row + j] = order[j];
        out.top_probs[row + j] = static_cast<float>(std::exp(double(x[order[j]]) - mx) / z);
      }
      const int target = out.targets[sz(t)];
      out.target_probs[p * sz(T) + sz(t)] = static_cast<float>(std::exp(double(x[target]) - mx) / z);
      int rank = 0;
      for (int v = 0; v < V; ++v) rank += x[v] > x[target] || (x[v] == x[target] && v < target);
      out.target_ranks[p * sz(T) + sz(t)] = rank;
    }
  }
  return out;
}

// ---------------------------------------------------------------- direct logit attribution

Attribution attribute(const GPT& model, const std::vector<int>& ids, const Metric& metric_in) {
  const GPTConfig& g = model.config();
  const GPTParams& p = model.vectors();  // norms and biases: a typed model stays typed
  using M = GPT::Matrix;
  const int T = static_cast<int>(ids.size()), C = g.n_embd, V = g.vocab_size, L = g.n_layer, NH = g.n_head;
  const int hs = g.head_dim(), A = g.attn_width();
  check_run(model, ids);
  const Metric m = resolve(model, T, metric_in, true);
  RunCache c;
  run(model, ids, c);
  const size_t pos = sz(m.position), TC = sz(T) * sz(C), TA = sz(T) * sz(A);
  // the unembedding's rows of the metric's tokens (U = wte, or lm_head when untied)
  std::vector<float> ua(sz(C)), ub(sz(C), 0.0f);
  model.matrix_rows(M::head, 0, m.token, 1, ua.data());
  if (m.other >= 0) model.matrix_rows(M::head, 0, m.other, 1, ub.data());
  // w_c = rstd · γ_c · u_c: a part x contributes Σ_c (x_c − mean(x)) · w_c (RMSNorm: Σ_c x_c · w_c)
  std::vector<double> w(sz(C));
  double beta_u = 0.0;
  const double rstd = c.ln_f_rstd[pos];
  for (int i = 0; i < C; ++i) {
    const double u = double(ua[sz(i)]) - (m.other >= 0 ? double(ub[sz(i)]) : 0.0);
    w[sz(i)] = rstd * double(p.ln_f_w[i]) * u;
    if (p.ln_f_b) beta_u += double(p.ln_f_b[i]) * u;
  }
  const bool centred = g.norm == Norm::layernorm;
  auto through = [&](const std::vector<double>& x) {
    double mean = 0.0;
    if (centred) {
      for (double v : x) mean += v;
      mean /= C;
    }
    double s = 0.0;
    for (int i = 0; i < C; ++i) s += (x[sz(i)] - mean) * w[sz(i)];
    return s;
  };
  std::vector<double> x(sz(C));
  auto of_floats = [&](const float* v, const float* minus = nullptr) {
    for (int i = 0; i < C; ++i) x[sz(i)] = double(v[i]) - (minus ? double(minus[i]) : 0.0);
    return through(x);
  };
  Attribution a;
  a.position = m.position;
  a.token = m.token;
  a.other = m.other;
  std::vector<float> row(sz(std::max(C, A)));  // one row of a matrix, dequantized
  model.matrix_rows(M::wte, 0, ids[pos], 1, row.data());
  const double wte = of_floats(row.data());
  const double wpe = p.wpe ? of_floats(p.wpe + pos * sz(C)) : 0.0;  // learned positions only
  a.wte = static_cast<float>(wte);
  a.wpe = static_cast<float>(wpe);
  a.ln_f_bias = static_cast<float>(beta_u);
  double sum = wte + wpe + beta_u;
  a.heads.resize(sz(L) * sz(NH));
  a.mlps.assign(sz(L), 0.0f);
  a.attn_bias.assign(sz(L), 0.0f);
  a.mlp_bias.assign(sz(L), 0.0f);
  std::vector<double> heads_x(sz(NH) * sz(C));
  for (int l = 0; l < L; ++l) {
    const BlockParams& b = p.h[sz(l)];
    const float* z = c.z.data() + sz(l) * TA + pos * sz(A);
    // head h's output: z_h · W_O[:, h]ᵀ, W_O = attn.c_proj.weight (C out, A in), its columns h·hs…;
    // W_O read a row at a time (a typed model's dequantized), each head's outputs in heads_x
    for (int o = 0; o < C; ++o) {
      model.matrix_rows(M::attn_c_proj, l, o, 1, row.data());
      for (int h = 0; h < NH; ++h) {
        double s = 0.0;
        for (int j = h * hs; j < (h + 1) * hs; ++j) s += double(z[j]) * double(row[sz(j)]);
        heads_x[sz(h) * sz(C) + sz(o)] = s;
      }
    }
    for (int h = 0; h < NH; ++h) {
      std::copy(heads_x.begin() + static_cast<long>(sz(h) * sz(C)), heads_x.begin() + static_cast<long>(sz(h + 1) * sz(C)),
                x.begin());
      const double v = through(x);
      a.heads[sz(l) * sz(NH) + sz(h)] = static_cast<float>(v);
      sum += v;
    }
    const double mlp = of_floats(c.mlp.data() + sz(l) * TC + pos * sz(C), b.mlp_c_proj_b);
    a.mlps[sz(l)] = static_cast<float>(mlp);
    sum += mlp;
    if (b.attn_c_proj_b) {
      const double ab = of_floats(b.attn_c_proj_b), mb = of_floats(b.mlp_c_proj_b);
      a.attn_bias[sz(l)] = static_cast<float>(ab);
      a.mlp_bias[sz(l)] = static_cast<float>(mb);
      sum += ab + mb;
    }
  }
  a.sum = sum;
  a.logit = metric(c, V, m.position, m.token, m.other);
  return a;
}

// ---------------------------------------------------------------- ablation

Ablation ablate(const GPT& model, const std::vector<int>& ids, AblateMode mode,
                const std::vector<std::vector<int>>& reference, const Metric& metric_in, const Progress& progress) {
  const GPTConfig& g = model.config();
  const int T = static_cast<int>(ids.size()), C = g.n_embd, V = g.vocab_size, L = g.n_layer, NH = g.n_head;
  const int hs = g.head_dim(), A = g.attn_width();
  check_run(model, ids);
  if (T < 2) throw InputError("ablation's loss needs a prompt of at least two tokens", "ids");
  const Metric m = resolve(model, T, metric_in, false);
  RunCache clean;
  run(model, ids, clean);
  const size_t TC = sz(T) * sz(C), TA = sz(T) * sz(A);
  // what replaces an activation: zeros, or the reference runs' mean per position
  std::vector<float> z_mean(sz(L) * TA, 0.0f), mlp_mean(sz(L) * TC, 0.0f);
  if (mode == AblateMode::mean) {
    if (reference.empty()) throw InputError("mean ablation needs reference sequences to average over", "reference");
    std::vector<double> zs(sz(L) * TA, 0.0), ms(sz(L) * TC, 0.0);
    RunCache r;
    for (size_t i = 0; i < reference.size(); ++i) {
      if (reference[i].size() < sz(T))
        throw InputError("reference sequence " + num(long(i)) + " has " + num(long(reference[i].size())) +
                             " tokens, fewer than the prompt's " + num(T),
                         "reference");
      run(model, std::vector<int>(reference[i].begin(), reference[i].begin() + T), r);
      for (size_t j = 0; j < zs.size(); ++j) zs[j] += r.z[j];
      for (size_t j = 0; j < ms.size(); ++j) ms[j] += r.mlp[j];
    }
    for (size_t j = 0; j < zs.size(); ++j) z_mean[j] = static_cast<float>(zs[j] / double(reference.size()));
    for (size_t j = 0; j < ms.size(); ++j) mlp_mean[j] = static_cast<float>(ms[j] / double(reference.size()));
  }
  Ablation out;
  out.loss = run_loss(clean, V);
  out.has_metric = m.token >= 0;
  out.metric = out.has_metric ? metric(clean, V, m.position, m.token, m.other) : 0.0;
  out.head_loss.assign(sz(L) * sz(NH), 0.0f);
  out.head_metric.assign(sz(L) * sz(NH), 0.0f);
  out.mlp_loss.assign(sz(L), 0.0f);
  out.mlp_metric.assign(sz(L), 0.0f);
  const int total = L * NH + L;
  int done = 0;
  RunCache r;
  auto effect = [&](float& loss, float& met) {
    loss = static_cast<float>(run_loss(r, V) - out.loss);
    met = out.has_metric ? static_cast<float>(metric(r, V, m.position, m.token, m.other) - out.metric) : 0.0f;
  };
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < NH; ++h) {
      if (!keep_going(progress, done, total)) return out.cancelled = true, out;
      run(model, ids, r, put(Site::z, l, z_mean.data() + sz(l) * TA, T, A, h * hs, (h + 1) * hs), l, &clean);
      effect(out.head_loss[sz(l) * sz(NH) + sz(h)], out.head_metric[sz(l) * sz(NH) + sz(h)]);
      ++done;
    }
  for (int l = 0; l < L; ++l) {
    if (!keep_going(progress, done, total)) return out.cancelled = true, out;
    run(model, ids, r, put(Site::mlp, l, mlp_mean.data() + sz(l) * TC, T, C, 0, C), l, &clean);
    effect(out.mlp_loss[sz(l)], out.mlp_metric[sz(l)]);
    ++done;
  }
  keep_going(progress, done, total);
  return out;
}

// ---------------------------------------------------------------- patching

PatchRuns patch_runs(const GPT& model, const std::vector<int>& clean, const std::vector<int>& corrupted,
                     const Metric& metric_in) {
  check_run(model, clean);
  if (corrupted.size() != clean.size())
    throw InputError("the corrupted prompt has " + num(long(corrupted.size())) + " tokens, the clean one " +
                         num(long(clean.size())) + ": patching needs the same length",
                     "corrupted");
  try {
    check_run(model, corrupted);
  } catch (const InputError& e) {
    throw InputError(e.what(), "corrupted");
  }
  PatchRuns r;
  const int V = model.config().vocab_size;
  r.m = resolve(model, static_cast<int>(clean.size()), metric_in, true);
  // the metric's position alone unembedded, as in every patched run: the same arithmetic, so that a
  // patch that makes the corrupted run the clean one recovers exactly 1
  run(model, clean, r.clean, nullptr, 0, nullptr, r.m.position);
  run(model, corrupted, r.corrupt, nullptr, 0, nullptr, r.m.position);
  const double mc = metric(r.clean, V, r.m.position, r.m.token, r.m.other);
  const double mr = metric(r.corrupt, V, r.m.position, r.m.token, r.m.other);
  if (mc == mr)
    throw InputError("the clean and corrupted prompts give the same logit difference: there is nothing to recover",
                     "corrupted");
  r.denom = mc - mr;
  const GPTConfig& g = model.config();
  r.result.T = r.clean.T;
  r.result.clean = mc;
  r.result.corrupted = mr;
  r.result.resid.assign(sz(g.n_layer + 1) * sz(r.clean.T), 0.0f);
  r.result.heads.assign(sz(g.n_layer) * sz(g.n_head), 0.0f);
  r.result.mlps.assign(sz(g.n_layer), 0.0f);
  return r;
}

int patch_cells(const GPTConfig& g, int T) { return (g.n_layer + 1) * T + g.n_layer * g.n_head + g.n_layer; }

Patching patch(const GPT& model, const std::vector<int>& clean, const std::vector<int>& corrupted,
               const Metric& metric_in, const Progress& progress, int first, int count) {
  return patch(model, patch_runs(model, clean, corrupted, metric_in), progress, first, count);
}

Patching patch(const GPT& model, const PatchRuns& pr, const Progress& progress, int first, int count) {
  const GPTConfig& g = model.config();
  const int C = g.n_embd, V = g.vocab_size, L = g.n_layer, NH = g.n_head, hs = g.head_dim(), A = g.attn_width();
  const int T = pr.clean.T;
  const size_t TC = sz(T) * sz(C), TA = sz(T) * sz(A);
  const Metric& m = pr.m;
  const std::vector<int>& corrupted = pr.corrupt.ids;
  Patching out = pr.result;
  const int cells = patch_cells(g, T);
  if (first < 0 || first > cells)
    throw InputError("the first cell is " + num(first) + ": the sweep has " + num(cells) + " cells", "first");
  const int end = count < 0 ? cells : std::min(cells, first + count);
  out.first = first;
  out.count = end - first;
  const int total = end - first;
  RunCache r;
  auto recovered = [&]() { return static_cast<float>((metric(r, V, m.position, m.token, m.other) - out.corrupted) / pr.denom); };
  // cell i: the residual entering layer i / T at position i % T, then each head, then each MLP
  const int heads_at = (L + 1) * T, mlps_at = heads_at + L * NH;
  for (int i = first; i < end; ++i) {
    if (!keep_going(progress, i - first, total)) return out.cancelled = true, out;
    if (i < heads_at) {
      const int l = i / T, t = i % T;
      run(model, corrupted, r, put(Site::resid, l, pr.clean.resid.data() + sz(l) * TC, T, C, 0, C, t), l, &pr.corrupt,
          m.position);
      out.resid[sz(i)] = recovered();
    } else if (i < mlps_at) {
      const int l = (i - heads_at) / NH, h = (i - heads_at) % NH;
      run(model, corrupted, r, put(Site::z, l, pr.clean.z.data() + sz(l) * TA, T, A, h * hs, (h + 1) * hs), l,
          &pr.corrupt, m.position);
      out.heads[sz(i - heads_at)] = recovered();
    } else {
      const int l = i - mlps_at;
      run(model, corrupted, r, put(Site::mlp, l, pr.clean.mlp.data() + sz(l) * TC, T, C, 0, C), l, &pr.corrupt,
          m.position);
      out.mlps[sz(l)] = recovered();
    }
  }
  keep_going(progress, total, total);
  return out;
}

Patching attribution_patch(const GPT& model, const std::vector<int>& clean, const std::vector<int>& corrupted,
                           const Metric& metric_in) {
  const GPTConfig& g = model.config();
  const int C = g.n_embd, L = g.n_layer, NH = g.n_head, hs = g.head_dim(), A = g.attn_width();
  PatchRuns pr = patch_runs(model, clean, corrupted, metric_in);
  const int T = pr.clean.T;
  const size_t TC = sz(T) * sz(C), TA = sz(T) * sz(A);
  const Metric& m = pr.m;
  RunGrads d;
  backward(model, pr.corrupt, m.position, m.token, m.other, d);
  Patching out = std::move(pr.result);
  // Σ over [c0, c1) of each row t (all rows, or row only; rows w wide) of grad · (clean − corrupt),
  // over the denominator
  auto dot = [&](const float* grad, const float* a, const float* b, int w, int c0, int c1, int row) {
    double s = 0.0;
    for (int t = 0; t < T; ++t) {
      if (row >= 0 && t != row) continue;
      for (int i = c0; i < c1; ++i) {
        const size_t j = sz(t) * sz(w) + sz(i);
        s += double(grad[j]) * (double(a[j]) - double(b[j]));
      }
    }
    return static_cast<float>(s / pr.denom);
  };
  for (int l = 0; l <= L; ++l)
    for (int t = 0; t < T; ++t)
      out.resid[sz(l) * sz(T) + sz(t)] = dot(d.resid.data() + sz(l) * TC, pr.clean.resid.data() + sz(l) * TC,
                                             pr.corrupt.resid.data() + sz(l) * TC, C, 0, C, t);
  for (int l = 0; l < L; ++l) {
    for (int h = 0; h < NH; ++h)
      out.heads[sz(l) * sz(NH) + sz(h)] = dot(d.z.data() + sz(l) * TA, pr.clean.z.data() + sz(l) * TA,
                                              pr.corrupt.z.data() + sz(l) * TA, A, h * hs, (h + 1) * hs, -1);
    // an MLP's output adds into the stream entering the next layer: its gradient is that stream's
    out.mlps[sz(l)] = dot(d.resid.data() + sz(l + 1) * TC, pr.clean.mlp.data() + sz(l) * TC,
                          pr.corrupt.mlp.data() + sz(l) * TC, C, 0, C, -1);
  }
  return out;
}

// ---------------------------------------------------------------- head scores

std::vector<std::vector<int>> repeated_tokens(int V, int length, int batch, uint64_t seed) {
  std::vector<std::vector<int>> out(sz(batch));
  Rng rng(derive_seed(seed, 1));
  for (auto& s : out) {
    s.resize(sz(2 * length));
    for (int i = 0; i < length; ++i) s[sz(i)] = s[sz(i + length)] = static_cast<int>(rng.next_u64() % uint64_t(V));
  }
  return out;
}

HeadScores head_scores(const GPT& model, const HeadScoreOptions& o) {
  const GPTConfig& g = model.config();
  const int L = g.n_layer, NH = g.n_head;
  const int n = o.length > 0 ? o.length : std::min(20, g.block_size / 2);
  if (n < 2 || 2 * n > g.block_size)
    throw InputError("the repeated sequences' length is " + num(n) + ": it must be at least 2 and at most half the context (" +
                         num(g.block_size / 2) + ")",
                     "length");
  if (o.batch < 1 || o.batch > 64) throw InputError("batch must be between 1 and 64", "batch");
  const int T = 2 * n;
  std::vector<double> ind(sz(L) * sz(NH), 0.0), prev(sz(L) * sz(NH), 0.0);
  RunCache c;
  HeadScores out;
  out.sequences = repeated_tokens(g.vocab_size, n, o.batch, o.seed);
  for (const std::vector<int>& ids : out.sequences) {
    run(model, ids, c);
    for (int lh = 0; lh < L * NH; ++lh) {
      const float* att = c.att.data() + sz(lh) * sz(T) * sz(T);  // (T, T) of layer lh / NH, head lh % NH
      double si = 0.0, sp = 0.0;
      for (int t = n; t < T; ++t) si += att[sz(t) * sz(T) + sz(t - n + 1)];
      for (int t = 1; t < T; ++t) sp += att[sz(t) * sz(T) + sz(t - 1)];
      ind[sz(lh)] += si / n;
      prev[sz(lh)] += sp / (T - 1);
    }
  }
  out.length = n;
  out.batch = o.batch;
  out.induction.resize(ind.size());
  out.previous.resize(prev.size());
  for (size_t i = 0; i < ind.size(); ++i) {
    out.induction[i] = static_cast<float>(ind[i] / o.batch);
    out.previous[i] = static_cast<float>(prev[i] / o.batch);
  }
  return out;
}

}  // namespace ap::interp
