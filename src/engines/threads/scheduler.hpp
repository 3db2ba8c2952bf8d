// scheduler.hpp — runs P rank VMs on a small pool of worker threads
// (worker_pool.hpp), and orders every signal operation.
//
// There is no global lock on the signal path. A rank waits only on cells of
// its own window, so every cell belongs to one owner rank, and the owner's
// stripe lock (one of up to kMaxStripes, by owner) orders everything done to
// its cells: a notify updates the cell and, if the owner is parked on it
// and its wait now holds, makes the owner ready; a wait either completes at
// once or parks the rank (its worker moves on; a parked rank costs no CPU).
// Observers of notifies and satisfied waits are called inside that stripe
// lock (the `on_*` callbacks), so they see each cell's order. The run lock
// guards only the ready queue and the run's state; lock order is a stripe,
// then the run lock, never the reverse.
//
// A rank that exhausts its instruction budget is preempted to the back of
// the ready queue; the policy (schedule_policy.hpp) picks who runs. An idle
// worker polls the ready queue's size briefly before it sleeps (only when
// there are no more workers than cores), so a hand-off between two workers
// costs no futex round trip; parked ranks are never polled. With polling
// workers, a rank woken by a running rank goes to that worker's local
// queue and runs there next, on a warm cache, unless a poller takes it
// over after a few microseconds (the ranks' data would otherwise cross
// between the cores at every wake of a notify-bound kernel). When no rank is
// ready or running and some rank is unfinished, the run stops at once: a
// deadlock, reported with every parked rank's wait.
#pragma once

