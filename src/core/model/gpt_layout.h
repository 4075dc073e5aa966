// gpt_layout.h — the parameters' layout of gpt.cpp, for the parts of GPT written in other files
// (gpt_typed.cpp): each tensor's name, shape and view, in the flat buffer's order. Internal to
// core/model.
#pragma once

#include <string>
#include <vector>

#include "core/model/gpt.h"

namespace ap::layout {

// One parameter tensor: nanoGPT's state-dict name, PyTorch's shape, and its view in GPTParams.
struct ParamSlot {
  std::string name;
  Shape shape;
  float** view;
};

// The parameters in nanoGPT's state-dict order (without lm_head, tied to wte; without the biases
// when cfg.bias is false, their views left null); views in v.
std::vector<ParamSlot> param_layout(const GPTConfig& cfg, GPTParams& v);

}  // namespace ap::layout
