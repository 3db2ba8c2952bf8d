// event_queue.hpp — the timeline simulation's queue of what happens next
// (simulation.hpp): items in the order of their time, then their priority,
// then the order they were pushed in.
//
// Items are kept in buckets, one per distinct time pending, each holding a
// first-in first-out list per priority: items of one time and priority
// come out in the order they were pushed, which is the order a heap of
// (time, priority, sequence number) gives, so a bucket needs no ordering of
// its own. Only the distinct times are in a heap (4-ary). An SPMD program's
// agents step in lockstep — a barrier's P agents all at the same few
// instants, its P² notifies arriving at one or two — so the heap holds a
// handful of times and a push or pop is a list append or removal, not a
// sift through P entries. Lists live in one pool of 24-byte nodes, reused.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/internal_check.hpp"
#include "runtime/u64_table.hpp"

namespace anyp::runtime::timeline_sim {

// What an item is (the simulation's dispatch).
enum class ItemKind : std::uint8_t { Arrival, Enqueue, Moving, FlowCheck, Share, Step };

struct Item {
  double time;
  int prio;  // at one time: 0 first (arrivals, transfer events), then 1, then 2
  std::uint64_t seq;
  ItemKind kind;
  std::size_t what;  // an arrival, a transfer, a network version, or an agent
  bool operator>(const Item& o) const {
    if (time != o.time) return time > o.time;
    if (prio != o.prio) return prio > o.prio;
    return seq > o.seq;
  }
};

class EventQueue {
 public:
  static constexpr int kPriorities = 3;

  void push(double time, int prio, ItemKind kind, std::size_t what) {
    ANYP_CHECK(prio >= 0 && prio < kPriorities, "a timeline queue item of no priority");
    const std::uint64_t bits = bits_of(time);
    Bucket& b = buckets_[bucket_for(bits)];
    const std::uint32_t node = new_node(Node{seq_++, what, kind, 0});
    std::uint32_t& tail = b.tail[prio];
    if (tail == 0) {
      b.head[prio] = node;
    } else {
      nodes_[tail - 1].next = node;
    }
    tail = node;
    ++size_;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // The time of the next item (the queue is not empty).
  double next_time() const { return time_of(buckets_[times_.front()].time_bits); }
  // Removes and returns the next item (the queue is not empty).
  Item pop() {
    const std::uint32_t id = times_.front();
    Bucket& b = buckets_[id];
    int prio = 0;
    while (b.head[prio] == 0) ++prio;
    const std::uint32_t node = b.head[prio];
    const Node n = nodes_[node - 1];
    b.head[prio] = n.next;
    if (n.next == 0) b.tail[prio] = 0;
    nodes_[node - 1].next = free_nodes_;
    free_nodes_ = node;
    --size_;
    const Item item{time_of(b.time_bits), prio, n.seq, n.kind, n.what};
    if (b.head[0] == 0 && b.head[1] == 0 && b.head[2] == 0) drop_first_time();
    return item;
  }

 private:
  static_assert(kPriorities == 3, "Bucket and pop() hold three lists");
  struct Node {
    std::uint64_t seq;
    std::size_t what;
    ItemKind kind;
    std::uint32_t next;  // the next node of its list (+ 1; 0: none)
  };
  struct Bucket {
    std::uint64_t time_bits = 0;
    std::uint32_t head[kPriorities] = {}, tail[kPriorities] = {};  // nodes + 1; 0: empty
  };
  static constexpr std::size_t kArity = 4;
  static constexpr std::uint64_t kSign = std::uint64_t{1} << 63;

  // A double's bits, made to order as unsigned integers order (-0 as +0:
  // they are equal times).
  static std::uint64_t bits_of(double t) {
    const auto b = std::bit_cast<std::uint64_t>(t + 0.0);
    return (b & kSign) != 0 ? ~b : b | kSign;
  }
  static double time_of(std::uint64_t bits) {
    return std::bit_cast<double>((bits & kSign) != 0 ? bits & ~kSign : ~bits);
  }
  std::uint32_t new_node(const Node& n) {
    if (free_nodes_ != 0) {
      const std::uint32_t node = free_nodes_;
      free_nodes_ = nodes_[node - 1].next;
      nodes_[node - 1] = n;
      return node;
    }
    ANYP_CHECK(nodes_.size() < std::numeric_limits<std::uint32_t>::max() - 1,
               "four billion timeline queue items at once");
    nodes_.push_back(n);
    return static_cast<std::uint32_t>(nodes_.size());
  }

  // The bucket of time `bits`, made (and its time put in the heap) if it
  // is not pending.
  std::uint32_t bucket_for(std::uint64_t bits) {
    if (last_ != kNoBucket && buckets_[last_].time_bits == bits) return last_;
    std::uint32_t& slot = index_.slot(bits);  // bucket + 1
    if (slot != 0) return last_ = slot - 1;
    std::uint32_t id = 0;
    if (!free_buckets_.empty()) {
      id = free_buckets_.back();
      free_buckets_.pop_back();
      buckets_[id] = Bucket{};
    } else {
      id = static_cast<std::uint32_t>(buckets_.size());
      buckets_.emplace_back();
    }
    slot = id + 1;
    buckets_[id].time_bits = bits;
    times_.push_back(id);
    rise(times_.size() - 1, id);
    return last_ = id;
  }

  bool earlier(std::uint32_t a, std::uint32_t b) const {
    return buckets_[a].time_bits < buckets_[b].time_bits;
  }
  // Puts `id` in the heap at the hole `i`, or above it where it belongs.
  void rise(std::size_t i, std::uint32_t id) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!earlier(id, times_[parent])) break;
      times_[i] = times_[parent];
      i = parent;
    }
    times_[i] = id;
  }
  // The first time's bucket is empty: it leaves the heap and the index.
  void drop_first_time() {
    const std::uint32_t id = times_.front();
    index_.erase(buckets_[id].time_bits);
    if (last_ == id) last_ = kNoBucket;
    free_buckets_.push_back(id);
    const std::uint32_t last = times_.back();
    times_.pop_back();
    const std::size_t n = times_.size();
    if (n == 0) return;
    // Bottom-up: the hole goes down the least children to a leaf, then
    // `last` (late, as a heap's last entry tends to be) rises from there.
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      std::size_t least = first;
      const std::size_t end = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < end; ++c)
        if (earlier(times_[c], times_[least])) least = c;
      times_[i] = times_[least];
      i = least;
    }
    rise(i, last);
  }

  std::vector<Node> nodes_;
  std::uint32_t free_nodes_ = 0;  // linked through Node::next (+ 1; 0: none)
  std::vector<Bucket> buckets_;
  std::vector<std::uint32_t> free_buckets_;
  U64Table index_{64};                // pending time's bits -> its bucket + 1
  std::vector<std::uint32_t> times_;  // heap of the pending times' buckets
  static constexpr std::uint32_t kNoBucket = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t last_ = kNoBucket;  // the pending bucket pushed to last (kNoBucket: none)
  std::size_t size_ = 0;
  std::uint64_t seq_ = 0;
};

}  // namespace anyp::runtime::timeline_sim
