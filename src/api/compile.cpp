// compile.cpp — HostFunction::compile and the compile cache's public face:
// validate the RunConfig (platform, devices, engine, schedule), then run the
// cached pipeline (compiler/pipeline.hpp) and wrap the plan.
#include <algorithm>
#include <memory>
#include <new>
#include <set>

#include "anyp/errors.hpp"
#include "anyp/pl.hpp"
#include "compiler/pipeline.hpp"
#include "engines/engine_registry.hpp"

namespace anyp {
namespace {

void validate_config(const RunConfig& config) {
  const std::string supported = "supported platforms: a2a3sim, a5sim";
  if (config.platform == "a2a3" || config.platform == "a5") {
    throw ConfigError("platform '" + config.platform +
                      "' is real Ascend hardware, which anyp does not drive; " + supported);
  }
  if (config.platform != "a2a3sim" && config.platform != "a5sim") {
    throw ConfigError("unknown platform '" + config.platform + "'; " + supported);
  }
  const auto& ids = config.distributed.device_ids;
  if (ids.empty()) throw ConfigError("the device list is empty: give at least one device id");
  std::set<std::int64_t> seen;
  for (auto id : ids) {
    if (id < 0) throw ConfigError("device id " + std::to_string(id) + " is negative");
    if (!seen.insert(id).second)
      throw ConfigError("device " + std::to_string(id) + " is listed twice");
  }
  if (config.preempt_budget <= 0) {
    throw ConfigError("preempt_budget must be positive, got " +
                      std::to_string(config.preempt_budget));
  }
  if (config.memory_limit < 0) {
    throw ConfigError("memory_limit must be 0 (what the machine has) or positive, got " +
                      std::to_string(config.memory_limit));
  }
  if (config.workers < 0) {
    throw ConfigError("workers must be 0 (automatic) or positive, got " +
                      std::to_string(config.workers));
  }
  const std::vector<std::string> engines = engines::engine_names();
  if (std::find(engines.begin(), engines.end(), config.engine) == engines.end())
    throw ConfigError(engines::unavailable_message(config.engine));
  if (config.engine != "threads") {
    // The checker and the schedules need every rank in one process.
    const std::string why = "' runs one rank per process: ";
    if (config.check_races) {
      throw ConfigError(
          "check_races: the race checker needs every rank in one process (engine "
          "'threads'); engine '" +
          config.engine + why + "check the program on the threads engine, then run it here");
    }
    if (config.deterministic || config.pct.enabled) {
      throw ConfigError(
          "deterministic and pct schedules pick which rank runs next, on engine "
          "'threads' only; engine '" +
          config.engine + why + "the operating system schedules them");
    }
    if (config.workers > 1) {
      throw ConfigError("workers: engine '" + config.engine + why + "no worker pool to size");
    }
  }
  if (config.pct.enabled) {
    if (config.deterministic) {
      throw ConfigError("pct and deterministic (schedule_seed) are two schedules; choose one");
    }
    if (config.pct.depth < 1) {
      throw ConfigError("pct.depth must be at least 1, got " + std::to_string(config.pct.depth));
    }
    if (config.pct.steps < 0) {
      throw ConfigError("pct.steps must not be negative, got " + std::to_string(config.pct.steps));
    }
  }
}

}  // namespace

void clear_compile_cache() { compiler::clear_plan_cache(); }

}  // namespace anyp

namespace pl {

anyp::CompiledProgram HostFunction::compile(const std::vector<anyp::ArgRef>& args,
                                            const anyp::RunConfig& config) const {
  anyp::validate_config(config);
  std::shared_ptr<const anyp::detail::Plan> plan;
  try {
    plan = anyp::compiler::compile_plan(*def(), args, config);
  } catch (const std::bad_alloc&) {
    throw anyp::CompileError(
        "compile error: out of memory (std::bad_alloc) while compiling '" + def()->name() +
        "' for P = " + std::to_string(config.distributed.device_ids.size()) +
        "; the plan (its dispatch lists and lowered code) does not fit: compile at a smaller P");
  }
  anyp::CompiledProgram compiled(std::move(plan), config);
  if (!config.output_dir.empty()) compiled.write_artifact(config.output_dir);
  return compiled;
}

}  // namespace pl
