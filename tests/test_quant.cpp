// test_quant.cpp — quant.h's storage types: the half and bfloat16 conversions over every half, the
// quantizers' round trip, and each fast product (quant_fast_impl.h) against the reference product on
// every instruction set this machine runs (avx512, avx2, sse2, scalar natively; simd128 in the wasm
// build of this file, tests/wasm/kernels.test.mjs), for every type, with M = 1 (generation), odd M,
// N and several K (tails of every vector width); Q8_0 and Q4_0's blocks read in place also on odd
// block counts and blocks at the format's edges. Tolerance as quant.h states: both products sum the
// same dequantized values, in another order and with FMA, so |fast − ref| ≤ 2·(K+8)·u·Σ|x·w| with
// u = 2⁻²⁴, the magnitude computed in double. The reference against a dequantization written
// independently from ggml's definition is tests/gguf_test.py's (float64 NumPy). typed_matmul.h (the
// model's Linear layer on a matrix of parts of several types) against the float reference kernel on
// the dequantized rows: bit for bit in the reference tier, within the bound in the fast one (plus
// bf16's rounding of the activations where a prompt's BF16 rows take bf16_gemm.h's product). Q8_0 on
// simd128 rounds x to 16-bit integers per block of 32 first: its stated extra error (x_rounding) on top.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/kernels/bf16_gemm.h"
#include "core/kernels/kernels.h"
#include "core/kernels/kernels_fast.h"
#include "core/kernels/quant.h"
#include "core/kernels/typed_matmul.h"

namespace {

namespace Q = ap::quant;
namespace fast = ap::kernels::fast;

// Random weights of N rows of K values stored as type t.
std::vector<uint8_t> random_weights(Q::Type t, int N, int K, std::mt19937& rng) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::uniform_int_distribution<int> byte(0, 255);
  const size_t rb = static_cast<size_t>(Q::row_bytes(t, static_cast<uint64_t>(K)));
  std::vector<uint8_t> w(rb * static_cast<size_t>(N) + 2);
  std::vector<float> row(static_cast<size_t>(K));
  for (int n = 0; n < N; ++n) {
    uint8_t* dst = w.data() + rb * static_cast<size_t>(n);
    for (float& v : row) v = g(rng);
    if (t == Q::Type::F32) std::memcpy(dst, row.data(), rb);
    else if (t == Q::Type::Q8_0) Q::quantize_row_q8_0(row.data(), dst, K);
    else if (t == Q::Type::Q4_0) Q::quantize_row_q4_0(row.data(), dst, K);
    else if (t == Q::Type::F16 || t == Q::Type::BF16) {
      for (int k = 0; k < K; ++k) {
        const uint16_t h = t == Q::Type::F16 ? Q::f32_to_f16(row[static_cast<size_t>(k)]) : Q::f32_to_bf16(row[static_cast<size_t>(k)]);
        std::memcpy(dst + 2 * k, &h, 2);
      }
    } else {  // K-quants: random bits, with super-block scales of moderate size (no ∞)
      for (size_t b = 0; b < rb; ++b) dst[b] = static_cast<uint8_t>(byte(rng));
      const int bytes = Q::type_info(t).bytes;
      for (size_t at = 0; at < rb; at += static_cast<size_t>(bytes)) {
        const uint16_t d = Q::f32_to_f16(0.01f * (1.0f + std::fabs(g(rng)))), dmin = Q::f32_to_f16(0.02f * std::fabs(g(rng)));
        if (t == Q::Type::Q4_K) {
          std::memcpy(dst + at, &d, 2);
          std::memcpy(dst + at + 2, &dmin, 2);
        } else {
          std::memcpy(dst + at + static_cast<size_t>(bytes) - 2, &d, 2);
        }
      }
    }
  }
  return w;
}

