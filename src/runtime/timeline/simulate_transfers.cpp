// simulate_transfers.cpp — remote transfers in the timeline simulation,
// for a model with DMA engines or links (docs/timeline.md §2a, §2b).
//
// Asynchronous (dma_engines > 0): a put (the source read and the remote
// write, recorded back to back), a get (the remote read and the landing
// write) or a lone remote store is issued in dma_issue_ns on the agent's
// clock, waits for a free engine of its rank, spends its local side and
// the message latency on it, then moves its payload through the links; the
// agent goes on meanwhile. It is held back only by what depends on a
// transfer in flight: an access of memory the transfer reads or writes (one
// of them a write), a remote read into a tile (its data is the next op's
// operand), a notify (delivered once every transfer its agent issued
// before it has completed: the door makes writes visible before a later
// notify), and the end of the run. Synchronous with links (no engines): a
// remote access occupies its agent until its payload is through.
#include <algorithm>
#include <cmath>

#include "common/internal_check.hpp"
#include "runtime/timeline/simulation.hpp"

namespace anyp::runtime::timeline_sim {
namespace {

// Links per device: its port out and in within its node, then its
// inter-node port out and in.
constexpr std::size_t kLinksPerDevice = 4;

double capacity(double beta_ns_per_byte) {
  return beta_ns_per_byte > 0 ? 1 / beta_ns_per_byte : INFINITY;
}

}  // namespace

std::int64_t Simulation::node_of(std::int64_t rank) const {
  if (model_.devices_per_node <= 0) return 0;
  const std::int64_t device =
      exec_.device_ids.empty() ? rank : exec_.device_ids[static_cast<std::size_t>(rank)];
  return device / model_.devices_per_node;
}

void Simulation::plan_roles() {
  roles_.resize(events_.size());
  agent_transfers_.resize(events_.size());
  for (std::size_t r = 0; r < events_.size(); ++r) {
    const auto& list = events_[r];
    const std::int64_t rank = exec_.rank_of_agent(static_cast<std::int64_t>(r));
    auto remote = [&](const TimelineEvent& e) {
      return e.kind == TimelineEvent::Kind::Access && e.space == Space::Window && e.owner != rank;
    };
    auto local = [&](const TimelineEvent& e) {
      return e.kind == TimelineEvent::Kind::Access && !remote(e);
    };
    roles_[r].assign(list.size(), Role::Op);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const TimelineEvent e = list[i];
      if (e.kind != TimelineEvent::Kind::Access) continue;  // an op on the agent's clock
      TimelineEvent next;
      const bool pairs = async_ && i + 1 < list.size() && (next = list[i + 1], true) &&
                         next.site.code == e.site.code && next.site.site == e.site.site &&
                         next.amount == e.amount;
      if (pairs && local(e) && !is_write(e) && remote(next) && is_write(next)) {
        roles_[r][i] = Role::Transfer;  // a put: the source read, then the remote write
        roles_[r][++i] = Role::Tail;
      } else if (pairs && remote(e) && !is_write(e) && local(next) && is_write(next)) {
        roles_[r][i] = Role::Transfer;  // a get: the remote read, then the landing write
        roles_[r][++i] = Role::Tail;
      } else if (remote(e)) {
        roles_[r][i] = Role::Transfer;
      }
      if (async_ && roles_[r][i] == Role::Tail && e.issued_before > 0)
        agent_transfers_[r].early.push_back({e.issued_before - 1u, i - 1});
    }
    std::stable_sort(agent_transfers_[r].early.begin(), agent_transfers_[r].early.end(),
                     [](const auto& a, const auto& b) { return a.at < b.at; });
    if (!agent_transfers_[r].early.empty()) states_[r].early_due = agent_transfers_[r].early[0].at;
  }
  if (async_) {
    engines_.resize(static_cast<std::size_t>(exec_.world_size));
    for (DeviceEngines& d : engines_)
      d.busy.assign(static_cast<std::size_t>(model_.dma_engines), 0);
  }
  if (model_.links_shared) {
    std::vector<double> caps;
    for (std::int64_t d = 0; d < exec_.world_size; ++d) {
      for (double beta : {model_.beta_ns_per_byte, model_.beta_ns_per_byte,
                          model_.inter_node_beta_ns_per_byte, model_.inter_node_beta_ns_per_byte})
        caps.push_back(capacity(beta));
    }
    network_.emplace(std::move(caps));
  }
}

