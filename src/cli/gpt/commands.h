// commands.h — the `gpt` CLI's commands. Each add_* adds its subcommand, with its options, to the
// app (in the order the help lists them) and returns how to run it once parsed.
//   train_cmd.cpp   train, resume, finetune (the training loop, Ctrl-C, the checkpoints)
//   model_cmds.cpp  tasks, sample, eval, inspect, attention, logits
//   import_cmd.cpp  import (nanoGPT's ckpt.pt → a model-only checkpoint)
//   interp_cmd.cpp  interp (lens, attribute, ablate, patch, attribution_patch, heads)
//   api_cmd.cpp     api (the GptSession's calls, one JSON line each: src/api/gpt_calls.h)
//   gguf_cmd.cpp    inspect of a GGUF file (formats/gguf.h)
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace ap::gpt_cli {

struct Command {
  CLI::App* sub;
  std::function<int()> run;                 // the exit status; throws CliError or InputError
  const std::string* text_file = nullptr;  // its --text: an error about "text" names that file
};

Command add_tasks(CLI::App& app);
Command add_train(CLI::App& app);
Command add_resume(CLI::App& app);
Command add_sample(CLI::App& app);
Command add_eval(CLI::App& app);
Command add_inspect(CLI::App& app);
Command add_attention(CLI::App& app);
Command add_logits(CLI::App& app);
Command add_import(CLI::App& app);
Command add_api(CLI::App& app);

// `gpt inspect` of a GGUF file (gguf_cmd.cpp): whether the file is one (its name ends in .gguf, or
// it starts with GGUF's magic), and the command itself.
bool is_gguf_file(const std::string& path);
int cmd_inspect_gguf(const std::string& path, bool as_json);
Command add_finetune(CLI::App& app);
Command add_interp(CLI::App& app);

}  // namespace ap::gpt_cli
