// checkpoint_format.h — the name, version and size limits of the GPT's own checkpoint (api/checkpoint.h),
// here so that the importers (import.h) can tell the project's own safetensors from a foreign one
// without reaching up into the api layer.
#pragma once

#include <cstdint>

namespace ap {

constexpr const char* kCheckpointFormat = "attention-playground-gpt";
constexpr int kCheckpointFormatVersion = 1;
constexpr uint64_t kMaxCheckpointHeader = uint64_t(1) << 24;  // 16 MiB
constexpr uint64_t kMaxCheckpointBytes = uint64_t(1) << 31;   // 2 GiB

}  // namespace ap
