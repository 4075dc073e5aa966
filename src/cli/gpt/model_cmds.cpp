// model_cmds.cpp — the commands that read a model: `gpt tasks` (no model: the built-in tasks),
// `sample`, `eval`, `inspect`, `attention` (maps, or one head's stepper spec) and `logits`.
#include <algorithm>
#include <iostream>
#include <memory>

#include "api/checkpoint.h"
#include "api/gpt_json.h"
#include "api/gpt_session.h"
#include "formats/json.h"
#include "formats/safetensors.h"
#include "api/spec.h"
#include "core/model/generate.h"
#include "core/model/inspect.h"
#include "core/kernels/kernels.h"
#include "core/base/number_text.h"
#include "cli/gpt/commands.h"
#include "cli/gpt/common.h"
#include "formats/llama_load.h"

namespace ap::gpt_cli {

namespace {

using json::Value;

// ---------------------------------------------------------------- sample, eval

// The companions of a checkpoint (meta.pkl, config.json, GPT-2's tokenizer files) after it, as
// `gpt import` takes them: every command that takes a checkpoint takes them the same way.
constexpr const char* kWithHelp = "the files that go with a model trained elsewhere, when not where they are looked for: "
                                  "nanoGPT's meta.pkl, Hugging Face's config.json, GPT-2's vocab.json + merges.txt or tokenizer.json";

std::vector<std::string> files_of(const std::string& file, const std::vector<std::string>& with) {
  std::vector<std::string> f = {file};
  f.insert(f.end(), with.begin(), with.end());
  return f;
}

struct SampleArgs {
  std::string file, prompt;
  std::vector<std::string> with;
  long long max_new_tokens = 200, top_k = 0, seed = 1;
  double temperature = 1.0, top_p = 1.0;
  bool greedy = false, json = false;
  std::string ids;  // token ids instead of a prompt (a model without a tokenizer)
};

std::vector<int> parse_ids(const std::string& text);

int cmd_sample(const SampleArgs& a) {
  if (!a.prompt.empty() && !a.ids.empty())
    throw CliError("give the input as --prompt TEXT or as --ids N,N,… (token ids), one of them", kExitUsage);
  LoadedModel m = load_model(files_of(a.file, a.with), a.ids.empty());
  const std::vector<int> ids = a.ids.empty() ? m.tok->encode(a.prompt, "prompt") : parse_ids(a.ids);
  SampleOptions o;
  auto check = [](long long v, long long lo, long long hi, const char* field) {
    if (v < lo || v > hi)
      throw InputError(std::string(field) + " is " + std::to_string(v) + ": it must be between " + std::to_string(lo) +
                           " and " + std::to_string(hi),
                       field);
  };
  check(a.max_new_tokens, 0, kMaxNewTokens, "max_new_tokens");
  check(a.top_k, 0, m.state.model.vocab_size, "top_k");
  check(a.seed, 0, 1LL << 53, "seed");
  o.max_new_tokens = static_cast<int>(a.max_new_tokens);
  o.temperature = static_cast<float>(a.temperature);
  o.top_k = static_cast<int>(a.top_k);
  o.top_p = static_cast<float>(a.top_p);
  o.greedy = a.greedy;
  o.seed = static_cast<uint64_t>(a.seed);
  Generator g(*m.model, ids, o);  // validates the options and the prompt
  if (a.json) {
    for (int i = 0; i < o.max_new_tokens; ++i) g.next();
    const std::vector<int>& out = g.tokens();
    const std::vector<int> fresh(out.begin() + static_cast<std::ptrdiff_t>(ids.size()), out.end());
    Value v = Value::object();
    if (m.tok) {
      v.set("text", m.tok->decode(out));
      v.set("new_text", m.tok->decode(fresh));
      v.set("tokens", token_labels(*m.tok, out));
    }
    Value all = Value::array();
    for (int id : out) all.push(id);
    v.set("ids", std::move(all));
    std::cout << spec::ok(std::move(v)).dump() << "\n";
    return 0;
  }
  if (!m.tok) throw CliError("this model has no tokenizer: give --json to see the generated ids", kExitUsage);
  // The text as it comes, one character at a time.
  std::cout << a.prompt << std::flush;
  // The token's bytes: a character split across BPE tokens is whole once its last byte is out.
  for (int i = 0; i < o.max_new_tokens; ++i) {
    const int id = g.next();
    std::cout << m.tok->decode(&id, 1) << std::flush;
  }
  std::cout << "\n";
  return 0;
}

struct EvalArgs {
  std::string file, text_file;
  std::vector<std::string> with;
  bool json = false;
  int context = 0;  // the loss by position at this context (0: the validation loss)
};

// `gpt eval --context N`: the validation loss at each position of windows of N tokens (inspect.h
// loss_by_position; past block_size for RoPE, ALiBi and none), and the KV cache's bytes.
int eval_by_position(const EvalArgs& a, Trainer& t) {
  const PositionLoss p = loss_by_position(t, a.context, t.config().eval_batches);
  const GPTConfig& c = t.model().config();
  const long long kv = 4LL * 2 * c.n_layer * c.block_size * c.kv_head() * c.head_dim();
  if (a.json) {
    Value v = Value::object();
    v.set("step", static_cast<long long>(t.steps_done()));
    v.set("context", p.context);
    v.set("block_size", c.block_size);
    v.set("windows", p.windows);
    Value l = Value::array();
    for (float x : p.losses) l.push(Value::f32(x));
    v.set("losses", std::move(l));
    v.set("mean", Value::f32(p.mean));
    v.set("kv_cache", kv);
    std::cout << spec::ok(std::move(v)).dump() << "\n";
    return 0;
  }
  std::cout << "loss by position at context " << p.context << " (trained at " << c.block_size << "), "
            << p.windows << " validation windows; mean " << fixed(p.mean, 4) << "\n";
  for (int i = 0; i < p.context; ++i) std::cout << i << " " << fixed(p.losses[static_cast<size_t>(i)], 4) << "\n";
  std::cout << "KV cache: " << with_commas(kv) << " bytes (" << c.kv_head() << " key/value heads of " << c.n_head
            << ")\n";
  return 0;
}

int cmd_eval(const EvalArgs& a) {
  const TrainState s = read_checkpoint(files_of(a.file, a.with)).state;
  require_training_state(a.file, s, "evaluate");
  const std::string text = run_text(a.file, s, a.text_file);
  if (a.text_file.empty() && s.task.empty())
    throw InputError(a.file + " was trained on the text " + json_quoted(s.text_name) +
                         ": give it with --text FILE (its last tenth is the validation split)",
                     "text");
  Trainer t(s, text);
  if (a.context > 0) return eval_by_position(a, t);
  const float val = t.evaluate();
  if (a.json) {
    Value v = Value::object();
    v.set("step", static_cast<long long>(t.steps_done()));
    v.set("val_loss", Value::f32(val));
    std::cout << spec::ok(std::move(v)).dump() << "\n";
    return 0;
  }
  std::string line = "val_loss " + fixed(val, 4) + " at step " + std::to_string(t.steps_done()) + " over " +
                     with_commas(static_cast<long long>(t.dataset().val.size())) + " validation tokens of " +
                     describe_data(s);
  if (!s.task.empty()) line += "; the task's loss floor is " + fixed(task_info(s.task).loss_floor, 4);
  std::cout << line << "\n";
  return 0;
}

// ---------------------------------------------------------------- inspect

int cmd_inspect(const std::string& file, const std::vector<std::string>& with, bool json) {
  if (with.empty() && is_gguf_file(file)) return cmd_inspect_gguf(file, json);
  // A Llama-family model is opened as for inference, its weights used where they lie (about the
  // file's size in memory); inspect never needs them as float32.
  const Checkpoint ck =
      with.empty() && is_hf_folder(file) ? read_checkpoint(file, true) : read_checkpoint(files_of(file, with));
  const TrainState& s = ck.state;
  const GPTConfig& c = s.model;
  // The file has passed load_checkpoint, so its container is known to be sound. A model without a
  // character vocabulary (GPT-2's BPE: no bytes of ours) lists its tensors as read, from the config.
  // An imported model with a vocabulary lists the model-only file `gpt import` would write.
  const bool converts = !ck.imported.empty() && (!s.vocab.empty() || s.bpe || s.hf_tokenizer);
  safetensors::File st = ck.header;
  if (converts) st = checkpoint_layout(s);  // the file's header alone: nothing written
  else if (!ck.imported.empty())
    for (const ParamTensor& t : param_tensors(c)) st.tensors.push_back({t.name, "F32", {t.shape.begin(), t.shape.end()}, 0, 0});
  const Tokenizer tok = s.bpe            ? Tokenizer::from_bpe(s.bpe, c.vocab_size)
                        : s.hf_tokenizer ? Tokenizer::from_hf(s.hf_tokenizer, c.vocab_size)
                                         : Tokenizer::from_chars(s.vocab.empty() ? std::vector<char32_t>{U'?'} : s.vocab);
  std::vector<int> all(s.bpe || s.hf_tokenizer ? static_cast<size_t>(c.vocab_size) : s.vocab.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  const std::string no_vocab = "none given: GPT-2's BPE tokenizer (put its vocab.json and merges.txt, or tokenizer.json, "
                               "beside the model; token ids meanwhile: gpt logits --ids)";
  auto meta = [&](const char* key) {
    for (const auto& [k, v] : st.metadata)
      if (k == key) return v;
    return std::string();
  };
  if (json) {
    Value v = Value::object();
    v.set("file", file);
    v.set("bytes", static_cast<long long>(ck.file_bytes));
    if (!ck.imported.empty()) v.set("imported", ck.imported);
    v.set("format", meta("format"));
    v.set("format_version", meta("format_version"));
    v.set("config", config_json(c));
    v.set("n_params", static_cast<long long>(c.num_parameters()));
    if (s.model_only()) {  // a model trained elsewhere: no training state
      v.set("source", s.source);
      v.set("vocab", all.empty() ? Value() : token_labels(tok, all));
      v.set("tokenizer", s.bpe ? "gpt2-bpe" : s.hf_tokenizer ? "hf-bpe" : s.vocab.empty() ? "none" : "characters");
    } else {
      v.set("data", data_source_json(s));
      v.set("vocab", token_labels(tok, all));
      v.set("step", static_cast<long long>(s.step));
      v.set("steps", s.train.steps);
      v.set("val_loss", s.last_val_loss < 0 ? Value() : Value::f32(s.last_val_loss));
      v.set("train", train_config_json(s.train));
      v.set("seed", std::to_string(s.train.seed));
    }
    Value list = Value::array();
    for (const safetensors::TensorInfo& e : st.tensors) {
      Value& t = list.push(Value::object());
      t.set("name", e.name);
      t.set("dtype", e.dtype);
      Value shape = Value::array();
      for (uint64_t d : e.shape) shape.push(static_cast<long long>(d));
      t.set("shape", std::move(shape));
    }
    v.set("tensors", std::move(list));
    std::cout << spec::ok(std::move(v)).dump() << "\n";
    return 0;
  }
  const GPTConfig tiny = GPTConfig::tiny(c.vocab_size), small = GPTConfig::small(c.vocab_size);
  auto same_shape = [&](const GPTConfig& p) {
    return p.n_layer == c.n_layer && p.n_head == c.n_head && p.n_embd == c.n_embd && p.block_size == c.block_size &&
           p.head_dim() == c.head_dim() && p.gpt2_block() == c.gpt2_block();
  };
  const std::string preset = same_shape(tiny) ? " (the tiny preset)" : same_shape(small) ? " (the small preset)" : "";
  std::string vocab;
  if (s.bpe) {
    std::string first;
    for (int i = 0; i < 40; ++i) first += (i ? " " : "") + visible_token(tok.token_text(i));
    vocab = with_commas(s.bpe->vocab_size()) + " tokens of GPT-2's byte-level BPE (" +
            with_commas(static_cast<long long>(s.bpe->merge_count())) + " merges)" +
            (c.vocab_size > s.bpe->vocab_size() ? ", padded to vocab_size " + with_commas(c.vocab_size) : "") +
            "; the first: " + first + " …";
  } else if (s.hf_tokenizer) {
    std::string first;
    for (int i = 0; i < 40 && i < c.vocab_size; ++i) first += (i ? " " : "") + visible_token(tok.token_text(i));
    vocab = with_commas(s.hf_tokenizer->vocab_size()) + " tokens of its tokenizer.json" +
            (c.vocab_size > s.hf_tokenizer->vocab_size() ? ", padded to vocab_size " + with_commas(c.vocab_size) : "") +
            "; the first: " + first + " …";
  } else if (s.vocab.empty()) {
    vocab = no_vocab;
  } else if (tok.vocab_size() > 100) {
    std::vector<int> head(all.begin(), all.begin() + 100);
    vocab = json_quoted(tok.decode(head)) + " and " + std::to_string(tok.vocab_size() - 100) + " more";
  } else {
    vocab = json_quoted(tok.decode(all));
  }
  const TrainConfig& t = s.train;
  std::cout << "file        " << file << " (" << with_commas(static_cast<long long>(ck.file_bytes)) << " bytes, "
            << (ck.imported.empty() ? meta("format") + " version " + meta("format_version")
                : !converts         ? ck.imported
                                    : ck.imported + ", read as a model-only " + meta("format") + " version " +
                                          meta("format_version"))
            << ")\n"
            << "model       " << describe_config(c) << "; mask " << (c.mask == MaskVariant::strict ? "strict" : "inclusive")
            << ", softmax " << (c.stable_softmax ? "stable" : "naive") << "\n"
            << "parameters  " << with_commas(c.num_parameters()) << preset << "\n";
  if (s.model_only()) {
    std::cout << "source      " << s.source << " (a model only: no training state)\n"
              << "vocab       " << (s.vocab.empty() ? "" : std::to_string(tok.vocab_size()) + " characters: ") << vocab
              << "\n";
  } else {
    std::cout << "data        " << describe_data(s)
            << (s.task.empty() ? " (fingerprint " + s.text_fingerprint + ")" : std::string()) << "\n"
            << "vocab       " << tok.vocab_size() << " characters: " << vocab << "\n"
            << "step        " << s.step << " of " << t.steps
            << (s.last_val_loss >= 0 ? "; last val_loss measured " + fixed(s.last_val_loss, 4)
                                     : std::string("; never evaluated"))
            << "\n"
            << "training    batch_size " << t.batch_size << ", lr " << format_float(t.lr) << " (warm-up "
            << t.warmup_steps << " steps, cosine to " << format_float(t.min_lr) << "), weight_decay "
            << format_float(t.weight_decay) << ", beta1 " << format_float(t.beta1) << ", beta2 "
            << format_float(t.beta2) << ", grad_clip " << format_float(t.grad_clip) << ", eval every "
            << t.eval_interval << " steps (at most " << t.eval_batches << " batches), seed " << t.seed << "\n";
  }
  std::cout << "tensors     " << st.tensors.size() << "\n";
  size_t wide = 0;
  for (const safetensors::TensorInfo& e : st.tensors) wide = std::max(wide, e.name.size());
  for (const safetensors::TensorInfo& e : st.tensors)
    std::cout << "  " << e.name << std::string(wide - e.name.size() + 2, ' ') << e.dtype << "  "
              << safetensors::shape_text(e.shape) << "\n";
  return 0;
}

// ---------------------------------------------------------------- attention, logits, tasks

int cmd_attention(const std::vector<std::string>& files, const std::string& prompt, const std::string& head) {
  // The reference kernels: the stepper's arithmetic, so `attention trace` reproduces a head's
  // weights from its spec to the last bit.
  kernels::set_tier(kernels::Tier::reference);
  LoadedModel m = load_model(files);
  const std::vector<int> ids = m.tok->encode(prompt, "prompt");
  check_prompt_length(m, ids);
  const int T = static_cast<int>(ids.size());
  const GPTConfig& c = m.state.model;
  m.model->forward(ids.data(), nullptr, 1, T);
  if (!head.empty()) {
    // Counted from 1, as the training page labels its maps ("layer 2, head 3"); the JSON arrays
    // and the API's head_spec count from 0.
    const size_t dot = head.find('.');
    const int layer = std::stoi(head.substr(0, dot)), h = std::stoi(head.substr(dot + 1));
    if (layer < 1 || layer > c.n_layer)
      throw InputError("layer " + std::to_string(layer) + " does not exist: the model has layers 1 to " +
                           std::to_string(c.n_layer) + " (counting from 1)",
                       "layer");
    if (h < 1 || h > c.n_head)
      throw InputError("head " + std::to_string(h) + " does not exist: each layer has heads 1 to " +
                           std::to_string(c.n_head) + " (counting from 1)",
                       "head");
    std::cout << head_spec(*m.model, layer - 1, h - 1).dump() << "\n";
    return 0;
  }
  std::cout << spec::ok(attention_maps_json(*m.tok, ids, c.n_layer, c.n_head,
                                            [&](int l) { return m.model->attention_weights(l); }))
                   .dump()
            << "\n";
  return 0;
}

// "15496,11,995" → ids (InputError, field "ids", naming the entry).
std::vector<int> parse_ids(const std::string& text) {
  std::vector<int> ids;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos)
      throw InputError("--ids is a comma-separated list of token ids (such as 15496,11,995); entry " +
                           std::to_string(ids.size() + 1) + " is " + json_quoted(item),
                       "ids");
    ids.push_back(std::stoi(item));
    at = comma + 1;
  }
  return ids;
}

// --grads: the mean loss of predicting each next token of ids (inputs ids[0, T−1), targets ids[1, T))
// and its gradient for every parameter, by name, flat in PyTorch's layout, into v
// (tests/gpt_torch_test.py checks them against its own PyTorch model).
void loss_and_grads(Value& v, GPT& model, const std::vector<int>& ids) {
  if (ids.size() < 2) throw InputError("--grads needs at least 2 tokens: inputs and their next tokens", "prompt");
  const int T = static_cast<int>(ids.size()) - 1;
  model.make_trainable(1, T);
  const float loss = model.forward(ids.data(), ids.data() + 1, 1, T);
  model.zero_grad();
  model.backward();
  Value grads = Value::object();
  for (const ParamTensor& t : model.tensors()) {
    Value g = Value::array();
    for (int64_t i = 0; i < t.numel; ++i) g.push(Value::f32(model.grads()[t.offset + i]));
    grads.set(t.name, std::move(g));
  }
  v.set("loss", Value::f32(loss));
  v.set("grads", std::move(grads));
}

int cmd_logits(const std::vector<std::string>& files, const std::string& prompt, const std::string& id_text,
               bool with_grads) {
  if (prompt.empty() == id_text.empty())
    throw CliError("give the input as --prompt TEXT or as --ids N,N,… (token ids), one of them", kExitUsage);
  LoadedModel m = load_model(files, id_text.empty());
  const std::vector<int> ids = id_text.empty() ? m.tok->encode(prompt, "prompt") : parse_ids(id_text);
  check_prompt_length(m, ids);
  const int T = static_cast<int>(ids.size()), V = m.state.model.vocab_size;
  m.model->forward(ids.data(), nullptr, 1, T);  // checks each id against vocab_size
  Value v = Value::object();
  if (m.tok) v.set("tokens", token_labels(*m.tok, ids));
  Value ids_value = Value::array();
  for (int id : ids) ids_value.push(static_cast<long long>(id));
  if (!id_text.empty()) v.set("ids", std::move(ids_value));
  v.set("logits", spec::matrix_value(m.model->logits(), T, V));
  if (with_grads) loss_and_grads(v, *m.model, ids);
  std::cout << spec::ok(std::move(v)).dump() << "\n";
  return 0;
}

int cmd_tasks(bool json) {
  if (json) {
    std::cout << gpt_tasks_json() << "\n";
    return 0;
  }
  size_t wide = 0;
  for (const TaskInfo& t : task_infos()) wide = std::max(wide, t.name.size());
  const std::string indent(wide + 2, ' ');
  for (const TaskInfo& t : task_infos()) {
    std::cout << t.name << std::string(wide + 2 - t.name.size(), ' ') << json_quoted(t.example) << "   loss floor "
              << fixed(t.loss_floor, 4) << " nats/character\n"
              << indent << t.description << "\n"
              << indent << "attention: " << t.attention << "\n";
  }
  return 0;
}

// A checkpoint and a prompt: what attention and logits take (logits also token ids).
struct PromptArgs {
  bool grads = false;
  std::string file, prompt, head, ids;
  std::vector<std::string> with;
};

// A command on a model: its first two arguments, the file and the files that go with it.
CLI::App* add_model_command(CLI::App& app, const char* name, const char* about, std::string& file,
                            std::vector<std::string>& with, const char* file_help = "the checkpoint") {
  CLI::App* sub = app.add_subcommand(name, about);
  sub->add_option("file", file, file_help)->required();
  sub->add_option("with", with, kWithHelp);
  return sub;
}

CLI::App* add_prompt_command(CLI::App& app, const char* name, const char* about, PromptArgs& a) {
  CLI::App* sub = add_model_command(app, name, about, a.file, a.with);
  sub->add_option("-p,--prompt", a.prompt, "the text to run (at most block_size characters)")->required();
  return sub;
}

}  // namespace

