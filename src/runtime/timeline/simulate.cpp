// simulate.cpp — the discrete-event simulation of simulate_timeline():
// agents in program order, notifies, waits and the figures. Remote
// transfers on DMA engines and links are simulate_transfers.cpp.
#include "runtime/timeline/simulate.hpp"

#include <algorithm>
#include <string>

#include "anyp/run_config.hpp"
#include "common/internal_check.hpp"
#include "runtime/diagnostic_text.hpp"
#include "runtime/executable_text.hpp"
#include "runtime/scalar_math.hpp"
#include "runtime/timeline/simulation.hpp"

namespace anyp::runtime {
namespace timeline_sim {
namespace {

constexpr std::size_t kTransitionScan = 256;  // arrivals looked back for a wait's enabler
constexpr std::size_t kNotes = 4;             // approximations described in Timeline::note

}  // namespace

Simulation::Simulation(const Executable& exec, const std::vector<EventStream>& events,
                       const CostModel& model, OpStorage storage)
    : exec_(exec),
      events_(events),
      model_(model),
      storage_(storage),
      states_(events.size()),
      cell_index_(exec),
      // A cell keeps its newest arrival and, in the pool, up to 510 before
      // it, cut back to 255 (the last kTransitionScan, with the newest).
      history_(kTransitionScan - 1, 2 * kTransitionScan - 1) {
  std::size_t total = 0;
  for (const auto& list : events) {
    first_op_.push_back(total);
    total += list.size();
  }
  for (std::size_t r = 0; r < states_.size(); ++r) {
    states_[r].rank = exec.rank_of_agent(static_cast<std::int64_t>(r));
    states_[r].block = exec.block_of_agent(static_cast<std::int64_t>(r));
  }
  ANYP_CHECK(total < std::numeric_limits<std::uint32_t>::max(),
             "a modeled timeline of four billion ops or more");
  ANYP_CHECK(events.size() < std::numeric_limits<std::uint32_t>::max(),
             "a modeled timeline of four billion agents or more");
  if (storage_.keep_ops) t_.ops.resize(total);
  t_.ranks.resize(static_cast<std::size_t>(exec.world_size));
  if (storage_.follow_path) {
    prev_.assign(total);
    released_by_.assign(total);
    fenced_by_.enable();
  }
  t_.names.push_back("");
  t_.model = model.name;
  t_.dma_engines = model.dma_engines;
  t_.dma_issue_ns = model.dma_engines > 0 ? model.dma_issue_ns : 0;
  async_ = model.dma_engines > 0;
  fabric_ = async_ || model.links_shared || model.devices_per_node > 0;
  if (fabric_) plan_roles();
}

Timeline Simulation::run() {
  for (std::size_t r = 0; r < events_.size(); ++r)
    if (!events_[r].empty()) push(0, ItemKind::Step, r);
  for (;;) {
    while (!queue_.empty()) {
      const Item item = queue_.pop();
      switch (item.kind) {
        case ItemKind::Arrival: {
          const Arrival a = arrivals_[item.what];
          free_arrivals_.push_back(item.what);
          arrive(a, item.time);
          break;
        }

        case ItemKind::Step:
          advance(item.what);
          break;
        default:
          on_transfer_event(item);
      }
    }
    if (!release_stuck()) break;
  }
  finish();
  return std::move(t_);
}

void Simulation::push(double time, ItemKind kind, std::size_t what) {
  const int prio = kind == ItemKind::Step ? 2 : kind == ItemKind::Share ? 1 : 0;
  queue_.push(time, prio, kind, what);
}

std::size_t Simulation::new_arrival(const Arrival& a) {
  if (free_arrivals_.empty()) {
    arrivals_.push_back(a);
    return arrivals_.size() - 1;
  }
  const std::size_t slot = free_arrivals_.back();
  free_arrivals_.pop_back();
  arrivals_[slot] = a;
  return slot;
}

std::uint32_t Simulation::cell_slot(const Cell& c) {
  std::uint32_t& slot = cell_index_.slot(c);
  if (slot == 0) {
    cell_states_.emplace_back();
    slot = static_cast<std::uint32_t>(cell_states_.size());
  }
  return slot;
}

std::uint32_t Simulation::intern(const std::string& s) {
  auto [it, fresh] = name_index_.emplace(s, static_cast<std::uint32_t>(t_.names.size()));
  if (fresh) t_.names.push_back(s);
  return it->second;
}

std::uint32_t Simulation::memory_name(const TimelineEvent& e) {
  if (e.kind == TimelineEvent::Kind::Notify || e.kind == TimelineEvent::Kind::Wait) {
    std::uint32_t& name = cell_names_[cell_slot(Cell{e.owner, e.id, e.first})];
    if (name != 0) return name;
    const WindowBuffer& b = exec_.buffers[static_cast<std::size_t>(e.id)];
    const std::string text = "signal '" + b.name + "' cell " +
                             list_text(unflatten(e.first / 4, b.shape)) + " of rank " +
                             std::to_string(e.owner);
    return name = intern(text);
  }
  // Owners and ids fit in 31 bits (P and the buffer count are int32).
  const std::uint64_t key = (static_cast<std::uint64_t>(e.space == Space::Host) << 63) |
                            (static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.id)) << 31) |
                            static_cast<std::uint64_t>(e.owner + 1);
  auto it = region_names_.find(key);
  if (it != region_names_.end()) return it->second;
  const std::string text =
      e.space == Space::Host
          ? "host tensor '" + exec_.host_args[static_cast<std::size_t>(e.id)].name + "'"
          : "rank " + std::to_string(e.owner) + "'s window '" +
                exec_.buffers[static_cast<std::size_t>(e.id)].name + "'";
  return region_names_[key] = intern(text);
}

