// link_network.cpp — max-min fair sharing of the modeled links (see the header).
#include "runtime/timeline/link_network.hpp"

#include <algorithm>
#include <cmath>

#include "common/internal_check.hpp"

namespace anyp::runtime {

LinkNetwork::LinkNetwork(std::vector<double> capacities) {
  links_.resize(capacities.size());
  for (std::size_t i = 0; i < capacities.size(); ++i) links_[i].capacity = capacities[i];
}

void LinkNetwork::advance(double now) {
  const double dt = now - now_;
  if (!(dt > 0)) return;
  for (Flow& f : flows_) {
    if (!f.active || std::isinf(f.rate)) continue;
    f.remaining = std::max(0.0, f.remaining - f.rate * dt);
  }
  for (Link& l : links_) {
    if (l.flows.empty()) continue;
    l.busy += dt;
    for (std::size_t id : l.flows) {
      const double moved = std::isinf(flows_[id].rate) ? 0 : flows_[id].rate * dt;
      l.carried += moved;
    }
  }
  now_ = now;
}

std::size_t LinkNetwork::add(std::array<std::size_t, 2> links, double bytes) {
  std::size_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = flows_.size();
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f = Flow{links, bytes, 0, true};
  links_[links[0]].flows.push_back(id);
  if (links[1] != links[0]) links_[links[1]].flows.push_back(id);
  ++version_;
  return id;
}

void LinkNetwork::remove(std::size_t id) {
  Flow& f = flows_[id];
  ANYP_CHECK(f.active, "a modeled flow removed twice");
  for (std::size_t l : {f.links[0], f.links[1]}) std::erase(links_[l].flows, id);
  f.active = false;
  free_ids_.push_back(id);
  ++version_;
}

void LinkNetwork::share() {
  // Progressive filling over the links that carry active flows.
  std::vector<std::size_t> used;
  std::vector<double> left(links_.size());
  std::vector<std::size_t> open(links_.size());  // unfrozen flows through the link
  for (std::size_t l = 0; l < links_.size(); ++l) {
    if (links_[l].flows.empty()) continue;
    used.push_back(l);
    left[l] = links_[l].capacity;
    open[l] = links_[l].flows.size();
  }
  std::vector<char> frozen(flows_.size(), 0);
  std::size_t unfrozen = 0;
  for (std::size_t id = 0; id < flows_.size(); ++id) {
    if (flows_[id].active) ++unfrozen;
  }
  auto freeze = [&](std::size_t id, double rate) {
    frozen[id] = 1;
    --unfrozen;
    flows_[id].rate = rate;
    const auto& ls = flows_[id].links;
    for (std::size_t k = 0; k < (ls[0] == ls[1] ? 1u : 2u); ++k) {
      left[ls[k]] = std::max(0.0, left[ls[k]] - (std::isinf(rate) ? 0 : rate));
      --open[ls[k]];
    }
  };
  while (unfrozen > 0) {
    double share = INFINITY;
    for (std::size_t l : used)
      if (open[l] > 0) share = std::min(share, left[l] / static_cast<double>(open[l]));
    if (std::isinf(share)) {  // only unlimited links left
      for (std::size_t id = 0; id < flows_.size(); ++id)
        if (flows_[id].active && !frozen[id]) freeze(id, INFINITY);
      break;
    }
    // Every link at the bottleneck share freezes its open flows. The
    // tolerance keeps links of equal share (in exact arithmetic) together.
    const double limit = share * (1 + 1e-12);
    for (std::size_t l : used) {
      if (open[l] == 0 || left[l] / static_cast<double>(open[l]) > limit) continue;
      for (std::size_t id : links_[l].flows)
        if (!frozen[id]) freeze(id, share);
    }
  }
}

std::pair<std::size_t, double> LinkNetwork::next_finish() const {
  std::size_t best = kNone;
  double at = INFINITY;
  for (std::size_t id = 0; id < flows_.size(); ++id) {
    const Flow& f = flows_[id];
    if (!f.active) continue;
    const double t = f.remaining <= 0 || std::isinf(f.rate) ? now_
                     : f.rate > 0                           ? now_ + f.remaining / f.rate
                                                            : INFINITY;
    if (t < at) {
      at = t;
      best = id;
    }
  }
  return {best, at};
}

}  // namespace anyp::runtime
