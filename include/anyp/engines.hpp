// engines.hpp — the engines this build has, and the processes an engine
// runs on. "threads" runs every rank in this one process; "mpi" (built when
// Open MPI was found) runs one rank per MPI process, so a program started
// with `mpirun -n 4 prog --engine mpi` has P = 4, and process r runs rank r.
//
//   anyp::ProcessWorld world = anyp::process_world("mpi");  // MPI_Init here
//   auto config = anyp::RunConfig::for_world_size(world.size);
//   config.engine = "mpi";
//   ... compile and run as usual; after a run every process holds the same
//   outputs, so print from world.rank == 0 only.
#pragma once

#include <string>
#include <vector>

namespace anyp {

struct ProcessWorld {
  int rank = 0;  // this process
  int size = 1;  // processes in the engine's world
};

// What an engine can do: the API, sessions and the command line ask these
// instead of comparing engine names.
struct EngineTraits {
  std::string name;                   // "threads", "mpi"
  bool in_build = false;              // compiled into this build
  bool ranks_in_one_process = false;  // every rank a VM in this process (else one per process)
  bool schedulable = false;           // worker pool and chosen schedules (deterministic, PCT)
  bool race_checkable = false;        // RunConfig::check_races (needs every rank in one process)
  bool async_submit = false;          // Session::submit returns before its run ends
  // Why a run cannot use it ("" when it can): not in this build.
  std::string unavailable;
};

// Every engine anyp knows, built or not, in a fixed order ("threads", "mpi").
const std::vector<EngineTraits>& engine_table();
// The traits of `name`, or nullptr for a name anyp does not know.
const EngineTraits* engine_traits(const std::string& name);

// "threads", then "mpi" when this build has it.
std::vector<std::string> available_engines();

// The process world of `engine`: {0, 1} for "threads"; MPI_COMM_WORLD for
// "mpi" (MPI is started on the first call and finalised when the process
// exits). Throws anyp::ConfigError for an engine this build does not have.
ProcessWorld process_world(const std::string& engine);

// One line about how the engine moves data, for --verbose, e.g. "engine
// mpi: Open MPI v4.1.4, osc component rdma, unified memory model, 4
// processes on 2 cores (oversubscribed)". Collective on the MPI engine:
// every process must call it.
std::string engine_details(const std::string& engine);

}  // namespace anyp
