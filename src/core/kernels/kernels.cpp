// kernels.cpp — the tier switch of kernels.h: active() is the reference table or the fast tier's
// table of the instruction set in use; the model calls the kernels through it.
#include "core/kernels/kernels.h"

#include <algorithm>

#include "core/kernels/kernels_fast.h"

namespace ap::kernels {

namespace {

#ifdef AP_REFERENCE_KERNELS
constexpr bool kForcedReference = true;
#else
constexpr bool kForcedReference = false;
#endif

Tier g_tier = kForcedReference ? Tier::reference : Tier::fast;

// The largest size(table) over the reference table and every compiled fast table.
template <class Size>
size_t max_over_tables(Size size) {
  size_t n = size(reference);
  for (const Kernels* const* t = fast::compiled(); *t; ++t) n = std::max(n, size(**t));
  return n;
}

}  // namespace

Tier tier() { return g_tier; }

Tier set_tier(Tier t) {
  g_tier = kForcedReference ? Tier::reference : t;
  return g_tier;
}

const Kernels& active() { return g_tier == Tier::fast ? fast::current() : reference; }

const char* tier_name() { return active().name; }

size_t attention_forward_infer_scratch_max(int B, int T, int C, int NH) {
  return max_over_tables([&](const Kernels& k) { return k.attention_forward_infer_scratch(B, T, C, NH); });
}

size_t attention_backward_scratch_max(int B, int T, int C, int NH) {
  return max_over_tables([&](const Kernels& k) { return k.attention_backward_scratch(B, T, C, NH); });
}

}  // namespace ap::kernels
