// explore.hpp — schedule exploration: a program run under a calibration
// schedule and then N PCT schedules (RunConfig::pct), stopping at the first
// run that fails, so that a race, a deadlock or a wrong answer that shows
// only in some interleavings is found, with the schedule that replays it
// (docs/race-checker.md). The example command line's --explore N is this
// loop (anyp::cli::run_example); tests and scripts call it directly:
//
//   const anyp::ExploreResult r = anyp::explore_schedules(
//       {.config = config, .schedules = 100},
//       [&](const anyp::RunConfig& c) {
//         const anyp::RunStats stats = program.compile({x, y}, c)(x, y);
//         return anyp::ScheduleOutcome{anyp::equal_exact(y, golden) ? 0 : 1,
//                                      stats.schedule_steps};
//       });
//   if (!r.clean()) ...  // r.failed: the RunConfig::pct that replays it
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "anyp/run_config.hpp"

namespace anyp {

struct ExploreOptions {
  // What every run is configured with; explore_schedules sets its pct.
  RunConfig config;
  int schedules = 1;  // N: PCT seeds 1..N, after the calibration
  int depth = 3;      // D: the PCT depth of seeds 1..N
};

// What one run did, as the caller judges it.
struct ScheduleOutcome {
  int code = 0;                     // 0: passed; anything else: failed (ExploreResult::code)
  std::int64_t schedule_steps = 0;  // the run's RunStats::schedule_steps
};

struct ExploreResult {
  // 0 when every schedule passed, else the failing run's code (1 when it
  // threw a RunError).
  int code = 0;
  // The schedules of seeds 1..N that passed: N when clean, i - 1 when seed
  // i failed, 0 when the calibration did.
  int schedules_passed = 0;
  // K: the calibration's schedule_steps, the steps seeds 1..N draw their
  // change points over (0 when the calibration failed).
  std::int64_t steps = 0;
  // The schedule of the run that failed, which replays it; unset when clean.
  // The calibration is {seed 0, depth 1, steps 0}, seed i is {i, D, K}.
  std::optional<RunConfig::Pct> failed;
  // The what() of the RunError (DeadlockError, RaceError) the failing run
  // threw; "" when it returned its code.
  std::string error;

  bool clean() const { return !failed.has_value(); }
};

// One run of the program under `config`.
using ScheduleRun = std::function<ScheduleOutcome(const RunConfig& config)>;

// Runs `run` under options.config with pct {enabled, seed 0, depth 1,
// steps 0} (the calibration: its schedule_steps give K), then with PCT seeds
// 1..N at depth D over K steps, in order, and stops at the first run that
// returns a code other than 0 or throws a RunError (caught: code 1). Any
// other exception (CompileError, ConfigError, ...) propagates. Prints
// nothing.
ExploreResult explore_schedules(const ExploreOptions& options, const ScheduleRun& run);

}  // namespace anyp