// Runs agent r from its clock until it blocks or another event comes first.
void Simulation::advance(std::size_t r) {
  AgentState& st = states_[r];
  const auto& list = events_[r];
  while (st.next < list.size()) {
    if (!step(r)) return;  // blocked in a wait, or held by a transfer
    if (st.next < list.size() && !queue_.empty() && !(st.t < queue_.next_time())) {
      push(st.t, ItemKind::Step, r);  // someone else's turn first
      return;
    }
  }
}

// The op's rank, block, start and names.
void Simulation::begin_op(std::size_t r, std::size_t index, TimelineOp& op,
                          const TimelineEvent& e) {
  const AgentState& st = states_[r];
  op = TimelineOp{};
  prev_.set(index, st.last_clock_op);
  op.rank = st.rank;
  op.block = st.block;
  op.start_ns = st.stall_start >= 0 ? st.stall_start : st.t;
  op.blocked_ns = st.stall_start >= 0 ? st.t - st.stall_start : 0;
  if (!named(index)) {  // only the figures and the path: no names
    if (e.kind == TimelineEvent::Kind::Access) {
      const bool local = e.space == Space::Host || e.owner == op.rank;
      const bool read = static_cast<AccessKind>(e.sub) == AccessKind::Read;
      op.kind = local ? (read ? TimelineOp::Kind::LocalRead : TimelineOp::Kind::LocalWrite)
                      : (read ? TimelineOp::Kind::RemoteRead : TimelineOp::Kind::RemoteWrite);
      op.peer = local ? -1 : e.owner;
      op.bytes = e.amount;
    }
    return;
  }
  if (e.site.code >= 0 && e.site.site >= 0) {
    const auto code = static_cast<std::size_t>(e.site.code);
    if (site_names_.size() <= code) site_names_.resize(code + 1);
    auto& names = site_names_[code];
    if (names.empty()) names.resize(exec_.codes[code].sites.size(), {0, 0});
    auto& [function, name] = names[static_cast<std::size_t>(e.site.site)];
    if (function == 0) {
      const Site& s = exec_.codes[code].sites[static_cast<std::size_t>(e.site.site)];
      function = intern(s.function);
      name = intern(s.op);
    }
    op.function = function;
    op.op = name;
  }
  if (e.kind == TimelineEvent::Kind::Access) {
    const bool local = e.space == Space::Host || e.owner == op.rank;
    const bool read = static_cast<AccessKind>(e.sub) == AccessKind::Read;
    op.kind = local ? (read ? TimelineOp::Kind::LocalRead : TimelineOp::Kind::LocalWrite)
                    : (read ? TimelineOp::Kind::RemoteRead : TimelineOp::Kind::RemoteWrite);
    op.memory = memory_name(e);
    op.peer = local ? -1 : e.owner;
    op.bytes = e.amount;
  }
}

