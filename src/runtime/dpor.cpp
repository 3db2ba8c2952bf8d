// dpor.cpp — source-DPOR with sleep sets over scripted runs (dpor.hpp).
#include "runtime/dpor.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "runtime/scalar_math.hpp"

namespace anyp::runtime {

namespace {

bool contains(const std::vector<std::int64_t>& v, std::int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The memory a footprint touches, by buffer: (space, id, owner).
using BufferKey = std::tuple<int, std::int32_t, std::int64_t>;

// Happens-before over a run's steps: per step, its agent, its index among
// its agent's steps (from 1), its vector clock (per agent, the highest
// index ordered before or at it), and the earlier steps it depends on.
// Steps that `skip` names (waits that parked) are no events: nothing is
// ordered after them, but each gets the clock and predecessors it would
// have, so that a race into it can be found.
struct HappensBefore {
  std::vector<std::int64_t> agent;
  std::vector<std::int32_t> index;
  std::vector<std::vector<std::int32_t>> clock;
  std::vector<std::vector<std::size_t>> depends_on;  // dependent earlier events, other agents
  std::vector<std::int64_t> previous;                // the agent's event before, or -1

  template <class StepAt, class Skip>
  HappensBefore(std::size_t n, std::int64_t agents, StepAt step_at, Skip skip) {
    agent.resize(n, -1);
    index.resize(n, 0);
    clock.resize(n);
    depends_on.resize(n);
    previous.resize(n, -1);
    std::vector<std::int32_t> count(static_cast<std::size_t>(agents), 0);
    std::vector<std::int64_t> last(static_cast<std::size_t>(agents), -1);
    std::map<BufferKey, std::vector<std::size_t>> by_buffer;
    for (std::size_t j = 0; j < n; ++j) {
      const auto& [a, footprint] = step_at(j);
      const auto au = static_cast<std::size_t>(a);
      const bool event = !skip(j);
      agent[j] = a;
      index[j] = count[au] + 1;
      std::vector<std::int32_t> vc(static_cast<std::size_t>(agents), 0);
      previous[j] = last[au];
      if (last[au] >= 0) vc = clock[static_cast<std::size_t>(last[au])];
      std::vector<std::size_t> candidates;
      for (const StepAccess& x : footprint) {
        auto it = by_buffer.find(BufferKey{static_cast<int>(x.space), x.id, x.owner});
        if (it != by_buffer.end())
          candidates.insert(candidates.end(), it->second.begin(), it->second.end());
      }
      std::sort(candidates.begin(), candidates.end());
      candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
      for (std::size_t k : candidates) {
        if (agent[k] == a || !conflicts(step_at(k).second, footprint)) continue;
        depends_on[j].push_back(k);
        const auto& ck = clock[k];
        for (std::size_t b = 0; b < vc.size(); ++b) vc[b] = std::max(vc[b], ck[b]);
      }
      vc[au] = index[j];
      clock[j] = std::move(vc);
      if (!event) continue;
      count[au] = index[j];
      last[au] = static_cast<std::int64_t>(j);
      for (const StepAccess& x : footprint) {
        auto& list = by_buffer[BufferKey{static_cast<int>(x.space), x.id, x.owner}];
        if (list.empty() || list.back() != j) list.push_back(j);
      }
    }
  }
  // Event k happens before (or is) step j.
  bool before(std::size_t k, std::size_t j) const {
    return clock[j][static_cast<std::size_t>(agent[k])] >= index[k];
  }
};

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xBF58476D1CE4E5B9ull;
}

bool asleep(const std::vector<DporExplorer::Sleeper>& sleep, std::int64_t agent) {
  for (const auto& s : sleep)
    if (s.agent == agent) return true;
  return false;
}

}  // namespace

void DporExplorer::begin_run() {
  reset_engine_runs();
  depth_ = 0;
  blocked_at_ = -1;
  next_sleep_.clear();
}

std::int64_t DporExplorer::pick(std::span<const std::int64_t> ready) {
  const std::vector<std::int64_t> now(ready.begin(), ready.end());
  if (depth_ < replayed_) {
    const Node& node = path_[depth_];
    if (node.ready != now) {
      failure_ = "run error: verify: step " + std::to_string(depth_ + 1) +
                 " of a replayed schedule found other agents ready than before; the program "
                 "does not repeat itself under one schedule (it depends on something besides "
                 "its inputs and the schedule)";
      return -1;
    }
    return node.agent;
  }
  Node node;
  node.ready = now;
  node.sleep = std::move(next_sleep_);
  next_sleep_.clear();
  for (std::int64_t a : now) {
    if (!asleep(node.sleep, a)) {
      node.agent = a;
      break;
    }
  }
  if (node.agent < 0) {
    // Every ready agent sleeps: what follows is explored elsewhere. The run
    // goes on (its outputs are checked), but adds no backtrack point.
    if (blocked_at_ < 0) blocked_at_ = static_cast<std::int64_t>(depth_);
    node.agent = now.front();
  }
  node.backtrack.push_back(node.agent);
  path_.resize(depth_);
  path_.push_back(std::move(node));
  return path_.back().agent;
}

void DporExplorer::on_step(Step&& step) {
  Node& node = path_[depth_];
  if (depth_ + 1 >= replayed_) {
    node.footprint = std::move(step.footprint);
    node.parked = step.parked;
    node.engine_run = step.engine_run;
    node.fresh_windows = step.fresh_windows;
    // The next node's sleep set: the sleepers here, and the agents explored
    // here before, whose steps do not depend on this one.
    next_sleep_.clear();
    for (const auto* list : {&node.sleep, &node.explored})
      for (const Sleeper& s : *list)
        if (s.agent != node.agent && !conflicts(s.footprint, node.footprint))
          next_sleep_.push_back(s);
  }
  ++depth_;
}

void DporExplorer::end_run() {
  path_.resize(depth_);
  if (blocked_at_ >= 0) ++blocked_runs_;
  count_trace();
}

void DporExplorer::count_trace() {
  // The trace's canonical key: every real step (a parked wait is none) with
  // its agent, index, footprint and vector clock, in (agent, index) order;
  // a wait that passed is ordered by its agent's program order only.
  std::int64_t agents = 0;
  for (const Node& n : path_) agents = std::max(agents, n.agent + 1);
  const HappensBefore hb(
      path_.size(), agents,
      [&](std::size_t j) {
        return std::pair<std::int64_t, const std::vector<StepAccess>&>(path_[j].agent,
                                                                       path_[j].footprint);
      },
      [&](std::size_t j) { return path_[j].parked; });
  std::vector<std::size_t> order;
  for (std::size_t j = 0; j < path_.size(); ++j)
    if (!path_[j].parked) order.push_back(j);
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return std::pair(hb.agent[x], hb.index[x]) < std::pair(hb.agent[y], hb.index[y]);
  });
  std::uint64_t key = 0x243F6A8885A308D3ull;
  for (std::size_t j : order) {
    key = mix(key, static_cast<std::uint64_t>(hb.agent[j]));
    for (const StepAccess& x : path_[j].footprint) {
      key = mix(key, (static_cast<std::uint64_t>(x.space) << 56) ^
                         (static_cast<std::uint64_t>(static_cast<std::uint32_t>(x.id)) << 24) ^
                         static_cast<std::uint64_t>(x.owner));
      key = mix(key, static_cast<std::uint64_t>(x.first) * 31 + static_cast<std::uint64_t>(x.end));
      key = mix(key, static_cast<std::uint64_t>(x.kind));
    }
    for (std::int32_t c : hb.clock[j]) key = mix(key, static_cast<std::uint64_t>(c));
  }
  traces_.insert(key);
}

