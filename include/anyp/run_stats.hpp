// run_stats.hpp — what one run reports: RankCost per rank (a cost-card
// row), the run's counters, its modeled timeline and its planned memory.
// The runtime's cost counter fills RankCost; CompiledProgram::run returns
// RunStats.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "anyp/timeline.hpp"

namespace anyp {

// What one rank moved through peer windows in a run (a cost card row).
// Self-accesses are local and not counted as RMA or bytes.
// A push (put, remote_store) counts as bytes_out for the sender and bytes_in
// for the receiver; a pull (get, remote_load) as bytes_in for the puller.
struct RankCost {
  std::int64_t bytes_in = 0;        // payload that reached this rank from peers
  std::int64_t bytes_out = 0;       // payload this rank pushed into peers' windows
  std::int64_t rma = 0;             // remote data ops issued
  std::int64_t notifies = 0;        // notifies to other ranks
  std::int64_t local_notifies = 0;  // notifies to itself (collective epilogues: "+E")
  std::int64_t waits = 0;           // waits completed
  RankCost& operator+=(const RankCost& o);
  bool operator==(const RankCost&) const = default;
};

// Counters of the last run.
struct RunStats {
  std::vector<RankCost> cost;  // one per rank
  RankCost total() const;
  std::int64_t instructions = 0;    // VM instructions executed, all ranks
  std::int64_t parks = 0;           // times a rank parked on a wait
  std::int64_t preemptions = 0;     // times a rank was preempted
  std::int64_t schedule_steps = 0;  // PCT: steps with two or more ranks ready
  int workers = 0;
  // The most rank VMs alive at once in this process: on the threads engine
  // an agent's VM exists from its first slice to its end (a ring at any P
  // keeps a few; a barrier all P); on the MPI engine, this process's agents.
  std::int64_t vms_at_most = 0;
  // The engine's wall-clock time for the run (arguments in, every rank to
  // its end, outputs out), in this process: a measurement, never the same
  // twice. `--verbose` prints it.
  double run_seconds = 0;
  // With RunConfig::timeline: the run on the cost model's clock.
  std::shared_ptr<const Timeline> timeline;
  // The run's memory as computed from the plan before it ran (in each
  // process, on the MPI engine): windows, the engine's book-keeping, the rank
  // VMs and, when checked, the race checker. `--cost` prints it.
  struct MemoryPart {
    std::string what;  // "windows", "race checker: cell credits", ...
    double bytes = 0;
    std::string detail;  // "4 ranks × 5.8 KiB; largest buffer ..."
  };
  std::vector<MemoryPart> memory;
  // The memory block of the cost card: "memory (this process, planned before the run): 46.4 KiB",
  // then a line per part; "" without parts.
  std::string memory_text() const;
  // The program's collectives (CompiledProgram::collective_choices() and
  // collective_table()), for the command line's --cost, --timeline and
  // --explain-collectives.
  std::string collective_choices;
  std::string collective_table;
};

}  // namespace anyp
