// gpt_main.cpp — `gpt`, the command line of the tiny GPT: train it on a built-in task or your own
// text, resume, sample, evaluate, inspect a checkpoint, look at its attention, and the `gpt api`
// line protocol that drives the same GptSession as the wasm module (docs/gpt.md has the reference).
//
//   gpt tasks                                the built-in tasks
//   gpt train -o FILE.safetensors [options]  a new run; checkpoints every --checkpoint-interval
//   gpt resume FILE.safetensors [--steps N]  continue a run (bit for bit as if never stopped)
//   gpt sample FILE --prompt TEXT            text from the model (greedy, temperature, top-k)
//   gpt eval FILE                            the validation loss
//   gpt inspect FILE                         config, vocabulary, step, every tensor's name and shape
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
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "../api/checkpoint.h"
#include "../api/gpt_json.h"
#include "../api/gpt_session.h"
#include "../api/json.h"
#include "../api/spec.h"
#include "../core/generate.h"
#include "../core/kernels.h"
#include "../core/number_text.h"
#include "../core/train.h"

namespace {

using ap::InputError;
using ap::json::Value;

constexpr size_t kMaxTextBytes = size_t(1) << 26;  // 64 MiB: the run spec's limit for "text"
constexpr int kExitError = 1, kExitUsage = 2, kExitDiverged = 3;

// An error the CLI itself finds (a file it cannot read), reported like the core's InputError.
struct CliError : std::runtime_error {
  CliError(const std::string& message, int code = kExitError) : std::runtime_error(message), code(code) {}
  int code;
};

// ---------------------------------------------------------------- small helpers

std::string with_commas(long long n) {
  std::string s = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// 0:07, 12:34, 1:02:03
std::string duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  long long s = static_cast<long long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  return buf;
}

// 950, 12.3k, 1.25M
std::string si(double v) {
  if (v >= 1e6) return fixed(v / 1e6, 2) + "M";
  if (v >= 1e4) return fixed(v / 1e3, 1) + "k";
  return fixed(v, 0);
}

// 0.000421: three significant digits
std::string sig3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// A text as a JSON string (quotes, escapes): how messages and `inspect` show characters.
std::string json_quoted(const std::string& s) { return Value(s).dump(); }

std::string read_file(const std::string& path, size_t max_bytes, const char* what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw CliError("cannot read " + std::string(what) + " " + path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw CliError("cannot read " + std::string(what) + " " + path + ": it is a directory");
  if (static_cast<unsigned long long>(st.st_size) > max_bytes)
    throw CliError(std::string(what) + " " + path + " has " + with_commas(st.st_size) + " bytes, more than the limit of " +
                   with_commas(static_cast<long long>(max_bytes)));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw CliError("cannot read " + std::string(what) + " " + path + ": " + std::strerror(errno));
  std::string out((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw CliError("cannot read " + std::string(what) + " " + path);
  return out;
}

std::string read_text_file(const std::string& path) { return read_file(path, kMaxTextBytes, "the text file"); }

// Refuses early (before minutes of training) an output whose directory does not exist or cannot
// be written; the checkpoint writer reports anything else.
void check_writable(const std::string& path, const char* what) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw CliError("cannot write " + std::string(what) + " " + path + ": the folder " + dir + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw CliError("cannot write " + std::string(what) + " " + path + ": the folder " + dir + " is not writable");
  struct stat target {};
  if (::stat(path.c_str(), &target) == 0 && S_ISDIR(target.st_mode))
    throw CliError("cannot write " + std::string(what) + " " + path + ": it is a directory");
}

// A model read from a checkpoint for inference: no training data needed (a text run's checkpoint
// samples without its text).
struct LoadedModel {
  std::string path;
  uint64_t bytes = 0;
  ap::TrainState state;
  std::unique_ptr<ap::GPT> model;
  std::unique_ptr<ap::CharTokenizer> tok;
};

std::string read_checkpoint(const std::string& path) {
  try {
    return ap::read_checkpoint_file(path);
  } catch (const InputError& e) {
    throw CliError(e.what());
  }
}

// The core's messages about a file's insides name the tensor or byte; the file's path comes first.
ap::TrainState load_state(const std::string& path, const std::string& bytes) {
  try {
    return ap::load_checkpoint(bytes);
  } catch (const InputError& e) {
    throw CliError(path + ": " + e.what());
  }
}

LoadedModel load_model(const std::string& path) {
  LoadedModel m;
  m.path = path;
  const std::string bytes = read_checkpoint(path);
  m.bytes = bytes.size();
  m.state = load_state(path, bytes);
  m.model = std::make_unique<ap::GPT>(m.state.model);
  std::copy(m.state.params.begin(), m.state.params.end(), m.model->params());
  m.tok = std::make_unique<ap::CharTokenizer>(ap::CharTokenizer::from_chars(m.state.vocab));
  return m;
}

void check_prompt_length(const LoadedModel& m, const std::vector<int>& ids) {
  if (ids.empty()) throw InputError("the prompt is empty: give at least one character", "prompt");
  const int S = m.state.model.block_size;
  if (static_cast<int>(ids.size()) > S)
    throw InputError("the prompt has " + std::to_string(ids.size()) + " characters; the model sees at most block_size = " +
                         std::to_string(S),
                     "prompt");
}

std::string describe_config(const ap::GPTConfig& c) {
  return std::to_string(c.n_layer) + (c.n_layer == 1 ? " layer, " : " layers, ") + std::to_string(c.n_head) + (c.n_head == 1 ? " head of " : " heads of ") +
         std::to_string(c.head_dim()) + ", n_embd " + std::to_string(c.n_embd) + ", block_size " +
         std::to_string(c.block_size) + ", vocab " + std::to_string(c.vocab_size) +
         (c.mask == ap::MaskVariant::strict ? "" : ", mask inclusive") + (c.stable_softmax ? "" : ", naive softmax");
}

std::string describe_data(const ap::TrainState& s) {
  if (!s.task.empty()) return "the " + s.task + " task (" + with_commas(s.n_chars) + " characters)";
  return "the text " + json_quoted(s.text_name);
}

// ---------------------------------------------------------------- Ctrl-C

volatile std::sig_atomic_t g_signal = 0;
// When the first signal came, in milliseconds of CLOCK_MONOTONIC (lock-free, so safe in a handler).
std::atomic<long long> g_first_signal_ms{0};

long long monotonic_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

extern "C" void on_signal(int sig) {
  const long long now = monotonic_ms();
  if (g_signal == 0) {
    g_first_signal_ms = now;
    g_signal = sig;
    return;
  }
  // A second Ctrl-C, half a second or more after the first, ends the program at once (the
  // checkpoint write is atomic, so the old file stays whole). Repeats closer than that are the same
  // Ctrl-C delivered twice: `timeout`, and some shells, signal both the process and its group.
  if (now - g_first_signal_ms >= 500) _exit(128 + sig);
}

struct SignalGuard {
  SignalGuard() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
  struct sigaction old_int {}, old_term {};
};

// ---------------------------------------------------------------- progress and the CSV log

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool utf8_locale() {
  for (const char* var : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* v = std::getenv(var);
    if (v && *v) {
      std::string s(v);
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s.find("utf-8") != std::string::npos || s.find("utf8") != std::string::npos;
    }
  }
  return false;
}

// What one line of progress reports.
struct Progress {
  int64_t step = 0, total = 0;
  float loss = NAN, val_loss = -1.0f, lr = NAN, grad_norm = NAN;
  double tokens_per_s = 0, elapsed = 0, remaining = NAN;
  bool evaluated = false;  // val_loss was measured at this step (else it is the last one measured)
};

// On a terminal: one line redrawn in place (at most 10 times a second), with a line kept above it
// at every evaluation. Elsewhere (a pipe, a file, CI): only the kept lines.
class Display {
 public:
  explicit Display(bool quiet) : quiet_(quiet), tty_(!quiet && ::isatty(STDOUT_FILENO)), unicode_(utf8_locale()) {}

  void message(const std::string& line) {
    if (quiet_) return;
    clear_bar();
    std::cout << line << "\n" << std::flush;
    if (tty_ && has_bar_) draw(last_, true);
  }

  // A kept line: at evaluations, the first step and the last.
  void line(const Progress& p) {
    std::string s = "step " + pad(std::to_string(p.step), digits(p.total)) + "/" + std::to_string(p.total);
    if (std::isfinite(p.loss)) s += "  loss " + fixed(p.loss, 4);
    if (p.evaluated) s += "  val_loss " + fixed(p.val_loss, 4);
    if (std::isfinite(p.lr)) s += "  lr " + sig3(p.lr);
    if (std::isfinite(p.grad_norm)) s += "  grad_norm " + fixed(p.grad_norm, 3);
    if (p.tokens_per_s > 0) s += "  " + si(p.tokens_per_s) + " tokens/s";
    s += "  elapsed " + duration(p.elapsed);
    if (p.step < p.total && std::isfinite(p.remaining)) s += "  remaining " + duration(p.remaining);
    message(s);
  }

  // The live bar (terminal only).
  void bar(const Progress& p) {
    if (!tty_) return;
    last_ = p;
    has_bar_ = true;
    draw(p, false);
  }

  void finish() {
    if (tty_ && has_bar_) clear_bar();
    has_bar_ = false;
  }

 private:
  static int digits(int64_t n) { return static_cast<int>(std::to_string(n).size()); }
  static std::string pad(const std::string& s, int w) {
    return s.size() >= static_cast<size_t>(w) ? s : std::string(static_cast<size_t>(w) - s.size(), ' ') + s;
  }
  int width() const {
    struct winsize ws {};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20) return ws.ws_col;
    return 80;
  }
  void clear_bar() {
    if (tty_ && has_bar_) std::cout << "\r\x1b[K" << std::flush;
  }
  void draw(const Progress& p, bool force) {
    const auto now = Clock::now();
    if (!force && drawn_ && p.step < p.total && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    drawn_ = true;
    const double frac = p.total > 0 ? double(p.step) / double(p.total) : 0.0;
    std::string head = "step " + pad(std::to_string(p.step), digits(p.total)) + "/" + std::to_string(p.total) + " ";
    std::string tail = " " + pad(std::to_string(static_cast<int>(frac * 100)), 3) + "%";
    if (std::isfinite(p.loss)) tail += "  loss " + fixed(p.loss, 4);
    if (p.val_loss >= 0) tail += "  val " + fixed(p.val_loss, 4);
    if (p.tokens_per_s > 0) tail += "  " + si(p.tokens_per_s) + " tok/s";
    tail += "  " + duration(p.elapsed) + " elapsed";
    if (p.step < p.total) tail += "  " + duration(p.remaining) + " left";
    // The bar takes what the numbers leave of the line (10 to 30 cells); on a narrow terminal the
    // numbers are cut instead.
    const int w = width() - 1;
    int cells = std::min(30, w - static_cast<int>(head.size() + tail.size()) - 2);
    if (cells < 10) cells = 10;
    const int full = static_cast<int>(frac * cells + 1e-9);
    std::string bar = "[";
    for (int i = 0; i < cells; ++i) bar += i < full ? (unicode_ ? "█" : "#") : (unicode_ ? "░" : "-");
    bar += "]";
    std::string text = head + bar + tail;
    // Cut to the width, counting characters (the bar's cells are 3 bytes each in UTF-8).
    int chars = 0;
    size_t cut = text.size();
    for (size_t i = 0; i < text.size(); ++i) {
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && chars++ == w) {
        cut = i;
        break;
      }
    }
    std::cout << "\r" << text.substr(0, cut) << "\x1b[K" << std::flush;
  }

  bool quiet_, tty_, unicode_;
  bool has_bar_ = false, drawn_ = false;
  Progress last_;
  Clock::time_point last_draw_;
};

// step,loss,val_loss,lr,grad_norm,tokens_per_s,elapsed_s — one row per step (step = steps done
// after it, from 1), val_loss empty except at evaluations; row 0 of a new run holds the
// validation loss of the initial weights. Floats with float32's shortest digits, so a row reads
// back to the bits the trainer saw.
class CsvLog {
 public:
  CsvLog(const std::string& path, bool append) : path_(path) {
    if (path.empty()) return;
    check_writable(path, "the log");
    struct stat st {};
    const bool has_rows = append && ::stat(path.c_str(), &st) == 0 && st.st_size > 0;
    f_.open(path, has_rows ? std::ios::app : std::ios::trunc);
    if (!f_) throw CliError("cannot write the log " + path + ": " + std::strerror(errno));
    if (!has_rows) f_ << "step,loss,val_loss,lr,grad_norm,tokens_per_s,elapsed_s\n";
  }
  void row(int64_t step, const float* loss, float val_loss, const float* lr, const float* grad_norm,
           double tokens_per_s, double elapsed) {
    if (!f_.is_open()) return;
    f_ << step << ',' << (loss ? ap::format_float(*loss) : "") << ','
       << (val_loss >= 0 ? ap::format_float(val_loss) : "") << ',' << (lr ? ap::format_float(*lr) : "") << ','
       << (grad_norm ? ap::format_float(*grad_norm) : "") << ',' << (tokens_per_s > 0 ? fixed(tokens_per_s, 0) : "")
       << ',' << fixed(elapsed, 3) << '\n';
    f_.flush();
    if (!f_) throw CliError("cannot write the log " + path_ + ": " + std::strerror(errno));
  }

 private:
  std::string path_;
  std::ofstream f_;
};

// ---------------------------------------------------------------- the training loop (train, resume)

struct RunOutput {
  std::string out;          // the checkpoint
  std::string log;          // CSV, or empty
  bool append_log = false;  // resume continues a log
  int checkpoint_interval = 500;
  bool quiet = false;
};

void save(ap::Trainer& t, const std::string& path) { ap::write_checkpoint_file(path, ap::save_checkpoint(t.state())); }

int train_loop(ap::Trainer& t, const RunOutput& o, Display& display, CsvLog& log);

// Trains from t.steps_done() to t.config().steps. Returns the exit status.
int run_training(ap::Trainer& t, const RunOutput& o) {
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

int train_loop(ap::Trainer& t, const RunOutput& o, Display& display, CsvLog& log) {
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
    const int sig = g_signal;
    save(t, o.out);
    std::cerr << "gpt: " << (sig == SIGINT ? "interrupted (Ctrl-C)" : "terminated") << " after step " << t.steps_done()
              << " of " << total << "; saved it to " << o.out << ". Continue with: gpt resume " << o.out << "\n";
    return 128 + sig;
  };

  if (first == 0) {
    // The initial weights: a model that knows nothing scores about ln(vocab_size).
    if (g_signal) return interrupted();
    p.val_loss = t.evaluate();
    p.evaluated = true;
    p.step = 0;
    p.elapsed = seconds_since(start);
    log.row(0, nullptr, p.val_loss, nullptr, nullptr, 0, p.elapsed);
    display.line(p);
  }

  while (t.steps_done() < total) {
    if (g_signal) return interrupted();
    const auto t0 = Clock::now();
    const ap::StepResult r = t.step();
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
    p.evaluated = eval && !g_signal;
    if (p.evaluated) {
      val = t.evaluate();
      p.val_loss = val;
    }
    p.elapsed = seconds_since(start);
    p.remaining = p.elapsed / double(done - first) * double(total - done);
    log.row(done, &r.loss, val, &r.lr, &r.grad_norm, p.tokens_per_s, p.elapsed);
    display.bar(p);  // first: a kept line redraws the bar as it now is
    if (eval || done == first + 1) display.line(p);
    if (o.checkpoint_interval > 0 && done % o.checkpoint_interval == 0 && done != total && !g_signal) {
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

// ---------------------------------------------------------------- train and resume

struct TrainArgs {
  std::string out, task, text_file, preset, mask, softmax, log;
  long long n_layer = 0, n_head = 0, n_embd = 0, block_size = 0, n_chars = 0;
  long long steps = 0, batch_size = 0, warmup_steps = 0, eval_interval = 0, eval_batches = 0, seed = 0;
  double lr = 0, min_lr = 0, weight_decay = 0, grad_clip = 0;
  int checkpoint_interval = 500;
  bool quiet = false;
};

void print_run_header(const ap::Trainer& t, Display& d, const std::string& verb) {
  const ap::GPTConfig& c = t.model().config();
  const ap::TrainState s = t.state();
  const ap::TrainConfig& tc = t.config();
  d.message(verb + " a GPT of " + describe_config(c) + " (" + with_commas(t.model().num_parameters()) +
            " parameters) on " + describe_data(s) + ": " + with_commas(static_cast<long long>(t.dataset().train.size())) +
            " training and " + with_commas(static_cast<long long>(t.dataset().val.size())) + " validation tokens");
  d.message("steps " + std::to_string(t.steps_done()) + " → " + std::to_string(tc.steps) + " of " +
            std::to_string(tc.batch_size) + "×" + std::to_string(c.block_size) + " tokens, lr " +
            ap::format_float(tc.lr) + " (warm-up " + std::to_string(tc.warmup_steps) + ", cosine to " +
            ap::format_float(tc.min_lr) + "), seed " + std::to_string(tc.seed) + ", kernels " +
            ap::kernels::tier_name());
  std::string floor = "a model that knows nothing scores ln " + std::to_string(c.vocab_size) + " = " +
                      fixed(std::log(double(c.vocab_size)), 4);
  if (!s.task.empty()) floor += "; a perfect one " + fixed(ap::task_info(s.task).loss_floor, 4) + " (the task's loss floor)";
  d.message(floor);
}

int cmd_train(const TrainArgs& a, CLI::App* sub) {
  SignalGuard signals;  // from the start: a Ctrl-C while the run is set up still saves step 0
  Value spec = Value::object();
  auto given = [&](const char* name) { return sub->get_option(name)->count() > 0; };
  if (given("--preset")) spec.set("preset", a.preset);
  if (given("--n-layer")) spec.set("n_layer", a.n_layer);
  if (given("--n-head")) spec.set("n_head", a.n_head);
  if (given("--n-embd")) spec.set("n_embd", a.n_embd);
  if (given("--block-size")) spec.set("block_size", a.block_size);
  if (given("--mask")) spec.set("mask", a.mask);
  if (given("--softmax")) spec.set("softmax", a.softmax);
  if (given("--task")) spec.set("task", a.task);
  if (given("--n-chars")) spec.set("n_chars", a.n_chars);
  if (given("--steps")) spec.set("steps", a.steps);
  if (given("--batch-size")) spec.set("batch_size", a.batch_size);
  if (given("--lr")) spec.set("lr", a.lr);
  if (given("--min-lr")) spec.set("min_lr", a.min_lr);
  if (given("--warmup-steps")) spec.set("warmup_steps", a.warmup_steps);
  if (given("--weight-decay")) spec.set("weight_decay", a.weight_decay);
  if (given("--grad-clip")) spec.set("grad_clip", a.grad_clip);
  if (given("--eval-interval")) spec.set("eval_interval", a.eval_interval);
  if (given("--eval-batches")) spec.set("eval_batches", a.eval_batches);
  if (given("--seed")) spec.set("seed", a.seed);
  if (!a.text_file.empty()) {
    spec.set("text", read_text_file(a.text_file));
    spec.set("text_name", a.text_file);
  }
  const ap::RunSpec r = ap::read_run_spec(spec);
  if (a.checkpoint_interval < 0)
    throw InputError("checkpoint_interval is " + std::to_string(a.checkpoint_interval) +
                         ": it must be 0 (only at the end) or more",
                     "checkpoint_interval");
  check_writable(a.out, "the checkpoint");
  ap::Trainer t(r.model, r.train, r.data);
  Display d(a.quiet);
  print_run_header(t, d, "training");
  return run_training(t, {a.out, a.log, false, a.checkpoint_interval, a.quiet});
}

struct ResumeArgs {
  std::string file, text_file, out, log;
  long long steps = 0;
  int checkpoint_interval = 500;
  bool quiet = false;
};

int cmd_resume(const ResumeArgs& a, CLI::App* sub) {
  SignalGuard signals;  // from the start: a Ctrl-C while the run is set up still saves step 0
  const std::string bytes = read_checkpoint(a.file);
  ap::TrainState s = load_state(a.file, bytes);
  if (sub->get_option("--steps")->count()) {
    if (a.steps <= s.step)
      throw InputError("--steps is the run's new total, and " + a.file + " is already at step " +
                           std::to_string(s.step) + ": give more than " + std::to_string(s.step),
                       "steps");
    if (a.steps > ap::kMaxSteps)
      throw InputError("steps is " + std::to_string(a.steps) + ": it must be between 1 and " +
                           std::to_string(ap::kMaxSteps),
                       "steps");
    s.train.steps = static_cast<int>(a.steps);
    s.train.validate();
  } else if (s.step >= s.train.steps) {
    throw InputError("the run in " + a.file + " is complete (step " + std::to_string(s.step) + " of " +
                         std::to_string(s.train.steps) + "): give --steps with a new total to train further",
                     "steps");
  }
  std::string text;
  if (!a.text_file.empty()) {
    if (!s.task.empty())
      throw InputError(a.file + " was trained on the " + s.task + " task, which it regenerates: --text does not apply",
                       "text");
    text = read_text_file(a.text_file);
  }
  if (a.checkpoint_interval < 0)
    throw InputError("checkpoint_interval is " + std::to_string(a.checkpoint_interval) +
                         ": it must be 0 (only at the end) or more",
                     "checkpoint_interval");
  const std::string out = a.out.empty() ? a.file : a.out;
  check_writable(out, "the checkpoint");
  ap::Trainer t(s, text);
  Display d(a.quiet);
  print_run_header(t, d, "resuming");
  return run_training(t, {out, a.log, true, a.checkpoint_interval, a.quiet});
}

// ---------------------------------------------------------------- sample, eval, inspect

struct SampleArgs {
  std::string file, prompt;
  long long max_new_tokens = 200, top_k = 0, seed = 1;
  double temperature = 1.0;
  bool greedy = false, json = false;
};

int cmd_sample(const SampleArgs& a) {
  LoadedModel m = load_model(a.file);
  const std::vector<int> ids = m.tok->encode(a.prompt, "prompt");
  ap::SampleOptions o;
  auto check = [](long long v, long long lo, long long hi, const char* field) {
    if (v < lo || v > hi)
      throw InputError(std::string(field) + " is " + std::to_string(v) + ": it must be between " + std::to_string(lo) +
                           " and " + std::to_string(hi),
                       field);
  };
  check(a.max_new_tokens, 0, ap::kMaxNewTokens, "max_new_tokens");
  check(a.top_k, 0, m.state.model.vocab_size, "top_k");
  check(a.seed, 0, 1LL << 53, "seed");
  o.max_new_tokens = static_cast<int>(a.max_new_tokens);
  o.temperature = static_cast<float>(a.temperature);
  o.top_k = static_cast<int>(a.top_k);
  o.greedy = a.greedy;
  o.seed = static_cast<uint64_t>(a.seed);
  ap::Generator g(*m.model, ids, o);  // validates the options and the prompt
  if (a.json) {
    for (int i = 0; i < o.max_new_tokens; ++i) g.next();
    const std::vector<int>& out = g.tokens();
    const std::vector<int> fresh(out.begin() + static_cast<std::ptrdiff_t>(ids.size()), out.end());
    Value v = Value::object();
    v.set("text", m.tok->decode(out));
    v.set("new_text", m.tok->decode(fresh));
    v.set("tokens", ap::token_labels(*m.tok, out));
    std::cout << ap::spec::ok(std::move(v)).dump() << "\n";
    return 0;
  }
  // The text as it comes, one character at a time.
  std::cout << a.prompt << std::flush;
  for (int i = 0; i < o.max_new_tokens; ++i) std::cout << m.tok->token_text(g.next()) << std::flush;
  std::cout << "\n";
  return 0;
}

struct EvalArgs {
  std::string file, text_file;
  bool json = false;
};

int cmd_eval(const EvalArgs& a) {
  const std::string bytes = read_checkpoint(a.file);
  const ap::TrainState s = load_state(a.file, bytes);
  std::string text;
  if (!a.text_file.empty()) {
    if (!s.task.empty())
      throw InputError(a.file + " was trained on the " + s.task + " task, which it regenerates: --text does not apply",
                       "text");
    text = read_text_file(a.text_file);
  } else if (s.task.empty()) {
    throw InputError(a.file + " was trained on the text " + json_quoted(s.text_name) +
                         ": give it with --text FILE (its last tenth is the validation split)",
                     "text");
  }
  ap::Trainer t(s, text);
  const float val = t.evaluate();
  if (a.json) {
    Value v = Value::object();
    v.set("step", static_cast<long long>(t.steps_done()));
    v.set("val_loss", Value::f32(val));
    std::cout << ap::spec::ok(std::move(v)).dump() << "\n";
    return 0;
  }
  std::string line = "val_loss " + fixed(val, 4) + " at step " + std::to_string(t.steps_done()) + " over " +
                     with_commas(static_cast<long long>(t.dataset().val.size())) + " validation tokens of " +
                     describe_data(s);
  if (!s.task.empty()) line += "; the task's loss floor is " + fixed(ap::task_info(s.task).loss_floor, 4);
  std::cout << line << "\n";
  return 0;
}

// The tensors of a safetensors file in header order: name, dtype, shape. The file has passed
// load_checkpoint, so its header is known to be sound.
struct TensorEntry {
  std::string name, dtype;
  std::vector<long long> shape;
};
std::vector<TensorEntry> header_tensors(const std::string& bytes, Value& metadata) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  const Value header = ap::json::parse(bytes.substr(8, n));
  std::vector<TensorEntry> out;
  for (const auto& [name, v] : header.members()) {
    if (name == "__metadata__") {
      metadata = v;
      continue;
    }
    TensorEntry e{name, v.find("dtype") ? v.find("dtype")->as_string() : "?", {}};
    if (const Value* sh = v.find("shape"))
      for (const Value& d : sh->items()) e.shape.push_back(static_cast<long long>(d.as_number()));
    out.push_back(std::move(e));
  }
  return out;
}

std::string shape_text(const std::vector<long long>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int cmd_inspect(const std::string& file, bool json) {
  const std::string bytes = read_checkpoint(file);
  const ap::TrainState s = load_state(file, bytes);
  Value metadata = Value::object();
  const std::vector<TensorEntry> tensors = header_tensors(bytes, metadata);
  const ap::GPTConfig& c = s.model;
  const ap::CharTokenizer tok = ap::CharTokenizer::from_chars(s.vocab);
  std::vector<int> all(static_cast<size_t>(tok.vocab_size()));
  for (int i = 0; i < tok.vocab_size(); ++i) all[static_cast<size_t>(i)] = i;
  auto meta = [&](const char* key) {
    const Value* v = metadata.find(key);
    return v && v->is_string() ? v->as_string() : std::string();
  };
  if (json) {
    Value v = Value::object();
    v.set("file", file);
    v.set("bytes", static_cast<long long>(bytes.size()));
    v.set("format", meta("format"));
    v.set("format_version", meta("format_version"));
    v.set("config", ap::config_json(c));
    v.set("n_params", static_cast<long long>(c.num_parameters()));
    v.set("data", ap::data_source_json(s));
    v.set("vocab", ap::token_labels(tok, all));
    v.set("step", static_cast<long long>(s.step));
    v.set("steps", s.train.steps);
    v.set("val_loss", s.last_val_loss < 0 ? Value() : Value::f32(s.last_val_loss));
    v.set("train", ap::train_config_json(s.train));
    v.set("seed", std::to_string(s.train.seed));
    Value list = Value::array();
    for (const TensorEntry& e : tensors) {
      Value& t = list.push(Value::object());
      t.set("name", e.name);
      t.set("dtype", e.dtype);
      Value shape = Value::array();
      for (long long d : e.shape) shape.push(d);
      t.set("shape", std::move(shape));
    }
    v.set("tensors", std::move(list));
    std::cout << ap::spec::ok(std::move(v)).dump() << "\n";
    return 0;
  }
  const ap::GPTConfig tiny = ap::GPTConfig::tiny(c.vocab_size), small = ap::GPTConfig::small(c.vocab_size);
  auto same_shape = [&](const ap::GPTConfig& p) {
    return p.n_layer == c.n_layer && p.n_head == c.n_head && p.n_embd == c.n_embd && p.block_size == c.block_size;
  };
  const std::string preset = same_shape(tiny) ? " (the tiny preset)" : same_shape(small) ? " (the small preset)" : "";
  std::string vocab = tok.decode(all);
  if (tok.vocab_size() > 100) {
    std::vector<int> head(all.begin(), all.begin() + 100);
    vocab = json_quoted(tok.decode(head)) + " and " + std::to_string(tok.vocab_size() - 100) + " more";
  } else {
    vocab = json_quoted(vocab);
  }
  const ap::TrainConfig& t = s.train;
  std::cout << "file        " << file << " (" << with_commas(static_cast<long long>(bytes.size())) << " bytes, "
            << meta("format") << " version " << meta("format_version") << ")\n"
            << "model       " << describe_config(c) << "; mask " << (c.mask == ap::MaskVariant::strict ? "strict" : "inclusive")
            << ", softmax " << (c.stable_softmax ? "stable" : "naive") << "\n"
            << "parameters  " << with_commas(c.num_parameters()) << preset << "\n"
            << "data        " << describe_data(s)
            << (s.task.empty() ? " (fingerprint " + s.text_fingerprint + ")" : std::string()) << "\n"
            << "vocab       " << tok.vocab_size() << " characters: " << vocab << "\n"
            << "step        " << s.step << " of " << t.steps
            << (s.last_val_loss >= 0 ? "; last val_loss measured " + fixed(s.last_val_loss, 4)
                                     : std::string("; never evaluated"))
            << "\n"
            << "training    batch_size " << t.batch_size << ", lr " << ap::format_float(t.lr) << " (warm-up "
            << t.warmup_steps << " steps, cosine to " << ap::format_float(t.min_lr) << "), weight_decay "
            << ap::format_float(t.weight_decay) << ", beta1 " << ap::format_float(t.beta1) << ", beta2 "
            << ap::format_float(t.beta2) << ", grad_clip " << ap::format_float(t.grad_clip) << ", eval every "
            << t.eval_interval << " steps (at most " << t.eval_batches << " batches), seed " << t.seed << "\n"
            << "tensors     " << tensors.size() << "\n";
  size_t wide = 0;
  for (const TensorEntry& e : tensors) wide = std::max(wide, e.name.size());
  for (const TensorEntry& e : tensors)
    std::cout << "  " << e.name << std::string(wide - e.name.size() + 2, ' ') << e.dtype << "  " << shape_text(e.shape)
              << "\n";
  return 0;
}

// ---------------------------------------------------------------- attention, logits

int cmd_attention(const std::string& file, const std::string& prompt, const std::string& head) {
  // The reference kernels: the stepper's arithmetic, so `attention trace` reproduces a head's
  // weights from its spec to the last bit.
  ap::kernels::set_tier(ap::kernels::Tier::reference);
  LoadedModel m = load_model(file);
  const std::vector<int> ids = m.tok->encode(prompt, "prompt");
  check_prompt_length(m, ids);
  const int T = static_cast<int>(ids.size());
  const ap::GPTConfig& c = m.state.model;
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
    std::cout << ap::head_spec(*m.model, layer - 1, h - 1).dump() << "\n";
    return 0;
  }
  std::cout << ap::spec::ok(ap::attention_maps_json(*m.tok, ids, c.n_layer, c.n_head,
                                                    [&](int l) { return m.model->attention_weights(l); }))
                   .dump()
            << "\n";
  return 0;
}

int cmd_logits(const std::string& file, const std::string& prompt) {
  LoadedModel m = load_model(file);
  const std::vector<int> ids = m.tok->encode(prompt, "prompt");
  check_prompt_length(m, ids);
  const int T = static_cast<int>(ids.size()), V = m.state.model.vocab_size;
  m.model->forward(ids.data(), nullptr, 1, T);
  Value v = Value::object();
  v.set("tokens", ap::token_labels(*m.tok, ids));
  v.set("logits", ap::spec::matrix_value(m.model->logits(), T, V));
  std::cout << ap::spec::ok(std::move(v)).dump() << "\n";
  return 0;
}

int cmd_tasks(bool json) {
  if (json) {
    std::cout << ap::gpt_tasks_json() << "\n";
    return 0;
  }
  size_t wide = 0;
  for (const ap::TaskInfo& t : ap::task_infos()) wide = std::max(wide, t.name.size());
  const std::string indent(wide + 2, ' ');
  for (const ap::TaskInfo& t : ap::task_infos()) {
    std::cout << t.name << std::string(wide + 2 - t.name.size(), ' ') << json_quoted(t.example) << "   loss floor "
              << fixed(t.loss_floor, 4) << " nats/character\n"
              << indent << t.description << "\n"
              << indent << "attention: " << t.attention << "\n";
  }
  return 0;
}

// ---------------------------------------------------------------- gpt api

// One call → the session's answer, verbatim; a malformed call → {"ok":false,…} naming the key.
std::string api_call(ap::GptSession& s, const std::string& line) {
  using namespace ap::spec;
  std::string answer;
  const std::string envelope = guarded([&] {
    const Value v = ap::json::parse(line);
    if (!v.is_object()) throw InputError("a call must be a JSON object such as {\"call\":\"info\"}", "call");
    const Value* c = v.find("call");
    if (!c) throw InputError("the call has no \"call\" (what to do: create, load, train, …)", "call");
    const std::string call = read_string(v, "call", "", 64);
    auto keys = [&](std::set<std::string> known) {
      known.insert("call");
      reject_unknown_keys(v, known, call + " call");
    };
    auto need = [&](const char* key) -> const Value& {
      const Value* x = get(v, key);
      if (!x) throw InputError("the " + call + " call needs \"" + key + "\"", key);
      return *x;
    };
    auto spec_text = [&] {
      const Value* x = get(v, "spec");
      return x ? x->dump() : std::string("{}");
    };
    auto whole = [&](const char* key) {
      need(key);
      return static_cast<int>(read_int(v, key, 0, -(1LL << 31), (1LL << 31) - 1));
    };
    if (call == "create") {
      keys({"spec"});
      answer = s.create(spec_text());
    } else if (call == "load") {
      keys({"path", "text_path"});
      need("path");
      const std::string path = read_string(v, "path", "", 4096);
      std::string text;
      if (get(v, "text_path")) {
        const std::string text_path = read_string(v, "text_path", "", 4096);
        try {
          text = read_text_file(text_path);
        } catch (const CliError& e) {
          throw InputError(e.what(), "text_path");
        }
      }
      answer = s.load(ap::read_checkpoint_file(path), text);
    } else if (call == "info") {
      keys({});
      answer = s.info();
    } else if (call == "train") {
      keys({"n"});
      answer = s.train(whole("n"));
    } else if (call == "evaluate") {
      keys({});
      answer = s.evaluate();
    } else if (call == "sample") {
      keys({"spec"});
      answer = s.sample(spec_text());
    } else if (call == "generate_start") {
      keys({"spec"});
      answer = s.generate_start(spec_text());
    } else if (call == "generate_next") {
      keys({});
      answer = s.generate_next();
    } else if (call == "run_prompt") {
      keys({"prompt"});
      need("prompt");
      answer = s.run_prompt(read_string(v, "prompt", "", 1 << 20));
    } else if (call == "head_spec") {
      keys({"layer", "head"});
      const int layer = whole("layer"), head = whole("head");
      answer = s.head_spec(layer, head);
    } else if (call == "attention_maps") {
      keys({});
      answer = s.attention_maps_json();
    } else if (call == "save") {
      keys({"path"});
      need("path");
      const std::string path = read_string(v, "path", "", 4096);
      const std::string bytes = s.save();
      if (bytes.empty()) throw InputError(s.last_error(), "checkpoint");
      ap::write_checkpoint_file(path, bytes);
      Value r = Value::object();
      r.set("bytes", static_cast<long long>(bytes.size()));
      answer = ok(std::move(r)).dump();
    } else if (call == "tasks") {
      keys({});
      answer = ap::gpt_tasks_json();
    } else if (call == "kernels") {
      keys({"tier"});
      need("tier");
      answer = ap::gpt_set_kernels(read_string(v, "tier", "", 64));
    } else if (call == "memory") {
      keys({"spec"});
      answer = ap::gpt_memory_json(spec_text());
    } else {
      throw InputError("unknown call \"" + ap::json::excerpt(call) +
                           "\": the calls are create, load, info, train, evaluate, sample, generate_start, "
                           "generate_next, run_prompt, head_spec, attention_maps, save, tasks, kernels, memory",
                       "call");
    }
    return Value::object();
  });
  return answer.empty() ? envelope : answer;
}

int cmd_api() {
  ap::GptSession session;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::cout << api_call(session, line) << "\n" << std::flush;
  }
  return 0;
}

// ---------------------------------------------------------------- errors

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

  const ap::TrainConfig dflt;
  // ------------------------------------------------------------ tasks
  bool tasks_json = false;
  CLI::App* tasks = app.add_subcommand("tasks", "the built-in tasks: an example line, what attention learns, the loss floor");
  tasks->add_flag("--json", tasks_json, "print gpt_tasks_json (the wasm module's answer)");

  // ------------------------------------------------------------ train
  TrainArgs ta;
  CLI::App* train = app.add_subcommand("train", "train a new model and save it as a safetensors checkpoint");
  train->add_option("-o,--output", ta.out, "the checkpoint to write (FILE.safetensors)")->required();
  auto* o_task = train->add_option("--task", ta.task,
                                   "a built-in task: copy (default), reverse, sort, induction, sums, grammar (see gpt tasks)");
  auto* o_text = train->add_option("--text", ta.text_file, "train on a UTF-8 text file instead (at most 64 MiB)");
  o_task->excludes(o_text);
  train->add_option("--n-chars", ta.n_chars, "a task's length in characters (default 100000)");
  train->add_option("--preset", ta.preset,
                    "tiny (default: 2 layers, n_embd 64, 4 heads, block_size 64) or small (4, 128, 4, 128)");
  train->add_option("--n-layer", ta.n_layer, "blocks, instead of the preset's");
  train->add_option("--n-head", ta.n_head, "attention heads per block (must divide n_embd)");
  train->add_option("--n-embd", ta.n_embd, "embedding width C");
  train->add_option("--block-size", ta.block_size, "the longest context T");
  train->add_option("--mask", ta.mask, "strict (default: query t sees keys ≤ t) or inclusive (keys < t: exercise 2)");
  train->add_option("--softmax", ta.softmax, "stable (default) or naive (no max subtracted: exercise 3)");
  train->add_option("--steps", ta.steps, "training steps (default " + std::to_string(dflt.steps) + ")");
  train->add_option("--batch-size", ta.batch_size, "sequences per step (default " + std::to_string(dflt.batch_size) + ")");
  train->add_option("--lr", ta.lr, "peak learning rate (default " + ap::format_float(dflt.lr) + ")");
  train->add_option("--min-lr", ta.min_lr, "where the cosine ends (default lr/10, at most 0.0001)");
  train->add_option("--warmup-steps", ta.warmup_steps, "linear warm-up (default steps/10, at most 100)");
  train->add_option("--weight-decay", ta.weight_decay,
                    "AdamW's decay of the matrices (default " + ap::format_float(dflt.weight_decay) + ")");
  train->add_option("--grad-clip", ta.grad_clip,
                    "clip the gradients' global norm to this (default " + ap::format_float(dflt.grad_clip) + "; 0: off)");
  train->add_option("--eval-interval", ta.eval_interval,
                    "steps between validation losses (default " + std::to_string(dflt.eval_interval) + ")");
  train->add_option("--eval-batches", ta.eval_batches,
                    "at most this many validation batches (default " + std::to_string(dflt.eval_batches) + ")");
  train->add_option("--seed", ta.seed, "seeds the weights, the batches and a task's text (default " +
                                           std::to_string(dflt.seed) + ")");
  train->add_option("--checkpoint-interval", ta.checkpoint_interval,
                    "save every N steps (default 500; 0: only at the end)");
  train->add_option("--log", ta.log, "write step,loss,val_loss,lr,grad_norm,tokens_per_s,elapsed_s to a CSV file");
  train->add_flag("-q,--quiet", ta.quiet, "print nothing but errors");
  train->footer(
      "On a terminal a progress bar shows step, loss, validation loss, tokens/s, elapsed and remaining time; "
      "elsewhere a line is printed at every evaluation. Ctrl-C saves a checkpoint of the last completed step, "
      "then stops (gpt resume continues it). A non-finite loss stops training with exit status 3 and writes "
      "nothing: the last checkpoint stays as it was.");

  // ------------------------------------------------------------ resume
  ResumeArgs ra;
  CLI::App* resume = app.add_subcommand("resume", "continue training from a checkpoint, exactly as if never stopped");
  resume->add_option("file", ra.file, "the checkpoint (FILE.safetensors)")->required();
  resume->add_option("--steps", ra.steps, "the run's new total of steps (default: the total it was started with)");
  resume->add_option("--text", ra.text_file, "the text a text run was trained on (checked by its fingerprint)");
  resume->add_option("-o,--output", ra.out, "where to save (default: the checkpoint itself, replaced atomically)");
  resume->add_option("--log", ra.log, "append to (or start) a CSV log");
  resume->add_option("--checkpoint-interval", ra.checkpoint_interval, "save every N steps (default 500; 0: only at the end)");
  resume->add_flag("-q,--quiet", ra.quiet, "print nothing but errors");
  resume->footer("Ctrl-C saves a checkpoint of the last completed step, then stops.");

  // ------------------------------------------------------------ sample
  SampleArgs sa;
  CLI::App* sample = app.add_subcommand("sample", "generate text from a checkpoint, one character at a time (KV cache)");
  sample->add_option("file", sa.file, "the checkpoint")->required();
  sample->add_option("-p,--prompt", sa.prompt, "the text to continue (characters the model knows)")->required();
  sample->add_option("-n,--max-new-tokens", sa.max_new_tokens, "characters to generate (default 200)");
  sample->add_option("-t,--temperature", sa.temperature, "divide the logits by this before sampling (default 1)");
  sample->add_option("-k,--top-k", sa.top_k, "sample among the k most likely characters only (default 0: all)");
  sample->add_flag("-g,--greedy", sa.greedy, "always take the most likely character");
  sample->add_option("--seed", sa.seed, "the sampling seed (default 1)");
  sample->add_flag("--json", sa.json, "print {\"ok\":true,\"text\",\"new_text\",\"tokens\"}");

  // ------------------------------------------------------------ eval
  EvalArgs ea;
  CLI::App* eval = app.add_subcommand("eval", "the validation loss of a checkpoint");
  eval->add_option("file", ea.file, "the checkpoint")->required();
  eval->add_option("--text", ea.text_file, "the text a text run was trained on");
  eval->add_flag("--json", ea.json, "print {\"ok\":true,\"step\",\"val_loss\"}");

  // ------------------------------------------------------------ inspect
  std::string inspect_file;
  bool inspect_json = false;
  CLI::App* inspect = app.add_subcommand("inspect", "a checkpoint's config, vocabulary, step and every tensor's name and shape");
  inspect->add_option("file", inspect_file, "the checkpoint")->required();
  inspect->add_flag("--json", inspect_json, "the same as JSON");

  // ------------------------------------------------------------ attention
  std::string att_file, att_prompt, att_head;
  CLI::App* attention = app.add_subcommand(
      "attention", "every layer's and head's attention weights for a prompt as JSON, or one head's stepper spec");
  attention->add_option("file", att_file, "the checkpoint")->required();
  attention->add_option("-p,--prompt", att_prompt, "the text to run (at most block_size characters)")->required();
  attention->add_option("--head", att_head,
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

  // ------------------------------------------------------------ logits
  std::string lg_file, lg_prompt;
  CLI::App* logits = app.add_subcommand("logits", "the logits at every position of a prompt, as JSON");
  logits->add_option("file", lg_file, "the checkpoint")->required();
  logits->add_option("-p,--prompt", lg_prompt, "the text to run (at most block_size characters)")->required();

  // ------------------------------------------------------------ api
  CLI::App* api = app.add_subcommand(
      "api", "read one JSON call per line on stdin, answer one JSON line each (the wasm module's answers)");
  api->footer(
      "Calls: {\"call\":\"create\",\"spec\":{…}}, {\"call\":\"load\",\"path\":F,\"text_path\":T}, info, "
      "{\"call\":\"train\",\"n\":N}, evaluate, {\"call\":\"sample\",\"spec\":{…}}, generate_start (spec), "
      "generate_next, {\"call\":\"run_prompt\",\"prompt\":P}, {\"call\":\"head_spec\",\"layer\":L,\"head\":H}, "
      "attention_maps, {\"call\":\"save\",\"path\":F}, tasks, {\"call\":\"kernels\",\"tier\":\"reference\"|\"fast\"}. "
      "See docs/gpt.md.");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // The message, then the help of the command being parsed.
    const CLI::App* where = &app;
    for (const CLI::App* s : app.get_subcommands()) where = s;
    std::string what = e.what();
    if (where == &app) {
      // CLI11 reads an unknown command as a stray argument and says only that one is required.
      for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--kernels") { ++i; continue; }
        if (!arg.empty() && arg[0] != '-') {
          what = "unknown command \"" + arg + "\": the commands are tasks, train, resume, sample, eval, inspect, attention, logits, api";
          break;
        }
      }
    }
    std::cerr << "gpt: " << what << "\n\n" << where->help(where == &app ? "" : "gpt");
    return kExitUsage;
  }

  ap::kernels::set_tier(kernels == "reference" ? ap::kernels::Tier::reference : ap::kernels::Tier::fast);
  const CLI::App* sub = app.get_subcommands().front();
  try {
    if (sub == tasks) return cmd_tasks(tasks_json);
    if (sub == train) return cmd_train(ta, train);
    if (sub == resume) return cmd_resume(ra, resume);
    if (sub == sample) return cmd_sample(sa);
    if (sub == eval) return cmd_eval(ea);
    if (sub == inspect) return cmd_inspect(inspect_file, inspect_json);
    if (sub == attention) return cmd_attention(att_file, att_prompt, att_head);
    if (sub == logits) return cmd_logits(lg_file, lg_prompt);
    if (sub == api) return cmd_api();
  } catch (const CliError& e) {
    std::cerr << "gpt: " << e.what() << "\n";
    return e.code;
  } catch (const InputError& e) {
    // The core's message names the field; the option that sets it comes first.
    std::string where = option_for(sub, e.field);
    if (e.field == "text" && sub == train && !ta.text_file.empty()) where = ta.text_file;
    if (e.field == "text" && sub == resume && !ra.text_file.empty()) where = ra.text_file;
    if (e.field == "text" && sub == eval && !ea.text_file.empty()) where = ea.text_file;
    std::cerr << "gpt: " << (where.empty() ? "" : where + ": ") << e.what() << "\n";
    return kExitError;
  } catch (const std::exception& e) {
    std::cerr << "gpt: " << e.what() << "\n";
    return kExitError;
  }
  return kExitUsage;
}