// Q8_0 on simd128 rounds x to 16-bit integers per block of 32 (quant_fast_impl.h: matmul_q8_int):
// x̂_k = i_k·e_b, e_b = max_{k∈b}|x_k| / 32767, |x_k − x̂_k| ≤ e_b/2 plus the rounding of x_k·(32767 /
// max) (≤ 3u·32767·e_b < 0.01·e_b). The extra error of one output: Σ_k |w_k|·0.51·e_{b(k)} (w the
// dequantized row); 0 on every other instruction set and type.
double x_rounding(const char* isa, Q::Type t, const float* x, const float* w, int K) {
  if (t != Q::Type::Q8_0 || std::string(isa) != "simd128") return 0.0;
  double extra = 0.0;
  for (int b = 0; b < K / 32; ++b) {
    float a = 0.0f;
    double sw = 0.0;
    for (int k = 32 * b; k < 32 * b + 32; ++k) {
      a = std::max(a, std::fabs(x[k]));
      sw += std::fabs(double(w[k]));
    }
    extra += sw * 0.51 * double(a / 32767.0f);
  }
  return extra;
}

// The edge blocks' scales (half floats): 0, subnormals, −0.5, 1024, ≈0.1.
const uint16_t kEdgeScales[] = {0x0000, 0x0001, 0x03FF, 0xB800, 0x6400, 0x2E66};

// Runs fn with each instruction set this build and CPU have, then restores the one in use.
template <class Fn>
void each_isa(Fn fn) {
  const std::string before = fast::isa_name();
  for (const char* const* p = fast::available_isas(); *p; ++p) {
    REQUIRE(fast::set_isa(*p));
    REQUIRE(std::string(Q::fast_current().name) == *p);
    fn(*p);
  }
  fast::set_isa(before.c_str());
}

// The fast tier's product of every instruction set (each_isa) on x (M rows of K) and w (N rows of
// type t) against the reference, output by output, within quant.h's bound 2·(K+8)·u·Σ|x·w| (Σ in
// double), plus x_rounding's where the instruction set rounds x first; `what` names the case.
void check_fast_matmul(Q::Type t, const std::vector<uint8_t>& w, const std::vector<float>& x, int M, int N, int K,
                       const std::string& what) {
  const double u = std::ldexp(1.0, -24);
  std::vector<float> ref(static_cast<size_t>(M * N)), got(ref.size()), row(static_cast<size_t>(K));
  Q::matmul_ref(ref.data(), x.data(), w.data(), t, M, N, K);
  std::vector<double> mag(ref.size(), 0.0);
  const size_t rb = static_cast<size_t>(Q::row_bytes(t, static_cast<uint64_t>(K)));
  for (int n = 0; n < N; ++n) {
    Q::dequantize_row(t, w.data() + rb * static_cast<size_t>(n), row.data(), K);
    for (int m = 0; m < M; ++m)
      for (int k = 0; k < K; ++k)
        mag[static_cast<size_t>(m * N + n)] += std::fabs(double(x[static_cast<size_t>(m * K + k)]) * row[static_cast<size_t>(k)]);
  }
  each_isa([&](const char* isa) {
    std::fill(got.begin(), got.end(), -1.0f);
    Q::fast_current().matmul(got.data(), x.data(), w.data(), t, M, N, K);
    for (size_t i = 0; i < got.size(); ++i) {
      const int m = static_cast<int>(i) / N, n = static_cast<int>(i) % N;
      Q::dequantize_row(t, w.data() + rb * static_cast<size_t>(n), row.data(), K);
      const double tol = 2.0 * (K + 8) * u * mag[i] + x_rounding(isa, t, x.data() + static_cast<size_t>(m * K), row.data(), K);
      INFO(isa << " " << what << " output " << i);
      REQUIRE(std::fabs(double(got[i]) - ref[i]) <= tol);
    }
    // rows 4 … N−1 in a call of their own (a thread's share under GPT::set_threads starts at a
    // group of 16 rows): each output the same bits as in the whole call, whatever tile of rows
    // (four, six, or one at a time) it fell in there
    if (N <= 4) return;
    std::vector<float> part(static_cast<size_t>(M * (N - 4)));
    Q::fast_current().matmul(part.data(), x.data(), w.data() + 4 * rb, t, M, N - 4, K);
    for (int m = 0; m < M; ++m)
      for (int n = 4; n < N; ++n) {
        INFO(isa << " " << what << " row " << n << " alone");
        REQUIRE(part[static_cast<size_t>(m * (N - 4) + n - 4)] == got[static_cast<size_t>(m * N + n)]);
      }
  });
}

