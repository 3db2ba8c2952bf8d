// cell_credits.hpp — a signal cell as the race checker sees it: the credits
// in it, each with the clock of the notify that deposited it.
//
// A satisfied wait acquires the clocks of the credits its comparison needs,
// not everything ever released into the cell. Credits are consumed oldest
// first: `Ge k` needs the k oldest credits still in the cell, `Gt k` k + 1,
// `Eq v` v, `Ne 0` one; a negative AtomicAdd (a collective's epilogue)
// consumes the oldest; a Set replaces them all with v credits of the
// setter's clock (so only the last setter is acquired, as a store breaks a
// release sequence). So a fast peer's credit for a *later* round, which
// pushes a slow waiter's cell past its threshold, does not order the
// waiter after that peer's later work — the pitfall of restaging a
// broadcast target without a barrier is reported on every schedule — while
// the self-clearing credit protocol (docs/design.md §11), which consumes
// exactly the credits each call deposited, is never misattributed.
// Every wait also acquires the clocks of the notifies that removed credits
// or paid off a debt (a countdown to 0 needs every decrement; in the builtin
// protocol the consumer is the waiter itself). `Lt`, `Le` and other `Ne`
// waits, and waits that reach credits of unknown size (a data write into
// the cell), acquire everything released into the cell (more than needed: a
// race may go unreported, never a false one). At most kMaxRuns runs
// of credits are kept; older runs merge (again acquiring more, never less).
//
// Clocks are not copied into the cell: each is a reference to a release's
// snapshot in the checker's ClockPool (clock_pool.hpp), and the cell's
// joins keep at most two such references before folding them. A cell
// holds references in the pool and is never destroyed before it.
//
// Most cells of an [NR, 1] signal only ever get one notify, an AtomicAdd
// of v > 0: CellCredits would then hold one run of v credits and `all` of
// that one clock, nothing settled, no debt. Such a cell is a CellSlot of
// 16 bytes (the clock and v) — it acquires what CellCredits would — and
// becomes a CellCredits, holding exactly that, at its first other change.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "ir/op_attrs.hpp"
#include "runtime/race/clock_pool.hpp"

namespace anyp::runtime::race {

class CellCredits {
 public:
  static constexpr std::size_t kMaxRuns = 8;
  static constexpr std::int64_t kUnknown = std::numeric_limits<std::int64_t>::max();

  // An AtomicAdd notify of `value`, released as `clock`.
  void add(ClockPool& pool, ClockRef clock, std::int64_t value) {
    all_.join(pool, clock);
    if (value < 0) {
      settled_.join(pool, clock);
      return consume(pool, -value);
    }
    const std::int64_t paid = std::min(debt_, value);
    if (paid > 0) settled_.join(pool, clock);
    debt_ -= paid;
    if (value - paid > 0) push(pool, value - paid, clock);
  }
  // A Set notify of `value`.
  void set(ClockPool& pool, ClockRef clock, std::int64_t value) {
    all_.assign(pool, clock);
    settled_.assign(pool, clock);
    clear_runs(pool);
    debt_ = value < 0 ? -value : 0;
    if (value > 0) push(pool, value, clock);
  }
  // A data write (replace) or data atomic add into the cell: its value is
  // not known here, so it counts as enough credits for any wait.
  void data_write(ClockPool& pool, ClockRef clock, bool replace) {
    if (replace) {
      all_.assign(pool, clock);
      settled_.clear(pool);
      clear_runs(pool);
      debt_ = 0;
    } else {
      all_.join(pool, clock);
    }
    push(pool, kUnknown, clock);
  }

  // The credits a wait `cmp expected` needs (-1: everything released).
  static std::int64_t needed(ir::WaitKind cmp, std::int64_t expected) {
    switch (cmp) {
      case ir::WaitKind::Ge:
      case ir::WaitKind::Eq:
        return expected;
      case ir::WaitKind::Gt:
        return expected + 1;
      case ir::WaitKind::Ne:
        return expected == 0 ? 1 : -1;
      default:
        return -1;
    }
  }

  // Joins into `into` what a wait `cmp expected`, satisfied now, acquires;
  // true if `into` changed.
  bool acquire(const ClockPool& pool, ir::WaitKind cmp, std::int64_t expected, Clock& into) const {
    std::int64_t need = needed(cmp, expected);
    if (need < 0) return all_.acquire_into(pool, into);
    bool changed = settled_.acquire_into(pool, into);
    for (const Run& r : runs_) {
      if (need <= 0) return changed;
      if (r.count == kUnknown) return all_.acquire_into(pool, into) || changed;
      changed |= r.clock.acquire_into(pool, into);
      need = r.count >= need ? 0 : need - r.count;
    }
    if (need > 0) changed |= all_.acquire_into(pool, into);
    return changed;
  }

 private:
  struct Run {
    std::int64_t count;
    JoinedClock clock;
  };
  void push(ClockPool& pool, std::int64_t count, ClockRef clock) {
    runs_.push_back(Run{count, {}});
    runs_.back().clock.join(pool, clock);
    if (runs_.size() > kMaxRuns) {  // merge the two oldest
      Run& first = runs_[0];
      Run& second = runs_[1];
      second.clock.join(pool, first.clock);
      second.count = first.count == kUnknown || second.count == kUnknown
                         ? kUnknown
                         : first.count + second.count;
      pop_front(pool);
    }
  }
  void pop_front(ClockPool& pool) {
    runs_.front().clock.clear(pool);
    runs_.erase(runs_.begin());
  }
  void clear_runs(ClockPool& pool) {
    for (Run& r : runs_) r.clock.clear(pool);
    runs_.clear();
  }
  void consume(ClockPool& pool, std::int64_t n) {
    while (n > 0 && !runs_.empty()) {
      Run& r = runs_.front();
      if (r.count == kUnknown) return;
      const std::int64_t take = std::min(r.count, n);
      r.count -= take;
      n -= take;
      if (r.count == 0) pop_front(pool);
    }
    debt_ += n;
  }

  std::vector<Run> runs_;  // at most kMaxRuns, oldest first
  std::int64_t debt_ = 0;  // credits consumed before they arrived
  JoinedClock all_;        // everything released into the cell (Set: since the last Set)
  JoinedClock settled_;    // the notifies that consumed credits or paid off a debt
};

// A cell in 16 bytes while it holds one AtomicAdd's credits (see above).
struct CellSlot {
  ClockRef clock;           // that notify's (none: fresh, or full)
  std::uint32_t count = 0;  // its credits
  std::uint32_t full = 0;   // + 1: the cell's CellCredits (the checker's); 0: none
  // What a wait `cmp expected` acquires from the one notify (the clock,
  // unless it needs no credit): CellCredits::acquire of that state.
  bool acquire(const ClockPool& pool, ir::WaitKind cmp, std::int64_t expected, Clock& into) const {
    return CellCredits::needed(cmp, expected) != 0 && pool.join_into(into, clock);
  }
};

}  // namespace anyp::runtime::race
