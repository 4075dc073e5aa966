// kernels_fast.cpp — the fast tier's choice of instruction set: one table of kernels
// (kernels_fast.h) picked at the first call — the best the CPU runs, or AP_FAST_ISA's — and
// switched by set_isa(). Also the per-thread packing workspace.
#include "core/kernels/kernels_fast.h"

#include <cstdlib>
#include <cstring>

namespace ap::kernels::fast {

float* workspace() {
  alignas(64) static thread_local float ws[kWorkspaceFloats];
  return ws;
}

namespace {

struct Entry {
  const Kernels* table;
  bool (*runs)();
};

bool always() { return true; }
#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
bool has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
}
bool has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

// Best first.
const Entry kEntries[] = {
#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
    {&avx512::table, has_avx512},
    {&avx2::table, has_avx2},
    {&sse2::table, always},
#endif
#if defined(AP_WASM_SIMD128)
    {&simd128::table, always},
#endif
    {&scalar::table, always},
};
constexpr size_t kCount = sizeof kEntries / sizeof kEntries[0];

const Kernels* by_name(const char* name) {
  for (const Entry& e : kEntries)
    if (std::strcmp(e.table->name, name) == 0 && e.runs()) return e.table;
  return nullptr;
}

const Kernels* initial() {
  if (const char* env = std::getenv("AP_FAST_ISA"))
    if (const Kernels* t = by_name(env)) return t;
  for (const Entry& e : kEntries)
    if (e.runs()) return e.table;
  return &scalar::table;
}

const Kernels*& selected() {
  static const Kernels* t = initial();
  return t;
}

}  // namespace

const Kernels& current() { return *selected(); }

const char* isa_name() { return current().name; }

const char* const* available_isas() {
  static const char* names[kCount + 1] = {};
  static const bool filled = [] {
    size_t n = 0;
    for (const Entry& e : kEntries)
      if (e.runs()) names[n++] = e.table->name;
    return true;
  }();
  (void)filled;
  return names;
}

bool set_isa(const char* name) {
  const Kernels* t = by_name(name);
  if (t) selected() = t;
  return t != nullptr;
}

const Kernels* const* compiled() {
  static const Kernels* tables[kCount + 1] = {};
  static const bool filled = [] {
    for (size_t i = 0; i < kCount; ++i) tables[i] = kEntries[i].table;
    return true;
  }();
  (void)filled;
  return tables;
}

}  // namespace ap::kernels::fast
