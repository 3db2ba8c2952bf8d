// schedule_script.hpp — a schedule chosen step by step from outside the
// engine: the threads engine runs one agent at a time, op by op (a step is
// one slice: local work up to and including one visible op, or a wait that
// parks), asks the script which ready agent runs next, and tells it what
// each step touched. `--verify` (dpor.hpp) and `--replay-schedule`
// (ReplayScript) are scripts.
//
// What a step touched is its footprint: every byte range it read, wrote or
// added to, in a window or a host tensor, signal cells included (a notify
// Set writes its cell, an AtomicAdd notify adds, a wait reads it, a wait
// that parks reads it too). Two steps of different agents are dependent when
// their footprints conflict (conflicts()): they overlap and one writes, or
// one adds and the other reads or writes. Integer adds commute; floating-point
// adds do not (the sum's rounding depends on their order), unless the script
// is told to take them as commuting (float_adds_commute). A step with no
// access (a block launch or join, a block's or a rank's end) touches its
// rank's launch state: block 0's (the launch and the join) all of it,
// another block's end only its own part; every other step of a block other
// than 0 reads its part. So a rank's blocks run after the launch and before
// the join, and end in any order.
//
// A schedule's text (format_schedule / parse_schedule) is the agents picked,
// in order, comma-separated, a run of one agent as `agent*count`:
// "0*3,1,2*2" is 0,0,0,1,2,2. After the listed picks, the lowest-numbered
// ready agent runs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/access_observer.hpp"

namespace anyp::runtime {

struct StepAccess {
  // Window or host memory, or a rank's launch state (kLaunchState).
  static constexpr std::int32_t kLaunchState = -2;
  Space space = Space::Window;
  std::int32_t id = -1;  // buffer or argument index, or kLaunchState
  std::int64_t owner = -1;
  std::int64_t first = 0, end = 0;  // bytes from the buffer's start
  AccessKind kind = AccessKind::Read;
  // An add that commutes with other such adds: of integers, or of floating
  // point where the script takes floating-point adds as commuting.
  bool integer = true;
  // A notify: the cell's value after it (has_value: where the engine
  // applies it) and its operand (the amount added, or the value set). A
  // wait (satisfied or not): its comparison and the value it saw.
  bool has_value = false;
  std::int32_t value = 0;
  std::int32_t operand = 0;
  bool is_wait = false;
  ir::WaitKind cmp = ir::WaitKind::Eq;
  std::int64_t expected = 0;
};

struct Step {
  std::int64_t agent = -1;
  std::vector<StepAccess> footprint;
  bool parked = false;  // the step ended on a wait that did not hold (or a join)
  // The engine run it belongs to (counted from 0 by start_engine_run), and
  // whether that run's windows started zeroed.
  std::int32_t engine_run = 0;
  bool fresh_windows = true;
};

// True when two footprints conflict (see above).
bool conflicts(std::span<const StepAccess> a, std::span<const StepAccess> b);

// Records each step's footprint; subclasses pick.
class ScheduleScript : public AccessObserver {
 public:
  // Floating-point adds to the same bytes commute (their order changes
  // only the rounding): one trace for all their orders.
  void set_float_adds_commute(bool on) { float_adds_commute_ = on; }
  // `ready`: the agents that may run, in ascending order, never empty.
  // Returns one of them, or -1 with failure() saying why the schedule
  // cannot be followed (the run stops with that error).
  virtual std::int64_t pick(std::span<const std::int64_t> ready) = 0;
  virtual const std::string& failure() const { return failure_; }
  // The engine: the picked agent's slice ended (parked: on a wait that did
  // not hold, or a join that parked). Closes the step and calls on_step.
  // `blocks`: the agents per rank (Executable::agents / world_size).
  void end_slice(std::int64_t agent, bool parked, std::int64_t world_size, std::int64_t blocks);
  // The engine: a run starts (fresh: its windows start zeroed).
  void start_engine_run(bool fresh_windows);
  // The script's caller: a new schedule starts (engine runs count from 0).
  void reset_engine_runs() { engine_run_ = -1; }

  void on_access(const Access& access) override;
  void on_notify(std::int64_t agent, SiteRef site, const Cell& cell, ir::NotifyKind kind,
                 std::int32_t value, std::optional<std::int32_t> result) override;
  void on_wait(std::int64_t agent, SiteRef site, const Cell& cell, ir::WaitKind cmp,
               std::int64_t expected, std::int32_t value) override;
  void on_wait_blocked(std::int64_t agent, SiteRef site, const Cell& cell, ir::WaitKind cmp,
                       std::int64_t expected, std::int32_t value) override;

 protected:
  virtual void on_step(Step&& step) = 0;
  std::string failure_;

 private:
  StepAccess& add_cell(const Cell& cell, AccessKind kind);
  std::vector<StepAccess> current_;
  std::int32_t engine_run_ = -1;
  bool float_adds_commute_ = false;
  bool fresh_windows_ = true;
};

// "0*3,1,2*2" from {0, 0, 0, 1, 2, 2}.
std::string format_schedule(std::span<const std::int64_t> agents);
// The agents of a schedule's text; a std::invalid_argument naming the item
// that is not `agent` or `agent*count` (agent >= 0, count >= 1).
std::vector<std::int64_t> parse_schedule(const std::string& text);

// Picks the listed agents in order, then the lowest ready one. An agent
// that is not ready when its turn comes is a failure naming the step.
class ReplayScript final : public ScheduleScript {
 public:
  explicit ReplayScript(std::vector<std::int64_t> agents) : agents_(std::move(agents)) {}
  std::int64_t pick(std::span<const std::int64_t> ready) override;

 protected:
  void on_step(Step&&) override {}

 private:
  std::vector<std::int64_t> agents_;
  std::size_t next_ = 0;
};

}  // namespace anyp::runtime
