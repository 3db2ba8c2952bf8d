// session.cpp — Session: one engine and (optionally) one set of persistent
// windows for many runs, a FIFO of submitted runs executed by one worker
// thread (threads engine) or on the caller (MPI engine), and the handles
// that wait for them.
#include "anyp/session.hpp"

#include <cxxabi.h>

#include "anyp/engines.hpp"
#include "anyp/errors.hpp"
#include "compiler/plan.hpp"
#include "engines/engine_registry.hpp"
#include "runtime/engine.hpp"

namespace anyp {

namespace detail {

// What a handle waits on.
struct SubmittedRun {
  std::mutex mutex;
  std::condition_variable ended;
  bool done = false;
  std::optional<RunStats> stats;
  std::exception_ptr error;
};

}  // namespace detail

// One queued operation: a run (with the tensors it holds) or a reset.
struct Session::Job {
  bool reset = false;
  std::vector<HostTensor> tensors;  // the run's tensor arguments, held until it ends
  std::vector<ArgRef> args;         // point into `tensors`
  std::shared_ptr<detail::SubmittedRun> result = std::make_shared<detail::SubmittedRun>();
};

RunStats RunHandle::wait() const {
  if (!run_) throw Error("RunHandle::wait: the handle has no run (default-constructed)");
  std::unique_lock<std::mutex> lock(run_->mutex);
  run_->ended.wait(lock, [&] { return run_->done; });
  if (run_->error) std::rethrow_exception(run_->error);
  return *run_->stats;
}

bool RunHandle::ready() const {
  if (!run_) return false;
  std::lock_guard<std::mutex> lock(run_->mutex);
  return run_->done;
}

Session::Session(const CompiledProgram& program, const SessionOptions& options)
    : program_(program), options_(options) {
  engine_ = engines::make_engine(program_.config_.engine);
  if (!engine_) throw ConfigError(engines::unavailable_message(program_.config_.engine));
  const runtime::Executable& exec = program_.plan_->exec;
  if (const std::string why = engine_->check(exec); !why.empty()) throw ConfigError(why);
  if (options_.persistent_windows) windows_ = engine_->make_persistent_windows(exec);
  // An engine without async submits (MPI runs from the thread that
  // initialised it) runs each submit on the caller.
  const EngineTraits* traits = engine_traits(program_.config_.engine);
  asynchronous_ = traits != nullptr && traits->async_submit;
  if (asynchronous_) worker_ = std::thread([this] { worker_loop(); });
}

Session::~Session() {
  if (!asynchronous_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
  // A submit blocked on a full queue wakes to stopping_ and throws; it must
  // be out of the mutex and the condition variable before they are destroyed.
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return blocked_ == 0; });
}

HostTensor Session::resident(const HostTensor& init) {
  if (!init.defined()) throw Error("Session::resident: the initial tensor is not defined");
  resident_.push_back(init.clone());
  return resident_.back();
}

RunStats Session::run_now(const std::vector<ArgRef>& args) {
  if (windows_ && options_.reset_windows && ran_once_) windows_->reset();
  ran_once_ = true;
  return program_.run_with(*engine_, windows_.get(), args);
}

void Session::execute(Job& job) {
  try {
    if (job.reset) {
      if (windows_) windows_->reset();
      job.result->stats = RunStats{};
    } else {
      job.result->stats = run_now(job.args);
    }
  } catch (const abi::__forced_unwind&) {
    throw;  // the thread is ending (pthread_exit), not the run failing
  } catch (...) {
    job.result->error = std::current_exception();
  }
}

void Session::finish(Job& job, bool queued) {
  // Counted, then the handle done, then the slot freed: a waiter on the
  // handle sees the run counted, and a submit that the free slot lets return
  // finds the oldest run ready (the kMaxInFlight bound).
  if (!job.reset) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++done_;
  }
  {
    std::lock_guard<std::mutex> lock(job.result->mutex);
    job.result->done = true;
  }
  job.result->ended.notify_all();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queued) queue_.pop_front();
  }
  changed_.notify_all();
}

void Session::worker_loop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return (stopping_ || !queue_.empty()) && !caller_running_; });
      if (queue_.empty()) return;  // stopping, and every run has ended
      job = queue_.front();        // stays queued (in flight) while it runs
    }
    execute(*job);
    finish(*job, true);
  }
}

void Session::enqueue(std::shared_ptr<Job> job) {
  if (!asynchronous_) {
    execute(*job);
    finish(*job, false);
    return;
  }
  {
    std::unique_lock<std::mutex> lock(mutex_);
    ++blocked_;
    changed_.wait(lock, [&] { return queue_.size() < kMaxInFlight || stopping_; });
    --blocked_;
    if (stopping_) {
      changed_.notify_all();  // the destructor waits for blocked submitters to leave
      throw Error("Session::submit: the session is being destroyed");
    }
    queue_.push_back(std::move(job));
  }
  // (A run() on another thread holds the worker off until it ends.)
  changed_.notify_all();
}

RunHandle Session::submit(const std::vector<ArgRef>& args) {
  auto job = std::make_shared<Job>();
  job->tensors.reserve(args.size());  // `args` points into it: no reallocation
  for (const ArgRef& a : args) {
    if (a.is_tensor()) {
      job->tensors.push_back(a.tensor());  // shares the storage
      job->args.emplace_back(job->tensors.back());
    } else if (a.is_int()) {
      job->args.emplace_back(a.int_value());
    } else {
      job->args.emplace_back(a.float_value());
    }
  }
  RunHandle handle(job->result);
  enqueue(std::move(job));
  return handle;
}

RunStats Session::run(const std::vector<ArgRef>& args) {
  if (!asynchronous_) return submit(args).wait();
  // After the runs submitted before it, on the calling thread: no hand-off
  // to the worker and back (the worker holds off while it runs).
  {
    std::unique_lock<std::mutex> lock(mutex_);
    ++blocked_;
    changed_.wait(lock, [&] { return queue_.empty() && !caller_running_; });
    --blocked_;
    caller_running_ = true;
  }
  auto ended = [this] {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      caller_running_ = false;
      ++done_;
      // Only a queued run or a blocked caller waits for this (waking the
      // idle worker for nothing costs a context switch per run).
      wake = !queue_.empty() || blocked_ > 0;
    }
    if (wake) changed_.notify_all();
  };
  try {
    RunStats stats = run_now(args);
    ended();
    return stats;
  } catch (...) {
    ended();
    throw;
  }
}

void Session::reset_windows() {
  auto job = std::make_shared<Job>();
  job->reset = true;
  RunHandle handle(job->result);
  enqueue(std::move(job));
  handle.wait();
}

std::int64_t Session::runs_done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

Session CompiledProgram::prepare(const SessionOptions& options) const {
  return Session(*this, options);
}
Session CompiledProgram::prepare() const { return Session(*this, SessionOptions{}); }

}  // namespace anyp