void DporExplorer::analyse_races(std::size_t from, std::size_t to) {
  std::int64_t agents = 0;
  for (const Node& n : path_) agents = std::max(agents, n.agent + 1);
  for (const Node& n : path_)
    for (std::int64_t a : n.ready) agents = std::max(agents, a + 1);
  const HappensBefore hb(
      to, agents,
      [&](std::size_t j) {
        return std::pair<std::int64_t, const std::vector<StepAccess>&>(path_[j].agent,
                                                                       path_[j].footprint);
      },
      [&](std::size_t j) { return path_[j].parked; });
  std::vector<std::int32_t> joined(static_cast<std::size_t>(agents));
  std::vector<std::int32_t> first_in_v(static_cast<std::size_t>(agents));
  for (std::size_t j = from; j < to; ++j) {
    // The direct predecessors of j, latest first: a dependent step i is in
    // race with j when no later predecessor is ordered after i.
    std::vector<std::size_t> preds = hb.depends_on[j];
    std::sort(preds.rbegin(), preds.rend());
    // Everything before j's previous step is ordered before j.
    if (hb.previous[j] >= 0) {
      joined = hb.clock[static_cast<std::size_t>(hb.previous[j])];
    } else {
      std::fill(joined.begin(), joined.end(), 0);
    }
    for (std::size_t i : preds) {
      const bool direct = joined[static_cast<std::size_t>(hb.agent[i])] < hb.index[i];
      for (std::size_t b = 0; b < joined.size(); ++b)
        joined[b] = std::max(joined[b], hb.clock[i][b]);
      if (!direct) continue;
      // v: the steps after i not ordered after it, then j. Its initials:
      // agents whose first step in v has no predecessor in v.
      std::fill(first_in_v.begin(), first_in_v.end(), 0);
      std::vector<std::int64_t> initials;
      std::vector<std::size_t> v;
      auto visit = [&](std::size_t m) {
        v.push_back(m);
        const auto am = static_cast<std::size_t>(hb.agent[m]);
        if (first_in_v[am] == 0) {
          bool has_pred = false;
          for (std::size_t b = 0; b < first_in_v.size() && !has_pred; ++b)
            has_pred = first_in_v[b] != 0 && hb.clock[m][b] >= first_in_v[b];
          if (!has_pred) initials.push_back(hb.agent[m]);
          first_in_v[am] = hb.index[m];
        }
      };
      for (std::size_t m = i + 1; m < j; ++m)
        if (!path_[m].parked && !hb.before(i, m)) visit(m);
      visit(j);
      if (passed_wait(j) || reversal_parks(i, j, v) || wait_still_holds(i, j)) continue;
      Node& node = path_[i];
      bool covered = false;
      for (std::int64_t q : initials) covered = covered || contains(node.backtrack, q);
      if (covered) continue;
      // j's agent first where it can start the reversal, else the first
      // initial that is ready there; none ready: the reversal cannot happen.
      std::int64_t choice = -1;
      if (contains(initials, hb.agent[j]) && contains(node.ready, hb.agent[j]))
        choice = hb.agent[j];
      for (std::size_t q = 0; q < initials.size() && choice < 0; ++q)
        if (contains(node.ready, initials[q])) choice = initials[q];
      if (choice >= 0) node.backtrack.push_back(choice);
    }
  }
}

