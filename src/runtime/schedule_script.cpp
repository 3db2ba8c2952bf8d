// schedule_script.cpp — step footprints, their conflicts, the schedule's
// text, and the replay script (schedule_script.hpp).
#include "runtime/schedule_script.hpp"

#include <charconv>
#include <stdexcept>

namespace anyp::runtime {

namespace {

bool access_conflicts(const StepAccess& a, const StepAccess& b) {
  if (a.space != b.space || a.id != b.id || a.owner != b.owner) return false;
  if (a.first >= b.end || b.first >= a.end) return false;
  if (a.kind == AccessKind::Read && b.kind == AccessKind::Read) return false;
  if (a.kind == AccessKind::AtomicAdd && b.kind == AccessKind::AtomicAdd)
    return !(a.integer && b.integer);
  return true;
}

}  // namespace

bool conflicts(std::span<const StepAccess> a, std::span<const StepAccess> b) {
  for (const StepAccess& x : a)
    for (const StepAccess& y : b)
      if (access_conflicts(x, y)) return true;
  return false;
}

void ScheduleScript::on_access(const Access& access) {
  const Region& r = access.region;
  if (r.first == r.end) return;
  current_.push_back(StepAccess{r.space, r.id, r.owner, r.first, r.end, access.kind,
                                float_adds_commute_ || !dtype_is_float(r.dtype)});
}

StepAccess& ScheduleScript::add_cell(const Cell& cell, AccessKind kind) {
  return current_.emplace_back(
      StepAccess{Space::Window, cell.buffer, cell.owner, cell.offset, cell.offset + 4, kind, true});
}

void ScheduleScript::on_notify(std::int64_t, SiteRef, const Cell& cell, ir::NotifyKind kind,
                               std::int32_t operand, std::optional<std::int32_t> result) {
  StepAccess& a =
      add_cell(cell, kind == ir::NotifyKind::Set ? AccessKind::Write : AccessKind::AtomicAdd);
  a.has_value = result.has_value();
  a.value = result.value_or(0);
  a.operand = operand;
}

void ScheduleScript::on_wait(std::int64_t, SiteRef, const Cell& cell, ir::WaitKind cmp,
                             std::int64_t expected, std::int32_t value) {
  StepAccess& a = add_cell(cell, AccessKind::Read);
  a.has_value = true;
  a.value = value;
  a.is_wait = true;
  a.cmp = cmp;
  a.expected = expected;
}

void ScheduleScript::start_engine_run(bool fresh_windows) {
  ++engine_run_;
  fresh_windows_ = fresh_windows;
}

void ScheduleScript::on_wait_blocked(std::int64_t agent, SiteRef site, const Cell& cell,
                                     ir::WaitKind cmp, std::int64_t expected, std::int32_t value) {
  on_wait(agent, site, cell, cmp, expected, value);
}

void ScheduleScript::end_slice(std::int64_t agent, bool parked, std::int64_t world_size,
                               std::int64_t blocks) {
  Step step;
  step.agent = agent;
  step.parked = parked;
  step.footprint = std::move(current_);
  step.engine_run = engine_run_;
  step.fresh_windows = fresh_windows_;
  current_.clear();
  const std::int64_t rank = agent % world_size, block = agent / world_size;
  if (step.footprint.empty()) {
    // A launch, a join or an end: block 0's touches every block's launch
    // state, another block's its own.
    step.footprint.push_back(StepAccess{Space::Window, StepAccess::kLaunchState, rank,
                                        block == 0 ? 0 : block, block == 0 ? blocks : block + 1,
                                        AccessKind::Write, true});
  } else if (block > 0) {
    // Another block's step runs between its launch and its rank's join.
    step.footprint.push_back(StepAccess{Space::Window, StepAccess::kLaunchState, rank, block,
                                        block + 1, AccessKind::Read, true});
  }
  on_step(std::move(step));
}

std::string format_schedule(std::span<const std::int64_t> agents) {
  std::string text;
  for (std::size_t i = 0; i < agents.size();) {
    std::size_t j = i;
    while (j < agents.size() && agents[j] == agents[i]) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(agents[i]);
    if (j - i > 1) text += '*' + std::to_string(j - i);
    i = j;
  }
  return text;
}

std::vector<std::int64_t> parse_schedule(const std::string& text) {
  std::vector<std::int64_t> agents;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    const std::size_t star = item.find('*');
    auto number = [&](std::string_view digits, std::int64_t least) {
      std::int64_t value = -1;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
          value < least)
        throw std::invalid_argument("'" + item + "' is not an agent or agent*count");
      return value;
    };
    const std::string_view view(item);
    const std::int64_t agent = number(view.substr(0, star), 0);
    const std::int64_t count = star == std::string::npos ? 1 : number(view.substr(star + 1), 1);
    if (count > 100'000'000) throw std::invalid_argument("'" + item + "': count too large");
    agents.insert(agents.end(), static_cast<std::size_t>(count), agent);
    start = comma + 1;
  }
  return agents;
}

std::int64_t ReplayScript::pick(std::span<const std::int64_t> ready) {
  if (next_ >= agents_.size()) return ready.front();
  const std::int64_t agent = agents_[next_];
  for (std::int64_t r : ready) {
    if (r != agent) continue;
    ++next_;
    return agent;
  }
  std::string names;
  for (std::int64_t r : ready) names += (names.empty() ? "" : ", ") + std::to_string(r);
  failure_ = "run error: the schedule's step " + std::to_string(next_ + 1) + " runs agent " +
             std::to_string(agent) + ", which is not ready then (ready: " + names + ")";
  return -1;
}

}  // namespace anyp::runtime
