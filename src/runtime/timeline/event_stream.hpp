// event_stream.hpp — one agent's recorded timeline events (timeline_recorder.hpp),
// kept as runs: a run repeats a period of up to four events, each slot of
// the period moving its position (the owner rank, and the byte range
// within the buffer) by a fixed step from one period to the next. A rank
// that notifies its P - 1 peers' same cell, waits on P - 1 cells of its
// own in a row, reads a cell and writes a tally row by row, or pulls every
// peer's row and adds it, records one run, not P - 1 events or periods,
// so a barrier's or a mesh's P² events take O(P) records (docs/timeline.md
// §3a). Read back event by event, in order; reading in order (or one run
// back or ahead) costs O(1), any other index a binary search.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/timeline/timeline_event.hpp"

namespace anyp::runtime {

// One event of a run's period, and its step from one period to the next.
struct RunSlot {
  TimelineEvent head;
  std::int64_t first_step = 0, end_step = 0;
  std::int32_t owner_step = 0;
  // Its event in period `rep`.
  TimelineEvent at(std::uint64_t rep) const {
    TimelineEvent e = head;
    if (rep == 0) return e;
    const auto s = static_cast<std::int64_t>(rep);
    e.owner = static_cast<std::int32_t>(e.owner + s * owner_step);
    e.first += s * first_step;
    e.end += s * end_step;
    return e;
  }
};

// `count` events: slot k % period of period k / period, the slots being
// slots_[slot ... slot + period).
struct EventRun {
  std::uint32_t slot = 0;
  std::uint32_t period = 1;
  std::uint64_t count = 1;
};

class EventStream {
 public:
  static constexpr std::uint32_t kMaxPeriod = 4;

  void push_back(const TimelineEvent& e);
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Event i (by value).
  TimelineEvent operator[](std::size_t i) const {
    if (cursor_ < runs_.size() && starts_[cursor_] <= i &&
        i < starts_[cursor_] + runs_[cursor_].count) [[likely]] {
      const EventRun& r = runs_[cursor_];
      const std::uint64_t k = i - starts_[cursor_];
      return r.period == 1 ? slots_[r.slot].at(k) : slots_[r.slot + k % r.period].at(k / r.period);
    }
    return find(i);
  }

  // The runs and their slots (the MPI engine's exchange sends them), and
  // the stream they make.
  const std::vector<EventRun>& runs() const { return runs_; }
  const std::vector<RunSlot>& slots() const { return slots_; }
  void assign(std::vector<EventRun> runs, std::vector<RunSlot> slots);

 private:
  TimelineEvent find(std::size_t i) const;  // moves the cursor to i's run
  std::vector<EventRun> runs_;
  std::vector<RunSlot> slots_;
  std::vector<std::uint64_t> starts_;  // runs_[k]'s first event's index
  std::size_t size_ = 0;
  mutable std::size_t cursor_ = 0;  // the run read last
};

}  // namespace anyp::runtime
