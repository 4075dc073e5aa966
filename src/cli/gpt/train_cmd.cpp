// train_cmd.cpp — `gpt train`, `gpt resume` and `gpt finetune` (a model trained elsewhere, trained
// further on the user's text with fresh AdamW state: Trainer::finetune): the run's header, the training loop with its
// progress, CSV log and checkpoints every --checkpoint-interval, Ctrl-C (save the last completed
// step, exit 130; 143 for SIGTERM) and divergence (exit 3, nothing written).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <iostream>
#include <map>
#include <memory>

#include <sys/stat.h>

#include "api/checkpoint.h"
#include "api/gpt_json.h"
#include "api/gpt_session.h"
#include "formats/json.h"
#include "core/kernels/kernels.h"
#include "core/base/number_text.h"
#include "cli/gpt/commands.h"
#include "cli/gpt/common.h"
#include "cli/gpt/progress.h"

namespace ap::gpt_cli {

namespace {

using json::Value;

// ---------------------------------------------------------------- the training loop

struct RunOutput {
  std::string out;          // the checkpoint
  std::string log;          // CSV, or empty
  bool append_log = false;  // resume continues a log
  int checkpoint_interval = 500;
  bool quiet = false;
  int threads = 0;  // 0: the cores there are
};

void save(Trainer& t, const std::string& path) { write_checkpoint_file(path, save_checkpoint(t.state())); }

int train_loop(Trainer& t, const RunOutput& o, Display& display, CsvLog& log) {
  const int64_t total = t.config().steps;
  const int64_t first = t.steps_done();
  const auto start = Clock::now();
  double train_seconds = 0.0;
  int64_t trained_steps = 0;
  int64_t saved_step = -1;  // the step of the checkpoint this process last wrote

  Progress p;
  p.total = total;
  p.val_loss = t.last_val_loss();

  auto throughput = [&] { return train_seconds > 0 ? double(trained_steps) * double(t.tokens_per_step()) / train_seconds : 0.0; };
  auto interrupted = [&]() -> int {
    display.finish();
    const int sig = pending_signal();
    save(t, o.out);
    std::cerr << "gpt: " << (sig == SIGINT ? "interrupted (Ctrl-C)" : "terminated") << " after step " << t.steps_done()
              << " of " << total << "; saved it to " << o.out << ". Continue with: gpt resume " << o.out << "\n";
    return 128 + sig;
  };

  if (first == 0) {
    // The initial weights: a model that knows nothing scores about ln(vocab_size).
    if (pending_signal()) return interrupted();
    p.val_loss = t.evaluate();
    p.evaluated = true;
    p.step = 0;
    p.elapsed = seconds_since(start);
    log.row(0, nullptr, p.val_loss, nullptr, nullptr, 0, p.elapsed);
    display.line(p);
  }

  while (t.steps_done() < total) {
    if (pending_signal()) return interrupted();
    const auto t0 = Clock::now();
    const StepResult r = t.step();
    train_seconds += seconds_since(t0);
    p.step = r.step;
    p.loss = r.loss;
    p.lr = r.lr;
    p.grad_norm = r.grad_norm;
    p.elapsed = seconds_since(start);
    if (r.diverged) {
      display.finish();
      log.row(p.step, &r.loss, -1.0f, &r.lr, std::isfinite(r.loss) ? &r.grad_norm : nullptr, throughput(), p.elapsed);
      std::cerr << "gpt: " << t.divergence_message() << "\n";
      std::cerr << "gpt: step " << p.step << " is the log's last row. ";
      struct stat st {};
      if (saved_step >= 0)
        std::cerr << "Nothing more was written: " << o.out << " holds step " << saved_step
                  << ", the last checkpoint of this run.\n";
      else if (::stat(o.out.c_str(), &st) == 0)
        std::cerr << "Nothing was written: " << o.out << " is as it was before this run.\n";
      else
        std::cerr << "No checkpoint was written.\n";
      return kExitDiverged;
    }
    ++trained_steps;
    p.tokens_per_s = throughput();
    const int64_t done = t.steps_done();
    const bool eval = done % t.config().eval_interval == 0 || done == total;
    float val = -1.0f;
    p.evaluated = eval && !pending_signal();
    if (p.evaluated) {
      val = t.evaluate();
      p.val_loss = val;
    }
    p.elapsed = seconds_since(start);
    p.remaining = p.elapsed / double(done - first) * double(total - done);
    log.row(done, &r.loss, val, &r.lr, &r.grad_norm, p.tokens_per_s, p.elapsed);
    display.bar(p);  // first: a kept line redraws the bar as it now is
    if (eval || done == first + 1) display.line(p);
    if (o.checkpoint_interval > 0 && done % o.checkpoint_interval == 0 && done != total && !pending_signal()) {
      save(t, o.out);
      saved_step = done;
    }
  }
  display.finish();
  save(t, o.out);
  display.message("saved " + o.out + " (step " + std::to_string(t.steps_done()) + ", val_loss " +
                  fixed(t.last_val_loss(), 4) + ")");
  return 0;
}

// Trains from t.steps_done() to t.config().steps. Returns the exit status.
int run_training(Trainer& t, const RunOutput& o) {
  SignalGuard signals;
  Display display(o.quiet);
  CsvLog log(o.log, o.append_log);
  try {
    return train_loop(t, o, display, log);
  } catch (...) {
    display.finish();  // an error (a checkpoint that cannot be written) starts on a line of its own
    throw;
  }
}

void print_run_header(const Trainer& t, Display& d, const std::string& verb) {
  const GPTConfig& c = t.model().config();
  const TrainState s = t.state();
  const TrainConfig& tc = t.config();
  d.message(verb + " a GPT of " + describe_config(c) + " (" + with_commas(t.model().num_parameters()) +
            " parameters) on " + describe_data(s) + ": " + with_commas(static_cast<long long>(t.dataset().train.size())) +
            " training and " + with_commas(static_cast<long long>(t.dataset().val.size())) + " validation tokens");
  d.message("steps " + std::to_string(t.steps_done()) + " → " + std::to_string(tc.steps) + " of " +
            std::to_string(tc.batch_size) + "×" + std::to_string(t.context()) + " tokens, lr " +
            format_float(tc.lr) + " (warm-up " + std::to_string(tc.warmup_steps) + ", cosine to " +
            format_float(tc.min_lr) + "), seed " + std::to_string(tc.seed) + ", kernels " + kernels::tier_name() +
            ", " + std::to_string(t.threads()) + (t.threads() == 1 ? " thread" : " threads"));
  std::string floor = "a model that knows nothing scores ln " + std::to_string(c.vocab_size) + " = " +
                      fixed(std::log(double(c.vocab_size)), 4);
  if (!s.task.empty()) floor += "; a perfect one " + fixed(task_info(s.task).loss_floor, 4) + " (the task's loss floor)";
  d.message(floor);
}

void check_interval(int checkpoint_interval) {
  if (checkpoint_interval < 0)
    throw InputError("checkpoint_interval is " + std::to_string(checkpoint_interval) +
                         ": it must be 0 (only at the end) or more",
                     "checkpoint_interval");
}

// The header, then the run: train and resume alike, once the trainer is built.
int train_and_save(Trainer& t, const std::string& verb, const RunOutput& o) {
  t.set_threads(o.threads == 0 ? hardware_threads() : o.threads);  // a negative count is refused by name
  Display d(o.quiet);
  print_run_header(t, d, verb);
  return run_training(t, o);
}

// ---------------------------------------------------------------- the run spec's options

// An option that fills a key of the run spec (gpt_json.h): `--n-layer` for n_layer, read by CLI11 as its
// kind and put into the spec only when given, the core's defaults filling the rest. Each is declared
// once, as a row; the command's option list and the spec it builds both come from the rows.
enum class SpecKind { integer, real, text, boolean };  // boolean: "true" or "false"
struct SpecOption {
  const char* key;
  SpecKind kind;
  std::string help;
};

struct SpecArgs {
  std::vector<SpecOption> rows;  // in the order the help lists them
  struct Slot {
    long long integer = 0;
    double real = 0;
    std::string text;
  };
  std::map<std::string, Slot> values;  // by key (a map: the slots CLI11 writes to do not move)

