// bindings.cpp — the Embind layer, and nothing else: it exposes the JSON API of src/api/api.h.
//
// Every function takes and returns strings only, so JS never holds an Embind object that it must
// delete, and no C++ exception crosses into JS (api.cpp catches them all and returns
// {"ok":false,...}); an escaped exception would leak wasm memory in Emscripten 3.1.6.
// heap_bytes_in_use() reports malloc's live bytes, for the leak test in tests/wasm/.
#include <emscripten/bind.h>
#include <malloc.h>

#include "api/api.h"

namespace {

double heap_bytes_in_use() { return static_cast<double>(mallinfo().uordblks); }

}  // namespace

EMSCRIPTEN_BINDINGS(attention_core) {
  emscripten::function("trace_json", &ap::trace_json);
  emscripten::function("backward_json", &ap::backward_json);
  emscripten::function("gradcheck_json", &ap::gradcheck_json);
  emscripten::function("parse_matrix_json", &ap::parse_matrix_json);
  emscripten::function("random_matrix_json", &ap::random_matrix_json);
  emscripten::function("causal_mask_json", &ap::causal_mask_json);
  emscripten::function("softmax_json", &ap::softmax_json);
  emscripten::function("version", &ap::version);
  emscripten::function("heap_bytes_in_use", &heap_bytes_in_use);
}
