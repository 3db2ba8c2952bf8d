// scheduler.hpp — runs P rank VMs on a small pool of worker threads, and
// owns the lock that orders every signal operation.
//
// Every change to a signal cell goes through here, under one lock: a notify
// updates the cell and wakes the parked ranks whose wait it now satisfies; a
// wait either completes at once or parks the rank (its worker moves on; a
// parked rank costs no CPU). Observers of notifies and satisfied waits are
// called inside that lock (the `on_*` callbacks), so they see the cells'
// order. A rank that exhausts its instruction budget is preempted to the
// back of the ready queue; the policy (schedule_policy.hpp) picks who runs.
// When no rank is ready or running and some rank is unfinished, the run
// stops at once: a deadlock, reported with every parked rank's wait.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engines/threads/schedule_policy.hpp"
#include "runtime/deadlock_report.hpp"
#include "runtime/rank_vm.hpp"
#include "runtime/scalar_math.hpp"

namespace anyp::threads {

class Scheduler {
 public:
  // Extra deadlock-report text from outside (the collective tracker), given
  // which ranks finished.
  using ReportExtra = std::function<std::string(std::span<const char> finished)>;

  // `heap`/`heap_bytes`: all windows, where every signal cell lives.
  Scheduler(std::vector<runtime::RankVm*> ranks, std::unique_ptr<SchedulePolicy> policy,
            int workers, std::int64_t budget, const std::byte* heap, std::int64_t heap_bytes,
            ReportExtra report_extra);

  // Runs every rank to completion. Returns "" or the failure text (a rank's
  // run-time error or the deadlock report).
  std::string run();
  bool deadlocked() const { return deadlocked_; }
  std::int64_t parks() const { return parks_; }
  std::int64_t preemptions() const { return preemptions_; }
  std::int64_t steps() const { return policy_->steps(); }

  // Applies a notify to `cell`; on_applied(new value) runs under the lock.
  template <class OnApplied>
  void notify(std::int64_t from_rank, std::int32_t* cell, ir::NotifyKind op, std::int32_t value,
              OnApplied&& on_applied) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (op == ir::NotifyKind::Set) {
      *cell = value;
    } else {
      *cell = static_cast<std::int32_t>(static_cast<std::uint32_t>(*cell) +
                                        static_cast<std::uint32_t>(value));
    }
    on_applied(*cell);
    note_notify(cell, from_rank, op, value);
    wake_cell(cell);
  }

  // True if the wait holds now (on_satisfied runs under the lock); otherwise
  // parks `rank` with describe()'s text and returns false.
  template <class OnSatisfied>
  bool wait_or_park(std::int64_t rank, std::int32_t* cell, ir::WaitKind cmp, std::int64_t expected,
                    const std::function<std::string()>& describe, OnSatisfied&& on_satisfied) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (runtime::compare(cmp, *cell, expected)) {
      on_satisfied();
      return true;
    }
    park(rank, cell, cmp, expected, describe());
    return false;
  }

  // Runs f() under the signal lock: data accesses to signal buffers go
  // through here, so a cell is only ever touched under the lock.
  template <class F>
  void with_signal_lock(F&& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    f();
  }

  // Under the signal lock, after a data write (put, remote_store, ...) into
  // `owner`'s signal memory [begin, end) by another rank: if `owner` is
  // parked on a cell there, its wait re-checks, since a device's wait polls
  // memory and would see the new value too. (A rank waits only on its own
  // window, and is not parked while it writes, so only writes by other
  // ranks matter.)
  void on_signal_write_locked(std::int64_t writer, std::int64_t owner, const std::byte* begin,
                              const std::byte* end);

 private:
  struct Parked {
    std::int32_t* cell = nullptr;
    ir::WaitKind cmp = ir::WaitKind::Eq;
    std::int64_t expected = 0;
    std::string where;
  };

  void worker();
  void park(std::int64_t rank, std::int32_t* cell, ir::WaitKind cmp, std::int64_t expected,
            std::string where);
  void wake_cell(std::int32_t* cell);
  // Notify bookkeeping for deadlock reports (see notify_slots_).
  void note_notify(const std::int32_t* cell, std::int64_t from_rank, ir::NotifyKind op,
                   std::int32_t value);
  std::vector<runtime::NotifierTally> notifiers(const std::int32_t* cell) const;  // by rank
  void note_data_writer(const std::int32_t* cell, std::int64_t rank);
  // Moves the ranks in `list` whose wait on `cell` now holds to the ready queue.
  bool wake_satisfied(std::vector<std::int64_t>& list, const std::int32_t* cell);
  std::string deadlock_report() const;

  std::vector<runtime::RankVm*> ranks_;
  std::unique_ptr<SchedulePolicy> policy_;
  int workers_;
  std::int64_t budget_;
  ReportExtra report_extra_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::int64_t> ready_;
  int running_ = 0;
  std::int64_t finished_ = 0;
  bool stop_ = false;
  bool deadlocked_ = false;
  std::string failure_;
  std::vector<char> done_;
  std::vector<Parked> parked_;   // per rank, valid while parked
  std::vector<char> is_parked_;  // per rank
  std::unordered_map<std::int32_t*, std::vector<std::int64_t>> waiters_;
  // Who notified each cell and how, for deadlock reports. One 32-bit slot per
  // 4-byte word of the heap (calloc'd, so untouched pages cost nothing): a
  // cell's first notify, if it was AtomicAdd +1 or Set 1 (a credit or a
  // flag), is kept there as state and rank; anything more gives the cell one
  // Tally per notifying rank, chained from the slot (newest first). O(1)
  // amortised per notify, and no allocation beyond the vectors' growth.
  static constexpr std::uint32_t kNever = 0,  // slot states, in the top 2 bits
      kOneAddOne = 1u << 30,                  // | rank: one notify, AtomicAdd +1
      kOneSetOne = 2u << 30,                  // | rank: one notify, Set 1
      kTallied = 3u << 30,                    // | the chain's head, tally index + 1
      kStateMask = 3u << 30;
  struct Tally {
    std::int32_t rank = 0;
    std::uint32_t next = 0;  // the cell's next tally, index + 1; 0: none
    std::uint32_t adds_up = 0, adds_down = 0, sets = 0;
    std::int32_t last_set = 0;
    std::int64_t up_total = 0, down_total = 0;
  };
  // A cell's first kScanned tallies are found by walking its chain; the
  // deeper ones (cells with more notifiers) through the index.
  static constexpr int kScanned = 3;
  // (word, rank) -> tally index + 1, linear probing, at most half full.
  struct TallyIndex {
    struct Entry {
      std::uint64_t key = 0;  // 0: empty
      std::uint32_t tally = 0;
    };
    std::vector<Entry> entries;  // a power of two in size
    std::size_t used = 0;
    int shift = 64;  // 64 - log2(entries.size())
    std::size_t slot(std::uint64_t key) const;
    std::uint32_t find(std::uint64_t key) const;  // 0: absent
    void insert(std::uint64_t key, std::uint32_t tally);
  };
  const std::byte* heap_;
  std::unique_ptr<std::uint32_t[], void (*)(void*)> notify_slots_;
  std::vector<Tally> tallies_;
  TallyIndex tally_index_;
  // Ranks that changed a cell by a data write (not a notify), for reports.
  std::unordered_map<const std::int32_t*, std::vector<std::int64_t>> data_writers_;
  int idle_ = 0;  // workers waiting on cv_
  std::int64_t parks_ = 0;
  std::int64_t preemptions_ = 0;
};

}  // namespace anyp::threads
