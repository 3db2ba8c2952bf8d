// agent_vms.cpp — rank VMs made on an agent's first slice and freed at its
// end (agent_vms.hpp).
#include "engines/threads/agent_vms.hpp"

namespace anyp::threads {

AgentVms::AgentVms(std::int64_t agents, const runtime::RunContext* ctx)
    : ctx_(ctx), vms_(static_cast<std::size_t>(agents)), world_(ctx->exec->world_size) {}

runtime::RankVm& AgentVms::vm(std::int64_t agent) {
  std::unique_ptr<runtime::RankVm>& slot = vms_[static_cast<std::size_t>(agent)];
  if (!slot) {
    slot = std::make_unique<runtime::RankVm>(agent, ctx_);
    const std::int64_t alive = alive_.fetch_add(1, std::memory_order_relaxed) + 1;
    std::int64_t most = most_alive_.load(std::memory_order_relaxed);
    while (alive > most &&
           !most_alive_.compare_exchange_weak(most, alive, std::memory_order_relaxed)) {
    }
  }
  return *slot;
}

void AgentVms::finish(std::int64_t agent) {
  std::unique_ptr<runtime::RankVm>& slot = vms_[static_cast<std::size_t>(agent)];
  finished_instructions_.fetch_add(slot->instructions(), std::memory_order_relaxed);
  slot.reset();
  alive_.fetch_sub(1, std::memory_order_relaxed);
}

bool AgentVms::idle(std::int64_t agent) const {
  if (agent < world_) return false;  // block 0 runs the rank's dispatches
  const auto& slot = vms_[static_cast<std::size_t>(agent)];
  return slot == nullptr || slot->idle();
}

std::int64_t AgentVms::instructions() const {
  std::int64_t total = finished_instructions_.load(std::memory_order_relaxed);
  for (const auto& slot : vms_)
    if (slot) total += slot->instructions();
  return total;
}

}  // namespace anyp::threads
