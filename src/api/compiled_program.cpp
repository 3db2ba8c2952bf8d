// compiled_program.cpp — CompiledProgram, whole: a plan plus the caller's
// RunConfig. Running checks the arguments against the plan, picks the
// engine, attaches the observers (the cost counter always; the race checker
// under RunConfig::check_races) and turns the outcome into RunStats or an
// exception. The artifact texts come from compiler/artifact.hpp.
#include "anyp/compiled_program.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <iomanip>
#include <mutex>
#include <sstream>

#include "anyp/errors.hpp"
#include "api/dfx_files.hpp"
#include "common/machine.hpp"
#include "common/memory_available.hpp"
#include "compiler/artifact.hpp"
#include "compiler/collective_report.hpp"
#include "compiler/plan.hpp"
#include "engines/engine_registry.hpp"
#include "runtime/cost_counter.hpp"
#include "runtime/footprint.hpp"
#include "runtime/race/race_checker.hpp"
#include "runtime/schedule_script.hpp"
#include "runtime/timeline/cost_model.hpp"
#include "runtime/timeline/simulate.hpp"
#include "runtime/timeline/timeline_recorder.hpp"

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

// The host tensors of a run, checked against the plan (nullptr for scalars).
std::vector<const HostTensor*> check_run_args(const detail::Plan& plan,
                                              const std::vector<ArgRef>& args) {
  const std::string& name = plan.exec.program;
  if (args.size() != plan.host_params.size()) {
    throw RunError("run error: '" + name + "' takes " + std::to_string(plan.host_params.size()) +
                   " arguments, got " + std::to_string(args.size()));
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

// The most the race checker's vector clocks may take (A² entries of 4 B).
constexpr double kMaxRaceClockBytes = 8.0 * (1 << 30);

// Its clocks: one entry per agent (rank, or rank and block) for every agent.
void check_race_clocks(const runtime::Executable& exec) {
  const double clock_bytes =
      4.0 * static_cast<double>(exec.agents()) * static_cast<double>(exec.agents());
  if (clock_bytes <= kMaxRaceClockBytes) return;
  throw ConfigError(
      "check_races: the race checker keeps a vector clock per agent, with an entry per "
      "agent; P = " +
      std::to_string(exec.world_size) + " ranks × " + std::to_string(exec.blocks) +
      " blocks = " + std::to_string(exec.agents()) + " agents need " +
      std::to_string(static_cast<std::int64_t>(clock_bytes / (1 << 30))) +
      " GiB of clocks (at most 8 GiB); check the program at a smaller P or with fewer blocks");
}

// `agents`: the VMs of the run (Executable::agents: the ranks, times their
// blocks in a multi-block program), the most workers that can be busy.
runtime::EngineOptions engine_options(const RunConfig& config, std::int64_t agents) {
  runtime::EngineOptions options;
  const int cores = machine_cores();
  // The race checker serialises every access under its one lock, so by
  // default a checked run uses one worker: a second would only contend
  // (2-2.6x slower at P = 256, bench/run_race_checker.sh).
  const int automatic =
      config.check_races ? 1 : static_cast<int>(std::min<std::int64_t>(agents, cores));
  options.workers = static_cast<int>(
      std::min<std::int64_t>(config.workers > 0 ? config.workers : automatic, agents));
  options.preempt_budget = config.preempt_budget;
  if (config.pct.enabled) {
    options.schedule = runtime::Schedule{runtime::Schedule::Kind::Pct, config.pct.seed,
                                         config.pct.depth, config.pct.steps};
  } else if (config.deterministic) {
    options.schedule = runtime::Schedule{runtime::Schedule::Kind::Random, config.schedule_seed};
  }
  return options;
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

CompiledProgram::CompiledProgram(std::shared_ptr<const detail::Plan> plan, RunConfig config)
    : plan_(std::move(plan)), config_(std::move(config)) {}

int CompiledProgram::world_size() const { return static_cast<int>(plan_->exec.world_size); }
const std::string& CompiledProgram::platform() const { return plan_->platform; }

std::string CompiledProgram::symbolic_ir() const { return compiler::symbolic_ir_text(*plan_); }
std::string CompiledProgram::specialized_ir() const {
  return compiler::specialized_ir_text(*plan_);
}
std::string CompiledProgram::window_layout() const { return compiler::window_layout_text(*plan_); }
std::string CompiledProgram::lowered_code() const { return compiler::lowered_code_text(*plan_); }
std::string CompiledProgram::manifest_json() const { return compiler::manifest_json_text(*plan_); }
std::string CompiledProgram::collective_choices() const {
  return compiler::collective_choices_text(*plan_);
}
std::vector<CompiledProgram::HostTensorUse> CompiledProgram::host_tensor_uses() const {
  const runtime::Executable& exec = plan_->exec;
  std::vector<HostTensorUse> uses;
  for (std::size_t r = 0; r < exec.ranks.size(); ++r) {
    for (const runtime::Dispatch& d : exec.ranks[r]) {
      const runtime::LoweredCode& code = exec.codes[static_cast<std::size_t>(d.code)];
      for (const runtime::ArgBinding& a : d.args) {
        if (a.kind != runtime::ArgBinding::Kind::HostTensor) continue;
        std::int64_t bytes = static_cast<std::int64_t>(dtype_bytes(a.dtype));
        for (std::int64_t e : a.shape) bytes *= e;
        uses.push_back(HostTensorUse{static_cast<std::int64_t>(r), a.host_param, a.byte_offset,
                                     bytes, code.function, !code.host_workers.empty()});
      }
    }
  }
  return uses;
}

std::string CompiledProgram::collective_table() const {
  return compiler::collective_table_text(*plan_);
}

void CompiledProgram::write_artifact(const std::string& dir) {
  compiler::write_artifact(*plan_, dir);
  output_dir_ = dir;
}

RunStats CompiledProgram::run(const std::vector<ArgRef>& args) const {
  std::unique_ptr<runtime::Engine> engine = engines::make_engine(config_.engine);
  if (!engine) throw ConfigError(engines::unavailable_message(config_.engine));
  return run_with(*engine, nullptr, args);
}

namespace {

std::mutex g_listener_mutex;
RunListener g_listener;

void tell_listener(const RunConfig& config, const RunStats& stats) {
  std::lock_guard<std::mutex> lock(g_listener_mutex);
  if (g_listener) g_listener(config, stats);
}

}  // namespace

void set_run_listener(RunListener listener) {
  std::lock_guard<std::mutex> lock(g_listener_mutex);
  g_listener = std::move(listener);
}

namespace {

// Refuses a run whose footprint exceeds the memory available, in every
// process of the engine alike (a process that ran on while another refused
// would wait for it forever).
void refuse_if_too_large(const runtime::Engine& engine, const runtime::Footprint& footprint,
                         const std::optional<MemoryAvailable>& available, bool checked) {
  const bool too_large = available && footprint.total() > static_cast<double>(available->bytes);
  std::int64_t refusing[1] = {too_large ? 1 : 0};
  engine.sum_over_processes(refusing);
  if (refusing[0] == 0) return;
  const std::string fix =
      std::string("run at a smaller P") + (checked ? ", or without the race checker" : "");
  if (!too_large) {
    throw RunError("run error: out of memory: " + std::to_string(refusing[0]) +
                   " of the run's processes have less memory available than this run needs "
                   "in each (" +
                   footprint.text() + "); " + fix);
  }
  throw RunError("run error: out of memory: this run needs about " + bytes_text(footprint.total()) +
                 " and " + bytes_text(static_cast<double>(available->bytes)) + " is available (" +
                 available->source + "); it needs " + footprint.text() + "; " + fix);
}

}  // namespace

RunStats CompiledProgram::run_with(runtime::Engine& engine, runtime::PersistentWindows* windows,
                                   const std::vector<ArgRef>& args) const {
  const runtime::Executable& exec = plan_->exec;
  const std::vector<const HostTensor*> host_args = check_run_args(*plan_, args);
  if (const std::string why = engine.check(exec); !why.empty()) throw ConfigError(why);
  runtime::EngineOptions options = engine_options(config_, exec.agents());
  options.windows = windows;
  // A replayed schedule (checked by check_config) or verify_schedules' explorer.
  std::unique_ptr<runtime::ReplayScript> replay;
  if (config_.schedule_script) {
    options.schedule = runtime::Schedule{runtime::Schedule::Kind::Script};
    options.schedule.script = config_.schedule_script.get();
  } else if (!config_.replay_schedule.empty()) {
    replay =
        std::make_unique<runtime::ReplayScript>(runtime::parse_schedule(config_.replay_schedule));
    options.schedule = runtime::Schedule{runtime::Schedule::Kind::Script};
    options.schedule.script = replay.get();
  }
  runtime::Footprint footprint;
  engine.add_footprint(exec, options, footprint);
  const double beside_checker = footprint.total();
  if (config_.check_races) runtime::race::RaceChecker::add_footprint(exec, footprint);
  std::optional<MemoryAvailable> available = memory_available();
  if (config_.memory_limit > 0 && (!available || config_.memory_limit < available->bytes)) {
    available = MemoryAvailable{config_.memory_limit,
                                "the run's memory limit, RunConfig::memory_limit (--memory-limit)"};
  }
  if (config_.check_races) check_race_clocks(exec);
  refuse_if_too_large(engine, footprint, available, config_.check_races);
  try {
    RunStats stats =
        run_planned(engine, options, host_args,
                    available ? static_cast<double>(available->bytes) - beside_checker : 0);
    for (const runtime::MemoryPart& p : footprint.parts)
      stats.memory.push_back(RunStats::MemoryPart{p.what, p.bytes, p.detail});
    stats.collective_choices = collective_choices();
    stats.collective_table = collective_table();
    tell_listener(config_, stats);
    return stats;
  } catch (const std::bad_alloc&) {
    throw RunError(
        "run error: out of memory (std::bad_alloc) during the run, which was planned "
        "to need " +
        footprint.text() +
        " (the modeled timeline's events are not "
        "counted there); run at a smaller P" +
        (config_.check_races ? ", or without the race checker" : ""));
  }
}

std::string RunStats::memory_text() const {
  if (memory.empty()) return "";
  double sum = 0;
  for (const MemoryPart& part : memory) sum += part.bytes;
  std::ostringstream out;
  out << "memory (this process, planned before the run): " << bytes_text(sum) << '\n';
  for (const MemoryPart& part : memory) {
    out << "  " << std::left << std::setw(28) << part.what << std::right << std::setw(11)
        << bytes_text(part.bytes);
    if (!part.detail.empty()) out << "  " << part.detail;
    out << '\n';
  }
  return out.str();
}

RunStats CompiledProgram::run_planned(runtime::Engine& engine,
                                      const runtime::EngineOptions& options,
                                      const std::vector<const HostTensor*>& host_args,
                                      double race_budget) const {
  const runtime::Executable& exec = plan_->exec;
  runtime::CostCounter cost(exec.world_size, exec.agents(), exec.order_buffer);
  runtime::Observers observers;
  observers.attach(&cost);
  std::unique_ptr<runtime::race::RaceChecker> races;
  if (config_.check_races) {
    races = std::make_unique<runtime::race::RaceChecker>(exec, race_budget);
    observers.attach(races.get());
  }
  std::unique_ptr<runtime::TimelineRecorder> recorder;
  const runtime::CostModel* model = nullptr;
  runtime::CostModel file_model;
  if (config_.timeline) {
    if (config_.model_file.empty()) {
      model = &runtime::platform_cost_model(plan_->platform);
    } else {
      file_model = runtime::load_cost_model(config_.model_file);
      model = &file_model;
    }
    recorder = std::make_unique<runtime::TimelineRecorder>(exec.agents());
    observers.attach(recorder.get());
  }
  std::unique_ptr<runtime::TaskRecorder> tasks;
  if (config_.writes_task_records()) {
    tasks = std::make_unique<runtime::TaskRecorder>(exec);
    observers.attach(tasks.get());
  }
  const auto run_start = std::chrono::steady_clock::now();
  const runtime::EngineResult result = engine.run(exec, host_args, options, observers);
  const std::chrono::duration<double> run_wall = std::chrono::steady_clock::now() - run_start;
  if (races && races->found()) {
    std::string report = races->report();
    if (!result.failure.empty()) report += "the run also failed:\n" + result.failure;
    throw RaceError(report);
  }
  if (!result.failure.empty()) {
    if (result.deadlocked) throw DeadlockError(result.failure);
    throw RunError(result.failure);
  }
  if (tasks) write_dfx_files(config_, exec, tasks->take());
  RunStats stats;
  stats.cost = cost.costs();
  // On a multi-process engine each process counted its own rank's part.
  std::vector<std::int64_t> counters;
  for (const RankCost& c : stats.cost)
    counters.insert(counters.end(),
                    {c.bytes_in, c.bytes_out, c.rma, c.notifies, c.local_notifies, c.waits});
  counters.insert(counters.end(), {result.instructions, result.parks, result.preemptions});
  engine.sum_over_processes(counters);
  for (std::size_t r = 0; r < stats.cost.size(); ++r) {
    const std::int64_t* c = counters.data() + 6 * r;
    stats.cost[r] = RankCost{c[0], c[1], c[2], c[3], c[4], c[5]};
  }
  const std::int64_t* totals = counters.data() + 6 * stats.cost.size();
  stats.instructions = totals[0];
  stats.parks = totals[1];
  stats.preemptions = totals[2];
  stats.schedule_steps = result.schedule_steps;
  stats.workers = result.workers;
  stats.vms_at_most = result.vms_at_most;
  stats.run_seconds = run_wall.count();
  if (recorder) {
    // On a multi-process engine each process recorded its own rank: every
    // process gathers all ranks' events and simulates them alike.
    runtime::TimelineRecorder all(engine.spans_processes() ? exec.agents() : 0);
    if (engine.spans_processes())
      for (const std::string& part : engine.gather_over_processes(recorder->serialize()))
        all.merge(part);
    stats.timeline = std::make_shared<const Timeline>(runtime::simulate_timeline(
        exec, engine.spans_processes() ? all.events() : recorder->events(), *model,
        runtime::timeline_detail(config_.timeline_detail)));
  }
  return stats;
}

}  // namespace anyp
