// arrival_history.hpp — the notifies applied to each signal cell in the
// timeline simulation (simulation.hpp), newest first: what a wait looks back
// through for the arrival that satisfied it.
//
// A cell keeps its newest arrival itself (most cells of an [NR, 1] signal's
// P² get one); the ones before it live in one pool, each linked to the one
// before it on its cell, so a cell holds a 4-byte reference to that chain
// and its length, and no allocation of its own. Only a cell's last
// arrivals are ever looked at: a chain that reaches `limit` is cut back to
// `keep`, and the nodes cut off are reused.
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

class ArrivalPool {
 public:
  ArrivalPool(std::uint16_t keep, std::uint16_t limit) : keep_(keep), limit_(limit) {
    ANYP_CHECK(keep >= 1 && keep < limit, "an arrival pool that keeps none or all");
  }

  // Appends `a` to a chain (`newest`: its newest node + 1, 0: empty;
  // `length`: its nodes).
  void push(std::uint32_t& newest, std::uint16_t& length, const Applied& a) {
    std::uint32_t node = 0;
    if (free_ != 0) {
      node = free_;
      free_ = nodes_[node - 1].before;
      nodes_[node - 1] = Node{a, newest};
    } else {
      ANYP_CHECK(nodes_.size() < std::numeric_limits<std::uint32_t>::max() - 1,
                 "four billion signal arrivals kept at once");
      nodes_.push_back(Node{a, newest});
      node = static_cast<std::uint32_t>(nodes_.size());
    }
    newest = node;
    if (++length >= limit_) length = cut(newest);
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
  // Keeps the newest keep_ of a chain; the older ones become free. Its
  // new length.
  std::uint16_t cut(std::uint32_t newest) {
    std::uint32_t last = newest;
    for (std::uint16_t k = 1; k < keep_; ++k) last = nodes_[last - 1].before;
    std::uint32_t drop = nodes_[last - 1].before;
    nodes_[last - 1].before = 0;
    while (drop != 0) {
      const std::uint32_t next = nodes_[drop - 1].before;
      nodes_[drop - 1].before = free_;
      free_ = drop;
      drop = next;
    }
    return keep_;
  }
  std::uint16_t keep_, limit_;
  std::vector<Node> nodes_;
  std::uint32_t free_ = 0;  // the free nodes, linked through `before` (+ 1; 0: none)
};

}  // namespace anyp::runtime::timeline_sim
