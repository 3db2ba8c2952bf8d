// compiled_program.hpp — the result of HostFunction::compile(): a program
// specialised for one P, ready to run any number of times.
//
//   auto compiled = ring_get.compile({x, y}, config);
//   compiled(x, y);   // blocks until every rank is done; y written in place
//
// Running throws anyp::RunError (naming rank and op), anyp::DeadlockError
// (naming every parked rank's wait) or, with RunConfig::check_races,
// anyp::RaceError (naming both accesses). Windows are zeroed at each run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "anyp/host_tensor.hpp"
#include "anyp/run_config.hpp"
#include "anyp/timeline.hpp"

namespace anyp {

namespace detail {
struct Plan;
}
namespace runtime {
class Engine;
class PersistentWindows;
struct EngineOptions;
}  // namespace runtime
class Session;
struct SessionOptions;

// One argument of a host call: a host tensor (by reference) or a scalar.
class ArgRef {
 public:
  ArgRef(const HostTensor& t) : value_(&t) {}  // NOLINT
  ArgRef(int v) : value_(std::int64_t{v}) {}   // NOLINT
  ArgRef(std::int64_t v) : value_(v) {}        // NOLINT
  ArgRef(double v) : value_(v) {}              // NOLINT
  bool is_tensor() const { return std::holds_alternative<const HostTensor*>(value_); }
  const HostTensor& tensor() const { return *std::get<const HostTensor*>(value_); }
  bool is_int() const { return std::holds_alternative<std::int64_t>(value_); }
  std::int64_t int_value() const { return std::get<std::int64_t>(value_); }
  double float_value() const { return std::get<double>(value_); }

 private:
  std::variant<const HostTensor*, std::int64_t, double> value_;
};

// What one rank moved through peer windows in a run (a cost card row).
// Self-accesses are local and not counted as RMA or bytes.
// A push (put, remote_store) counts as bytes_out for the sender and bytes_in
// for the receiver; a pull (get, remote_load) as bytes_in for the puller.
struct RankCost {
  std::int64_t bytes_in = 0;        // payload that reached this rank from peers
  std::int64_t bytes_out = 0;       // payload this rank pushed into peers' windows
  std::int64_t rma = 0;             // remote data ops issued
  std::int64_t notifies = 0;        // notifies to other ranks
  std::int64_t local_notifies = 0;  // notifies to itself (collective epilogues: "+E")
  std::int64_t waits = 0;           // waits completed
  RankCost& operator+=(const RankCost& o);
  bool operator==(const RankCost&) const = default;
};

// Counters of the last run.
struct RunStats {
  std::vector<RankCost> cost;  // one per rank
  RankCost total() const;
  std::int64_t instructions = 0;    // VM instructions executed, all ranks
  std::int64_t parks = 0;           // times a rank parked on a wait
  std::int64_t preemptions = 0;     // times a rank was preempted
  std::int64_t schedule_steps = 0;  // PCT: steps with two or more ranks ready
  int workers = 0;
  // With RunConfig::timeline: the run on the cost model's clock.
  std::shared_ptr<const Timeline> timeline;
  // The run's memory as computed from the plan before it ran (in each
  // process, on the MPI engine): windows, the engine's book-keeping, the rank
  // VMs and, when checked, the race checker. `--cost` prints it.
  struct MemoryPart {
    std::string what;  // "windows", "race checker: cell credits", ...
    double bytes = 0;
    std::string detail;  // "4 ranks × 5.8 KiB; largest buffer ..."
  };
  std::vector<MemoryPart> memory;
  // The memory block of the cost card: "memory (this process, planned before the run): 46.4 KiB",
  // then a line per part; "" without parts.
  std::string memory_text() const;
};

// Drops every cached plan (compile() caches one per program, bound dims,
// devices and platform); CompiledPrograms already returned stay valid.
void clear_compile_cache();

// Called after every run that succeeds, of any CompiledProgram or Session in
// this process, with the RunConfig it ran under and its stats; an empty
// function removes it. The example command line (anyp::cli::run_example)
// listens, so that --cost, --timeline, --trace and --explore see the runs of
// a program body without the body handing its stats over. The listener is
// called on the thread that ran (a Session's worker for submits).
using RunListener = std::function<void(const RunConfig& config, const RunStats& stats)>;
void set_run_listener(RunListener listener);

class CompiledProgram {
 public:
  CompiledProgram(std::shared_ptr<const detail::Plan> plan, RunConfig config);

  template <class... A>
  RunStats operator()(A&&... args) const {
    return run({ArgRef(std::forward<A>(args))...});
  }
  RunStats run(const std::vector<ArgRef>& args) const;
  // A session for many runs of this program (session.hpp): windows that
  // persist between runs if asked, tensors it owns, asynchronous submits.
  Session prepare(const SessionOptions& options) const;
  Session prepare() const;

  int world_size() const;
  const std::string& platform() const;
  // Where the artifact was written ("" if it was not).
  const std::string& output_dir() const { return output_dir_; }
  // Writes symbolic IR, specialised IR, window layout, lowered code and
  // manifest.json into `dir` (created if needed).
  void write_artifact(const std::string& dir);

  std::string symbolic_ir() const;
  std::string specialized_ir() const;
  std::string window_layout() const;
  std::string lowered_code() const;
  std::string manifest_json() const;

 private:
  friend class Session;
  // A run on `engine`, its windows `windows` (a session's) or fresh ones.
  RunStats run_with(runtime::Engine& engine, runtime::PersistentWindows* windows,
                    const std::vector<ArgRef>& args) const;
  // The run after its footprint was accepted; the race checker may hold
  // `race_budget` bytes (<= 0: no limit).
  RunStats run_planned(runtime::Engine& engine, const runtime::EngineOptions& options,
                       const std::vector<const HostTensor*>& host_args, double race_budget) const;

  std::shared_ptr<const detail::Plan> plan_;
  RunConfig config_;  // scheduling options for runs
  std::string output_dir_;
};

}  // namespace anyp
