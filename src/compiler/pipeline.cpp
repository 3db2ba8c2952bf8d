// pipeline.cpp — runs the passes in order and caches the resulting plans.
#include "compiler/pipeline.hpp"

#include <charconv>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>

#include "anyp/host_tensor.hpp"
#include "compiler/passes.hpp"
#include "ir/verifier.hpp"

namespace anyp::compiler {
namespace {

std::mutex cache_mutex;
std::map<std::string, std::shared_ptr<const detail::Plan>> plan_cache;

// The text of a file ("" when it cannot be read: the compile's own read
// of the model reports that).
std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string cache_key(std::uint64_t function_id, const std::vector<ArgRef>& args,
                      const RunConfig& config) {
  // By the function's id, not its address: a destroyed function's address
  // can be reused by a new one, which must not hit the old plan.
  // The devices by count and FNV-1a hash (a list of P numbers is the key's
  // largest part at large P); a hit compares the plan's list itself.
  std::uint64_t hash = 1469598103934665603ull;
  for (auto d : config.distributed.device_ids) {
    auto v = static_cast<std::uint64_t>(d);
    for (int b = 0; b < 8; ++b, v >>= 8) hash = (hash ^ (v & 0xff)) * 1099511628211ull;
  }
  // A model file by its text (AllreduceMode::Auto's choices follow it; the
  // same path may hold another model later).
  const std::string model =
      config.model_file.empty()
          ? std::string()
          : std::to_string(std::hash<std::string>{}(file_text(config.model_file)));
  std::string key = std::to_string(function_id) + "|" + config.platform + "|" + model + "|" +
                    std::to_string(config.distributed.device_ids.size()) + ":" +
                    std::to_string(hash);
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

std::shared_ptr<const detail::Plan> compile_plan(std::uint64_t function_id,
                                                 std::shared_ptr<const ir::Function> host,
                                                 const std::vector<ArgRef>& args,
                                                 const RunConfig& config) {
  const std::string key = cache_key(function_id, args, config);
  if (!config.dump_ir) {  // --dump-ir compiles again, to print each pass
    std::lock_guard<std::mutex> lock(cache_mutex);
    auto it = plan_cache.find(key);
    if (it != plan_cache.end() && it->second->exec.device_ids == config.distributed.device_ids)
      return it->second;
  }
  PassState state;
  state.args = &args;
  state.config = &config;
  state.plan = std::make_shared<detail::Plan>();
  detail::Plan& plan = *state.plan;
  plan.program = ir::collect_program(std::move(host));
  plan.platform = config.platform;
  plan.exec.device_ids = config.distributed.device_ids;
  plan.exec.world_size = static_cast<std::int64_t>(plan.exec.device_ids.size());
  for (const Pass& pass : compile_passes()) {
    pass.run(state);
    if (config.dump_ir) std::cerr << pass_dump(pass, state) << std::flush;
  }
  std::shared_ptr<const detail::Plan> done = std::move(state.plan);
  std::lock_guard<std::mutex> lock(cache_mutex);
  const auto [it, inserted] = plan_cache.emplace(key, done);
  // Another device list of the same hash keeps its entry: this plan is not cached.
  if (!inserted && it->second->exec.device_ids != config.distributed.device_ids) return done;
  return it->second;
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
