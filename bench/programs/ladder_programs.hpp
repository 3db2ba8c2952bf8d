// ladder_programs.hpp — four ladder programs for the benchmarks, and step
// 07's exchange in a loop (ring_rounds), through the public API only (so
// bench/compare can build them against any revision):
//   7   step 07's ring get (SIZE 64)
//   8   step 08's hand-written mesh all-reduce (960 FP32, hbar + remote loads)
//   11  step 11's builtin mesh all-reduce (960 FP32, Sum)
//   11r step 11's builtin all-reduce in ring mode (kStep11Ring)
//   16  step 16 in shared mode (broadcast, mesh all-reduce and all-gather on one signal)
// The examples themselves stay standalone lessons; these are their kernels.
//
//   bench::Prepared p = bench::prepare(8, 64, config);   // compiles once
//   p.run();                                             // one run
#pragma once

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace bench {

struct Prepared {
  anyp::CompiledProgram compiled;
  std::vector<anyp::HostTensor> args;
  anyp::RunStats run() const;
};

// Step 07's exchange in a loop: `rounds` times, every rank moves its x [1,
// floats] FP32 into the right neighbour's window (a put, or with `staged`
// a load into a tile and a remote_store), notifies it (AtomicAdd 1) and
// waits for its own cell to reach the round number. Host signature: x
// [NR, 1, floats]. For data_path_bench and mpi_exchange_bench.
pl::HostFunction ring_rounds(std::int64_t floats, std::int64_t rounds, bool staged = false);

// Step 11 with AllreduceMode::Ring, named "11r".
constexpr int kStep11Ring = 1101;
// The steps prepare() knows: 7, 8, 11, 11r, 16.
const std::vector<int>& ladder_steps();
// "7", "11r", …, and back (std::invalid_argument for an unknown name).
std::string step_name(int step);
int step_from_name(const std::string& name);
// Compiles step `step` at P with `config`'s options (its device list is replaced).
Prepared prepare(int step, std::int64_t P, anyp::RunConfig config = {});

}  // namespace bench
