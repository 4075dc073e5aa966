// progress.cpp — Ctrl-C, the progress display and the CSV log of a training run (see progress.h).
#include "cli/gpt/progress.h"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>

#include "core/base/number_text.h"
#include "cli/gpt/common.h"

namespace ap::gpt_cli {

// ---------------------------------------------------------------- Ctrl-C

namespace {

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

}  // namespace

int pending_signal() { return g_signal; }

SignalGuard::SignalGuard() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
}

SignalGuard::~SignalGuard() {
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
}

// ---------------------------------------------------------------- formatting

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

namespace {

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

int digits(int64_t n) { return static_cast<int>(std::to_string(n).size()); }

std::string pad(const std::string& s, int w) {
  return s.size() >= static_cast<size_t>(w) ? s : std::string(static_cast<size_t>(w) - s.size(), ' ') + s;
}

}  // namespace

// ---------------------------------------------------------------- Display

Display::Display(bool quiet) : quiet_(quiet), tty_(!quiet && ::isatty(STDOUT_FILENO)), unicode_(utf8_locale()) {}

void Display::message(const std::string& line) {
  if (quiet_) return;
  clear_bar();
  std::cout << line << "\n" << std::flush;
  if (tty_ && has_bar_) draw(last_, true);
}

void Display::line(const Progress& p) {
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

void Display::bar(const Progress& p) {
  if (!tty_) return;
  last_ = p;
  has_bar_ = true;
  draw(p, false);
}

void Display::finish() {
  if (tty_ && has_bar_) clear_bar();
  has_bar_ = false;
}

int Display::width() const {
  struct winsize ws {};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20) return ws.ws_col;
  return 80;
}

void Display::clear_bar() {
  if (tty_ && has_bar_) std::cout << "\r\x1b[K" << std::flush;
}

void Display::draw(const Progress& p, bool force) {
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

// ---------------------------------------------------------------- CsvLog

CsvLog::CsvLog(const std::string& path, bool append) : path_(path) {
  if (path.empty()) return;
  check_writable(path, "the log");
  struct stat st {};
  const bool has_rows = append && ::stat(path.c_str(), &st) == 0 && st.st_size > 0;
  f_.open(path, has_rows ? std::ios::app : std::ios::trunc);
  if (!f_) throw CliError("cannot write the log " + path + ": " + std::strerror(errno));
  if (!has_rows) f_ << "step,loss,val_loss,lr,grad_norm,tokens_per_s,elapsed_s\n";
}

void CsvLog::row(int64_t step, const float* loss, float val_loss, const float* lr, const float* grad_norm,
                 double tokens_per_s, double elapsed) {
  if (!f_.is_open()) return;
  f_ << step << ',' << (loss ? format_float(*loss) : "") << ',' << (val_loss >= 0 ? format_float(val_loss) : "")
     << ',' << (lr ? format_float(*lr) : "") << ',' << (grad_norm ? format_float(*grad_norm) : "") << ','
     << (tokens_per_s > 0 ? fixed(tokens_per_s, 0) : "") << ',' << fixed(elapsed, 3) << '\n';
  f_.flush();
  if (!f_) throw CliError("cannot write the log " + path_ + ": " + std::strerror(errno));
}

}  // namespace ap::gpt_cli
