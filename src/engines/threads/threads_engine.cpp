// threads_engine.cpp — one run on the threads engine: the heap, the agents'
// VMs (made as they start, freed as they finish), the collective tracker,
// and the runner joined to the fabric's signal table.
#include "engines/threads/threads_engine.hpp"

#include "common/internal_check.hpp"
#include "engines/threads/agent_vms.hpp"
#include "engines/threads/heap_fabric.hpp"
#include "engines/threads/runner.hpp"
#include "runtime/collective_tracker.hpp"
#include "runtime/rank_vm.hpp"
#include "runtime/schedule_script.hpp"

namespace anyp::threads {
namespace {

// A session's heap: one block for every run, zeroed only by reset().
class PersistentHeap final : public runtime::PersistentWindows {
 public:
  explicit PersistentHeap(const runtime::Executable& exec)
      : exec_(exec), block_(HeapFabric::block_bytes(exec)) {}
  // The pool takes back zeroed blocks only.
  ~PersistentHeap() override { reset(); }
  void reset() override { HeapFabric::zero_written(exec_, block_.data(), true); }
  std::byte* data() const { return block_.data(); }
  const runtime::Executable* exec() const { return &exec_; }

 private:
  const runtime::Executable& exec_;
  PooledBlock block_;
};

}  // namespace

std::unique_ptr<runtime::PersistentWindows> ThreadsEngine::make_persistent_windows(
    const runtime::Executable& exec) const {
  return std::make_unique<PersistentHeap>(exec);
}

void ThreadsEngine::add_footprint(const runtime::Executable& exec,
                                  const runtime::EngineOptions& options,
                                  runtime::Footprint& out) const {
  if (options.windows == nullptr) {
    runtime::add_window_footprint(exec, exec.world_size, out);
    out.add("notify record", static_cast<double>(HeapFabric::notify_record_bytes(exec)),
            "a 4-byte slot per word of the signal buffers, a bit per 64-byte line");
  }
  runtime::add_vm_footprint(exec, exec.agents(), out);
}

runtime::EngineResult ThreadsEngine::run(const runtime::Executable& exec,
                                         std::span<const HostTensor* const> host_args,
                                         const runtime::EngineOptions& options,
                                         const runtime::Observers& observers) {
  std::byte* persistent = nullptr;
  if (options.windows != nullptr) {
    auto* heap = dynamic_cast<PersistentHeap*>(options.windows);
    ANYP_CHECK(heap != nullptr && heap->exec() == &exec,
               "persistent windows of another engine or program");
    persistent = heap->data();
  }
  HeapFabric fabric(exec, host_args, persistent);
  // The engine's own cells start every run at 0, also on persistent windows
  // (a failed run may have left them set).
  if (persistent != nullptr) {
    for (std::int32_t b : {exec.block_buffer, exec.order_buffer})
      if (b >= 0) fabric.zero_buffer(b);
  }
  // A scripted schedule sees every step's footprint.
  runtime::Observers all = observers;
  if (options.schedule.kind == runtime::Schedule::Kind::Script) {
    options.schedule.script->start_engine_run(persistent == nullptr);
    all.attach(options.schedule.script);
  }
  fabric.set_observers(all);
  runtime::CollectiveTracker collectives(exec);
  // One VM per agent: a rank's blocks share its window (exec.blocks > 1).
  std::vector<runtime::LaunchSlot> launches(
      exec.blocks > 1 ? static_cast<std::size_t>(exec.world_size) : 0);
  const runtime::RunContext ctx{&exec, &fabric, &collectives,
                                launches.empty() ? nullptr : launches.data()};
  AgentVms vms(exec.agents(), &ctx);
  const bool free = options.schedule.kind == runtime::Schedule::Kind::Free;
  const int workers = free ? options.workers : 1;
  SignalTable& signals = fabric.signals();
  // What the deadlock report lists: every agent that waits for something
  // (not finished, and not a block idle between launches).
  Runner runner(vms, make_policy(options.schedule, exec.agents(), exec.world_size), workers,
                options.preempt_budget, [&](const std::vector<char>& done) {
                  const std::span<const char> finished(done.data(),
                                                       static_cast<std::size_t>(exec.world_size));
                  return signals.deadlock_report(
                      [&](std::int64_t agent) {
                        return !done[static_cast<std::size_t>(agent)] && !vms.idle(agent);
                      },
                      collectives.unfinished_calls(finished));
                });
  signals.connect(&runner);
  runtime::EngineResult result;
  result.failure = runner.run();
  result.deadlocked = runner.deadlocked();
  if (result.failure.empty()) {
    const std::string unbalanced = collectives.unbalanced_calls();
    if (!unbalanced.empty()) result.failure = "run error: " + unbalanced;
  }
  result.instructions = vms.instructions();
  result.vms_at_most = vms.most_alive();
  result.parks = runner.parks();
  result.preemptions = runner.preemptions();
  result.schedule_steps = runner.steps();
  result.workers = runner.workers_used();
  return result;
}

}  // namespace anyp::threads
