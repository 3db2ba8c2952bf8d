// mpi_engine.hpp — the MPI engine: one rank per MPI process, on Open MPI's
// one-sided communication. Every process has compiled the same program (a
// hash of the window layout is checked at start-up), runs its own rank's
// dispatches on one RankVm over an MpiFabric, and takes part in the
// quiescence waves that end the run. Then the processes exchange what one
// process alone does not know, so every process ends with the same result:
// the host-tensor bytes each rank wrote (the outputs), the builtin
// collective calls (matched across ranks, as the threads engine does as
// they happen), and for a failed run the failing rank's message or, for a
// deadlock, every rank's wait and what each rank's notifies did to it, in
// the threads engine's report format.
#pragma once

#include "runtime/engine.hpp"

namespace anyp::mpi {

class MpiEngine final : public runtime::Engine {
 public:
  runtime::EngineResult run(const runtime::Executable& exec,
                            std::span<const HostTensor* const> host_args,
                            const runtime::EngineOptions& options,
                            const runtime::Observers& observers) override;
  std::string check(const runtime::Executable& exec) const override;
  void add_footprint(const runtime::Executable& exec, const runtime::EngineOptions& options,
                     runtime::Footprint& out) const override;
  void sum_over_processes(std::span<std::int64_t> counters) const override;
  std::vector<std::string> gather_over_processes(const std::string& mine) const override;
  bool spans_processes() const override { return true; }
  // A window of the session's own (not the process's kept one, which other
  // programs' runs reuse), allocated collectively.
  std::unique_ptr<runtime::PersistentWindows> make_persistent_windows(
      const runtime::Executable& exec) const override;
};

// anyp::process_world and anyp::engine_details for "mpi".
int world_rank();
int world_size();
std::string details();

}  // namespace anyp::mpi
