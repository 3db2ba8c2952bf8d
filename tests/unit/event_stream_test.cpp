// event_stream_test.cpp — an agent's timeline events kept as periodic runs
// (runtime/timeline/event_stream.hpp): whatever is pushed reads back the
// same, event for event, in order and at random; the patterns of the
// ladder's P² steps take one run each (a barrier's notifies around the
// rank's own, its waits, a read/write row loop, a pull-and-add loop); and
// the runs and slots rebuild the same stream (the MPI exchange).
#include "runtime/timeline/event_stream.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace anyp::runtime {
namespace {

TimelineEvent event(TimelineEvent::Kind kind, std::int32_t site, std::int32_t owner,
                    std::int64_t first, std::int64_t end = 0, std::int64_t amount = 1) {
  TimelineEvent e;
  e.kind = kind;
  e.site = SiteRef{0, site};
  e.id = 2;
  e.owner = owner;
  e.first = first;
  e.end = end;
  e.amount = amount;
  return e;
}

bool same(const TimelineEvent& a, const TimelineEvent& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void expect_reads_back(const EventStream& s, const std::vector<TimelineEvent>& pushed) {
  ASSERT_EQ(s.size(), pushed.size());
  for (std::size_t i = 0; i < pushed.size(); ++i) ASSERT_TRUE(same(s[i], pushed[i])) << "i=" << i;
  std::mt19937 rng(3);
  for (int k = 0; k < 2000 && !pushed.empty(); ++k) {
    const std::size_t i = rng() % pushed.size();
    ASSERT_TRUE(same(s[i], pushed[i])) << "random i=" << i;
  }
  for (std::size_t i = pushed.size(); i-- > 0;)
    ASSERT_TRUE(same(s[i], pushed[i])) << "back i=" << i;
}

using Kind = TimelineEvent::Kind;

TEST(EventStream, TheLadderPatternsTakeOneRunEach) {
  const std::int32_t P = 64, me = 17;
  EventStream s;
  std::vector<TimelineEvent> pushed;
  auto push = [&](const TimelineEvent& e) {
    s.push_back(e);
    pushed.push_back(e);
  };
  for (std::int32_t p = 0; p < P; ++p)  // a credit to every peer's cell [me]: two runs
    if (p != me) push(event(Kind::Notify, 1, p, 4 * me));
  for (std::int32_t p = 0; p < P; ++p)  // a wait on every peer's cell of my own: two runs
    if (p != me) push(event(Kind::Wait, 2, me, 4 * p));
  for (std::int32_t i = 0; i < P; ++i) {  // read cell i, write tally row i: one run of period 2
    push(event(Kind::Access, 3, me, 4 * i, 4 * i + 4, 4));
    push(event(Kind::Access, 4, -1, 4 * i, 4 * i + 4, 4));
  }
  for (std::int32_t p = 1; p < P; ++p) {  // pull peer p's row, add it: one run of period 3
    push(event(Kind::Access, 5, (me + p) % P, 0, 256, 256));
    push(event(Kind::Compute, 6, -1, 0));
    push(event(Kind::Access, 7, me, 0, 256, 256));
  }
  expect_reads_back(s, pushed);
  // The pull loop wraps from rank 63 to 0 once: two runs of it.
  EXPECT_EQ(s.runs().size(), 2u + 2u + 1u + 2u);
  EXPECT_EQ(s.runs()[4].period, 2u);
  EXPECT_EQ(s.runs()[4].count, 2u * P);
}

TEST(EventStream, AnyMixReadsBackTheSame) {
  std::mt19937 rng(52);
  for (int trial = 0; trial < 200; ++trial) {
    EventStream s;
    std::vector<TimelineEvent> pushed;
    const int n = 1 + static_cast<int>(rng() % 300);
    while (static_cast<int>(pushed.size()) < n) {
      // Stretches of a random period and steps, cut off anywhere, between
      // random loose events.
      const int period = 1 + static_cast<int>(rng() % 6), reps = static_cast<int>(rng() % 9);
      std::vector<TimelineEvent> base;
      std::vector<std::int32_t> step;
      for (int k = 0; k < period; ++k) {
        base.push_back(event(static_cast<Kind>(rng() % 4), static_cast<std::int32_t>(rng() % 3),
                             static_cast<std::int32_t>(rng() % 8), 4 * (rng() % 8), 4 * (rng() % 8),
                             rng() % 2));
        step.push_back(static_cast<std::int32_t>(rng() % 3) - 1);
      }
      for (int r = 0; r < reps; ++r) {
        for (int k = 0; k < period; ++k) {
          TimelineEvent e = base[static_cast<std::size_t>(k)];
          e.owner += r * step[static_cast<std::size_t>(k)];
          e.first += 4 * r * step[static_cast<std::size_t>(k)];
          s.push_back(e);
          pushed.push_back(e);
        }
      }
    }
    expect_reads_back(s, pushed);
    EventStream copy;
    copy.assign(s.runs(), s.slots());
    expect_reads_back(copy, pushed);
  }
}

}  // namespace
}  // namespace anyp::runtime