// ---------------------------------------------------------------- options

Command add_tasks(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* tasks = app.add_subcommand("tasks", "the built-in tasks: an example line, what attention learns, the loss floor");
  tasks->add_flag("--json", *json, "print gpt_tasks_json (the wasm module's answer)");
  return {tasks, [json] { return cmd_tasks(*json); }};
}

Command add_sample(CLI::App& app) {
  auto a = std::make_shared<SampleArgs>();
  CLI::App* sample = add_model_command(app, "sample", "generate text from a checkpoint, one character at a time (KV cache)",
                                       a->file, a->with);
  sample->add_option("-p,--prompt", a->prompt, "the text to continue (characters the model knows)");
  sample->add_option("--ids", a->ids, "or the token ids to continue, N,N,… (with --json)");
  sample->add_option("-n,--max-new-tokens", a->max_new_tokens, "characters to generate (default 200)");
  sample->add_option("-t,--temperature", a->temperature, "divide the logits by this before sampling (default 1)");
  sample->add_option("-k,--top-k", a->top_k, "sample among the k most likely characters only (default 0: all)");
  sample->add_option("--top-p", a->top_p,
                     "sample among the smallest set of the most likely characters whose probabilities reach p, after "
                     "--top-k (default 1: all)");
  sample->add_flag("-g,--greedy", a->greedy, "always take the most likely character");
  sample->add_option("--seed", a->seed, "the sampling seed (default 1)");
  sample->add_flag("--json", a->json, "print {\"ok\":true,\"text\",\"new_text\",\"tokens\",\"ids\"}");
  return {sample, [a] { return cmd_sample(*a); }};
}