// A typed matrix of parts (types[p], rows[p] rows of C), random weights drawn part by part, and its
// rows dequantized by the reference (deq: (Σ rows, C)). The parts point into bytes.
struct Mixed {
  std::vector<std::vector<uint8_t>> bytes;
  ap::kernels::TypedMatrix w;
  std::vector<float> deq;
};

Mixed mixed_matrix(const std::vector<Q::Type>& types, const std::vector<int>& rows, int C, std::mt19937& rng) {
  Mixed m;
  m.bytes.reserve(types.size());
  for (size_t p = 0; p < types.size(); ++p) {
    m.bytes.push_back(random_weights(types[p], rows[p], C, rng));
    m.w.parts.push_back({types[p], reinterpret_cast<const char*>(m.bytes.back().data()), rows[p]});
    const size_t rb = static_cast<size_t>(Q::row_bytes(types[p], static_cast<uint64_t>(C)));
    for (int r = 0; r < rows[p]; ++r) {
      m.deq.resize(m.deq.size() + static_cast<size_t>(C));
      Q::dequantize_row(types[p], m.bytes.back().data() + rb * static_cast<size_t>(r), m.deq.data() + m.deq.size() - C, C);
    }
    m.w.rows += rows[p];
  }
  m.w.cols = C;
  return m;
}

}  // namespace

TEST_CASE("quant: half and bfloat16 conversions", "[quant]") {
  // every half survives the round trip (NaNs stay NaN)
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = Q::f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) CHECK(std::isnan(Q::f16_to_f32(Q::f32_to_f16(f))));
    else if (Q::f32_to_f16(f) != h) FAIL("half " << h << " → " << f << " → " << Q::f32_to_f16(f));
    const float b = Q::bf16_to_f32(static_cast<uint16_t>(h));
    if (!std::isnan(b) && Q::f32_to_bf16(b) != h) FAIL("bfloat16 " << h);
  }
  CHECK(Q::f16_to_f32(0x3C00) == 1.0f);
  CHECK(Q::f16_to_f32(0x0001) == std::ldexp(1.0f, -24));  // the smallest subnormal
  CHECK(Q::f16_to_f32(0x7BFF) == 65504.0f);
  CHECK(Q::f16_to_f32(0xC000) == -2.0f);
  // rounding to nearest, ties to even
  CHECK(Q::f32_to_f16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);       // tie → even (1.0)
  CHECK(Q::f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);   // tie → even (up)
  CHECK(Q::f32_to_f16(65519.0f) == 0x7BFF);
  CHECK(Q::f32_to_f16(65520.0f) == 0x7C00);                            // → ∞
  CHECK(Q::f32_to_f16(std::ldexp(1.0f, -25)) == 0x0000);               // tie → even (0)
  CHECK(Q::f32_to_f16(std::ldexp(3.0f, -26)) == 0x0001);
  CHECK(Q::f32_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);        // tie → even
  CHECK(Q::f32_to_bf16(1.0f + std::ldexp(3.0f, -8)) == 0x3F82);
}

