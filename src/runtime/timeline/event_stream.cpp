// event_stream.cpp — runs of timeline events (see the header).
#include "runtime/timeline/event_stream.hpp"

#include <algorithm>

namespace anyp::runtime {
namespace {

// Alike but for the position (owner, first, end).
bool alike(const TimelineEvent& a, const TimelineEvent& b) {
  return a.kind == b.kind && a.sub == b.sub && a.dtype == b.dtype && a.space == b.space &&
         a.site.code == b.site.code && a.site.site == b.site.site && a.id == b.id &&
         a.issued_before == b.issued_before && a.amount == b.amount;
}

}  // namespace

void EventStream::push_back(const TimelineEvent& e) {
  ++size_;
  if (!runs_.empty()) {
    EventRun& last = runs_.back();
    if (alike(last.head, e)) {
      if (last.count == 1) {  // the second event sets the steps
        last.owner_step = e.owner - last.head.owner;
        last.first_step = e.first - last.head.first;
        last.end_step = e.end - last.head.end;
        last.count = 2;
        return;
      }
      const TimelineEvent next = last.at(last.count);
      if (next.owner == e.owner && next.first == e.first && next.end == e.end &&
          last.count < UINT32_MAX) {
        ++last.count;
        return;
      }
    }
  }
  starts_.push_back(size_ - 1);
  runs_.push_back(EventRun{e});
}

TimelineEvent EventStream::find(std::size_t i) const {
  auto holds = [&](std::size_t k) {
    return k < runs_.size() && starts_[k] <= i && i < starts_[k] + runs_[k].count;
  };
  if (!holds(cursor_)) {
    if (holds(cursor_ + 1)) {
      ++cursor_;
    } else if (cursor_ > 0 && holds(cursor_ - 1)) {
      --cursor_;
    } else {
      cursor_ = static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), i) -
                                         starts_.begin()) -
                1;
    }
  }
  return runs_[cursor_].at(i - starts_[cursor_]);
}

void EventStream::assign_runs(std::vector<EventRun> runs) {
  runs_ = std::move(runs);
  starts_.clear();
  size_ = 0;
  cursor_ = 0;
  for (const EventRun& r : runs_) {
    starts_.push_back(size_);
    size_ += r.count;
  }
}

}  // namespace anyp::runtime
