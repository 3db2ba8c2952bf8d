// agent_vms.hpp — the threads engine's rank VMs, one per agent, made when
// the agent first runs and freed when it finishes, so a run holds the VMs
// of the agents that have started and not finished (the running and the
// parked ones), not one per agent for its whole length: a ring at
// P = 4 million keeps a handful alive (docs/performance.md, "Footprint per
// rank"). An agent's slot is touched only by the worker running it, so
// no lock is needed; the run lock's hand-offs order successive workers.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/rank_vm.hpp"

namespace anyp::threads {

class AgentVms {
 public:
  AgentVms(std::int64_t agents, const runtime::RunContext* ctx);

  std::int64_t size() const { return static_cast<std::int64_t>(vms_.size()); }
  // The agent's VM, made on its first call (by the worker about to run it).
  runtime::RankVm& vm(std::int64_t agent);
  // The agent finished: its VM's instructions are counted and it is freed.
  void finish(std::int64_t agent);
  // A block other than 0 between launches, or one not yet started.
  bool idle(std::int64_t agent) const;
  // Every agent's instructions, finished or not (after the run).
  std::int64_t instructions() const;
  // The most VMs alive at once.
  std::int64_t most_alive() const { return most_alive_; }

 private:
  const runtime::RunContext* ctx_;
  std::vector<std::unique_ptr<runtime::RankVm>> vms_;
  std::int64_t world_;
  // Changed by the running workers (relaxed: read after the run).
  std::atomic<std::int64_t> alive_{0}, most_alive_{0}, finished_instructions_{0};
};

}  // namespace anyp::threads
