// api_cmd.cpp — `gpt api`: one JSON call per line of stdin, one answer per line of stdout, through
// the calls' table (src/api/gpt_calls.h) — the wasm module's answers, natively, with files: load
// reads a checkpoint (or a model trained elsewhere, for finetune) and a text run's text, save writes one
// atomically.
#include <iostream>
#include <string>

#include "api/checkpoint.h"
#include "formats/file_io.h"
#include "formats/import.h"
#include "api/gpt_calls.h"
#include "api/gpt_session.h"
#include "cli/gpt/commands.h"
#include "cli/gpt/common.h"

namespace ap::gpt_cli {

namespace {

int cmd_api() {
  FileAccess files;
  // this project's checkpoints, and models trained elsewhere (as the model-only file gpt import writes)
  files.read_checkpoint = [](const std::string& path) {
    bool foreign = false;
    try {
      const FileSource src(path, kMaxCheckpointBytes, "a checkpoint");
      foreign = is_torch_zip(src) || is_foreign_safetensors(src);
    } catch (const InputError&) {  // read_checkpoint_file says what is wrong with the file
    }
    // this project's file as it is, for the session to read (the wasm module's answers, word for word)
    if (!foreign) return read_checkpoint_file(path);
    const Checkpoint c = read_checkpoint(path);  // read in slices, converted on the way
    if (c.state.vocab.empty() && !c.state.bpe)
      throw CliError(path + " has no vocabulary here (GPT-2's tokenizer files were not found beside it): give it to "
                     "gpt import with vocab.json and merges.txt, then load what that writes");
    return save_checkpoint(c.state);  // the model-only file gpt import would write
  };
  files.read_text = read_text_file;  // a CliError is an InputError: answered with "text_path"
  files.write_checkpoint = write_checkpoint_file;
  GptSession session;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::cout << call_json(session, line, files) << "\n" << std::flush;
  }
  return 0;
}

}  // namespace

Command add_api(CLI::App& app) {
  CLI::App* api = app.add_subcommand(
      "api", "read one JSON call per line on stdin, answer one JSON line each (the wasm module's answers)");
  std::string calls;
  for (const GptCall& c : kGptCalls)
    if (c.example) calls += std::string(calls.empty() ? "" : ", ") + (*c.example ? c.example : c.name);
  api->footer("Calls: " + calls + ". See docs/gpt.md.");
  return {api, cmd_api};
}

}  // namespace ap::gpt_cli