  static std::string option_name(const char* key) {
    std::string name = std::string("--") + key;
    std::replace(name.begin(), name.end(), '_', '-');
    return name;
  }

  void add(CLI::App* sub, std::vector<SpecOption> more) {
    for (SpecOption& r : more) {
      Slot& v = values[r.key];
      const std::string name = option_name(r.key);
      if (r.kind == SpecKind::integer) sub->add_option(name, v.integer, r.help);
      else if (r.kind == SpecKind::real) sub->add_option(name, v.real, r.help);
      else sub->add_option(name, v.text, r.help);
      rows.push_back(std::move(r));
    }
  }

  // The options the user gave, into the spec.
  void put_given(Value& spec, CLI::App* sub) const {
    for (const SpecOption& r : rows) {
      const std::string name = option_name(r.key);
      if (sub->get_option(name)->count() == 0) continue;
      const Slot& v = values.at(r.key);
      switch (r.kind) {
        case SpecKind::integer: spec.set(r.key, v.integer); break;
        case SpecKind::real: spec.set(r.key, v.real); break;
        case SpecKind::text: spec.set(r.key, v.text); break;
        case SpecKind::boolean:
          if (v.text != "true" && v.text != "false") throw InputError(name + " is true or false, got " + v.text, r.key);
          spec.set(r.key, v.text == "true");
          break;
      }
    }
  }
};

// What train and finetune share: AdamW's schedule, clipping and evaluation, with each command's
// defaults in the help ("0.0001", "lr/10", "min(100, steps)", …).
struct OptimizerDefaults {
  std::string lr, min_lr, warmup_steps, weight_decay, grad_clip, eval_interval, eval_batches;
};

std::vector<SpecOption> optimizer_options(const OptimizerDefaults& d) {
  using K = SpecKind;
  return {{"lr", K::real, "peak learning rate (default " + d.lr + ")"},
          {"min_lr", K::real, "where the cosine ends (default " + d.min_lr + ")"},
          {"warmup_steps", K::integer, "linear warm-up (default " + d.warmup_steps + ")"},
          {"weight_decay", K::real, "AdamW's decay of the matrices (default " + d.weight_decay + ")"},
          {"grad_clip", K::real, "clip the gradients' global norm to this (default " + d.grad_clip + "; 0: off)"},
          {"eval_interval", K::integer, "steps between validation losses (default " + d.eval_interval + ")"},
          {"eval_batches", K::integer, "at most this many validation batches (default " + d.eval_batches + ")"}};
}

// ---------------------------------------------------------------- train

struct TrainArgs {
  RunOutput run;
  std::string text_file, rope_scaling;
  SpecArgs spec;  // the task, the model and its variants (gpt.h), the run and the optimiser
};

int cmd_train(const TrainArgs& a, CLI::App* sub) {
  SignalGuard signals;  // from the start: a Ctrl-C while the run is set up still saves step 0
  Value spec = Value::object();
  a.spec.put_given(spec, sub);
  if (sub->get_option("--rope-scaling")->count() > 0) {  // Llama 3's: FACTOR,LOW,HIGH,ORIGINAL
    std::vector<double> f;
    std::string part;
    for (size_t i = 0; i <= a.rope_scaling.size(); ++i) {
      if (i < a.rope_scaling.size() && a.rope_scaling[i] != ',') { part += a.rope_scaling[i]; continue; }
      double d = 0;
      if (!parse_decimal(part.data(), part.data() + part.size(), d)) throw InputError("--rope-scaling is FACTOR,LOW,HIGH,ORIGINAL, got " + a.rope_scaling, "rope_scaling");
      f.push_back(d);
      part.clear();
    }
    if (f.size() != 4) throw InputError("--rope-scaling is FACTOR,LOW,HIGH,ORIGINAL, got " + a.rope_scaling, "rope_scaling");
    Value r = Value::object();
    r.set("rope_type", "llama3");
    r.set("factor", f[0]);
    r.set("low_freq_factor", f[1]);
    r.set("high_freq_factor", f[2]);
    r.set("original_max_position_embeddings", f[3]);
    spec.set("rope_scaling", std::move(r));
  }
  if (!a.text_file.empty()) {
    spec.set("text", read_text_file(a.text_file));
    spec.set("text_name", a.text_file);
  }
  const RunSpec r = read_run_spec(spec);
  check_interval(a.run.checkpoint_interval);
  check_writable(a.run.out, "the checkpoint");
  Trainer t(r.model, r.train, r.data);
  return train_and_save(t, "training", a.run);
}

// ---------------------------------------------------------------- resume

struct ResumeArgs {
  RunOutput run;  // out empty: the checkpoint itself
  std::string file, text_file;
  long long steps = 0;
};

int cmd_resume(const ResumeArgs& a, CLI::App* sub) {
  SignalGuard signals;  // from the start: a Ctrl-C while the run is set up still saves step 0
  TrainState s = read_checkpoint(a.file).state;
  require_training_state(a.file, s, "resume");
  if (sub->get_option("--steps")->count()) {
    if (a.steps <= s.step)
      throw InputError("--steps is the run's new total, and " + a.file + " is already at step " +
                           std::to_string(s.step) + ": give more than " + std::to_string(s.step),
                       "steps");
    if (a.steps > kMaxSteps)
      throw InputError("steps is " + std::to_string(a.steps) + ": it must be between 1 and " + std::to_string(kMaxSteps),
                       "steps");
    s.train.steps = static_cast<int>(a.steps);
    s.train.validate();
  } else if (s.step >= s.train.steps) {
    throw InputError("the run in " + a.file + " is complete (step " + std::to_string(s.step) + " of " +
                         std::to_string(s.train.steps) + "): give --steps with a new total to train further",
                     "steps");
  }
  const std::string text = run_text(a.file, s, a.text_file);
  check_interval(a.run.checkpoint_interval);
  RunOutput o = a.run;
  if (o.out.empty()) o.out = a.file;
  o.append_log = true;
  check_writable(o.out, "the checkpoint");
  Trainer t(s, text);
  return train_and_save(t, "resuming", o);
}

// ---------------------------------------------------------------- finetune

struct FinetuneArgs {
  RunOutput run;
  std::vector<std::string> files;
  std::string text_file;
  SpecArgs spec;  // the context, the run and the optimiser
};

int cmd_finetune(const FinetuneArgs& a, CLI::App* sub) {
  SignalGuard signals;
  Value spec = Value::object();
  a.spec.put_given(spec, sub);
  check_interval(a.run.checkpoint_interval);
  check_writable(a.run.out, "the checkpoint");
  DataSpec data;
  data.text = read_text_file(a.text_file);
  data.name = a.text_file;
  TrainState s = read_model_files(a.files, true);
  const TrainConfig tc = read_finetune_spec(spec, s.model, nullptr);
  std::unique_ptr<Trainer> t = Trainer::open(std::move(s));
  std::string where;
  t->finetune(tc, data, finetune_available(t->model(), &where), where);
  // threads beyond 1 add a copy of the gradients and activations each: fine-tuning uses 1 unless asked
  RunOutput o = a.run;
  if (o.threads == 0) o.threads = 1;
  return train_and_save(*t, "fine-tuning", o);
}

}  // namespace

// ---------------------------------------------------------------- options

namespace {

// The options train and resume share: how often to save, the CSV log, and quiet.
void add_saving_options(CLI::App* sub, RunOutput& o, const std::string& log_help) {
  sub->add_option("--checkpoint-interval", o.checkpoint_interval, "save every N steps (default 500; 0: only at the end)");
  sub->add_option("--log", o.log, log_help);
  sub->add_flag("-q,--quiet", o.quiet, "print nothing but errors");
  sub->add_option("--threads", o.threads,
                  "threads sharing each step's batch (default: the cores there are, " +
                      std::to_string(hardware_threads()) +
                      " here); the same count gives the same bits, any count resumes any checkpoint");
}

}  // namespace

Command add_train(CLI::App& app) {
  const TrainConfig dflt;
  auto a = std::make_shared<TrainArgs>();
  CLI::App* train = app.add_subcommand("train", "train a new model and save it as a safetensors checkpoint");
  train->add_option("-o,--output", a->run.out, "the checkpoint to write (FILE.safetensors)")->required();
  using K = SpecKind;
  a->spec.add(train, {{"task", K::text, "a built-in task: copy (default), reverse, sort, induction, sums, grammar (see gpt tasks)"}});
  auto* o_text = train->add_option("--text", a->text_file, "train on a UTF-8 text file instead (at most 64 MiB)");
  train->get_option("--task")->excludes(o_text);
  a->spec.add(
      train,
      {{"n_chars", K::integer, "a task's length in characters (default 100000)"},
       {"preset", K::text, "tiny (default: 2 layers, n_embd 64, 4 heads, block_size 64) or small (4, 128, 4, 128)"},
       {"n_layer", K::integer, "blocks, instead of the preset's"},
       {"n_head", K::integer, "attention heads per block (must divide n_embd)"},
       {"n_embd", K::integer, "embedding width C"},
       {"block_size", K::integer, "the longest context T"},
       {"mask", K::text, "strict (default: query t sees keys ≤ t) or inclusive (keys < t: exercise 2)"},
       {"softmax", K::text, "stable (default) or naive (no max subtracted: exercise 3)"},
       {"pos", K::text, "positions: learned (default: wpe), rope, alibi or none"},
       {"rope_base", K::real, "RoPE's θ base (default 10000; with --pos rope)"},
       {"rope_dims", K::integer, "RoPE's rotated dimensions per head (default head_dim; even)"},
       {"rope", K::text, "RoPE's pairs: halves (default: GPT-NeoX, Llama) or interleaved (the paper)"},
       {"n_kv_head", K::integer, "key/value heads, dividing n_head (default n_head; 1: multi-query)"},
       {"norm", K::text, "layernorm (default) or rmsnorm (Llama's)"},
       {"mlp", K::text, "gelu (default) or swiglu (Llama's gate_proj, up_proj, down_proj)"},
       {"n_inner", K::integer, "the MLP's hidden size (default 4·n_embd)"},
       {"window", K::integer, "a sliding window: each query sees the last W keys (default: none)"},
       {"sink", K::integer, "attention sinks under --window: the first S keys stay visible (default: none)"},
       {"bias", K::boolean, "biases in the Linear layers and LayerNorms: true (default) or false"},
       {"head_size", K::integer, "each head's width (default n_embd/n_head; Qwen3's are wider)"},
       {"tie_embeddings", K::boolean, "the output layer is wte: true (default) or false (lm_head)"},
       {"qkv_bias", K::boolean, "c_attn's bias even with --bias false (Qwen2): true or false"},
       {"qk_norm", K::boolean, "RMSNorm of each q and k head before RoPE (Qwen3): true or false"}});
  train->add_option("--rope-scaling", a->rope_scaling,
                    "Llama 3's RoPE scaling: FACTOR,LOW,HIGH,ORIGINAL (factor, low_freq_factor, high_freq_factor, "
                    "original_max_position_embeddings)");
  a->spec.add(train, {{"steps", K::integer, "training steps (default " + std::to_string(dflt.steps) + ")"},
                      {"batch_size", K::integer, "sequences per step (default " + std::to_string(dflt.batch_size) + ")"}});
  a->spec.add(train, optimizer_options({format_float(dflt.lr), "lr/10, at most 0.0001", "steps/10, at most 100",
                                        format_float(dflt.weight_decay), format_float(dflt.grad_clip),
                                        std::to_string(dflt.eval_interval), std::to_string(dflt.eval_batches)}));
  a->spec.add(train, {{"seed", K::integer,
                       "seeds the weights, the batches and a task's text (default " + std::to_string(dflt.seed) + ")"}});
  add_saving_options(train, a->run, "write step,loss,val_loss,lr,grad_norm,tokens_per_s,elapsed_s to a CSV file");
  train->footer(
      "On a terminal a progress bar shows step, loss, validation loss, tokens/s, elapsed and remaining time; "
      "elsewhere a line is printed at every evaluation. Ctrl-C saves a checkpoint of the last completed step, "
      "then stops (gpt resume continues it). A non-finite loss stops training with exit status 3 and writes "
      "nothing: the last checkpoint stays as it was.");
  return {train, [a, train] { return cmd_train(*a, train); }, &a->text_file};
}

Command add_resume(CLI::App& app) {
  auto a = std::make_shared<ResumeArgs>();
  CLI::App* resume = app.add_subcommand("resume", "continue training from a checkpoint, exactly as if never stopped");
  resume->add_option("file", a->file, "the checkpoint (FILE.safetensors)")->required();
  resume->add_option("--steps", a->steps, "the run's new total of steps (default: the total it was started with)");
  resume->add_option("--text", a->text_file, "the text a text run was trained on (checked by its fingerprint)");
  resume->add_option("-o,--output", a->run.out, "where to save (default: the checkpoint itself, replaced atomically)");
  add_saving_options(resume, a->run, "append to (or start) a CSV log");
  resume->footer("Ctrl-C saves a checkpoint of the last completed step, then stops.");
  return {resume, [a, resume] { return cmd_resume(*a, resume); }, &a->text_file};
}

Command add_finetune(CLI::App& app) {
  auto a = std::make_shared<FinetuneArgs>();
  CLI::App* sub = app.add_subcommand(
      "finetune", "train a model trained elsewhere further on your text (fresh AdamW state), saved as a checkpoint");
  sub->add_option("files", a->files,
                  "the model: nanoGPT's ckpt.pt (with meta.pkl, or GPT-2's tokenizer files), Hugging Face's "
                  "model.safetensors (with config.json and tokenizer files; each else looked for beside it), or this "
                  "project's .safetensors")
      ->required();
  sub->add_option("--text", a->text_file, "the UTF-8 text to fine-tune on (at most 64 MiB), read with the model's tokenizer")
      ->required();
  sub->add_option("-o,--output", a->run.out, "the checkpoint to write (FILE.safetensors)")->required();
  using K = SpecKind;
  a->spec.add(sub, {{"context", K::integer,
                     "tokens per training sequence, at most the model's block_size (default min(block_size, 128)); "
                     "the memory grows with it"},
                    {"batch_size", K::integer, "sequences per step (default 4)"},
                    {"steps", K::integer, "training steps (default 100)"}});
  const TrainConfig dflt;  // what read_finetune_spec keeps of a run's defaults
  a->spec.add(sub, optimizer_options({"0.0001", "lr/10", "0", format_float(dflt.weight_decay), format_float(dflt.grad_clip),
                                      "min(" + std::to_string(dflt.eval_interval) + ", steps)",
                                      std::to_string(dflt.eval_batches)}));
  a->spec.add(sub, {{"seed", K::integer, "seeds the batches (default 1337): the same seed, the same losses"}});
  add_saving_options(sub, a->run, "write step,loss,val_loss,lr,grad_norm,tokens_per_s,elapsed_s to a CSV file");
  sub->footer(
      "The memory is checked before anything is allocated: a setting that does not fit is refused with what it "
      "needs and what there is, and the setting to lower (--context or --batch-size). --threads defaults to 1 here "
      "(each further thread holds its own gradients and activations). The checkpoint is a training run on the text: "
      "gpt sample reads it, gpt resume --text continues it. See docs/import.md.");
  return {sub, [a, sub] { return cmd_finetune(*a, sub); }, &a->text_file};
}

}  // namespace ap::gpt_cli
