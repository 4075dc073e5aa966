// unwind_wasm_mt.cpp — the WebAssembly exception handling's landing-pad context for gpt_core_mt
// (-pthread), linked in place of libunwind's Unwind-wasm.o (same symbols, so the archive's copy is
// not pulled in). Why: Debian's Emscripten 3.1.6 ships libunwind-mt-except.a with
// __wasm_lpad_context thread_local (.tbss), while its clang 14 writes the landing pads' context
// to __wasm_lpad_context as a plain global (R_WASM_MEMORY_ADDR relocations): the pads wrote at
// the TLS offset taken as an address and the personality read the thread's zeroed copy, so no
// typed catch ever matched (an InputError or NeedBytes reached only catch (...): "unknown error").
// Limits: the context here is one global for all threads, as clang 14 assumes: two threads
// landing in typed catch pads at the same instant could mix their contexts (the pool's threads
// catch with catch (...), which does not use it). From LLVM 15 clang makes it thread-local.
// The functions follow Emscripten's system/lib/libunwind/src/Unwind-wasm.c (MIT / Apache-2.0).
#include <stdint.h>

#if defined(__EMSCRIPTEN_PTHREADS__) && defined(__wasm_exception_handling__)

// libunwind's types, declared here (the unwind.h on the include path is clang's, not libunwind's):
// the fields of _Unwind_Exception that are read, the codes and the phase.
namespace {
struct UnwindException {
  uint64_t exception_class;
  void (*exception_cleanup)(int reason, UnwindException* e);
};
constexpr int kForeignExceptionCaught = 1;  // _URC_FOREIGN_EXCEPTION_CAUGHT
constexpr int kCleanupPhase = 2;            // _UA_CLEANUP_PHASE
}  // namespace

extern "C" {

int __gxx_personality_wasm0(int version, int actions, uint64_t exception_class, void* unwind_exception,
                            void* context);

struct _Unwind_LandingPadContext {
  uintptr_t lpad_index;  // in: the landing pad's index
  uintptr_t lsda;        // in: the LSDA's address
  uintptr_t selector;    // out: the personality's selector
};

// Written by the compiler's landing pads, read by the personality: a plain global (see above).
_Unwind_LandingPadContext __wasm_lpad_context;

int _Unwind_CallPersonality(void* exception_ptr) {
  auto* e = static_cast<UnwindException*>(exception_ptr);
  __wasm_lpad_context.selector = 0;
  // wasm has no two-phase unwinding: the cleanup phase only
  return __gxx_personality_wasm0(1, kCleanupPhase, e->exception_class, e, &__wasm_lpad_context);
}

int _Unwind_RaiseException(void* e) { __builtin_wasm_throw(0, e); }

void _Unwind_DeleteException(void* p) {
  auto* e = static_cast<UnwindException*>(p);
  if (e->exception_cleanup != nullptr) (*e->exception_cleanup)(kForeignExceptionCaught, e);
}

void _Unwind_SetGR(void* context, int index, uintptr_t value) {
  if (index == 1) static_cast<_Unwind_LandingPadContext*>(context)->selector = value;
}

uintptr_t _Unwind_GetIP(void* context) {
  return static_cast<_Unwind_LandingPadContext*>(context)->lpad_index + 2;  // a 1-based index after − 1
}

void _Unwind_SetIP(void*, uintptr_t) {}

uintptr_t _Unwind_GetLanguageSpecificData(void* context) {
  return static_cast<_Unwind_LandingPadContext*>(context)->lsda;
}

uintptr_t _Unwind_GetRegionStart(void*) { return 0; }

}  // extern "C"

#endif
