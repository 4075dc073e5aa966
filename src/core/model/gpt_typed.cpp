// gpt_typed.cpp — a GPT whose matrices stay in their file's storage type (gpt.h, "Typed weights"):
// its making from slices, the Linear layers and embedding lookup it runs on them, what it reports,
// and its conversion to the float32 model.
#include <algorithm>
#include <cstring>
#include <map>

#include "core/base/input_error.h"
#include "core/model/gpt.h"
#include "core/model/gpt_layout.h"

namespace ap {

namespace {

size_t sz(int64_t v) { return static_cast<size_t>(v); }
std::string num(long long v) { return std::to_string(v); }
std::string q(const std::string& s) { return "\"" + s + "\""; }

constexpr int64_t kPartAlign = 32;  // each part's first byte (quant.h needs 4)

// The rows [first, first + n) of m dequantized into out (n rows of m.cols floats).
void dequantize_rows(const kernels::TypedMatrix& m, int first, int n, float* out) {
  for (int r = 0; r < n; ++r) {
    const int id = first + r;
    kernels::typed_rows(out + sz(int64_t(r) * m.cols), m, &id, 1, nullptr);
  }
}

// Whether the slot is one of the matrices a typed model keeps in its types (the constructor's
// list: wte, lm_head, and each block's c_attn, attn.c_proj, c_fc and up_proj, mlp.c_proj).
bool is_typed_matrix(const layout::ParamSlot& t, const GPTParams& v) {
  if (t.view == &v.wte || t.view == &v.lm_head) return true;
  for (const BlockParams& b : v.h)
    if (t.view == &b.c_attn_w || t.view == &b.attn_c_proj_w || t.view == &b.mlp_c_proj_w || t.view == &b.c_fc_w ||
        t.view == &b.up_proj_w)
      return true;
  return false;
}

bool aligned(const char* p) { return reinterpret_cast<uintptr_t>(p) % 4 == 0; }

}  // namespace

int64_t GPT::typed_weight_bytes(const GPTConfig& config, int64_t matrix_bytes) {
  GPTParams v;
  int64_t floats = 0;
  for (const layout::ParamSlot& t : layout::param_layout(config, v))
    if (!is_typed_matrix(t, v)) floats += shape_numel(t.shape);
  return matrix_bytes + floats * int64_t(sizeof(float));
}

GPT::GPT(const GPTConfig& config, const std::vector<TypedSlice>& slices, TypedOwner owner)
    : config_(config), use_(ModelUse::infer), opened_(true), typed_(true) {
  config_.validate();
  check_memory(config_, 1, 1, use_, limit(), 0);  // the rest of the model, before the weights are known
  tensors_ = param_tensors(config_);
  n_params_ = config_.num_parameters();
  GPTParams v;
  const std::vector<layout::ParamSlot> slots = layout::param_layout(config_, v);
  tb_.assign(v.h.size(), TypedBlock{});
  sources_.assign(slots.size(), TypedSource{});
  // Each matrix's TypedMatrix (SwiGLU's up_proj: c_fc's rows from H on); the rest go to floats.
  int64_t floats = 0;
  std::map<std::string, size_t> by_name;
  std::vector<kernels::TypedMatrix*> mats;  // each distinct matrix once, for the checks below
  for (size_t i = 0; i < slots.size(); ++i) {
    const layout::ParamSlot& t = slots[i];
    by_name[t.name] = i;
    kernels::TypedMatrix* m = nullptr;
    int row = 0, rows = t.shape.size() == 2 ? static_cast<int>(t.shape[0]) : 0;
    if (t.view == &v.wte) m = &t_wte_;
    else if (t.view == &v.lm_head) m = &t_head_;
    for (size_t l = 0; !m && l < v.h.size(); ++l) {
      BlockParams& b = v.h[l];
      TypedBlock& tb = tb_[l];
      if (t.view == &b.c_attn_w) m = &tb.c_attn;
      else if (t.view == &b.attn_c_proj_w) m = &tb.attn_c_proj;
      else if (t.view == &b.mlp_c_proj_w) m = &tb.mlp_c_proj;
      else if (t.view == &b.c_fc_w || t.view == &b.up_proj_w) {
        m = &tb.c_fc;
        row = t.view == &b.up_proj_w ? config_.inner() : 0;
        rows = config_.fc_width();
      }
    }
    if (m) {
      if (m->rows == 0) mats.push_back(m);
      m->rows = rows;
      m->cols = static_cast<int>(t.shape[1]);
      sources_[i].matrix = m;
      sources_[i].row = row;
    } else {
      floats += shape_numel(t.shape);
    }
  }
  // The memory with the weights as they will be held, before anything is allocated: the matrices'
  // slices copied (or in place: the owner's bytes) and the rest float32.
  int64_t copied = 0;
  for (const TypedSlice& s : slices) {
    const auto it = by_name.find(s.param);
    if (it != by_name.end() && sources_[it->second].matrix && !(owner.keep && aligned(s.data)) && s.rows > 0 && s.cols > 0)
      copied += static_cast<int64_t>(quant::row_bytes(s.type, static_cast<uint64_t>(s.cols))) * s.rows;
  }
  check_memory(config_, 1, 1, use_, limit(), copied + owner.bytes + floats * int64_t(sizeof(float)));
  params_.resize(sz(floats));
  if (floats) std::memset(params_.data(), 0, sz(floats) * sizeof(float));
  float* at = params_.data();
  for (size_t i = 0; i < slots.size(); ++i) {
    *slots[i].view = sources_[i].matrix ? nullptr : at;
    sources_[i].floats = *slots[i].view;
    if (!sources_[i].matrix) at += shape_numel(slots[i].shape);
  }
  p_ = v;
  param_base_ = params_.data();

  // The slices: the small tensors' dequantized now, the matrices' sorted by row and copied.
  struct Entry {
    kernels::TypedMatrix* m;
    int64_t start;
    const TypedSlice* s;
  };
  std::vector<Entry> entries;
  for (const TypedSlice& s : slices) {
    const auto it = by_name.find(s.param);
    if (it == by_name.end()) throw InputError("this model has no parameter " + q(s.param), s.param);
    const layout::ParamSlot& t = slots[it->second];
    const bool matrix = t.shape.size() == 2;
    const int64_t numel = shape_numel(t.shape), n_cols = matrix ? t.shape[1] : s.cols;
    const int64_t first = matrix ? s.row * n_cols : s.row;  // a 1-D tensor's slice: from element `row`
    const quant::TypeInfo& ti = quant::type_info(s.type);
    if (s.cols != n_cols || s.cols < 1 || s.cols % ti.block != 0 || s.row < 0 || s.rows < 1 ||
        first + s.rows * s.cols > numel)
      throw InputError(num(s.rows) + " rows of " + num(s.cols) + " " + ti.name + " values from " +
                           (matrix ? "row " : "element ") + num(s.row) + " do not fit " + q(s.param) + " (" +
                           num(numel) + " values)",
                       s.param);
    const TypedSource& src = sources_[it->second];
    if (src.matrix) {
      entries.push_back({src.matrix, src.row + s.row, &s});
      continue;
    }
    const uint64_t rb = quant::row_bytes(s.type, static_cast<uint64_t>(s.cols));
    for (int64_t r = 0; r < s.rows; ++r)
      quant::dequantize_row(s.type, s.data + rb * static_cast<uint64_t>(r), src.floats + first + r * s.cols, s.cols);
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.m != b.m ? std::less<const void*>()(a.m, b.m) : a.start < b.start;
  });
  // One part per run of rows of one type: rows stacked in a matrix's order share a part (copied:
  // one after the other in typed_bytes_; in place: when the bytes follow one another already).
  auto row_bytes = [](const Entry& e) { return static_cast<int64_t>(quant::row_bytes(e.s->type, static_cast<uint64_t>(e.s->cols))); };
  auto in_place = [&](const Entry& e) { return owner.keep && aligned(e.s->data); };
  auto continues = [&](const Entry* prev, const Entry& e, int64_t prev_end) {
    if (!prev || prev->m != e.m || prev->s->type != e.s->type || prev_end != e.start || in_place(*prev) != in_place(e))
      return false;
    return !in_place(e) || prev->s->data + row_bytes(*prev) * prev->s->rows == e.s->data;
  };
  int64_t total = 0, end = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (!in_place(e)) {
      if (!continues(i ? &entries[i - 1] : nullptr, e, end)) total = (total + kPartAlign - 1) / kPartAlign * kPartAlign;
      total += row_bytes(e) * e.s->rows;
    }
    end = e.start + e.s->rows;
  }
  typed_bytes_.assign(sz(total), 0);
  int64_t offset = 0;
  end = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    const int64_t bytes = row_bytes(e) * e.s->rows;
    int64_t covered = 0;  // the matrix's rows before this slice
    for (const kernels::TypedPart& p : e.m->parts) covered += p.rows;
    if (covered != e.start)
      throw InputError("the slices of " + q(e.s->param) + " overlap or leave a gap at row " + num(std::min(covered, e.start)),
                       e.s->param);
    if (continues(i ? &entries[i - 1] : nullptr, e, end)) {
      e.m->parts.back().rows += static_cast<int>(e.s->rows);
    } else if (in_place(e)) {
      e.m->parts.push_back({e.s->type, e.s->data, static_cast<int>(e.s->rows)});
    } else {
      offset = (offset + kPartAlign - 1) / kPartAlign * kPartAlign;
      e.m->parts.push_back({e.s->type, typed_bytes_.data() + offset, static_cast<int>(e.s->rows)});
    }
    if (!in_place(e)) {
      std::memcpy(typed_bytes_.data() + offset, e.s->data, sz(bytes));
      offset += bytes;
    }
    end = e.start + e.s->rows;
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    const kernels::TypedMatrix* m = sources_[i].matrix;
    int covered = 0;
    if (m)
      for (const kernels::TypedPart& p : m->parts) covered += p.rows;
    if (m && covered != m->rows)
      throw InputError("the slices give " + num(covered) + " of the " + num(m->rows) + " rows of " + q(slots[i].name),
                       slots[i].name);
  }
  if (owner.keep) typed_owner_ = std::move(owner);
  make_tables();
}

