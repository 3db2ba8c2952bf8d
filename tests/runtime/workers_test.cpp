// workers_test.cpp — when the threads engine's runs take a second worker
// (runner.hpp): a run allowed two starts on one and recruits the other only
// once its ranks have shown enough tile compute, enough per VM
// instruction, and enough time in it. Runs that move data and signals
// stay on one worker, and so do short ones; long runs whose tile math
// dominates get both; answers are the same either way.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "support/allreduce_programs.hpp"
#include "support/recruit_at_start.hpp"
#include "support/step07_program.hpp"
#include "support/tile_math_rounds.hpp"

namespace {

struct MathRun {
  int workers = 0;
  anyp::HostTensor y;
};

MathRun run_math(std::int64_t elements, std::int64_t rounds, std::int64_t P, int workers) {
  anyp::InputGenerator gen(11);
  const anyp::HostTensor x = gen.uniform({P, 1, elements});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, elements}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.workers = workers;
  const anyp::RunStats stats =
      anyp_test::tile_math_rounds(elements, rounds).compile({x, y}, config)(x, y);
  return {stats.workers, y};
}

int ring_workers(bool get, std::int64_t P) {
  anyp::RunConfig config;
  config.workers = 2;
  return anyp_test::run_ring(get, P, config).workers;  // checks every element
}

class WorkersAtP : public ::testing::TestWithParam<std::int64_t> {};

// No tile compute at all (rings), or a few dozen elements per instruction
// (the mesh all-reduces' adds): one worker, whatever the run allows.
TEST_P(WorkersAtP, SignalBoundRunsStayOnOneWorker) {
  const anyp_test::RecruitAtStart adaptive(false);
  const std::int64_t P = GetParam();
  EXPECT_EQ(ring_workers(true, P), 1);
  EXPECT_EQ(ring_workers(false, P), 1);
  anyp::RunConfig config;
  config.workers = 2;
  for (auto algorithm : {anyp_test::Allreduce::Mesh, anyp_test::Allreduce::BuiltinMesh,
                         anyp_test::Allreduce::BuiltinRing}) {
    EXPECT_EQ(anyp_test::run_allreduce(algorithm, 8 * 16 * 4, P, config).workers, 1)
        << anyp_test::allreduce_name(algorithm);
  }
}

// Tile math over 64 Ki elements in a few hundred instructions per rank,
// 2 × 128 × 64 Ki elements (milliseconds of it) before the last rank
// starts: the second worker joins once the run has computed for half a
// millisecond, and the answer is the one-worker answer bit for bit.
TEST_P(WorkersAtP, ComputeBoundRunsRecruitTheSecondWorker) {
  const anyp_test::RecruitAtStart adaptive(false);
  const std::int64_t P = GetParam();
  const std::int64_t rounds = (128 + P - 2) / (P - 1);  // 128 over the first P - 1 ranks
  const MathRun one = run_math(65536, rounds, P, 1);
  const MathRun two = run_math(65536, rounds, P, 2);
  EXPECT_EQ(one.workers, 1);
  EXPECT_EQ(two.workers, 2);
  EXPECT_TRUE(anyp::equal_exact(one.y, two.y));
}

INSTANTIATE_TEST_SUITE_P(Ranks, WorkersAtP, ::testing::Values(2, 3, 4, 5, 8, 16),
                         [](const auto& info) { return "P" + std::to_string(info.param); });

// The run's compute is below what pays for a thread: 2 × 4 × 256 elements
// per rank, 16 Ki in all at P = 8.
TEST(Workers, LittleComputeStaysOnOneWorker) {
  const anyp_test::RecruitAtStart adaptive(false);
  EXPECT_EQ(run_math(256, 4, 8, 2).workers, 1);
}

// Much compute in all (2 × 8 192 × 16 elements per rank), but 32 elements
// per round of a few instructions: below 64 per instruction, one worker.
TEST(Workers, ComputeSpreadOverManyInstructionsStaysOnOneWorker) {
  const anyp_test::RecruitAtStart adaptive(false);
  EXPECT_EQ(run_math(16, 8192, 4, 2).workers, 1);
}

// Recruiting at the start (the TSan stage's mode) gives a ring both workers.
TEST(Workers, RecruitingAtTheStartGivesEveryRunEveryWorker) {
  const anyp_test::RecruitAtStart at_start(true);
  EXPECT_EQ(ring_workers(true, 4), 2);
  EXPECT_EQ(run_math(256, 4, 8, 2).workers, 2);
}

}  // namespace
