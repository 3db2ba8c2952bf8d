// run_config.hpp — how a program is compiled and run: platform, devices,
// engine, scheduling, race checking, and where (if anywhere) the artifact
// is written. Only platform and devices are part of the compiled plan; the
// rest applies to runs.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace anyp {

namespace runtime {
class ScheduleScript;  // src/runtime/schedule_script.hpp
}

// The values of RunConfig::timeline_detail, most kept first.
inline constexpr std::array<const char*, 3> kTimelineDetails = {"ops", "path", "figures"};

struct RunConfig {
  // "a2a3sim" (default) or "a5sim"; "a2a3"/"a5" (real hardware) are refused.
  std::string platform = "a2a3sim";
  struct Distributed {
    // Rank r runs on device_ids[r]; P = device_ids.size(). Non-empty,
    // non-negative, distinct.
    std::vector<std::int64_t> device_ids{0, 1};
  } distributed;
  // "threads": every rank a resumable VM on a worker pool in this process.
  // "mpi" (builds with Open MPI): one rank per MPI process, started with
  // `mpirun -n P`; every process compiles the same program and runs its own
  // rank (engines.hpp: process_world). check_races, deterministic, pct and
  // workers > 1 apply to "threads" only.
  std::string engine = "threads";
  // Worker threads at most; 0 means min(P, hardware threads), or 1 under
  // check_races (the checker serialises every access). A run starts on one
  // and takes the others once its ranks show enough tile compute to share,
  // for long enough (RunStats::workers says how many it had).
  int workers = 0;
  // One worker; the next rank is picked by a RNG seeded with schedule_seed,
  // so an interleaving can be replayed.
  bool deterministic = false;
  std::uint64_t schedule_seed = 0;
  // One worker, PCT schedules (Burckhardt et al., ASPLOS 2010): random rank
  // priorities from `seed`, depth - 1 priority change points drawn over
  // `steps` steps, ranks switched after every visible op (window access,
  // notify, wait). A run replays exactly from (seed, depth, steps).
  // RunStats::schedule_steps counts a run's steps (calibrate with depth 1).
  struct Pct {
    bool enabled = false;
    std::uint64_t seed = 0;
    int depth = 3;
    std::int64_t steps = 0;
  } pct;
  // One worker, op by op, the agents picked in this order, then the lowest
  // ready one: "0*3,1,2" runs agent 0 three steps, then 1, then 2 (a step:
  // local work up to one visible op; docs/race-checker.md). --verify prints
  // the schedule that replays what it found. A listed agent that is not
  // ready at its step is a RunError naming the step.
  std::string replay_schedule;
  // Set by anyp::verify_schedules only (verify.hpp): the schedule explorer
  // that picks every step of the run.
  std::shared_ptr<runtime::ScheduleScript> schedule_script;
  // Instructions a rank may run before it is preempted.
  std::int64_t preempt_budget = 4096;
  // Check every window and host-tensor access against happens-before
  // (program order and notify -> wait); a run with unordered conflicting
  // accesses throws anyp::RaceError naming both.
  bool check_races = false;
  // Compute the run's modeled timeline (RunStats::timeline, timeline.hpp)
  // with the platform's cost model (models/<platform>.model), or with the
  // model file `model_file` when it is non-empty.
  bool timeline = false;
  // How much of the timeline to keep (one of kTimelineDetails):
  //   "ops"      every op (Timeline::ops) and notify -> wait flow, for a
  //              trace or your own analysis (--trace);
  //   "path"     the figures and the critical path, whose ops are then
  //              Timeline::ops (flows empty), in a fraction of the memory
  //              (--timeline);
  //   "figures"  the figures only: makespan, rounds, per-rank figures,
  //              links (ops, flows and critical_path empty), in one pass
  //              (--cost).
  std::string timeline_detail = "ops";
  std::string model_file;
  // At most this many bytes for a run (0: what the machine has). A run
  // whose footprint, computed from the plan before it starts (windows, the
  // engine's book-keeping, rank VMs, the race checker), needs more is
  // refused with a RunError naming the parts; the race checker stops the
  // run when it would hold more than what is left beside the rest. Each
  // process of the MPI engine applies it to its own part.
  std::int64_t memory_limit = 0;
  // Non-empty: compile() writes the artifact into this directory.
  std::string output_dir;
  // PyPTO's DFX records (docs/task-records.md): after each
  // run, per rank r and its k-th dispatch, under
  // <output_dir>/dfx_outputs/rank<r>/d<k>/: deps.json (the dispatch's tasks,
  // the bytes each read and wrote and the earlier tasks it depends on),
  // scope_stats/scope_stats.jsonl (the dispatch's task, dependency and time
  // totals) and chip_swimlane_records.json (each task's wall-clock span;
  // it writes deps.json too, as on PyPTO). They need output_dir.
  bool enable_dep_gen = false;
  bool enable_scope_stats = false;
  bool enable_chip_swimlane = false;
  bool writes_task_records() const {
    return enable_dep_gen || enable_scope_stats || enable_chip_swimlane;
  }
  // compile() prints the IR after each of its passes to stderr (the pass
  // list: docs/design.md §4), compiling again even when the plan is cached.
  bool dump_ir = false;

  // A config for P ranks on devices first_device, first_device + 1, ...
  static RunConfig for_world_size(std::int64_t world_size, std::int64_t first_device = 0) {
    RunConfig config;
    config.distributed.device_ids.clear();
    for (std::int64_t r = 0; r < world_size; ++r)
      config.distributed.device_ids.push_back(first_device + r);
    return config;
  }
};