namespace {

// Rows [lo, hi) of m, as a matrix of its own (the parts cut where they cross lo and hi).
kernels::TypedMatrix row_slice(const kernels::TypedMatrix& m, int lo, int hi) {
  kernels::TypedMatrix s;
  s.cols = m.cols;
  s.rows = hi - lo;
  int at = 0;
  for (const kernels::TypedPart& p : m.parts) {
    const int a = std::max(lo, at), e = std::min(hi, at + p.rows);
    if (a < e) {
      const uint64_t rb = quant::row_bytes(p.type, static_cast<uint64_t>(m.cols));
      s.parts.push_back({p.type, p.data + rb * static_cast<uint64_t>(a - at), e - a});
    }
    at += p.rows;
  }
  return s;
}

}  // namespace

// The typed product split across set_threads' threads as the float one (split_columns): each
// thread takes its rows of the matrix and writes its columns in place, every output computed as on
// one thread (typed_matmul.h), so the same bits. Generation's one row splits when the matrix is
// big enough to pay for waking the pool, a prompt from kMinRows rows.
void GPT::linear(const kernels::Kernels& k, float* out, const float* inp, const float* w,
                 const kernels::TypedMatrix* tw, const float* b, int N, int C, int OC) {
  if (!tw || tw->empty()) return linear(k, out, inp, w, b, N, C, OC);  // float32: split likewise
  constexpr int kMinRows = 4;
  auto product = [&](int lo, int hi) {
    kernels::typed_matmul_forward_into(out + lo, OC, inp, row_slice(*tw, lo, hi), b ? b + lo : nullptr, N, C, hi - lo);
  };
  const bool worth = N == 1 ? int64_t(C) * OC >= kMinSplit : N >= kMinRows;
  if (!worth || !split_columns(OC, product)) kernels::typed_matmul_forward(out, inp, *tw, b, N, C, OC);
}

