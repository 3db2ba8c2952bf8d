// session.hpp — a compiled program prepared for many runs (PyPTO's
// compiled.prepare()): one engine kept for all of them, window memory that
// may persist from one run to the next (and be reset explicitly), tensors
// the session owns and every run reads and writes in place (resident
// tensors: weights staged once), and asynchronous submits with a handle to
// wait on.
//
//   anyp::Session s = compiled.prepare({.persistent_windows = true});
//   const anyp::HostTensor w = s.resident(weights);   // copied once
//   anyp::RunHandle h = s.submit({x, w, y});          // returns at once
//   prepare_next_batch();                              // overlaps the run
//   anyp::RunStats stats = h.wait();                   // rethrows its error
//
// Runs of one session execute one at a time, in submission order (they
// share the windows); at most kMaxInFlight are queued or running, and a
// further submit blocks until the oldest one ends. A submitted run holds
// its tensor arguments (a HostTensor shares its storage) until it ends —
// but not the memory under a HostTensor::view, which the caller keeps alive
// until the handle is ready; writing an argument of a run in flight is the
// caller's race. On the MPI
// engine, whose processes run MPI from one thread, a submit runs before it
// returns (its handle is ready at once), and making, resetting and ending
// a session is collective: every process does it, in the same order.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "anyp/compiled_program.hpp"

namespace anyp {

struct SessionOptions {
  // Windows keep their contents from one run to the next (PyPTO's
  // persistent=True). Off: every run starts from zeroed windows, as
  // CompiledProgram::run does.
  bool persistent_windows = false;
  // With persistent windows: zero them before every run but the first
  // (PyPTO's reset_persistent_windows, default true). false: a run starts
  // from what the last one left, so the program must leave its signals at
  // zero (every builtin collective does) or count epochs.
  bool reset_windows = true;
};

namespace detail {
struct SubmittedRun;
}

// A submitted run: wait() blocks until it ends and returns its RunStats, or
// rethrows what it threw (RunError, DeadlockError, RaceError, ...).
class RunHandle {
 public:
  RunHandle() = default;
  RunStats wait() const;
  // True once the run has ended (wait() would not block).
  bool ready() const;
  bool valid() const { return run_ != nullptr; }

 private:
  friend class Session;
  explicit RunHandle(std::shared_ptr<detail::SubmittedRun> run) : run_(std::move(run)) {}
  std::shared_ptr<detail::SubmittedRun> run_;
};

class Session {
 public:
  static constexpr std::size_t kMaxInFlight = 2;

  Session(const CompiledProgram& program, const SessionOptions& options);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  // Waits for every submitted run.
  ~Session();

  // A tensor of the session: a copy of `init` made now, kept until the
  // session ends. Pass it in place of a host tensor argument: runs read and
  // write it in place (no copy), and what a run writes stays for the next.
  HostTensor resident(const HostTensor& init);
  // The tensors resident() made, in order.
  const std::vector<HostTensor>& resident_tensors() const { return resident_; }

  // Runs once, after every run submitted before, and returns its stats.
  RunStats run(const std::vector<ArgRef>& args);
  template <class... A>
  RunStats operator()(A&&... args) {
    return run({ArgRef(std::forward<A>(args))...});
  }
  // Queues a run and returns at once (blocks while kMaxInFlight are queued).
  RunHandle submit(const std::vector<ArgRef>& args);
  // Zeroes the persistent windows before the next run (after every run
  // submitted before has ended).
  void reset_windows();

  // Runs that ended, successfully or not.
  std::int64_t runs_done() const;
  const SessionOptions& options() const { return options_; }
  const CompiledProgram& program() const { return program_; }

 private:
  struct Job;
  void worker_loop();
  // Runs one job on the calling thread, then finish() counts it (and takes
  // it off the queue) before its handle is released.
  void execute(Job& job);
  // Resets the windows if the options ask, then runs (the running thread only).
  RunStats run_now(const std::vector<ArgRef>& args);
  void finish(Job& job, bool queued);
  void enqueue(std::shared_ptr<Job> job);

  CompiledProgram program_;
  SessionOptions options_;
  std::unique_ptr<runtime::Engine> engine_;
  std::unique_ptr<runtime::PersistentWindows> windows_;
  bool asynchronous_ = false;  // a worker thread runs the jobs (threads engine)
  std::vector<HostTensor> resident_;
  bool ran_once_ = false;  // the windows have held a run (touched by the running thread only)

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Job>> queue_;  // queued or running, oldest first
  std::int64_t done_ = 0;
  bool stopping_ = false;
  bool caller_running_ = false;  // run() executes on its caller: the worker waits
  int blocked_ = 0;              // callers waiting in run() or submit()
  std::thread worker_;
};

}  // namespace anyp