// Every RunConfig field, once:
// X(key, member, flag, set_by, one_process, metavar, kind, help).
//   key         its name outside C++: Python's RunConfig keyword and
//               to_dict() key (anyp._core.run_config_fields())
//   member      the field in RunConfig (ConfigProblem::field names it so)
//   flag        the example command line's flag that sets it ("" for none;
//               the last name is the one messages use: "--device,-d")
//   set_by      the command line's other flags that set it as a side effect
//               (space-separated long names)
//   one_process whether it applies only to an engine that runs every rank
//               in one process (the threads engine: schedules, race checks)
//   metavar     the value's name in --help ("" for CLI11's)
//   kind        how the command line reads the value: Text, Devices (a -d
//               list), Engine (one of the build's), Count (a decimal >= 1),
//               Seed (a decimal in [0, 2^64)), Steps (a decimal >= 0), Size
//               (bytes, or 512MiB), Switch (no value), None (no flag)
//   help        its line in --help
// The order is the order in which a program's own RunConfig is checked
// against the flags given (anyp::cli::flag_not_taken).
#define ANYP_RUN_CONFIG_FIELDS(X)                                                                \
  X(check_races, check_races, "--check-races", "--verify", true, "", Switch,                     \
    "Check every window and host-tensor access for races (happens-before); a race is reported "  \
    "and exits 1")                                                                               \
  X(timeline, timeline, "", "--cost --timeline --trace", false, "", None, "")                    \
  X(timeline_detail, timeline_detail, "", "--cost --timeline --trace", false, "", None, "")      \
  X(model_file, model_file, "--model", "", false, "FILE", Text,                                  \
    "The cost model file for modeled time (default: the platform's, models/<platform>.model)")   \
  X(pct_enabled, pct.enabled, "", "--explore --pct-seed", true, "", None, "")                    \
  X(pct_seed, pct.seed, "--pct-seed", "--explore", true, "", Seed,                               \
    "Replay one PCT schedule (with --explore-depth and --pct-steps)")                            \
  X(pct_depth, pct.depth, "--explore-depth", "--explore --pct-seed", true, "", Count,            \
    "PCT depth D: D - 1 priority change points per schedule")                                    \
  X(pct_steps, pct.steps, "--pct-steps", "--explore --pct-seed", true, "", Steps,                \
    "Steps the PCT change points are drawn over (printed by --explore)")                         \
  X(deterministic, deterministic, "", "--schedule-seed", true, "", None, "")                     \
  X(schedule_seed, schedule_seed, "--schedule-seed", "", true, "", Seed,                         \
    "Run on one worker, picking ranks with an RNG seeded by N (replayable)")                     \
  X(replay_schedule, replay_schedule, "--replay-schedule", "", true, "SCHEDULE", Text,           \
    "Run one schedule step by step: the agents in order (0*3,1,2 is 0,0,0,1,2), then the "       \
    "lowest ready (printed by --verify)")                                                        \
  X(workers, workers, "--workers", "", true, "N", Count,                                         \
    "Worker threads at most (default: min(P, cores)); a run takes its second once its ranks "    \
    "show enough tile compute to share")                                                         \
  X(preempt_budget, preempt_budget, "--preempt-budget", "", false, "", Count,                    \
    "Instructions a rank runs before it is preempted")                                           \
  X(memory_limit, memory_limit, "--memory-limit", "", false, "SIZE", Size,                       \
    "Refuse a run that would need more memory than SIZE (bytes, or with a unit: 512MiB, 4GiB); " \
    "its footprint is computed from the plan before it runs")                                    \
  X(engine, engine, "--engine", "", false, "", Engine,                                           \
    "threads: every rank in this process; mpi: one rank per MPI process, under mpirun -n P")     \
  X(platform, platform, "-p,--platform", "", false, "", Text,                                    \
    "Simulated platform: a2a3sim or a5sim (a2a3/a5 are real hardware, refused)")                 \
  X(device_ids, distributed.device_ids, "--device,-d", "", false, "IDS", Devices,                \
    "Comma-separated distinct device ids or ranges (0-7 is 0,...,7); P = their count")           \
  X(output_dir, output_dir, "", "", false, "", None, "")                                         \
  X(enable_dep_gen, enable_dep_gen, "--dep-gen", "", false, "", Switch,                          \
    "Write each dispatch's tasks and their dependencies to "                                     \
    "<output-dir>/dfx_outputs/rank<r>/d<k>/deps.json")                                           \
  X(enable_scope_stats, enable_scope_stats, "--scope-stats", "", false, "", Switch,              \
    "Write each dispatch's task, dependency and time totals to "                                 \
    "<output-dir>/dfx_outputs/rank<r>/d<k>/scope_stats/scope_stats.jsonl")                       \
  X(enable_chip_swimlane, enable_chip_swimlane, "--swimlane", "", false, "", Switch,             \
    "Write each task's wall-clock span to "                                                      \
    "<output-dir>/dfx_outputs/rank<r>/d<k>/chip_swimlane_records.json (and deps.json)")          \
  X(dump_ir, dump_ir, "--dump-ir", "", false, "", Switch,                                        \
    "Print the IR after each pass of the compile (stderr): the program, its dims, each rank's "  \
    "dispatches, the VM code, the dispatch order and the window layout")

// What is wrong with a RunConfig: the field, as named in RunConfig, and the
// message. compile() throws ConfigError(message); the example command line
// puts the flag that sets the field in front of it.
struct ConfigProblem {
  std::string field;    // "platform", "workers", "check_races", "pct.depth", ...
  std::string message;  // "workers must be 0 (automatic) or positive, got -1"
};

// The first problem of `config` in the order compile() checks (platform,
// devices, preempt_budget, memory_limit, workers, engine and what it can do,
// schedule), or nothing. Platforms are the shipped cost models'; what an
// engine can do comes from its traits (engines.hpp).
std::optional<ConfigProblem> check_config(const RunConfig& config);

}  // namespace anyp
