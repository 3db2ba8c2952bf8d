// pipeline.cpp — runs the passes in order and caches the resulting plans.
#include "compiler/pipeline.hpp"

#include <charconv>
#include <map>
#include <mutex>
#include <set>

#include "anyp/errors.hpp"
#include "compiler/bind_dims.hpp"
#include "compiler/check_functions.hpp"
#include "compiler/layout_windows.hpp"
#include "compiler/lower.hpp"
#include "compiler/specialize_host.hpp"
#include "ir/verifier.hpp"

namespace anyp::compiler {
namespace {

std::mutex cache_mutex;
std::map<std::string, std::shared_ptr<const detail::Plan>> plan_cache;

std::string cache_key(const detail::FunctionDef& host, const std::vector<ArgRef>& args,
                      const RunConfig& config) {
  // By the function's id, not its address: a destroyed function's address
  // can be reused by a new one, which must not hit the old plan.
  std::string key = std::to_string(host.id()) + "|" + config.platform + "|";
  for (auto d : config.distributed.device_ids) key += std::to_string(d) + ",";
  for (const ArgRef& a : args) {
    key += "|";
    if (a.is_tensor()) {
      key += std::string(dtype_name(a.tensor().dtype()));
      for (auto e : a.tensor().shape()) key += ":" + std::to_string(e);
    } else if (a.is_int()) {
      key += "i" + std::to_string(a.int_value());
    } else {
      char buf[32];
      const auto end = std::to_chars(buf, buf + sizeof buf, a.float_value()).ptr;
      key += "f" + std::string(buf, end);
    }
  }
  return key;
}

}  // namespace

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
  if (config.workers < 0) {
    throw ConfigError("workers must be 0 (automatic) or positive, got " +
                      std::to_string(config.workers));
  }
  if (config.engine != "threads") {
    throw ConfigError("engine '" + config.engine +
                      "' is not available; supported engines: threads");
  }
}

std::shared_ptr<const detail::Plan> compile_plan(const detail::FunctionDef& host,
                                                 const std::vector<ArgRef>& args,
                                                 const RunConfig& config) {
  validate_config(config);
  const std::string key = cache_key(host, args, config);
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    auto it = plan_cache.find(key);
    if (it != plan_cache.end()) return it->second;
  }
  auto plan = std::make_shared<detail::Plan>();
  plan->program = ir::collect_program(host.ir());
  ir::verify_program(plan->program);
  const ir::Function& host_ir = *plan->program.host;
  plan->host_name = host_ir.name;
  plan->platform = config.platform;
  plan->device_ids = config.distributed.device_ids;
  plan->world_size = static_cast<std::int64_t>(plan->device_ids.size());
  plan->bindings = bind_dims(host_ir, args, plan->world_size);
  plan->host_params = host_param_specs(host_ir, args);
  check_functions(plan->program, plan->bindings);
  HostSpecialization spec = specialize_host(host_ir, plan->bindings, args, plan->world_size);
  plan->synthesized = spec.synthesized;
  plan->window_bytes = layout_windows(spec.buffers);
  plan->buffers = std::move(spec.buffers);
  std::map<const ir::Function*, std::int32_t> code_of;
  plan->ranks.resize(spec.ranks.size());
  for (std::size_t r = 0; r < spec.ranks.size(); ++r) {
    for (HostDispatch& d : spec.ranks[r]) {
      auto it = code_of.find(d.callee);
      if (it == code_of.end()) {
        plan->codes.push_back(lower_orchestration(*d.callee, plan->bindings));
        it = code_of.emplace(d.callee, static_cast<std::int32_t>(plan->codes.size() - 1)).first;
      }
      plan->ranks[r].push_back(runtime::Dispatch{it->second, std::move(d.args)});
    }
  }
  std::lock_guard<std::mutex> lock(cache_mutex);
  return plan_cache.emplace(key, std::move(plan)).first->second;
}

void clear_plan_cache() {
  std::lock_guard<std::mutex> lock(cache_mutex);
  plan_cache.clear();
}

std::size_t plan_cache_size() {
  std::lock_guard<std::mutex> lock(cache_mutex);
  return plan_cache.size();
}

}  // namespace anyp::compiler

namespace anyp {
void clear_compile_cache() { compiler::clear_plan_cache(); }
}  // namespace anyp

namespace pl {

anyp::CompiledProgram HostFunction::compile(const std::vector<anyp::ArgRef>& args,
                                            const anyp::RunConfig& config) const {
  anyp::CompiledProgram compiled(anyp::compiler::compile_plan(*def(), args, config), config);
  if (!config.output_dir.empty()) compiled.write_artifact(config.output_dir);
  return compiled;
}

}  // namespace pl
