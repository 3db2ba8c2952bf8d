// schedule_test.cpp — the threads engine's schedules: PCT
// (RunConfig::pct) replays exactly from (seed, depth, steps), counts its
// steps, and different seeds explore different interleavings; the uniform
// random schedule (deterministic + schedule_seed) replays too.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <set>

namespace {

const pl::Dim NR = pl::dynamic("NR");

// Every rank but 0 Set-notifies rank 0's cell with its own rank; rank 0
// waits until the cell is non-zero and reports the value it saw, then the
// final value after every other rank has added 1 to cell {1, 0}.
const std::vector<pl::Param> kParams = {
    pl::Out("seen", pl::Tensor({1, 1}, pl::INT32)),
    pl::InOut("sig", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto last_writer = pl::jit::incore("last_writer", kParams, [](pl::Value seen, pl::Value sig) {
  auto ctx = pld::get_comm_ctx(sig);
  pl::Scalar r = pld::rank(ctx);
  pl::Scalar n = pld::nranks(ctx);
  pl::if_(
      r == 0,
      [&] {
        pld::system::wait(sig, {1, 0}, n - 1, pld::WaitCmp::Ge);
        pl::write(seen, {0, 0}, pl::read(sig, {0, 0}));
      },
      [&] {
        pld::system::notify(sig, 0, {0, 0}, r, pld::NotifyOp::Set);
        pld::system::notify(sig, 0, {1, 0}, 1, pld::NotifyOp::AtomicAdd);
      });
});

const auto per_rank = pl::jit::orchestration(
    "per_rank", kParams, [](pl::Value seen, pl::Value sig) { last_writer(seen, sig); });

const pl::HostFunction program = pl::jit::host(
    "last_writer", {pl::Out("seen", pl::Tensor({NR, 1, 1}, pl::INT32))}, [](pl::Value seen) {
      auto sig = pld::alloc_window_buffer("sig", {NR, 1}, pl::INT32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        pl::Value s = seen[r];
        per_rank(s, pld::window(sig, {NR, 1}, pl::INT32), pl::device(r));
      });
    });

struct Outcome {
  std::int64_t last = 0;  // the rank whose Set rank 0 read
  std::int64_t steps = 0;
};

Outcome run(const anyp::RunConfig& config) {
  const auto P = static_cast<std::int64_t>(config.distributed.device_ids.size());
  const anyp::HostTensor seen = anyp::HostTensor::zeros({P, 1, 1}, pl::INT32);
  const anyp::RunStats stats = program.compile({seen}, config)(seen);
  return Outcome{static_cast<std::int64_t>(seen.at({0, 0, 0})), stats.schedule_steps};
}

anyp::RunConfig pct(std::int64_t P, std::uint64_t seed, int depth, std::int64_t steps) {
  anyp::RunConfig c = anyp::RunConfig::for_world_size(P);
  c.pct = {true, seed, depth, steps};
  return c;
}

TEST(Pct, ReplaysExactlyFromSeedDepthAndSteps) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const Outcome a = run(pct(5, seed, 3, 30));
    const Outcome b = run(pct(5, seed, 3, 30));
    EXPECT_EQ(a.last, b.last) << "seed " << seed;
    EXPECT_EQ(a.steps, b.steps) << "seed " << seed;
    EXPECT_GE(a.last, 1);
    EXPECT_LE(a.last, 4);
  }
}

TEST(Pct, CountsStepsOnlyWhenTwoRanksAreReady) {
  // Depth 1: no change points; the highest-priority rank runs op by op.
  // A notifier takes three slices (two notifies, then the run to its end),
  // rank 0 at most five (wait attempt, wait, read, write, end): at most
  // 3(P - 1) + 5 counted steps, and at least the 2(P - 2) notifies taken
  // while another notifier was still ready.
  for (std::int64_t P : {2, 3, 5, 8}) {
    const Outcome r = run(pct(P, 7, 1, 0));
    EXPECT_GE(r.steps, 2 * (P - 2)) << "P=" << P;
    EXPECT_LE(r.steps, 3 * (P - 1) + 5) << "P=" << P;
  }
  anyp::RunConfig free = anyp::RunConfig::for_world_size(4);
  EXPECT_EQ(run(free).steps, 0);
}

TEST(Pct, DifferentSeedsExploreDifferentInterleavings) {
  std::set<std::int64_t> last;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) last.insert(run(pct(4, seed, 2, 12)).last);
  EXPECT_EQ(last, (std::set<std::int64_t>{1, 2, 3}));
}

TEST(RandomSchedule, ReplaysExactlyFromItsSeed) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    anyp::RunConfig c = anyp::RunConfig::for_world_size(6);
    c.deterministic = true;
    c.schedule_seed = seed;
    EXPECT_EQ(run(c).last, run(c).last) << "seed " << seed;
  }
}

TEST(Pct, ConfigErrors) {
  anyp::RunConfig both = pct(3, 1, 3, 10);
  both.deterministic = true;
  const anyp::HostTensor seen = anyp::HostTensor::zeros({3, 1, 1}, pl::INT32);
  EXPECT_THROW(
      {
        try {
          program.compile({seen}, both);
        } catch (const anyp::ConfigError& e) {
          EXPECT_STREQ(e.what(),
                       "pct and deterministic (schedule_seed) are two schedules; choose one");
          throw;
        }
      },
      anyp::ConfigError);
  EXPECT_THROW(
      {
        try {
          program.compile({seen}, pct(3, 1, 0, 10));
        } catch (const anyp::ConfigError& e) {
          EXPECT_STREQ(e.what(), "pct.depth must be at least 1, got 0");
          throw;
        }
      },
      anyp::ConfigError);
}

}  // namespace
