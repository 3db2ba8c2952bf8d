// engine.hpp — what runs an Executable: the Engine interface. An engine
// creates one rank VM per rank (or per process), gives them its Fabric (the
// door to its memory), schedules them, and reports how the run ended.
// The threads engine (engines/threads/) runs every rank in this process;
// the MPI engine (engines/mpi/) one rank per MPI process.
//
//   EngineResult r = engine.run(exec, host_args, options, observers);
//   if (!r.failure.empty()) ... r.deadlocked tells a deadlock report from a
//   rank's run-time error.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "anyp/host_tensor.hpp"
#include "runtime/access_observer.hpp"
#include "runtime/executable.hpp"
#include "runtime/footprint.hpp"

namespace anyp::runtime {

class ScheduleScript;  // schedule_script.hpp

// Which ready rank runs next.
struct Schedule {
  enum class Kind : std::uint8_t {
    Free,    // every worker takes the oldest ready rank (FIFO)
    Random,  // one worker; the next rank drawn uniformly with `seed` (replayable)
    Pct,     // one worker; PCT (Burckhardt et al., ASPLOS 2010): random rank
             // priorities from `seed`, `depth` - 1 priority change points over
             // `steps` counted steps; a step is one visible op (window access,
             // notify, wait attempt) taken while two or more ranks were ready
    Script,  // one worker, op by op; `script` picks every step and sees its footprint
  } kind = Kind::Free;
  std::uint64_t seed = 0;
  int depth = 1;
  std::int64_t steps = 0;
  ScheduleScript* script = nullptr;  // Script: owned by the caller
};

// Window memory an engine keeps between the runs of one anyp::Session
// (persistent windows): a run on it starts from what the previous run left.
class PersistentWindows {
 public:
  virtual ~PersistentWindows() = default;
  // Zeroes every window byte (and signal cell) before the next run. On a
  // multi-process engine every process must call it.
  virtual void reset() = 0;
};

struct EngineOptions {
  int workers = 1;  // Free schedule only
  Schedule schedule;
  std::int64_t preempt_budget = 4096;  // instructions before a rank is preempted
  // From make_persistent_windows() of this engine and program, or null: the
  // run's windows start zeroed and are given up at its end.
  PersistentWindows* windows = nullptr;
};

struct EngineResult {
  std::string failure;  // "" or the report: a rank's run-time error, or a deadlock
  bool deadlocked = false;
  std::int64_t instructions = 0;    // VM instructions executed, all ranks
  std::int64_t parks = 0;           // times a rank parked on a wait
  std::int64_t preemptions = 0;     // times a rank was preempted
  std::int64_t schedule_steps = 0;  // PCT: steps counted (two or more ranks ready)
  int workers = 0;
  std::int64_t vms_at_most = 0;  // the most rank VMs alive at once in this process
};

class Engine {
 public:
  virtual ~Engine() = default;
  // Runs every rank's dispatches to completion, a run-time error, or a
  // deadlock. host_args[i] is argument i (nullptr for scalars, which are
  // compiled in). Observers are attached to the engine's fabric.
  virtual EngineResult run(const Executable& exec, std::span<const HostTensor* const> host_args,
                           const EngineOptions& options, const Observers& observers) = 0;
  // "" or why this engine cannot run `exec` here (a configuration error,
  // e.g. an MPI world whose size is not the program's P). Every process
  // gets the same answer.
  virtual std::string check(const Executable& /*exec*/) const { return ""; }
  // What a run of `exec` holds in this process on this engine: its windows
  // (unless options.windows persist them) and their book-keeping, and the
  // rank VMs (runtime/footprint.hpp).
  virtual void add_footprint(const Executable& exec, const EngineOptions& options,
                             Footprint& out) const = 0;
  // Window memory for runs of `exec` that persists between them, zeroed.
  // Collective on a multi-process engine (every process makes it, and
  // destroys it, together).
  virtual std::unique_ptr<PersistentWindows> make_persistent_windows(
      const Executable& exec) const = 0;
  // After run(): adds `counters` element-wise over the engine's processes,
  // so that every process holds the sums. An engine whose ranks share one
  // process (threads) has nothing to add; on the MPI engine each process
  // counted only its own rank's accesses.
  virtual void sum_over_processes(std::span<std::int64_t> /*counters*/) const {}
  // After run(): every process's `mine`, in process order (one process:
  // just `mine`). The modeled timeline gathers each rank's events with it.
  virtual std::vector<std::string> gather_over_processes(const std::string& mine) const {
    return {mine};
  }
  // Whether the engine's ranks run in more than one process (then the
  // figures a process collected are only its own ranks' part).
  virtual bool spans_processes() const { return false; }
};

}  // namespace anyp::runtime