// Whether the access at agent r's event `event` (with its tail, for a
// pair) touches memory a transfer of r in flight touches, one of them a
// write; if so the agent is held (from now, unless it already was).
bool Simulation::held_by_transfers(std::size_t r, std::size_t event) {
  AgentState& st = states_[r];
  const AgentTransfers& at = agent_transfers_[r];
  if (at.in_flight == 0) return false;
  const TimelineEvent e = events_[r][event];
  if (e.kind != TimelineEvent::Kind::Access) return false;
  std::array<Footprint, 2> mine{footprint(e), {}};
  std::size_t count = 1;
  if (event + 1 < events_[r].size() && roles_[r][event + 1] == Role::Tail)
    mine[count++] = footprint(events_[r][event + 1]);
  for (std::size_t i = 0; i < count; ++i) {
    if (!touches_.conflicts(r, mine[i])) continue;
    if (st.stall_start < 0) st.stall_start = st.t;
    st.stalled = true;
    return true;
  }
  return false;
}

bool Simulation::clear_of_transfers(std::size_t r) {
  const std::size_t next = states_[r].next;
  if (agent_transfers_[r].early_issued.count(next)) return true;  // a put_async's wait
  return !held_by_transfers(r, next);
}

bool Simulation::issue_early(std::size_t r) {
  AgentState& st = states_[r];
  if (st.early_due > st.next) return true;  // (without touching the agent's transfers)
  AgentTransfers& at = agent_transfers_[r];
  while (st.early_next < at.early.size() && at.early[st.early_next].at <= st.next) {
    const std::size_t head = at.early[st.early_next].head;
    // A put_async that reads or writes what a transfer in flight writes
    // (or writes what one reads) starts after it, as its program order says.
    if (held_by_transfers(r, head)) return false;
    ++st.early_next;
    st.early_due = st.early_next < at.early.size() ? at.early[st.early_next].at : kNone;
    const std::size_t t = make_transfer(r, head);
    at.early_issued[head] = {t, transfers_[t].events};
  }
  return true;
}

bool Simulation::issue_transfer(std::size_t r) {
  AgentState& st = states_[r];
  AgentTransfers& at = agent_transfers_[r];
  if (const auto it = at.early_issued.find(st.next); it != at.early_issued.end()) {
    // The wait_async of a put_async: held until its transfer is done.
    if (!it->second.done) {
      if (st.stall_start < 0) st.stall_start = st.t;
      st.awaiting = it->second.transfer;
      return false;
    }
    st.next += it->second.events;
    at.early_issued.erase(it);
    return true;
  }
  const std::size_t index = make_transfer(r, st.next);
  st.next += transfers_[index].events;
  if (!transfers_[index].blocking) return true;
  st.awaiting = index;
  return false;
}

std::size_t Simulation::make_transfer(std::size_t r, std::size_t event) {
  AgentState& st = states_[r];
  const auto& list = events_[r];
  // Its record: a free one, or a new one (made in place: a record with its
  // two ops is about 450 bytes).
  std::size_t index = transfers_.size();
  if (free_transfers_.empty()) {
    transfers_.emplace_back();
  } else {
    index = free_transfers_.back();
    free_transfers_.pop_back();
  }
  Transfer& x = transfers_[index];
  x = Transfer{};
  x.agent = r;
  x.rank = states_[r].rank;
  x.event = event;
  x.events = event + 1 < list.size() && roles_[r][event + 1] == Role::Tail ? 2 : 1;
  const TimelineEvent& head = list[event];
  const bool head_remote = head.space == Space::Window && head.owner != x.rank;
  const TimelineEvent& remote = head_remote ? head : list[event + 1];
  if (x.events == 2) {
    const TimelineEvent& local = head_remote ? list[event + 1] : head;
    x.local_ns = model_.local_ns(local.amount);
  }
  for (std::size_t k = 0; k < x.events; ++k)
    x.touches[x.touch_count++] = footprint(list[event + k]);
  const bool inter = node_of(x.rank) != node_of(remote.owner);
  const double alpha = inter ? model_.inter_node_alpha_ns : model_.alpha_ns;
  const double beta = inter ? model_.inter_node_beta_ns_per_byte : model_.beta_ns_per_byte;
  x.fixed_ns = x.local_ns + alpha;
  if (model_.links_shared) {
    x.bytes = static_cast<double>(remote.amount);
  } else {
    x.fixed_ns += static_cast<double>(remote.amount) * beta;
  }
  const bool read = !is_write(remote);
  const auto src = static_cast<std::size_t>(read ? remote.owner : x.rank);
  const auto dst = static_cast<std::size_t>(read ? x.rank : remote.owner);
  const std::size_t out = inter ? 2 : 0, in = inter ? 3 : 1;
  x.links = {src * kLinksPerDevice + out, dst * kLinksPerDevice + in};
  // A remote read alone brings a tile the agent's next op computes on.
  x.blocking = !async_ || (x.events == 1 && read);
  x.issued = st.t;
  x.held_from = st.stall_start >= 0 ? st.stall_start : st.t;
  if (st.stall_start >= 0) x.stall_ns = st.t - st.stall_start;
  st.stall_start = -1;
  AgentTransfers& at = agent_transfers_[r];
  x.seq = at.completed.size();
  at.completed.push_back(0);
  for (std::size_t k = 0; k < x.events; ++k) {
    const std::size_t op_index = first_op_[r] + event + k;
    TimelineOp& op = transfer_op(x, k);
    begin_op(r, op_index, op, list[event + k]);
    op.issued_ns = x.issued;
    if (k > 0) prev_.set(op_index, first_op_[r] + event);
  }
  // A transfer issued after a hold follows what held the agent.
  if (st.released_by != kNone) released_by_.set(first_op_[r] + event, st.released_by);
  if (x.blocking) {  // on the agent's clock: what follows follows it
    st.last_clock_op = first_op_[r] + event;
    st.released_by = kNone;
  }
  if (!x.blocking) {  // on the agent's clock otherwise
    at.issue_ns += issue_cost();
    at.stall_ns += x.stall_ns;
  }
  ++at.in_flight;
  for (std::size_t k = 0; k < x.touch_count; ++k)
    x.touch_handles[k] = touches_.add(r, x.touches[k]);
  st.t += issue_cost();
  push(st.t, ItemKind::Enqueue, index);
  return index;
}

