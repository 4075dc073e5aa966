// kernels_fast_pack.h — a part of kernels_fast_impl.h, included by it inside its ISA namespace
// (V, VT, NR and the helpers come from there); not a header of its own. The 4-lane ISAs' fast
// transposed packing: four weight rows read 4 floats at a time and transposed in registers, for
// pack_b's op(B) = Bᵀ case (a Linear layer's (OC, C) weights). Wider ISAs keep the scalar copy.

#if defined(AP_SIMD_WASM) || defined(AP_SIMD_SSE2)
// Four rows of 4 floats transposed: r0 = (a0 b0 c0 d0), r1 = (a1 b1 c1 d1), … in place.
AP_INLINE void transpose4(VT& a, VT& b, VT& c, VT& d) {
#if defined(AP_SIMD_WASM)
  const VT t0 = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
  const VT t2 = wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(c, d, 2, 6, 3, 7);
  a = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5);
  b = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);
  c = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5);
  d = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);
#else
  _MM_TRANSPOSE4_PS(a, b, c, d);
#endif
}

// pack_b's transposed case, 4 columns j of the panel at a time (4 rows of B, 4 k at a time as a
// 4×4 transpose): d[k·NR + j] = B[(j0 + j)·ldb + p0 + k] for j < n4 (a multiple of 4), k < kc.
// One vector load and store per 4 floats instead of one scalar each (the prompt's forward packs
// every weight matrix once per call: most of a 64-row product's time besides the arithmetic).
void pack_b_trans4(float* d, const float* B, int ldb, int p0, int kc, int j0, int n4) {
  for (int j = 0; j < n4; j += 4) {
    const float* s0 = B + zu(j0 + j) * ldb + p0;
    const float *s1 = s0 + ldb, *s2 = s1 + ldb, *s3 = s2 + ldb;
    int k = 0;
    for (; k + 4 <= kc; k += 4) {
      VT a = V::load(s0 + k), b = V::load(s1 + k), c = V::load(s2 + k), e = V::load(s3 + k);
      transpose4(a, b, c, e);
      V::store(d + zu(k) * NR + j, a);
      V::store(d + zu(k + 1) * NR + j, b);
      V::store(d + zu(k + 2) * NR + j, c);
      V::store(d + zu(k + 3) * NR + j, e);
    }
    for (; k < kc; ++k) {
      float* o = d + zu(k) * NR + j;
      o[0] = s0[k];
      o[1] = s1[k];
      o[2] = s2[k];
      o[3] = s3[k];
    }
  }
}
#endif

// Packs the first columns j of a transposed panel by vectors where the ISA has 4 lanes (the
// largest multiple of 4 ≤ n), nothing elsewhere; returns how many it packed.
AP_INLINE int pack_b_trans_vec(float* d, const float* B, int ldb, int p0, int kc, int j0, int n) {
#if defined(AP_SIMD_WASM) || defined(AP_SIMD_SSE2)
  pack_b_trans4(d, B, ldb, p0, kc, j0, n / 4 * 4);
  return n / 4 * 4;
#else
  (void)d, (void)B, (void)ldb, (void)p0, (void)kc, (void)j0, (void)n;
  return 0;
#endif
}
