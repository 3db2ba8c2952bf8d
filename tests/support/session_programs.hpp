// session_programs.hpp — the programs the session tests run many times
// (tests/runtime/session_test.cpp on the threads engine,
// tests/mpi/sessions_agree.cpp on both engines): each keeps state in a
// window or a tensor, so a run's answer shows what the previous run left.
#pragma once

#include <anyp/anyp.hpp>
#include <cstdint>

namespace anyp_test {

inline constexpr std::int64_t kSessionRow = 16;  // FP32 elements per rank

// x [NR, 1, 16] -> y: each rank adds x into its window `acc` and copies the
// window to y. Fresh windows give y = x; persistent ones y = x * (run number).
const pl::HostFunction& accumulate_program();
// x -> y = the Sum allreduce of x (builtin, self-clearing).
const pl::HostFunction& allreduce_program();
// x -> y = the left neighbour's x: each rank stages x, raises its right
// neighbour's flag by 1 and waits for its own flag >= 1 before reading the
// left neighbour's window. The flag is never lowered, so on persistent
// windows without a reset a second run's wait passes on the first run's
// credit: the race checker reports the read.
const pl::HostFunction& handoff_program();
// x, w (InOut) -> y = x * w, then w = w * 2: state in a tensor.
const pl::HostFunction& scale_program();

}  // namespace anyp_test
