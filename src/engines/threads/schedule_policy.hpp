// schedule_policy.hpp — which ready rank the threads engine runs next.
//   Fifo    the oldest ready rank (any number of workers)
//   Random  uniform over the ready ranks, from a seeded RNG (one worker)
//   Pct     PCT, probabilistic concurrency testing (Burckhardt, Kothari,
//           Musuvathi, Nagarakatte, ASPLOS 2010), one worker: every rank gets
//           a random priority d .. d+P-1; d-1 change points k_1 < ... are
//           drawn from [1, steps]; the highest-priority ready rank runs one
//           visible op; after the i-th change point's step the rank that took
//           it drops to priority d-i, below every initial priority. Steps
//           count only decisions with two or more ranks ready. A bug of depth
//           d is hit per run with probability >= 1 / (P * steps^(d-1)).
//   Script  one worker, op by op: a ScheduleScript (runtime/schedule_script.hpp)
//           picks every step and is told each step's end.
// Policies are used under the runner's run lock (runner.hpp).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/engine.hpp"

namespace anyp::threads {

class SchedulePolicy {
 public:
  virtual ~SchedulePolicy() = default;
  // Removes and returns the rank to run next; `ready` is not empty. -1:
  // the run stops with failure().
  virtual std::int64_t pick(std::deque<std::int64_t>& ready) = 0;
  virtual std::string failure() const { return ""; }
  // The picked rank finished one slice (PCT: one visible op); `parked`:
  // it ended on a wait that did not hold.
  virtual void after_slice(std::int64_t /*rank*/, bool /*parked*/) {}
  // Ranks stop after every visible op (PCT).
  virtual bool op_by_op() const { return false; }
  virtual std::int64_t steps() const { return 0; }
};

// `agents`: the run's VMs (Executable::agents); `world_size`: its ranks.
std::unique_ptr<SchedulePolicy> make_policy(const runtime::Schedule& schedule, std::int64_t agents,
                                            std::int64_t world_size);

}  // namespace anyp::threads
