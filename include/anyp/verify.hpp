// verify.hpp — every schedule of a program, up to equivalence: stateless
// model checking with source-DPOR and sleep sets (src/runtime/dpor.hpp)
// over the threads engine's one-worker, op-by-op runs, each run under the
// race checker and the caller's golden check. The example command line's
// --verify is this loop (anyp::cli::run_example); tests call it directly:
//
//   const anyp::VerifyResult r = anyp::verify_schedules(
//       {.config = config, .budget = 1000},
//       [&](const anyp::RunConfig& c) {
//         program.compile({x, y}, c)(x, y);
//         return anyp::ScheduleOutcome{anyp::equal_exact(y, golden) ? 0 : 1};
//       });
//   r.text()  // "verified: 6 traces (6 schedules run, 9 pruned), no deadlock, ..."
//
// Two steps (a step: local work up to one visible op) of different agents
// are dependent when they touch the same bytes and one writes, or one adds
// and the other does not add integers (schedule_script.hpp); a trace is a
// class of schedules equal up to swapping adjacent independent steps. The
// run callback must depend on nothing but its inputs and the schedule.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "anyp/explore.hpp"
#include "anyp/run_config.hpp"

namespace anyp {

struct VerifyOptions {
  // What every run is configured with; verify_schedules adds its schedule
  // and turns check_races on.
  RunConfig config;
  std::int64_t budget = 10000;  // at most this many runs
  // Take floating-point atomic adds to the same bytes as commuting: their
  // orders differ only in rounding, which the golden's tolerance judges, so
  // they are one trace (the text says so). Off: every order is explored.
  bool float_adds_commute = false;
};

struct VerifyResult {
  int code = 0;                // 0: no run failed; else the failing run's (1: a RunError)
  std::int64_t traces = 0;     // distinct traces the runs covered
  std::int64_t schedules = 0;  // runs
  std::int64_t pruned = 0;     // choices left unexplored because equivalent to explored ones
  std::int64_t redundant = 0;  // runs whose tail every ready agent slept through
  bool complete = false;       // every trace was explored (no failure, within the budget)
  std::int64_t budget = 0;
  bool float_adds_commute = false;
  // The failing run's schedule (RunConfig::replay_schedule), unset when
  // none failed; error: its RunError's what(), "" when it returned its code.
  std::optional<std::string> failed_schedule;
  std::string error;

  bool clean() const { return !failed_schedule.has_value(); }
  // "verified: N traces (M schedules run, K pruned), no deadlock, no race,
  // golden holds" ("... K pruned; floating-point adds taken as commuting)"
  // with float_adds_commute), or "not verified: budget of B schedules reached after
  // covering N traces (K pruned); raise the budget", or for a failure
  // "verify: schedule M failed (the exploration had covered N traces, this
  // one's included)".
  std::string text() const;
};

// Runs `run` once per schedule until every trace is covered, a run fails
// (a code other than 0, or a RunError: caught, code 1), or `budget` runs
// were made. Any other exception propagates. Prints nothing.
VerifyResult verify_schedules(const VerifyOptions& options, const ScheduleRun& run);

}  // namespace anyp