void GPT::embed(const kernels::Kernels& k, float* out, const int* ids, int B, int T, int pos0) const {
  const int C = config_.n_embd;
  const float* wpe = p_.wpe ? p_.wpe + int64_t(pos0) * C : nullptr;
  if (!typed_) return k.encoder_forward(out, ids, p_.wte, wpe, B, T, C);
  for (int b = 0; b < B; ++b) kernels::typed_rows(out + sz(int64_t(b) * T * C), t_wte_, ids + int64_t(b) * T, T, wpe);
}

GPT::MatrixRef GPT::matrix(Matrix m, int layer) const {
  if (m == Matrix::wte) return {typed_ ? &t_wte_ : nullptr, p_.wte, nullptr};
  if (m == Matrix::head) return {typed_head(), p_.lm_head ? p_.lm_head : p_.wte, nullptr};
  if (layer < 0 || layer >= config_.n_layer)
    throw InputError("layer " + num(layer) + " is not one of the model's " + num(config_.n_layer), "layer");
  const BlockParams& b = p_.h[sz(layer)];
  const TypedBlock* t = typed_ ? &tb_[sz(layer)] : nullptr;
  switch (m) {
    case Matrix::c_attn: return {t ? &t->c_attn : nullptr, b.c_attn_w, b.c_attn_b};
    case Matrix::attn_c_proj: return {t ? &t->attn_c_proj : nullptr, b.attn_c_proj_w, b.attn_c_proj_b};
    case Matrix::c_fc: return {t ? &t->c_fc : nullptr, b.c_fc_w, b.c_fc_b};  // SwiGLU: gate | up
    default: return {t ? &t->mlp_c_proj : nullptr, b.mlp_c_proj_w, b.mlp_c_proj_b};
  }
}

