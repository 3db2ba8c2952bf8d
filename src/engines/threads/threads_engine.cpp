// threads_engine.cpp — one run on the threads engine: the heap, one VM per
// rank, the collective tracker and the scheduler.
#include "engines/threads/threads_engine.hpp"

#include "engines/threads/heap_fabric.hpp"
#include "engines/threads/scheduler.hpp"
#include "runtime/collective_tracker.hpp"
#include "runtime/rank_vm.hpp"

namespace anyp::threads {

runtime::EngineResult ThreadsEngine::run(const runtime::Executable& exec,
                                         std::span<const HostTensor* const> host_args,
                                         const runtime::EngineOptions& options,
                                         const runtime::Observers& observers) {
  HeapFabric fabric(exec, host_args);
  fabric.set_observers(observers);
  runtime::CollectiveTracker collectives(exec);
  const runtime::RunContext ctx{&exec, &fabric, &collectives};
  std::vector<runtime::RankVm> vms;
  vms.reserve(static_cast<std::size_t>(exec.world_size));
  for (std::int64_t r = 0; r < exec.world_size; ++r) vms.emplace_back(r, &ctx);
  std::vector<runtime::RankVm*> ranks;
  for (auto& vm : vms) ranks.push_back(&vm);
  const bool free = options.schedule.kind == runtime::Schedule::Kind::Free;
  const int workers = free ? options.workers : 1;
  Scheduler scheduler(ranks, make_policy(options.schedule, exec.world_size), workers,
                      options.preempt_budget, fabric.heap(), exec.window_bytes,
                      fabric.notify_slots(), [&collectives](std::span<const char> finished) {
                        return collectives.unfinished_calls(finished);
                      });
  fabric.set_scheduler(&scheduler);
  runtime::EngineResult result;
  result.failure = scheduler.run();
  result.deadlocked = scheduler.deadlocked();
  if (result.failure.empty()) {
    const std::string unbalanced = collectives.unbalanced_calls();
    if (!unbalanced.empty()) result.failure = "run error: " + unbalanced;
  }
  for (const auto& vm : vms) result.instructions += vm.instructions();
  result.parks = scheduler.parks();
  result.preemptions = scheduler.preemptions();
  result.schedule_steps = scheduler.steps();
  result.workers = scheduler.workers_used();
  return result;
}

}  // namespace anyp::threads