// Q8_0 within half a step; Q4_0 too but at the end opposite its largest magnitude, where x/d up to
// +8 is clipped to the quant 7: a whole step.
TEST_CASE("quant: the quantizers round trip within half a step (Q4_0: one, at its clipped end)", "[quant]") {
  std::mt19937 rng(7);
  std::normal_distribution<float> g(0.0f, 2.0f);
  std::vector<float> x(64), back(64);
  for (float& v : x) v = g(rng);
  Q::BlockQ8_0 q8[2];
  Q::quantize_row_q8_0(x.data(), q8, 64);
  Q::dequantize_row(Q::Type::Q8_0, q8, back.data(), 64);
  for (int i = 0; i < 64; ++i) {
    const float d = Q::f16_to_f32(q8[i / 32].d);
    CHECK(std::fabs(back[i] - x[i]) <= 0.5f * d + 1e-3f * std::fabs(x[i]));
  }
  Q::BlockQ4_0 q4[2];
  Q::quantize_row_q4_0(x.data(), q4, 64);
  Q::dequantize_row(Q::Type::Q4_0, q4, back.data(), 64);
  for (int i = 0; i < 64; ++i) {
    const float d = std::fabs(Q::f16_to_f32(q4[i / 32].d));
    CHECK(std::fabs(back[i] - x[i]) <= d + 1e-3f * std::fabs(x[i]));
  }
  // an all-zero block quantizes to d = 0 and back to zeros
  std::vector<float> z(32, 0.0f);
  Q::quantize_row_q8_0(z.data(), q8, 32);
  CHECK(q8[0].d == 0);
  Q::dequantize_row(Q::Type::Q8_0, q8, back.data(), 32);
  CHECK(back[5] == 0.0f);
}

TEST_CASE("quant: fast products agree with the reference on every instruction set", "[quant]") {
  std::mt19937 rng(42);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const Q::Type types[] = {Q::Type::F32, Q::Type::F16, Q::Type::BF16, Q::Type::Q8_0,
                           Q::Type::Q4_0, Q::Type::Q4_K, Q::Type::Q6_K};
  for (Q::Type t : types) {
    const int block = Q::type_info(t).block;
    for (int K : {256, 512, 1280}) {
      const int k_eff = t == Q::Type::F32 || block == 1 ? K - 3 : (block == 32 ? K - 160 : K);  // odd tails
      for (int M : {1, 3}) {
        const int N = 7;
        const std::vector<uint8_t> w = random_weights(t, N, k_eff, rng);
        std::vector<float> x(static_cast<size_t>(M) * static_cast<size_t>(k_eff));
        for (float& v : x) v = g(rng);
        check_fast_matmul(t, w, x, M, N, k_eff,
                          std::string(Q::type_info(t).name) + " M=" + std::to_string(M) + " K=" + std::to_string(k_eff));
      }
    }
  }
}

// Q8_0 and Q4_0's direct products (quant_fast_impl.h: each block's quants turned to floats in lanes,
// Σ x·q per block, times d once) against the reference (dequantize, then one float sum) on random
// rows of 1 to 35 blocks (odd counts: no vector width divides them into pairs), N = 1 … 9 (the four
// rows at a time and every tail), M = 1, 2, 7, and blocks at the edges of the format: quants −128
// and 127 (a file may hold −128, the quantizer never writes it), every nibble, a zero scale, a
// subnormal one, a negative one, a large one. Within quant.h's bound: with P = 32 / lanes, a block's
// lane sum has P roundings, its scaling one, the accumulation nb = K / 32 and the final reduction
// log₂(lanes) — at most K + 34 roundings against the reference's K, inside 2·(K+8)·u·Σ|x·w| for
// every K ≥ 32.
TEST_CASE("quant: Q8_0 and Q4_0 read in place agree with the reference, edge blocks too", "[quant]") {
  std::mt19937 rng(11);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::uniform_int_distribution<int> byte(0, 255), pick(0, 5);
  for (Q::Type t : {Q::Type::Q8_0, Q::Type::Q4_0}) {
    const int bytes = Q::type_info(t).bytes;
    for (int nb : {1, 3, 5, 17, 35}) {
      const int K = 32 * nb;
      for (int N = 1; N <= 9; N += (N < 5 ? 1 : 4)) {
        std::vector<uint8_t> w = random_weights(t, N, K, rng);
        // every third block replaced by random quants (any byte: −128 … 127, every nibble) and an edge scale
        for (size_t at = 0; at + static_cast<size_t>(bytes) <= w.size() - 2; at += 3 * static_cast<size_t>(bytes)) {
          for (int b = 2; b < bytes; ++b) w[at + static_cast<size_t>(b)] = static_cast<uint8_t>(byte(rng));
          std::memcpy(&w[at], &kEdgeScales[pick(rng)], 2);
        }
        for (int M : {1, 2, 7}) {
          std::vector<float> x(static_cast<size_t>(M * K));
          for (size_t i = 0; i < x.size(); ++i) x[i] = g(rng) * (i % 7 == 0 ? 100.0f : 1.0f);  // outliers
          check_fast_matmul(t, w, x, M, N, K,
                            std::string(Q::type_info(t).name) + " blocks=" + std::to_string(nb) + " N=" +
                                std::to_string(N) + " M=" + std::to_string(M));
        }
      }
    }
  }
}