#include <atomic>
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

  // `heap`/`heap_bytes`: all windows, where every signal cell lives (rank r's
  // window at r * window_bytes). `notify_slots`: one zeroed 32-bit slot per
  // 4-byte word of the heap, the notify record (see below); the fabric owns
  // it and zeroes what the run wrote.
  // `ranks`: one VM per agent (Executable::agents: block * world + rank;
  // world agents when no kernel runs on several blocks). Cells, stripes
  // and the notify record are the ranks'; parking, readiness and the
  // deadlock report are the agents'.
  Scheduler(std::vector<runtime::RankVm*> ranks, std::int64_t world,
            std::unique_ptr<SchedulePolicy> policy, int workers, std::int64_t budget,
            const std::byte* heap, std::int64_t window_bytes, std::uint32_t* notify_slots,
            ReportExtra report_extra);

  // Runs every rank to completion. Returns "" or the failure text (a rank's
  // run-time error or the deadlock report).
  std::string run();
  bool deadlocked() const { return deadlocked_; }
  std::int64_t parks() const { return parks_; }
  std::int64_t preemptions() const { return preemptions_; }
  std::int64_t steps() const { return policy_->steps(); }
  int workers_used() const { return workers_used_; }

  // Applies a notify by agent `from` to `cell` of `owner`'s window;
  // on_applied(new value) runs under the owner's stripe lock.
  template <class OnApplied>
  void notify(std::int64_t from, std::int64_t owner, std::int32_t* cell, ir::NotifyKind op,
              std::int32_t value, OnApplied&& on_applied) {
    const std::int64_t from_rank = from % world_;
    std::int64_t wake = -1;
    {
      Stripe& stripe = stripe_of(owner);
      std::lock_guard<std::mutex> lock(stripe.mutex);
      if (op == ir::NotifyKind::Set) {
        *cell = value;
      } else {
        *cell = static_cast<std::int32_t>(static_cast<std::uint32_t>(*cell) +
                                          static_cast<std::uint32_t>(value));
      }
      on_applied(*cell);
      note_notify(stripe, cell, from_rank, op, value);
      wake = release_parked_on(owner, cell);
    }
    if (wake >= 0) make_ready(wake);
  }

  // True if agent `agent`'s wait on a cell of its rank `owner` holds now
  // (on_satisfied runs under the rank's stripe lock); otherwise parks the
  // agent with describe()'s text and returns false.
  template <class OnSatisfied>
  bool wait_or_park(std::int64_t agent, std::int64_t owner, std::int32_t* cell, ir::WaitKind cmp,
                    std::int64_t expected, const std::function<std::string()>& describe,
                    OnSatisfied&& on_satisfied) {
    std::lock_guard<std::mutex> lock(stripe_of(owner).mutex);
    if (runtime::compare(cmp, *cell, expected)) {
      on_satisfied();
      return true;
    }
    parked_[static_cast<std::size_t>(agent)] = Parked{cell, cmp, expected, describe()};
    is_parked_[static_cast<std::size_t>(agent)] = 1;
    return false;
  }

  // Runs f() under `owner`'s stripe lock: data accesses to signal buffers go
  // through here, so a cell is only ever touched under its owner's lock.
  template <class F>
  void with_signal_lock(std::int64_t owner, F&& f) {
    std::lock_guard<std::mutex> lock(stripe_of(owner).mutex);
    f();
  }

  // Under `owner`'s stripe lock, after a data write (put, remote_store, ...)
  // into `owner`'s signal memory [begin, end) by another rank: if `owner` is
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
  // Who notified each cell and how, for deadlock reports. The slot of a
  // 4-byte word of the heap: a cell's first notify, if it was AtomicAdd +1
  // or Set 1 (a credit or a flag), is kept there as state and rank; anything
  // more gives the cell one Tally per notifying rank, chained from the slot
  // (newest first) in the owner's stripe. O(1) amortised per notify, and no
  // allocation beyond the vectors' growth.
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
  // The cells of the owners r with r % stripes == i, and what is known of
  // them; its mutex orders every operation on those cells.
  struct alignas(64) Stripe {
    std::mutex mutex;
    std::vector<Tally> tallies;
    TallyIndex tally_index;
    // Ranks that changed a cell by a data write (not a notify), for reports.
    std::unordered_map<const std::int32_t*, std::vector<std::int64_t>> data_writers;
  };
  static constexpr std::size_t kMaxStripes = 256;

  Stripe& stripe_of(std::int64_t owner) {
    return stripes_[static_cast<std::size_t>(owner) & stripe_mask_];
  }
  const Stripe& stripe_of(std::int64_t owner) const {
    return stripes_[static_cast<std::size_t>(owner) & stripe_mask_];
  }
  void worker();
  // Polls briefly (run lock not held): Ready when a rank is ready or the
  // run stopped, Steal when ranks have sat in workers' local queues for
  // kStealAfter, Nothing after kPollFor.
  enum class Poll { Ready, Steal, Nothing };
  Poll poll_for_work() const;
  // Under the run lock: the oldest rank of `worker`'s local queue, removed.
  std::int64_t take_local(int worker);
  // Under the owner's stripe lock: if `agent` is parked on `cell` and its
  // wait now holds, unparks it and returns true (the caller makes it ready).
  bool release_if_satisfied(std::int64_t agent, const std::int32_t* cell);
  // The same for every agent of `owner`: the one unparked agent is
  // returned (-1: none) for the caller to make ready after the lock; any
  // further ones are made ready here (a stripe, then the run lock).
  std::int64_t release_parked_on(std::int64_t owner, const std::int32_t* cell);
  void make_ready(std::int64_t rank);  // takes the run lock
  // Notify bookkeeping for deadlock reports (see Tally).
  void note_notify(Stripe& stripe, const std::int32_t* cell, std::int64_t from_rank,
                   ir::NotifyKind op, std::int32_t value);
  std::vector<runtime::NotifierTally> notifiers(std::int64_t owner,
                                                const std::int32_t* cell) const;  // by rank
  std::string deadlock_report() const;

  std::vector<runtime::RankVm*> ranks_;  // per agent
  std::int64_t world_;                   // ranks
  std::unique_ptr<SchedulePolicy> policy_;
  int workers_;
  int workers_used_ = 1;
  bool may_spin_;
  std::int64_t budget_;
  ReportExtra report_extra_;
  const std::byte* heap_;
  std::int64_t window_bytes_;
  std::uint32_t* notify_slots_;
  std::vector<Stripe> stripes_;
  std::size_t stripe_mask_;
  // Per agent, under its rank's stripe lock: its wait while parked.
  std::vector<Parked> parked_;
  std::vector<char> is_parked_;

  // The run lock and what it guards.
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::int64_t> ready_;
  std::atomic<std::size_t> ready_size_{0};  // ready_.size(), for poll_for_work
  std::atomic<bool> stopped_{false};        // stop_, for poll_for_work
  // One local queue per worker (with two or more workers that may poll):
  // the ranks its running ranks woke, run next by that worker.
  struct Local {
    std::deque<std::int64_t> ranks;
  };
  std::vector<Local> local_;
  int local_count_ = 0;              // ranks in all local queues
  std::atomic<int> local_size_{0};   // local_count_, for poll_for_work
  std::atomic<int> next_worker_{0};  // hands out worker indices
  int running_ = 0;
  std::int64_t finished_ = 0;
  bool stop_ = false;
  bool deadlocked_ = false;
  std::string failure_;
  std::vector<char> done_;
  int idle_ = 0;  // workers waiting on cv_
  std::int64_t parks_ = 0;
  std::int64_t preemptions_ = 0;
};

}  // namespace anyp::threads
