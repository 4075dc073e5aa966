// thread_pool.cpp — the persistent pool (see thread_pool.h).
#include "core/base/thread_pool.h"

#include <string>

#include "core/base/input_error.h"

#if defined(__EMSCRIPTEN__)
#include <emscripten.h>  // emscripten_get_now
#endif

namespace ap {

namespace {

#if defined(__EMSCRIPTEN__)
// In wasm there is no pause instruction: a native spin's 4,096 reads took a few microseconds,
// less than the serial steps between a forward's parallel parts (a LayerNorm, a residual add), so
// the pool's thread slept (Atomics.wait) before nearly every one of a prompt's ~73 runs and each
// run started with a wake-up. There the spin is timed instead: kSpinMs of the clock.
constexpr double kSpinMs = 1.0;

// Spins while !ready(), kSpinMs at most: ready()'s last value.
template <class R>
bool spin(R ready) {
  const double until = emscripten_get_now() + kSpinMs;
  for (;;) {
    for (int s = 0; s < 256; ++s)
      if (ready()) return true;
    if (emscripten_get_now() > until) return ready();
  }
}
#else
// Reads of an atomic before a waiting thread sleeps: with the pause below about 30–100 µs.
constexpr int kSpin = 1 << 12;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins while !ready(), kSpin pauses at most: ready()'s last value.
template <class R>
bool spin(R ready) {
  for (int s = 0; s < kSpin; ++s) {
    if (ready()) return true;
    cpu_relax();
  }
  return ready();
}
#endif

}  // namespace

int hardware_threads() {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  return 1;
#else
  const unsigned n = std::thread::hardware_concurrency();
  return n < 1 ? 1 : n > unsigned(kMaxThreads) ? kMaxThreads : static_cast<int>(n);
#endif
}

void ThreadPool::check(int n) {
  if (n < 1 || n > kMaxThreads)
    throw InputError("threads is " + std::to_string(n) + ": it must be between 1 and " + std::to_string(kMaxThreads),
                     "threads");
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  if (n > 1)
    throw InputError("threads is " + std::to_string(n) +
                         ": this build runs on one thread (in the page, several workers share the batch instead)",
                     "threads");
#endif
}

ThreadPool::ThreadPool(int n) : n_(n), errors_(static_cast<size_t>(n > 0 ? n : 1)) {
  check(n);
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
  threads_.reserve(static_cast<size_t>(n - 1));
  for (int i = 1; i < n; ++i) threads_.emplace_back([this, i] { work(i); });
#endif
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::work(int i) {
  uint64_t seen = 0;
  for (;;) {
    if (!spin([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
      std::unique_lock<std::mutex> lock(mu_);
      start_.wait(lock, [&] { return stop_ || generation_.load(std::memory_order_acquire) != seen; });
      if (stop_) return;
    }
    seen = generation_.load(std::memory_order_acquire);
    try {
      fn_(ctx_, i);
    } catch (...) {
      errors_[static_cast<size_t>(i)] = std::current_exception();
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mu_);  // the caller checks pending_ under mu_ before it sleeps
      done_.notify_one();
    }
  }
}

void ThreadPool::run_raw(void (*fn)(void*, int), void* ctx) {
  for (std::exception_ptr& e : errors_) e = nullptr;
  if (n_ > 1) {
    fn_ = fn;
    ctx_ = ctx;
    pending_.store(n_ - 1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      generation_.fetch_add(1, std::memory_order_release);  // publishes fn_, ctx_, pending_
    }
    start_.notify_all();
  }
  try {
    fn(ctx, 0);
  } catch (...) {
    errors_[0] = std::current_exception();
  }
  if (n_ > 1) {
    if (!spin([&] { return pending_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(mu_);
      done_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
    }
  }
  for (const std::exception_ptr& e : errors_)
    if (e) std::rethrow_exception(e);
}

}  // namespace ap
