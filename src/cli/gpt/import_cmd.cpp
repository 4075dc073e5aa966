// import_cmd.cpp — `gpt import FILE… -o model.safetensors`: a model trained elsewhere (nanoGPT's
// ckpt.pt with its meta.pkl) written as the project's model-only checkpoint (api/import.h,
// docs/import.md), which every command and the training page's loader then read.
#include <iostream>
#include <memory>
#include <vector>

#include "../../api/checkpoint.h"
#include "../../api/import.h"
#include "../../api/safetensors.h"
#include "commands.h"
#include "common.h"

namespace ap::gpt_cli {

namespace {

struct ImportArgs {
  std::vector<std::string> files;
  std::string out;
  bool quiet = false;
};

int cmd_import(const ImportArgs& a) {
  std::string ckpt, meta, ckpt_bytes;
  for (const std::string& f : a.files) {
    std::string bytes;
    try {
      bytes = read_checkpoint_file(f);
    } catch (const InputError& e) {
      throw CliError(e.what());
    }
    if (is_torch_zip(bytes)) {
      if (!ckpt.empty()) throw CliError("two checkpoints given (" + ckpt + " and " + f + "): import one at a time");
      ckpt = f;
      ckpt_bytes = std::move(bytes);
    } else if (!bytes.empty() && static_cast<unsigned char>(bytes[0]) == 0x80) {  // a pickle: PROTO
      if (!meta.empty()) throw CliError("two meta.pkl files given (" + meta + " and " + f + ")");
      meta = f;
    } else if (is_foreign_safetensors(bytes)) {
      throw CliError(f + " is a safetensors file from elsewhere (Hugging Face's GPT-2?): it reads text with GPT-2's BPE "
                         "tokenizer, which this version does not have, so it cannot be imported yet (gpt logits --ids "
                         "runs it from token ids)");
    } else {
      throw CliError(f + " is neither a PyTorch checkpoint (a zip, such as nanoGPT's ckpt.pt) nor a pickle (meta.pkl)");
    }
  }
  if (ckpt.empty()) throw CliError("no checkpoint given: name nanoGPT's ckpt.pt (and its meta.pkl)");
  check_writable(a.out, "the model");
  TrainState s;
  try {
    s = import_model(ckpt, ckpt_bytes, meta);
    require_vocab(s, ckpt);  // the project's format keeps a character vocabulary
  } catch (const CliError&) {
    throw;
  } catch (const InputError& e) {
    throw CliError(e.what());
  }
  const std::string bytes = save_checkpoint(s);
  write_checkpoint_file(a.out, bytes);
  if (!a.quiet)
    std::cout << "wrote " << a.out << " (" << with_commas(static_cast<long long>(bytes.size())) << " bytes): "
              << describe_config(s.model) << ", " << with_commas(s.model.num_parameters()) << " parameters, from "
              << s.source << "\n";
  return 0;
}

}  // namespace

Command add_import(CLI::App& app) {
  auto a = std::make_shared<ImportArgs>();
  CLI::App* sub = app.add_subcommand(
      "import", "convert a model trained elsewhere (nanoGPT's ckpt.pt with its meta.pkl) to a model-only checkpoint");
  sub->add_option("files", a->files, "nanoGPT's ckpt.pt, and the meta.pkl of its dataset (else looked for beside it, "
                                     "or at ../data/<dataset>/meta.pkl)")
      ->required();
  sub->add_option("-o,--output", a->out, "the model-only checkpoint to write (.safetensors)")->required();
  sub->add_flag("-q,--quiet", a->quiet, "print nothing on success");
  sub->footer("Example: gpt import out-shakespeare-char/ckpt.pt data/shakespeare_char/meta.pkl -o shakespeare.safetensors. "
              "See docs/import.md.");
  return {sub, [a] { return cmd_import(*a); }};
}

}  // namespace ap::gpt_cli
