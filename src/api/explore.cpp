// explore.cpp — schedule exploration (anyp/explore.hpp): a calibration run,
// then PCT seeds 1..N, up to the first run that fails.
#include "anyp/explore.hpp"

#include "anyp/errors.hpp"

namespace anyp {

ExploreResult explore_schedules(const ExploreOptions& options, const ScheduleRun& run) {
  ExploreResult result;
  RunConfig config = options.config;
  // One run under config.pct: its outcome, a RunError it throws being a
  // failure (code 1). True when it passed; else the result says why.
  auto passes = [&](ScheduleOutcome& outcome) {
    try {
      outcome = run(config);
    } catch (const RunError& e) {  // DeadlockError, RaceError too
      outcome.code = 1;
      result.error = e.what();
    }
    if (outcome.code == 0) return true;
    result.code = outcome.code;
    result.failed = config.pct;
    return false;
  };
  ScheduleOutcome outcome;
  config.pct = RunConfig::Pct{true, 0, 1, 0};  // the calibration: depth 1 counts the steps
  if (!passes(outcome)) return result;
  result.steps = outcome.schedule_steps;
  for (int i = 1; i <= options.schedules; ++i) {
    config.pct = RunConfig::Pct{true, static_cast<std::uint64_t>(i), options.depth, result.steps};
    if (!passes(outcome)) return result;
    ++result.schedules_passed;
  }
  return result;
}

}  // namespace anyp
