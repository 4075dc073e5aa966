// thread_pool.cpp — the persistent pool (see thread_pool.h).
#include "core/base/thread_pool.h"

#include <string>

#include "core/base/input_error.h"

namespace ap {

int hardware_threads() {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  return 1;
#else
  const unsigned n = std::thread::hardware_concurrency();
  return n < 1 ? 1 : n > unsigned(kMaxThreads) ? kMaxThreads : static_cast<int>(n);
#endif
}

ThreadPool::ThreadPool(int n) : n_(n), errors_(static_cast<size_t>(n > 0 ? n : 1)) {
  if (n < 1 || n > kMaxThreads)
    throw InputError("threads is " + std::to_string(n) + ": it must be between 1 and " + std::to_string(kMaxThreads),
                     "threads");
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  if (n > 1)
    throw InputError("threads is " + std::to_string(n) +
                         ": this build runs on one thread (in the page, several workers share the batch instead)",
                     "threads");
#else
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
    void (*fn)(void*, int);
    void* ctx;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      fn = fn_;
      ctx = ctx_;
    }
    try {
      fn(ctx, i);
    } catch (...) {
      errors_[static_cast<size_t>(i)] = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (--pending_ == 0) done_.notify_one();
  }
}

void ThreadPool::run_raw(void (*fn)(void*, int), void* ctx) {
  for (std::exception_ptr& e : errors_) e = nullptr;
  if (n_ > 1) {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = fn;
    ctx_ = ctx;
    pending_ = n_ - 1;
    ++generation_;
  }
  start_.notify_all();
  try {
    fn(ctx, 0);
  } catch (...) {
    errors_[0] = std::current_exception();
  }
  if (n_ > 1) {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }
  for (const std::exception_ptr& e : errors_)
    if (e) std::rethrow_exception(e);
}

}  // namespace ap
