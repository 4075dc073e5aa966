// main.cpp — `gpt`, the command line of the tiny GPT: train it on a built-in task or your own
// text, resume, sample, evaluate, inspect a checkpoint, look at its attention, and the `gpt api`
// line protocol that drives the same GptSession as the wasm module (docs/gpt.md has the reference).
// This file builds the app from the commands (commands.h) and turns errors into exit statuses.
//
//   gpt tasks                                the built-in tasks
//   gpt train -o FILE.safetensors [options]  a new run; checkpoints every --checkpoint-interval
//   gpt resume FILE.safetensors [--steps N]  continue a run (bit for bit as if never stopped)
//   gpt sample FILE --prompt TEXT            text from the model (greedy, temperature, top-k, top-p)
//   gpt eval FILE                            the validation loss
//   gpt inspect FILE                         config, vocabulary, step, every tensor's name and shape (GGUF: its metadata and tensors)
//   gpt attention FILE --prompt TEXT [--head L.H]   attention maps, or one head's stepper spec (L, H from 1)
//   gpt logits FILE --prompt TEXT            the logits at every position (JSON)
//   gpt api                                  one JSON call per stdin line → one JSON answer per line
//
// Exit status: 0 done; 1 bad input or a file that cannot be read or written (the core's message,
// naming the field, byte, character or tensor, on stderr); 2 usage (CLI11's message and the
// command's help); 3 training diverged (nothing written: the last checkpoint stays as it was);
// 130 interrupted by Ctrl-C (SIGINT; 143 for SIGTERM) after saving the last completed step.
// Limits: a --text file of at most 64 MiB (the run spec's limit for "text"); the rest are the
// core's (gpt.h, train.h, data.h, tokenizer.h, checkpoint.h).
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "core/kernels/kernels.h"
#include "cli/gpt/commands.h"
#include "cli/gpt/common.h"

namespace {

using namespace ap::gpt_cli;

// "--n-head" for the core's field "n_head", when the command has that option.
std::string option_for(const CLI::App* sub, const std::string& field) {
  if (!sub || field.empty()) return "";
  std::string name = "--" + (field == "layer" ? std::string("head") : field);  // --head L.H names both
  for (char& ch : name)
    if (ch == '_') ch = '-';
  try {
    sub->get_option(name);
    return name;
  } catch (const CLI::OptionNotFound&) {
    return "";
  }
}

// A parse error: the message, then the help of the command being parsed.
int usage_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<Command>& commands, int argc,
                char** argv) {
  const CLI::App* where = &app;
  for (const CLI::App* s : app.get_subcommands()) where = s;
  std::string what = e.what();
  if (where == &app) {
    // CLI11 reads an unknown command as a stray argument and says only that one is required.
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--kernels") { ++i; continue; }
      if (!arg.empty() && arg[0] != '-') {
        std::string names;
        for (const Command& c : commands) names += (names.empty() ? "" : ", ") + c.sub->get_name();
        what = "unknown command \"" + arg + "\": the commands are " + names;
        break;
      }
    }
  }
  std::cerr << "gpt: " << what << "\n\n" << where->help(where == &app ? "" : "gpt");
  return kExitUsage;
}

// Runs the parsed command; its errors become a message on stderr and an exit status.
int run(const Command& cmd) {
  try {
    return cmd.run();
  } catch (const CliError& e) {
    std::cerr << "gpt: " << e.what() << "\n";
    return e.code;
  } catch (const ap::InputError& e) {
    // The core's message names the field; the option that sets it (or the --text file) comes first.
    std::string where = option_for(cmd.sub, e.field);
    if (e.field == "text" && cmd.text_file && !cmd.text_file->empty()) where = *cmd.text_file;
    std::cerr << "gpt: " << (where.empty() ? "" : where + ": ") << e.what() << "\n";
    return kExitError;
  } catch (const std::exception& e) {
    std::cerr << "gpt: " << e.what() << "\n";
    return kExitError;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpt: train the tiny GPT of Attention Playground on a built-in task or your own text, then sample "
               "from it, evaluate it, inspect its checkpoint and look at its attention. Reference: docs/gpt.md.",
               "gpt"};
  app.require_subcommand(1);
  app.footer(
      "Exit status: 0 done, 1 bad input (the message names the field, byte or tensor), 2 usage, 3 training "
      "diverged, 130 interrupted by Ctrl-C (after saving the last completed step).\n"
      "Example: gpt train -o copy.safetensors --task copy --steps 1000 && gpt sample copy.safetensors --prompt "
      "\"cabej=\" --greedy");
  std::string kernels = "fast";
  app.add_option("--kernels", kernels,
                 "the layer kernels: fast (SIMD, the default) or reference (scalar, fixed summation order, the "
                 "same bits natively and in wasm; slower)")
      ->check(CLI::IsMember({"fast", "reference"}));
  const std::vector<Command> commands = {add_tasks(app),   add_train(app),   add_resume(app),
                                         add_sample(app),  add_eval(app),    add_inspect(app),
                                         add_attention(app), add_logits(app), add_import(app),
                                         add_api(app), add_finetune(app), add_interp(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e, commands, argc, argv);
  }
  ap::kernels::set_tier(kernels == "reference" ? ap::kernels::Tier::reference : ap::kernels::Tier::fast);
  const CLI::App* sub = app.get_subcommands().front();
  for (const Command& c : commands)
    if (c.sub == sub) return run(c);
  return kExitUsage;
}
