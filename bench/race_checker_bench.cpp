// race_checker_bench.cpp — the race checker's cost: one ladder program
// (bench/programs) at one P, run with or without RunConfig::check_races.
//
//   race_checker_bench STEP P CHECK RUNS [WORKERS]
//     compiles step STEP (7, 8, 11, 11r or 16) at P, runs it RUNS times (after one
//     warm-up run) and prints the median run time in microseconds; RUNS = 0
//     times one run without a warm-up (for large P). CHECK is
//     0 or 1; WORKERS overrides the default worker count. Peak memory is the process's
//     (bench/run_race_checker.sh runs one process per line under /usr/bin/time).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "programs/ladder_programs.hpp"

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: race_checker_bench STEP P CHECK RUNS [WORKERS]\n");
    return 2;
  }
  anyp::RunConfig config;
  config.check_races = std::string(argv[3]) == "1";
  if (argc == 6) config.workers = std::stoi(argv[5]);
  const bench::Prepared p =
      bench::prepare(bench::step_from_name(argv[1]), std::stoll(argv[2]), config);
  const int runs = std::stoi(argv[4]);
  if (runs > 0) p.run();  // the warm-up
  std::vector<double> us;
  for (int i = 0, n = std::max(runs, 1); i < n; ++i) {
    const auto start = std::chrono::steady_clock::now();
    p.run();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(us.begin(), us.end());
  std::printf("%.1f\n", us[us.size() / 2]);
  return 0;
}
