// tile_math_rounds.hpp — a compute-bound program for the tests and benches
// of the threads engine's workers (tests/runtime/workers_test.cpp,
// bench/data_path_bench.cpp): every rank loads x[r] [1, elements] FP32,
// then `rounds` times acc = acc * x + x, and stores acc to y[r]. Two tile
// ops over `elements` per round and a few loop instructions; no
// communication. Host signature: x, y [NR, 1, elements] FP32.
#pragma once

#include <anyp/anyp.hpp>
#include <cstdint>

namespace anyp_test {

pl::HostFunction tile_math_rounds(std::int64_t elements, std::int64_t rounds);

}  // namespace anyp_test
