// interp_cmd.cpp — `gpt interp MODE`: the interpretability tools (core/interp/interp.h) on a
// checkpoint, as readable tables or (--json) `gpt api`'s answer of the same call, word for word:
//   lens               the logit lens: the top token at each layer and position, and p(target)
//   attribute          direct logit attribution of a logit (or a difference) to heads, MLPs, embeddings
//   ablate             the loss and logit changes when each head or MLP is zeroed or mean-ablated
//   patch              activation patching of a clean prompt into a corrupted one: fraction recovered
//   attribution_patch  the same to first order (one forward and one backward)
//   heads              induction and previous-token scores of every head
#include <iostream>
#include <memory>

#include "api/gpt_interp.h"
#include "api/spec.h"
#include "cli/gpt/commands.h"
#include "cli/gpt/common.h"
#include "formats/json.h"

namespace ap::gpt_cli {

namespace {

using json::Value;

struct InterpArgs {
  std::string mode, file, prompt, corrupted, token, other, target, ablation = "zero";
  std::vector<std::string> with, reference;
  int position = -1, top_k = 5, length = 0, batch = 4;
  long long seed = 0;
  bool no_mid = false, json = false;
};

// A token's text as a table shows it: control characters escaped, at most 8 characters.
std::string shown(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == ' ') out += "\u2423";  // ␣
    else if (c < 0x20) out += "?";
    else out += static_cast<char>(c);
  }
  return out.size() > 24 ? out.substr(0, 24) : out;
}

// The display width of UTF-8 text (code points).
size_t width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string pad(const std::string& s, size_t w) { return s + std::string(w > width(s) ? w - width(s) : 0, ' '); }

// A table: a header row and rows of cells, columns as wide as their widest cell.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w;
  for (const auto& r : rows)
    for (size_t j = 0; j < r.size(); ++j) {
      if (w.size() <= j) w.push_back(0);
      w[j] = std::max(w[j], width(r[j]));
    }
  for (const auto& r : rows) {
    std::string line;
    for (size_t j = 0; j < r.size(); ++j) line += pad(r[j], w[j] + 2);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::cout << line << "\n";
  }
}

std::string num(const Value& v, int digits = 3) { return fixed(v.as_number(), digits); }

// A grid of numbers (rows of arrays) with row labels and column labels.
void print_grid(const std::string& title, const Value& grid, const std::vector<std::string>& row_labels,
                const std::vector<std::string>& col_labels) {
  std::cout << title << "\n";
  std::vector<std::vector<std::string>> rows = {{""}};
  for (const std::string& c : col_labels) rows[0].push_back(c);
  for (size_t i = 0; i < grid.size(); ++i) {
    std::vector<std::string> r = {row_labels[i]};
    for (const Value& x : grid[i].items()) r.push_back(num(x));
    rows.push_back(std::move(r));
  }
  print_table(rows);
  std::cout << "\n";
}

std::vector<std::string> labels(const std::string& prefix, size_t n, size_t from = 0) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i + from));
  return out;
}

std::vector<std::string> texts(const Value& tokens) {
  std::vector<std::string> out;
  for (const Value& t : tokens.items()) out.push_back(shown(t.as_string()));
  return out;
}

std::string metric_name(const InterpArgs& a) {
  return a.other.empty() ? "logit(" + json_quoted(a.token) + ")"
                         : "logit(" + json_quoted(a.token) + ") − logit(" + json_quoted(a.other) + ")";
}

void print_lens(const Value& v) {
  const std::vector<std::string> toks = texts(*spec::get(v, "tokens"));
  const Value& points = *spec::get(v, "points");
  std::vector<std::vector<std::string>> rows = {{"top token"}};
  for (const std::string& t : toks) rows[0].push_back(t);
  std::vector<std::vector<std::string>> prob = rows;
  prob[0][0] = "p(target)";
  for (size_t p = 0; p < points.size(); ++p) {
    std::vector<std::string> r = {points[p].as_string()}, q = r;
    const Value& row = (*spec::get(v, "top"))[p];
    for (size_t t = 0; t < row.size(); ++t) {
      const Value& best = row[t][0];
      r.push_back(shown(spec::get(best, "text")->as_string()) + " " + num(*spec::get(best, "p"), 2));
      q.push_back(num((*spec::get(v, "target_p"))[p][t], 3));
    }
    rows.push_back(std::move(r));
    prob.push_back(std::move(q));
  }
  std::cout << "The logit lens: each point's residual stream through ln_f and the unembedding (the last row is the "
               "model's prediction).\n";
  print_table(rows);
  std::cout << "\nThe probability of the target at each position (the last row's top token unless --target):\n";
  print_table(prob);
}

