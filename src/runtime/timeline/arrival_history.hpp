// arrival_history.hpp — the notifies applied to each signal cell in the
// timeline simulation (simulation.hpp), newest first: what a wait looks back
// through for the arrival that satisfied it.
//
// All cells' arrivals live in one pool, each linked to the one before it on
// its cell, so a cell keeps only a 4-byte reference to its newest and no
// allocation of its own (an [NR, 1] signal has P² cells, most with one or
// two arrivals). Only a cell's last arrivals are ever looked at: a chain
// that reaches `2 × keep` is cut back to `keep`, and the nodes cut off are
// reused.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "common/internal_check.hpp"

namespace anyp::runtime::timeline_sim {

// A notify applied to a cell: its op (ops are fewer than 2^32 - 1,
// checked), the cell's value after it, its agent and that agent's round
// count (16 bytes).
struct Applied {
  std::uint32_t op = std::numeric_limits<std::uint32_t>::max();  // max: none
  std::int32_t value_after = 0;
  std::int32_t from = 0;
  std::int32_t depth = 0;
};

// A cell's view of the pool: its newest arrival (a node + 1; 0: none) and
// how many its chain holds.
struct HistoryRef {
  std::uint32_t newest = 0;
  std::uint32_t length = 0;
};

class ArrivalPool {
 public:
  explicit ArrivalPool(std::uint32_t keep) : keep_(keep) {}

  // Appends `a` as the cell's newest.
  void push(HistoryRef& h, const Applied& a) {
    std::uint32_t node = 0;
    if (free_ != 0) {
      node = free_;
      free_ = nodes_[node - 1].before;
      nodes_[node - 1] = Node{a, h.newest};
    } else {
      ANYP_CHECK(nodes_.size() < std::numeric_limits<std::uint32_t>::max() - 1,
                 "four billion signal arrivals kept at once");
      nodes_.push_back(Node{a, h.newest});
      node = static_cast<std::uint32_t>(nodes_.size());
    }
    h.newest = node;
    if (++h.length >= 2 * keep_) cut(h);
  }
  // A node (non-zero) and the one before it on its cell (0: none).
  const Applied& at(std::uint32_t node) const { return nodes_[node - 1].applied; }
  std::uint32_t before(std::uint32_t node) const { return nodes_[node - 1].before; }
  // Nodes in use or free (for the tests).
  std::size_t nodes() const { return nodes_.size(); }

 private:
  struct Node {
    Applied applied;
    std::uint32_t before = 0;
  };
  // Keeps the newest keep_ of h's chain; the older ones become free.
  void cut(HistoryRef& h) {
    std::uint32_t last = h.newest;
    for (std::uint32_t k = 1; k < keep_; ++k) last = nodes_[last - 1].before;
    std::uint32_t drop = nodes_[last - 1].before;
    nodes_[last - 1].before = 0;
    while (drop != 0) {
      const std::uint32_t next = nodes_[drop - 1].before;
      nodes_[drop - 1].before = free_;
      free_ = drop;
      drop = next;
    }
    h.length = keep_;
  }
  std::uint32_t keep_;
  std::vector<Node> nodes_;
  std::uint32_t free_ = 0;  // the free nodes, linked through `before` (+ 1; 0: none)
};

}  // namespace anyp::runtime::timeline_sim
