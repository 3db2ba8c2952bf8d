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
#pragma once

#include <cstdint>
#include <deque>
#include <limits>

#include "ir/op_attrs.hpp"
#include "runtime/race/vector_clock.hpp"

namespace anyp::runtime::race {

class CellCredits {
 public:
  static constexpr std::size_t kMaxRuns = 8;
  static constexpr std::int64_t kUnknown = std::numeric_limits<std::int64_t>::max();

  // An AtomicAdd notify of `value` by a rank whose clock is `clock`.
  void add(const Clock& clock, std::int64_t value) {
    join(all_, clock);
    if (value < 0) {
      join(settled_, clock);
      return consume(-value);
    }
    const std::int64_t paid = std::min(debt_, value);
    if (paid > 0) join(settled_, clock);
    debt_ -= paid;
    if (value - paid > 0) push(Run{value - paid, clock});
  }
  // A Set notify of `value`.
  void set(const Clock& clock, std::int64_t value) {
    all_ = clock;
    settled_ = clock;
    runs_.clear();
    debt_ = value < 0 ? -value : 0;
    if (value > 0) runs_.push_back(Run{value, clock});
  }
  // A data write (replace) or data atomic add into the cell: its value is
  // not known here, so it counts as enough credits for any wait.
  void data_write(const Clock& clock, bool replace) {
    if (replace) {
      all_ = clock;
      settled_.clear();
      runs_.clear();
      debt_ = 0;
    } else {
      join(all_, clock);
    }
    push(Run{kUnknown, clock});
  }

  // Joins into `into` what a wait `cmp expected`, satisfied now, acquires.
  void acquire(ir::WaitKind cmp, std::int64_t expected, Clock& into) const {
    std::int64_t need = -1;  // -1: everything
    switch (cmp) {
      case ir::WaitKind::Ge:
      case ir::WaitKind::Eq:
        need = expected;
        break;
      case ir::WaitKind::Gt:
        need = expected + 1;
        break;
      case ir::WaitKind::Ne:
        if (expected == 0) need = 1;
        break;
      default:
        break;
    }
    if (need < 0) return join(into, all_);
    join(into, settled_);
    for (const Run& r : runs_) {
      if (need <= 0) return;
      if (r.count == kUnknown) return join(into, all_);
      join(into, r.clock);
      need = r.count >= need ? 0 : need - r.count;
    }
    if (need > 0) join(into, all_);
  }

  // The clocks the cell holds (each of one entry per agent).
  std::int64_t clocks_held() const {
    return static_cast<std::int64_t>(runs_.size()) + (all_.empty() ? 0 : 1) +
           (settled_.empty() ? 0 : 1);
  }

 private:
  struct Run {
    std::int64_t count;
    Clock clock;
  };
  static void join(Clock& into, const Clock& from) {
    if (from.empty()) return;
    if (into.empty()) {
      into = from;
    } else {
      join_into(into, from);
    }
  }
  void push(Run run) {
    runs_.push_back(std::move(run));
    if (runs_.size() > kMaxRuns) {  // merge the two oldest
      Run first = std::move(runs_.front());
      runs_.pop_front();
      join_into(runs_.front().clock, first.clock);
      runs_.front().count = first.count == kUnknown || runs_.front().count == kUnknown
                                ? kUnknown
                                : first.count + runs_.front().count;
    }
  }
  void consume(std::int64_t n) {
    while (n > 0 && !runs_.empty()) {
      Run& r = runs_.front();
      if (r.count == kUnknown) return;
      const std::int64_t take = std::min(r.count, n);
      r.count -= take;
      n -= take;
      if (r.count == 0) runs_.pop_front();
    }
    debt_ += n;
  }

  std::deque<Run> runs_;
  std::int64_t debt_ = 0;  // credits consumed before they arrived
  Clock all_;              // everything released into the cell (Set: since the last Set)
  Clock settled_;          // the notifies that consumed credits or paid off a debt
};

}  // namespace anyp::runtime::race
