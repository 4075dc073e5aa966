// progress.h — what a training run shows and records while it runs: Ctrl-C caught and
// remembered, the progress lines (and on a terminal a live bar), and the CSV log.
//
// Signals: while a SignalGuard lives, the first SIGINT or SIGTERM is only remembered
// (pending_signal()), so the training loop can save the last completed step and exit 128 + the
// signal. A second one, half a second or more after the first, ends the program at once (the
// checkpoint write is atomic, so the old file stays whole); repeats closer than that are the same
// Ctrl-C delivered twice (`timeout`, and some shells, signal both the process and its group).
#pragma once

#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

namespace ap::gpt_cli {

// ---------------------------------------------------------------- Ctrl-C

// The first signal caught since the program started (SIGINT or SIGTERM), or 0.
int pending_signal();

// Catches SIGINT and SIGTERM for its lifetime; the handlers before it come back after it.
struct SignalGuard {
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;
  struct sigaction old_int {}, old_term {};
};

// ---------------------------------------------------------------- progress

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0);

// What one line of progress reports.
struct Progress {
  int64_t step = 0, total = 0;
  float loss = NAN, val_loss = -1.0f, lr = NAN, grad_norm = NAN;
  double tokens_per_s = 0, elapsed = 0, remaining = NAN;
  bool evaluated = false;  // val_loss was measured at this step (else it is the last one measured)
};

// On a terminal: one line redrawn in place (at most 10 times a second), with a line kept above it
// at every evaluation. Elsewhere (a pipe, a file, CI): only the kept lines. quiet: nothing.
class Display {
 public:
  explicit Display(bool quiet);
  void message(const std::string& line);
  void line(const Progress& p);  // a kept line: at evaluations, the first step and the last
  void bar(const Progress& p);   // the live bar (terminal only)
  void finish();                 // clears the bar

 private:
  int width() const;
  void clear_bar();
  void draw(const Progress& p, bool force);

  bool quiet_, tty_, unicode_;
  bool has_bar_ = false, drawn_ = false;
  Progress last_;
  Clock::time_point last_draw_;
};

// step,loss,val_loss,lr,grad_norm,tokens_per_s,elapsed_s — one row per step (step = steps done
// after it, from 1), val_loss empty except at evaluations; row 0 of a new run holds the
// validation loss of the initial weights. Floats with float32's shortest digits, so a row reads
// back to the bits the trainer saw. An empty path writes nothing; append continues a log that has
// rows. Throws CliError if the file cannot be written.
class CsvLog {
 public:
  CsvLog(const std::string& path, bool append);
  // A null pointer or a negative val_loss leaves the cell empty.
  void row(int64_t step, const float* loss, float val_loss, const float* lr, const float* grad_norm,
           double tokens_per_s, double elapsed);

 private:
  std::string path_;
  std::ofstream f_;
};

}  // namespace ap::gpt_cli