const StepAccess* DporExplorer::only_access(const Node& n) {
  const StepAccess* only = nullptr;
  for (const StepAccess& x : n.footprint) {
    if (x.id == StepAccess::kLaunchState && x.kind == AccessKind::Read) continue;
    if (only != nullptr) return nullptr;
    only = &x;
  }
  return only;
}

bool DporExplorer::passed_wait(std::size_t j) const {
  const Node& n = path_[j];
  const StepAccess* only = only_access(n);
  return !n.parked && only != nullptr && only->is_wait;
}

bool DporExplorer::wait_still_holds(std::size_t i, std::size_t j) const {
  if (!passed_wait(i)) return false;
  const StepAccess& wait = *only_access(path_[i]);
  const StepAccess* only = only_access(path_[j]);
  if (only == nullptr) return false;
  const StepAccess& notify = *only;
  if (notify.is_wait || !notify.has_value || notify.first != wait.first || notify.end != wait.end ||
      notify.owner != wait.owner || notify.id != wait.id)
    return false;
  // No write of the cell between them is unordered with the wait (it would
  // depend on the wait): reversed, the wait sees what it saw, then the notify.
  const std::int32_t after =
      notify.kind == AccessKind::AtomicAdd
          ? static_cast<std::int32_t>(static_cast<std::uint32_t>(wait.value) +
                                      static_cast<std::uint32_t>(notify.operand))
          : notify.operand;
  return compare(wait.cmp, after, wait.expected);
}