int GPT::matrix_rows(Matrix m) const {
  switch (m) {
    case Matrix::c_attn: return config_.qkv_width();
    case Matrix::c_fc: return config_.fc_width();
    case Matrix::wte:
    case Matrix::head: return config_.vocab_size;
    default: return config_.n_embd;
  }
}

int GPT::matrix_cols(Matrix m) const {
  if (m == Matrix::attn_c_proj) return config_.attn_width();
  if (m == Matrix::mlp_c_proj) return config_.inner();
  return config_.n_embd;
}

namespace {

// The rows of a typed matrix a chunk converts at a time (about kChunkFloats floats: 64 KiB, at
// least 16 rows).
constexpr int64_t kChunkFloats = 1 << 14;
int chunk_rows(int rows, int cols) { return static_cast<int>(std::max<int64_t>(16, std::min<int64_t>(rows, kChunkFloats / cols))); }

}  // namespace

void GPT::matrix_forward(const kernels::Kernels& k, float* out, const float* inp, Matrix m, int layer, int N) const {
  const MatrixRef r = matrix(m, layer);
  const int OC = matrix_rows(m), C = matrix_cols(m);
  if (!r.typed) return k.matmul_forward(out, inp, r.w, r.b, N, C, OC);
  if (&k == &kernels::active()) return kernels::typed_matmul_forward(out, inp, *r.typed, r.b, N, C, OC);
  const int R = chunk_rows(OC, C);
  std::vector<float> deq(sz(int64_t(R) * C)), part(sz(int64_t(N) * R));
  for (int r0 = 0; r0 < OC; r0 += R) {
    const int n = std::min(R, OC - r0);
    dequantize_rows(*r.typed, r0, n, deq.data());
    k.matmul_forward(part.data(), inp, deq.data(), r.b ? r.b + r0 : nullptr, N, C, n);
    for (int i = 0; i < N; ++i)
      std::memcpy(out + sz(int64_t(i) * OC + r0), part.data() + sz(int64_t(i) * n), sz(n) * sizeof(float));
  }
}

