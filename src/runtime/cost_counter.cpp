// cost_counter.cpp — cost card counting at the door (see cost_counter.hpp).
#include "runtime/cost_counter.hpp"

#include <algorithm>

namespace anyp::runtime {

CostCounter::CostCounter(std::int64_t world_size, std::int64_t agents, std::int32_t order_buffer)
    : world_(world_size),
      order_buffer_(order_buffer),
      rows_(static_cast<std::size_t>(std::max(agents, world_size))) {}

void CostCounter::on_access(const Access& a) {
  const Region& r = a.region;
  if (r.space != Space::Window || r.owner == a.agent % world_) return;
  RankCost& mine = rows_[static_cast<std::size_t>(a.agent)].cost;
  ++mine.rma;
  if (a.kind == AccessKind::Read) {
    mine.bytes_in += r.bytes();
  } else {
    mine.bytes_out += r.bytes();
    rows_[static_cast<std::size_t>(r.owner)].pushed_in.fetch_add(r.bytes(),
                                                                 std::memory_order_relaxed);
  }
}

void CostCounter::on_notify(std::int64_t agent, SiteRef, const Cell& cell, ir::NotifyKind,
                            std::int32_t, std::optional<std::int32_t>) {
  if (cell.buffer == order_buffer_) return;
  RankCost& mine = rows_[static_cast<std::size_t>(agent)].cost;
  ++(cell.owner == agent % world_ ? mine.local_notifies : mine.notifies);
}

void CostCounter::on_wait(std::int64_t agent, SiteRef, const Cell& cell, ir::WaitKind, std::int64_t,
                          std::int32_t) {
  if (cell.buffer == order_buffer_) return;
  ++rows_[static_cast<std::size_t>(agent)].cost.waits;
}

std::vector<RankCost> CostCounter::costs() const {
  std::vector<RankCost> out(static_cast<std::size_t>(world_));
  for (std::size_t a = 0; a < rows_.size(); ++a) {  // a rank's row sums its blocks'
    RankCost& sum = out[a % out.size()];
    sum += rows_[a].cost;
    sum.bytes_in += rows_[a].pushed_in.load(std::memory_order_relaxed);
  }
  return out;
}

}  // namespace anyp::runtime
