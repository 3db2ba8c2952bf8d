// allreduce_rounds.hpp — the builtin allreduce in a loop, for the benchmarks
// that time it against MPI_Allreduce (data_path_bench, mpi_exchange_bench,
// auto_allreduce_bench): `rounds` times, the allreduce (Sum) of the window
// data [1, floats] FP32 in place, in one kernel, with the algorithm `mode`
// (the ring on its [2(NR - 1), NR] signal, every other on [NR, 1]). Host
// signature: x [NR, 1, 1] FP32 (unused; it carries P).
#pragma once

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

namespace bench {

pl::HostFunction allreduce_rounds(std::int64_t floats, std::int64_t rounds,
                                  pld::AllreduceMode mode);

// "mesh", "ring", "recursive_doubling", "rabenseifner", "tree", "auto";
// false for another name.
bool allreduce_mode_named(const std::string& name, pld::AllreduceMode& mode);

// The algorithm Auto chose for the program's first allreduce (from
// collective_choices()), or `pinned` when no call is Auto's.
std::string auto_choice(const anyp::CompiledProgram& compiled, const std::string& pinned);

}  // namespace bench
