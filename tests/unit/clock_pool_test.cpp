// clock_pool_test.cpp — the race checker's shared clocks
// (runtime/race/clock_pool.hpp): a snapshot stands for its base clock with
// the agent's own entry raised, a join keeps the latest release of each of
// two agents and folds a third into one clock, reference counts free and
// reuse clocks, and a cell's credits acquire through the pool exactly what
// they acquired when each held copies.
#include "runtime/race/clock_pool.hpp"

#include <gtest/gtest.h>

#include "runtime/race/cell_credits.hpp"

namespace {

using anyp::runtime::race::CellCredits;
using anyp::runtime::race::CellSlot;
using anyp::runtime::race::Clock;
using anyp::runtime::race::ClockPool;
using anyp::runtime::race::ClockRef;
using anyp::runtime::race::JoinedClock;

TEST(ClockPool, ASnapshotRaisesItsAgentsOwnEntry) {
  ClockPool pool(3);
  const std::uint32_t base = pool.make({1, 5, 2}, 1);
  Clock into{4, 0, 0};
  EXPECT_TRUE(pool.join_into(into, ClockRef{base, 9}));
  EXPECT_EQ(into, (Clock{4, 9, 2}));
  EXPECT_FALSE(pool.join_into(into, ClockRef{base, 7}));  // already covered
  EXPECT_EQ(into, (Clock{4, 9, 2}));
}

TEST(ClockPool, AJoinKeepsTheLatestReleaseOfEachAgent) {
  ClockPool pool(3);
  const std::uint32_t a = pool.make({1, 0, 0}, 0);
  const std::uint32_t b = pool.make({0, 1, 3}, 1);
  JoinedClock joined;
  joined.join(pool, ClockRef{a, 2});
  joined.join(pool, ClockRef{b, 4});
  joined.join(pool, ClockRef{a, 6});  // covers {a, 2}
  joined.join(pool, ClockRef{a, 3});  // covered by {a, 6}
  EXPECT_EQ(pool.live(), 2u);         // no third clock was made
  Clock into(3, 0);
  joined.acquire_into(pool, into);
  EXPECT_EQ(into, (Clock{6, 4, 3}));
  joined.clear(pool);
  EXPECT_EQ(pool.refs(a), 1u);  // only the maker's reference is left
  EXPECT_EQ(pool.refs(b), 1u);
}

TEST(ClockPool, AThirdAgentFoldsTheJoinIntoOneClockAndLaterOnesJoinInPlace) {
  ClockPool pool(4);
  const std::uint32_t a = pool.make({1, 0, 0, 0}, 0);
  const std::uint32_t b = pool.make({0, 1, 0, 0}, 1);
  const std::uint32_t c = pool.make({0, 0, 1, 7}, 2);
  const std::uint32_t d = pool.make({0, 2, 0, 1}, 3);
  JoinedClock joined;
  joined.join(pool, ClockRef{a, 2});
  joined.join(pool, ClockRef{b, 3});
  joined.join(pool, ClockRef{c, 4});
  EXPECT_EQ(pool.allocated(), 5u);  // the fold made one clock
  EXPECT_EQ(pool.refs(a), 1u);      // the join let a and b go
  EXPECT_EQ(pool.refs(b), 1u);
  joined.join(pool, ClockRef{d, 5});  // a free slot: kept as a reference
  const std::uint32_t e = pool.make({9, 0, 0, 0}, 0);
  joined.join(pool, ClockRef{e, 9});  // the folded clock is only the join's
  EXPECT_EQ(pool.allocated(), 6u);    // joined in place: no new clock
  Clock into(4, 0);
  EXPECT_TRUE(joined.acquire_into(pool, into));
  EXPECT_EQ(into, (Clock{9, 3, 4, 7}));
  joined.clear(pool);
  EXPECT_EQ(pool.live(), 5u);  // a..e, held by their makers; the fold freed
}

TEST(ClockPool, AFreedClockIsReused) {
  ClockPool pool(2);
  const std::uint32_t a = pool.make({1, 2}, 0);
  pool.release(a);
  EXPECT_EQ(pool.live(), 0u);
  const std::uint32_t b = pool.make({3, 4}, 1);
  EXPECT_EQ(b, a);
  EXPECT_EQ(pool.allocated(), 1u);
  EXPECT_EQ(pool.clock(b), (Clock{3, 4}));
  EXPECT_EQ(pool.agent(b), 1);
}

TEST(ClockPool, AssigningTheClockOnlyTheJoinHoldsKeepsIt) {
  ClockPool pool(2);
  const std::uint32_t a = pool.make({1, 4}, 0);
  JoinedClock joined;
  joined.join(pool, ClockRef{a, 2});
  pool.release(a);  // the join is its only holder
  joined.assign(pool, ClockRef{a, 3});
  EXPECT_EQ(pool.live(), 1u);
  EXPECT_EQ(pool.refs(a), 1u);
  Clock into(2, 0);
  joined.acquire_into(pool, into);
  EXPECT_EQ(into, (Clock{3, 4}));
}

// Two rounds into one cell: a `Ge 1` wait acquires the first round's
// notifier, not the second's; `Ge 2` both.
TEST(ClockPool, CellCreditsAcquireOnlyTheCreditsTheWaitNeeds) {
  ClockPool pool(3);
  const std::uint32_t first = pool.make({1, 0, 0}, 0);
  const std::uint32_t second = pool.make({0, 1, 0}, 1);
  CellCredits cell;
  cell.add(pool, ClockRef{first, 2}, 1);
  cell.add(pool, ClockRef{second, 5}, 1);
  Clock one(3, 0);
  EXPECT_TRUE(cell.acquire(pool, anyp::ir::WaitKind::Ge, 1, one));
  EXPECT_EQ(one, (Clock{2, 0, 0}));
  Clock two(3, 0);
  cell.acquire(pool, anyp::ir::WaitKind::Ge, 2, two);
  EXPECT_EQ(two, (Clock{2, 5, 0}));
  EXPECT_FALSE(cell.acquire(pool, anyp::ir::WaitKind::Ge, 2, two));  // nothing new
}

// A cell that got one AtomicAdd of v > 0 kept as a CellSlot acquires, for
// every wait, what its CellCredits would: the same clock, the same answer.
TEST(ClockPool, ACellSlotAcquiresWhatItsCreditsWould) {
  ClockPool pool(3);
  const std::uint32_t base = pool.make({4, 0, 7}, 1);
  const ClockRef notify{base, 9};
  for (const std::uint32_t v : {1u, 2u, 5u}) {
    CellCredits credits;
    credits.add(pool, notify, v);
    const CellSlot slot{notify, v, 0};
    for (int k = 0; k < 6; ++k) {  // Eq, Ne, Gt, Ge, Lt, Le
      const auto cmp = static_cast<anyp::ir::WaitKind>(k);
      for (const std::int64_t expected : {-1, 0, 1, 2, 5, 6}) {
        Clock from_credits{0, 3, 0}, from_slot{0, 3, 0};
        const bool a = credits.acquire(pool, cmp, expected, from_credits);
        const bool b = slot.acquire(pool, cmp, expected, from_slot);
        EXPECT_EQ(a, b) << "v " << v << " cmp " << k << " expected " << expected;
        EXPECT_EQ(from_credits, from_slot) << "v " << v << " cmp " << k;
      }
    }
  }
}

}  // namespace