// Q4_K and Q6_K's direct products (quant_fast_impl.h: each sub-block's weights made in lanes from the
// quants, scales and mins, then summed with x) against the reference on rows of 1, 2, 3 and 5
// super-blocks, N = 1 … 9, M = 1, 2, 7, with random bits everywhere (every 6-bit scale and min,
// every quant, Q6_K's scales −128 … 127) and every third super-block given edge scales: d and dmin
// zero, subnormal, negative, large. The weights are the reference's bit for bit (quant.h), so
// quant.h's bound holds as for the other types.
TEST_CASE("quant: Q4_K and Q6_K read in place agree with the reference, edge blocks too", "[quant]") {
  std::mt19937 rng(13);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 5);
  for (Q::Type t : {Q::Type::Q4_K, Q::Type::Q6_K}) {
    const int bytes = Q::type_info(t).bytes;
    for (int nb : {1, 2, 3, 5}) {
      const int K = Q::kQK_K * nb;
      for (int N = 1; N <= 9; N += (N < 5 ? 1 : 4)) {
        std::vector<uint8_t> w = random_weights(t, N, K, rng);
        for (size_t at = 0; at + static_cast<size_t>(bytes) <= w.size() - 2; at += 3 * static_cast<size_t>(bytes)) {
          if (t == Q::Type::Q4_K) {
            std::memcpy(&w[at], &kEdgeScales[pick(rng)], 2);
            std::memcpy(&w[at + 2], &kEdgeScales[pick(rng)], 2);
          } else {
            std::memcpy(&w[at + static_cast<size_t>(bytes) - 2], &kEdgeScales[pick(rng)], 2);
          }
        }
        for (int M : {1, 2, 7}) {
          std::vector<float> x(static_cast<size_t>(M * K));
          for (size_t i = 0; i < x.size(); ++i) x[i] = g(rng) * (i % 7 == 0 ? 100.0f : 1.0f);  // outliers
          check_fast_matmul(t, w, x, M, N, K,  // x_rounding adds nothing for these types
                            std::string(Q::type_info(t).name) + " super-blocks=" + std::to_string(nb) + " N=" +
                                std::to_string(N) + " M=" + std::to_string(M));
        }
      }
    }
  }
}

