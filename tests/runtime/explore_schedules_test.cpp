// explore_schedules_test.cpp — anyp::explore_schedules (anyp/explore.hpp),
// the loop behind the examples' --explore N, without the command line: the
// schedules it runs (a calibration, then PCT seeds 1..N over the
// calibration's steps), a race-free program passing all of them, and a
// known race (tests/support/session_programs.hpp: a credit that outlives its
// run) reported by the first run with the schedule that replays it.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <anyp/explore.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "support/session_programs.hpp"
#include "support/source_locations.hpp"
#include "support/step07_program.hpp"

namespace {

anyp::RunConfig checked(std::int64_t P) {
  anyp::RunConfig c = anyp::RunConfig::for_world_size(P);
  c.check_races = true;
  return c;
}

// The schedules a run was given, as {seed, depth, steps} (all enabled).
struct Schedule {
  std::uint64_t seed;
  int depth;
  std::int64_t steps;
  bool operator==(const Schedule&) const = default;
};
Schedule schedule_of(const anyp::RunConfig::Pct& pct) {
  EXPECT_TRUE(pct.enabled);
  return {pct.seed, pct.depth, pct.steps};
}

TEST(ExploreSchedules, ARaceFreeProgramPassesEverySchedule) {
  constexpr std::int64_t P = 4, n = anyp_test::kStep07Size;
  anyp::InputGenerator gen(7);
  const anyp::HostTensor x = gen.uniform({P, 1, n});
  anyp::HostTensor golden = anyp::HostTensor::zeros({P, 1, n}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t j = 0; j < n; ++j) golden.set_at({r, 0, j}, x.at({(r + 1) % P, 0, j}));
  std::vector<Schedule> ran;
  const anyp::ExploreResult result = anyp::explore_schedules(
      {.config = checked(P), .schedules = 5, .depth = 3}, [&](const anyp::RunConfig& c) {
        ran.push_back(schedule_of(c.pct));
        anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, n}, pl::FP32);
        const anyp::RunStats stats = anyp_test::ring_get().compile({x, y}, c)(x, y);
        return anyp::ScheduleOutcome{anyp::equal_exact(y, golden) ? 0 : 1, stats.schedule_steps};
      });
  EXPECT_TRUE(result.clean());
  EXPECT_EQ(result.code, 0);
  EXPECT_EQ(result.schedules_passed, 5);
  EXPECT_EQ(result.steps, 26);  // the calibration's steps at P = 4
  EXPECT_EQ(anyp_test::without_locations(result.error), "");
  const std::int64_t K = result.steps;
  EXPECT_EQ(ran, (std::vector<Schedule>{
                     {0, 1, 0}, {1, 3, K}, {2, 3, K}, {3, 3, K}, {4, 3, K}, {5, 3, K}}));
}

TEST(ExploreSchedules, AKnownRaceIsReportedWithTheScheduleThatReplaysIt) {
  // Two runs on persistent windows that are not reset: the second run's
  // wait passes on the first run's credit, and its read races.
  constexpr std::int64_t P = 3;
  anyp::InputGenerator gen(44);
  const anyp::HostTensor x = gen.uniform({P, 1, anyp_test::kSessionRow});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, anyp_test::kSessionRow}, pl::FP32);
  std::vector<Schedule> ran;
  const anyp::ExploreResult result = anyp::explore_schedules(
      {.config = checked(P), .schedules = 5, .depth = 3}, [&](const anyp::RunConfig& c) {
        ran.push_back(schedule_of(c.pct));
        anyp::Session s = anyp_test::handoff_program().compile({x, y}, c).prepare(
            {.persistent_windows = true, .reset_windows = false});
        s(x, y);
        const anyp::RunStats stats = s(x, y);
        return anyp::ScheduleOutcome{0, stats.schedule_steps};
      });
  EXPECT_FALSE(result.clean());
  EXPECT_EQ(result.code, 1);
  EXPECT_EQ(result.schedules_passed, 0);
  EXPECT_EQ(result.steps, 0);
  ASSERT_TRUE(result.failed.has_value());
  EXPECT_EQ(schedule_of(*result.failed), (Schedule{0, 1, 0}));
  EXPECT_EQ(ran, (std::vector<Schedule>{{0, 1, 0}}));
  EXPECT_EQ(anyp_test::without_locations(result.error),
            "race report: 1 op pair accesses the same elements from two ranks with no "
            "happens-before order (at least one writes)\n"
            "  race 1: window 'data' of rank 2, elements [0, 0:16]\n"
            "    first:  read by rank 0 (device 0), function 'handoff', op "
            "pld.tile.remote_load\n"
            "    second: write by rank 2 (device 2), function 'handoff', op pl.store\n"
            "    missing: no wait on rank 2 observed a notify that rank 0 issued after its read; "
            "rank 2 never synchronised with rank 0\n");
}

}  // namespace
