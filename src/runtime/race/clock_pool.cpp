// clock_pool.cpp — shared clocks: allocation, reference counts, joins.
#include "runtime/race/clock_pool.hpp"

namespace anyp::runtime::race {

std::uint32_t ClockPool::make(const Clock& clock, std::int32_t agent) {
  std::uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(entries_.size());
    entries_.emplace_back();
  }
  Entry& e = entries_[id];
  e.clock.assign(clock.begin(), clock.end());  // reuses a freed clock's storage
  e.refs = 1;
  e.agent = agent;
  ++live_;
  return id;
}

void ClockPool::release(std::uint32_t id) {
  if (id == 0 || --entries_[id].refs != 0) return;
  free_.push_back(id);
  --live_;
}

bool ClockPool::join_into(Clock& into, ClockRef ref) const {
  const Entry& e = entries_[ref.id];
  bool changed = race::join_into(into, e.clock);
  if (e.agent >= 0) {
    std::uint32_t& own = into[static_cast<std::size_t>(e.agent)];
    if (own < ref.own) {
      own = ref.own;
      changed = true;
    }
  }
  return changed;
}

void JoinedClock::join(ClockPool& pool, ClockRef ref) {
  if (ref.none()) return;
  const std::int32_t agent = pool.agent(ref.id);
  for (ClockRef& part : parts_) {
    if (part.none()) {  // a free slot (parts_[0] is filled first)
      pool.retain(ref.id);
      part = ref;
      return;
    }
    if (part.id == ref.id && agent < 0) return;  // the same materialized join
    if (agent >= 0 && pool.agent(part.id) == agent) {
      // Two releases of one agent: the later covers the earlier.
      if (ref.own > part.own) {
        pool.retain(ref.id);
        pool.release(part.id);
        part = ref;
      }
      return;
    }
  }
  // Three clocks: fold them into one, in place if a part is a join only
  // this holds.
  for (int i = 0; i < 2; ++i) {
    ClockRef& mine = parts_[static_cast<std::size_t>(i)];
    ClockRef& other = parts_[static_cast<std::size_t>(1 - i)];
    if (pool.agent(mine.id) >= 0 || pool.refs(mine.id) != 1) continue;
    pool.join_into(pool.owned_clock(mine.id), other);
    pool.join_into(pool.owned_clock(mine.id), ref);
    pool.release(other.id);
    parts_ = {mine, ClockRef{}};
    return;
  }
  Clock folded = pool.clock(parts_[0].id);
  pool.join_into(folded, parts_[0]);
  pool.join_into(folded, parts_[1]);
  pool.join_into(folded, ref);
  const std::uint32_t id = pool.make(folded, -1);
  pool.release(parts_[0].id);
  pool.release(parts_[1].id);
  parts_ = {ClockRef{id, 0}, ClockRef{}};
}

}  // namespace anyp::runtime::race
