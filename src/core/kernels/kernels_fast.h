// kernels_fast.h — the fast tier of kernels.h (internal: kernels.cpp dispatches to it). The same
// table of kernels (kernels::Kernels) with the same contracts; see kernels.h for the tolerance
// promise.
//
// The kernels are written once (kernels_fast_impl.h) and compiled once per instruction set, each
// into its own table: natively avx512 (AVX-512F + FMA), avx2 (AVX2 + FMA), sse2 (every x86-64) and
// scalar (plain C++), the best one the CPU has chosen at the first call; in wasm simd128
// (AP_WASM_SIMD128, set by the build). The environment variable AP_FAST_ISA (avx512 | avx2 | sse2 |
// scalar) or set_isa() picks a lower one, so the tests and the benchmarks can run every path on one
// machine.
//
// Memory: the kernels never allocate. Packing (the GEMM's panels, an attention head's Kᵀ or Vᵀ)
// uses one fixed workspace of kWorkspaceFloats floats per thread (thread_local, in BSS: 2 MB
// reserved, pages touched only when used); the attention kernels' row blocks use the caller's
// scratch (Kernels' *_scratch functions).
#pragma once

#include <cstddef>

#include "core/kernels/kernels.h"

namespace ap::kernels::fast {

// Floats in the per-thread packing workspace.
constexpr size_t kWorkspaceFloats = size_t(1) << 19;
// The calling thread's workspace (64-byte aligned).
float* workspace();

// The table of the instruction set in use.
const Kernels& current();
// current().name: "avx512", "avx2", "sse2", "simd128" or "scalar".
const char* isa_name();
// The instruction sets this build has and this CPU runs, best first (null-terminated list).
const char* const* available_isas();
// Switches to the named instruction set; false (and no change) if it is not available.
bool set_isa(const char* name);
// Every table this build compiled, whether or not this CPU runs it (null-terminated list): for
// sizes that must hold on any instruction set (kernels.h's *_scratch_max).
const Kernels* const* compiled();

// The instruction sets this build compiles, best first: AP_FAST_ISAS(X) is X(isa) for each, isa the
// namespace its kernels_fast_<isa>.cpp (and quant_fast_<isa>.cpp) define their `table` in.
#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
#define AP_FAST_X86_ISAS(X) X(avx512) X(avx2) X(sse2)
#else
#define AP_FAST_X86_ISAS(X)
#endif
#if defined(AP_WASM_SIMD128)
#define AP_FAST_WASM_ISAS(X) X(simd128)
#else
#define AP_FAST_WASM_ISAS(X)
#endif
#define AP_FAST_ISAS(X) AP_FAST_X86_ISAS(X) AP_FAST_WASM_ISAS(X) X(scalar)

// The tables, one per instruction set.
#define AP_FAST_DECLARE_TABLE(isa) namespace isa { extern const Kernels table; }
AP_FAST_ISAS(AP_FAST_DECLARE_TABLE)
#undef AP_FAST_DECLARE_TABLE

}  // namespace ap::kernels::fast
