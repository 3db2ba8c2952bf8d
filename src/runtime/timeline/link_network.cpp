// link_network.cpp — max-min fair sharing of the modeled links, refilled
// per changed component (see the header).
#include "runtime/timeline/link_network.hpp"

#include <algorithm>
#include <cmath>

#include "common/internal_check.hpp"

namespace anyp::runtime {

LinkNetwork::LinkNetwork(std::vector<double> capacities) {
  links_.resize(capacities.size());
  for (std::size_t i = 0; i < capacities.size(); ++i) links_[i].capacity = capacities[i];
  link_seen_.assign(links_.size(), 0);
  left_.assign(links_.size(), 0);
  open_.assign(links_.size(), 0);
}

void LinkNetwork::advance(double now) {
  if (now > now_) now_ = now;
}

void LinkNetwork::settle_flow(Flow& f) const {
  const double dt = now_ - f.stamp;
  if (dt > 0 && !std::isinf(f.rate)) f.remaining = std::max(0.0, f.remaining - f.rate * dt);
  f.stamp = now_;
}

void LinkNetwork::settle_link(Link& l) const {
  const double dt = now_ - l.stamp;
  if (dt > 0 && !l.flows.empty()) {
    l.busy += dt;
    l.carried += l.rate_sum * dt;
  }
  l.stamp = now_;
}

double LinkNetwork::remaining(std::size_t id) const {
  Flow f = flows_[id];
  settle_flow(f);
  return f.remaining;
}

double LinkNetwork::bytes_carried(std::size_t link) const {
  Link l = links_[link];
  settle_link(l);
  return l.carried;
}

double LinkNetwork::busy_ns(std::size_t link) const {
  Link l = links_[link];
  settle_link(l);
  return l.busy;
}

std::size_t LinkNetwork::add(std::array<std::size_t, 2> links, double bytes) {
  std::size_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = flows_.size();
    flows_.emplace_back();
    flow_seen_.push_back(0);
  }
  Flow& f = flows_[id];
  f = Flow{links, bytes, 0, now_, f.epoch + 1, true};
  for (std::size_t k = 0; k < (links[0] == links[1] ? 1u : 2u); ++k) {
    Link& l = links_[links[k]];
    settle_link(l);
    l.flows.push_back(id);
    if (!l.changed) {
      l.changed = true;
      changed_.push_back(links[k]);
    }
  }
  ++version_;
  return id;
}

void LinkNetwork::remove(std::size_t id) {
  Flow& f = flows_[id];
  ANYP_CHECK(f.active, "a modeled flow removed twice");
  for (std::size_t k = 0; k < (f.links[0] == f.links[1] ? 1u : 2u); ++k) {
    Link& l = links_[f.links[k]];
    settle_link(l);
    std::erase(l.flows, id);
    if (!std::isinf(f.rate)) l.rate_sum -= f.rate;  // refilled by share()
    if (!l.changed) {
      l.changed = true;
      changed_.push_back(f.links[k]);
    }
  }
  f.active = false;
  ++f.epoch;
  free_ids_.push_back(id);
  ++version_;
}

void LinkNetwork::collect_components(std::vector<std::size_t>& links,
                                     std::vector<std::size_t>& flows) {
  std::vector<std::size_t> stack;
  for (std::size_t l : changed_) {
    links_[l].changed = false;
    if (link_seen_[l]) continue;
    link_seen_[l] = 1;
    stack.push_back(l);
    while (!stack.empty()) {
      const std::size_t at = stack.back();
      stack.pop_back();
      links.push_back(at);
      for (std::size_t id : links_[at].flows) {
        if (flow_seen_[id]) continue;
        flow_seen_[id] = 1;
        flows.push_back(id);
        for (std::size_t other : flows_[id].links) {
          if (link_seen_[other]) continue;
          link_seen_[other] = 1;
          stack.push_back(other);
        }
      }
    }
  }
  changed_.clear();
  for (std::size_t l : links) link_seen_[l] = 0;
  for (std::size_t id : flows) flow_seen_[id] = 0;
  std::sort(links.begin(), links.end());
  std::sort(flows.begin(), flows.end());
}

void LinkNetwork::share() {
  std::vector<std::size_t> links, flows;
  collect_components(links, flows);
  for (std::size_t l : links) settle_link(links_[l]);
  for (std::size_t id : flows) settle_flow(flows_[id]);
  fill(links, flows);
  for (std::size_t l : links) {
    Link& link = links_[l];
    link.rate_sum = 0;
    for (std::size_t id : link.flows)
      if (!std::isinf(flows_[id].rate)) link.rate_sum += flows_[id].rate;
  }
  for (std::size_t id : flows) {
    Flow& f = flows_[id];
    ++f.epoch;
    const double at = f.remaining <= 0 || std::isinf(f.rate) ? now_
                      : f.rate > 0                           ? now_ + f.remaining / f.rate
                                                             : INFINITY;
    if (!std::isinf(at)) finishes_.push(Finish{at, id, f.epoch});
  }
  // Stale entries are dropped when they reach the top; rebuild the heap
  // when they outnumber the live ones.
  const std::size_t active = flows_.size() - free_ids_.size();
  if (finishes_.size() > 4 * active + 64) {
    std::vector<Finish> live;
    while (!finishes_.empty()) {
      const Finish top = finishes_.top();
      finishes_.pop();
      if (flows_[top.id].active && flows_[top.id].epoch == top.epoch) live.push_back(top);
    }
    finishes_ = decltype(finishes_)(std::greater<>(), std::move(live));
  }
}

// Progressive filling over `links` and their `flows` (whole components).
void LinkNetwork::fill(const std::vector<std::size_t>& links,
                       const std::vector<std::size_t>& flows) {
  for (std::size_t l : links) {
    left_[l] = links_[l].capacity;
    open_[l] = links_[l].flows.size();
  }
  std::size_t unfrozen = flows.size();
  auto freeze = [&](std::size_t id, double rate) {
    flow_seen_[id] = 1;  // frozen
    --unfrozen;
    flows_[id].rate = rate;
    const auto& ls = flows_[id].links;
    for (std::size_t k = 0; k < (ls[0] == ls[1] ? 1u : 2u); ++k) {
      left_[ls[k]] = std::max(0.0, left_[ls[k]] - (std::isinf(rate) ? 0 : rate));
      --open_[ls[k]];
    }
  };
  while (unfrozen > 0) {
    double share = INFINITY;
    for (std::size_t l : links)
      if (open_[l] > 0) share = std::min(share, left_[l] / static_cast<double>(open_[l]));
    if (std::isinf(share)) {  // only unlimited links left
      for (std::size_t id : flows)
        if (!flow_seen_[id]) freeze(id, INFINITY);
      break;
    }
    // Every link at the bottleneck share freezes its open flows. The
    // tolerance keeps links of equal share (in exact arithmetic) together.
    const double limit = share * (1 + 1e-12);
    for (std::size_t l : links) {
      if (open_[l] == 0 || left_[l] / static_cast<double>(open_[l]) > limit) continue;
      for (std::size_t id : links_[l].flows)
        if (!flow_seen_[id]) freeze(id, share);
    }
  }
  for (std::size_t id : flows) flow_seen_[id] = 0;
}

std::pair<std::size_t, double> LinkNetwork::next_finish() const {
  while (!finishes_.empty()) {
    const Finish& top = finishes_.top();
    const Flow& f = flows_[top.id];
    if (f.active && f.epoch == top.epoch) return {top.id, std::max(top.at, now_)};
    finishes_.pop();
  }
  return {kNone, INFINITY};
}

}  // namespace anyp::runtime
