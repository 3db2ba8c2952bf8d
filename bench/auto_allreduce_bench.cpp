// auto_allreduce_bench.cpp — anyp's side of bench/run_auto_vs_mpi.sh in one
// process (the threads engine): µs per builtin allreduce (Sum, FP32, in
// place) with a given mode, (T(R) - T(0)) / R with the loop inside one
// kernel as mpi_allreduce.c's, each T the median of 5 runs after a warm-up,
// on `--workers` workers; for Auto the algorithm it chose on the platform
// model (RunConfig::platform, a2a3sim unless --platform).
//
//   auto_allreduce_bench [--ps 4,8,...] [--floats 960,...] [--modes auto,mesh,...]
//                        [--workers 2] [--platform a2a3sim]
// One line per point:
//   "anyp_allreduce mode=<m> P=<P> floats=<n> rounds=<R> chose=<alg> us_per_round=<t>"
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_lists.hpp"
#include "programs/allreduce_rounds.hpp"
#include "timing.hpp"

namespace {

// Rounds that keep a point near a second: fewer for large vectors.
std::int64_t rounds_for(std::int64_t floats, std::int64_t P) {
  const std::int64_t bytes = floats * 4 * P;
  if (bytes <= (1 << 20)) return 100;
  if (bytes <= (16 << 20)) return 20;
  return 4;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"µs per builtin allreduce in one process (threads engine)"};
  std::string ps_text = "4,8,16,32,64", floats_text = "960,16384,262144,1048576",
              modes_text = "auto", platform = "a2a3sim";
  int workers = 2;
  app.add_option("--ps", ps_text, "World sizes")->capture_default_str();
  app.add_option("--floats", floats_text, "FP32 elements per rank")->capture_default_str();
  app.add_option("--modes", modes_text, "mesh, ring, recursive_doubling, rabenseifner, tree, auto")
      ->capture_default_str();
  app.add_option("--workers", workers, "Worker threads")->capture_default_str();
  app.add_option("--platform", platform, "The model Auto chooses on")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  std::vector<std::int64_t> ps, floats_list;
  try {
    ps = anyp_bench::positive_integers(ps_text, "--ps");
    floats_list = anyp_bench::positive_integers(floats_text, "--floats");
  } catch (const CLI::Error& e) {
    return app.exit(e);
  }
  for (const std::string& name : anyp_bench::comma_items(modes_text)) {
    pld::AllreduceMode mode{};
    if (!bench::allreduce_mode_named(name, mode)) {
      std::fprintf(stderr, "auto_allreduce_bench: unknown mode '%s'\n", name.c_str());
      return 2;
    }
    for (const std::int64_t P : ps) {
      for (const std::int64_t floats : floats_list) {
        anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
        config.workers = workers;
        config.platform = platform;
        const std::int64_t rounds = rounds_for(floats, P);
        anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, 1}, pl::FP32);
        auto zero = bench::allreduce_rounds(floats, 0, mode).compile({x}, config);
        auto full = bench::allreduce_rounds(floats, rounds, mode).compile({x}, config);
        auto median_run = [&](anyp::CompiledProgram& c) {
          c(x);  // warm-up
          return anyp_bench::median_of(5, [&] { return anyp_bench::seconds([&] { c(x); }) * 1e6; });
        };
        const double t0 = median_run(zero), tr = median_run(full);
        std::printf(
            "anyp_allreduce mode=%s P=%lld floats=%lld rounds=%lld chose=%s "
            "us_per_round=%.3f\n",
            name.c_str(), static_cast<long long>(P), static_cast<long long>(floats),
            static_cast<long long>(rounds), bench::auto_choice(full, name).c_str(),
            (tr - t0) / static_cast<double>(rounds));
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