// Executes agent r's next event; false when it blocks.
bool Simulation::step(std::size_t r) {
  AgentState& st = states_[r];
  if (fabric_ && async_ && !issue_early(r)) return false;
  const TimelineEvent e = events_[r][st.next];
  // Only an access can be held by a transfer or start one (plan_roles).
  if (fabric_ && e.kind == TimelineEvent::Kind::Access) {
    if (!clear_of_transfers(r)) return false;
    if (roles_[r][st.next] == Role::Transfer) return issue_transfer(r);
  }
  const std::size_t index = first_op_[r] + st.next;
  TimelineOp& op = agent_op(r, index);
  begin_op(r, index, op, e);
  // Since the release, at most issues of transfers that do not hold the
  // agent came between (d each): the release decided this op's start.
  released_by_.set(index, st.released_by);
  st.released_by = kNone;
  st.last_clock_op = index;
  st.stall_start = -1;
  double cost = 0;
  switch (e.kind) {
    case TimelineEvent::Kind::Access: {
      cost = op.peer < 0 ? model_.local_ns(e.amount) : model_.remote_ns(e.amount);
      break;
    }
    case TimelineEvent::Kind::Compute:
      op.kind = TimelineOp::Kind::Compute;
      op.elements = e.amount;
      cost = model_.compute_ns(static_cast<ComputeClass>(e.sub), e.dtype, e.amount);
      break;
    case TimelineEvent::Kind::Notify: {
      op.kind = TimelineOp::Kind::Notify;
      if (named(index)) op.memory = memory_name(e);
      op.peer = e.owner;
      cost = model_.notify_issue_ns;
      Arrival a;
      a.cell = Cell{e.owner, e.id, e.first};
      a.kind = static_cast<ir::NotifyKind>(e.sub);
      a.value = static_cast<std::int32_t>(e.amount);
      a.op = index;
      a.from = static_cast<std::int64_t>(r);
      a.depth = st.depth;
      const std::size_t arrival = new_arrival(a);
      const double earliest = st.t + cost + model_.notify_ns;
      if (fabric_) {
        notify_after_transfers(r, arrival, earliest);
      } else {
        push(earliest, ItemKind::Arrival, arrival);
      }
      break;
    }
    case TimelineEvent::Kind::Wait: {
      op.kind = TimelineOp::Kind::Wait;
      if (named(index)) op.memory = memory_name(e);
      const std::uint32_t slot = cell_slot(Cell{e.owner, e.id, e.first});
      const CellState& cell = cell_at(slot);
      const auto cmp = static_cast<ir::WaitKind>(e.sub);
      if (!compare(cmp, cell.value, e.amount)) {
        if ((cell.flags & CellState::kDataWritten) == 0) {
          st.blocked = true;
          st.wait_start = st.t;
          add_waiter(slot, r);
          return false;
        }
        assumed(agent_text(exec_, static_cast<std::int64_t>(r)) + "'s wait on " +
                t_.names[memory_name(e)] +
                " was satisfied by a data write into the cell, not a notify: it ends when "
                "that write is done");
      } else if (const std::optional<Applied> enabler = enabler_of(cell, cmp, e.amount)) {
        link(index, st, *enabler);
      }
      cost = model_.wait_ns;
      break;
    }
  }
  op.end_ns = st.t + cost;
  st.t = op.end_ns;
  op_done(r, index, op);
  if (e.kind == TimelineEvent::Kind::Access && static_cast<AccessKind>(e.sub) != AccessKind::Read)
    data_written(footprint(e), st.t);
  ++st.next;
  return true;
}

