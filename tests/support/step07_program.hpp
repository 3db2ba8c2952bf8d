// step07_program.hpp — the seed program (ladder step 07: a ring shift whose
// host signature names the rank count NR = pl::dynamic("NR")) for tests that
// need it: golden IR, runs at many P, run statistics. A copy of
// examples/distributed/07_dynamic_rank_count.cpp (tests may not include an
// example), with x[r] and y[r] bound before the dispatch so the traced IR is
// the same under every C++ compiler.
// Golden: get y[r] = x[(r+1) % P], put y[r] = x[(r-1) mod P]; both exact.
#pragma once

#include <anyp/anyp.hpp>
#include <cstdint>

namespace anyp_test {

inline constexpr std::int64_t kStep07Size = 64;

const pl::HostFunction& ring_put();
const pl::HostFunction& ring_get();

// Compiles the ring (get or put) for P ranks with `config` (devices
// replaced) and runs it on seeded inputs; the stats of the run. Throws
// std::runtime_error naming the rank and element of a wrong answer.
anyp::RunStats run_ring(bool get, std::int64_t P, anyp::RunConfig config = {});

}  // namespace anyp_test
