// live_vms_test.cpp — the threads engine holds a rank's VM from its first
// slice to its end (engines/threads/agent_vms.hpp), so a run's VM memory
// follows the ranks alive at once, not P: on one worker, which runs the
// ready ranks in order, a ring shift keeps two (rank 0 parked on its
// left neighbour, and the rank running), a mesh all-reduce all P (every
// rank but the last parks on its barrier before any finishes), and the
// answers are exact either way.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>

#include "support/allreduce_programs.hpp"
#include "support/step07_program.hpp"

namespace {

class LiveVmsAtP : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(LiveVmsAtP, ARingPutKeepsTwoVmsAlive) {
  anyp::RunConfig config;
  config.workers = 1;
  // run_ring checks every element of the shift.
  EXPECT_EQ(anyp_test::run_ring(/*get=*/false, GetParam(), config).vms_at_most, 2);
}

TEST_P(LiveVmsAtP, AMeshAllreduceKeepsEveryVmAlive) {
  const std::int64_t P = GetParam();
  anyp::RunConfig config;
  config.workers = 1;
  // run_allreduce checks the sum of every element.
  const anyp::RunStats stats =
      anyp_test::run_allreduce(anyp_test::Allreduce::Mesh, 8 * 16 * P, P, config);
  EXPECT_EQ(stats.vms_at_most, P);
}

INSTANTIATE_TEST_SUITE_P(P, LiveVmsAtP, ::testing::Values(2, 3, 4, 5, 8, 13, 16, 64),
                         [](const auto& info) { return "P" + std::to_string(info.param); });

}  // namespace