void Simulation::op_done(std::size_t r, std::size_t index, const TimelineOp& op) {
  AgentState& st = states_[r];
  if (op.engine < 0) {
    // A block other than 0 waiting for its next launch is idle: neither
    // busy nor waiting for a signal of the program.
    // (The event is read only for such a block: reading an earlier event
    // than the agent's next moves its stream's cursor.)
    const auto idle = [&] {
      const TimelineEvent e = events_[r][index - first_op_[r]];
      return e.kind == TimelineEvent::Kind::Wait && e.id == exec_.block_buffer;
    };
    if (!(op.block > 0 && idle())) {
      st.wait_ns += op.blocked_ns;
      st.busy_ns += op.end_ns - op.start_ns - op.blocked_ns;
    }
  } else {
    RankTimeline& rt = t_.ranks[static_cast<std::size_t>(op.rank)];
    rt.engine_busy_ns += op.end_ns - op.start_ns;
    if (!op.continues_transfer) ++rt.transfers;
  }
  // The critical path ends at the op that ends last. Without transfers an
  // agent's last op ends last; with them, any of its transfers may.
  if (fabric_ || index + 1 == first_op_[r] + events_[r].size()) {
    if (op.end_ns > last_end_ || (op.end_ns == last_end_ && index < last_op_)) {
      last_end_ = op.end_ns;
      last_op_ = index;
    }
  }
  if (storage_.collect != nullptr && (*storage_.collect)[index]) collected_.emplace_back(index, op);
}

// A data write into a signal buffer: its cells change in ways the model
// cannot follow; a wait on one of them is released by the write.
void Simulation::data_written(const Footprint& f, double at) {
  if (f.space != Space::Window || !exec_.buffers[static_cast<std::size_t>(f.id)].signal) return;
  for (std::int64_t b = f.first / 4 * 4; b < f.end; b += 4) {
    Arrival a;
    a.cell = Cell{f.owner, f.id, b};
    a.data = true;
    push(at, ItemKind::Arrival, new_arrival(a));
  }
}

void Simulation::arrive(const Arrival& a, double at) {
  const std::uint32_t slot = cell_slot(a.cell);
  CellState& cell = cell_at(slot);
  if (a.data) {
    cell.flags |= CellState::kDataWritten;
  } else {
    // The newest arrival so far joins the ones before it (only the last
    // kTransitionScan are ever looked at).
    if (cell.has_newest()) history_.push(cell.older, cell.older_count, cell.newest());
    cell.value = a.kind == ir::NotifyKind::Set
                     ? a.value
                     : static_cast<std::int32_t>(static_cast<std::uint32_t>(cell.value) +
                                                 static_cast<std::uint32_t>(a.value));
    cell.op = static_cast<std::uint32_t>(a.op);
    cell.from = static_cast<std::int32_t>(a.from);
    cell.depth = static_cast<std::int32_t>(a.depth);
  }
  if ((cell.flags & CellState::kWaiters) == 0) return;
  // Every blocked agent whose wait now holds is released, in the order
  // they blocked.
  for (std::uint32_t w = waiters_.at(slot).first; w != 0;) {
    const std::size_t r = w - 1;
    AgentState& st = states_[r];
    w = st.next_waiter;
    const TimelineEvent& e = events_[r][st.next];
    const auto cmp = static_cast<ir::WaitKind>(e.sub);
    if (!a.data && !compare(cmp, cell.value, e.amount)) continue;
    if (a.data) {
      assumed(agent_text(exec_, static_cast<std::int64_t>(r)) + "'s wait on " +
              t_.names[memory_name(e)] +
              " was satisfied by a data write into the cell, not a notify: it ends when that "
              "write is done");
    }
    remove_waiter(slot, r);
    release(r, at, a.data ? std::nullopt : std::optional<Applied>(cell.newest()));
  }
}

void Simulation::add_waiter(std::uint32_t slot, std::size_t r) {
  const auto w = static_cast<std::uint32_t>(r + 1);
  Waiters& list = waiters_[slot];
  if (list.last == 0) {
    list.first = w;
  } else {
    states_[list.last - 1].next_waiter = w;
  }
  list.last = w;
  cell_at(slot).flags |= CellState::kWaiters;
}

