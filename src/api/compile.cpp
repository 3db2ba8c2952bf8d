// compile.cpp — HostFunction::compile and the compile cache's public face:
// validate the RunConfig (platform, devices, engine, schedule), then run the
// cached pipeline (compiler/pipeline.hpp) on the traced IR and wrap the plan;
// pl::Program::compile, the entry by name.
#include <algorithm>
#include <memory>
#include <new>
#include <set>

#include "anyp/compiled_program.hpp"
#include "anyp/errors.hpp"
#include "anyp/pl.hpp"
#include "compiler/bind_dims.hpp"
#include "compiler/pipeline.hpp"
#include "engines/engine_registry.hpp"
#include "frontend/function_def.hpp"

namespace anyp {
namespace {

void validate_config(const RunConfig& config) {
  if (const std::optional<ConfigProblem> problem = check_config(config))
    throw ConfigError(problem->message);
}

}  // namespace

void clear_compile_cache() { compiler::clear_plan_cache(); }

}  // namespace anyp

namespace pl {

std::vector<std::optional<std::vector<std::int64_t>>> HostFunction::parameter_shapes(
    const std::vector<std::optional<anyp::ArgRef>>& args, std::int64_t world_size) const {
  return anyp::compiler::parameter_shapes(*def()->ir(), args, world_size);
}

anyp::CompiledProgram HostFunction::compile(const std::vector<anyp::ArgRef>& args,
                                            const anyp::RunConfig& config) const {
  anyp::validate_config(config);
  std::shared_ptr<const anyp::detail::Plan> plan;
  try {
    plan = anyp::compiler::compile_plan(def()->id(), def()->ir(), args, config);
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

anyp::CompiledProgram Program::compile(const std::string& entry,
                                       const std::vector<anyp::ArgRef>& args,
                                       const anyp::RunConfig& config) const {
  return this->entry(entry).compile(args, config);
}

}  // namespace pl