void Simulation::notify_after_transfers(std::size_t r, std::size_t arrival, double earliest) {
  AgentTransfers& at = agent_transfers_[r];
  const std::size_t fence = at.completed.size();
  if (at.watermark >= fence) {
    push(earliest, ItemKind::Arrival, arrival);
  } else {
    at.notifies.push_back(PendingNotify{arrival, earliest, fence});
  }
}

void Simulation::on_transfer_event(const Item& item) {
  switch (item.kind) {
    case ItemKind::Enqueue:
      start_transfer(item.what, item.time);
      break;
    case ItemKind::Moving:
      transfer_moving(item.what, item.time);
      break;
    case ItemKind::FlowCheck:
      check_flows(item.what, item.time);
      break;
    case ItemKind::Share:
      share_queued_ = false;
      network_->share();
      schedule_flow_check();
      break;
    default:
      ANYP_CHECK(false, "a timeline queue item of no transfer kind");
  }
}

void Simulation::start_transfer(std::size_t t, double now, std::size_t freed_by) {
  Transfer& x = transfers_[t];
  if (async_) {
    DeviceEngines& d = engines_[static_cast<std::size_t>(x.rank)];
    const auto free = std::find(d.busy.begin(), d.busy.end(), 0);
    if (free == d.busy.end()) {
      d.queue.push_back(t);
      return;
    }
    *free = 1;
    x.engine = static_cast<std::int32_t>(free - d.busy.begin());
    if (freed_by != kNone) released_by_.set(first_op_[x.agent] + x.event, freed_by);
  }
  x.started = now;
  push(now + x.fixed_ns, ItemKind::Moving, t);
}

void Simulation::transfer_moving(std::size_t t, double now) {
  const Transfer& x = transfers_[t];
  if (!network_ || x.bytes <= 0) {
    complete_transfer(t, now);
    return;
  }
  network_->advance(now);
  const std::size_t flow = network_->add(x.links, x.bytes);
  if (flow_transfer_.size() <= flow) flow_transfer_.resize(flow + 1, kNone);
  flow_transfer_[flow] = t;
  share_links(now);
}

void Simulation::share_links(double now) {
  if (share_queued_) return;
  share_queued_ = true;
  push(now, ItemKind::Share, 0);
}

void Simulation::schedule_flow_check() {
  const auto [flow, at] = network_->next_finish();
  if (flow != LinkNetwork::kNone)
    push(at, ItemKind::FlowCheck, static_cast<std::size_t>(network_->version()));
}

void Simulation::check_flows(std::uint64_t version, double now) {
  if (version != network_->version()) return;  // the flows changed since it was scheduled
  network_->advance(now);
  const double tolerance = 1e-9 * std::max(1.0, now);
  for (;;) {
    const auto [flow, at] = network_->next_finish();
    if (flow == LinkNetwork::kNone || at > now + tolerance) break;
    network_->remove(flow);
    complete_transfer(flow_transfer_[flow], now);
  }
  share_links(now);
}