void Simulation::remove_waiter(std::uint32_t slot, std::size_t r) {
  const auto it = waiters_.find(slot);
  if (it == waiters_.end()) return;
  Waiters& list = it->second;
  const auto w = static_cast<std::uint32_t>(r + 1);
  std::uint32_t before = 0, k = list.first;
  while (k != 0 && k != w) {
    before = k;
    k = states_[k - 1].next_waiter;
  }
  if (k == 0) return;  // not waiting on this cell
  const std::uint32_t after = states_[r].next_waiter;
  if (before == 0) {
    list.first = after;
  } else {
    states_[before - 1].next_waiter = after;
  }
  if (list.last == w) list.last = before;
  states_[r].next_waiter = 0;
  if (list.first == 0) {
    waiters_.erase(it);
    cell_at(slot).flags &= static_cast<std::uint8_t>(~CellState::kWaiters);
  }
}

// The arrival that made `cmp expected` true and kept it so (kNone: none
// found, or true from the start).
std::optional<Applied> Simulation::enabler_of(const CellState& cell, ir::WaitKind cmp,
                                              std::int64_t expected) const {
  if (!cell.has_newest()) return std::nullopt;
  // The newest, then the older ones in the pool: the value before each is
  // the one after the next older (0 before the oldest kept).
  const auto value_before = [&](std::uint32_t older) {
    return older == 0 ? 0 : history_.at(older).value_after;
  };
  if (!compare(cmp, value_before(cell.older), expected)) return cell.newest();
  std::uint32_t node = cell.older;
  for (std::size_t k = 1; node != 0 && k < kTransitionScan; ++k) {
    const std::uint32_t earlier = history_.before(node);
    if (!compare(cmp, value_before(earlier), expected)) return history_.at(node);
    node = earlier;
  }
  return std::nullopt;
}

void Simulation::release(std::size_t r, double at, const std::optional<Applied>& applied) {
  AgentState& st = states_[r];
  const std::size_t index = first_op_[r] + st.next;
  TimelineOp& op = agent_op(r, index);
  const double satisfied = std::max(at, st.wait_start);
  op.blocked_ns += satisfied - st.wait_start;  // after any hold begin_op counted
  if (applied) {
    const Applied& a = *applied;
    const std::size_t notify = a.op;
    link(index, st, a);
    if (at > st.wait_start)
      released_by_.set(index, fenced_by_[notify] != kNone ? fenced_by_[notify] : notify);
  }
  op.end_ns = satisfied + model_.wait_ns;
  st.t = op.end_ns;
  op_done(r, index, op);
  st.blocked = false;
  ++st.next;
  if (st.next < events_[r].size()) push(st.t, ItemKind::Step, r);
}

// Records the flow into wait op `wait_op` from the notify of `a`, and the
// agent's round count.
void Simulation::link(std::size_t wait_op, AgentState& st, const Applied& a) {
  if (storage_.keep_ops) t_.flows.push_back(TimelineFlow{a.op, wait_op});
  const bool self = states_[static_cast<std::size_t>(a.from)].rank == st.rank;
  st.depth = std::max<std::int64_t>(st.depth, std::int64_t{a.depth} + (self ? 0 : 1));
}

// With nothing left to happen, an agent still blocked waits for something
// the modeled order never produced (the run's order satisfied it): free
// the one that blocked first, at once.
bool Simulation::release_stuck() {
  std::size_t stuck = kNone;
  for (std::size_t r = 0; r < states_.size(); ++r) {
    if (states_[r].blocked && (stuck == kNone || states_[r].wait_start < states_[stuck].wait_start))
      stuck = r;
  }
  if (stuck == kNone) return false;
  AgentState& st = states_[stuck];
  const TimelineEvent& e = events_[stuck][st.next];
  const std::uint32_t slot = cell_slot(Cell{e.owner, e.id, e.first});
  assumed(agent_text(exec_, static_cast<std::int64_t>(stuck)) + "'s wait on " +
          t_.names[memory_name(e)] +
          " is never satisfied in the modeled order of the notifies (the run's order "
          "satisfied it): it ends when it begins");
  remove_waiter(slot, stuck);
  release(stuck, st.wait_start, std::nullopt);
  return true;
}