void GPT::matrix_backward(const kernels::Kernels& k, float* dinp, const float* dout, const float* inp, Matrix m,
                          int layer, int N) const {
  const MatrixRef r = matrix(m, layer);
  const int OC = matrix_rows(m), C = matrix_cols(m);
  if (!r.typed) return k.matmul_backward(dinp, nullptr, nullptr, dout, inp, r.w, N, C, OC);
  // chunk by chunk of rows in order: each dinp value gets its terms in the float model's order
  const int R = chunk_rows(OC, C);
  std::vector<float> deq(sz(int64_t(R) * C)), d(sz(int64_t(N) * R));
  for (int r0 = 0; r0 < OC; r0 += R) {
    const int n = std::min(R, OC - r0);
    dequantize_rows(*r.typed, r0, n, deq.data());
    for (int i = 0; i < N; ++i)
      std::memcpy(d.data() + sz(int64_t(i) * n), dout + sz(int64_t(i) * OC + r0), sz(n) * sizeof(float));
    k.matmul_backward(dinp, nullptr, nullptr, d.data(), inp, deq.data(), N, C, n);
  }
}

void GPT::matrix_rows(Matrix m, int layer, int first, int n, float* out) const {
  const MatrixRef r = matrix(m, layer);
  const int rows = matrix_rows(m), C = matrix_cols(m);
  if (first < 0 || n < 0 || first + n > rows)
    throw InputError("rows " + num(first) + " to " + num(first + n) + " are outside the " + num(rows) + " rows", "row");
  if (r.typed) return dequantize_rows(*r.typed, first, n, out);
  std::memcpy(out, r.w + sz(int64_t(first) * C), sz(int64_t(n) * C) * sizeof(float));
}

int64_t GPT::weight_bytes() const {
  return static_cast<int64_t>(params_.capacity() * sizeof(float) + typed_bytes_.capacity()) + typed_owner_.bytes;
}

std::vector<std::pair<std::string, std::string>> GPT::weight_types() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; typed_ && i < tensors_.size(); ++i) {
    const TypedSource& s = sources_[i];
    if (!s.matrix) continue;
    std::string types;
    int at = 0;
    const int64_t first = s.row, last = s.row + tensors_[i].shape[0];
    for (const kernels::TypedPart& p : s.matrix->parts) {
      const std::string name = quant::type_info(p.type).name;
      if (at < last && at + p.rows > first && ("+" + types + "+").find("+" + name + "+") == std::string::npos)
        types += (types.empty() ? "" : "+") + name;
      at += p.rows;
    }
    out.emplace_back(tensors_[i].name, types);
  }
  return out;
}

void GPT::convert_to_float32() {
  FloatBuffer full;
  full.resize(sz(n_params_));
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const ParamTensor& t = tensors_[i];
    float* dst = full.data() + t.offset;
    const TypedSource& s = sources_[i];
    if (s.floats) std::memcpy(dst, s.floats, sz(t.numel) * sizeof(float));
    else dequantize_rows(*s.matrix, s.row, static_cast<int>(t.shape[0]), dst);
  }
  params_.swap(full);
  param_base_ = params_.data();
  p_ = param_views(param_base_, config_);
  std::vector<char>().swap(typed_bytes_);
  typed_owner_ = TypedOwner{};
  tb_.clear();
  t_wte_ = kernels::TypedMatrix{};
  t_head_ = kernels::TypedMatrix{};
  sources_.clear();
  typed_ = false;
}

}  // namespace ap
