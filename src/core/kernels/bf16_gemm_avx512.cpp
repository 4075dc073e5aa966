// bf16_gemm_avx512.cpp — bf16_gemm.h's product on AVX512_BF16 (compiled with -mavx512f
// -mavx512bw -mavx512bf16; run only when bf16::available()). The activations are rounded to bf16
// once per call (VCVTNE2PS2BF16, to nearest even), a pair of neighbouring values in one 32-bit
// word; the weights are packed 64 rows at a time into a panel whose row kp holds, for each of the
// 64 output columns, the pair (w[2kp], w[2kp+1]) — one zmm of 16 columns is one VDPBF16PS operand.
// A 6 × 64 register tile (24 accumulators) walks the whole K for each panel.
// Limits: C and OC any size (odd C's last pair padded with a zero, columns past OC computed on
// zeros and not stored); buffers per thread, grown once.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/kernels/bf16_gemm.h"

namespace ap::kernels::bf16 {

namespace {

constexpr int kMR = 6;   // rows of a register tile
constexpr int kNR = 64;  // columns of a panel (4 zmm of 16 floats)

size_t sz(int64_t v) { return static_cast<size_t>(v); }

// row (C floats) → Kp words, each the bf16 pair (row[2i] low, row[2i+1] high), zero past C.
void round_row(uint32_t* dst, const float* row, int C, int Kp) {
  for (int k = 0; k < 2 * Kp; k += 32) {
    const int left = C - k;
    const __mmask16 lo = left >= 16 ? __mmask16(0xFFFF) : left > 0 ? __mmask16((1u << left) - 1) : __mmask16(0);
    const __mmask16 hi = left >= 32 ? __mmask16(0xFFFF) : left > 16 ? __mmask16((1u << (left - 16)) - 1) : __mmask16(0);
    const __m512 a = _mm512_maskz_loadu_ps(lo, row + k);
    const __m512 b = _mm512_maskz_loadu_ps(hi, row + k + 16);
    const __m512bh p = _mm512_cvtne2ps_pbh(b, a);  // a in the low 16 bf16, b in the high
    const int words = std::min(16, Kp - k / 2);
    _mm512_mask_storeu_epi32(dst + k / 2, __mmask16((1u << words) - 1), reinterpret_cast<__m512i>(p));
  }
}

// r (16 rows of 16 words) transposed in place: four stages, each swapping the off-diagonal blocks
// of size b = 8, 4, 2, 1 between rows i and i + b (i mod 2b < b) with two-source permutes; kSwap
// holds each stage's indices (column c of row i: c mod 2b < b ? c : 16 + c − b; of row i + b:
// c mod 2b < b ? c + b : 16 + c; 16 + … picks row i + b's word).
alignas(64) const int kSwap[4][2][16] = {
    {{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23},
     {8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31}},  // b = 8
    {{0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27},
     {4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31}},  // b = 4
    {{0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29},
     {2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31}},  // b = 2
    {{0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30},
     {1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31}},  // b = 1
};

template <int S>
inline void swap_stage(__m512i r[16]) {
  constexpr int b = 8 >> S;
  const __m512i il = _mm512_load_si512(kSwap[S][0]), ih = _mm512_load_si512(kSwap[S][1]);
  for (int i = 0; i < 16; ++i) {
    if (i % (2 * b) >= b) continue;
    const __m512i a = r[i], e = r[i + b];
    r[i] = _mm512_permutex2var_epi32(a, il, e);
    r[i + b] = _mm512_permutex2var_epi32(a, ih, e);
  }
}

inline void transpose16(__m512i r[16]) {
  swap_stage<0>(r);
  swap_stage<1>(r);
  swap_stage<2>(r);
  swap_stage<3>(r);
}

// panel (Kp × kNR words, 64-byte aligned) = the pairs of w's rows r0 … r0 + n − 1 (n ≤ kNR), zero
// elsewhere: 16 rows × 16 pairs at a time, loaded (the tail masked by bf16 values: an odd C's last
// pair gets a zero) and transposed.
void pack_panel(uint32_t* panel, const uint16_t* w, int C, int Kp, int r0, int n) {
  __m512i r[16];
  for (int j0 = 0; j0 < kNR; j0 += 16)
    for (int kp0 = 0; kp0 < Kp; kp0 += 16) {
      const int left = C - 2 * kp0;  // bf16 values of a row from kp0 on
      const __mmask32 m = left >= 32 ? __mmask32(0xFFFFFFFFu) : __mmask32((1u << left) - 1);
      for (int j = 0; j < 16; ++j)
        r[j] = j0 + j < n ? _mm512_maskz_loadu_epi16(m, w + sz(int64_t(r0 + j0 + j) * C + 2 * kp0)) : _mm512_setzero_si512();
      transpose16(r);
      const int kps = std::min(16, Kp - kp0);
      for (int k = 0; k < kps; ++k) _mm512_store_si512(panel + sz(kp0 + k) * kNR + sz(j0), r[k]);
    }
}

// out rows 0 … MR−1 (stride ldo), columns 0 … nc−1 = a's MR rows (stride lda words) · the panel.
template <int MR>
void tile(float* out, int ldo, const uint32_t* a, int lda, const uint32_t* panel, int Kp, int nc) {
  __m512 acc[MR][4];
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int kp = 0; kp < Kp; ++kp) {
    const uint32_t* b = panel + sz(kp) * kNR;
    const __m512bh b0 = reinterpret_cast<__m512bh>(_mm512_load_si512(b));
    const __m512bh b1 = reinterpret_cast<__m512bh>(_mm512_load_si512(b + 16));
    const __m512bh b2 = reinterpret_cast<__m512bh>(_mm512_load_si512(b + 32));
    const __m512bh b3 = reinterpret_cast<__m512bh>(_mm512_load_si512(b + 48));
    for (int r = 0; r < MR; ++r) {
      const __m512bh x = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(a[sz(r) * sz(lda) + sz(kp)])));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], x, b0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], x, b1);
      acc[r][2] = _mm512_dpbf16_ps(acc[r][2], x, b2);
      acc[r][3] = _mm512_dpbf16_ps(acc[r][3], x, b3);
    }
  }
  for (int c = 0; c < 4; ++c) {
    const int left = nc - 16 * c;
    if (left <= 0) break;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    for (int r = 0; r < MR; ++r) _mm512_mask_storeu_ps(out + sz(r) * sz(ldo) + sz(16 * c), m, acc[r][c]);
  }
}