// The fast tier's dequantization (what a prompt's product multiplies, typed_matmul.h) is the
// reference's, bit for bit, on every instruction set and type: random rows with edge scales as above.
TEST_CASE("quant: the fast tier dequantizes to the reference's bits", "[quant]") {
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> pick(0, 5);
  for (Q::Type t : {Q::Type::F32, Q::Type::F16, Q::Type::BF16, Q::Type::Q8_0, Q::Type::Q4_0, Q::Type::Q4_K, Q::Type::Q6_K}) {
    const int K = 3 * Q::kQK_K, N = 4, bytes = Q::type_info(t).bytes;
    std::vector<uint8_t> w = random_weights(t, N, K, rng);
    if (t == Q::Type::Q4_K || t == Q::Type::Q6_K)
      for (size_t at = 0; at + static_cast<size_t>(bytes) <= w.size() - 2; at += 2 * static_cast<size_t>(bytes)) {
        std::memcpy(&w[at + (t == Q::Type::Q4_K ? 0 : static_cast<size_t>(bytes) - 2)], &kEdgeScales[pick(rng)], 2);
        if (t == Q::Type::Q4_K) std::memcpy(&w[at + 2], &kEdgeScales[pick(rng)], 2);
      }
    std::vector<float> ref(static_cast<size_t>(N * K)), got(ref.size());
    const size_t rb = static_cast<size_t>(Q::row_bytes(t, static_cast<uint64_t>(K)));
    for (int n = 0; n < N; ++n) Q::dequantize_row(t, w.data() + rb * size_t(n), ref.data() + size_t(n * K), K);
    each_isa([&](const char* isa) {
      std::fill(got.begin(), got.end(), -1.0f);
      for (int n = 0; n < N; ++n) Q::fast_current().dequantize(t, w.data() + rb * size_t(n), got.data() + size_t(n * K), K);
      INFO(isa << " " << Q::type_info(t).name);
      for (size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &ref[i], 4) != 0) FAIL(isa << " " << Q::type_info(t).name << " value " << i << ": " << got[i] << " != " << ref[i]);
    });
  }
}

TEST_CASE("quant: matmul follows the tier and type_info knows ggml's numbers", "[quant]") {
  CHECK(Q::type_info(8u)->bytes == 34);
  CHECK(std::string(Q::type_info(14u)->name) == "Q6_K");
  CHECK(Q::type_info(13u) == nullptr);  // Q5_K: not one we run
  CHECK(Q::row_bytes(Q::Type::Q4_K, 512) == 288);
  CHECK(Q::row_bytes(Q::Type::BF16, 10) == 20);
  std::vector<float> x(32, 1.0f), w(64, 0.5f), y(2);
  Q::matmul(y.data(), x.data(), w.data(), Q::Type::F32, 1, 2, 32);
  CHECK(y[0] == 16.0f);
  CHECK(y[1] == 16.0f);
}

