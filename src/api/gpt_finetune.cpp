// gpt_finetune.cpp — GptSession's fine-tuning of an opened model (see gpt_session.h): the spec's
// settings, what fine-tuning would take against what there is (finetune_memory), and the call that
// turns the opened model into a run on the user's text (finetune), which then trains through the
// same calls as any run (train, step_begin … step_finish, evaluate, save).
//
// What there is: natively the open limit (kMaxOpenBytes, 32 GiB); in wasm what the module can still
// address (open_memory_left, up to 4 GiB) plus what the opened model holds now (its inference
// buffers are freed when it becomes trainable), at most kMaxOpenBytes (3 GiB). The figure is an
// estimate of the allocator's room, checked before anything is allocated.
#include <algorithm>

#include "api/gpt_json.h"
#include "api/gpt_session.h"
#include "formats/json.h"
#include "api/spec.h"

namespace ap {

using json::Value;
using namespace spec;

namespace {

std::string gib_text(int64_t b) {
  char t[32];
  std::snprintf(t, sizeof t, "%.2f GiB", b / double(int64_t(1) << 30));
  return t;
}

}  // namespace

int64_t finetune_available(const GPT& model, std::string* where) {
#ifdef __EMSCRIPTEN__
  const int64_t there = std::min(kMaxOpenBytes, open_memory_left() + model.allocated_bytes());
  if (where) *where = "for the model, of the " + gib_text(open_memory_max()) + " this page can address";
  return there;
#else
  (void)model;
  if (where) *where = "within the limit of an opened model (" + gib_text(kMaxOpenBytes) + ")";
  return kMaxOpenBytes;
#endif
}

std::string GptSession::finetune_memory(const std::string& spec_json) {
  return guarded([&] {
    require_model();
    const GPT& m = trainer_->model();
    const TrainConfig t = read_finetune_spec(json::parse(spec_json), m.config(), nullptr);
    std::string where;
    int64_t there = finetune_available(m, &where);
    if (!trainer_->opened()) there = std::min(there, kMaxModelBytes);  // a run of this project: its own limit
    const int64_t need = finetune_memory_bytes(m.config(), t);
    Value v = Value::object();
    v.set("need", static_cast<long long>(need));
    v.set("available", static_cast<long long>(there));
    v.set("fits", need <= there);
    v.set("context", t.context);
    v.set("batch_size", t.batch_size);
    if (need > there) {
      try {
        check_finetune_memory(m.config(), t, there, where);
      } catch (const InputError& e) {
        v.set("error", e.what());
        v.set("field", e.field);
      }
    }
    return v;
  });
}

std::string GptSession::finetune(const std::string& spec_json, const std::string& text) {
  return guarded([&] {
    require_model();
    DataSpec d;
    const TrainConfig t = read_finetune_spec(json::parse(spec_json), trainer_->model().config(), &d.name);
    d.text = text;
    std::string where;
    const int64_t there = finetune_available(trainer_->model(), &where);
    forget_caches();  // (a generator reads the inference buffers that become the training ones)
    trainer_->finetune(t, d, there, where);  // the opened model stays as it was on an error
    return info_value();
  });
}

}  // namespace ap
