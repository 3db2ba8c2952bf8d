// hot_path_bench.cpp — run time of steps 07 (ring get) and 11 (builtin mesh
// all-reduce) through the public API only, so the same source builds against
// any revision of anyp: bench/run_hot_path.sh builds it against a baseline
// revision and the working tree and compares them in one go.
//
//   hot_path_bench --benchmark_filter=Step07    Google Benchmark, wall clock
//   hot_path_bench --runs 7 1024 N              compile once, then N runs on one
//                                               worker (for callgrind: instructions
//                                               per run, free of the machine's noise)
#include <benchmark/benchmark.h>

#include <string>

#include "programs/ladder_programs.hpp"

namespace {

void BM_Run(benchmark::State& state, int step) {
  const bench::Prepared p = bench::prepare(step, state.range(0));
  for (auto _ : state) p.run();
}

BENCHMARK_CAPTURE(BM_Run, Step07Get, 7)
    ->ArgName("P")
    ->Arg(4)
    ->Arg(1024)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Run, Step11Mesh, 11)
    ->ArgName("P")
    ->Arg(4)
    ->Arg(64)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--runs") {
    anyp::RunConfig one_worker;
    one_worker.workers = 1;
    const bench::Prepared p = bench::prepare(std::stoi(argv[2]), std::stoll(argv[3]), one_worker);
    for (int i = 0, n = std::stoi(argv[4]); i < n; ++i) p.run();
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
