// in_flight_touches.hpp — the memory each agent's transfers in flight read
// and write, for the timeline simulation (simulation.hpp): an agent's
// access waits while a transfer of its own in flight touches the same
// bytes, one of the two a write.
//
// Touches are indexed by the agent and the memory's space, buffer and
// owner, reads and writes apart, each in a list of its own (nodes in one
// pool, so a touch is added or removed in O(1)). An access then looks only
// at what its own buffer has in flight and, for a read, only at the writes:
// an all-to-all agent with P puts in flight (P reads of its own source, P
// writes to P peers) checks its next put against no span, not 2P.
#pragma once

#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "common/internal_check.hpp"
#include "runtime/region.hpp"

namespace anyp::runtime::timeline_sim {

// Memory a transfer in flight reads or writes (the bounds of an access).
struct Footprint {
  Space space = Space::Window;
  std::int32_t id = -1;
  std::int64_t owner = -1;
  std::int64_t first = 0, end = 0;
  bool write = false;
};

class InFlightTouches {
 public:
  using Handle = std::uint32_t;  // a touch added (+ 1; 0: none)

  Handle add(std::size_t agent, const Footprint& f) {
    Lists& lists = index_[key_of(agent, f)];
    const Handle node = new_node(Node{f, 0, lists.head[f.write], agent});
    if (lists.head[f.write] != 0) nodes_[lists.head[f.write] - 1].prev = node;
    lists.head[f.write] = node;
    return node;
  }

  void remove(Handle node) {
    ANYP_CHECK(node != 0 && node <= nodes_.size(), "an in-flight touch removed twice");
    Node& n = nodes_[node - 1];
    if (n.next != 0) nodes_[n.next - 1].prev = n.prev;
    if (n.prev != 0) {
      nodes_[n.prev - 1].next = n.next;
    } else {
      const auto it = index_.find(key_of(n.agent, n.f));
      ANYP_CHECK(it != index_.end() && it->second.head[n.f.write] == node,
                 "an in-flight touch outside its list");
      it->second.head[n.f.write] = n.next;
      if (it->second.head[0] == 0 && it->second.head[1] == 0) index_.erase(it);
    }
    n.next = free_;
    free_ = node;
  }

  // Whether `f` overlaps memory a transfer of `agent` in flight touches,
  // one of the two a write.
  bool conflicts(std::size_t agent, const Footprint& f) const {
    if (index_.empty()) return false;
    const auto it = index_.find(key_of(agent, f));
    if (it == index_.end()) return false;
    for (int write = f.write ? 0 : 1; write <= 1; ++write) {
      for (Handle k = it->second.head[write]; k != 0; k = nodes_[k - 1].next) {
        const Node& n = nodes_[k - 1];
        if (f.first < n.f.end && n.f.first < f.end) return true;
      }
    }
    return false;
  }

 private:
  struct Key {
    std::uint64_t agent;
    std::int64_t owner;
    std::int32_t id;
    Space space;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      std::uint64_t h = k.agent * 0x9e3779b97f4a7c15ull;
      h ^= static_cast<std::uint64_t>(k.owner) + 0x7f4a7c159e3779b9ull + (h << 6) + (h >> 2);
      h ^= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.id)) << 1 |
            static_cast<std::uint64_t>(k.space == Space::Host)) +
           (h << 6) + (h >> 2);
      return static_cast<std::size_t>(h);
    }
  };
  struct Lists {
    Handle head[2] = {0, 0};  // reads, writes
  };
  struct Node {
    Footprint f;
    Handle prev, next;  // in its list (+ 1; 0: none); next links the free nodes
    std::size_t agent;
  };
  static Key key_of(std::size_t agent, const Footprint& f) {
    return Key{agent, f.owner, f.id, f.space};
  }
  Handle new_node(const Node& n) {
    if (free_ != 0) {
      const Handle node = free_;
      free_ = nodes_[node - 1].next;
      nodes_[node - 1] = n;
      return node;
    }
    ANYP_CHECK(nodes_.size() < std::numeric_limits<Handle>::max() - 1,
               "four billion transfer touches in flight");
    nodes_.push_back(n);
    return static_cast<Handle>(nodes_.size());
  }

  std::unordered_map<Key, Lists, KeyHash> index_;
  std::vector<Node> nodes_;
  Handle free_ = 0;
};

}  // namespace anyp::runtime::timeline_sim
