// cost_counter.hpp — the cost card (RankCost per rank) as an observer of
// the door. A data access to another rank's window is one RMA op of the
// issuing rank: a read adds its bytes to the issuer's bytes_in, a write (or
// atomic add) to the issuer's bytes_out and the owner's bytes_in. A put or
// get is a local and a remote access, so it counts once. Accesses to the
// own window and to host tensors count nothing. A notify counts as
// `notifies` (to a peer) or `local_notifies` (to itself: "+E"), a satisfied
// wait as `waits`. The dispatch order's cells (Executable::order_buffer:
// PyPTO's host scheduler, not the program's signals) count nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "anyp/run_stats.hpp"
#include "runtime/access_observer.hpp"

namespace anyp::runtime {

class CostCounter final : public AccessObserver {
 public:
  // `agents`: Executable::agents (a row each; a rank's blocks sum into its
  // card); `order_buffer`: Executable::order_buffer.
  CostCounter(std::int64_t world_size, std::int64_t agents, std::int32_t order_buffer);

  void on_access(const Access& access) override;
  void on_notify(std::int64_t agent, SiteRef site, const Cell& cell, ir::NotifyKind kind,
                 std::int32_t value, std::optional<std::int32_t> result) override;
  void on_wait(std::int64_t agent, SiteRef site, const Cell& cell, ir::WaitKind cmp,
               std::int64_t expected, std::int32_t value) override;

  // One row per rank; call after the run.
  std::vector<RankCost> costs() const;

 private:
  // An agent's row is written only by the worker running that agent;
  // bytes pushed into it by others arrive through `pushed_in`.
  struct alignas(64) Row {
    RankCost cost;
    std::atomic<std::int64_t> pushed_in{0};
  };
  std::int64_t world_;
  std::int32_t order_buffer_;
  std::vector<Row> rows_;  // per agent
};

}  // namespace anyp::runtime
