// pipeline.cpp — runs the passes in order and caches the resulting plans.
#include "compiler/pipeline.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>

#include "anyp/errors.hpp"
#include "anyp/host_tensor.hpp"
#include "compiler/bind_dims.hpp"
#include "compiler/check_collective_windows.hpp"
#include "compiler/check_functions.hpp"
#include "compiler/layout_windows.hpp"
#include "compiler/lower.hpp"
#include "compiler/mark_signal_buffers.hpp"
#include "compiler/order_dispatches.hpp"
#include "compiler/specialize_host.hpp"
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

// `count` INT32 cells the runtime itself uses: the launch and join cells of
// multi-block launches (Executable::blocks), the dispatch order's cells.
runtime::WindowBuffer engine_cells(const char* name, std::int64_t count) {
  runtime::WindowBuffer b;
  b.name = name;
  b.dtype = DType::INT32;
  b.shape = {count};
  b.used = 4 * count;
  return b;
}

}  // namespace

std::shared_ptr<const detail::Plan> compile_plan(std::uint64_t function_id,
                                                 std::shared_ptr<const ir::Function> host,
                                                 const std::vector<ArgRef>& args,
                                                 const RunConfig& config) {
  const std::string key = cache_key(function_id, args, config);
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    auto it = plan_cache.find(key);
    if (it != plan_cache.end() && it->second->exec.device_ids == config.distributed.device_ids)
      return it->second;
  }
  auto plan = std::make_shared<detail::Plan>();
  plan->program = ir::collect_program(std::move(host));
  ir::verify_program(plan->program);
  const ir::Function& host_ir = *plan->program.host;
  runtime::Executable& exec = plan->exec;
  exec.program = host_ir.name;
  plan->platform = config.platform;
  exec.device_ids = config.distributed.device_ids;
  exec.world_size = static_cast<std::int64_t>(exec.device_ids.size());
  plan->bindings = bind_dims(host_ir, args, exec.world_size);
  plan->host_params = host_param_specs(host_ir, args);
  for (const auto& p : plan->host_params)
    exec.host_args.push_back(runtime::HostArgSpec{p.name, p.is_tensor, p.dtype, p.shape});
  check_parameter_shapes(plan->program, plan->bindings, /*skip_unbound=*/true);
  HostSpecialization spec = specialize_host(host_ir, plan->bindings, args, exec.world_size);
  check_parameter_shapes(plan->program, plan->bindings);  // with the dims dispatches bound
  plan->synthesized = spec.synthesized;
  exec.domains = std::move(spec.domains);
  const CommScope scope{exec.world_size, &exec.domains};
  // Each dispatched function once per distinct list of window domains, in
  // first-dispatch order.
  std::vector<DispatchedFunction> dispatched;
  std::map<DispatchedFunction, std::int32_t> code_of;
  for (const auto& rank : spec.ranks) {
    for (const HostDispatch& d : rank) {
      DispatchedFunction key{d.callee, dispatch_domains(d.args, spec.buffers)};
      if (code_of.emplace(key, static_cast<std::int32_t>(dispatched.size())).second)
        dispatched.push_back(std::move(key));
    }
  }
  check_functions(plan->program, plan->bindings, scope, dispatched);
  // The cost model, read once if an allreduce asks for it (its candidates'
  // estimates, AllreduceMode::Auto's choice).
  std::optional<runtime::CostModel> model;
  const ModelSource model_source = [&]() -> const runtime::CostModel& {
    if (!model) {
      model = config.model_file.empty() ? runtime::platform_cost_model(config.platform)
                                        : runtime::load_cost_model(config.model_file);
    }
    return *model;
  };
  for (const auto& [fn, domains] : dispatched)
    exec.codes.push_back(lower_orchestration(*fn, plan->bindings, scope, domains, model_source));
  if (model) plan->model_name = model->name;
  DispatchOrder order = order_dispatches(spec.ranks);
  exec.ranks.resize(spec.ranks.size());
  for (std::size_t r = 0; r < spec.ranks.size(); ++r) {
    for (std::size_t i = 0; i < spec.ranks[r].size(); ++i) {
      HostDispatch& d = spec.ranks[r][i];
      const std::int32_t code =
          code_of.at(DispatchedFunction{d.callee, dispatch_domains(d.args, spec.buffers)});
      exec.ranks[r].push_back(
          runtime::Dispatch{code, std::move(d.args), std::move(order.waits[r][i]),
                            std::move(order.releases[r][i]), std::move(order.edge_releases[r][i])});
    }
  }
  exec.order_edges = std::move(order.edges);
  for (const runtime::LoweredCode& code : exec.codes)
    for (const runtime::Instr& i : code.instrs)
      if (i.op == runtime::Opcode::BlockLaunch) exec.blocks = std::max(exec.blocks, i.imm);
  const auto next_buffer = [&] { return static_cast<std::int32_t>(spec.buffers.size()); };
  if (exec.blocks > 1) {
    exec.block_buffer = next_buffer();
    spec.buffers.push_back(engine_cells("(block launches)", exec.blocks));
  }
  std::map<std::string, int> scratch_names;        // a repeated name gets " #2", " #3", ...
  for (runtime::LoweredCode& code : exec.codes) {  // pl::create_tensor's storage
    const std::int32_t first = next_buffer();
    for (const runtime::ScratchTensor& t : code.scratch) {
      runtime::WindowBuffer b;
      const int seen = ++scratch_names[t.name];
      b.name = seen == 1 ? t.name : t.name + " #" + std::to_string(seen);
      b.dtype = t.dtype;
      b.shape = t.shape;
      std::int64_t bytes = static_cast<std::int64_t>(dtype_bytes(t.dtype));
      for (std::int64_t e : t.shape) bytes *= e;
      b.used = t.slots * ((bytes + 31) / 32 * 32);
      b.local = !t.shared;
      spec.buffers.push_back(std::move(b));
    }
    for (runtime::Instr& i : code.instrs)
      if (i.op == runtime::Opcode::CreateView) i.imm += first;
  }
  if (order.cells > 0) {
    exec.order_buffer = next_buffer();
    spec.buffers.push_back(engine_cells("(dispatch order)", order.cells));
  }
  exec.window_bytes = layout_windows(spec.buffers);
  exec.buffers = std::move(spec.buffers);
  mark_signal_buffers(exec);
  for (std::int32_t b : {exec.block_buffer, exec.order_buffer}) {
    if (b >= 0) exec.buffers[static_cast<std::size_t>(b)].signal = true;
  }
  // The order cells take AtomicAdd +1 releases and Ge waits only.
  if (exec.order_buffer >= 0)
    exec.buffers[static_cast<std::size_t>(exec.order_buffer)].credit_only = true;
  check_collective_windows(plan->program, exec);
  std::lock_guard<std::mutex> lock(cache_mutex);
  const auto [it, inserted] = plan_cache.emplace(key, plan);
  // Another device list of the same hash keeps its entry: this plan is not cached.
  if (!inserted && it->second->exec.device_ids != config.distributed.device_ids) return plan;
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
