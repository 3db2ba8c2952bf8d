// schedule_policy.cpp — FIFO, uniform random, PCT and scripted rank selection.
#include "engines/threads/schedule_policy.hpp"

#include <algorithm>
#include <numeric>

#include "runtime/schedule_script.hpp"

namespace anyp::threads {
namespace {

class FifoPolicy final : public SchedulePolicy {
 public:
  std::int64_t pick(std::deque<std::int64_t>& ready) override {
    const std::int64_t r = ready.front();
    ready.pop_front();
    return r;
  }
};

class RandomPolicy final : public SchedulePolicy {
 public:
  explicit RandomPolicy(std::uint64_t seed) : rng_(seed) {}
  std::int64_t pick(std::deque<std::int64_t>& ready) override {
    std::size_t i = 0;
    if (ready.size() > 1) i = std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(rng_);
    const std::int64_t r = ready[i];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(i));
    return r;
  }

 private:
  std::mt19937_64 rng_;
};

class PctPolicy final : public SchedulePolicy {
 public:
  PctPolicy(std::uint64_t seed, int depth, std::int64_t steps, std::int64_t world_size)
      : rng_(seed), depth_(std::max(1, depth)), priority_(static_cast<std::size_t>(world_size)) {
    std::iota(priority_.begin(), priority_.end(), static_cast<std::int64_t>(depth_));
    std::shuffle(priority_.begin(), priority_.end(), rng_);
    const std::int64_t span = std::max<std::int64_t>(1, steps);
    std::uniform_int_distribution<std::int64_t> point(1, span);
    for (int i = 1; i < depth_; ++i) change_points_.push_back(point(rng_));
    // The i-th change point (in draw order) lowers to depth - i.
    change_priority_.resize(change_points_.size());
    for (std::size_t i = 0; i < change_points_.size(); ++i)
      change_priority_[i] = depth_ - 1 - static_cast<std::int64_t>(i);
  }

  std::int64_t pick(std::deque<std::int64_t>& ready) override {
    counted_ = ready.size() >= 2;
    std::size_t best = 0;
    for (std::size_t i = 1; i < ready.size(); ++i) {
      if (priority_[static_cast<std::size_t>(ready[i])] >
          priority_[static_cast<std::size_t>(ready[best])])
        best = i;
    }
    const std::int64_t r = ready[best];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(best));
    return r;
  }

  void after_slice(std::int64_t rank, bool) override {
    if (!counted_) return;
    ++steps_;
    for (std::size_t i = 0; i < change_points_.size(); ++i) {
      if (change_points_[i] == steps_)
        priority_[static_cast<std::size_t>(rank)] = change_priority_[i];
    }
  }

  bool op_by_op() const override { return true; }
  std::int64_t steps() const override { return steps_; }

 private:
  std::mt19937_64 rng_;
  int depth_;
  std::vector<std::int64_t> priority_;  // per rank; higher runs first
  std::vector<std::int64_t> change_points_;
  std::vector<std::int64_t> change_priority_;
  std::int64_t steps_ = 0;
  bool counted_ = false;
};

class ScriptPolicy final : public SchedulePolicy {
 public:
  ScriptPolicy(runtime::ScheduleScript* script, std::int64_t agents, std::int64_t world_size)
      : script_(script), world_size_(world_size), blocks_(agents / world_size) {}

  std::int64_t pick(std::deque<std::int64_t>& ready) override {
    sorted_.assign(ready.begin(), ready.end());
    std::sort(sorted_.begin(), sorted_.end());
    const std::int64_t agent = script_->pick(sorted_);
    if (agent < 0) return -1;
    ready.erase(std::find(ready.begin(), ready.end(), agent));
    ++steps_;
    return agent;
  }
  std::string failure() const override { return script_->failure(); }
  void after_slice(std::int64_t rank, bool parked) override {
    script_->end_slice(rank, parked, world_size_, blocks_);
  }
  bool op_by_op() const override { return true; }
  std::int64_t steps() const override { return steps_; }

 private:
  runtime::ScheduleScript* script_;
  std::int64_t world_size_;
  std::int64_t blocks_;
  std::vector<std::int64_t> sorted_;
  std::int64_t steps_ = 0;
};

}  // namespace

std::unique_ptr<SchedulePolicy> make_policy(const runtime::Schedule& schedule, std::int64_t agents,
                                            std::int64_t world_size) {
  switch (schedule.kind) {
    case runtime::Schedule::Kind::Free:
      return std::make_unique<FifoPolicy>();
    case runtime::Schedule::Kind::Random:
      return std::make_unique<RandomPolicy>(schedule.seed);
    case runtime::Schedule::Kind::Pct:
      return std::make_unique<PctPolicy>(schedule.seed, schedule.depth, schedule.steps, agents);
    case runtime::Schedule::Kind::Script:
      return std::make_unique<ScriptPolicy>(schedule.script, agents, world_size);
  }
  return std::make_unique<FifoPolicy>();
}

}  // namespace anyp::threads
