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
#include <vector>

#include "anyp/arg_ref.hpp"
#include "anyp/host_tensor.hpp"
#include "anyp/run_config.hpp"
#include "anyp/run_stats.hpp"
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
  // Each AllreduceMode::Auto call's choice, one line per call in code order:
  // "<function>: pld.tensor.allreduce (Sum, RecursiveDoubling, data FP32
  // [1, 960]): Auto chose RecursiveDoubling: RecursiveDoubling 3.2 us, ...";
  // "" when the program has none. --cost and --timeline print it.
  std::string collective_choices() const;
  // Every builtin collective call in code order: the algorithm it runs and
  // why (pinned, chosen by Auto, the op's only algorithm), then each
  // candidate algorithm's modeled time on the cost model, fastest first;
  // "" when the program has none. --explain-collectives prints it.
  std::string collective_table() const;

  // Where the dispatches take the host tensor arguments: one entry per
  // (dispatch, host tensor argument), rank by rank in dispatch order. What
  // a caller checks a tensor's placement against (PyPTO's device-resident
  // tensors live on one card).
  struct HostTensorUse {
    std::int64_t rank = 0;
    int argument = 0;  // index into the run's arguments
    std::int64_t byte_offset = 0;
    std::int64_t bytes = 0;
    std::string function;      // the dispatched function
    bool host_worker = false;  // a host worker's (run by the host, on rank 0's list)
  };
  std::vector<HostTensorUse> host_tensor_uses() const;

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
