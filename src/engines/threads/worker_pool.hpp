// worker_pool.hpp — the threads engine's worker threads, kept for the whole
// process: a run borrows pool threads (its calling thread is the first
// worker) instead of starting and joining threads every time, which cost
// more than a whole small run (docs/performance.md, "fixed cost").
//
// Threads are started on demand (two runs at once from two user threads
// each get their own) and sleep on a condition variable between runs; they
// are never polled. The pool lives until the process exits.
#pragma once

#include <condition_variable>
#include <functional>

namespace anyp::threads {

// One run's share of the pool. run() calls task() on the calling thread;
// while it runs, offer(n) (from any thread, task() included) asks n more
// pool threads to call task() too. run() returns when the calling thread's
// call and every pool thread's call that started have returned; pool
// threads that had not started it by then skip it. task() must therefore
// be work that any number of threads share and that is done when one call
// returns (the runner's worker loop).
class PoolJob {
 public:
  explicit PoolJob(std::function<void()> task) : task_(std::move(task)) {}
  PoolJob(const PoolJob&) = delete;
  PoolJob& operator=(const PoolJob&) = delete;

  // Offers task() to `extra` more pool threads; returns how many were
  // offered (fewer when the system refuses a new thread).
  int offer(int extra);
  // Runs task() here, then waits as above. Returns 1 + the pool threads
  // offered it (whether or not they started before it was done).
  int run();

 private:
  friend class WorkerPool;
  std::function<void()> task_;
  int offered_ = 0;     // under the pool's lock
  int unfinished_ = 0;  // offered and not returned (or withdrawn)
  std::condition_variable done_;
};

}  // namespace anyp::threads
