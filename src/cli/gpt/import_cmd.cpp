// import_cmd.cpp — `gpt import FILE… -o model.safetensors`: a model trained elsewhere (nanoGPT's
// ckpt.pt with its meta.pkl or GPT-2's tokenizer files; Hugging Face's GPT-2 model.safetensors
// with its config.json and tokenizer files) written as the project's model-only checkpoint
// (formats/import.h, docs/import.md), tokenizer included, which every command and the training page's
// loader then read. Files are told apart by their contents (a zip, a pickle, a safetensors file)
// and, for the text ones, by their names: config.json, tokenizer.json, another *.json is a
// vocab.json, a *.txt or *.bpe a merges.txt.
#include <iostream>
#include <memory>
#include <vector>

#include "api/checkpoint.h"
#include "formats/file_io.h"
#include "formats/import.h"
#include "formats/safetensors.h"
#include "cli/gpt/commands.h"
#include "cli/gpt/common.h"
#include "formats/llama_load.h"

namespace ap::gpt_cli {

namespace {

struct ImportArgs {
  std::vector<std::string> files;
  std::string out;
  bool quiet = false;
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A folder without its tokenizer.json, which a checkpoint keeps.
CliError no_tokenizer(const std::string& folder) {
  return CliError(folder + " has no tokenizer.json: a checkpoint keeps the model's tokenizer, so gpt import "
                  "needs it (gpt logits --ids and gpt sample --ids read the folder as it is)");
}

}  // namespace

TrainState read_model_files(const std::vector<std::string>& files, bool own_files) {
  if (files.size() == 1 && is_hf_folder(files[0])) {  // the Llama family: the checkpoint keeps its tokenizer
    TrainState s = read_checkpoint(files[0]).state;
    if (!s.hf_tokenizer) throw no_tokenizer(files[0]);
    return s;
  }
  std::string ckpt, meta, hf, config, own;
  std::unique_ptr<FileSource> model_src;  // the model file, read in slices, never whole
  TokenizerFiles tf;
  auto once = [](std::string& slot, const std::string& f, const char* what) {
    if (!slot.empty()) throw CliError(std::string("two ") + what + " given (" + slot + " and " + f + ")");
    slot = f;
  };
  for (const std::string& f : files) {
    std::unique_ptr<FileSource> src;
    bool zip = false, foreign = false, safetensors_file = false;
    try {
      src = std::make_unique<FileSource>(f, kMaxCheckpointBytes, "a checkpoint");
      zip = is_torch_zip(*src);
      foreign = !zip && is_foreign_safetensors(*src);
      safetensors_file = src->size() >= 9 && src->read(8, 1)[0] == '{';
    } catch (const InputError& e) {
      throw CliError(e.what());
    }
    if (zip || foreign || (own_files && safetensors_file)) {
      const std::string& first = !ckpt.empty() ? ckpt : !hf.empty() ? hf : own;
      if (!first.empty()) throw CliError("two models given (" + first + " and " + f + "): give one at a time");
      (zip ? ckpt : foreign ? hf : own) = f;
      model_src = std::move(src);
    } else if (src->size() > 0 && static_cast<unsigned char>(src->read(0, 1)[0]) == 0x80) {  // a pickle: PROTO
      once(meta, f, "meta.pkl files");
    } else if (ends_with(f, "config.json")) {
      once(config, f, "config.json files");
    } else if (ends_with(f, "tokenizer.json")) {
      once(tf.tokenizer_json, f, "tokenizer.json files");
    } else if (ends_with(f, ".json")) {
      once(tf.vocab, f, "vocab.json files");
    } else if (ends_with(f, ".txt") || ends_with(f, ".bpe")) {
      once(tf.merges, f, "merges.txt files");
    } else {
      throw CliError(f + " is none of a PyTorch checkpoint (a zip, such as nanoGPT's ckpt.pt), a pickle (meta.pkl), a "
                         "safetensors model, a config.json, a tokenizer.json, a vocab.json or a merges.txt");
    }
  }
  if (ckpt.empty() && hf.empty() && own.empty())
    throw CliError("no model given: name nanoGPT's ckpt.pt (with its meta.pkl, or GPT-2's tokenizer files) or Hugging "
                   "Face's model.safetensors (with its config.json and tokenizer files)" +
                   std::string(own_files ? ", or this project's .safetensors" : ""));
  if (!tf.tokenizer_json.empty() && !tf.vocab.empty())
    throw CliError("give GPT-2's tokenizer once: " + tf.vocab + " and " + tf.merges + ", or " + tf.tokenizer_json + ", not both");
  if (!hf.empty() && !meta.empty()) throw CliError(meta + " is nanoGPT's meta.pkl, but " + hf + " is not a nanoGPT checkpoint");
  if (!own.empty() && (!meta.empty() || !config.empty() || !tf.vocab.empty() || !tf.merges.empty() || !tf.tokenizer_json.empty()))
    throw CliError(own + " is this project's file: it holds its config and tokenizer, so give it alone");
  TrainState s;
  const std::string model = !ckpt.empty() ? ckpt : !hf.empty() ? hf : own;
  try {
    if (!own.empty()) {
      try {
        s = load_checkpoint(*model_src);
      } catch (const InputError& e) {
        throw CliError(own + ": " + e.what());
      }
      if (!s.model_only()) {  // a run of this project: its model alone, as a model from elsewhere
        s.source = "this playground's " + own + ", step " + std::to_string(s.step) + " on " + describe_data(s);
        s.m.clear();
        s.v.clear();
      }
      return s;
    }
    if (!ckpt.empty()) {
      s = import_model(ckpt, *model_src, meta);
    } else {
      if (config.empty()) config = parent_dir(hf) + "/config.json";
      ImportPlan plan = plan_hf_gpt2(*model_src, read_file(config, kMaxTextBytes, "the config.json"), hf, config);
      fill_weights(plan.state, std::move(plan.reads), *model_src, hf);
      s = std::move(plan.state);
    }
    model_src.reset();
    if (meta.empty()) attach_bpe(s, model, tf);
    require_vocab(s, model);  // the project's format keeps the tokenizer
  } catch (const CliError&) {
    throw;
  } catch (const InputError& e) {
    throw CliError(e.what());
  }
  return s;
}

namespace {

// A Hugging Face folder: its shards read once and kept, each parameter converted to float32 a few
// MiB at a time as the writer reaches it and written straight to the file, so the peak is about
// the shards' bytes (not the float32 model, and the file's bytes, besides).
uint64_t import_folder(const std::string& folder, const std::string& out, TrainState& s) {
  Checkpoint c = read_llama_in_place(folder);
  if (!c.state.hf_tokenizer) throw no_tokenizer(folder);
  auto fill = [&](const ParamTensor& p, int64_t begin, int64_t end, float* values) {
    try {
      c.fill(p, begin, end, values);
    } catch (const InputError& e) {
      throw CliError(folder + ": " + e.what());
    }
  };
  uint64_t written = 0;
  write_file_atomic(out, [&](const WriteBytes& write) {
    save_checkpoint(c.state, fill, [&](const char* data, size_t n) {
      write(data, n);
      written += n;
    });
  });
  s = std::move(c.state);
  return written;
}

int cmd_import(const ImportArgs& a) {
  check_writable(a.out, "the model");
  TrainState s;
  uint64_t bytes = 0;
  if (a.files.size() == 1 && is_hf_folder(a.files[0])) {
    bytes = import_folder(a.files[0], a.out, s);
  } else {
    s = read_model_files(a.files, false);
    const std::string file = save_checkpoint(s);
    write_checkpoint_file(a.out, file);
    bytes = file.size();
  }
  if (!a.quiet)
    std::cout << "wrote " << a.out << " (" << with_commas(static_cast<long long>(bytes)) << " bytes): "
              << describe_config(s.model) << ", " << with_commas(s.model.num_parameters()) << " parameters, from "
              << s.source << "\n";
  return 0;
}

}  // namespace

Command add_import(CLI::App& app) {
  auto a = std::make_shared<ImportArgs>();
  CLI::App* sub = app.add_subcommand(
      "import", "convert a model trained elsewhere (nanoGPT's ckpt.pt, Hugging Face's GPT-2 model.safetensors) to a "
                "model-only checkpoint that keeps its tokenizer");
  sub->add_option("files", a->files,
                  "nanoGPT's ckpt.pt with the meta.pkl of its dataset (else looked for beside it, or at "
                  "../data/<dataset>/meta.pkl), or with GPT-2's vocab.json + merges.txt or tokenizer.json; or Hugging "
                  "Face's model.safetensors with its config.json and tokenizer files (each else looked for beside it)")
      ->required();
  sub->add_option("-o,--output", a->out, "the model-only checkpoint to write (.safetensors)")->required();
  sub->add_flag("-q,--quiet", a->quiet, "print nothing on success");
  sub->footer("Examples: gpt import out-shakespeare-char/ckpt.pt data/shakespeare_char/meta.pkl -o shakespeare.safetensors; "
              "gpt import gpt2/model.safetensors gpt2/config.json gpt2/vocab.json gpt2/merges.txt -o gpt2.safetensors. "
              "See docs/import.md.");
  return {sub, [a] { return cmd_import(*a); }};
}

}  // namespace ap::gpt_cli