Command add_eval(CLI::App& app) {
  auto a = std::make_shared<EvalArgs>();
  CLI::App* eval = add_model_command(app, "eval", "the validation loss of a checkpoint", a->file, a->with);
  eval->add_option("--text", a->text_file, "the text a text run was trained on");
  eval->add_flag("--json", a->json, "print {\"ok\":true,\"step\",\"val_loss\"}");
  eval->add_option("--context", a->context,
                   "the loss at each position of validation windows of N tokens instead, and the KV cache's bytes "
                   "(past the trained block_size for RoPE, ALiBi and no positions; learned positions stop there)")
      ->check(CLI::Range(1, kMaxBlockSize));
  return {eval, [a] { return cmd_eval(*a); }, &a->text_file};
}

Command add_inspect(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto with = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  CLI::App* inspect = add_model_command(app, "inspect",
                                        "a checkpoint's config, vocabulary, step and every tensor's name and shape; "
                                        "a GGUF file's metadata and tensors",
                                        *file, *with, "the checkpoint, or a GGUF file");
  inspect->add_flag("--json", *json, "the same as JSON");
  return {inspect, [file, with, json] { return cmd_inspect(*file, *with, *json); }};
}

Command add_attention(CLI::App& app) {
  auto a = std::make_shared<PromptArgs>();
  CLI::App* attention = add_prompt_command(
      app, "attention", "every layer's and head's attention weights for a prompt as JSON, or one head's stepper spec", *a);
  attention->add_option("--head", a->head,
                        "LAYER.HEAD (from 1, as the training page's maps, e.g. 2.3): print that head's Q, K, V "
                        "as a stepper spec; "
                        "`attention trace` then reproduces its weights")
      ->check(
          [](const std::string& s) {
            const size_t dot = s.find('.');
            const bool ok = dot != std::string::npos && dot > 0 && dot + 1 < s.size() && dot <= 4 &&
                            s.size() - dot - 1 <= 4 &&
                            s.find_first_not_of("0123456789") == dot && s.find_first_not_of("0123456789", dot + 1) == std::string::npos;
            return ok ? std::string() : "--head is LAYER.HEAD, counting from 1, such as 2.3 (layer 2, head 3); got \"" + s + "\"";
          },
          "LAYER.HEAD");
  attention->footer("Runs the reference kernels (the stepper's arithmetic). Example: gpt attention m.safetensors "
                    "--prompt \"cabej=\" --head 2.1 | attention trace");
  return {attention, [a] { return cmd_attention(files_of(a->file, a->with), a->prompt, a->head); }};
}

Command add_logits(CLI::App& app) {
  auto a = std::make_shared<PromptArgs>();
  CLI::App* logits = add_model_command(app, "logits", "the logits at every position of a prompt (or of token ids), as JSON",
                                       a->file, a->with);
  logits->add_option("-p,--prompt", a->prompt, "the text to run (at most block_size characters)");
  logits->add_option("--ids", a->ids,
                     "token ids instead of a prompt, comma-separated (for a model without a character vocabulary, "
                     "such as GPT-2's)");
  logits->add_flag("--grads", a->grads,
                   "also the mean loss of predicting each next token of the input, and its gradient for every "
                   "parameter (by name, flat)");
  return {logits, [a] { return cmd_logits(files_of(a->file, a->with), a->prompt, a->ids, a->grads); }};
}

}  // namespace ap::gpt_cli
