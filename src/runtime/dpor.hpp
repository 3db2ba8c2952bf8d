// dpor.hpp — stateless model checking of a program's schedules: source-DPOR
// with sleep sets (Abdulla, Aronis, Jonsson, Sagonas, "Optimal dynamic
// partial order reduction", POPL 2014, Algorithm 1), on the threads
// engine's one-worker, op-by-op runs (schedule_script.hpp).
//
// Each run of the program is one schedule. The explorer keeps the schedule
// tree's current path: per step, the agents that were ready, the one that
// ran and its footprint, the backtrack set (agents still to run there), the
// agents already explored there with their footprints, and the sleep set.
// A run replays the path's prefix, runs the new choice at the deepest node
// with one left, and then the lowest-numbered ready agent not asleep. After
// a run, every race of the new part (two dependent steps of different
// agents with no step ordered between them) adds, at the node before the
// first, an agent that can start the reversed order (an initial of the
// steps not ordered after the first, then the second), unless one is there
// already. An agent asleep at a node (explored there before, and nothing
// dependent with its step has run since) is not run there again.
//
// The guarantee (Theorem 1 of the paper): every Mazurkiewicz trace of the
// steps (sequences equal up to swapping adjacent independent steps) is
// explored at least once. Traces are counted exactly: each run's trace is
// reduced to a canonical key (each real step's agent, index, footprint and
// vector clock; a wait that parked is no step of the trace, it changes no
// memory), and the distinct keys are counted. A wait that holds returns no
// value, so its place among the writes of its cell changes nothing once it
// holds: the key orders it by its agent only, and a race into it (the
// write first) is not reversed (passed_wait); a race out of it (the wait
// first, a notify after) is, when the notify run first would make it fail
// (wait_still_holds: the value is known from the wait and the notify).
//
// Waits block: an agent parked on a wait is not enabled, and a wait that
// parks is no event (it changes nothing): nothing is ordered after it, but
// a race into it is reversed (the write that made it fail, run after it,
// may let it pass), unless the wait would fail before the write too
// (reversal_parks: the cell's value before the write is known from the
// notifies, and 0 at the start of a run on fresh windows). A reversal whose
// initials are all disabled at the node cannot happen and adds nothing.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "runtime/schedule_script.hpp"

namespace anyp::runtime {

class DporExplorer final : public ScheduleScript {
 public:
  // An agent explored at a node, with the step it took there.
  struct Sleeper {
    std::int64_t agent;
    std::vector<StepAccess> footprint;
  };

  // Before each run: the next schedule is set up (by start() or advance()).
  void begin_run();
  // After a run that completed (passed or failed): its trace is counted.
  void end_run();
  // After a passed run: the races of its new part are analysed and the
  // next schedule chosen. False when every trace has been explored.
  bool advance();

  std::int64_t pick(std::span<const std::int64_t> ready) override;

  std::int64_t traces() const { return static_cast<std::int64_t>(traces_.size()); }
  std::int64_t pruned() const { return pruned_; }
  std::int64_t blocked_runs() const { return blocked_runs_; }
  // The schedule of the last run, as replay_schedule text (without the
  // trailing picks that are the replay's default, the lowest ready agent).
  std::string last_schedule() const;

 protected:
  void on_step(Step&& step) override;

 private:
  struct Node {
    std::vector<std::int64_t> ready;  // ascending
    std::int64_t agent = -1;          // run at this node on the current path
    std::vector<StepAccess> footprint;
    bool parked = false;
    std::int32_t engine_run = 0;
    bool fresh_windows = true;
    std::vector<std::int64_t> backtrack;
    std::vector<Sleeper> explored;  // run here before, with their steps
    std::vector<Sleeper> sleep;     // asleep on entering the node
  };

  void analyse_races(std::size_t from, std::size_t to);
  // The one access of a step (a block's read of its launch state aside), or
  // null when it has several.
  static const StepAccess* only_access(const Node& n);
  // Step j is a wait that held: a race into it is never reversed. Run
  // before the write instead, it either holds as well (the wait returns
  // nothing: the same state follows) or parks until the write (the order
  // already run).
  bool passed_wait(std::size_t j) const;
  // Step i is a wait that held and j a notify of its cell whose reversal
  // would leave the wait holding (a credit counted up past a Ge): the same
  // state follows either order, so the race is not reversed.
  bool wait_still_holds(std::size_t i, std::size_t j) const;
  // True when reversing race (i, j) cannot give a new trace: j is (or
  // begins with) a wait
  // that would not hold before i (so its agent would park, and run after
  // i as it did), and no step of `v` writes its cell.
  bool reversal_parks(std::size_t i, std::size_t j, const std::vector<std::size_t>& v) const;
  void count_trace();

  std::vector<Node> path_;
  std::size_t replayed_ = 0;  // nodes of path_ the run replays (the last is the new choice)
  std::size_t depth_ = 0;     // steps of the current run so far
  std::vector<Sleeper> next_sleep_;
  std::int64_t blocked_at_ = -1;  // first step where every ready agent slept
  std::unordered_set<std::uint64_t> traces_;
  std::int64_t pruned_ = 0;
  std::int64_t blocked_runs_ = 0;
};

}  // namespace anyp::runtime