void print_attribute(const Value& v, const InterpArgs& a) {
  const Value& heads = *spec::get(v, "heads");
  std::cout << "Direct logit attribution of " << metric_name(a) << " at position "
            << num(*spec::get(v, "position"), 0) << " (ln_f's scale frozen)\n\n";
  print_grid("heads (layer × head):", heads, labels("layer ", heads.size()), labels("head ", heads[0].size()));
  std::vector<std::vector<std::string>> rows = {{"part", "contribution"}};
  rows.push_back({"wte (the token)", num(*spec::get(v, "wte"), 4)});
  rows.push_back({"wpe (the position)", num(*spec::get(v, "wpe"), 4)});
  for (size_t l = 0; l < heads.size(); ++l) {
    rows.push_back({"layer " + std::to_string(l) + " MLP", num((*spec::get(v, "mlps"))[l], 4)});
    rows.push_back({"layer " + std::to_string(l) + " attn.c_proj.bias", num((*spec::get(v, "attn_bias"))[l], 4)});
    rows.push_back({"layer " + std::to_string(l) + " mlp.c_proj.bias", num((*spec::get(v, "mlp_bias"))[l], 4)});
  }
  rows.push_back({"ln_f.bias", num(*spec::get(v, "ln_f_bias"), 4)});
  rows.push_back({"sum of the parts", num(*spec::get(v, "sum"), 6)});
  rows.push_back({"the model's value", num(*spec::get(v, "logit"), 6)});
  print_table(rows);
}

void print_ablate(const Value& v, const InterpArgs& a) {
  const Value& hl = *spec::get(v, "head_loss");
  const auto rows = labels("layer ", hl.size());
  const auto cols = labels("head ", hl[0].size());
  std::cout << (a.ablation == "mean" ? "Mean" : "Zero") << " ablation; the clean loss is "
            << num(*spec::get(v, "loss"), 4) << " nats\n\n";
  print_grid("change in the loss, each head ablated:", hl, rows, cols);
  Value mlps = Value::array();
  mlps.push(*spec::get(v, "mlp_loss"));
  print_grid("change in the loss, each MLP ablated:", mlps, {"MLP"}, labels("layer ", hl.size()));
  if (const Value* hm = spec::get(v, "head_metric")) {
    std::cout << "the clean " << metric_name(a) << " is " << num(*spec::get(v, "metric"), 4) << "\n";
    print_grid("its change, each head ablated:", *hm, rows, cols);
    Value m = Value::array();
    m.push(*spec::get(v, "mlp_metric"));
    print_grid("its change, each MLP ablated:", m, {"MLP"}, labels("layer ", hl.size()));
  }
}

void print_patch(const Value& v, const InterpArgs& a) {
  const Value& heads = *spec::get(v, "heads");
  const Value& resid = *spec::get(v, "resid");
  std::cout << (a.mode == "patch" ? "Activation patching" : "Attribution patching (first order)") << ": "
            << metric_name(a) << " is " << num(*spec::get(v, "clean_metric"), 4) << " clean, "
            << num(*spec::get(v, "corrupted_metric"), 4)
            << " corrupted; each cell is the fraction of the difference recovered\n\n";
  std::vector<std::string> cols = texts(*spec::get(v, "tokens"));
  const std::vector<std::string> bad = texts(*spec::get(v, "corrupted_tokens"));
  for (size_t i = 0; i < cols.size(); ++i)
    if (cols[i] != bad[i]) cols[i] += "/" + bad[i];
  std::vector<std::string> rl = labels("into layer ", resid.size() - 1);
  rl.push_back("into ln_f");
  print_grid("the residual stream (rows: where; columns: clean/corrupted tokens):", resid, rl, cols);
  print_grid("each head's output (all positions):", heads, labels("layer ", heads.size()), labels("head ", heads[0].size()));
  Value m = Value::array();
  m.push(*spec::get(v, "mlps"));
  print_grid("each MLP's output:", m, {"MLP"}, labels("layer ", heads.size()));
}

void print_heads(const Value& v) {
  const Value& ind = *spec::get(v, "induction");
  std::cout << "Head scores on " << num(*spec::get(v, "batch"), 0) << " sequences of "
            << num(*spec::get(v, "length"), 0) << " random tokens, each repeated once\n\n";
  print_grid("induction (mean weight on the token after the previous occurrence):", ind, labels("layer ", ind.size()),
             labels("head ", ind[0].size()));
  print_grid("previous token (mean weight on the position before):", *spec::get(v, "previous"),
             labels("layer ", ind.size()), labels("head ", ind[0].size()));
}

