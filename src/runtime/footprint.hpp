// footprint.hpp — what a run will need in memory, computed from the plan
// before it runs: the engine's windows and their book-keeping (each engine
// adds its own: Engine::add_footprint), the rank VMs' registers and tiles,
// and, under the race checker, its vector clocks, shadow words and cell
// credits (race/race_checker.hpp). A run whose footprint exceeds the memory
// available is refused before it starts (api/compiled_program.cpp), and
// `--cost` prints the footprint. The parts are estimates where the run
// decides (tile registers: the largest tile of the code in every register;
// cell credits: about one cell per peer per signal buffer), exact elsewhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/executable.hpp"

namespace anyp::runtime {

struct MemoryPart {
  std::string what;  // "windows", "race checker: cell credits", ...
  double bytes = 0;
  std::string detail;  // "4 ranks × 5.8 KiB; largest buffer 'signal' [6, 4] INT32, 96 B per rank"
};

struct Footprint {
  std::vector<MemoryPart> parts;
  void add(std::string what, double bytes, std::string detail = "");
  double total() const;
  // "46.1 KiB: windows 23.0 KiB (4 ranks × 5.8 KiB; ...), rank VMs 2.1 KiB"
  std::string text() const;
};

// The windows of every rank: P × window bytes, with the largest buffer named.
void add_window_footprint(const Executable& exec, std::int64_t ranks_here, Footprint& out);
// The rank VMs of `agents_here` agents: registers and tiles of the largest
// code. The most a run can hold: the threads engine makes an agent's VM at
// its start and frees it at its end (all are alive under a barrier).
void add_vm_footprint(const Executable& exec, std::int64_t agents_here, Footprint& out);

}  // namespace anyp::runtime
