// worker_pool.hpp — the threads engine's worker threads, kept for the whole
// process: a run borrows workers - 1 of them (its calling thread is the
// first worker) instead of starting and joining threads every time, which
// cost more than a whole small run (docs/performance.md, "fixed cost").
//
// Threads are started on demand (two runs at once from two user threads
// each get their own) and sleep on a condition variable between runs; they
// are never polled. The pool lives until the process exits.
#pragma once

#include <cstddef>
#include <functional>

namespace anyp::threads {

// Runs task() on the calling thread and offers it to `extra` pool threads;
// returns when the calling thread's call and every pool thread's call that
// started have returned. Pool threads that had not started it when the
// calling thread's call returned skip it: task() must be work that any
// number of threads share and that is done when one call returns (the
// runner's worker loop). When the system refuses a new thread, fewer
// pool threads are offered it. Returns 1 + the pool threads offered it.
int run_on_workers(int extra, const std::function<void()>& task);

}  // namespace anyp::threads
