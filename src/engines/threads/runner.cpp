// runner.cpp — the worker pool, ready and local queues, preemption and
// deadlock detection (runner.hpp).
#include "engines/threads/runner.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "common/machine.hpp"
#include "engines/threads/worker_pool.hpp"

namespace anyp::threads {

Runner::Runner(AgentVms& agents, std::unique_ptr<SchedulePolicy> policy, int workers,
               std::int64_t budget, DeadlockReport deadlock_report)
    : agents_(agents),
      policy_(std::move(policy)),
      workers_(std::max(1, workers)),
      // Polling for work pays only when every worker has a core of its own.
      may_spin_(workers_ > 1 && workers_ <= machine_cores()),
      budget_(budget),
      deadlock_report_(std::move(deadlock_report)),
      done_(static_cast<std::size_t>(agents_.size()), 0) {
  for (std::int64_t a = 0; a < agents_.size(); ++a) ready_.push_back(a);
  ready_size_.store(ready_.size(), std::memory_order_relaxed);
  // Local queues only where a poller can take an agent over (and never
  // under a policy that picks every agent itself).
  if (may_spin_ && !policy_->op_by_op()) local_.resize(static_cast<std::size_t>(workers_));
}

namespace {
std::atomic<bool> recruit_at_start{false};
}  // namespace

bool set_recruit_at_start(bool on) { return recruit_at_start.exchange(on); }
bool recruits_at_start() { return recruit_at_start.load(); }

std::string Runner::run() {
  // One worker, or an op-by-op schedule: nothing to recruit.
  may_recruit_ = workers_ > 1 && !policy_->op_by_op();
  at_start_ = may_recruit_ && recruit_at_start.load();
  calling_thread_ = std::this_thread::get_id();
  PoolJob job([this] { worker(); });
  job_ = &job;
  if (at_start_) {
    // Under the run lock: a helper may start, and read recruited_, at once.
    std::lock_guard<std::mutex> lock(mutex_);
    recruit();
  }
  job.run();
  job_ = nullptr;
  workers_used_ = 1 + most_helpers_;
  return failure_;
}

void Runner::recruit() {
  const int offered = job_->offer(workers_ - 1 - helpers_);
  if (offered == 0) may_recruit_ = false;  // the system refuses threads: go on alone
  helpers_ += offered;
  most_helpers_ = std::max(most_helpers_, helpers_);
  recruited_ = helpers_ > 0;
}

namespace {

// The runner and worker index of the worker running on this thread (so
// a wake knows whose local queue to use).
thread_local const void* current_runner = nullptr;
thread_local int current_worker = -1;

using Clock = std::chrono::steady_clock;
// An idle worker polls this long before it sleeps: longer than a futex
// round trip, short enough that an idle worker soon costs nothing.
constexpr auto kPollFor = std::chrono::microseconds(50);
// An agent in another worker's local queue is taken over after this long:
// the owner usually finishes its slice and runs it sooner, on a warm cache
// (Go's runnext uses 3 µs the same way).
constexpr auto kStealAfter = std::chrono::microseconds(3);
// Recruiting (see runner.hpp). A run is compute-bound once it has shown
// kRecruitAfterElements of tile compute at kRecruitElementsPerInstruction
// or more per instruction: measured on the ladder (docs/performance.md,
// "Workers"), the steps that only move data and signals do 0-40 elements
// per instruction, and run slower on two cores (every notify's and remote
// load's cache line then crosses between them); the kernels whose matmuls
// dominate do 100-1 500. From then on its slices are timed, and the other
// workers join once they have been busy kRecruitAfter: waking a pool
// thread costs the waker about 50 µs and the woken thread starts about
// 100 µs later on the development machine (a virtual one), so a shorter
// run is faster alone.
constexpr std::int64_t kRecruitAfterElements = 256 * 1024;
constexpr std::int64_t kRecruitElementsPerInstruction = 64;
constexpr auto kRecruitAfter = std::chrono::microseconds(500);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

Runner::Poll Runner::poll_for_work() const {
  const auto start = Clock::now();
  auto local_seen = Clock::time_point::max();  // when a local agent was first seen
  for (;;) {
    if (ready_size_.load(std::memory_order_relaxed) > 0 || stopped_.load(std::memory_order_relaxed))
      return Poll::Ready;
    const auto now = Clock::now();
    if (local_size_.load(std::memory_order_relaxed) > 0) {
      if (local_seen == Clock::time_point::max()) local_seen = now;
      if (now - local_seen >= kStealAfter) return Poll::Steal;
    } else {
      local_seen = Clock::time_point::max();
    }
    if (now - start >= kPollFor) return Poll::Nothing;
    for (int i = 0; i < 16; ++i) cpu_relax();
  }
}

std::int64_t Runner::take_local(int worker) {
  std::deque<std::int64_t>& local = local_[static_cast<std::size_t>(worker)].agents;
  const std::int64_t agent = local.front();
  local.pop_front();
  local_size_.store(--local_count_, std::memory_order_relaxed);
  return agent;
}

void Runner::worker() {
  const bool op_by_op = policy_->op_by_op();
  const bool helper = std::this_thread::get_id() != calling_thread_;
  // The calling thread's worker is 0; helpers take 1 ... workers_ - 1 in
  // turn (a helper recruited again after another left may share an index
  // with one still there: the local queues are under the run lock).
  const int me =
      helper ? 1 + next_helper_.fetch_add(1, std::memory_order_relaxed) % (workers_ - 1) : 0;
  const bool has_local = me < static_cast<int>(local_.size());
  current_runner = this;
  current_worker = has_local ? me : -1;
  struct Leave {
    ~Leave() {
      current_runner = nullptr;
      current_worker = -1;
    }
  } leave;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    std::int64_t agent = -1;
    // Ranks this worker woke run here first, on a warm cache.
    if (has_local && !local_[static_cast<std::size_t>(me)].agents.empty()) agent = take_local(me);
    while (agent < 0 && !stop_ && ready_.empty()) {
      if (running_ == 0 && local_count_ == 0) {
        stop_ = true;
        stopped_.store(true, std::memory_order_relaxed);
        if (finished_ < agents_.size()) {
          deadlocked_ = true;
          failure_ = deadlock_report_(done_);
        }
        cv_.notify_all();
        break;
      }
      if (may_spin_) {
        lock.unlock();
        const Poll poll = poll_for_work();
        lock.lock();
        if (poll == Poll::Steal && ready_.empty() && !stop_) {
          for (std::size_t w = 0; w < local_.size() && agent < 0; ++w)
            if (!local_[w].agents.empty()) agent = take_local(static_cast<int>(w));
          if (agent >= 0) break;
        }
        // Re-check under the lock: an agent made ready, or the run stopped,
        // after the last poll would otherwise find this worker asleep with
        // no one left to wake it.
        if (poll != Poll::Nothing || stop_ || !ready_.empty() || local_count_ > 0 || running_ == 0)
          continue;
      }
      // A recruited worker with nothing to do goes back to the pool rather
      // than sleep here to be woken for a short slice (a futex round trip
      // and the rank's data crossing cores, at each wake): the run is
      // signal-bound again. The calling thread's worker, still running an
      // agent (running_ > 0), sees the run to its end; another burst of
      // compute recruits again.
      if (helper && !at_start_) {
        if (--helpers_ == 0) {
          recruited_ = false;
          shown_instructions_ = shown_elements_ = 0;
          shown_busy_ = {};
        }
        return;
      }
      ++idle_;
      cv_.wait(lock);
      --idle_;
    }
    if (stop_) return;
    if (agent < 0) {
      agent = policy_->pick(ready_);
      ready_size_.store(ready_.size(), std::memory_order_relaxed);
      if (agent < 0) {  // the policy cannot go on (a scripted schedule)
        failure_ = policy_->failure();
        stop_ = true;
        stopped_.store(true, std::memory_order_relaxed);
        cv_.notify_all();
        return;
      }
    }
    ++running_;
    runtime::RankVm& vm = agents_.vm(agent);
    const std::int64_t instructions_before = vm.instructions();
    const std::int64_t elements_before = vm.compute_elements();
    // Until recruited, the slice also ends where the run will have shown
    // enough compute, then every kRecruitAfterElements more, so that a long
    // slice is not run alone; a compute-bound run's slices are timed.
    const bool considering = may_recruit_ && !recruited_;
    const std::int64_t to_show = kRecruitAfterElements - shown_elements_;
    vm.set_compute_mark(considering
                            ? elements_before + (to_show > 0 ? to_show : kRecruitAfterElements)
                            : std::numeric_limits<std::int64_t>::max());
    const bool timed = considering && compute_bound();
    lock.unlock();
    const auto slice_start = timed ? Clock::now() : Clock::time_point{};
    const runtime::RankVm::Outcome outcome = vm.run(budget_, op_by_op);
    const auto slice_time = timed ? Clock::now() - slice_start : Clock::duration{};
    lock.lock();
    --running_;
    if (may_recruit_ && !recruited_) {
      consider_recruiting(vm.instructions() - instructions_before,
                          vm.compute_elements() - elements_before, slice_time);
    }
    policy_->after_slice(agent, outcome == runtime::RankVm::Outcome::Parked);
    auto stop_run = [&] {
      stop_ = true;
      stopped_.store(true, std::memory_order_relaxed);
      cv_.notify_all();
    };
    switch (outcome) {
      case runtime::RankVm::Outcome::Done:
        done_[agent] = 1;
        agents_.finish(agent);
        if (++finished_ == agents_.size()) stop_run();
        break;
      case runtime::RankVm::Outcome::Yield:
        ++preemptions_;
        ready_.push_back(agent);
        ready_size_.store(ready_.size(), std::memory_order_relaxed);
        break;
      case runtime::RankVm::Outcome::Parked:
        ++parks_;
        break;
      case runtime::RankVm::Outcome::Failed:
        if (failure_.empty()) failure_ = vm.error();
        stop_run();
        break;
    }
    if (idle_ > 0 && (!ready_.empty() || (running_ == 0 && !stop_))) cv_.notify_one();
  }
}

bool Runner::compute_bound() const {
  return shown_elements_ >= kRecruitAfterElements &&
         shown_elements_ >= kRecruitElementsPerInstruction * shown_instructions_;
}

void Runner::consider_recruiting(std::int64_t instructions, std::int64_t compute_elements,
                                 std::chrono::steady_clock::duration busy) {
  shown_instructions_ += instructions;
  shown_elements_ += compute_elements;
  shown_busy_ += busy;
  if (ready_.empty()) return;  // no one to run beside this worker
  if (compute_bound() && shown_busy_ >= kRecruitAfter) recruit();
}

void Runner::make_ready(std::int64_t agent) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Woken by an agent running on one of this run's workers, while no worker
  // sleeps: onto that worker's local queue (the others are busy or
  // polling, and a poller takes the oldest over after kStealAfter).
  if (current_runner == this && current_worker >= 0 && idle_ == 0 && recruited_) {
    local_[static_cast<std::size_t>(current_worker)].agents.push_back(agent);
    local_size_.store(++local_count_, std::memory_order_relaxed);
    return;
  }
  ready_.push_back(agent);
  ready_size_.store(ready_.size(), std::memory_order_relaxed);
  if (idle_ > 0) cv_.notify_one();
}

}  // namespace anyp::threads