void tile_rows(int mr, float* out, int ldo, const uint32_t* a, int lda, const uint32_t* panel, int Kp, int nc) {
  switch (mr) {
    case 6: return tile<6>(out, ldo, a, lda, panel, Kp, nc);
    case 5: return tile<5>(out, ldo, a, lda, panel, Kp, nc);
    case 4: return tile<4>(out, ldo, a, lda, panel, Kp, nc);
    case 3: return tile<3>(out, ldo, a, lda, panel, Kp, nc);
    case 2: return tile<2>(out, ldo, a, lda, panel, Kp, nc);
    default: return tile<1>(out, ldo, a, lda, panel, Kp, nc);
  }
}

}  // namespace

void gemm(float* out, int ldo, const float* inp, const uint16_t* w, int N, int C, int OC) {
  static_assert(kMR == 6, "tile_rows dispatches 1 … 6 rows");
  thread_local std::vector<uint32_t> act;
  thread_local std::vector<uint32_t> panel_store;
  const int Kp = (C + 1) / 2;
  act.resize(sz(int64_t(N) * Kp));
  for (int n = 0; n < N; ++n) round_row(act.data() + sz(int64_t(n) * Kp), inp + sz(int64_t(n) * C), C, Kp);
  panel_store.resize(sz(int64_t(Kp) * kNR) + 16);  // + 16: room to align to 64 bytes
  uint32_t* panel = panel_store.data();
  panel += (16 - (reinterpret_cast<uintptr_t>(panel) / sizeof(uint32_t)) % 16) % 16;
  const int tiles = (N + kMR - 1) / kMR;
  for (int oc = 0; oc < OC; oc += kNR) {
    const int nc = std::min(kNR, OC - oc);
    pack_panel(panel, w, C, Kp, oc, nc);
    // the next panel's rows (contiguous bytes) fetched into L2 while this one's tiles run, a share
    // before each tile: the weights come from memory once, overlapped with the products
    const char* next = reinterpret_cast<const char*>(w + sz(int64_t(oc + nc) * C));
    const int64_t next_bytes = int64_t(std::min(kNR, OC - oc - nc)) * C * 2;
    for (int t = 0; t < tiles; ++t) {
      for (int64_t b = next_bytes * t / tiles / 64 * 64; b < next_bytes * (t + 1) / tiles; b += 64)
        _mm_prefetch(next + b, _MM_HINT_T1);
      const int n = t * kMR;
      tile_rows(std::min(kMR, N - n), out + sz(int64_t(n) * ldo + oc), ldo, act.data() + sz(int64_t(n) * Kp), Kp,
                panel, Kp, nc);
    }
  }
}

}  // namespace ap::kernels::bf16