bool DporExplorer::reversal_parks(std::size_t i, std::size_t j,
                                  const std::vector<std::size_t>& v) const {
  const Node& wait = path_[j];
  // A step that begins with a wait does nothing else when the wait fails.
  const StepAccess* waited = nullptr;
  for (const StepAccess& x : wait.footprint) {
    if (x.id == StepAccess::kLaunchState && x.kind == AccessKind::Read) continue;
    waited = &x;
    break;
  }
  if (waited == nullptr || !waited->is_wait) return false;
  const StepAccess& cell = *waited;
  // The one write of the cell a step makes, when it is a notify of exactly
  // the cell; null when it writes the cell otherwise (a data write, more
  // than the cell, twice) or not at all.
  auto notify_of = [&](const Node& n) -> const StepAccess* {
    const StepAccess* found = nullptr;
    for (const StepAccess& x : n.footprint) {
      if (x.kind == AccessKind::Read || !conflicts(std::span(&x, 1), std::span(&cell, 1))) continue;
      if (found != nullptr) return nullptr;
      found = &x;
    }
    if (found == nullptr || !found->has_value || found->first != cell.first ||
        found->end != cell.end)
      return nullptr;
    return found;
  };
  auto writes_cell = [&](const Node& n) {
    for (const StepAccess& x : n.footprint)
      if (x.kind != AccessKind::Read && conflicts(std::span(&x, 1), std::span(&cell, 1)))
        return true;
    return false;
  };
  const StepAccess* first = notify_of(path_[i]);
  if (first == nullptr) return false;
  // Reversed, the wait runs after v's other steps but before i. When i and
  // every write of v are adds, it sees what it saw less i's amount.
  bool only_adds = first->kind == AccessKind::AtomicAdd, v_writes = false;
  for (std::size_t m : v) {
    if (m == j || !writes_cell(path_[m])) continue;
    v_writes = true;
    const StepAccess* x = notify_of(path_[m]);
    only_adds = only_adds && x != nullptr && x->kind == AccessKind::AtomicAdd;
  }
  if (only_adds) {
    const auto reversed = static_cast<std::int32_t>(static_cast<std::uint32_t>(cell.value) -
                                                    static_cast<std::uint32_t>(first->operand));
    return !compare(cell.cmp, reversed, cell.expected);
  }
  if (v_writes) return false;
  // Else it sees the cell's value before i: the last notify of it before i
  // in this engine run, or 0 from the run's start on fresh windows.
  for (std::size_t k = i; k-- > 0;) {
    const Node& n = path_[k];
    if (n.engine_run != path_[i].engine_run) break;
    if (!writes_cell(n)) continue;
    const StepAccess* x = notify_of(n);
    return x != nullptr && !compare(cell.cmp, x->value, cell.expected);
  }
  return path_[i].fresh_windows && !compare(cell.cmp, 0, cell.expected);
}

bool DporExplorer::advance() {
  const std::size_t from = replayed_ == 0 ? 0 : replayed_ - 1;
  const std::size_t to = blocked_at_ >= 0 ? static_cast<std::size_t>(blocked_at_) : path_.size();
  if (from < to) analyse_races(from, to);
  while (!path_.empty()) {
    Node& node = path_.back();
    node.explored.push_back(Sleeper{node.agent, node.footprint});
    std::int64_t next = -1;
    for (std::int64_t q : node.backtrack) {
      if (asleep(node.explored, q) || asleep(node.sleep, q) || !contains(node.ready, q)) continue;
      if (next < 0 || q < next) next = q;
    }
    if (next >= 0) {
      node.agent = next;
      node.footprint.clear();
      node.parked = false;
      replayed_ = path_.size();
      return true;
    }
    pruned_ += static_cast<std::int64_t>(node.ready.size() - node.explored.size());
    path_.pop_back();
  }
  replayed_ = 0;
  return false;
}

std::string DporExplorer::last_schedule() const {
  std::size_t keep = path_.size();
  while (keep > 0 && path_[keep - 1].agent == path_[keep - 1].ready.front()) --keep;
  std::vector<std::int64_t> agents;
  for (std::size_t k = 0; k < keep; ++k) agents.push_back(path_[k].agent);
  return format_schedule(agents);
}

}  // namespace anyp::runtime
