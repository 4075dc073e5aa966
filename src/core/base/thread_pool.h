// thread_pool.h — a small persistent pool of threads for data-parallel training (train.h's
// threads): run(f) calls f(0) … f(n−1) at once, f(0) on the calling thread, and returns when all
// have finished. Threads are started once and wait between runs; a run allocates nothing (the
// task is a function pointer and a context, no std::function).
//
// An exception thrown by f(i) is caught on its thread and rethrown by run() on the caller, the
// lowest i first, after every f has returned.
//
// Waiting: a thread between runs, and the caller for the others to finish, first spins a short
// while (kSpin reads of an atomic, tens of microseconds; in wasm, which has no pause
// instruction, kSpinMs = 1 ms by the clock) and only then sleeps on a condition variable
// (Atomics.wait in wasm): a prompt's forward runs the pool some 70 times, for parts of tens of
// microseconds to milliseconds, and a sleeping thread's wake-up cost about as much as the
// smaller parts.
//
// Limits: at most kMaxThreads. In the plain wasm build (no pthreads) the pool has one thread, the
// caller: hardware_threads() is 1 and a pool of more throws InputError (field "threads"); the
// page runs several Web Workers instead (web/train/worker.js). The threaded wasm build
// (gpt_core_mt, -pthread: a cross-origin isolated page) runs the pool on Emscripten's pthreads,
// whose workers are started with the module (web/gpt.js loadGpt({threads})) so a pool never
// waits for one to load.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ap {

constexpr int kMaxThreads = 64;

// The cores there are (std::thread::hardware_concurrency, at least 1, at most kMaxThreads); 1 in wasm.
int hardware_threads();

class ThreadPool {
 public:
  // n threads in all (the caller and n − 1 more). Throws InputError (field "threads") outside
  // [1, kMaxThreads], or above 1 where threads cannot run (wasm).
  explicit ThreadPool(int n);
  // The errors ThreadPool(n) throws for n, without starting a thread (a count checked before any
  // pool is made: a thread started only to be joined again costs a pthread the module may not have).
  static void check(int n);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_; }
  // Calls f(i) for every i in [0, size()), in parallel; f(0) on this thread.
  template <class F>
  void run(F& f) {
    run_raw([](void* ctx, int i) { (*static_cast<F*>(ctx))(i); }, &f);
  }

 private:
  void run_raw(void (*fn)(void*, int), void* ctx);
  void work(int i);

  int n_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable start_, done_;
  std::atomic<uint64_t> generation_{0};  // a new run: changed under mu_ (a sleeper sees it)
  std::atomic<int> pending_{0};          // threads other than the caller still in this run
  bool stop_ = false;                    // under mu_
  void (*fn_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  std::vector<std::exception_ptr> errors_;
};

}  // namespace ap
