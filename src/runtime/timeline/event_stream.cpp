// event_stream.cpp — periodic runs of timeline events (see the header).
#include "runtime/timeline/event_stream.hpp"

#include <algorithm>

#include "common/internal_check.hpp"

namespace anyp::runtime {
namespace {

// Alike but for the position (owner, first, end).
bool alike(const TimelineEvent& a, const TimelineEvent& b) {
  return a.kind == b.kind && a.sub == b.sub && a.dtype == b.dtype && a.space == b.space &&
         a.site.code == b.site.code && a.site.site == b.site.site && a.id == b.id &&
         a.issued_before == b.issued_before && a.amount == b.amount;
}

bool same_place(const TimelineEvent& a, const TimelineEvent& b) {
  return a.owner == b.owner && a.first == b.first && a.end == b.end;
}

}  // namespace

void EventStream::push_back(const TimelineEvent& e) {
  ++size_;
  if (!runs_.empty()) {
    EventRun& r = runs_.back();
    const std::uint64_t slot = r.count % r.period, rep = r.count / r.period;
    RunSlot& s = slots_[r.slot + slot];
    if (r.count == r.period) {
      // Only the first period so far, so slot 0 is next: e begins the
      // second period, or (unlike slot 0) joins the first.
      if (alike(slots_[r.slot].head, e)) {
        RunSlot& first = slots_[r.slot];
        first.owner_step = e.owner - first.head.owner;
        first.first_step = e.first - first.head.first;
        first.end_step = e.end - first.head.end;
        ++r.count;
        return;
      }
      if (r.period < kMaxPeriod) {
        slots_.push_back(RunSlot{e});
        ++r.period;
        ++r.count;
        return;
      }
    } else if (rep == 1) {  // the second period sets this slot's step (slot >= 1)
      if (alike(s.head, e)) {
        s.owner_step = e.owner - s.head.owner;
        s.first_step = e.first - s.head.first;
        s.end_step = e.end - s.head.end;
        ++r.count;
        return;
      }
    } else if (alike(s.head, e) && same_place(s.at(rep), e)) {
      ++r.count;
      return;
    }
  }
  ANYP_CHECK(slots_.size() < UINT32_MAX, "too many timeline event runs");
  starts_.push_back(size_ - 1);
  runs_.push_back(EventRun{static_cast<std::uint32_t>(slots_.size()), 1, 1});
  slots_.push_back(RunSlot{e});
}

TimelineEvent EventStream::find(std::size_t i) const {
  auto holds = [&](std::size_t k) {
    return k < runs_.size() && starts_[k] <= i && i < starts_[k] + runs_[k].count;
  };
  if (holds(cursor_ + 1)) {
    ++cursor_;
  } else if (cursor_ > 0 && holds(cursor_ - 1)) {
    --cursor_;
  } else {
    cursor_ = static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), i) -
                                       starts_.begin()) -
              1;
  }
  return (*this)[i];
}

void EventStream::assign(std::vector<EventRun> runs, std::vector<RunSlot> slots) {
  runs_ = std::move(runs);
  slots_ = std::move(slots);
  starts_.clear();
  size_ = 0;
  cursor_ = 0;
  for (const EventRun& r : runs_) {
    ANYP_CHECK(r.period >= 1 && r.slot + r.period <= slots_.size(),
               "a timeline exchange names a run outside its slots");
    starts_.push_back(size_);
    size_ += r.count;
  }
}

}  // namespace anyp::runtime
