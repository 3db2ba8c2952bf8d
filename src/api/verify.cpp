// verify.cpp — the loop of verify_schedules (anyp/verify.hpp): one run per
// schedule the DPOR explorer (src/runtime/dpor.hpp) chooses.
#include "anyp/verify.hpp"

#include <memory>

#include "anyp/errors.hpp"
#include "runtime/dpor.hpp"

namespace anyp {

VerifyResult verify_schedules(const VerifyOptions& options, const ScheduleRun& run) {
  VerifyResult result;
  result.budget = options.budget;
  auto explorer = std::make_shared<runtime::DporExplorer>();
  explorer->set_float_adds_commute(options.float_adds_commute);
  result.float_adds_commute = options.float_adds_commute;
  RunConfig config = options.config;
  config.check_races = true;
  config.schedule_script = explorer;
  for (;;) {
    if (result.schedules >= options.budget) break;
    explorer->begin_run();
    ScheduleOutcome outcome;
    try {
      outcome = run(config);
    } catch (const RunError& e) {  // DeadlockError, RaceError too
      outcome.code = 1;
      result.error = e.what();
    }
    ++result.schedules;
    explorer->end_run();
    result.traces = explorer->traces();
    result.redundant = explorer->blocked_runs();
    if (outcome.code != 0) {
      result.code = outcome.code;
      result.failed_schedule = explorer->last_schedule();
      result.pruned = explorer->pruned();
      return result;
    }
    if (!explorer->advance()) {
      result.complete = true;
      break;
    }
  }
  result.pruned = explorer->pruned();
  return result;
}

std::string VerifyResult::text() const {
  auto n = [](std::int64_t v, const char* one, const char* many) {
    return std::to_string(v) + " " + (v == 1 ? one : many);
  };
  if (failed_schedule) {
    return "verify: schedule " + std::to_string(schedules) +
           " failed (the exploration had covered " + n(traces, "trace", "traces") +
           ", this one's included)";
  }
  const std::string adds = float_adds_commute ? "; floating-point adds taken as commuting" : "";
  if (complete) {
    return "verified: " + n(traces, "trace", "traces") + " (" +
           n(schedules, "schedule", "schedules") + " run, " + std::to_string(pruned) + " pruned" +
           adds + "), no deadlock, no race, golden holds";
  }
  return "not verified: budget of " + n(budget, "schedule", "schedules") +
         " reached after covering " + n(traces, "trace", "traces") + " (" + std::to_string(pruned) +
         " pruned" + adds + "); raise the budget";
}

}  // namespace anyp
