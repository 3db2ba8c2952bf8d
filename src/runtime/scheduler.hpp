// scheduler.hpp — runs P rank VMs on a small pool of worker threads.
//
// Every change to signal cells goes through here, under one lock: a notify
// updates the cell and wakes the parked ranks whose wait it satisfies; a wait
// either completes at once or parks the rank (its worker moves on; a parked
// rank costs no CPU). A rank that exhausts its instruction budget is
// preempted to the back of the ready queue. When no rank is ready or running
// and some rank is unfinished, the run stops at once: a deadlock, reported
// with every parked rank's wait. Deterministic mode: one worker, the next
// rank drawn from the ready set by a seeded RNG.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/op.hpp"

namespace anyp::runtime {

class RankVm;

// What a parked rank waits for (formatted only if a deadlock is reported).
struct ParkedWait {
  std::int32_t* cell = nullptr;
  ir::WaitKind cmp = ir::WaitKind::Eq;
  std::int64_t expected = 0;
  std::string where;  // "function 'f', op pld.system.wait: signal 'sig' cell [0, 0]"
};

struct SchedulerOptions {
  int workers = 1;
  bool deterministic = false;
  std::uint64_t seed = 0;
  std::int64_t budget = 4096;
};

class Scheduler {
 public:
  // `heap`/`window_bytes`: the fabric's windows (rank r's at heap + r *
  // window_bytes), where every signal cell lives.
  Scheduler(std::vector<RankVm*> ranks, SchedulerOptions options, const std::byte* heap,
            std::int64_t window_bytes);

  // Runs every rank to completion. Returns "" or the failure text (a rank's
  // run-time error or the deadlock report).
  std::string run();
  bool deadlocked() const { return deadlocked_; }

  // Called by a RankVm inside run(): apply a notify to a cell of `peer`.
  void notify(std::int64_t from_rank, std::int32_t* cell, ir::NotifyKind op, std::int32_t value);
  // Returns true if the wait is satisfied now; otherwise parks `rank`.
  bool wait_or_park(std::int64_t rank, std::int32_t* cell, ir::WaitKind cmp, std::int64_t expected,
                    const std::function<std::string()>& describe);

  // Called after a data write (put, remote_store, ...) into `owner`'s window
  // memory [begin, end) by another rank: if `owner` is parked on a cell
  // there, its wait re-checks, since a device's wait polls memory and would
  // see the new value too. (A rank waits only on its own window, so a
  // rank's writes into its own window can never wake anyone.)
  void on_window_write(std::int64_t owner, const std::byte* begin, const std::byte* end);

  std::int64_t parks() const { return parks_; }
  std::int64_t preemptions() const { return preemptions_; }

 private:
  void worker();
  void note_notifier(const std::int32_t* cell, std::int64_t from_rank);
  std::vector<std::int64_t> notifiers(const std::int32_t* cell) const;  // sorted
  // Moves the ranks in `list` whose wait on `cell` now holds to the ready queue.
  bool wake_satisfied(std::vector<std::int64_t>& list, const std::int32_t* cell);
  std::string deadlock_report() const;

  std::vector<RankVm*> ranks_;
  SchedulerOptions options_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::int64_t> ready_;
  std::mt19937_64 rng_;
  int running_ = 0;
  std::int64_t finished_ = 0;
  bool stop_ = false;
  bool deadlocked_ = false;
  std::string failure_;
  std::vector<char> done_;
  std::vector<ParkedWait> parked_;  // per rank, valid while parked
  std::vector<char> is_parked_;     // per rank
  std::unordered_map<std::int32_t*, std::vector<std::int64_t>> waiters_;
  // Who notified each cell, for deadlock reports: the first notifier per
  // 4-byte word of the heap (rank + 1; 0 = never, calloc'd so untouched
  // pages cost nothing), and any further distinct notifiers per cell.
  const std::byte* heap_;
  std::unique_ptr<std::int32_t[], void (*)(void*)> first_notifier_;
  std::unordered_map<const std::int32_t*, std::vector<std::int64_t>> more_notifiers_;
  int idle_ = 0;  // workers waiting on cv_
  std::int64_t parks_ = 0;
  std::int64_t preemptions_ = 0;
};

}  // namespace anyp::runtime
