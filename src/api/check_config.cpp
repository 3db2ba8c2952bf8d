// check_config.cpp — what is wrong with a RunConfig (run_config.hpp): the
// checks compile() makes first and the example command line shares.
// Platforms are the shipped cost models' (models/*.model); a platform name
// whose "<name>sim" is shipped is real hardware, which anyp does not drive.
// What an engine can do comes from its traits (engines.hpp).
#include <algorithm>
#include <functional>
#include <set>
#include <stdexcept>

#include "anyp/engines.hpp"
#include "anyp/run_config.hpp"
#include "engines/engine_registry.hpp"
#include "runtime/schedule_script.hpp"
#include "runtime/timeline/platform_models.hpp"

namespace anyp {
namespace {

std::optional<ConfigProblem> platform_problem(const std::string& platform) {
  std::vector<std::string> shipped;
  for (const runtime::PlatformModelText& m : runtime::platform_model_texts())
    shipped.emplace_back(m.platform);
  if (std::find(shipped.begin(), shipped.end(), platform) != shipped.end()) return std::nullopt;
  std::string supported = "supported platforms: ";
  for (std::size_t i = 0; i < shipped.size(); ++i) supported += (i ? ", " : "") + shipped[i];
  if (std::find(shipped.begin(), shipped.end(), platform + "sim") != shipped.end()) {
    return ConfigProblem{"platform", "platform '" + platform +
                                         "' is real Ascend hardware, which anyp does not drive; " +
                                         supported};
  }
  return ConfigProblem{"platform", "unknown platform '" + platform + "'; " + supported};
}

std::optional<ConfigProblem> device_problem(const std::vector<std::int64_t>& ids) {
  const std::string field = "distributed.device_ids";
  if (ids.empty())
    return ConfigProblem{field, "the device list is empty: give at least one device id"};
  for (auto id : ids)
    if (id < 0) return ConfigProblem{field, "device id " + std::to_string(id) + " is negative"};
  // Checked on every compile (the cache hit's cost at large P): a strictly
  // increasing list, the usual one, has no repeat; any other is scanned for
  // its first repeat in list order.
  if (std::adjacent_find(ids.begin(), ids.end(), std::greater_equal<>()) == ids.end())
    return std::nullopt;
  std::set<std::int64_t> seen;
  for (auto id : ids) {
    if (!seen.insert(id).second)
      return ConfigProblem{field, "device " + std::to_string(id) + " is listed twice"};
  }
  return std::nullopt;
}

// What the chosen engine cannot do of what the config asks.
std::optional<ConfigProblem> engine_problem(const RunConfig& config) {
  const EngineTraits* e = engine_traits(config.engine);
  if (!e || !e->in_build)
    return ConfigProblem{"engine", engines::unavailable_message(config.engine)};
  const std::string why = "' runs one rank per process: ";
  if (config.check_races && !e->race_checkable) {
    return ConfigProblem{"check_races",
                         "check_races: the race checker needs every rank in one process (engine "
                         "'threads'); engine '" +
                             config.engine + why +
                             "check the program on the threads engine, then run it here"};
  }
  if ((config.deterministic || config.pct.enabled || !config.replay_schedule.empty()) &&
      !e->schedulable) {
    return ConfigProblem{
        config.pct.enabled     ? "pct"
        : config.deterministic ? "deterministic"
                               : "replay_schedule",
        "deterministic, pct and replayed schedules pick which rank runs next, on engine "
        "'threads' only; engine '" +
            config.engine + why + "the operating system schedules them"};
  }
  if (config.workers > 1 && !e->schedulable) {
    return ConfigProblem{"workers",
                         "workers: engine '" + config.engine + why + "no worker pool to size"};
  }
  return std::nullopt;
}

std::optional<ConfigProblem> schedule_problem(const RunConfig::Pct& pct, bool deterministic,
                                              const std::string& replay) {
  if (!replay.empty()) {
    if (pct.enabled || deterministic) {
      return ConfigProblem{"replay_schedule", std::string("replay_schedule and ") +
                                                  (pct.enabled ? "pct" : "deterministic") +
                                                  " are two schedules; choose one"};
    }
    try {
      runtime::parse_schedule(replay);
    } catch (const std::invalid_argument& e) {
      return ConfigProblem{"replay_schedule", std::string("replay_schedule: ") + e.what() +
                                                  " (the agents in order, comma-separated)"};
    }
  }
  if (!pct.enabled) return std::nullopt;
  if (deterministic) {
    return ConfigProblem{"pct",
                         "pct and deterministic (schedule_seed) are two schedules; choose one"};
  }
  if (pct.depth < 1) {
    return ConfigProblem{"pct.depth",
                         "pct.depth must be at least 1, got " + std::to_string(pct.depth)};
  }
  if (pct.steps < 0) {
    return ConfigProblem{"pct.steps",
                         "pct.steps must not be negative, got " + std::to_string(pct.steps)};
  }
  return std::nullopt;
}

// The task records are files under output_dir: a switch without one would
// write nothing. Names the first switch that is on.
std::optional<ConfigProblem> task_records_problem(const RunConfig& config) {
  if (!config.writes_task_records() || !config.output_dir.empty()) return std::nullopt;
  const char* field = config.enable_dep_gen       ? "enable_dep_gen"
                      : config.enable_scope_stats ? "enable_scope_stats"
                                                  : "enable_chip_swimlane";
  return ConfigProblem{field, std::string(field) +
                                  " writes its records under output_dir "
                                  "(<output_dir>/dfx_outputs/rank<r>/d<k>/), which is empty: "
                                  "set output_dir"};
}

}  // namespace

std::optional<ConfigProblem> check_config(const RunConfig& config) {
  if (auto p = platform_problem(config.platform)) return p;
  if (auto p = device_problem(config.distributed.device_ids)) return p;
  if (config.preempt_budget <= 0) {
    return ConfigProblem{"preempt_budget", "preempt_budget must be positive, got " +
                                               std::to_string(config.preempt_budget)};
  }
  if (std::find(kTimelineDetails.begin(), kTimelineDetails.end(), config.timeline_detail) ==
      kTimelineDetails.end()) {
    std::string names;
    for (std::size_t i = 0; i < kTimelineDetails.size(); ++i)
      names += std::string(i == 0                             ? ""
                           : i + 1 == kTimelineDetails.size() ? " or "
                                                              : ", ") +
               kTimelineDetails[i];
    return ConfigProblem{"timeline_detail", "timeline_detail must be " + names + ", got '" +
                                                config.timeline_detail + "'"};
  }
  if (config.memory_limit < 0) {
    return ConfigProblem{"memory_limit",
                         "memory_limit must be 0 (what the machine has) or positive, got " +
                             std::to_string(config.memory_limit)};
  }
  if (config.workers < 0) {
    return ConfigProblem{"workers", "workers must be 0 (automatic) or positive, got " +
                                        std::to_string(config.workers)};
  }
  if (auto p = engine_problem(config)) return p;
  if (auto p = task_records_problem(config)) return p;
  return schedule_problem(config.pct, config.deterministic, config.replay_schedule);
}

}  // namespace anyp