Value spec_of(const InterpArgs& a) {
  Value s = Value::object();
  auto text = [&](const char* key, const std::string& v) {
    if (!v.empty()) s.set(key, v);
  };
  if (a.mode == "heads") {
    s.set("length", a.length);
    s.set("batch", a.batch);
    s.set("seed", a.seed);
    return s;
  }
  const bool patching = a.mode == "patch" || a.mode == "attribution_patch";
  if (a.prompt.empty()) throw CliError("give the prompt with --prompt TEXT", kExitUsage);
  s.set(patching ? "clean" : "prompt", a.prompt);
  if (patching) {
    if (a.corrupted.empty()) throw CliError("patching needs --corrupted TEXT (as long as the prompt)", kExitUsage);
    s.set("corrupted", a.corrupted);
  }
  if (a.mode == "lens") {
    s.set("top_k", a.top_k);
    text("target", a.target);
    s.set("mid", !a.no_mid);
    return s;
  }
  if (a.token.empty() && a.mode != "ablate") throw CliError("give the token whose logit is followed with --token", kExitUsage);
  text("token", a.token);
  text("other", a.other);
  if (a.position >= 0) s.set("position", a.position);
  if (a.mode == "ablate") {
    s.set("mode", a.ablation);
    if (!a.reference.empty()) {
      Value r = Value::array();
      for (const std::string& x : a.reference) r.push(x);
      s.set("reference", std::move(r));
    }
  }
  return s;
}

int cmd_interp(const InterpArgs& a) {
  std::vector<std::string> files = {a.file};
  files.insert(files.end(), a.with.begin(), a.with.end());
  const LoadedModel m = load_model(files);
  const std::string call = a.mode == "heads" ? "head_scores" : a.mode;
  const std::string answer = interp_call(call, *m.model, *m.tok, spec_of(a).dump());
  const Value v = json::parse(answer);
  if (!spec::get(v, "ok")->as_bool()) {
    const Value* field = spec::get(v, "field");
    throw InputError(spec::get(v, "error")->as_string(), field ? field->as_string() : "");
  }
  if (a.json) {
    std::cout << answer << "\n";
    return 0;
  }
  if (a.mode == "lens") print_lens(v);
  else if (a.mode == "attribute") print_attribute(v, a);
  else if (a.mode == "ablate") print_ablate(v, a);
  else if (a.mode == "heads") print_heads(v);
  else print_patch(v, a);
  return 0;
}

}  // namespace

Command add_interp(CLI::App& app) {
  auto a = std::make_shared<InterpArgs>();
  CLI::App* sub = app.add_subcommand(
      "interp", "take a model apart: logit lens, logit attribution, ablation, activation and attribution patching, head scores");
  sub->add_option("mode", a->mode, "lens | attribute | ablate | patch | attribution_patch | heads")
      ->required()
      ->check(CLI::IsMember({"lens", "attribute", "ablate", "patch", "attribution_patch", "heads"}));
  sub->add_option("file", a->file, "the checkpoint")->required();
  sub->add_option("with", a->with, "the files that go with a model trained elsewhere (as gpt sample takes them)");
  sub->add_option("-p,--prompt", a->prompt, "the text to run (patching: the clean prompt)");
  sub->add_option("--corrupted", a->corrupted, "patching: the corrupted prompt, of the same number of tokens");
  sub->add_option("--token", a->token, "the token whose logit is followed (its text: one token)");
  sub->add_option("--other", a->other, "follow logit(token) − logit(other) instead");
  sub->add_option("--position", a->position, "the position whose logits are read (default the last, from 0)");
  sub->add_option("--target", a->target, "lens: the token whose probability is shown (default each position's prediction)");
  sub->add_option("-k,--top-k", a->top_k, "lens: the top tokens kept (default 5; the table shows the first)");
  sub->add_flag("--no-mid", a->no_mid, "lens: only after each layer, not also after its attention");
  sub->add_option("--ablation", a->ablation, "ablate: zero or mean (default zero)")->check(CLI::IsMember({"zero", "mean"}));
  sub->add_option("--reference", a->reference, "ablate --ablation mean: a text to average over (repeat the option)");
  sub->add_option("--length", a->length, "heads: the random sequence's length (default min(20, block_size/2))");
  sub->add_option("--batch", a->batch, "heads: how many sequences (default 4)");
  sub->add_option("--seed", a->seed, "heads: the random tokens' seed (default 0)");
  sub->add_flag("--json", a->json, "print gpt api's answer of the same call");
  sub->footer("Example: gpt interp patch m.safetensors --prompt \"12+34=\" --corrupted \"12+35=\" --token 4 --other 5\n"
              "Reference: docs/gpt.md, core/interp/interp.h.");
  return {sub, [a] { return cmd_interp(*a); }};
}

}  // namespace ap::gpt_cli
