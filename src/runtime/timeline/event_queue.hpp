// event_queue.hpp — the timeline simulation's queue of what happens next
// (simulation.hpp): items in the order of their time, then their priority,
// then the order they were pushed in.
//
// Arrivals (a notify, or a data write into a signal cell, reaching its
// cell) are most of the items a P² program makes, and an agent sends its
// arrivals at a clock that only goes forward: so each agent's arrivals wait
// in a lane of their own, in time order, and the heap holds only each
// lane's first. An [NR, 1] barrier's P² arrivals in flight are then P heap
// entries, a heap that stays in cache, and each arrival costs 24 bytes. An
// arrival earlier than its lane's last goes into the heap itself. Every
// item keeps the sequence number it got when it was pushed, so items come
// out in exactly the order one heap of all of them would give.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace anyp::runtime::timeline_sim {

// What an item is (the simulation's dispatch; ArrivalLane is the queue's own).
enum class ItemKind : std::uint8_t {
  Arrival,
  ArrivalLane,
  Enqueue,
  Moving,
  FlowCheck,
  Share,
  Step
};

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
  explicit EventQueue(std::size_t agents) : lanes_(agents) {}

  void push(double time, int prio, ItemKind kind, std::size_t what) {
    heap_.push(Item{time, prio, seq_++, kind, what});
  }
  // Arrival `arrival`, sent by agent `agent`, arrives at `time` (priority 0).
  void push_arrival(std::size_t agent, double time, std::size_t arrival) {
    const Pending p{time, seq_++, arrival};
    Lane& l = lanes_[agent];
    const bool empty = l.head == l.items.size();
    if (!empty && time < l.items.back().time) {
      heap_.push(Item{time, 0, p.seq, ItemKind::Arrival, arrival});
      return;
    }
    l.items.push_back(p);
    if (empty) heap_.push(Item{time, 0, p.seq, ItemKind::ArrivalLane, agent});
  }

  bool empty() const { return heap_.empty(); }
  // The time of the next item (the queue is not empty).
  double next_time() const { return heap_.top().time; }
  // Removes and returns the next item; an arrival from a lane comes out as
  // an Arrival item.
  Item pop() {
    Item item = heap_.top();
    heap_.pop();
    if (item.kind != ItemKind::ArrivalLane) return item;
    const std::size_t agent = item.what;
    Lane& l = lanes_[agent];
    item.kind = ItemKind::Arrival;
    item.what = l.items[l.head].arrival;
    if (++l.head == l.items.size()) {
      l.items.clear();
      l.head = 0;
    } else {
      if (l.head >= kCompactAfter && 2 * l.head >= l.items.size()) {  // drop what was consumed
        l.items.erase(l.items.begin(), l.items.begin() + static_cast<std::ptrdiff_t>(l.head));
        l.head = 0;
      }
      const Pending& next = l.items[l.head];
      heap_.push(Item{next.time, 0, next.seq, ItemKind::ArrivalLane, agent});
    }
    return item;
  }

 private:
  static constexpr std::size_t kCompactAfter = 64;
  struct Pending {
    double time;
    std::uint64_t seq;
    std::size_t arrival;
  };
  struct Lane {
    std::vector<Pending> items;  // from `head` on, in time order
    std::size_t head = 0;
  };
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap_;
  std::vector<Lane> lanes_;
  std::uint64_t seq_ = 0;
};

}  // namespace anyp::runtime::timeline_sim
