// signal_table.hpp — the threads engine's signal cells: it applies every
// notify, checks every wait, parks the agents whose wait does not hold and
// keeps what a deadlock report needs (who notified each cell and how, who
// wrote into one with data, every parked wait). The fabric owns it; it hands
// an agent whose wait now holds to the runner (runner.hpp) through one call,
// ReadyQueue::make_ready(agent).
//
// There is no global lock on the signal path. A rank waits only on cells of
// its own window, so every cell belongs to one owner rank, and the owner's
// stripe lock (one of up to kMaxStripes, by owner) orders everything done to
// its cells: a notify updates the cell and, if an agent of the owner is
// parked on it and its wait now holds, makes that agent ready; a wait either
// completes at once or parks the agent (its worker moves on; a parked agent
// costs no CPU). Observers of notifies and satisfied waits are called inside
// that stripe lock (the `on_*` callbacks), so they see each cell's order.
// Lock order: a stripe, then the runner's run lock (inside make_ready),
// never the reverse.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/op_attrs.hpp"
#include "runtime/deadlock_report.hpp"
#include "runtime/scalar_math.hpp"

namespace anyp::threads {

// Where an agent whose wait now holds goes: the runner's ready queue.
class ReadyQueue {
 public:
  virtual ~ReadyQueue() = default;
  virtual void make_ready(std::int64_t agent) = 0;
};

class SignalTable {
 public:
  // `heap`: all windows, where every signal cell lives (rank r's window at
  // r * window_bytes). `notify_slots`: one zeroed 32-bit slot per word of
  // the signal buffers (the fabric numbers them: a cell's slot), the notify
  // record (see below); `slot_lines`: a bit per 64-byte line of the slots,
  // set here when a notify writes into that line. The fabric owns both and
  // zeroes the lines the run wrote. `agents`: Executable::agents (block *
  // world + rank). Cells, stripes and the notify record are the ranks';
  // parking is the agents'.
  SignalTable(std::int64_t world, std::int64_t agents, const std::byte* heap,
              std::uint32_t* notify_slots, std::uint64_t* slot_lines);

  // The runner that takes the agents made ready (set before the run).
  void connect(ReadyQueue* ready) { ready_ = ready; }

  // Applies a notify by agent `from` to `cell` (notify slot `slot`) of
  // `owner`'s window; on_applied(new value) runs under the owner's stripe
  // lock.
  template <class OnApplied>
  void notify(std::int64_t from, std::int64_t owner, std::int32_t* cell, std::uint64_t slot,
              ir::NotifyKind op, std::int32_t value, OnApplied&& on_applied) {
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
      note_notify(stripe, slot, from_rank, op, value);
      wake = release_parked_on(owner, cell);
    }
    if (wake >= 0) ready_->make_ready(wake);
  }

  // True if agent `agent`'s wait on a cell (notify slot `slot`) of its rank `owner` holds now
  // (on_satisfied runs under the rank's stripe lock); otherwise parks the
  // agent with describe()'s text and returns false (on_blocked(value) runs
  // under the lock first).
  template <class OnSatisfied, class OnBlocked>
  bool wait_or_park(std::int64_t agent, std::int64_t owner, std::int32_t* cell, std::uint64_t slot,
                    ir::WaitKind cmp, std::int64_t expected,
                    const std::function<std::string()>& describe, OnSatisfied&& on_satisfied,
                    OnBlocked&& on_blocked) {
    std::lock_guard<std::mutex> lock(stripe_of(owner).mutex);
    if (runtime::compare(cmp, *cell, expected)) {
      on_satisfied();
      return true;
    }
    on_blocked(*cell);
    parked_[static_cast<std::size_t>(agent)] = Parked{cell, slot, cmp, expected, describe()};
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
  // by agent `writer` into `owner`'s signal memory [begin, end): records the
  // writer for deadlock reports and, if an agent of `owner` is parked on a
  // cell there, its wait re-checks, since a device's wait polls memory and
  // would see the new value too. The fabric calls it for every such write,
  // the owner's own included (one block of a rank may write while another
  // is parked).
  void on_signal_write_locked(std::int64_t writer, std::int64_t owner, const std::byte* begin,
                              const std::byte* end);

  // The deadlock report of the agents that wait for something (waits_for):
  // every parked wait with what each rank's notifies and data writes did to
  // its cell, and `extra` (the collective tracker's calls, from the runner).
  std::string deadlock_report(const std::function<bool(std::int64_t agent)>& waits_for,
                              const std::string& extra) const;

 private:
  struct Parked {
    std::int32_t* cell = nullptr;
    std::uint64_t slot = 0;  // its notify slot
    ir::WaitKind cmp = ir::WaitKind::Eq;
    std::int64_t expected = 0;
    std::string where;
  };
  // Who notified each cell and how, for deadlock reports. The slot of a
  // cell (a word of a signal buffer): its first notify, if it was AtomicAdd +1
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
  // Under the owner's stripe lock: if `agent` is parked on `cell` and its
  // wait now holds, unparks it and returns true (the caller makes it ready).
  bool release_if_satisfied(std::int64_t agent, const std::int32_t* cell);
  // The same for every agent of `owner`: the one unparked agent is
  // returned (-1: none) for the caller to make ready after the lock; any
  // further ones are made ready here (a stripe, then the run lock).
  std::int64_t release_parked_on(std::int64_t owner, const std::int32_t* cell);
  // Notify bookkeeping for deadlock reports (see Tally).
  void note_notify(Stripe& stripe, std::uint64_t slot, std::int64_t from_rank, ir::NotifyKind op,
                   std::int32_t value);
  std::vector<runtime::NotifierTally> notifiers(std::int64_t owner,
                                                std::uint64_t slot) const;  // by rank

  std::int64_t world_;   // ranks
  std::int64_t agents_;  // VMs: world_ * blocks
  const std::byte* heap_;
  std::uint32_t* notify_slots_;
  std::uint64_t* slot_lines_;
  ReadyQueue* ready_ = nullptr;
  std::vector<Stripe> stripes_;
  std::size_t stripe_mask_;
  // Per agent, under its rank's stripe lock: its wait while parked.
  std::vector<Parked> parked_;
  std::vector<char> is_parked_;
};

}  // namespace anyp::threads