void Simulation::assumed(const std::string& what) {
  if (notes_ < kNotes) t_.note += (t_.note.empty() ? "" : "\n") + what;
  ++notes_;
}

void Simulation::finish() {
  if (notes_ > kNotes) t_.note += "\n(and " + std::to_string(notes_ - kNotes) + " more)";
  std::vector<double> issue_ns(events_.size(), 0), stall_ns(events_.size(), 0),
      last_done(events_.size(), 0);
  if (fabric_) transfer_figures(issue_ns, stall_ns, last_done);
  // A rank's figures cover all its blocks (events_ is per agent).
  for (std::size_t r = 0; r < events_.size(); ++r) {
    RankTimeline& rt = t_.ranks[r % t_.ranks.size()];
    // An agent ends when its last op and its last transfer have; the time
    // it spends waiting for its transfers at the end counts as waiting.
    const double end = std::max(states_[r].t, last_done[r]);
    rt.finish_ns = std::max(rt.finish_ns, end);
    rt.rounds = std::max(rt.rounds, states_[r].depth);
    rt.busy_ns += issue_ns[r];
    // A wait_async that held the agent at its very end.
    const double held = states_[r].stall_start >= 0 ? states_[r].t - states_[r].stall_start : 0;
    rt.wait_ns += end - states_[r].t + stall_ns[r] + held;
    rt.wait_ns += states_[r].wait_ns;  // its ops' (op_done)
    rt.busy_ns += states_[r].busy_ns;
    if (rt.finish_ns > t_.makespan_ns) t_.makespan_ns = rt.finish_ns;
    t_.rounds = std::max(t_.rounds, rt.rounds);
  }
  if (network_) link_figures();
  critical_path();
}

// Back from the last op to end: from an op to what released it when
// something else decided when it ended or started (a blocked wait's
// notify or the transfer that notify was delivered after, the transfer
// that held an access or freed an engine), else to the op before it on its
// agent's clock (for a transfer, the op before its issue).
void Simulation::critical_path() {
  if (!storage_.follow_path) return;
  std::vector<std::size_t> path;
  for (std::size_t cur = last_op_; cur != kNone;) {
    path.push_back(cur);
    cur = released_by_[cur] != kNone ? released_by_[cur] : prev_[cur];
  }
  std::reverse(path.begin(), path.end());
  t_.critical_path = std::move(path);
}

}  // namespace timeline_sim

TimelineDetail timeline_detail(const std::string& name) {
  const auto it = std::find(kTimelineDetails.begin(), kTimelineDetails.end(), name);
  ANYP_CHECK(it != kTimelineDetails.end(), "an unchecked timeline_detail");
  return static_cast<TimelineDetail>(it - kTimelineDetails.begin());
}

Timeline simulate_timeline(const Executable& exec, const std::vector<EventStream>& events,
                           const CostModel& model, TimelineDetail detail) {
  const bool keep_ops = detail == TimelineDetail::Ops;
  Timeline t = timeline_sim::Simulation(exec, events, model,
                                        {keep_ops, detail != TimelineDetail::Figures, nullptr})
                   .run();
  if (detail != TimelineDetail::Path) return t;
  // A second run of the same simulation collects the path's ops.
  std::size_t total = 0;
  for (const auto& list : events) total += list.size();
  std::vector<char> on_path(total, 0);
  for (std::size_t op : t.critical_path) on_path[op] = 1;
  timeline_sim::Simulation again(exec, events, model, {false, false, &on_path});
  t.names = again.run().names;  // the second run named the path's ops only
  std::vector<std::pair<std::size_t, TimelineOp>>& ops = again.collected();
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // The path in time order, numbered into the kept ops.
  for (std::size_t& op : t.critical_path) {
    const auto it = std::lower_bound(ops.begin(), ops.end(), op,
                                     [](const auto& a, std::size_t i) { return a.first < i; });
    ANYP_CHECK(it != ops.end() && it->first == op, "a critical-path op not collected");
    t.ops.push_back(it->second);
    op = t.ops.size() - 1;
  }
  return t;
}

}  // namespace anyp::runtime
