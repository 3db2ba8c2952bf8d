// event_queue_test.cpp — the timeline simulation's queue
// (runtime/timeline/event_queue.hpp): with items kept in a bucket per
// distinct time, a list per priority, they come out in exactly the order
// one heap of (time, priority, push order) gives — for lockstep agents
// (many items at few times), for times all distinct (the time index grows,
// buckets are emptied and reused), and with pops between the pushes.
#include "runtime/timeline/event_queue.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <queue>
#include <random>
#include <vector>

namespace anyp::runtime::timeline_sim {
namespace {

// One heap of everything: the order the queue must give.
class Reference {
 public:
  void push(double time, int prio, ItemKind kind, std::size_t what) {
    heap_.push(Item{time, prio, seq_++, kind, what});
  }
  Item pop() {
    Item item = heap_.top();
    heap_.pop();
    return item;
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }

 private:
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap_;
  std::uint64_t seq_ = 0;
};

void expect_same(const Item& got, const Item& want, std::size_t n) {
  EXPECT_EQ(got.time, want.time) << "item " << n;
  EXPECT_EQ(got.prio, want.prio) << "item " << n;
  EXPECT_EQ(got.seq, want.seq) << "item " << n;
  EXPECT_EQ(static_cast<int>(got.kind), static_cast<int>(want.kind)) << "item " << n;
  EXPECT_EQ(got.what, want.what) << "item " << n;
}

TEST(EventQueue, ABarriersArrivalsComeOutInTimeThenPushOrder) {
  // Four agents each send an arrival to the three others 1 ns apart, all
  // starting at 0: equal times come out in the order they were sent.
  EventQueue q;
  std::size_t arrival = 0;
  for (std::size_t r = 0; r < 4; ++r)
    for (int k = 0; k < 3; ++k) q.push(k, 0, ItemKind::Arrival, arrival++);
  EXPECT_EQ(q.size(), 12u);
  std::vector<std::size_t> order;
  std::vector<double> times;
  while (!q.empty()) {
    const Item item = q.pop();
    EXPECT_EQ(item.kind, ItemKind::Arrival);
    order.push_back(item.what);
    times.push_back(item.time);
  }
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));
  EXPECT_EQ(times, (std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
}

TEST(EventQueue, OneTimesItemsComeOutByPriorityThenPushOrder) {
  EventQueue q;
  q.push(7, 2, ItemKind::Step, 0);
  q.push(5, 0, ItemKind::Arrival, 1);
  q.push(7, 0, ItemKind::Enqueue, 2);
  q.push(7, 1, ItemKind::Share, 3);
  q.push(-0.0, 2, ItemKind::Step, 4);  // -0 is the time 0
  q.push(7, 0, ItemKind::Arrival, 5);
  q.push(0, 0, ItemKind::Arrival, 6);
  std::vector<std::pair<double, std::size_t>> got;
  while (!q.empty()) {
    EXPECT_EQ(q.next_time(), got.size() < 2 ? 0 : got.size() < 3 ? 5 : 7);
    const Item item = q.pop();
    got.emplace_back(item.time, item.what);
  }
  EXPECT_EQ(got, (std::vector<std::pair<double, std::size_t>>{
                     {0, 6}, {0, 4}, {5, 1}, {7, 2}, {7, 5}, {7, 3}, {7, 0}}));
}

// Random simulations: agents whose clocks go forward by small steps (so
// many items share a time) or by random fractions (so almost none do),
// arrivals sent ahead of the clock, other items, and pops between pushes.
TEST(EventQueue, RandomRunsGiveOneHeapsOrder) {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    const std::size_t agents = 1 + rng() % 9;
    const bool lockstep = seed % 2 == 0;
    EventQueue q;
    Reference ref;
    std::vector<double> clock(agents, 0);
    double now = 0;
    std::size_t next_arrival = 0, popped = 0;
    for (int step = 0; step < 6000; ++step) {
      const unsigned pick = rng() % 10;
      if (pick < 6) {
        const std::size_t r = rng() % agents;
        clock[r] = std::max(clock[r], now) +
                   (lockstep ? static_cast<double>(rng() % 4) : std::ldexp(rng() % 1024, -7));
        const double at = clock[r] + static_cast<double>(rng() % 3);
        q.push(at, 0, ItemKind::Arrival, next_arrival);
        ref.push(at, 0, ItemKind::Arrival, next_arrival);
        ++next_arrival;
      } else if (pick < 8) {
        const int prio = static_cast<int>(rng() % 3);
        const auto kind = prio == 2   ? ItemKind::Step
                          : prio == 1 ? ItemKind::Share
                                      : ItemKind::Moving;
        const double at =
            now + (lockstep ? static_cast<double>(rng() % 5) : std::ldexp(rng() % 4096, -9));
        const std::size_t what = rng() % 100;
        q.push(at, prio, kind, what);
        ref.push(at, prio, kind, what);
      } else if (!ref.empty()) {
        ASSERT_FALSE(q.empty());
        const Item want = ref.pop();
        EXPECT_EQ(q.next_time(), want.time);
        EXPECT_EQ(q.size(), ref.size() + 1);
        expect_same(q.pop(), want, popped++);
        now = want.time;
      }
    }
    while (!ref.empty()) {
      ASSERT_FALSE(q.empty()) << "seed " << seed;
      expect_same(q.pop(), ref.pop(), popped++);
    }
    EXPECT_TRUE(q.empty()) << "seed " << seed;
  }
}

}  // namespace
}  // namespace anyp::runtime::timeline_sim
