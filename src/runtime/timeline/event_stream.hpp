// event_stream.hpp — one agent's recorded timeline events (timeline_recorder.hpp),
// kept as runs: events alike but for a position that moves by a fixed step
// (the owner rank, and the byte offset within the buffer) are one record.
// A rank that notifies its P - 1 peers' same cell, waits on P - 1 cells of
// its own in a row, or puts one row into every peer records one run, not
// P - 1 events, so a barrier's or a broadcast's P² events take P records
// (docs/timeline.md §3a). Read back event by event, in order; reading in
// order (or one back, one ahead) costs O(1), any other index a binary search.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/timeline/timeline_event.hpp"

namespace anyp::runtime {

// Events head, head + step, head + 2 step, ... (count of them): `owner`
// moves by owner_step, `first` by first_step and `end` by end_step.
struct EventRun {
  TimelineEvent head;
  std::uint32_t count = 1;
  std::int32_t owner_step = 0;
  std::int64_t first_step = 0;
  std::int64_t end_step = 0;
  TimelineEvent at(std::uint64_t k) const {
    TimelineEvent e = head;
    if (k == 0) return e;
    const auto s = static_cast<std::int64_t>(k);
    e.owner = static_cast<std::int32_t>(e.owner + s * owner_step);
    e.first += s * first_step;
    e.end += s * end_step;
    return e;
  }
};

class EventStream {
 public:
  void push_back(const TimelineEvent& e);
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Event i (by value).
  TimelineEvent operator[](std::size_t i) const {
    if (cursor_ < runs_.size() && starts_[cursor_] <= i &&
        i < starts_[cursor_] + runs_[cursor_].count) [[likely]]
      return runs_[cursor_].at(i - starts_[cursor_]);
    return find(i);
  }

  // The runs (serialised by the MPI engine's exchange) and the stream they
  // make.
  const std::vector<EventRun>& runs() const { return runs_; }
  void assign_runs(std::vector<EventRun> runs);

 private:
  TimelineEvent find(std::size_t i) const;  // moves the cursor to i's run
  std::vector<EventRun> runs_;
  std::vector<std::uint64_t> starts_;  // runs_[k]'s first event's index
  std::size_t size_ = 0;
  mutable std::size_t cursor_ = 0;  // the run read last
};

}  // namespace anyp::runtime
