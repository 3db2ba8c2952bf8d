// in_flight_touches_test.cpp — the memory transfers in flight touch, per
// agent (runtime/timeline/in_flight_touches.hpp): an access conflicts with
// a touch of its own agent's transfers on the same bytes of the same
// buffer and owner, one of the two a write, and with nothing once that
// touch is removed; checked against a plain scan of every touch on random
// sets.
#include "runtime/timeline/in_flight_touches.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace anyp::runtime::timeline_sim {
namespace {

Footprint touch(std::int32_t id, std::int64_t owner, std::int64_t first, std::int64_t end,
                bool write, Space space = Space::Window) {
  return Footprint{space, id, owner, first, end, write};
}

TEST(InFlightTouches, ReadsConflictOnlyWithWritesOfTheSameBytes) {
  InFlightTouches t;
  const auto source = t.add(0, touch(1, 0, 0, 64, false));     // a put's source read
  t.add(0, touch(2, 3, 128, 192, true));                       // its write into rank 3
  EXPECT_FALSE(t.conflicts(0, touch(1, 0, 32, 96, false)));    // read and read
  EXPECT_TRUE(t.conflicts(0, touch(1, 0, 32, 96, true)));      // a write over the source
  EXPECT_FALSE(t.conflicts(0, touch(1, 0, 64, 96, true)));     // next to it
  EXPECT_TRUE(t.conflicts(0, touch(2, 3, 191, 200, false)));   // a read of the landing bytes
  EXPECT_FALSE(t.conflicts(0, touch(2, 4, 128, 192, false)));  // another owner
  EXPECT_FALSE(t.conflicts(0, touch(3, 3, 128, 192, true)));   // another buffer
  EXPECT_FALSE(t.conflicts(0, touch(2, 3, 128, 192, true, Space::Host)));  // another space
  EXPECT_FALSE(t.conflicts(1, touch(2, 3, 128, 192, true)));               // another agent's access
  t.remove(source);
  EXPECT_FALSE(t.conflicts(0, touch(1, 0, 32, 96, true)));
  EXPECT_TRUE(t.conflicts(0, touch(2, 3, 130, 131, true)));
}

TEST(InFlightTouches, RandomSetsAgreeWithAPlainScan) {
  struct Live {
    std::size_t agent;
    Footprint f;
    InFlightTouches::Handle handle;
  };
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    InFlightTouches t;
    std::vector<Live> live;
    auto random_touch = [&] {
      const std::int64_t first = rng() % 64;
      return touch(static_cast<std::int32_t>(rng() % 3), rng() % 3, first,
                   first + 1 + static_cast<std::int64_t>(rng() % 16), rng() % 2 == 0,
                   rng() % 5 == 0 ? Space::Host : Space::Window);
    };
    for (int step = 0; step < 3000; ++step) {
      const unsigned pick = rng() % 3;
      if (pick == 0 || live.empty()) {
        const std::size_t agent = rng() % 3;
        const Footprint f = random_touch();
        live.push_back({agent, f, t.add(agent, f)});
      } else if (pick == 1) {
        const std::size_t k = rng() % live.size();
        t.remove(live[k].handle);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        const std::size_t agent = rng() % 3;
        const Footprint f = random_touch();
        bool want = false;
        for (const Live& l : live) {
          want = want ||
                 (l.agent == agent && (l.f.write || f.write) && l.f.space == f.space &&
                  l.f.id == f.id && l.f.owner == f.owner && f.first < l.f.end && l.f.first < f.end);
        }
        ASSERT_EQ(t.conflicts(agent, f), want) << "seed " << seed << " step " << step;
      }
    }
  }
}

}  // namespace
}  // namespace anyp::runtime::timeline_sim