void Simulation::complete_transfer(std::size_t t, double now) {
  Transfer& x = transfers_[t];
  const auto& list = events_[x.agent];
  const std::size_t first = first_op_[x.agent] + x.event;
  auto op_of = [&](std::size_t k) -> TimelineOp& { return transfer_op(x, k); };
  if (x.blocking) {
    // On the agent's clock, from when it was first held back; waiting for
    // an engine counts as blocked.
    TimelineOp& op = op_of(0);
    op.start_ns = x.held_from;  // the very double the op before it ended at
    op.end_ns = now;
    op.blocked_ns = x.stall_ns + std::max(0.0, x.started - x.issued - issue_cost());
  } else {
    // On the engine: a put's source read (its first op, local) takes the
    // first local_ns, a get's landing write (its second) the last; a lone
    // remote store the whole span (local_ns 0).
    const bool put = op_of(0).peer < 0;
    const double first_end = put ? x.started + x.local_ns : now - x.local_ns;
    for (std::size_t k = 0; k < x.events; ++k) {
      TimelineOp& op = op_of(k);
      op.engine = x.engine;
      op.blocked_ns = 0;  // the engine's time; a hold before the issue is the agent's
      op.continues_transfer = k > 0;
      op.start_ns = k == 0 ? x.started : first_end;
      op.end_ns = k == 0 ? first_end : now;
    }
  }
  for (std::size_t k = 0; k < x.events; ++k) op_done(x.agent, first + k, op_of(k));
  for (std::size_t k = 0; k < x.touch_count; ++k)
    if (x.touches[k].write) data_written(x.touches[k], now);
  const std::size_t last_op = first + x.events - 1;
  AgentTransfers& at = agent_transfers_[x.agent];
  --at.in_flight;
  for (std::size_t k = 0; k < x.touch_count; ++k) touches_.remove(x.touch_handles[k]);
  at.last_done = std::max(at.last_done, now);
  if (const auto it = at.early_issued.find(x.event);
      it != at.early_issued.end() && it->second.transfer == t)
    it->second.done = true;
  at.completed[x.seq] = 1;
  while (at.watermark < at.completed.size() && at.completed[at.watermark]) ++at.watermark;
  while (!at.notifies.empty() && at.notifies.front().fence <= at.watermark) {
    const PendingNotify n = at.notifies.front();
    at.notifies.pop_front();
    if (now > n.earliest) fenced_by_.set(arrivals_[n.arrival].op, last_op);
    push(std::max(n.earliest, now), ItemKind::Arrival, n.arrival);
  }
  if (x.engine >= 0) {
    DeviceEngines& d = engines_[static_cast<std::size_t>(x.rank)];
    d.busy[static_cast<std::size_t>(x.engine)] = 0;
    if (!d.queue.empty()) {
      const std::size_t next = d.queue.front();
      d.queue.pop_front();
      start_transfer(next, now, last_op);
    }
  }
  AgentState& st = states_[x.agent];
  if (st.awaiting == t) {
    st.awaiting = kNone;
    if (!x.blocking) st.released_by = last_op;  // a wait_async: its next op follows the transfer
    st.t = now;
    if (st.next < list.size()) push(now, ItemKind::Step, x.agent);
  } else if (st.stalled) {
    st.stalled = false;
    if (now >= st.t) st.released_by = last_op;
    st.t = std::max(st.t, now);
    push(st.t, ItemKind::Step, x.agent);
  }
  free_transfers_.push_back(t);
}

void Simulation::transfer_figures(std::vector<double>& busy_ns, std::vector<double>& wait_ns,
                                  std::vector<double>& last_done) const {
  for (std::size_t r = 0; r < agent_transfers_.size(); ++r) {
    const AgentTransfers& at = agent_transfers_[r];
    busy_ns[r] += at.issue_ns;
    wait_ns[r] += at.stall_ns;
    last_done[r] = std::max(last_done[r], at.last_done);
  }
}

void Simulation::link_figures() {
  for (std::size_t l = 0; l < network_->links(); ++l) {
    if (network_->bytes_carried(l) <= 0) continue;
    TimelineLink link;
    link.rank = static_cast<std::int64_t>(l / kLinksPerDevice);
    link.port = static_cast<TimelineLink::Port>(l % kLinksPerDevice);
    link.bytes = network_->bytes_carried(l);
    link.busy_ns = network_->busy_ns(l);
    t_.links.push_back(link);
  }
}

}  // namespace anyp::runtime::timeline_sim
