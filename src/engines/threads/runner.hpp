// runner.hpp — runs the agents' VMs (one per rank, or per block of a rank)
// on a small pool of worker threads (worker_pool.hpp): the ready queue, the
// workers' local queues, the policy that picks who runs and preemption.
// Signals live in the fabric's SignalTable (signal_table.hpp), which hands
// the runner an agent whose wait now holds through make_ready(agent); the
// runner knows nothing of cells.
//
// The run lock guards only the ready queues and the run's state. Lock
// order: a signal stripe, then the run lock (make_ready is called with a
// stripe held or not), never the reverse.
//
// An agent that exhausts its instruction budget is preempted to the back of
// the ready queue; the policy (schedule_policy.hpp) picks who runs.
//
// A run allowed two or more workers starts on one (the calling thread); the
// others are recruited from the pool only once the ranks have shown work
// worth sharing: enough tile compute (RankVm::compute_elements), enough of
// it per VM instruction, and then enough time in such slices, with another
// agent ready. A run that mostly moves data and signals stays on one
// worker, where a hand-off costs no cross-core traffic, and so does a
// short one (waking a thread costs more than it would share); a long
// compute-bound one gets every worker (docs/performance.md, "Workers"). A
// recruited worker that finds nothing to run for its polling time goes
// back to the pool (the run is signal-bound again); the next burst of
// compute recruits again.
//
// An idle worker polls the ready queue's size briefly before it sleeps
// (only when there are no more workers than cores), so a hand-off between
// two workers costs no futex round trip; parked agents are never polled.
// With polling workers, once recruited, an agent woken by a running agent
// goes to that worker's local queue and runs there next, on a warm cache,
// unless a poller takes it over after a few microseconds (the ranks' data
// would otherwise cross between the cores at every wake of a notify-bound
// kernel). When no agent
// is ready or running and some agent is unfinished, the run stops at once:
// a deadlock, reported by the failure callback (the signal table's report
// of every parked wait).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engines/threads/agent_vms.hpp"
#include "engines/threads/schedule_policy.hpp"
#include "engines/threads/signal_table.hpp"
#include "engines/threads/worker_pool.hpp"
#include "runtime/rank_vm.hpp"

namespace anyp::threads {

// Process-wide, off by default: when on, every run recruits its other
// workers before its first slice (the rule before the adaptive one). The
// TSan stage turns it on for the runtime tests, so that signal-bound
// programs still run on two workers at once under it
// (tests/support/recruit_at_start.cpp). Returns the previous setting.
bool set_recruit_at_start(bool on);
bool recruits_at_start();

class Runner final : public ReadyQueue {
 public:
  // The deadlock report, given which agents finished (per agent).
  using DeadlockReport = std::function<std::string(const std::vector<char>& done)>;

  // `agents`: the VMs, one per agent (Executable::agents: block * world +
  // rank), made at an agent's first slice and freed when it finishes.
  Runner(AgentVms& agents, std::unique_ptr<SchedulePolicy> policy, int workers, std::int64_t budget,
         DeadlockReport deadlock_report);

  // Runs every agent to completion. Returns "" or the failure text (an
  // agent's run-time error or the deadlock report).
  std::string run();
  bool deadlocked() const { return deadlocked_; }
  std::int64_t parks() const { return parks_; }
  std::int64_t preemptions() const { return preemptions_; }
  std::int64_t steps() const { return policy_->steps(); }
  int workers_used() const { return workers_used_; }

  // Takes the run lock: `agent`, parked until now, may run again.
  void make_ready(std::int64_t agent) override;

 private:
  void worker();
  // Polls briefly (run lock not held): Ready when an agent is ready or the
  // run stopped, Steal when agents have sat in workers' local queues for
  // kStealAfter, Nothing after kPollFor.
  enum class Poll { Ready, Steal, Nothing };
  Poll poll_for_work() const;
  // Under the run lock: the oldest agent of `worker`'s local queue, removed.
  std::int64_t take_local(int worker);

  // Under the run lock, after a slice run while no worker was recruited
  // (its instructions, compute elements and, once the run is compute-bound,
  // its wall time): recruits the others when the run has shown enough.
  void consider_recruiting(std::int64_t instructions, std::int64_t compute_elements,
                           std::chrono::steady_clock::duration busy);
  // Under the run lock: the slices since the last recruit showed enough
  // tile compute, and enough per instruction.
  bool compute_bound() const;
  // Under the run lock: offers the pool threads the run may still have.
  void recruit();

  AgentVms& agents_;
  std::unique_ptr<SchedulePolicy> policy_;
  int workers_;
  int workers_used_ = 1;
  PoolJob* job_ = nullptr;  // this run's share of the pool, while run() runs
  bool may_spin_;
  std::int64_t budget_;
  DeadlockReport deadlock_report_;

  // The run lock and what it guards.
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::int64_t> ready_;
  std::atomic<std::size_t> ready_size_{0};  // ready_.size(), for poll_for_work
  std::atomic<bool> stopped_{false};        // stop_, for poll_for_work
  // One local queue per worker (with two or more workers that may poll):
  // the agents its running agents woke, run next by that worker.
  struct Local {
    std::deque<std::int64_t> agents;
  };
  std::vector<Local> local_;
  int local_count_ = 0;              // agents in all local queues
  std::atomic<int> local_size_{0};   // local_count_, for poll_for_work
  std::atomic<int> next_helper_{0};  // hands out helpers' worker indices
  int running_ = 0;
  std::int64_t finished_ = 0;
  bool stop_ = false;
  bool deadlocked_ = false;
  std::string failure_;
  std::vector<char> done_;
  int idle_ = 0;  // workers waiting on cv_
  // Recruiting (under the run lock): whether the run may (two or more
  // workers, not op by op), recruits at its start (set_recruit_at_start:
  // then its workers stay), has helpers now (recruited_), how many, the
  // most at once; what the slices since the last helper left showed.
  bool may_recruit_ = false;
  bool at_start_ = false;
  bool recruited_ = false;
  int helpers_ = 0;
  int most_helpers_ = 0;
  std::thread::id calling_thread_;
  std::int64_t shown_instructions_ = 0;
  std::int64_t shown_elements_ = 0;
  std::chrono::steady_clock::duration shown_busy_{};
  std::int64_t parks_ = 0;
  std::int64_t preemptions_ = 0;
};

}  // namespace anyp::threads
