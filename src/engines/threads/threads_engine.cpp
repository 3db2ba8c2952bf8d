// threads_engine.cpp — the default engine: every rank a RankVm inside this
// process, scheduled on min(P, cores) workers over one symmetric heap.
// Implements CompiledProgram::run.
#include <algorithm>
#include <charconv>
#include <thread>

#include "anyp/compiled_program.hpp"
#include "anyp/errors.hpp"
#include "compiler/plan.hpp"
#include "runtime/fabric.hpp"
#include "runtime/rank_vm.hpp"
#include "runtime/scheduler.hpp"

namespace anyp {
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string scalar_text(const detail::ArgScalar& s) {
  if (s.is_int) return std::to_string(s.int_value);
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, s.float_value).ptr);
}

std::vector<const HostTensor*> check_run_args(const detail::Plan& plan,
                                              const std::vector<ArgRef>& args) {
  if (args.size() != plan.host_params.size()) {
    throw RunError("run error: '" + plan.host_name + "' takes " +
                   std::to_string(plan.host_params.size()) + " arguments, got " +
                   std::to_string(args.size()));
  }
  std::vector<const HostTensor*> tensors(args.size(), nullptr);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& p = plan.host_params[i];
    if (!p.is_tensor) {
      const bool is_int = !args[i].is_tensor() && args[i].is_int();
      detail::ArgScalar got{is_int, is_int ? args[i].int_value() : 0,
                            args[i].is_tensor() || is_int ? 0 : args[i].float_value()};
      if (args[i].is_tensor()) {
        throw RunError("run error: argument '" + p.name + "' must be a scalar, got a tensor");
      }
      if (!(got == p.scalar)) {
        throw RunError("run error: scalar argument '" + p.name + "' is " + scalar_text(got) +
                       ", but the program was compiled with " + scalar_text(p.scalar) +
                       "; scalar host arguments are bound at compile time, so compile again");
      }
      continue;
    }
    if (!args[i].is_tensor())
      throw RunError("run error: argument '" + p.name + "' must be a tensor");
    const HostTensor& t = args[i].tensor();
    if (t.shape() != p.shape || t.dtype() != p.dtype) {
      throw RunError("run error: argument '" + p.name + "' is " + shape_text(t.shape()) + " " +
                     std::string(dtype_name(t.dtype())) + ", but the program was compiled for " +
                     shape_text(p.shape) + " " + std::string(dtype_name(p.dtype)) +
                     "; compile again for these arguments");
    }
    tensors[i] = &t;
  }
  return tensors;
}

}  // namespace

RankCost& RankCost::operator+=(const RankCost& o) {
  bytes_in += o.bytes_in;
  bytes_out += o.bytes_out;
  rma += o.rma;
  notifies += o.notifies;
  local_notifies += o.local_notifies;
  waits += o.waits;
  return *this;
}

RankCost RunStats::total() const {
  RankCost sum;
  for (const auto& c : cost) sum += c;
  return sum;
}

RunStats CompiledProgram::run(const std::vector<ArgRef>& args) const {
  const detail::Plan& plan = *plan_;
  const std::vector<const HostTensor*> host_args = check_run_args(plan, args);
  runtime::Fabric fabric(plan.world_size, plan.window_bytes);
  std::vector<runtime::RankVm> vms;
  vms.reserve(static_cast<std::size_t>(plan.world_size));
  std::vector<std::atomic<std::int64_t>> pushed_in(static_cast<std::size_t>(plan.world_size));
  runtime::RunContext ctx{&plan.codes, &plan.buffers, &host_args, &plan.device_ids,
                          &fabric,     nullptr,       &pushed_in};
  for (std::int64_t r = 0; r < plan.world_size; ++r)
    vms.emplace_back(r, &plan.ranks[static_cast<std::size_t>(r)], &ctx);
  std::vector<runtime::RankVm*> ptrs;
  for (auto& vm : vms) ptrs.push_back(&vm);
  runtime::SchedulerOptions options;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.workers = config_.workers > 0
                        ? config_.workers
                        : static_cast<int>(std::min<std::int64_t>(plan.world_size, cores));
  options.deterministic = config_.deterministic;
  options.seed = config_.schedule_seed;
  options.budget = config_.preempt_budget;
  runtime::Scheduler scheduler(ptrs, options, fabric.window(0), plan.window_bytes);
  ctx.scheduler = &scheduler;
  const std::string failure = scheduler.run();
  RunStats stats;
  for (const auto& vm : vms) {
    stats.instructions += vm.instructions();
    stats.cost.push_back(vm.cost());
    stats.cost.back().bytes_in += pushed_in[stats.cost.size() - 1].load();
  }
  stats.parks = scheduler.parks();
  stats.preemptions = scheduler.preemptions();
  stats.workers = options.deterministic ? 1 : options.workers;
  if (!failure.empty()) {
    if (scheduler.deadlocked()) throw DeadlockError(failure);
    throw RunError(failure);
  }
  return stats;
}

}  // namespace anyp