TEST_CASE("typed_matmul: a matrix of parts of several types, with a bias, and its rows on lookup", "[quant]") {
  // Rows 0–4 Q8_0, 5–7 BF16, 8–10 Q4_0 (a GGUF's q | k | v of mixed types): in the reference tier the
  // product is the float reference kernel on the dequantized rows, bit for bit (the same sums in the
  // same order, then the bias); in the fast tier within quant.h's bound; typed_rows is dequantize_row.
  namespace K = ap::kernels;
  std::mt19937 rng(5);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const int C = 96;
  const Mixed m = mixed_matrix({Q::Type::Q8_0, Q::Type::BF16, Q::Type::Q4_0}, {5, 3, 3}, C, rng);
  const K::TypedMatrix& w = m.w;
  const std::vector<float>& deq = m.deq;  // (11, C)
  REQUIRE(w.rows == 11);
  CHECK(w.bytes() == 5 * 102 + 3 * 192 + 3 * 54);
  const int OC = w.rows;
  for (const int M : {3, 9}) {  // generation's products, and a prompt's (the chunked float kernel)
    INFO("M = " << M);
    std::vector<float> x(static_cast<size_t>(M * C)), bias(static_cast<size_t>(OC));
    for (float& v : x) v = g(rng);
    for (float& v : bias) v = g(rng);
    std::vector<float> want(static_cast<size_t>(M * OC)), got(want.size());
    const K::Tier was = K::tier();
    K::set_tier(K::Tier::reference);
    K::reference.matmul_forward(want.data(), x.data(), deq.data(), bias.data(), M, C, OC);
    K::typed_matmul_forward(got.data(), x.data(), w, bias.data(), M, C, OC);
    CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
    K::set_tier(K::Tier::fast);
    const double u = std::ldexp(1.0, -24);
    K::typed_matmul_forward(got.data(), x.data(), w, bias.data(), M, C, OC);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < OC; ++n) {
        double mag = 0.0;
        for (int k = 0; k < C; ++k) mag += std::fabs(double(x[size_t(m * C + k)]) * deq[size_t(n * C + k)]);
        // rows 5–7 (BF16) of a prompt may take bf16_gemm.h's product: its activations' rounding on top
        const double rounding = n >= 5 && n < 8 && M >= ap::kernels::bf16::kRows && ap::kernels::bf16::enabled() &&
                                        std::strcmp(K::active().name, "avx512") == 0
                                    ? std::ldexp(1.0, -8) * mag
                                    : 0.0;
        // rows 0–4 (Q8_0) of generation's product on simd128: x's rounding to 16 bits on top
        const double x16 = n < 5 && M < 8 ? x_rounding(K::active().name, Q::Type::Q8_0, x.data() + size_t(m * C), deq.data() + size_t(n * C), C) : 0.0;
        INFO("output " << m << ", " << n);
        CHECK(std::fabs(double(got[size_t(m * OC + n)]) - want[size_t(m * OC + n)]) <= 2.0 * (C + 8) * u * mag + 2 * u * std::fabs(want[size_t(m * OC + n)]) + rounding + x16);
      }
    K::set_tier(was);
  }
  const int ids[] = {10, 0, 6, 4};
  std::vector<float> looked(4 * C), pos(4 * C, 0.5f);
  K::typed_rows(looked.data(), w, ids, 4, pos.data());
  for (int i = 0; i < 4; ++i)
    for (int c = 0; c < C; ++c) REQUIRE(looked[size_t(i * C + c)] == deq[size_t(ids[i] * C + c)] + 0.5f);
}

TEST_CASE("typed_matmul: a prompt's product over several chunks is the float kernel's on the rows", "[quant]") {
  // A prompt's product (N ≥ 8) dequantizes the weight rows a chunk at a time (whole panels of the
  // GEMM) and writes each chunk's columns in place: in either tier each output is the float kernel's
  // own on the whole dequantized matrix, bit for bit, whatever chunk it fell in (576 columns: chunks
  // of 112 rows, 128 on AVX-512; parts of 130 and 170 rows, each a whole chunk and a partial one).
  // Q8_0 and BF16 parts. (avx512 with avx512_bf16 rounds BF16 rows' activations: not compared.)
  namespace K = ap::kernels;
  std::mt19937 rng(11);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const int C = 576, N = 19;
  const Mixed m = mixed_matrix({Q::Type::Q8_0, Q::Type::BF16}, {130, 170}, C, rng);
  const K::TypedMatrix& w = m.w;
  const std::vector<float>& deq = m.deq;
  const int OC = w.rows;
  std::vector<float> x(static_cast<size_t>(N * C));
  for (float& v : x) v = g(rng);
  auto same = [&] {
    INFO("kernels " << K::active().name);
    std::vector<float> want(static_cast<size_t>(N * OC)), got(want.size(), -1.0f);
    K::active().matmul_forward(want.data(), x.data(), deq.data(), nullptr, N, C, OC);
    K::typed_matmul_forward(got.data(), x.data(), w, nullptr, N, C, OC);
    CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
  };
  const K::Tier was = K::tier();
  K::set_tier(K::Tier::reference);
  same();
  K::set_tier(K::Tier::fast);
  each_isa([&](const char* isa) {
    if (!(K::bf16::enabled() && std::strcmp(isa, "avx512") == 0)) same();
  });
  K::set_tier(was);
}
